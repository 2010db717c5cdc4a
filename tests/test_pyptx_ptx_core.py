"""The documented pyptx surface, sections 5.0-5.6: operands and ``ptx.inst``, control flow
(if/else, loop, scope, label, range_, kloop, pipeline, pipe, expr), special registers,
params and addresses, memory, arithmetic and conversion wrappers, warp reductions."""
import numpy as np
import pytest

from pyptx import Tile, kernel, ptx, reg, smem
from pyptx.types import b32, bf16, f32, pred, s32, u32, u64
from jax_pyptx.errors import PtxTypeError, PtxValueError, TraceError

from .helpers import assemble, line_of
from .pyptx_util import body, decls


# ----------------------------------------------------------------------------- 5.0 operands
def test_inst_spelling_operands_and_return_value():
    @kernel(arch="sm_90a", raw_params=[("u64", "p")])
    def k():
        p = ptx.param(u64, "p")
        v = reg.array(f32, 4)
        got = ptx.inst.ld.global_.v4.f32(list(v), ptx.addr(p))
        assert got is None                          # a vector first operand
        r = reg.scalar(u32)
        assert ptx.inst.mov.u32(r, "0x10") is r     # the destination
        ptx.inst.add.s32(r, r, "-1")
        bar = smem.mbarrier(1)
        done = reg.scalar(pred)
        ptx.inst.mbarrier.try_wait.parity.shared__cta.b64(done, ptx.addr(bar[0]), 0)
        ptx.inst.setp.lt.and_.u32(done, r, 4, done)
        tensor_load = ptx.inst.cp.async_.bulk.tensor._2d.shared__cluster.global_.tile
        tensor_load.mbarrier__complete_tx__bytes(ptx.addr(smem.alloc(f32, 64)), ptx.addr(p), ptx.addr(bar[0]))  # no coords
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# no coords')}: "
                            f"cp.async.bulk.tensor.2d.shared::cluster.global.tile"
                            f".mbarrier::complete_tx::bytes operand 2: expected [a, {{coords}}], "
                            f"got memory operand [%rd0]")

    @kernel(arch="sm_90a", raw_params=[("u64", "p")])
    def ok():
        p = ptx.param(u64, "p")
        v = reg.array(f32, 4)
        ptx.inst.ld.global_.v4.f32(list(v), ptx.addr(p))
        r = reg.scalar(u32)
        ptx.inst.mov.u32(r, "0x10")
        bar = smem.mbarrier(1)
        done = reg.scalar(pred)
        ptx.inst.mbarrier.try_wait.parity.shared__cta.b64(done, ptx.addr(bar[0]), 0)
        ptx.inst.setp.lt.and_.u32(done, r, 4, done)
        ptx.ret()

    assert body(ok) == ["ld.param.u64 %rd0, [p];",
                        "ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0];",
                        "mov.u32 %r0, 0x10;",
                        "mbarrier.try_wait.parity.shared::cta.b64 %p0, [mbar_0], 0;",
                        "setp.lt.and.u32 %p0, %r0, 4, %p0;", "ret;"]
    assemble(ok)


# ----------------------------------------------------------------------------- 5.1 control
def test_if_else_scope_label_bra_ret():
    @kernel(arch="sm_80")
    def k():
        t = reg.from_(ptx.special.tid.x(), u32)
        p = t < 4
        with ptx.if_(p):
            t += 1
        with ptx.else_():
            t += 2
        with ptx.if_(ptx.not_(p)):
            with ptx.scope():
                t += 3
        ptx.label("again")
        ptx.bra("again", pred=ptx.not_(p))
        ptx.ret(pred=p)
        ptx.ret()

    assert body(k) == [
        "mov.u32 %r0, %tid.x;", "setp.lt.u32 %p0, %r0, 4;", "@!%p0 bra $L_else_0;",
        "add.u32 %r0, %r0, 1;", "bra $L_endif_0;", "$L_else_0:", "add.u32 %r0, %r0, 2;",
        "$L_endif_0:", "@%p0 bra $L_else_1;", "{", "add.u32 %r0, %r0, 3;", "}", "$L_else_1:",
        "again:", "@!%p0 bra again;", "@%p0 ret;", "ret;"]
    assemble(k)

    @kernel(arch="sm_80")
    def dangling():
        with ptx.else_():  # no if
            pass
        ptx.ret()

    with pytest.raises(RuntimeError) as e:
        dangling.ptx()
    assert str(e.value) == (f"{line_of(dangling.fn, '# no if')}: ptx.else_ must directly follow "
                            f"a ptx.if_ or ptx.elif_ block")


def test_range_runtime_loop():
    @kernel(arch="sm_80")
    def k():
        acc = reg.scalar(s32, 0)
        for i in ptx.range_(0, 10, 3):
            acc += i
        ptx.ret()

    assert body(k) == [
        "mov.s32 %r0, 0;", "mov.s32 %r1, 0;", "$L_loop_0:", "setp.ge.s32 %p0, %r1, 10;",
        "@%p0 bra $L_endloop_0;", "add.s32 %r0, %r0, %r1;",
        "add.s32 %r1, %r1, 3;", "bra $L_loop_0;", "$L_endloop_0:", "ret;"]
    assemble(k)


def _counter(unroll):
    @kernel(arch="sm_80", in_specs=(u32,), out_specs=(Tile(1, u32),))
    def count(n, Y):
        (py,) = ptx.global_ptrs(Y)
        acc = reg.scalar(u32, 0)

        def step():
            acc.set(acc + 1)

        ptx.kloop(n, unroll=unroll, body=step)
        ptx.inst.st.global_.u32(ptx.addr(py), acc)
        ptx.ret()
    return count


@pytest.mark.parametrize("unroll", [1, 2, 4])
def test_kloop_register_total_runs_total_bodies(unroll):
    count = _counter(unroll)
    assemble(count)
    for n in (0, 1, 3, 4, 7, 9):
        assert count.interpret(np.uint32(n)).tolist() == [n], (unroll, n)


def test_kloop_shape_and_errors():
    @kernel(arch="sm_80", raw_params=[("u32", "n")])
    def k():
        n = ptx.param(u32, "n")
        acc = reg.scalar(u32, 0)
        ptx.kloop(n, unroll=2, body=lambda: ptx.inst.add.u32(acc, acc, 1))
        ptx.kloop(3, unroll=2, body=lambda: ptx.inst.add.u32(acc, acc, 2))
        ptx.ret()

    assert body(k) == [
        "ld.param.u32 %r0, [n];", "mov.u32 %r1, 0;", "and.b32 %r2, %r0, 1;",
        "sub.s32 %r3, %r0, %r2;", "setp.ge.u32 %p0, %r0, 2;", "@!%p0 bra $L_else_0;",
        "mov.u32 %r4, %r3;", "setp.ne.u32 %p1, %r4, 0;", "kloop:", "add.u32 %r1, %r1, 1;",
        "add.u32 %r1, %r1, 1;", "sub.s32 %r4, %r4, 2;", "setp.ne.u32 %p1, %r4, 0;",
        "@%p1 bra kloop;", "$L_else_0:", "setp.ne.u32 %p2, %r2, 0;", "@!%p2 bra $L_else_1;",
        "add.u32 %r1, %r1, 1;", "$L_else_1:", "add.u32 %r1, %r1, 2;", "add.u32 %r1, %r1, 2;",
        "add.u32 %r1, %r1, 2;", "ret;"]
    assemble(k)

    @kernel(arch="sm_80")
    def bad():
        ptx.kloop(4, unroll=3, body=lambda: None)  # unroll
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# unroll')}: ptx.kloop: unroll=3 must be a "
                            f"positive power of two")

    @kernel(arch="sm_80")
    def bad_total():
        ptx.kloop(reg.scalar(f32, 1.0), unroll=2, body=lambda: None)  # total
        ptx.ret()

    with pytest.raises(PtxTypeError, match="ptx.kloop: total must be an int or an integer "
                                           "register, got Reg"):
        bad_total.ptx()


def test_pipeline_advance():
    @kernel(arch="sm_80", out_specs=(Tile(7, 2, u32),))
    def k(Y):
        (py,) = ptx.global_ptrs(Y)
        st = ptx.pipeline(3)
        for i in range(7):
            stage, phase = st.advance()
            ptx.inst.st.global_.u32(ptx.addr(py, 8 * i), stage)
            ptx.inst.st.global_.u32(ptx.addr(py, 8 * i + 4), phase)
        assert (st.n_stages, st.cursor.type, st.phase.type) == (3, u32, u32)
        ptx.ret()

    assert body(k)[4:9] == ["setp.eq.u32 %p0, %r0, 3;", "selp.u32 %r2, 1, 0, %p0;",
                            "xor.b32 %r1, %r1, %r2;", "selp.u32 %r3, 0, %r0, %p0;",
                            "add.s32 %r0, %r3, 1;"]
    got = k.interpret()
    # the cursor starts at 0, so the first advance gives stage 0 without a flip; stages
    # wrap after n_stages, flipping the phase
    assert got.tolist() == [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 0]]
    assemble(k)


def test_pipe_and_expr():
    @kernel(arch="sm_80")
    def k():
        x = reg.scalar(u32, 2)
        t = reg.scalar(u32)
        chain = ptx.pipe(x).mul.lo.u32(t, 4).add.u32(t, 8)
        assert chain.value is t
        with ptx.expr():
            y = t + 1
        del y
        ptx.ret()

    assert body(k) == ["mov.u32 %r0, 2;", "mul.lo.u32 %r1, %r0, 4;", "add.u32 %r1, %r1, 8;",
                       "add.u32 %r2, %r1, 1;", "ret;"]
    assemble(k)


# ----------------------------------------------------------------------------- 5.2
def test_special_registers_params_addresses():
    @kernel(arch="sm_90a", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
            raw_params=[("u64", "raw"), ("b8.align64.array128", "blob")])
    def k(X, Y):
        for s in (ptx.ctaid_x(), ptx.ctaid_y(), ptx.special.laneid(), ptx.special.warpid(),
                  ptx.special.clock(), ptx.sreg("%cluster_ctarank")):
            reg.from_(s, u32)
        px, = ptx.global_ptrs(X)
        (pr,) = ptx.global_ptrs("raw")
        a = ptx.param(u64, "blob")
        g = ptx.cvta.to_global(pr)
        q = ptx.cvta.param(a)
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(px, -8))
        ptx.inst.ld.global_.f32(v, ptx.addr(g))
        del q
        ptx.ret()

    lines = body(k)
    assert lines[:4] == ["ld.param.u64 %rd0, [X];", "cvta.to.global.u64 %rd1, %rd0;",
                         "ld.param.u64 %rd2, [raw];", "cvta.to.global.u64 %rd3, %rd2;"]
    assert lines[4:10] == ["mov.u32 %r0, %ctaid.x;", "mov.u32 %r1, %ctaid.y;",
                           "mov.u32 %r2, %laneid;", "mov.u32 %r3, %warpid;",
                           "mov.u32 %r4, %clock;", "mov.u32 %r5, %cluster_ctarank;"]
    assert lines[10:] == ["mov.u64 %rd4, blob;", "cvta.to.global.u64 %rd5, %rd3;",
                          "cvta.param.u64 %rd6, %rd4;", "ld.global.f32 %f0, [%rd1+-8];",
                          "ld.global.f32 %f0, [%rd5];", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a")
    def missing():
        ptx.param(u32, "nope")  # no such param
        ptx.ret()

    with pytest.raises(TraceError) as e:
        missing.ptx()
    assert str(e.value) == (f"{line_of(missing.fn, '# no such param')}: kernel 'missing' has "
                            f"no parameter 'nope'; parameters: none")


# ----------------------------------------------------------------------------- 5.3-5.5
def test_explicit_destination_wrappers():
    @kernel(arch="sm_90a", raw_params=[("u64", "p")])
    def k():
        (g,) = ptx.global_ptrs("p")
        a, b = reg.scalar(u32, 3), reg.scalar(u32, 5)
        d = reg.scalar(u32)
        w = reg.scalar(u64)
        f = reg.scalar(f32, 0.5)
        p = reg.scalar(pred)
        h = reg.scalar(bf16)
        ptx.mov(u32, d, a)
        ptx.add(u32, d, a, b)
        ptx.sub(u32, d, d, 1)
        ptx.shl(u32, d, d, 2)
        ptx.shr(u32, d, d, 1)
        ptx.and_(u32, d, d, 255)
        ptx.or_(u32, d, d, 1)
        ptx.xor_(u32, d, d, a)
        ptx.not_(b32, d, d)
        ptx.mul(u32, d, a, b, mode="lo")
        ptx.mul(u32, w, a, b, mode="wide")
        ptx.mul(f32, f, f, f)
        ptx.mad(u32, d, a, b, d)
        e = ptx.mad(a, 4, b)
        ptx.mad(f32, f, f, f, f)
        ptx.setp("ge", u32, p, a, b)
        ptx.setp("lt", b32, p, a, 4, pred_negate=ptx.not_(p))
        ptx.selp(u32, d, a, b, p)
        ptx.ld(f32, f, g)
        ptx.st(f32, g, f, cache="cs")
        ptx.ld(u32, d, ptx.addr(g, 4), space="global", cache="nc")
        ptx.cvt(bf16, f32, h, f, rounding="rn")
        ptx.cvt(u64, b32, w, d)
        sh = ptx.var("shared", u32, "scratch", size=8, align=16)
        ptx.st(u32, sh, d, space="shared")
        ptx.ld(u32, d, ptx.addr(sh, 4), space="shared")
        ptx.st(u32, ptx.addr(g), e, space="generic")
        ptx.ret()

    assert ".shared .align 16 .u32 scratch[8];" in decls(k)
    assert body(k)[5:] == [
        "mov.u32 %r2, %r0;", "add.u32 %r2, %r0, %r1;", "sub.u32 %r2, %r2, 1;",
        "shl.b32 %r2, %r2, 2;", "shr.u32 %r2, %r2, 1;", "and.b32 %r2, %r2, 255;",
        "or.b32 %r2, %r2, 1;", "xor.b32 %r2, %r2, %r0;", "not.b32 %r2, %r2;",
        "mul.lo.u32 %r2, %r0, %r1;", "mul.wide.u32 %rd2, %r0, %r1;", "mul.f32 %f0, %f0, %f0;",
        "mad.lo.u32 %r2, %r0, %r1, %r2;", "mad.lo.s32 %r3, %r0, 4, %r1;",
        "mad.rn.f32 %f0, %f0, %f0, %f0;", "setp.ge.u32 %p0, %r0, %r1;",
        "@!%p0 setp.lt.u32 %p0, %r0, 4;", "selp.u32 %r2, %r0, %r1, %p0;",
        "ld.global.f32 %f0, [%rd1];", "st.global.cs.f32 [%rd1], %f0;",
        "ld.global.nc.u32 %r2, [%rd1+4];", "cvt.rn.bf16.f32 %h0, %f0;",
        "cvt.u64.u32 %rd2, %r2;", "st.shared.u32 [scratch], %r2;",
        "ld.shared.u32 %r2, [scratch+4];", "st.u32 [%rd1], %r3;", "ret;"]
    assemble(k)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda r: ptx.mul(u32, r, r, r, mode="half"), PtxValueError,
     "ptx.mul: mode='half' is not allowed; allowed: None, 'lo', 'hi', 'wide'"),
    (lambda r: ptx.setp("lo", u32, reg.scalar(pred), r, r), PtxValueError,
     "ptx.setp: cmp_op='lo' is not allowed; allowed: lt, le, gt, ge, eq, ne"),
    (lambda r: ptx.ld(u32, r, r, space="texture"), PtxValueError,
     "ptx.ld: space='texture' is not allowed; allowed: global, shared, local, param, const, "
     "generic"),
    (lambda r: ptx.mad(1, 2, 3), PtxTypeError,
     "ptx.mad(a, b, c): one of the operands must be a register (its type is the "
     "instruction's)"),
    (lambda r: ptx.var("texture", u32, "t"), PtxValueError,
     "ptx.var: state_space='texture' is not allowed; allowed: shared, local, global, const, "
     "shared::cta"),
])
def test_wrapper_errors(call, exc, msg):
    @kernel(arch="sm_80")
    def k():
        call(reg.scalar(u32, 0))  # the call
        ptx.ret()

    with pytest.raises(exc) as e:
        k.ptx()
    assert str(e.value).endswith(msg)


# ----------------------------------------------------------------------------- 5.6 warp
@pytest.mark.parametrize("op,dtype,ref", [("reduce_sum", f32, np.sum), ("reduce_max", s32, np.max),
                                          ("reduce_min", u32, np.min)])
def test_warp_reductions_on_the_interpreter(op, dtype, ref):
    nd = dtype.np_dtype

    @kernel(arch="sm_80", block=(32, 1, 1), in_specs=(Tile(32, dtype),),
            out_specs=(Tile(32, dtype),))
    def k(X, Y):
        px, py = ptx.global_ptrs(X, Y)
        t = reg.from_(ptx.special.tid.x(), u32)
        off = reg.cvt(t, u64) * 4
        v = reg.scalar(dtype)
        getattr(ptx.inst.ld.global_, dtype.name)(v, ptx.addr(px + off))
        getattr(ptx.warp, op)(v, width=8)
        getattr(ptx.inst.st.global_, dtype.name)(ptx.addr(py + off), v)
        ptx.ret()

    assemble(k)
    x = ((np.arange(32) * 7) % 13).astype(nd)
    want = np.repeat([ref(x[i:i + 8]) for i in range(0, 32, 8)], 8).astype(nd)
    np.testing.assert_allclose(k.interpret(x), want, rtol=1e-6)


def test_warp_reduction_width_error():
    @kernel(arch="sm_80")
    def k():
        ptx.warp.reduce_sum(reg.scalar(f32, 0.0), width=3)  # width
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# width')}: ptx.warp.reduce_sum: width=3 is not "
                            f"allowed; allowed: 2, 4, 8, 16, 32")


def test_elect_sync():
    @kernel(arch="sm_90a", block=(32, 1, 1))
    def k():
        lane = reg.scalar(u32)
        p = reg.scalar(pred)
        assert ptx.elect_sync(lane, p, 0xFFFFFFFF) is p
        ptx.elect_sync(None, p)
        ptx.ret()

    assert body(k) == ["elect.sync %r0|%p0, 4294967295;", "elect.sync _|%p0, 4294967295;",
                       "ret;"]
    assemble(k)
