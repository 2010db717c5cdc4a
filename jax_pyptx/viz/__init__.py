"""Pictures of what PTX does to data, from the same tables the DSL and the interpreter use.

* fragment maps (:mod:`.fragments`): which thread and register hold each element of an
  ``mma.sync`` (every shape and type of the ISA table), ``ldmatrix`` or ``wgmma`` (every N
  and type) operand, and which lane and register each Tensor Memory cell of a
  ``tcgen05.ld`` / ``tcgen05.st`` shape lands in;
* swizzle maps and bank conflicts (:mod:`.banks`): where each 16-byte chunk of a swizzled
  buffer lands, which banks it uses, and how many wavefronts a warp's access costs;
* TMA boxes (:mod:`.tma`): what a tile-mode box covers of its tensor, and where the fill
  value goes.

The tables need only NumPy; the ``plot_*`` functions draw them with matplotlib (the ``viz``
extra).

    from jax_pyptx.viz import mma_map, plot_fragment
    fig = plot_fragment(mma_map("m16n8k16", "a", "bf16"))
    fig.savefig("mma_a.png")

Examples:
    >>> from jax_pyptx.viz import fragment_map, swizzle_map
    >>> fragment_map("mma", "m16n8k16", "a", "bf16").holder(0, 0)
    (0, 0, 0)
    >>> swizzle_map("128B").chunk[1].tolist()
    [1, 0, 3, 2, 5, 4, 7, 6]
"""
from .banks import BankReport, SwizzleMap, bank_conflicts, chunk_addresses, swizzle_map
from .fragments import (
    FragmentMap, fragment_map, ldmatrix_map, mma_map, mma_types, tcgen05_ld_map, wgmma_map,
    wgmma_types,
)
from .plot import plot_fragment, plot_swizzle, plot_tma_box
from .tma_box import BoxMap, tma_box_map

__all__ = ["FragmentMap", "fragment_map", "mma_map", "ldmatrix_map", "wgmma_map",
           "tcgen05_ld_map", "mma_types", "wgmma_types", "SwizzleMap",
           "swizzle_map", "BankReport", "bank_conflicts", "chunk_addresses", "BoxMap",
           "tma_box_map", "plot_fragment", "plot_swizzle", "plot_tma_box"]
