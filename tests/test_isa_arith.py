"""Arithmetic, logic, comparison and conversion wrappers: every form traced, ptxas accepts."""
import pytest

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.types import (b16, b32, b64, bf16, bf16x2, f16, f16x2, f32, f64, s16, s32, s64,
                             u16, u32, u64)

from .isa_util import assemble, forms_used, missing

RND = (None, "rn", "rz", "rm", "rp")


def arith_body(full: bool):
    m, b, c = ptx.math, ptx.bits, ptx.cmp
    a, x, y = reg.scalar(f32, 1.0), reg.scalar(f32, 2.0), reg.scalar(f32, 3.0)
    i, j, k = reg.scalar(s32, 1), reg.scalar(s32, 2), reg.scalar(s32, 3)
    u, v = reg.scalar(u32, 1), reg.scalar(u32, 2)
    d1, d2 = reg.scalar(f64, 1.0), reg.scalar(f64, 2.0)
    h, h2 = reg.scalar(f16), reg.scalar(f16x2, 0)
    bh, bh2 = reg.scalar(bf16), reg.scalar(bf16x2, 0)
    for t in (u16, u32, u64, s16, s32, s64):
        p, q = reg.scalar(t, 1), reg.scalar(t, 2)
        for f in (m.add, m.sub, m.div, m.rem, m.min, m.max):
            f(p, q)
        m.mul(p, q, mode="lo"); m.mul(p, q, mode="hi"); m.mad(p, q, p, mode="hi")
        m.sad(p, q, p)
        if t.bits < 64:
            m.mul(p, q, mode="wide"); m.mad(p, q, reg.scalar(reg_wide(t), 0), mode="wide")
        if t.kind == "signed":
            m.abs(p); m.neg(p)
        if t.bits >= 32:
            m.add(p, q, cc=True); m.addc(p, q); m.subc(p, q, cc=True); m.sub(p, q, cc=True)
            m.mad(p, q, p, mode="lo", cc=True); m.madc(p, q, p, mode="hi")
    m.add(i, j, sat=True); m.sub(i, j, sat=True); m.mad(i, j, k, mode="hi", sat=True)
    for f in (m.mul24, m.mad24):
        for mode in ("lo", "hi"):
            f(*((u, v, u) if f is m.mad24 else (u, v)), mode=mode)
    m.mad24(i, j, k, mode="hi", sat=True)
    m.dp4a(u, v, u); m.dp4a(i, u, i); m.dp2a(u, v, u, mode="lo"); m.dp2a(i, j, k, mode="hi")
    for r in RND:
        for op in (m.add, m.sub, m.mul):
            op(a, x, rnd=r, ftz=True, sat=True); op(d1, d2, rnd=r)
        if r:
            m.fma(a, x, y, rnd=r, ftz=True, sat=True); m.fma(d1, d2, d1, rnd=r)
            m.mad(a, x, y, rnd=r, ftz=True); m.mad(d1, d2, d1, rnd=r)
            m.div(a, x, rnd=r, ftz=True); m.div(d1, d2, rnd=r)
            m.rcp(a, rnd=r, ftz=True); m.rcp(d1, rnd=r); m.sqrt(a, rnd=r); m.sqrt(d1, rnd=r)
    for t in (h, h2):
        m.add(t, t, rnd="rn", ftz=True, sat=True); m.sub(t, t); m.mul(t, t, sat=True)
        m.fma(t, t, t, rnd="rn", ftz=True, sat=True); m.fma(t, t, t, rnd="rn", relu=True)
        m.abs(t, ftz=True); m.neg(t); m.min(t, t, nan=True); m.max(t, t, ftz=True)
        m.min(t, t, xorsign=True, abs=True); m.ex2(t, mode="approx"); m.tanh(t, mode="approx")
    for t in (bh, bh2):
        m.fma(t, t, t, rnd="rn", relu=True); m.abs(t); m.neg(t); m.min(t, t, nan=True)
        m.max(t, t, xorsign=True, abs=True)
    m.div(a, x, mode="approx"); m.div(a, x, mode="full", ftz=True)
    m.abs(a, ftz=True); m.abs(d1); m.neg(a); m.neg(d1); m.copysign(a, x); m.copysign(d1, d2)
    m.min(a, x, ftz=True, nan=True); m.max(a, x, xorsign=True, abs=True); m.min(d1, d2)
    m.max(a, x, ftz=True); m.min(a, x, xorsign=True, abs=True, nan=True)
    for op in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"):
        m.testp(a, op=op)
    m.testp(d1, op="finite")
    for f in (m.rcp, m.sqrt, m.rsqrt, m.ex2, m.lg2, m.sin, m.cos):
        f(a, mode="approx", ftz=True)
    m.tanh(a, mode="approx")
    m.rcp(d1, mode="approx", ftz=True); m.rsqrt(d1, mode="approx")
    m.rsqrt(d1, mode="approx", ftz=True); m.approx("ex2", a)
    m.max(u, v, type="u16x2"); m.min(i, j, type="s16x2"); m.add(u, v, type="s16x2")
    m.max(d1, d2); m.max(bh, bh, nan=True)
    m.max(h2, h2, xorsign=True, abs=True); m.min(bh2, bh2, xorsign=True, abs=True)
    c.set_("lt", d1, d2, dtype_=f32, bool_op="or", c=c.setp("ne", u, 0))
    m.max(i, j, relu=True); m.min(i, j, relu=True, type="s16x2")
    for t in (bh, bh2):
        m.add(t, t, rnd="rn"); m.sub(t, t); m.mul(t, t, rnd="rn")
        m.ex2(t, mode="approx", ftz=True); m.tanh(t, mode="approx")
    m.fma(h, h, h, rnd="rn", oob=True, relu=True); m.fma(bh2, bh2, bh2, rnd="rn", oob=True)
    if full:   # sm_100
        w = reg.scalar(b64, 0)
        m.add(w, w, type="f32x2", rnd="rn"); m.sub(w, w, type="f32x2", ftz=True)
        m.mul(w, w, type="f32x2"); m.fma(w, w, w, type="f32x2", rnd="rz")
        m.add(h, a, type="f32", atype="f16", rnd="rn"); m.sub(bh, a, type="f32", atype="bf16")
        m.fma(h, h, a, type="f32", atype="f16", rnd="rn", sat=True)
        m.min3(a, x, y, nan=True); m.max3(a, x, y, abs=True)
    # ---------------------------------------------------------------- logic
    for t in (b16, b32, b64):
        p, q = reg.scalar(t, 1), reg.scalar(t, 2)
        b.and_(p, q); b.or_(p, q); b.xor(p, q); b.not_(p); b.cnot(p); b.shl(p, 3); b.shr(p, u)
    pr = c.setp("lt", u, v)
    b.and_(pr, pr); b.or_(pr, pr); b.xor(pr, pr); b.not_(pr)
    for t in (u16, s32, u64):
        b.shr(reg.scalar(t, 1), 2)
    b.lop3(u, v, u, b.lut3(lambda p, q, r: (p & q) ^ r)); b.lop3_pred(u, v, u, 0x80, pr)
    b.lop3_pred(u, v, u, 0x80, pr, bool_op="and")
    for mode in (None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        b.prmt(u, v, u, mode=mode)
    for t in (u32, u64, s32, s64):
        z = reg.scalar(t, 1)
        b.bfe(z, u, v); b.bfind(z); b.bfind(z, shiftamt=True)
    for t in (b32, b64):
        z = reg.scalar(t, 1)
        b.bfi(z, z, u, v); b.popc(z); b.clz(z); b.brev(z)
    for d in ("l", "r"):
        for mode in ("clamp", "wrap"):
            b.shf(u, v, u, dir=d, mode=mode)
            b.bmsk(u, v, mode=mode); b.szext(u, v, mode=mode); b.szext(u, v, signed=True)
    b.fns(u, v, i)
    # ---------------------------------------------------------------- compare / select
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
        c.setp(cmp, u, v)
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
                "num", "nan"):
        c.setp(cmp, a, x, ftz=True)
    for bo in ("and", "or", "xor"):
        c.setp("lt", i, j, bool_op=bo, c=pr); c.setp("lt", d1, d2, bool_op=bo, c=pr)
        c.setp("lt", h, h, bool_op=bo, c=pr); c.setp_x2("lt", h2, h2, bool_op=bo, c=pr)
        c.setp("lt", bh, bh, bool_op=bo, c=pr); c.setp_x2("gt", bh2, bh2, bool_op=bo, c=pr)
        c.set_("lt", i, j, bool_op=bo, c=pr); c.set_("lt", a, x, dtype_=f32, bool_op=bo, c=pr)
    c.setp("lt", h, h); c.setp_x2("le", h2, h2, ftz=True); c.setp("gt", bh, bh)
    c.setp_x2("ge", bh2, bh2)
    c.set_("ge", u, v, dtype_=s32); c.set_("ge", d1, d2, dtype_=u32)
    c.set_("ge", a, x, dtype_=u32, ftz=True)
    c.set_("lt", h, h, dtype_=f16); c.set_("lt", h2, h2, dtype_=f16x2); c.set_("lt", bh, bh,
                                                                              dtype_=bf16)
    for t in (b16, b32, b64, u16, u32, u64, s16, s32, s64, f32, f64):
        z = reg.scalar(t)
        c.selp(z, z, pr); c.slct(z, z, i); c.slct(z, z, a, ftz=True)
    # ---------------------------------------------------------------- cvt
    cvt_matrix()
    ptx.cvt(a, f32, rnd="rni", ftz=True); ptx.cvt(h, f32); ptx.cvt(bh, f32)
    ptx.cvt(h, s32, rnd="rmi")
    ptx.cvt(bh, f32, ftz=True); ptx.cvt(bh, bf16, rnd="rpi"); ptx.cvt(bh, s32, rnd="rzi")
    ptx.cvt(bh, f16, rnd="rn"); ptx.cvt(bh, f64); ptx.cvt(h, bf16, rnd="rz")
    for r in ("rn", "rz"):
        ptx.cvt(a, f16, rnd=r, relu=True); ptx.cvt(a, f16, rnd=r, satfinite=True)
        ptx.cvt(a, bf16, rnd=r, relu=True, satfinite=True)
        ptx.cvt.pack(a, x, "f16x2", rnd=r, relu=True); ptx.cvt.pack(a, x, "bf16x2", rnd=r,
                                                                    satfinite=True)
        ptx.cvt(a, "tf32", rnd=r, relu=True, satfinite=full)
    ptx.cvt(a, "tf32", rnd="rna"); ptx.cvt(a, "tf32", rnd="rna", satfinite=True)
    for f8 in ("e4m3x2", "e5m2x2"):
        ptx.cvt.pack(a, x, f8); ptx.cvt.pack(a, x, f8, relu=True)
        ptx.cvt.from_f16x2(h2, f8, relu=True); ptx.cvt.unpack(reg.scalar(b16), f8, relu=True)
    for t in ("u8", "s8", "u4", "s4", "u2", "s2"):
        ptx.cvt.int_pack(i, j, t, u)
    ptx.cvt.int_pack(i, j, "u16"); ptx.cvt.int_pack(i, j, "s16")
    if full:
        for f6 in ("e2m3x2", "e3m2x2"):
            ptx.cvt.pack(a, x, f6, relu=True); ptx.cvt.unpack(reg.scalar(b16), f6)
        fp4 = ptx.cvt.pack(a, x, "e2m1x2", relu=True)      # a .b8 register
        ptx.cvt.unpack(fp4, "e2m1x2", relu=True)
        for r in ("rz", "rp"):
            ptx.cvt.pack(a, x, "ue8m0x2", rnd=r, satfinite=True)
            ptx.cvt(reg.scalar(b32), "ue8m0x2", rnd=r, frm="bf16x2")
        ptx.cvt.unpack(reg.scalar(b16), "ue8m0x2", to="bf16x2")
        ptx.cvt.pack(a, x, "bf16x2", rnd="rs", relu=True, satfinite=True, rbits=u)
        ptx.cvt.pack4(reg.array(f32, 4), "e4m3x4", u, relu=True)
        ptx.cvt.pack4(reg.array(f32, 4), "e5m2x4", u)
    ptx.ret()


def cvt_matrix():
    """Every .dtype / .atype pair of the general cvt forms with a rounding the ISA's rules
    require ("Rounding modifier is mandatory ... float-to-float narrowing, all float-to-int,
    all int-to-float"), cycling through every .irnd / .frnd option, .ftz and .sat. 8-bit
    values sit in 16-bit registers (``frm=``); ptxas wants 8-bit registers next to .bf16,
    so those two pairs are left out."""
    from itertools import cycle

    from jax_pyptx.types import s8, u8

    ints = (u8, u16, u32, u64, s8, s16, s32, s64)
    floats = (f16, f32, f64)
    irnd, frnd = cycle(("rni", "rzi", "rmi", "rpi")), cycle(("rn", "rz", "rm", "rp"))
    for n, (src, dst) in enumerate((a, b) for a in ints + floats + (bf16,)
                                   for b in ints + floats + (bf16,)):
        if bf16 in (src, dst) and (src.bits == 8 or dst.bits == 8 or f32 in (src, dst)):
            continue
        reg_t = {8: u16 if src.kind == "unsigned" else s16}.get(src.bits, src)
        z = reg.scalar(reg_t)
        kw = {"frm": src} if src.bits == 8 else {}
        if src.kind != "float" and dst.kind != "float":          # int -> int
            # .sat only where the value can overflow (ptxas: "Illegal modifier '.sat'")
            if src.bits > dst.bits or src.kind == "signed" and dst.kind == "unsigned" or \
                    src.bits == dst.bits and src.kind != dst.kind:
                kw["sat"] = n % 2 == 0
        elif src.kind == "float" and dst.kind != "float":        # float -> int
            kw["rnd"] = next(irnd)
            if bf16 not in (src, dst):
                kw.update(sat=n % 2 == 0, ftz=src is f32)
        elif src.kind != "float":                                # int -> float
            kw["rnd"] = next(frnd)
        elif src is dst:                                         # float -> float, same
            kw["rnd"] = next(irnd)
            if src is not bf16:
                kw.update(ftz=src is f32, sat=n % 3 == 0)
        elif dst.bits < src.bits or bf16 in (src, dst) and dst is not f64:
            kw["rnd"] = next(frnd)                               # narrowing
            if bf16 not in (src, dst):
                kw["sat"] = n % 2 == 0
        ptx.cvt(z, dst, **kw)


def reg_wide(t):
    return {16: u32 if t.kind == "unsigned" else s32,
            32: u64 if t.kind == "unsigned" else s64}[t.bits]


def u8_like():
    from jax_pyptx.types import u8

    return u8


@kernel(arch="sm_100a")
def arith_sm100():
    arith_body(True)


@kernel(arch="sm_90a")
def arith_sm90():
    arith_body(False)


def test_arith_families_assemble_for_sm_100a():
    text = assemble(arith_sm100)
    assert "\tfma.rn.ftz.sat.f32 \t" in text
    assert "\tmax.xorsign.abs.bf16x2 \t" in text
    assert "\tcvt.rn.relu.satfinite.bf16.f32 \t" in text
    assert "\tlop3.b32 \t%r" in text and ", 106;" in text   # lut3((a & b) ^ c) == 0x6A


def test_arith_families_assemble_for_sm_90a():
    assemble(arith_sm90)


FAMILIES = ("arith-int", "arith-float", "arith-half", "arith-sfu", "logic", "compare", "cvt")


def test_every_arith_logic_cvt_form_is_exercised():
    used = forms_used(arith_sm100)
    for fam in FAMILIES:
        left = missing(used, fam)
        assert left == [], (fam, left)


def test_sm100_forms_rejected_on_sm_90a():
    from jax_pyptx.errors import ArchError

    @kernel(arch="sm_90a")
    def k():
        a = reg.scalar(f32)
        ptx.math.min3(a, a, a)
        ptx.ret()

    with pytest.raises(ArchError) as e:
        k.ptx()
    assert "min.f32 needs sm_100 (PTX ISA 8.8); kernel 'k' targets sm_90a" in str(e.value)
