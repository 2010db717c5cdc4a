"""Floating-point arithmetic: f32/f64 with every rounding mode, f16/bf16 and their packed x2
forms, .ftz/.sat/.relu, NaN rules (canonical NaN results, min/max ignore a single NaN), and
the approximate functions (results are correctly rounded, so within every documented bound).
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...types import pred
from ..state import fp
from ..machine.registry import register
from ..state.operands import np_dtype, reader, writer

F32_NAN = np.uint32(0x7FFFFFFF).view(np.float32)


def _mode(dec, default="rn"):
    """The rounding mode chosen (``rnd`` group): rn | rz | rm | rp | rna, or ``default``."""
    opt = dec.get("rnd")
    return opt[1:] if opt else default


# ----------------------------------------------------------------------------- lane adapters
class Lanes:
    """Unpack a float operand of type ``t`` into float64 lanes and pack results back."""

    def __init__(self, t):
        self.t = t
        if t.kind == "packed":
            self.fmt = fp.FORMATS[t.elem.name]
            self.n = t.lanes
        else:
            self.fmt = fp.FORMATS[t.name]
            self.n = 1
        self.ebits = self.fmt.bits

    def dec(self, v):
        """-> float64 array (..., lanes) (lanes dim only for packed types)."""
        v = np.asarray(v)
        if self.n == 1:
            if self.fmt is fp.F64:
                return v.astype(np.float64)
            return v.astype(np.float64) if v.dtype != np.uint16 else fp.decode(v, self.fmt)
        u = v.astype(np.uint64)
        m = (1 << self.ebits) - 1
        parts = [fp.decode((u >> np.uint64(i * self.ebits)) & np.uint64(m), self.fmt) for i in range(self.n)]
        return np.stack(parts, axis=-1)

    def enc(self, vals):
        """float64 values exactly representable -> the register dtype."""
        if self.n == 1:
            bits = fp.encode(vals, self.fmt)
            return bits.view(np_dtype(self.t)) if bits.dtype.itemsize == np_dtype(self.t).itemsize else bits
        bits = fp.encode(vals, self.fmt).astype(np.uint64)
        out = np.zeros(vals.shape[:-1], np.uint64)
        for i in range(self.n):
            out |= bits[..., i] << np.uint64(i * self.ebits)
        return out.astype(np_dtype(self.t))

    def nan_bits(self):
        return fp.CANON_NAN.get(self.fmt.name, 0x7F)


def _narrow_result(L: Lanes, r, mode, resid=None, ftz=False, sat=False, relu=False):
    """Round float64 results to the lane format, applying modifiers and canonical NaN."""
    if ftz:
        r = _ftz64(r, L.fmt)
    out = fp.round_to(r, L.fmt, mode, resid, relu=relu)
    if ftz:
        out = _ftz64(out, L.fmt)
    if sat:
        out = _sat64(out)
    nan = np.isnan(out)
    enc = L.enc(out)
    if nan.any():
        if L.n == 1:
            u = enc.view(np.dtype(f"u{enc.dtype.itemsize}")).copy()
            u[nan] = L.nan_bits()
            enc = u.view(enc.dtype)
        else:
            u = enc.astype(np.uint64)
            m = (1 << L.ebits) - 1
            for i in range(L.n):
                u = np.where(nan[..., i], (u & ~np.uint64(m << (i * L.ebits))) | np.uint64(L.nan_bits() << (i * L.ebits)), u)
            enc = u.astype(enc.dtype)
    return enc


def _ftz64(x, fmt):
    tiny = 2.0 ** fmt.emin
    return np.where((np.abs(x) < tiny) & (x != 0), np.copysign(0.0, x), x)


def _sat64(x):
    """.sat: clamp to [+0.0, 1.0]; NaN and -0.0 give +0.0."""
    return np.where(np.isnan(x) | (x <= 0), 0.0, np.minimum(x, 1.0))


def _sat32(x):
    return np.where(np.isnan(x) | (x <= 0), np.float32(0), np.minimum(x, np.float32(1))).astype(np.float32)


def _canon32(r):
    t = np.dot(r, r) if r.ndim == 1 else r.sum()    # NaN iff some element is NaN (squares >= 0)
    if t != t:
        return fp.canon_nan(r, "f32")
    return r


def _f32_post(r, ftz, sat):
    if ftz:
        r = fp.ftz32(r)
    if sat:
        r = _sat32(r)
    return _canon32(r)


def _common(prog, ins, scope, t, nsrc):
    put = writer(prog, ins.operands[0], t, scope)
    srcs = [reader(prog, o, t, scope) for o in ins.operands[1:1 + nsrc]]
    return put, srcs


def _bcast(v, n):
    if type(v) is np.ndarray and v.shape == (n,):
        return v
    a = np.asarray(v)
    return a if a.shape == (n,) else np.broadcast_to(a, (n,) + a.shape[1:] if a.ndim > 1 else (n,))


# ----------------------------------------------------------------------------- add/sub/mul
def arith(prog, d, ins, scope, dec, t):
    op = ins.opcode
    mode = _mode(dec)
    ftz = dec.has(".ftz")
    sat = dec.has(".sat")
    relu = dec.has(".relu")
    put, (ga, gb) = _common(prog, ins, scope, t, 2)
    if t.name == "f32":
        npop = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
        if mode == "rn":
            def f32_rn(ctx, g):
                a, b = ga(ctx, g), gb(ctx, g)
                if ftz:
                    a, b = fp.ftz32(a), fp.ftz32(b)
                r = npop(a, b, dtype=np.float32)
                if ftz or sat:
                    r = _f32_post(np.asarray(r, np.float32), ftz, sat)
                else:
                    r = _canon32(r)
                put(ctx, g, _bcast(r, g.n))
            d.fn = f32_rn
            return

        def f32_dir(ctx, g):
            a, b = np.asarray(ga(ctx, g), np.float32), np.asarray(gb(ctx, g), np.float32)
            if ftz:
                a, b = fp.ftz32(a), fp.ftz32(b)
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if op == "mul":
                s, err = a64 * b64, None
            else:
                s, err = fp.two_sum(a64, b64 if op == "add" else -b64)
            r = fp.round_to(s, fp.F32, mode, err).astype(np.float32)
            if op != "mul":
                r = np.where((s == 0) & ((err is None) | (err == 0)), _zero_sum(a, b if op == "add" else -b, mode), r)
            put(ctx, g, _bcast(_f32_post(r.astype(np.float32), ftz, sat), g.n))
        d.fn = f32_dir
        return
    if t.name == "f64":
        npop = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]

        def f64(ctx, g):
            a, b = np.asarray(ga(ctx, g), np.float64), np.asarray(gb(ctx, g), np.float64)
            r = npop(a, b)
            if mode != "rn":
                if op == "mul":
                    r = _f64_exact(lambda x, y: x * y, a, b, mode)
                else:
                    s, err = fp.two_sum(a, b if op == "add" else -b)
                    r = fp.round_to(s, fp.F64, mode, err)
            put(ctx, g, _bcast(np.asarray(r, np.float64), g.n))
        d.fn = f64
        return
    L = Lanes(t)

    def narrow(ctx, g):
        a, b = L.dec(ga(ctx, g)), L.dec(gb(ctx, g))
        if ftz:
            a, b = _ftz64(a, L.fmt), _ftz64(b, L.fmt)
        with np.errstate(all="ignore"):
            r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a, b)
        put(ctx, g, _bcast(_narrow_result(L, r, mode, None, ftz, sat, relu), g.n))
    d.fn = narrow


def _zero_sum(a, b, mode):
    """Sign of an exact zero sum: -0 only when both are -0, or in round-down mode."""
    both_neg = np.signbit(a) & np.signbit(b)
    return np.where(both_neg | (mode == "rm"), np.float32(-0.0), np.float32(0.0))


def _f64_exact(f, a, b, mode):
    from fractions import Fraction
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    out = np.empty(a.shape, np.float64)
    for i in np.ndindex(a.shape):
        x, y = float(a[i]), float(b[i])
        r = f(x, y)
        if np.isfinite(r) and r != 0 and np.isfinite(x) and np.isfinite(y):
            ex = f(Fraction(x), Fraction(y))
            diff = ex - Fraction(r)
            r = float(fp.round_to(np.array([r]), fp.F64, mode, np.array([float(np.sign(diff))]))[0])
        out[i] = r
    return out


# ----------------------------------------------------------------------------- fma / mad
def fma(prog, d, ins, scope, dec, t):
    mode = _mode(dec)
    ftz = dec.has(".ftz")
    sat = dec.has(".sat")
    relu = dec.has(".relu")
    put, (ga, gb, gc) = _common(prog, ins, scope, t, 3)
    if t.name == "f32":
        def f32(ctx, g):
            a, b, c = ga(ctx, g), gb(ctx, g), gc(ctx, g)
            if ftz:
                a, b, c = fp.ftz32(a), fp.ftz32(b), fp.ftz32(c)
            r = fp.fma_f32(a, b, c, mode)
            if relu:
                r = np.where(np.isnan(r), r, np.maximum(r, np.float32(0)))
            put(ctx, g, _bcast(_f32_post(r, ftz, sat), g.n))
        d.fn = f32
        return
    if t.name == "f64":
        def f64(ctx, g):
            a, b, c = (np.asarray(f(ctx, g), np.float64) for f in (ga, gb, gc))
            a, b, c = np.broadcast_arrays(a, b, c)
            r = _fma64_fast(a, b, c, mode)
            put(ctx, g, _bcast(r, g.n))
        d.fn = f64
        return
    L = Lanes(t)

    def narrow(ctx, g):
        a, b, c = (L.dec(f(ctx, g)) for f in (ga, gb, gc))
        if ftz:
            a, b, c = (_ftz64(x, L.fmt) for x in (a, b, c))
        with np.errstate(all="ignore"):
            p = a * b
            s, err = fp.two_sum(p, c)
        r = np.where((s == 0) & (err == 0), np.where(np.signbit(p) & np.signbit(c), -0.0, 0.0), s)
        put(ctx, g, _bcast(_narrow_result(L, r, mode, err, ftz, sat, relu), g.n))
    d.fn = narrow


def _fma64_fast(a, b, c, mode):
    """f64 fma: exact when the product fits in 53 bits (common for small integers and
    rounded data); otherwise an exact rational fallback per element."""
    with np.errstate(all="ignore"):
        p = a * b
        # Dekker: is the product exact?  error-free product via splitting
        split = 134217729.0
        ah = a * split - (a * split - a)
        al = a - ah
        bh = b * split - (b * split - b)
        bl = b - bh
        perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        fine = np.isfinite(p) & (np.abs(a) < 1e150) & (np.abs(b) < 1e150) & (np.abs(p) > 1e-290)
        simple = fine & (perr == 0)
        s, err = fp.two_sum(p, c)
        out = fp.round_to(s, fp.F64, mode, err)
        out = np.where((s == 0) & (err == 0), np.where(np.signbit(p) & np.signbit(c), -0.0,
                                                        -0.0 if mode == "rm" else 0.0), out)
        out = np.where(np.isfinite(p) | ~np.isfinite(c), out, p + c)
    hard = ~simple & np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (a != 0) & (b != 0)
    if hard.any():
        out = out.copy()
        out[hard] = fp.fma_f64(a[hard], b[hard], c[hard], mode)
    return out


# ----------------------------------------------------------------------------- div / rcp / sqrt
def div(prog, d, ins, scope, dec, t):
    ftz = dec.has(".ftz")
    approx = dec.has(".approx")
    full = dec.has(".full")
    mode = _mode(dec)
    put, (ga, gb) = _common(prog, ins, scope, t, 2)
    if t.name == "f32":
        def f32(ctx, g):
            a, b = np.asarray(ga(ctx, g), np.float32), np.asarray(gb(ctx, g), np.float32)
            if ftz:
                a, b = fp.ftz32(a), fp.ftz32(b)
            with np.errstate(all="ignore"):
                y = np.divide(a, b, dtype=np.float32)
                if approx:
                    big = np.abs(b) > np.float32(2.0 ** 126)
                    if big.any():
                        y = np.where(big, np.where(np.isinf(a), np.float32(np.nan), np.float32(0) * np.sign(a) * np.sign(b)), y)
                elif not full and mode != "rn":
                    y = _directed_div(a, b, y, mode)
            put(ctx, g, _bcast(_f32_post(np.asarray(y, np.float32), ftz, False), g.n))
        d.fn = f32
        return
    if t.name == "f64":
        def f64(ctx, g):
            a, b = np.asarray(ga(ctx, g), np.float64), np.asarray(gb(ctx, g), np.float64)
            with np.errstate(all="ignore"):
                y = a / b
            if mode != "rn" and not approx:
                y = _f64_exact(lambda x, z: x / z, a, b, mode)
            put(ctx, g, _bcast(y, g.n))
        d.fn = f64
        return
    raise InterpreterError(f"div.{t.name} is not supported")


def _directed_div(a, b, y, mode):
    a, b, y = np.broadcast_arrays(a, b, y)
    with np.errstate(all="ignore"):
        ok = np.isfinite(a) & np.isfinite(b) & (b != 0) & ~np.isnan(y)
        resid = y.astype(np.float64) * b.astype(np.float64) - a.astype(np.float64)
        cmp = np.sign(resid) * np.sign(b.astype(np.float64))
        cmp = np.where(ok, cmp, 0)
    return fp.directed_f32(y, cmp, mode)


@register("rcp")
def _rcp(prog, d, ins, scope, dec):
    t = dec.type
    ftz = dec.has(".ftz")
    approx = dec.has(".approx")
    mode = _mode(dec)
    put, (ga,) = _common(prog, ins, scope, t, 1)
    if t.name == "f32":
        def f32(ctx, g):
            a = np.asarray(ga(ctx, g), np.float32)
            if ftz:
                a = fp.ftz32(a)
            with np.errstate(all="ignore"):
                y = np.divide(np.float32(1), a, dtype=np.float32)
                if not approx and mode != "rn":
                    y = _directed_div(np.ones_like(a), a, y, mode)
            put(ctx, g, _bcast(_f32_post(np.asarray(y, np.float32), ftz, False), g.n))
        d.fn = f32
    else:
        def f64(ctx, g):
            a = np.asarray(ga(ctx, g), np.float64)
            with np.errstate(all="ignore"):
                y = 1.0 / a
            if not approx and mode != "rn":
                y = _f64_exact(lambda x, z: x / z, np.ones_like(a), a, mode)
            put(ctx, g, _bcast(y, g.n))
        d.fn = f64


@register("sqrt")
def _sqrt(prog, d, ins, scope, dec):
    t = dec.type
    ftz = dec.has(".ftz")
    approx = dec.has(".approx")
    mode = _mode(dec)
    put, (ga,) = _common(prog, ins, scope, t, 1)
    if t.name == "f32":
        def f32(ctx, g):
            a = np.asarray(ga(ctx, g), np.float32)
            if ftz:
                a = fp.ftz32(a)
            with np.errstate(all="ignore"):
                y = np.sqrt(a)
                if not approx and mode != "rn":
                    y64 = y.astype(np.float64)
                    ok = np.isfinite(a) & (a > 0)
                    cmp = np.where(ok, np.sign(y64 * y64 - a.astype(np.float64)), 0)
                    y = fp.directed_f32(y, cmp, mode)
            put(ctx, g, _bcast(_f32_post(np.asarray(y, np.float32), ftz, False), g.n))
        d.fn = f32
        return
    if t.name == "f64":
        def f64(ctx, g):
            a = np.asarray(ga(ctx, g), np.float64)
            with np.errstate(all="ignore"):
                y = np.sqrt(a)
            if mode != "rn" and not approx:
                from fractions import Fraction
                y = np.array(y, np.float64, copy=True).reshape(-1)
                av = np.broadcast_to(a, y.shape).reshape(-1)
                for i in range(y.size):
                    if np.isfinite(y[i]) and av[i] > 0:
                        diff = Fraction(float(y[i])) ** 2 - Fraction(float(av[i]))
                        y[i] = fp.round_to(np.array([y[i]]), fp.F64, mode, np.array([-float(np.sign(diff))]))[0]
            put(ctx, g, _bcast(np.asarray(y, np.float64).reshape(np.shape(a)), g.n))
        d.fn = f64
        return
    raise InterpreterError(f"sqrt.{t.name} is not supported")


# ----------------------------------------------------------------------------- approximate functions
def _approx(prog, d, ins, scope, dec, f64fn):
    t = dec.type
    ftz = dec.has(".ftz")
    put, (ga,) = _common(prog, ins, scope, t, 1)
    if t.name == "f32":
        def f32(ctx, g):
            a = np.asarray(ga(ctx, g), np.float32)
            if ftz:
                a = fp.ftz32(a)
            with np.errstate(all="ignore"):
                y = f64fn(a.astype(np.float64)).astype(np.float32)
            put(ctx, g, _bcast(_f32_post(y, ftz, False), g.n))
        d.fn = f32
        return
    if t.name == "f64":
        def f64(ctx, g):
            with np.errstate(all="ignore"):
                put(ctx, g, _bcast(f64fn(np.asarray(ga(ctx, g), np.float64)), g.n))
        d.fn = f64
        return
    L = Lanes(t)

    def narrow(ctx, g):
        with np.errstate(all="ignore"):
            r = f64fn(L.dec(ga(ctx, g)))
        put(ctx, g, _bcast(_narrow_result(L, r, "rn", None, ftz), g.n))
    d.fn = narrow


def _rsqrt64(x):
    with np.errstate(all="ignore"):
        y = 1.0 / np.sqrt(x)
    return np.where(x == 0, np.copysign(np.inf, x), y)


def _lg2(x):
    with np.errstate(all="ignore"):
        return np.where(x == 0, -np.inf, np.log2(x))


def _sin(x):
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), np.nan, np.sin(x))


def _cos(x):
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x), np.nan, np.cos(x))


register("rsqrt")(lambda p, d, i, s, dec: _approx(p, d, i, s, dec, _rsqrt64))
register("sin")(lambda p, d, i, s, dec: _approx(p, d, i, s, dec, _sin))
register("cos")(lambda p, d, i, s, dec: _approx(p, d, i, s, dec, _cos))
register("lg2")(lambda p, d, i, s, dec: _approx(p, d, i, s, dec, _lg2))
register("ex2")(lambda p, d, i, s, dec: _approx(p, d, i, s, dec, np.exp2))
register("tanh")(lambda p, d, i, s, dec: _approx(p, d, i, s, dec, np.tanh))


# ----------------------------------------------------------------------------- abs/neg/min/max
def absneg(prog, d, ins, scope, dec, t):
    ftz = dec.has(".ftz")
    put, (ga,) = _common(prog, ins, scope, t, 1)
    bits = np_dtype(t).itemsize * 8
    udt = np.dtype(f"u{bits // 8}")
    if t.kind == "packed":
        eb = bits // t.lanes
        sign = 0
        for i in range(t.lanes):
            sign |= 1 << (i * eb + eb - 1)
    else:
        sign = 1 << (bits - 1)
    sign = udt.type(sign)
    is_abs = ins.opcode == "abs"
    dt = np_dtype(t)

    def fn(ctx, g):
        a = np.asarray(ga(ctx, g))
        if ftz and t.name == "f32":
            a = fp.ftz32(a)
        u = a.view(udt) if a.dtype.itemsize == udt.itemsize else a.astype(udt)
        r = (u & ~sign) if is_abs else (u ^ sign)
        put(ctx, g, _bcast(r.view(dt), g.n))
    d.fn = fn


def minmax(prog, d, ins, scope, dec, t):
    is_min = ins.opcode == "min"
    ftz = dec.has(".ftz")
    nanprop = dec.has(".NaN")
    put = writer(prog, ins.operands[0], t, scope)
    srcs = [reader(prog, o, t, scope) for o in ins.operands[1:]]
    L = Lanes(t) if t.name not in ("f32", "f64") else None

    npop = np.minimum if is_min else np.maximum

    def pair(a, b):
        if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 1 and a.shape == b.shape \
                and a.dtype == b.dtype and a.dtype.kind == "f":
            sa, sb = np.dot(a, a), np.dot(b, b)          # NaN iff an element is (squares >= 0)
            if sa == sa and sb == sb:
                r = npop(a, b)          # no NaN: only +0 against -0 needs the rule below
                z = r == 0
                if np.count_nonzero(z):
                    both = z & (a == b)
                    sa, sb = np.signbit(a), np.signbit(b)
                    neg = (sa | sb) if is_min else (sa & sb)
                    r = np.where(both, np.where(neg, -np.abs(a), np.abs(a)), r)
                return r
        with np.errstate(all="ignore"):
            an, bn = np.isnan(a), np.isnan(b)
            r = np.where(a < b, a, b) if is_min else np.where(a > b, a, b)
            eq = a == b
            if eq.any():
                # -0 < +0 for min/max
                r = np.where(eq, np.where(np.signbit(a) | np.signbit(b), -np.abs(a), np.abs(a)) if is_min
                             else np.where(np.signbit(a) & np.signbit(b), -np.abs(a), np.abs(a)), r)
            r = np.where(an & ~bn, b, np.where(bn & ~an, a, r))
            if nanprop:
                r = np.where(an | bn, np.nan, r)
            else:
                r = np.where(an & bn, np.nan, r)
        return r

    absmod = dec.has(".abs")
    xorsign = dec.has(".xorsign")

    def fn(ctx, g):
        vals = [f(ctx, g) for f in srcs]
        if L is None:
            dt = np_dtype(t)
            vals = [np.asarray(v, dt) for v in vals]
            if ftz and t.name == "f32":
                vals = [fp.ftz32(v) for v in vals]
            sign = None
            if xorsign:
                sign = np.signbit(vals[0]) ^ np.signbit(vals[1])
            if absmod:
                vals = [np.abs(v) for v in vals]
            r = vals[0]
            for v in vals[1:]:
                r = pair(r, v)
            r = np.asarray(r, dt)
            if sign is not None:
                r = np.where(np.isnan(r), r, np.where(sign, -np.abs(r), np.abs(r))).astype(dt)
            if t.name == "f32":
                r = _canon32(r)
            put(ctx, g, _bcast(r, g.n))
        else:
            vals = [L.dec(v) for v in vals]
            if ftz:
                vals = [_ftz64(v, L.fmt) for v in vals]
            r = vals[0]
            for v in vals[1:]:
                r = pair(r, v)
            put(ctx, g, _bcast(_narrow_result(L, r, "rn"), g.n))
    d.fn = fn


@register("copysign")
def _copysign(prog, d, ins, scope, dec):
    t = dec.type
    put, (ga, gb) = _common(prog, ins, scope, t, 2)
    d.fn = lambda ctx, g: put(ctx, g, _bcast(np.copysign(gb(ctx, g), ga(ctx, g)).astype(np_dtype(t)), g.n))


@register("testp")
def _testp(prog, d, ins, scope, dec):
    t = dec.type
    kind = dec.get("op")[1:]    # finite | infinite | number | notanumber | normal | subnormal
    put = writer(prog, ins.operands[0], pred, scope)
    ga = reader(prog, ins.operands[1], t, scope)
    tiny = np.finfo(np_dtype(t)).tiny

    def fn(ctx, g):
        a = np.asarray(ga(ctx, g))
        with np.errstate(all="ignore"):
            r = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
                 "notanumber": np.isnan,
                 "normal": lambda x: np.isfinite(x) & (np.abs(x) >= tiny),
                 "subnormal": lambda x: (np.abs(x) < tiny) & (x != 0)}[kind](a)
        put(ctx, g, _bcast(r, g.n))
    d.fn = fn


# ----------------------------------------------------------------------------- compare
def float_compare(cmp, t, ftz):
    """Comparison ``cmp`` (eq ne lt le gt ge, their unordered ...u forms, num, nan) of
    float type ``t``."""
    ordered = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}
    L = Lanes(t) if t.kind == "packed" or t.name in ("f16", "bf16") else None

    def prep(a, b):
        if L is not None:
            a, b = L.dec(a), L.dec(b)
            if ftz:
                a, b = _ftz64(a, L.fmt), _ftz64(b, L.fmt)
        elif ftz and t.name == "f32":
            a, b = fp.ftz32(a), fp.ftz32(b)
        return a, b

    if cmp in ordered:
        f = ordered[cmp]

        def c(a, b):
            a, b = prep(a, b)
            with np.errstate(invalid="ignore"):
                r = f(a, b)
            if cmp == "ne":
                r = r & ~np.isnan(a) & ~np.isnan(b)
            return r
        return c
    if cmp == "num":
        return lambda a, b: (lambda x, y: ~np.isnan(x) & ~np.isnan(y))(*prep(a, b))
    if cmp == "nan":
        return lambda a, b: (lambda x, y: np.isnan(x) | np.isnan(y))(*prep(a, b))
    base = ordered[cmp[:-1]]

    def cu(a, b):
        a, b = prep(a, b)
        with np.errstate(invalid="ignore"):
            return base(a, b) | np.isnan(a) | np.isnan(b)
    return cu


def packed_setp(prog, d, ins, scope, dec, t, cmp, boolop, p1, p2, a, b, c):
    """setp on f16x2/bf16x2: ``p|q`` receive the comparison of the low and high halves."""
    def fn(ctx, g):
        r = np.broadcast_to(cmp(a(ctx, g), b(ctx, g)), (g.n, 2))
        lo, hi = r[:, 0], r[:, 1]
        if boolop is not None:
            cv = c(ctx, g)
            lo, hi = boolop(lo, cv), boolop(hi, cv)
        p1(ctx, g, np.ascontiguousarray(lo))
        if p2 is not None:
            p2(ctx, g, np.ascontiguousarray(hi))
    d.fn = fn


register("fma")(lambda p, d, i, s, dec: f32x2(p, d, i, s, dec) if dec.has(".f32x2") else fma(p, d, i, s, dec, dec.type))


# ----------------------------------------------------------------------------- f32x2 (sm_100)
def f32_compute(op, mode, ftz, sat, relu, vals):
    """The f32 semantics of add/sub/mul/fma on flat float32 arrays."""
    vals = [np.asarray(v, np.float32) for v in vals]
    if ftz:
        vals = [fp.ftz32(v) for v in vals]
    if op == "fma":
        r = fp.fma_f32(*vals, mode)
    elif mode == "rn":
        r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](vals[0], vals[1], dtype=np.float32)
    else:
        a64, b64 = (v.astype(np.float64) for v in vals)
        if op == "mul":
            r = fp.round_to(a64 * b64, fp.F32, mode).astype(np.float32)
        else:
            s, err = fp.two_sum(a64, b64 if op == "add" else -b64)
            r = fp.round_to(s, fp.F32, mode, err).astype(np.float32)
    if relu:
        r = np.where(np.isnan(r), r, np.maximum(r, np.float32(0)))
    return _f32_post(np.asarray(r, np.float32), ftz, sat)


def f32x2(prog, d, ins, scope, dec):
    """add/sub/mul/fma .f32x2: two f32 lanes in a 64-bit register (lane 0 in the low half)."""
    from ...types import b64
    op = ins.opcode                     # add | sub | mul | fma
    mode = _mode(dec)
    ftz, sat, relu = dec.has(".ftz"), dec.has(".sat"), dec.has(".relu")
    put = writer(prog, ins.operands[0], b64, scope)
    srcs = [reader(prog, o, b64, scope) for o in ins.operands[1:]]

    def fn(ctx, g):
        vals = [np.broadcast_to(np.asarray(f(ctx, g)).astype(np.uint64), (g.n,)).copy().view(np.float32)
                for f in srcs]
        r = f32_compute(op, mode, ftz, sat, relu, vals)
        put(ctx, g, np.ascontiguousarray(r, np.float32).view(np.uint64))
    d.fn = fn
