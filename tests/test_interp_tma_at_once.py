"""A tiled TMA load whose threads each copy one in-bound box into their own CTA (a producer's
elected thread per CTA), or multicast it into the CTAs of their cluster mask (each CTA's share
of a tile the cluster uses), is delivered at once (``ops.tma._tiles_at_once``): the same shared
memory, values and reports as box by box, and box by box wherever one of its conditions does
not hold (issue 24)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import AsyncProxyError, InterpreterError, MisalignedAccessError, UninitializedReadError
from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.interpret.ops import tma

from .test_interp_segments import answers
from .test_interp_tma import HDR, ptxas_ok

# Thread 0 of every CTA loads rows [32 c, 32 c + 32) of a 64-column u16 tensor (4 KB, 128-byte
# swizzle) into ``buf``; every thread then writes word %tid.x of ``buf`` as the CTA laid it out.
# ``mode``: 1, CTA 1's copy names an mbarrier never initialized (``bar2``); 2, every CTA's box goes to buf + 64; 3, CTA
# 1's box starts 16 rows lower (past the tensor's end with two CTAs); 4, CTA 1's box goes 4 KB
# further into ``buf``; 5, 128 bytes further (the swizzle's rows start one chunk row later).
LOAD = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128], .param .u64 out, .param .u32 mode)
{
    .reg .u32 %r<20>; .reg .u64 %rd<6>; .reg .pred %p<8>; .reg .b64 %st;
    .shared .align 1024 .b8 buf[12288];
    .shared .align 8 .b64 bar;
    .shared .align 8 .b64 bar2;
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r9, [mode];
    mov.u32 %r1, %tid.x;
    mov.u32 %r8, %ctaid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p4, %r8, 1;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    mov.u32 %r12, %r2;
    setp.eq.u32 %p5, %r9, 1;
    and.pred %p5, %p5, %p4;
    @%p5 mov.u32 %r12, bar2;
    bar.sync 0;
    shl.b32 %r4, %r8, 5;
    setp.eq.u32 %p6, %r9, 3;
    and.pred %p6, %p6, %p4;
    @%p6 add.u32 %r4, %r4, 16;
    mov.u32 %r11, %r3;
    setp.eq.u32 %p6, %r9, 2;
    @%p6 add.u32 %r11, %r11, 64;
    setp.eq.u32 %p6, %r9, 4;
    and.pred %p6, %p6, %p4;
    @%p6 add.u32 %r11, %r11, 4096;
    setp.eq.u32 %p6, %r9, 5;
    and.pred %p6, %p6, %p4;
    @%p6 add.u32 %r11, %r11, 128;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 4096;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r11], [%rd1, {0, %r4}], [%r12];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    shl.b32 %r5, %r1, 2;
    add.u32 %r6, %r11, %r5;
    ld.shared.u32 %r7, [%r6];
    mad.lo.u32 %r10, %r8, 1024, %r1;
    mul.wide.u32 %rd3, %r10, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r7;
    ret;
}
"""


def _run(mode, grid=2, **kw):
    """The output (or the error's type and message) of LOAD over a (32 grid, 64) u16 tensor."""
    x = (np.arange(32 * grid * 64, dtype=np.uint32) * 7 + 3).astype(np.uint16).reshape(32 * grid, 64)
    out = np.zeros(1024 * grid, np.uint32)
    try:
        launch(LOAD, "k", [tensor_map(x, box=(64, 32), swizzle=128), out, np.uint32(mode)],
               grid=grid, block=1024, **kw)
    except Exception as e:          # (compared between the two paths)
        return type(e), str(e)
    return out


def _both(monkeypatch, mode, **kw):
    """LOAD's outcome with boxes delivered at once where they can be, then always box by box;
    and how often ``_tiles_at_once`` took an instruction ([at once, box by box])."""
    seen = answers(monkeypatch, tma, "_tiles_at_once")
    fast = _run(mode, **kw)
    counts = list(seen)
    monkeypatch.setattr(tma, "_tiles_at_once", lambda *a: False)
    return fast, _run(mode, **kw), counts


def _swizzled(rows, phase=0):
    """The bytes a CTA's box leaves in ``buf`` (128-byte swizzle: 16-byte chunk j of the row
    ``phase`` rows into a 1024-byte block at chunk j ^ (phase % 8)), as the words its threads
    read."""
    out = np.empty_like(rows)
    for r in range(rows.shape[0]):
        chunks = rows[r].reshape(8, 8)
        out[r].reshape(8, 8)[np.arange(8) ^ ((r + phase) % 8)] = chunks
    return out.reshape(-1).view(np.uint32)


@pytest.mark.parametrize("grid", [2, 3])
@pytest.mark.parametrize("sanitize", [True, False])
def test_boxes_of_one_tensor_map_into_each_cta_are_delivered_at_once(monkeypatch, grid, sanitize):
    ptxas_ok(LOAD)
    fast, slow, counts = _both(monkeypatch, 0, grid=grid, sanitize=sanitize)
    x = (np.arange(32 * grid * 64, dtype=np.uint32) * 7 + 3).astype(np.uint16).reshape(32 * grid, 64)
    want = np.concatenate([_swizzled(x[32 * c:32 * c + 32]) for c in range(grid)])
    np.testing.assert_array_equal(fast, want)
    np.testing.assert_array_equal(slow, want)
    assert counts == [1, 0]                  # the CTAs' elected threads: one instruction, at once


@pytest.mark.parametrize("mode, error, words", [
    (1, UninitializedReadError, "mbarrier at shared address 0x3008 of CTA (1,0,0) tracks a copy before "
                                "mbarrier.init"),
    (2, MisalignedAccessError, "the TMA destination at shared address 0x40 is not 128-byte aligned")])
def test_a_load_that_reports_goes_box_by_box_and_reports_the_same(monkeypatch, mode, error, words):
    fast, slow, counts = _both(monkeypatch, mode)
    assert fast == slow and counts == [0, 1]
    cls, msg = fast
    assert cls is error and words in msg, msg
    assert ("thread (0,0,0) of CTA (1,0,0)" if mode == 1 else "thread (0,0,0) of CTA (0,0,0)") in msg, msg


def test_a_box_out_of_bounds_goes_box_by_box(monkeypatch):
    # a box partly past the tensor (filled with zeros): box by box, with the same values
    fast, slow, counts = _both(monkeypatch, 3)
    assert isinstance(fast, np.ndarray)
    np.testing.assert_array_equal(fast, slow)
    assert counts == [0, 1]                  # CTA 1's box: rows 48..63, then 16 rows of zeros
    assert (fast[1024 + 512:] == 0).all() and fast[1024:1024 + 512].any()


@pytest.mark.parametrize("mode", [4, 5])
@pytest.mark.parametrize("sanitize", [True, False])
def test_boxes_at_other_offsets_of_their_ctas_are_delivered_at_once(monkeypatch, mode, sanitize):
    # CTA 1's box 4 KB further (the same swizzle phase) or 128 bytes further (the 128-byte
    # swizzle's rows one later): each CTA's box placed as its own offset swizzles it
    fast, slow, counts = _both(monkeypatch, mode, sanitize=sanitize)
    x = (np.arange(32 * 2 * 64, dtype=np.uint32) * 7 + 3).astype(np.uint16).reshape(64, 64)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast[:1024], _swizzled(x[:32]))
    # (mode 5: row r of the box lands in the swizzle's row r + 1, its chunks XOR (r + 1) % 8)
    np.testing.assert_array_equal(fast[1024:], _swizzled(x[32:], phase=0 if mode == 4 else 1))
    assert counts == [1, 0]


@pytest.mark.parametrize("schedule", ["late", "random"])
def test_a_late_or_random_schedule_goes_box_by_box(monkeypatch, schedule):
    # (each box draws whether it lands late, as box by box)
    fast, slow, counts = _both(monkeypatch, 0, schedule=schedule, seed=3 if schedule == "random" else None)
    assert isinstance(fast, np.ndarray) and fast.any()
    np.testing.assert_array_equal(fast, slow)
    assert counts == [0, 1]


# ----------------------------------------------------------------------------- multicast
# Clusters of Q CTAs: thread 0 of the CTA of rank r loads rows [16 c, 16 c + 16) of a 64-column
# u16 tensor (2 KB, 128-byte swizzle; c the CTA's %ctaid.x) and multicasts it to every CTA of
# its cluster at buf + 2048 r, completing 2 KB on each one's ``bar`` (armed for Q boxes); then
# every thread reads 16 bytes of ``buf``. ``mode``: 1, rank 1's mask names rank Q too (beyond
# the cluster); 2, the boxes land 1 KB apart (each overlaps the next); 3, rank 1 never
# initializes its ``bar`` (its peers' boxes complete on it); 4, no thread waits on ``bar``
# before reading (the copies are in flight); 5, each rank multicasts to itself and the next rank
# only, armed for 2 boxes (rank r reads its slot and rank r - 1's only); 6, rank 0 alone
# multicasts, every CTA armed for its box (and reading slot 0 only).
MULTICAST = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128], .param .u64 out, .param .u32 mode)
{
    .reg .u32 %r<30>; .reg .u64 %rd<6>; .reg .pred %p<8>; .reg .b64 %st; .reg .u16 %rs<2>;
    .shared .align 1024 .b8 buf[8192];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r9, [mode];
    mov.u32 %r1, %tid.x;
    mov.u32 %r8, %ctaid.x;
    mov.u32 %r13, %cluster_ctarank;
    mov.u32 %r14, %cluster_nctarank;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p4, %r13, 1;
    setp.eq.u32 %p5, %r9, 3;
    and.pred %p5, %p5, %p4;
    not.pred %p5, %p5;
    and.pred %p6, %p1, %p5;
    @%p6 mbarrier.init.shared::cta.b64 [%r2], 1;
    fence.mbarrier_init.release.cluster;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    shl.b32 %r15, %r14, 11;
    mov.u32 %r16, 1;
    shl.b32 %r16, %r16, %r14;
    sub.u32 %r17, %r16, 1;
    setp.eq.u32 %p7, %r9, 5;
    @%p7 mov.u32 %r15, 4096;
    mov.u32 %r18, 2;
    shl.b32 %r18, %r18, %r13;
    shr.b32 %r19, %r18, %r14;
    or.b32 %r18, %r18, %r19;
    mov.u32 %r19, 1;
    shl.b32 %r19, %r19, %r13;
    or.b32 %r18, %r18, %r19;
    @%p7 and.b32 %r17, %r18, %r17;
    setp.eq.u32 %p7, %r9, 6;
    @%p7 mov.u32 %r15, 2048;
    setp.ne.u32 %p3, %r13, 0;
    and.pred %p3, %p3, %p7;
    @%p3 mov.pred %p1, 0;
    @%p6 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], %r15;
    shl.b32 %r4, %r8, 4;
    shl.b32 %r11, %r13, 11;
    setp.eq.u32 %p7, %r9, 2;
    @%p7 shl.b32 %r11, %r13, 10;
    add.u32 %r11, %r11, %r3;
    setp.eq.u32 %p7, %r9, 1;
    and.pred %p7, %p7, %p4;
    @%p7 or.b32 %r17, %r17, %r16;
    cvt.u16.u32 %rs1, %r17;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r11], [%rd1, {0, %r4}], [%r2], %rs1;
    setp.eq.u32 %p7, %r9, 4;
    @%p7 bra READ;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
READ:
    shl.b32 %r5, %r1, 4;
    add.u32 %r6, %r3, %r5;
    mov.u32 %r20, 0;
    mov.u32 %r21, 0;
    mov.u32 %r22, 0;
    mov.u32 %r23, 0;
    shr.u32 %r24, %r1, 7;
    sub.u32 %r25, %r13, 1;
    add.u32 %r25, %r25, %r14;
    rem.u32 %r25, %r25, %r14;
    setp.eq.u32 %p3, %r24, %r13;
    setp.eq.u32 %p5, %r24, %r25;
    or.pred %p3, %p3, %p5;
    setp.ne.u32 %p7, %r9, 5;
    or.pred %p3, %p3, %p7;
    setp.eq.u32 %p5, %r24, 0;
    setp.ne.u32 %p7, %r9, 6;
    or.pred %p5, %p5, %p7;
    and.pred %p7, %p3, %p5;
    @%p7 ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r6];
    mov.u32 %r26, %ntid.x;
    mad.lo.u32 %r10, %r8, %r26, %r1;
    mul.wide.u32 %rd3, %r10, 16;
    add.u64 %rd4, %rd2, %rd3;
    st.global.v4.u32 [%rd4], {%r20, %r21, %r22, %r23};
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    ret;
}
"""


def _x(q, clusters=2):
    return (np.arange(16 * q * clusters * 64, dtype=np.uint32) * 5 + 1).astype(np.uint16).reshape(-1, 64)


def _multicast(mode, q, **kw):
    """The output (or the error's type and message) of MULTICAST in ``2 q`` CTAs."""
    x = _x(q)
    out = np.zeros(2 * q * 128 * q * 4, np.uint32)
    try:
        launch(MULTICAST, "k", [tensor_map(x, box=(64, 16), swizzle=128), out, np.uint32(mode)],
               grid=2 * q, block=128 * q, cluster=q, **kw)
    except Exception as e:          # (compared between the two paths)
        return type(e), str(e)
    return out


def _both_multicast(monkeypatch, mode, q, **kw):
    seen = answers(monkeypatch, tma, "_tiles_at_once")
    fast = _multicast(mode, q, **kw)
    counts = list(seen)
    monkeypatch.setattr(tma, "_tiles_at_once", lambda *a: False)
    return fast, _multicast(mode, q, **kw), counts


def _cluster_view(x, q, c, slots):
    """The words CTA ``c`` reads: slot r of ``buf`` holds the box of its cluster's rank r (zeros
    where ``slots`` leaves it unread)."""
    first = c - c % q
    return np.concatenate([_swizzled(x[16 * (first + r):16 * (first + r) + 16]) if r in slots
                           else np.zeros(512, np.uint32) for r in range(q)])


@pytest.mark.parametrize("mode, q, reads", [
    (0, 2, lambda c, q: range(q)),                  # every rank to the whole cluster
    (0, 4, lambda c, q: range(q)),
    (5, 4, lambda c, q: {c % q, (c - 1) % q}),      # to itself and the next rank only
    (6, 4, lambda c, q: {0}),                       # rank 0 alone: every CTA's mbarrier completes
], ids=["cluster-2", "cluster-4", "to-the-next-rank", "rank-0-alone"])
@pytest.mark.parametrize("sanitize", [True, False])
def test_multicast_boxes_are_delivered_at_once(monkeypatch, mode, q, reads, sanitize):
    ptxas_ok(MULTICAST)
    fast, slow, counts = _both_multicast(monkeypatch, mode, q, sanitize=sanitize)
    x = _x(q)
    want = np.concatenate([_cluster_view(x, q, c, reads(c, q)) for c in range(2 * q)])
    np.testing.assert_array_equal(fast, want)
    np.testing.assert_array_equal(slow, want)
    assert counts == [1, 0]


def test_overlapping_multicast_boxes_go_box_by_box(monkeypatch):
    # each box overlaps the next rank's in every CTA: the later box wins, as box by box
    fast, slow, counts = _both_multicast(monkeypatch, 2, 2, sanitize=False)
    assert isinstance(fast, np.ndarray) and fast.any()
    np.testing.assert_array_equal(fast, slow)
    assert counts == [0, 1]


@pytest.mark.parametrize("mode, error, words", [
    (1, InterpreterError, ".multicast::cluster: ctaMask 0x0007 names CTA ranks beyond the cluster's 2 CTAs "
                          "(ranks 0-1)"),
    (3, UninitializedReadError, "mbarrier at shared address 0x2000 of CTA (1,0,0) tracks a copy before "
                                "mbarrier.init"),
    (4, AsyncProxyError, "is still writing: its mbarrier at shared 0x2000 (phase 0: 0 of 1 arrivals pending, "
                         "tx-count 4096) has not completed the phase that tracks it")])
def test_a_multicast_that_reports_goes_box_by_box_and_reports_the_same(monkeypatch, mode, error, words):
    fast, slow, counts = _both_multicast(monkeypatch, mode, 2)
    assert fast == slow, (fast, slow)
    assert counts[0] == 0 if mode != 4 else counts == [1, 0]
    cls, msg = fast
    assert issubclass(cls, error) and words in msg, msg


# Every thread of each CTA first stores to ``buf`` through the generic proxy (no
# fence.proxy.async follows); thread 0 then loads its CTA's 4 KB box over all of it and, once
# it landed, stores ``buf`` back through a second tensor map. The load's bytes replace the
# generic ones (they are not generic-dirty any more), so the store reads nothing unfenced.
OVERWRITE = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128], .param .align 64 .b8 tout[128])
{
    .reg .u32 %r<12>; .reg .u64 %rd<4>; .reg .pred %p<4>; .reg .b64 %st;
    .shared .align 1024 .b8 buf[4096];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    mov.b64 %rd2, tout;
    cvta.param.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mov.u32 %r8, %ctaid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    shl.b32 %r5, %r1, 2;
    add.u32 %r6, %r3, %r5;
    st.shared.u32 [%r6], %r1;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    shl.b32 %r4, %r8, 5;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 4096;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd1, {0, %r4}], [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    @!%p1 bra DONE;
    cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd2, {0, %r4}], [%r3];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
DONE:
    ret;
}
"""


def test_a_load_at_once_over_generic_stores_leaves_no_unfenced_bytes(monkeypatch):
    ptxas_ok(OVERWRITE)
    x = (np.arange(64 * 64, dtype=np.uint32) * 7 + 3).astype(np.uint16).reshape(64, 64)

    def run():
        y = np.zeros_like(x)
        launch(OVERWRITE, "k", [tensor_map(x, box=(64, 32), swizzle=128), tensor_map(y, box=(64, 32), swizzle=128)],
               grid=2, block=1024)
        return y
    seen = answers(monkeypatch, tma, "_tiles_at_once")
    fast = run()
    counts = list(seen)
    monkeypatch.setattr(tma, "_tiles_at_once", lambda *a: False)
    np.testing.assert_array_equal(fast, x)
    np.testing.assert_array_equal(run(), x)
    assert counts == [1, 0]
