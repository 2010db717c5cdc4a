"""``smem``: shared memory. ``smem.alloc(bf16, (STAGES, 128, 64), align=1024)``,
``smem.mbarrier(STAGES)``.

Allocations are laid out in order, each aligned. A kernel whose shared memory exceeds 48 KB
(or that sets ``extern_smem=True``) gets one ``.extern .shared`` array instead and every
allocation becomes an offset into it; the kernel reports that many bytes of dynamic shared
memory for the specialization. The choice is made per trace, when tracing ends.
"""
from __future__ import annotations

import math

from ..errors import PtxValueError, TraceError
from ..ir.nodes import Addr, Instruction, Sym, VarDecl, Vec
from ..types import b8, b64, u32
from . import context
from .context import user_loc
from .reg import _type

STATIC_LIMIT = 48 * 1024
DYNAMIC_SYMBOL = "dyn_smem"


class SharedBuffer:
    """A shared-memory allocation (or a view of one at a byte offset)."""

    __slots__ = ("name", "dtype", "shape", "align", "offset", "view_offset", "trace")

    def __init__(self, name, dtype, shape, align, offset, trace, view_offset=0):
        self.name, self.dtype, self.shape, self.align = name, dtype, shape, align
        self.offset, self.trace, self.view_offset = offset, trace, view_offset

    def __repr__(self):
        return f"SharedBuffer({self.name}: {self.dtype.name}{list(self.shape)})"

    @property
    def nbytes(self) -> int:
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

    def __getitem__(self, index) -> Addr:
        """``[name+offset]`` of an element (static indices)."""
        return Addr(Sym(self.name), self.view_offset + self._elem_offset(index))

    def addr(self, byte_offset: int = 0) -> Addr:
        return Addr(Sym(self.name), self.view_offset + int(byte_offset))

    def stage(self, i: int) -> "SharedBuffer":
        """The ``i``-th slice along the first dimension (pipeline stage)."""
        sub = self.shape[1:] or (1,)
        off = self._elem_offset((i,))
        return SharedBuffer(self.name, self.dtype, sub, self.align, self.offset, self.trace,
                            self.view_offset + off)

    def __ptx_operand__(self):
        return Sym(self.name, self.view_offset)

    def ptr(self):
        """A u32 register holding this buffer's shared-window address."""
        from .values import Register

        tr = context.current("SharedBuffer.ptr")
        r = Register(tr.new_reg(u32), tr)
        tr.emit("mov", (".u32",), (r.ir, Sym(self.name, self.view_offset)), loc=user_loc())
        return r


class SmemLayout:
    """The shared memory of one trace."""

    def __init__(self):
        self.buffers: list = []
        self.size = 0
        self.max_align = 16
        self._names: set = set()

    def alloc(self, dtype, shape, align, name, trace) -> SharedBuffer:
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
            name = f"smem{len(self.buffers)}"
        if name in self._names or name == DYNAMIC_SYMBOL:
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
        """
        if not self.buffers:
            if extern:
                return [], [VarDecl(".shared", b8, DYNAMIC_SYMBOL, align=self.max_align,
                                    dims=(None,), linkage=".extern")], 0, 0
            return [], [], 0, 0
        if not extern and self.size <= STATIC_LIMIT:
            decls = [VarDecl(".shared", b8, b.name, align=b.align, dims=(b.nbytes,))
                     for b in self.buffers]
            return decls, [], 0, self.size
        base = {b.name: b.offset for b in self.buffers}
        _rewrite(body, base)
        decl = VarDecl(".shared", b8, DYNAMIC_SYMBOL, align=self.max_align, dims=(None,),
                       linkage=".extern")
        return [], [decl], -(-self.size // 16) * 16, 0


def _rewrite(stmts, base: dict) -> None:
    for s in stmts:
        if type(s) is Instruction:
            if any(_mentions(o, base) for o in s.operands):
                s.operands = tuple(_sub(o, base) for o in s.operands)


def _mentions(o, base) -> bool:
    t = type(o)
    if t is Sym:
        return o.name in base
    if t is Addr:
        return type(o.base) is Sym and o.base.name in base
    if t is Vec:
        return any(_mentions(i, base) for i in o.items)
    return False


def _sub(o, base):
    t = type(o)
    if t is Sym and o.name in base:
        return Sym(DYNAMIC_SYMBOL, base[o.name] + o.offset)
    if t is Addr and type(o.base) is Sym and o.base.name in base:
        return Addr(Sym(DYNAMIC_SYMBOL), base[o.base.name] + o.base.offset + o.offset, o.extra)
    if t is Vec:
        return Vec(tuple(_sub(i, base) for i in o.items))
    return o


# ----------------------------------------------------------------------------- namespace
def _layout(what):
    tr = context.current(what)
    if tr.smem is None:
        tr.smem = SmemLayout()
    return tr


def alloc(dtype, shape, align: int = 16, name: str | None = None) -> SharedBuffer:
    """Allocate ``shape`` elements of ``dtype`` in shared memory."""
    tr = _layout("smem.alloc")
    return tr.smem.alloc(_type(dtype), shape, align, name, tr)


def mbarrier(count: int = 1, name: str | None = None) -> SharedBuffer:
    """An array of ``count`` 64-bit mbarrier objects (8-byte aligned)."""
    tr = _layout("smem.mbarrier")
    return tr.smem.alloc(b64, (count,), 8, name or f"mbar{len(tr.smem.buffers)}", tr)


__all__ = ["alloc", "mbarrier", "SharedBuffer", "STATIC_LIMIT"]
