"""Issue 24: a ``cp.async`` in flight is counted in the per-byte in-flight counts only when a
check reads bytes it may write (``async_proxy._counts`` with the checked offsets): a pipeline's
loads of one stage never count the copies of the next. The verdicts are the per-byte ones."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from jax_pyptx.errors import AsyncProxyError
from jax_pyptx.interpret.sanitizer import async_proxy as AP
from jax_pyptx.interpret import launch


def _ctx():
    return SimpleNamespace(sanitize=True, async_proxy=None, N=4,
                           shared=SimpleNamespace(data=np.zeros(256, np.uint8), stride=128))


def test_copies_elsewhere_stay_uncounted():
    ctx = _ctx()
    # copy A: offsets 0..31 of CTAs 0 and 1; copy B: offsets 64..95 of CTA 0
    a = AP.track_cp_async(ctx, np.array([0, 0, 1]), np.array([0, 16, 0], np.uint64), 16, None)
    b = AP.track_cp_async(ctx, np.array([0, 0]), np.array([64, 80], np.uint64), 16, None)
    st = ctx.async_proxy
    assert a[1].span == (0, 32) and b[1].span == (64, 96)
    assert AP._counts(st, 32, 64) is None and len(st.uncounted) == 2       # neither can be there
    assert not st.inflight.any()
    got = AP._counts(st, 90, 100)                                          # B's last row: B only
    assert list(st.uncounted) == [a[1]] and b[1].counted and not a[1].counted
    want = np.zeros(256, np.int64)
    want[64:96] = 1
    assert (got == want).all()
    AP.cp_async_landed(ctx, b, np.array([True, True]), 0)                  # B lands: uncounted again
    assert not st.inflight.any() and AP._counts(st, 64, 96) is None
    assert (AP._counts(st) [[0, 31, 128, 143, 144]] == [1, 1, 1, 1, 0]).all()   # everything: A counted
    AP.cp_async_landed(ctx, a, np.array([True, True, True]), 0)
    assert not st.inflight.any() and st.n_inflight == 0


KERNEL = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 src, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .shared .align 16 .b8 a[1024];
  .shared .align 16 .b8 b[1024];
  .shared .align 16 .b8 c[1024];
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 4;
  cvt.u64.u32 %rd3, %r2;
  add.u64 %rd4, %rd1, %rd3;
  mov.u32 %r3, a;
  add.u32 %r3, %r3, %r2;
  mov.u32 %r4, b;
  add.u32 %r4, %r4, %r2;
  mov.u32 %r5, c;
  add.u32 %r5, %r5, %r2;
  st.shared.u32 [%r5], %r1;
  st.shared.u32 [%r3], %r1;
  st.shared.u32 [%r4], %r1;
  cp.async.cg.shared.global [%r3], [%rd4], 16;
  cp.async.commit_group;
  cp.async.cg.shared.global [%r4], [%rd4], 16;
  cp.async.commit_group;
  READ
  cp.async.wait_all;
  ld.shared.u32 %r7, [%r4];
  add.u32 %r6, %r6, %r7;
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r6;
  ret;
}
"""


@pytest.mark.parametrize("buf, line, copy_line", [("%r3", 30, 26), ("%r4", 30, 28)])
def test_a_load_of_either_stage_in_flight_names_its_copy(buf, line, copy_line):
    src = np.arange(256, dtype=np.uint32)
    with pytest.raises(AsyncProxyError) as e:
        launch(KERNEL.replace("READ", f"ld.shared.u32 %r6, [{buf}];"), "k", [src, np.zeros(256, np.uint32)],
               block=64)
    msg = str(e.value)
    assert msg.startswith(f"<ptx>:{line}: the load reads shared address ")
    assert f"(<ptx>:{copy_line} (instruction #" in msg and "is still writing" in msg


def test_a_load_of_other_bytes_while_both_are_in_flight_is_clean():
    src = np.arange(256, dtype=np.uint32)
    out = np.zeros(256, np.uint32)                     # thread t writes word 4 t
    launch(KERNEL.replace("READ", "ld.shared.u32 %r6, [%r5];"), "k", [src, out], block=64, sanitize="strict")
    assert (out.reshape(64, 4)[:, 0] == np.arange(64) + src.reshape(64, 4)[:, 0]).all()


def test_bank_spans_and_spans_clear_see_every_byte_of_the_spans():
    from jax_pyptx.interpret.state import memory as M
    arr = np.arange(4 * 64, dtype=np.uint16)
    for banks, lo, hi in (([1, 2, 3], [8, 8, 8], [40, 40, 40]),      # one 2-D view
                          ([3, 1], [0, 16], [64, 20]), ([2], [5], [6])):
        views = M.span_views(arr, 64, M.bank_spans(banks, np.array(lo), np.array(hi)))
        got = np.concatenate([v.reshape(-1) for v in views])
        want = np.concatenate([arr[b * 64 + a:b * 64 + z] for b, a, z in sorted(zip(banks, lo, hi))])
        assert got.tolist() == want.tolist()
    assert len(M.span_views(arr, 64, M.bank_spans([1, 2, 3], np.array([8] * 3), np.array([40] * 3)))) == 1
    # several spans of one bank: merged, lowest to highest offset (what lies between included)
    views = M.span_views(arr, 64, M.bank_spans([2, 1, 2, 1], np.array([40, 0, 8, 16]), np.array([48, 8, 16, 24])))
    assert [v.tolist() for v in views] == [list(range(64, 88)), list(range(136, 176))]
    views = M.span_views(arr, 64, M.bank_spans([0, 1, 0, 1], np.array([0, 0, 16, 16]), np.array([8, 8, 32, 32])))
    assert len(views) == 1 and views[0].tolist() == [list(range(0, 32)), list(range(64, 96))]
    ctx = _ctx()
    ctx.shared.dirty = np.zeros(256, np.uint8)
    ctx.shared.dirty_bank = np.ones(2, bool)
    ctas, lo, hi = np.array([0, 1]), np.array([32, 32]), np.array([64, 64])
    assert AP.spans_clear(ctx, ctas, lo, hi)
    ctx.shared.dirty[128 + 63] = 1                                        # the last byte of CTA 1's span
    assert not AP.spans_clear(ctx, ctas, lo, hi) and AP.spans_clear(ctx, ctas[:1], lo[:1], hi[:1])
    AP.fence_async(ctx, [1])                                              # CTA 1 fences
    assert AP.spans_clear(ctx, ctas, lo, hi) and ctx.shared.dirty_bank.tolist() == [True, False]
    ctx.shared.dirty[:] = 0
    AP.track_cp_async(ctx, np.array([0]), np.array([48], np.uint64), 16, None)   # in flight at 48..63
    assert not AP.spans_clear(ctx, ctas, lo, hi)
    assert AP.spans_clear(ctx, ctas, np.array([0, 0]), np.array([48, 48]))
