"""``cvt`` in all its forms, plus ``cvt.pack`` and ``cvta``/``isspacep``.

* int -> int: truncate or sign/zero-extend; ``.sat`` clamps to the destination range.
* float -> int: round with ``.rni .rzi .rmi .rpi``, clamp to the destination range, NaN -> 0.
* int -> float and float -> float: one rounding with ``.rn .rna .rz .rm .rp`` (exact for 64-bit
  integers too), ``.ftz``, ``.sat``, ``.relu``, ``.satfinite``; same-size float conversions with
  an integer rounding mode round to an integral value.
* packed forms: ``cvt.rn.f16x2.f32 d, a, b`` (a -> upper half), bf16x2, e4m3x2/e5m2x2 from
  f32 pairs or f16x2, and back to f16x2; ``cvt.rna.tf32.f32``.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...types import b32, by_name, u64
from ..state import fp
from ..state import memory as M
from ..machine.registry import register
from ..state.operands import SINT, UINT, np_dtype, reader, writer
from .load_store import space_of



def _fmt(t):
    return fp.FORMATS[t.name]


def float_to_int(x, dt_t, mode):
    """Round float64 ``x`` with an integer rounding mode and saturate into ``dt_t``."""
    bits = dt_t.bits
    signed = dt_t.is_signed
    lo = -(1 << (bits - 1)) if signed else 0
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    with np.errstate(all="ignore"):
        r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil, "rn": np.rint,
             "rz": np.trunc, "rm": np.floor, "rp": np.ceil, "rna": _round_away}[mode](x)
        nan = np.isnan(r)
        big = r >= float(hi)
        small = r <= float(lo)
        safe = np.where(nan | big | small, 0.0, r)
        if bits == 64 and not signed:
            out = safe.astype(np.uint64)
        else:
            out = safe.astype(np.int64)
        dt = np.dtype(SINT[bits] if signed else UINT[bits])
        out = out.astype(dt) if bits < 64 or signed else out
        out = np.where(big, dt.type(hi), np.where(small, dt.type(lo), out)).astype(dt)
        out = np.where(nan, dt.type(0), out).astype(dt)
    return out.view(np_dtype(dt_t))


def _round_away(x):
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


def int_to_float(v, st, dt_t, mode, sat=False, relu=False):
    """Exactly rounded integer -> float conversion."""
    fmt = _fmt(dt_t)
    if st.bits <= 32:
        x = np.asarray(v).astype(np.float64)            # exact
        return fp.round_to(x, fmt, mode, sat=sat, relu=relu)
    # 64-bit integers: value = x64 + resid exactly (resid computed with Python ints)
    vv = np.asarray(v)
    x = vv.astype(np.float64)
    if mode == "rn" and fmt is fp.F64:
        return x
    flat_v = vv.reshape(-1)
    flat_x = x.reshape(-1)
    resid = np.zeros(flat_x.shape, np.float64)
    for i in range(flat_v.size):
        exact = int(flat_v[i])
        approx = int(flat_x[i])
        resid[i] = float(exact - approx)
    resid = resid.reshape(x.shape)
    if fmt is fp.F64:
        return fp.round_to(x, fmt, mode, np.sign(resid))
    # x + resid rounded once: x is within half an ulp(f64) of the value; exact residual sign
    return fp.round_to(x, fmt, mode, resid, sat=sat, relu=relu)


@register("cvt")
def _cvt(prog, d, ins, scope, dec):
    """Read the types and modifiers, then build the conversion's function for its kind: packed,
    int -> int, float -> int, int -> float or float -> float."""
    tys = list(dec.types)
    if len(tys) < 2:
        raise InterpreterError("cvt needs a destination and a source type")
    dt_t, st = tys[0], tys[1]
    irnd = (dec.get("irnd") or ".")[1:] or None               # rni | rzi | rmi | rpi
    frnd = (dec.get("frnd") or dec.get("rnd") or ".")[1:] or None   # rn | rna | rz | rm | rp
    if frnd == "rs":        # stochastic rounding (its random bits operand) is run as .rn
        frnd = None
    ftz = dec.has(".ftz")
    sat = dec.has(".sat")
    satf = dec.has(".satfinite")
    relu = dec.has(".relu")
    nops = len(ins.operands)
    if dt_t.kind == "packed" and st.kind in ("float",) and nops == 3:
        return _cvt_pack2(prog, d, ins, scope, dec, dt_t, st, frnd or "rn", satf, relu)
    if dt_t.kind == "packed" or st.kind == "packed":
        return _cvt_packed(prog, d, ins, scope, dec, dt_t, st, frnd or "rn", satf, relu)
    put = writer(prog, ins.operands[0], dt_t, scope)
    get = reader(prog, ins.operands[1], st, scope)
    src_float = st.kind == "float"
    dst_float = dt_t.kind == "float"
    if not src_float and not dst_float:
        d.fn = _int_to_int(get, put, st, dt_t, sat)
    elif src_float and not dst_float:
        d.fn = _float_to_int(get, put, st, dt_t, irnd or frnd or "rzi", ftz)
    elif not src_float and dst_float:
        d.fn = _int_to_float(get, put, st, dt_t, frnd or "rn", ftz, sat, relu)
    else:
        d.fn = _float_to_float(get, put, st, dt_t, irnd, frnd, ftz, sat, satf, relu)


def _int_to_int(get, put, st, dt_t, sat):
    """int -> int: truncate or sign/zero-extend; ``.sat`` clamps to the destination range."""
    ddt = np_dtype(dt_t)
    lo = -(1 << (dt_t.bits - 1)) if dt_t.is_signed else 0
    hi = (1 << (dt_t.bits - 1)) - 1 if dt_t.is_signed else (1 << dt_t.bits) - 1

    def i2i(ctx, g):
        v = np.asarray(get(ctx, g))
        if sat:
            if st.bits == 64 and not st.is_signed:
                r = np.minimum(v, np.uint64(hi))
            else:
                r = np.clip(v.astype(np.int64), max(lo, -(1 << 63)), min(hi, (1 << 63) - 1))
            out = r.astype(ddt)
        else:
            out = v.astype(ddt)
        put(ctx, g, _b(out, g.n))
    return i2i


def _float_to_int(get, put, st, dt_t, mode, ftz):
    """float -> int: round with the integer rounding ``mode``, saturate (NaN -> 0)."""
    sfmt = _fmt(st)

    def f2i(ctx, g):
        v = np.asarray(get(ctx, g))
        x = v.astype(np.float64) if st.name != "tf32" else fp.decode(v, fp.F32)
        if ftz:
            x = np.where(np.abs(x) < 2.0 ** sfmt.emin, 0.0, x)
        put(ctx, g, _b(float_to_int(x, dt_t, mode), g.n))
    return f2i


def _int_to_float(get, put, st, dt_t, mode, ftz, sat, relu):
    """int -> float: one rounding with ``mode`` (exact for 64-bit integers too), .sat, .ftz, .relu."""
    ddt = np_dtype(dt_t)
    dfmt = _fmt(dt_t)

    def i2f(ctx, g):
        r = int_to_float(get(ctx, g), st, dt_t, mode, sat=False, relu=relu)
        if sat:
            r = np.where(np.isnan(r), 0.0, np.clip(r, 0.0, 1.0))
        if ftz and dt_t.name == "f32":
            r = np.where(np.abs(r) < 2.0 ** -126, np.copysign(0.0, r), r)
        put(ctx, g, _b(fp.encode(r, dfmt).view(ddt) if dfmt.bits == ddt.itemsize * 8 else fp.encode(r, dfmt), g.n))
    return i2f


def _float_to_float(get, put, st, dt_t, irnd, frnd, ftz, sat, satf, relu):
    """float -> float: exact widening, or one rounding (an integer ``irnd`` rounds to an
    integral value), with .ftz, .relu, .sat, .satfinite; NaNs become the canonical NaN."""
    ddt = np_dtype(dt_t)
    sfmt, dfmt = _fmt(st), _fmt(dt_t)
    if st.name == "f32" and dt_t.name in fp.HALF_RN and irnd is None and frnd in (None, "rn") \
            and not (sat or satf or relu):
        return _f32_to_half_rn(get, put, fp.HALF_RN[dt_t.name], ftz, ddt)

    def f2f(ctx, g):
        v = np.asarray(get(ctx, g))
        x = fp.decode(v.view(UINT[st.bits]) if v.dtype.itemsize * 8 == st.bits else v, sfmt) \
            if st.name in ("tf32", "bf16", "e4m3", "e5m2") else v.astype(np.float64)
        if ftz and st.name == "f32":
            x = np.where(np.abs(x) < 2.0 ** -126, np.copysign(0.0, x), x)
        if irnd is not None:
            with np.errstate(all="ignore"):
                r = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[irnd](x)
            r = fp.round_to(r, dfmt, "rn")
        elif dfmt.p >= sfmt.p and dfmt.emin <= sfmt.emin and dfmt.maxf >= sfmt.maxf and not satf:
            r = x                                   # widening: exact
        else:
            r = fp.round_to(x, dfmt, frnd or "rn", sat=satf, relu=relu)
        if relu:
            r = np.where(np.isnan(r), r, np.where(r <= 0, 0.0, r))
        if ftz and dt_t.name == "f32":
            r = np.where(np.abs(r) < 2.0 ** -126, np.copysign(0.0, r), r)
        if sat:
            r = np.where(np.isnan(r), 0.0, np.clip(r, 0.0, 1.0))
        out = fp.encode(r, dfmt)
        if dt_t.name in ("f32", "f16", "bf16", "f64") and np.isnan(r).any():
            out = np.where(np.isnan(r), out.dtype.type(fp.CANON_NAN[dt_t.name]), out).astype(out.dtype)
        if dt_t.name == "tf32":
            out = out & np.uint32(0xFFFFE000)
        put(ctx, g, _b(out.view(ddt) if out.dtype.itemsize == ddt.itemsize else out.astype(ddt), g.n))
    return f2f


def _f32_to_half_rn(get, put, half, ftz, ddt):
    """cvt.rn{.ftz}.{bf16,f16}.f32: the exact bit-pattern rounding of ``fp.HALF_RN`` (the bits
    ``round_to`` then ``encode`` give). An f32 reader yields float32 (the cast is a no-op)."""
    def f2h(ctx, g):
        v = np.asarray(get(ctx, g), np.float32)
        if ftz:
            v = fp.ftz32(v)
        put(ctx, g, _b(half(v).view(ddt), g.n))
    return f2h


def _b(v, n):
    v = np.asarray(v)
    return v if v.shape == (n,) else np.broadcast_to(v, (n,)).copy()


def _cvt_pack2(prog, d, ins, scope, dec, dt_t, st, mode, satf, relu):
    """cvt.rn{.satfinite}{.relu}.{f16x2,bf16x2,e4m3x2,e5m2x2}.f32 d, a, b: a -> upper half."""
    efmt = _fmt(dt_t.elem)
    eb = dt_t.bits // 2
    put = writer(prog, ins.operands[0], by_name(f"b{dt_t.bits}"), scope)
    ga = reader(prog, ins.operands[1], st, scope)
    gb = reader(prog, ins.operands[2], st, scope)
    wide = np.dtype(UINT[dt_t.bits])
    plain = mode == "rn" and not satf and not relu and st.name == "f32"
    half = fp.HALF_RN.get(efmt.name) if plain else None
    pair = fp.bf16x2_rn_bits if half is not None and efmt.name == "bf16" else None

    def fn(ctx, g):
        if ctx.sanitize:          # an undefined a (b) leaves the upper (lower) element undefined
            try:
                ctx.telem, ctx.tshift = eb, eb
                a = np.asarray(ga(ctx, g))
                ctx.tshift = 0
                b = np.asarray(gb(ctx, g))
            finally:
                ctx.telem = ctx.tshift = 0
        else:
            a = np.asarray(ga(ctx, g))
            b = np.asarray(gb(ctx, g))
        if half is not None and a.dtype == np.float32 and b.dtype == np.float32:
            if pair is not None and a.shape == b.shape == (g.n,):
                put(ctx, g, pair(a, b))         # both halves in one word
                return
            ea, eb_ = half(a), half(b)          # exact fast path, same bits as round_to
        else:
            ra = fp.round_to(a.astype(np.float64), efmt, mode, sat=satf, relu=relu)
            rb = fp.round_to(b.astype(np.float64), efmt, mode, sat=satf, relu=relu)
            ea, eb_ = _enc_canon(ra, efmt), _enc_canon(rb, efmt)
        out = (ea.astype(wide) << wide.type(eb)) | eb_.astype(wide)
        put(ctx, g, _b(out, g.n))
    d.fn = fn


def _enc_canon(r, fmt):
    out = fp.encode(r, fmt)
    if fmt.name in ("f16", "bf16") and np.isnan(r).any():
        out = np.where(np.isnan(r), out.dtype.type(0x7FFF), out).astype(out.dtype)
    return out


def _cvt_packed(prog, d, ins, scope, dec, dt_t, st, mode, satf, relu):
    """Packed -> packed: e.g. cvt.rn.f16x2.e4m3x2 d, a and cvt.rn.satfinite.e4m3x2.f16x2 d, a."""
    if dt_t.kind != "packed" or st.kind != "packed":
        raise InterpreterError(f"cvt {dt_t.name} <- {st.name} is not supported")
    sfmt, dfmt = _fmt(st.elem), _fmt(dt_t.elem)
    sb, db = st.bits // st.lanes, dt_t.bits // dt_t.lanes
    put = writer(prog, ins.operands[0], by_name(f"b{dt_t.bits}"), scope)
    get = reader(prog, ins.operands[1], by_name(f"b{st.bits}"), scope)
    wide = np.dtype(UINT[max(dt_t.bits, 8)])

    def fn(ctx, g):
        v = np.asarray(get(ctx, g)).astype(np.uint64)
        out = np.zeros(v.shape, np.uint64)
        for i in range(st.lanes):
            x = fp.decode((v >> np.uint64(i * sb)) & np.uint64((1 << sb) - 1), sfmt)
            r = fp.round_to(x, dfmt, mode, sat=satf, relu=relu)
            out |= _enc_canon(r, dfmt).astype(np.uint64) << np.uint64(i * db)
        put(ctx, g, _b(out.astype(wide), g.n))
    d.fn = fn


@register("cvt.pack")
def _cvt_pack(prog, d, ins, scope, dec):
    """cvt.pack.sat.{u8,s8,u16,s16}.s32.b32 d, a, b{, c}: saturate a and b, pack into c."""
    tys = list(dec.types)
    ct = tys[0]
    w = ct.bits
    lo = -(1 << (w - 1)) if ct.is_signed else 0
    hi = (1 << (w - 1)) - 1 if ct.is_signed else (1 << w) - 1
    s32 = by_name("s32")
    put = writer(prog, ins.operands[0], b32, scope)
    ga, gb = reader(prog, ins.operands[1], s32, scope), reader(prog, ins.operands[2], s32, scope)
    gc = reader(prog, ins.operands[3], b32, scope) if len(ins.operands) > 3 else None

    def fn(ctx, g):
        a = np.clip(np.asarray(ga(ctx, g)).astype(np.int64), lo, hi) & ((1 << w) - 1)
        b = np.clip(np.asarray(gb(ctx, g)).astype(np.int64), lo, hi) & ((1 << w) - 1)
        c = np.asarray(gc(ctx, g)).astype(np.int64) if gc is not None else 0
        r = (a << w) | b
        if w == 8:
            r = (r & 0xFFFF) | ((c << 16) & 0xFFFF0000)
        put(ctx, g, _b((r & 0xFFFFFFFF).astype(np.uint32), g.n))
    d.fn = fn


# ----------------------------------------------------------------------------- cvta / isspacep
@register("cvta")
def _cvta(prog, d, ins, scope, dec):
    to = dec.has(".to")
    space = space_of(dec)[0]
    t = dec.type or u64
    put = writer(prog, ins.operands[0], t, scope)
    get = reader(prog, ins.operands[1], t, scope)
    base = {"shared": M.SHARED_WINDOW, "local": M.LOCAL_WINDOW}.get(space, 0)
    dt = np_dtype(t)

    def fn(ctx, g):
        v = np.asarray(get(ctx, g)).astype(np.uint64)
        if base:
            if to:
                inwin = (v >= np.uint64(base)) & (v < np.uint64(base + M.WINDOW_SIZE))
                r = np.where(inwin, v - np.uint64(base), v + np.uint64((1 << 64) - base))
            else:
                r = v + np.uint64(base)
        else:
            r = v
        put(ctx, g, _b(r.astype(dt), g.n))
    d.fn = fn


@register("isspacep")
def _isspacep(prog, d, ins, scope, dec):
    from ...types import pred
    space, opt = space_of(dec)
    cta = opt != ".shared::cluster"
    put = writer(prog, ins.operands[0], pred, scope)
    get = reader(prog, ins.operands[1], u64, scope)

    def fn(ctx, g):
        v = np.asarray(get(ctx, g)).astype(np.uint64)
        shared = (v >= np.uint64(M.SHARED_WINDOW)) & (v < np.uint64(M.SHARED_WINDOW + M.WINDOW_SIZE))
        if cta and space == "shared":
            # .shared::cta: only the executing CTA's window, not another CTA's (mapa) memory
            from ..machine.cluster import CLUSTER_BIT, RANK_MASK, RANK_SHIFT
            off = v - np.uint64(M.SHARED_WINDOW)
            rank = (off >> np.uint64(RANK_SHIFT)) & np.uint64(RANK_MASK)
            own = ctx.cluster_rank_of_cta[ctx.slot_cta[g.idx]].astype(np.uint64)
            shared &= (off < np.uint64(CLUSTER_BIT)) | (rank == own)
        local = (v >= np.uint64(M.LOCAL_WINDOW)) & (v < np.uint64(M.LOCAL_WINDOW + M.WINDOW_SIZE))
        const = (v >= np.uint64(M.CONST_BASE)) & (v < np.uint64(M.CONST_BASE + M.CONST_SIZE))
        param = (v >= np.uint64(M.PARAM_BASE)) & (v < np.uint64(M.PARAM_BASE + M.PARAM_SIZE))
        r = {"shared": shared, "local": local, "const": const, "param": param,
             "global": ~(shared | local | const | param)}[space]
        put(ctx, g, _b(r, g.n))
    d.fn = fn
