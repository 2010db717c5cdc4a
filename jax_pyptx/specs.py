"""Tensor specs: ``Tile("M", "K", bf16, Layout.ROW)``, ``Layout``, ``TensorSpec``.

A ``Tile`` names each dimension with an int or a symbol; symbols bind from the shapes of the
arrays a kernel is called with (or from keyword arguments to ``.ptx(M=...)``).
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from .errors import SpecializationError, TraceError
from .types import PtxType, by_name


class Layout(enum.Enum):
    """Memory order of a tensor: ROW (C order, last dim contiguous) or COL (the last two
    dims swapped in memory: first of them contiguous)."""

    ROW = "row"
    COL = "col"
    # row-major; to a TMA descriptor built from the Tile they select the swizzle
    TMA_128B = "tma_128b"
    TMA_64B = "tma_64b"
    TMA_32B = "tma_32b"
    INTERLEAVED = "interleaved"


class Tile:
    """The spec of one tensor parameter: dims (ints or symbol names), dtype, layout."""

    __slots__ = ("dims", "dtype", "layout", "tma_box", "tma_rank", "tma_padding")

    def __init__(self, *args, layout: Layout | None = None, tma_box=None, tma_rank: int = 2,
                 tma_padding: bool = False):
        dims, dtype = [], None
        for a in args:
            if isinstance(a, Layout):
                layout = a
            elif isinstance(a, PtxType):
                dtype = a
            elif isinstance(a, (int, str)) and dtype is None:
                if isinstance(a, int) and a <= 0:
                    raise SpecializationError(f"Tile: dimension {a} must be positive")
                if isinstance(a, str) and not a.isidentifier():
                    raise SpecializationError(f"Tile: symbol {a!r} is not an identifier")
                dims.append(a)
            else:
                raise SpecializationError(
                    f"Tile({', '.join(map(repr, args))}): expected dims (int or symbol name), "
                    f"then a dtype such as f32, then optionally a Layout; got {a!r}")
        if dtype is None:
            raise SpecializationError(f"Tile{args!r}: missing dtype (e.g. Tile('M', f32))")
        self.dims, self.dtype, self.layout = tuple(dims), dtype, layout or Layout.ROW
        # TMA descriptor fields, read by the runtime when the kernel calls X.tma_desc()
        if tma_rank not in (2, 3):
            raise SpecializationError(f"Tile: tma_rank must be 2 or 3, got {tma_rank!r}")
        if tma_box is not None:
            tma_box = tuple(tma_box)
            if not all(isinstance(b, (int, str)) and not isinstance(b, bool) for b in tma_box):
                raise SpecializationError(f"Tile: tma_box entries are ints or shape-variable "
                                          f"names, got {tma_box!r}")
        self.tma_box, self.tma_rank, self.tma_padding = tma_box, tma_rank, bool(tma_padding)

    def __repr__(self):
        inner = ", ".join(repr(d) for d in self.dims)
        lay = "" if self.layout is Layout.ROW else f", Layout.{self.layout.name}"
        tma = "".join(f", {f}={getattr(self, f)!r}" for f, d in
                      (("tma_box", None), ("tma_rank", 2), ("tma_padding", False))
                      if getattr(self, f) != d)
        return f"Tile({inner}{', ' if inner else ''}{self.dtype.name}{lay}{tma})"

    def _key(self):
        return (self.dims, self.dtype.name, self.layout, self.tma_box, self.tma_rank,
                self.tma_padding)

    def __eq__(self, o):
        return isinstance(o, Tile) and self._key() == o._key()

    def __hash__(self):
        return hash(self._key())

    @property
    def symbols(self) -> tuple:
        return tuple(d for d in self.dims if isinstance(d, str))

    def resolve(self, env: dict) -> tuple:
        return tuple(env[d] if isinstance(d, str) else d for d in self.dims)


@dataclass(frozen=True)
class TmaDescriptorHandle:
    """A TMA descriptor a kernel uses, outside a trace: which tensor, box, swizzle, ...

    The runtime builds the real ``CUtensorMap`` from it and the live buffer pointer.
    """

    tensor: str               # parameter name
    param: str                # the .param slot (``<name>_tma_desc``)
    index: int                # positional index of the tensor among the kernel's tensors
    dtype: PtxType
    shape: tuple              # global shape, outermost first
    box: tuple                # box, outermost first
    swizzle: int = 0          # bytes: 0, 32, 64, 128
    element_strides: tuple = ()
    interleave: int = 0
    oob_fill: int = 0
    l2_promotion: int = 0
    mode: str = "global"      # "global" (.u64 slot) or "by_value" (.align 64 .b8 [128])
    # the rank-3 "64-column stripe" descriptor of a 2-D tensor (Tile(tma_rank=3)): dims
    # (64, rows, cols/64) innermost first, box (64, box rows, box cols/64); padding: the
    # innermost box is 72 (Tile(tma_padding=True))
    stripes: bool = False
    padding: bool = False


class TensorSpec:
    """A tensor parameter at trace time: name, concrete shape, dtype, layout.

    ``X.ptr()`` and ``X.tma_desc()`` are answered by ``access``, the parameter ABI of the
    trace that made this spec (``jax_pyptx.specialize.abi``)."""

    def __init__(self, name: str, shape: tuple, dtype: PtxType, layout: Layout, index: int,
                 trace=None, output: bool = False, access=None):
        self.name, self.shape, self.dtype, self.layout = name, tuple(shape), dtype, layout
        self.index, self.trace, self.output = index, trace, output
        self._access = access

    def __repr__(self):
        return f"TensorSpec({self.name!r}, {self.shape}, {self.dtype.name}, {self.layout.name})"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.nbytes

    @property
    def memory_shape(self) -> tuple:
        """The shape of the buffer in C order (``Layout.COL``: the last two dims swapped)."""
        return memory_shape(self.shape, self.layout)

    @property
    def strides(self) -> tuple:
        """Element strides, outermost first (honouring the layout)."""
        shape = list(self.shape)
        order = list(range(len(shape)))
        if self.layout is Layout.COL and len(shape) >= 2:
            order[-1], order[-2] = order[-2], order[-1]
        strides = [0] * len(shape)
        s = 1
        for i in reversed(order):
            strides[i] = s
            s *= shape[i]
        return tuple(strides)

    def _need_access(self, what: str):
        if self._access is None:
            raise TraceError(f"{self.name}.{what}() must run inside a @kernel function while "
                             f"it is traced (call kernel.ptx() or the kernel itself)")
        return self._access

    def ptr(self):
        """A u64 register with the tensor's global address (loaded once per trace)."""
        return self._need_access("ptr").ptr(self)

    def tma_desc(self, box=None, swizzle: int = 0, **kw):
        """A u64 register with the address of this tensor's TMA descriptor."""
        return self._need_access("tma_desc").tma_desc(self, box, swizzle, **kw)


def memory_shape(shape: tuple, layout: Layout) -> tuple:
    """The C-order buffer shape of a tensor of logical ``shape`` (COL: last two swapped)."""
    shape = tuple(shape)
    if layout is Layout.COL and len(shape) >= 2:
        return shape[:-2] + (shape[-1], shape[-2])
    return shape


def as_dtype(t) -> PtxType:
    return t if isinstance(t, PtxType) else by_name(t)
