"""The documented pyptx surface, sections 5.9-5.11: wgmma descriptors and the keyword
``mma_async``, Ampere ``mma.sync`` / ``ldmatrix`` / ``stmatrix`` keyword forms and the
bf16 transposed-store helper, and the tcgen05 helpers."""
import pytest

from pyptx import kernel, ptx, reg, smem
from pyptx.types import b32, bf16, f32, pred, u16, u32, u64
from jax_pyptx.errors import PtxValueError

from .helpers import assemble, line_of
from .pyptx_util import body

W = ptx.wgmma


def test_wgmma_constants():
    assert (W.SWIZZLE_NONE, W.SWIZZLE_128B, W.SWIZZLE_64B, W.SWIZZLE_32B) == (0, 1, 2, 3)
    assert W.MASKED_DESC_B128 == 0x4000004000010000
    assert ptx.tcgen05.BLACKWELL_MASKED_DESC_B128 == 0x4000404000010000


def test_make_auto_masked_descriptors():
    @kernel(arch="sm_90a")
    def k():
        s = smem.alloc(bf16, (64, 64), swizzle="128B", name="s")
        a32 = reg.scalar(u32, 0)
        a64 = reg.scalar(u64, 0)
        W.make_descriptor(a32, leading_byte_offset=16, stride_byte_offset=1024, swizzle=1)
        W.make_descriptor(a64, leading_byte_offset=16, stride_byte_offset=1024,
                          base_offset=3, addr_byte_offset=32)
        W.make_descriptor(s, leading_byte_offset=16, stride_byte_offset=512, swizzle=2)
        W.auto_descriptor(a32, dtype=bf16, shape=(16, 64), major="MN")
        W.auto_descriptor(a32, dtype=bf16, shape=(64, 16), major=0)
        W.masked_descriptor(s, byte_offset=0, mask=0x3FFF0, const_bits=7)
        ptx.ret()



    assert body(k)[2:] == [
        "cvt.u64.u32 %rd1, %r0;", "shr.u64 %rd2, %rd1, 4;", "and.b64 %rd2, %rd2, 16383;",
        f"or.b64 %rd2, %rd2, {1 << 62 | 64 << 32 | 1 << 16};",
        "add.s64 %rd3, %rd0, 32;", "shr.u64 %rd4, %rd3, 4;", "and.b64 %rd4, %rd4, 16383;",
        f"or.b64 %rd4, %rd4, {3 << 49 | 64 << 32 | 1 << 16};",
        "mov.u64 %rd5, s;", "shr.u64 %rd6, %rd5, 4;", "and.b64 %rd6, %rd6, 16383;",
        f"or.b64 %rd6, %rd6, {2 << 62 | 32 << 32 | 1 << 16};",
        "cvt.u64.u32 %rd7, %r0;", "shr.u64 %rd8, %rd7, 4;", "and.b64 %rd8, %rd8, 16383;",
        f"or.b64 %rd8, %rd8, {1 << 62 | 64 << 32 | 1 << 16};",          # MN-major B128
        "cvt.u64.u32 %rd9, %r0;", "shr.u64 %rd10, %rd9, 4;", "and.b64 %rd10, %rd10, 16383;",
        f"or.b64 %rd10, %rd10, {3 << 62 | 16 << 32 | 1 << 16};",        # K-major B32
        "mov.u32 %r1, s;", "and.b32 %r2, %r1, 262128;", "shr.u32 %r2, %r2, 4;",
        "cvt.u64.u32 %rd11, %r2;", "or.b64 %rd11, %rd11, 7;", "ret;"]
    assemble(k)


@pytest.mark.parametrize("kw,msg", [
    (dict(swizzle=4), "ptx.wgmma.make_descriptor: swizzle=4 is not allowed; allowed: 0..3"),
    (dict(base_offset=8), "ptx.wgmma.make_descriptor: base_offset=8 is not allowed; allowed: "
                          "0..7"),
])
def test_make_descriptor_errors(kw, msg):
    @kernel(arch="sm_90a")
    def k():
        W.make_descriptor(reg.scalar(u32, 0), leading_byte_offset=16,  # desc
                          stride_byte_offset=1024, **kw)
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value) == f"{line_of(k.fn, '# desc')}: {msg}"


def test_wgmma_keyword_form_with_stage_views_registers_and_predicates():
    @kernel(arch="sm_90a", block=(128, 1, 1))
    def k():
        sA = smem.wgmma_tile(bf16, (2, 64, 16), major="K")
        sB = smem.wgmma_tile(bf16, (2, 16, 64), major="MN")
        acc = reg.wgmma_frag(m=64, n=64, dtype=f32)
        ptx.wgmma.fence()
        flag = reg.scalar(pred)
        ptx.inst.setp.ne.u32(flag, reg.scalar(u32, 1), 0)
        ptx.wgmma.mma_async(shape="m64n64k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                            d=acc, a=sA[1], b=sB[1], scale_d=flag, trans_b=1)
        afrag = reg.array(b32, 4)
        bdesc = reg.scalar(u64, 0)
        ptx.wgmma.mma_async(shape=(64, 64, 16), dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                            d=list(acc), a=afrag, b=bdesc, scale_d=True, scale_a=-1)
        ptx.wgmma.commit_group()
        ptx.wgmma.wait_group(1)
        ptx.ret()

    acc = ", ".join(f"%f{i}" for i in range(32))
    lines = body(k)
    assert "mov.u64 %rd0, smem_0+2048;" in lines and "mov.u64 %rd2, smem_1+2048;" in lines
    assert (f"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{acc}}}, %rd1, %rd3, %p0,"
            f" 1, 1, 0, 1;") in lines
    assert (f"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{acc}}}, {{%r1, %r2, %r3, "
            f"%r4}}, %rd4, 1, -1, 1, 0;") in lines
    assert lines[-3:] == ["wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 1;",
                          "ret;"]
    assemble(k)


def test_ldmatrix_stmatrix_keyword_forms():
    @kernel(arch="sm_90a", block=(32, 1, 1))
    def k():
        s = smem.alloc(bf16, (16, 16))
        a = reg.array(b32, 4)
        ptx.ldmatrix(dst=a, src=ptx.addr(s), layout="x4")
        ptx.ldmatrix(dst=a[:2], src=s, layout="m8n8.x2", trans=True)
        ptx.stmatrix(smem=ptx.addr(s), regs=a, layout="x4.trans")
        ptx.stmatrix(smem=s, regs=list(a)[:1], layout="x1")
        ptx.ret()

    assert body(k) == [
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [smem_0];",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r0, %r1}, [smem_0];",
        "stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 [smem_0], {%r0, %r1, %r2, %r3};",
        "stmatrix.sync.aligned.m8n8.x1.shared::cta.b16 [smem_0], {%r0};", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a")
    def bad():
        ptx.ldmatrix(dst=reg.array(b32, 4), src=smem.alloc(bf16, 64), layout="x3")  # layout
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# layout')}: ptx.ldmatrix: layout='x3' is not "
                            f"allowed; expected 'x1', 'x2' or 'x4', optionally after a shape "
                            f"('m8n8.x4') and before 'trans'")


def test_stmatrix_x4_trans_f32_bf16():
    @kernel(arch="sm_90a", block=(128, 1, 1))
    def k():
        s = smem.alloc(bf16, (64, 64))
        base = smem.base(s.name)
        lane = reg.from_(ptx.special.tid.x(), u32)
        frag = reg.array(f32, 8)
        ptx.stmatrix_x4_trans_f32_bf16(frag=frag, smem_base=base, lane=lane, row_stride=64)
        ptx.ret()

    lines = body(k)
    assert lines[2:12] == [
        "and.b32 %r6, %r1, 31;", "shr.u32 %r7, %r1, 5;", "mad.lo.s32 %r8, %r7, 16, 0;",
        "and.b32 %r9, %r6, 7;", "mad.lo.s32 %r8, %r9, 64, %r8;", "shr.u32 %r10, %r6, 4;",
        "mad.lo.s32 %r8, %r10, 512, %r8;", "and.b32 %r11, %r6, 8;", "add.s32 %r8, %r8, %r11;",
        "shl.b32 %r12, %r8, 1;"]
    assert lines[13:21] == [f"cvt.rn.bf16.f32 %rs{i}, %f{i};" for i in range(8)]
    assert lines[21:] == [
        "mov.b32 %r2, {%rs0, %rs1};", "mov.b32 %r3, {%rs2, %rs3};", "mov.b32 %r4, {%rs4, %rs5};",
        "mov.b32 %r5, {%rs6, %rs7};", "add.u32 %r14, %r13, 0;",
        "stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 [%r14], {%r2, %r3, %r4, %r5};",
        "ret;"]
    assert (lines[12]) == "add.u32 %r13, %r0, %r12;"
    assemble(k)

    @kernel(arch="sm_90a")
    def bad():
        ptx.stmatrix_x4_trans_f32_bf16(frag=reg.array(f32, 6), smem_base=reg.scalar(u32, 0),  # 6
                                       lane=reg.scalar(u32, 0), row_stride=64)
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# 6')}: ptx.stmatrix_x4_trans_f32_bf16: frag "
                            f"has 6 registers; a multiple of 8 is needed")


# ----------------------------------------------------------------------------- tcgen05
@pytest.mark.parametrize("kw,msg", [
    (dict(m=32), "m=32 is not allowed; allowed: 64, 128, 256"),
    (dict(n=264), "n=264 is not allowed; allowed: a multiple of 8 in 8..256"),
    (dict(ab_dtype="e4m3"), "ab_dtype='e4m3' is not allowed; allowed: f16, bf16, tf32"),
    (dict(a_major="X"), "a_major='X' is not allowed; allowed: K, MN"),
    (dict(scale_b=2), "scale_b=2 is not allowed; allowed: 1, -1"),
    (dict(max_shift=4), "max_shift=4 is not allowed; allowed: 0..3"),
])
def test_instr_desc_errors(kw, msg):
    with pytest.raises(PtxValueError) as e:
        ptx.tcgen05.make_instr_desc_f16bf16_f32(**kw)
    assert str(e.value).endswith(f"ptx.tcgen05.make_instr_desc_f16bf16_f32: {msg}")


def test_instr_desc_fields():
    f = ptx.tcgen05.make_instr_desc_f16bf16_f32
    assert f(ab_dtype="f16", a_major="MN", scale_a=-1, sparse=True, saturate=True,
             max_shift=2) == (1 << 2 | 1 << 3 | 1 << 4 | 1 << 13 | 1 << 15 | 32 << 17 | 8 << 24 |
                              2 << 30)


def test_tcgen05_keyword_forms():
    @kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1))
    def k():
        slot = smem.alloc(u32, 1)
        bar = smem.mbarrier(1)
        sA = smem.alloc(bf16, (128, 64), swizzle="128B")
        ptx.tcgen05.alloc(slot, 256)
        t = smem.load(u32, slot)
        d = ptx.tcgen05.descriptor(sA, stride_bytes=1024, swizzle="32B", version=1)
        m = ptx.tcgen05.masked_descriptor(reg.scalar(u32, 0), byte_offset=64)
        idesc = reg.scalar(b32, ptx.tcgen05.make_instr_desc_f16bf16_f32())
        ptx.tcgen05.mma(t, d, m, idesc, pred_operand=1)
        ptx.tcgen05.mma(t, t, m, idesc, scale_d=reg.scalar(u32, 0), a_is_tmem=True)
        ptx.tcgen05.cp(t, d, size="128x256b")
        ptx.tcgen05.shift(t)
        ptx.tcgen05.commit(bar[0], space="cta")
        ptx.tcgen05.commit(bar[0], multicast_mask=reg.scalar(u16, 3))
        ptx.ret()

    lines = body(k)
    assert lines[1:7] == ["ld.shared.u32 %r0, [smem_0];", "mov.u32 %r1, smem_1;",
                          "and.b32 %r2, %r1, 262128;", "shr.u32 %r2, %r2, 4;",
                          "cvt.u64.u32 %rd0, %r2;",
                          f"or.b64 %rd0, %rd0, {6 << 61 | 1 << 46 | 64 << 32 | 1 << 16};"]
    assert lines[13:] == [
        "mov.b32 %r6, 138413200;",
        "tcgen05.mma.cta_group::1.kind::f16 [%r0], %rd0, %rd1, %r6, 1;",
        "mov.u32 %r7, 0;", "setp.ne.b32 %p0, %r7, 0;",
        "tcgen05.mma.cta_group::1.kind::f16 [%r0], [%r0], %rd1, %r6, %p0;",
        "tcgen05.cp.cta_group::1.128x256b [%r0], %rd0;",
        "tcgen05.shift.cta_group::1.down [%r0];",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [mbar_0];",
        "mov.u16 %rs0, 3;",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.multicast::cluster.shared::cluster"
        ".b64 [mbar_0], %rs0;", "ret;"]
    assemble(k)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda t, d: ptx.tcgen05.mma(t, d, d, t, kind="mxf8f6f4", scale_d=True), PtxValueError,
     "ptx.tcgen05.mma: kind='mxf8f6f4' is block-scaled: its tcgen05.mma takes the scale "
     "factors' TMEM addresses ([scale-A], [scale-B]), without which ptxas rejects it; use "
     "ptx.tcgen05.mma_block_scaled(d, a, b, idesc, scale_a, scale_b, kind='mxf8f6f4')"),
    (lambda t, d: ptx.tcgen05.mma(t, d, d, t, collector_a="keep"), PtxValueError,
     "ptx.tcgen05.mma: collector_a='keep' is not allowed; allowed: discard, lastuse, fill, "
     "use"),
    (lambda t, d: ptx.tcgen05.mma(t, d, d, t, sparse=True, scale_d=True), PtxValueError,
     "ptx.tcgen05.mma: sparse=True needs sparse_metadata (its TMEM address)"),
    (lambda t, d: ptx.tcgen05.descriptor(t, stride_bytes=1000), PtxValueError,
     "ptx.tcgen05.descriptor: stride_bytes=1000 is not allowed; allowed: a multiple of 16 "
     "below 2**18"),
    (lambda t, d: ptx.tcgen05.descriptor(t, stride_bytes=1024, swizzle="16B"), PtxValueError,
     "ptx.tcgen05.descriptor: swizzle='16B' is not allowed; allowed: NONE, 128B_BASE32B, "
     "128B, 64B, 32B"),
    (lambda t, d: ptx.tcgen05.commit(d, space="gpu"), PtxValueError,
     "ptx.tcgen05.commit: space='gpu' is not allowed; allowed: cta, cluster"),
    (lambda t, d: ptx.tcgen05.ld(reg.array(b32, 2), t, shape="32x32b", count=4),
     PtxValueError, "ptx.tcgen05.ld: shape 32x32b x4 loads 4 registers per thread; dst_regs "
                    "has 2"),
    (lambda t, d: ptx.tcgen05.st(t, [t, t], shape="32x32b", count=2, dtype="b16"),
     PtxValueError, "ptx.tcgen05.st: dtype='b16' is not allowed; allowed: b32"),
])
def test_tcgen05_errors(call, exc, msg):
    @kernel(arch="sm_100a")
    def k():
        call(reg.scalar(u32, 0), reg.scalar(u64, 0))
        ptx.ret()

    with pytest.raises(exc) as e:
        k.ptx()
    assert str(e.value).startswith(__file__) and str(e.value).endswith(f": {msg}")

