"""The sanitizer's shared-memory fast paths of issue 24's second round report what the full
checks report: rows the caller knows are aligned (``aligned=``, as ``ld`` / ``st`` pass it),
a warp storing again into chunks it stored in the same epoch, lanes whose earlier stores are
all of older intervals, one CTA's barrier bookkept on Python ints, the per-byte arrays made on
first use, a tensor-core operand's spans remembered per call, and ``tcgen05.ld`` cells of whole
warps made by one broadcast."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import RaceError, UninitializedReadError
from jax_pyptx.interpret.ops import smem_matrix as SM
from jax_pyptx.interpret.sanitizer.smem_races import RaceFault, RaceTracker

from . import test_interp_race_bookkeeping as RB
from .race_reference import RefTracker


def _u(*xs):
    return np.array(xs, np.uint64)


def _i(*xs):
    return np.array(xs, np.int64)


class _Hinted(RaceTracker):
    """The tracker as ``ops.load_store`` drives it: the flat starts and whether every row is
    aligned to its power-of-two size given by the caller."""

    def _hints(self, banks, offs, nbytes):
        starts = banks.astype(np.int64) * self.stride + offs.astype(np.int64)
        aligned = nbytes & (nbytes - 1) == 0 and not (offs.astype(np.int64) % nbytes).any()
        return starts, bool(aligned)

    def on_load(self, banks, offs, nbytes, warps, idx=None, span=None, starts=None, aligned=False):
        s, a = self._hints(banks, offs, nbytes)
        return super().on_load(banks, offs, nbytes, warps, idx, span, s, a)

    def on_store(self, banks, offs, nbytes, warps, vals=None, idx=None, span=None, starts=None, aligned=False):
        s, a = self._hints(banks, offs, nbytes)
        return super().on_store(banks, offs, nbytes, warps, vals, idx, span, s, a)

    def intra_load(self, banks, offs, nbytes, gwarps, lanes, nwarps, idx=None, starts=None, aligned=False):
        s, a = self._hints(banks, offs, nbytes)
        return super().intra_load(banks, offs, nbytes, gwarps, lanes, nwarps, idx, s, a)

    def intra_store(self, banks, offs, nbytes, gwarps, lanes, nwarps, vals=None, idx=None, starts=None,
                    aligned=False):
        s, a = self._hints(banks, offs, nbytes)
        return super().intra_store(banks, offs, nbytes, gwarps, lanes, nwarps, vals, idx, s, a)


@pytest.mark.parametrize("seed", range(16))
def test_random_programs_with_caller_hints_agree_with_per_byte_reference(seed, monkeypatch):
    # the random programs of test_interp_race_bookkeeping (per-CTA and whole-batch barriers),
    # the tracker given the starts and alignment as ld / st give them
    monkeypatch.setattr(RB, "RaceTracker", _Hinted)
    RB._program(300 + seed)
    RB._program(400 + seed, steps=400, mix=RB._MIX_WHOLE_BATCH)


def test_a_warp_storing_again_skips_its_chunks_and_still_finds_another_warp():
    for cls in (RaceTracker, RefTracker):
        t = cls(1, 256, np.zeros(256, np.uint8))
        rows = _u(*range(0, 128, 16))
        for _ in range(3):                                  # warp 2 again and again: its own stamps
            t.on_store(_i(*[0] * 8), rows, 16, _i(*[2] * 8), np.ones((8, 16), np.uint8))
        with pytest.raises(RaceFault) as e:                 # a row of warp 1 among warp 2's rows
            t.on_store(_i(0, 0, 0), _u(0, 32, 64), 16, _i(2, 1, 2), np.full((3, 16), 7, np.uint8))
        got = (e.value.lane, e.value.address, e.value.detail)
        if cls is RaceTracker:
            new = got
    assert new == got == (1, 32, "it stores to shared address 0x20{where} that warp 2 of this CTA also "
                                 "stored since the last barrier, a different value, with no barrier between "
                                 "them: which one the byte keeps "
                                 "is undefined (a bar.sync (__syncthreads) is missing between the two "
                                 "stores, or let one warp write it)")


def test_a_warp_storing_again_meets_two_warps_in_one_chunk_of_one_instruction():
    # warp 0 stored chunk 0 in this epoch; one instruction stores its first half again from
    # warp 0 and its second half from warp 1: the stamps differ there, so the chunk is checked
    got = []
    for cls in (RaceTracker, RefTracker):
        t = cls(1, 64, np.zeros(64, np.uint8))
        t.on_store(_i(0), _u(0), 16, _i(0), np.zeros((1, 16), np.uint8))
        with pytest.raises(RaceFault) as e:
            kw = {"aligned": True} if cls is RaceTracker else {}
            t.on_store(_i(0, 0), _u(0, 8), 8, _i(0, 1), np.ones((2, 8), np.uint8), **kw)
        got.append((e.value.lane, e.value.address, e.value.detail))
    assert got[0] == got[1] and got[0][:2] == (1, 8)
    assert "that warp 0 of this CTA also stored since the last barrier" in got[0][2]


def test_lanes_storing_after_a_warp_sync_and_then_racing_in_one_interval():
    t = RaceTracker(1, 1024, np.zeros(1024, np.uint8))
    gw, nw = _i(*[0] * 32), 1
    lanes = _i(*range(32))
    for k in range(4):                       # each interval: fresh words, earlier tags all older
        t.intra_store(_i(*[0] * 32), _u(*(lanes * 16 + 512 * (k % 2))), 16, gw, lanes, nw,
                      np.zeros((32, 16), np.uint8), aligned=True)
        t.warp_synced(_i(0))
    t.intra_store(_i(0), _u(0), 16, gw[:1], _i(3), nw, np.zeros((1, 16), np.uint8), aligned=True)
    with pytest.raises(RaceFault) as e:      # lane 4 stores lane 3's word in the same interval
        t.intra_store(_i(0), _u(4), 4, gw[:1], _i(4), nw, np.ones((1, 4), np.uint8), aligned=True)
    assert (e.value.lane, e.value.address) == (0, 4)
    assert "that lane 3 of the same warp also stored since the warp last synchronized, a different " \
           "value" in e.value.detail


@pytest.mark.parametrize("seed", range(4))
def test_one_cta_advances_keep_the_shared_epoch(seed):
    rng = np.random.default_rng(seed)
    t = RaceTracker(3, 64)
    for _ in range(200):
        r = rng.random()
        if r < .6:
            t.advance([int(rng.integers(3))])
        elif r < .8:
            t.advance(sorted(set(rng.integers(0, 3, 2).tolist())))
        else:
            t.advance_all()
        e = t.epoch
        assert t._one == (int(e[0]) if (e == e[0]).all() else None)
        assert t._emax == int(e.max())


def test_per_byte_arrays_made_only_when_a_chunk_shows_a_possible_race():
    t = RaceTracker(2, 1 << 16)
    t.on_store(_i(0, 1), _u(0, 0), 16, _i(0, 0))
    t.on_load(_i(0, 1), _u(0, 0), 16, _i(0, 0))
    assert t._wwarp is None and t._wepoch is None and t._rmask is None and t._repoch is None
    with pytest.raises(RaceFault, match="that warp 0 of this CTA stored"):
        t.on_load(_i(1), _u(0), 16, _i(3))
    assert t._wwarp is not None and t.wwarp.shape == (2 << 16,)


def _ctx(size=8192, nctas=2):
    from jax_pyptx.interpret.state.memory import BankedSpace

    class Ctx:
        sanitize = True
        async_proxy = None

        def error(self, cls, msg, *a):
            return cls(msg)

    ctx = Ctx()
    ctx.shared = BankedSpace("shared", nctas, size, True)
    ctx.shared.init[:] = 1
    return ctx


def test_operand_spans_of_a_k_loop_found_written_once_and_unwritten_bytes_still_reported():
    ctx = _ctx()
    sh = ctx.shared
    sh.init[1 * sh.stride + 2048 + 100] = 0      # CTA 1, in the second 2 KiB buffer only
    ctas = np.array([0, 1])
    for step in range(4):                        # k steps inside the first buffer: one key
        lo = np.array([32 * step, 32 * step])
        assert SM._spans_written(sh, ctas, lo, lo + 1000)
    keys = len(sh.written)
    assert SM._spans_written(sh, ctas, np.array([64, 64]), np.array([1000, 1000]))
    assert len(sh.written) == keys               # a k step inside known periods: nothing new
    assert not SM._spans_written(sh, ctas, np.array([2048, 2048]), np.array([3072, 3072]))
    assert SM._spans_written(sh, ctas, np.array([2048, 2048]), np.array([2148, 2148]))   # before it
    descs = [SM.Desc(2048, 16, 1024, 0, "none"), SM.Desc(2048, 16, 1024, 0, "none")]
    with pytest.raises(UninitializedReadError, match="reads shared address 0x864 that no thread or copy"):
        SM.gather(ctx, [0, 1], descs, "K", 8, 64, 16, "B")


def test_kernel_st_shared_v4_race_between_warps_reported_through_the_fast_paths():
    # every warp stores its 16-byte rows twice (the second time into chunks it stamped itself);
    # then warp 1 overwrites warp 0's rows without a barrier
    from jax_pyptx.interpret import launch
    ptx = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y)
{
  .reg .u32 %r<12>;
  .reg .pred %p<2>;
  .shared .align 16 .b8 buf[2048];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  mov.u32 %r3, buf;
  add.u32 %r4, %r3, %r2;
  st.shared.v4.u32 [%r4], {%r1, %r1, %r1, %r1};
  st.shared.v4.u32 [%r4], {%r1, %r1, %r1, %r1};
  setp.ge.u32 %p1, %r1, 32;
  @!%p1 bra DONE;
  sub.u32 %r5, %r4, 512;
  add.u32 %r6, %r1, 1;
  st.shared.v4.u32 [%r5], {%r6, %r6, %r6, %r6};
DONE:
  ret;
}
"""
    y = np.zeros(4, np.uint32)
    with pytest.raises(RaceError, match=r"stores to shared address 0x0 \('buf' \(\+0\)\) that warp 0 of this CTA "
                                        r"also stored since the last barrier, a different value"):
        launch(ptx, "k", [y], grid=1, block=64)
