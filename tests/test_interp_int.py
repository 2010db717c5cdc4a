"""Integer, bit, move, select and compare instructions against hand-computed values, with the
edge cases the ISA defines (wraparound, INT_MIN, shift clamping, division by zero, carries)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.interpret import launch
from jax_pyptx.interpret.snippet import run_snippet as R
from jax_pyptx.toolchain import ptxas_check

U32 = 0xFFFFFFFF
IMIN, IMAX = -2 ** 31, 2 ** 31 - 1


def one(body, ins, out_t, n=None, decls=""):
    """Run ``body`` with inputs {name: (type, values)}; return output %d as a Python list."""
    n = n or max(len(np.atleast_1d(v)) for _, v in ins.values())
    return R(body, ins, {"d": out_t}, n=n, decls=decls)["d"].tolist()


@pytest.mark.parametrize("body,t,a,b,expect", [
    ("add.s32 %d, %a, %b;", "s32", [IMAX, IMIN, -5, 7], [1, -1, 5, -9], [IMIN, IMAX, 0, -2]),
    ("add.u32 %d, %a, %b;", "u32", [U32, 5], [1, 3], [0, 8]),
    ("add.sat.s32 %d, %a, %b;", "s32", [IMAX, IMIN, 1], [1, -1, 2], [IMAX, IMIN, 3]),
    ("sub.s32 %d, %a, %b;", "s32", [IMIN, 0, 3], [1, IMIN, 5], [IMAX, IMIN, -2]),
    ("sub.sat.s32 %d, %a, %b;", "s32", [IMIN, IMAX], [1, -1], [IMIN, IMAX]),
    ("add.u16 %d, %a, %b;", "u16", [65535, 10], [2, 20], [1, 30]),
    ("add.s64 %d, %a, %b;", "s64", [2 ** 63 - 1, -3], [1, 1], [-2 ** 63, -2]),
    ("mul.lo.s32 %d, %a, %b;", "s32", [65536, -3, 12345], [65536, 7, -6789], [0, -21, -83810205]),
    ("mul.hi.s32 %d, %a, %b;", "s32", [IMIN, -1, 65536 * 3], [IMIN, 1, 65536 * 5], [2 ** 30, -1, 15]),
    ("mul.hi.u32 %d, %a, %b;", "u32", [U32, 2 ** 31], [U32, 4], [U32 - 1, 2]),
    ("mul.lo.u16 %d, %a, %b;", "u16", [300, 65535], [300, 65535], [(300 * 300) & 0xFFFF, 1]),
    ("div.s32 %d, %a, %b;", "s32", [7, -7, 7, -7, IMIN, 5], [2, 2, -2, -2, -1, 0], [3, -3, -3, 3, IMIN, -1]),
    ("rem.s32 %d, %a, %b;", "s32", [7, -7, 7, -7, IMIN, 5], [2, 2, -2, -2, -1, 0], [1, -1, 1, -1, 0, 5]),
    ("div.u32 %d, %a, %b;", "u32", [7, U32, 5], [2, 16, 0], [3, U32 >> 4, U32]),
    ("rem.u32 %d, %a, %b;", "u32", [7, U32, 5], [2, 16, 0], [1, 15, 5]),
    ("min.s32 %d, %a, %b;", "s32", [IMIN, 5, -1], [IMAX, -5, 1], [IMIN, -5, -1]),
    ("max.u32 %d, %a, %b;", "u32", [U32, 5], [0, 6], [U32, 6]),
    ("min.u16 %d, %a, %b;", "u16", [65535, 3], [1, 4], [1, 3]),
    ("max.relu.s32 %d, %a, %b;", "s32", [-5, -7, 3], [-6, 2, 1], [0, 2, 3]),
])
def test_arith(body, t, a, b, expect):
    got = one(body, {"a": (t, a), "b": (t, b)}, t)
    if t == "s32":
        expect = [((v + 2 ** 31) % 2 ** 32) - 2 ** 31 for v in expect]
    assert got == expect


def test_mad_lo_wraps():
    a, b, c = [3, IMAX, -7], [4, 2, 5], [5, 3, IMIN]
    got = one("mad.lo.s32 %d, %a, %b, %c;", {"a": ("s32", a), "b": ("s32", b), "c": ("s32", c)}, "s32")
    assert got == [((x * y + z + 2 ** 31) % 2 ** 32) - 2 ** 31 for x, y, z in zip(a, b, c)]


def test_mul_wide_and_mad_wide():
    got = R("mul.wide.s32 %w, %a, %b; mul.wide.u32 %x, %a, %b; mad.wide.s32 %y, %a, %b, %c;",
            {"a": ("s32", [IMIN, -1, 70000]), "b": ("s32", [IMIN, 5, 70000]), "c": ("s64", [1, 2, -3])},
            {"w": "s64", "x": "u64", "y": "s64"}, n=3, decls=".reg .s64 %w, %y; .reg .u64 %x;")
    assert got["w"].tolist() == [2 ** 62, -5, 4900000000]
    assert got["x"].tolist() == [2 ** 62, (U32 * 5), 4900000000]
    assert got["y"].tolist() == [2 ** 62 + 1, -3, 4899999997]


def test_mul_hi_64():
    a = [2 ** 64 - 1, 2 ** 63, 123456789123456789, 5]
    b = [2 ** 64 - 1, 2 ** 63, 987654321987654321, 7]
    got = one("mul.hi.u64 %d, %a, %b;", {"a": ("u64", a), "b": ("u64", b)}, "u64")
    assert got == [(x * y) >> 64 for x, y in zip(a, b)]
    sa = [-1, -(2 ** 63), 2 ** 62 + 12345, -7]
    sb = [-1, -(2 ** 63), -(2 ** 61) - 99, 3]
    got = one("mul.hi.s64 %d, %a, %b;", {"a": ("s64", sa), "b": ("s64", sb)}, "s64")
    assert got == [(x * y) >> 64 for x, y in zip(sa, sb)]


def test_div_s64_and_rem_u64():
    a = [-(2 ** 63), 2 ** 62 + 5, -17]
    b = [-1, 7, 5]
    got = one("div.s64 %d, %a, %b;", {"a": ("s64", a), "b": ("s64", b)}, "s64")
    assert got == [-(2 ** 63), (2 ** 62 + 5) // 7, -3]
    got = one("rem.u64 %d, %a, %b;", {"a": ("u64", [2 ** 64 - 1, 10]), "b": ("u64", [10, 3])}, "u64")
    assert got == [(2 ** 64 - 1) % 10, 1]


def test_carry_chain_128bit_add_and_sub():
    """add.cc/addc and sub.cc/subc compose 64-bit arithmetic from 32-bit halves."""
    xs = [(U32, U32), (0, 1), (0x80000000, 5), (U32, 0)]          # (lo, hi)
    ys = [(1, 0), (U32, 0), (0x80000000, 7), (1, U32)]
    out = R("add.cc.u32 %lo, %a, %c; addc.u32 %hi, %b, %e; sub.cc.u32 %slo, %a, %c; subc.u32 %shi, %b, %e;",
            {"a": ("u32", [x[0] for x in xs]), "b": ("u32", [x[1] for x in xs]),
             "c": ("u32", [y[0] for y in ys]), "e": ("u32", [y[1] for y in ys])},
            {"lo": "u32", "hi": "u32", "slo": "u32", "shi": "u32"}, n=4,
            decls=".reg .u32 %lo, %hi, %slo, %shi;")
    for i, (x, y) in enumerate(zip(xs, ys)):
        X, Y = x[0] | (x[1] << 32), y[0] | (y[1] << 32)
        s, dif = (X + Y) % 2 ** 64, (X - Y) % 2 ** 64
        assert (int(out["lo"][i]), int(out["hi"][i])) == (s & U32, s >> 32)
        assert (int(out["slo"][i]), int(out["shi"][i])) == (dif & U32, dif >> 32)


def test_mad_cc_chain():
    out = R("mad.lo.cc.u32 %lo, %a, %b, %c; madc.hi.u32 %hi, %a, %b, 0;",
            {"a": ("u32", [U32, 3]), "b": ("u32", [U32, 4]), "c": ("u32", [U32, 1])},
            {"lo": "u32", "hi": "u32"}, n=2, decls=".reg .u32 %lo, %hi;")
    for i, (a, b, c) in enumerate([(U32, U32, U32), (3, 4, 1)]):
        full = a * b + c
        assert int(out["lo"][i]) == full & U32
        assert int(out["hi"][i]) == full >> 32 & U32


@pytest.mark.parametrize("body,t,a,expect", [
    ("abs.s32 %d, %a;", "s32", [IMIN, -5, 5], [IMIN, 5, 5]),
    ("neg.s32 %d, %a;", "s32", [IMIN, 5], [IMIN, -5]),
    ("not.b32 %d, %a;", "b32", [0, U32], [U32, 0]),
    ("cnot.b32 %d, %a;", "b32", [0, 7], [1, 0]),
    ("popc.b32 %d, %a;", "b32", [0, U32, 0xF0F0], [0, 32, 8]),
    ("clz.b32 %d, %a;", "b32", [0, 1, U32, 0x00010000], [32, 31, 0, 15]),
    ("brev.b32 %d, %a;", "b32", [1, 0x80000000, 0x12345678], [0x80000000, 1, 0x1E6A2C48]),
])
def test_unary(body, t, a, expect):
    out_t = "u32" if body.startswith(("popc", "clz")) else t
    got = one(body, {"a": (t, a)}, out_t)
    if t == "s32":
        expect = [((v + 2 ** 31) % 2 ** 32) - 2 ** 31 for v in expect]
    assert got == expect


def test_popc_clz_64():
    a = [0, 2 ** 64 - 1, 1, 2 ** 40]
    out = R("popc.b64 %p, %a; clz.b64 %c, %a;", {"a": ("b64", a)}, {"p": "u32", "c": "u32"}, n=4,
            decls=".reg .u32 %p, %c;")
    assert out["p"].tolist() == [0, 64, 1, 1]
    assert out["c"].tolist() == [64, 0, 63, 23]


def test_bfind():
    a = [0, 1, 0x80000000, -1, -2, 0x00F00000]
    out = R("bfind.u32 %u, %a; bfind.s32 %s, %a; bfind.shiftamt.u32 %h, %a;", {"a": ("s32", a)},
            {"u": "u32", "s": "u32", "h": "u32"}, n=6, decls=".reg .u32 %u, %s, %h;")
    assert out["u"].tolist() == [U32, 0, 31, 31, 31, 23]
    assert out["s"].tolist() == [U32, 0, 30, U32, 0, 23]
    assert out["h"].tolist() == [U32, 31, 0, 0, 0, 8]


def test_bfe_and_bfi():
    a = [0xF0F0F0F0, 0x80000000, 0x12345678, 0xFFFF0000]
    pos = [4, 28, 0, 40]
    ln = [8, 8, 0, 4]
    out = R("bfe.u32 %u, %a, %p, %l; bfe.s32 %s, %a, %p, %l;",
            {"a": ("u32", a), "p": ("u32", pos), "l": ("u32", ln)}, {"u": "u32", "s": "s32"}, n=4,
            decls=".reg .u32 %u; .reg .s32 %s;")
    assert out["u"].tolist() == [0x0F, 0x8, 0, 0]
    # signed: sign bit of the field (or of a when pos+len > 32) is replicated
    assert out["s"].tolist() == [0x0F, -8, 0, -1]
    out = R("bfi.b32 %d, %a, %b, %p, %l;",
            {"a": ("b32", [0xAB, 0xFF, 1]), "b": ("b32", [0x12345678, 0, U32]), "p": ("u32", [8, 28, 40]),
             "l": ("u32", [8, 8, 1])}, {"d": "b32"}, n=3)
    assert out["d"].tolist() == [0x1234AB78, 0xF0000000, U32]


def test_shifts_clamp():
    out = R("shl.b32 %l, %a, %s; shr.u32 %r, %a, %s; shr.s32 %q, %a, %s;",
            {"a": ("s32", [-8, -8, -8, 1]), "s": ("u32", [1, 31, 40, 32])},
            {"l": "b32", "r": "u32", "q": "s32"}, n=4, decls=".reg .b32 %l; .reg .u32 %r; .reg .s32 %q;")
    assert out["l"].tolist() == [0xFFFFFFF0, 0, 0, 0]
    assert out["r"].tolist() == [0x7FFFFFFC, 1, 0, 0]
    assert out["q"].tolist() == [-4, -1, -1, 0]


def test_shf_funnel():
    out = R("shf.l.wrap.b32 %w, %a, %b, %c; shf.r.clamp.b32 %x, %a, %b, %c;",
            {"a": ("b32", [0x89ABCDEF, 0x89ABCDEF, 1]), "b": ("b32", [0x01234567, 0x01234567, 2]),
             "c": ("u32", [8, 40, 32])}, {"w": "b32", "x": "b32"}, n=3, decls=".reg .b32 %w, %x;")
    assert out["w"].tolist() == [0x23456789, 0x23456789, 2]
    assert out["x"].tolist() == [0x6789ABCD, 0x01234567, 2]


def test_prmt_modes():
    a, b = 0x33221100, 0x77665544
    b2 = 0xF7665544
    cases = [(b, 0x5140, 0x55114400), (b, 0x8888, 0x00000000), (b, 0x7777, 0x77777777),
             (b2, 0xB3B3, 0x00330033),        # 0xB: sign of byte 3 (0x33, msb clear) replicated
             (b2, 0xF3F3, 0xFF33FF33)]        # 0xF: sign of byte 7 (0xF7, msb set) replicated
    for bb, sel, exp in cases:
        got = one("prmt.b32 %d, %a, %b, %c;", {"a": ("b32", [a]), "b": ("b32", [bb]), "c": ("b32", [sel])}, "b32")
        assert got == [exp], (hex(sel), hex(got[0]))
    got = one("prmt.b32.f4e %d, %a, %b, %c;", {"a": ("b32", [a]), "b": ("b32", [b]), "c": ("b32", [1])}, "b32")
    assert got == [0x44332211]
    got = one("prmt.b32.rc8 %d, %a, %b, %c;", {"a": ("b32", [a]), "b": ("b32", [b]), "c": ("b32", [2])}, "b32")
    assert got == [0x22222222]


def test_lop3_and_logic():
    a, b, c = 0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA
    for lut, f in [(0x96, lambda x, y, z: x ^ y ^ z), (0xE8, lambda x, y, z: (x & y) | (x & z) | (y & z)),
                   (0x80, lambda x, y, z: x & y & z), (0xFE, lambda x, y, z: x | y | z)]:
        got = one(f"lop3.b32 %d, %a, %b, %c, {lut:#x};", {"a": ("b32", [a]), "b": ("b32", [b]), "c": ("b32", [c])}, "b32")
        assert got == [f(a, b, c) & U32]
    out = R("and.b32 %x, %a, %b; or.b32 %y, %a, %b; xor.b32 %z, %a, %b;",
            {"a": ("b32", [a]), "b": ("b32", [b])}, {"x": "b32", "y": "b32", "z": "b32"}, n=1,
            decls=".reg .b32 %x, %y, %z;")
    assert (out["x"][0], out["y"][0], out["z"][0]) == (a & b, a | b, a ^ b)


def test_pred_logic_and_setp_combinations():
    a = [1, 5, 5, -3]
    b = [2, 5, 4, 3]
    out = R("setp.lt.s32 %p|%q, %a, %b; setp.ge.and.s32 %r, %a, %b, %p; setp.ne.or.s32 %s, %a, %b, !%q;"
            "and.pred %t, %p, %q; xor.pred %u, %p, %q; not.pred %v, %p;",
            {"a": ("s32", a), "b": ("s32", b)}, {k: "pred" for k in "pqrstuv"}, n=4,
            decls=".reg .pred %p, %q, %r, %s, %t, %u, %v;")
    lt = [x < y for x, y in zip(a, b)]
    assert out["p"].tolist() == lt
    assert out["q"].tolist() == [not v for v in lt]
    assert out["r"].tolist() == [False] * 4                 # ge and lt
    assert out["s"].tolist() == [(x != y) or v for x, y, v in zip(a, b, lt)]
    assert out["t"].tolist() == [False] * 4
    assert out["u"].tolist() == [True] * 4
    assert out["v"].tolist() == [not v for v in lt]


def test_unsigned_compare_modes():
    out = R("setp.lo.u32 %p, %a, %b; setp.hs.u32 %q, %a, %b; setp.lt.s32 %r, %a, %b;",
            {"a": ("u32", [U32, 1]), "b": ("u32", [1, U32])}, {"p": "pred", "q": "pred", "r": "pred"}, n=2,
            decls=".reg .pred %p, %q, %r;")
    assert out["p"].tolist() == [False, True]
    assert out["q"].tolist() == [True, False]
    assert out["r"].tolist() == [True, False]          # as s32 0xFFFFFFFF == -1 < 1


def test_selp_slct_set():
    out = R("setp.gt.s32 %p, %a, 0; selp.s32 %x, %a, 100, %p; slct.s32.s32 %y, 1, 2, %a; "
            "set.lt.u32.s32 %z, %a, 0; set.lt.f32.s32 %w, %a, 0;",
            {"a": ("s32", [5, -5, 0])}, {"x": "s32", "y": "s32", "z": "u32", "w": "f32"}, n=3,
            decls=".reg .pred %p; .reg .s32 %x, %y; .reg .u32 %z; .reg .f32 %w;")
    assert out["x"].tolist() == [5, 100, 100]
    assert out["y"].tolist() == [1, 2, 1]
    assert out["z"].tolist() == [0, U32, 0]
    assert out["w"].tolist() == [0.0, 1.0, 0.0]
    out = R("slct.f32.f32 %y, 0f3F800000, 0f40000000, %a;",
            {"a": ("f32", np.array([-0.0, 1.0, -1.0, np.nan], np.float32))}, {"y": "f32"}, n=4,
            decls=".reg .f32 %y;")
    assert out["y"].tolist() == [1.0, 1.0, 2.0, 2.0]


def test_mov_pack_unpack_and_widths():
    out = R("mov.b64 %w, {%a, %b}; mov.b64 {%x, %y}, %w; mov.b32 %h, {%s, %t}; cvt.u32.u16 %z, %s;",
            {"a": ("b32", [0x11111111]), "b": ("b32", [0x22222222]), "s": ("b16", [0xAAAA]), "t": ("b16", [0xBBBB])},
            {"w": "b64", "x": "b32", "y": "b32", "h": "b32", "z": "u32"}, n=1,
            decls=".reg .b64 %w; .reg .b32 %x, %y, %h; .reg .u32 %z;")
    assert out["w"].tolist() == [0x2222222211111111]
    assert (out["x"][0], out["y"][0]) == (0x11111111, 0x22222222)
    assert out["h"].tolist() == [0xBBBBAAAA]
    assert out["z"].tolist() == [0xAAAA]


def test_mov_immediates_of_every_spelling():
    out = R("mov.b32 %a, 0f3F800000; mov.u32 %b, 0x10; mov.s32 %c, -1; mov.u32 %e, 010; mov.u32 %f, 0b101;"
            "mov.f32 %g, 0f40490FDB; mov.f64 %h, 0d400921FB54442D18; mov.u64 %i, 18446744073709551615U;",
            {}, {"a": "b32", "b": "u32", "c": "s32", "e": "u32", "f": "u32", "g": "f32", "h": "f64", "i": "u64"},
            n=1, decls=".reg .b32 %a; .reg .u32 %b, %e, %f; .reg .s32 %c; .reg .f32 %g; .reg .f64 %h; .reg .u64 %i;")
    assert out["a"].tolist() == [0x3F800000]
    assert out["b"].tolist() == [16] and out["c"].tolist() == [-1]
    assert out["e"].tolist() == [8] and out["f"].tolist() == [5]
    assert out["g"][0] == np.float32(np.pi)
    assert out["h"][0] == np.pi
    assert out["i"].tolist() == [2 ** 64 - 1]


def test_dp4a_dp2a_sad_mul24():
    a = [0x01020304, 0xFF7F8001]
    b = [0x05060708, 0x01020304]
    out = R("dp4a.u32.u32 %u, %a, %b, 10; dp4a.s32.s32 %s, %a, %b, -1; dp2a.lo.s32.s32 %l, %a, %b, 0;",
            {"a": ("b32", a), "b": ("b32", b)}, {"u": "u32", "s": "s32", "l": "s32"}, n=2,
            decls=".reg .u32 %u; .reg .s32 %s, %l;")

    def lanes(x, n, signed):
        w = 32 // n
        out = [(x >> (w * i)) & ((1 << w) - 1) for i in range(n)]
        return [v - (1 << w) if signed and v >> (w - 1) else v for v in out]
    for i in range(2):
        assert int(out["u"][i]) == (10 + sum(p * q for p, q in zip(lanes(a[i], 4, 0), lanes(b[i], 4, 0)))) & U32
        assert int(out["s"][i]) == -1 + sum(p * q for p, q in zip(lanes(a[i], 4, 1), lanes(b[i], 4, 1)))
        assert int(out["l"][i]) == sum(p * q for p, q in zip(lanes(a[i], 2, 1), lanes(b[i], 4, 1)[:2]))
    out = R("mul24.lo.u32 %x, %a, %b; mul24.hi.s32 %y, %a, %b; sad.u32 %z, %a, %b, 1;",
            {"a": ("u32", [0x01000003, 0x00800000]), "b": ("u32", [5, 0x00800000])},
            {"x": "u32", "y": "s32", "z": "u32"}, n=2, decls=".reg .u32 %x, %z; .reg .s32 %y;")
    assert out["x"].tolist() == [15, 0]
    assert out["y"].tolist() == [0, (((-(2 ** 23)) * (-(2 ** 23))) >> 16) & U32]
    assert out["z"].tolist() == [0x01000003 - 5 + 1, 1]


def test_bmsk_szext_fns():
    out = R("bmsk.clamp.b32 %x, %a, %b; szext.clamp.s32 %y, %c, %b; szext.wrap.u32 %z, %c, %b;",
            {"a": ("u32", [4, 30, 0]), "b": ("u32", [8, 8, 40]), "c": ("u32", [0x80, 0xFFF, 0x8000000F])},
            {"x": "b32", "y": "s32", "z": "u32"}, n=3, decls=".reg .b32 %x; .reg .s32 %y; .reg .u32 %z;")
    assert out["x"].tolist() == [0xFF0, 0xC0000000, U32]
    assert out["y"].tolist() == [-128, -1, -2147483633]
    assert out["z"].tolist() == [0x80, 0xFF, 0xF]
    got = one("fns.b32 %d, %a, 0, 2;", {"a": ("b32", [0b101101, 0b1])}, "b32")
    assert got == [3, U32]


def test_a_label_is_scoped_to_its_block():
    """CUDA's inline asm repeats `waitLoop:` in a { } block per asm statement (Triton's
    mbarrier waits): a branch goes to the label of its own block, or of an enclosing one."""
    ptx = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 y)
{
  .reg .u32 %r<4>; .reg .u64 %rd1; .reg .pred %p1;
  ld.param.u64 %rd1, [y];
  mov.u32 %r1, 0;
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
  {
  L:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 3;
    @%p1 bra.uni L;
  }
  {
  L:
    add.u32 %r2, %r2, 10;
    setp.lt.u32 %p1, %r2, 50;
    @%p1 bra.uni L;
    {
      add.u32 %r3, %r3, 1;
      setp.lt.u32 %p1, %r3, 2;
      @%p1 bra.uni L;
    }
  }
  st.global.u32 [%rd1], %r1;
  st.global.u32 [%rd1+4], %r2;
  st.global.u32 [%rd1+8], %r3;
  ret;
}"""
    y = np.zeros(3, np.uint32)
    launch(ptx, "k", [y])
    assert y.tolist() == [3, 60, 2]       # the inner block's branch goes to the enclosing block's L
    ptxas_check(ptx, "sm_80")
