"""cvt: every rounding mode, saturation, NaN and out-of-range inputs, and the narrow formats
(f16, bf16, tf32, e4m3, e5m2) including the packed x2 forms."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from jax_pyptx.interpret.snippet import run_snippet as R

f32 = np.float32
IMAX, IMIN = 2 ** 31 - 1, -2 ** 31


def cvt(body, src_t, vals, dst_t, n=None):
    vals = np.asarray(vals)
    return R(body, {"a": (src_t, vals)}, {"d": dst_t}, n=n or len(vals))["d"]


def test_float_to_int_rounding_modes():
    x = np.array([2.5, 3.5, -2.5, -3.7, 0.49999997, -0.5, 1e-30, 7.0], np.float32)
    assert cvt("cvt.rni.s32.f32 %d, %a;", "f32", x, "s32").tolist() == [2, 4, -2, -4, 0, 0, 0, 7]
    assert cvt("cvt.rzi.s32.f32 %d, %a;", "f32", x, "s32").tolist() == [2, 3, -2, -3, 0, 0, 0, 7]
    assert cvt("cvt.rmi.s32.f32 %d, %a;", "f32", x, "s32").tolist() == [2, 3, -3, -4, 0, -1, 0, 7]
    assert cvt("cvt.rpi.s32.f32 %d, %a;", "f32", x, "s32").tolist() == [3, 4, -2, -3, 1, 0, 1, 7]


def test_float_to_int_saturates_and_nan_is_zero():
    x = np.array([3e9, -3e9, np.nan, np.inf, -np.inf, 2147483520.0], np.float32)
    assert cvt("cvt.rzi.s32.f32 %d, %a;", "f32", x, "s32").tolist() == [IMAX, IMIN, 0, IMAX, IMIN, 2147483520]
    assert cvt("cvt.rzi.u32.f32 %d, %a;", "f32", x, "u32").tolist() == [3000000000, 0, 0, 2 ** 32 - 1, 0, 2147483520]
    assert cvt("cvt.rni.u8.f32 %d, %a;", "f32", np.array([300.0, -5.0, 254.5, 255.5], np.float32), "u16").tolist() == [255, 0, 254, 255]
    d = np.array([2.0 ** 63, -2.0 ** 63, 2.0 ** 64, -1.0, 1e300, np.nan])
    assert cvt("cvt.rzi.s64.f64 %d, %a;", "f64", d, "s64").tolist() == [2 ** 63 - 1, -2 ** 63, 2 ** 63 - 1, -1, 2 ** 63 - 1, 0]
    assert cvt("cvt.rzi.u64.f64 %d, %a;", "f64", d, "u64").tolist() == [2 ** 63, 0, 2 ** 64 - 1, 0, 2 ** 64 - 1, 0]


def test_int_to_float_rounding_modes():
    v = np.array([2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 1), 7], np.int32)
    assert cvt("cvt.rn.f32.s32 %d, %a;", "s32", v, "f32").tolist() == [2 ** 24, 2 ** 24 + 4, -(2 ** 24), 7]
    assert cvt("cvt.rz.f32.s32 %d, %a;", "s32", v, "f32").tolist() == [2 ** 24, 2 ** 24 + 2, -(2 ** 24), 7]
    assert cvt("cvt.rm.f32.s32 %d, %a;", "s32", v, "f32").tolist() == [2 ** 24, 2 ** 24 + 2, -(2 ** 24 + 2), 7]
    assert cvt("cvt.rp.f32.s32 %d, %a;", "s32", v, "f32").tolist() == [2 ** 24 + 2, 2 ** 24 + 4, -(2 ** 24), 7]
    u = [2 ** 64 - 1, 2 ** 53 + 1, 2 ** 63 + 2 ** 39 + 1]
    assert cvt("cvt.rn.f32.u64 %d, %a;", "u64", np.array(u, np.uint64), "f32").tolist() == [2.0 ** 64, 2.0 ** 53, 2.0 ** 63 + 2 ** 40]
    assert cvt("cvt.rz.f64.u64 %d, %a;", "u64", np.array(u, np.uint64), "f64").tolist() == [2.0 ** 64 - 2048, 2.0 ** 53, 2.0 ** 63 + 2 ** 39]
    assert cvt("cvt.rp.f64.s64 %d, %a;", "s64", np.array([2 ** 53 + 1, -(2 ** 53 + 1)], np.int64), "f64").tolist() == [2.0 ** 53 + 2, -(2.0 ** 53)]
    assert cvt("cvt.rn.f16.s32 %d, %a;", "s32", np.array([2049, 70000, -3], np.int32), "f16").tolist() == [2048.0, np.inf, -3.0]


def test_f32_to_f16_all_modes_subnormal_overflow_nan():
    x = np.array([1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 65519.0, 65520.0, 1e6, -1e6, 2.0 ** -25, 3 * 2.0 ** -26, np.nan, -0.0],
                 np.float32)
    rn = cvt("cvt.rn.f16.f32 %d, %a;", "f32", x, "f16")
    assert rn[:8].tolist() == [1.0, 1.0 + 2 ** -9, 65504.0, np.inf, np.inf, -np.inf, 0.0, 2.0 ** -24]
    assert rn.view(np.uint16)[8] == 0x7FFF and rn.view(np.uint16)[9] == 0x8000
    rz = cvt("cvt.rz.f16.f32 %d, %a;", "f32", x, "f16")
    assert rz[:8].tolist() == [1.0, 1.0 + 2 ** -10, 65504.0, 65504.0, 65504.0, -65504.0, 0.0, 0.0]
    rm = cvt("cvt.rm.f16.f32 %d, %a;", "f32", x, "f16")
    assert rm[:8].tolist() == [1.0, 1.0 + 2 ** -10, 65504.0, 65504.0, 65504.0, -np.inf, 0.0, 0.0]
    rp = cvt("cvt.rp.f16.f32 %d, %a;", "f32", x, "f16")
    assert rp[:8].tolist() == [1.0 + 2 ** -10, 1.0 + 2 ** -9, np.inf, np.inf, np.inf, -65504.0, 2.0 ** -24, 2.0 ** -24]


def test_f32_to_bf16_and_back():
    x = np.array([1.00390625, 1.01171875, -1.00390625, 3.4e38, 1e-40, np.nan], np.float32)
    got = cvt("cvt.rn.bf16.f32 %d, %a;", "f32", x, "bf16")
    np.testing.assert_array_equal(got[:5].astype(np.float64), x[:5].astype(ml_dtypes.bfloat16).astype(np.float64))
    assert got.view(np.uint16)[5] == 0x7FFF
    got = cvt("cvt.rz.bf16.f32 %d, %a;", "f32", x, "bf16")
    assert got[:3].astype(np.float64).tolist() == [1.0, 1.0078125, -1.0]
    got = cvt("cvt.rn.relu.bf16.f32 %d, %a;", "f32", np.array([-1.0, 2.0, np.nan], np.float32), "bf16")
    assert got[:2].astype(np.float64).tolist() == [0.0, 2.0] and np.isnan(got[2].astype(np.float64))
    back = cvt("cvt.f32.bf16 %d, %a;", "bf16", np.array([1.5, -2.25], ml_dtypes.bfloat16), "f32")
    assert back.tolist() == [1.5, -2.25]
    back = cvt("cvt.f32.f16 %d, %a;", "f16", np.array([2.0 ** -24, 65504.0], np.float16), "f32")
    assert back.tolist() == [2.0 ** -24, 65504.0]


def test_f64_to_f32_modes_and_float_rounding_to_integral():
    d = np.array([1.0 + 2 ** -24 + 2 ** -40, -(1.0 + 2 ** -24 + 2 ** -40), 1e-45, 1e39])
    assert cvt("cvt.rn.f32.f64 %d, %a;", "f64", d, "f32").tolist() == [1.0 + 2 ** -23, -(1.0 + 2 ** -23), float(f32(1.4e-45)), np.inf]
    assert cvt("cvt.rz.f32.f64 %d, %a;", "f64", d, "f32").tolist() == [1.0, -1.0, 0.0, float(np.finfo(np.float32).max)]
    assert cvt("cvt.rn.ftz.f32.f64 %d, %a;", "f64", d, "f32").tolist()[2] == 0.0
    x = np.array([2.5, -2.5, 1.7, -1.2], np.float32)
    assert cvt("cvt.rni.f32.f32 %d, %a;", "f32", x, "f32").tolist() == [2.0, -2.0, 2.0, -1.0]
    assert cvt("cvt.rmi.f32.f32 %d, %a;", "f32", x, "f32").tolist() == [2.0, -3.0, 1.0, -2.0]
    assert cvt("cvt.rpi.f32.f32 %d, %a;", "f32", x, "f32").tolist() == [3.0, -2.0, 2.0, -1.0]
    assert cvt("cvt.rzi.f32.f32 %d, %a;", "f32", x, "f32").tolist() == [2.0, -2.0, 1.0, -1.0]
    assert cvt("cvt.sat.f32.f32 %d, %a;", "f32", np.array([1.5, -0.5, 0.25, np.nan], np.float32), "f32").tolist() == [1.0, 0.0, 0.25, 0.0]


def test_int_to_int():
    v = np.array([300, -300, 127, -129], np.int32)
    assert cvt("cvt.s8.s32 %d, %a;", "s32", v, "s16").tolist() == [44, -44, 127, 127]
    assert cvt("cvt.sat.s8.s32 %d, %a;", "s32", v, "s16").tolist() == [127, -128, 127, -128]
    assert cvt("cvt.sat.u16.s32 %d, %a;", "s32", np.array([70000, -1, 5], np.int32), "u16").tolist() == [65535, 0, 5]
    assert cvt("cvt.s64.s32 %d, %a;", "s32", np.array([-1, 5], np.int32), "s64").tolist() == [-1, 5]
    assert cvt("cvt.u64.u32 %d, %a;", "u32", np.array([2 ** 32 - 1], np.uint32), "u64").tolist() == [2 ** 32 - 1]
    assert cvt("cvt.sat.u32.s64 %d, %a;", "s64", np.array([-5, 2 ** 40, 7], np.int64), "u32").tolist() == [0, 2 ** 32 - 1, 7]
    assert cvt("cvt.sat.s32.u32 %d, %a;", "u32", np.array([2 ** 32 - 1, 5], np.uint32), "s32").tolist() == [IMAX, 5]
    assert cvt("cvt.u32.s8 %d, %a;", "s8", np.array([-1, 5], np.int8), "u32").tolist() == [2 ** 32 - 1, 5]


def test_packed_f16x2_and_bf16x2_from_f32_pairs():
    out = R("cvt.rn.f16x2.f32 %d, %a, %b; cvt.rn.relu.bf16x2.f32 %e, %a, %b;",
            {"a": ("f32", np.array([1.5, -2.0], np.float32)), "b": ("f32", np.array([-0.25, 1e6], np.float32))},
            {"d": "b32", "e": "b32"}, n=2, decls=".reg .b32 %e;")
    d = out["d"]
    hi = (d >> 16).astype(np.uint16).view(np.float16)
    lo = (d & 0xFFFF).astype(np.uint16).view(np.float16)
    assert hi.tolist() == [1.5, -2.0] and lo.tolist() == [-0.25, np.inf]
    e = out["e"]
    hi = (e >> 16).astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    lo = (e & 0xFFFF).astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    assert hi.tolist() == [1.5, 0.0] and lo.tolist() == [0.0, float(np.float32(1e6).astype(ml_dtypes.bfloat16))]


def test_fp8_conversions():
    a = np.array([1.0, 500.0, np.nan, -0.3], np.float32)
    b = np.array([0.0625, -1e9, 17.0, 240.0], np.float32)
    out = R("cvt.rn.satfinite.e4m3x2.f32 %d, %a, %b; cvt.rn.satfinite.e5m2x2.f32 %e, %a, %b;",
            {"a": ("f32", a), "b": ("f32", b)}, {"d": "b16", "e": "b16"}, n=4, decls=".reg .b16 %e;")
    e4 = out["d"]
    hi = (e4 >> 8).astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    lo = (e4 & 0xFF).astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    assert hi[[0, 1, 3]].tolist() == [1.0, 448.0, float(np.float32(-0.3).astype(ml_dtypes.float8_e4m3fn))]
    assert np.isnan(hi[2]) and (e4[2] >> 8) & 0x7F == 0x7F
    assert lo.tolist() == [0.0625, -448.0, 16.0, 240.0]
    e5 = out["e"]
    hi = (e5 >> 8).astype(np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float64)
    lo = (e5 & 0xFF).astype(np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float64)
    assert hi[[0, 1]].tolist() == [1.0, 512.0] and lo[[0, 1, 2, 3]].tolist() == [0.0625, -57344.0, 16.0, 256.0]
    # back to f16x2: exact
    got = R("cvt.rn.f16x2.e4m3x2 %d, %a;", {"a": ("b16", np.array([0x3840], np.uint16))}, {"d": "b32"}, n=1)["d"]
    assert ((got >> 16).astype(np.uint16).view(np.float16)[0], (got & 0xFFFF).astype(np.uint16).view(np.float16)[0]) == (1.0, 2.0)


def test_tf32_rna():
    x = np.array([1.0 + 2 ** -11, 1.0 + 2 ** -12, -(1.0 + 2 ** -11), 1.0 + 3 * 2 ** -12], np.float32)
    got = cvt("cvt.rna.tf32.f32 %d, %a;", "f32", x, "b32")
    assert (got & 0x1FFF).tolist() == [0, 0, 0, 0]
    vals = got.view(np.float32).tolist()
    assert vals == [1.0 + 2 ** -10, 1.0, -(1.0 + 2 ** -10), 1.0 + 2 ** -10]


def test_cvt_pack_sat():
    got = R("cvt.pack.sat.s8.s32.b32 %d, %a, %b, %c;",
            {"a": ("s32", [300]), "b": ("s32", [-5]), "c": ("b32", [0x1234])}, {"d": "b32"}, n=1)["d"]
    assert got.tolist() == [(0x1234 << 16) | (0x7F << 8) | 0xFB]


def _half_edges():
    """f32 bit patterns around every bf16/f16 rounding edge: ties (even and odd), one ulp off,
    subnormals (f32 and f16), the largest finite values, overflow to inf, inf, NaNs, -0."""
    exps = np.arange(256, dtype=np.uint32) << np.uint32(23)
    mants = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2001, 0x3000, 0x7FFF,
                      0x8000, 0x8001, 0x17FFF, 0x18000, 0x18001, 0x400000, 0x7F7FFF, 0x7F8000,
                      0x7FE000, 0x7FEFFF, 0x7FF000, 0x7FF001, 0x7FFFFF], np.uint32)
    edges = (exps[:, None] | mants[None, :]).ravel()
    rng = np.random.default_rng(7)
    rand = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    f16_sub = np.arange(0, 0x39000000, 9973, dtype=np.uint32)    # |x| < 2^-13: f16 subnormals
    allb = np.concatenate([edges, rand, f16_sub])
    return np.concatenate([allb, allb | np.uint32(0x80000000)])


def _ref_half_bits(bits, name):
    from jax_pyptx.interpret.ops.convert import _enc_canon
    from jax_pyptx.interpret.state import fp
    fmt = fp.FORMATS[name]
    with np.errstate(all="ignore"):
        return _enc_canon(fp.round_to(bits.view(np.float32).astype(np.float64), fmt, "rn"), fmt).view(np.uint16)


def test_f32_to_bf16_f16_rn_fast_path_matches_round_to():
    """cvt.rn.{bf16,f16}{x2}.f32 take an exact bit-pattern path: same bits as the general
    float64 rounding (round_to + canonical NaN) on every edge case."""
    from jax_pyptx.interpret.state import fp
    bits = _half_edges()
    n = 1024
    for name in ("bf16", "f16"):
        ref = _ref_half_bits(bits, name)
        assert np.array_equal(fp.HALF_RN[name](bits.view(np.float32)), ref)
        edges = np.concatenate([bits[:256 * 23], bits[len(bits) // 2:len(bits) // 2 + 256 * 23]])
        for i in range(0, len(edges), n):                       # the edge cases, both signs
            sel = edges[i:i + n]
            one = cvt(f"cvt.rn.{name}.f32 %d, %a;", "f32", sel.view(np.float32), "b16")
            assert np.array_equal(np.asarray(one).view(np.uint16), _ref_half_bits(sel, name))
            hi, lo = sel, sel[::-1].copy()
            out = R(f"cvt.rn.{name}x2.f32 %d, %a, %b;", {"a": ("f32", hi.view(np.float32)),
                                                         "b": ("f32", lo.view(np.float32))},
                    {"d": "b32"}, n=len(sel))["d"]
            out = np.asarray(out).view(np.uint32)
            assert np.array_equal(out >> 16, _ref_half_bits(hi, name).astype(np.uint32))
            assert np.array_equal(out & 0xFFFF, _ref_half_bits(lo, name).astype(np.uint32))
    # the packed bf16x2 word rounds both halves in the f32 bit patterns: every edge, NaN in either half
    ref = _ref_half_bits(bits, "bf16").astype(np.uint32)
    rev = bits[::-1].copy()
    word = fp.bf16x2_rn_bits(bits.view(np.float32), rev.view(np.float32))
    assert np.array_equal(word, (ref << np.uint32(16)) | ref[::-1])
    assert fp.HALF_RN["bf16"](np.array([np.nan, -np.nan, 3.4e38, -0.0], np.float32)).tolist() == \
        [0x7FFF, 0x7FFF, 0x7F80, 0x8000]
    assert fp.HALF_RN["f16"](np.array([65520.0, 65519.996, 2.0 ** -25, -2.0 ** -25 * 3], np.float32)).tolist() == \
        [0x7C00, 0x7BFF, 0x0000, 0x8002]
