"""Bit-manipulation and logic instructions: popc, clz, bfind, brev, bfe, bfi, bmsk, szext, fns,
dp4a/dp2a, and/or/xor/not/cnot, lop3, shl/shr, shf and prmt (every mode)."""
from __future__ import annotations

import numpy as np

from ...ir.nodes import Imm
from ...types import by_name, u32
from ..machine.registry import register
from ..state.operands import SINT, UINT, imm_value, np_dtype, per_thread, reader, writer
from .integer import U, _dst, _simple, _bits_type


# ----------------------------------------------------------------------------- bit ops
def _popc(x, bits):
    x = np.asarray(x).astype(np.uint64)
    return np.bitwise_count(x).astype(np.uint32)


def _clz(x, bits):
    x = np.asarray(x).astype(np.uint64)
    out = np.full(x.shape, bits, np.uint32)
    nz = x != 0
    if nz.any():
        # floor(log2) via float is inexact for 64-bit values: use bit smearing + popcount
        y = x.copy()
        for s in (1, 2, 4, 8, 16, 32):
            y |= y >> np.uint64(s)
        out = np.where(nz, bits - np.bitwise_count(y).astype(np.uint32), out)
    return out.astype(np.uint32)


@register("popc", "clz")
def _popc_clz(prog, d, ins, scope, dec):
    t = dec.type
    put = _dst(prog, ins, u32, scope)
    a = reader(prog, ins.operands[1], _bits_type(t), scope)
    f = _popc if ins.opcode == "popc" else _clz
    d.fn = lambda ctx, g: put(ctx, g, f(a(ctx, g), t.bits))


@register("bfind")
def _bfind(prog, d, ins, scope, dec):
    t = dec.type
    shiftamt = dec.has(".shiftamt")
    put = _dst(prog, ins, u32, scope)
    a = reader(prog, ins.operands[1], t, scope)
    bits = t.bits

    def fn(ctx, g):
        x = np.asarray(a(ctx, g))
        if t.is_signed:
            x = np.where(x < 0, ~x, x)
        u = x.astype(np.uint64) if x.dtype.kind == "u" else x.view(UINT[bits]).astype(np.uint64)
        pos = (bits - 1 - _clz(u, bits).astype(np.int64))
        res = np.where(u == 0, 0xFFFFFFFF, (bits - 1 - pos) if shiftamt else pos)
        put(ctx, g, np.broadcast_to(res.astype(np.int64) & 0xFFFFFFFF, (g.n,)).astype(np.uint32))
    d.fn = fn


@register("brev")
def _brev(prog, d, ins, scope, dec):
    t = dec.type
    bits = t.bits

    def rev(x):
        x = np.asarray(x).astype(np.uint64)
        r = np.zeros_like(x)
        for i in range(bits):
            r |= ((x >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
        return r.astype(U[bits])
    _simple(prog, d, ins, scope, dec, rev, _bits_type(t))


@register("bfe")
def _bfe(prog, d, ins, scope, dec):
    t = dec.type
    bits = t.bits
    put = _dst(prog, ins, t, scope)
    a = reader(prog, ins.operands[1], t, scope)
    b = reader(prog, ins.operands[2], u32, scope)
    c = reader(prog, ins.operands[3], u32, scope)
    dt = np_dtype(t)

    def fn(ctx, g):
        x = np.asarray(a(ctx, g))
        pos = np.asarray(b(ctx, g)).astype(np.int64) & 0xFF
        ln = np.asarray(c(ctx, g)).astype(np.int64) & 0xFF
        x, pos, ln = np.broadcast_arrays(x, pos, ln)
        ux = x.view(U[bits]).astype(np.uint64) if x.dtype.itemsize * 8 == bits else x.astype(np.uint64)
        eff = np.clip(np.minimum(ln, bits - pos), 0, 64)          # field bits that exist in a
        shifted = ux >> np.minimum(pos, 63).astype(np.uint64)
        mask = np.where(eff >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                        (np.uint64(1) << np.minimum(eff, 63).astype(np.uint64)) - np.uint64(1))
        r = np.where(eff > 0, shifted & mask, np.uint64(0))
        if t.is_signed:
            sbit_pos = np.minimum(pos + ln - 1, bits - 1)
            sbit = (ux >> np.maximum(sbit_pos, 0).astype(np.uint64)) & np.uint64(1)
            sbit = np.where(ln == 0, np.uint64(0), sbit)
            r = r | np.where(sbit == 1, ~mask, np.uint64(0))
        put(ctx, g, (r & np.uint64((1 << bits) - 1)).astype(U[bits]).view(dt))
    d.fn = fn


@register("bfi")
def _bfi(prog, d, ins, scope, dec):
    t = dec.type
    bits = t.bits
    put = _dst(prog, ins, t, scope)
    a = reader(prog, ins.operands[1], t, scope)
    bb = reader(prog, ins.operands[2], t, scope)
    c = reader(prog, ins.operands[3], u32, scope)
    e = reader(prog, ins.operands[4], u32, scope)
    full = (1 << bits) - 1

    def fn(ctx, g):
        x, y = np.asarray(a(ctx, g)).astype(np.uint64), np.asarray(bb(ctx, g)).astype(np.uint64)
        pos = np.asarray(c(ctx, g)).astype(np.int64) & 0xFF
        ln = np.asarray(e(ctx, g)).astype(np.int64) & 0xFF
        x, y, pos, ln = np.broadcast_arrays(x, y, pos, ln)
        lnc = np.minimum(ln, bits)
        mask = np.where(lnc >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                        (np.uint64(1) << np.minimum(lnc, 63).astype(np.uint64)) - np.uint64(1))
        sh = np.minimum(pos, 63).astype(np.uint64)
        m = np.where(pos >= bits, np.uint64(0), (mask << sh) & np.uint64(full))
        r = (y & ~m) | ((x << sh) & m)
        put(ctx, g, r.astype(U[bits]))
    d.fn = fn


@register("bmsk")
def _bmsk(prog, d, ins, scope, dec):
    wrap = dec.has(".wrap")

    def fn(a, b):
        a = np.asarray(a).astype(np.int64)
        b = np.asarray(b).astype(np.int64)
        if wrap:
            a, b = a & 31, b & 31
        else:
            a, b = np.minimum(a, 32), np.minimum(b, 32)
        m = ((np.int64(1) << np.minimum(a + b, 32)) - 1) & ~((np.int64(1) << a) - 1)
        return (m & 0xFFFFFFFF).astype(np.uint32)
    _simple(prog, d, ins, scope, dec, fn, u32)


@register("szext")
def _szext(prog, d, ins, scope, dec):
    t = dec.type
    wrap = dec.has(".wrap")

    def fn(a, b):
        a = np.asarray(a).astype(np.int64) & 0xFFFFFFFF
        b = np.asarray(b).astype(np.int64)
        b = (b & 31) if wrap else np.minimum(b, 32)
        m = (np.int64(1) << b) - 1
        v = a & m
        if t.is_signed:
            sign = np.where(b > 0, (v >> np.maximum(b - 1, 0)) & 1, 0)
            v = np.where((sign == 1) & (b < 32), v | (~m & 0xFFFFFFFF), v)
        return (v & 0xFFFFFFFF).astype(np.uint32).view(np_dtype(t))
    _simple(prog, d, ins, scope, dec, fn, t)


@register("fns")
def _fns(prog, d, ins, scope, dec):
    put = _dst(prog, ins, u32, scope)
    m, base, off = (reader(prog, o, t, scope) for o, t in zip(ins.operands[1:], (u32, u32, by_name("s32"))))

    def fn(ctx, g):
        mm = np.broadcast_to(np.asarray(m(ctx, g), np.uint32), (g.n,))
        bs = np.broadcast_to(np.asarray(base(ctx, g), np.int64), (g.n,))
        of = np.broadcast_to(np.asarray(off(ctx, g), np.int64), (g.n,))
        out = np.full(g.n, 0xFFFFFFFF, np.uint32)
        for j in range(g.n):
            bits_ = [i for i in range(32) if int(mm[j]) >> i & 1]
            b0, k = int(bs[j]), int(of[j])
            if k >= 0:
                cand = [i for i in bits_ if i >= b0]
                if k < len(cand):
                    out[j] = cand[k]
            else:
                cand = [i for i in reversed(bits_) if i <= b0]
                if -k - 1 < len(cand):
                    out[j] = cand[-k - 1]
        put(ctx, g, out)
    d.fn = fn


@register("dp4a", "dp2a")
def _dp(prog, d, ins, scope, dec):
    tys = list(dec.types)
    at, bt = tys[0], tys[1]
    four = ins.opcode == "dp4a"
    hi = dec.has(".hi")
    st = by_name("s32") if (at.is_signed or bt.is_signed) else u32
    put = _dst(prog, ins, st, scope)
    a = reader(prog, ins.operands[1], u32, scope)
    b = reader(prog, ins.operands[2], u32, scope)
    c = reader(prog, ins.operands[3], st, scope)

    def lanes(x, n, signed):
        x = np.asarray(x).astype(np.int64)
        w = 32 // n
        out = []
        for i in range(n):
            v = (x >> (i * w)) & ((1 << w) - 1)
            if signed:
                v = np.where(v >= (1 << (w - 1)), v - (1 << w), v)
            out.append(v)
        return out

    def fn(ctx, g):
        if four:
            la, lb = lanes(a(ctx, g), 4, at.is_signed), lanes(b(ctx, g), 4, bt.is_signed)
        else:
            la = lanes(a(ctx, g), 2, at.is_signed)
            lb = lanes(b(ctx, g), 4, bt.is_signed)
            lb = lb[2:] if hi else lb[:2]
        acc = np.asarray(c(ctx, g)).astype(np.int64)
        for x, y in zip(la, lb):
            acc = acc + x * y
        put(ctx, g, np.broadcast_to((acc & 0xFFFFFFFF).astype(np.uint32).view(np_dtype(st)), (g.n,)))
    d.fn = fn


# ----------------------------------------------------------------------------- logic
def _logic(f):
    def factory(prog, d, ins, scope, dec):
        t = dec.type
        _simple(prog, d, ins, scope, dec, f, t if t.kind == "pred" else _bits_type(t))
    return factory


register("and")(_logic(np.bitwise_and))
register("or")(_logic(np.bitwise_or))
register("xor")(_logic(np.bitwise_xor))


@register("not")
def _not(prog, d, ins, scope, dec):
    t = dec.type
    t = t if t.kind == "pred" else _bits_type(t)
    _simple(prog, d, ins, scope, dec, np.invert, t)


@register("cnot")
def _cnot(prog, d, ins, scope, dec):
    t = _bits_type(dec.type)
    dt = np_dtype(t)
    _simple(prog, d, ins, scope, dec, lambda a: (np.asarray(a) == 0).astype(dt), t)


@register("lop3")
def _lop3(prog, d, ins, scope, dec):
    """lop3.b32 d, a, b, c, immLut; and lop3.{or,and}.b32 d|p, a, b, c, immLut, q."""
    from ...ir.nodes import PredPair
    from ...types import b32, pred
    dst = ins.operands[0]
    boolop = (dec.get("bool") or ".")[1:] or None       # and | or
    if isinstance(dst, PredPair):
        put = writer(prog, dst.first, b32, scope)
        putp = writer(prog, dst.second, pred, scope)
    else:
        put, putp = _dst(prog, ins, b32, scope), None
    a, b, c = (reader(prog, o, b32, scope) for o in ins.operands[1:4])
    lut = reader(prog, ins.operands[4], u32, scope)
    q = reader(prog, ins.operands[5], pred, scope) if len(ins.operands) > 5 else None

    def fn(ctx, g):
        x, y, z = (np.asarray(f(ctx, g)).astype(np.uint32) for f in (a, b, c))
        L = int(np.asarray(lut(ctx, g)).flat[0]) & 0xFF
        r = np.zeros(np.broadcast(x, y, z).shape, np.uint32)
        full = np.uint32(0xFFFFFFFF)
        for i in range(8):
            if L >> i & 1:
                term = (x if i & 4 else ~x & full) & (y if i & 2 else ~y & full) & (z if i & 1 else ~z & full)
                r |= term
        r = np.broadcast_to(r, (g.n,))
        put(ctx, g, r)
        if putp is not None:
            nz = r != 0
            if q is not None:
                qv = q(ctx, g)
                nz = (nz & qv) if boolop == "and" else (nz | qv)
            putp(ctx, g, np.ascontiguousarray(nz))
    d.fn = fn


@register("shl", "shr")
def _shift(prog, d, ins, scope, dec):
    t = dec.type
    bits = t.bits
    if ins.opcode == "shl":
        t = _bits_type(t) if t.kind != "signed" else t
    put = _dst(prog, ins, t, scope)
    a = reader(prog, ins.operands[1], t, scope)
    b = reader(prog, ins.operands[2], u32, scope)
    dt = np_dtype(t)
    left = ins.opcode == "shl"
    signed = t.is_signed and not left
    if isinstance(ins.operands[2], Imm):        # a constant shift: one NumPy shift
        n = int(np.asarray(imm_value(ins.operands[2].text, u32)))
        if n >= bits and not signed:

            def fn(ctx, g):
                put(ctx, g, np.zeros(g.n, dt))
        else:
            sc = dt.type(min(n, bits - 1))
            shift = np.left_shift if left else np.right_shift

            def fn(ctx, g):
                put(ctx, g, per_thread(shift(np.asarray(a(ctx, g), dt), sc), g.n))
        d.fn = fn
        return

    def fn(ctx, g):
        x = np.asarray(a(ctx, g))
        s = np.asarray(b(ctx, g)).astype(np.int64)
        big = s >= bits
        sc = np.minimum(s, bits - 1).astype(dt if dt.kind == "u" else np.dtype(SINT[bits]))
        if left:
            r = np.where(big, dt.type(0), np.left_shift(x, sc.astype(x.dtype)))
        elif signed:
            r = np.right_shift(x, sc.astype(x.dtype))      # >= bits: sign fill == shift by bits-1
        else:
            r = np.where(big, dt.type(0), np.right_shift(x, sc.astype(x.dtype)))
        put(ctx, g, np.broadcast_to(np.asarray(r, dt), (g.n,)))
    d.fn = fn


@register("shf")
def _shf(prog, d, ins, scope, dec):
    from ...types import b32
    left = dec.has(".l")
    wrap = dec.has(".wrap")
    put = _dst(prog, ins, b32, scope)
    a, b = (reader(prog, o, b32, scope) for o in ins.operands[1:3])
    c = reader(prog, ins.operands[3], u32, scope)

    def fn(ctx, g):
        lo = np.asarray(a(ctx, g)).astype(np.uint64)
        hi = np.asarray(b(ctx, g)).astype(np.uint64)
        n = np.asarray(c(ctx, g)).astype(np.uint64)
        n = (n & np.uint64(31)) if wrap else np.minimum(n, np.uint64(32))
        v = (hi << np.uint64(32)) | lo
        if left:
            r = (v << n) >> np.uint64(32)
        else:
            r = v >> n
        put(ctx, g, np.broadcast_to((r & np.uint64(0xFFFFFFFF)).astype(np.uint32), (g.n,)))
    d.fn = fn


@register("prmt")
def _prmt(prog, d, ins, scope, dec):
    from ...types import b32
    mode = (dec.get("mode") or ".")[1:] or None    # f4e | b4e | rc8 | ecl | ecr | rc16
    put = _dst(prog, ins, b32, scope)
    a, b, c = (reader(prog, o, b32, scope) for o in ins.operands[1:4])

    def fn(ctx, g):
        x = np.asarray(a(ctx, g)).astype(np.uint64)
        y = np.asarray(b(ctx, g)).astype(np.uint64)
        s = np.asarray(c(ctx, g)).astype(np.uint64)
        x, y, s = np.broadcast_arrays(x, y, s)
        v = x | (y << np.uint64(32))                 # bytes b0..b7
        byte = [((v >> np.uint64(8 * i)) & np.uint64(0xFF)) for i in range(8)]
        bytes_arr = np.stack(byte, axis=-1)
        out = np.zeros(x.shape, np.uint64)
        if mode is None:
            for i in range(4):
                sel = (s >> np.uint64(4 * i)) & np.uint64(0xF)
                idx = (sel & np.uint64(7)).astype(np.int64)
                val = np.take_along_axis(bytes_arr, idx[..., None], -1)[..., 0]
                sign = (sel & np.uint64(8)) != 0
                msb = (val >> np.uint64(7)) & np.uint64(1)
                val = np.where(sign, msb * np.uint64(0xFF), val)
                out |= val << np.uint64(8 * i)
        else:
            sel = (s & np.uint64(3)).astype(np.int64)
            tables = {
                "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
                "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
                "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
                "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
                "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
                "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
            }[mode]
            tab = np.array(tables)[sel]
            for i in range(4):
                val = np.take_along_axis(bytes_arr, tab[..., i:i + 1], -1)[..., 0]
                out |= val << np.uint64(8 * i)
        put(ctx, g, np.broadcast_to(out.astype(np.uint32), (g.n,)))
    d.fn = fn


