"""Operators on registers: each emits one PTX instruction. Promotion rules:

1. register (op) register: the types must agree. ``.bN`` combines with any type of the same
   width and the result takes the other type. Any other mix of widths, signedness or int/float
   raises ``PtxTypeError``: write the conversion (``reg.cvt(x, s32)``). Integers of different
   widths (16 bits or more) widen the narrower one first (``cvt.u64.u32``).
2. register (op) Python int: the int becomes an immediate of the register's type and must fit
   it (a float register takes an int exactly, as a float immediate).
3. register (op) Python float: only float registers; an integer register raises.
4. ``/`` is ``div.rn`` for f32/f64 and ``div`` for integers; ``%`` is ``rem``; ``>>`` is
   arithmetic for signed and logical for unsigned/bits; comparisons emit ``setp`` and return a
   predicate (``!=`` on floats is ``neu``, true for NaN as in Python); ``~p`` on a predicate is
   ``!p`` (no code), on other registers ``not.bN``.
5. In-place operators (``x += 1``) write the result into ``x``'s own register, so a value
   carried around a loop keeps its register.

The rules live here, the values in ``dsl/values.py``: importing this module installs the
operator methods of :class:`RegisterOperators` on ``Register`` (the package's ``dsl`` does it
first thing), so the values module does not import its operators back.

Examples:
    >>> from jax_pyptx import reg
    >>> from jax_pyptx.types import u32, u64
    >>> from jax_pyptx.dsl.trace_scope import trace_scope
    >>> with trace_scope() as t:
    ...     i, base = reg.scalar(u32), reg.scalar(u64)
    ...     p = base + i * 4
    >>> t.lines()
    ['mul.lo.u32 %r1, %r0, 4;', 'cvt.u64.u32 %rd1, %r1;', 'add.s64 %rd2, %rd0, %rd1;']
"""
from __future__ import annotations

from ..errors import PtxTypeError
from ..ir.nodes import Imm
from ..isa import TABLE
from ..isa.validate import imm_text_matters, no_immediates
from ..types import PtxType, by_name, pred, u32
from . import context
from .context import user_loc
from .values import (
    Immediate, NotPred, PipeRef, Register, Special, _np_kind, as_operand, materialize,
)

# ----------------------------------------------------------------------------- types
_SYMBOL = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "div", "%": "rem",
           "&": "and", "|": "or", "^": "xor", "<<": "shl", ">>": "shr"}


def unify(a: PtxType, b: PtxType, op: str) -> PtxType:
    """The result type of ``a op b`` for two registers (rule 1 in the module docstring).

    Examples:
        >>> from jax_pyptx.dsl.operators import unify
        >>> from jax_pyptx.types import b32, f32, u32
        >>> unify(b32, f32, "+"), unify(u32, u32, "*")
        (f32, u32)
    """
    if a is b:
        return a
    if a.bits == b.bits and "pred" not in (a.kind, b.kind):
        if a.kind == "bits" and b.kind != "packed":
            return b
        if b.kind == "bits" and a.kind != "packed":
            return a
    if a.bits != b.bits:
        why = f"mixed widths ({a.bits}-bit and {b.bits}-bit)"
    elif a.kind == "float" or b.kind == "float":
        why = "mixed integer and float types" if a.kind != b.kind else "different float types"
    else:
        why = "mixed signedness"
    raise PtxTypeError(
        f"operator '{op}' on {a.name} and {b.name}: {why}; convert one operand first, "
        f"e.g. reg.cvt(x, {a.name})", loc=user_loc(4))


def _operand_pair(op, a: Register, o):
    co = type(o)
    if co is Special:
        o, co = materialize(o), Register
    if co is Register:
        return unify(a.type, o.type, op), o
    if co is NotPred and a.type.kind == "pred" == o.type.kind:
        return a.type, o                 # ``p & ~q``: the source ``!%q``
    if isinstance(o, (int, float, Immediate)) or _np_kind(o, "integer") or \
            _np_kind(o, "floating"):
        return a.type, o
    raise PtxTypeError(f"operator '{op}' on {a.type.name} register and {type(o).__name__} "
                       f"{o!r}; expected a register or a Python number", loc=user_loc(4))


_INT_KINDS = ("signed", "unsigned", "bits")


def _widens(a: PtxType, b: PtxType) -> bool:
    """Two integer types of different widths: the narrower one widens (integer promotion)."""
    return a.bits != b.bits and a.kind in _INT_KINDS and b.kind in _INT_KINDS and \
        a.bits >= 16 and b.bits >= 16


def _widen(op: str, a, o, sensitive: bool):
    """Integer promotion: the narrower of ``a``, ``o`` (registers of different widths) is
    widened to the other's width, zero- or sign-extended by its own type (``cvt.u64.u32``,
    ``cvt.s64.s32``). Returns ``(type, a, o)``. For operations whose result depends on
    signedness (``sensitive``: ordering comparisons, division, remainder, min/max), a signed
    operand widened next to an unsigned one has no PTX form that keeps its value: error."""
    ta, to = a.type, o.type
    wide, narrow = (a, o) if ta.bits > to.bits else (o, a)
    wt, nt = wide.type, narrow.type
    ext = by_name(f"{'s' if nt.kind == 'signed' else 'u'}{wt.bits}")
    if sensitive and nt.kind == "signed" and wt.kind != "signed":
        raise PtxTypeError(
            f"operator '{op}' on {ta.name} and {to.name}: the {nt.name} operand sign-extends "
            f"to {ext.name}, which an unsigned {wt.bits}-bit '{op}' would misread; convert "
            f"one operand first, e.g. reg.cvt(x, s{wt.bits})", loc=user_loc(4))
    tr = context.current()
    t = Register(tr.new_reg(ext), tr)
    tr.emit("cvt", (ext.ptx, f".{ext.name[0]}{nt.bits}"), (t.ir, as_operand(narrow, None, tr)),
            loc=user_loc(4))
    if wide is a:
        return wt, a, t
    return wt, t, o


def _shift_amount(op: str, a, o):
    """The amount of ``a << o`` / ``a >> o``: a 32-bit integer register (PTX's shift amount
    is ``.u32`` whatever the shifted type), never widened."""
    if o.type.kind not in _INT_KINDS or o.type.bits != 32:
        raise PtxTypeError(f"operator '{op}' on {a.type.name} and {o.type.name}: the shift "
                           f"amount must be a 32-bit integer register or an int",
                           loc=user_loc(4))
    return o


def _arith_mods(sym: str, t: PtxType) -> tuple:
    name = _SYMBOL[sym]
    if t.kind == "pred":
        if name in ("and", "or", "xor"):
            return name, (".pred",)
        raise PtxTypeError(f"operator '{sym}' is not defined on predicates; use & | ^ ~",
                           loc=user_loc(5))
    if name in ("and", "or", "xor", "shl"):
        if t.kind == "float":
            raise PtxTypeError(f"operator '{sym}' is not defined on {t.name}; use bit "
                               f"operations on a .b{t.bits} register", loc=user_loc(5))
        return name, (f".b{t.bits}",)
    if name == "shr":
        if t.kind == "float":
            raise PtxTypeError(f"operator '>>' is not defined on {t.name}", loc=user_loc(5))
        return name, (t.ptx if t.kind != "bits" else f".b{t.bits}",)
    if t.kind == "float":
        if sym == "%" or sym == "//":
            raise PtxTypeError(f"operator '{sym}' is not defined on {t.name}", loc=user_loc(5))
        if name == "div":
            if t.name not in ("f32", "f64"):
                raise PtxTypeError(f"operator '/' is not defined on {t.name}", loc=user_loc(5))
            return name, (".rn", t.ptx)
        return name, (t.ptx,)
    if t.kind == "packed":
        raise PtxTypeError(f"operator '{sym}' on {t.name}: use ptx.inst with the packed form",
                           loc=user_loc(5))
    it = t if t.kind != "bits" else by_name(f"u{t.bits}")
    if t.bits < 16:
        raise PtxTypeError(f"operator '{sym}' on {t.name}: 8-bit arithmetic does not exist in "
                           f"PTX; convert to 16 or 32 bits", loc=user_loc(5))
    if name == "mul":
        return name, (".lo", ".u64" if t.bits == 64 else it.ptx)
    if name == "add" and t.bits == 64 or name == "sub" and t.bits >= 32:
        return name, (f".s{t.bits}",)       # bit-identical; the documented spelling
    return name, (it.ptx,)


_FAST_BIN: dict = {}    # (operator, type) -> (opcode, modifiers, type of a number operand)
_NUMS: dict = {}        # (type, class, value) -> the Imm node of a Python number operand


def _num_operand(o, t: PtxType, tr):
    """``as_operand(o, t)`` for a Python int/float, memoised (0.0 is left out: -0.0 == 0.0)."""
    key = (t, type(o), o)
    got = _NUMS.get(key)
    if got is None:
        got = as_operand(o, t, tr)
        if (o or type(o) is int) and len(_NUMS) < 65536:
            _NUMS[key] = got
    return got


def _fast_binary(sym: str, t: PtxType):
    """The (opcode, modifiers, number operand type) of ``t (sym) t`` where nothing but the type
    decides the instruction (no widening, no mov of a constant first, no ``p | q`` pair), else
    False. Memoised; an operator the type does not have is left to the full path (its error)."""
    key = (sym, t)
    got = _FAST_BIN.get(key)
    if got is None:
        got = False
        if t.kind != "pred" and not no_immediates(t):
            try:
                name, mods = _arith_mods(sym, t)
            except PtxTypeError:
                pass
            else:
                # an immediate that fits the type passes validation whatever its value
                # when no form of the instruction has a range or a predicate operand:
                # then the validation key names its kind ("#"), not its text
                forms = TABLE.get(name, ())
                free = not imm_text_matters(name, forms, 1) and \
                    not imm_text_matters(name, forms, 2)
                got = (name, mods, u32 if name in ("shl", "shr") else t, free)
        _FAST_BIN[key] = got
    return got


def _binary(sym: str, a: Register, o, reverse: bool = False, into: Register | None = None):
    co = type(o)
    # fast path: register (op) same-typed register, or register (op) Python number
    if co is Register and o.type is a.type and sym != "<<" and sym != ">>" or \
            co is int or co is float:
        got = _FAST_BIN.get((sym, a.type))
        if got is None:
            got = _fast_binary(sym, a.type)
        stack = context.tracing.stack
        if got and stack:
            tr = stack[-1]
            if a.trace is tr and (co is not Register or o.trace is tr):
                name, mods, nt, free = got
                t = a.type
                if co is Register:
                    y, ys = o.ir, t
                else:
                    y = _num_operand(o, nt, tr)
                    ys = "#" if free else y.text
                dst = into if into is not None else Register(tr.new_reg(t), tr)
                if reverse:
                    tr.emit_keyed(name, mods, (dst.ir, y, a.ir), None, user_loc(3),
                                  (name, mods, t, ys, t))
                else:
                    tr.emit_keyed(name, mods, (dst.ir, a.ir, y), None, user_loc(3),
                                  (name, mods, t, t, ys))
                return dst
    if co is Special:
        o, co = materialize(o), Register
    if co is Register:
        at, ot = a.type, o.type
        if sym == "<<" or sym == ">>":
            t, other = at, _shift_amount(sym, a, o)
        elif at is ot:
            t, other = at, o
        elif sym == "|" and (at.kind == "pred") != (ot.kind == "pred"):
            return PipeRef(a, o)
        elif _widens(at, ot):
            t, a, other = _widen(sym, a, o, sym in _SIGNED_OPS)
        else:
            t, other = unify(at, ot, sym), o
    else:
        t, other = _operand_pair(sym, a, o)
    name, mods = _arith_mods(sym, t)
    tr = context.current()
    shift_t = u32 if name in ("shl", "shr") else t
    if reverse:
        x, y = _in_register(as_operand(other, t, tr), t, tr), as_operand(a, t, tr)
    else:
        x, y = as_operand(a, t, tr), _in_register(as_operand(other, shift_t, tr), shift_t, tr)
    if into is not None:
        if into.type is not t and into.type.bits != t.bits:
            raise PtxTypeError(f"in-place '{sym}=' would change {into.name} from "
                               f"{into.type.name} to {t.name}", loc=user_loc(3))
        dst = into
        as_operand(into, None, tr)
    else:
        dst = Register(tr.new_reg(t), tr)
    ins = tr.emit(name, mods, (dst.ir, x, y), loc=user_loc(3))
    if sym == "|" and t.kind == "pred":
        pairs = tr.pipe_pairs
        if pairs is None:
            pairs = tr.pipe_pairs = {}
        pairs[dst.ir.name] = (ins, x, y)
    return dst


def _in_register(op, t: PtxType, tr):
    """PTX has no .f16 / .bf16 / packed immediates (``isa.validate.no_immediates``): such a
    constant operand goes through ``mov.bN`` into a register first."""
    if type(op) is Imm and t.bits >= 16 and no_immediates(t):
        r = tr.new_reg(t)
        tr.emit("mov", (f".b{t.bits}",), (r, op), loc=user_loc(4))
        return r
    return op


_SIGNED_OPS = frozenset(("/", "//", "%"))


def _minmax(name: str, a: Register, o):
    if type(o) is Special:
        o = materialize(o)
    if type(o) is Register and _widens(a.type, o.type):
        t, a, other = _widen(name, a, o, True)
    else:
        t, other = _operand_pair(name, a, o)
    if t.kind == "bits":
        t = by_name(f"u{t.bits}")
    if t.kind not in ("signed", "unsigned", "float") or t.bits < 16:
        raise PtxTypeError(f"{name}() is not defined on {t.name}", loc=user_loc(3))
    tr = context.current()
    dst = Register(tr.new_reg(a.type), tr)
    tr.emit(name, (t.ptx,), (dst.ir, as_operand(a, t, tr),
                             _in_register(as_operand(other, t, tr), t, tr)), loc=user_loc(3))
    return dst


_CMP_UNSIGNED = {"lt": "lo", "le": "ls", "gt": "hi", "ge": "hs"}
_CMP_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


_FAST_CMP: dict = {}    # (comparison, type) -> setp modifiers, where the type alone decides


def _fast_compare(cmp: str, t: PtxType):
    key = (cmp, t)
    got = _FAST_CMP.get(key)
    if got is None:
        got = False
        if t.kind in ("signed", "unsigned") or t.name in ("f32", "f64"):
            got = (f".{'neu' if cmp == 'ne' and t.kind == 'float' else cmp}", t.ptx)
        elif t.kind == "bits":
            got = (f".{cmp}", f".u{t.bits}")
        if got:
            got = (got, not imm_text_matters("setp", TABLE.get("setp", ()), 2))
        _FAST_CMP[key] = got
    return got


def _compare(cmp: str, a: Register, o):
    co = type(o)
    if co is Register and o.type is a.type or co is int or co is float:
        got = _FAST_CMP.get((cmp, a.type))
        if got is None:
            got = _fast_compare(cmp, a.type)
        stack = context.tracing.stack
        if got and stack:
            tr = stack[-1]
            if a.trace is tr and (co is not Register or o.trace is tr):
                mods, free = got
                t = a.type
                if co is Register:
                    y, ys = o.ir, t
                else:
                    y = _num_operand(o, t, tr)
                    ys = "#" if free else y.text
                dst = Register(tr.new_reg(pred), tr)
                tr.emit_keyed("setp", mods, (dst.ir, a.ir, y), None, user_loc(3),
                              ("setp", mods, pred, t, ys))
                return dst
    if type(o) is Special:
        o = materialize(o)
    if type(o) is Register and _widens(a.type, o.type):
        t, a, other = _widen(_CMP_SYMBOL[cmp], a, o, cmp not in ("eq", "ne"))
    else:
        t, other = _operand_pair(_CMP_SYMBOL[cmp], a, o)
    if t.kind == "pred":
        if cmp in ("eq", "ne"):
            tr = context.current()
            dst = Register(tr.new_reg(pred), tr)
            tr.emit("xor", (".pred",), (dst.ir, a.ir, as_operand(other, pred)), loc=user_loc(3))
            return ~dst if cmp == "eq" else dst
        raise PtxTypeError("ordering comparisons are not defined on predicates",
                           loc=user_loc(3))
    if t.kind == "float":
        if cmp == "ne":
            cmp = "neu"
        ct = t
    elif t.kind == "bits":
        ct = by_name(f"u{t.bits}")        # untyped bits compare as unsigned
    else:
        ct = t
    if t.kind == "packed" or (t.kind == "float" and t.name not in ("f32", "f64")):
        raise PtxTypeError(f"comparison on {t.name} registers: use ptx.inst.setp with the "
                           f"{t.name} form", loc=user_loc(3))
    tr = context.current()
    dst = Register(tr.new_reg(pred), tr)
    tr.emit("setp", (f".{cmp}", ct.ptx), (dst.ir, as_operand(a, t), as_operand(other, t)),
            loc=user_loc(3))
    return dst


def _unary(name: str, a: Register):
    t = a.type
    tr = context.current()
    loc = user_loc(3)
    if name == "not":
        if t.kind == "float":
            raise PtxTypeError(f"operator '~' is not defined on {t.name}", loc=loc)
        mods = (".pred",) if t.kind == "pred" else (f".b{t.bits}",)
    else:
        if t.kind in ("unsigned", "bits", "pred", "packed"):
            raise PtxTypeError(f"{'-x' if name == 'neg' else 'abs(x)'} is not defined on "
                               f"{t.name}; convert to s{t.bits} first", loc=loc)
        mods = (t.ptx,)
    dst = Register(tr.new_reg(t), tr)
    tr.emit(name, mods, (dst.ir, a.ir), loc=loc)
    return dst


# ----------------------------------------------------------------------------- the methods
class RegisterOperators:
    """The operators of :class:`~jax_pyptx.dsl.values.Register`, installed on it when this
    module is imported: arithmetic, bitwise, shifts, in-place forms, comparisons, ``-x``,
    ``~x``, ``abs(x)``, ``max``, ``min``.

    Examples:
        >>> from jax_pyptx.dsl.operators import RegisterOperators
        >>> from jax_pyptx.dsl.values import Register
        >>> Register.__add__ is RegisterOperators.__add__, Register.max is RegisterOperators.max
        (True, True)
    """

    # arithmetic
    def __add__(self, o): return _binary("+", self, o)
    def __radd__(self, o): return _binary("+", self, o, reverse=True)
    def __sub__(self, o): return _binary("-", self, o)
    def __rsub__(self, o): return _binary("-", self, o, reverse=True)
    def __mul__(self, o): return _binary("*", self, o)
    def __rmul__(self, o): return _binary("*", self, o, reverse=True)
    def __truediv__(self, o): return _binary("/", self, o)
    def __rtruediv__(self, o): return _binary("/", self, o, reverse=True)
    def __floordiv__(self, o): return _binary("//", self, o)
    def __mod__(self, o): return _binary("%", self, o)
    def __and__(self, o): return _binary("&", self, o)
    def __rand__(self, o): return _binary("&", self, o, reverse=True)
    def __or__(self, o): return _binary("|", self, o)
    def __ror__(self, o): return _binary("|", self, o, reverse=True)
    def __xor__(self, o): return _binary("^", self, o)
    def __rxor__(self, o): return _binary("^", self, o, reverse=True)
    def __lshift__(self, o): return _binary("<<", self, o)
    def __rshift__(self, o): return _binary(">>", self, o)
    # in place: same register
    def __iadd__(self, o): return _binary("+", self, o, into=self)
    def __isub__(self, o): return _binary("-", self, o, into=self)
    def __imul__(self, o): return _binary("*", self, o, into=self)
    def __itruediv__(self, o): return _binary("/", self, o, into=self)
    def __ifloordiv__(self, o): return _binary("//", self, o, into=self)
    def __imod__(self, o): return _binary("%", self, o, into=self)
    def __iand__(self, o): return _binary("&", self, o, into=self)
    def __ior__(self, o): return _binary("|", self, o, into=self)
    def __ixor__(self, o): return _binary("^", self, o, into=self)
    def __ilshift__(self, o): return _binary("<<", self, o, into=self)
    def __irshift__(self, o): return _binary(">>", self, o, into=self)
    # comparisons -> predicates
    def __lt__(self, o): return _compare("lt", self, o)
    def __le__(self, o): return _compare("le", self, o)
    def __gt__(self, o): return _compare("gt", self, o)
    def __ge__(self, o): return _compare("ge", self, o)
    def __eq__(self, o): return _compare("eq", self, o)
    def __ne__(self, o): return _compare("ne", self, o)
    # unary
    def __neg__(self): return _unary("neg", self)
    def __invert__(self):
        # a predicate negates for free (``@!p``, ``!p``); other registers: ``not.bN``
        return NotPred(self) if self.type.kind == "pred" else _unary("not", self)
    def __abs__(self): return _unary("abs", self)

    def max(self, o) -> "Register":
        """``max.<type> r, self, o`` (a new register).

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     a, b = reg.scalar(f32), reg.scalar(f32)
            ...     m = a.max(b)
            >>> t.lines()
            ['max.f32 %f2, %f0, %f1;']
        """
        return _minmax("max", self, o)

    def min(self, o) -> "Register":
        """``min.<type> r, self, o`` (a new register).

        Examples:
            >>> from jax_pyptx import reg
            >>> from jax_pyptx.types import s32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     m = reg.scalar(s32).min(7)
            >>> t.lines()
            ['min.s32 %r1, %r0, 7;']
        """
        return _minmax("min", self, o)


def _install(cls) -> None:
    for name, member in vars(RegisterOperators).items():
        if callable(member):             # (not __doc__, __module__, __hash__ = None, ...)
            setattr(cls, name, member)


_install(Register)

__all__ = ["RegisterOperators", "unify"]
