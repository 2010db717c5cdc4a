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
        got = op.text
        if got is None:
            got = op.text = "{" + ", ".join([i.name if type(i) is Reg and not i.neg
                                             else operand(i) for i in op.items]) + "}"
        return got
    if t is PredPair:
        return f"{operand(op.first)}|{operand(op.second)}"
    if t is Sink:
        return "_"
    if t is ParenList:
        return "(" + ", ".join(operand(i) for i in op.items) + ")"
    raise TypeError(f"not an operand: {op!r}")


def address(a: Addr) -> str:
    b = a.base
    if b is None:
        inner = str(a.offset)
    else:
        inner = b.name if type(b) is Reg and not b.neg else operand(b)
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
    text = ins.opcode + "".join(ins.modifiers)
    if g is not None:
        text = ("@!" if g.negated else "@") + g.reg + " " + text
    ops = ins.operands
    if not ops:
        return text + ";"
    parts = []
    for o in ops:                        # registers and immediates inline: most operands
        t = type(o)
        if t is Reg and not o.neg:
            parts.append(o.name)
        elif t is Imm:
            parts.append(o.text)
        elif t is Addr:
            parts.append(address(o))
        else:
            parts.append(operand(o))
    return text + " \t" + ", ".join(parts) + ";"
