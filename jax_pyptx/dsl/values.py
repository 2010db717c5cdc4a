"""Traced values: registers, register arrays, special registers, typed immediates, negated
predicates, and the conversion of any of them (or a Python number, a string) to an IR operand.
The operators on registers and their promotion rules are in ``dsl/operators.py``.
"""
from __future__ import annotations

import struct
import sys
from typing import cast

from ..errors import PtxTypeError, PtxValueError, TraceError
from ..ir.nodes import Addr, Imm, ParenList, PredPair, Reg, Sink, Sym, Vec
from ..types import PtxType, by_name
from . import context
from .context import user_loc


# ----------------------------------------------------------------------------- immediates
_FLOAT_TEXT: dict = {}


def imm_text(value, t: PtxType) -> str:
    """The exact PTX spelling of ``value`` as an immediate of type ``t``."""
    if type(value) is float and value:   # memoised; 0.0 / -0.0 compare equal, so not them
        key = (t.name, value)
        got = _FLOAT_TEXT.get(key)
        if got is None:
            got = _FLOAT_TEXT[key] = _imm_text(value, t)
        return got
    return _imm_text(value, t)


def _imm_text(value, t: PtxType) -> str:
    if t.kind == "pred":
        return "1" if value else "0"
    if t.name == "f32" or t.name == "tf32":
        return "0f%08X" % struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if t.name == "f64":
        return "0d%016X" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    if t.kind == "float" or t.kind == "packed":
        if isinstance(value, float) or t.np_dtype is not None and not isinstance(value, int):
            if t.np_dtype is None:
                raise PtxTypeError(f"no immediate spelling for {value!r} as {t.name}")
            import numpy as np

            bits = np.array(value, dtype=t.np_dtype).view(f"u{t.nbytes}").item()
            return "0x%0*X" % (t.nbytes * 2, bits)
        return "0x%0*X" % (t.nbytes * 2, int(value))
    v = int(value)
    lo = -(1 << (t.bits - 1)) if t.kind in ("signed", "bits") else 0
    hi = (1 << t.bits) - 1 if t.kind in ("unsigned", "bits") else (1 << (t.bits - 1)) - 1
    if not lo <= v <= hi:
        raise PtxValueError(f"immediate {v} does not fit .{t.name} (range {lo}..{hi})",
                            loc=user_loc(3))
    return str(v)


class Immediate:
    """A typed immediate: ``reg.imm(1.0, f32)`` prints ``0f3F800000``."""

    __slots__ = ("value", "type", "ir")

    def __init__(self, value, t: PtxType):
        self.value, self.type = value, t
        self.ir = Imm(imm_text(value, t), t)

    def __repr__(self):
        return f"imm({self.value!r}, {self.type.name})"


# ----------------------------------------------------------------------------- registers
def _np_kind(x, kind: str) -> bool:
    """Whether ``x`` is a NumPy scalar of ``kind`` ("integer", "floating", "bool_"). NumPy is
    not imported for this: a program that never imported it has no NumPy scalars."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, getattr(np, kind))


class Register:
    """A PTX register owned by one trace.

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 3)
        ...     s = r * 4 + 1
        >>> r, t.lines()
        (Reg(%r0, u32), ['mov.u32 %r0, 3;', 'mul.lo.u32 %r1, %r0, 4;', 'add.u32 %r2, %r1, 1;'])
    """

    __slots__ = ("ir", "type", "trace")
    __array_priority__ = 1000

    def __init__(self, ir: Reg, trace):
        self.ir, self.trace = ir, trace
        self.type: PtxType = cast(PtxType, ir.type)     # the DSL's registers are always typed

    @property
    def name(self) -> str:
        """The register's PTX name (``%r0``, ``%f3``, or the name it was declared with).

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print(reg.scalar(f32).name, reg.scalar(f32, name="acc").name)
            %f0 acc
        """
        return self.ir.name

    def __repr__(self):
        return f"Reg({self.ir.name}, {self.type.name})"

    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise TraceError(
            f"register {self.name} has no value at trace time; use ptx.if_(...) / "
            f"ptx.while_(...) for control flow on registers", loc=user_loc())

    def __index__(self):
        raise TraceError(f"register {self.name} cannot be used as a Python index or range "
                         f"bound; use ptx.range_(...) for a loop over registers",
                         loc=user_loc())

    # arithmetic, bitwise, shift and comparison operators, ``-x``, ``~x``, ``abs(x)``, and
    # ``max``/``min``: defined with their rules in ``dsl/operators.py``, which installs them

    @property
    def dtype(self) -> PtxType:
        """The register's PTX type.

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import bf16
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print(reg.scalar(bf16).dtype)
            bf16
        """
        return self.type

    def set(self, value) -> "Register":
        """``mov`` ``value`` into this register (loop-carried updates).

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import u32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     i = reg.scalar(u32, 0)
            ...     _ = i.set(i + 1)
            >>> t.lines()
            ['mov.u32 %r0, 0;', 'add.u32 %r1, %r0, 1;', 'mov.u32 %r0, %r1;']
        """
        src = as_operand(value, self.type)
        _emit("mov", (_mov_type(self.type),), (self.ir, src))
        return self

    def addr(self, offset: int = 0) -> Addr:
        """``[reg+offset]``: this register as a memory address.

        Examples:
            >>> from jax_pyptx import ptx, reg
            >>> from jax_pyptx.types import f32, u64
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     p, v = reg.scalar(u64), reg.scalar(f32)
            ...     _ = ptx.inst.ld.global_.f32(v, p.addr(16))
            >>> t.lines()
            ['ld.global.f32 %f0, [%rd0+16];']
        """
        return Addr(self.ir, int(offset))


class _RegList(list):
    """``arr.regs`` is the list of registers; ``arr.regs()`` (the documented spelling) returns
    a copy of it."""

    __slots__ = ()

    def __call__(self) -> list:
        return list(self)


class RegArray:
    """A list of registers of one type; passed as one operand it is a vector ``{...}``.

    ``RegArray(regs, dtype)`` wraps registers; the documented ``RegArray(base, count, dtype)``
    names registers ``base0`` ... ``base{count-1}`` of the current trace (declared elsewhere,
    e.g. by ``reg.array``).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32, u64
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     v, p = reg.array(f32, 4), reg.scalar(u64)
        ...     _ = ptx.inst.ld.global_.v4.f32(v, p.addr())
        >>> t.lines()
        ['ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0];']
    """

    __slots__ = ("regs", "type", "_vec")

    def __init__(self, regs, t, dtype=None):
        self._vec = None                    # (trace, registers, Vec): see ``_vec_of``
        if isinstance(regs, str):           # RegArray(base, count, dtype)
            base, count, t = regs, t, dtype
            if isinstance(t, str):
                t = by_name(t)
            tr = context.current("RegArray(base, count, dtype)")
            regs = [Register(Reg(f"{base}{i}", t), tr) for i in range(count)]
        self.regs, self.type = _RegList(regs), t

    @property
    def dtype(self) -> PtxType:
        """The element type.

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import f16
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print(reg.array(f16, 2).dtype)
            f16
        """
        return self.type

    @property
    def count(self) -> int:
        """The number of registers.

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print(reg.array(f32, 8).count, len(reg.array(f32, 8)))
            8 8
        """
        return len(self.regs)

    @property
    def base(self) -> str:
        """The common name prefix of the elements (``%f`` for ``%f0..%f3``).

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print(reg.array(f32, 4, name="acc").base)
            acc
        """
        import os

        return os.path.commonprefix([r.name for r in self.regs]).rstrip("0123456789") or \
            os.path.commonprefix([r.name for r in self.regs])

    def hw_order(self, *, reverse: bool = False) -> list:
        """The registers in declaration order (reversed with ``reverse=True``).

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print([r.name for r in reg.array(f32, 3).hw_order(reverse=True)])
            ['%f2', '%f1', '%f0']
        """
        return list(reversed(self.regs)) if reverse else list(self.regs)

    def __setitem__(self, i, value):
        """``arr[i] = reg``: ``mov.b<bits> arr_i, reg;`` (nothing when it is already arr[i])."""
        if not isinstance(i, int):
            raise TraceError(f"RegArray index must be an int, got {i!r}", loc=user_loc())
        if type(value) is not Register:
            raise PtxTypeError(f"RegArray[{i}] = ...: expected a register, got {value!r}",
                               loc=user_loc())
        dst = self.regs[i]
        if value is dst:
            return
        bits = dst.type.bits if dst.type.bits in (16, 32, 64, 128) else 32
        mt = ".pred" if dst.type.kind == "pred" else f".b{bits}"
        _emit("mov", (mt,), (dst.ir, as_operand(value)), loc=user_loc())

    def __len__(self):
        return len(self.regs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return RegArray(self.regs[i], self.type)
        if type(i) is not int:
            if (isinstance(i, int) or _np_kind(i, "integer")) and not isinstance(i, bool):
                i = int(i)
            else:
                raise PtxTypeError(f"RegArray index must be an int, got {i!r}",
                                   loc=user_loc())
        if not -len(self.regs) <= i < len(self.regs):
            from ..errors import PtxIndexError

            raise PtxIndexError(f"RegArray index {i} out of range for {len(self.regs)} "
                                f"registers", loc=user_loc())
        return self.regs[i]

    def __iter__(self):
        return iter(self.regs)

    def __repr__(self):
        return f"RegArray({self.base}, {len(self.regs)}, {self.type.name})"


class Special:
    """A special register such as ``%tid.x``: an operand; arithmetic first moves it to a
    register."""

    __slots__ = ("ir", "type", "min_sm")

    def __init__(self, name: str, t: PtxType, min_sm: int = 0):
        self.ir, self.type, self.min_sm = Reg(name, t), t, min_sm

    def __repr__(self):
        return f"Special({self.ir.name}: {self.type.name})"

    def value(self) -> Register:
        return materialize(self)

    # what pyptx documents of ``ptx.special.tid.x()`` / ``ptx.sreg(...)`` (a ``Reg`` named
    # ``%tid.x`` of type u32): reading them emits nothing
    @property
    def name(self) -> str:
        return self.ir.name

    @property
    def dtype(self) -> PtxType:
        return self.type

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(materialize(self), name)


def _special_op(name):
    def op(self, *args):
        return getattr(materialize(self), name)(*args)
    return op


# a special register is first copied into a register (``mov.u32 %r0, %tid.x;``): ptxas
# takes special registers only as the source of mov/cvt, not of arithmetic or setp
for _n in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__and__",
           "__or__", "__xor__", "__lshift__", "__rshift__", "__lt__", "__le__", "__gt__",
           "__ge__", "__eq__", "__ne__", "__truediv__", "__floordiv__", "__mod__"):
    setattr(Special, _n, _special_op(_n))
Special.__hash__ = object.__hash__


def materialize(src, t: PtxType | None = None) -> Register:
    tr = context.current()
    t = t or src.type
    dst = Register(tr.new_reg(t), tr)
    _emit("mov", (_mov_type(t),), (dst.ir, as_operand(src, t)))
    return dst


def _mov_type(t: PtxType) -> str:
    """The ``mov`` type for a value of type ``t``: f32/f64 and 16-bit-or-wider integers as
    themselves, f16/bf16/tf32/packed and 8-bit integers (kept in .b16 registers) as bits."""
    if t.kind == "pred":
        return ".pred"
    if t.name in ("f32", "f64") or (t.kind in ("signed", "unsigned", "bits") and t.bits >= 16):
        return t.ptx
    if t.bits <= 8 and t.kind in ("float", "packed"):
        raise PtxTypeError(f"{t.name} values live in .b8 registers, which mov cannot write; "
                           f"produce them with cvt (ptx.cvt.pack, reg.cvt)", loc=user_loc())
    return f".b{max(t.bits, 16)}"


# ----------------------------------------------------------------------------- operands
_IR_OPERANDS = (Reg, Imm, Sym, Addr, Vec, PredPair, Sink, ParenList)
_IR_SET = frozenset(_IR_OPERANDS)
_IMM_NODES: dict = {}   # (type, float value) -> Imm (0.0 is left out: -0.0 == 0.0)


def as_operand(x, t: PtxType | None = None, tr=None):
    """IR operand for a DSL value; ``t`` types Python literals."""
    cls = type(x)
    if cls is Register:
        if tr is None:
            tr = context.current()
        if x.trace is not tr:
            raise TraceError(
                f"register {x.name} ({x.type.name}) belongs to kernel {x.trace.name!r}, "
                f"not to {tr.name!r} being traced now; registers live in the trace that "
                f"created them", loc=user_loc(3))
        return x.ir
    if cls is RegArray:
        if tr is None:
            tr = context.current()
        c = x._vec                          # the array's own last vector, if still current
        if c is not None and c[0] is tr and c[1] == x.regs:
            return c[2]
        v = _vec_of(x.regs, tr)
        x._vec = (tr, list(x.regs), v)
        return v
    if cls is Special:
        tr = context.current()
        if x.min_sm and tr.target.sm < x.min_sm:
            from ..errors import ArchError

            raise ArchError(f"{x.ir.name} needs sm_{x.min_sm}; kernel {tr.name!r} targets "
                            f"{tr.target.name}", loc=user_loc(3))
        return x.ir
    if cls is Immediate:
        return x.ir
    if cls in _IR_SET:                   # already an IR operand
        return x
    # NumPy scalars count as numbers where NumPy is loaded (it is not imported for this)
    np = None if cls is bool or cls is int or cls is float else sys.modules.get("numpy")
    if cls is bool or np is not None and isinstance(x, np.bool_):
        return Imm("1" if x else "0", t)
    if cls is int or np is not None and isinstance(x, np.integer):
        if t is not None and t.kind == "float":
            return Imm(imm_text(float(x), t), t)
        return Imm(imm_text(int(x), t) if t is not None else str(int(x)), t)
    if cls is float and t is not None and x:        # repeated literals share one node
        got = _IMM_NODES.get((t, x))
        if got is None and t.kind in ("float", "packed"):
            got = _IMM_NODES[(t, x)] = Imm(imm_text(x, t), t)
        if got is not None:
            return got
    if cls is float or np is not None and isinstance(x, np.floating):
        if t is None or t.kind not in ("float", "packed"):
            raise PtxTypeError(
                f"float literal {x!r} used where {t.name if t else 'an integer'} is expected; "
                f"float literals need a float operand type", loc=user_loc(3))
        return Imm(imm_text(x, t), t)
    if hasattr(x, "__ptx_operand__"):
        return x.__ptx_operand__()
    if isinstance(x, (list, tuple)):
        if x and all(type(i) is Register for i in x):
            return _vec_of(x, tr or context.current())
        return Vec(tuple(as_operand(i, t) for i in x))
    if cls is str:
        return str_operand(x, t)
    sym = getattr(x, "symbol", None)      # a TensorSpec or TMA descriptor handle: its name
    if isinstance(sym, str):
        return Sym(sym)
    raise PtxTypeError(f"cannot use {x!r} ({cls.__name__}) as a PTX operand; expected a "
                       f"register, immediate, address or label", loc=user_loc(3))


def _vec_of(regs, tr) -> Vec:
    """The ``{...}`` operand of registers ``regs``: one Vec per trace and register sequence
    (keyed by the registers' identities), so a 64-register accumulator passed to every MMA is
    converted, validated and printed once."""
    key = tuple(map(id, regs))
    got = tr.vecs.get(key)
    if got is None:
        v = Vec(tuple([as_operand(r, None, tr) for r in regs]))
        tr.vecs[key] = (tuple(regs), v)      # the registers stay alive: their ids stay theirs
        return v
    return got[1]


def declared_symbols(tr) -> dict:
    """Names a string operand may use in trace ``tr``: name -> what it is (``"param"``,
    ``"shared"``, ``"label"``, ``"register"``, ``"variable"``)."""
    names = {}
    for p in tr.params:
        names[p.name] = "param"
    layout = tr.smem
    if layout is not None:
        for b in layout.buffers:
            names[b.name] = "shared"
        names.update({n: "shared" for n in getattr(layout, "extra_symbols", ())})
    for n in tr.labels_defined:
        names[n] = "label"
    for n in tr.labels_used:
        names.setdefault(n, "label")
    for n in tr.named_regs:
        names[n] = "register"
    for n in tr.variables:
        names[n] = "variable"
    return names


def str_operand(text: str, t: PtxType | None = None):
    """A string operand: an immediate spelled as written when it starts with a digit or a
    sign (``"0x3F"``, ``"-1"``), a special register (``"%tid.x"``), else the name of a
    symbol the kernel declares (a param, a shared buffer, a label, a named register, a
    ``ptx.var``, the extern shared array: ``extern_smem="smem"``'s ``smem``, else
    ``dyn_smem``)."""
    if not text:
        raise PtxValueError("an empty string is not a PTX operand", loc=user_loc(4))
    c = text[0]
    if c.isdigit() or (c in "+-" and len(text) > 1):
        return Imm(text, t)
    if c == "%":
        return Reg(text, t)
    tr = context.current(f"the operand {text!r}")
    names = declared_symbols(tr)
    kind = names.get(text)
    if kind == "register":
        return tr.named_regs[text].ir
    if kind is None and tr.smem is not None and text == tr.smem.extern_name:
        # the kernel's extern shared array (extern_smem="name", or dyn_smem): naming it makes
        # the kernel's shared memory that one window, as smem.base() does
        tr.smem.uses_base = True
        return Sym(text)
    if kind is None:
        shown = ", ".join(sorted(names)) or "none"
        raise PtxValueError(f"operand {text!r} names no symbol kernel {tr.name!r} declares; "
                            f"declared: {shown}", loc=user_loc(4))
    return Sym(text)


def _emit(opcode, mods, ops, loc=None):
    tr = context.current()
    return tr.emit(opcode, mods, ops, loc=loc or user_loc(3))


_PRED_LOGIC = {"&": "and", "|": "or", "^": "xor"}


class NotPred:
    """``~p``, ``ptx.not_(p)`` (also ``reg.NegPred(p)``): predicate ``p`` negated, with no
    code: a guard ``@!p``, or the source operand ``!p`` (ptxas takes a negated predicate for
    any predicate source: ``selp``, ``and.pred``, ``mov.pred``, ``setp``'s ``c``...).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 0)
        ...     p = r < 4
        ...     _ = ptx.inst.add.u32(r, r, 1, pred=~p)
        ...     _ = ptx.inst.selp.u32(r, 1, 2, ~p)
        >>> t.lines()[-2:]
        ['@!%p0 add.u32 %r0, %r0, 1;', 'selp.u32 %r0, 1, 2, !%p0;']
    """

    __slots__ = ("reg",)

    def __init__(self, reg):
        self.reg = reg

    @property
    def type(self) -> PtxType:
        """The negated register's type (``pred``); also ``.dtype``.

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import pred
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print((~reg.scalar(pred)).type, (~reg.scalar(pred)).dtype)
            pred pred
        """
        return self.reg.type

    dtype = type

    def __ptx_operand__(self):
        ir = as_operand(self.reg)
        return Reg(ir.name, ir.type, not ir.neg)

    def __invert__(self):
        return self.reg

    def _logic(self, sym, o, reverse):
        # ``~p & q``: ``and.pred d, !p, q`` (both sides may be negated)
        if type(o) in (Register, NotPred) and o.type.kind == "pred":
            tr = context.current()
            dst = Register(tr.new_reg(self.type), tr)
            x, y = as_operand(self), as_operand(o)
            tr.emit(_PRED_LOGIC[sym], (".pred",),
                    (dst.ir, y, x) if reverse else (dst.ir, x, y), loc=user_loc(3))
            return dst
        raise PtxTypeError(f"operator '{sym}' on a negated predicate and {type(o).__name__} "
                           f"{o!r}; expected a predicate register", loc=user_loc(3))

    def __and__(self, o): return self._logic("&", o, False)
    def __rand__(self, o): return self._logic("&", o, True)
    def __or__(self, o): return self._logic("|", o, False)
    def __ror__(self, o): return self._logic("|", o, True)
    def __xor__(self, o): return self._logic("^", o, False)
    def __rxor__(self, o): return self._logic("^", o, True)

    def __repr__(self):
        return f"NegPred({getattr(self.reg, 'name', self.reg)})"


class PipeRef:
    """``a | p`` where one side is a predicate: the ``%r|%p`` operand (no code), e.g. the
    destination pair of ``shfl.sync`` or ``elect.sync``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import pred, u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     lane, leader = reg.scalar(u32), reg.scalar(pred)
        ...     _ = ptx.inst.elect.sync(lane | leader, 0xFFFFFFFF)
        >>> t.lines()
        ['elect.sync %r0|%p0, 4294967295;']
    """

    __slots__ = ("left", "right")

    def __init__(self, left, right):
        self.left, self.right = left, right

    def __ptx_operand__(self):
        from ..ir.nodes import PredPair

        return PredPair(as_operand(self.left), as_operand(self.right))

    def __repr__(self):
        return f"PipeRef({self.left.name}|{self.right.name})"


__all__ = ["Register", "RegArray", "Special", "Immediate", "PipeRef", "NotPred", "as_operand",
           "imm_text", "materialize", "str_operand", "declared_symbols"]
