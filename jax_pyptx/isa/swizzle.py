"""Shared-memory swizzle modes (PTX ISA "Tensor-map swizzle modes" and the wgmma / tcgen05
matrix-descriptor swizzles): where byte ``addr`` of a swizzled buffer really lives.

A swizzle permutes the 16-byte chunks of each row of a repeating *atom*: the chunk index
(address bits [4:4+k]) is XORed with the row index within the atom (bits [7:7+k]):

=======  ==========  ======================  ==========
mode     atom bytes  bits XORed              rows/atom
=======  ==========  ======================  ==========
32B      256         [4] ^= [7]              2
64B      512         [4:5] ^= [7:8]          4
128B     1024        [4:6] ^= [7:9]          8
=======  ==========  ======================  ==========

The swizzle is a function of the address (which is why swizzled buffers start on an atom
boundary), so it applies to any byte address. A matrix descriptor whose swizzle pattern starts
off an atom boundary names the row of the atom it starts at with its *base offset*
(``(pattern start >> 7) & 7``): the row index is then counted from there. tcgen05's "128-byte
swizzling with 32-byte atomicity" (``"128B_base32B"``) permutes 32-byte units instead: the
unit index (bits [5:6]) is XORed with bits [7:8], so the pattern repeats every 4 rows of 128 bytes. The one copy of this fact: the DSL, the
interpreter and ``jax_pyptx.viz`` call :func:`swizzle`.

Examples:
    >>> from jax_pyptx.isa.swizzle import swizzle
    >>> [swizzle(128 * row, "128B") for row in range(4)]   # chunk 0 of rows 0..3
    [0, 144, 288, 432]
"""
from __future__ import annotations

__all__ = ["MODES", "ATOM_BYTES", "swizzle", "mode_name"]

# mode -> number of chunk-index bits XORed
_BITS = {None: 0, "32B": 1, "64B": 2, "128B": 3, "128B_BASE32B": 2}
MODES = ("32B", "64B", "128B")
ATOM_BYTES = {"32B": 256, "64B": 512, "128B": 1024}


def mode_name(mode) -> str | None:
    """``None``/``"none"`` -> None, ``"128b"`` -> ``"128B"``; anything else is a ValueError.

    Examples:
        >>> from jax_pyptx.isa.swizzle import mode_name
        >>> mode_name("128b"), mode_name(None), mode_name("none")
        ('128B', None, None)
    """
    if mode is None:
        return None
    m = str(mode).upper()
    if m == "NONE":
        return None
    if m not in _BITS:
        raise ValueError(f"swizzle mode {mode!r} is not one of None, 'none', '32B', '64B', '128B', "
                         f"'128B_base32B'")
    return "128B_base32B" if m == "128B_BASE32B" else m


def swizzle(addr, mode, base: int = 0):
    """The swizzled byte address of ``addr`` (an int or a NumPy integer array) under ``mode``
    (None, "32B", "64B", "128B" or "128B_base32B"): bits [4:4+k] XOR bits [7:7+k], k = 1, 2, 3
    (128B_base32B: bits [5:6] XOR [7:8]). ``base`` is a matrix descriptor's base offset: the
    atom row of the address is ``((addr >> 7) - base) & 7``.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.isa.swizzle import swizzle
        >>> swizzle(0x90, "32B"), swizzle(np.arange(0, 64, 16) + 128, "64B")
        (128, array([144, 128, 176, 160]))
    """
    name = mode_name(mode)
    k = _BITS["128B_BASE32B" if name == "128B_base32B" else name]
    if k == 0:
        return addr
    mask = (1 << k) - 1
    row = ((addr >> 7) - base) & 7 if base else (addr >> 7)
    if name == "128B_base32B":
        return addr ^ ((row & mask) << 5)
    return addr ^ ((row & mask) << 4)
