"""The last gaps of the documented pyptx surface (pyptx_api.md), one test per item: a 2-d
element read ``alloc[row, col]`` is a value (section 4), ``extern_smem="name"`` and the
``dyn_smem`` window as symbols (2.4), the wgmma / mma.sync keyword forms (5.9, 5.10), the
bulk tensor forms (5.8), the tcgen05 forms (5.11), the names and defaults the spec states
(4, 3.2, 5.8); and the places where ours stays stricter than the spec, each with ptxas's
verdict on the text the spec would print (docs/porting.md lists them)."""
import numpy as np
import pytest

from pyptx import Tile, kernel, ptx, reg, smem
from pyptx.types import b32, b64, bf16, f32, u16, u32, u64
from jax_pyptx.errors import PtxTypeError, PtxValueError, ToolchainError
from jax_pyptx.toolchain import ptxas_check

from .helpers import assemble, line_of
from .pyptx_util import body, decls, header


# ----------------------------------------------------------------- 2-d element read (section 4)
def test_2d_element_read_loads_a_fresh_register_usable_as_any_operand():
    @kernel(arch="sm_90a", block=(128, 1, 1))
    def k():
        partials = smem.alloc(f32, (4, 1))
        stats = smem.alloc(f32, (1, 2))
        acc = reg.scalar(f32, 0.0)
        for i in range(4):
            ptx.inst.add.f32(acc, acc, partials[i, 0])
        x = reg.scalar(f32)
        ptx.inst.mov.f32(x, stats[0, 1])
        w = reg.from_(ptx.special.tid.x(), u32) >> 5
        y = reg.scalar(f32)
        ptx.inst.mov.f32(y, partials[w, 0])          # a register row
        old = stats[0, 0]                            # read where written, before the store
        stats[0, 0] = acc
        ptx.inst.add.f32(y, y, old)
        ptx.inst.st.shared.f32(partials[3][0], y)    # the element's address: buf[i][j]
        ptx.ret()

    assert body(k) == [
        "mov.f32 %f0, 0f00000000;",
        "ld.shared.f32 %f1, [smem_0];", "add.f32 %f0, %f0, %f1;",
        "ld.shared.f32 %f2, [smem_0+4];", "add.f32 %f0, %f0, %f2;",
        "ld.shared.f32 %f3, [smem_0+8];", "add.f32 %f0, %f0, %f3;",
        "ld.shared.f32 %f4, [smem_0+12];", "add.f32 %f0, %f0, %f4;",
        "ld.shared.f32 %f6, [smem_1+4];", "mov.f32 %f5, %f6;",
        "mov.u32 %r0, %tid.x;", "shr.u32 %r1, %r0, 5;",
        # section 4: index I, then mul.lo T = row * cols, add I = T + col, shl by log2(4)
        "mul.lo.u32 %r3, %r1, 1;", "add.u32 %r2, %r3, 0;", "shl.b32 %r4, %r2, 2;",
        "mov.b32 %r5, smem_0;", "add.u32 %r5, %r5, %r4;", "ld.shared.f32 %f8, [%r5];",
        "mov.f32 %f7, %f8;",
        "ld.shared.f32 %f9, [smem_1];", "st.shared.f32 [smem_1], %f0;",
        "add.f32 %f7, %f7, %f9;", "st.shared.f32 [smem_0+12], %f7;", "ret;"]
    assemble(k)


def test_2d_element_read_index_errors():
    @kernel(arch="sm_90a")
    def k():
        s = smem.alloc(f32, (2, 4))
        ptx.inst.mov.f32(reg.scalar(f32), s[2, 0])  # row out of range
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert "smem_0: index 2 out of range for dimension 0 of size 2" in str(e.value)

    @kernel(arch="sm_90a")
    def k2():
        s = smem.alloc(f32, (2, 4))
        ptx.inst.mov.f32(reg.scalar(f32), s[reg.scalar(u64, 0), 0])  # 64-bit index
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        k2.ptx()
    assert str(e.value) == (f"{line_of(k2.fn, '# 64-bit index')}: smem_0[row, col]: indices "
                            f"must be ints or 32-bit integer registers, got Reg(%rd0, u64)")


# ------------------------------------------------------------- extern_smem="name" (section 2.4)
@kernel(arch="sm_90a", block=(32, 1, 1), extern_smem="smem", smem=1024,
        out_specs=(Tile(32, u32),))
def extern_roundtrip(out):
    """Each thread stores its id at smem + 4*tid through three spellings of the window's
    address, then reads its mirror's slot."""
    base = reg.scalar(u32)
    ptx.inst.mov.u32(base, "smem")
    b2 = reg.from_("smem", u32)
    b3 = smem.base()
    tid = reg.from_(ptx.special.tid.x(), u32)
    ptx.inst.st.shared.u32(ptx.addr(base + (tid << 2)), tid)
    ptx.bar.sync(0)
    v = reg.scalar(u32)
    ptx.inst.ld.shared.u32(v, ptx.addr(b2 + ((tid ^ 31) << 2)))     # the mirror: 31 - tid
    w = reg.scalar(u32)
    ptx.inst.ld.shared.u32(w, ptx.addr(b3 + (tid << 2)))              # its own: tid
    ptx.inst.add.u32(v, v, w)                                         # 31
    (po,) = ptx.global_ptrs(out)
    ptx.inst.st.global_.u32(ptx.addr(po + (tid << 2)), v)
    ptx.ret()


def test_extern_smem_name_is_a_symbol_the_body_may_use():
    head = header(extern_roundtrip)
    assert ".address_size 64\n\n.extern .shared .align 128 .b8 smem[];\n\n.visible .entry" in head
    lines = body(extern_roundtrip)
    assert lines[:5] == ["ld.param.u64 %rd0, [out];", "cvta.to.global.u64 %rd1, %rd0;",
                         "mov.u32 %r0, smem;", "mov.u32 %r1, smem;", "mov.u32 %r2, smem;"]
    rep = assemble(extern_roundtrip)
    assert (rep.spill_stores, rep.spill_loads) == (0, 0)
    out = extern_roundtrip.interpret()
    np.testing.assert_array_equal(out, np.full(32, 31, np.uint32))


def test_dyn_smem_symbol_in_dynamic_mode():
    @kernel(arch="sm_90a", smem=64 * 1024)
    def k():
        buf = smem.alloc(f32, (16,))
        b = reg.from_("dyn_smem", u32)
        ptx.inst.st.shared.f32(buf[2], reg.scalar(f32, 1.0))
        ptx.inst.st.shared.u32(ptx.addr(b, 64), b)
        ptx.ret()

    assert ".extern .shared .align 128 .b8 dyn_smem[];" in header(k)
    assert body(k) == ["mov.u32 %r0, dyn_smem;", "mov.f32 %f0, 0f3F800000;",
                       "st.shared.f32 [dyn_smem+8], %f0;", "st.shared.u32 [%r0+64], %r0;",
                       "ret;"]
    assemble(k)

    @kernel(arch="sm_90a")                       # small: naming the window makes one anyway
    def small():
        buf = smem.alloc(u32, (4,))
        ptx.inst.st.shared.u32(buf[1], reg.from_("dyn_smem", u32))
        ptx.ret()

    assert ".extern .shared .align 128 .b8 dyn_smem[];" in header(small)
    assert body(small) == ["mov.u32 %r0, dyn_smem;", "st.shared.u32 [dyn_smem+4], %r0;",
                           "ret;"]
    assert small.trace().dynamic_smem == 16
    assemble(small)

    @kernel(arch="sm_90a", extern_smem="smem")
    def other():
        reg.from_("global_smem", u32)  # not this kernel's window
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        other.ptx()
    assert str(e.value) == (f"{line_of(other.fn, '# not this')}: operand 'global_smem' names "
                            f"no symbol kernel 'other' declares; declared: none")


# ------------------------------------------------------- keyword forms (sections 5.9, 5.10)
def test_wgmma_mma_async_keyword_form_every_keyword():
    @kernel(arch="sm_90a", block=(128, 1, 1))
    def k():
        sA = smem.wgmma_tile(bf16, (64, 32), major="K")
        sB = smem.wgmma_tile(bf16, (32, 16), major="MN")
        acc = reg.wgmma_frag(m=64, n=16, dtype=f32)
        da, db = reg.scalar(b64), reg.scalar(b64)
        on = reg.scalar(u32, 1)
        ptx.wgmma.fence()
        ptx.wgmma.mma_async(shape="m64n16k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                            d=acc, a=sA, b=sB, scale_d=False, trans_a=0, trans_b=1,
                            a_k_offset=32, b_k_offset=512)
        ptx.wgmma.mma_async(shape="m64n16k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                            d=list(acc), a=da, b=db, scale_d=on, scale_a=-1, scale_b=1,
                            trans_a=1, trans_b=0)
        ptx.wgmma.commit_group()
        ptx.wgmma.wait_group(0)
        ptx.ret()

    acc = "{%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}"
    lines = body(k)
    assert lines[1:10] == [
        "wgmma.fence.sync.aligned;",
        "mov.u64 %rd2, smem_0;", "add.s64 %rd3, %rd2, 32;", "shr.u64 %rd4, %rd3, 4;",
        # A: K-major rows of 64 bytes, the 64B swizzle (code 2), LBO 16, SBO 512
        "and.b64 %rd4, %rd4, 16383;", f"or.b64 %rd4, %rd4, {2 << 62 | 32 << 32 | 1 << 16};",
        "mov.u64 %rd5, smem_1;", "add.s64 %rd6, %rd5, 512;", "shr.u64 %rd7, %rd6, 4;"]
    assert lines[12:] == [
        f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {acc}, %rd4, %rd7, 0, 1, 1, 0, "
        f"1;",
        "setp.ne.b32 %p0, %r0, 0;",
        f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {acc}, %rd0, %rd1, %p0, -1, 1, "
        f"1, 0;",
        "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;", "ret;"]
    assemble(k)


def test_mma_sync_keyword_form():
    @kernel(arch="sm_80", block=(32, 1, 1))
    def k():
        d = reg.array(f32, 4)
        a = [reg.scalar(b32) for _ in range(4)]
        b = reg.array(b32, 2)
        ptx.mma.sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                     dtype_c=f32, d=d, a=a, b=b, c=d, a_layout="row", b_layout="col")
        ptx.mma.sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                     dtype_c=f32, d=d, a=a, b=b, c=d)
        ptx.ret()

    text = ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, "
            "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3};")
    assert body(k) == [text, text, "ret;"]
    assemble(k)


# --------------------------------------------------------- bulk tensor forms (section 5.8)
def test_bulk_tensor_gather4_im2col_scatter4_forms():
    T = ptx.cp.async_.bulk.tensor

    @kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1),
            in_specs=(Tile(64, 64, bf16),), out_specs=(Tile(64, 64, bf16),))
    def k(A, B):
        s = smem.alloc(bf16, (64, 64))
        bar = smem.mbarrier(1)
        r = [reg.scalar(u32, 0) for _ in range(5)]
        o = [reg.scalar(u16, 0) for _ in range(3)]
        m, h = reg.scalar(u16, 3), reg.scalar(u64, 0)
        a, b = A.tma_desc(), B.tma_desc()
        T.gather4_2d(s, a, tuple(r), mbar=bar[0])                  # column, then 4 rows
        T.gather4_2d(s, a, tuple(r), mbar=bar[0], multicast_mask=m, cache_hint=h)
        T.im2col_3d(s, a, r[:3], o[:1], mbar=bar[0])
        T.im2col_4d(s, a, r[:4], offsets=o[:2], mbar=bar[0])
        T.im2col_5d(s, a, r[:5], im2col_offsets=o[:3], mbar=bar[0], multicast_mask=m)
        T.tile_1d(s, a, r[:1], mbar=bar[0])
        T.store_2d(b, s, r[:2], cache_hint=h)
        T.scatter4_2d(b, s, tuple(r), mbar=None)
        ptx.ret()

    L = "cp.async.bulk.tensor.{}d.shared::cluster.global.mbarrier::complete_tx::bytes"
    r5 = "{%r0, %r1, %r2, %r3, %r4}"
    assert body(k)[12:] == [
        f"{L.format(2)}.tile::gather4 [smem_0], [%rd1, {r5}], [mbar_0];",
        f"{L.format(2)}.tile::gather4.multicast::cluster.L2::cache_hint [smem_0], "
        f"[%rd1, {r5}], [mbar_0], %rs3, %rd0;",
        f"{L.format(3)}.im2col [smem_0], [%rd1, {{%r0, %r1, %r2}}], [mbar_0], {{%rs0}};",
        f"{L.format(4)}.im2col [smem_0], [%rd1, {{%r0, %r1, %r2, %r3}}], [mbar_0], "
        f"{{%rs0, %rs1}};",
        f"{L.format(5)}.im2col.multicast::cluster [smem_0], [%rd1, {r5}], [mbar_0], "
        f"{{%rs0, %rs1, %rs2}}, %rs3;",
        f"{L.format(1)} [smem_0], [%rd1, {{%r0}}], [mbar_0];",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint "
        "[%rd2, {%r0, %r1}], [smem_0], %rd0;",
        f"cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [%rd2, {r5}], "
        f"[smem_0];",
        "ret;"]
    assemble(k)


BULK_ERRORS = [
    (lambda T, s, a, bar, r: T.gather4_2d(s, a, (r, r), mbar=bar[0]),
     "ptx.cp.async_.bulk.tensor.gather4_2d: coords must have 5 entries (column, row0..row3) "
     "for tile::gather4, got 2",
     "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
     ".tile::gather4 [s], [%rd0, {%r0, %r0}], [bar];",
     "Argument vector size mismatch"),
    (lambda T, s, a, bar, r: T.im2col_3d(s, a, (r, r, r), mbar=bar[0]),
     "ptx.cp.async_.bulk.tensor.im2col_3d: im2col needs 1 u16 offsets (offsets=(...)), got "
     "none; without them ptxas rejects the instruction (\"Arguments mismatch\")",
     "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.im2col "
     "[s], [%rd0, {%r0, %r0, %r0}], [bar];",
     "Arguments mismatch"),
    (lambda T, s, a, bar, r: T.scatter4_2d(a, s, (r,) * 5, mbar=bar[0]),
     "ptx.cp.async_.bulk.tensor.scatter4_2d: mbar=MbarrierRef(mbar_0[0]): a tensor store "
     "completes through the bulk group (cp.async.bulk.commit_group / wait_group), not on an "
     "mbarrier; ptxas rejects the mbarrier operand (\"Arguments mismatch\")",
     "cp.async.bulk.tensor.2d.global.shared::cta.scatter4 [%rd0], "
     "[s, {%r0, %r0, %r0, %r0, %r0}], [bar];",
     "Unknown modifier '.scatter4'"),
    (lambda T, s, a, bar, r: T.tile_2d(s, a, (r, r)),
     "ptx.cp.async_.bulk.tensor.tile_2d: mbar is required: a tensor load completes on an "
     "mbarrier (without one ptxas rejects the instruction: \"Arguments mismatch\")",
     "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
     "[s], [%rd0, {%r0, %r0}];",
     "Arguments mismatch"),
]


def _module(arch, line, decl=".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .b16 %rs<2>;"):
    ver = "8.8" if arch == "sm_100a" else "8.5"
    return (f".version {ver}\n.target {arch}\n.address_size 64\n\n.visible .entry k()\n{{\n"
            f"{decl}\n.reg .f32 %f<8>;\n.shared .align 1024 .b8 s[8192];\n"
            f".shared .align 8 .b64 bar[1];\nmov.u32 %r0, 0;\nmov.u64 %rd0, 0;\n"
            f"mov.u16 %rs0, 3;\n{line}\nret;\n}}\n")


@pytest.mark.parametrize("call,msg,spec_text,verdict", BULK_ERRORS,
                         ids=["gather4_2_coords", "im2col_no_offsets", "scatter4_mbar",
                              "load_no_mbar"])
def test_bulk_tensor_forms_ptxas_rejects_are_errors(call, msg, spec_text, verdict):
    @kernel(arch="sm_100a", in_specs=(Tile(64, 64, bf16),))
    def k(A):
        s = smem.alloc(bf16, (64, 64))
        bar = smem.mbarrier(1)
        call(ptx.cp.async_.bulk.tensor, s, A.tma_desc(), bar, reg.scalar(u32, 0))  # call
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value) == f"{__file__}:{call.__code__.co_firstlineno}: {msg}"
    with pytest.raises(ToolchainError) as e:               # what the spec's text would be
        ptxas_check(_module("sm_100a", spec_text), "sm_100a")
    assert verdict in str(e.value)


# --------------------------------------------------------------- tcgen05 forms (section 5.11)
def test_tcgen05_commit_multicast_and_cp_shape_suffixes():
    @kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1))
    def k():
        bar = smem.mbarrier(1)
        t, m = reg.scalar(u32, 0), reg.scalar(u16, 1)
        d = reg.scalar(u64, 0)
        ptx.tcgen05.commit(bar[0])                                 # space="cluster" default
        ptx.tcgen05.commit(bar[0], multicast=True)                 # every CTA of the cluster
        ptx.tcgen05.commit(bar[0], multicast=True, multicast_mask=m)
        ptx.tcgen05.commit(bar[0], multicast_mask=m)               # the mask implies it
        ptx.tcgen05.cp(t, d, size="64x128b.warpx2::02_13")
        ptx.tcgen05.cp(t, d, size="64x128b.warpx2::01_23")
        ptx.tcgen05.cp(t, d, size="32x128b.warpx4")
        ptx.tcgen05.cp(t, d)
        ptx.ret()

    C = "tcgen05.commit.cta_group::1.mbarrier::arrive::one"
    assert body(k)[3:] == [
        f"{C}.shared::cluster.b64 [mbar_0];",
        "mov.u16 %rs1, 3;", f"{C}.multicast::cluster.shared::cluster.b64 [mbar_0], %rs1;",
        f"{C}.multicast::cluster.shared::cluster.b64 [mbar_0], %rs0;",
        f"{C}.multicast::cluster.shared::cluster.b64 [mbar_0], %rs0;",
        "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r0], %rd0;",
        "tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [%r0], %rd0;",
        "tcgen05.cp.cta_group::1.32x128b.warpx4 [%r0], %rd0;",
        "tcgen05.cp.cta_group::1.128x256b [%r0], %rd0;", "ret;"]
    assemble(k)

    @kernel(arch="sm_100a", cluster=(4, 1, 1))
    def four():
        ptx.tcgen05.commit(smem.mbarrier(1)[0], multicast=True, cta_group=2)
        ptx.ret()

    assert body(four) == ["mov.u16 %rs0, 15;", f"{C.replace('::1', '::2')}.multicast::cluster"
                          f".shared::cluster.b64 [mbar_0], %rs0;", "ret;"]
    assemble(four)


# ------------------------------------------------ names and defaults (sections 3.2, 4, 5.8)
def test_static_names_alignment_and_symbols_by_name():
    @kernel(arch="sm_90a", block=(32, 1, 1))
    def k():
        a = smem.alloc(f32, (8, 4))
        bars = smem.mbarrier(2)
        b = smem.alloc(bf16, (64,), align=256)
        bars2 = smem.mbarrier(1)
        assert (a.name, bars.name, b.name, bars2.name) == ("smem_0", "mbar_0", "smem_1",
                                                            "mbar_1")
        p = reg.from_("smem_0", u32)                 # code that names the symbol
        ptx.mbarrier.init("mbar_1", 1)
        ptx.inst.st.shared.u32(ptx.addr(p, 4), p)
        h = reg.scalar(bf16)
        ptx.inst.cvt.rn.bf16.f32(h, reg.scalar(f32, 1.0))
        ptx.ret()

    assert decls(k) == [".reg .b16 %h<1>;", ".reg .b32 %r<1>;", ".reg .f32 %f<1>;",
                        ".shared .align 128 .b8 smem_0[128];",
                        ".shared .align 8 .b64 mbar_0[2];",
                        ".shared .align 256 .b8 smem_1[128];",
                        ".shared .align 8 .b64 mbar_1[1];"]
    assert body(k) == ["mov.u32 %r0, smem_0;", "mbarrier.init.shared::cta.b64 [mbar_1], 1;",
                       "st.shared.u32 [%r0+4], %r0;", "mov.f32 %f0, 0f3F800000;",
                       "cvt.rn.bf16.f32 %h0, %f0;", "ret;"]
    assemble(k)
    # the spec declares bf16 registers as .bf16; no ptxas takes that type for a register
    with pytest.raises(ToolchainError) as e:
        ptxas_check(_module("sm_90a", "ret;", ".reg .bf16 %h<1>;"), "sm_90a")
    assert "Parsing error near '.bf16': syntax error" in str(e.value)


def test_tma_wrapper_text_as_documented():
    @kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1),
            in_specs=(Tile(128, 128, bf16),), out_specs=(Tile(128, 128, bf16),))
    def k(A, C):
        sA = smem.alloc(bf16, (2, 64, 64))
        bar = smem.mbarrier(2)
        x, y = reg.scalar(u32, 0), reg.scalar(u32, 64)
        m = reg.scalar(u16, 3)
        ptx.cp.async_.bulk.tensor_2d(dst=sA[0], src=A.tma_desc(), coord=(x, y), mbar=bar[0])
        ptx.cp.async_.bulk.tensor_2d(dst=sA[1], src=A.tma_desc(), coord=(64, y), mbar=bar[1],
                                     multicast_mask=m)
        ptx.cp.async_.bulk.tensor_2d.store(dst=C.tma_desc(), src=sA[1], coord=(x, y))
        ptx.tma.load_3d(sA[0], A.tma_desc(), row=y, col=64, mbar=bar[0])
        ptx.tma.load_3d_multicast(sA[0], A.tma_desc(), row=y, col=x, mbar=bar[0], mask=m,
                                  issuer=0)
        ptx.tma.store_3d(C.tma_desc(), sA[0], row=y, col=0)
        ptx.ret()

    L = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    L3 = "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
    assert body(k)[5:] == [
        f"{L} [smem_0], [%rd0, {{%r0, %r1}}], [mbar_0];",
        f"{L}.multicast::cluster [smem_0+8192], [%rd0, {{64, %r1}}], [mbar_0+8], %rs0;",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r0, %r1}], "
        "[smem_0+8192];",
        f"{L3} [smem_0], [%rd0, {{0, %r1, 1}}], [mbar_0];",
        "mov.u32 %r2, %cluster_ctarank;", "setp.eq.u32 %p0, %r2, 0;", "shr.u32 %r3, %r0, 6;",
        f"@%p0 {L3}.multicast::cluster [smem_0], [%rd0, {{0, %r1, %r3}}], [mbar_0], %rs0;",
        "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd1, {0, %r1, 0}], "
        "[smem_0];",
        "ret;"]
    assemble(k)


# ---------------------------------------------- where ours stays stricter (docs/porting.md)
STRICTER = [
    ("sm_100a",
     lambda: ptx.tcgen05.ld([reg.scalar(b32)], reg.scalar(u32, 0), shape="32x32b", count=2),
     PtxValueError,
     "ptx.tcgen05.ld: shape 32x32b x2 loads 2 registers per thread; dst_regs has 1",
     "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1}, [%r0];",
     "Argument 0 of instruction 'tcgen05.ld': Argument vector size mismatch"),
    ("sm_100a",
     lambda: ptx.tcgen05.st(reg.scalar(u32, 0), [reg.scalar(b32)] * 2, shape="32x32b",
                            count=4),
     PtxValueError,
     "ptx.tcgen05.st: shape 32x32b x4 stores 4 registers per thread; src_regs has 2",
     "tcgen05.st.sync.aligned.32x32b.x4.b32 [%r0], {%r1, %r1};",
     "Argument 1 of instruction 'tcgen05.st': Argument vector size mismatch"),
    ("sm_100a",
     lambda: ptx.tcgen05.ld([reg.scalar(b32)], reg.scalar(u64, 0), shape="32x32b", count=1),
     PtxTypeError,
     "ptx.tcgen05.ld: taddr %rd0 is u64; a tensor-memory address is a 32-bit register "
     "(ptxas rejects a 64-bit one)",
     "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1}, [%rd0];",
     "Illegal to use symbol '%rd0' of type .b64 as address operand. Use a 32-bit integer or "
     "bit register only."),
    ("sm_100a", lambda: ptx.tcgen05.dealloc(reg.scalar(u64, 0), 32), PtxTypeError,
     "tcgen05.dealloc.cta_group::1.sync.aligned.b32 operand 1: register %rd0 has type u64; "
     "expected any 32-bit register (instruction type .b32)",
     "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %rd0, 32;",
     "Arguments mismatch for instruction 'tcgen05.dealloc'"),
    ("sm_90a", lambda: ptx.inst.add.u32(reg.scalar(u32), reg.scalar(u64, 0), 1), PtxTypeError,
     "add.u32 operand 2: register %rd0 has type u64; expected s32/u32/b32 (instruction type "
     ".u32)",
     "add.u32 %r0, %rd0, 1;",
     "Arguments mismatch for instruction 'add'"),
    ("sm_90a",
     lambda: ptx.wgmma.mma_async(shape="m64n16k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                                 d=reg.array(f32, 4), a=reg.scalar(b64), b=reg.scalar(b64)),
     PtxTypeError,
     "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 operand 1: expected a vector of 8 "
     "registers, got 4",
     "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd0, %rd1, "
     "0, 1, 1, 0, 0;",
     "Argument vector size mismatch for instruction 'wgmma.mma_async"),
]


@pytest.mark.parametrize("arch,call,exc,msg,spec_text,verdict", STRICTER,
                         ids=["tcgen05_ld_count", "tcgen05_st_count", "tcgen05_ld_64bit_taddr",
                              "tcgen05_dealloc_64bit", "add_u32_64bit",
                              "wgmma_too_few_accumulators"])
def test_stricter_than_the_spec_and_ptxas_agrees(arch, call, exc, msg, spec_text, verdict):
    @kernel(arch=arch, block=(128, 1, 1))
    def k():
        call()  # the call
        ptx.ret()

    with pytest.raises(exc) as e:
        k.ptx()
    assert str(e.value) == f"{__file__}:{call.__code__.co_firstlineno}: {msg}"
    with pytest.raises(ToolchainError) as e:
        ptxas_check(_module(arch, spec_text), arch)
    assert verdict in str(e.value)
