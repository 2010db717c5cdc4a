"""The one table of PTX instruction forms.

Every family module under ``jax_pyptx.isa`` exports ``FORMS``; :mod:`.table` gathers them into
``TABLE`` (instruction name -> forms); :mod:`.opcodes` derives the instruction names from it. The validator, the DSL's typed wrappers, the parser's
checks, the transpiler and the interpreter's decoder read it.
"""
from __future__ import annotations

from .model import G, Form, Group, R, Target, parse_target, target_min_ptx  # noqa: F401
from .table import FAMILY_MODULES, TABLE  # noqa: F401
from .opcodes import (  # noqa: F401
    ALIASES, COMPOUND_NAMES, INSTRUCTION_WORDS, split_opcode, table_name,
)

from .validate import check as _check
from .decoding import Decoding, decode, decode_parts, type_of  # noqa: F401


def forms_for(name: str) -> list:
    """The forms of instruction ``name`` (empty if the table does not know it)."""
    return TABLE.get(name, [])


def check(ins, target: Target, version=None, kernel: str = "", sig=None):
    """Validate ``ins``; returns its Form, or None for an instruction the table does not know."""
    forms = TABLE.get(ins.opcode)
    if not forms:
        alias = ALIASES.get(ins.opcode)        # bar.cta.sync: the table's bar.sync
        forms = TABLE.get(alias) if alias else None
        if not forms:
            return None
    return _check(ins, target, forms, version=version, kernel=kernel, sig=sig)
