"""``pyptx.spec``: instruction validation under pyptx's names.

Strict mode and the verdict on one instruction are the DSL's own
(:mod:`jax_pyptx.dsl.validation`); this module adds the names pyptx gives them:
``PtxValidationError`` (the package's ``ValidationError``), ``ValidationError`` (pyptx's name
for one *issue*, :class:`~jax_pyptx.dsl.validation.ValidationIssue`), ``get_specs`` (the ISA
table's forms) and ``register_overload`` (refused: there is one table).

    from pyptx.spec import strict, validate_instruction

    with strict(False):
        ...                                         # ISA mismatches warn instead of raising
    validate_instruction("add.u32 %r1, %r2, 1;")    # []

Examples:
    >>> from pyptx.spec import PtxValidationError, ValidationError, validate_instruction
    >>> [issue] = validate_instruction("add.u32 %r1, %r2;")
    >>> isinstance(issue, ValidationError), issue.kind
    (True, 'isa')
    >>> from jax_pyptx import errors
    >>> PtxValidationError is errors.ValidationError
    True
"""
from __future__ import annotations

from ..dsl.validation import (
    UnvalidatedInstructionWarning, ValidationIssue, is_strict, set_strict, strict,
    validate_instruction, validate_or_raise,
)
from ..errors import NotSupportedError
from ..errors import ValidationError as PtxValidationError
from ..isa import TABLE, forms_for

__all__ = ["PtxValidationError", "ValidationIssue", "ValidationError",
           "UnvalidatedInstructionWarning", "set_strict", "is_strict", "strict",
           "validate_instruction", "validate_or_raise", "register_overload", "get_specs"]

ValidationError = ValidationIssue       # pyptx's name for one issue (not the exception)


def get_specs(opcode: str | None = None):
    """The ISA table's forms of ``opcode`` (``"wgmma.mma_async"``), or the whole table
    (instruction name -> forms) without an argument.

    Examples:
        >>> from pyptx.spec import get_specs
        >>> len(get_specs("wgmma.mma_async")) > 0, "mma.sync" in get_specs()
        (True, True)
    """
    if opcode is None:
        return dict(TABLE)
    return list(forms_for(opcode))


def register_overload(*args, **kwargs):
    """Not supported: jax-pyptx has one ISA table (``jax_pyptx.isa``), shared by the
    validator, the parser, the transpiler and the interpreter, so a form added for
    validation only would make them disagree. Emit an instruction the table lacks under
    ``with strict(False):``, or add its form to the table.

    Examples:
        >>> from jax_pyptx.errors import NotSupportedError
        >>> from pyptx.spec import register_overload
        >>> try:
        ...     register_overload("myop", ["a", "b"])
        ... except NotSupportedError as e:
        ...     print("strict(False)" in str(e))
        True
    """
    raise NotSupportedError(
        "pyptx.spec.register_overload: jax-pyptx validates against its one ISA table "
        "(jax_pyptx.isa), which the parser, transpiler and interpreter share; add the form to "
        "the table (jax_pyptx/isa/forms_*.py), or emit the instruction under "
        "pyptx.spec.strict(False)")
