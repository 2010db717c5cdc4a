"""``ptx.inst.<opcode>.<modifier>...(operands, pred=p)``: any instruction.

In the attribute chain a trailing ``_`` escapes a Python keyword (``global_`` is ``.global``),
``__`` spells ``::`` (``shared__cta`` is ``.shared::cta``) and a leading ``_`` before a digit
is dropped (``_2d`` is ``.2d``). A register array passed as one operand is a vector ``{...}``.
Instructions the ISA table knows are validated; others are emitted as written.
"""
from __future__ import annotations

from ...errors import PtxTypeError, TraceError
from ...ir.nodes import Addr, Guard, Imm, Reg, Sym
from ...isa.decoding import type_of
from ...isa.opcodes import split_opcode
from ...types import pred as pred_t
from .. import context
from ..context import user_loc
from ..values import NotPred, Register, Special, as_operand


def unescape(attr: str) -> str:
    if attr.endswith("_") and not attr.endswith("__"):
        attr = attr[:-1]
    if len(attr) > 1 and attr[0] == "_" and attr[1].isdigit():
        attr = attr[1:]
    return attr.replace("__", "::")


def not_(*args, pred=None):
    """``ptx.not_(p)``: predicate ``p`` negated, as a guard (``pred=ptx.not_(p)`` is
    ``@!p``) or an operand (``!p``); no code. The documented instruction form
    ``ptx.not_(dtype, dst, src)`` emits ``not.<type> dst, src;``."""
    if len(args) == 1:
        return NotPred(args[0])
    if len(args) == 3:
        from ..reg import _type

        t = _type(args[0])
        return emit_inst(f"not.{'pred' if t.kind == 'pred' else f'b{t.bits}'}",
                         args[1:], pred, user_loc())
    raise PtxTypeError(f"ptx.not_ takes a predicate (ptx.not_(p)) or (dtype, dst, src); got "
                       f"{len(args)} arguments", loc=user_loc())


def guard_of(pred) -> Guard | None:
    if pred is None:
        return None
    neg = False
    if type(pred) is NotPred:
        pred, neg = pred.reg, True
    if type(pred) is Special:
        pred = pred.value()
    if type(pred) is not Register or pred.type.kind != "pred":
        raise PtxTypeError(f"pred= must be a predicate register (or ptx.not_(p)), got {pred!r}",
                           loc=user_loc(3))
    as_operand(pred)  # ownership check
    return Guard(pred.name, neg)


# the instruction's type (the last type modifier): the ISA layer's one rule
_hint_type = type_of


def emit_inst(full: str, operands, pred=None, loc=None, validate: bool = True):
    """Emit ``full`` (dotted opcode) with DSL operands; returns the IR instruction."""
    name, mods = split_opcode(full)
    tr = context.current(f"ptx.inst.{full}")
    loc = loc or user_loc(3)
    hint = type_of(mods)
    ops = tuple(as_operand(o, hint) for o in operands)
    return tr.emit(name, mods, ops, guard_of(pred), loc, validate)


class _Chain:
    __slots__ = ("_parts",)

    def __init__(self, parts=()):
        self._parts = parts

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Chain(self._parts + (unescape(attr),))

    def __call__(self, *operands, pred=None):
        """Emit the instruction; returns its first operand when that is a register (the
        destination, for chaining), else None."""
        if not self._parts:
            raise TraceError("ptx.inst needs an opcode: ptx.inst.add.u32(d, a, b)",
                             loc=user_loc())
        emit_inst(".".join(self._parts), operands, pred, user_loc())
        first = operands[0] if operands else None
        return first if type(first) is Register else None

    def __repr__(self):
        return "ptx.inst." + ".".join(self._parts)


inst = _Chain()


def addr(base, offset: int = 0) -> Addr:
    """``[base+offset]`` for a register, a shared buffer, a tensor parameter (``[A]``), a
    TMA descriptor handle, a param or a symbol name; ``ptx.addr(r, -8)`` is ``[r-8]``."""
    if isinstance(base, Register):
        return Addr(as_operand(base), int(offset))
    if isinstance(base, str):
        return Addr(Sym(base), int(offset))
    if type(base) is Addr:                 # already an address: add the offset
        return Addr(base.base, base.offset + int(offset), base.extra)
    sym = getattr(base, "symbol", None)
    if isinstance(sym, str) and not isinstance(base, Special):   # TensorSpec, TMA handle
        return Addr(Sym(sym), int(offset))
    if hasattr(base, "__ptx_operand__"):
        op = base.__ptx_operand__()
        if type(op) is Sym:
            return Addr(Sym(op.name), op.offset + int(offset))
        if type(op) is Addr:
            return Addr(op.base, op.offset + int(offset), op.extra)
    if isinstance(base, Sym):
        return Addr(Sym(base.name), base.offset + int(offset))
    if isinstance(base, int):
        return Addr(None, int(base) + int(offset))
    raise PtxTypeError(f"ptx.addr: cannot take the address of {base!r}", loc=user_loc())


def sym(name: str) -> Sym:
    """A symbol operand by name (a label, a variable, a param, a function)."""
    return Sym(name)


def raw_imm(text: str) -> Imm:
    """An immediate spelled exactly as ``text``."""
    return Imm(text)


def ret(pred=None):
    """``ret;``"""
    return emit_inst("ret", (), pred, user_loc())


def exit(pred=None):  # noqa: A001 - PTX's name
    """``exit;``"""
    return emit_inst("exit", (), pred, user_loc())


def pred_reg(name: str):
    return Reg(name, pred_t)
