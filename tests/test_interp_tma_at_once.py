"""A unicast tiled TMA load whose threads each copy one in-bound box into their own CTA at the
same shared offset (a producer's elected thread per CTA) is delivered at once
(``ops.tma._tiles_at_once``): the same shared memory, values and reports as box by box, and box
by box wherever one of its conditions does not hold (issue 24)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import MisalignedAccessError, UninitializedReadError
from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.interpret.ops import tma

from .test_interp_segments import answers
from .test_interp_tma import HDR, ptxas_ok

# Thread 0 of every CTA loads rows [32 c, 32 c + 32) of a 64-column u16 tensor (4 KB, 128-byte
# swizzle) into ``buf``; every thread then writes word %tid.x of ``buf`` as the CTA laid it out.
# ``mode``: 1, CTA 1's copy names an mbarrier never initialized (``bar2``); 2, every CTA's box goes to buf + 64; 3, CTA
# 1's box starts 16 rows lower (past the tensor's end with two CTAs); 4, CTA 1's box goes 4 KB
# further into ``buf``.
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


def _swizzled(rows):
    """The 4 KB a CTA's box leaves in ``buf`` (128-byte swizzle: 16-byte chunk j of row r at
    chunk j ^ (r % 8)), as the words its threads read."""
    out = np.empty_like(rows)
    for r in range(rows.shape[0]):
        chunks = rows[r].reshape(8, 8)
        out[r].reshape(8, 8)[np.arange(8) ^ (r % 8)] = chunks
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


@pytest.mark.parametrize("mode", [3, 4])
def test_a_box_out_of_bounds_or_elsewhere_goes_box_by_box(monkeypatch, mode):
    # a box partly past the tensor (filled with zeros) or a destination at another offset in
    # one CTA: box by box, with the same values
    fast, slow, counts = _both(monkeypatch, mode)
    assert isinstance(fast, np.ndarray)
    np.testing.assert_array_equal(fast, slow)
    assert counts == [0, 1]
    if mode == 3:                            # CTA 1's box: rows 48..63, then 16 rows of zeros
        assert (fast[1024 + 512:] == 0).all() and fast[1024:1024 + 512].any()


@pytest.mark.parametrize("schedule", ["late", "random"])
def test_a_late_or_random_schedule_goes_box_by_box(monkeypatch, schedule):
    # (each box draws whether it lands late, as box by box)
    fast, slow, counts = _both(monkeypatch, 0, schedule=schedule, seed=3 if schedule == "random" else None)
    assert isinstance(fast, np.ndarray) and fast.any()
    np.testing.assert_array_equal(fast, slow)
    assert counts == [0, 1]
