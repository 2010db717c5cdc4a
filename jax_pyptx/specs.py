"""Tensor specs: ``Tile("M", "K", bf16, Layout.ROW)``, ``Layout``, ``TensorSpec``.

A ``Tile`` names each dimension with an int or a symbol; symbols bind from the shapes of the
arrays a kernel is called with (or from keyword arguments to ``.ptx(M=...)``).
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Union, cast

from .errors import SpecializationError, TraceError
from .types import PtxType, by_name


class Layout(enum.Enum):
    """How a tensor lies in global memory, and the swizzle of its TMA descriptor.

    ``ROW`` is C order (last dim contiguous); ``COL`` swaps the last two dims in memory (the
    first of them contiguous). ``TMA_128B`` / ``TMA_64B`` / ``TMA_32B`` are row-major tensors
    whose ``X.tma_desc()`` uses that swizzle (the kernel allocates a matching destination,
    e.g. ``smem.alloc(..., swizzle="128B")``); ``INTERLEAVED`` is row-major without swizzle.

    Examples:
        >>> Layout.TMA_128B.swizzle_bytes
        128
    """

    ROW = "row"
    COL = "col"
    TMA_128B = "tma_128b"
    TMA_64B = "tma_64b"
    TMA_32B = "tma_32b"
    INTERLEAVED = "interleaved"

    @property
    def swizzle_bytes(self) -> int:
        """The TMA swizzle span of this layout in bytes (0 for no swizzle).

        Examples:
            >>> from jax_pyptx import Layout
            >>> Layout.TMA_64B.swizzle_bytes, Layout.ROW.swizzle_bytes
            (64, 0)
        """
        return _SWIZZLE_BYTES.get(self, 0)


_SWIZZLE_BYTES = {Layout.TMA_128B: 128, Layout.TMA_64B: 64, Layout.TMA_32B: 32}

Dim = Union[int, str]
"""A tensor dimension: an int, or a symbol (a shape variable) such as ``"M"``."""


@dataclass(frozen=True, init=False)
class Tile:
    """The spec of one tensor parameter: dims (ints or symbol names), dtype, layout, and the
    TMA box the runtime uses when the kernel calls ``X.tma_desc()``.

    Positional items are classified by type: an ``int`` or ``str`` is a dimension, a PTX
    type the dtype, a ``Layout`` the layout::

        Tile("M", "K", bf16, Layout.ROW)
        Tile(4, dtype=f32, layout=Layout.COL)
        Tile("M", "K", bf16, Layout.TMA_128B, tma_box=(64, 64))

    ``tma_box`` is the box of one TMA load, outermost first (ints or shape variables);
    without it a 2-d tensor's box is 128 rows x one swizzle span (128 bytes when the layout
    has no swizzle), clamped to the tensor. ``tma_rank=3`` is the Hopper "64-column stripe"
    descriptor ``(64, rows, cols/64)`` that ``ptx.tma.load_3d`` addresses (``tma_box``
    required; ``tma_padding=True`` makes the innermost box 72).

    ``partial=True`` on an output says the kernel writes only part of it (a triangle, a padded
    tail): the interpreter's sanitizer then does not report its unwritten elements
    (``UnwrittenOutputError``); those hold garbage on a GPU. It is an attribute, not one of
    the dataclass fields, and takes no part in equality.

    Examples:
        >>> from jax_pyptx.types import bf16
        >>> Tile("M", 16, bf16).symbolic_dims
        ('M',)
    """

    shape: tuple
    dtype: PtxType
    layout: Layout = Layout.ROW
    tma_box: tuple | None = None
    tma_rank: int = 2
    tma_padding: bool = False
    # not a dataclass field (the fields are the documented API's): set by __init__; the
    # sanitizer's concern only, so it takes no part in equality or hashing
    partial = False

    def __init__(self, *dims_and_dtype, dtype=None, layout=None, tma_box=None, tma_rank=2,
                 tma_padding=False, partial=False):
        from .errors import PtxValueError

        dims = []
        what = f"Tile({', '.join(map(repr, dims_and_dtype))})"
        for a in dims_and_dtype:
            if isinstance(a, Layout):
                if layout is not None and layout is not a:
                    raise PtxValueError(f"{what}: two layouts, {layout} and {a}")
                layout = a
            elif isinstance(a, PtxType):
                if dtype is not None and dtype is not a:
                    raise PtxValueError(f"{what}: two dtypes, {dtype.name} and {a.name}; a "
                                        f"Tile has one dtype")
                dtype = a
            elif isinstance(a, int) and not isinstance(a, bool):
                if a <= 0:
                    raise PtxValueError(f"{what}: dimension {a} must be positive")
                dims.append(a)
            elif isinstance(a, str):
                if not a.isidentifier():
                    raise PtxValueError(f"{what}: symbol {a!r} is not an identifier")
                dims.append(a)
            else:
                raise SpecializationError(
                    f"{what}: {a!r} ({type(a).__name__}) is neither a dimension (int or "
                    f"symbol name), a dtype such as f32, nor a Layout")
        if isinstance(dtype, str):
            dtype = by_name(dtype)
        if dtype is None:
            raise PtxValueError(f"Tile requires a dtype (e.g. Tile('M', f32)); got {what}")
        if not isinstance(dtype, PtxType):
            raise SpecializationError(f"{what}: dtype={dtype!r} is not a PTX type")
        if not dims:
            raise PtxValueError(f"{what}: a Tile needs at least one dimension")
        layout = Layout.ROW if layout is None else layout
        if not isinstance(layout, Layout):
            raise SpecializationError(f"{what}: layout={layout!r} is not a Layout")
        if tma_rank not in (2, 3):
            raise PtxValueError(f"{what}: tma_rank={tma_rank!r} is not allowed; allowed: 2, 3")
        if tma_box is not None:
            if not isinstance(tma_box, (tuple, list)) or not tma_box:
                raise SpecializationError(f"{what}: tma_box must be a tuple of dims (ints or "
                                          f"shape variables), got {tma_box!r}")
            for b in tma_box:
                if isinstance(b, bool) or not isinstance(b, (int, str)):
                    raise SpecializationError(
                        f"{what}: tma_box entry {b!r} must be an int or a shape variable name")
            tma_box = tuple(tma_box)
        set_ = object.__setattr__
        set_(self, "shape", tuple(dims))
        set_(self, "dtype", dtype)
        set_(self, "layout", layout)
        set_(self, "tma_box", tma_box)
        set_(self, "tma_rank", tma_rank)
        set_(self, "tma_padding", bool(tma_padding))
        if not isinstance(partial, bool):
            raise SpecializationError(f"{what}: partial must be True or False, got {partial!r}")
        set_(self, "partial", partial)

    def __str__(self):
        """The short spelling used in error messages: ``Tile('M', 'N', f32)``."""
        inner = ", ".join(repr(d) for d in self.shape)
        lay = "" if self.layout is Layout.ROW else f", Layout.{self.layout.name}"
        part = ", partial=True" if self.partial else ""
        return f"Tile({inner}, {self.dtype.name}{lay}{part})"

    # ---- dims
    @property
    def dims(self) -> tuple:
        """The dimensions (same as ``shape``).

        Examples:
            >>> from jax_pyptx import Tile
            >>> from jax_pyptx.types import bf16
            >>> Tile("M", 64, bf16).dims
            ('M', 64)
        """
        return self.shape

    @property
    def rank(self) -> int:
        """Number of dimensions: ``Tile("M", 16, bf16).rank == 2``.

        Examples:
            >>> from jax_pyptx import Tile
            >>> from jax_pyptx.types import bf16
            >>> Tile("M", 16, bf16).rank
            2
        """
        return len(self.shape)

    @property
    def symbols(self) -> tuple:
        """The symbolic dims, in order (``symbolic_dims``).

        Examples:
            >>> from jax_pyptx import Tile
            >>> from jax_pyptx.types import f32
            >>> Tile("M", 8, "K", f32).symbols
            ('M', 'K')
        """
        return tuple(d for d in self.shape if isinstance(d, str))

    @property
    def symbolic_dims(self) -> tuple:
        """The symbolic dims, in order.

        Examples:
            >>> from jax_pyptx import Tile
            >>> from jax_pyptx.types import f32
            >>> Tile("M", 8, "K", f32).symbolic_dims
            ('M', 'K')
        """
        return self.symbols

    def resolve(self, env: dict) -> tuple:
        """The shape with symbols looked up in ``env``: ``Tile("M", 4, f32).resolve({"M": 8})``
        is ``(8, 4)``.

        Examples:
            >>> from jax_pyptx import Tile
            >>> from jax_pyptx.types import f32
            >>> Tile("M", 4, f32).resolve({"M": 8})
            (8, 4)
        """
        return tuple(env[d] if isinstance(d, str) else d for d in self.shape)

    # ---- TMA: the one derivation of the tensor map ``X.tma_desc()`` builds from a Tile (the
    # DSL's descriptor handle, and through it the CUDA launch plan and the interpreter, and
    # ``pyptx.jax_support.synthesize_tma_descriptor(_3d)`` all read it)
    def tma_box_shape(self, env: dict, shape: tuple | None = None) -> tuple:
        """The TMA box of one load, outermost first, for shape variables ``env``
        (``KeyError`` for an unbound symbol in ``tma_box``): ``tma_box``, else 128 rows x one
        swizzle span (128 bytes without swizzle), each clamped to the tensor.

        Examples:
            >>> from jax_pyptx.types import bf16, f32
            >>> Tile(256, 512, bf16, Layout.TMA_128B).tma_box_shape({})
            (128, 64)
            >>> Tile("M", 64, f32, tma_box=(300, 8)).tma_box_shape({"M": 40})
            (40, 8)
        """
        shape = tuple(shape) if shape is not None else self.resolve(env)
        if self.tma_box is not None:
            box = tuple(env[b] if isinstance(b, str) else b for b in self.tma_box)
            if len(box) != len(shape):
                return box                       # the caller reports the rank mismatch
            return tuple(min(b, s) for b, s in zip(box, shape))
        span = self.layout.swizzle_bytes or 128
        cols = max(span // self.dtype.nbytes, 1)
        if len(shape) == 1:
            return (min(cols, shape[0]),)
        return tuple(shape[:-2]) + (min(128, shape[-2]), min(cols, shape[-1]))

    @property
    def tma_swizzle(self) -> int:
        """Swizzle bytes of the tensor map ``X.tma_desc()`` builds: the layout's
        (``Layout.TMA_128B`` -> 128, ...); the rank-3 stripe form has 128 or none.

        Examples:
            >>> from jax_pyptx.types import bf16
            >>> Tile(64, 128, bf16, Layout.TMA_64B, tma_box=(64, 64), tma_rank=3).tma_swizzle
            0
        """
        s = self.layout.swizzle_bytes
        return 0 if self.tma_rank == 3 and s != 128 else s

    def tma_view(self, shape: tuple, env: dict) -> tuple:
        """``(shape, box, strides)`` of the tensor map ``X.tma_desc()`` builds for a tensor of
        logical ``shape``, outermost first; ``strides`` are byte strides of a view, ``()``
        for the tensor's own C-order strides. Rank 2: the tensor and :meth:`tma_box_shape`.
        ``tma_rank=3``: the "64-column stripe" view of a 2-d ``(rows, cols)`` tensor, shape
        ``(cols/64, rows, 64)`` with byte strides ``(64*e, cols*e, e)`` and box
        ``(box_cols/64, box_rows, 64)`` (72 innermost with ``tma_padding``): dims ``(64, rows,
        cols/64)`` innermost first, as ``ptx.tma.load_3d`` addresses them. ``PtxValueError``
        for a form that cannot be built, ``KeyError`` for an unbound ``tma_box`` name.

        Examples:
            >>> from jax_pyptx.types import bf16
            >>> Tile(128, 256, bf16, Layout.TMA_128B, tma_box=(64, 128), tma_rank=3).tma_view(
            ...     (128, 256), {})
            ((4, 128, 64), (2, 64, 64), (128, 512, 2))
        """
        from .errors import PtxValueError

        shape = tuple(int(d) for d in shape)
        if self.tma_rank != 3:
            return shape, self.tma_box_shape(env, shape), ()
        if len(shape) != 2:
            raise PtxValueError(f"tma_rank=3 describes a 2-d tensor, got rank {len(shape)}")
        if self.tma_box is None:
            raise PtxValueError("tma_rank=3 needs tma_box=(rows, cols) in its Tile")
        if len(self.tma_box) != 2:
            raise PtxValueError(f"tma_rank=3 needs tma_box=(rows, cols), got "
                                f"{self.tma_box!r}")
        box_rows, box_cols = (int(env[b]) if isinstance(b, str) else b for b in self.tma_box)
        rows, cols = shape
        if cols % 64 or box_cols % 64:
            raise PtxValueError(f"tma_rank=3 splits columns into 64-wide stripes; cols={cols} "
                                f"and box cols={box_cols} must be multiples of 64")
        e = self.dtype.nbytes
        return ((cols // 64, rows, 64), (box_cols // 64, box_rows, 72 if self.tma_padding
                                         else 64), (64 * e, cols * e, e))

    # ---- canonical wgmma operands
    @classmethod
    def wgmma_a(cls, m, k, dtype, *, tile_m=None, tile_k=None) -> "Tile":
        """The A operand of a wgmma (M x K, K-major): layout from the row width of
        ``tile_k or k`` (16 bytes ROW, 32/64 bytes TMA_32B/64B, 128 or more TMA_128B);
        ``tma_box=(tile_m or m, tile_k or k)`` when a tile size is given.

        Examples:
            >>> from jax_pyptx.types import bf16
            >>> Tile.wgmma_a(64, 64, bf16, tile_k=16).layout
            <Layout.TMA_32B: 'tma_32b'>
        """
        box = None
        if tile_m is not None or tile_k is not None:
            box = (tile_m or m, tile_k or k)
        return cls(m, k, dtype=dtype, layout=_gmma_layout("wgmma_a", tile_k or k, dtype),
                   tma_box=box)

    @classmethod
    def wgmma_b(cls, k, n, dtype, *, tile_k=None, tile_n=None) -> "Tile":
        """The B operand of a wgmma (K x N, MN-major): layout from ``tile_n or n``;
        ``tma_box=(tile_k or k, tile_n or n)`` when a tile size is given.

        Examples:
            >>> from jax_pyptx import Tile
            >>> from jax_pyptx.types import bf16
            >>> b = Tile.wgmma_b("K", "N", bf16, tile_k=64, tile_n=128)
            >>> b.dims, b.layout, b.tma_box
            (('K', 'N'), <Layout.TMA_128B: 'tma_128b'>, (64, 128))
        """
        box = None
        if tile_k is not None or tile_n is not None:
            box = (tile_k or k, tile_n or n)
        return cls(k, n, dtype=dtype, layout=_gmma_layout("wgmma_b", tile_n or n, dtype),
                   tma_box=box)


def _gmma_layout(fn: str, inner, dtype) -> Layout:
    if isinstance(inner, str):
        return Layout.ROW
    t = dtype if isinstance(dtype, PtxType) else by_name(dtype)
    row = inner * max(t.bits // 8, 1)
    if row >= 128:
        return Layout.TMA_128B
    got = {64: Layout.TMA_64B, 32: Layout.TMA_32B, 16: Layout.ROW}.get(row)
    if got is None:
        from .errors import PtxValueError

        raise PtxValueError(f"pyptx: {fn}({inner}, {t.name}) has row width {row} bytes, which "
                            f"is not one of the canonical GMMA widths {{16, 32, 64, 128}}.")
    return got


@dataclass(frozen=True)
class TmaDescriptorHandle:
    """A TMA descriptor a kernel uses: which tensor, box, swizzle, ...

    The runtime builds the real ``CUtensorMap`` from it and the live buffer pointer. Outside
    a trace ``X.tma_desc()`` gives a bare one (``TmaDescriptorHandle(X)``); as an operand it
    is the name of its ``.param`` slot (``X_tma_desc``).

    Examples:
        >>> from jax_pyptx import TensorSpec, TmaDescriptorHandle
        >>> h = TensorSpec("A").tma_desc()
        >>> isinstance(h, TmaDescriptorHandle), h.name
        (True, 'A_tma_desc')
    """

    tensor: object            # parameter name (a TensorSpec for a bare handle)
    param: str | None = None  # the .param slot (``<name>_tma_desc``)
    index: int = 0            # positional index of the tensor among the kernel's tensors
    dtype: PtxType | None = None
    shape: tuple = ()         # global shape, outermost first
    box: tuple = ()           # box, outermost first
    swizzle: int = 0          # bytes: 0, 32, 64, 128
    element_strides: tuple = ()
    interleave: int = 0
    oob_fill: int = 0
    l2_promotion: int = 0
    mode: str = "global"      # "global" (.u64 slot) or "by_value" (.align 64 .b8 [128])
    strides: tuple = ()       # global byte strides, outermost first (a view, e.g. rank-3
    #                           64-column stripes); () = the tensor's own C-order strides

    def __post_init__(self):
        if self.param is None:
            name = self.tensor if isinstance(self.tensor, str) else self.tensor.name
            object.__setattr__(self, "param", f"{name}_tma_desc")

    @property
    def name(self) -> str:
        """The ``.param`` slot name, ``<tensor>_tma_desc``.

        Examples:
            >>> from jax_pyptx import TmaDescriptorHandle
            >>> TmaDescriptorHandle("B").name
            'B_tma_desc'
        """
        return cast(str, self.param)        # set by __post_init__

    def __repr__(self):
        return f"TmaDescriptorHandle({self.param!r})"

    @property
    def symbol(self) -> str:
        """What it prints as when passed as an operand: the ``.param`` slot's name.

        Examples:
            >>> from jax_pyptx import TmaDescriptorHandle
            >>> from jax_pyptx.text.printer import operand
            >>> from jax_pyptx import ptx
            >>> h = TmaDescriptorHandle("B")
            >>> h.symbol, operand(ptx.addr(h))
            ('B_tma_desc', '[B_tma_desc]')
        """
        return cast(str, self.param)


class Shape(tuple):
    """A tensor parameter's shape (``X.shape``): a tuple whose out-of-range index is a
    ``PtxIndexError`` (an ``IndexError``) naming the tensor, its rank and the user's line.

    Examples:
        >>> from jax_pyptx.specs import Shape
        >>> s = Shape((64, 32), "X")
        >>> s[1], s == (64, 32)
        (32, True)
    """

    name: str

    def __new__(cls, dims, name: str = "tensor"):
        self = super().__new__(cls, dims)
        self.name = name
        return self

    def __getitem__(self, i):
        try:
            return tuple.__getitem__(self, i)
        except IndexError:
            import sys

            from .errors import PtxIndexError, SourceLoc

            f = sys._getframe(1)
            n = len(self)
            dims = ("it has none" if not n else f"index 0 .. {n - 1} (or -{n} .. -1)")
            raise PtxIndexError(
                f"{self.name}.shape[{i}]: {self.name} has rank {n} (shape {tuple(self)}); "
                f"its dims are {dims}", loc=SourceLoc(f.f_code.co_filename, f.f_lineno)
            ) from None

    def __reduce__(self):
        return (Shape, (tuple(self), self.name))


class TensorSpec:
    """A tensor parameter: ``TensorSpec(name, shape=None, dtype=None, layout=None)``.

    Inside a trace each positional parameter of a ``@kernel`` is one, with its concrete
    shape; ``X.ptr()`` and ``X.tma_desc()`` are answered by ``access``, the parameter ABI of
    the trace that made it (``jax_pyptx.specialize.abi``). As an operand it prints its name
    (``ptx.addr(X)`` is ``[X]``).

    Examples:
        >>> from jax_pyptx.types import bf16
        >>> TensorSpec("A", shape=(1, 2), dtype=bf16)
        TensorSpec('A', shape=(1, 2), dtype=bf16)
    """

    __slots__ = ("name", "shape", "dtype", "layout", "index", "trace", "output", "_access",
                 "tile")

    def __init__(self, name: str, shape: tuple | None = None, dtype: PtxType | None = None,
                 layout: Layout | None = None, index: int = 0, trace=None,
                 output: bool = False, access=None):
        self.name, self.dtype, self.layout = name, dtype, layout
        self.shape = None if shape is None else Shape(shape, name)
        self.index, self.trace, self.output = index, trace, output
        self._access = access
        self.tile = None            # the Tile it was made from (its TMA box and rank)

    def _shape(self, what: str) -> tuple:
        if self.shape is None:
            raise SpecializationError(f"TensorSpec {self.name!r}.{what}: the tensor has no shape "
                                      f"(a raw pointer parameter: give the kernel in_specs / "
                                      f"out_specs, or TensorSpec(name, shape=...))")
        return self.shape

    def __repr__(self):
        extra = ""
        if self.shape is not None:
            extra += f", shape={self.shape}"
        if self.dtype is not None:
            extra += f", dtype={self.dtype.name}"
        return f"TensorSpec({self.name!r}{extra})"

    @property
    def symbol(self) -> str:
        """What it prints as when passed as an operand: the parameter's name.

        Examples:
            >>> from jax_pyptx import TensorSpec
            >>> TensorSpec("A").symbol
            'A'
        """
        return self.name

    @property
    def ndim(self) -> int:
        """Number of dimensions.

        Examples:
            >>> from jax_pyptx import TensorSpec
            >>> from jax_pyptx.types import bf16
            >>> TensorSpec("A", shape=(64, 32), dtype=bf16).ndim
            2
        """
        return len(self._shape("ndim"))

    @property
    def size(self) -> int:
        """Number of elements.

        Examples:
            >>> from jax_pyptx import TensorSpec
            >>> from jax_pyptx.types import bf16
            >>> TensorSpec("A", shape=(64, 32), dtype=bf16).size
            2048
        """
        return math.prod(self._shape("size"))

    @property
    def nbytes(self) -> int:
        """Size in bytes (elements times the dtype's size).

        Examples:
            >>> from jax_pyptx import TensorSpec
            >>> from jax_pyptx.types import bf16
            >>> TensorSpec("A", shape=(64, 32), dtype=bf16).nbytes
            4096
        """
        if self.dtype is None:
            raise SpecializationError(f"TensorSpec {self.name!r}.nbytes: the tensor has no dtype")
        return self.size * self.dtype.nbytes

    @property
    def memory_shape(self) -> tuple:
        """The shape of the buffer in C order (``Layout.COL``: the last two dims swapped).

        Examples:
            >>> from jax_pyptx import Layout, TensorSpec
            >>> from jax_pyptx.types import f32
            >>> TensorSpec("B", shape=(64, 32), dtype=f32, layout=Layout.COL).memory_shape
            (32, 64)
        """
        return memory_shape(self._shape("memory_shape"), self.layout or Layout.ROW)

    @property
    def strides(self) -> tuple:
        """Element strides, outermost first (honouring the layout).

        Examples:
            >>> from jax_pyptx import Layout, TensorSpec
            >>> from jax_pyptx.types import f32
            >>> TensorSpec("A", shape=(64, 32), dtype=f32).strides
            (32, 1)
            >>> TensorSpec("B", shape=(64, 32), dtype=f32, layout=Layout.COL).strides
            (1, 64)
        """
        shape = list(self._shape("strides"))
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
        """A u64 register with the tensor's global address (loaded once per trace).

        Examples:
            >>> from jax_pyptx import Tile, kernel, ptx
            >>> from jax_pyptx.types import f32
            >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),))
            ... def k(X, Y):
            ...     px, again = X.ptr(), X.ptr()           # loaded once per trace
            ...     ptx.ret()
            >>> [" ".join(line.split()) for line in k.ptx().splitlines() if "[X]" in line]
            ['ld.param.u64 %rd0, [X];']
        """
        return self._need_access("ptr").ptr(self)

    def tma_desc(self, box=None, swizzle: int | None = None, **kw):
        """A u64 register with the address of this tensor's TMA descriptor (loaded once per
        trace from the ``.param .u64 <name>_tma_desc`` slot). ``box`` (outermost first) and
        ``swizzle`` (bytes) default from the tensor's ``Tile``: its ``tma_box`` (else 128 rows
        x one swizzle span) and its layout's swizzle. Outside a trace (or for a tensor the
        kernel has no spec for) it is a bare ``TmaDescriptorHandle``.

        Examples:
            >>> from jax_pyptx import Layout, TensorSpec, Tile, kernel, ptx
            >>> from jax_pyptx.types import bf16
            >>> @kernel(in_specs=(Tile(256, 64, bf16, Layout.TMA_128B),), out_specs=(Tile(256, 64, bf16),))
            ... def k(A, B):
            ...     d = A.tma_desc()
            ...     ptx.ret()
            >>> [line.split()[-1] for line in k.ptx().splitlines() if "tma_desc" in line]
            ['A_tma_desc', '[A_tma_desc];']
            >>> TensorSpec("A").tma_desc()                  # outside a trace: a bare handle
            TmaDescriptorHandle('A_tma_desc')
        """
        if self._access is None:
            return TmaDescriptorHandle(self)
        return self._access.tma_desc(self, box, swizzle, **kw)


def memory_shape(shape: tuple, layout: Layout) -> tuple:
    """The C-order buffer shape of a tensor of logical ``shape`` (COL: last two swapped)."""
    shape = tuple(shape)
    if layout is Layout.COL and len(shape) >= 2:
        return shape[:-2] + (shape[-1], shape[-2])
    return shape
