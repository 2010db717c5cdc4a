"""Kernels written with this project's DSL for the corpus: structured control flow, warp
shuffles, mbarriers and the wait helper, wgmma, TMA, clusters and tcgen05 wrappers."""
from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.types import b32, bf16, f32, u32, u64


@kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(128, 1, 1),
        grid=lambda N: ((N + 127) // 128, 1, 1))
def scale_loop(X, Out, *, reps=3):
    """Grid-stride loop with if/elif/else on the value."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 128 + ptx.special.tid.x()
    n = X.shape[0]
    with ptx.while_(lambda: i < n):
        off = reg.cvt(i, u64) * 4
        x = reg.scalar(f32)
        ptx.inst.ld.global_.f32(x, ptx.addr(X.ptr() + off))
        for _ in ptx.static_range(reps):
            x *= 1.5
        with ptx.if_(x > 100.0):
            x.set(100.0)
        with ptx.elif_(x < -100.0):
            x.set(-100.0)
        with ptx.else_():
            x += 1.0
        ptx.inst.st.global_.f32(ptx.addr(Out.ptr() + off), x)
        i += 128 * 64
    ptx.ret()


@kernel(arch="sm_80", raw_params=[("out", "u64"), ("n", "u32")], block=(32, 1, 1))
def warp_sum():
    """Warp reduction with shfl.sync.bfly and a counted loop."""
    lane = reg.from_(ptx.special.laneid(), u32)
    acc = reg.scalar(u32, 0)
    n = ptx.param_value("n")
    for k in ptx.range_(0, n):
        acc += k + lane
    for s in (16, 8, 4, 2, 1):
        other = ptx.warp.shfl_bfly(acc, s)
        acc += other
    with ptx.if_(lane == 0):
        out = ptx.param_value("out")
        ptx.inst.st.global_.u32(ptx.addr(out), acc)
    ptx.ret()


@kernel(arch="sm_90a", raw_params=[("out", "u64")], block=(128, 1, 1))
def mbarrier_pingpong():
    """mbarrier init / arrive / wait with the DSL's wait helper, fences and bar.sync."""
    bar = smem.mbarrier(2)
    tid = reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(tid == 0):
        ptx.mbarrier.init(bar[0], 128)
        ptx.mbarrier.init(bar[1], 128)
        ptx.fence.mbarrier_init()
    ptx.bar.sync(0)
    phase = reg.scalar(u32, 0)
    for it in ptx.range_(0, 4):
        ptx.mbarrier.arrive(bar[0])
        ptx.mbarrier.wait(bar[0], phase)
        ptx.mbarrier.arrive(bar[1])
        ptx.mbarrier.wait(bar[1], phase)
        phase ^= 1
    ptx.fence.proxy_async("shared::cta")
    ptx.ret()


@kernel(arch="sm_90a", raw_params=[("a_desc", "u64"), ("b_desc", "u64"), ("out", "u64")],
        block=(128, 1, 1))
def wgmma_tile():
    """One m64n64k16 bf16 wgmma from descriptors, accumulators stored to global."""
    acc = ptx.wgmma.zero_acc(64)
    a = ptx.param_value("a_desc")
    b = ptx.param_value("b_desc")
    ptx.wgmma.fence()
    for k in ptx.static_range(4):
        ptx.wgmma.mma_async(acc, a, b, n=64, dtype=f32, atype=bf16, scale_d=0 if k == 0 else 1)
    ptx.wgmma.commit_group()
    ptx.wgmma.wait_group(0)
    out = ptx.param_value("out")
    tid = reg.from_(ptx.special.tid.x(), u32)
    base = out + reg.cvt(tid, u64) * (4 * 32)
    for j in ptx.static_range(32):
        ptx.inst.st.global_.f32(ptx.addr(base, 4 * j), acc[j])
    ptx.ret()


@kernel(arch="sm_90a", raw_params=[("out", "u64")], block=(64, 1, 1), cluster=(2, 1, 1))
def cluster_exchange():
    """Cluster barrier, mapa to the peer CTA's shared memory, ld.shared::cluster."""
    buf = smem.alloc(u32, (64,))
    tid = reg.from_(ptx.special.tid.x(), u32)
    rank = reg.from_(ptx.special.cluster_ctarank(), u32)
    addr = reg.scalar(u32)
    ptx.inst.mov.u32(addr, buf)
    ptx.inst.st.shared.u32(ptx.addr(addr), rank)
    ptx.inst.barrier.cluster.arrive.release.aligned()
    ptx.inst.barrier.cluster.wait.acquire.aligned()
    peer = reg.scalar(u32)
    ptx.inst.mapa.shared__cluster.u32(peer, addr, rank ^ 1)
    got = reg.scalar(u32)
    ptx.inst.ld.shared__cluster.u32(got, ptx.addr(peer))
    out = ptx.param_value("out")
    ptx.inst.st.global_.u32(ptx.addr(out + reg.cvt(tid, u64) * 4), got)
    ptx.ret()


@kernel(arch="sm_100a", raw_params=[("out", "u64")], block=(128, 1, 1))
def tmem_roundtrip():
    """tcgen05 alloc / st / ld / dealloc with the wait and fence wrappers."""
    slot = smem.alloc(u32, (1,))
    tid = reg.from_(ptx.special.tid.x(), u32)
    warp = tid >> 5
    with ptx.if_(warp == 0):
        ptx.tcgen05.alloc(slot, 32)
        ptx.tcgen05.relinquish_alloc_permit()
    ptx.tcgen05.fence_before_thread_sync()
    ptx.bar.sync(0)
    ptx.tcgen05.fence_after_thread_sync()
    taddr = reg.scalar(u32)
    ptx.inst.ld.shared.u32(taddr, slot[0])
    vals = reg.array(b32, 4, init=7)
    ptx.tcgen05.st(taddr, vals, "32x32b")
    ptx.tcgen05.wait_st()
    got = ptx.tcgen05.ld(taddr, "32x32b", 4)
    ptx.tcgen05.wait_ld()
    out = ptx.param_value("out")
    ptx.inst.st.global_.v4.b32(ptx.addr(out + reg.cvt(tid, u64) * 16), got)
    ptx.bar.sync(0)
    with ptx.if_(warp == 0):
        ptx.tcgen05.dealloc(taddr, 32)
    ptx.ret()


KERNELS = [
    ("scale_loop", scale_loop, {"N": 4096}),
    ("warp_sum", warp_sum, {}),
    ("mbarrier_pingpong", mbarrier_pingpong, {}),
    ("wgmma_tile", wgmma_tile, {}),
    ("cluster_exchange", cluster_exchange, {}),
    ("tmem_roundtrip", tmem_roundtrip, {}),
]
