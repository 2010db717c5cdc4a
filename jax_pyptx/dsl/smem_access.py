"""Loads, stores and addresses in shared memory: ``smem.load``, ``smem.store``,
``smem.apply_swizzle``, and the ``buf[row, col]`` element access of a 2-d ``smem.alloc``
buffer (a read is a value: a fresh register loaded where it is written). Re-exported by
:mod:`jax_pyptx.dsl.smem`, which this module does not import (a buffer is known by its
``_is_shared_buffer`` class attribute).

Examples:
    >>> from jax_pyptx import reg, smem
    >>> from jax_pyptx.types import f32
    >>> from jax_pyptx.dsl.trace_scope import trace_scope
    >>> with trace_scope() as t:
    ...     buf = smem.alloc(f32, (64,), name="buf")
    ...     smem.store(f32, buf[1], smem.load(f32, buf[0]))
    >>> t.lines()
    ['ld.shared.f32 %f0, [buf];', 'st.shared.f32 [buf+4], %f0;']
"""
from __future__ import annotations

from ..errors import PtxValueError
from ..ir.nodes import Addr, Imm, Sym
from ..types import u32
from . import context
from .context import user_loc
from .reg import _type


def _address(fn, address) -> Addr:
    from ..errors import PtxTypeError
    from .values import Register, str_operand

    if isinstance(address, Addr):
        return address
    if isinstance(address, Register):
        return Addr(address.ir, 0)
    if getattr(type(address), "_is_shared_buffer", False):   # smem.SharedBuffer (a view too)
        return address.addr()
    if isinstance(address, str):
        op = str_operand(address)
        if type(op) is Sym:
            return Addr(op, 0)
    raise PtxTypeError(f"{fn}: address must be ptx.addr(...), a register holding a shared "
                       f"address, a shared buffer or a symbol name; got {address!r}",
                       loc=user_loc(3))


# ld/st have no .f16/.bf16 forms: half-precision values move as bits
_MOVE_AS = {"f16": ".b16", "bf16": ".b16", "f16x2": ".b32", "bf16x2": ".b32"}


def load(dtype, address):
    """``ld.shared.<type> r, [address];`` into a fresh register (f16/bf16 move as .b16).

    Examples:
        >>> from jax_pyptx import smem
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     buf = smem.alloc(f32, (64,), name="buf")
        ...     v = smem.load(f32, buf[3])
        >>> t.lines()
        ['ld.shared.f32 %f0, [buf+12];']
    """
    from .values import Register

    t = _type(dtype)
    tr = context.current("smem.load")
    a = _address("smem.load", address)
    r = Register(tr.new_reg(t), tr)
    tr.emit("ld", (".shared", _MOVE_AS.get(t.name, t.ptx)), (r.ir, a), loc=user_loc())
    return r


def store(dtype, address, value) -> None:
    """``st.shared.<type> [address], value;`` (``value`` a register).

    Examples:
        >>> from jax_pyptx import reg, smem
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     buf = smem.alloc(f32, (64,), name="buf")
        ...     smem.store(f32, buf[5], reg.scalar(f32, 1.0))
        >>> t.lines()
        ['mov.f32 %f0, 0f3F800000;', 'st.shared.f32 [buf+20], %f0;']
    """
    from ..errors import PtxTypeError
    from .values import Register, as_operand

    t = _type(dtype)
    tr = context.current("smem.store")
    if not isinstance(value, Register):
        raise PtxTypeError(f"smem.store: value must be a register, got {value!r}",
                           loc=user_loc())
    a = _address("smem.store", address)
    tr.emit("st", (".shared", _MOVE_AS.get(t.name, t.ptx)), (a, as_operand(value)),
            loc=user_loc())


def element(buf, what, index, value=None):
    """Load or store element ``[row, col]`` of a 2-d buffer: with two ints straight from
    ``[name+offset]``; with a register index, index, byte offset and address arithmetic in
    u32 registers first; then ``ld.shared`` into a fresh register (returned) or
    ``st.shared``."""
    from ..errors import PtxTypeError
    from .values import Register, Special, materialize

    fn = f"{buf.name}[row, col]"
    row, col = index
    for v in (row, col):
        if isinstance(v, Special):
            continue
        if not (isinstance(v, int) or isinstance(v, Register) and v.type.bits == 32 and
                v.type.kind in ("signed", "unsigned", "bits")):
            raise PtxTypeError(f"{fn}: indices must be ints or 32-bit integer registers, "
                               f"got {v!r}", loc=user_loc(3))
    if what == "store" and not isinstance(value, Register):
        raise PtxTypeError(f"{fn} = ...: the value must be a register, got {value!r}",
                           loc=user_loc(3))
    row = materialize(row) if isinstance(row, Special) else row
    col = materialize(col) if isinstance(col, Special) else col
    tr = context.current(fn)
    loc = user_loc(3)
    mv = _MOVE_AS.get(buf.dtype.name, buf.dtype.ptx)
    if isinstance(row, int) and isinstance(col, int):    # a constant address: [name+off]
        a = Addr(Sym(buf.name), buf.view_offset + buf._elem_offset((row, col)))
        if what == "load":
            v = _new(tr, buf.dtype)
            tr.emit("ld", (".shared", mv), (v.ir, a), loc=loc)
            return v
        tr.emit("st", (".shared", mv), (a, value.ir), loc=loc)
        return None
    cols = buf.shape[1]
    i = _new(tr, u32)
    if isinstance(row, int):
        if row * cols == 0:
            tr.emit("mov", (".u32",), (i.ir, _op(col)), loc=loc)
        else:
            tr.emit("add", (".u32",), (i.ir, _op(col), Imm(str(row * cols), u32)), loc=loc)
    else:
        t = _new(tr, u32)
        tr.emit("mul", (".lo", ".u32"), (t.ir, row.ir, Imm(str(cols), u32)), loc=loc)
        tr.emit("add", (".u32",), (i.ir, t.ir, _op(col)), loc=loc)
    size = buf.dtype.nbytes
    b = i
    if size != 1:
        b = _new(tr, u32)
        if size & (size - 1) == 0:
            tr.emit("shl", (".b32",), (b.ir, i.ir, Imm(str(size.bit_length() - 1), u32)),
                    loc=loc)
        else:
            tr.emit("mul", (".lo", ".u32"), (b.ir, i.ir, Imm(str(size), u32)), loc=loc)
    a = _new(tr, u32)
    tr.emit("mov", (".b32",), (a.ir, Sym(buf.name, buf.view_offset)), loc=loc)
    tr.emit("add", (".u32",), (a.ir, a.ir, b.ir), loc=loc)
    if what == "load":
        v = _new(tr, buf.dtype)
        tr.emit("ld", (".shared", _MOVE_AS.get(buf.dtype.name, buf.dtype.ptx)),
                (v.ir, Addr(a.ir, 0)), loc=loc)
        return v
    tr.emit("st", (".shared", _MOVE_AS.get(buf.dtype.name, buf.dtype.ptx)),
            (Addr(a.ir, 0), value.ir), loc=loc)
    return None


def _new(tr, t):
    from .values import Register

    return Register(tr.new_reg(t), tr)


def _op(x):
    from .values import as_operand

    return as_operand(x, u32)


_SWIZZLE_MASK = {"32B": 0x80, "64B": 0x180, "128B": 0x380}


def apply_swizzle(offset, swizzle):
    """The swizzled byte offset of logical byte ``offset`` (a 32-bit register) inside a
    buffer TMA filled with ``swizzle``: bits [4:6] ^= bits [7:9] for 128B ([4:5]/[7:8] for
    64B, [4]/[7] for 32B), i.e. ``and.b32 t, x, MASK; shr.u32 t, t, 3; xor.b32 y, x, t;``.
    ``None``/``"NONE"`` return ``offset`` unchanged.

    Examples:
        >>> from jax_pyptx import reg, smem
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     y = smem.apply_swizzle(reg.scalar(u32), "128B")
        >>> t.lines()
        ['and.b32 %r1, %r0, 896;', 'shr.u32 %r1, %r1, 3;', 'xor.b32 %r2, %r0, %r1;']
    """
    from ..errors import PtxTypeError
    from .values import Register

    fn = "smem.apply_swizzle"
    if swizzle is None or (isinstance(swizzle, str) and swizzle.upper() == "NONE"):
        return offset
    sw = swizzle.upper() if isinstance(swizzle, str) else swizzle
    if sw not in _SWIZZLE_MASK:
        raise PtxValueError(f"{fn}: Unknown swizzle mode {swizzle!r}; allowed: None, 'NONE', "
                            f"'32B', '64B', '128B'", loc=user_loc())
    if not isinstance(offset, Register) or offset.type.bits != 32 or \
            offset.type.kind not in ("unsigned", "signed", "bits"):
        raise PtxTypeError(f"{fn}: offset must be a 32-bit integer register, got {offset!r}",
                           loc=user_loc())
    tr = context.current(fn)
    loc = user_loc()
    t = Register(tr.new_reg(u32), tr)
    tr.emit("and", (".b32",), (t.ir, offset.ir, Imm(str(_SWIZZLE_MASK[sw]), u32)), loc=loc)
    tr.emit("shr", (".u32",), (t.ir, t.ir, Imm("3", u32)), loc=loc)
    out = Register(tr.new_reg(offset.type), tr)
    tr.emit("xor", (".b32",), (out.ir, offset.ir, t.ir), loc=loc)
    return out


__all__ = ["load", "store", "apply_swizzle", "element"]
