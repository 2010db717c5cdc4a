"""Floating-point instructions: IEEE rounding in every mode (including fma's single rounding),
subnormals with and without .ftz, .sat, canonical NaN results and the min/max NaN rules,
half / bfloat16 scalar and packed forms, and the approximate functions within their
documented error."""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx.interpret.snippet import run_snippet as R

f32 = np.float32
TINY = f32(2.0 ** -130)          # an f32 subnormal
CANON = 0x7FFFFFFF


def bits(x):
    return np.asarray(x, np.float32).view(np.uint32).tolist()


def run(body, out_t="f32", n=None, target=None, **ins):
    n = n or max(len(np.atleast_1d(v[1])) for v in ins.values())
    kw = {} if target is None else dict(target=target, version="8.8")
    return R(body, ins, {"d": out_t}, n=n, **kw)["d"]


def F(*xs):
    return ("f32", np.array(xs, np.float32))


def exact_round_f32(q: Fraction, mode="rn"):
    """Reference: correctly round an exact rational to f32."""
    x = float(q)                      # nearest double
    cands = sorted({np.float32(x), np.nextafter(np.float32(x), np.float32(np.inf)),
                    np.nextafter(np.float32(x), np.float32(-np.inf))}, key=float)
    below = max((c for c in cands if Fraction(float(c)) <= q), key=float)
    above = min((c for c in cands if Fraction(float(c)) >= q), key=float)
    if below == above:
        return below
    if mode == "rz":
        return below if q > 0 else above
    if mode == "rm":
        return below
    if mode == "rp":
        return above
    db, da = q - Fraction(float(below)), Fraction(float(above)) - q
    if db != da:
        return below if db < da else above
    return below if (int(np.float32(below).view(np.uint32)) & 1) == 0 else above


# ----------------------------------------------------------------------------- add/mul modes
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_f32_arith_rounding_modes(op, mode):
    rng = np.random.default_rng(hash((op, mode)) % 2 ** 32)
    a = (rng.standard_normal(64) * 10.0 ** rng.integers(-5, 5, 64)).astype(np.float32)
    b = (rng.standard_normal(64) * 10.0 ** rng.integers(-5, 5, 64)).astype(np.float32)
    a[:4] = [1.0, 1.0, -1.0, 3.0]
    b[:4] = [2.0 ** -24, 3 * 2.0 ** -24, -(2.0 ** -24), 1.0 / 3.0]
    got = run(f"{op}.{mode}.f32 %d, %a, %b;", a=("f32", a), b=("f32", b))
    f = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}[op]
    exp = [exact_round_f32(f(Fraction(float(x)), Fraction(float(y))), mode) for x, y in zip(a, b)]
    assert bits(got) == bits(exp)


def test_rounding_ties_to_even():
    got = run("add.rn.f32 %d, %a, %b;", a=F(1.0, 1.0 + 2 ** -23, -1.0), b=F(2 ** -24, 2 ** -24, -(2 ** -24)))
    assert bits(got) == bits([1.0, 1.0 + 2 ** -22, -1.0])


def test_fma_rounds_once():
    # a*b = 1 + 2^-24 exactly (a midpoint); the tiny c decides: one rounding gives 1 + 2^-23
    a, b, c = f32(24929.0), f32(673 * 2.0 ** -24), f32(2.0 ** -60)
    assert float(a) * float(b) == 1 + 2 ** -24
    got = run("fma.rn.f32 %d, %a, %b, %c;", a=F(a, a, 2.0), b=F(b, b, 3.0), c=F(c, -c, 1.0))
    assert bits(got) == bits([1 + 2 ** -23, 1.0, 7.0])
    for mode in ["rz", "rm", "rp"]:
        got = run(f"fma.{mode}.f32 %d, %a, %b, %c;", a=F(a, -a), b=F(b, b), c=F(c, -c))
        exp = [exact_round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)), mode),
               exact_round_f32(-Fraction(float(a)) * Fraction(float(b)) - Fraction(float(c)), mode)]
        assert bits(got) == bits(exp), mode


def test_fma_random_against_exact():
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(128).astype(np.float32) for _ in range(3))
    got = run("fma.rn.f32 %d, %a, %b, %c;", a=("f32", a), b=("f32", b), c=("f32", c))
    exp = [exact_round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) for x, y, z in zip(a, b, c)]
    assert bits(got) == bits(exp)


def test_fma_near_the_subnormal_range_against_exact():
    # sums below twice the least normal f32 (and midpoints there) take the exact error term
    rng = np.random.default_rng(12)
    a = (rng.standard_normal(128) * 2.0 ** -70).astype(np.float32)
    b = (rng.standard_normal(128) * 2.0 ** -60).astype(np.float32)
    c = (rng.standard_normal(128) * 2.0 ** -128).astype(np.float32)
    c[:8] = -(a[:8].astype(np.float64) * b[:8]).astype(np.float32)        # cancellations
    # a*b = (1 - 2^-46) 2^-150 and c an odd subnormal: the f64 sum rounds onto the midpoint
    # c + 2^-150, whose tie goes up; the exact sum lies below it and rounds down to c
    a[8], b[8], c[8] = (1 + 2.0 ** -23) * 2.0 ** -75, (1 - 2.0 ** -23) * 2.0 ** -75, (2 ** 22 + 1) * 2.0 ** -149
    got = run("fma.rn.f32 %d, %a, %b, %c;", a=("f32", a), b=("f32", b), c=("f32", c))
    exp = [exact_round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) for x, y, z in zip(a, b, c)]
    assert bits(got) == bits(exp)


def test_fma_signed_zero_and_mad():
    got = run("fma.rn.f32 %d, %a, %b, %c;", a=F(1.0, -0.0, 0.0), b=F(1.0, 1.0, 5.0), c=F(-1.0, -0.0, -0.0))
    assert bits(got) == bits([0.0, -0.0, 0.0])
    got = run("fma.rm.f32 %d, %a, %b, %c;", a=F(1.0), b=F(1.0), c=F(-1.0))
    assert bits(got) == bits([-0.0])
    got = run("mad.rn.f32 %d, %a, %b, %c;", a=F(2.0), b=F(3.0), c=F(1.0))
    assert got.tolist() == [7.0]


# ----------------------------------------------------------------------------- subnormals / ftz / sat / NaN
def test_subnormals_kept_without_ftz_flushed_with():
    got = run("add.f32 %d, %a, %b;", a=F(TINY, TINY), b=F(0.0, TINY))
    assert got.tolist() == [float(TINY), float(2 * TINY)]
    got = run("add.ftz.f32 %d, %a, %b;", a=F(TINY, -TINY, 1.0), b=F(0.0, -0.0, 0.0))
    assert bits(got) == bits([0.0, -0.0, 1.0])
    got = run("mul.ftz.f32 %d, %a, %b;", a=F(2.0 ** -100), b=F(2.0 ** -30))    # subnormal result flushed
    assert got.tolist() == [0.0]
    got = run("mul.f32 %d, %a, %b;", a=F(2.0 ** -100), b=F(2.0 ** -30))
    assert got.tolist() == [2.0 ** -130]


def test_sat():
    got = run("add.sat.f32 %d, %a, %b;", a=F(0.5, 2.0, -3.0, np.nan), b=F(0.25, 0.0, 0.0, 1.0))
    assert bits(got) == bits([0.75, 1.0, 0.0, 0.0])
    got = run("fma.rn.sat.f32 %d, %a, %b, %c;", a=F(-0.0), b=F(1.0), c=F(-0.0))
    assert bits(got) == bits([0.0])


def test_nan_results_are_canonical():
    payload = np.array([0x7FC00001, 0xFFC00123], np.uint32).view(np.float32)
    got = run("add.f32 %d, %a, %b;", a=("f32", payload), b=F(1.0, 1.0))
    assert bits(got) == [CANON, CANON]
    got = run("mul.f32 %d, %a, %b;", a=F(np.inf, 0.0), b=F(0.0, np.inf))
    assert bits(got) == [CANON, CANON]
    got = run("fma.rn.f32 %d, %a, %b, %c;", a=F(np.inf), b=F(1.0), c=F(-np.inf))
    assert bits(got) == [CANON]


def test_min_max_nan_and_signed_zero_rules():
    a = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 3.0], np.float32)
    b = np.array([2.0, np.nan, np.nan, 0.0, -0.0, -3.0], np.float32)
    got = run("min.f32 %d, %a, %b;", a=("f32", a), b=("f32", b))
    assert bits(got) == bits([2.0, 1.0, np.nan])[:2] + [CANON] + bits([-0.0, -0.0, -3.0])
    got = run("max.f32 %d, %a, %b;", a=("f32", a), b=("f32", b))
    assert bits(got) == bits([2.0, 1.0])[:2] + [CANON] + bits([0.0, 0.0, 3.0])
    got = run("max.NaN.f32 %d, %a, %b;", a=("f32", a), b=("f32", b))
    assert bits(got)[:3] == [CANON] * 3
    got = run("min.xorsign.abs.f32 %d, %a, %b;", a=F(-2.0, 3.0), b=F(1.0, -5.0))
    assert got.tolist() == [-1.0, -3.0]
    got = run("max.f32 %d, %a, %b, %c;", a=F(1.0), b=F(5.0), c=F(3.0), target="sm_100a")   # sm_100+
    assert got.tolist() == [5.0]



def test_min_max_without_nan_signed_zeros_and_infinities():
    """No NaN among the operands (min/max's fast path): -0 < +0 in every order, equal values,
    infinities, subnormals and values whose squares overflow give the rule's bits."""
    z = [0.0, -0.0]
    a = np.array(z + z + [-0.0, 1.5, -np.inf, np.inf, 3e38, -3e38, 2.0 ** -140, -2.0 ** -140, 7.0], np.float32)
    b = np.array(z + z[::-1] + [-0.0, 1.5, 0.0, -1.0, -3e38, 3e38, -2.0 ** -140, 2.0 ** -140, -0.0], np.float32)
    a[:2], b[:2] = [0.0, -0.0], [0.0, -0.0]
    got = run("min.f32 %d, %a, %b;", a=("f32", a), b=("f32", b))
    assert bits(got) == bits([0.0, -0.0, -0.0, -0.0, -0.0, 1.5, -np.inf, -1.0, -3e38, -3e38,
                              -2.0 ** -140, -2.0 ** -140, -0.0])
    got = run("max.f32 %d, %a, %b;", a=("f32", a), b=("f32", b))
    assert bits(got) == bits([0.0, -0.0, 0.0, 0.0, -0.0, 1.5, 0.0, np.inf, 3e38, 3e38,
                              2.0 ** -140, 2.0 ** -140, 7.0])
    # with a NaN elsewhere in the vector the same lanes give the same bits
    a2, b2 = np.append(a, np.nan).astype(np.float32), np.append(b, 1.0).astype(np.float32)
    assert bits(run("max.f32 %d, %a, %b;", a=("f32", a2), b=("f32", b2)))[:-1] == bits(got)

def test_abs_neg_are_sign_bit_operations():
    got = run("neg.f32 %d, %a;", a=F(0.0, -1.5, np.inf))
    assert bits(got) == bits([-0.0, 1.5, -np.inf])
    got = run("abs.f32 %d, %a;", a=F(-0.0, -7.0))
    assert bits(got) == bits([0.0, 7.0])
    got = run("neg.f64 %d, %a;", "f64", a=("f64", np.array([1.0, -0.0])))
    assert got.tolist() == [-1.0, 0.0]


# ----------------------------------------------------------------------------- div / rcp / sqrt
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_div_and_sqrt_modes(mode):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    got = run(f"div.{mode}.f32 %d, %a, %b;", a=("f32", a), b=("f32", b))
    assert bits(got) == bits([exact_round_f32(Fraction(float(x)) / Fraction(float(y)), mode) for x, y in zip(a, b)])
    got = run(f"rcp.{mode}.f32 %d, %a;", a=("f32", b))
    assert bits(got) == bits([exact_round_f32(1 / Fraction(float(y)), mode) for y in b])
    pos = np.abs(a)
    got = run(f"sqrt.{mode}.f32 %d, %a;", a=("f32", pos))
    for x, g in zip(pos, got):
        lo = Fraction(float(np.nextafter(g, f32(-np.inf)))) ** 2
        hi = Fraction(float(np.nextafter(g, f32(np.inf)))) ** 2
        assert lo < Fraction(float(x)) < hi       # within one ulp on each side
        if mode == "rz" or mode == "rm":
            assert Fraction(float(g)) ** 2 <= Fraction(float(x))
        if mode == "rp":
            assert Fraction(float(g)) ** 2 >= Fraction(float(x))


def test_div_special_cases():
    got = run("div.rn.f32 %d, %a, %b;", a=F(1.0, 0.0, -1.0, np.inf), b=F(0.0, 0.0, 0.0, np.inf))
    assert bits(got) == bits([np.inf]) + [CANON] + bits([-np.inf]) + [CANON]
    got = run("div.approx.f32 %d, %a, %b;", a=F(1.0, 6.0, np.inf), b=F(2.0 ** 127, 3.0, 2.0 ** 127))
    assert bits(got)[:2] == bits([0.0, 2.0]) and bits(got)[2] == CANON
    got = run("div.full.f32 %d, %a, %b;", a=F(1.0), b=F(3.0))
    assert abs(float(got[0]) - 1 / 3) <= 2 * 2 ** -24


def test_approximate_functions_within_documented_error():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(256) * 4).astype(np.float32)
    x64 = x.astype(np.float64)
    ax = np.abs(x) + 0.01
    got = run("ex2.approx.f32 %d, %a;", a=("f32", x))
    np.testing.assert_allclose(got, np.exp2(x64), rtol=2 ** -22.5)
    got = run("lg2.approx.f32 %d, %a;", a=("f32", ax))
    np.testing.assert_allclose(got, np.log2(ax.astype(np.float64)), atol=2 ** -22, rtol=2 ** -22)
    got = run("sin.approx.f32 %d, %a;", a=("f32", x))
    np.testing.assert_allclose(got, np.sin(x64), atol=2 ** -20.9)
    got = run("cos.approx.f32 %d, %a;", a=("f32", x))
    np.testing.assert_allclose(got, np.cos(x64), atol=2 ** -20.9)
    got = run("rsqrt.approx.f32 %d, %a;", a=("f32", ax))
    np.testing.assert_allclose(got, 1 / np.sqrt(ax.astype(np.float64)), rtol=2 ** -22.9)
    got = run("rcp.approx.ftz.f32 %d, %a;", a=("f32", x))
    np.testing.assert_allclose(got, 1 / x64, rtol=2 ** -23)
    got = run("tanh.approx.f32 %d, %a;", a=("f32", x))
    np.testing.assert_allclose(got, np.tanh(x64), rtol=2 ** -10.987, atol=1e-30)
    got = run("sqrt.approx.f32 %d, %a;", a=("f32", ax))
    np.testing.assert_allclose(got, np.sqrt(ax.astype(np.float64)), rtol=2 ** -23)


def test_approximate_special_values():
    got = run("ex2.approx.f32 %d, %a;", a=F(-np.inf, np.inf, 0.0))
    assert got.tolist() == [0.0, np.inf, 1.0]
    got = run("lg2.approx.f32 %d, %a;", a=F(0.0, -1.0, np.inf, 1.0))
    assert got[0] == -np.inf and bits(got)[1] == CANON and got[2] == np.inf and got[3] == 0.0
    got = run("rsqrt.approx.f32 %d, %a;", a=F(0.0, -0.0, np.inf, -1.0))
    assert got[0] == np.inf and got[1] == -np.inf and got[2] == 0.0 and bits(got)[3] == CANON
    got = run("sin.approx.f32 %d, %a;", a=F(np.inf))
    assert bits(got) == [CANON]


# ----------------------------------------------------------------------------- f64
def test_f64_ops():
    rng = np.random.default_rng(4)
    a, b, c = (rng.standard_normal(32) for _ in range(3))
    got = R("fma.rn.f64 %x, %a, %b, %c; add.rz.f64 %y, %a, %b; div.rn.f64 %z, %a, %b; sqrt.rn.f64 %w, %c;",
            {"a": ("f64", a), "b": ("f64", b), "c": ("f64", np.abs(c))},
            {"x": "f64", "y": "f64", "z": "f64", "w": "f64"}, n=32, decls=".reg .f64 %x, %y, %z, %w;")
    for i in range(32):
        ex = Fraction(a[i]) * Fraction(b[i]) + Fraction(abs(c[i]))
        assert got["x"][i] == float(ex) or abs(Fraction(got["x"][i]) - ex) <= abs(Fraction(float(ex)) - ex)
        s = Fraction(a[i]) + Fraction(b[i])
        assert abs(Fraction(got["y"][i])) <= abs(s) and abs(s - Fraction(got["y"][i])) < Fraction(2.0 ** -50) * max(abs(s), 1)
    np.testing.assert_array_equal(got["z"], a / b)
    np.testing.assert_array_equal(got["w"], np.sqrt(np.abs(c)))


# ----------------------------------------------------------------------------- half / bfloat16
def h2(lo, hi, dt=np.float16):
    lo = np.asarray(lo, dt).view(np.uint16).astype(np.uint32)
    hi = np.asarray(hi, dt).view(np.uint16).astype(np.uint32)
    return lo | (hi << 16)


def un2(v, dt=np.float16):
    v = np.asarray(v, np.uint32)
    return (v & 0xFFFF).astype(np.uint16).view(dt), (v >> 16).astype(np.uint16).view(dt)


def _h(x):
    with np.errstate(over="ignore"):
        return x.astype(np.float16)


def test_f16_scalar_and_packed():
    a = np.array([1.0, 65504.0, 0.1, -2.0], np.float16)
    b = np.array([2 ** -11, 65504.0, 0.2, 2.0], np.float16)
    got = run("add.f16 %d, %a, %b;", "f16", a=("f16", a), b=("f16", b))
    np.testing.assert_array_equal(got, _h(a.astype(np.float64) + b))   # 1 + 2^-11 ties to even
    got = run("add.f16x2 %d, %a, %b;", "b32", a=("b32", h2(a, b)), b=("b32", h2(b, a)))
    lo, hi = un2(got)
    np.testing.assert_array_equal(lo, _h(a.astype(np.float64) + b))
    np.testing.assert_array_equal(hi, lo)
    got = run("fma.rn.f16x2 %d, %a, %b, %c;", "b32", a=("b32", h2(a, a)), b=("b32", h2(b, b)), c=("b32", h2(a, b)))
    lo, hi = un2(got)
    np.testing.assert_array_equal(lo, _h(a.astype(np.float64) * b + a))
    np.testing.assert_array_equal(hi, _h(a.astype(np.float64) * b + b))
    got = run("mul.sat.f16 %d, %a, %b;", "f16", a=("f16", a), b=("f16", b))
    np.testing.assert_array_equal(got, np.clip((a.astype(np.float64) * b), 0, 1).astype(np.float16))
    got = run("neg.f16x2 %d, %a;", "b32", a=("b32", h2([1.0], [-0.0])))
    lo, hi = un2(got)
    assert bits(lo.astype(np.float32)) == bits([-1.0]) and not np.signbit(hi[0])


def test_f16_nan_canonical_and_minmax():
    nan = np.array([0x7E01], np.uint16).view(np.float16)
    got = run("add.f16 %d, %a, %b;", "b16", a=("f16", nan), b=("f16", np.array([1.0], np.float16)))
    assert got.tolist() == [0x7FFF]
    got = run("min.f16x2 %d, %a, %b;", "b32", a=("b32", h2([np.nan], [1.0])), b=("b32", h2([2.0], [np.nan])))
    lo, hi = un2(got)
    assert (float(lo[0]), float(hi[0])) == (2.0, 1.0)


def test_bf16_ops():
    bf = ml_dtypes.bfloat16
    a = np.array([1.0, 3.0, -2.5, 100.0], bf)
    b = np.array([2 ** -8, 1 / 3, 1.0, -100.0], bf)
    c = np.array([0.5, -1.0, 0.25, 1.0], bf)
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
    from jax_pyptx.interpret.state import fp
    got = run("fma.rn.bf16 %d, %a, %b, %c;", "bf16", a=("bf16", a), b=("bf16", b), c=("bf16", c))
    np.testing.assert_array_equal(got, fp.round_to(a64 * b64 + c64, fp.BF16).astype(bf))
    got = run("fma.rn.relu.bf16 %d, %a, %b, %c;", "bf16", a=("bf16", a), b=("bf16", b), c=("bf16", c))
    np.testing.assert_array_equal(got, np.maximum(fp.round_to(a64 * b64 + c64, fp.BF16), 0).astype(bf))
    got = run("mul.rn.bf16x2 %d, %a, %b;", "b32", a=("b32", h2(a, c, bf)), b=("b32", h2(b, b, bf)))
    lo, hi = un2(got, bf)
    np.testing.assert_array_equal(lo, fp.round_to(a64 * b64, fp.BF16).astype(bf))
    np.testing.assert_array_equal(hi, fp.round_to(c64 * b64, fp.BF16).astype(bf))


# ----------------------------------------------------------------------------- compare / misc
def test_setp_float_all_comparisons():
    a = np.array([1.0, 2.0, np.nan, 1.0, -0.0], np.float32)
    b = np.array([2.0, 2.0, 1.0, np.nan, 0.0], np.float32)
    ops = {"eq": np.equal, "ne": lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y), "lt": np.less,
           "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
    for name, f in ops.items():
        for u in ("", "u"):
            with np.errstate(invalid="ignore"):
                exp = f(a, b)
                if u:
                    exp = exp | np.isnan(a) | np.isnan(b)
            got = R(f"setp.{name}{u}.f32 %p, %a, %b;", {"a": ("f32", a), "b": ("f32", b)}, {"p": "pred"}, n=5,
                    decls=".reg .pred %p;")["p"]
            assert got.tolist() == exp.tolist(), name + u
    got = R("setp.num.f32 %p, %a, %b; setp.nan.f32 %q, %a, %b;", {"a": ("f32", a), "b": ("f32", b)},
            {"p": "pred", "q": "pred"}, n=5, decls=".reg .pred %p, %q;")
    assert got["p"].tolist() == [True, True, False, False, True]
    assert got["q"].tolist() == [False, False, True, True, False]


def test_setp_packed_halves_and_ftz_compare():
    got = R("setp.lt.f16x2 %p|%q, %a, %b;", {"a": ("b32", h2([1.0], [3.0])), "b": ("b32", h2([2.0], [2.0]))},
            {"p": "pred", "q": "pred"}, n=1, decls=".reg .pred %p, %q;")
    assert (got["p"][0], got["q"][0]) == (True, False)
    got = R("setp.gt.ftz.f32 %p, %a, 0f00000000; setp.gt.f32 %q, %a, 0f00000000;", {"a": F(TINY)},
            {"p": "pred", "q": "pred"}, n=1, decls=".reg .pred %p, %q;")
    assert (got["p"][0], got["q"][0]) == (False, True)


def test_testp_and_copysign():
    a = np.array([1.0, np.inf, np.nan, TINY, 0.0], np.float32)
    for kind, exp in [("finite", [1, 0, 0, 1, 1]), ("infinite", [0, 1, 0, 0, 0]), ("number", [1, 1, 0, 1, 1]),
                      ("notanumber", [0, 0, 1, 0, 0]), ("normal", [1, 0, 0, 0, 0]), ("subnormal", [0, 0, 0, 1, 0])]:
        got = R(f"testp.{kind}.f32 %p, %a;", {"a": ("f32", a)}, {"p": "pred"}, n=5, decls=".reg .pred %p;")["p"]
        assert got.tolist() == [bool(v) for v in exp], kind
    got = run("copysign.f32 %d, %a, %b;", a=F(-1.0, 1.0), b=F(2.0, -3.0))
    assert got.tolist() == [-2.0, 3.0]
