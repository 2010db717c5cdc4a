"""Validation of traced instructions against the ISA table (``jax_pyptx.isa``): strict mode
and the verdict on one instruction.

Every instruction a kernel emits, through a typed wrapper or ``ptx.inst``, is checked against
the table while it is traced; a mismatch raises (``ValidationError``, ``PtxTypeError`` or
``ArchError``, each naming the user's line). ``set_strict(False)`` (or ``with strict(False):``)
turns ISA mismatches (``ValidationError``) into ``UnvalidatedInstructionWarning`` warnings
and lets the instruction through as written; type and arch errors still raise, since ptxas
would refuse those too.

``validate_instruction("add.u32 %r1, %r2, 1;", "sm_90a")`` returns the issues of one
instruction (an empty list when it is valid); ``validate_or_raise`` raises the first.
(``pyptx.spec`` is this module under pyptx's names: ``jax_pyptx.compat.spec``.)

Examples:
    >>> validate_instruction("add.u32 %r1, %r2, 1;")
    []
"""
from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

from ..errors import ArchError, PtxError, PtxTypeError, ValidationError
from ..isa import check as _isa_check
from ..isa import forms_for, parse_target
from . import context

__all__ = ["ValidationIssue", "UnvalidatedInstructionWarning", "set_strict", "is_strict",
           "strict", "validate_instruction", "validate_or_raise"]


class UnvalidatedInstructionWarning(UserWarning):
    """An instruction that does not match the ISA table, emitted anyway (non-strict mode).

    Examples:
        >>> import warnings
        >>> from jax_pyptx import kernel, ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.validation import UnvalidatedInstructionWarning, strict
        >>> @kernel
        ... def k():
        ...     r = reg.scalar(u32)
        ...     with strict(False):
        ...         ptx.inst.add.bogus.u32(r, r, 1)     # no such modifier: a warning, not an error
        ...     ptx.ret()
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     text = k.ptx()
        >>> "add.bogus.u32" in text, any(w.category is UnvalidatedInstructionWarning for w in seen)
        (True, True)
    """


@dataclass(frozen=True)
class ValidationIssue:
    """One problem with one instruction: what is wrong (``message``), of which kind
    (``"isa"``, ``"type"`` or ``"arch"``), and the instruction as written.

    Examples:
        >>> from jax_pyptx.dsl.validation import ValidationIssue, validate_instruction
        >>> [issue] = validate_instruction("add.u32 %r1, %r2;")
        >>> isinstance(issue, ValidationIssue), issue.kind
        (True, 'isa')
    """

    instruction: str
    message: str
    kind: str = "isa"

    def __str__(self):
        return self.message


_strict = True


def _lenient_check(ins, target, version=None, kernel="", sig=None):
    try:
        return _isa_check(ins, target, version, kernel, sig)
    except ValidationError as e:
        warnings.warn(UnvalidatedInstructionWarning(str(e)), stacklevel=4)
        return None


def set_strict(on: bool) -> None:
    """Strict (the default): an instruction that matches no form of the ISA table raises
    ``ValidationError``. Not strict: it warns (``UnvalidatedInstructionWarning``) and is
    emitted as written.

    Examples:
        >>> from jax_pyptx.dsl.validation import is_strict, set_strict
        >>> set_strict(False); is_strict()
        False
        >>> set_strict(True); is_strict()
        True
    """
    global _strict
    _strict = bool(on)
    context.isa_check = _isa_check if _strict else _lenient_check


def is_strict() -> bool:
    """Whether ISA mismatches raise (see :func:`set_strict`).

    Examples:
        >>> from jax_pyptx.dsl.validation import is_strict, strict
        >>> with strict(False):
        ...     print(is_strict())
        False
        >>> is_strict()
        True
    """
    return _strict


@contextlib.contextmanager
def strict(on: bool = True):
    """``with strict(False): ...`` sets the mode for the block and restores it after.

    Examples:
        >>> from jax_pyptx.dsl.validation import is_strict, strict
        >>> with strict(False):
        ...     inside = is_strict()
        >>> inside, is_strict()
        (False, True)
    """
    before = _strict
    set_strict(on)
    try:
        yield
    finally:
        set_strict(before)


def _instruction(ins):
    if isinstance(ins, str):
        from ..text.parser import parse

        text = ins.strip()
        if not text.endswith(";"):
            text += ";"
        m = parse(".version 9.0\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n"
                  + text + "\n}\n", "<instruction>", check=False)   # validated below
        stmts = [s for s in m.function("k").body if getattr(s, "opcode", None)]
        if len(stmts) != 1:
            raise ValidationError(f"expected one instruction, got {ins!r}")
        return stmts[0]
    return ins


def validate_instruction(ins, target: str = "sm_90a", version=None) -> list:
    """The issues of one instruction (PTX text such as ``"add.u32 %r1, %r2, 1;"`` or an IR
    ``Instruction``) for ``target``: an empty list when the ISA table accepts it.

    Examples:
        >>> from jax_pyptx.dsl.validation import validate_instruction
        >>> validate_instruction("add.u32 %r1, %r2, 1;")
        []
        >>> [i.kind for i in validate_instruction("tcgen05.commit.cta_group::1.b64 [%rd1];", "sm_90a")]
        ['arch']
    """
    try:
        i = _instruction(ins)
    except PtxError as e:
        return [ValidationIssue(str(ins), e.message, "isa")]
    text = i.full_opcode if hasattr(i, "full_opcode") else str(ins)
    if not forms_for(i.opcode):
        return [ValidationIssue(text, f"unknown instruction {i.opcode!r}", "isa")]
    try:
        _isa_check(i, parse_target(target), version)
    except ValidationError as e:
        return [ValidationIssue(text, e.message, "isa")]
    except PtxTypeError as e:
        return [ValidationIssue(text, e.message, "type")]
    except ArchError as e:
        return [ValidationIssue(text, e.message, "arch")]
    return []


def validate_or_raise(ins, target: str = "sm_90a", version=None) -> None:
    """Raise ``jax_pyptx.errors.ValidationError`` naming the instruction and every issue, if
    any.

    Examples:
        >>> from jax_pyptx.errors import ValidationError
        >>> from jax_pyptx.dsl.validation import validate_or_raise
        >>> validate_or_raise("mov.u32 %r1, %tid.x;")
        >>> try:
        ...     validate_or_raise("mov.u33 %r1, %tid.x;")
        ... except ValidationError as e:
        ...     print(type(e).__name__)
        ValidationError
    """
    issues = validate_instruction(ins, target, version)
    if issues:
        head = issues[0].instruction
        raise ValidationError(head + "\n" + "\n".join(f"    {i.message}" for i in issues))
