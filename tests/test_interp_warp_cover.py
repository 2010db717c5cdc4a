"""The race tracker's per-warp summary (``sanitizer.warp_cover``): an access whose warps stay
clear of every block another warp accessed in the epoch skips the per-chunk checks and keeps
its stamps deferred, and reports exactly what the per-byte reference reports."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import RaceError
from jax_pyptx.interpret.machine.group import Group
from jax_pyptx.interpret.sanitizer import warp_cover as WC
from jax_pyptx.interpret.sanitizer.smem_races import RaceFault, RaceTracker
from jax_pyptx.interpret.sanitizer.warp_cover import ANY, WarpCover, span_bits, warp_hulls

from . import test_interp_race_bookkeeping as RB


def _blocks_of(warps):
    """``Group.warp_blocks`` of rows made by ``warps`` in order, generalized to any number of rows
    a warp: runs of one length, one sequence of distinct warps repeated (None otherwise)."""
    w = warps.tolist()
    if not w or max(w) >= 32:
        return None
    runs = []
    for x in w:
        if runs and runs[-1][0] == x:
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    if any(r[1] != runs[0][1] for r in runs):
        return None
    seq = [r[0] for r in runs]
    for n in range(1, len(seq) + 1):
        if len(seq) % n == 0 and len(set(seq[:n])) == n and seq == seq[:n] * (len(seq) // n):
            return len(seq) // n, n, seq[:n]
    return None


class _Blocked(RaceTracker):
    """The tracker given ``blocks`` wherever the rows' warps are laid out as a group's are."""

    def on_load(self, banks, offs, nbytes, warps, *a, **kw):
        return super().on_load(banks, offs, nbytes, warps, *a, blocks=_blocks_of(warps), **kw)

    def on_store(self, banks, offs, nbytes, warps, *a, **kw):
        return super().on_store(banks, offs, nbytes, warps, *a, blocks=_blocks_of(warps), **kw)


@pytest.mark.parametrize("shift", [0, 4, 7])
@pytest.mark.parametrize("seed", range(12))
def test_random_programs_with_warp_blocks_agree_with_per_byte_reference(seed, shift, monkeypatch):
    # the random programs of test_interp_race_bookkeeping, the summary kept per byte, per chunk
    # and per 128-byte block: every step reports what the per-byte reference reports
    monkeypatch.setattr(RB, "RaceTracker", _Blocked)
    monkeypatch.setattr(WC, "_SHIFT", shift)
    RB._program(500 + seed)
    RB._program(600 + seed, steps=400, mix=RB._MIX_WHOLE_BATCH)
    RB._program(700 + seed, stride=512)


def test_span_bits_and_hulls():
    assert span_bits(0, 1) == 1 and span_bits(128, 129) == 2 and span_bits(100, 300) == 0b111
    offs = np.array([0, 16, 512, 528, 4096, 4112, 4608, 4624], np.uint64)   # 2 CTAs x 2 warps x 2 rows
    hulls, apart = warp_hulls(offs, 16, (2, 2, [5, 7]))
    assert hulls == [(5, span_bits(0, 4128)), (7, span_bits(512, 4640))] and not apart
    hulls, apart = warp_hulls(np.array([0, 16, 512, 528, 0, 16, 512, 528], np.uint64), 16, (2, 2, [5, 7]))
    assert hulls == [(5, span_bits(0, 32)), (7, span_bits(512, 544))] and apart
    assert warp_hulls(offs[:7], 16, (2, 2, [5, 7])) is None
    assert warp_hulls(offs, 8, (1, 1, [3])) == ([(3, span_bits(0, 4632))], True)


def test_the_sets_tell_other_warps_and_restart_with_the_epoch():
    c = WarpCover()
    c.add("w", 1, [(2, span_bits(0, 256)), (3, span_bits(256, 512))])
    assert c.clear("w", 1, [(2, span_bits(0, 128))])                 # its own blocks only
    assert not c.clear("w", 1, [(2, span_bits(200, 300))])           # warp 3's block 2
    assert c.clear("r", 1, [(2, span_bits(200, 300))])               # nothing loaded
    c.add("w", 1, [(2, span_bits(0, 128))])
    assert c.clear("w", 1, [(2, span_bits(0, 128))])
    c.add("w", 1, [(4, span_bits(0, 128))])                          # block 0: warps 2 and 4
    assert not c.clear("w", 1, [(2, span_bits(0, 128))])
    assert not c.clear("w", 1, [(4, span_bits(0, 128))])
    assert c.clear("w", 2, [(4, span_bits(0, 512))])                 # a later epoch: none yet
    c.add("r", 2, [(ANY, span_bits(1024, 1100))])
    assert c.clear("w", 2, [(2, span_bits(0, 512))])                 # the old sets are gone
    assert not c.clear("r", 2, [(3, span_bits(1090, 1200))])         # ANY is another warp to all


def test_group_warp_blocks_and_slot_info():
    class Ctx:
        S = 128
        lane = np.arange(256) % 32
        warp_in_cta = (np.arange(256) % 128) // 32
    idx = np.concatenate([np.arange(32, 96), np.arange(160, 224)])   # warps 1, 2 of CTAs 0, 1
    g = Group(idx, 0, 256)
    assert g.warp_blocks(4) == (2, 2, [1, 2])
    gw, lanes, w = g.slot_info(Ctx)
    assert (gw == idx >> 5).all() and (lanes == idx % 32).all() and (w == Ctx.warp_in_cta[idx]).all()
    assert g.slot_info(Ctx)[0] is gw                                  # cached
    assert Group(idx[1:], 0, 256).warp_blocks(4) is None              # a partial warp
    other = np.concatenate([np.arange(32, 64), np.arange(192, 224)])   # warp 1, then warp 2
    assert Group(other, 0, 256).warp_blocks(4) is None


def _i(*xs):
    return np.array(xs, np.int64)


def test_private_stores_stay_deferred_and_a_load_of_another_warps_rows_is_still_reported():
    t = RaceTracker(2, 1024, np.zeros(2048, np.uint8))
    lanes = np.arange(4)
    offs = np.concatenate([lanes * 16, 512 + lanes * 16] * 2).astype(np.uint64)   # warp 0 | warp 1
    banks = np.repeat(_i(0, 1), 8)
    warps = np.tile(np.repeat(_i(0, 1), 4), 2)
    blocks = (2, 2, [0, 1])
    vals = np.ones((16, 16), np.uint8)
    for k in range(3):                           # again and again into its own rows
        t.on_store(banks, offs + np.uint64(64 * (k % 2)), 16, warps, vals, blocks=blocks)
    assert not t.c_w.any() and len(t._lazy["w"]) == 3        # nothing compared, nothing stamped
    with pytest.raises(RaceFault) as e:          # warp 1 of CTA 1 reads warp 0's first row
        t.on_load(_i(1), np.array([16], np.uint64), 4, _i(1), blocks=(1, 1, [1]))
    assert (e.value.lane, e.value.address) == (0, 16)
    assert "that warp 0 of this CTA stored since the last barrier" in e.value.detail
    t.advance_all()
    t.on_load(_i(1), np.array([16], np.uint64), 4, _i(1), blocks=(1, 1, [1]))      # after a barrier


def test_two_warps_of_one_store_on_one_byte_are_reported_though_their_blocks_are_new():
    t = RaceTracker(1, 1024, np.zeros(1024, np.uint8))
    offs = np.array([0, 16, 16, 32], np.uint64)
    with pytest.raises(RaceFault, match="in this same instruction"):
        t.on_store(_i(0, 0, 0, 0), offs, 16, _i(0, 0, 1, 1), np.arange(64, dtype=np.uint8).reshape(4, 16),
                   blocks=(1, 2, [0, 1]))


_PRIVATE = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y)
{
  .reg .u32 %r<12>;
  .reg .u64 %rd<4>;
  .reg .pred %p<2>;
  .shared .align 16 .b8 buf[2048];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  mov.u32 %r3, buf;
  add.u32 %r4, %r3, %r2;
  st.shared.v4.u32 [%r4], {%r1, %r1, %r1, %r1};
  add.u32 %r5, %r1, 100;
  st.shared.v4.u32 [%r4], {%r5, %r5, %r5, %r5};
  SYNC
  xor.b32 %r6, %r2, 512;
  add.u32 %r7, %r3, %r6;
  ld.shared.u32 %r8, [%r7];
  ld.param.u64 %rd1, [y];
  mov.u32 %r9, %ctaid.x;
  mad.lo.u32 %r10, %r9, 64, %r1;
  mul.wide.u32 %rd2, %r10, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r8;
  ret;
}
"""


def test_kernel_warps_storing_their_own_rows_then_reading_the_others():
    # every warp stores its own rows twice (the second store needs no check), then reads the
    # other warp's rows: a race without a barrier, the other warp's values with one
    from jax_pyptx.interpret import launch
    y = np.zeros(128, np.uint32)
    with pytest.raises(RaceError, match=r"reads shared address 0x200 \('buf' \(\+512\)\) that warp 1 of this "
                                        r"CTA stored since the last barrier"):
        launch(_PRIVATE.replace("SYNC", ""), "k", [y], grid=2, block=64)
    launch(_PRIVATE.replace("SYNC", "bar.sync 0;"), "k", [y], grid=2, block=64)
    np.testing.assert_array_equal(y, np.tile((np.arange(64) ^ 32) + 100, 2))


def test_a_finished_batchs_lane_tags_go_to_the_next_batch_unfilled_and_never_match(monkeypatch):
    # batch 1's lanes store words; its word array goes to batch 2 as it is (no refill): batch
    # 2's interval ids come after batch 1's, so its lanes reading those words find no race
    from jax_pyptx.interpret.sanitizer import lane_tags as LT
    monkeypatch.setattr(LT, "_free", [])          # (none of the arrays earlier tests left)
    gw, lanes = _i(*[0] * 32), np.arange(32, dtype=np.int64)
    offs = (np.arange(32) * 4).astype(np.uint64)
    banks = _i(*[0] * 32)
    t1 = RaceTracker(1, 1 << 20, np.zeros(1 << 20, np.uint8))
    t1.intra_store(banks, offs, 4, gw, lanes, 1, np.ones((32, 4), np.uint8), aligned=True)
    old = t1.w_tag.w
    first = t1.iv.copy()
    t1.recycle()
    t2 = RaceTracker(1, 1 << 20, np.zeros(1 << 20, np.uint8))
    t2.intra_store(banks[:1], np.array([512], np.uint64), 4, gw[:1], lanes[:1], 1, np.ones((1, 4), np.uint8),
                   aligned=True)
    assert t2.w_tag.w is old and old[:32].any()                 # batch 1's tags, unfilled
    assert int(t2.iv.min()) > int(first.max())
    t2.intra_load(banks, ((np.arange(32) + 1) % 32 * 4).astype(np.uint64), 4, gw, lanes, 1, aligned=True)
    with pytest.raises(RaceFault, match="that lane 0 of the same warp stored"):     # batch 2's own store
        t2.intra_load(banks[:1], np.array([512], np.uint64), 4, gw[:1], lanes[1:2], 1, aligned=True)
    t2.recycle()
    # an array with a word kept byte by byte (MIXED) is refilled before another batch uses it
    t3 = RaceTracker(1, 1 << 20, np.zeros(1 << 20, np.uint8))
    t3.intra_store(banks[:1], np.array([1], np.uint64), 1, gw[:1], lanes[:1], 1, np.ones((1, 1), np.uint8))
    assert t3.w_tag.mixed
    mixed = t3.w_tag.w
    t3.recycle()
    assert all(a is not mixed for a, _ in LT._free)


def test_lane_tag_arrays_kept_for_the_next_batch_are_bounded(monkeypatch):
    # two batches running at once (a sharded call's devices) end: their word arrays wait for
    # the next batches only while they fit the byte bound (the rest go back to ``shadow``)
    from jax_pyptx.interpret.sanitizer import lane_tags as LT

    def ended_together(n):
        ts = [RaceTracker(1, 1 << 21, np.zeros(1 << 21, np.uint8)) for _ in range(n)]
        for t in ts:
            t.intra_store(_i(0), np.array([0], np.uint64), 4, _i(0), _i(0), 1, np.ones((1, 4), np.uint8),
                          aligned=True)
        for t in ts:
            t.recycle()
        return [a.nbytes for a, _ in LT._free]

    monkeypatch.setattr(LT, "_free", [])
    assert ended_together(2) == [2 << 20, 2 << 20]
    monkeypatch.setattr(LT, "_free", [])
    monkeypatch.setattr(LT, "_KEEP_BYTES", 3 << 20)            # room for one array of 2 MiB
    assert ended_together(2) == [2 << 20]
