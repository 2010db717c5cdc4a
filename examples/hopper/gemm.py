"""Warp-specialized GEMM on Hopper (sm_90a): ``C = A @ B``, bf16/f16 in, f32 accumulate, f32,
bf16 or f16 out, on ``wgmma`` fed by TMA through an mbarrier ring, with a 2-CTA cluster that
multicasts the shared B tile and a TMA-store epilogue.

    from examples.hopper.gemm import build_gemm
    k = build_gemm(bf16)              # 128x128x64 CTA tile, 4 stages, 2-CTA cluster, f32 out
    c = k(a, b)                       # a: bf16[M, K], b: bf16[K, N] (row-major) -> f32[M, N]
    print(k.ptx(M=4096, N=4096, K=4096))

The build function's docstring describes the tile, the warps and the pipeline;
``docs/examples/hopper_gemm.md`` draws them.

    python examples/hopper/gemm.py    # ptxas resources, SASS check, interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/hopper/gemm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.hopper"

from jax_pyptx import SpecializationError, Tile, kernel, ptx, reg, smem
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import bf16, f32, u32

from .sm90 import (
    CONSUMER_REGS, LAUNCH_BOUNDS, PRODUCER_REGS, SW128, EpilogueStore, StageRing, advance_desc,
    barrier_at, check_smem, grouped_tile, kmajor_desc, mnmajor_desc, release_stage,
)

ARCH = "sm_90a"
WARPGROUP = 128


def build_gemm(dtype=bf16, out_dtype=f32, *, bm: int = 128, bn: int = 128, bk: int = 64,
               stages: int = 4, cluster: int = 2, group_m: int | None = 16):
    """``C[M, N] = A[M, K] @ B[K, N]``: A and B row-major ``dtype`` (bf16 or f16), the
    product accumulated in f32 and stored as ``out_dtype`` (f32, bf16 or f16).

    Parameters:
        dtype: bf16 or f16, the type of A and B.
        out_dtype: f32, bf16 or f16, the type of C (rounded to nearest even).
        bm: CTA tile rows, 128 (two consumer warpgroups of 64 rows) or 64 (one).
        bn: CTA tile columns, a multiple of 64 up to 256 (the wgmma N; each consumer thread
            holds ``bn / 2`` f32 accumulators).
        bk: the K step of a stage, 64 (one 128-byte swizzle row of bf16/f16).
        stages: depth of the shared-memory ring (2 or more; 4 by default).
        cluster: CTAs per cluster along M, 1 or 2; with 2 the CTAs of a pair (same N tile,
            adjacent M tiles) each load half of B's k rows and multicast it to both.
        group_m: the tile order: the CTAs launched one after the other walk ``group_m`` M
            tiles (a multiple of ``cluster``) down one N tile, then the next N tile, and only
            after every N tile the next ``group_m`` M tiles (``sm90.grouped_tile``), so that
            the CTAs running at once share their A and B tiles in L2; None: launch order, all
            M tiles of an N tile after the other (at 8192^3 a wave then reads all of A from
            memory). The products and results are the same either way.

    **Warps.** A CTA has ``1 + bm / 64`` warpgroups (384 threads for ``bm = 128``):

    * warpgroup 0, the **producer**, drops to 40 registers per thread
      (``setmaxnreg.dec``); one elected thread of its first warp runs the TMA loop:
      for k tile ``kt`` it waits until stage ``s = kt % stages`` is empty
      (``mbarrier.try_wait.parity`` on ``empty[s]``), arms ``full[s]`` with the stage's
      byte count (``mbarrier.arrive.expect_tx``), and issues the loads: A's ``bm x 64`` box
      (``cp.async.bulk.tensor.2d``, 128B swizzle) and its share of B: ``bk / cluster`` k rows
      of each 64-column box, ``.multicast::cluster`` to both CTAs of the pair;
    * warpgroups 1.., the **consumers**, raise their budget (``setmaxnreg.inc``, 232 each)
      and each computes 64 rows of the tile: wait on ``full[s]``, issue ``bk / 16``
      ``wgmma.mma_async.m64n{bn}k16`` (A K-major and B MN-major from 128B-swizzled shared
      memory, ``trans-b = 1``), commit, and ``wgmma.wait_group 1``: the previous stage's
      wgmmas are done, so that stage is released with one arrival on ``empty`` of each CTA of
      the cluster (``mapa`` + a remote ``mbarrier.arrive.shared::cluster``).

    **Pipeline.** ``full[s]`` (count 1: the producer's arrive, plus the transaction bytes of
    A and both halves of B) and ``empty[s]`` (count ``consumers x cluster``) per stage; up
    to ``stages`` tiles are in flight while one wgmma group runs. Barriers are initialised by
    thread 0, made visible to the cluster (``fence.mbarrier_init``) and a cluster barrier
    runs before any multicast can land in the peer.

    **Epilogue.** Each consumer converts its accumulators and writes them, 64 rows x 128
    bytes at a time, into two 128B-swizzled shared buffers that a TMA store
    (``cp.async.bulk.tensor.2d.global.shared::cta``) writes to C (``sm90.EpilogueStore``).
    A final cluster barrier keeps each CTA's shared memory alive while its peer may still
    signal its barriers.

    **Shapes.** ``M``, ``N``, ``K`` are shape variables. TMA zero-fills loads past the edges
    and clips stores, so any ``M``; ``N`` and ``K`` multiples of 8 (TMA needs 16-byte row
    strides). Grid ``(ceil(M / bm) rounded up to the cluster, ceil(N / bn))``; the CTA at
    ``(x, y)`` computes the tile ``group_m`` orders there. Shared memory:
    ``stages * (bm + bn) * bk * 2`` bytes of ring plus 16 KiB of epilogue buffers per
    consumer (4 stages at 128x128x64: 160 KiB).
    """
    check_plan("build_gemm", dtype, out_dtype, bm, bn, bk, stages, cluster, group_m)
    cfg = GemmConfig(dtype, out_dtype, bm, bn, bk, stages, cluster, group_m)
    check_smem("build_gemm", cfg.smem_bytes, f"stages={stages} of bm={bm}, bn={bn}")

    @kernel(arch=ARCH, in_specs=(Tile("M", "K", dtype), Tile("K", "N", dtype)),
            out_specs=(Tile("M", "N", out_dtype),), block=(cfg.threads, 1, 1),
            cluster=(cluster, 1, 1), reqntid=True, raw_directives=LAUNCH_BOUNDS,
            grid=lambda M, N: (cfg.m_ctas(M), -(-N // bn), 1))
    def gemm(A, B, C):
        _check_shapes(A.shape[1], B.shape[1])
        gemm_body(cfg, A, B, C)

    gemm.config = cfg
    return configure(gemm, independent=("M", "N"))


def check_plan(fn, dtype, out_dtype, bm, bn, bk, stages, cluster, group_m=None):
    """``ValueError`` naming ``fn`` and the parameter unless the tile plan is one the GEMM
    supports (``build_gemm``'s docstring)."""
    if getattr(dtype, "name", None) not in ("bf16", "f16"):
        raise ValueError(f"{fn}: dtype must be bf16 or f16, got {dtype!r}")
    if getattr(out_dtype, "name", None) not in ("f32", "bf16", "f16"):
        raise ValueError(f"{fn}: out_dtype must be f32, bf16 or f16, got {out_dtype!r}")
    if bm not in (64, 128):
        raise ValueError(f"{fn}: bm must be 64 or 128, got {bm!r}")
    if bn not in (64, 128, 192, 256):
        raise ValueError(f"{fn}: bn must be 64, 128, 192 or 256, got {bn!r}")
    if bk != 64:
        raise ValueError(f"{fn}: bk must be 64 (one 128-byte swizzle row), got {bk!r}")
    if not isinstance(stages, int) or stages < 2:
        raise ValueError(f"{fn}: stages must be an int >= 2, got {stages!r}")
    if cluster not in (1, 2):
        raise ValueError(f"{fn}: cluster must be 1 or 2, got {cluster!r}")
    if group_m is not None and (type(group_m) is not int or group_m < 1 or group_m % cluster):
        raise ValueError(f"{fn}: group_m must be None or a positive int, a multiple of cluster="
                         f"{cluster}, got {group_m!r}")


def _check_shapes(K, N):
    if K % 8 or N % 8:
        raise SpecializationError(
            f"gemm: K and N must be multiples of 8 (TMA row strides are multiples of 16 "
            f"bytes), got K={K}, N={N}")


class GemmConfig:
    """Trace-time constants of one GEMM kernel (``build_gemm``'s docstring)."""

    def __init__(self, dtype, out_dtype, bm, bn, bk, stages, cluster, group_m=None):
        self.dtype, self.out_dtype = dtype, out_dtype
        self.bm, self.bn, self.bk, self.stages, self.cluster = bm, bn, bk, stages, cluster
        self.group_m = group_m
        self.consumers = bm // 64
        self.threads = WARPGROUP * (1 + self.consumers)
        self.a_bytes = bm * bk * dtype.nbytes         # one stage of A
        self.b_box_rows = bk // cluster               # k rows of B this CTA loads per box
        self.b_box_bytes = bk * 64 * dtype.nbytes     # one 64-column box of B (all k rows)
        self.b_bytes = bn // 64 * self.b_box_bytes    # one stage of B
        # the ring, the epilogue buffers, 2 mbarriers per stage
        self.smem_bytes = stages * (self.a_bytes + self.b_bytes + 16) + self.consumers * 16384

    def m_ctas(self, M: int) -> int:
        t = -(-M // self.bm)
        return -(-t // self.cluster) * self.cluster

    def __repr__(self):
        order = "launch order" if self.group_m is None else f"groups of {self.group_m} M tiles"
        return (f"gemm {self.dtype.name}->{self.out_dtype.name} tile {self.bm}x{self.bn}x"
                f"{self.bk}, {self.stages} stages, cluster {self.cluster}, {order}")

    def tile(self):
        """This CTA's first row and column of C (registers): its grid position, or with
        ``group_m`` its place in the grouped order (``sm90.grouped_tile``)."""
        x = reg.from_(ptx.special.ctaid.x(), u32)
        y = reg.from_(ptx.special.ctaid.y(), u32)
        if self.group_m is None:
            return x * self.bm, y * self.bn
        clusters_m = reg.from_(ptx.special.nctaid.x(), u32)
        if self.cluster > 1:
            clusters_m = clusters_m >> (self.cluster.bit_length() - 1)
        tm, tn = grouped_tile(x, y, clusters_m, reg.from_(ptx.special.nctaid.y(), u32),
                              self.group_m, self.cluster)
        return tm * self.bm, tn * self.bn


def gemm_body(cfg: GemmConfig, A, B, C):
    """The kernel body (one CTA tile; ``build_gemm``'s docstring)."""
    K = A.shape[1]
    ktiles = -(-K // cfg.bk)
    st, cl = cfg.stages, cfg.cluster

    tid = reg.from_(ptx.special.tid.x(), u32)
    wg = tid >> 7
    lane_in_group = tid & 127
    m0, n0 = cfg.tile()
    rank = reg.from_(ptx.special.cluster_ctarank(), u32) if cl > 1 else None

    sa = smem.alloc(cfg.dtype, (st, cfg.bm, cfg.bk), swizzle="128B", name="sa")
    sb = smem.alloc(cfg.dtype, (st, cfg.bn // 64, cfg.bk, 64), swizzle="128B", name="sb")
    sc = smem.alloc(cfg.out_dtype, (cfg.consumers, 2, 8192 // cfg.out_dtype.nbytes),
                    swizzle="128B", name="sc")
    full = smem.mbarrier(st, name="full")
    empty = smem.mbarrier(st, name="empty")
    a_map = A.tma_desc(box=(cfg.bm, cfg.bk), swizzle=SW128)
    b_map = B.tma_desc(box=(cfg.b_box_rows, 64), swizzle=SW128)
    c_map = C.tma_desc(box=(64, 128 // cfg.out_dtype.nbytes), swizzle=SW128)
    full_base, empty_base = full.ptr(), empty.ptr()

    # ---- barriers: full[s] counts the producer's arrive (+ tx bytes), empty[s] one arrival
    # per consumer warpgroup of every CTA that writes into this CTA's stage
    with ptx.if_(tid == 0):
        for s in range(st):
            ptx.mbarrier.init(full[s], 1)
            ptx.mbarrier.init(empty[s], cfg.consumers * cl)
        ptx.fence.mbarrier_init()
    _cta_or_cluster_sync(cl)

    with ptx.if_(wg == 0):
        # ---------------------------------------------------------------- producer
        ptx.misc.setmaxnreg(PRODUCER_REGS, inc=False)
        with ptx.if_(tid < 32):
            with ptx.if_(ptx.warp.elect_one()):
                _producer(cfg, ktiles, sa, sb, full_base, empty_base, a_map, b_map, m0, n0,
                          rank)
    with ptx.else_():
        # ---------------------------------------------------------------- consumers
        ptx.misc.setmaxnreg(CONSUMER_REGS[cfg.consumers], inc=True)
        warp = (tid >> 5) & 3
        lane = tid & 31
        w = wg - 1                                  # this consumer's 64-row slice
        acc = reg.array(f32, cfg.bn // 2)
        mainloop(cfg, ktiles, acc, StageRing(cfg.stages), sa, sb, full_base, empty_base, w,
                 lane_in_group)
        epi = EpilogueStore(cfg.out_dtype, sc.ptr() + w * 16384, 1 + w, c_map, warp, lane,
                            lane_in_group)
        epi.store(acc, cfg.bn, m0 + (w << 6), n0)
        epi.drain()
    _cta_or_cluster_sync(cl)                        # peers may still signal our barriers
    ptx.ret()


def _cta_or_cluster_sync(cluster: int):
    if cluster > 1:
        ptx.cluster.arrive(release=True)
        ptx.cluster.wait(acquire=True)
    else:
        ptx.bar.sync(0)


def _producer(cfg, ktiles, sa, sb, full_base, empty_base, a_map, b_map, m0, n0, rank):
    """One thread: for every k tile, wait for a free stage and issue its TMA loads."""
    ptx.mem.prefetch_tensormap(a_map)
    ptx.mem.prefetch_tensormap(b_map)
    ring = StageRing(cfg.stages)
    sa_base, sb_base = sa.ptr(), sb.ptr()
    tx = cfg.a_bytes + cfg.b_bytes                  # this CTA's full[s] receives all of it
    half = cfg.b_box_rows
    if rank is not None:
        sb_base = sb_base + rank * (half * 128)     # this CTA's k rows of each B box
    mask = (1 << cfg.cluster) - 1
    for kt in ptx.range_(0, ktiles, type=u32):
        ptx.mbarrier.wait(barrier_at(empty_base, ring.stage), ring.phase ^ 1)
        bar = barrier_at(full_base, ring.stage)
        ptx.mbarrier.arrive_expect_tx(bar, tx)
        k0 = kt * cfg.bk
        ptx.cp.async_.bulk.tensor_2d(sa_base + ring.stage * cfg.a_bytes, a_map, (k0, m0), bar)
        kb = k0 + rank * half if rank is not None else k0
        dst = sb_base + ring.stage * cfg.b_bytes
        for c in range(cfg.bn // 64):
            ptx.cp.async_.bulk.tensor_2d(
                ptx.addr(dst, c * cfg.b_box_bytes), b_map, (n0 + 64 * c if c else n0, kb), bar,
                multicast=mask if cfg.cluster > 1 else None)
        ring.advance()


def mainloop(cfg, ktiles, acc, ring, sa, sb, full_base, empty_base, w, lane_in_group):
    """A consumer warpgroup: ``acc`` (m64 x bn f32) = its 64 rows of A @ B over ``ktiles``
    stages of ``ring`` (which it advances), releasing each stage once its wgmmas are done."""
    prev = reg.scalar(u32, 0)
    a_desc_w = advance_desc(kmajor_desc(sa), w << 13)    # + 64 rows * 128 bytes * w
    b_desc0 = mnmajor_desc(sb, cfg.b_box_bytes)
    for kt in ptx.range_(0, ktiles, type=u32):
        ptx.mbarrier.wait(barrier_at(full_base, ring.stage), ring.phase)
        a_desc = advance_desc(a_desc_w, ring.stage * cfg.a_bytes)
        b_desc = advance_desc(b_desc0, ring.stage * cfg.b_bytes)
        accumulate = kt != 0
        ptx.wgmma.fence()
        for kk in range(cfg.bk // 16):
            ptx.wgmma.mma_async(acc, advance_desc(a_desc, 32 * kk),
                                advance_desc(b_desc, 16 * 128 * kk), n=cfg.bn, dtype=f32,
                                atype=cfg.dtype, scale_d=accumulate if kk == 0 else 1,
                                trans_b=1)
        ptx.wgmma.commit_group()
        ptx.wgmma.wait_group(1)                          # stage kt-1's wgmmas are done
        with ptx.if_(kt != 0):
            release_stage(empty_base, prev, lane_in_group, cfg.cluster)
        ptx.inst.mov.u32(prev, ring.stage)
        ring.advance()
    ptx.wgmma.wait_group(0)
    release_stage(empty_base, prev, lane_in_group, cfg.cluster)


def reference(a, b):
    """NumPy ``a @ b`` in float64 (products of bf16/f16 values are exact there)."""
    import numpy as np

    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
