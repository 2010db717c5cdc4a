"""Grouped GEMM on Blackwell (sm_100a): ``jax.lax.ragged_dot`` as one persistent tcgen05
kernel. The rows of ``A[T, K]`` are split into ``G`` consecutive groups by a problem table in
global memory (``sizes[G]``, read by the kernel at run time); group ``g``'s rows are
multiplied by ``B[g]``:

    C[r0_g : r0_g + sizes[g]] = A[r0_g : r0_g + sizes[g]] @ B[g],   r0_g = sizes[0] + ... + sizes[g-1]

and the rows past ``sum(sizes)`` are zero.

    from examples.blackwell.grouped_gemm import build_grouped_gemm
    k = build_grouped_gemm(bf16, ctas=148)
    c = k(a, b, sizes)        # a: bf16[T, K], b: bf16[G, K, N], sizes: s32[G] -> f32[T, N]

``build_grouped_gemm``'s docstring describes the schedule and the warps;
``docs/examples/blackwell_grouped_gemm.md`` draws them.

    python examples/blackwell/grouped_gemm.py   # ptxas, SASS, interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/blackwell/grouped_gemm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.blackwell"

from jax_pyptx import Layout, Tile, kernel, ptx, reg
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import bf16, f32, s32, u32, u64

from . import ARCH
from .persistent_gemm import B200_SMS
from .sm100 import (
    BK, BM, BOX_N, THREADS, DirectEpilogue, GemmConfig, Producer, Roles, Shared, check_shapes,
    divmod_const, persistent_roles, setup, teardown,
)


def build_grouped_gemm(dtype=bf16, out_dtype=f32, *, bn: int = 256, stages: int = 4,
                       ctas: int | None = None):
    """The grouped product of the module docstring: ``a: dtype[T, K]``, ``b: dtype[G, K, N]``,
    ``sizes: s32[G]`` (non-negative) -> ``out_dtype[T, N]``; f32 accumulation in TMEM.

    Parameters:
        dtype: bf16 or f16 (A and B); out_dtype: f32, bf16 or f16 (C).
        bn: tile columns, 64 / 128 / 192 / 256 (tiles are ``128 x bn``; two accumulators).
        stages: depth of the TMA ring (48 KiB a stage at bn=256).
        ctas: the persistent grid (default: the visible GPU's SM count, else 148).

    **Problem table.** ``sizes`` lives in global memory: the tile count is only known on the
    device. Group ``g`` has ``ceil(sizes[g] / 128) * ceil(N / bn)`` tiles, numbered after
    those of the groups before it; CTA ``c`` takes tiles ``c, c + ctas, ...``. Every role
    walks the table with the same PTX loop (``GroupSchedule``): read ``sizes[g]`` (clamped
    to the rows left), skip whole groups whose tiles are all before this CTA's next tile,
    and yield (group, first row, first column, group end) per tile. A tile's A box may run
    into the next group's rows; those accumulator rows are never stored.

    **Loads.** A through a 2-d tensor map (box 128 x 64), B through a 3-d one over
    ``[G, K, N]`` (box 1 x 64 x 64, coordinates (n, k, g)), so a group's K and N edges are
    zero-filled inside that group and never read the next group's B.

    **Warps** (192 threads) as ``persistent_gemm.build_persistent_gemm``: a TMA producer,
    an MMA warp with two TMEM accumulators, four epilogue warps; the epilogue stores with
    predicated ``st.global.v4`` (rows below the group's end, columns below N: a TMA store
    would clip at T, not at the group boundary). After their tiles the epilogue warps write
    zeros to the rows past ``sum(sizes)`` (grid-stride over the CTAs).

    **Shapes.** ``T``, ``K``, ``G``, ``N`` are shape variables; ``K`` and ``N`` multiples of
    8. Group sizes beyond the rows left are clamped (the groups end at ``T``).
    """
    if ctas is None:
        from jax_pyptx.toolchain.device import sm_count

        ctas = sm_count() or B200_SMS
    if not isinstance(ctas, int) or isinstance(ctas, bool) or ctas <= 0:
        raise ValueError(f"build_grouped_gemm: ctas must be a positive int, got {ctas!r}")
    cfg = GemmConfig("build_grouped_gemm", dtype, out_dtype, bn, stages, acc_stages=2,
                     epilogue="direct")

    @kernel(arch=ARCH,
            in_specs=(Tile("T", "K", dtype, Layout.TMA_128B, tma_box=(BM, BK)),
                      Tile("G", "K", "N", dtype, Layout.TMA_128B, tma_box=(1, BK, BOX_N)),
                      Tile("G", s32)),
            out_specs=(Tile("T", "N", out_dtype),),
            block=(THREADS, 1, 1), grid=(ctas, 1, 1))
    def grouped_gemm(A, B, sizes, C):
        """C = ragged_dot(A, B, sizes) (``build_grouped_gemm``'s docstring)."""
        grouped_body(cfg, A, B, sizes, C)

    grouped_gemm.config = cfg
    grouped_gemm.ctas = ctas
    return configure(grouped_gemm)


class GroupSchedule:
    """This CTA's tiles of a grouped problem (``build_grouped_gemm``'s docstring), walked
    from the ``sizes`` table in global memory. ``tiles()`` is a PTX loop yielding
    ``(g, m0, n0, row_end)`` registers per tile; afterwards ``row`` holds the rows the
    groups cover (``min(sum(sizes), T)``)."""

    def __init__(self, sizes, G: int, T: int, n_tiles: int, bn: int):
        self.sizes, self.G, self.T, self.n_tiles, self.bn = sizes, G, T, n_tiles, bn
        self.row = None

    def tiles(self):
        G, T, n_tiles = self.G, self.T, self.n_tiles
        t = reg.from_(ptx.special.ctaid.x(), u32)              # this CTA's next tile
        step = reg.from_(ptx.special.nctaid.x(), u32)
        g = reg.scalar(u32, 0)
        base = reg.scalar(u32, 0)                               # first tile of group g
        row = self.row = reg.scalar(u32, 0)                     # first row of group g
        size, gtiles, left = reg.scalar(u32), reg.scalar(u32), reg.scalar(u32)
        table = self.sizes.ptr()

        def read_group():
            ptx.inst.ld.global_.u32(size, ptx.addr(table + reg.cvt(g << 2, u64)))
            ptx.inst.sub.u32(left, reg.scalar(u32, T), row)
            ptx.inst.min.u32(size, size, left)                  # groups end at T
            ptx.inst.add.u32(gtiles, size, BM - 1)
            ptx.inst.shr.u32(gtiles, gtiles, BM.bit_length() - 1)
            ptx.inst.mul.lo.u32(gtiles, gtiles, n_tiles)

        read_group()
        with ptx.while_(lambda: g < G):
            local = t - base
            with ptx.if_(local < gtiles):
                mt, nt = divmod_const(local, n_tiles)
                yield g, row + mt * BM, nt * self.bn, row + size
                ptx.inst.add.u32(t, t, step)
            with ptx.else_():
                ptx.inst.add.u32(base, base, gtiles)
                ptx.inst.add.u32(row, row, size)
                ptx.inst.add.u32(g, g, 1)
                with ptx.if_(g < G):
                    read_group()


def grouped_body(cfg: GemmConfig, A, B, sizes, C):
    """The persistent roles over the group schedule, then the zero tail."""
    T, K = A.shape
    G, _, N = B.shape
    check_shapes("grouped_gemm", K, N)
    ktiles = -(-K // BK)
    n_tiles = -(-N // cfg.bn)
    a_map, b_map = A.tma_desc(), B.tma_desc()
    sh = Shared(cfg)
    roles = Roles()
    tmem = setup(cfg, sh, roles)

    group = {}
    prod = Producer(cfg, sh, a_map, b_map, b_coords=lambda k, n: (n, k, group["g"]))
    ep = DirectEpilogue(cfg, roles, C)
    schedules = []

    def tiles():
        s = GroupSchedule(sizes, G, T, n_tiles, cfg.bn)
        schedules.append(s)
        return s.tiles()

    def load(tile):
        group["g"] = tile[0]
        prod.load_tile(tile[1], tile[2], ktiles)

    def store(tile, taddr, release):
        ep.store_tile(taddr, tile[1], tile[2], tile[3], on_loaded=release)

    persistent_roles(cfg, sh, roles, tmem, tiles, ktiles, load, store)
    with ptx.if_(roles.is_epilogue):
        zero_tail(cfg, roles, C, schedules[-1].row, T, N)
    teardown(cfg, roles, tmem)
    ptx.ret()


def zero_tail(cfg: GemmConfig, roles: Roles, C, first, T: int, N: int):
    """Rows ``first ..`` of C (past the groups) are zero: the tail is ``(T - first) * N``
    elements of 16-byte pieces, which the epilogue threads of all CTAs clear grid-stride
    (thread ``i`` of CTA ``c`` takes pieces ``i + 128 c``, ``+ 128 * nctaid``, ...:
    consecutive threads write consecutive 16 bytes)."""
    per_row = N * cfg.out_dtype.nbytes // 16                # 16-byte pieces per row
    end = reg.scalar(u64, T * per_row)
    i = reg.cvt(first, u64) * per_row + reg.cvt(
        (reg.from_(ptx.special.ctaid.x(), u32) << 7) + (roles.tid - 64), u64)
    step = reg.cvt(reg.from_(ptx.special.nctaid.x(), u32) << 7, u64)
    zero = reg.scalar(u32, 0)
    base = C.ptr()
    with ptx.while_(lambda: i < end):
        ptx.inst.st.global_.v4.b32(ptx.addr(base + (i << 4)), [zero] * 4)
        ptx.inst.add.u64(i, i, step)


def reference(a, b, sizes):
    """NumPy ragged product in float64: group ``g``'s rows times ``b[g]``; rows past the
    groups are zero."""
    import numpy as np

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    out = np.zeros((a.shape[0], b.shape[2]))
    r = 0
    for g, s in enumerate(np.asarray(sizes)):
        s = int(min(max(int(s), 0), a.shape[0] - r))
        out[r:r + s] = a[r:r + s] @ b[g]
        r += s
    return out


def inputs(kernel, shape, rng):
    """A: [T, K], B: [G, K, N] normal; group sizes covering all but the last T/8 rows
    (``examples.library.grouped_rows``), with an empty group when G > 2."""
    import numpy as np

    from ..library import grouped_rows

    T, K, G, N = shape["T"], shape["K"], shape["G"], shape["N"]
    dt = kernel.config.dtype.np_dtype
    a = rng.standard_normal((T, K)).astype(np.float32).astype(dt)
    b = rng.standard_normal((G, K, N)).astype(np.float32).astype(dt)
    used = grouped_rows(shape)
    cuts = np.sort(rng.integers(0, used + 1, G - 1))
    sizes = np.diff(np.concatenate([[0], cuts, [used]])).astype(np.int32)
    if G > 2:
        sizes[1], sizes[2] = 0, sizes[2] + sizes[1]
    return a, b, sizes


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
