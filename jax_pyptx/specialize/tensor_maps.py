"""TMA tensor maps from a tensor's ``Tile``: box, swizzle and the rank-3 stripe form.

A kernel that asks for a descriptor without describing it (``X.tma_desc()``, the documented
pyptx spelling) gets the one its ``Tile`` describes:

* swizzle from the layout: ``Layout.TMA_128B`` / ``TMA_64B`` / ``TMA_32B`` select the 128 /
  64 / 32-byte swizzle, any other layout none;
* box ``tma_box`` (rows, cols; ints or shape-variable names), else the default box of 128
  rows by one swizzle span of columns (``span / element bytes``, a 128-byte span without
  swizzle), each clamped to the tensor;
* ``tma_rank=3``: the Hopper "64-column stripe" descriptor of a 2-D tensor: dims ``(64,
  rows, cols/64)`` innermost first, box ``(64, box rows, box cols/64)`` (72 innermost with
  ``tma_padding``), 128-byte swizzle only for ``TMA_128B``.

The geometry functions return what ``cuTensorMapEncodeTiled`` takes (innermost dimension
first) and serve the launch plan and ``pyptx.jax_support.synthesize_tma_descriptor``.

    >>> from jax_pyptx.specs import Layout
    >>> from jax_pyptx.types import bf16
    >>> default_box((256, 512), bf16, Layout.TMA_128B)
    (128, 64)
    >>> tiled_2d((256, 512), bf16, Layout.TMA_128B, (64, 64)).box
    (64, 64)
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import PtxValueError, SpecializationError
from ..specs import Layout
from ..types import PtxType

__all__ = ["SWIZZLE_BYTES", "TensorMapGeometry", "swizzle_of", "default_box", "resolve_box",
           "from_tile", "tiled_2d", "stripes_3d"]

SWIZZLE_BYTES = {Layout.TMA_128B: 128, Layout.TMA_64B: 64, Layout.TMA_32B: 32}
STRIPE = 64                     # columns per stripe of the rank-3 form


@dataclass(frozen=True)
class TensorMapGeometry:
    """One tiled tensor map, as ``cuTensorMapEncodeTiled`` takes it (less the address):
    per-dimension tuples innermost first, ``global_strides`` in bytes for dims 1.., swizzle
    in bytes (0, 32, 64, 128)."""

    dtype: PtxType
    global_dims: tuple
    global_strides: tuple
    box: tuple
    element_strides: tuple
    swizzle: int = 0
    interleave: int = 0
    l2_promotion: int = 0
    oob_fill: int = 0

    @property
    def rank(self) -> int:
        return len(self.global_dims)


def swizzle_of(layout) -> int:
    """Swizzle bytes a layout selects (0 for row/col/interleaved)."""
    return SWIZZLE_BYTES.get(layout, 0)


def default_box(shape: tuple, dtype: PtxType, layout) -> tuple:
    """128 rows by one swizzle span of columns, clamped to the 2-D ``shape``."""
    rows, cols = shape
    span = swizzle_of(layout) or 128
    return (min(128, rows), min(max(span // max(dtype.nbytes, 1), 1), cols))


def resolve_box(tile, env: dict, template: dict | None = None, where: str = "") -> tuple:
    """``tile.tma_box`` with shape-variable names (or integer template parameters) replaced
    by their values."""
    out = []
    for b in tile.tma_box:
        if isinstance(b, str):
            v = env.get(b)
            if v is None and template is not None and isinstance(template.get(b), int):
                v = template[b]
            if v is None:
                raise SpecializationError(
                    f"{where}tma_box {tile.tma_box!r} of {tile!r}: {b!r} is not bound; box "
                    f"entries are ints or shape variables ({', '.join(sorted(env)) or 'none'})")
            out.append(int(v))
        else:
            out.append(int(b))
    return tuple(out)


def from_tile(tile, shape: tuple, env: dict, template: dict | None = None, where: str = ""):
    """``(box, swizzle bytes, stripes, padding)`` of the descriptor ``tile`` describes for a
    tensor of ``shape`` (see the module docstring)."""
    if tile.tma_rank == 3:
        if len(shape) != 2:
            raise PtxValueError(f"{where}{tile!r}: tma_rank=3 is the 64-column stripe form of "
                                f"a 2-D tensor; this one has shape {tuple(shape)}")
        if tile.tma_box is None:
            raise PtxValueError(f"{where}{tile!r}: tma_rank=3 needs tma_box=(rows, cols) (the "
                                f"box of one load, cols a multiple of {STRIPE})")
        box = resolve_box(tile, env, template, where)
        if len(box) != 2 or box[1] % STRIPE or shape[1] % STRIPE:
            raise PtxValueError(f"{where}{tile!r}: the stripe form needs a 2-entry tma_box "
                                f"and columns that are multiples of {STRIPE}; box {box}, "
                                f"shape {tuple(shape)}")
        swz = 128 if tile.layout is Layout.TMA_128B else 0
        return box, swz, True, tile.tma_padding
    if tile.tma_box is not None:
        box = resolve_box(tile, env, template, where)
        if len(box) != len(shape):
            raise PtxValueError(f"{where}tma_box {tile.tma_box!r} of {tile!r} has {len(box)} "
                                f"entries; the tensor has {len(shape)} dims")
        box = tuple(min(b, s) for b, s in zip(box, shape))
    elif len(shape) == 2:
        box = default_box(shape, tile.dtype, tile.layout)
    else:                       # other ranks: the whole tensor, as for an explicit call
        box = tuple(shape)
    return box, swizzle_of(tile.layout), False, False


def _strides(dims: tuple, nbytes: int) -> tuple:
    out, acc = [], nbytes
    for d in dims[:-1]:
        acc *= d
        out.append(acc)
    return tuple(out)


def tiled_2d(shape: tuple, dtype: PtxType, layout, box=None) -> TensorMapGeometry:
    """The rank-2 tensor map of a row-major ``(rows, cols)`` tensor: box ``(rows, cols)``
    (default :func:`default_box`) clamped to the tensor, swizzle from ``layout``."""
    rows, cols = (int(d) for d in shape)
    brows, bcols = default_box((rows, cols), dtype, layout) if box is None else box
    dims = (cols, rows)
    return TensorMapGeometry(dtype, dims, _strides(dims, dtype.nbytes),
                             (min(int(bcols), cols), min(int(brows), rows)), (1, 1),
                             swizzle_of(layout))


def stripes_3d(height: int, width: int, dtype: PtxType, box_major: int, box_minor: int, *,
               swizzle_128b: bool = True, padding: bool = False) -> TensorMapGeometry:
    """The rank-3 "64-column stripe" map of a row-major ``(height, width)`` tensor: dims
    ``(64, height, width/64)``, strides ``(width, 64)`` elements, box ``(64 or 72 with
    padding, box_major, box_minor/64)``."""
    height, width = int(height), int(width)
    if width % STRIPE:
        raise PtxValueError(f"the stripe tensor map needs a width that is a multiple of "
                            f"{STRIPE}, got {width}")
    e = dtype.nbytes
    return TensorMapGeometry(dtype, (STRIPE, height, width // STRIPE),
                             (width * e, STRIPE * e),
                             (72 if padding else STRIPE, int(box_major),
                              max(int(box_minor) // STRIPE, 1)),
                             (1, 1, 1), 128 if swizzle_128b else 0)
