"""Integer, bitwise, move, select and compare instructions.

Arithmetic on ``.sN``/``.uN``/``.bN`` wraps modulo 2^N as the ISA defines; instructions whose
type is floating point are handed to ``ops.floating``.
"""
from __future__ import annotations

import numpy as np

from ...ir.nodes import Vec
from ...types import PtxType, by_name, pred, u32
from ..machine.registry import register
from ..state.operands import b128_reader, b128_writer, np_dtype, reader, writer

U = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _bits_type(t):
    return by_name(f"b{t.bits}")


def _is_float(t: PtxType) -> bool:
    return t.kind in ("float", "packed")


def _srcs(prog, ins, t, scope, first=1):
    return [reader(prog, o, t, scope) for o in ins.operands[first:]]


def _dst(prog, ins, t, scope):
    return writer(prog, ins.operands[0], t, scope)


def _unsigned(t):
    return np.dtype(U[t.bits])


def _as(v, dt):
    a = np.asarray(v)
    return a.view(dt) if a.dtype.itemsize == dt.itemsize else a.astype(dt)


def _simple(prog, d, ins, scope, dec, fn, t=None):
    """d = fn(a, b, ...) with every operand of the instruction's type."""
    t = t or dec.type
    put = _dst(prog, ins, t, scope)
    srcs = _srcs(prog, ins, t, scope)
    if len(srcs) == 1:
        a, = srcs
        d.fn = lambda ctx, g: put(ctx, g, fn(a(ctx, g)))
    elif len(srcs) == 2:
        a, b = srcs
        d.fn = lambda ctx, g: put(ctx, g, fn(a(ctx, g), b(ctx, g)))
    elif len(srcs) == 3:
        a, b, c = srcs
        d.fn = lambda ctx, g: put(ctx, g, fn(a(ctx, g), b(ctx, g), c(ctx, g)))
    else:
        d.fn = lambda ctx, g: put(ctx, g, fn(*[s(ctx, g) for s in srcs]))


def _carry_ops(prog, d, ins, scope, dec, t, op, use_cf):
    """add.cc / addc / sub.cc / subc / mad.cc / madc (``op`` add | sub | mad; ``use_cf``: the
    ...c forms add the carry in): the carry (borrow for sub) flag lives in a per-thread
    register ``%cc``."""
    set_cf = dec.has(".cc")
    put = _dst(prog, ins, t, scope)
    srcs = _srcs(prog, ins, t, scope)
    if "%cc" not in prog.regs:
        from ..state.operands import RegInfo
        prog.regs["%cc"] = RegInfo("%cc", u32)
    ud = _unsigned(t)
    ut = by_name(f"u{t.bits}")
    hi = dec.has(".hi")

    def run(ctx, g):
        vals = [np.broadcast_to(_as(s(ctx, g), ud), (g.n,)) for s in srcs]
        cf = ctx.read("%cc", g).astype(ud) if use_cf else ud.type(0)
        with np.errstate(over="ignore"):
            if op != "mad":
                x, y = vals
            else:
                p = mulhi(vals[0], vals[1], ut) if hi else vals[0] * vals[1]
                x, y = vals[2], np.asarray(p, ud)
            if op == "sub":
                s1 = x - y
                c1 = x < y
                r = s1 - cf
                c2 = s1 < cf
            else:
                s1 = x + y
                c1 = s1 < x
                r = s1 + cf
                c2 = r < s1
        put(ctx, g, np.asarray(r, ud).view(np_dtype(t)))
        if set_cf:
            ctx.write("%cc", g, (c1 | c2).astype(np.uint32))
    d.fn = run


# ----------------------------------------------------------------------------- add/sub/mul/mad
def _f32x2(dec):
    return dec.has(".f32x2")


@register("add", "sub")
def _addsub(prog, d, ins, scope, dec):
    if _f32x2(dec):
        from .floating import f32x2
        return f32x2(prog, d, ins, scope, dec)
    t = dec.type
    if _is_float(t):
        from .floating import arith
        return arith(prog, d, ins, scope, dec, t)
    if dec.has(".cc"):
        return _carry_ops(prog, d, ins, scope, dec, t, ins.opcode, False)
    sat = dec.has(".sat")
    if sat:
        lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
        dt = np_dtype(t)
        if ins.opcode == "add":
            fn = lambda a, b: np.clip(np.asarray(a, np.int64) + np.asarray(b, np.int64), lo, hi).astype(dt)
        else:
            fn = lambda a, b: np.clip(np.asarray(a, np.int64) - np.asarray(b, np.int64), lo, hi).astype(dt)
        return _simple(prog, d, ins, scope, dec, fn, t)
    _simple(prog, d, ins, scope, dec, np.add if ins.opcode == "add" else np.subtract, t)


def _with_carry(op):
    return lambda prog, d, ins, scope, dec: _carry_ops(prog, d, ins, scope, dec, dec.type, op, True)


register("addc")(_with_carry("add"))
register("subc")(_with_carry("sub"))
register("madc")(_with_carry("mad"))


def mulhi(a, b, t):
    """High half of the 2N-bit product."""
    bits = t.bits
    if bits < 64:
        wide = np.int64 if t.is_signed else np.uint64
        p = np.asarray(a).astype(wide) * np.asarray(b).astype(wide)
        return (p >> bits).astype(np_dtype(t))
    return _mulhi64(a, b, t.is_signed).view(np_dtype(t))


def _mulhi64(a, b, signed):
    a = np.asarray(a).astype(np.int64 if signed else np.uint64).view(np.uint64)
    b = np.asarray(b).astype(np.int64 if signed else np.uint64).view(np.uint64)
    a, b = np.broadcast_arrays(a, b)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    al, ah = a & m32, a >> s32
    bl, bh = b & m32, b >> s32
    ll = al * bl
    lh = al * bh
    hl = ah * bl
    hh = ah * bh
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    if signed:
        hi = hi - np.where(a.view(np.int64) < 0, b, np.uint64(0)) - np.where(b.view(np.int64) < 0, a, np.uint64(0))
    return hi


def widen(t: PtxType) -> PtxType:
    return by_name(("s" if t.is_signed else "u") + str(t.bits * 2))


@register("mul")
def _mul(prog, d, ins, scope, dec):
    if _f32x2(dec):
        from .floating import f32x2
        return f32x2(prog, d, ins, scope, dec)
    t = dec.type
    if _is_float(t):
        from .floating import arith
        return arith(prog, d, ins, scope, dec, t)
    if dec.has(".wide"):
        wt = widen(t)
        wd = np_dtype(wt)
        put = _dst(prog, ins, wt, scope)
        a, b = _srcs(prog, ins, t, scope)
        d.fn = lambda ctx, g: put(ctx, g, np.asarray(a(ctx, g)).astype(wd) * np.asarray(b(ctx, g)).astype(wd))
    elif dec.has(".hi"):
        _simple(prog, d, ins, scope, dec, lambda a, b: mulhi(a, b, t), t)
    else:
        _simple(prog, d, ins, scope, dec, np.multiply, t)


@register("mad")
def _mad(prog, d, ins, scope, dec):
    t = dec.type
    if _is_float(t):
        from .floating import fma
        return fma(prog, d, ins, scope, dec, t)
    if dec.has(".cc"):
        return _carry_ops(prog, d, ins, scope, dec, t, "mad", False)
    if dec.has(".wide"):
        wt = widen(t)
        wd = np_dtype(wt)
        put = _dst(prog, ins, wt, scope)
        a, b = _srcs(prog, ins, t, scope)[:2]
        c = reader(prog, ins.operands[3], wt, scope)
        d.fn = lambda ctx, g: put(ctx, g, np.asarray(a(ctx, g)).astype(wd) * np.asarray(b(ctx, g)).astype(wd)
                                  + c(ctx, g))
    elif dec.has(".hi"):
        if dec.has(".sat"):
            def fn(a, b, c):
                p = np.asarray(a).astype(np.int64) * np.asarray(b).astype(np.int64)
                return np.clip((p >> 32) + np.asarray(c).astype(np.int64), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
            return _simple(prog, d, ins, scope, dec, fn, t)
        _simple(prog, d, ins, scope, dec, lambda a, b, c: mulhi(a, b, t) + c, t)
    else:
        _simple(prog, d, ins, scope, dec, lambda a, b, c: a * b + c, t)


@register("mul24", "mad24")
def _mul24(prog, d, ins, scope, dec):
    t = dec.type
    hi = dec.has(".hi")
    signed = t.is_signed
    dt = np_dtype(t)

    def m24(a, b):
        a = np.asarray(a).astype(np.int64)
        b = np.asarray(b).astype(np.int64)
        if signed:
            a = ((a & 0xFFFFFF) ^ 0x800000) - 0x800000
            b = ((b & 0xFFFFFF) ^ 0x800000) - 0x800000
        else:
            a, b = a & 0xFFFFFF, b & 0xFFFFFF
        p = a * b
        r = (p >> 16) if hi else p
        return (r & 0xFFFFFFFF).astype(np.uint32).view(dt)
    if ins.opcode == "mul24":
        _simple(prog, d, ins, scope, dec, m24, t)
    else:
        _simple(prog, d, ins, scope, dec, lambda a, b, c: m24(a, b) + c, t)


@register("sad")
def _sad(prog, d, ins, scope, dec):
    t = dec.type
    dt = np_dtype(t)
    _simple(prog, d, ins, scope, dec, lambda a, b, c: (np.abs(np.asarray(a).astype(np.int64) - np.asarray(b).astype(np.int64))
                                                  .astype(dt) + c), t)


@register("div", "rem")
def _div(prog, d, ins, scope, dec):
    t = dec.type
    if _is_float(t):
        from .floating import div
        return div(prog, d, ins, scope, dec, t)
    dt = np_dtype(t)
    is_div = ins.opcode == "div"
    signed = t.is_signed

    def fn(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dt), np.asarray(b, dt))
        zero = b == 0
        bb = np.where(zero, 1, b).astype(dt)
        if signed:
            ovf = (a == np.iinfo(dt).min) & (bb == -1)
            bb = np.where(ovf, 1, bb).astype(dt)
            q = np.abs(a.astype(np.int64) if t.bits < 64 else a) // np.abs(bb.astype(np.int64) if t.bits < 64 else bb)
            q = np.where((a < 0) != (bb < 0), -q, q)
            r = a - (q * bb).astype(dt) if t.bits < 64 else a - q * bb
            q = np.where(ovf, a, q)
            r = np.where(ovf, 0, r)
        else:
            q = a // bb
            r = a % bb
        if is_div:
            return np.where(zero, np.array(-1).astype(dt) if signed else np.iinfo(dt).max, q).astype(dt)
        return np.where(zero, a, r).astype(dt)
    _simple(prog, d, ins, scope, dec, fn, t)


@register("abs", "neg")
def _absneg(prog, d, ins, scope, dec):
    t = dec.type
    if _is_float(t):
        from .floating import absneg
        return absneg(prog, d, ins, scope, dec, t)
    _simple(prog, d, ins, scope, dec, np.abs if ins.opcode == "abs" else np.negative, t)


@register("min", "max")
def _minmax(prog, d, ins, scope, dec):
    t = dec.type
    if _is_float(t):
        from .floating import minmax
        return minmax(prog, d, ins, scope, dec, t)
    f = np.minimum if ins.opcode == "min" else np.maximum
    if dec.has(".relu"):
        dt = np_dtype(t)
        _simple(prog, d, ins, scope, dec, lambda a, b: np.maximum(f(a, b), dt.type(0)), t)
    else:
        _simple(prog, d, ins, scope, dec, f, t)


# ----------------------------------------------------------------------------- mov / select
@register("mov")
def _mov(prog, d, ins, scope, dec):
    t = dec.type
    dst, src = ins.operands[0], ins.operands[1]
    if t.bits == 128:
        return _mov_b128(prog, d, ins, scope)
    if isinstance(src, Vec) or isinstance(dst, Vec):
        return _mov_pack(prog, d, ins, scope, dec, t)
    put = writer(prog, dst, t, scope)
    get = reader(prog, src, t, scope)

    def mov(ctx, g):
        v = get(ctx, g)
        if isinstance(v, np.ndarray) and g.full:
            v = v.copy()          # registers never share storage
        put(ctx, g, v)
    d.fn = mov


def _mov_b128(prog, d, ins, scope):
    """mov.b128: copy, pack ``{2 x .b64}`` / ``{4 x .b32}`` (element 0 the low bits) or unpack."""
    dst, src = ins.operands[0], ins.operands[1]
    if isinstance(src, Vec):
        n = len(src.items)
        gets = [reader(prog, o, by_name(f"b{128 // n}"), scope) for o in src.items]
        put = b128_writer(prog, dst, scope)
        edt = np.dtype(np.uint64 if n == 2 else np.uint32)

        def pack(ctx, g):
            cols = [np.broadcast_to(np.asarray(f(ctx, g)).astype(edt), (g.n,)) for f in gets]
            put(ctx, g, np.stack(cols, axis=1).view(np.uint64))
        d.fn = pack
    elif isinstance(dst, Vec):
        n = len(dst.items)
        et = by_name(f"b{128 // n}")
        puts = [writer(prog, o, et, scope) for o in dst.items]
        get = b128_reader(prog, src, scope)

        def unpack(ctx, g):
            v = get(ctx, g).view(np.uint64 if n == 2 else np.uint32)
            for i, p in enumerate(puts):
                p(ctx, g, np.ascontiguousarray(v[:, i]))
        d.fn = unpack
    else:
        get, put = b128_reader(prog, src, scope), b128_writer(prog, dst, scope)

        def mov128(ctx, g):
            put(ctx, g, get(ctx, g).copy())
        d.fn = mov128


def _mov_pack(prog, d, ins, scope, dec, t):
    dst, src = ins.operands[0], ins.operands[1]
    if isinstance(src, Vec):
        n = len(src.items)
        et = by_name(f"b{t.bits // n}")
        gets = [reader(prog, o, et, scope) for o in src.items]
        put = writer(prog, dst, _bits_type(t), scope)
        w = t.bits // n
        wide = np.dtype(U[t.bits])

        def pack(ctx, g):
            r = np.zeros(g.n, wide)
            ctx.lenient = ctx.sanitize         # an undefined element leaves undefined bits (LLVM undef)
            try:
                for i, f in enumerate(gets):
                    ctx.tshift = i * w
                    v = np.asarray(f(ctx, g)).astype(wide)
                    r |= v << wide.type(i * w)
            finally:
                ctx.lenient, ctx.tshift = False, 0
            put(ctx, g, r)
        d.fn = pack
    else:
        n = len(dst.items)
        et = by_name(f"b{t.bits // n}")
        puts = [writer(prog, o, et, scope) for o in dst.items]
        get = reader(prog, src, _bits_type(t), scope)
        w = t.bits // n
        edt = np.dtype(U[w])

        def unpack(ctx, g):
            v = np.broadcast_to(np.asarray(get(ctx, g)), (g.n,))
            try:
                for i, p in enumerate(puts):
                    ctx.tshift = i * w              # destination i takes these bits' definedness
                    p(ctx, g, (v >> v.dtype.type(i * w)).astype(edt))
            finally:
                ctx.tshift = 0
        d.fn = unpack


@register("selp")
def _selp(prog, d, ins, scope, dec):
    t = dec.type
    put = _dst(prog, ins, t, scope)
    a, b = (reader(prog, o, t, scope) for o in ins.operands[1:3])
    c = reader(prog, ins.operands[3], pred, scope)
    dt = np_dtype(t)
    d.fn = lambda ctx, g: put(ctx, g, np.where(c(ctx, g), a(ctx, g), b(ctx, g)).astype(dt, copy=False))


@register("slct")
def _slct(prog, d, ins, scope, dec):
    tys = list(dec.types)
    t, ct = tys[0], tys[-1]
    put = _dst(prog, ins, t, scope)
    a, b = (reader(prog, o, t, scope) for o in ins.operands[1:3])
    c = reader(prog, ins.operands[3], ct, scope)
    ftz = dec.has(".ftz")
    dt = np_dtype(t)

    def fn(ctx, g):
        cv = np.asarray(c(ctx, g))
        if ct.kind == "float" and ftz:
            from ..state.fp import ftz32
            cv = ftz32(cv)
        sel = cv >= 0
        if ct.kind == "float":
            sel = sel | (cv == 0)            # -0.0 counts as >= 0
        put(ctx, g, np.broadcast_to(np.where(sel, a(ctx, g), b(ctx, g)).astype(dt), (g.n,)))
    d.fn = fn


# ----------------------------------------------------------------------------- compare
# integer comparisons: lo/ls/hi/hs are the unsigned ones
_INT_CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
    "hi": np.greater, "hs": np.greater_equal,
}
_UNSIGNED_CMP = frozenset({"lo", "ls", "hi", "hs"})


def compare_fn(dec, t):
    """Element-wise comparison for setp/set (integers here, floats in ops_float)."""
    cmp = dec.get("cmp")[1:]
    if t.kind in ("float", "packed"):
        from .floating import float_compare
        return float_compare(cmp, t, dec.has(".ftz"))
    if cmp in _UNSIGNED_CMP:
        dt = _unsigned(t)
        f = _INT_CMP[cmp]
        return lambda a, b: f(_as(a, dt), _as(b, dt))
    return _INT_CMP[cmp]


def _boolop(dec):
    """np.logical_and | or | xor for the chosen ``.bool`` option, or None."""
    opt = dec.get("bool")
    return None if opt is None else getattr(np, "logical_" + opt[1:])


@register("setp")
def _setp(prog, d, ins, scope, dec):
    t = dec.type
    cmp = compare_fn(dec, t)
    boolop = _boolop(dec)
    dst = ins.operands[0]
    from ...ir.nodes import PredPair
    if isinstance(dst, PredPair):
        p1, p2 = writer(prog, dst.first, pred, scope), writer(prog, dst.second, pred, scope)
    else:
        p1, p2 = writer(prog, dst, pred, scope), None
    a, b = (reader(prog, o, t, scope) for o in ins.operands[1:3])
    c = reader(prog, ins.operands[3], pred, scope) if len(ins.operands) > 3 else None
    if t.kind == "packed":
        from .floating import packed_setp
        return packed_setp(prog, d, ins, scope, dec, t, cmp, boolop, p1, p2, a, b, c)

    def fn(ctx, g):
        r = cmp(a(ctx, g), b(ctx, g))
        if type(r) is not np.ndarray or r.shape != (g.n,):
            r = np.broadcast_to(r, (g.n,))
        if boolop is not None:
            cv = c(ctx, g)
            p1(ctx, g, np.broadcast_to(boolop(r, cv), (g.n,)))
            if p2 is not None:
                p2(ctx, g, np.broadcast_to(boolop(~r, cv), (g.n,)))
        else:
            p1(ctx, g, r.copy() if not r.flags.owndata else r)
            if p2 is not None:
                p2(ctx, g, ~r)
    d.fn = fn


@register("set")
def _set(prog, d, ins, scope, dec):
    tys = list(dec.types)
    dt_t, st = tys[0], tys[-1]
    cmp = compare_fn(dec, st)
    boolop = _boolop(dec)
    put = _dst(prog, ins, dt_t, scope)
    a, b = (reader(prog, o, st, scope) for o in ins.operands[1:3])
    c = reader(prog, ins.operands[3], pred, scope) if len(ins.operands) > 3 else None
    ddt = np_dtype(dt_t)
    if dt_t.kind == "float":
        tv, fv = ddt.type(1.0), ddt.type(0.0)
    else:
        tv, fv = np.array(0xFFFFFFFF, np.uint32).view(ddt)[()], ddt.type(0)

    def fn(ctx, g):
        r = cmp(a(ctx, g), b(ctx, g))
        if boolop is not None:
            r = boolop(r, c(ctx, g))
        put(ctx, g, np.broadcast_to(np.where(r, tv, fv).astype(ddt), (g.n,)))
    d.fn = fn
