"""The async proxy's per-block entries (issue 24): shared memory's fence-dirty flags and the
in-flight counts are also kept per block of ``memory.BLOCK`` bytes, and ``spans_clear`` reads
a block's bytes only when its entry is set. The verdicts are the per-byte ones."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from jax_pyptx.interpret.sanitizer import async_proxy as AP
from jax_pyptx.interpret.state import memory as M

B = M.BLOCK


def _ctx(nctas=2, size=4 * B):
    sh = M.BankedSpace("shared", nctas, size, track_init=True, pitch=B)
    sh.track_dirty()
    return SimpleNamespace(sanitize=True, async_proxy=None, N=4, shared=sh)


@pytest.mark.parametrize("starts, nbytes, want", [
    ([0, B + 4], 4, [0, 1]),
    ([B - 8], 16, [0, 1]),                  # a row across two blocks marks both
    ([3 * B], 2 * B + 8, [3, 4, 5]),        # a row longer than a block
])
def test_mark_blocks(starts, nbytes, want):
    blk = np.zeros(8, np.uint8)
    M.mark_blocks(blk, np.array(starts, np.int64), nbytes)
    assert np.flatnonzero(blk).tolist() == want


def test_spans_clear_sees_dirty_bytes_through_their_blocks():
    ctx = _ctx()
    sh = ctx.shared
    assert sh.stride == 4 * B and len(sh.dirty_blk) == 8
    ctas, lo, hi = np.array([0, 1]), np.array([0, 0]), np.array([B, B])
    sh.mark_written(np.array([1]), np.array([3 * B + 5], np.uint64), 4)     # far from the spans
    assert sh.dirty[4 * B + 3 * B + 5] == 1                                 # (marks made when looked at)
    assert sh.dirty_blk.tolist() == [0, 0, 0, 0, 0, 0, 0, 1]
    assert AP.spans_clear(ctx, ctas, lo, hi)
    sh.mark_written(np.array([1]), np.array([B - 4], np.uint64), 4)         # the last word of CTA 1's span
    assert not AP.spans_clear(ctx, ctas, lo, hi)
    assert AP.spans_clear(ctx, ctas, lo, hi - 4)                            # the block is set, its bytes clear
    AP.fence_async(ctx, [1])
    assert AP.spans_clear(ctx, ctas, lo, hi) and not sh.dirty_blk.any()


def test_spans_clear_sees_copies_in_flight_through_their_blocks():
    ctx = _ctx()
    st = AP.state(ctx)
    sl = slice(4 * B + 2 * B, 4 * B + 3 * B)                                # CTA 1, its third block
    landed = AP.track_inflight(ctx, sl, None, 1, 0)
    # counted (bytes and blocks) only when a check reads where the copy may write
    assert not st.blk.any() and st.n_counted == 0
    assert AP.spans_clear(ctx, np.array([0, 1]), np.array([0, 0]), np.array([2 * B, 2 * B]))
    assert not st.blk.any() and st.n_counted == 0
    assert not AP.spans_clear(ctx, np.array([0, 1]), np.array([B, B]), np.array([2 * B + 1] * 2))
    assert st.blk.tolist() == [0, 0, 0, 0, 0, 0, 1, 0] and st.n_counted == 1
    idx = np.array([2, 3 * B - 1], np.int64)                                # scattered bytes of CTA 0
    landed2 = AP.track_inflight(ctx, idx, None, 0, 0)
    assert AP.spans_clear(ctx, np.array([0]), np.array([B]), np.array([2 * B]))   # bytes clear
    assert st.blk.tolist() == [1, 1, 1, 0, 0, 0, 1, 0]                      # lowest to highest block
    assert not AP.spans_clear(ctx, np.array([0]), np.array([0]), np.array([4]))
    landed(ctx, 1, 0)
    landed2(ctx, 0, 0)
    assert not st.blk.any() and not st.inflight.any() and st.n_counted == 0
    # cp.async rows: counted (and their blocks) only when a check reads where they may write
    t = AP.track_cp_async(ctx, np.array([0, 0]), np.array([B - 8, 2 * B], np.uint64), 8, None)
    assert not st.blk.any() and AP.spans_clear(ctx, np.array([0]), np.array([3 * B]), np.array([4 * B]))
    assert not AP.spans_clear(ctx, np.array([0]), np.array([0]), np.array([B]))
    assert st.blk.tolist()[:3] == [1, 0, 1] and st.n_counted == 1
    AP.cp_async_landed(ctx, t, np.array([True, True]), 0)
    assert not st.blk.any() and st.n_counted == 0


def test_copy_that_lands_unchecked_never_touches_the_per_byte_counts():
    ctx = _ctx()
    st = AP.state(ctx)
    landed = AP.track_inflight(ctx, slice(B, 2 * B), None, 0, 0)            # CTA 0, its second block
    assert st.n_inflight == 1 and st.n_counted == 0 and len(st.uncounted) == 1
    assert AP.spans_clear(ctx, np.array([0, 1]), np.array([2 * B] * 2), np.array([4 * B] * 2))
    landed(ctx, 0, 0)
    assert st.n_inflight == 0 and not st.inflight.any() and not st.blk.any()
    # a check meeting a copy still in flight counts it, its landing uncounts it
    landed = AP.track_inflight(ctx, slice(4 * B + B, 4 * B + B + 16), None, 1, 0)     # CTA 1
    assert not AP.spans_clear(ctx, np.array([1]), np.array([B + 15]), np.array([B + 17]))
    assert st.inflight[4 * B + B:4 * B + B + 17].tolist() == [1] * 16 + [0] and st.n_counted == 1
    landed(ctx, 1, 0)
    assert not st.inflight.any() and not st.blk.any() and st.n_counted == 0


def test_fence_drops_its_ctas_unmarked_rows_and_keeps_the_others():
    ctx = _ctx()
    sh = ctx.shared
    sh.mark_written(np.array([0, 1, 1]), np.array([8, 2 * B, 3 * B + 4], np.uint64), 4)    # not marked yet
    AP.fence_async(ctx, [1])
    assert np.flatnonzero(sh.dirty).tolist() == [8, 9, 10, 11]                   # CTA 0's row only
    assert sh.dirty_blk.tolist() == [1, 0, 0, 0, 0, 0, 0, 0] and sh.dirty_bank.tolist() == [True, False]
    sh.mark_written(np.array([1]), np.array([B + 1], np.uint64), 2)
    assert sh.dirty[4 * B + B + 1:4 * B + B + 3].tolist() == [1, 1]              # marked, then cleared
    AP.fence_async(ctx, [0, 1])
    assert not sh.dirty.any() and not sh.dirty_blk.any() and not sh.dirty_bank.any()
