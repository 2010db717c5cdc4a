"""Issue 24: the cross-CTA global race tracker shows a store meets no other CTA's element from
the per-CTA hulls of the batch (``global_races._Owners``) without making or reading its tags,
and an output's written flags are kept per 16-byte chunk while every access is whole chunks
(``Allocation._flags``). The row kernels these paths are for store interleaved 16-byte chunks of
their own rows; each report here must be the general path's, word for word: the tags path
(``_Owners.store`` always answering False) and the gather path (``_fast_store`` always None)
for the race tracker, the per-byte flags (``Allocation._chunks`` always False) for the written
flags."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

from jax_pyptx.errors import RaceError, SanitizerWarning, UninitializedReadError, UnwrittenOutputError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.sanitizer import global_races as GR
from jax_pyptx.interpret.state import memory as M

from .test_interp_global_races_slices import outcome

LAUNCH = sys.modules["jax_pyptx.interpret.launch"]

# CTA c (64 threads) owns rows 2c and 2c+1 of 1024 bytes; lane l of a row stores 16 bytes (the
# row + 1, four times) at byte 16 l of chunk 0, then SECOND (chunk 1 at +512: a row kernel's
# second v4 store)
KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<12>; .reg .u64 %rd<4>; .reg .pred %p<2>;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    shr.u32 %r3, %r1, 5;
    and.b32 %r4, %r1, 31;
    mad.lo.u32 %r5, %r2, 2, %r3;
    shl.b32 %r6, %r5, 10;
    mad.lo.u32 %r7, %r4, 16, %r6;
    cvt.u64.u32 %rd2, %r7;
    add.u64 %rd3, %rd1, %rd2;
    add.u32 %r8, %r5, 1;
    add.u32 %r9, %r5, 2;
    st.global.v4.u32 [%rd3], {%r8, %r8, %r8, %r8};
    SECOND
    ret;
}
"""
OWN = "st.global.v4.u32 [%rd3+512], {%r8, %r8, %r8, %r8};"
# chunk 1 of row r lands on chunk 0 of row r + 1: the next CTA's for a CTA's second row
SHIFTED = "st.global.v4.u32 [%rd3+1024], {VALUE, VALUE, VALUE, VALUE};"
# lanes 0-15 only: the store is not the whole batch's
PARTIAL = "setp.lt.u32 %p1, %r4, 16;\n    @%p1 " + SHIFTED
READ = "ld.global.u32 %r10, [%rd3+1024];"
G = 4
ROW = 256                           # u32 per row


def _paths(fn):
    """``fn()``'s outcome (kind, error text or result) and warning texts with the per-CTA hulls,
    with the tags path only, and with the gather path only: all three must agree."""
    out = []
    for mode in ("owners", "tags", "general"):
        saved = GR._Owners.store, GR.GlobalRaces._fast_store
        if mode == "tags":
            def no_owners(self, ctx, g, off, shape, es, per, lo, hi, *a):
                self.add(lo, hi)
                return False
            GR._Owners.store = no_owners
        elif mode == "general":
            GR.GlobalRaces._fast_store = lambda *a: None
        try:
            out.append(outcome(fn))
        finally:
            GR._Owners.store, GR.GlobalRaces._fast_store = saved
    assert out[0] == out[1] == out[2]
    return out[0]


def _run(second, y, grid=G, **kw):
    launch(KERNEL.replace("SECOND", second), "k", [y], block=64, grid=grid, **kw)
    return y.reshape(-1, ROW)[:, ::4].tolist()


def _no_tags(monkeypatch):
    def never(self, index):
        raise AssertionError("the race tags were made")
    monkeypatch.setattr(GR.GlobalRaces, "_tag_array", never)


def test_split_blocks_of_a_nest():
    # 8 rows of 32 lanes, 4 CTAs: two rows each
    starts, extent, step = GR._split([8, 32], [256, 4], 4)
    assert starts.tolist() == [0, 512, 1024, 1536] and extent == 256 + 31 * 4 and step == 512 - extent
    # 4 CTAs over 2 x 2 x 8: the first two dimensions split whole
    starts, extent, step = GR._split([2, 2, 8], [1000, 100, 1], 4)
    assert starts.tolist() == [0, 100, 1000, 1100] and extent == 7 and step == 93
    assert GR._split([3, 32], [256, 4], 2) is None          # 3 rows: not a block per CTA
    starts, extent, step = GR._split([32], [4], 1)
    assert starts.tolist() == [0] and extent == 124 and step == 1 << 62


def test_each_cta_its_own_chunks_is_clean_without_tags(monkeypatch):
    _no_tags(monkeypatch)
    got = _run(OWN, np.zeros(2 * G * ROW, np.uint32), sanitize="strict")
    assert got == [[r + 1] * 64 for r in range(2 * G)]
    # lanes 0-15 only for chunk 1: the CTAs' parts from the lanes' addresses
    got = _run("setp.lt.u32 %p1, %r4, 16;\n    @%p1 " + OWN, np.zeros(2 * G * ROW, np.uint32), sanitize="strict")
    assert got == [[r + 1] * 48 + [0] * 16 for r in range(2 * G)]


@pytest.mark.parametrize("second", [SHIFTED, PARTIAL])
def test_store_over_the_next_ctas_chunk_is_reported_as_the_general_path_does(second):
    (kind, msg), warned = _paths(lambda: _run(second.replace("VALUE", "%r8"), np.zeros(2 * G * ROW + ROW, np.uint32)))
    assert kind == "error" and not warned
    assert msg.split(": ", 1)[1].startswith("race on global store ")
    assert msg.split("; ", 1)[0].endswith("st.global.v4.u32 [%rd3+1024], {%r8, %r8, %r8, %r8}")
    assert msg.split("; ", 1)[1].startswith(
        "by thread (32,0,0) of CTA (0,0,0): it stores to global address 0x7f0000000800 (byte 2048 of allocation #0 "
        "(param 'y' (uint32[2304]), 9216 bytes at 0x7f0000000000)) that CTA (1,0,0) also stored earlier in "
        "this launch, a different value")


def test_same_value_over_the_next_ctas_chunk_warns_and_stores():
    y = np.zeros(2 * G * ROW + ROW, np.uint32)
    (kind, got), warned = _paths(lambda: _run(SHIFTED.replace("VALUE", "%r9"), y.copy()))
    assert kind == "ok" and got[2 * G] == [2 * G + 1] * 32 + [0] * 32
    assert len(warned) == 1 and "the value that CTA (1,0,0) also stored earlier in this launch" in warned[0]


def test_a_later_batch_storing_over_an_earlier_ones_row_is_reported(monkeypatch):
    # one CTA per batch: CTA 0's shifted chunks land on row 2 before CTA 1 stores it
    monkeypatch.setattr(LAUNCH, "MAX_BATCH_SLOTS", 64)
    (kind, msg), warned = _paths(lambda: _run(SHIFTED.replace("VALUE", "%r8"), np.zeros(2 * G * ROW + ROW, np.uint32)))
    assert kind == "error" and not warned
    assert msg.startswith(
        "<ptx>:19: race on global store st.global.v4.u32 [%rd3], {%r8, %r8, %r8, %r8}; by thread (0,0,0) of "
        "CTA (1,0,0): it stores to global address 0x7f0000000800 (byte 2048 of allocation #0")
    assert "that CTA (0,0,0) also stored earlier in this launch, a different value" in msg
    # each CTA its own chunks, batch after batch: clean, and the tags are never made
    _no_tags(monkeypatch)
    assert _run(OWN, np.zeros(2 * G * ROW, np.uint32), sanitize="strict") == [[r + 1] * 64 for r in range(2 * G)]


def test_loads_of_the_next_ctas_chunk_see_the_changed_flag_of_the_record():
    # the stored values differ from the zeros they replaced: one flag for the whole record
    (kind, msg), warned = _paths(lambda: _run(READ, np.zeros(2 * G * ROW + ROW, np.uint32)))
    assert kind == "error" and not warned
    assert msg.startswith(
        "<ptx>:20: race on global load ld.global.u32 %r10, [%rd3+1024]; by thread (32,0,0) of CTA (0,0,0): "
        "it reads global address 0x7f0000000800 (byte 2048 of allocation #0")
    assert "that CTA (1,0,0) stored earlier in this launch with a plain store" in msg
    # every word stored over the value it had: the record keeps a flag per word, a warning
    y = np.repeat(np.arange(1, 2 * G + 2, dtype=np.uint32), ROW)
    (kind, _), warned = _paths(lambda: _run(READ, y.copy()))
    assert kind == "ok"
    assert len(warned) == 1 and "left its value as it was" in warned[0]
    assert "by thread (32,0,0) of CTA (0,0,0)" in warned[0]


@pytest.mark.parametrize("second", [SHIFTED.replace("VALUE", "%r8"), SHIFTED.replace("VALUE", "%r9"), READ, OWN])
def test_records_applied_at_once_report_the_same(second, monkeypatch):
    # every record applied to the tags as soon as it is made (the pending limit, 0 here)
    def outcome():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                res = ("ok", _run(second, np.zeros(2 * G * ROW + ROW, np.uint32)))
            except RaceError as e:
                res = ("error", str(e))
        return res, [str(x.message) for x in w if issubclass(x.category, SanitizerWarning)]
    want = outcome()
    monkeypatch.setattr(GR, "_PENDING_LIMIT", 0)
    assert outcome() == want


# ----------------------------------------------------------------------------- per-chunk flags
def _outputs_paths(fn, monkeypatch):
    """``fn()``'s error (class, text) with the per-chunk flags and with per-byte flags only."""
    out = []
    for chunks in (True, False):
        with monkeypatch.context() as m:
            if not chunks:
                m.setattr(M.Allocation, "_chunks", lambda self, off, strides, nb: False)
            try:
                fn()
                out.append(None)
            except (UnwrittenOutputError, UninitializedReadError) as e:
                out.append((type(e).__name__, str(e)))
    assert out[0] == out[1]
    return out[0]


def test_chunk_flags_one_chunk_left(monkeypatch):
    # every lane stores chunk 1 but lane 1 of row 4 (byte 4112 + 512 = 4624: elements 1156-1159)
    one = "setp.ne.u32 %p1, %r7, 4112;\n    @%p1 " + OWN
    kind, msg = _outputs_paths(lambda: _run(one, np.zeros(2 * G * ROW, np.uint32), outputs=[0]), monkeypatch)
    assert kind == "UnwrittenOutputError"
    assert "left 4 of the 2048 elements" in msg and "flat elements 1156-1159" in msg


def test_chunk_flags_uninitialized_read_of_a_chunk_not_stored_yet(monkeypatch):
    read = "ld.global.v4.u32 {%r10, %r11, %r6, %r7}, [%rd3+512];"
    kind, msg = _outputs_paths(lambda: _run(read, np.zeros(2 * G * ROW, np.uint32), outputs=[0]), monkeypatch)
    assert kind == "UninitializedReadError"
    assert "global address 0x7f0000000200 (byte 512 of allocation #0" in msg


def test_chunk_flags_then_a_word_store_go_per_byte():
    al = M.Allocation(0, 0x1000, 100, "y", np.zeros(100, np.uint8))
    al.start_uninitialized()
    al.mark_nest(16, [2], [32], 16)                     # bytes 16-31 and 48-63: whole chunks
    assert al._unit == M.CHUNK and al._init.tolist() == [0, 1, 0, 1, 0, 0, 0]
    assert al.nest_written(16, [2], [32], 16) and not al.nest_written(16, [2], [16], 16)
    assert al.unwritten_in(30, 34) and not al.unwritten_in(16, 32) and al.unwritten_in(90, 100)
    al.mark_nest(96, [1], [4], 4)                       # bytes 96-99 (the last, partial chunk): per byte
    assert al._unit == 1 and al._init is al.init and al.init.shape == (100,)
    want = np.zeros(100, np.uint8)
    want[16:32] = want[48:64] = want[96:100] = 1
    np.testing.assert_array_equal(al.init, want)
    assert al.unwritten_in(0, 16) and not al.unwritten_in(96, 100)


def test_unaligned_intervals_keep_the_flags_per_byte():
    al = M.Allocation(0, 0x1000, 256, "y", np.zeros(256, np.uint8))
    al.start_uninitialized(0, 200)                      # 200: not on a chunk
    al.mark_nest(0, [4], [32], 16)
    assert al._unit == 1
    want = np.ones(256, np.uint8)
    want[:200] = 0
    want[0:16] = want[32:48] = want[64:80] = want[96:112] = 1
    np.testing.assert_array_equal(al.init, want)
    whole = M.Allocation(1, 0x2000, 256, "z", np.zeros(256, np.uint8))
    whole.start_uninitialized(32, 256)                  # ends at the end: chunks
    whole.mark_nest(32, [2], [64], 16)
    assert whole._unit == M.CHUNK and whole._init.tolist() == [1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]


# CTA 1 first stores scattered chunks of row 0 (lane l at chunk l*l % 32: the general path, so
# before the allocation's first slice store), then every CTA c stores its own row c (a slice
# store): CTA 0's row meets what CTA 1 stored
SCATTERED_FIRST = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<20>; .reg .u64 %rd<8>; .reg .pred %p<2>;
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    and.b32 %r4, %r1, 31;
    setp.eq.u32 %p1, %r2, 1;
    mul.lo.u32 %r11, %r4, %r4;
    and.b32 %r12, %r11, 31;
    shl.b32 %r13, %r12, 4;
    cvt.u64.u32 %rd4, %r13;
    add.u64 %rd5, %rd1, %rd4;
    @%p1 st.global.v4.u32 [%rd5], {%r2, %r2, %r2, %r2};
    shl.b32 %r6, %r2, 10;
    mad.lo.u32 %r7, %r4, 16, %r6;
    cvt.u64.u32 %rd2, %r7;
    add.u64 %rd3, %rd1, %rd2;
    add.u32 %r8, %r2, 7;
    st.global.v4.u32 [%rd3], {%r8, %r8, %r8, %r8};
    ret;
}
"""


def test_a_slice_store_over_what_the_general_path_stored_before_is_reported():
    def run():
        launch(SCATTERED_FIRST, "k", [np.zeros(4 * ROW, np.uint32)], block=32, grid=4, sanitize="strict")
    (kind, msg), warned = _paths(run)
    assert kind == "error" and not warned
    assert msg.split("; ", 1)[1].startswith(
        "by thread (0,0,0) of CTA (0,0,0): it stores to global address 0x7f0000000000 (byte 0 of allocation #0 "
        "(param 'y' (uint32[1024]), 4096 bytes at 0x7f0000000000)) that CTA (1,0,0) also stored earlier in "
        "this launch, a different value")
