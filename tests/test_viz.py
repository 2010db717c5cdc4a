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


# --------------------------------------------------------------------------- every mma form
# Lane 5 (groupID g = 1, threadID_in_group t = 1) of each shape, from the PTX ISA's formulas
# ("Matrix Fragments for mma.mMnNkK"): [(register, part, row, col), ...].
def _run(reg, row, cols, per):
    """Register ``reg`` holding ``per`` consecutive columns each of ``row``: ISA-style lists."""
    return [(reg + i // per, i % per, row, c) for i, c in enumerate(cols)]


def _brun(reg, rows, col, per):
    return [(reg + i // per, i % per, r, col) for i, r in enumerate(rows)]


LANE5 = {
    # f16 m16n8k8 A: a0,a1 row g, a2,a3 row g+8; col 2t + (i & 1)
    ("m16n8k8", "a", "f16"): [(0, 0, 1, 2), (0, 1, 1, 3), (1, 0, 9, 2), (1, 1, 9, 3)],
    # tf32 m16n8k4: a0 (g, t), a1 (g+8, t); b0 (t, g)
    ("m16n8k4", "a", "tf32"): [(0, 0, 1, 1), (1, 0, 9, 1)],
    ("m16n8k4", "b", "tf32"): [(0, 0, 1, 1)],
    # f64 m16n8k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (t, g), b1 (t+4, g)
    ("m16n8k8", "a", "f64"): [(0, 0, 1, 1), (1, 0, 9, 1), (2, 0, 1, 5), (3, 0, 9, 5)],
    ("m16n8k8", "b", "f64"): [(0, 0, 1, 1), (1, 0, 5, 1)],
    # f64 m16n8k16: row g for even i, g+8 for odd; col 2i + t (even i), 2i - 2 + t (odd i)
    ("m16n8k16", "a", "f64"): [(i, 0, 1 + 8 * (i % 2), 2 * i - 2 * (i % 2) + 1) for i in range(8)],
    ("m16n8k16", "b", "f64"): [(i, 0, 1 + 4 * i, 1) for i in range(4)],
    # u8/s8/e4m3 m16n8k16 A: row g for i < 4, g+8 after; col 4t + (i & 3); B: rows 4t + i, col g
    ("m16n8k16", "a", "s8"): _run(0, 1, range(4, 8), 4) + _run(1, 9, range(4, 8), 4),
    ("m16n8k16", "a", "e4m3"): _run(0, 1, range(4, 8), 4) + _run(1, 9, range(4, 8), 4),
    ("m16n8k16", "b", "u8"): _brun(0, range(4, 8), 1, 4),
    # m16n8k32 8-bit A: row g for i < 4 or 8 <= i < 12; col 4t + (i & 3), +16 for i >= 8
    ("m16n8k32", "a", "u8"): (_run(0, 1, range(4, 8), 4) + _run(1, 9, range(4, 8), 4)
                              + _run(2, 1, range(20, 24), 4) + _run(3, 9, range(20, 24), 4)),
    ("m16n8k32", "b", "e5m2"): _brun(0, range(4, 8), 1, 4) + _brun(1, range(20, 24), 1, 4),
    # 4-bit m16n8k32: a0..a7 row g, a8..a15 row g+8, col 8t + (i & 7); b: rows 8t + i
    ("m16n8k32", "a", "s4"): _run(0, 1, range(8, 16), 8) + _run(1, 9, range(8, 16), 8),
    ("m16n8k32", "b", "u4"): _brun(0, range(8, 16), 1, 8),
    # m16n8k64 4-bit A: row g for i < 8 or 16 <= i < 24; col 8t + (i & 7), +32 for i >= 16
    ("m16n8k64", "a", "s4"): (_run(0, 1, range(8, 16), 8) + _run(1, 9, range(8, 16), 8)
                              + _run(2, 1, range(40, 48), 8) + _run(3, 9, range(40, 48), 8)),
    ("m16n8k64", "b", "s4"): _brun(0, range(8, 16), 1, 8) + _brun(1, range(40, 48), 1, 8),
    # .b1 m16n8k128: row g for i < 32, g+8 after; col 32t + (i & 31); B rows 32t + i
    ("m16n8k128", "a", "b1"): _run(0, 1, range(32, 64), 32) + _run(1, 9, range(32, 64), 32),
    ("m16n8k128", "b", "b1"): _brun(0, range(32, 64), 1, 32),
    ("m16n8k256", "a", "b1"): (_run(0, 1, range(32, 64), 32) + _run(1, 9, range(32, 64), 32)
                               + _run(2, 1, range(160, 192), 32) + _run(3, 9, range(160, 192), 32)),
    ("m16n8k256", "b", "b1"): _brun(0, range(32, 64), 1, 32) + _brun(1, range(160, 192), 1, 32),
    # m8n8: A row g, col per*t + i; B rows per*t + i, col g; C row g, col 2t + i
    ("m8n8k4", "a", "f64"): [(0, 0, 1, 1)],
    ("m8n8k4", "b", "f64"): [(0, 0, 1, 1)],
    ("m8n8k4", "c", "f64"): [(0, 0, 1, 2), (1, 0, 1, 3)],
    ("m8n8k16", "a", "s8"): _run(0, 1, range(4, 8), 4),
    ("m8n8k16", "b", "s8"): _brun(0, range(4, 8), 1, 4),
    ("m8n8k16", "c", "s32"): [(0, 0, 1, 2), (1, 0, 1, 3)],
    ("m8n8k32", "a", "u4"): _run(0, 1, range(8, 16), 8),
    ("m8n8k128", "a", "b1"): _run(0, 1, range(32, 64), 32),
    ("m8n8k128", "b", "b1"): _brun(0, range(32, 64), 1, 32),
    # accumulators: c0,c1 row g, c2,c3 row g+8, col 2t + (i & 1); .f16 two per register
    ("m16n8k16", "c", "f16"): [(0, 0, 1, 2), (0, 1, 1, 3), (1, 0, 9, 2), (1, 1, 9, 3)],
    ("m16n8k16", "d", "f32"): [(0, 0, 1, 2), (1, 0, 1, 3), (2, 0, 9, 2), (3, 0, 9, 3)],
    ("m16n8k256", "c", "s32"): [(0, 0, 1, 2), (1, 0, 1, 3), (2, 0, 9, 2), (3, 0, 9, 3)],
    ("m16n8k16", "c", "f64"): [(0, 0, 1, 2), (1, 0, 1, 3), (2, 0, 9, 2), (3, 0, 9, 3)],
}


@pytest.mark.parametrize("key", list(LANE5), ids=lambda k: "-".join(k))
def test_mma_lane5_against_the_isa(key):
    assert mma_map(*key).elements_of(5) == LANE5[key]


def _vec_len(spec: str) -> int:
    return int(spec[1:spec.index(":")]) if spec.startswith("v") else 1


def test_every_mma_form_of_the_isa_table_is_drawn_with_its_register_count():
    from jax_pyptx.errors import NotSupportedError
    from jax_pyptx.isa import forms_for
    from jax_pyptx.viz import mma_types

    def opt(form, g):
        return next(x.options for x in form.groups if x.name == g)
    seen = 0
    for form in forms_for("mma.sync"):
        (shape,) = opt(form, "shape")
        for operand, group, spec in (("a", "atype", form.operands[1]), ("b", "btype", form.operands[2]),
                                     ("c", "ctype", form.operands[3]), ("d", "dtype", form.operands[0])):
            for t in opt(form, group):
                if shape == ".m8n8k4" and t != ".f64" and opt(form, "atype") == (".f16",):
                    with pytest.raises(NotSupportedError, match="Volta quad-pair layout"):
                        mma_map(shape, operand, t)
                    continue
                m = mma_map(shape, operand, t)
                counts = np.bincount(m.thread.ravel(), minlength=32)
                assert (m.thread >= 0).all() and len(set(counts.tolist())) == 1, (shape, operand, t)
                assert int(m.reg.max()) + 1 == _vec_len(spec), (shape, operand, t)
                seen += 1
    assert seen > 100 and set(mma_types()) >= {"m16n8k4", "m16n8k256", "m8n8k128"}
    with pytest.raises(ValueError, match=r"mma.sync .m16n8k16 has no A of type .tf32; allowed: "
                                         r"bf16, e4m3, e5m2, f16, f64, s8, u8"):
        mma_map("m16n8k16", "a", "tf32")
    with pytest.raises(ValueError, match=r"mma shape 'm16n16k16' is not an mma.sync shape"):
        mma_map("m16n16k16", "a", "f16")


@pytest.mark.parametrize("shape", ["m16n8k8", "m16n8k16"])
def test_interpreter_runs_the_f64_layouts_the_maps_draw(shape):
    """The sm_90 f64 shapes: fragments placed by the maps, D read back by the C map, A @ B + C."""
    from jax_pyptx.interpret import launch

    from .test_interp_mma import mma_kernel

    rng = np.random.default_rng(7)
    K = int(shape.split("k")[1])
    A, B, C = rng.standard_normal((16, K)), rng.standard_normal((K, 8)), rng.standard_normal((16, 8))
    frag = {}
    for op, X in (("a", A), ("b", B), ("c", C)):
        m = mma_map(shape, op, "f64")
        frag[op] = np.zeros((32, int(m.reg.max()) + 1), np.float64)
        for lane in range(32):
            for reg, _, r, c in m.elements_of(lane):
                frag[op][lane, reg] = X[r, c]
    d = np.zeros_like(frag["c"])
    launch(mma_kernel(f"{shape}.row.col.f64.f64.f64.f64", frag["a"].shape[1], frag["b"].shape[1], 4, 4, 64), "k",
           [frag["a"].view(np.uint64), frag["b"].view(np.uint64), frag["c"].view(np.uint64), d.view(np.uint64)],
           block=32)
    D = np.zeros((16, 8))
    m = mma_map(shape, "d", "f64")
    for lane in range(32):
        for reg, _, r, c in m.elements_of(lane):
            D[r, c] = d[lane, reg]
    np.testing.assert_allclose(D, A @ B + C, rtol=1e-12)


# --------------------------------------------------------------------------- wgmma
def test_wgmma_f16_accumulators_pack_two_per_register():
    # thread 37 = warp 1, lane 5: rows 16 + g (+ 8), cols 8 * (i // 4) + 2t + (i & 1); .f16: i // 2
    m = wgmma_map(24, "d", "f16")
    want = []
    for i in range(12):
        want.append((i // 2, i % 2, 17 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 + i % 2))
    assert m.elements_of(37) == sorted(want)
    assert int(m.reg.max()) + 1 == 6 and np.bincount(m.thread.ravel()).tolist() == [12] * 128


def test_wgmma_a_every_type():
    # tf32 (K 8): a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4), warp 1's rows + 16
    assert wgmma_map(8, "a", "tf32").elements_of(37) == [(0, 0, 17, 1), (1, 0, 25, 1), (2, 0, 17, 5),
                                                         (3, 0, 25, 5)]
    # e4m3 (K 32): as mma m16n8k32's 8-bit A
    e = wgmma_map(128, "a", "e4m3")
    assert e.shape == (64, 32) and e.elements_of(37) == (
        _run(0, 17, range(4, 8), 4) + _run(1, 25, range(4, 8), 4) + _run(2, 17, range(20, 24), 4)
        + _run(3, 25, range(20, 24), 4))
    b = wgmma_map(16, "a", "b1")
    assert b.shape == (64, 256) and b.holder(25, 200) == (32 + 4 * 1 + 2, 3, 8)   # g 1, t 2, K chunk 1


def test_wgmma_n_and_types_come_from_the_isa_table():
    from jax_pyptx.viz import wgmma_types

    t = wgmma_types()
    assert t[("f32", "bf16")] == tuple(range(8, 257, 8))
    assert 40 not in t[("s32", "s8")] and 48 in t[("s32", "s8")]
    with pytest.raises(ValueError, match=r"wgmma .m64n40 with .s32 accumulators: N must be one of 8, 16, 24, 32, 48"):
        wgmma_map(40, "d", "s32")
    with pytest.raises(ValueError, match=r"wgmma .m64n12 with .f32 accumulators"):
        wgmma_map(12)
    with pytest.raises(ValueError, match=r"wgmma A type .f64: allowed: b1, bf16, e4m3, e5m2, f16, s8, tf32, u8"):
        wgmma_map(8, "a", "f64")


# --------------------------------------------------------------------------- tcgen05.ld / st
# From the ISA's figures ("Matrix fragments for shape .32x32b / .16x64b / .16x128b / .16x256b /
# .16x32bx2"), written as formulas: warp lane l, register r (of one repetition) ->
# (TMEM lane, column): 32x32b (l, r); 16x64b (l//4 + 8*(l%2), (l//2)%2 + 2r);
# 16x128b (l//4 + 8*(r%2), l%4 + 4*(r//2)); 16x256b (l//4 + 8*((r//2)%2), 2*(l%4) + r%2 + 8*(r//4)).
def _tc_expect(shape, lane, r):
    g, t = lane // 4, lane % 4
    return {"32x32b": (lane, r), "16x64b": (g + 8 * (lane % 2), (lane // 2) % 2 + 2 * r),
            "16x128b": (g + 8 * (r % 2), t + 4 * (r // 2)),
            "16x256b": (g + 8 * ((r // 2) % 2), 2 * t + r % 2 + 8 * (r // 4))}[shape]


@pytest.mark.parametrize("shape,num", [("32x32b", 2), ("16x64b", 2), ("16x128b", 2), ("16x256b", 2),
                                       ("16x256b", 1), ("16x64b", 4)])
def test_tcgen05_ld_maps_against_the_isa(shape, num):
    from jax_pyptx.viz import tcgen05_ld_map

    m = tcgen05_ld_map(shape, num)
    regs = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4}[shape] * num
    assert m.shape == (32 if shape == "32x32b" else 16, {"32x32b": 1, "16x64b": 2, "16x128b": 4,
                                                         "16x256b": 8}[shape] * num)
    for lane in range(32):
        for r in range(regs):
            assert m.holder(*_tc_expect(shape, lane, r)) == (lane, r, 0), (lane, r)


def test_tcgen05_ld_pack_and_16x32bx2():
    from jax_pyptx.viz import tcgen05_ld_map

    p = tcgen05_ld_map("32x32b", 2, pack=True)      # one register: the low halves of 2 columns
    assert p.shape == (32, 4) and p.holder(7, 2) == (7, 1, 0) and p.holder(7, 3) == (7, 1, 1)
    x = tcgen05_ld_map("16x32bx2", 2, half_splitoff=4)   # lanes 16-31: TMEM lanes 0-15, +4 columns
    assert x.shape == (16, 6) and x.holder(3, 0) == (3, 0, 0) and x.holder(3, 5) == (19, 1, 0)
    assert (x.thread[:, 2:4] == -1).all()
    with pytest.raises(ValueError, match=r"half_splitoff=1 overlaps the first half's 2 columns"):
        tcgen05_ld_map("16x32bx2", 2, half_splitoff=1)
    with pytest.raises(ValueError, match=r"\.16x256b: \.x64 is not allowed \(largest \.x32\)"):
        tcgen05_ld_map("16x256b", 64)
    with pytest.raises(ValueError, match=r"tcgen05.ld shape '16x16b': allowed: 16x64b"):
        tcgen05_ld_map("16x16b")


def test_swizzle_128b_base32b_moves_32_byte_units():
    # tcgen05's 128-byte swizzle with 32-byte atomicity: bits [5:6] ^= [7:8] (pairs of chunks)
    m = swizzle_map("128B_base32B")
    for r in range(8):
        assert m.chunk[r].tolist() == [2 * ((c // 2) ^ (r % 4)) + c % 2 for c in range(8)]
    assert bank_conflicts(chunk_addresses(range(8), 0), width=16, mode="128B_base32B").wavefronts == 2


@pytest.mark.parametrize("shape,num", [("32x32b", 4), ("16x64b", 8), ("16x128b", 16), ("16x256b", 4),
                                       ("16x32bx2", 16)])
def test_tcgen05_ld_maps_match_the_interpreter_tests_isa_writer(shape, num):
    """The interpreter's tcgen05 tests place every register with their own writer of the ISA's
    figures (``st_expect``: warp 0 at TMEM lane 0); the maps agree cell for cell."""
    from jax_pyptx.viz import tcgen05_ld_map

    from .test_interp_tcgen05 import st_expect

    split = 2 * num if shape == "16x32bx2" else 0
    T = st_expect(shape, num, 0, split)[:32]           # warp 0's lanes
    m = tcgen05_ld_map(shape, num, half_splitoff=split or None)
    for lane in range(m.shape[0]):
        for col in range(m.shape[1]):
            t, r, _ = m.holder(lane, col)
            assert (t < 0 and T[lane, col] == 0) or T[lane, col] == t * 1000 + r, (lane, col)


@pytest.mark.parametrize("module", ["fragments", "banks", "tma_box", "plot"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    if module == "plot":
        pytest.importorskip("matplotlib")
    mod = importlib.import_module(f"jax_pyptx.viz.{module}")
    result = doctest.testmod(mod)
    assert result.attempted > 0 and result.failed == 0
