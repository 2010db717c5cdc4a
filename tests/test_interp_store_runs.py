"""Runs of shared stores (``scheduler.store_runs``, ``ops.store_runs``): sanitized, the stores
of a run are written as one access where nothing can be reported, and give the memory and the
diagnostics of running them one by one (``Context.fuse = False``) everywhere else."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import AsyncProxyError, OutOfBoundsError, RaceError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.launch import get_module, get_program
from jax_pyptx.interpret.scheduler import segments, store_runs
from jax_pyptx.interpret.scheduler.context import Context

from .test_interp_segments import answers

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _kernel(body, regs=16):
    """A kernel of 64 threads a CTA (two warps) with a 1 KiB shared buffer ``buf``: ``%r1`` is
    %tid.x, ``%r3`` buf's address, ``%rd1`` the output's."""
    return HDR + f"""
.visible .entry k(.param .u64 y)
{{
  .reg .u32 %r<{regs}>;
  .reg .u64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 16 .b8 buf[1024];
  ld.param.u64 %rd1, [y];
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, buf;
{body}
  ret;
}}
"""


# every thread stores three words, an address computed between the stores; after the barrier
# each thread reads back its neighbour's words and writes their sum
_GOOD = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  add.u32 %r5, %r4, 256;
  mul.lo.u32 %r6, %r1, 3;
  st.shared.u32 [%r5], %r6;
  add.u32 %r7, %r4, 512;
  add.u32 %r8, %r1, 1000;
  st.shared.u32 [%r7], %r8;
  bar.sync 0;
  add.u32 %r9, %r1, 1;
  and.b32 %r9, %r9, 63;
  shl.b32 %r9, %r9, 2;
  add.u32 %r9, %r3, %r9;
  ld.shared.u32 %r10, [%r9];
  ld.shared.u32 %r11, [%r9+256];
  ld.shared.u32 %r12, [%r9+512];
  add.u32 %r10, %r10, %r11;
  add.u32 %r10, %r10, %r12;
  mov.u32 %r13, %ctaid.x;
  shl.b32 %r13, %r13, 6;
  add.u32 %r13, %r13, %r1;
  mul.wide.u32 %rd2, %r13, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r10;
"""


@pytest.fixture
def commits(monkeypatch):
    """The answers of ``ops.store_runs.commit``: [written at once, left to one by one]."""
    return answers(monkeypatch, store_runs, "commit")


def _both(monkeypatch, body, grid=2, sanitize=True, block=64):
    """The output (or the error's type and message) with runs on, then one by one."""
    out = []
    for fuse in (True, False):
        monkeypatch.setattr(Context, "fuse", fuse)
        y = np.zeros(64 * grid, np.uint32)
        try:
            launch(_kernel(body), "k", [y], grid=grid, block=block, sanitize=sanitize)
            out.append(y)
        except Exception as e:          # (compared below)
            out.append((type(e), str(e)))
    return out


def test_the_run_is_planned_from_its_first_store_to_its_last():
    prog = get_program(get_module(_kernel(_GOOD)), "k")
    runs = [(d.pc, d.srun.span, d.srun.stores) for d in prog.code if d.srun is not None]
    first = next(d.pc for d in prog.code if d.ins.opcode == "st")
    assert runs == [(first, 7, 3)]            # 3 stores and the 4 additions between them
    seg = prog.code[first].srun.seg           # the additions as one segment, run before the stores
    assert sorted(k.split("::")[-1] for k, _ in seg.finals) == ["%r5", "%r6", "%r7", "%r8"]


# the second store's value register is overwritten after the first store read it
_REUSED = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  add.u32 %r1, %r1, 5;
  add.u32 %r5, %r4, 256;
  st.shared.u32 [%r5], %r1;
  bar.sync 0;
  ld.shared.u32 %r10, [%r4];
  ld.shared.u32 %r11, [%r4+256];
  shl.b32 %r10, %r10, 8;
  add.u32 %r10, %r10, %r11;
  mov.u32 %r13, %ctaid.x;
  shl.b32 %r13, %r13, 8;
  add.u32 %r13, %r13, %r2;
  mul.wide.u32 %rd2, %r13, 1;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r10;
"""


def test_arithmetic_overwriting_what_a_store_read_is_not_run_first(monkeypatch, commits):
    # the run's arithmetic cannot go first (the first store must read %r1 before the add): it
    # runs between the stores, in order, and the run is still written at once
    prog = get_program(get_module(_kernel(_REUSED)), "k")
    (srun,) = [d.srun for d in prog.code if d.srun is not None]
    assert srun.stores == 2 and srun.seg is None
    fused, single = _both(monkeypatch, _REUSED)
    t = np.tile(np.arange(64), 2)
    np.testing.assert_array_equal(fused, (t << 8) + t + 5)
    np.testing.assert_array_equal(single, fused)
    assert commits == [1, 0]


def test_a_run_is_written_at_once_and_gives_the_values_of_one_by_one(monkeypatch, commits):
    hoisted = []
    real = segments.run

    def seg_run(ctx, seg, g, **kw):
        ok = real(ctx, seg, g, **kw)
        if any(d.srun is not None and d.srun.seg is seg for d in ctx.code):
            hoisted.append(ok)
        return ok
    monkeypatch.setattr(segments, "run", seg_run)
    fused, single = _both(monkeypatch, _GOOD)
    assert hoisted == [True]                  # the run's arithmetic ran first, at once
    t = np.arange(64)
    nxt = (t + 1) % 64
    want = np.tile(nxt + 3 * nxt + nxt + 1000, 2).astype(np.uint32)
    np.testing.assert_array_equal(fused, want)
    np.testing.assert_array_equal(single, want)
    assert commits == [1, 0]                  # one group (both CTAs) ran the run once, at once


def test_unsanitized_runs_are_not_used(monkeypatch, commits):
    fused, _ = _both(monkeypatch, _GOOD, sanitize=False)
    assert fused[0] == 1 + 3 + 1001 and commits == [0, 0]


_TWO_WARPS = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  add.u32 %r5, %r1, 32;
  and.b32 %r5, %r5, 63;
  shl.b32 %r5, %r5, 2;
  add.u32 %r5, %r3, %r5;
  add.u32 %r6, %r1, 100;
  st.shared.u32 [%r5], %r6;
"""

_TWO_LANES = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  xor.b32 %r5, %r1, 1;
  shl.b32 %r5, %r5, 2;
  add.u32 %r5, %r3, %r5;
  add.u32 %r6, %r1, 100;
  st.shared.u32 [%r5], %r6;
"""


# CTA 0 stores its second words apart, CTA 1 as _TWO_LANES: the CTAs' offsets differ
_TWO_LANES_IN_CTA_1 = """
  mov.u32 %r7, %ctaid.x;
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  setp.eq.u32 %p1, %r7, 1;
  xor.b32 %r5, %r1, 1;
  add.u32 %r8, %r1, 64;
  selp.u32 %r5, %r5, %r8, %p1;
  shl.b32 %r5, %r5, 2;
  add.u32 %r5, %r3, %r5;
  add.u32 %r6, %r1, 100;
  st.shared.u32 [%r5], %r6;
"""


@pytest.mark.parametrize("body, grid, words", [
    (_TWO_WARPS, 1, "that warp 1 of this CTA also stored since the last barrier"),
    (_TWO_LANES, 1, "that lane 1 of the same warp also stored since the warp last synchronized"),
    (_TWO_LANES_IN_CTA_1, 2, "that lane 1 of the same warp also stored since the warp last synchronized")])
def test_a_byte_stored_twice_in_a_run_is_reported_as_one_by_one(monkeypatch, commits, body, grid, words):
    # warp 0's second store meets warp 1's first (a race between warps), or lane 0's second
    # store lane 1's first (a race between lanes of one warp), in the one CTA or only in the
    # second: the run's rows are not disjoint, so its stores are written one by one and the
    # second reports
    fused, single = _both(monkeypatch, body, grid=grid)
    assert fused == single
    cls, msg = fused
    assert cls is RaceError and words in msg and "st.shared.u32 [%r5], %r6" in msg
    assert f"CTA ({grid - 1},0,0)" in msg and commits == [0, 1]


def test_a_lane_storing_a_word_again_in_a_run_leaves_the_last_value(monkeypatch, commits):
    body = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  add.u32 %r6, %r1, 7;
  st.shared.u32 [%r4], %r6;
  bar.sync 0;
  ld.shared.u32 %r10, [%r4];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r10;
"""
    fused, single = _both(monkeypatch, body, grid=1)
    np.testing.assert_array_equal(fused, np.arange(64) + 7)
    np.testing.assert_array_equal(single, fused)
    assert commits == [0, 1]


# warp 1 stores words 0-31 and synchronizes its lanes once, warp 0 stores elsewhere and
# synchronizes three times (both warps' intervals are then later than warp 1's store: the lanes'
# tags have nothing to compare); with no barrier, the run's second store overwrites warp 1's words
_EARLIER_WARP = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  setp.ge.u32 %p1, %r1, 32;
  @!%p1 bra W0;
  sub.u32 %r7, %r4, 128;
  st.shared.u32 [%r7], %r1;
  bar.warp.sync -1;
  bra JOIN;
W0:
  st.shared.u32 [%r4+768], %r1;
  bar.warp.sync -1;
  bar.warp.sync -1;
  bar.warp.sync -1;
JOIN:
  add.u32 %r5, %r4, 512;
  st.shared.u32 [%r5], %r1;
  add.u32 %r6, %r1, 9;
  st.shared.u32 [%r4], %r6;
"""

# one warp: each lane stores the word of its neighbour (lane 1 word 0, ...), then a special
# register ends that run of one store; the run's second store overwrites those words in the
# same interval (the race tracker, which sees one warp, has nothing to compare)
_EARLIER_LANE = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  xor.b32 %r8, %r1, 1;
  shl.b32 %r8, %r8, 2;
  add.u32 %r7, %r3, %r8;
  st.shared.u32 [%r7], %r1;
  mov.u32 %r9, %laneid;
  add.u32 %r5, %r4, 512;
  st.shared.u32 [%r5], %r1;
  add.u32 %r6, %r1, 9;
  st.shared.u32 [%r4], %r6;
"""


@pytest.mark.parametrize("body, block, words, runs", [
    (_EARLIER_WARP, 64, "that warp 1 of this CTA also stored since the last barrier", [1, 1]),
    (_EARLIER_LANE, 32, "that lane 1 of the same warp also stored since the warp last synchronized", [0, 1])])
def test_a_store_racing_an_earlier_one_outside_the_run_names_its_instruction(monkeypatch, commits, body,
                                                                             block, words, runs):
    # the run's rows are disjoint, but one check must look byte by byte (the race tracker's for
    # warps, the lanes' tags for lanes): the run is written one by one and its second store
    # reports. (Warp 1 reaches the run first and runs it alone, at once: nothing to report yet.)
    fused, single = _both(monkeypatch, body, grid=1, block=block)
    assert fused == single
    cls, msg = fused
    assert cls is RaceError and "st.shared.u32 [%r4], %r6" in msg and words in msg
    assert commits == runs


def test_a_store_of_a_run_over_bytes_a_copy_still_writes_is_reported_as_one_by_one(monkeypatch, commits):
    # each thread's word is the destination of its cp.async, not waited for: the run's second
    # store must report it (the async proxy's check looks byte by byte: written one by one)
    body = """
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  cvt.u64.u32 %rd2, %r2;
  add.u64 %rd3, %rd1, %rd2;
  cp.async.ca.shared.global [%r4], [%rd3], 4;
  cp.async.commit_group;
  add.u32 %r5, %r4, 512;
  st.shared.u32 [%r5], %r1;
  add.u32 %r6, %r1, 9;
  st.shared.u32 [%r4], %r6;
  cp.async.wait_all;
"""
    fused, single = _both(monkeypatch, body, grid=1, block=32)
    assert fused == single
    cls, msg = fused
    assert cls is AsyncProxyError and "the store writes shared address 0x0" in msg
    assert "st.shared.u32 [%r4], %r6" in msg and commits == [0, 1]


def test_an_error_after_a_store_of_the_run_comes_after_that_stores_own(monkeypatch, commits):
    # lane 5's first store is out of bounds; the second store's value register was never
    # written. One by one, the first store reports; in a run, its operands were read and the
    # second store's read fails first: the first store is then written, and reports
    body = """
  shl.b32 %r2, %r1, 2;
  setp.eq.u32 %p1, %r1, 5;
  selp.u32 %r5, 4096, 0, %p1;
  add.u32 %r4, %r3, %r2;
  add.u32 %r6, %r4, %r5;
  st.shared.u32 [%r6], %r1;
  add.u32 %r7, %r4, 256;
  st.shared.u32 [%r7], %r15;
"""
    fused, single = _both(monkeypatch, body, grid=1)
    assert fused == single
    cls, msg = fused
    assert cls is OutOfBoundsError and "st.shared.u32 [%r6], %r1" in msg and "thread (5,0,0)" in msg
    assert commits == [0, 0]


def test_a_run_storing_at_the_same_offsets_again_keeps_its_layout(monkeypatch, commits):
    # the rows' bounds, alignment and disjointness depend only on the offsets: the run keeps
    # them, and the next launch (same offsets, same shared size) takes them without the checks
    from jax_pyptx.interpret.ops import store_runs as ops_runs
    checked = answers(monkeypatch, ops_runs, "_disjoint")
    module = get_module(_kernel(_GOOD))
    (srun,) = [d.srun for d in get_program(module, "k").code if d.srun is not None]
    srun.memo.clear()
    outs = []
    for _ in range(2):
        y = np.zeros(128, np.uint32)
        launch(module, "k", [y], grid=2, block=64)
        outs.append(y)
    nxt = (np.arange(64) + 1) % 64
    np.testing.assert_array_equal(outs[0], np.tile(nxt + 3 * nxt + nxt + 1000, 2))
    np.testing.assert_array_equal(outs[1], outs[0])
    assert commits == [2, 0] and checked == [1, 0]
    banks, geo, offs, (span, starts, aligned) = srun.memo["layout"]
    assert geo[0] == 1024 and aligned and not starts.flags.writeable and not offs.flags.writeable


# the run twice: apart in the first pass; in the second, each lane's second word is the first
# word of its neighbour (lanes 2k and 2k + 1 swap)
_APART_THEN_TOGETHER = """
  mov.u32 %r12, 0;
AGAIN:
  shl.b32 %r2, %r1, 2;
  add.u32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  xor.b32 %r5, %r1, %r12;
  shl.b32 %r7, %r12, 6;
  sub.u32 %r5, %r5, %r7;
  add.u32 %r5, %r5, 64;
  shl.b32 %r5, %r5, 2;
  add.u32 %r5, %r3, %r5;
  add.u32 %r6, %r1, 100;
  st.shared.u32 [%r5], %r6;
  bar.sync 0;
  add.u32 %r12, %r12, 1;
  setp.lt.u32 %p1, %r12, 2;
  @%p1 bra AGAIN;
"""


def test_a_run_storing_at_other_offsets_is_checked_again(monkeypatch, commits):
    # the first pass is written at once and its layout kept; the second stores elsewhere (over
    # another lane's word), so the kept layout does not apply: one by one, and the race reports
    fused, single = _both(monkeypatch, _APART_THEN_TOGETHER, grid=1)
    assert fused == single
    cls, msg = fused
    assert cls is RaceError and "st.shared.u32 [%r5], %r6" in msg
    assert "that lane 1 of the same warp also stored since the warp last synchronized" in msg
    assert commits == [1, 1]
