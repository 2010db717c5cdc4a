"""Tensor Memory's cells read and written by flat index, and rectangles found held and written
remembered until a dealloc (issue 24): the verdicts are those of the per-cell checks."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from jax_pyptx.errors import TensorMemoryError, UninitializedReadError
from jax_pyptx.interpret.state.tmem import TensorMemory, read_rects, rects, write_rects


def _tm():
    ctx = SimpleNamespace(nctas=2, sanitize=True, at_exit=[],
                          error=lambda cls, msg, g=None, lane=0, d=None: cls(msg))
    return ctx, TensorMemory(ctx)


D = SimpleNamespace(ins=None, text="tcgen05.alloc", where=lambda: "here")


def test_cells_by_flat_index_of_several_ctas():
    ctx, tm = _tm()
    for c in (0, 1):
        assert tm.alloc(ctx, c, 64, D, None, 0) == 0
    ctas = np.array([[0], [1], [1]])
    lanes = np.array([[0, 1], [5, 5], [127, 0]])
    cols = np.array([[3, 3], [7, 8], [62, 0]])
    vals = np.arange(6, dtype=np.uint32).reshape(3, 2) + 10
    tm.write(ctx, ctas, lanes, cols, vals, "st", None)
    assert tm.data[1, 5, 8] == 13 and tm.data[1, 127, 62] == 14 and tm.defined.sum() == 6
    assert (tm.read(ctx, ctas, lanes, cols, "ld", None) == vals).all()
    with pytest.raises(UninitializedReadError, match="reads TMEM lane 0 column 4, which no"):
        tm.read(ctx, ctas, lanes, cols + 1, "ld", None)
    with pytest.raises(TensorMemoryError, match="uses TMEM column 64, which this CTA has not allocated"):
        tm.read(ctx, ctas, lanes, cols + 2, "ld", None)


def test_rectangles_remembered_until_a_dealloc():
    ctx, tm = _tm()
    tm.alloc(ctx, 1, 64, D, None, 0)
    lane_of = np.repeat(np.arange(128)[:, None], 64, axis=1)
    col_of = np.repeat(np.arange(64)[None, :], 128, axis=0)
    pieces = rects(lane_of, col_of)
    vals = np.arange(128 * 64, dtype=np.uint32).reshape(128, 64)
    write_rects(tm, ctx, 1, 0, 0, pieces, vals, (lane_of, col_of), "mma", None)
    for _ in range(2):                      # the second read: the remembered rectangles
        got = read_rects(tm, ctx, 1, 0, 0, pieces, vals.shape, (lane_of, col_of), "mma", None)
        assert (got == vals).all()
    assert tm.ok_rects
    tm.dealloc(ctx, 1, 0, 64, D, None, 0)
    assert not tm.ok_rects
    tm.alloc(ctx, 1, 64, D, None, 0)        # the same columns again: nothing written in them
    with pytest.raises(UninitializedReadError, match="reads TMEM lane 0 column 0"):
        read_rects(tm, ctx, 1, 0, 0, pieces, vals.shape, (lane_of, col_of), "mma", None)
    half = (lane_of[:, :32], col_of[:, :32])    # cell by cell from (lane 0, column 32)
    with pytest.raises(UninitializedReadError, match="reads TMEM lane 0 column 32"):
        read_rects(tm, ctx, 1, 0, 32, rects(*half), (128, 32), half, "mma", None)


def test_cells_of_a_batch_recycled_fresh(monkeypatch):
    from jax_pyptx.interpret.state import shadow
    monkeypatch.setattr(shadow, "_spare", {})
    monkeypatch.setattr(shadow, "_kept", 0)
    ctx = SimpleNamespace(nctas=8, sanitize=True, at_exit=[],
                          error=lambda cls, msg, g=None, lane=0, d=None: cls(msg))
    tm = TensorMemory(ctx)                  # 8 CTAs: 2 MiB of cells, recycled
    tm.alloc(ctx, 7, 32, D, None, 0)
    tm.write(ctx, 7, np.arange(128)[:, None], np.arange(32)[None, :], 5, "st", None)
    data = tm.data
    tm.recycle()
    again = TensorMemory(ctx)
    assert np.shares_memory(again.data, data) and again.data.shape == (8, 128, 512)
    assert not again.data.any() and not again.defined.any()
    again.alloc(ctx, 7, 32, D, None, 0)
    with pytest.raises(UninitializedReadError, match="reads TMEM lane 0 column 0"):
        again.read(ctx, 7, np.arange(128)[:, None], np.arange(32)[None, :], "ld", None)
