"""A TMA store's boxes, once their sources pass the sanitizer's checks together, are read from
shared memory at once where they go through one tensor map and the swizzle places their
elements alike in every source (``ops.tma._sources``), and written into the tensor at once
where they are in-bound tiles of one shape (``ops.tma._stored_at_once``): the same tensor as box
by box, and box by box where the placements differ or a box is clipped (issue 24)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.interpret import Stats, launch, tensor_map
from jax_pyptx.interpret.ops import tma

from .test_interp_segments import answers
from .test_interp_tma import HDR, ptxas_ok

# Thread t writes words t and t + 1024 of ``buf`` (word w: w * 40503 + 17); then lane 0 of
# warps 0 and 1 each store a (32, 64) u16 box through a 128-byte swizzle (or none): warp w's
# rows [32 w, 32 w + 32) of the tensor from buf + w * SECOND (the second source 4 KB on, where
# the swizzle places its elements as the first's, or 128 bytes on, where it does not).
STORE = HDR + """
.visible .entry k(.param .align 64 .b8 tm[128])
{
    .reg .u32 %r<12>; .reg .u64 %rd<4>; .reg .pred %p<4>;
    .shared .align 1024 .b8 buf[8192];
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, buf;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    mad.lo.u32 %r6, %r1, 40503, 17;
    st.shared.u32 [%r5], %r6;
    add.u32 %r6, %r6, 41475072;
    st.shared.u32 [%r5+4096], %r6;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    shr.u32 %r7, %r1, 5;
    and.b32 %r8, %r1, 31;
    setp.eq.u32 %p1, %r8, 0;
    setp.lt.u32 %p2, %r7, 2;
    and.pred %p1, %p1, %p2;
    @!%p1 bra DONE;
    mul.lo.u32 %r9, %r7, SECOND;
    add.u32 %r10, %r3, %r9;
    shl.b32 %r11, %r7, 5;
    cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {0, %r11}], [%r10];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
DONE:
    ret;
}
"""


def _store(second, monkeypatch, at_once=True, swizzle=128, rows=64):
    """The tensor STORE leaves (``second``: the second source's offset; ``rows``: the tensor's,
    64 or fewer to clip the second box), and what ``tma._sources`` answered (rows read at once,
    or None)."""
    got = []
    real = tma._sources

    def sources(ctx, boxes):
        r = real(ctx, boxes) if at_once else None
        got.append(r is not None)
        return r
    monkeypatch.setattr(tma, "_sources", sources)
    text = STORE.replace("SECOND", str(second))
    ptxas_ok(text)
    y = np.zeros((rows, 64), np.uint16)
    launch(text, "k", [tensor_map(y, box=(64, 32), swizzle=swizzle)], block=1024)
    return y, got


@pytest.mark.parametrize("second, alike", [(4096, True), (128, False)])
def test_a_stores_boxes_are_read_at_once_where_the_swizzle_places_them_alike(monkeypatch, second, alike):
    y, got = _store(second, monkeypatch)
    assert got == [alike]
    want, none = _store(second, monkeypatch, at_once=False)
    assert none == [False]
    np.testing.assert_array_equal(y, want)
    # the first box by hand: row r's 16-byte chunk c sits at chunk c ^ (r % 8) of its 128 bytes
    rows, cols = np.arange(32)[:, None], np.arange(64)[None, :]
    np.testing.assert_array_equal(y[:32], WORDS[rows * 64 + ((cols // 8) ^ (rows % 8)) * 8 + cols % 8])


@pytest.mark.parametrize("second", [4096, 128])
def test_unswizzled_boxes_are_read_at_once_as_slices(monkeypatch, second):
    y, got = _store(second, monkeypatch, swizzle=0)
    assert got == [True]
    np.testing.assert_array_equal(y[:32], WORDS[:2048].reshape(32, 64))
    np.testing.assert_array_equal(y[32:], WORDS[second // 2:second // 2 + 2048].reshape(32, 64))


WORDS = (np.arange(2048, dtype=np.uint32) * 40503 + 17).view(np.uint16)      # buf's u16 elements



@pytest.mark.parametrize("rows", [64, 48])
def test_in_bound_boxes_are_written_at_once_and_a_clipped_one_box_by_box(monkeypatch, rows):
    # (a clipped box reads only the units it stores: no source is read at once)
    stored = answers(monkeypatch, tma, "_stored_at_once")
    y, got = _store(4096, monkeypatch, rows=rows)
    assert (got, stored) == (([True], [1, 0]) if rows == 64 else ([], [0, 0]))
    want, _ = _store(4096, monkeypatch, at_once=False, rows=rows)
    np.testing.assert_array_equal(y, want)
    assert y[32:].any()


def test_boxes_that_are_not_whole_tiles_are_stored_box_by_box():
    # a packed sub-byte box has no grid, a box of offsets no tile: declined, nothing read of
    # the (absent) batch, whichever box comes first
    packed = tma.T.PackedBox(np.arange(16, dtype=np.int64) * 6, None, 6, 16, 16)
    scattered = tma.T.Box(np.arange(4, dtype=np.int64), None, 2)
    for boxes in ([packed], [scattered], [packed, scattered]):
        assert tma._stored_at_once(None, [(j, None, None, b, 0, 0) for j, b in enumerate(boxes)], None) is False


def test_a_store_counted_by_statistics_goes_box_by_box(monkeypatch):
    # statistics count every address a store writes: ``store_nests`` declines, each box is stored
    # (and counted) as box by box
    text = STORE.replace("SECOND", "4096")
    out = []
    for at_once in (True, False):
        stored = answers(monkeypatch, tma, "_stored_at_once")
        if not at_once:
            monkeypatch.setattr(tma, "_sources", lambda *a: None)
        y, st = np.zeros((64, 64), np.uint16), Stats()
        launch(text, "k", [tensor_map(y, box=(64, 32), swizzle=128)], block=1024, stats=st)
        out.append((y, st.global_store_bytes, stored))
        monkeypatch.undo()
    (y1, b1, s1), (y2, b2, s2) = out
    np.testing.assert_array_equal(y1, y2)
    assert b1 == b2 == 8192 and s1 == [0, 1] and s2 == [0, 0]
