"""jax_pyptx.viz: the data behind each figure against tables computed by hand from the PTX ISA
(mma fragments, ldmatrix, wgmma accumulators, swizzle modes, bank conflicts, TMA boxes)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.viz import (bank_conflicts, chunk_addresses, fragment_map, ldmatrix_map, mma_map,
                           swizzle_map, tma_box_map, wgmma_map)


def test_mma_a_bf16_lane5():
    # PTX ISA, m16n8k16 .bf16 A: a0,a1 (reg 0) row g, cols 2t,2t+1; a2,a3 row g+8; a4,a5 row g,
    # cols +8; a6,a7 row g+8, cols +8.  Lane 5: g=1, t=1.
    m = mma_map("m16n8k16", "a", "bf16")
    assert m.shape == (16, 16)
    assert m.elements_of(5) == [(0, 0, 1, 2), (0, 1, 1, 3), (1, 0, 9, 2), (1, 1, 9, 3),
                                (2, 0, 1, 10), (2, 1, 1, 11), (3, 0, 9, 10), (3, 1, 9, 11)]
    assert (m.thread >= 0).all() and np.bincount(m.thread.ravel()).tolist() == [8] * 32


def test_mma_b_and_c_lane5():
    b = mma_map("m16n8k16", "b", "f16")
    assert b.elements_of(5) == [(0, 0, 2, 1), (0, 1, 3, 1), (1, 0, 10, 1), (1, 1, 11, 1)]
    c = fragment_map("mma", "m16n8k16", "d", "f32")
    assert c.shape == (16, 8)
    assert c.elements_of(5) == [(0, 0, 1, 2), (1, 0, 1, 3), (2, 0, 9, 2), (3, 0, 9, 3)]


def test_mma_tf32_a_is_one_element_per_register():
    m = mma_map("m16n8k8", "a", "tf32")
    # tf32 m16n8k8 A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
    assert m.elements_of(5) == [(0, 0, 1, 1), (1, 0, 9, 1), (2, 0, 1, 5), (3, 0, 9, 5)]


def test_ldmatrix_x4_and_trans():
    m = ldmatrix_map(4)
    assert m.shape == (8, 32)
    # lane 5 holds row 1, cols 2,3 of each matrix, matrix i in register i
    assert m.elements_of(5) == [(i, h, 1, 8 * i + 2 + h) for i in range(4) for h in range(2)]
    t = ldmatrix_map(1, trans=True)
    assert t.holder(2, 1) == (5, 0, 0) and t.holder(3, 1) == (5, 0, 1)
    with pytest.raises(ValueError, match=r"ldmatrix .x3: allowed .x1, .x2, .x4"):
        ldmatrix_map(3)


def test_wgmma_accumulator_thread37():
    m = wgmma_map(16)
    assert m.shape == (64, 16)
    # warp 1 (rows 16..31), lane 5: g=1, t=1 -> rows 17 and 25
    assert m.elements_of(37) == [(0, 0, 17, 2), (1, 0, 17, 3), (2, 0, 25, 2), (3, 0, 25, 3),
                                 (4, 0, 17, 10), (5, 0, 17, 11), (6, 0, 25, 10), (7, 0, 25, 11)]
    assert np.bincount(m.thread.ravel()).tolist() == [8] * 128
    a = wgmma_map(64, "a", "bf16")
    assert a.shape == (64, 16) and a.holder(17, 2) == (37, 0, 0)


@pytest.mark.parametrize("mode, xor_of_row", [(None, lambda r: 0), ("32B", lambda r: r % 2),
                                              ("64B", lambda r: r % 4), ("128B", lambda r: r % 8)])
def test_swizzle_map_chunks(mode, xor_of_row):
    m = swizzle_map(mode, rows=8, row_bytes=128)
    for r in range(8):
        assert m.chunk[r].tolist() == [c ^ xor_of_row(r) for c in range(8)]
        assert m.bank_group[r].tolist() == m.chunk[r].tolist()


def test_swizzle_map_narrow_rows():
    # 64-byte rows, 128B swizzle: row r starts at 64r; bits [7:9] are r//2
    m = swizzle_map("128B", rows=4, row_bytes=64)
    assert m.chunk.tolist() == [[0, 1, 2, 3], [0, 1, 2, 3], [1, 0, 3, 2], [1, 0, 3, 2]]
    assert m.bank_group.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [1, 0, 3, 2], [5, 4, 7, 6]]


def test_bank_conflicts():
    col = chunk_addresses(range(8), 0)                  # 8 lanes read chunk 0 of 8 rows
    assert bank_conflicts(col, width=16).per_phase == (8,)
    assert bank_conflicts(col, width=16, mode="128B").conflicts == 0
    assert bank_conflicts(col, width=16, mode="64B").wavefronts == 2
    assert bank_conflicts(col, width=16, mode="32B").wavefronts == 4
    row = [4 * i for i in range(32)]
    assert (bank_conflicts(row).wavefronts, bank_conflicts(row).phases) == (1, 1)
    assert bank_conflicts([0] * 32).conflicts == 0                     # broadcast
    r = bank_conflicts([16 * i for i in range(32)], width=16)           # 4 phases, conflict-free
    assert (r.phases, r.wavefronts) == (4, 4)
    assert bank_conflicts([128 * i for i in range(32)]).conflicts == 31
    with pytest.raises(ValueError, match="width=2: allowed 4, 8, 16"):
        bank_conflicts([0], width=2)
    with pytest.raises(ValueError, match="multiples of width=16"):
        bank_conflicts([8], width=16)


def test_tma_box_map_edges():
    m = tma_box_map((10, 10), (4, 8), [(8, 4)])
    assert m.cover.shape == (12, 12) and m.origin == (0, 0)
    assert (m.count(1), m.count(2)) == (12, 20)
    assert m.cover[9, 9] == 1 and m.cover[10, 4] == 2 and m.cover[0, 0] == 0
    n = tma_box_map((4, 4), (2, 2), [(-1, -1), (0, 2)])
    assert n.origin == (1, 1) and n.cover.shape == (5, 5)
    assert n.cover.tolist() == [[2, 2, 0, 0, 0], [2, 1, 0, 1, 1], [0, 0, 0, 1, 1],
                                [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
    assert n.box_of[2, 3] == 1 and n.box_of[0, 0] == 0
    with pytest.raises(ValueError, match=r"box \(0, 4\): each box dim is 1..256"):
        tma_box_map((4, 4), (0, 4), [(0, 0)])


def test_plots_label_every_element():
    pytest.importorskip("matplotlib")
    from jax_pyptx.viz import plot_fragment, plot_swizzle, plot_tma_box

    fig = plot_fragment(mma_map("m16n8k16", "c", "f32"))
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert len(texts) == 128 and "T5\nr2" in texts
    fig = plot_swizzle(swizzle_map("128B"))
    assert len(fig.axes[0].texts) == 64 and fig.axes[0].texts[9].get_text() == "c0\nb4-7"
    fig = plot_tma_box(tma_box_map((10, 12), (4, 8), [(0, 0), (8, 8)]))
    assert [t.get_text() for t in fig.axes[0].texts] == ["box 0", "box 1"]
