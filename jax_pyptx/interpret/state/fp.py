"""Floating-point formats and exact rounding for the interpreter.

Every narrowing conversion the PTX ISA defines (f64 -> f32/f16/bf16/tf32/fp8/fp6/fp4 with
``.rn .rna .rz .rm .rp``, ``.satfinite``, ``.relu``) goes through ``round_to``: the value is
given as a float64 ``x`` plus an optional exact residual ``resid`` (the true value is
``x + resid`` with ``|resid|`` below half an ulp of ``x``), so results are rounded once, as the
hardware does, even when the operation was computed in float64 first.
"""
from __future__ import annotations

import numpy as np

try:
    import ml_dtypes as _mld
except ImportError:  # pragma: no cover
    _mld = None


class Fmt:
    """A binary floating-point format: precision ``p`` (with the hidden bit), minimum normal
    exponent ``emin``, largest finite value, whether it has infinities and NaN, the NumPy
    dtype that holds it and its bit width."""

    __slots__ = ("name", "p", "emin", "maxf", "has_inf", "has_nan", "dtype", "bits", "udtype")

    def __init__(self, name, p, emin, maxf, has_inf, has_nan, dtype, bits):
        self.name, self.p, self.emin, self.maxf = name, p, emin, float(maxf)
        self.has_inf, self.has_nan = has_inf, has_nan
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.bits = bits
        self.udtype = np.dtype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}.get(bits, np.uint8))

    def __repr__(self):
        return f"Fmt({self.name})"


def _md(name):
    return getattr(_mld, name) if _mld is not None and hasattr(_mld, name) else None


F64 = Fmt("f64", 53, -1022, np.finfo(np.float64).max, True, True, np.float64, 64)
F32 = Fmt("f32", 24, -126, np.finfo(np.float32).max, True, True, np.float32, 32)
F16 = Fmt("f16", 11, -14, 65504.0, True, True, np.float16, 16)
BF16 = Fmt("bf16", 8, -126, (2 - 2.0 ** -7) * 2.0 ** 127, True, True, _md("bfloat16"), 16)
TF32 = Fmt("tf32", 11, -126, (2 - 2.0 ** -10) * 2.0 ** 127, True, True, np.float32, 32)
E4M3 = Fmt("e4m3", 4, -6, 448.0, False, True, _md("float8_e4m3fn"), 8)
E5M2 = Fmt("e5m2", 3, -14, 57344.0, True, True, _md("float8_e5m2"), 8)
E2M3 = Fmt("e2m3", 4, 0, 7.5, False, False, _md("float6_e2m3fn"), 6)
E3M2 = Fmt("e3m2", 3, -2, 28.0, False, False, _md("float6_e3m2fn"), 6)
E2M1 = Fmt("e2m1", 2, 0, 6.0, False, False, _md("float4_e2m1fn"), 4)
UE8M0 = Fmt("ue8m0", 1, -127, 2.0 ** 127, False, True, _md("float8_e8m0fnu"), 8)

FORMATS = {f.name: f for f in (F64, F32, F16, BF16, TF32, E4M3, E5M2, E2M3, E3M2, E2M1, UE8M0)}

#: canonical NaN bit patterns the GPU produces
CANON_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF, "f64": 0x7FFFFFFFFFFFFFFF,
             "tf32": 0x7FFFFFFF}

_F32_MIN_NORMAL = 2.0 ** -126
_SMALL_BITS = np.float64(2 * _F32_MIN_NORMAL).view(np.uint64)   # (as f64 bits)


def round_to(x, fmt: Fmt, mode: str = "rn", resid=None, sat: bool = False, relu: bool = False):
    """Round float64 ``x`` (+ exact ``resid``) to ``fmt`` under ``mode``; returns float64 values
    that are exactly representable in ``fmt`` (or +-inf / NaN).

    ``sat`` is ``.satfinite``: infinities and overflow clamp to the largest finite value (NaN
    stays NaN, or becomes max for formats without NaN). ``relu`` clamps negatives (and -0) to +0;
    NaN stays NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    if fmt is F64:
        return _round_f64(x, mode, resid)
    shape = x.shape
    x = x.reshape(-1)
    r = None if resid is None else np.broadcast_to(np.asarray(resid, np.float64), shape).reshape(-1)
    sign = np.signbit(x)
    ax = np.abs(x)
    finite = np.isfinite(x)
    nz = finite & (ax != 0)
    with np.errstate(all="ignore"):
        _, e = np.frexp(ax)
        E = np.maximum(e.astype(np.int64) - 1, fmt.emin)
        q = E - (fmt.p - 1)
        a = np.ldexp(ax, (-q).astype(np.int32))          # exact scaling
        fl = np.floor(a)
        frac = a - fl
        if r is None:
            rs = np.zeros_like(ax)
        else:
            rs = np.where(sign, -r, r)                    # residual in the magnitude direction
        if mode in ("rn", "rni"):
            odd = np.fmod(fl, 2.0) == 1.0
            up = (frac > 0.5) | ((frac == 0.5) & ((rs > 0) | ((rs == 0) & odd)))
            res = fl + up
        elif mode in ("rna",):
            up = (frac > 0.5) | ((frac == 0.5) & (rs >= 0))
            res = fl + up
        else:
            toward = _toward_zero(mode, sign)
            # magnitude truncation of the exact value
            down_edge = (frac == 0) & (rs < 0)
            trunc = np.where(down_edge, fl - np.where((fl == 2.0 ** (fmt.p - 1)) & (E > fmt.emin), 0.5, 1.0), fl)
            away = np.where(frac > 0, fl + 1, fl + ((frac == 0) & (rs > 0)))
            res = np.where(toward, trunc, away)
        out = np.ldexp(res, q.astype(np.int32))
        out = np.where(sign, -out, out)
        # overflow
        over = nz & (np.abs(out) > fmt.maxf)
        if over.any():
            out = np.where(over, _overflow_value(mode, sign, fmt, sat), out)
        out = np.where(nz, out, x)                         # zeros, inf, nan unchanged so far
        inf = np.isinf(x)
        if inf.any():
            if sat:
                out = np.where(inf, np.where(sign, -fmt.maxf, fmt.maxf), out)
            elif not fmt.has_inf:
                out = np.where(inf, np.nan if fmt.has_nan else np.where(sign, -fmt.maxf, fmt.maxf), out)
        if not fmt.has_nan:
            nan = np.isnan(x)
            if nan.any():
                out = np.where(nan, fmt.maxf, out)
        if relu:
            out = np.where(np.isnan(out), out, np.maximum(out, 0.0))
            out = np.where(out == 0, 0.0, out)
    return out.reshape(shape)


def _toward_zero(mode, sign):
    if mode in ("rz", "rzi"):
        return np.ones_like(sign)
    if mode in ("rm", "rmi"):
        return ~sign
    if mode in ("rp", "rpi"):
        return sign
    raise ValueError(f"unknown rounding mode {mode!r}")


def _overflow_value(mode, sign, fmt, sat):
    big = fmt.maxf
    inf = np.inf if fmt.has_inf else (np.nan if fmt.has_nan else big)
    if sat:
        return np.where(sign, -big, big)
    if mode in ("rn", "rna", "rni"):
        return np.where(sign, -inf, inf)
    if mode in ("rz", "rzi"):
        return np.where(sign, -big, big)
    if mode in ("rm", "rmi"):
        return np.where(sign, -inf, big)
    return np.where(sign, -big, inf)      # rp


def _round_f64(x, mode, resid):
    """Directed rounding of an f64 result given its exact residual (RN needs nothing)."""
    if resid is None or mode in ("rn", "rni"):
        return x
    r = np.broadcast_to(np.asarray(resid, np.float64), x.shape)
    if mode == "rna":
        return x
    with np.errstate(all="ignore"):
        if mode in ("rz", "rzi"):
            adj = (r != 0) & ((r < 0) != (x < 0))   # exact value smaller in magnitude
            return np.where(adj & np.isfinite(x), np.nextafter(x, 0.0), x)
        if mode in ("rm", "rmi"):
            return np.where((r < 0) & np.isfinite(x), np.nextafter(x, -np.inf), x)
        if mode in ("rp", "rpi"):
            return np.where((r > 0) & np.isfinite(x), np.nextafter(x, np.inf), x)
    raise ValueError(mode)


def encode(vals, fmt: Fmt):
    """float64 values exactly representable in ``fmt`` -> unsigned bit patterns."""
    vals = np.asarray(vals, np.float64)
    if fmt is F32 or fmt is TF32:
        return vals.astype(np.float32).view(np.uint32)
    if fmt is F64:
        return vals.view(np.uint64)
    if fmt is F16:
        return vals.astype(np.float16).view(np.uint16)
    if fmt.bits in (8, 16) and fmt.dtype is not None:
        return vals.astype(np.float32).astype(fmt.dtype).view(fmt.udtype)
    # sub-byte formats: ml_dtypes stores them one per byte
    return vals.astype(np.float32).astype(fmt.dtype).view(np.uint8)


def decode(bits, fmt: Fmt):
    """Unsigned bit patterns of ``fmt`` -> float64 values."""
    bits = np.asarray(bits)
    if fmt is F32 or fmt is TF32:
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if fmt is F64:
        return bits.astype(np.uint64).view(np.float64)
    if fmt is F16:
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt.bits in (8, 16):
        return bits.astype(fmt.udtype).view(fmt.dtype).astype(np.float64)
    mask = (1 << fmt.bits) - 1
    return (bits.astype(np.uint8) & mask).view(fmt.dtype).astype(np.float64)


def _bf16_rn_bits(x):
    """float32 -> bf16 bits, nearest-even on the f32 bit pattern: bf16 has f32's exponent
    range, so subnormals, overflow to inf and -0 all fall out of the integer add."""
    b = x.view(np.uint32)
    r = ((b + (np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16)).astype(np.uint16)
    return _canon_half(x, r)


def _f16_rn_bits(x):
    """float32 -> f16 bits: NumPy's cast rounds once to nearest-even (subnormals, inf)."""
    with np.errstate(all="ignore"):
        r = x.astype(np.float16).view(np.uint16)
    return _canon_half(x, r)


def _canon_half(x, r):
    nan = x != x
    if np.count_nonzero(nan):
        r = np.where(nan, np.uint16(0x7FFF), r)
    return r


def bf16x2_rn_bits(a, b):
    """``cvt.rn.bf16x2.f32`` of float32 arrays ``a`` (upper half) and ``b`` (lower half), both
    (n,): the uint32 word of the halves ``_bf16_rn_bits`` gives, rounded in place in the f32 bit
    patterns (every NaN as the canonical 0x7FFF)."""
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    one, bias = np.uint32(1), np.uint32(0x7FFF)
    hi = (ua + (bias + ((ua >> np.uint32(16)) & one))) & np.uint32(0xFFFF0000)
    hi |= (ub + (bias + ((ub >> np.uint32(16)) & one))) >> np.uint32(16)
    na = a != a
    if np.count_nonzero(na):
        hi = np.where(na, (hi & np.uint32(0xFFFF)) | np.uint32(0x7FFF0000), hi)
    nb = b != b
    if np.count_nonzero(nb):
        hi = np.where(nb, (hi & np.uint32(0xFFFF0000)) | np.uint32(0x7FFF), hi)
    return hi


#: ``cvt.rn.{bf16,f16}.f32`` without ``.satfinite``/``.relu`` on a float32 array: the uint16
#: bit patterns ``encode(round_to(x, fmt))`` gives, every NaN as the canonical 0x7FFF
HALF_RN = {"bf16": _bf16_rn_bits, "f16": _f16_rn_bits}


# --------------------------------------------------------------------------- f32 helpers
def ftz32(a):
    """Flush f32 subnormals to sign-preserving zero (``.ftz``)."""
    a = np.asarray(a, np.float32)
    sub = np.abs(a) < np.float32(_F32_MIN_NORMAL)          # subnormals and zeros
    if np.count_nonzero(sub):
        sub &= a != 0
        if np.count_nonzero(sub):
            a = np.where(sub, np.copysign(np.float32(0), a), a)
    return a


def canon_nan(a, fmt_name="f32"):
    """Replace every NaN with the canonical NaN of the format (bit pattern)."""
    a = np.asarray(a)
    nan = np.isnan(a)
    if np.count_nonzero(nan):
        bits = a.view({4: np.uint32, 2: np.uint16, 8: np.uint64}[a.dtype.itemsize]).copy()
        bits[nan] = CANON_NAN[fmt_name]
        return bits.view(a.dtype)
    return a


def f64_to_f32_rn(s, err):
    """Round ``s + err`` (float64 sum with exact error term) to f32 with one rounding."""
    y = s.astype(np.float32)
    sb = s.view(np.uint64)
    # a double that lies exactly half-way between two f32 values (normal range): low 29 bits 1<<28
    mid = (sb & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)
    small = np.abs(s) < _F32_MIN_NORMAL * 2
    risky = (mid | small) & (err != 0)
    if risky.any():
        fix = round_to(s[risky], F32, "rn", err[risky])
        y = y.copy()
        y[risky] = fix.astype(np.float32)
    return y


def two_sum(a, b):
    """Exact float64 sum: s = fl(a+b), err = (a+b) - s."""
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
        err = np.where(np.isfinite(s), err, 0.0)
    return s, err


def fma_f32(a, b, c, mode="rn"):
    """Single-rounding f32 fma: a*b is exact in f64; the f64 sum is rounded to f32 directly
    unless it lies exactly on an f32 rounding boundary (or in the subnormal range), where the
    exact error term of the sum decides."""
    a32, b32, c32 = (np.asarray(v, np.float32) for v in (a, b, c))
    if mode == "rn" and not (a32.ndim or b32.ndim or c32.ndim):      # three scalars
        return fma_f32(a32.reshape(1), b32.reshape(1), c32.reshape(1))[0]
    with np.errstate(all="ignore"):
        p = np.multiply(a32, b32, dtype=np.float64)          # exact: 24 + 24 bits
        if mode == "rn":
            s = np.add(p, c32, out=p) if c32.ndim == 0 or c32.shape == p.shape else p + c32
            y = s.astype(np.float32)
            bits = s.view(np.uint64)
            t = bits & np.uint64(0x1FFFFFFF)
            risky = t == np.uint64(0x10000000)          # half-way between two f32 values
            np.bitwise_and(bits, np.uint64(0x7FFFFFFFFFFFFFFF), out=t)
            risky |= t < _SMALL_BITS                    # |s| < 2 * the least normal f32
            if np.count_nonzero(risky):
                a32, b32, c32 = np.broadcast_arrays(a32, b32, c32)
                sel = np.nonzero(risky.reshape(-1))[0]
                a32, b32, c32 = (v.reshape(-1)[sel] for v in (a32, b32, c32))
                s2, err = two_sum(np.multiply(a32, b32, dtype=np.float64), c32.astype(np.float64))
                y = np.array(y, np.float32, copy=True)
                y.reshape(-1)[sel] = f64_to_f32_rn(s2, err)
            return y
        c64 = c32.astype(np.float64)
        s, err = two_sum(p, c64)
        out = round_to(s, F32, mode, err).astype(np.float32)
        zero = (s == 0) & (err == 0)
        if zero.any():
            zs = np.where((np.signbit(p) & np.signbit(c64)), -0.0, -0.0 if mode == "rm" else 0.0)
            out = np.where(zero, zs.astype(np.float32), out)
        out = np.where(np.isnan(s), np.float32(np.nan), out)
    return out.astype(np.float32)


def fma_f64(a, b, c, mode="rn"):
    """Correctly rounded f64 fma via exact rational arithmetic (rarely used, slow path)."""
    from fractions import Fraction

    a = np.asarray(a, np.float64).ravel()
    b = np.broadcast_to(np.asarray(b, np.float64), a.shape).ravel()
    c = np.broadcast_to(np.asarray(c, np.float64), a.shape).ravel()
    out = np.empty(a.shape, np.float64)
    for i in range(a.size):
        x, y, z = float(a[i]), float(b[i]), float(c[i])
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            out[i] = x * y + z
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            p_neg = (x * y < 0) or (x * y == 0 and np.signbit(x) != np.signbit(y))
            out[i] = -0.0 if (p_neg and np.signbit(z)) or mode == "rm" else 0.0
            continue
        r = float(exact) if abs(exact) < Fraction(np.finfo(np.float64).max) * 2 else (
            np.inf if exact > 0 else -np.inf)
        if np.isfinite(r):
            d = exact - Fraction(r)
            r = float(_round_f64(np.array([r]), mode, np.array([float(np.sign(d))]))[0])
        out[i] = r
    return out


def directed_f32(y, cmp, mode):
    """Adjust RN f32 results ``y`` to a directed rounding mode.

    ``cmp`` is the sign of (y - exact) for each element (-1, 0, +1), computed exactly; 0 where
    the result is exact or the exact value is not finite.
    """
    if mode in ("rn", "rni", "rna"):
        return y
    y = np.asarray(y, np.float32)
    if mode in ("rz", "rzi"):
        go_down = (cmp > 0) & (y > 0)
        go_up = (cmp < 0) & (y < 0)
    elif mode in ("rm", "rmi"):
        go_down, go_up = cmp > 0, None
    elif mode in ("rp", "rpi"):
        go_down, go_up = None, cmp < 0
    else:
        raise ValueError(mode)
    if go_down is not None and go_down.any():
        y = np.where(go_down, np.nextafter(y, np.float32(-np.inf)), y)
    if go_up is not None and go_up.any():
        y = np.where(go_up, np.nextafter(y, np.float32(np.inf)), y)
    return y.astype(np.float32)
