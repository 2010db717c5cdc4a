"""The sanitizer's bookkeeping kept per access and per range (issue 24) reports exactly what the
per-byte bookkeeping reported: the race tracker against its per-byte reference
(``tests/race_reference.py``) on random access sequences, each fast path's edge cases (a race
found on the chunk path and on the byte fallback, duplicate addresses in one instruction, rows
across chunks, pending rows compacted), the cp.async in-flight counters, the row views of the
definedness flags and the cross-CTA global tags, and the same checks end to end in kernels."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import RaceError, UninitializedReadError, UnwrittenOutputError
from jax_pyptx.interpret.sanitizer import async_proxy as AP
from jax_pyptx.interpret.state import memory as M
from jax_pyptx.interpret.sanitizer import lane_tags
from jax_pyptx.interpret.sanitizer import smem_races as S
from jax_pyptx.interpret.sanitizer.global_races import _Elems
from jax_pyptx.interpret.sanitizer.smem_races import RaceFault, RaceTracker

from .race_reference import RefTracker, ref_race_load_range, ref_race_store_range

W = 4                       # warps per CTA in the random programs


def _outcome(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except M.MemoryFault as f:
        return (type(f).__name__, f.kind, f.lane, f.address, f.detail)
    return None


def _pair(nb, stride):
    data = np.zeros(nb * stride, np.uint8)
    new, ref = RaceTracker(nb, stride, data), RefTracker(nb, stride, data)
    logs = ([], [])
    for t, log in zip((new, ref), logs):
        t.warn = lambda f, w, b, log=log: log.append((f.lane, f.address, f.detail, w, b))
    return data, new, ref, logs


_MIX = [.3, .3, .1, .05, .05, .1, .03, .07]
_MIX_WHOLE_BATCH = [.3, .3, .1, .05, .05, 0, .13, .07]     # barriers of every CTA at once only


def _program(seed, steps=250, nb=2, stride=64, mix=_MIX):
    """Random loads, stores, copies and synchronization on both trackers; every step must give
    the same outcome (error, lane, address, message) and the same warnings."""
    rng = np.random.default_rng(seed)
    data, new, ref, logs = _pair(nb, stride)
    for _ in range(steps):
        op = rng.choice(["load", "store", "store", "load_range", "store_range", "advance",
                         "advance_all", "warp_sync"], p=mix)
        if op == "advance":
            if rng.random() < .5:
                b = [int(rng.integers(nb))]
                new.advance(b)
                ref.advance(b)
            else:                   # several barriers at once, a CTA's maybe twice (advance_each)
                cs = [int(c) for c in rng.integers(0, nb, int(rng.integers(2, 5)))]
                new.advance_each(cs)
                for c in cs:
                    ref.advance([c])
            continue
        if op == "advance_all":
            new.advance_all()
            ref.advance_all()
            continue
        if op == "warp_sync":
            gw = rng.integers(0, nb * W, int(rng.integers(1, 4)))
            new.warp_synced(gw)
            ref.warp_synced(gw)
            continue
        if op.endswith("range"):
            bank, warp = int(rng.integers(nb)), int(rng.integers(W))
            lo = int(rng.integers(0, stride - 1))
            hi = int(rng.integers(lo + 1, stride + 1))
            f_new, f_ref = ((AP.race_load_range, ref_race_load_range) if op == "load_range"
                            else (AP.race_store_range, ref_race_store_range))
            assert _outcome(f_new, new, bank, lo, hi, warp) == _outcome(f_ref, ref, bank, lo, hi, warp)
            continue
        n = int(rng.integers(1, 7))
        nbytes = int(rng.choice([1, 2, 4, 8, 16, 3, 12]))
        if nbytes & (nbytes - 1) == 0 and rng.random() < .8:
            offs = rng.integers(0, stride // nbytes, n) * nbytes
        else:
            offs = rng.integers(0, stride - nbytes + 1, n)
        offs = offs.astype(np.uint64)
        banks = rng.integers(0, nb, n).astype(np.int64)
        warps = rng.integers(0, W, n).astype(np.int64)
        remote = rng.random() < .1
        if remote:
            warps[rng.random(n) < .5] = 32 + int(rng.integers(2))
        lanes = rng.integers(0, 32, n)
        gw = banks * W + np.minimum(warps, W - 1)
        if op == "load":
            got = (_outcome(new.on_load, banks, offs, nbytes, warps),
                   _outcome(ref.on_load, banks, offs, nbytes, warps))
            assert got[0] == got[1]
            if got[0] is None and not remote:
                assert _outcome(new.intra_load, banks, offs, nbytes, gw, lanes, nb * W) == \
                    _outcome(ref.intra_load, banks, offs, nbytes, gw, lanes, nb * W)
        else:
            vals = rng.integers(0, 2, (n, nbytes)).astype(np.uint8)       # same values are common
            got = (_outcome(new.on_store, banks, offs, nbytes, warps, vals),
                   _outcome(ref.on_store, banks, offs, nbytes, warps, vals))
            assert got[0] == got[1]
            ok = got[0] is None
            if ok and not remote:
                got = (_outcome(new.intra_store, banks, offs, nbytes, gw, lanes, nb * W, vals),
                       _outcome(ref.intra_store, banks, offs, nbytes, gw, lanes, nb * W, vals))
                assert got[0] == got[1]
                ok = got[0] is None
            if ok:
                data[(banks * stride + offs.astype(np.int64))[:, None] + np.arange(nbytes)] = vals
        assert logs[0] == logs[1]


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_agree_with_per_byte_reference(seed):
    _program(seed)


@pytest.mark.parametrize("seed", range(6))
def test_random_programs_agree_with_pending_rows_compacted(seed, monkeypatch):
    monkeypatch.setattr(S, "_PEND_LIMIT", 5)        # pending rows applied every few accesses
    _program(100 + seed)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("lazy_limit", [1024, 64, 2])
def test_random_programs_with_deferred_chunk_stamps_agree(seed, lazy_limit, monkeypatch):
    # every CTA in one epoch throughout: chunk stamps are deferred (RaceTracker._defer) and
    # applied only where a check reads them, or every few accesses
    monkeypatch.setattr(S, "_LAZY_LIMIT", lazy_limit)
    _program(200 + seed, steps=400, mix=_MIX_WHOLE_BATCH)


def test_deferred_load_stamps_applied_only_when_a_store_meets_them():
    t = RaceTracker(2, 256)
    t.on_load(_i(0, 1), _u(0, 0), 16, _i(1, 1))           # offsets 0-15 of both CTAs
    t.on_store(_i(0, 1), _u(64, 64), 16, _i(0, 0))        # other chunks: nothing to compare
    assert not t.c_r.any() and len(t._lazy["r"]) == 1
    t.on_store(_i(1), _u(32), 8, _i(0))
    assert not t.c_r.any()
    with pytest.raises(RaceFault) as e:
        t.on_store(_i(1), _u(8), 4, _i(0))                 # chunk 0 of CTA 1: warp 1 read it
    assert (e.value.lane, e.value.address) == (0, 8)
    assert "that warp 1 of this CTA loaded since the last barrier" in e.value.detail
    assert t.c_r.any() and not t._lazy["r"]
    t.advance_all()                                        # a past epoch: dropped, never applied
    t.on_load(_i(0), _u(128), 16, _i(2))
    t.advance_all()
    assert not t._lazy["r"] and not t._lazy["w"]
    t.on_store(_i(0), _u(128), 16, _i(0))


def test_deferred_stamps_dropped_once_every_cta_left_their_epoch():
    # CTAs pass barriers one at a time (mbarrier phases): the stamps deferred before are
    # dropped unapplied once every CTA is past their epoch, and the ones deferred since (over
    # the same chunks) still find the race
    t = RaceTracker(2, 256)
    t.on_store(_i(0), _u(0), 16, _i(0))
    t.record_range("w", 0, 0, 64, 2)                      # a copy's range: one deferred row
    t.advance([0])
    assert t._one is None
    t.advance([1])
    assert t._one == 2 and len(t._lazy["w"]) == 2
    t.record_range("w", 0, 0, 64, 3)                      # deferred after them
    t.on_load(_i(1), _u(128), 8, _i(1))                   # drops the first two only
    assert len(t._lazy["w"]) == 1 and not t.c_w.any()
    with pytest.raises(RaceFault) as e:
        t.on_load(_i(0), _u(16), 8, _i(1))
    assert "that warp 3 of this CTA stored since the last barrier" in e.value.detail
    t.on_store(_i(1), _u(0), 16, _i(0))
    t.advance([0])
    t.advance([1])
    t.on_load(_i(1), _u(0), 8, _i(1))                     # all of a past epoch: all dropped
    assert not t._lazy["w"] and not t._cover["w"]                # no chunk bit left


def _u(*xs):
    return np.array(xs, np.uint64)


def _i(*xs):
    return np.array(xs, np.int64)


def test_lane_tags_kept_per_word_spread_and_fold_back():
    # one warp (batch warp 0): lanes' tags live one per 4-byte word until a byte
    # store splits a word (MIXED, kept byte by byte); the split word still reports the lane
    # that stored its byte, and bytes of one lane that agree again fold back into one tag
    t = RaceTracker(1, 64, np.zeros(64, np.uint8))
    gw, nw = _i(0), 1
    t.intra_store(_i(0), _u(16), 8, gw, _i(3), nw)                  # 2 words, one row item
    assert t.w_tag.b is None and (t.w_tag.w[4:6] > 0).all() and t.w_tag.w[4] == t.w_tag.w[5]
    t.intra_store(_i(0), _u(17), 1, gw, _i(3), nw)                  # same lane: no race, and
    assert t.w_tag.w[4] == t.w_tag.w[5]                             # the word still agrees
    t.warp_synced(gw)
    t.intra_store(_i(0), _u(18), 1, gw, _i(5), nw)
    assert t.w_tag.w[4] == lane_tags.MIXED and t.w_tag.w[5] != lane_tags.MIXED
    with pytest.raises(RaceFault) as e:
        t.intra_load(_i(0), _u(16), 4, gw, _i(3), nw)               # byte 18: lane 5's
    assert (e.value.lane, e.value.address) == (0, 18)
    assert "that lane 5 of the same warp stored" in e.value.detail
    for b in range(32, 36):                                         # one lane, byte by byte
        t.intra_store(_i(0), _u(b), 1, gw, _i(7), nw)
    assert t.w_tag.w[8] != lane_tags.MIXED                          # folded back
    t.intra_store(_i(0), _u(32), 4, gw, _i(7), nw)
    with pytest.raises(RaceFault) as e:
        t.intra_store(_i(0), _u(32), 4, gw, _i(2), nw)
    assert (e.value.lane, e.value.address) == (0, 32)
    assert "that lane 7 of the same warp also stored" in e.value.detail


def test_race_on_the_chunk_path_names_warp_lane_and_address():
    t = RaceTracker(1, 64)
    t.on_store(_i(0, 0), _u(0, 16), 16, _i(0, 1))
    with pytest.raises(RaceFault) as e:
        t.on_load(_i(0, 0, 0), _u(32, 48, 16), 16, _i(2, 2, 2))
    f = e.value
    assert (f.lane, f.address) == (2, 16)
    assert f.detail == ("it reads shared address 0x10{where} that warp 1 of this CTA stored since the last "
                        "barrier: a bar.sync (__syncthreads) is missing between the store and this load")


def test_neighbouring_bytes_of_one_chunk_keep_byte_granularity():
    t = RaceTracker(1, 64)
    t.on_store(_i(0), _u(0), 4, _i(0))
    t.on_load(_i(0), _u(4), 4, _i(1))             # same chunk, other bytes: the byte fallback
    t.on_store(_i(0), _u(8), 8, _i(1))
    with pytest.raises(RaceFault) as e:
        t.on_load(_i(0, 0), _u(12, 2), 2, _i(3, 3))
    assert (e.value.lane, e.value.address) == (0, 12)
    assert "that warp 1 of this CTA stored" in e.value.detail


def test_same_warp_reuse_never_reaches_the_per_byte_state():
    t = RaceTracker(1, 64)
    for _ in range(3):
        t.on_store(_i(0, 0), _u(0, 16), 16, _i(2, 2))
        t.on_load(_i(0, 0), _u(0, 16), 16, _i(2, 2))
    assert not t.wepoch.any() and not t.repoch.any()       # nothing had to be applied
    with pytest.raises(RaceFault, match="that warp 2 of this CTA loaded"):
        t.on_store(_i(0), _u(16), 16, _i(0))


def test_duplicate_addresses_in_one_load_keep_every_reader():
    # warps 1 and 2 read the same 16 bytes in one instruction; a later store by warp 1 must
    # still see warp 2's read (a plain fancy-index or would keep only one of them)
    t = RaceTracker(1, 64)
    t.on_load(_i(0, 0, 0), _u(0, 0, 0), 16, _i(1, 2, 1))
    with pytest.raises(RaceFault) as e:
        t.on_store(_i(0), _u(0), 16, _i(1))
    assert "that warp 2 of this CTA loaded" in e.value.detail
    assert t.rmask[0] == 0b110


@pytest.mark.parametrize("offs, nbytes, lane, address", [
    ((0, 16, 16), 16, 1, 16),           # aligned rows: found per row, reported byte by byte
    ((0, 4), 8, 0, 4),                  # rows overlapping in part: the byte fallback
])
def test_same_instruction_write_write(offs, nbytes, lane, address):
    t = RaceTracker(1, 64, np.zeros(64, np.uint8))
    vals = np.arange(len(offs) * nbytes, dtype=np.uint8).reshape(len(offs), nbytes) + 1
    warps = _i(*range(len(offs)))
    with pytest.raises(RaceFault) as e:
        t.on_store(_i(*[0] * len(offs)), _u(*offs), nbytes, warps, vals)
    assert (e.value.lane, e.value.address) == (lane, address)       # the lane the winner overwrote
    ref = RefTracker(1, 64, np.zeros(64, np.uint8))
    with pytest.raises(RaceFault) as r:
        ref.on_store(_i(*[0] * len(offs)), _u(*offs), nbytes, warps, vals)
    assert (r.value.lane, r.value.address, r.value.detail) == (e.value.lane, e.value.address, e.value.detail)
    assert "also stored in this same instruction, a different value" in e.value.detail


def test_rows_across_chunks_are_checked_in_every_chunk():
    t = RaceTracker(1, 64)
    t.on_store(_i(0), _u(30), 2, _i(0))           # the last bytes of chunk 1
    with pytest.raises(RaceFault) as e:
        t.on_load(_i(0), _u(24), 8, _i(1))        # bytes 24..31: chunk 1 only through byte 30
    assert e.value.address == 30
    t.advance([0])
    t.on_store(_i(0), _u(32), 2, _i(0))           # chunk 2
    with pytest.raises(RaceFault):
        t.on_load(_i(0), _u(28), 12, _i(1))       # 28..39 spans chunks 1 and 2


def test_epochs_per_cta_and_pending_rows_of_past_epochs():
    t = RaceTracker(2, 32)
    t.on_store(_i(0, 1), _u(0, 0), 16, _i(0, 0))
    t.advance([0])
    t.on_load(_i(0), _u(0), 16, _i(1))            # CTA 0 synchronized: no race
    with pytest.raises(RaceFault):
        t.on_load(_i(1), _u(0), 16, _i(1))       # CTA 1 did not


def test_range_records_and_their_checks():
    t = RaceTracker(1, 256)
    AP.race_load_range(t, 0, 0, 128, 3)           # a bulk store reads the box (warp 3)
    AP.race_store_range(t, 0, 0, 128, 3)          # the same warp reuses it: fine
    t.on_store(_i(0), _u(128), 16, _i(0))
    with pytest.raises(M.MemoryFault) as e:
        AP.race_load_range(t, 0, 64, 192, 3)
    assert e.value.address == 128 and "that warp 0 of this CTA stored" in e.value.detail
    with pytest.raises(M.MemoryFault) as e:
        t.on_store(_i(0), _u(16), 16, _i(1))
    assert "that warp 3 of this CTA loaded" in e.value.detail


# ----------------------------------------------------------------------------- cp.async counts
class _St:
    def __init__(self, n):
        self.inflight = np.zeros(n, np.uint16)
        self.scratch = None


@pytest.mark.parametrize("starts, size", [
    ((0, 16, 48), 16),              # distinct aligned rows: four counters at a time
    ((0, 16, 16, 0, 32), 16),       # duplicate rows in one instruction
    ((4, 8, 4), 4),
    ((0, 8), 8),
])
def test_cp_async_in_flight_counts(starts, size):
    st = _St(64)
    s = _i(*starts)
    want = np.zeros(64, np.int64)
    np.add.at(want, (s[:, None] + np.arange(size)).reshape(-1), 1)
    AP._bump(st, s, size, 1)
    AP._bump(st, s, size, 1)
    assert (st.inflight == 2 * want).all()
    AP._bump(st, s[:1], size, -1)
    want2 = 2 * want
    want2[s[0]:s[0] + size] -= 1
    assert (st.inflight == want2).all()


def _ctx():
    from types import SimpleNamespace
    return SimpleNamespace(sanitize=True, async_proxy=None, N=4,
                           shared=SimpleNamespace(data=np.zeros(128, np.uint8), stride=64))


@pytest.mark.parametrize("check_first", [True, False])
def test_cp_async_counted_when_first_read(check_first):
    ctx = _ctx()
    tracked = AP.track_cp_async(ctx, _i(0, 0, 1), _u(0, 16, 0), 16, None)
    st = ctx.async_proxy
    assert not st.inflight.any() and st.n_inflight == 1          # recorded, not yet counted
    if check_first:
        assert AP._counts(st)[:32].tolist() == [1] * 32 and st.inflight[64:80].tolist() == [1] * 16
    AP.cp_async_landed(ctx, tracked, np.array([True, False, False]), 2)   # row 0 lands
    tracked = (tracked[0][1:], tracked[1])
    want = np.zeros(128, np.int64)
    want[16:32] = want[64:80] = 1
    assert (AP._counts(st) == want).all() and st.n_inflight == 1
    assert AP._record_of(ctx, 20) is tracked[1] and AP._record_of(ctx, 5) is tracked[1]
    AP.cp_async_landed(ctx, tracked, np.array([True, True]), 0)
    assert not st.inflight.any() and st.n_inflight == 0 and AP._record_of(ctx, 20) is None


def test_cp_async_landed_uncounted_never_touches_the_counts():
    ctx = _ctx()
    for _ in range(100):                  # each record leaves the uncounted ones as it lands
        tracked = AP.track_cp_async(ctx, _i(0), _u(32), 8, None)
        AP.cp_async_landed(ctx, tracked, np.array([True]), 0)
    st = ctx.async_proxy
    assert st.n_inflight == 0 and len(st.uncounted) == 0
    assert not AP._counts(st).any()


# ----------------------------------------------------------------------------- row views
@pytest.mark.parametrize("starts, nbytes", [((0, 16, 32), 16), ((0, 64), 64), ((3, 7), 4),
                                            ((8, 8, 24), 8), ((1, 2), 1), ((0, 12), 12)])
def test_row_views_match_fancy_indexing(starts, nbytes):
    s = _i(*starts)
    idx = s[:, None] + np.arange(nbytes)
    for dt in (np.uint8, np.uint16, np.int32):
        arr = np.arange(128, dtype=dt)
        assert (M.take_rows(arr, s, nbytes) == arr[idx]).all()
        vals = (np.arange(len(s) * nbytes).reshape(len(s), nbytes) + 7).astype(dt)
        a1, a2 = arr.copy(), arr.copy()
        M.put_rows(a1, s, nbytes, vals)
        a2[idx] = vals
        assert (a1 == a2).all()
    flags = np.zeros(128, np.uint8)
    assert not M._rows_defined(flags, s, nbytes)
    M._rows_set(flags, s, nbytes)
    want = np.zeros(128, np.uint8)
    want[idx] = 1
    assert (flags == want).all()
    assert M._rows_defined(flags, s, nbytes)
    flags[idx[-1, -1]] = 0
    assert not M._rows_defined(flags, s, nbytes)


@pytest.mark.parametrize("first, per", [((0, 4, 12), 4), ((2, 6), 4), ((0, 2), 2), ((5,), 1)])
def test_global_race_elements(first, per):
    e = _Elems(_i(*first), per)
    t = np.arange(32, dtype=np.int32)
    idx = e.index()
    assert (e.take(t) == t[idx]).all()
    t2 = t.copy()
    e.put(t, np.full(e.shape, -5, np.int32))
    t2[idx] = -5
    assert (t == t2).all()


@pytest.mark.parametrize("first, per", [
    (np.arange(64) * 4, 4),                                    # a warp's consecutive vectors: a slice
    ((np.arange(4)[:, None] * 100 + np.arange(16) * 2).ravel(), 2),    # rows of a tile
    (np.tile(np.arange(32) * 4, 3), 4),                        # the same rows again (stride 0): overlap
    ((np.arange(32) * 3), 4),                                  # overlapping rows
    (np.arange(40) * 10 + 3, 1),                               # strided single elements
    (np.r_[np.arange(31) * 4, 200], 4),                        # scattered: the gather
])
def test_global_race_elements_as_strided_slices(first, per):
    """Rows of at least memory.FAST_MIN accesses whose first elements form a nest are read and
    written through a strided view: the same elements as the gather, last row winning where
    rows overlap (those take the gather)."""
    first = np.asarray(first, np.int64)
    e = _Elems(first, per)
    t = np.arange(512, dtype=np.int32)
    idx = e.index()
    got = e.take(t)
    assert got.shape == e.shape and (got == t[idx]).all()
    t[:] = 7
    assert (got == np.arange(512)[idx]).all()                  # a copy, not a view of t
    vals = np.arange(idx.size, dtype=np.int32).reshape(e.shape) + 1000
    t2 = t.copy()
    e.put(t, vals)
    t2[idx] = vals
    assert (t == t2).all()
    short = np.zeros(int(first.max()) + per - 1, np.int32)      # one element short: the gather, which raises
    with pytest.raises(IndexError):
        e.take(short)


def test_output_marked_uninitialized_as_one_range():
    al = M.Allocation(0, 0x1000, 100, "y", np.zeros(100, np.uint8))
    al.start_uninitialized()
    assert al.init.shape == (100,) and not al.init.any() and len(al._ibuf) % 64 == 0
    part = M.Allocation(1, 0x2000, 100, "z", np.zeros(100, np.uint8))
    part.start_uninitialized(10, 20)
    assert part.init.sum() == 90 and not part.init[10:20].any()


# ----------------------------------------------------------------------------- end to end
def _kernel(body):
    return f"""
.version 8.0
.target sm_80
.address_size 64
.shared .align 16 .b8 buf[2048];
.visible .entry k(.param .u64 y)
{{
  .reg .b32 %r<20>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
{body}
  ret;
}}"""


def _launch(ptx, y, block=64, **kw):
    from jax_pyptx.interpret import launch
    return launch(ptx, "k", [y], grid=1, block=block, outputs=[0], **kw)


def test_kernel_v4_shared_race_reported_and_fixed_twin_clean():
    body = """
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  mov.u32 %r3, buf;
  add.u32 %r4, %r3, %r2;
  st.shared.v4.u32 [%r4], {%r1, %r1, %r1, %r1};
  SYNC
  xor.b32 %r5, %r2, 512;
  add.u32 %r6, %r3, %r5;
  ld.shared.v4.u32 {%r7, %r8, %r9, %r10}, [%r6];
  ld.param.u64 %rd1, [y];
  cvt.u64.u32 %rd2, %r2;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r7, %r8, %r9, %r10};"""
    y = np.zeros(64 * 4, np.uint32)
    with pytest.raises(RaceError, match=r"reads shared address 0x200 \('buf' \(\+512\)\) that warp 1 of this CTA "
                                        r"stored since the last barrier"):
        _launch(_kernel(body.replace("SYNC", "")), y)
    _launch(_kernel(body.replace("SYNC", "bar.sync 0;")), y)
    got = y.reshape(64, 4)[:, 0]
    assert (got == (np.arange(64) ^ 32)).all()


def test_kernel_output_tail_unwritten_and_uninitialized_read():
    body = """
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 60;
  @%p1 bra DONE;
  shl.b32 %r2, %r1, 4;
  ld.param.u64 %rd1, [y];
  cvt.u64.u32 %rd2, %r2;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r1, %r1, %r1, %r1};
  READ
DONE:"""
    y = np.zeros(64 * 4, np.uint32)
    with pytest.raises(UnwrittenOutputError, match=r"left 16 of the 256 elements .* flat elements 240-255"):
        _launch(_kernel(body.replace("READ", "")), y)
    read = "ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd3+16];"
    with pytest.raises(UninitializedReadError, match=r"byte 960 of allocation"):
        _launch(_kernel(body.replace("READ", read)), y)


# ----------------------------------------------------------------------------- shared definedness
@pytest.mark.parametrize("size", [48, 36])          # words of 8 bytes per bank, and bytes
def test_shared_all_written_only_once_every_byte_is(size):
    sh = M.BankedSpace("shared", 2, size, track_init=True)
    banks = np.repeat(_i(0, 1), size - 1)
    offs = np.tile(np.arange(size - 1, dtype=np.uint64), 2)
    sh.store(banks, offs, np.ones((len(offs), 1), np.uint8))      # all but the last byte
    for _ in range(20):
        sh.check_init(banks, offs, 1)
    assert not sh.init_full
    with pytest.raises(M.MemoryFault) as e:
        sh.check_init(_i(0, 1), _u(0, size - 1), 1)
    assert (e.value.kind, e.value.lane, e.value.address) == ("uninitialized", 1, size - 1)
    sh.store(_i(0), _u(size - 1), np.ones((1, 1), np.uint8))
    for _ in range(20):
        sh.check_init(banks, offs, 1)
    assert not sh.init_full                             # CTA 1's last byte is still unwritten
    sh.store(_i(1), _u(size - 1), np.ones((1, 1), np.uint8))
    for _ in range(40):
        sh.check_init(banks, offs, 1)
    assert sh.init_full and sh.all_written()
    sh.check_init(_i(0, 1), _u(0, size - 1), 1)         # every byte: nothing to report



@pytest.mark.parametrize("backlog", [1 << 20, 1])
def test_fence_marks_of_generic_stores_marked_when_looked_at(backlog, monkeypatch):
    monkeypatch.setattr(M, "_DIRTY_PEND", backlog)
    sh = M.BankedSpace("shared", 2, 64, track_init=True)
    sh.dirty = np.zeros_like(sh.init)
    sh.store(_i(0, 1), _u(0, 16), np.ones((2, 1), np.uint32))
    assert bool(sh._dpend) == (backlog > 1)
    want = np.zeros(128, np.uint8)
    want[0:4] = want[64 + 16:64 + 20] = 1
    np.testing.assert_array_equal(sh.dirty, want)
    sh.dirty[0:64] = 0                                  # CTA 0's fence.proxy.async (async_proxy)
    sh.store(_i(0), _u(32), np.ones((1, 1), np.uint16))
    want[0:4] = 0
    want[32:34] = 1
    np.testing.assert_array_equal(sh.dview(2).view(np.uint8), want)
    assert sh.dirty_bank.tolist() == [True, True]


@pytest.mark.parametrize("seed", range(5))
def test_unwritten_intervals_agree_with_per_byte_flags(seed):
    from jax_pyptx.interpret.state.unwritten import Unwritten

    rng = np.random.default_rng(seed)
    u, ref = Unwritten(), np.zeros(200, bool)          # ref: True where unwritten
    for _ in range(300):
        a = int(rng.integers(0, 200))
        b = int(rng.integers(a, min(200, a + 40) + 1))
        op = rng.choice(["add", "remove", "meets"], p=[.2, .5, .3])
        if op == "add":
            u.add(a, b)
            ref[a:b] = True
        elif op == "remove":
            u.remove(a, b)
            ref[a:b] = False
        assert u.meets(a, b) == bool(ref[a:b].any())
        got = np.zeros(200, bool)
        for lo, hi in u:
            assert lo < hi
            got[lo:hi] = True
        np.testing.assert_array_equal(got, ref)
        assert all(h < lo for h, lo in zip(u.hi, u.lo[1:]))     # disjoint and never adjacent


def test_output_flags_stay_intervals_until_an_access_is_not_a_range():
    al = M.Allocation(0, 0x1000, 256, "y", np.zeros(256, np.uint8))
    al.start_uninitialized(0, 200)
    al.mark_nest(0, [4], [16], 16)                      # bytes 0-63: dense
    assert list(al._undef) == [(64, 200)] and al._init is None
    assert al.nest_written(0, [2], [32], 16) and not al.nest_written(48, [2], [16], 16)
    assert al._init is not None and al._undef is None   # the second needed the flags
    assert al.init[:64].all() and not al.init[64:200].any() and al.init[200:].all()
    al.mark_nest(64, [4], [32], 16)                     # every other 16 bytes: per byte now
    assert al.init[64:80].all() and not al.init[80:96].any()
    assert al.unwritten_in(64, 200) and not al.unwritten_in(0, 80)
