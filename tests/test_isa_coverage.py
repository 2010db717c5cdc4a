"""The committed coverage doc equals the generated table; every family of the table is checked
form by form by one of the family tests."""
import os

from jax_pyptx.isa import TABLE
from jax_pyptx.isa.coverage import coverage_table

from . import (test_isa_arith, test_isa_hopper_blackwell, test_isa_memory, test_isa_mma,
               test_isa_extra)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_committed_doc_is_generated_output():
    """docs/isa_coverage.md is the table with the interpreter's generated column."""
    from jax_pyptx.interpret.coverage import coverage_table as with_interpreted

    with open(os.path.join(ROOT, "docs", "isa_coverage.md")) as f:
        text = f.read()
    assert text == with_interpreted()
    assert text.count("\n") > coverage_table().count("\n")        # the isa table, plus a note
    assert ("| mma | `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` | v4:f32, v4:b32, "
            "v2:b32, v4:f32 | sm_80 | 7.0 |  | yes |") in text


def test_coverage_lists_families_with_arch_and_version():
    t = coverage_table()
    assert "| wgmma | `wgmma.fence.sync.aligned` |  | sm_90a | 8.0 |  |" in t
    for fam in ("arith-int", "memory", "atomic", "warp", "mma", "wgmma", "tma", "mbarrier",
                "cluster", "tcgen05", "cvt", "fence", "sync"):
        assert f"| {fam} | " in t


def test_every_family_has_an_every_form_test():
    """The families the ``missing(...) == []`` tests check cover the whole table."""
    checked = set(test_isa_arith.FAMILIES) | set(test_isa_memory.FAMILIES) | \
        set(test_isa_mma.FAMILIES) | set(test_isa_hopper_blackwell.FAMILIES) | \
        set(test_isa_extra.FAMILIES)
    families = {f.family for forms in TABLE.values() for f in forms}
    assert families == checked


def test_gates_name_their_own_group_options():
    """A gate on another group's option would fire for that option in every form carrying
    the group (the validator raises a form's minimum for any gated option in the opcode)."""
    bad = sorted({(f.name, g.name, o) for forms in TABLE.values() for f in forms
                  for g in f.groups for o, *_ in g.gates if o not in g.options})
    assert bad == []
