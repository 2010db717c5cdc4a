"""Native blocks (``scheduler.native``, ``ffi/interp/arith.cc``): every native operation gives
the bits of the NumPy handler run one instruction at a time, on the values where rounding,
NaNs, signed zeros, subnormals and shift counts differ; the blocks are actually used; and
the forms the native code does not cover stay with NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.interpret import launch
from jax_pyptx.interpret.launch import get_module, get_program
from jax_pyptx.interpret.scheduler import native
from jax_pyptx.interpret.scheduler.context import Context

from .test_interp_segments import answers

pytestmark = pytest.mark.skipif(native.ARITH is None, reason="jax_pyptx.interpret.state._arith not built")

HDR = ".version 8.0\n.target sm_90\n.address_size 64\n"
F32 = np.array([0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000,
                0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00005,      # NaNs: quiet, negative, signaling
                0x00000001, 0x807FFFFF, 0x00800000, 0x80800000,      # subnormals, least normals
                0x7F7FFFFF, 0xFF7FFFFF, 0x3F808000, 0x3F818000,      # largest; bf16 ties (even, odd)
                0x3F807FFF, 0x477FE000, 0x33800000, 0x4B800001,
                0xC2FC0000, 0xC3150000, 0x42FFFFFF, 0xC2FF0000,     # ex2: 2^-126, 2^-149, ~2^128, 2^-127.5
                0x477FF000, 0xC77FEFFF, 0x33000000, 0x33400000,     # f16: 65520, -65519.99, 2^-25, 1.5 2^-25
                0x387FFFFF, 0x38801000, 0x34200000], np.uint32)     # f16: below 2^-14, two ties
INTS = np.array([0, 1, 2, 31, 32, 33, 63, 64, 100, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                 0x12345678, 0xFFFFFFE0], np.uint32)


def _pairs(vals, rng, n=1024):
    """``n`` (a, b, c) words: every pair of ``vals`` first, then random ones among them and
    random bit patterns."""
    a, b = np.meshgrid(vals, vals)
    a, b = a.ravel(), b.ravel()
    if a.size > n // 2:
        keep = rng.choice(a.size, n // 2, replace=False)
        a, b = a[keep], b[keep]
    extra = n - a.size
    a = np.concatenate([a, rng.choice(vals, extra // 2), rng.integers(0, 2**32, extra - extra // 2, dtype=np.uint32)])
    b = np.concatenate([b, rng.integers(0, 2**32, extra // 2, dtype=np.uint32), rng.choice(vals, extra - extra // 2)])
    c = rng.permutation(np.concatenate([vals, rng.integers(0, 2**32, n - vals.size, dtype=np.uint32)]))
    return a.astype(np.uint32), b.astype(np.uint32), c.astype(np.uint32)


def _kernel(body, nout, wide=False):
    """A kernel of one CTA: thread t loads a[t], b[t], c[t] into %a, %b, %c (and, with
    ``wide``, %x = {a, b}, %y = {c, b} as 64-bit values), runs ``body`` (which writes %o0..),
    and stores each %oK at out[K * ntid + t]."""
    stores = "\n".join(f"    st.global.b{64 if wide else 32} [%q+{k * 1024 * (8 if wide else 4)}], %o{k};"
                       for k in range(nout))
    ow = 64 if wide else 32
    return HDR + f"""
.visible .entry k(.param .u64 A, .param .u64 B, .param .u64 C, .param .u64 O)
{{
    .reg .b32 %a, %b, %c, %t; .reg .b64 %pa, %pb, %pc, %q, %off, %x, %y, %z;
    .reg .b{ow} %o<{nout}>; .reg .b32 %w<16>; .reg .pred %p<8>;
    ld.param.u64 %pa, [A]; ld.param.u64 %pb, [B]; ld.param.u64 %pc, [C]; ld.param.u64 %q, [O];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    add.s64 %pa, %pa, %off; add.s64 %pb, %pb, %off; add.s64 %pc, %pc, %off;
    mul.wide.u32 %off, %t, {ow // 8};
    add.s64 %q, %q, %off;
    ld.global.b32 %a, [%pa]; ld.global.b32 %b, [%pb]; ld.global.b32 %c, [%pc];
    mov.b64 %x, {{%a, %b}}; mov.b64 %y, {{%c, %b}};
{body}
{stores}
    ret;
}}
"""


def _run(text, ins, nout, wide, monkeypatch, fuse):
    monkeypatch.setattr(Context, "fuse", fuse)
    out = np.zeros(nout * 1024, np.uint64 if wide else np.uint32)
    launch(get_module(text), "k", [*ins, out], block=(1024, 1, 1))
    return out.reshape(nout, 1024)


@pytest.fixture
def blocks(monkeypatch):
    """Counts of native blocks run: [ran, declined]."""
    return answers(monkeypatch, native.Block, "run")


@pytest.fixture(params=["cpu", "portable"])
def loops(request):
    """The native loops this CPU picks (fma, AVX2), then the portable ones: the same bits."""
    before = native.ARITH.use_cpu_features(request.param == "cpu")
    yield request.param
    native.ARITH.use_cpu_features(before)


def _check(ops, preds, vals, monkeypatch, blocks, wide=False, seed=0):
    nout = len(ops)
    text = _kernel(_lines(ops, preds), nout, wide)
    seg = [d for d in get_program(get_module(text), "k").code if d.seg is not None]
    assert any(s.seg.blocks for s in seg), "no native block was planned"
    ins = _pairs(vals, np.random.default_rng(seed))
    got = _run(text, ins, nout, wide, monkeypatch, True)
    assert blocks == [1, 0]
    want = _run(text, ins, nout, wide, monkeypatch, False)       # one by one, NumPy handlers
    for k, line in enumerate(ops):
        bad = np.nonzero(got[k] != want[k])[0]
        assert bad.size == 0, (f"{line.format(k=k)}: thread {bad[0]}: a={ins[0][bad[0]]:#x} "
                               f"b={ins[1][bad[0]]:#x} c={ins[2][bad[0]]:#x}: native "
                               f"{got[k][bad[0]]:#x}, NumPy {want[k][bad[0]]:#x}")


F_OPS = ["add.f32 %o{k}, %a, %b;", "add.ftz.f32 %o{k}, %a, %b;", "add.rn.f32 %o{k}, %a, %b;",
         "sub.f32 %o{k}, %a, %b;", "sub.ftz.f32 %o{k}, %a, %b;", "mul.f32 %o{k}, %a, %b;",
         "mul.rn.ftz.f32 %o{k}, %a, %b;", "fma.rn.f32 %o{k}, %a, %b, %c;",
         "fma.rn.ftz.f32 %o{k}, %a, %b, %c;", "fma.rn.f32 %o{k}, %a, 0f3FB8AA3B, %c;",
         "max.f32 %o{k}, %a, %b;", "max.ftz.f32 %o{k}, %a, %b;", "min.f32 %o{k}, %a, %b;",
         "min.ftz.f32 %o{k}, %a, %b;", "neg.f32 %o{k}, %a;", "neg.ftz.f32 %o{k}, %b;",
         "abs.f32 %o{k}, %a;", "abs.ftz.f32 %o{k}, %b;", "cvt.rn.bf16x2.f32 %o{k}, %a, %b;",
         "mov.f32 %o{k}, %c;", "mov.f32 %o{k}, 0fBF800000;", "selp.f32 %o{k}, %a, %b, %p0;",
         "ex2.approx.f32 %o{k}, %a;", "ex2.approx.ftz.f32 %o{k}, %b;",
         "cvt.rn.f16x2.f32 %o{k}, %a, %b;", "rcp.rn.f32 %o{k}, %a;", "rcp.rn.ftz.f32 %o{k}, %b;",
         "rcp.approx.f32 %o{k}, %c;", "rcp.approx.ftz.f32 %o{k}, %a;"]
I_OPS = ["add.u32 %o{k}, %a, %b;", "add.s32 %o{k}, %a, 7;", "sub.u32 %o{k}, %a, %b;",
         "mul.lo.u32 %o{k}, %a, %b;", "mul.lo.s32 %o{k}, %a, -3;", "and.b32 %o{k}, %a, %b;",
         "or.b32 %o{k}, %a, %b;", "xor.b32 %o{k}, %a, 255;", "shl.b32 %o{k}, %a, %b;",
         "shl.b32 %o{k}, %a, 5;", "shr.u32 %o{k}, %a, %b;", "shr.b32 %o{k}, %a, %b;",
         "shr.s32 %o{k}, %a, %b;", "shr.s32 %o{k}, %a, 40;", "cvt.u32.u64 %o{k}, %x;",
         "cvt.s32.u32 %o{k}, %a;", "selp.u32 %o{k}, %a, %b, %p1;", "mov.b32 %o{k}, %b;",
         "and.pred %p2, %p1, %p3; selp.u32 %o{k}, 1, 2, %p2;",
         "or.pred %p4, %p1, %p3; selp.u32 %o{k}, 3, 4, %p4;",
         "xor.pred %p5, %p1, %p3; selp.u32 %o{k}, 5, 6, %p5;",
         "mov.pred %p6, %p5; selp.u32 %o{k}, %a, 7, %p6;"]
W_OPS = ["add.s64 %o{k}, %x, %y;", "sub.u64 %o{k}, %x, %y;", "mul.lo.u64 %o{k}, %x, %y;",
         "and.b64 %o{k}, %x, %y;", "or.b64 %o{k}, %x, %y;", "xor.b64 %o{k}, %x, %y;",
         "shl.b64 %o{k}, %x, %b;", "shr.u64 %o{k}, %x, %b;", "shr.s64 %o{k}, %x, %b;",
         "cvt.u64.u32 %o{k}, %a;", "cvt.s64.s32 %o{k}, %a;", "cvt.u64.s32 %o{k}, %b;",
         "selp.b64 %o{k}, %x, %y, %p2;", "mov.b64 %o{k}, %y;", "add.u64 %o{k}, %x, -1;"]
SETP = ["eq.u32", "ne.u32", "lt.u32", "le.s32", "gt.s32", "ge.u32", "lo.u32", "ls.s32",
        "hi.s32", "hs.u32", "lt.s64", "ge.u64"]


def _lines(ops, preds=""):
    return preds + "\n".join("    " + op.format(k=k) for k, op in enumerate(ops))


def test_f32_operations_give_the_numpy_bits(monkeypatch, blocks, loops):
    _check(F_OPS, "    setp.lt.u32 %p0, %c, %a;\n", F32, monkeypatch, blocks)


def test_f32_operations_on_random_bits(monkeypatch, blocks, loops):
    rng = np.random.default_rng(5)
    vals = np.concatenate([F32, rng.integers(0, 2**32, 40, dtype=np.uint32)])
    _check(F_OPS, "    setp.lt.u32 %p0, %c, %a;\n", vals, monkeypatch, blocks, seed=3)


def test_integer_operations_give_the_numpy_bits(monkeypatch, blocks):
    _check(I_OPS, "    setp.ne.u32 %p1, %c, 0;\n    setp.lt.u32 %p3, %a, %b;\n", INTS, monkeypatch, blocks)


def test_64_bit_operations_give_the_numpy_bits(monkeypatch, blocks):
    _check(W_OPS, "    setp.lt.s64 %p2, %x, %y;\n", INTS, monkeypatch, blocks, wide=True)


def test_comparisons_give_the_numpy_predicates(monkeypatch, blocks):
    body = []
    for k, cmp in enumerate(SETP):
        a, b = ("%x", "%y") if cmp.endswith("64") else ("%a", "%b")
        body.append(f"setp.{cmp} %p{k % 8}, {a}, {b};")
        body.append(f"selp.u32 %o{k}, 1, 0, %p{k % 8};")
    text = "\n".join("    " + line for line in body)
    outs = len(SETP)                  # %ok: 1 where comparison k holds
    t = _kernel(text, outs)
    ins = _pairs(INTS, np.random.default_rng(1))
    got = _run(t, ins, outs, False, monkeypatch, True)
    assert blocks == [1, 0]
    want = _run(t, ins, outs, False, monkeypatch, False)
    for k, cmp in enumerate(SETP):
        assert (got[k] == want[k]).all(), cmp
    assert got.any() and not got.all()


def test_forms_without_a_native_operation_stay_with_numpy():
    text = _kernel(_lines(["add.rz.f32 %o{k}, %a, %b;", "lg2.approx.ftz.f32 %o{k}, %a;", "rcp.rz.f32 %o{k}, %a;",
                           "max.NaN.f32 %o{k}, %a, %b;", "add.sat.s32 %o{k}, %a, %b;",
                           "cvt.rn.relu.f16x2.f32 %o{k}, %a, %b;", "add.f16x2 %o{k}, %a, %b;",
                           "mul.hi.u32 %o{k}, %a, %b;", "setp.lt.f32 %p0, %a, %b;",
                           "add.u32 %o{k}, %a, %b;"]), 10)
    code = get_program(get_module(text), "k").code
    nat = {d.ins.opcode + "".join(d.ins.modifiers): d.nat for d in code}
    assert nat["add.u32"] is not None
    for form in ("add.rz.f32", "lg2.approx.ftz.f32", "rcp.rz.f32", "max.NaN.f32", "add.sat.s32",
                 "cvt.rn.relu.f16x2.f32", "add.f16x2", "mul.hi.u32", "setp.lt.f32"):
        assert nat[form] is None, form


def test_a_register_wider_than_the_type_stays_with_numpy():
    text = HDR + """
.visible .entry k(.param .u64 O)
{
    .reg .b32 %r<4>; .reg .b64 %d<2>;
    mov.u32 %r0, 5;
    cvt.u64.u32 %d0, %r0;
    cvt.u64.u32 %d1, %d0;
    add.u32 %r1, %r0, %r0;
    ret;
}
"""
    code = get_program(get_module(text), "k").code
    assert [d.nat is not None for d in code if d.ins.opcode in ("mov", "cvt", "add")] == [True, True, False, True]


def test_a_block_the_native_call_declines_runs_its_batches(monkeypatch, blocks):
    body = _lines(["add.f32 %o{k}, %a, %b;", "mul.f32 %o{k}, %o0, %b;", "fma.rn.f32 %o{k}, %o1, %a, %c;"])
    text = _kernel(body, 3)
    ins = _pairs(F32, np.random.default_rng(2))

    def decline(*a):
        raise ValueError("declined")
    want = _run(text, ins, 3, False, monkeypatch, False)
    monkeypatch.setattr(native, "ARITH", type("A", (), {"run": staticmethod(decline)}))
    got = _run(text, ins, 3, False, monkeypatch, True)
    assert blocks == [0, 1]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x", [0x3F4746F3, 0x3F4D2720, 0xBF34B452, 0xC3160000, 0x42FFFFFE])
def test_an_ex2_near_a_rounding_boundary_runs_its_block_through_numpy(x, monkeypatch, blocks):
    # exp2 of these lands within a few ulps of f64 from an f32 rounding boundary (2^-150 on
    # one: a tie), where NumPy's exp2 and the C library's could round apart
    body = _lines(["add.f32 %o{k}, %a, %b;", "ex2.approx.f32 %o{k}, %c;", "mul.f32 %o{k}, %o1, %b;"])
    text = _kernel(body, 3)
    a, b, c = _pairs(F32[:6], np.random.default_rng(6))
    c[17] = x
    got = _run(text, (a, b, c), 3, False, monkeypatch, True)
    if x != 0x42FFFFFE:
        assert blocks == [0, 1]
    else:                                   # near 2^128 but not near FLT_MAX's boundary
        assert blocks == [1, 0]
    np.testing.assert_array_equal(got, _run(text, (a, b, c), 3, False, monkeypatch, False))


def test_the_native_call_checks_its_slots():
    A = native.ARITH
    add = A.ops.index("f_add") + 1
    code = np.array([[add, 0, 2, 0, 1, -32768]], np.int32)    # slot 2 = slot 0 + slot 1
    u = np.zeros(4, np.uint32)
    imms = np.zeros(0, np.uint64)
    widths = np.array([4, 4, 4], np.uint8)
    out = np.empty(4, np.uint32)
    assert A.run(code, imms, [np.full(4, 1.5, np.float32), u, out], widths, 4)   # any 4-byte dtype
    assert (out.view(np.float32) == 1.5).all()
    with pytest.raises(ValueError, match="slot 1: shape, itemsize or stride"):
        A.run(code, imms, [u, np.ones(3, np.uint32), out], widths, 4)
    with pytest.raises(ValueError, match="slot 0: shape, itemsize or stride"):
        A.run(code, imms, [np.ones(4, np.uint64), u, out], widths, 4)
    with pytest.raises(ValueError, match="bad destination slot"):
        A.run(code, imms, [u, u, u[::-1]], widths, 4)
    with pytest.raises(ValueError, match="bad op"):
        A.run(np.array([[99, 0, 2, 0, 1, -32768]], np.int32), imms, [u, u, out], widths, 4)
    with pytest.raises(ValueError, match="bad immediate"):
        A.run(np.array([[add, 0, 2, 0, -1, -32768]], np.int32), imms, [u, u, out], widths, 4)


def test_inputs_read_from_a_register_blocks_tile(loops):
    # slots 1 and 2 read from one tile (a wgmma accumulator's registers j: element i of the
    # group is tile[i / 32, lanes[j, i % 32]]), slot 0 gathered at the index: the values of the
    # same registers scattered into arrays first, over three chunks (whole warps); the tiled
    # slots' entries of the arrays are not read (None here)
    A = native.ARITH
    ops = {name: i + 1 for i, name in enumerate(A.ops)}
    n, per_warp = 2560, 96
    rng = np.random.default_rng(11)
    tile = rng.integers(0, 2**32, (n // 32, per_warp), dtype=np.uint64).astype(np.uint32)
    lanes = np.stack([rng.permutation(per_warp)[:32] for _ in range(2)]).astype(np.int64)
    r1, r2 = (tile[:, ln].reshape(-1) for ln in lanes)     # the registers' values, thread by thread
    a = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    idx = rng.permutation(4000)[:n].astype(np.int64)
    code = np.array([[ops["add32"], 0, 3, 0, 1, -32768],             # t = a + r1
                     [ops["xor32"], 0, 3, 3, 2, -32768]], np.int32)   # o = t ^ r2
    widths = np.array([4, 4, 4, 4], np.uint8)
    out = np.empty(n, np.uint32)
    at = np.array([1, 2], np.int64)
    imms = np.zeros(0, np.uint64)
    assert A.run(code, imms, [a, None, None, out], widths, n, idx, 3, tiles=(tile, lanes, at))
    np.testing.assert_array_equal(out, (a[idx] + r1) ^ r2)
    assert A.run(code, imms, [a, None, None, out], widths, n, idx, 3, tiles=(tile, lanes[::-1].copy(), at))
    np.testing.assert_array_equal(out, (a[idx] + r2) ^ r1)   # (each slot its row of lanes)
    with pytest.raises(ValueError, match="tile inputs: shapes"):
        A.run(code, imms, [a, None, None, out[:64]], widths, 64, idx[:64], 3,
              tiles=(tile, lanes, at))                 # a tile of other warps than the group's
    with pytest.raises(ValueError, match="tile inputs: shapes"):
        A.run(code, imms, [a, None, None, out], widths, n, idx, 3, tiles=(tile, lanes[:1].copy(), at))
    bad = lanes.copy()
    bad[1, 5] = per_warp
    with pytest.raises(ValueError, match="tile input 2: a lane past its warp's tile"):
        A.run(code, imms, [a, None, None, out], widths, n, idx, 3, tiles=(tile, bad, at))
    for slots, slot in (([1, 1], 1), ([1, 4], 4), ([1, -1], -1)):     # twice, past the arrays
        with pytest.raises(ValueError, match=f"tile input {slot}: slot or width"):
            A.run(code, imms, [a, None, None, out], widths, n, idx, 3,
                  tiles=(tile, lanes, np.array(slots, np.int64)))
    with pytest.raises(ValueError, match="tile input 1: slot or width"):
        A.run(code, imms, [a, None, None, out], np.array([4, 8, 4, 4], np.uint8), n, idx, 3,
              tiles=(tile, lanes, at))
    with pytest.raises(ValueError, match="tile inputs need whole warps"):
        A.run(code, imms, [a, None, None, out[:40]], widths, 40, idx[:40], 3, tiles=(tile, lanes, at))
    with pytest.raises(ValueError, match="slot 2: not a buffer"):
        A.run(code, imms, [a, None, None, out], widths, n, idx, 3, tiles=(tile, lanes[:1].copy(), at[:1].copy()))
    # each register of a wgmma f32 accumulator (m64nNk16, N = 24: the layout a run hands over)
    one = np.array([[ops["add32"], 0, 2, 0, 1, -32768]], np.int32)      # o = a + the register
    for j in range(12):
        ln = np.array([[((l // 4) + 8 * ((j // 2) % 2)) * 24 + 8 * (j // 4) + 2 * (l % 4) + j % 2
                        for l in range(32)]], np.int64)
        t = rng.integers(0, 2**32, (n // 32, 16 * 24), dtype=np.uint64).astype(np.uint32)
        want = t[:, ln[0]].reshape(-1)
        assert A.run(one, imms, [a, None, out], widths[:3], n, idx, 2, tiles=(t, ln, np.array([1], np.int64)))
        np.testing.assert_array_equal(out, a[idx] + want)


def test_bfly32_permutes_each_warp_in_place_too():
    # a segment's shfl.sync.bfly (lane mask 13) over 2048 threads: two chunks of whole warps;
    # the second row shuffles the first's result in its own slot (d is a), undoing it
    A = native.ARITH
    mov, bfly = A.ops.index("mov32") + 1, A.ops.index("bfly32") + 1
    n = 2048
    x = np.random.default_rng(4).integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    imms = np.array([13], np.uint64)
    widths = np.array([4, 4, 4], np.uint8)
    want = x.reshape(-1, 32)[:, np.arange(32) ^ 13].reshape(-1)
    out, back = np.empty(n, np.uint32), np.empty(n, np.uint32)
    code = np.array([[bfly, 0, 1, 0, -1, -32768], [mov, 0, 2, 1, -32768, -32768],
                     [bfly, 0, 2, 2, -1, -32768]], np.int32)
    assert A.run(code, imms, [x, out, back], widths, n)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(back, x)
    with pytest.raises(ValueError, match="bfly32 needs whole warps"):
        A.run(code, imms, [x[:48], out[:48], back[:48]], widths, 48)


def test_the_native_call_gathers_its_inputs_and_carves_its_temporaries():
    # inputs read from whole arrays at an index (a group's slots of the batch's registers),
    # temporaries carved from a scratch array: the values a copy and fresh arrays give
    A = native.ARITH
    ops = {name: i + 1 for i, name in enumerate(A.ops)}
    n = 2500                                          # past two chunks
    # slots: a, b (u32), c (u64) gathered; o5, o6 (u32) kept; t2 (u32), t4 (u64) temporaries
    u = -32768
    code = np.array([[ops["add32"], 0, 5, 0, 1, u],           # t2 = a + b
                     [ops["mul64"], 0, 6, 2, 2, u],           # t4 = c * c
                     [ops["xor32"], 0, 3, 5, -1, u],          # o5 = t2 ^ 0x55
                     [ops["trunc64_32"], 0, 4, 6, u, u]], np.int32)    # o6 = t4's low half
    widths = np.array([4, 4, 8, 4, 4, 4, 8], np.uint8)
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**32, 9000, dtype=np.uint32)
    b = rng.integers(0, 2**32, 9000, dtype=np.uint32)
    c = rng.integers(0, 2**64, 9000, dtype=np.uint64)
    idx = rng.permutation(9000)[:n].astype(np.int64)
    o5, o6 = np.empty(n, np.uint32), np.empty(n, np.uint32)
    scratch = np.full(n * 4 + n * 8 + 64, 0xAB, np.uint8)
    assert A.run(code, np.array([0x55], np.uint64), [a, b, c, o5, o6], widths, n, idx, 3, scratch)
    np.testing.assert_array_equal(o5, (a[idx] + b[idx]) ^ np.uint32(0x55))
    np.testing.assert_array_equal(o6, (c[idx] * c[idx]).astype(np.uint32))
    t2 = scratch[:n * 4].view(np.uint32)              # the first temporary, at offset 0
    np.testing.assert_array_equal(t2, a[idx] + b[idx])
    # an index of runs (whole warps of a role in each CTA) is copied run by run, a strided
    # input element by element, a chunk that is one short run too: the same values
    runs = np.concatenate([np.arange(s0, s0 + 256) for s0 in range(128, 9000 - 256, 384)])[:n]
    runs[-3:] = [8990, 5, 17]                           # the last chunk's end: short runs
    bs = np.repeat(b, 2)[::2]                           # b through a view of stride 2
    assert A.run(code, np.array([0x55], np.uint64), [a, bs, c, o5, o6], widths, n, runs, 3, scratch)
    np.testing.assert_array_equal(o5, (a[runs] + b[runs]) ^ np.uint32(0x55))
    np.testing.assert_array_equal(o6, (c[runs] * c[runs]).astype(np.uint32))
    args = (code, np.array([0x55], np.uint64))
    with pytest.raises(ValueError, match="slot 0: shape, itemsize or stride"):
        A.run(*args, [a[:100], b, c, o5, o6], widths, n, idx, 3, scratch)    # index past it
    with pytest.raises(ValueError, match="a negative index"):
        A.run(*args, [a, b, c, o5, o6], widths, n, -idx, 3, scratch)
    with pytest.raises(ValueError, match="gathered slots need an index"):
        A.run(*args, [a, b, c, o5, o6], widths, n, None, 3, scratch)
    with pytest.raises(ValueError, match="scratch too small"):
        A.run(*args, [a, b, c, o5, o6], widths, n, idx, 3, scratch[:n * 4])
    with pytest.raises(ValueError, match="the index must have n elements"):
        A.run(*args, [a, b, c, o5, o6], widths, n, idx[:-1], 3, scratch)
    # the kept outputs as the rows of one (k, n) array (``blocks``): the same slots, the same
    # values; a block that is not C-contiguous (k, n) of the slots' widths is refused
    kept = np.zeros((2, n), np.uint32)
    assert A.run(*args, [a, b, c], widths, n, idx, 3, scratch, [kept])
    np.testing.assert_array_equal(kept[0], (a[idx] + b[idx]) ^ np.uint32(0x55))
    np.testing.assert_array_equal(kept[1], (c[idx] * c[idx]).astype(np.uint32))
    two = [np.zeros((1, n), np.uint32), np.zeros((1, n), np.uint32)]
    assert A.run(*args, [a, b, c], widths, n, idx, 3, scratch, two)
    np.testing.assert_array_equal(np.concatenate(two), kept)
    with pytest.raises(ValueError, match="block 0: not a C-contiguous"):
        A.run(*args, [a, b, c], widths, n, idx, 3, scratch, [np.zeros((n, 2), np.uint32).T])
    with pytest.raises(ValueError, match="slot 3: shape, itemsize or stride"):
        A.run(*args, [a, b, c], widths, n, idx, 3, scratch, [np.zeros((2, n), np.uint64)])
    with pytest.raises(ValueError, match="block 0: not a writable buffer"):
        ro = np.zeros((2, n), np.uint32)
        ro.flags.writeable = False
        A.run(*args, [a, b, c], widths, n, idx, 3, scratch, [ro])


def test_constants_of_one_value_at_two_widths_or_two_values_stay_apart():
    # a block's constants are made once per value and width and shared: the same bits as a
    # u32 and as a u64 operand, two values, one named twice, and a broadcast input (stride 0)
    A = native.ARITH
    ops = {name: i + 1 for i, name in enumerate(A.ops)}
    u = -32768
    code = np.array([[ops["add32"], 0, 3, 0, -1, u],            # o3 = a + 0xFFFFFFFF (u32)
                     [ops["add64"], 0, 4, 1, -2, u],            # o4 = c + 0xFFFFFFFF (u64)
                     [ops["add32"], 0, 5, 0, -3, u],            # o5 = a + 7
                     [ops["xor32"], 0, 6, 2, -1, u]], np.int32)  # o6 = k ^ 0xFFFFFFFF
    widths = np.array([4, 8, 4, 4, 8, 4, 4], np.uint8)
    n = 1100
    rng = np.random.default_rng(11)
    a = rng.integers(0, 2**32, n, dtype=np.uint32)
    c = rng.integers(0, 2**40, n, dtype=np.uint64)
    k = np.broadcast_to(np.uint32(0x1234), (n,))
    outs = [np.empty(n, np.uint32), np.empty(n, np.uint64), np.empty(n, np.uint32), np.empty(n, np.uint32)]
    assert A.run(code, np.array([0xFFFFFFFF, 0xFFFFFFFF, 7], np.uint64), [a, c, k] + outs, widths, n)
    np.testing.assert_array_equal(outs[0], a + np.uint32(0xFFFFFFFF))
    np.testing.assert_array_equal(outs[1], c + np.uint64(0xFFFFFFFF))
    np.testing.assert_array_equal(outs[2], a + np.uint32(7))
    np.testing.assert_array_equal(outs[3], np.full(n, 0x1234 ^ 0xFFFFFFFF, np.uint32))


def test_a_segment_of_some_threads_reads_their_registers(monkeypatch, blocks):
    # the segment runs for the threads of a group that is not the whole batch (not a
    # rectangle of it either): its block reads their registers at their slots natively
    ops = ["add.f32 %o{k}, %a, %b;", "fma.rn.f32 %o{k}, %o0, %c, %a;", "ex2.approx.f32 %o{k}, %o1;",
           "shl.b32 %o{k}, %a, 3;"]
    init = "\n".join(f"    mov.b32 %o{k}, 0;" for k in range(4))
    body = (init + "\n    rem.u32 %w0, %t, 3;\n    setp.eq.u32 %p7, %w0, 1;\n    @%p7 bra SKIP;\n"
            + _lines(ops) + "\nSKIP:")
    text = _kernel(body, 4)
    ins = _pairs(F32, np.random.default_rng(8))
    indexed = []
    real = native.ARITH.run
    fake = type("A", (), {"run": staticmethod(lambda *a: indexed.append(a[5] is not None and len(a[5])) or real(*a))})
    monkeypatch.setattr(native, "ARITH", fake)
    got = _run(text, ins, 4, False, monkeypatch, True)
    assert blocks == [2, 0] and indexed == [False, 683]       # the whole CTA, then 2 threads in 3
    want = _run(text, ins, 4, False, monkeypatch, False)
    np.testing.assert_array_equal(got, want)
    assert (got[3, 1::3] == 0).all() and (got[3, ::3] == ins[0][::3] << 3).all()


def test_strided_and_broadcast_sources_read_like_copies():
    A = native.ARITH
    ops = {name: i + 1 for i, name in enumerate(A.ops)}
    code = np.array([[ops["add32"], 0, 2, 0, 1, -32768], [ops["xor32"], 0, 3, 2, -1, -32768]], np.int32)
    n = 3000                                          # past one chunk
    base = np.arange(2 * n, dtype=np.uint32)
    a = base[::2]                                     # strided
    b = np.broadcast_to(np.uint32(7), (n,))           # stride 0
    o1, o2 = np.empty(n, np.uint32), np.empty(n, np.uint32)
    A.run(code, np.array([0xFF], np.uint64), [a, b, o1, o2], np.array([4, 4, 4, 4], np.uint8), n)
    np.testing.assert_array_equal(o1, a + 7)
    np.testing.assert_array_equal(o2, (a + 7) ^ 0xFF)


@pytest.mark.parametrize("kept", [True, False])
def test_a_blocks_result_read_after_a_later_block_is_not_a_temporary(kept, monkeypatch, blocks):
    # %w0 comes out of the first block and is read again only by add.rz (NumPy) after the
    # second block, whose temporaries (%w3, %w4) are in the scratch: %w0 must not be there.
    # kept=False: a scratch over the most a thread keeps is made for the call
    if not kept:
        monkeypatch.setattr(native, "_SCRATCH_MAX", 0)
    ops = ["add.f32 %w0, %a, %b;", "mul.f32 %w1, %w0, %c;", "ex2.approx.f32 %w2, %w1;",
           "add.f32 %w3, %w2, %a;", "mul.f32 %w4, %w3, %w3;", "sub.f32 %w5, %w4, %b;",
           "add.rz.f32 %w6, %w0, %w5;", "mov.b32 %o0, %w6;"]
    text = _kernel("\n".join("    " + op for op in ops), 1)
    seg = [d.seg for d in get_program(get_module(text), "k").code if d.seg is not None][-1]
    nb = sum(type(b) is native.Block for b in seg.blocks)
    assert nb >= 2 and "%w0" in seg.blocks[0].outputs
    ins = _pairs(F32[:8], np.random.default_rng(4))
    got = _run(text, ins, 1, False, monkeypatch, True)
    assert blocks == [nb, 0]
    np.testing.assert_array_equal(got, _run(text, ins, 1, False, monkeypatch, False))


def test_a_wgmma_accumulator_rounds_to_the_numpy_bits(monkeypatch):
    # the Hopper GEMM's f32 accumulators, chained over K: its runs of k-steps in one native pass
    # (mma_chain_f32), the others' native add-and-round, against NumPy's products, add and
    # cast, with infinities among the inputs (inf - inf: NaN accumulators)
    from examples import proof
    from examples.library import get
    from jax_pyptx.interpret.ops import wgmma, wgmma_chain

    e = get("hopper/gemm-bf16")
    k = e.kernel()
    a, b = proof.make_inputs(e, k, {"M": 128, "N": 128, "K": 128})
    a, b = np.array(a), np.array(b)
    a[3, 5], a[3, 9], a[7, 9] = np.inf, -np.inf, np.inf
    b[5, 1] = b[9, 1] = b[1, 5] = b[1, 9] = 1                # B as (K, N) or (N, K)
    calls = []
    real, core = wgmma._round_f32, native.ARITH

    class Spy:                      # the native module, its runs of k-steps counted
        def __getattr__(self, name):
            return getattr(core, name)

        def mma_chain_f32(self, *x):
            calls.append("run")
            return core.mma_chain_f32(*x)

    monkeypatch.setattr(wgmma, "_round_f32", lambda *x: calls.append(1) or real(*x))
    monkeypatch.setattr(wgmma_chain, "ARITH", Spy())
    got = np.asarray(k.interpret(a, b))
    assert "run" in calls and np.isnan(got).any() and np.isfinite(got).sum() > got.size // 2
    monkeypatch.setattr(wgmma, "ARITH", None)
    n = len(calls)
    want = np.asarray(k.interpret(a, b))
    assert len(calls) == n                                  # NumPy this time
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("W, M, K, N, steps", [(8, 64, 16, 128, 4), (3, 64, 16, 24, 3), (2, 64, 8, 40, 5),
                                               (1, 64, 32, 8, 2), (2, 12, 16, 20, 3)])
def test_a_run_of_k_steps_gives_the_numpy_bits(W, M, K, N, steps, loops):
    # mma_chain_f32: each step's product (bf16 values whose float64 sums are exact, so any
    # order gives them), negated where asked, added where scale-d is set, rounded to f32 once,
    # against NumPy's matmul and cast; infinities make NaNs. (M, N of 12 x 20: the portable
    # loop also on a CPU with AVX-512.) Operands at strides, as a run reads them.
    rng = np.random.default_rng(W * 100 + N)

    def bf16(shape):
        v = rng.integers(-255, 256, shape) * np.exp2(rng.integers(-12, 4, shape))
        return v.astype(np.float32).astype(np.float64)
    A = bf16((W, steps, M, K))
    Bt = bf16((W, steps, K, N))
    A[0, 0, 3, 2], Bt[0, 0, 2, 5], Bt[W - 1, steps - 1, 1, 4] = np.inf, 0, -np.inf     # inf * 0
    sd = rng.integers(0, 2, (steps, W)).astype(np.uint8)
    sd[1], sd[1:, 0] = 1, 1                                  # (warpgroup 0 keeps its NaN)
    neg = (np.arange(steps) % 2).astype(np.uint8)
    acc = bf16((W, M, N)).astype(np.float32).view(np.uint32)
    want = acc.copy()
    with np.errstate(invalid="ignore"):
        for i in range(steps):
            p = np.matmul(A[:, i], Bt[:, i]) * (-1.0 if neg[i] else 1.0)
            p[sd[i] == 1] += want[sd[i] == 1].view(np.float32)
            want = p.astype(np.float32).view(np.uint32)
    start = acc.copy()
    native.ARITH.mma_chain_f32([A[:, i] for i in range(steps)], [Bt[:, i] for i in range(steps)], sd, neg, acc)
    assert np.isnan(acc.view(np.float32)).any()
    np.testing.assert_array_equal(acc, want)
    # B read once for the warpgroups that share it (b_rows: warpgroup w's row of B)
    rows = np.arange(W, dtype=np.int64) // 2 * 2
    Bt[1::2] = Bt[0::2][:W // 2]
    acc, want = start.copy(), start.copy()
    with np.errstate(invalid="ignore"):
        for i in range(steps):
            p = np.matmul(A[:, i], Bt[:, i]) * (-1.0 if neg[i] else 1.0)
            p[sd[i] == 1] += want[sd[i] == 1].view(np.float32)
            want = p.astype(np.float32).view(np.uint32)
    native.ARITH.mma_chain_f32([A[:, i] for i in range(steps)], [Bt[::2, i] for i in range(steps)], sd, neg, acc,
                               rows // 2)
    np.testing.assert_array_equal(acc, want)


def test_a_run_of_k_steps_checks_its_operands():
    A, B = np.zeros((2, 64, 16)), np.zeros((2, 16, 8))
    acc = np.zeros((2, 64, 8), np.uint32)
    sd, neg = np.zeros((1, 2), np.uint8), np.zeros(1, np.uint8)
    with pytest.raises(ValueError, match="step 0: a must be"):
        native.ARITH.mma_chain_f32([A], [np.zeros((2, 8, 8))], sd, neg, acc)
    with pytest.raises(ValueError, match="one entry per step"):
        native.ARITH.mma_chain_f32([A, A], [B], sd, neg, acc)
    with pytest.raises(ValueError, match="step 0: a row's elements must be contiguous"):
        native.ARITH.mma_chain_f32([np.zeros((2, 16, 64)).swapaxes(1, 2)], [B], sd, neg, acc)
    with pytest.raises(ValueError, match="a row of b_rows lies outside b"):
        native.ARITH.mma_chain_f32([A], [B[:1]], sd, neg, acc, np.array([0, 1], np.int64))
    with pytest.raises(ValueError, match="b_rows must have one entry per warpgroup"):
        native.ARITH.mma_chain_f32([A], [B[:1]], sd, neg, acc, np.array([0], np.int64))


def test_bf16_operands_gather_and_widen_to_the_numpy_values():
    # take_bf16: every bf16 pattern at element offsets first[i] + index[j] (a matrix operand
    # in shared memory), the values NumPy's gather, shift and casts give
    A = native.ARITH
    src = np.random.default_rng(9).permutation(1 << 16).astype(np.uint16)
    first = np.array([0, 4096, 64, 60000], np.int64)
    index = np.random.default_rng(10).integers(0, 5536, 2048).astype(np.int64)
    out = np.empty((4, 2048), np.float64)
    A.take_bf16(src, first, index, out)
    raw = src[first[:, None] + index[None, :]]
    with np.errstate(invalid="ignore"):
        want = (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))
    every = np.empty((1, 1 << 16), np.float64)
    A.take_bf16(src, np.zeros(1, np.int64), np.argsort(src).astype(np.int64), every)
    with np.errstate(invalid="ignore"):
        want = (np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(every[0].view(np.uint64), want.view(np.uint64))
    # a swizzle's 16-byte chunks: runs of 8 consecutive offsets (read as one vector) among
    # chunks that are not runs (one breaks only at its last element), then a partial chunk
    rng = np.random.default_rng(11)
    chunks = [s + np.arange(8) for s in rng.integers(0, 5000, 40)]
    chunks += [rng.integers(0, 5536, 8) for _ in range(10)]
    chunks.append(np.array([7, 8, 9, 10, 11, 12, 13, 15]))
    chunks = [chunks[i] for i in rng.permutation(len(chunks))] + [np.array([3, 4, 5, 6, 7])]
    index = np.concatenate(chunks).astype(np.int64)
    out = np.empty((4, len(index)), np.float64)
    A.take_bf16(src, first, index, out)
    raw = src[first[:, None] + index[None, :]]
    with np.errstate(invalid="ignore"):
        want = (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))
    # stride mn: a transposed operand's index (k, mn), its runs down the columns, some broken,
    # and a last partial group of rows read one by one
    mn, kk = 24, 19
    natural = rng.integers(0, 5536, (mn, kk))
    natural[:, :16] = rng.integers(0, 5000, (mn, 1)) + np.arange(16)
    natural[3, 5] = 77
    index = np.ascontiguousarray(natural.T).reshape(-1).astype(np.int64)
    for stride in (mn, 1, 5):
        out = np.empty((4, len(index)), np.float64)
        A.take_bf16(src, first, index, out, stride)
        raw = src[first[:, None] + index[None, :]]
        with np.errstate(invalid="ignore"):
            want = (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        np.testing.assert_array_equal(out.view(np.uint64), want.view(np.uint64))
    with pytest.raises(ValueError, match="stride must be 1 or more"):
        A.take_bf16(src, first, index, out, 0)
    with pytest.raises(ValueError, match="an element offset lies outside src"):
        A.take_bf16(src, np.array([60001], np.int64), np.array([5535], np.int64), np.empty((1, 1)))
    with pytest.raises(ValueError, match="an element offset lies outside src"):
        A.take_bf16(src, np.array([0], np.int64), np.array([-1], np.int64), np.empty((1, 1)))
    with pytest.raises(ValueError, match="out must be"):
        A.take_bf16(src, first, index, np.empty((4, 2047)))


@pytest.mark.parametrize("entry,shape", [("hopper/attention-bf16", {"H": 2, "S": 128, "L": 192}),
                                         ("hopper/gemm-bf16", {"M": 128, "N": 128, "K": 128})])
def test_wgmma_operands_and_accumulators_moved_natively_give_the_numpy_bits(entry, shape, monkeypatch):
    # attention: A from registers (P, read natively), B MN-major (V), the accumulator rescaled in its
    # registers between two wgmma groups (read back as a tile); the GEMM: both operands from
    # descriptors. NaNs and infinities among the inputs. The native gathers, widening and
    # register <-> tile moves against NumPy's, bit for bit
    from examples import proof
    from examples.library import get
    from jax_pyptx.interpret.machine import asyncregs
    from jax_pyptx.interpret.ops import smem_matrix, wgmma, wgmma_chain

    e = get(entry)
    k = e.kernel()
    ins = [np.array(x) for x in proof.make_inputs(e, k, shape)]
    ins[0].reshape(-1)[[3, 77]] = np.inf
    ins[-1].reshape(-1)[[5, 300]] = (np.nan, -np.inf)
    calls = {"take_bf16": 0, "regs_to_tile": 0, "tile_to_regs": 0, "bf16_to_f64": 0}
    real = native.ARITH

    class Counting:
        def __getattr__(self, name):
            fn = getattr(real, name)
            if name not in calls:
                return fn

            def counted(*a):
                calls[name] += 1
                return fn(*a)
            return counted
    mods = (smem_matrix, wgmma, wgmma_chain, asyncregs)
    for m in mods:
        monkeypatch.setattr(m, "ARITH", Counting())
    got = np.asarray(k.interpret(*ins)).view(np.uint16)
    assert calls["take_bf16"] and calls["tile_to_regs"]
    # attention's P: A's fragment registers into rows of bf16 pairs, widened (a run's at once:
    # wgmma_chain._a_native)
    assert bool(calls["regs_to_tile"]) == bool(calls["bf16_to_f64"]) == ("attention" in entry)
    for m in mods:
        monkeypatch.setattr(m, "ARITH", None)
    seen = dict(calls)
    want = np.asarray(k.interpret(*ins)).view(np.uint16)
    assert calls == seen and not np.isfinite(np.asarray(k.interpret(*ins), np.float32)).all()
    np.testing.assert_array_equal(got, want)


def test_register_block_moves_the_native_core_declines_take_the_numpy_path(monkeypatch):
    # regs_to_tile / tile_to_regs raising (an array they cannot take): the accumulator is read
    # and delivered through NumPy instead, with the same bits
    from examples import proof
    from examples.library import get
    from jax_pyptx.interpret.machine import asyncregs
    from jax_pyptx.interpret.ops import wgmma

    e = get("hopper/attention-bf16")
    k = e.kernel()
    ins = proof.make_inputs(e, k, {"H": 1, "S": 128, "L": 256})
    want = np.asarray(k.interpret(*ins)).view(np.uint16)
    tried = []

    class Refusing:
        def __getattr__(self, name):
            if name in ("regs_to_tile", "tile_to_regs"):
                def refuse(*a):
                    tried.append(name)
                    raise ValueError("not contiguous")
                return refuse
            return getattr(native.ARITH, name)
    monkeypatch.setattr(wgmma, "ARITH", Refusing())
    monkeypatch.setattr(asyncregs, "ARITH", Refusing())
    got = np.asarray(k.interpret(*ins)).view(np.uint16)
    assert {"regs_to_tile", "tile_to_regs"} <= set(tried)
    np.testing.assert_array_equal(got, want)


def test_a_register_block_moves_to_its_tile_and_back(loops):
    # regs_to_tile / tile_to_regs against NumPy's fancy indexing: 3 warps of a block of 4
    # registers whose lanes hold a permutation of each warp's 128-element tile (the vector
    # loops, scatters and gathers of whole warps, and the portable ones)
    A = native.ARITH
    rng = np.random.default_rng(11)
    k, N = 4, 200
    lanes = rng.permutation(32 * k).reshape(k, 32).astype(np.int64)
    slots = np.sort(rng.choice(N, 96, replace=False)).astype(np.int64)
    regs = [rng.integers(0, 2**32, N, dtype=np.uint32) for _ in range(k)]
    tile = np.empty((3, 32 * k), np.uint32)
    A.regs_to_tile(regs, slots, lanes, tile)
    i = np.arange(96)
    want = np.empty_like(tile)
    for j in range(k):
        want[i // 32, lanes[j, i % 32]] = regs[j][slots]
    np.testing.assert_array_equal(tile, want)
    back = [np.zeros(N, np.uint32) for _ in range(k)]       # (written in place)
    A.tile_to_regs(tile, lanes, slots, back)
    out = np.stack(back)
    np.testing.assert_array_equal(out[:, slots], np.stack(regs)[:, slots])
    assert not np.delete(out, slots, axis=1).any()
    with pytest.raises(ValueError, match="regs_to_tile: a slot lies outside the registers"):
        A.regs_to_tile([r[:150] for r in regs], slots, lanes, tile)
    with pytest.raises(ValueError, match="tile_to_regs: a lane's element lies outside its warp's tile"):
        A.tile_to_regs(tile, lanes + 1, slots, back)
    with pytest.raises(ValueError, match=r"tile_to_regs: lanes must be \(len\(regs\), 32\)"):
        A.tile_to_regs(tile, lanes, slots, back[:3])
    with pytest.raises(ValueError, match="tile_to_regs: a slot lies outside the registers"):
        A.tile_to_regs(tile, lanes, slots, [r[:int(slots.max())].copy() for r in back])
    with pytest.raises(ValueError, match="regs_to_tile: register 1 is not 1-D of 4-byte elements"):
        A.regs_to_tile([regs[0], regs[1].astype(np.uint64), regs[2], regs[3]], slots, lanes, tile)
    with pytest.raises(ValueError, match="regs_to_tile: lanes must be"):
        A.regs_to_tile(regs[:3], slots, lanes, tile)
    # a wgmma f32 accumulator's block (m64nNk16, N = 24: 12 registers) into runs of whole
    # warps' consecutive slots (a warpgroup's): the same values as the gather
    lanes = np.array([[((l // 4) + 8 * ((j // 2) % 2)) * 24 + 8 * (j // 4) + 2 * (l % 4) + j % 2
                       for l in range(32)] for j in range(12)], np.int64)
    tile = rng.integers(0, 2**32, (4, 16 * 24), dtype=np.uint64).astype(np.uint32)
    slots = np.concatenate([np.arange(32, 96), np.arange(160, 224)]).astype(np.int64)
    back = [np.zeros(N + 40, np.uint32) for _ in range(12)]
    A.tile_to_regs(tile, lanes, slots, back)
    want = tile[:, lanes].transpose(1, 0, 2).reshape(12, -1)       # (register, thread)
    np.testing.assert_array_equal(np.stack(back)[:, slots], want)
    again = np.zeros_like(tile)                                     # ... and back into a tile
    A.regs_to_tile(back, slots, lanes, again)
    np.testing.assert_array_equal(again, tile)


def test_bf16_operands_widen_to_the_numpy_values():
    # every bf16 bit pattern, in the layouts a matrix operand's gather gives (C order, a
    # transposed view, strided): the f64 values NumPy's shift and casts give, bit for bit
    from jax_pyptx.interpret.ops import smem_matrix as SM

    base = np.arange(1 << 16, dtype=np.uint16).reshape(8, 64, 128)
    for raw in (base, base.swapaxes(1, 2), base[:, ::2, ::3], base[::2].swapaxes(0, 2)):
        with np.errstate(invalid="ignore"):
            want = (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        got = SM.values(raw, "bf16")
        assert got.shape == raw.shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
