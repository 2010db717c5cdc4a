"""Tensor maps of a specialization: ``TmaSpec`` (one tiled tensor map, the contract between the
runtimes, the C++ launcher and the CPU interpreter) and ``tma_spec``, the derivation of a
``TmaSpec`` from a kernel's Tile spec and ``X.tma_desc(...)`` call. No JAX here: the CUDA launch
plan (``runtime.launch_plan``) and the host launch (``specialize.host``, the interpreter) both
build their tensor maps from it, so every path sees the same map.

The chain is one path: ``specs.Tile.tma_view`` gives a descriptor's shape, box and view strides
(default box, ``tma_box``, the rank-3 stripe form, ``tma_padding``), the DSL's
``X.tma_desc()`` records them in its ``TmaDescriptorHandle``, and :func:`map_spec` turns a
handle into the driver's innermost-first ``TmaSpec``; the stand-alone maps of
``pyptx.jax_support.synthesize_tma_descriptor(_3d)`` take the same two steps.

This module depends only on the standard library and the layers below (NumPy integers are
accepted where NumPy is loaded).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import NotSupportedError
from ..specs import Layout, memory_shape

__all__ = ["TENSORMAP_DTYPES", "TMA_DESCRIPTOR_BYTES", "TmaSpec", "tma_spec", "map_spec"]

TMA_DESCRIPTOR_BYTES = 128

# PTX type name -> (CUtensorMapDataType value, bytes per element). FP8 and raw
# byte types go through UINT8; a plain int is also accepted as ``dtype``.
TENSORMAP_DTYPES: dict[str, tuple[int, int]] = {
    "u8": (0, 1), "s8": (0, 1), "b8": (0, 1),
    "e4m3": (0, 1), "e5m2": (0, 1), "e8m0": (0, 1),
    "u16": (1, 2), "s16": (1, 2), "b16": (1, 2),
    "u32": (2, 4), "b32": (2, 4),
    "s32": (3, 4),
    "u64": (4, 8), "b64": (4, 8),
    "s64": (5, 8),
    "f16": (6, 2),
    "f32": (7, 4),
    "f64": (8, 8),
    "bf16": (9, 2),
    "f32_ftz": (10, 4),
    "tf32": (11, 4),
    "tf32_ftz": (12, 4),
}
_MODES = {"global": 0, "by_value": 1}
_SWIZZLE_ENUM = {0: 0, 32: 1, 64: 2, 128: 3}


def _ints(name: str, values: Any) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in values)
    except TypeError as e:
        raise TypeError(f"{name} must be a sequence of ints, got {values!r}") from e


@dataclass(frozen=True)
class TmaSpec:
    """One tiled TMA tensor map, built per launch from a buffer's live address.

    All per-dimension tuples are innermost (contiguous) dimension FIRST, as the
    driver's ``cuTensorMapEncodeTiled`` takes them. ``element_strides`` defaults
    to all ones. ``mode="global"``: the descriptor is written into the
    workspace and the kernel parameter is its u64 device address (``batch > 1``:
    ``batch`` descriptors, the i-th over ``base + i * batch_stride`` bytes,
    stored contiguously; the parameter is the address of the first).
    ``mode="by_value"``: the kernel parameter is ``.param .align 64 .b8 name[128]``.
    """

    operand: int
    dtype: str | int
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box: tuple[int, ...]
    element_strides: tuple[int, ...] = ()
    interleave: int = 0
    swizzle: int = 0
    l2_promotion: int = 0
    oob_fill: int = 0
    mode: str = "global"
    batch: int = 1
    batch_stride: int = 0

    def __post_init__(self):
        dims = _ints("global_dims", self.global_dims)
        rank = len(dims)
        if not 1 <= rank <= 5:
            raise ValueError(f"TmaSpec: rank must be 1..5, got {rank} (global_dims={dims})")
        strides = _ints("global_strides", self.global_strides)
        box = _ints("box", self.box)
        estr = _ints("element_strides", self.element_strides) or (1,) * rank
        if len(strides) != rank - 1:
            raise ValueError(f"TmaSpec: rank {rank} needs {rank - 1} global_strides, got {strides}")
        if len(box) != rank or len(estr) != rank:
            raise ValueError(f"TmaSpec: box and element_strides need {rank} entries, got {box}, {estr}")
        if isinstance(self.dtype, str) and self.dtype not in TENSORMAP_DTYPES:
            raise ValueError(f"TmaSpec: unknown dtype {self.dtype!r}; known: {sorted(TENSORMAP_DTYPES)}")
        np = sys.modules.get("numpy")       # a NumPy integer only where NumPy is loaded
        if (isinstance(self.dtype, int) or np is not None and isinstance(self.dtype, np.integer)) \
                and not 0 <= int(self.dtype) <= 15:
            raise ValueError(f"TmaSpec: CUtensorMapDataType must be 0..15, got {self.dtype}")
        if self.mode not in _MODES:
            raise ValueError(f"TmaSpec: mode must be 'global' or 'by_value', got {self.mode!r}")
        if int(self.batch) < 1:
            raise ValueError("TmaSpec: batch must be >= 1")
        if self.mode == "by_value" and int(self.batch) != 1:
            raise ValueError("TmaSpec: a by_value tensor map cannot be batched (use mode='global')")
        for name, lo, hi in (("interleave", 0, 2), ("swizzle", 0, 6), ("l2_promotion", 0, 3),
                             ("oob_fill", 0, 1)):
            if not lo <= int(getattr(self, name)) <= hi:
                raise ValueError(f"TmaSpec: {name} must be {lo}..{hi}, got {getattr(self, name)}")
        object.__setattr__(self, "global_dims", dims)
        object.__setattr__(self, "global_strides", strides)
        object.__setattr__(self, "box", box)
        object.__setattr__(self, "element_strides", estr)

    @property
    def rank(self) -> int:
        return len(self.global_dims)

    @property
    def data_type(self) -> int:
        """The CUtensorMapDataType value."""
        return TENSORMAP_DTYPES[self.dtype][0] if isinstance(self.dtype, str) else int(self.dtype)

    @property
    def param_bytes(self) -> int:
        return TMA_DESCRIPTOR_BYTES if self.mode == "by_value" else 8


def tma_spec(spec, handle) -> TmaSpec:
    """The ``TmaSpec`` of TMA descriptor ``handle`` (a ``TmaDescriptorHandle``) of a call:
    ``spec`` gives ``label``, ``tensor_tiles`` (each with ``layout``), ``batch`` and
    ``mask(tensor_index)`` (``runtime.callspec.CallSpec``, or the host launch's equivalent).
    Dimensions innermost first in memory order (a ``Layout.COL`` tensor's last two dims
    swapped); a global-mode map of a tensor batched on the grid is one map per batch item."""
    if handle.dtype.name not in TENSORMAP_DTYPES:
        raise NotSupportedError(
            f"kernel {spec.label!r}: TMA descriptor {handle.param!r}: dtype {handle.dtype.name} "
            f"has no CUtensorMapDataType; allowed: {', '.join(sorted(TENSORMAP_DTYPES))}; "
            f"describe the tensor with one of those (e.g. its bytes as u8) or load it without "
            f"TMA")
    layout = spec.tensor_tiles[handle.index].layout
    batch, stride = 1, 0
    if spec.batch and any(spec.mask(handle.index)):
        batch = math.prod(spec.batch)
        stride = math.prod(memory_shape(tuple(handle.shape), layout)) * handle.dtype.nbytes
    return map_spec(handle, layout, operand=handle.index, batch=batch, batch_stride=stride)


def map_spec(handle, layout=Layout.ROW, *, operand: int = 0, batch: int = 1,
             batch_stride: int = 0) -> TmaSpec:
    """The ``TmaSpec`` of ``handle``'s shape, box, swizzle and view strides (all outermost
    first, as ``specs.Tile.tma_view`` gives them) over a tensor laid out as ``layout``: the
    one conversion to the driver's innermost-first order, for kernel calls (:func:`tma_spec`)
    and stand-alone maps (``pyptx.jax_support.synthesize_tma_descriptor``).

    >>> from jax_pyptx.specs import Tile, TmaDescriptorHandle
    >>> from jax_pyptx.types import bf16
    >>> t = Tile(128, 256, bf16, tma_box=(32, 64), tma_rank=3, tma_padding=True)
    >>> shape, box, strides = t.tma_view(t.shape, {})
    >>> m = map_spec(TmaDescriptorHandle("X", dtype=bf16, shape=shape, box=box,
    ...                                  strides=strides))
    >>> m.global_dims, m.global_strides, m.box
    ((64, 128, 4), (512, 128), (72, 32, 1))
    """
    mem = memory_shape(tuple(handle.shape), layout)
    box = memory_shape(tuple(handle.box), layout)
    estr = memory_shape(tuple(handle.element_strides or (1,) * len(mem)), layout)
    dims = tuple(reversed(mem))                       # innermost first
    strides, acc = [], handle.dtype.nbytes
    for d in dims[:-1]:
        acc *= d
        strides.append(acc)
    if getattr(handle, "strides", ()):                # a view (rank-3 64-column stripes)
        strides = list(reversed(handle.strides))[1:]
    return TmaSpec(operand=operand, dtype=handle.dtype.name, global_dims=dims,
                   global_strides=tuple(strides), box=tuple(reversed(box)),
                   element_strides=tuple(reversed(estr)), interleave=handle.interleave,
                   swizzle=_SWIZZLE_ENUM[handle.swizzle], l2_promotion=handle.l2_promotion,
                   oob_fill=handle.oob_fill, mode=handle.mode, batch=batch,
                   batch_stride=batch_stride)
