"""PTX spelling of IR operands and instructions: the printer's pieces that validation and the
interpreter's messages also use."""
from __future__ import annotations

from .nodes import Addr, Imm, Instruction, ParenList, PredPair, Reg, Sink, Sym, Vec


def operand(op) -> str:
    """One operand as PTX text: a register, immediate, address ``[base+offset]``, vector, ...

    Examples:
        >>> from jax_pyptx.text.printer import operand
        >>> from jax_pyptx.text.parser import parse_statements
        >>> ins = parse_statements("ld.global.f32 %f1, [%rd1+16];")[0]
        >>> [operand(o) for o in ins.operands]
        ['%f1', '[%rd1+16]']
    """
    t = type(op)
    if t is Reg:
        return "!" + op.name if op.neg else op.name
    if t is Imm:
        return op.text
    if t is Sym:
        return f"{op.name}+{op.offset}" if op.offset else op.name
    if t is Addr:
        return address(op)
    if t is Vec:
        return "{" + ", ".join(operand(i) for i in op.items) + "}"
    if t is PredPair:
        return f"{operand(op.first)}|{operand(op.second)}"
    if t is Sink:
        return "_"
    if t is ParenList:
        return "(" + ", ".join(operand(i) for i in op.items) + ")"
    raise TypeError(f"not an operand: {op!r}")


def address(a: Addr) -> str:
    if a.base is None:
        inner = str(a.offset)
    else:
        inner = operand(a.base)
        if a.offset:
            inner += f"+{a.offset}"
    if a.extra:
        inner += ", " + ", ".join(operand(e) for e in a.extra)
    return "[" + inner + "]"


def instruction(ins: Instruction) -> str:
    """One instruction as PTX text, with its guard and ``;`` (no indentation).

    Examples:
        >>> from jax_pyptx.text.printer import instruction
        >>> from jax_pyptx.text.parser import parse_statements
        >>> print(instruction(parse_statements("@%p1 bra DONE;")[0]))  # doctest: +NORMALIZE_WHITESPACE
        @%p1 bra DONE;
    """
    g = ins.guard
    head = "" if g is None else ("@!" if g.negated else "@") + g.reg + " "
    text = head + ins.opcode + "".join(ins.modifiers)
    if ins.operands:
        text += " \t" + ", ".join(operand(o) for o in ins.operands)
    return text + ";"
