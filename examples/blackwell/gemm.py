"""GEMM on one Blackwell SM (sm_100a): ``C = A @ B``, bf16/f16 in, f32 accumulate in Tensor
Memory, f32/bf16/f16 out, on ``tcgen05.mma`` fed by TMA through an mbarrier ring, with
dedicated producer, MMA and epilogue warps.

    from examples.blackwell.gemm import build_gemm
    k = build_gemm(bf16)             # 128x256x64 tile, 4 stages, f32 out
    c = k(a, b)                      # a: bf16[M, K], b: bf16[K, N] (row-major) -> f32[M, N]
    print(k.ptx(M=4096, N=4096, K=4096))

``build_gemm``'s docstring describes the tile, the warps and the pipeline;
``docs/examples/blackwell_gemm.md`` draws them.

    python examples/blackwell/gemm.py    # ptxas resources, SASS check, interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/blackwell/gemm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.blackwell"

from jax_pyptx import Layout, Tile, kernel, ptx, reg
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import bf16, f32, u32

from . import ARCH
from .sm100 import (
    BK, BM, BOX_N, THREADS, GemmConfig, MmaIssuer, Producer, Roles, Shared, TmaEpilogue,
    check_shapes, setup, teardown, wait,
)


def build_gemm(dtype=bf16, out_dtype=f32, *, bn: int = 256, stages: int = 4):
    """``C[M, N] = A[M, K] @ B[K, N]``: A and B row-major ``dtype`` (bf16 or f16), the
    product accumulated in f32 in TMEM and stored as ``out_dtype`` (f32, bf16 or f16; round
    to nearest even).

    Parameters:
        dtype: bf16 or f16, the type of A and B.
        out_dtype: f32, bf16 or f16, the type of C.
        bn: the tile's columns: 64, 128, 192 or 256 (the MMA's N; TMEM columns of the
            accumulator). The tile is ``128 x bn``, one ``tcgen05.mma`` M.
        stages: depth of the shared-memory ring (>= 2). A stage is A's 128 x 64 box
            (16 KiB) and B's 64 x ``bn`` (``bn / 64`` boxes of 8 KiB): 48 KiB at bn=256, so 4
            stages (192 KiB) plus 32 KiB of epilogue staging fit the 227 KiB of an SM.

    **Warps** (192 threads; ``sm100``'s docstring has the details):

    * warp 0, producer: one elected lane loads k tile after k tile into the ring with TMA
      (A's box at (k, m0), B's boxes at (n0 + 64 j, k), 128B swizzle), each stage armed on
      its ``full`` mbarrier with ``arrive.expect_tx`` after waiting for ``empty``;
    * warp 1, MMA: allocates ``bn`` TMEM columns, then one elected lane waits on ``full``,
      issues 4 ``tcgen05.mma.cta_group::1.kind::f16`` (M=128, N=``bn``, K=16) per stage from
      shared-memory descriptors (A K-major, B MN-major) and ``tcgen05.commit``s the stage's
      ``empty`` barrier; the last commit goes to ``acc_full``;
    * warps 2-5, epilogue: wait on ``acc_full``, then, 128 bytes of a row at a time
      (32 f32 or 64 bf16 columns), ``tcgen05.ld.32x32b`` their 32 TMEM lanes (warp ``w``:
      lanes ``32 (w % 4)``..), convert, write the chunk 128B-swizzled into a staging buffer
      (two per warp, alternating), ``fence.proxy.async`` and TMA-store the 32-row box.

    **Pipeline.** Up to ``stages`` k tiles are in flight ahead of the tensor core; the MMA
    warp never waits for the MMAs themselves: ``tcgen05.commit`` makes the hardware arrive
    on ``empty[s]`` once the MMAs issued so far have read stage ``s``. The epilogue starts
    when ``acc_full`` completes.

    **Shapes.** ``M``, ``N``, ``K`` are shape variables: any ``M``; ``N`` and ``K`` multiples
    of 8 (TMA row strides are multiples of 16 bytes). TMA zero-fills loads past the edges
    (the extra k columns add zeros) and clips stores, so ragged edges need no code. Grid
    ``(ceil(M / 128), ceil(N / bn))``; ``M`` and ``N`` are independent (sharded ``jit``
    splits A's rows or B's columns with no all-gather).
    """
    cfg = GemmConfig("build_gemm", dtype, out_dtype, bn, stages)

    @kernel(arch=ARCH,
            in_specs=(Tile("M", "K", dtype, Layout.TMA_128B, tma_box=(BM, BK)),
                      Tile("K", "N", dtype, Layout.TMA_128B, tma_box=(BK, BOX_N))),
            out_specs=(Tile("M", "N", out_dtype, Layout.TMA_128B,
                            tma_box=(32, cfg.out_cols)),),
            block=(THREADS, 1, 1), grid=lambda M, N: (-(-M // BM), -(-N // bn), 1))
    def gemm(A, B, C):
        """C = A @ B on tcgen05 (``build_gemm``'s docstring)."""
        gemm_body(cfg, A, B, C)

    gemm.config = cfg
    return configure(gemm, independent=("M", "N"))


def gemm_body(cfg: GemmConfig, A, B, C):
    """One 128 x bn tile per CTA: the three warp roles around one accumulator."""
    K, N = A.shape[1], B.shape[1]
    check_shapes("gemm", K, N)
    ktiles = -(-K // BK)
    a_map, b_map, c_map = A.tma_desc(), B.tma_desc(), C.tma_desc()
    sh = Shared(cfg)
    roles = Roles()
    tmem = setup(cfg, sh, roles)
    m0 = reg.from_(ptx.special.ctaid.x(), u32) * BM
    n0 = reg.from_(ptx.special.ctaid.y(), u32) * cfg.bn

    with ptx.if_(roles.is_producer_warp):
        with ptx.if_(ptx.warp.elect_one()):
            Producer(cfg, sh, a_map, b_map).load_tile(m0, n0, ktiles)
    with ptx.if_(roles.is_mma_warp):
        with ptx.if_(ptx.warp.elect_one()):
            MmaIssuer(cfg, sh).mma_tile(tmem, ktiles, sh.acc_full[0])
    with ptx.if_(roles.is_epilogue):
        wait(sh.acc_full[0], 0)
        ptx.tcgen05.fence_after_thread_sync()
        ep = TmaEpilogue(cfg, sh, roles, c_map)
        ep.store_tile(tmem + (roles.quarter << 21), m0, n0)
        ep.finish()
    teardown(cfg, roles, tmem)
    ptx.ret()


def reference(a, b):
    """NumPy ``a @ b`` in float64 (the products of bf16/f16 values are exact there)."""
    import numpy as np

    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
