"""Ampere, Hopper (wgmma, TMA, mbarrier, clusters) and Blackwell (tcgen05) wrappers: traced
and assembled for their targets; misuse raises with the user's file:line."""
import pytest

from jax_pyptx import kernel, ptx, reg, smem
from jax_pyptx.errors import PtxTypeError, PtxValueError
from jax_pyptx.types import b32, b64, bf16, f16, f32, s32, u16, u32, u64

from .helpers import line_of
from .isa_util import assemble, forms_used, missing


@kernel(arch="sm_80", block=(32, 1, 1))
def ampere():
    a, b = reg.array(b32, 4), reg.array(b32, 2)
    d = reg.array(f32, 4, 0.0)
    ptx.mma.sync(d, a, b, d, shape="m16n8k16", atype=f16)
    ptx.mma.sync(d, a, b, d, shape="m16n8k16", atype=bf16)
    ptx.mma.sync(d, a[:2], b[:1], d, shape="m16n8k4", atype="tf32")
    ptx.mma.sync(d, a, b, d, shape="m16n8k8", atype="tf32")
    di = reg.array(s32, 4, 0)
    ptx.mma.sync(di, a, b, di, shape="m16n8k32", dtype=s32, atype="s8", btype="u8",
                 satfinite=True)
    ptx.mma.sync(di, a, b, di, shape="m16n8k256", dtype=s32, atype="b1", bitop="and")
    h = reg.array(b32, 2)
    ptx.mma.sync(h, a, b, h, shape="m16n8k16", dtype=f16, atype=f16, ctype=f16)
    buf = smem.alloc(f16, (1024,), name="tile")
    for n in (1, 2, 4):
        ptx.mma.ldmatrix(buf[0], num=n)
        ptx.mma.ldmatrix(buf[0], num=n, trans=True)
    ptx.mma.movmatrix(a[0])
    g = reg.from_(ptx.special.globaltimer(), u64)
    ptx.cp.async_(buf[0], ptx.addr(g), 16)
    ptx.cp.async_(buf[0], ptx.addr(g), 4, cop="ca", src_size=reg.scalar(u32, 2))
    ptx.cp.async_(buf[0], ptx.addr(g), 16, ignore_src=ptx.cmp.setp("eq", a[0], 0))
    ptx.cp.async_(buf[0], ptx.addr(g), 16, policy=reg.scalar(b64, 0), prefetch="128B")
    ptx.cp.async_.commit_group()
    ptx.cp.async_.wait_group(1)
    ptx.cp.async_.wait_all()
    bar = smem.mbarrier(1)
    ptx.mbarrier.init(bar[0], 32)
    ptx.cp.async_.mbarrier_arrive(bar[0], noinc=True)
    st = ptx.mbarrier.arrive(bar[0])
    ptx.mbarrier.test_wait(bar[0], st)
    ptx.mbarrier.test_wait_parity(bar[0], 0)
    ptx.mbarrier.pending_count(st)
    ptx.mbarrier.inval(bar[0])
    ptx.ret()


@kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1))
def hopper():
    sa = smem.alloc(bf16, (64, 64), align=1024, name="sa")
    da = ptx.wgmma.desc_reg(sa, 16, 1024, "128B")
    db = ptx.wgmma.desc_advance(da, 32)
    acc = reg.array(f32, 128)
    acc16 = reg.array(b32, 64)
    acci = reg.array(s32, 128)
    areg = reg.array(b32, 4)
    ptx.wgmma.fence()
    for n in range(8, 257, 8):
        ptx.wgmma.mma_async(acc[:n // 2], da, db, atype=bf16, scale_d=0)
        ptx.wgmma.mma_async(acc16[:n // 4], da, db, dtype=f16, atype=f16, trans_b=1)
        ptx.wgmma.mma_async(acc[:n // 2], areg, db, atype="e4m3", btype="e5m2")
        ptx.wgmma.mma_async(acc[:n // 2], da, db, atype="tf32", scale_a=-1)
    for n in (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256):
        ptx.wgmma.mma_async(acci[:n // 2], da, db, dtype=s32, atype="s8", btype="u8",
                            satfinite=True)
        ptx.wgmma.mma_async(acci[:n // 2], da, db, dtype=s32, atype="b1")
    ptx.wgmma.mma_async_sp(acc[:32], da, db, reg.scalar(b32, 0), 1, atype=f16)
    ptx.wgmma.commit_group()
    ptx.wgmma.wait_group(0)
    # TMA
    tmap = reg.from_(ptx.special.globaltimer(), u64)
    bar = smem.mbarrier(2, name="bars")
    x, y = reg.scalar(s32, 0), reg.scalar(s32, 64)
    ptx.mbarrier.init(bar[0], 1)
    ptx.fence.mbarrier_init()
    ptx.mbarrier.arrive_expect_tx(bar[0], 8192)
    for dim in range(1, 6):
        t = getattr(ptx.cp.async_.bulk, f"tensor_{dim}d")
        coords = [x] * dim
        t(sa, tmap, coords, bar[0])
        t(sa, tmap, coords, bar[0], multicast=reg.scalar(u16, 3), policy=reg.scalar(b64, 0))
        t.store(tmap, coords, sa)
        t.reduce("add", tmap, coords, sa)
        t.prefetch(tmap, coords)
        if dim >= 3:
            t(sa, tmap, coords, bar[0], mode="im2col", im2col=[reg.scalar(u16, 0)] * (dim - 2))
    ptx.cp.async_.bulk(sa, ptx.addr(tmap), 1024, bar[0])
    ptx.cp.async_.bulk.s2g(ptx.addr(tmap), sa, 1024)
    ptx.cp.async_.bulk.s2s(sa, sa, 1024, bar[0])
    ptx.cp.async_.bulk.prefetch(ptx.addr(tmap), 1024)
    ptx.cp.reduce.async_.bulk("add", ptx.addr(tmap), sa, 1024, type=f32)
    ptx.cp.reduce.async_.bulk("min", sa, sa, 1024, bar[0], type=u32)
    ptx.cp.reduce.async_.bulk.tensor_2d("max", tmap, [x, y], sa)
    ptx.cp.async_.bulk.commit_group()
    ptx.cp.async_.bulk.wait_group(0, read=True)
    # mbarrier
    ptx.mbarrier.arrive(bar[1], sem="release", scope="cluster")
    ptx.mbarrier.arrive(bar[1], 1, remote=True, sem="release", scope="cluster")
    ptx.mbarrier.arrive_expect_tx(bar[1], 64, remote=True)
    ptx.mbarrier.expect_tx(bar[1], 64)
    ptx.mbarrier.complete_tx(bar[1], 64)
    ptx.mbarrier.arrive_drop(bar[1])
    ptx.mbarrier.arrive_nocomplete(bar[1], 1)
    ptx.mbarrier.try_wait(bar[1], reg.scalar(b64, 0), suspend_hint=1000)
    ptx.mbarrier.wait(bar[0], 0)
    # clusters
    ptx.cluster.arrive(relaxed=True)
    ptx.cluster.wait()
    ptx.cluster.sync()
    rank = reg.from_(ptx.cluster.ctarank(), u32)
    remote = ptx.cluster.map_shared(sa, rank)
    ptx.cluster.getctarank(remote)
    ptx.mem.st(ptx.addr(remote), reg.scalar(f32, 1.0), space="shared::cluster")
    ptx.ret()


@kernel(arch="sm_100a", block=(128, 1, 1))
def blackwell():
    slot = smem.alloc(u32, (1,), name="tslot")
    bar = smem.mbarrier(1, name="tbar")
    ptx.tcgen05.alloc(slot[0], 128)
    taddr = ptx.mem.ld(slot[0], u32, space="shared")
    sa = smem.alloc(bf16, (128, 64), align=1024, name="ta")
    da = ptx.tcgen05.smem_desc_reg(sa, 16, 1024, "128B")
    idesc = reg.scalar(u32, ptx.tcgen05.instr_desc("f16", 128, 256, f32, bf16))
    en = ptx.cmp.setp("ne", taddr, 0)
    for kind in ("f16", "tf32", "f8f6f4", "i8"):
        ptx.tcgen05.mma(taddr, da, da, idesc, en, kind=kind)
        ptx.tcgen05.mma(taddr, ptx.addr(taddr), da, idesc, en, kind=kind,
                        disable_output_lane=reg.array(b32, 4, 0))
        ptx.tcgen05.mma_ws(taddr, da, da, idesc, en, kind=kind)
    ptx.tcgen05.mma(taddr, da, da, idesc, en, kind="f16", scale_input_d=2)
    ptx.tcgen05.mma(taddr, da, da, idesc, en, kind="f16", collector="a::fill")
    for kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        ptx.tcgen05.mma_block_scaled(taddr, da, da, idesc, taddr, taddr, en, kind=kind,
                                     scale_vec="2X" if kind != "mxf8f6f4" else None)
    for shape, (per, top) in ptx.tcgen05.SHAPES.items():
        num = 1
        while num <= top:
            kw = {"half_splitoff": 0} if shape == "16x32bx2" else {}
            if per * num <= 128:
                r = ptx.tcgen05.ld(taddr, shape, num, **kw)
                ptx.tcgen05.st(taddr, r, shape, **kw)
            num *= 2
    ptx.tcgen05.ld(taddr, "32x32b", 4, pack16=True)
    ptx.tcgen05.wait_ld()
    ptx.tcgen05.wait_st()
    ptx.tcgen05.cp(taddr, da, "128x256b")
    ptx.tcgen05.cp(taddr, da, "64x128b", multicast="warpx2::02_13")
    ptx.tcgen05.cp(taddr, da, "32x128b", multicast="warpx4", src_fmt="b6x16_p32")
    ptx.tcgen05.shift(taddr)
    ptx.tcgen05.commit(bar[0])
    ptx.tcgen05.commit(bar[0], multicast=reg.scalar(u16, 3))
    ptx.tcgen05.fence_before_thread_sync()
    ptx.tcgen05.fence_after_thread_sync()
    ptx.tcgen05.dealloc(taddr, 128)
    ptx.tcgen05.relinquish_alloc_permit()
    ptx.ret()


@pytest.mark.parametrize("k", [ampere, hopper, blackwell], ids=lambda k: k.name)
def test_assembles_for_its_target(k):
    assemble(k)


def test_wgmma_text_and_every_shape_used():
    text = hopper.ptx()
    assert ("\twgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 \t{%f0, " in text)
    for n in range(8, 257, 8):
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 \t" in text
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e5m2 \t" in text
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 \t" in text
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k16.f16.f16.f16 \t" in text


def test_tcgen05_ld_st_every_shape_and_count():
    left = [m for m in missing(forms_used(blackwell), "tcgen05")
            if m.startswith(("tcgen05.ld", "tcgen05.st"))]
    assert left == []


def test_wgmma_accumulator_count_error():
    @kernel(arch="sm_90a")
    def k():
        acc = reg.array(f32, 3)
        d = reg.scalar(b64, 0)
        ptx.wgmma.mma_async(acc, d, d, n=16, atype=bf16)  # three regs
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# three regs')}: "
                            f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 operand 1: "
                            f"expected a vector of 8 registers, got 3")


def test_wgmma_shape_not_legal_for_dtype():
    @kernel(arch="sm_90a")
    def k():
        acc = reg.array(s32, 20)
        d = reg.scalar(b64, 0)
        ptx.wgmma.mma_async(acc, d, d, dtype=s32, atype="s8")  # n=40 int8
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value).startswith(
        f"{line_of(k.fn, '# n=40 int8')}: ptx.wgmma.mma_async: no form of wgmma.mma_async "
        f"takes sync=True, aligned=True, shape='.m64n40k32'")


def test_bad_option_names_parameter():
    @kernel(arch="sm_90a")
    def k():
        ptx.tcgen05.ld(reg.scalar(u32), "32x32b", 3)  # num
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# num')}: ptx.tcgen05.ld: num=3 is not allowed; "
                            f"allowed: 1, 2, 4, 8, 16, 32, 64, 128")


def test_tcgen05_above_arch():
    from jax_pyptx.errors import ArchError

    @kernel(arch="sm_90a")
    def k():
        ptx.tcgen05.fence_after_thread_sync()  # blackwell
        ptx.ret()

    with pytest.raises(ArchError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# blackwell')}: tcgen05.fence::after_thread_sync "
                            f"needs sm_100a or sm_101a or sm_103a or sm_110a (PTX ISA 8.6); "
                            f"kernel 'k' targets sm_90a")
