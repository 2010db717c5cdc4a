"""The documented pyptx surface, sections 3 and 6: ``reg`` allocation, value classes, register
arrays, the operator table with integer promotion, and ``pyptx.types``."""
import numpy as np
import pytest

from pyptx import Tile, kernel, ptx, reg
from pyptx.types import (PtxType, b32, b64, bf16, f32, f64, from_name, pred, s32, s64, u16,
                         u32, u64)
from jax_pyptx.errors import PtxIndexError, PtxTypeError, PtxValueError

from .helpers import assemble, line_of
from .pyptx_util import body, decls


# ----------------------------------------------------------------------------- 6 types
def test_types_module():
    assert PtxType("f32", 32) is f32 and PtxType(".bf16") is bf16
    assert from_name("u32") is u32 and from_name(".b64") is b64
    assert (f32.ptx, repr(f32), f32.bits, pred.bits) == (".f32", "f32", 32, 1)
    with pytest.raises(ValueError, match="unknown PTX type 'f33'"):
        from_name("f33")
    with pytest.raises(ValueError, match=r"PtxType\('f32', 16\): f32 is 32-bit"):
        PtxType("f32", 16)


# ----------------------------------------------------------------------------- 3.1-3.4
def test_value_class_names():
    assert reg.Reg.__name__ == "Register" and reg.NegPred is ptx.not_("p").__class__

    @kernel(arch="sm_80")
    def k():
        r = reg.scalar(u32)
        assert repr(r) == "Reg(%r0, u32)" and isinstance(r, reg.Reg)
        a = reg.array(f32, 4)
        assert repr(a) == "RegArray(%f, 4, f32)" and isinstance(a, reg.RegArray)
        ptx.ret()

    k.ptx()


def test_scalar_array_from_and_init():
    @kernel(arch="sm_80")
    def k():
        f = reg.scalar(f32, init=1.0)
        reg.scalar(f32, init=11.0)
        reg.scalar(f64, init=1.0)
        reg.scalar(b32, init=138413200)
        p = reg.scalar(pred, name="flag")
        named = reg.array(f32, 3, name="acc")
        arr = reg.array(u32, 2)
        s = reg.from_(ptx.special.tid.x(), u32)
        sym = reg.from_("acc0", f32)
        assert (p.name, named[2].name, arr[1].name, sym.type) == ("flag", "acc2", "%r2", f32)
        ptx.inst.add.f32(named[0], f, f)
        del s
        ptx.ret()

    assert body(k) == ["mov.f32 %f0, 0f3F800000;", "mov.f32 %f1, 0f41300000;",
                       "mov.f64 %fd0, 0d3FF0000000000000;", "mov.b32 %r0, 138413200;",
                       "mov.u32 %r3, %tid.x;", "mov.f32 %f2, acc0;",
                       "add.f32 acc0, %f0, %f0;", "ret;"]
    assert ".reg .pred flag;" in decls(k) and ".reg .f32 acc<3>;" in decls(k)
    assemble(k)


def test_register_array_semantics():
    @kernel(arch="sm_80")
    def k():
        a = reg.array(f32, 4)
        assert (a.count, a.dtype, len(a), [r.name for r in a]) == (
            4, f32, 4, ["%f0", "%f1", "%f2", "%f3"])
        assert a.hw_order(reverse=True)[0] is a[3] and a.regs() == list(a)
        v = reg.scalar(f32, 2.0)
        a[1] = v                      # mov.b32
        a[2] = a[2]                   # nothing
        view = reg.RegArray("%f", 2, f32)
        assert [r.name for r in view] == ["%f0", "%f1"]
        a[3] = 1.0  # not a register
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# not a register')}: RegArray[3] = ...: "
                            f"expected a register, got 1.0")

    @kernel(arch="sm_80")
    def oob():
        reg.array(f32, 2)[2]  # oob
        ptx.ret()

    with pytest.raises(PtxIndexError) as e:
        oob.ptx()
    assert isinstance(e.value, IndexError)
    assert str(e.value) == (f"{line_of(oob.fn, '# oob')}: RegArray index 2 out of range for 2 "
                            f"registers")


def test_alloc_families_and_wgmma_frag():
    @kernel(arch="sm_90a")
    def k():
        regs = [reg.alloc(t) for t in (f32, f32, u32, u64, s32, bf16, pred, b64)]
        names = [r.name for r in regs]
        ptx.inst.cvt.rn.bf16.f32(regs[5], regs[0])       # a bf16 register lives in .b16
        assert names == ["%af0", "%af1", "%au0", "%aud0", "%as0", "%abf0", "%ap0", "%ad0"]
        arr = reg.alloc_array(f32, 3)
        assert arr[2].name == "%afarr0_2"
        frag = reg.wgmma_frag(m=64, n=256, dtype=f32)
        assert len(frag) == 128
        ptx.ret()

    assert {".reg .pred %ap0;", ".reg .b16 %abf0;", ".reg .f32 %afarr0_<3>;"} <= set(decls(k))
    assemble(k)

    @kernel(arch="sm_90a")
    def bad():
        reg.alloc_array(f32, 0)  # zero
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# zero')}: reg.alloc_array: count must be a "
                            f"positive int, got 0")


# ----------------------------------------------------------------------------- 3.5 operators
def test_documented_operator_table():
    @kernel(arch="sm_80")
    def k():
        x64 = reg.scalar(b64, 0)
        y32 = reg.scalar(u32, 4)
        x64 + y32
        y32 + x64
        x64 - y32
        x64 * y32
        x64 + 8
        y32 - 1
        y32 << 2
        x64 << y32
        y32 >> 1
        x64 & y32
        y32.max(7)
        y32 < 32
        ptx.ret()

    assert body(k) == [
        "mov.b64 %rd0, 0;", "mov.u32 %r0, 4;",
        "cvt.u64.u32 %rd1, %r0;", "add.s64 %rd2, %rd0, %rd1;",       # x64 + y32
        "cvt.u64.u32 %rd3, %r0;", "add.s64 %rd4, %rd3, %rd0;",       # y32 + x64
        "cvt.u64.u32 %rd5, %r0;", "sub.s64 %rd6, %rd0, %rd5;",
        "cvt.u64.u32 %rd7, %r0;", "mul.lo.u64 %rd8, %rd0, %rd7;",
        "add.s64 %rd9, %rd0, 8;", "sub.s32 %r1, %r0, 1;", "shl.b32 %r2, %r0, 2;",
        "shl.b64 %rd10, %rd0, %r0;",                                  # no widening
        "shr.u32 %r3, %r0, 1;",
        "cvt.u64.u32 %rd11, %r0;", "and.b64 %rd12, %rd0, %rd11;",
        "max.u32 %r4, %r0, 7;", "setp.lt.u32 %p0, %r0, 32;", "ret;"]
    assemble(k)


def test_integer_promotion_by_signedness_and_its_errors():
    @kernel(arch="sm_80")
    def k():
        u = reg.scalar(u64, 0)
        s = reg.scalar(s64, 0)
        i = reg.scalar(s32, -1)
        w = reg.scalar(u32, 1)
        h = reg.scalar(u16, 1)
        a = u + i            # sign-extends the s32
        b = s < w            # u32 zero-extends into s64: a signed compare keeps its value
        c = w + h            # u16 -> u32
        s += i               # in place, 64-bit
        assert (a.type, b.type, c.type) == (u64, pred, u32)
        ptx.ret()

    assert body(k)[5:] == [
        "cvt.s64.s32 %rd2, %r0;", "add.s64 %rd3, %rd0, %rd2;",
        "cvt.u64.u32 %rd4, %r1;", "setp.lt.s64 %p0, %rd1, %rd4;",
        "cvt.u32.u16 %r2, %rs0;", "add.u32 %r3, %r1, %r2;",
        "cvt.s64.s32 %rd5, %r0;", "add.s64 %rd1, %rd1, %rd5;", "ret;"]
    assemble(k)

    @kernel(arch="sm_80")
    def signed_into_unsigned():
        u = reg.scalar(u64, 0)
        i = reg.scalar(s32, -1)
        u < i  # bad compare
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        signed_into_unsigned.ptx()
    assert str(e.value) == (
        f"{line_of(signed_into_unsigned.fn, '# bad compare')}: operator '<' on u64 and s32: "
        f"the s32 operand sign-extends to s64, which an unsigned 64-bit '<' would misread; "
        f"convert one operand first, e.g. reg.cvt(x, s64)")

    @kernel(arch="sm_80")
    def float_mix():
        reg.scalar(u64, 0) + reg.scalar(f32, 0.0)  # float
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        float_mix.ptx()
    assert str(e.value) == (f"{line_of(float_mix.fn, '# float')}: operator '+' on u64 and f32: "
                            f"mixed widths (64-bit and 32-bit); convert one operand first, e.g. "
                            f"reg.cvt(x, u64)")

    @kernel(arch="sm_80")
    def wide_shift():
        reg.scalar(u32, 1) << reg.scalar(u64, 1)  # amount
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        wide_shift.ptx()
    assert str(e.value) == (f"{line_of(wide_shift.fn, '# amount')}: operator '<<' on u32 and "
                            f"u64: the shift amount must be a 32-bit integer register or an int")


def test_promotion_runs_on_the_interpreter():
    @kernel(arch="sm_80", in_specs=(Tile(4, s32),), out_specs=(Tile(4, s64),),
            block=(4, 1, 1))
    def widen(X, Y):
        px, py = ptx.global_ptrs(X, Y)
        t = reg.from_(ptx.special.tid.x(), u32)
        v = reg.scalar(s32)
        ptx.inst.ld.global_.s32(v, ptx.addr(px + (t << 2)))
        big = reg.scalar(s64, 1 << 40)
        out = big + v                         # sign-extended
        ptx.inst.st.global_.s64(ptx.addr(py + (t << 3)), out)
        ptx.ret()

    x = np.array([-5, 0, 7, -(2 ** 31)], np.int32)
    np.testing.assert_array_equal(widen.interpret(x), (1 << 40) + x.astype(np.int64))


def test_pipe_refs_and_negated_predicates():
    @kernel(arch="sm_80", block=(32, 1, 1))
    def k():
        v = reg.scalar(u32, 3)
        d = reg.scalar(u32)
        p, q = reg.scalar(pred), reg.scalar(pred)
        ptx.inst.shfl.sync.idx.b32(d | p, v, 0, 31, 0xFFFFFFFF)      # %r|%p destination
        ptx.inst.setp.lt.u32(p | q, v, 4)                             # %p|%q destination
        ptx.inst.setp.lt.and_.u32(q, v, 4, ptx.not_(p))               # !%p source
        with ptx.if_(ptx.not_(q)):
            ptx.inst.add.u32(v, v, 1)
        ptx.inst.add.u32(v, v, 1, pred=ptx.not_(p))
        r = p | q                                                     # kept: or.pred
        assert r.type is pred
        ptx.ret()

    assert body(k)[1:] == [
        "shfl.sync.idx.b32 %r1|%p0, %r0, 0, 31, 4294967295;",
        "setp.lt.u32 %p0|%p1, %r0, 4;",
        "setp.lt.and.u32 %p1, %r0, 4, !%p0;",
        "@%p1 bra $L_else_0;", "add.u32 %r0, %r0, 1;", "$L_else_0:",
        "@!%p0 add.u32 %r0, %r0, 1;", "or.pred %p3, %p0, %p1;", "ret;"]
    assemble(k)
