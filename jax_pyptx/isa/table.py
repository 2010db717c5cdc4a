"""``TABLE``: instruction name -> its forms, gathered from the family modules.

Built once, at import, from each ``forms_*`` module's ``FORMS`` list. It lives in its own
module (imported by ``jax_pyptx.isa`` and by :mod:`.opcodes`) so that the names derived from
it (compound names, instruction words) are computed from the table without an import cycle.
"""
from __future__ import annotations

import importlib

# family modules, each with a FORMS list
FAMILY_MODULES = ("forms_core", "forms_arith", "forms_logic", "forms_cvt", "forms_memory",
                  "forms_atomics", "forms_sync", "forms_warp", "forms_ampere", "forms_wgmma",
                  "forms_tma", "forms_mbarrier", "forms_cluster", "forms_tcgen05", "forms_wmma",
                  "forms_tensormap", "forms_texture", "forms_multimem")


def _build() -> dict:
    table: dict = {}
    for mod in FAMILY_MODULES:
        for form in importlib.import_module(f"{__package__}.{mod}").FORMS:
            table.setdefault(form.name, []).append(form)
    return table


TABLE: dict = _build()
