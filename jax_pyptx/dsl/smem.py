"""``smem``: shared memory. ``smem.alloc(bf16, (STAGES, 128, 64), align=1024)``,
``smem.mbarrier(STAGES)``.

Allocations are laid out in order, each aligned. A kernel whose shared memory exceeds 48 KB
(or that sets ``extern_smem=True``) gets one ``.extern .shared`` array instead and every
allocation becomes an offset into it; the kernel reports that many bytes of dynamic shared
memory for the specialization. The choice is made per trace, when tracing ends.

Examples:
    >>> from jax_pyptx import kernel, ptx, smem
    >>> from jax_pyptx.types import bf16
    >>> @kernel
    ... def k():
    ...     a = smem.alloc(bf16, (2, 64, 64), align=1024, name="a")
    ...     bar = smem.mbarrier(2)
    ...     ptx.ret()
    >>> [line.strip() for line in k.ptx().splitlines() if ".shared" in line]
    ['.shared .align 1024 .b8 a[16384];', '.shared .align 8 .b64 mbar_0[2];']

Unnamed buffers are ``smem_0, smem_1, ...`` and mbarrier arrays ``mbar_0, mbar_1, ...``,
numbered per trace (the documented names; the same kernel gives the same names in every
process). ``smem.base()``, ``extern_smem="name"`` and a string operand naming the extern
array (``reg.from_("dyn_smem", u32)``) address the whole window.
"""
from __future__ import annotations

import math

from ..errors import PtxValueError, TraceError
from ..ir.nodes import Addr, Imm, Instruction, Sym, VarDecl, Vec
from ..types import b8, b64, u32
from . import context
from .context import user_loc
from .reg import _type
from .smem_access import element as _element
# MbarrierRef, load, store and apply_swizzle are imported further down, where the page lists them

STATIC_LIMIT = 48 * 1024
DYNAMIC_SYMBOL = "dyn_smem"


class SharedBuffer:
    """A shared-memory allocation (or a view of one at a byte offset): ``smem.alloc``'s
    result (documented as ``SharedAlloc``; ``sA[stage]`` of a multi-dimensional buffer is a
    view of that stage, the documented ``SharedSlice``; ``bar[i]`` of an mbarrier array is
    barrier ``i``, a :class:`MbarrierRef`).

    Indexing: ``buf[i]`` of a 1-d buffer is the address ``[name+offset]`` of element ``i``;
    of a multi-dimensional buffer the view of slice ``i`` along the first dimension (its
    stage). ``buf[row, col]`` of a 2-d buffer (or a 2-d stage view) is the element's *value*:
    it loads it into a fresh register (``ld.shared``) where it is written, so it can be an
    operand anywhere (``ptx.inst.add.f32(acc, acc, partials[i, 0])``); ``buf[row, col] =
    reg`` stores it (row-major, swizzle-unaware; indices are ints or 32-bit registers). The
    address of element ``(i, j)`` is ``buf[i][j]``; ``buf[i, j, k]`` of a 3-d or larger
    buffer with ints is the address of that element.

    Examples:
        >>> from jax_pyptx import smem
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     buf = smem.alloc(f32, (2, 32), name="buf")
        ...     print(buf[1].byte_offset, buf.nbytes)
        ...     v = buf[1, 2]
        128 256
        >>> t.lines()
        ['ld.shared.f32 %f0, [buf+136];']
    """

    _is_shared_buffer = True    # how smem_access knows a buffer (it cannot import this class)
    __slots__ = ("name", "dtype", "shape", "align", "offset", "view_offset", "trace", "swizzle",
                 "gmma_layout", "gmma_major", "is_mbarrier", "stage_index")

    def __init__(self, name, dtype, shape, align, offset, trace, view_offset=0, swizzle=None,
                 gmma_layout=None, gmma_major=None):
        self.name, self.dtype, self.shape, self.align = name, dtype, shape, align
        self.offset, self.trace, self.view_offset = offset, trace, view_offset
        self.swizzle, self.gmma_layout, self.gmma_major = swizzle, gmma_layout, gmma_major
        self.is_mbarrier = False
        self.stage_index = None

    @property
    def byte_offset(self) -> int:
        """Where this view starts in the kernel's shared memory, in bytes.

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     buf = smem.alloc(f32, (4, 16))
            ...     print(buf[2].byte_offset)
            128
        """
        return self.offset + self.view_offset

    @property
    def alloc(self) -> "SharedBuffer":
        """The whole allocation this view is part of.

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     buf = smem.alloc(f32, (4, 16))
            ...     print(buf[2].alloc.nbytes, buf[2].nbytes)
            256 64
        """
        if not self.view_offset and self.stage_index is None:
            return self
        return SharedBuffer(self.name, self.dtype, self._root_shape, self.align, self.offset,
                            self.trace, 0, self.swizzle, self.gmma_layout, self.gmma_major)

    @property
    def stage(self):
        """``sA[i].stage`` is ``i``; ``sA.stage(i)`` the view of stage ``i``.

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import bf16
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     sA = smem.alloc(bf16, (3, 64, 64))
            ...     print(sA[2].stage, sA.stage(1).byte_offset)
            2 8192
        """
        if self.stage_index is not None:
            return self.stage_index
        return self._stage

    @property
    def count(self) -> int:
        """Number of elements (barriers, for an mbarrier array).

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print(smem.mbarrier(4).count)
            4
        """
        return math.prod(self.shape)

    def __repr__(self):
        return f"SharedAlloc({self.name!r}, {self.dtype.name}, {self.shape})"

    @property
    def nbytes(self) -> int:
        """Size of this buffer (or view) in bytes.

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import bf16
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     sA = smem.alloc(bf16, (2, 64, 64))
            ...     print(sA.nbytes, sA[0].nbytes)
            16384 8192
        """
        return math.prod(self.shape) * self.dtype.nbytes

    def _elem_offset(self, index) -> int:
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) > len(self.shape):
            raise TraceError(f"{self.name}: {len(index)} indices for a {len(self.shape)}-d "
                             f"buffer", loc=user_loc(3))
        off, stride = 0, self.dtype.nbytes
        strides = []
        for n in reversed(self.shape):
            strides.append(stride)
            stride *= n
        strides.reverse()
        for i, (ix, n) in enumerate(zip(index, self.shape)):
            if not isinstance(ix, int):
                raise TraceError(f"{self.name}[...]: indices must be Python ints; for a "
                                 f"register index use buf.ptr() and address arithmetic",
                                 loc=user_loc(3))
            if not 0 <= ix < n:
                raise PtxValueError(f"{self.name}: index {ix} out of range for dimension {i} "
                                    f"of size {n}", loc=user_loc(3))
            off += ix * strides[i]
        return off

    def __getitem__(self, index):
        """See the class docstring."""
        if type(index) is tuple:
            if len(index) == 2 and len(self.shape) == 2 and not self.is_mbarrier:
                return _element(self, "load", index)
            return Addr(Sym(self.name), self.view_offset + self._elem_offset(index))
        if len(self.shape) > 1:
            return self._stage(index)
        if self.is_mbarrier and isinstance(index, int) and not 0 <= index < self.shape[0]:
            from ..errors import PtxIndexError

            raise PtxIndexError(f"Mbarrier index {index} out of range for "
                                f"{self.name}[{self.shape[0]}]", loc=user_loc())
        if self.is_mbarrier and isinstance(index, int):
            return MbarrierRef(self, index)
        return Addr(Sym(self.name), self.view_offset + self._elem_offset(index))

    def __setitem__(self, index, value):
        """``buf[row, col] = reg``: ``st.shared`` of one element of a 2-d buffer."""
        from ..errors import PtxTypeError

        if type(index) is not tuple:
            raise PtxTypeError(f"{self.name}[{index!r}] = ...: stores take a (row, col) index "
                               f"of a 2-d buffer", loc=user_loc())
        if len(index) == 2 and len(self.shape) == 2 and \
                any(not isinstance(i, int) for i in index):
            _element(self, "store", index, value)
            return
        store(self.dtype, Addr(Sym(self.name), self.view_offset + self._elem_offset(index)),
              value)

    def addr(self, byte_offset: int = 0) -> Addr:
        """The address ``[name+offset]`` of this buffer (or view) plus ``byte_offset``.

        Examples:
            >>> from jax_pyptx import ptx, reg, smem
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     buf = smem.alloc(f32, (64,), name="buf")
            ...     _ = ptx.inst.st.shared.f32(buf.addr(8), reg.scalar(f32))
            >>> t.lines()
            ['st.shared.f32 [buf+8], %f0;']
        """
        return Addr(Sym(self.name), self.view_offset + int(byte_offset))

    def _stage(self, i: int) -> "SharedBuffer":
        """The ``i``-th slice along the first dimension (pipeline stage)."""
        sub = self.shape[1:] or (1,)
        off = self._elem_offset((i,))
        v = SharedBuffer(self.name, self.dtype, sub, self.align, self.offset, self.trace,
                         self.view_offset + off, self.swizzle, self.gmma_layout,
                         self.gmma_major)
        v.stage_index = i
        return v

    @property
    def _root_shape(self) -> tuple:
        for b in (self.trace.smem.buffers if self.trace is not None and
                  self.trace.smem is not None else ()):
            if b.name == self.name:
                return b.shape
        return self.shape

    def __ptx_operand__(self):
        return Sym(self.name, self.view_offset)

    def ptr(self):
        """A u32 register holding this buffer's shared-window address.

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     p = smem.alloc(f32, (64,), name="buf").ptr()
            >>> t.lines()
            ['mov.u32 %r0, buf;']
        """
        from .values import Register

        tr = context.current("SharedBuffer.ptr")
        r = Register(tr.new_reg(u32), tr)
        tr.emit("mov", (".u32",), (r.ir, Sym(self.name, self.view_offset)), loc=user_loc())
        return r


SharedAlloc = SharedBuffer      # the documented class names
SharedSlice = SharedBuffer
MbarrierArray = SharedBuffer


class SmemLayout:
    """The shared memory of one trace.

    Examples:
        >>> from jax_pyptx import smem
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = smem.alloc(f32, (64,))
        >>> type(t.smem).__name__
        'SmemLayout'
    """

    def __init__(self):
        self.buffers: list = []
        self.size = 0
        self.max_align = 16
        self._names: set = set()
        self.uses_base = False              # smem.base(): the kernel addresses the window itself
        self.extern_name = DYNAMIC_SYMBOL   # the extern array's symbol
        self.extra_symbols: set = set()     # symbols string operands may name (the extern one)
        self._counts = {"smem_": 0, "mbar_": 0}   # unnamed buffers: smem_<n>, mbar_<n>

    def auto_name(self, prefix: str) -> str:
        """The next free ``smem_<n>`` / ``mbar_<n>`` name of this trace (names a buffer
        was given explicitly are skipped).

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     a = smem.alloc(f32, 4, name="smem_0")
            ...     print(smem.alloc(f32, 4).name, smem.mbarrier(1).name)
            smem_1 mbar_0
        """
        while True:
            name = f"{prefix}{self._counts[prefix]}"
            self._counts[prefix] += 1
            if name not in self._names and name != self.extern_name:
                return name

    def alloc(self, dtype, shape, align, name, trace) -> SharedBuffer:
        """Place a buffer of ``shape`` ``dtype`` elements at the next ``align``-byte boundary
        (``smem.alloc`` calls this on the trace's layout).

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     a = smem.alloc(f32, (10,))
            ...     b = smem.alloc(f32, (4,), align=128)
            >>> a.byte_offset, b.byte_offset
            (0, 128)
        """
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(shape)
        if not shape or any(not isinstance(n, int) or n <= 0 for n in shape):
            raise PtxValueError(f"smem.alloc: shape must be positive ints, got {shape!r}",
                                loc=user_loc(3))
        if align <= 0 or align & (align - 1):
            raise PtxValueError(f"smem.alloc: align must be a power of two, got {align}",
                                loc=user_loc(3))
        if name is None:
            name = self.auto_name("smem_")
        if name in self._names or name in (DYNAMIC_SYMBOL, self.extern_name):
            raise TraceError(f"smem.alloc: name {name!r} is already used in this kernel",
                             loc=user_loc(3))
        self._names.add(name)
        offset = -(-self.size // align) * align
        buf = SharedBuffer(name, dtype, shape, align, offset, trace)
        self.size = offset + buf.nbytes
        self.max_align = max(self.max_align, align)
        self.buffers.append(buf)
        return buf

    def finalize(self, extern: bool, body: list):
        """Declarations for the buffers; rewrites operands when the layout is dynamic.

        Returns (function-scope decls, module-scope decls, dynamic bytes, static bytes).

        Examples:
            >>> from jax_pyptx import kernel, ptx, smem
            >>> from jax_pyptx.types import f32
            >>> @kernel
            ... def k():
            ...     _ = smem.alloc(f32, (16 * 1024,))      # 64 KB: more than 48 KB of static smem
            ...     ptx.ret()
            >>> [line.strip() for line in k.ptx().splitlines() if ".shared" in line]
            ['.extern .shared .align 128 .b8 dyn_smem[];']
        """
        sym = self.extern_name
        extern = extern or self.uses_base
        # the documented declaration: .extern .shared .align 128 .b8 NAME[]; (more when a
        # buffer in it needs more, e.g. a 128B-swizzled tile: 1024)
        decl = VarDecl(".shared", b8, sym, align=max(self.max_align, 128), dims=(None,),
                       linkage=".extern")
        if not self.buffers:
            return ([], [decl], 0, 0) if extern else ([], [], 0, 0)
        if not extern and self.size <= STATIC_LIMIT:
            decls = [VarDecl(".shared", b64, b.name, align=b.align, dims=(b.count,))
                     if b.is_mbarrier else
                     VarDecl(".shared", b8, b.name, align=b.align, dims=(b.nbytes,))
                     for b in self.buffers]
            return decls, [], 0, self.size
        base = {b.name: b.offset for b in self.buffers}
        _rewrite(body, base, sym)
        return [], [decl], -(-self.size // 16) * 16, 0


def _rewrite(stmts, base: dict, sym: str = DYNAMIC_SYMBOL, _clean=None) -> None:
    from ..ir.nodes import Block, Reg

    clean = set() if _clean is None else _clean   # id() of vectors that name no buffer
    for s in stmts:
        t = type(s)
        if t is Instruction:
            for o in s.operands:
                c = type(o)
                if c is Reg or c is Imm:
                    continue
                if c is Vec:                     # a register vector recurs: checked once
                    if id(o) in clean:
                        continue
                    if not _mentions(o, base):
                        clean.add(id(o))
                        continue
                elif not _mentions(o, base):
                    continue
                s.operands = tuple(_sub(o, base, sym) for o in s.operands)
                break
        elif t is Block:
            _rewrite(s.body, base, sym, clean)


def _mentions(o, base) -> bool:
    t = type(o)
    if t is Sym:
        return o.name in base
    if t is Addr:
        return type(o.base) is Sym and o.base.name in base
    if t is Vec:
        return any(_mentions(i, base) for i in o.items)
    return False


def _sub(o, base, sym=DYNAMIC_SYMBOL):
    t = type(o)
    if t is Sym and o.name in base:
        return Sym(sym, base[o.name] + o.offset)
    if t is Addr and type(o.base) is Sym and o.base.name in base:
        return Addr(Sym(sym), base[o.base.name] + o.base.offset + o.offset, o.extra)
    if t is Vec:
        return Vec(tuple(_sub(i, base, sym) for i in o.items))
    return o


# ----------------------------------------------------------------------------- namespace
def _layout(what):
    tr = context.current(what)
    if tr.smem is None:
        tr.smem = SmemLayout()
    return tr


# where a swizzle pattern repeats: a swizzled buffer starts on that boundary
SWIZZLE_ALIGN = {"32B": 256, "64B": 512, "128B": 1024}


def _swizzle_name(fn, swizzle):
    if swizzle is None:
        return None
    if isinstance(swizzle, str):
        v = swizzle.upper()
        if v == "NONE":
            return None
        if v in SWIZZLE_ALIGN:
            return v
    raise PtxValueError(f"{fn}: swizzle={swizzle!r} is not allowed; allowed: None, 'NONE', "
                        f"'32B', '64B', '128B'", loc=user_loc(3))


def alloc(dtype, shape, *args, swizzle=None, align=None, name: str | None = None
          ) -> SharedBuffer:
    """Allocate ``shape`` elements of ``dtype`` in shared memory.

    ``smem.alloc(bf16, (2, 64, 64), align=1024, name="a")``; the documented positional order
    ``smem.alloc(dtype, shape, swizzle, align, name)`` works too (a string or None third
    argument is the swizzle, an int the alignment). ``swizzle`` ("32B", "64B", "128B") records
    the layout TMA writes into the buffer (for descriptors built from it) and aligns the
    buffer to the swizzle pattern (256/512/1024 bytes) unless ``align`` says otherwise; the
    default alignment is otherwise 128 bytes.

    Examples:
        >>> from jax_pyptx import smem
        >>> from jax_pyptx.types import bf16
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     sA = smem.alloc(bf16, (2, 64, 64), swizzle="128B", align=1024, name="sA")
        ...     print(sA.nbytes, sA[1].byte_offset)
        16384 8192
    """
    given = {"swizzle": swizzle, "align": align, "name": name}
    order = ("swizzle", "align", "name") if args and (args[0] is None or
                                                       isinstance(args[0], str)) else \
        ("align", "name")
    if len(args) > len(order):
        raise TraceError(f"smem.alloc takes at most {2 + len(order)} positional arguments "
                         f"(dtype, shape, {', '.join(order)})", loc=user_loc())
    for key, v in zip(order, args):
        if given[key] is not None:
            raise TraceError(f"smem.alloc: {key} given twice", loc=user_loc())
        given[key] = v
    return _alloc("smem.alloc", dtype, shape, given["swizzle"], given["align"], given["name"])


def _alloc(fn, dtype, shape, swizzle, align, name, gmma_layout=None, gmma_major=None):
    tr = _layout(fn)
    sw = _swizzle_name(fn, swizzle)
    if align is None:
        align = SWIZZLE_ALIGN[sw] if sw else 128
    buf = tr.smem.alloc(_type(dtype), shape, align, name, tr)
    buf.swizzle, buf.gmma_layout, buf.gmma_major = sw, gmma_layout, gmma_major
    return buf


def alloc_with_layout(dtype, shape, swizzle=None, align=None, name=None, *, gmma_layout=None,
                      gmma_major=None) -> SharedBuffer:
    """``alloc`` that also records the canonical GMMA layout the buffer holds.

    Examples:
        >>> from jax_pyptx import smem
        >>> from jax_pyptx.types import bf16
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     sB = smem.alloc_with_layout(bf16, (64, 64), swizzle="128B", align=1024)
        ...     print(sB.nbytes)
        8192
    """
    return _alloc("smem.alloc_with_layout", dtype, shape, swizzle, align, name, gmma_layout,
                  gmma_major)


def wgmma_tile(dtype, shape, major="K", *, align=None, name=None) -> SharedBuffer:
    """A buffer for one wgmma operand tile in its canonical layout: ``major="K"`` for an
    (M, K) A-style tile, ``"MN"`` for a (K, N) B-style tile (leading dims, e.g. pipeline
    stages, are allowed). The layout (``pyptx.wgmma_layout``) decides the swizzle, which
    ``ptx.wgmma.mma_async(a=tile, ...)`` uses to build the descriptor.

    Examples:
        >>> from jax_pyptx import smem
        >>> from jax_pyptx.types import bf16
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     sA = smem.wgmma_tile(bf16, (2, 64, 64), major="K")
        ...     print(sA.nbytes, sA.swizzle)
        16384 128B
    """
    from .wgmma_layout import Major, pick_gmma_layout

    fn = "smem.wgmma_tile"
    t = _type(dtype)
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    m = str(major).upper() if isinstance(major, str) else major
    if m not in ("K", "MN", Major.K, Major.MN):
        raise PtxValueError(f"{fn}: major={major!r} is not allowed; allowed: 'K', 'MN'",
                            loc=user_loc())
    mj = "K" if m in ("K", Major.K) else "MN"
    if len(dims) < 2:
        raise PtxValueError(f"{fn}: shape must have at least 2 dims ((M, K) or (K, N)), got "
                            f"{shape!r}", loc=user_loc())
    r, c = dims[-2], dims[-1]
    try:
        lay = pick_gmma_layout(elem_bytes=max(t.bits // 8, 1), m_or_n=r if mj == "K" else c,
                               k=c if mj == "K" else r, major=mj)
    except PtxValueError as e:
        raise PtxValueError(f"{fn}: {e.message}", loc=user_loc()) from None
    return _alloc(fn, t, dims, lay.smem_swizzle, align if align is not None else
                  max(SWIZZLE_ALIGN.get(lay.smem_swizzle, 128), 128), name, lay, mj)


# barrier i of an mbarrier array, and below the loads, stores and swizzled offsets: each in its
# own module under this one, re-exported here at the place the API page shows it (mkdocstrings
# orders an imported name by its import line)
from .smem_barriers import MbarrierRef  # noqa: E402


def mbarrier(count: int = 1, name: str | None = None) -> SharedBuffer:
    """An array of ``count`` 64-bit mbarrier objects (8-byte aligned, declared
    ``.shared .align 8 .b64 mbar_<n>[count];``): ``bar[i]`` is barrier ``i``, an
    :class:`MbarrierRef` (the address ``[mbar_<n>+8*i]``).

    Examples:
        >>> from jax_pyptx import ptx, smem
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> from jax_pyptx.text.printer import operand
        >>> with trace_scope():
        ...     bar = smem.mbarrier(2, name="bar")
        ...     print(operand(ptx.addr(bar[1])), bar.nbytes)
        [bar+8] 16
    """
    tr = _layout("smem.mbarrier")
    buf = tr.smem.alloc(b64, (count,), 8, name or tr.smem.auto_name("mbar_"), tr)
    buf.is_mbarrier = True
    return buf


def base(name: str | None = None):
    """A u32 register with the address of the kernel's shared-memory window
    (``mov.u32 r, SYMBOL;``) for manual offset arithmetic. Without ``name`` the kernel's
    shared memory becomes one extern array (as with ``extern_smem=True``; size it with the
    kernel's ``smem=`` bytes) and the register points at its start; with ``name``, at that
    declared symbol.

    Examples:
        >>> from jax_pyptx import smem
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = smem.alloc(f32, (64,), name="buf")
        ...     p = smem.base("buf")
        >>> t.lines()
        ['mov.u32 %r0, buf;']
    """
    from .values import Register, str_operand

    tr = _layout("smem.base")
    loc = user_loc()
    if name is None:
        tr.smem.uses_base = True
        sym = Sym(tr.smem.extern_name)
    else:
        sym = name.__ptx_operand__() if hasattr(name, "__ptx_operand__") else str_operand(name)
        if type(sym) is not Sym:
            raise PtxValueError(f"smem.base: {name!r} is not a shared-memory symbol",
                                loc=loc)
    r = Register(tr.new_reg(u32), tr)
    tr.emit("mov", (".u32",), (r.ir, sym), loc=loc)
    return r


from .smem_access import load, store  # noqa: E402
from .smem_access import apply_swizzle  # noqa: E402

__all__ = ["alloc", "mbarrier", "SharedBuffer", "STATIC_LIMIT", "alloc_with_layout",
           "wgmma_tile", "base", "load", "store", "apply_swizzle", "SharedAlloc", "SharedSlice",
           "MbarrierArray", "MbarrierRef"]
