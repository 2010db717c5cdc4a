"""Issue 24: the cross-CTA global race tracker (``interpret/sanitizer/global_races.py``) records a store
whose addresses form a nest of disjoint elements (a warp's, a CTA's consecutive words) through
strided views of its tags (``GlobalRaces._fast_store``). These kernels store such rows by two
CTAs of one batch (64 threads each: every store is a nest of 128 addresses) and check that the
reports are the general path's, word for word, with the fast path on and off."""
from __future__ import annotations

import warnings

import numpy as np

from jax_pyptx.errors import RaceError, SanitizerWarning
from jax_pyptx.interpret.sanitizer import global_races
from jax_pyptx.interpret import launch

KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<5>;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.u32 %r3, %r2, 64, %r1;
    add.u32 %r4, %r3, 32;
    mul.wide.u32 %rd2, %r3, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    SECOND
    ret;
}
"""
# CTA c stores words 64c .. 64c+63, then SECOND: words 64c+32 .. 64c+95 (half of them CTA
# c+1's), its own words again, or a load of words 0 .. 63 (CTA 0's) by both CTAs
SHIFTED = "st.global.u32 [%rd3+128], VALUE;"
OWN = "st.global.u32 [%rd3], %r4;"
READ = "mul.wide.u32 %rd4, %r1, 4;\n    add.u64 %rd4, %rd1, %rd4;\n    ld.global.u32 %r5, [%rd4];"


def _run(second, y, **kw):
    """Launch with SECOND in place; ``y`` after it, as a list."""
    launch(KERNEL.replace("SECOND", second), "k", [y], block=64, grid=2, **kw)
    return y.tolist()


def outcome(fn):
    """``fn()``'s outcome: (("ok", result) or ("error", the RaceError's text), the texts of the
    SanitizerWarnings it raised)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            res = ("ok", fn())
        except RaceError as e:
            res = ("error", str(e))
    return res, [str(x.message) for x in w if issubclass(x.category, SanitizerWarning)]


def _both(fn):
    """``fn()``'s outcome (exception text, warning texts, result) with the fast path on, then
    off (``_fast_store`` always answering None): the two must agree."""
    out = []
    for fast in (True, False):
        saved = global_races.GlobalRaces._fast_store
        if not fast:
            global_races.GlobalRaces._fast_store = lambda *a: None
        try:
            out.append(outcome(fn))
        finally:
            global_races.GlobalRaces._fast_store = saved
    assert out[0] == out[1]
    return out[0]


def test_store_over_another_ctas_row_is_reported_as_the_general_path_does():
    (kind, msg), warned = _both(lambda: _run(SHIFTED.replace("VALUE", "%r3"), np.zeros(160, np.uint32)))
    assert kind == "error" and not warned
    assert msg.startswith(
        "<ptx>:15: race on global store st.global.u32 [%rd3+128], %r3; by thread (32,0,0) of CTA (0,0,0): it "
        "stores to global address 0x7f0000000100 (byte 256 of allocation #0 (param 'y' (uint32[160]), 640 "
        "bytes at 0x7f0000000000)) that CTA (1,0,0) also stored earlier in this launch, a different value")


def test_same_value_over_another_ctas_row_warns_and_stores():
    y = np.zeros(160, np.uint32)
    (kind, got), warned = _both(lambda: _run(SHIFTED.replace("VALUE", "%r4"), y.copy()))
    assert kind == "ok"
    assert got == list(range(160))
    assert len(warned) == 1 and "the value that CTA (1,0,0) also stored earlier in this launch" in warned[0]
    assert "thread (32,0,0) of CTA (0,0,0)" in warned[0]


def test_a_cta_rewriting_its_own_row_is_clean():
    (kind, got), warned = _both(lambda: _run(OWN, np.zeros(128, np.uint32), sanitize="strict"))
    assert (kind, warned) == ("ok", [])
    assert got == list(range(32, 160))


def test_loads_see_the_changed_bit_the_slice_path_recorded():
    # word 0 keeps its value (0 stored over 0): CTA 1 reads word 1 first as a changed one
    (kind, msg), warned = _both(lambda: _run(READ, np.zeros(128, np.uint32)))
    assert kind == "error" and not warned
    assert msg.startswith(
        "<ptx>:17: race on global load ld.global.u32 %r5, [%rd4]; by thread (1,0,0) of CTA (1,0,0): it "
        "reads global address 0x7f0000000004 (byte 4 of allocation #0 (param 'y' (uint32[128]), 512 bytes")
    assert "that CTA (0,0,0) stored earlier in this launch with a plain store" in msg
    # every word stored over the value it had: a warning per load, no error
    (kind, got), warned = _both(lambda: _run(READ, np.arange(128, dtype=np.uint32)))
    assert (kind, got) == ("ok", list(range(128)))
    assert len(warned) == 1 and "left its value as it was" in warned[0]
    assert "by thread (0,0,0) of CTA (1,0,0)" in warned[0]
