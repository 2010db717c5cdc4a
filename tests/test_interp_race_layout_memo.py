"""Issue 24, the race tracker's per-layout shortcuts: a store layout found to hold no byte of two
warps is remembered (``RaceTracker._apart``: the same CTAs and warps row by row, every offset
moved by one amount, as a copy's or an epilogue's layout repeats every loop iteration), the
deferred chunk stamps' chunks are kept as a bitmask, and a ``cp.async`` lands with the span
checked at issue. The verdicts and messages are those of the per-byte reference."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import RaceError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.sanitizer import smem_races as S
from jax_pyptx.interpret.sanitizer.smem_races import RaceFault, RaceTracker

from . import test_interp_race_bookkeeping as RB
from .race_reference import RefTracker


def _u(*xs):
    return np.array(xs, np.uint64)


def _i(*xs):
    return np.array(xs, np.int64)


def _counting(monkeypatch):
    calls = []
    orig = S.RaceTracker._same_instruction
    monkeypatch.setattr(S.RaceTracker, "_same_instruction",
                        lambda self, *a: (calls.append(1), orig(self, *a))[1])
    return calls


def test_a_clean_layout_is_remembered_and_its_moved_copies_skip_the_check(monkeypatch):
    calls = _counting(monkeypatch)
    t = RaceTracker(2, 512, np.zeros(1024, np.uint8))
    banks, warps = _i(0, 0, 1, 1, 0, 1), _i(0, 1, 0, 1, 2, 3)
    offs = _u(0, 16, 0, 16, 32, 48)
    t.on_store(banks, offs, 16, warps)                      # deferred stamps: checked row by row
    assert len(calls) == 1 and len(t._memo) == 1
    for shift in (64, 128, 256):                            # the next stages: remembered
        t.on_store(banks, offs + np.uint64(shift), 16, warps)
    assert len(calls) == 1
    t.on_store(banks, offs + np.uint64(320), 8, warps)      # another row size: checked
    assert len(calls) == 2


@pytest.mark.parametrize("what", ["banks", "warps", "offsets"])
def test_a_remembered_layout_never_hides_a_same_instruction_race(what, monkeypatch):
    # the remembered layout's rows meet only within one CTA and one warp; the second store
    # differs from it in one respect only, and that makes two warps store one byte
    banks, warps, offs = {"banks": (_i(0, 1, 0, 0), _i(1, 2, 2, 3), _u(0, 0, 32, 64)),
                          "warps": (_i(0, 0, 0, 0), _i(1, 1, 2, 3), _u(0, 0, 32, 64)),
                          "offsets": (_i(0, 0, 0, 0), _i(1, 2, 2, 3), _u(0, 16, 32, 64))}[what]
    bad = {"banks": (_i(0, 0, 0, 0), warps, offs),
           "warps": (banks, _i(1, 2, 2, 3), offs),
           "offsets": (banks, warps, _u(0, 0, 32, 64))}[what]
    vals = np.arange(64, dtype=np.uint8).reshape(4, 16)
    data = np.zeros(1024, np.uint8)
    got = []
    for cls in (RaceTracker, RefTracker):
        t = cls(2, 512, data)
        t.on_store(banks, offs + np.uint64(128), 16, warps, vals)
        got.append(RB._outcome(t.on_store, bad[0], bad[2] + np.uint64(256), 16, bad[1], vals))
    assert got[0] == got[1] and got[0] is not None
    assert "also stored in this same instruction, a different value" in got[0][4]


def test_same_value_layouts_warn_each_time_and_are_not_remembered():
    data = np.zeros(1024, np.uint8)
    banks, warps, offs = _i(0, 0), _i(0, 1), _u(16, 16)   # two warps, one row, the same bytes
    logs = []
    for cls in (RaceTracker, RefTracker):
        t = cls(2, 512, data)
        log = []
        t.warn = lambda f, w, b, log=log: log.append((f.lane, f.address, f.detail, w, b))
        for shift in (0, 64, 128):
            t.on_store(banks, offs + np.uint64(shift), 16, warps, np.zeros((2, 16), np.uint8))
        logs.append(log)
        if cls is RaceTracker:
            assert not t._memo
    assert logs[0] == logs[1] and len(logs[0]) == 3
    assert "also stored in this same instruction" in logs[0][0][2]


def _layouts(rng, nb, stride):
    """A few store layouts (CTAs, offsets relative to a base, warps, row size)."""
    out = []
    for _ in range(4):
        n = int(rng.integers(2, 9))
        nbytes = int(rng.choice([4, 8, 16]))
        offs = rng.integers(0, 8, n) * nbytes
        out.append((rng.integers(0, nb, n).astype(np.int64), offs, rng.integers(0, RB.W, n).astype(np.int64),
                    nbytes))
    return out


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("whole_batch", [True, False])
def test_random_repeated_layouts_agree_with_per_byte_reference(seed, whole_batch):
    # layouts repeating at moved offsets (remembered ones among them), loads of them and
    # barriers: every outcome and warning as the reference's
    rng = np.random.default_rng(900 + seed)
    nb, stride = 2, 256
    data, new, ref, logs = RB._pair(nb, stride)
    lays = _layouts(rng, nb, stride)
    for _ in range(300):
        r = rng.random()
        if r < .08:
            new.advance_all()
            ref.advance_all()
            continue
        if r < .14 and not whole_batch:
            b = [int(rng.integers(nb))]
            new.advance(b)
            ref.advance(b)
            continue
        banks, rel, warps, nbytes = lays[int(rng.integers(len(lays)))]
        base = int(rng.integers(0, (stride - 8 * nbytes) // nbytes + 1)) * nbytes
        offs = (rel + base).astype(np.uint64)
        if rng.random() < .3:
            got = (RB._outcome(new.on_load, banks, offs, nbytes, warps),
                   RB._outcome(ref.on_load, banks, offs, nbytes, warps))
        else:
            vals = rng.integers(0, 2, (len(offs), nbytes)).astype(np.uint8)
            got = (RB._outcome(new.on_store, banks, offs, nbytes, warps, vals),
                   RB._outcome(ref.on_store, banks, offs, nbytes, warps, vals))
            if got[0] is None:
                data[(banks * stride + offs.astype(np.int64))[:, None] + np.arange(nbytes)] = vals
        assert got[0] == got[1]
        assert logs[0] == logs[1]


def test_deferred_chunk_bits_follow_the_stamps_they_cover():
    t = RaceTracker(2, 512)
    t.on_load(_i(0), _u(32), 16, _i(1))                     # chunk 2 of a CTA
    t.on_load(_i(1), _u(480), 32, _i(1))                    # chunks 30, 31
    assert t._cover["r"] == (1 << 2) | (3 << 30)
    t.on_store(_i(0), _u(48), 16, _i(0))                    # chunk 3: nothing deferred there
    assert len(t._lazy["r"]) == 2
    with pytest.raises(RaceFault) as e:
        t.on_store(_i(1), _u(496), 4, _i(0))                # chunk 31 of CTA 1: warp 1 read it
    assert (e.value.lane, e.value.address) == (0, 496)
    assert not t._lazy["r"] and not t._cover["r"]           # applied


CP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .reg .pred %p1;
  .shared .align 16 .b8 buf[4096];
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  cvt.u64.u32 %rd3, %r2;
  add.u64 %rd4, %rd1, %rd3;
  DST
  mov.u32 %r8, 0;
  mov.u32 %r9, buf;
LOOP:
  shl.b32 %r10, %r8, 10;
  add.u32 %r10, %r10, %r9;
  add.u32 %r10, %r10, %r3;
  cp.async.ca.shared.global [%r10], [%rd4], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  bar.sync 0;
  add.u32 %r8, %r8, 1;
  setp.lt.u32 %p1, %r8, 4;
  @%p1 bra LOOP;
  ld.shared.u32 %r11, [%r10];
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r11;
  ret;
}
"""


def test_cp_async_stages_land_clean_and_a_shared_destination_is_reported():
    src = np.arange(64 * 4, dtype=np.uint32)
    out = np.zeros(64 * 4, np.uint32)
    # every thread its own 16 bytes, the same layout in four stages
    launch(CP.replace("DST", "mov.u32 %r3, %r2;"), "k", [src, out], block=64)
    assert out[::4].tolist() == src[::4].tolist()
    # lanes of warps 0 and 1 copying into the same 16 bytes (other values): the first stage lands
    with pytest.raises(RaceError) as ei:
        launch(CP.replace("DST", "and.b32 %r3, %r2, 511;"), "k", [src, out], block=64)
    assert ("it stores to shared address 0x0 ('buf' (+0)) that warp 1 of this CTA also stored in this "
            "same instruction, a different value") in str(ei.value)
    assert "cp.async.wait_group 0;" in str(ei.value)
