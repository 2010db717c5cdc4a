"""The one table of PTX instruction forms.

Every family module under ``jax_pyptx.isa`` exports ``FORMS``; they are gathered here into
``TABLE`` (instruction name -> forms). The validator, the DSL's typed wrappers, the parser's
checks, the transpiler and the interpreter's decoder read it.
"""
from __future__ import annotations

import importlib

from .model import G, Form, Group, R, Target, parse_target, target_min_ptx  # noqa: F401
from .opcodes import COMPOUND_NAMES, split_opcode  # noqa: F401

# family modules, each with a FORMS list
FAMILY_MODULES = ("forms_core", "forms_arith", "forms_logic", "forms_cvt", "forms_memory",
                  "forms_atomics", "forms_sync", "forms_warp", "forms_ampere", "forms_wgmma",
                  "forms_tma", "forms_mbarrier", "forms_cluster", "forms_tcgen05", "forms_wmma",
                  "forms_tensormap", "forms_texture", "forms_multimem")


def _build():
    table: dict = {}
    for mod in FAMILY_MODULES:
        for form in importlib.import_module(f"{__name__}.{mod}").FORMS:
            table.setdefault(form.name, []).append(form)
    return table


TABLE: dict = _build()

from .validate import check as _check  # noqa: E402 - after the table (validate reads model)


def forms_for(name: str) -> list:
    """The forms of instruction ``name`` (empty if the table does not know it)."""
    return TABLE.get(name, [])


def check(ins, target: Target, version=None, kernel: str = ""):
    """Validate ``ins``; returns its Form, or None for an instruction the table does not know."""
    forms = TABLE.get(ins.opcode)
    if not forms:
        return None
    return _check(ins, target, forms, version=version, kernel=kernel)
