"""Memory, atomics, fences, barriers, warp and misc wrappers: traced and assembled."""
from jax_pyptx import kernel, ptx, reg, smem
from jax_pyptx.types import *  # noqa: F401,F403

from .isa_util import assemble

@kernel(arch="sm_100a", block=(128, 1, 1))
def mem_sm100():
    M = ptx.mem
    p = reg.from_(ptx.special.globaltimer(), u64)
    buf = smem.alloc(f32, (256,), name="buf")
    bars = smem.mbarrier(1)
    a = ptx.addr(p)
    pol = M.createpolicy_fractional("evict_last", "evict_unchanged", 0.5)
    M.createpolicy_fractional("evict_first"); M.createpolicy_range(a, 128, 256); M.createpolicy_cvt(pol)
    for sp in ("global", "shared", "local", "const", "param", None):
        pass
    M.ld(a, f32, space="global"); M.ld(a, f32, space="global", cop="cg"); M.ld(a, f32, space="global", vec=4, cop="cs")
    M.ld(a, f32, space="global", l1="evict_last", policy=pol, prefetch="128B"); M.ld(a, f32, space="global", l2="evict_first", vec=8)
    M.ld(a, u32, space="global", sem="acquire", scope="gpu"); M.ld(a, u32, space="global", sem="relaxed", scope="cluster")
    M.ld(a, u32, space="global", sem="volatile"); M.ld(a, u32, space="global", sem="mmio"); M.ld(a, f32, space="global", nc=True, vec=2)
    M.ld(a, f32, space="global", nc=True, cop="ca"); M.ld(a, b128, space="global"); M.ld(a, f32, space="global", vec=8)
    M.ld(buf[0], f32, space="shared"); M.ld(buf[4], f32, space="shared::cta", vec=4); M.ldu(a, f32); M.ldu(a, f32, vec=2)
    v = reg.scalar(f32, 1.0)
    M.st(a, v, space="global"); M.st(a, v, space="global", cop="wt"); M.st(a, v, space="global", sem="release", scope="sys", policy=pol)
    M.st(buf[0], reg.array(f32, 4), space="shared"); M.st(a, v, space="global", sem="volatile"); M.st(a, v, space="global", l1="no_allocate")
    M.prefetch(a, "L1", space="global"); M.prefetch(a, "L2::evict_last", space="global"); M.prefetchu(a); M.prefetch_tensormap(a)
    M.applypriority(a); M.discard(a); M.cvta(p, "shared", to=True); M.cvta(p, "shared"); M.cvta(p, "global", to=True); M.isspacep(p, "shared::cluster")
    M.st_async(buf[0], v, bars[0]); M.st_bulk(buf[0], 128) if True else None
    A = ptx.atomic
    u = reg.scalar(u32, 1)
    A.atom("add", a, u, space="global"); A.atom("add", a, v, space="global", sem="relaxed", scope="gpu"); A.atom("cas", a, u, u, space="global")
    A.atom("exch", a, reg.scalar(b64), space="shared::cta"); A.atom("min", a, reg.scalar(s64), space="global"); A.atom("inc", a, u)
    A.atom("add", a, reg.scalar(f16), space="global"); A.atom("add", a, reg.scalar(bf16x2), space="global", policy=pol)
    A.atom("add", a, reg.array(f32, 4), space="global"); A.atom("max", a, reg.array(bf16, 8), space="global"); A.atom("cas", a, reg.scalar(b128), reg.scalar(b128), space="global")
    A.red("add", a, u, space="global"); A.red("xor", a, u, space="shared", sem="release", scope="cta"); A.red("add", a, reg.array(f16x2, 4), space="global")
    A.red_async("add", buf[0], u, bars[0]); A.red_async("xor", buf[0], reg.scalar(b32), bars[0])
    F = ptx.fence
    F.fence("sc", "gpu"); F.fence("acq_rel", "cluster"); F.membar("cta"); F.membar_proxy_alias(); F.proxy_alias(); F.proxy_async(); F.proxy_async("shared::cta")
    F.proxy_tensormap_release("gpu"); F.proxy_tensormap_acquire(a, "sys"); F.mbarrier_init(); F.acquire_sync_restrict(); F.release_sync_restrict()
    F.proxy_async_generic("acquire"); F.proxy_async_generic("release")
    B = ptx.bar
    B.sync(); B.sync(1, 128); B.sync(2, 128, aligned=False); B.arrive(3, 64); B.arrive(3, 64, aligned=True)
    q = ptx.cmp.setp("lt", u, 5)
    B.red_popc(0, q); B.red_popc(0, q, 128, aligned=False); B.red_and(0, q); B.red_or(1, q, 128, aligned=True); B.warp_sync()
    W = ptx.warp
    W.shfl_bfly(u, 1); W.shfl_up(v, 1, width=8); W.shfl("idx", u, 0, with_pred=True); W.vote("any", q); W.ballot(q)
    W.match_any(u); W.match_all(p); W.redux("add", u); W.redux("and", u); W.elect(); W.elect_one(); W.activemask(); W.reduce(v, "max")
    if True:
        W.redux("min", v, abs=True, nan=True)
    X = ptx.misc
    X.nanosleep(100); X.griddepcontrol_wait(); X.griddepcontrol_launch_dependents(); X.pmevent(1); X.pmevent(3, mask=True)
    with ptx.if_(q):
        X.trap(); X.brkpt()
    ptx.ret()


def test_memory_atomic_sync_warp_assemble_for_sm_100a():
    text = assemble(mem_sm100)
    assert "\tld.global.L1::evict_last.L2::cache_hint.L2::128B.f32 \t" in text
    assert "\tatom.global.v4.f32.add" not in text and "\tatom.global.add.v4.f32 \t" in text
    assert "\tfence.proxy.async.shared::cta;\n" in text
    assert "\tshfl.sync.bfly.b32 \t" in text


@kernel(arch="sm_90a", block=(128, 1, 1))
def setmaxnreg_sm90():
    ptx.misc.setmaxnreg(232)
    ptx.misc.setmaxnreg(40, inc=False)
    ptx.ret()


def test_setmaxnreg_text():
    text = setmaxnreg_sm90.ptx()
    assert "\tsetmaxnreg.inc.sync.aligned.u32 \t232;\n" in text
    assert "\tsetmaxnreg.dec.sync.aligned.u32 \t40;\n" in text
