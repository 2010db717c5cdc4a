"""The documented pyptx surface (issue 11, DSL side): module map, ptx/smem/reg helpers and
the keyword forms of the documented wrappers, each with its exact PTX, its errors and ptxas."""
import importlib
import sys

import pytest

import pyptx
from pyptx import kernel, ptx, reg, smem
from pyptx.types import b32, bf16, f32, s32, u32, u64
from jax_pyptx.errors import PtxTypeError, PtxValueError, TraceError

from .helpers import assemble, line_of


def body(k, **kw):
    """Instruction, label and comment lines of the body (no declarations)."""
    text = k.ptx(**kw)
    inner = text[text.index("{\n") + 2:text.rindex("}")]
    return [" ".join(l.split()) for l in inner.splitlines()
            if l.strip() and not l.strip().startswith((".reg", ".shared"))]


# ----------------------------------------------------------------------------- module map
def test_module_map_imports_and_kernel_stays_the_decorator():
    from pyptx.kernel import Kernel  # noqa: F401  (the submodule, imported by path)
    import pyptx.kernel as m

    assert m is pyptx.kernel and callable(pyptx.kernel)
    for name, real in [("ptx", "jax_pyptx.dsl.ptx"), ("reg", "jax_pyptx.dsl.reg"),
                       ("smem", "jax_pyptx.dsl.smem"), ("specs", "jax_pyptx.compat.specs"),
                       ("types", "jax_pyptx.types"),
                       ("wgmma_layout", "jax_pyptx.dsl.wgmma_layout"),
                       ("parser", "jax_pyptx.text.parser"),
                       ("emitter", "jax_pyptx.text.printer")]:
        assert importlib.import_module("pyptx." + name) is sys.modules[real], name
    importlib.import_module("pyptx.intrinsic")
    assert callable(pyptx.intrinsic) and pyptx.intrinsic.__name__ == "intrinsic"
    from pyptx.specs import Layout, Tile  # noqa: F401
    from pyptx.types import f32 as f  # noqa: F401

    @pyptx.kernel
    def still_works():
        ptx.ret()

    assert body(still_works) == ["ret;"]


def test_intrinsic_markers_and_pass_through():
    @pyptx.intrinsic
    def twice(x, n=1):
        ptx.inst.add.u32(x, x, n)
        return x

    @pyptx.intrinsic
    def plain(x):
        return x + 1

    assert twice.__is_ptx_intrinsic__ and twice.__name__ == "twice"
    assert plain(3) == 4      # outside a trace it simply runs

    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(u32, 1)
        assert twice(a, n=1) is a
        ptx.ret()

    assert body(k) == ["mov.u32 %r0, 1;", "// BEGIN twice(%r0, n=1)", "add.u32 %r0, %r0, 1;",
                       "// END twice", "ret;"]
    assemble(k)


def test_special_registers_read_as_documented_registers():
    """``ptx.special.tid.x()`` is documented as ``Reg("%tid.x", u32)``: its ``name`` and
    ``dtype`` read without emitting code, so an intrinsic's marker names it."""
    @pyptx.intrinsic
    def shifted(x, n=1):
        return reg.from_(x, u32) + n

    @kernel(arch="sm_80")
    def k():
        t = ptx.special.tid.x()
        rank = ptx.sreg("%cluster_ctarank")
        assert (t.name, t.dtype, rank.name, rank.dtype) == ("%tid.x", u32,
                                                             "%cluster_ctarank", u32)
        shifted(t)
        ptx.ret()

    assert body(k) == ["// BEGIN shifted(%tid.x)", "mov.u32 %r0, %tid.x;",
                       "add.u32 %r1, %r0, 1;", "// END shifted", "ret;"]


@pytest.mark.parametrize("fn,kw,want", [
    ("layout_for_a", dict(m=64, k=16), ("B32", 16, 256, "32B", "32B")),
    ("layout_for_a", dict(m=64, k=64), ("B128", 16, 1024, "128B", "128B")),
    ("layout_for_a", dict(m=64, k=128), ("B128", 8192, 1024, "128B", "128B")),
    ("layout_for_b", dict(k=16, n=8), ("INTERLEAVE", 128, 16, "NONE", None)),
    ("layout_for_b", dict(k=16, n=64), ("B128", 16, 1024, "128B", "128B")),
    ("layout_for_b", dict(k=64, n=128), ("B128", 8192, 1024, "128B", "128B")),
])
def test_wgmma_layout_reference_values(fn, kw, want):
    from pyptx import wgmma_layout as wl

    lay = getattr(wl, fn)(dtype=bf16, **kw)
    assert (lay.layout_type.name, lay.leading_byte_offset, lay.stride_byte_offset,
            lay.tma_swizzle, lay.smem_swizzle) == want
    assert lay.swizzle_code == int(wl.LayoutType[want[0]])


def test_wgmma_layout_errors():
    from pyptx.wgmma_layout import pick_gmma_layout

    with pytest.raises(ValueError, match="K-major row of 12 x 2-byte elements is 24 bytes"):
        pick_gmma_layout(elem_bytes=2, m_or_n=64, k=12, major="K")
    with pytest.raises(ValueError, match="MN-major row of 24 x 2-byte elements is 48 bytes"):
        pick_gmma_layout(elem_bytes=2, m_or_n=24, k=16, major="MN")
    with pytest.raises(ValueError, match="m=12 must be a multiple of 8"):
        pick_gmma_layout(elem_bytes=2, m_or_n=12, k=64, major="K")
    with pytest.raises(ValueError, match="k=0 must be a positive int"):
        pick_gmma_layout(elem_bytes=2, m_or_n=64, k=0, major="K")


# ----------------------------------------------------------------------------- ptx helpers
def test_labels_loop_scope_sreg_fence():
    @kernel(arch="sm_90a")
    def k():
        ptx.label("top")
        with ptx.scope():
            t = reg.from_(ptx.sreg("%cluster_ctarank"), u32)
        ptx.fence.proxy_async_shared_cta()
        p = t < 3
        with ptx.loop("again", pred=p):
            t += 1
        with ptx.loop("spin"):
            ptx.bra("out", pred=p)
        ptx.label("out")
        ptx.bra("top", pred=p)
        ptx.ret()

    assert body(k) == [
        "top:", "{", "mov.u32 %r0, %cluster_ctarank;", "}", "fence.proxy.async.shared::cta;",
        "setp.lt.u32 %p0, %r0, 3;", "again:", "add.u32 %r0, %r0, 1;", "@%p0 bra again;",
        "spin:", "@%p0 bra out;", "bra.uni spin;", "out:", "@%p0 bra top;", "ret;"]
    assert assemble(k).spill_stores == 0


def test_label_object_placed_later_keeps_our_form():
    @kernel(arch="sm_80")
    def k():
        lbl = ptx.label("done")
        ptx.bra(lbl)
        ptx.place(lbl)
        ptx.ret()

    assert body(k) == ["bra $L_done_0;", "$L_done_0:", "ret;"]


def test_label_errors():
    @kernel(arch="sm_80")
    def bad():
        ptx.label("1st")  # bad label
        ptx.ret()

    with pytest.raises(TraceError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# bad label')}: ptx.label: '1st' is not a PTX "
                            f"label name (letters, digits, _ and $, not starting with a digit)")


def test_sreg_types():
    assert (ptx.sreg("clock64").type, ptx.sreg("%clusterid.x").type) == (u64, u32)
    assert ptx.sreg("%clusterid.x").ir.name == "%clusterid.x"


def test_global_ptrs_and_string_symbols():
    from jax_pyptx import Tile

    @kernel(arch="sm_80", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
             raw_params=[("q", u64)])
    def k(X, Y):
        px, py = ptx.global_ptrs(X, Y)
        (pq,) = ptx.global_ptrs("q")
        assert ptx.global_ptrs() == ()
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(px))
        ptx.inst.st.global_.f32(ptx.addr(py), v)
        ptx.inst.st.global_.f32(ptx.addr(pq), v)
        ptx.ret()

    lines = body(k)
    assert "ld.param.u64 %rd4, [q];" in lines and "cvta.to.global.u64 %rd5, %rd4;" in lines
    assert lines[-4:] == ["ld.global.f32 %f0, [%rd1];", "st.global.f32 [%rd3], %f0;",
                          "st.global.f32 [%rd5], %f0;", "ret;"]
    assemble(k)


def test_string_operand_must_name_a_declared_symbol():
    @kernel(arch="sm_80")
    def k():
        r = reg.scalar(u32)
        ptx.inst.mov.u32(r, "nowhere")  # undeclared
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# undeclared')}: operand 'nowhere' names no "
                            f"symbol kernel 'k' declares; declared: none")


def test_warp_reductions_in_place():
    @kernel(arch="sm_80", block=(32, 1, 1))
    def k():
        v = reg.scalar(f32, 1.0)
        ptx.warp.reduce_sum(v, width=4)
        i = reg.scalar(s32, 3)
        ptx.warp.reduce_max(i, width=2)
        ptx.ret()

    assert body(k) == [
        "mov.f32 %f0, 0f3F800000;",
        "shfl.sync.bfly.b32 %f1, %f0, 2, 31, 4294967295;", "add.f32 %f0, %f0, %f1;",
        "shfl.sync.bfly.b32 %f2, %f0, 1, 31, 4294967295;", "add.f32 %f0, %f0, %f2;",
        "mov.s32 %r0, 3;",
        "shfl.sync.bfly.b32 %r1, %r0, 1, 31, 4294967295;", "max.s32 %r0, %r0, %r1;", "ret;"]
    assemble(k)

    @kernel(arch="sm_80")
    def bad():
        h = reg.scalar(u64, 0)
        ptx.warp.reduce_sum(h)  # u64
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# u64')}: ptx.warp.reduce_sum: val must be a "
                            f"b32/u32/s32/f32/tf32 register, got u64")


def test_cp_async_cg_ca():
    @kernel(arch="sm_80")
    def k():
        s = smem.alloc(f32, (16,), align=16, name="s")
        g = reg.scalar(u64, 0)
        ptx.cp.async_.cg(ptx.addr(s), ptx.addr(g), 16)
        ptx.cp.async_.ca(s, g, 4)
        ptx.cp.async_.commit_group()
        ptx.cp.async_.wait_group(0)
        ptx.ret()

    assert body(k)[1:] == ["cp.async.cg.shared.global [s], [%rd0], 16;",
                           "cp.async.ca.shared.global [s], [%rd0], 4;",
                           "cp.async.commit_group;", "cp.async.wait_group 0;", "ret;"]
    assemble(k)


# ----------------------------------------------------------------------------- smem / reg
def test_smem_helpers():
    @kernel(arch="sm_90a")
    def k():
        a = smem.alloc(f32, (64,), "128B")
        b = smem.wgmma_tile(bf16, (64, 64), "K")
        assert (a.swizzle, a.align, b.swizzle, b.gmma_major, b.align) == (
            "128B", 1024, "128B", "K", 1024)
        assert b.gmma_layout.stride_byte_offset == 1024 and b.byte_offset == 1024
        v = smem.load(f32, a)
        smem.store(f32, ptx.addr(a, 4), v)
        x = reg.scalar(u32, 5)
        assert smem.apply_swizzle(x, None) is x
        smem.apply_swizzle(x, "64b")
        ptx.ret()

    assert body(k) == ["ld.shared.f32 %f0, [smem_0];", "st.shared.f32 [smem_0+4], %f0;",
                       "mov.u32 %r0, 5;", "and.b32 %r1, %r0, 384;", "shr.u32 %r1, %r1, 3;",
                       "xor.b32 %r2, %r0, %r1;", "ret;"]
    assemble(k)


def test_smem_base_makes_one_extern_window():
    @kernel(arch="sm_90a", smem=1024)
    def k():
        base = smem.base()
        buf = smem.alloc(u32, (4,), name="buf")
        v = smem.load(u32, ptx.addr(base, 16))
        smem.store(u32, buf, v)
        ptx.ret()

    t = k.ptx()
    assert ".extern .shared .align 128 .b8 dyn_smem[];" in t
    assert body(k) == ["mov.u32 %r0, dyn_smem;", "ld.shared.u32 %r1, [%r0+16];",
                       "st.shared.u32 [dyn_smem], %r1;", "ret;"]
    assemble(k)


def test_smem_errors():
    @kernel(arch="sm_80")
    def bad_swizzle():
        smem.alloc(f32, (4,), swizzle="16B")  # swz
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad_swizzle.ptx()
    assert str(e.value) == (f"{line_of(bad_swizzle.fn, '# swz')}: smem.alloc: swizzle='16B' "
                            f"is not allowed; allowed: None, 'NONE', '32B', '64B', '128B'")

    @kernel(arch="sm_80")
    def bad_mode():
        smem.apply_swizzle(reg.scalar(u32, 0), "256B")  # mode
        ptx.ret()

    with pytest.raises(PtxValueError, match=r"Unknown swizzle mode '256B'"):
        bad_mode.ptx()

    @kernel(arch="sm_90a")
    def bad_tile():
        smem.wgmma_tile(bf16, (64, 12))  # tile
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad_tile.ptx()
    assert str(e.value).startswith(f"{line_of(bad_tile.fn, '# tile')}: smem.wgmma_tile: "
                                   f"pick_gmma_layout: a K-major row of 12 x 2-byte")


def test_reg_alloc_named_and_fragments():
    @kernel(arch="sm_90a")
    def k():
        a, b = reg.alloc(f32), reg.alloc(u32)
        arr = reg.alloc_array(f32, 3)
        named = reg.scalar(u32, 7, name="cnt")
        acc = reg.array(f32, 2, "acc")
        frag = reg.wgmma_frag(m=64, n=16, dtype=f32)
        assert (a.name, b.name, arr[2].name, acc[1].name, len(frag)) == (
            "%af0", "%au0", "%afarr0_2", "acc1", 8)
        assert acc.regs() == list(acc) and acc.dtype is f32 and acc.count == 2
        ptx.inst.add.u32(named, "cnt", 1)
        ptx.inst.mov.f32(a, acc[0])
        acc[1] = a
        ptx.ret()

    t = k.ptx()
    for decl in (".reg .f32 \t%af0;", ".reg .u32 \t%au0;", ".reg .f32 \t%afarr0_<3>;",
                 ".reg .u32 \tcnt;", ".reg .f32 \tacc<2>;"):
        assert decl in t
    assert body(k) == ["mov.u32 cnt, 7;", "add.u32 cnt, cnt, 1;", "mov.f32 %af0, acc0;",
                       "mov.b32 acc1, %af0;", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a")
    def bad():
        reg.wgmma_frag(m=64, n=1, dtype=f32)  # frag
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# frag')}: invalid WGMMA fragment shape m=64 "
                            f"n=1: m*n must be a positive multiple of 128")


# ----------------------------------------------------------------------------- MMA families
def test_mma_sync_keyword_form():
    @kernel(arch="sm_80", block=(32, 1, 1))
    def k():
        a, b, c = reg.array(b32, 4), reg.array(b32, 2), reg.array(f32, 4, init=0.0)
        ptx.mma.sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16, dtype_c=f32,
                     d=c, a=a, b=list(b), c=c)
        ptx.ret()

    assert body(k)[4] == ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2,"
                          " %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3};")
    assemble(k)

    @kernel(arch="sm_80", block=(32, 1, 1))
    def bad():
        a, c = reg.array(b32, 4), reg.array(f32, 4)
        ptx.mma.sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,  # layout
                     dtype_c=f32, d=c, a=a, b=a, c=c, a_layout="diag")
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# layout')}: ptx.mma.sync: a_layout='diag' is "
                            f"not allowed; allowed: row, col")


def test_wgmma_keyword_form_and_descriptors():
    @kernel(arch="sm_90a", block=(128, 1, 1))
    def k():
        sA = smem.wgmma_tile(bf16, (64, 16), major="K")
        sB = smem.wgmma_tile(bf16, (16, 64), major="MN")
        acc = reg.wgmma_frag(m=64, n=64, dtype=f32)
        ptx.wgmma.fence()
        ptx.wgmma.mma_async(shape="m64n64k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                            d=acc, a=sA, b=sB, trans_b=1)
        base = reg.scalar(u32, 0)
        ptx.wgmma.auto_descriptor(base, dtype=bf16, shape=(64, 64), major="K")
        ptx.wgmma.masked_descriptor(base, byte_offset=64)
        ptx.wgmma.commit_group()
        ptx.wgmma.wait_group(0)
        ptx.ret()

    acc = ", ".join(f"%f{i}" for i in range(32))
    assert body(k) == [
        "wgmma.fence.sync.aligned;",
        "mov.u64 %rd0, smem_0;", "shr.u64 %rd1, %rd0, 4;", "and.b64 %rd1, %rd1, 16383;",
        f"or.b64 %rd1, %rd1, {3 << 62 | 16 << 32 | 1 << 16};",
        "mov.u64 %rd2, smem_1;", "shr.u64 %rd3, %rd2, 4;", "and.b64 %rd3, %rd3, 16383;",
        f"or.b64 %rd3, %rd3, {1 << 62 | 64 << 32 | 1 << 16};",
        f"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{acc}}}, %rd1, %rd3, 0, 1, "
        f"1, 0, 1;",
        "mov.u32 %r0, 0;", "cvt.u64.u32 %rd4, %r0;", "shr.u64 %rd5, %rd4, 4;",
        "and.b64 %rd5, %rd5, 16383;", f"or.b64 %rd5, %rd5, {1 << 62 | 64 << 32 | 1 << 16};",
        "add.u32 %r1, %r0, 64;", "and.b32 %r2, %r1, 262016;", "shr.u32 %r2, %r2, 4;",
        "cvt.u64.u32 %rd6, %r2;", "or.b64 %rd6, %rd6, 4611686293305360384;",
        "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a", block=(128, 1, 1))
    def bad():
        acc = reg.wgmma_frag(m=64, n=64, dtype=f32)
        d = reg.scalar(u64, 0)
        ptx.wgmma.mma_async(shape="m64n64k8", dtype_d=f32, dtype_a=bf16,  # K
                            dtype_b=bf16, d=acc, a=d, b=d)
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# K')}: ptx.wgmma.mma_async: "
                            f"shape='m64n64k8': K for bf16 is 16, got 8")


def test_tma_seed_spelling():
    from jax_pyptx import Tile

    @kernel(arch="sm_90a", block=(128, 1, 1), in_specs=(Tile(64, 64, bf16),))
    def k(A):
        sA = smem.alloc(bf16, (2, 64, 64), swizzle="128B")
        bar = smem.mbarrier(2)
        x = reg.scalar(u32, 0)
        ptx.mbarrier.init(bar[0], 1)
        ptx.cp.async_.bulk.tensor_2d(dst=sA[0], src=A.tma_desc(), coord=(x, 0), mbar=bar[0])
        ptx.cp.async_.bulk.tensor_2d.store(dst=A.tma_desc(), src=sA[1], coord=(x, x))
        ptx.ret()

    lines = body(k)
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "\
           "[smem_0], [%rd0, {%r0, 0}], [mbar_0];" in lines
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd0, {%r0, %r0}], "\
           "[smem_0+8192];" in lines
    assemble(k)

    @kernel(arch="sm_90a", in_specs=(Tile(64, 64, bf16),))
    def no_mbar(A):
        sA = smem.alloc(bf16, (64, 64))
        ptx.cp.async_.bulk.tensor_2d(dst=sA, src=A.tma_desc(), coord=(0, 0))  # no mbar
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        no_mbar.ptx()
    assert str(e.value) == (f"{line_of(no_mbar.fn, '# no mbar')}: "
                            f"ptx.cp.async_.bulk.tensor_2d: missing mbar; a tensor load "
                            f"completes on an mbarrier: tensor_2d(dst=smem, src=desc, "
                            f"coord=(...), mbar=bar)")


def test_tcgen05_helpers():
    from jax_pyptx.dsl.ptx import tcgen05 as t5

    assert t5.make_instr_desc_f16bf16_f32() == 138413200
    assert t5.make_instr_desc_f16bf16_f32(m=128, n=128) == 136316048
    with pytest.raises(PtxValueError, match=r"n=12 is not allowed; allowed: a multiple of 8"):
        t5.make_instr_desc_f16bf16_f32(n=12)

    @kernel(arch="sm_100a", block=(128, 1, 1))
    def k():
        slot = smem.alloc(u32, (1,), name="slot")
        bar = smem.mbarrier(1, name="bar")
        sA = smem.alloc(bf16, (128, 64), swizzle="128B", name="sa")
        ptx.tcgen05.alloc(slot, 128)
        taddr = smem.load(u32, slot)
        ad = ptx.tcgen05.descriptor(sA, stride_bytes=1024)
        bd = ptx.tcgen05.masked_descriptor(sA, byte_offset=32)
        idesc = reg.scalar(b32, ptx.tcgen05.make_instr_desc_f16bf16_f32(n=128))
        ptx.tcgen05.mma(taddr, ad, bd, idesc, scale_d=False)
        ptx.tcgen05.mma(taddr, ad, bd, idesc, scale_d=True, collector_a="fill")
        ptx.tcgen05.commit(bar[0], space="cluster")
        out = reg.array(b32, 4)
        ptx.tcgen05.ld(out, taddr, shape="32x32b", count=4, dtype="b32")
        ptx.tcgen05.wait_ld()
        ptx.tcgen05.st(taddr, out, shape="32x32b", count=4)
        ptx.tcgen05.wait_st()
        ptx.tcgen05.dealloc(taddr, 128)
        ptx.ret()

    assert body(k)[1:] == [
        "ld.shared.u32 %r0, [slot];",
        "mov.u32 %r1, sa;", "and.b32 %r2, %r1, 262128;", "shr.u32 %r2, %r2, 4;",
        "cvt.u64.u32 %rd0, %r2;", "or.b64 %rd0, %rd0, 4611756662049538048;",
        "mov.u32 %r3, sa;", "add.u32 %r4, %r3, 32;", "and.b32 %r5, %r4, 262128;",
        "shr.u32 %r5, %r5, 4;", "cvt.u64.u32 %rd1, %r5;",
        "or.b64 %rd1, %rd1, 4611756662049538048;", "mov.b32 %r6, 136316048;",
        "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd0, %rd1, %r6, 0;",
        "tcgen05.mma.cta_group::1.kind::f16.collector::a::fill [%r0], %rd0, %rd1, %r6, 1;",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];",
        "tcgen05.ld.sync.aligned.32x32b.x4.b32 {%r7, %r8, %r9, %r10}, [%r0];",
        "tcgen05.wait::ld.sync.aligned;",
        "tcgen05.st.sync.aligned.32x32b.x4.b32 [%r0], {%r7, %r8, %r9, %r10};",
        "tcgen05.wait::st.sync.aligned;", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r0, 128;",
        "ret;"]
    assemble(k)

    @kernel(arch="sm_100a", block=(128, 1, 1))
    def bad():
        out = reg.array(b32, 3)
        ptx.tcgen05.ld(out, reg.scalar(u32, 0), shape="32x32b", count=4)  # count
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# count')}: ptx.tcgen05.ld: shape 32x32b x4 "
                            f"loads 4 registers per thread; dst_regs has 3")
