"""The transpiler: PTX -> Python that re-traces to the same instruction sequence.

Over the whole corpus: transpile, run the generated file, trace every function it defines
and compare with the parsed original after normalising register and label names
(``jax_pyptx.transpile.compare``). Plus the shape of the generated code on small inputs.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from jax_pyptx import emit, parse
from jax_pyptx.kernel_def import Kernel
from jax_pyptx.transpile import transpile
from jax_pyptx.transpile.compare import instruction_stream
from jax_pyptx.transpile.flow import DeviceFunction

from .corpus import corpus_files, ptxas, ptxas_check, read

FILES = corpus_files()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_generated(src: str, name: str = "generated") -> dict:
    ns = {"__name__": name}
    exec(compile(src, f"<{name}>", "exec"), ns)
    return ns


def traced_functions(ns: dict) -> dict:
    out = {}
    for v in ns.values():
        if isinstance(v, Kernel):
            out[v.name] = v.module().function(v.name)
        elif isinstance(v, DeviceFunction):
            out[v.name] = v.function()
    return out


def assert_same(orig, traced):
    a, b = instruction_stream(orig), instruction_stream(traced)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"{orig.name}: statement {i} differs:\n  source: {x}\n  traced: {y}"
    assert len(a) == len(b), f"{orig.name}: {len(a)} statements in the source, {len(b)} traced"


@pytest.mark.parametrize("rel", FILES)
def test_corpus_retraces_to_the_same_instructions(rel):
    m = parse(read(rel), rel)
    src = transpile(m, rel)
    ns = run_generated(src, rel)
    traced = traced_functions(ns)
    defined = [f for f in m.functions if f.body is not None]
    assert sorted(traced) == sorted(f.name for f in defined)
    for f in defined:
        assert_same(f, traced[f.name])
    # the generated module keeps the source's module-scope declarations and order
    whole = ns["module"]()
    assert [type(i).__name__ + ":" + getattr(i, "name", "") for i in whole.items
            if type(i).__name__ in ("Function", "VarDecl")] == \
        [type(i).__name__ + ":" + getattr(i, "name", "") for i in m.items
         if type(i).__name__ in ("Function", "VarDecl")]


# ----------------------------------------------------------------------------- small inputs
HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def kernel_src(body: str, params: str = ".param .u64 out, .param .u32 n",
               decls: str = ".reg .pred %p<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n") -> str:
    return HEAD + f".visible .entry k({params})\n{{\n{decls}{textwrap.dedent(body)}\n}}\n"


def roundtrip(text: str):
    src = transpile(text)
    ns = run_generated(src)
    m = parse(text)
    traced = traced_functions(ns)
    for f in m.functions:
        if f.body is not None:
            assert_same(f, traced[f.name])
    return src


def test_if_else_and_loops_are_recovered():
    src = roundtrip(kernel_src("""
        ld.param.u32 %r1, [n];
        mov.u32 %r2, %tid.x;
        setp.ge.u32 %p1, %r2, %r1;
        @%p1 bra $L__BB0_2;
        add.u32 %r3, %r2, 1;
    $L__BB0_2:
        setp.eq.u32 %p2, %r2, 0;
        @!%p2 bra $L__BB0_4;
        mov.u32 %r4, 1;
        bra.uni $L__BB0_5;
    $L__BB0_4:
        mov.u32 %r4, 2;
    $L__BB0_5:
        mov.u32 %r5, 0;
    $L__BB0_6:
        add.u32 %r5, %r5, 1;
        setp.lt.u32 %p3, %r5, %r1;
        @%p3 bra $L__BB0_6;
    $L__BB0_7:
        setp.ge.u32 %p4, %r5, 100;
        @%p4 bra $L__BB0_8;
        add.u32 %r5, %r5, 3;
        bra.uni $L__BB0_7;
    $L__BB0_8:
        ret;
    """))
    assert "with flow.if_(ptx.not_(p[1])):" in src
    assert "with flow.if_(p[2]):" in src and "with flow.else_(uni=True):" in src
    assert "with flow.loop() as loop1:" in src and "loop1.continue_(pred=p[3])" in src
    assert "loop2.break_(pred=p[4])" in src and "loop2.continue_(uni=True)" in src
    assert "ptx.bra(" not in src and "flow.label(" not in src


def test_unstructured_branches_keep_their_labels():
    src = roundtrip(kernel_src("""
        mov.u32 %r1, %tid.x;
        setp.eq.u32 %p1, %r1, 0;
        setp.eq.u32 %p2, %r1, 1;
        @%p1 bra $L__a;
        add.u32 %r1, %r1, 1;
    $L__b:
        add.u32 %r1, %r1, 2;
    $L__a:
        @%p2 bra $L__b;
        ret;
    """))
    assert "flow.label('$L__b')" in src and "ptx.bra('$L__b', pred=p[2])" in src
    assert "flow.label('$L__a')" in src and "ptx.bra('$L__a', pred=p[1])" in src


def test_mbarrier_wait_loops_become_the_wait_helper():
    body = """
        mov.u32 %r1, 0;
        {
        .reg .pred P1;
        WAIT_0:
        mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2;
        @P1 bra DONE_0;
        bra WAIT_0;
        DONE_0:
        }
        {
        .reg .pred complete;
        waitLoop:
        mbarrier.try_wait.parity.shared::cta.b64 complete, [%r1], %r3;
        @!complete bra.uni waitLoop;
        }
        {
        .reg .pred complete;
        waitLoop:
        mbarrier.try_wait.parity.shared::cta.b64 complete, [%r1], %r3;
        @!complete bra waitLoop;
        }
        ret;
    """
    src = roundtrip(kernel_src(body))
    assert "flow.mbarrier_wait(r[1].addr(), r[2], op='try_wait.parity.shared::cta.b64')" in src
    assert "style='retry', uni=True" in src
    assert "ptx.mbarrier.wait(r[1].addr(), r[3])" in src
    assert "waitLoop" not in src and "WAIT_0" not in src


def test_typed_wrappers_where_they_reproduce_the_instruction():
    src = roundtrip(kernel_src("""
        mov.u32 %r1, 0;
        mbarrier.init.shared::cta.b64 [%r1], 1;
        fence.mbarrier_init.release.cluster;
        fence.proxy.async.shared::cta;
        bar.sync 0;
        wgmma.fence.sync.aligned;
        wgmma.commit_group.sync.aligned;
        wgmma.wait_group.sync.aligned 1;
        membar.gl;
        ret;
    """))
    for call in ("ptx.mbarrier.init(r[1].addr(), 1)", "ptx.fence.mbarrier_init()",
                 "ptx.fence.proxy_async('shared::cta')", "ptx.bar.sync(0)", "ptx.wgmma.fence()",
                 "ptx.wgmma.commit_group()", "ptx.wgmma.wait_group(1)",
                 "ptx.fence.membar('gl')", "ptx.ret()"):
        assert call in src, call


def test_operands_spelled_for_the_dsl():
    src = roundtrip(kernel_src("""
        .reg .f32 %f<4>;
        .reg .b32 named_reg;
        ld.param.u64 %rd1, [out];
        mov.b32 %f1, 0f3F800000;
        mov.u32 %r1, 0x1F;
        mov.u32 %r2, %envreg3;
        mov.u32 %r3, %laneid;
        setp.lt.s32 %p1|%p2, %r1, %r2;
        and.pred %p3, %p1, !%p2;
        ld.v2.f32 {%f2, _}, [%rd1+8];
        st.global.v2.f32 [%rd1+-4], {%f1, %f2};
        mov.u32 named_reg, 7;
        @!%p3 ret;
    """))
    for piece in ("ptx.addr('out')", "ptx.raw_imm('0f3F800000')", "ptx.raw_imm('0x1F')",
                  "ptx.special.envreg(3)", "ptx.special.laneid()", "flow.pair(p[1], p[2])",
                  "flow.neg(p[2])", "[f[2], flow.SINK]", "rd[1].addr(8)", "rd[1].addr(-4)",
                  "named_reg = reg.scalar(b32)", "ptx.ret(pred=ptx.not_(p[3]))"):
        assert piece in src, piece


def test_device_functions_calls_and_globals():
    text = HEAD + textwrap.dedent("""
    .global .align 4 .u32 counter = 5;
    .extern .func (.param .b32 func_retval0) helper(.param .b32 a);
    .func (.param .b32 func_retval0) twice(.param .b32 x)
    {
        .reg .b32 %r<3>;
        ld.param.b32 %r1, [x];
        add.s32 %r2, %r1, %r1;
        st.param.b32 [func_retval0+0], %r2;
        ret;
    }
    .visible .entry k(.param .u32 n) .maxntid 64, 1, 1
    {
        .reg .b32 %r<4>;
        ld.param.u32 %r1, [n];
        {
        .param .b32 param0;
        st.param.b32 [param0+0], %r1;
        .param .b32 retval0;
        call.uni (retval0), twice, (param0);
        ld.param.b32 %r2, [retval0+0];
        }
        ld.global.u32 %r3, [counter];
        ret;
    }
    """)
    src = roundtrip(text)
    assert "@flow.device_function(" in src and "ret_params=[('func_retval0', b32)]" in src
    assert "raw_directives=['.maxntid 64, 1, 1']" in src
    assert "with flow.scope():" in src and "flow.decl('.param .b32 param0')" in src
    assert "flow.args('retval0'), ptx.sym('twice'), flow.args('param0')" in src
    ns = run_generated(src)
    whole = ns["module"]()
    assert parse(emit(whole)) == whole
    names = [getattr(i, "name", None) for i in whole.items]
    assert names == ["counter", "helper", "twice", "k"]


def test_transpiled_module_is_accepted_by_ptxas():
    if ptxas() is None:
        pytest.skip("ptxas not found")
    for rel in ("cuda/vector_add.sm80.ptx", "cuda/tma_load_2d.sm90a.ptx",
                "cuda/device_calls.sm80.ptx", "triton/matmul_f16_sm90.ptx",
                "cuda/tcgen05_mma.sm100a.ptx"):
        ns = run_generated(transpile(read(rel), rel), rel)
        ok, errors = ptxas_check(emit(ns["module"]()))
        assert ok, (rel, errors)


def test_cli_writes_a_runnable_file(tmp_path):
    from jax_pyptx.__main__ import main

    out = tmp_path / "vector_add.py"
    src = os.path.join(os.path.dirname(__file__), "corpus", "cuda", "vector_add.sm80.ptx")
    assert main(["transpile", src, "-o", str(out)]) == 0
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    m = parse(r.stdout)
    assert [f.name for f in m.functions] == ["_Z10vector_addPfPKfS1_i"]
    assert_same(parse(read("cuda/vector_add.sm80.ptx")).functions[0], m.functions[0])


def test_cli_reports_parse_errors(tmp_path, capsys):
    from jax_pyptx.__main__ import main

    bad = tmp_path / "bad.ptx"
    bad.write_text(HEAD + ".visible .entry k() { mov.u32 %r1 %r2; }")
    assert main(["transpile", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.ptx:4:" in err and "%r2" in err


def test_compare_sees_differences():
    text = kernel_src("mov.u32 %r1, 1;\nadd.u32 %r2, %r1, %r1;\nret;")
    a = parse(text).functions[0]
    b = parse(text.replace("add.u32 %r2, %r1, %r1", "add.u32 %r2, %r1, %r3")).functions[0]
    c = parse(text.replace("%r1", "%r7")).functions[0]
    assert instruction_stream(a) != instruction_stream(b)
    assert instruction_stream(a) == instruction_stream(c)      # renaming is not a difference


def test_typed_wrappers_are_found_from_the_decoded_form():
    """No opcode map: a wrapper is chosen by its name spelling the instruction, options from the
    form's chosen modifiers, operands in order (jax_pyptx.transpile.wrappers)."""
    acc = ", ".join(f"%f{i}" for i in range(1, 33))
    src = roundtrip(kernel_src(f"""
        mov.u32 %r1, 0;
        setmaxnreg.dec.sync.aligned.u32 24;
        nanosleep.u32 %r1;
        st.global.f32 [%rd1], %f1;
        wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{acc}}}, %rd2, %rd3, %p1, 1, 1, 0, 1;
        barrier.sync.aligned 0;
        ret;
    """, decls=".reg .pred %p<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<40>;\n"))
    for call in ("ptx.misc.setmaxnreg(24, inc=False)", "ptx.misc.nanosleep(r[1])",
                 "ptx.mem.st(rd[1].addr(), f[1], 'f32', space='global')",
                 "ptx.wgmma.mma_async(f[1:33], rd[2], rd[3], dtype='f32', atype='bf16', "
                 "btype='bf16', scale_d=p[1], scale_a=1, scale_b=1, trans_a=0, trans_b=1)",
                 "ptx.inst.barrier.sync.aligned(0)"):
        assert call in src, call


def test_wrapper_candidates_spell_the_instruction():
    from jax_pyptx.transpile.wrappers import candidates, key

    assert key("tcgen05.wait::ld") == "tcgen05_wait_ld" and key("bits.and_") == "bits_and"
    assert [w.path for w in candidates("wgmma.wait_group", (".sync", ".aligned"))] == \
        ["ptx.wgmma.wait_group"]
    assert [w.path for w in candidates("membar", (".gl",))] == ["ptx.fence.membar"]
    assert candidates("fence.proxy", (".async", ".shared::cta"))[0].path == \
        "ptx.fence.proxy_async"
    assert candidates("add", (".u32",)) == []          # operator-style: *srcs, out=
