"""The sanitizer's bookkeeping of every box of one TMA instruction at once (issue 24): the race
tracker's batched range checks and records (``RaceTracker.ranges_hit`` / ``record_ranges``,
``async_proxy.race_ranges``) against the per-byte reference applying the ranges one by one, and
end to end: boxes of several CTAs and warps in one instruction give the values and the reports
of the box-by-box path, a report naming the thread whose box it is."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import RaceError, UninitializedReadError
from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.interpret.ops import tma
from jax_pyptx.interpret.sanitizer import async_proxy as AP
from jax_pyptx.interpret.sanitizer import smem_races as S
from jax_pyptx.interpret.sanitizer.smem_races import RaceTracker
from jax_pyptx.interpret.state import memory as M

from .race_reference import RefTracker, ref_race_load_range, ref_race_store_range
from .test_interp_tma import HDR, ptxas_ok

W = 4                       # warps per CTA in the random programs


def _outcome(fn, *args):
    try:
        fn(*args)
    except M.MemoryFault as f:
        return (f.kind, f.lane, f.address, f.detail)
    return None


def _batched(race, kind, banks, los, his, warps):
    """A copy instruction's ranges the way ``tma`` handles them: all at once, else one by one
    (the first failing range reports, as its index)."""
    if AP.race_ranges(race, kind, banks, los, his, warps):
        return None
    one = AP.race_store_range if kind == "w" else AP.race_load_range
    for i, args in enumerate(zip(banks.tolist(), los.tolist(), his.tolist(), warps.tolist())):
        got = _outcome(one, race, *args)
        if got is not None:
            return (i,) + got
    return None


def _one_by_one(ref, kind, banks, los, his, warps):
    one = ref_race_store_range if kind == "w" else ref_race_load_range
    for i, args in enumerate(zip(banks.tolist(), los.tolist(), his.tolist(), warps.tolist())):
        got = _outcome(one, ref, *args)
        if got is not None:
            return (i,) + got
    return None


def _ranges(rng, nb, stride):
    """1-6 ranges of one copy instruction: usually whole 16-byte chunks of one size (TMA boxes),
    sometimes of any size and alignment."""
    n = int(rng.integers(1, 7))
    if rng.random() < .7:
        size = 16 * int(rng.integers(1, 4))
        los = rng.integers(0, (stride - size) // 16 + 1, n) * 16
        his = los + size
    else:
        los = rng.integers(0, stride - 1, n)
        his = np.minimum(los + rng.integers(1, 40, n), stride)
    return (rng.integers(0, nb, n).astype(np.int64), los.astype(np.int64), his.astype(np.int64),
            rng.integers(0, W, n).astype(np.int64))


def _program(seed, steps=300, nb=3, stride=96, whole_batch=False):
    """Random generic loads and stores, batched copy ranges and barriers on both trackers: every
    step gives the same outcome (which range or lane, address, message)."""
    rng = np.random.default_rng(seed)
    data = np.zeros(nb * stride, np.uint8)
    new, ref = RaceTracker(nb, stride, data), RefTracker(nb, stride, data)
    hits = 0
    for _ in range(steps):
        op = rng.choice(["load", "store", "copy_in", "copy_out", "advance", "advance_all"],
                        p=[.25, .25, .2, .2, 0, .1] if whole_batch else [.25, .25, .2, .2, .06, .04])
        if op == "advance":
            b = [int(rng.integers(nb))]
            new.advance(b)
            ref.advance(b)
        elif op == "advance_all":
            new.advance_all()
            ref.advance_all()
        elif op in ("copy_in", "copy_out"):
            kind = "w" if op == "copy_in" else "r"          # a TMA load writes, a store reads
            banks, los, his, warps = _ranges(rng, nb, stride)
            got = _batched(new, kind, banks, los, his, warps)
            assert got == _one_by_one(ref, kind, banks, los, his, warps)
            hits += got is not None
        else:
            n = int(rng.integers(1, 5))
            nbytes = int(rng.choice([1, 4, 8, 16]))
            offs = (rng.integers(0, stride // nbytes, n) * nbytes).astype(np.uint64)
            banks = rng.integers(0, nb, n).astype(np.int64)
            warps = rng.integers(0, W, n).astype(np.int64)
            if op == "load":
                assert _outcome(new.on_load, banks, offs, nbytes, warps) == \
                    _outcome(ref.on_load, banks, offs, nbytes, warps)
            else:
                vals = rng.integers(1, 255, (n, nbytes)).astype(np.uint8)
                got = _outcome(new.on_store, banks, offs, nbytes, warps, vals)
                assert got == _outcome(ref.on_store, banks, offs, nbytes, warps, vals)
                if got is None:
                    data[(banks * stride + offs.astype(np.int64))[:, None] + np.arange(nbytes)] = vals
    return hits


@pytest.mark.parametrize("seed", range(30))
def test_batched_copy_ranges_agree_with_the_per_byte_reference(seed):
    # CTAs pass barriers one at a time too: chunk stamps applied as ranges are recorded
    _program(seed)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("lazy_limit", [1024, 3])
def test_batched_copy_ranges_with_deferred_stamps_agree(seed, lazy_limit, monkeypatch):
    # every CTA in one epoch throughout: the ranges' chunk stamps are deferred as one set of
    # rows and applied (whole rows through a window view) only where a check meets them
    monkeypatch.setattr(S, "_LAZY_LIMIT", lazy_limit)
    _program(500 + seed, whole_batch=True)


def test_the_random_programs_find_races_in_batches():
    # (the comparison above is not vacuous: batches report races, on both paths)
    assert sum(_program(s) for s in range(5)) > 10


def test_a_batch_with_a_race_records_nothing_and_one_by_one_reports_its_range():
    t = RaceTracker(2, 256)
    t.on_load(np.array([1], np.int64), np.array([64], np.uint64), 16, np.array([2], np.int64))
    b, lo, hi, w = (np.array(x, np.int64) for x in ([0, 1], [0, 0], [128, 128], [0, 0]))
    assert not AP.race_ranges(t, "w", b, lo, hi, w)         # CTA 1's box meets warp 2's load
    assert not t._ps and not t._lazy["w"]                    # ... and nothing was recorded
    AP.race_store_range(t, 0, 0, 128, 0)                     # CTA 0's box: fine
    with pytest.raises(M.MemoryFault) as e:
        AP.race_store_range(t, 1, 0, 128, 0)
    assert e.value.address == 64 and "that warp 2 of this CTA loaded since the last barrier" in e.value.detail
    t.advance([1])
    assert AP.race_ranges(t, "w", b, lo, hi, w)              # a past epoch: recorded at once
    with pytest.raises(M.MemoryFault) as e:                  # ... as stores of warp 0
        AP.race_load_range(t, 1, 96, 112, 3)
    assert "that warp 0 of this CTA stored since the last barrier" in e.value.detail


def test_rows_of_two_warps_in_one_chunk_stamp_it_as_several():
    # ranges recorded at once (per-CTA epochs: stamped now) mark a chunk two warps' ranges share
    # exactly as ranges recorded one by one do
    a, b = RaceTracker(2, 256), RaceTracker(2, 256)
    a.advance([0])
    b.advance([0])
    assert a._one is None
    a.record_ranges("w", *(np.array(x, np.int64) for x in ([0, 0], [0, 32], [48, 80], [1, 2])))
    for lo, hi, w in ((0, 48, 1), (32, 80, 2)):
        b.record_range("w", 0, lo, hi, w)
    assert (a.c_w == b.c_w).all() and a.c_w[2] & S._SEVERAL == S._SEVERAL


# ----------------------------------------------------------------------------- end to end
# Every CTA's thread 0 TMA-loads a 1 KB box into ``buf`` after every warp read ``buf``; CTA 1
# (ctaid.x == RACY) skips the barrier in between: its box overwrites what warp 1 still reads.
LOAD_WAR = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128], .param .u64 out, .param .u32 racy)
{
    .reg .u32 %r<12>; .reg .u64 %rd<6>; .reg .pred %p<4>; .reg .b64 %st;
    .shared .align 1024 .b32 buf[256];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r9, [racy];
    mov.u32 %r1, %tid.x;
    mov.u32 %r8, %ctaid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r1;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    ld.shared.u32 %r6, [%r5];
    setp.ne.u32 %p3, %r8, %r9;
    @%p3 bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 1024;
    @%p1 cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd1, {0}], [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r7, [%r5];
    add.u32 %r7, %r7, %r6;
    mad.lo.u32 %r10, %r8, 256, %r1;
    mul.wide.u32 %rd3, %r10, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r7;
    ret;
}
"""


def test_boxes_of_several_ctas_in_one_load_deliver_as_one_by_one():
    ptxas_ok(LOAD_WAR)
    x = np.arange(256, dtype=np.uint32) * 10
    out = np.zeros(3 * 256, np.uint32)
    launch(LOAD_WAR, "k", [tensor_map(x, box=(256,)), out, np.uint32(99)], grid=3, block=256)
    np.testing.assert_array_equal(out.reshape(3, 256), np.tile(x + np.arange(256), (3, 1)))


@pytest.mark.parametrize("racy", [1, 2])
def test_a_race_in_one_box_of_a_batch_names_its_cta_and_thread(racy):
    x = np.arange(256, dtype=np.uint32)
    out = np.zeros(3 * 256, np.uint32)
    with pytest.raises(RaceError) as e:
        launch(LOAD_WAR, "k", [tensor_map(x, box=(256,)), out, np.uint32(racy)], grid=3, block=256)
    msg = str(e.value)
    assert ("it overwrites shared address 0x80 ('buf' (+128)) that warp 1 of this CTA loaded since the "
            "last barrier: a bar.sync (or the mbarrier wait that frees the buffer) is missing between "
            "that load and this copy") in msg
    assert f"thread (0,0,0) of CTA ({racy},0,0)" in msg, msg


# Each of the 4 warps of every CTA writes its quarter of ``buf`` (a 32x8 f32 box per warp),
# fences, and its lane 0 TMA-stores the quarter to rows [32 w, 32 w + 32) of CTA c's column
# block; in CTA ``hole`` warp 2 leaves word 5 of its quarter unwritten.
STORE = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128], .param .u32 hole)
{
    .reg .u32 %r<20>; .reg .pred %p<4>;
    .shared .align 1024 .b32 buf[1024];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    ld.param.u32 %r3, [hole];
    mov.u32 %r4, buf;
    shr.u32 %r5, %r1, 5;                   // warp
    and.b32 %r6, %r1, 31;                  // lane
    shl.b32 %r7, %r5, 10;                  // the warp's quarter: 1 KB
    add.u32 %r8, %r4, %r7;
    mov.u32 %r9, 0;
FILL:
    shl.b32 %r10, %r9, 5;
    add.u32 %r10, %r10, %r6;               // word lane + 32 i of the quarter
    setp.eq.u32 %p1, %r2, %r3;
    setp.eq.u32 %p2, %r5, 2;
    and.pred %p1, %p1, %p2;
    setp.eq.u32 %p2, %r10, 5;
    and.pred %p1, %p1, %p2;
    shl.b32 %r11, %r10, 2;
    add.u32 %r12, %r8, %r11;
    mad.lo.u32 %r13, %r2, 1000, %r1;
    mad.lo.u32 %r13, %r9, 7, %r13;
    @!%p1 st.shared.u32 [%r12], %r13;
    add.u32 %r9, %r9, 1;
    setp.lt.u32 %p3, %r9, 8;
    @%p3 bra FILL;
    fence.proxy.async.shared::cta;
    bar.warp.sync -1;
    setp.eq.u32 %p1, %r6, 0;
    shl.b32 %r14, %r2, 3;                  // column block of the CTA: 8 f32
    shl.b32 %r15, %r5, 5;                  // rows of the warp
    @%p1 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r14, %r15}], [%r8];
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    ret;
}
""".replace(".reg .u32 %r<20>;", ".reg .u32 %r<20>; .reg .u64 %rd<2>;").replace(
    "    mov.u32 %r1, %tid.x;\n", "    mov.b64 %rd1, tm;\n    cvta.param.u64 %rd1, %rd1;\n    mov.u32 %r1, %tid.x;\n", 1)


def _store_want(nctas):
    want = np.zeros((128, 8 * nctas), np.uint32)
    for c in range(nctas):
        for w in range(4):
            for word in range(256):         # word lane + 32 i of warp w's quarter: row-major 32x8
                lane, i = word % 32, word // 32
                want[32 * w + word // 8, 8 * c + word % 8] = c * 1000 + 32 * w + lane + 7 * i
    return want


def test_boxes_of_several_ctas_and_warps_in_one_store_write_as_one_by_one():
    ptxas_ok(STORE)
    y = np.zeros((128, 24), np.uint32)
    launch(STORE, "k", [tensor_map(y, box=(8, 32)), np.uint32(99)], grid=3, block=128)
    np.testing.assert_array_equal(y, _store_want(3))


@pytest.mark.parametrize("hole", [0, 2])
def test_an_unwritten_byte_in_one_box_of_a_store_names_its_cta_and_thread(hole):
    y = np.zeros((128, 24), np.uint32)
    with pytest.raises(UninitializedReadError) as e:
        launch(STORE, "k", [tensor_map(y, box=(8, 32)), np.uint32(hole)], grid=3, block=128)
    msg = str(e.value)
    assert "the TMA store reads shared address 0x814 'buf' (+2068) before any thread of this CTA wrote it" in msg
    assert f"thread (64,0,0) of CTA ({hole},0,0)" in msg, msg
    want = _store_want(3)
    done = y.copy()
    assert (done[:, :8 * hole] == want[:, :8 * hole]).all()     # the CTAs before it stored theirs


def test_a_store_box_that_may_overwrite_the_next_boxs_tensor_map_is_put_first():
    x = np.zeros(4096, np.uint8)
    f = tensor_map(x, box=(64,)).fields
    extents = {tma._extent(f)}
    assert tma._writes_near(extents, f.address + 4096 - 64)
    assert tma._writes_near(extents, f.address - 64)
    assert not tma._writes_near(extents, f.address + 8192)
    assert not tma._writes_near(extents, f.address - 128)


@pytest.mark.parametrize("schedule, seed", [("late", None)] + [("random", s) for s in range(4)])
def test_boxes_of_one_instruction_landing_late_or_not_box_by_box(schedule, seed):
    # under "random" each box of an instruction draws whether it lands (a load) or reads its
    # source (a store) late, as when the boxes were handled one by one; the values are the same
    x = np.arange(256, dtype=np.uint32) * 10
    out = np.zeros(3 * 256, np.uint32)
    launch(LOAD_WAR, "k", [tensor_map(x, box=(256,)), out, np.uint32(99)], grid=3, block=256,
           schedule=schedule, seed=seed)
    np.testing.assert_array_equal(out.reshape(3, 256), np.tile(x + np.arange(256), (3, 1)))
    y = np.zeros((128, 24), np.uint32)
    launch(STORE, "k", [tensor_map(y, box=(8, 32)), np.uint32(99)], grid=3, block=128,
           schedule=schedule, seed=seed)
    np.testing.assert_array_equal(y, _store_want(3))


def test_a_landed_copy_is_not_looked_at_by_later_checks():
    # only the spans of copies still in flight are compared with a check's bytes; a check
    # meeting one counts it (and drops the landed records on the way)
    from types import SimpleNamespace
    ctx = SimpleNamespace(sanitize=True, async_proxy=None, N=4,
                          shared=SimpleNamespace(data=np.zeros(256, np.uint8), stride=128))
    landed = AP.track_inflight(ctx, slice(0, 64), None, 0, 0)                 # CTA 0
    AP.track_inflight(ctx, slice(128 + 64, 128 + 128), None, 1, 8)            # CTA 1
    st = ctx.async_proxy
    landed(ctx, 0, 0)
    assert st.unc_spans == {(64, 128): 1}
    assert AP._counts(st, 0, 64) is None and len(st.uncounted) == 1        # (the landed one left)
    got = AP._counts(st, 96, 100)
    assert got[128 + 64:256].all() and not got[:128 + 64].any() and not st.uncounted


@pytest.mark.parametrize("box,estr,coords", [((64, 128), (1, 1), (0, 0)), ((32, 4, 8), (1, 2, 1), (8, 2, 3)),
                                              ((16, 1, 8), (1, 1, 1), (16, 5, 0)), ((64, 16), (1, 1), (0, 240)),
                                              ((64, 16), (1, 1), (0, 250))])
def test_a_tile_box_knows_its_global_nest(box, estr, coords):
    # the nest a tile box hands the global load (its dimensions and strides) is the one its
    # offsets form: the same addresses, in the same order
    from jax_pyptx.interpret.ops import tma_boxes as T
    from jax_pyptx.interpret.state.tensormap import TensorMapFields
    dims = (128, 8, 256)[:len(box)] if len(box) == 3 else (128, 256)
    strides = (2, 256, 2048)[:len(box)]
    f = TensorMapFields(address=1 << 20, rank=len(box), elemtype=10, dims=dims, strides=strides,
                        box=box, element_strides=estr)
    b = T.tile_box(f, coords)
    if b.valid is not None:
        assert b.grid is None           # out of bounds in part: no nest (the fill is per element)
        return
    rel, shape, st = b.grid
    idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    expanded = rel + (np.asarray(st, np.int64)[:, None] * idx).sum(axis=0)
    np.testing.assert_array_equal(expanded, b.offs)
