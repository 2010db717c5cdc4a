"""Persistent GEMM on Blackwell (sm_100a): ``C = A @ B`` with one CTA per SM walking a static
tile schedule, two TMEM accumulators so the epilogue of one tile overlaps the MMAs of the
next, and dedicated producer, MMA and epilogue warps.

    from examples.blackwell.persistent_gemm import build_persistent_gemm
    k = build_persistent_gemm(bf16, ctas=148)   # 128x256 tiles, 4 stages, 2 accumulators
    c = k(a, b)                      # a: bf16[M, K], b: bf16[K, N] (row-major) -> f32[M, N]

``build_persistent_gemm``'s docstring describes the schedule, the warps and the pipeline;
``docs/examples/blackwell_persistent_gemm.md`` draws them.

    python examples/blackwell/persistent_gemm.py   # ptxas, SASS, interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/blackwell/persistent_gemm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.blackwell"

from jax_pyptx import Layout, Tile, kernel, ptx
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import bf16, f32

from . import ARCH
from .gemm import reference  # noqa: F401  (the same product)
from .sm100 import (
    BK, BM, BOX_N, THREADS, GemmConfig, Producer, Roles, Shared, TmaEpilogue, check_shapes,
    persistent_roles, setup, static_tiles, teardown,
)

B200_SMS = 148


def build_persistent_gemm(dtype=bf16, out_dtype=f32, *, bn: int = 256, stages: int = 4,
                          ctas: int | None = None):
    """``C[M, N] = A[M, K] @ B[K, N]`` (A, B row-major bf16/f16; f32 accumulation in TMEM;
    C f32, bf16 or f16), persistent: ``ctas`` CTAs each compute every ``ctas``-th tile.

    Parameters:
        dtype, out_dtype: as ``gemm.build_gemm``.
        bn: the tile's columns, 64 / 128 / 192 / 256; the tile is ``128 x bn`` and the two
            accumulators take ``2 * bn`` TMEM columns (all 512 at bn=256).
        stages: depth of the shared-memory ring (48 KiB a stage at bn=256).
        ctas: the grid: one CTA per SM (its whole shared memory and TMEM make it one CTA
            per SM anyway). Default: the SM count of the visible GPU, else 148 (B200). A
            problem with fewer tiles launches one CTA per tile.

    **Schedule** (static): CTA ``c`` takes tiles ``c, c + ctas, c + 2 ctas, ...``; tile
    ``t`` is M tile ``t % m_tiles`` of N column ``t / m_tiles``, so the CTAs running at once
    work on neighbouring M tiles of few N columns and share B's column panels in L2. Every
    role walks the same sequence (``sm100.static_tiles``, a PTX loop).

    **Warps** (192 threads): warp 0 (producer, one elected lane) streams every tile's k
    tiles through one ``stages``-deep TMA ring (its (stage, phase) continues from tile to
    tile, so the loads of tile i+1 start while tile i computes); warp 1 (MMA, one elected
    lane) alternates between accumulators 0 and 1: before tile ``i`` it waits on
    ``acc_empty[i % 2]``, issues the tile's ``tcgen05.mma`` into TMEM columns
    ``(i % 2) * bn ..`` and commits ``acc_full[i % 2]``; warps 2-5 (epilogue) wait on
    ``acc_full[i % 2]``, read the accumulator chunk by chunk (``tcgen05.ld.32x32b``),
    arrive on ``acc_empty[i % 2]`` (all 128 threads) right after the last read and store
    the tile through staging buffers and TMA stores.

    **Overlap.** With two accumulators the MMA warp runs tile ``i + 1`` into the other
    buffer while the epilogue drains tile ``i``; it only waits when it is two tiles ahead.
    ``acc_empty`` is the epilogue's release (count 128), ``acc_full`` the tensor core's
    completion (``tcgen05.commit``, count 1).

    **Shapes.** As ``gemm.build_gemm``: any ``M``, ``N`` and ``K`` multiples of 8 (TMA
    zero-fills and clips). ``M`` and ``N`` are not independent: the schedule spans the
    whole problem.
    """
    if ctas is None:
        from jax_pyptx.toolchain.device import sm_count

        ctas = sm_count() or B200_SMS
    if not isinstance(ctas, int) or isinstance(ctas, bool) or ctas <= 0:
        raise ValueError(f"build_persistent_gemm: ctas must be a positive int, got {ctas!r}")
    cfg = GemmConfig("build_persistent_gemm", dtype, out_dtype, bn, stages, acc_stages=2)

    def grid(M, N):
        tiles = -(-M // BM) * -(-N // bn)
        return (min(ctas, tiles), 1, 1)

    @kernel(arch=ARCH,
            in_specs=(Tile("M", "K", dtype, Layout.TMA_128B, tma_box=(BM, BK)),
                      Tile("K", "N", dtype, Layout.TMA_128B, tma_box=(BK, BOX_N))),
            out_specs=(Tile("M", "N", out_dtype, Layout.TMA_128B,
                            tma_box=(32, cfg.out_cols)),),
            block=(THREADS, 1, 1), grid=grid)
    def persistent_gemm(A, B, C):
        """C = A @ B, persistent (``build_persistent_gemm``'s docstring)."""
        persistent_body(cfg, A, B, C)

    persistent_gemm.config = cfg
    persistent_gemm.ctas = ctas
    return configure(persistent_gemm)


def persistent_body(cfg: GemmConfig, A, B, C):
    """The three roles, each looping over this CTA's tiles."""
    M, K = A.shape
    N = B.shape[1]
    check_shapes("persistent_gemm", K, N)
    ktiles = -(-K // BK)
    m_tiles, n_tiles = -(-M // BM), -(-N // cfg.bn)
    a_map, b_map, c_map = A.tma_desc(), B.tma_desc(), C.tma_desc()
    sh = Shared(cfg)
    roles = Roles()
    tmem = setup(cfg, sh, roles)

    prod = Producer(cfg, sh, a_map, b_map)
    ep = TmaEpilogue(cfg, sh, roles, c_map)

    def tiles():
        return static_tiles(m_tiles, n_tiles, cfg.bn)

    def store(tile, taddr, release):
        ep.store_tile(taddr, tile[0], tile[1], on_loaded=release)

    persistent_roles(cfg, sh, roles, tmem, tiles, ktiles,
                     load=lambda tile: prod.load_tile(tile[0], tile[1], ktiles), store=store)
    with ptx.if_(roles.is_epilogue):
        ep.finish()
    teardown(cfg, roles, tmem)
    ptx.ret()


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
