"""The compatibility matrix: every name of the pyptx spec's "what the 30 example files lean on"
table (``pyptx_api.md`` section 9), each exercised in a traced kernel with the exact
instructions it emits, in one place.

``pyptx_compat.TABLE`` is section 9's table as written (file counts and names). Each name has a
case here: a kernel body that calls it and the body lines it must emit (register numbers are
ours; where jax-pyptx deliberately emits something else than pyptx 0.1.1, the case says
which row of ``docs/porting.md`` explains it). A name with no case, or a case for a name
the table lacks, fails ``test_every_name_of_the_table_has_a_case``. All cases of a target are
then assembled together, as one module with one entry per case, by ptxas.

Most names have fuller tests elsewhere (errors, every keyword, the interpreter); a case's
``see`` names them, and ``test_cross_references_exist`` keeps those names honest."""
from __future__ import annotations

import enum
import importlib
import re
import types as pytypes
from pathlib import Path

import pytest

import pyptx
from jax_pyptx.toolchain import ptxas_check
from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import b32, bf16, f32, u32, u64

from .pyptx_compat import CASES, NAMES, SHAPES, SPECS, case, check, one_module
from .pyptx_util import body


# ----------------------------------------------------------------------------- kernel, modules, types
@check("pyptx.kernel", "pyptx.ptx", "pyptx.reg", "pyptx.smem",
       see=("test_pyptx_surface.py::test_module_map_imports_and_kernel_stays_the_decorator",
            "test_pyptx_kernel_api.py::test_kernel_object_surface"))
def _modules():
    import pyptx.kernel as m

    assert m is pyptx.kernel and callable(pyptx.kernel)        # the decorator, not a module
    from pyptx.kernel import Kernel, TensorSpec, TmaDescriptorHandle  # noqa: F401
    for sub in ("ptx", "reg", "smem"):
        mod = importlib.import_module("pyptx." + sub)
        assert isinstance(mod, pytypes.ModuleType) and getattr(pyptx, sub) is mod, sub
    assert callable(pyptx.ptx.inst.mov.u32) and callable(pyptx.reg.scalar)
    assert callable(pyptx.smem.alloc)

    @pyptx.kernel
    def bare(A, B):
        ptx.ret()

    text = bare.ptx()
    assert isinstance(bare, Kernel) and bare.arch == "sm_90a"
    assert ".version 8.5\n.target sm_90a\n.address_size 64\n" in text
    assert ".visible .entry bare(\n\t.param .u64 A,\n\t.param .u64 B\n)\n{" in text


_TYPES = {"f32": 32, "u32": 32, "b32": 32, "pred": 1, "bf16": 16, "b64": 64, "b16": 16,
          "u64": 64, "s32": 32}


@case("pyptx.types.f32", "pyptx.types.u32", "pyptx.types.b32", "pyptx.types.pred",
      "pyptx.types.bf16", "pyptx.types.b64", "pyptx.types.b16", "pyptx.types.u64",
      "pyptx.types.s32", see="test_pyptx_reg.py::test_types_module")
def _types(e):
    import pyptx.types as T

    for name, bits in _TYPES.items():
        t = getattr(T, name)
        assert (t.name, t.bits, t.ptx, T.from_name("." + name)) == (name, bits, "." + name, t)
    reg.scalar(T.f32, init=1.0)
    reg.scalar(T.u32, init=7)
    reg.scalar(T.b32, init=138413200)
    q = reg.scalar(T.pred)
    ptx.inst.setp.ne.u32(q, e.r0, 0)
    reg.scalar(T.b64, init=5)
    reg.scalar(T.b16, init=3)
    reg.scalar(T.u64, init=1 << 40)
    reg.scalar(T.s32, init=-1)
    x = reg.scalar(T.bf16)                      # no bf16 registers: declared .b16 (porting.md)
    ptx.inst.cvt.rn.bf16.f32(x, e.f0)
    return ["mov.f32 %f4, 0f3F800000;", "mov.u32 %r6, 7;", "mov.b32 %r7, 138413200;",
            "setp.ne.u32 %p2, %r0, 0;", "mov.b64 %rd2, 5;", "mov.b16 %rs2, 3;",
            "mov.u64 %rd3, 1099511627776;", "mov.s32 %r8, -1;", "cvt.rn.bf16.f32 %h1, %f0;"]


@check("pyptx.Tile", "pyptx.specs.Tile", "Layout.ROW", "pyptx.specs.Layout", "pyptx.Layout",
       "Layout.TMA_128B", "Tile.wgmma_a", "Tile.wgmma_b",
       see=("test_pyptx_kernel_api.py::test_tile_classification_and_dataclass_behaviour",
            "test_pyptx_kernel_api.py::test_layout_members",
            "test_pyptx_kernel_api.py::test_tile_wgmma_operands",
            "test_tile_tensor_maps.py::test_default_box_on_the_interpreter_and_in_the_cuda_plan"))
def _tiles():
    import pyptx.specs

    assert pyptx.Tile is pyptx.specs.Tile and pyptx.Layout is pyptx.specs.Layout is Layout
    assert issubclass(Layout, enum.Enum)
    assert {m.name: m.value for m in Layout} == {
        "ROW": "row", "COL": "col", "TMA_128B": "tma_128b", "TMA_64B": "tma_64b",
        "TMA_32B": "tma_32b", "INTERLEAVED": "interleaved"}
    t = Tile("M", "K", bf16, Layout.ROW)
    assert (t.shape, t.dtype, t.layout, t.tma_box, t.tma_rank, t.tma_padding) == (
        ("M", "K"), bf16, Layout.ROW, None, 2, False)
    assert t.symbolic_dims == ("M", "K") and t.extract_env((4, 8)) == {"M": 4, "K": 8}
    # the layout picks the tensor map's swizzle and default box (128 rows x one span)
    assert Tile(256, 256, bf16, Layout.TMA_128B).tma_view((256, 256), {})[1] == (128, 64)
    assert Tile(256, 256, bf16, Layout.ROW).tma_view((256, 256), {})[1] == (128, 64)
    a = Tile.wgmma_a(64, 64, bf16, tile_k=16)
    assert (a.layout, a.tma_box) == (Layout.TMA_32B, (64, 16))
    b = Tile.wgmma_b(64, 128, bf16, tile_n=64)
    assert (b.layout, b.tma_box) == (Layout.TMA_128B, (64, 64))
    # and they reach the descriptor a kernel's X.tma_desc() records
    (ha, hb, hc) = _tile_kernel.trace(M=128, N=128, K=64).tma
    assert (ha.shape, ha.box, ha.swizzle) == ((128, 64), (64, 64), 128)
    assert (hb.shape, hb.box, hb.swizzle) == ((2, 64, 64), (2, 64, 64), 128)
    assert (hc.shape, hc.box, hc.swizzle) == ((128, 128), (128, 32), 0)


@kernel(arch="sm_90a", **SPECS)
def _tile_kernel(A, B, C):
    for x in (A, B, C):
        x.tma_desc()
    assert (A.shape, B.shape, C.shape) == ((128, 64), (64, 128), (128, 128))
    ptx.ret()


# ----------------------------------------------------------------------------- addresses, specials, params
@case("ptx.addr", see="test_pyptx_ptx_core.py::test_special_registers_params_addresses")
def _addr(e):
    ptx.inst.ld.global_.f32(e.f0, ptx.addr(e.rd0))
    ptx.inst.ld.global_.f32(e.f0, ptx.addr(e.rd0, 16))
    ptx.inst.ld.global_.f32(e.f0, ptx.addr(e.rd0, -8))     # pyptx: [%rd0-8]; same address
    ptx.inst.ld.param.u64(e.rd1, ptx.addr(e.A))
    ptx.inst.ld.param.u64(e.rd1, ptx.addr("B"))
    return ["ld.global.f32 %f0, [%rd0];", "ld.global.f32 %f0, [%rd0+16];",
            "ld.global.f32 %f0, [%rd0+-8];", "ld.param.u64 %rd1, [A];",
            "ld.param.u64 %rd1, [B];"]


@case("ptx.global_ptrs", see="test_pyptx_surface.py::test_global_ptrs_and_string_symbols")
def _global_ptrs(e):
    pa, pc = ptx.global_ptrs(e.A, e.C)
    (pb,) = ptx.global_ptrs("B")
    assert ptx.global_ptrs() == ()
    assert [p.dtype.bits for p in (pa, pb, pc)] == [64] * 3
    ptx.inst.ld.global_.f32(e.f0, ptx.addr(pb))
    # loaded once, at the kernel's start (porting.md: "global_ptrs ... load once per kernel")
    return ["ld.param.u64 %rd2, [A];", "cvta.to.global.u64 %rd3, %rd2;",
            "ld.param.u64 %rd4, [C];", "cvta.to.global.u64 %rd5, %rd4;",
            "ld.param.u64 %rd6, [B];", "cvta.to.global.u64 %rd7, %rd6;",
            "ld.global.f32 %f0, [%rd7];"]


@case("ptx.ret", see="test_pyptx_ptx_core.py::test_if_else_scope_label_bra_ret")
def _ret(e):
    ptx.ret(pred=e.p0)
    ptx.ret(pred=ptx.not_(e.p1))
    ptx.ret()
    return ["@%p0 ret;", "@!%p1 ret;", "ret;"]


@case("ptx.special.tid.x", "ptx.special.ctaid.x", "ptx.special.ctaid.y", "ptx.special.ctaid.z",
      see="test_pyptx_ptx_core.py::test_special_registers_params_addresses")
def _specials(e):
    t = ptx.special.tid.x()
    assert (t.name, t.dtype) == ("%tid.x", u32)           # reading them emits nothing
    reg.from_(t, u32)
    ptx.inst.mov.u32(e.r0, ptx.special.ctaid.x())
    ptx.inst.mov.u32(e.r1, ptx.special.ctaid.y())
    reg.from_(ptx.special.ctaid.z(), u32)
    return ["mov.u32 %r6, %tid.x;", "mov.u32 %r0, %ctaid.x;", "mov.u32 %r1, %ctaid.y;",
            "mov.u32 %r7, %ctaid.z;"]


@case("ptx.sreg", see=("test_pyptx_surface.py::test_labels_loop_scope_sreg_fence",
                       "test_pyptx_surface.py::test_sreg_types"))
def _sreg(e):
    rank = ptx.sreg("%cluster_ctarank")
    assert rank.name == "%cluster_ctarank"
    ptx.inst.mov.u32(e.r0, rank)
    ptx.inst.mov.u32(e.r1, ptx.sreg("%clusterid.x"))
    return ["mov.u32 %r0, %cluster_ctarank;", "mov.u32 %r1, %clusterid.x;"]


@case("ptx.param", raw_params=[("u32", "n"), ("u64", "p"), ("b8.align64.array128", "tmap")],
      see="test_pyptx_ptx_core.py::test_special_registers_params_addresses")
def _param(e):
    n = ptx.param(u32, "n")
    ptx.param(u64, "p", dst=e.rd0)
    ptx.param(u64, "tmap")                      # an array param: its address
    assert n.dtype == u32
    return ["ld.param.u32 %r6, [n];", "ld.param.u64 %rd0, [p];", "mov.u64 %rd2, tmap;"]


# ----------------------------------------------------------------------------- registers
@case("reg.scalar", see="test_pyptx_reg.py::test_scalar_array_from_and_init")
def _scalar(e):
    a = reg.scalar(u32)
    reg.scalar(u32, init=5)
    reg.scalar(f32, init=11.0)
    reg.scalar(b32, init=138413200)
    ptx.inst.add.u32(a, a, 1)
    return ["mov.u32 %r7, 5;", "mov.f32 %f4, 0f41300000;", "mov.b32 %r8, 138413200;",
            "add.u32 %r6, %r6, 1;"]


@case("reg.array", see="test_pyptx_reg.py::test_register_array_semantics")
def _array(e):
    v = reg.array(f32, 4)                       # numbered on from the scalars (pyptx: %farr0_)
    assert (len(v), v[2].name, v.dtype, len(reg.array(f32, 2, init=0.0))) == (4, "%f6", f32, 2)
    ptx.inst.ld.global_.v4.f32(v, ptx.addr(e.rd0))
    ptx.inst.add.f32(v[0], v[0], v[3])
    return ["mov.f32 %f8, 0f00000000;", "mov.f32 %f9, 0f00000000;",
            "ld.global.v4.f32 {%f4, %f5, %f6, %f7}, [%rd0];", "add.f32 %f4, %f4, %f7;"]


# ----------------------------------------------------------------------------- control flow
@case("ptx.bar.sync", see="test_pyptx_ptx_async.py::test_barriers")
def _bar(e):
    ptx.bar.sync(0)
    ptx.bar.sync(1, 128)
    ptx.bar.sync(2, pred=e.p0)
    return ["bar.sync 0;", "bar.sync 1, 128;", "@%p0 bar.sync 2;"]


@case("ptx.if_", "ptx.else_", see="test_pyptx_ptx_core.py::test_if_else_scope_label_bra_ret")
def _if(e):
    with ptx.if_(e.p0):
        ptx.inst.add.u32(e.r0, e.r0, 1)
    with ptx.else_():
        ptx.inst.add.u32(e.r0, e.r0, 2)
    with ptx.if_(ptx.not_(e.p1)):              # code-free negation: @p1 skips the body
        ptx.inst.add.u32(e.r0, e.r0, 3)
    # if_ without else_ branches to its end directly (porting.md, "same computation")
    return ["@!%p0 bra $L_else_0;", "add.u32 %r0, %r0, 1;", "bra $L_endif_0;",
            "$L_else_0:", "add.u32 %r0, %r0, 2;", "$L_endif_0:",
            "@%p1 bra $L_else_1;", "add.u32 %r0, %r0, 3;", "$L_else_1:"]


@case("ptx.loop", see="test_pyptx_surface.py::test_labels_loop_scope_sreg_fence")
def _loop(e):
    with ptx.loop("again", pred=e.p0):
        ptx.inst.add.u32(e.r0, e.r0, 1)
    with ptx.loop("forever"):
        ptx.inst.add.u32(e.r1, e.r1, 1)
    return ["again:", "add.u32 %r0, %r0, 1;", "@%p0 bra again;",
            "forever:", "add.u32 %r1, %r1, 1;", "bra.uni forever;"]


@case("ptx.bra", "ptx.label", see="test_pyptx_ptx_core.py::test_if_else_scope_label_bra_ret")
def _bra(e):
    ptx.bra("skip", pred=e.p0)
    ptx.inst.add.u32(e.r0, e.r0, 1)
    ptx.label("skip")
    ptx.bra("done")
    ptx.label("done")
    return ["@%p0 bra skip;", "add.u32 %r0, %r0, 1;", "skip:", "bra done;", "done:"]


@case("ptx.scope", see="test_pyptx_surface.py::test_labels_loop_scope_sreg_fence")
def _scope(e):
    with ptx.scope():
        t = reg.scalar(u32)                     # numbered: declared at the function's top
        ptx.inst.add.u32(t, e.r0, 1)
        with ptx.scope():
            ptx.inst.add.u32(t, t, 1)
    return ["{", "add.u32 %r6, %r0, 1;", "{", "add.u32 %r6, %r6, 1;", "}", "}"]


@check("ptx.scope")
def _scope_named_registers():
    """A register named inside a block is declared in it (pyptx declares a scope's registers
    inline): the same name again in the next block, shadowing one of the function."""
    @kernel(arch="sm_90a", out_specs=(Tile(32, u32),), block=(32, 1, 1))
    def scoped(Y):
        a = reg.scalar(u32, 1)
        reg.scalar(u32, 100, name="tmp")
        for i in range(2):
            with ptx.scope():
                t = reg.scalar(u32, name="tmp")
                ptx.inst.add.u32(t, a, i + 5)
                ptx.inst.add.u32(a, a, "tmp")
        ptx.inst.add.u32(a, a, "tmp")           # the function's tmp again
        (py,) = ptx.global_ptrs(Y)
        ptx.inst.st.global_.u32(ptx.addr(py + reg.from_(ptx.special.tid.x(), u32) * 4), a)
        ptx.ret()

    text = scoped.ptx()
    block = "\t{\n\t\t.reg .u32 \ttmp;\n\t\tadd.u32 \ttmp, %r0, {};\n\t\tadd.u32 \t%r0, %r0, tmp;\n\t}\n"
    assert block.replace("{}", "5") + block.replace("{}", "6") in text
    assert text.count(".reg .u32 \ttmp;") == 3
    ptxas_check(text, "sm_90a")
    assert (scoped.interpret() == 1 + 6 + 13 + 100).all()     # each block saw its own tmp


@case("ptx.kloop", see=("test_pyptx_ptx_core.py::test_kloop_shape_and_errors",
                        "test_pyptx_ptx_core.py::test_kloop_register_total_runs_total_bodies"))
def _kloop(e):
    ptx.kloop(3, unroll=2, body=lambda: ptx.inst.add.u32(e.r0, e.r0, 1))
    ptx.kloop(e.r1, unroll=2, body=lambda: ptx.inst.add.u32(e.r0, e.r0, 1), loop_label="kl")
    return ["add.u32 %r0, %r0, 1;"] * 3 + [
        "and.b32 %r6, %r1, 1;", "sub.s32 %r7, %r1, %r6;", "setp.ge.u32 %p2, %r1, 2;",
        "@!%p2 bra $L_else_0;", "mov.u32 %r8, %r7;", "setp.ne.u32 %p3, %r8, 0;", "kl:",
        "add.u32 %r0, %r0, 1;", "add.u32 %r0, %r0, 1;", "sub.s32 %r8, %r8, 2;",
        "setp.ne.u32 %p3, %r8, 0;", "@%p3 bra kl;", "$L_else_0:",
        "setp.ne.u32 %p4, %r6, 0;", "@!%p4 bra $L_else_1;", "add.u32 %r0, %r0, 1;",
        "$L_else_1:"]


@case("ptx.pipeline", see="test_pyptx_ptx_core.py::test_pipeline_advance")
def _pipeline(e):
    st = ptx.pipeline(3)
    stage, phase = st.advance()
    assert (st.n_stages, stage.name, phase.name) == (3, "%r9", "%r7")
    return ["mov.u32 %r6, 0;", "mov.u32 %r7, 0;", "setp.eq.u32 %p2, %r6, 3;",
            "selp.u32 %r8, 1, 0, %p2;", "xor.b32 %r7, %r7, %r8;", "selp.u32 %r9, 0, %r6, %p2;",
            "add.s32 %r6, %r9, 1;"]


@case("ptx.named_barrier", see="test_pyptx_ptx_async.py::test_barriers")
def _named_barrier(e):
    nb = ptx.named_barrier(e.r0, count=128)
    assert (nb.barrier_id, nb.count) == (e.r0, 128)
    nb.sync()
    ptx.named_barrier(3).sync(pred=e.p0)
    return ["bar.sync %r0, 128;", "@%p0 bar.sync 3;"]


# ----------------------------------------------------------------------------- shared memory
@case("pyptx.smem", "smem.alloc", "smem.base", "smem.load",
      see=("test_pyptx_smem.py::test_alloc_names_alignment_and_views",
           "test_pyptx_smem.py::test_base_load_store_swizzle_and_layout_helpers"))
def _smem(e):
    sA = smem.alloc(bf16, (2, 64, 64))
    sB = smem.alloc(f32, 32, swizzle="128B")
    assert (sA.shape, sA.dtype, sA.swizzle, sB.swizzle) == ((2, 64, 64), bf16, None, "128B")
    base = smem.base(sA.name)
    v = smem.load(u32, ptx.addr(base, 4))
    smem.load(f32, sB)
    assert str(v.dtype) == "u32"
    return ["mov.u32 %r6, smem_0;", "ld.shared.u32 %r7, [%r6+4];", "ld.shared.f32 %f4, [smem_1];"]


@check("smem.base", see="test_pyptx_kernel_api.py::test_extern_smem_names_the_window_and_smem_base_uses_it")
def _smem_base_extern():
    @kernel(arch="sm_90a", extern_smem="global_smem")
    def k():
        smem.base()
        ptx.ret()

    text = k.ptx()
    assert ".extern .shared .align 128 .b8 global_smem[];" in text
    assert body(k) == ["mov.u32 %r0, global_smem;", "ret;"]


@case("pyptx.smem.apply_swizzle", see="test_pyptx_smem.py::test_base_load_store_swizzle_and_layout_helpers")
def _apply_swizzle(e):
    assert smem.apply_swizzle(e.r0, None) is e.r0
    smem.apply_swizzle(e.r0, "128B")
    smem.apply_swizzle(e.r1, "64b")
    smem.apply_swizzle(e.r2, "32B")
    return ["and.b32 %r6, %r0, 896;", "shr.u32 %r6, %r6, 3;", "xor.b32 %r7, %r0, %r6;",
            "and.b32 %r8, %r1, 384;", "shr.u32 %r8, %r8, 3;", "xor.b32 %r9, %r1, %r8;",
            "and.b32 %r10, %r2, 128;", "shr.u32 %r10, %r10, 3;", "xor.b32 %r11, %r2, %r10;"]


@case("smem.mbarrier", "ptx.mbarrier.init", "ptx.mbarrier.arrive", "ptx.mbarrier.arrive_expect_tx",
      "ptx.mbarrier.wait", see="test_pyptx_ptx_async.py::test_mbarrier_wrappers")
def _mbarrier(e):
    bar = smem.mbarrier(2)
    assert (bar.name, bar.count) == ("mbar_0", 2)
    ptx.mbarrier.init(bar[0], 1)
    ptx.mbarrier.init(bar[1], 128)
    ptx.mbarrier.arrive(bar[1])
    ptx.mbarrier.arrive_expect_tx(bar[0], 16384)
    ptx.mbarrier.wait(bar[0], e.r0)
    return ["mbarrier.init.shared::cta.b64 [mbar_0], 1;",
            "mbarrier.init.shared::cta.b64 [mbar_0+8], 128;",
            "mbarrier.arrive.shared.b64 %rd2, [mbar_0+8];",
            "mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [mbar_0], 16384;",
            # try_wait spells .shared::cta (porting.md, "same computation")
            "$L_mbar_wait_0:", "mbarrier.try_wait.parity.shared::cta.b64 %p2, [mbar_0], %r0;",
            "@!%p2 bra $L_mbar_wait_0;"]


@case("ptx.mbarrier.array", see="test_pyptx_ptx_async.py::test_mbarrier_array")
def _mbarrier_array(e):
    full = ptx.mbarrier.array(e.r0, 64, 3)
    full.init_all(2)
    full[1].arrive_expect_tx(4096)
    full.at(e.r1).wait(e.r2)
    return ["mbarrier.init.shared::cta.b64 [%r0+64], 2;",
            "mbarrier.init.shared::cta.b64 [%r0+72], 2;",
            "mbarrier.init.shared::cta.b64 [%r0+80], 2;",
            "mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r0+72], 4096;",
            "shl.b32 %r6, %r1, 3;", "add.u32 %r6, %r6, 64;", "add.u32 %r7, %r6, %r0;",
            "$L_mbar_wait_0:", "mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r7], %r2;",
            "@!%p2 bra $L_mbar_wait_0;"]


@case("smem.wgmma_tile", "ptx.wgmma.mma_async", "ptx.wgmma.fence", "ptx.wgmma.commit_group",
      "ptx.wgmma.wait_group",
      see=("test_pyptx_ptx_mma.py::test_wgmma_keyword_form_with_stage_views_registers_and_predicates",
           "test_pyptx_surface.py::test_wgmma_keyword_form_and_descriptors"))
def _wgmma(e):
    sA = smem.wgmma_tile(bf16, (64, 64), major="K")
    sB = smem.wgmma_tile(bf16, (64, 128), major="mn")
    assert (sA.swizzle, sA.gmma_major, sB.gmma_major) == ("128B", "K", "MN")
    assert (sB.gmma_layout.leading_byte_offset, sB.gmma_layout.stride_byte_offset) == (8192, 1024)
    acc = reg.wgmma_frag(m=64, n=16, dtype=f32)
    ptx.wgmma.fence()
    ptx.wgmma.mma_async(shape="m64n16k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16, d=acc,
                        a=e.rd0, b=e.rd1, scale_d=e.p0, trans_b=1)
    ptx.wgmma.mma_async(shape="m64n128k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                        d=reg.wgmma_frag(m=64, n=128, dtype=f32), a=sA, b=sB, scale_d=True,
                        trans_b=1, a_k_offset=32, b_k_offset=2048)
    ptx.wgmma.commit_group()
    ptx.wgmma.wait_group(0)
    acc8 = "{" + ", ".join(f"%f{i}" for i in range(4, 12)) + "}"
    acc64 = "{" + ", ".join(f"%f{i}" for i in range(12, 76)) + "}"
    lbo_sbo_a = (1 << 16) | (64 << 32) | (1 << 62)          # LBO 16, SBO 1024, 128B swizzle
    lbo_sbo_b = (512 << 16) | (64 << 32) | (1 << 62)        # LBO 8192, SBO 1024
    return ["wgmma.fence.sync.aligned;",
            f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {acc8}, %rd0, %rd1, %p0, 1, 1, 0, 1;",
            # descriptors: A first, then B, each from its tile's layout (constant fields ORed
            # as an immediate: porting.md); scale_d=True passes the flag as an immediate
            "mov.u64 %rd2, smem_0;", "add.s64 %rd3, %rd2, 32;", "shr.u64 %rd4, %rd3, 4;",
            "and.b64 %rd4, %rd4, 16383;", f"or.b64 %rd4, %rd4, {lbo_sbo_a};",
            "mov.u64 %rd5, smem_1;", "add.s64 %rd6, %rd5, 2048;", "shr.u64 %rd7, %rd6, 4;",
            "and.b64 %rd7, %rd7, 16383;", f"or.b64 %rd7, %rd7, {lbo_sbo_b};",
            f"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {acc64}, %rd4, %rd7, 1, 1, 1, 0, 1;",
            "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;"]


@case("ptx.wgmma.auto_descriptor", "ptx.wgmma.masked_descriptor",
      see="test_pyptx_ptx_mma.py::test_make_auto_masked_descriptors")
def _wgmma_descriptors(e):
    ptx.wgmma.auto_descriptor(e.r0, dtype=bf16, shape=(64, 64), major="K")
    ptx.wgmma.masked_descriptor(e.r1, byte_offset=1024)
    const = (1 << 16) | (64 << 32) | (1 << 62)
    return ["cvt.u64.u32 %rd2, %r0;", "shr.u64 %rd3, %rd2, 4;", "and.b64 %rd3, %rd3, 16383;",
            f"or.b64 %rd3, %rd3, {const};",
            "add.u32 %r6, %r1, 1024;", "and.b32 %r7, %r6, 262016;", "shr.u32 %r7, %r7, 4;",
            "cvt.u64.u32 %rd4, %r7;", f"or.b64 %rd4, %rd4, {0x4000004000010000};"]


# ----------------------------------------------------------------------------- async copies
@case("ptx.cp.async_.cg", "ptx.cp.async_.commit_group", "ptx.cp.async_.wait_group", arch="sm_80",
      see="test_pyptx_surface.py::test_cp_async_cg_ca")
def _cp_async(e):
    ptx.cp.async_.cg(ptx.addr(e.r0), ptx.addr(e.rd0 + e.r1), 16)
    ptx.cp.async_.commit_group()
    ptx.cp.async_.wait_group(0)
    return ["cvt.u64.u32 %rd2, %r1;", "add.s64 %rd3, %rd0, %rd2;",
            "cp.async.cg.shared.global [%r0], [%rd3], 16;", "cp.async.commit_group;",
            "cp.async.wait_group 0;"]


@case("ptx.cp.async_.bulk.tensor_2d", "ptx.cp.async_.bulk.tensor_2d.shared_cta_global_tile",
      "ptx.fence.proxy_async_shared_cta", **SPECS,
      see=("test_pyptx_ptx_async.py::test_bulk_tensor_keyword_forms",
           "test_pyptx_seed.py::test_the_seed_tma_call_runs_on_the_interpreter"))
def _tensor_2d(e):
    sA = smem.alloc(bf16, (2, 64, 64), swizzle="128B")
    bar = smem.mbarrier(2)
    ptx.cp.async_.bulk.tensor_2d(dst=sA[0], src=e.A.tma_desc(), coord=(e.r0, e.r1), mbar=bar[0])
    ptx.cp.async_.bulk.tensor_2d(dst=sA[1], src=e.A.tma_desc(), coord=(64, e.r1), mbar=bar[1])
    ptx.cp.async_.bulk.tensor_2d.shared_cta_global_tile(dst=sA[0], src=e.A.tma_desc(),
                                                        coord=(0, 0), mbar=bar[0])
    ptx.fence.proxy_async_shared_cta()
    return ["ld.param.u64 %rd2, [A_tma_desc];",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[smem_0], [%rd2, {%r0, %r1}], [mbar_0];",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[smem_0+8192], [%rd2, {64, %r1}], [mbar_0+8];",
            "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes "
            "[smem_0], [%rd2, {0, 0}], [mbar_0];",
            "fence.proxy.async.shared::cta;"]


@case("ptx.tma.load_3d", "ptx.tma.load_3d_multicast", "ptx.tma.store_3d", **SPECS,
      see="test_pyptx_ptx_async.py::test_tma_rank3_helpers")
def _tma_3d(e):
    sB = smem.alloc(bf16, (64, 128), swizzle="128B")
    bar = smem.mbarrier(1)
    desc = e.B.tma_desc()
    ptx.tma.load_3d(sB, desc, row=e.r0, col=e.r1, mbar=bar[0])
    ptx.tma.load_3d_multicast(sB, desc, row=0, col=128, mbar=bar[0], mask=e.us, issuer=e.p0)
    ptx.tma.store_3d(desc, sB, row=e.r0, col=64)
    return ["ld.param.u64 %rd2, [B_tma_desc];", "shr.u32 %r6, %r1, 6;",
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            "[smem_0], [%rd2, {0, %r0, %r6}], [mbar_0];",
            "@%p0 cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            ".multicast::cluster [smem_0], [%rd2, {0, 0, 2}], [mbar_0], %rs1;",
            "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd2, {0, %r0, 1}], [smem_0];"]


@case("ptx.fence.proxy_async_generic_acquire_shared_cluster", "ptx.cluster.sync",
      "ptx.cluster.map_shared_u32", cluster=(2, 1, 1),
      see=("test_pyptx_misc.py::test_cluster_helpers", "test_pyptx_misc.py::test_fences_and_setmaxnreg"))
def _cluster(e):
    ptx.fence.proxy_async_generic_acquire_shared_cluster()
    ptx.cluster.sync()
    ptx.cluster.map_shared_u32(e.r0, 1)
    ptx.cluster.map_shared_u32(e.r0, e.r1, pred=e.p0)
    return ["fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster;",
            "barrier.cluster.arrive;", "barrier.cluster.wait;",
            "mov.u32 %r7, 1;", "mapa.shared::cluster.u32 %r6, %r0, %r7;",
            "@%p0 mapa.shared::cluster.u32 %r8, %r0, %r1;"]


# ----------------------------------------------------------------------------- warp, mma, misc
@case("ptx.warp.reduce_sum", "ptx.warp.reduce_max",
      see=("test_pyptx_surface.py::test_warp_reductions_in_place",
           "test_pyptx_ptx_core.py::test_warp_reductions_on_the_interpreter"))
def _warp(e):
    ptx.warp.reduce_sum(e.f0, width=4)
    ptx.warp.reduce_max(e.s0, width=2)
    # the register itself is shuffled, mask printed unsigned (porting.md, "same computation")
    return ["shfl.sync.bfly.b32 %f4, %f0, 2, 31, 4294967295;", "add.f32 %f0, %f0, %f4;",
            "shfl.sync.bfly.b32 %f5, %f0, 1, 31, 4294967295;", "add.f32 %f0, %f0, %f5;",
            "shfl.sync.bfly.b32 %r6, %r4, 1, 31, 4294967295;", "max.s32 %r4, %r4, %r6;"]


@case("ptx.mma.sync", "ptx.ldmatrix", arch="sm_80",
      see=("test_pyptx_surface.py::test_mma_sync_keyword_form",
           "test_pyptx_gemms.py::test_ampere_gemm_runs_and_matches_numpy"))
def _mma_sync(e):
    a, b, c = reg.array(b32, 4), reg.array(b32, 2), reg.array(f32, 4)
    ptx.ldmatrix(dst=a, src=ptx.addr(e.r0), layout="x4")
    ptx.ldmatrix(dst=b, src=ptx.addr(e.r1), layout="x2", trans=True)
    ptx.mma.sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16, dtype_c=f32,
                 d=c, a=a, b=b, c=c)
    # the m8n8 shape is spelled (porting.md: ptxas requires it)
    return ["ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r6, %r7, %r8, %r9}, [%r0];",
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r10, %r11}, [%r1];",
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f4, %f5, %f6, %f7}, "
            "{%r6, %r7, %r8, %r9}, {%r10, %r11}, {%f4, %f5, %f6, %f7};"]


@case("ptx.stmatrix_x4_trans_f32_bf16", see="test_pyptx_ptx_mma.py::test_stmatrix_x4_trans_f32_bf16")
def _stmatrix(e):
    frag = reg.array(f32, 8)
    ptx.stmatrix_x4_trans_f32_bf16(frag=frag, smem_base=e.r0, lane=e.r1, row_stride=64)
    cvts = [f"cvt.rn.bf16.f32 %rs{2 + k}, %f{4 + k};" for k in range(8)]
    packs = [f"mov.b32 %r{6 + k}, {{%rs{2 + 2 * k}, %rs{3 + 2 * k}}};" for k in range(4)]
    return ["and.b32 %r10, %r1, 31;", "shr.u32 %r11, %r1, 5;", "mad.lo.s32 %r12, %r11, 16, 0;",
            "and.b32 %r13, %r10, 7;", "mad.lo.s32 %r12, %r13, 64, %r12;",
            "shr.u32 %r14, %r10, 4;", "mad.lo.s32 %r12, %r14, 512, %r12;",
            "and.b32 %r15, %r10, 8;", "add.s32 %r12, %r12, %r15;", "shl.b32 %r16, %r12, 1;",
            "add.u32 %r17, %r0, %r16;", *cvts, *packs, "add.u32 %r18, %r17, 0;",
            "stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 [%r18], {%r6, %r7, %r8, %r9};"]


@case("ptx.setmaxnreg", block=(256, 1, 1), see="test_pyptx_misc.py::test_fences_and_setmaxnreg")
def _setmaxnreg(e):
    ptx.setmaxnreg(240)
    ptx.setmaxnreg(40, inc=False, pred=e.p0)
    return ["setmaxnreg.inc.sync.aligned.u32 240;", "@%p0 setmaxnreg.dec.sync.aligned.u32 40;"]


# ----------------------------------------------------------------------------- tcgen05
@case("ptx.tcgen05.alloc", "ptx.tcgen05.dealloc", "ptx.tcgen05.relinquish_alloc_permit",
      "ptx.tcgen05.fence_before_thread_sync", "ptx.tcgen05.fence_after_thread_sync",
      "ptx.tcgen05.ld", "ptx.tcgen05.wait_ld", "ptx.tcgen05.st", "ptx.tcgen05.wait_st",
      "ptx.tcgen05.shift", "ptx.tcgen05.commit", arch="sm_100a",
      see=("test_pyptx_ptx_mma.py::test_tcgen05_keyword_forms",
           "test_pyptx_surface.py::test_tcgen05_helpers",
           "test_pyptx_gemms.py::test_blackwell_tcgen05_gemm_runs_on_the_interpreter"))
def _tcgen05(e):
    slot = smem.alloc(u32, 1)
    bar = smem.mbarrier(1)
    ptx.tcgen05.alloc(slot, 128)
    ptx.tcgen05.fence_before_thread_sync()
    ptx.tcgen05.fence_after_thread_sync()
    vals = reg.array(b32, 4)
    ptx.tcgen05.ld(vals, e.r0, shape="32x32b", count=4)
    ptx.tcgen05.wait_ld()
    ptx.tcgen05.st(e.r0, vals, shape="32x32b", count=4)
    ptx.tcgen05.wait_st()
    ptx.tcgen05.shift(e.r0)
    ptx.tcgen05.commit(bar[0], space="cta")
    ptx.tcgen05.commit(bar[0], multicast_mask=e.us)
    ptx.tcgen05.dealloc(e.r0, 128)
    ptx.tcgen05.relinquish_alloc_permit()
    v = "{%r6, %r7, %r8, %r9}"
    return ["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [smem_0], 128;",
            "tcgen05.fence::before_thread_sync;", "tcgen05.fence::after_thread_sync;",
            f"tcgen05.ld.sync.aligned.32x32b.x4.b32 {v}, [%r0];", "tcgen05.wait::ld.sync.aligned;",
            f"tcgen05.st.sync.aligned.32x32b.x4.b32 [%r0], {v};", "tcgen05.wait::st.sync.aligned;",
            "tcgen05.shift.cta_group::1.down [%r0];",
            # space="cta": the generic address form (porting.md: ptxas refuses .shared::cta)
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [mbar_0];",
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.multicast::cluster.shared::cluster.b64 "
            "[mbar_0], %rs1;",
            "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, 128;",
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"]


@case("ptx.tcgen05.mma", "ptx.tcgen05.make_instr_desc_f16bf16_f32", "ptx.tcgen05.descriptor",
      "ptx.tcgen05.masked_descriptor", arch="sm_100a",
      see=("test_pyptx_ptx_mma.py::test_tcgen05_keyword_forms",
           "test_pyptx_ptx_mma.py::test_instr_desc_fields"))
def _tcgen05_mma(e):
    assert ptx.tcgen05.make_instr_desc_f16bf16_f32() == 138413200
    assert ptx.tcgen05.make_instr_desc_f16bf16_f32(m=128, n=128) == 136316048
    idesc = reg.scalar(b32, init=ptx.tcgen05.make_instr_desc_f16bf16_f32(m=128, n=128))
    sA = smem.alloc(bf16, (128, 64), swizzle="128B")
    da = ptx.tcgen05.descriptor(sA, stride_bytes=1024)
    db = ptx.tcgen05.masked_descriptor(e.r1)
    ptx.tcgen05.mma(e.r0, da, db, idesc)                    # default: overwrite D
    ptx.tcgen05.mma(e.r0, da, db, idesc, scale_d=e.p0)
    const = (1 << 16) | (64 << 32) | (1 << 46) | (2 << 61)
    return ["mov.b32 %r6, 136316048;",
            # the descriptor is the masked register itself (pyptx copies it: mov.b64)
            "mov.u32 %r7, smem_0;", "and.b32 %r8, %r7, 262128;", "shr.u32 %r8, %r8, 4;",
            "cvt.u64.u32 %rd2, %r8;", f"or.b64 %rd2, %rd2, {const};",
            "and.b32 %r9, %r1, 262128;", "shr.u32 %r9, %r9, 4;",
            "cvt.u64.u32 %rd3, %r9;", f"or.b64 %rd3, %rd3, {0x4000404000010000};",
            # the flag passes as an immediate, no all-zero lane mask (porting.md)
            "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd2, %rd3, %r6, 0;",
            "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd2, %rd3, %r6, %p0;"]


# ----------------------------------------------------------------------------- the tests
def _by_name():
    out = {}
    for c in CASES:
        for n in c.names:
            out.setdefault(n, []).append(c)
    return out


def test_every_name_of_the_table_has_a_case():
    assert len(NAMES) == len(set(NAMES)) == 149
    by_name = _by_name()
    assert sorted(set(NAMES) - set(by_name)) == []             # no name without a case
    assert sorted(set(by_name) - set(NAMES)) == []             # no case for another name


@pytest.mark.parametrize("c", [c for c in CASES if c.check is None], ids=lambda c: c.id)
def test_case_emits_the_documented_instructions(c):
    k, out = c.kernel()
    kw = SHAPES if "in_specs" in c.kw else {}
    got = body(k, **kw)
    assert got == out["want"] + ["ret;"]


@pytest.mark.parametrize("c", [c for c in CASES if c.check is not None], ids=lambda c: c.id)
def test_checked_names(c):
    c.check()


@pytest.mark.parametrize("arch", sorted({c.arch for c in CASES if c.check is None}))
def test_ptxas_accepts_every_case(arch):
    """One module per target with every case as an entry: ptxas assembles it."""
    texts = []
    for c in CASES:
        if c.check is None and c.arch == arch:
            k, _ = c.kernel()
            texts.append(k.ptx(**(SHAPES if "in_specs" in c.kw else {})))
    rep = ptxas_check(one_module(texts), arch)             # raises with ptxas's message
    assert rep.text.count("Compiling entry function 'case_") == len(texts) > 1


def test_cross_references_exist():
    here = Path(__file__).parent
    for c in CASES:
        for ref in c.see:
            path, _, test = ref.partition("::")
            text = (here / path).read_text()
            assert re.search(rf"^def {re.escape(test)}\(", text, re.M), ref
