"""GEMM on two Blackwell SMs (sm_100a): ``C = A @ B`` with ``tcgen05.mma.cta_group::2``, one
MMA spanning a cluster of two CTAs: a 256 x ``bn`` tile per pair, each CTA holding 128 rows
of A, half of B's columns and its 128 rows of the accumulator in its own Tensor Memory.

    from examples.blackwell.gemm_2sm import build_gemm_2sm
    k = build_gemm_2sm(bf16)         # 256x256x64 pair tile, 4 stages, clusters of 2
    c = k(a, b)                      # a: bf16[M, K], b: bf16[K, N] (row-major) -> f32[M, N]

``build_gemm_2sm``'s docstring describes the pair, the warps and the pipeline;
``docs/examples/blackwell_gemm_2sm.md`` draws them.

    python examples/blackwell/gemm_2sm.py   # ptxas, SASS, interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/blackwell/gemm_2sm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.blackwell"

from jax_pyptx import Layout, Tile, kernel, ptx, reg
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import bf16, f32, u32

from . import ARCH
from .gemm import reference  # noqa: F401  (the same product)
from .sm100 import (
    BK, BM, BOX_N, THREADS, GemmConfig, MmaIssuer, Producer, Roles, Shared, TmaEpilogue,
    bar_at, check_shapes, setup, teardown, wait,
)

PAIR = 0b11            # the CTA mask of a pair (cluster ranks 0 and 1)


def build_gemm_2sm(dtype=bf16, out_dtype=f32, *, bn: int = 256, stages: int = 4):
    """``C[M, N] = A[M, K] @ B[K, N]`` (A, B row-major bf16/f16; f32 accumulation in TMEM; C
    f32, bf16 or f16) on CTA pairs: clusters of 2 along M, one ``tcgen05.mma.cta_group::2``
    (M = 256) per K step for the pair.

    Parameters:
        dtype, out_dtype: as ``gemm.build_gemm``.
        bn: the pair tile's columns, 128 or 256 (the MMA's N); each CTA loads ``bn / 2`` of
            them and holds all ``bn`` columns of its 128 accumulator rows in TMEM.
        stages: depth of each CTA's ring: a stage is A's 128 x 64 box (16 KiB) and
            ``bn / 128`` B boxes of 64 x 64 (8 KiB each): 32 KiB at bn=256.

    **The pair.** Cluster rank ``r`` (0 = the leader) owns rows ``128 r ..`` of the
    ``256 x bn`` pair tile. The pair shares B: rank ``r`` loads B's columns
    ``r * bn / 2 ..`` only, and the ``cta_group::2`` MMA reads A's rows and B's columns from
    both CTAs' shared memory (the same offsets) and writes each CTA's 128 accumulator rows,
    all ``bn`` columns, into that CTA's TMEM: each B element is loaded once per 256 rows.

    **Warps** (192 threads per CTA):

    * warp 0, producer (both CTAs): waits on its own ``empty[s]``, then loads its A box and
      its B half with ``cp.async.bulk.tensor.2d ... .cta_group::2`` whose completion goes to
      the *leader's* ``full[s]`` (a ``mapa`` address); the leader's producer arms that
      barrier with both CTAs' bytes (``mbarrier.arrive.expect_tx.shared::cluster``);
    * warp 1, MMA: both CTAs' warps allocate TMEM together (``tcgen05.alloc.cta_group::2``);
      the leader's elected lane waits on ``full[s]`` and issues 4
      ``tcgen05.mma.cta_group::2.kind::f16`` (M=256, N=``bn``, K=16), then
      ``tcgen05.commit.cta_group::2 ... .multicast::cluster`` with mask ``0b11``: the
      tensor core arrives on ``empty[s]`` of *both* CTAs, so both producers refill; the last
      commit goes to both CTAs' ``acc_full``;
    * warps 2-5, epilogue (both CTAs): as ``gemm.build_gemm``, on their own CTA's rows.

    Cluster barriers (``barrier.cluster.arrive.release`` / ``wait.acquire``) after the set-up
    (barriers initialised and TMEM allocated in both CTAs before any remote signal) and
    before the teardown (no CTA exits while its peer may still signal it).

    **Shapes.** Any ``M`` (a pair past ``M`` loads zeros and stores nothing); ``N`` and
    ``K`` multiples of 8. Grid ``(2 ceil(M / 256), ceil(N / bn))``, cluster ``(2, 1, 1)``;
    ``M`` and ``N`` are independent.
    """
    cfg = GemmConfig("build_gemm_2sm", dtype, out_dtype, bn, stages, cta_group=2)

    @kernel(arch=ARCH,
            in_specs=(Tile("M", "K", dtype, Layout.TMA_128B, tma_box=(BM, BK)),
                      Tile("K", "N", dtype, Layout.TMA_128B, tma_box=(BK, BOX_N))),
            out_specs=(Tile("M", "N", out_dtype, Layout.TMA_128B,
                            tma_box=(32, cfg.out_cols)),),
            block=(THREADS, 1, 1), cluster=(2, 1, 1),
            grid=lambda M, N: (2 * -(-M // (2 * BM)), -(-N // bn), 1))
    def gemm_2sm(A, B, C):
        """C = A @ B on CTA pairs (``build_gemm_2sm``'s docstring)."""
        pair_body(cfg, A, B, C)

    gemm_2sm.config = cfg
    return configure(gemm_2sm, independent=("M", "N"))


def pair_body(cfg: GemmConfig, A, B, C):
    """One 256 x bn pair tile per cluster of two CTAs."""
    K, N = A.shape[1], B.shape[1]
    check_shapes("gemm_2sm", K, N)
    ktiles = -(-K // BK)
    a_map, b_map, c_map = A.tma_desc(), B.tma_desc(), C.tma_desc()
    sh = Shared(cfg)
    roles = Roles()
    tmem = setup(cfg, sh, roles, cluster_sync=True)
    rank = reg.from_(ptx.cluster.ctarank(), u32)
    leader = rank == 0
    m0 = reg.from_(ptx.special.ctaid.x(), u32) * BM            # this CTA's 128 rows
    n0 = reg.from_(ptx.special.ctaid.y(), u32) * cfg.bn        # the pair tile's columns
    b_n0 = n0 + rank * cfg.b_cols                               # this CTA's half of B

    with ptx.if_(roles.is_producer_warp):
        with ptx.if_(ptx.warp.elect_one()):
            prod = Producer(cfg, sh, a_map, b_map,
                            full_bar=lambda s: ptx.cluster.mapa(bar_at(sh.full, s), 0),
                            expect_bytes=2 * cfg.stage_bytes, arrive_pred=leader,
                            tma_cta_group=2)
            prod.load_tile(m0, b_n0, ktiles)
    with ptx.if_(roles.is_mma_warp):
        with ptx.if_(leader):
            with ptx.if_(ptx.warp.elect_one()):
                MmaIssuer(cfg, sh).mma_tile(tmem, ktiles, sh.acc_full[0], multicast=PAIR)
    with ptx.if_(roles.is_epilogue):
        wait(sh.acc_full[0], 0)
        ptx.tcgen05.fence_after_thread_sync()
        ep = TmaEpilogue(cfg, sh, roles, c_map)
        ep.store_tile(tmem + (roles.quarter << 21), m0, n0)
        ep.finish()
    teardown(cfg, roles, tmem, cluster_sync=True)
    ptx.ret()


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
