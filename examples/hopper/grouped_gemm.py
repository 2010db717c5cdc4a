"""Grouped GEMM on Hopper (sm_90a), the mixture-of-experts kind (``jax.lax.ragged_dot``):
``C[rows of g] = A[rows of g] @ B[g]`` for consecutive groups of rows, from a per-group problem
table in global memory, on a persistent warp-specialized wgmma kernel whose TMA tensor maps
are built on the device, one per group.

    from examples.hopper.grouped_gemm import build_grouped_gemm, grouped_gemm
    k = build_grouped_gemm(bf16)            # 128x128x64 tiles, 4 stages, 132 persistent CTAs
    c, maps = k(a, b, group_sizes)          # a: bf16[T, K], b: bf16[G, K, N], sizes: s32[G]
    c = grouped_gemm(a, b, group_sizes)     # the same, C only

``build_grouped_gemm``'s docstring describes the schedule, the tensor maps and the warps;
``docs/examples/hopper_grouped_gemm.md`` explains the pattern.

    python examples/hopper/grouped_gemm.py  # ptxas resources, SASS check, interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/hopper/grouped_gemm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.hopper"

from jax_pyptx import SpecializationError, Tile, kernel, ptx, reg, smem
from jax_pyptx.types import b32, bf16, f16, f32, s32, u8, u32, u64

from .gemm import GemmConfig, check_plan, mainloop
from .sm90 import (
    CONSUMER_REGS, LAUNCH_BOUNDS, PRODUCER_REGS, SW128, EpilogueStore, StageRing, barrier_at,
    check_smem, grouped_order,
)

ARCH = "sm_90a"
WARPGROUP = 128
MAP_BYTES = 128               # one tensor map
SLOTS = 3                     # tensor maps per (CTA, group): A, C of consumer 0, C of consumer 1


def build_grouped_gemm(dtype=bf16, out_dtype=f32, *, bm: int = 128, bn: int = 128,
                       stages: int = 4, ctas: int = 132, group_m: int | None = 16):
    """Grouped GEMM: ``A: [T, K]`` holds the rows of every group back to back, group ``g``
    owning ``group_sizes[g]`` rows starting at ``sum(group_sizes[:g])``; ``B: [G, K, N]``;
    ``C[rows of g] = A[rows of g] @ B[g]`` (``C: [T, N]``, rows past ``sum(group_sizes)``
    are not written). A and B are ``dtype`` (bf16/f16), accumulation f32, C ``out_dtype``.

    Parameters:
        dtype, out_dtype, bm, bn, stages: as for ``build_gemm`` (tile ``bm x bn x 64``).
        ctas: the persistent grid (132: the SMs of an H100 SXM); CTA ``c`` computes tiles
            ``c, c + ctas, c + 2 ctas, ...`` of the whole problem.
        group_m: the order of a group's tiles: ``group_m`` M tiles down one N tile, then the
            next N tile, and after every N tile the next ``group_m`` M tiles
            (``sm90.grouped_order``: the tiles that run at once share their A and B tiles in
            L2); None: N fastest (a wave of an 8192-wide N then reads all of the group's B
            from memory).

    Returns a kernel of ``(A, B, group_sizes)`` with two outputs: ``C`` and ``maps``, the
    tensor-map workspace (``u8[ctas, G, 3 * 128]``; see below). ``grouped_gemm(a, b, sizes)``
    returns C only.

    **The problem table** is ``group_sizes`` (``s32[G]``, in global memory, read by the
    kernel as it goes). Tiles are numbered group by group, ``ceil(rows_g / bm) x
    ceil(N / bn)`` per group, in ``group_m``'s order. Every role of a CTA walks the same sequence: to reach
    tile ``t`` it moves its group cursor (group ``g``, its first row and its first and
    end tile numbers) forward over the table until ``t`` falls in group ``g``.

    **Tensor maps on the device.** A group's rows are a window of A and C: rows ``r0 .. r0 +
    rows_g``. The kernel makes a tensor map for that window, so TMA zero-fills A's rows and
    clips C's rows at the group's end (a tile never reads or writes the next group's rows):
    a warp copies the host map of all of A (C) into shared memory, one lane rewrites two
    fields (``tensormap.replace.tile.global_address`` to ``A + r0 * K`` and ``.global_dim``
    1 to ``rows_g``), the warp copies it to its slot of ``maps`` with
    ``tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu``, and the
    thread that uses it orders its later TMA after that with
    ``fence.proxy.tensormap::generic.acquire.gpu``. Each (CTA, group, role) has its own slot,
    written once: no map is ever changed while a copy that uses it may be in flight. B goes
    through an ordinary 3-D host map (``[G, K, N]``, coordinates ``(n, k, g)``).

    **Warps** as in ``build_gemm`` (``cluster = 1``): a producer warp (its lanes walk the
    schedule and build A's maps; one lane issues the TMA loads of every k tile into the
    ring) and ``bm / 64`` consumer warpgroups (``wgmma``, then the TMA-store epilogue through
    their own map of C). The ring and the epilogue buffers carry on from tile to tile.
    """
    fn = "build_grouped_gemm"
    if not isinstance(ctas, int) or ctas < 1:
        raise ValueError(f"{fn}: ctas must be a positive int, got {ctas!r}")
    check_plan(fn, dtype, out_dtype, bm, bn, 64, stages, 1, group_m)
    cfg = GemmConfig(dtype, out_dtype, bm, bn, 64, stages, 1, group_m)
    check_smem(fn, cfg.smem_bytes + SLOTS * MAP_BYTES, f"stages={stages} of bm={bm}, bn={bn}")
    cfg.ctas = ctas

    @kernel(arch=ARCH, in_specs=(Tile("T", "K", dtype), Tile("G", "K", "N", dtype),
                                 Tile("G", s32)),
            # rows past sum(group_sizes), and the map slots of CTAs a group gives no tile,
            # are not written: both outputs are partial (the sanitizer does not report them)
            out_specs=(Tile("T", "N", out_dtype, partial=True),
                       Tile(ctas, "G", SLOTS * MAP_BYTES, u8, partial=True)),
            block=(cfg.threads, 1, 1), reqntid=True, raw_directives=LAUNCH_BOUNDS,
            grid=(ctas, 1, 1))
    def grouped_gemm(A, B, sizes, C, maps):
        K, N = A.shape[1], B.shape[2]
        if K % 8 or N % 8:
            raise SpecializationError(
                f"grouped_gemm: K and N must be multiples of 8 (TMA row strides are multiples "
                f"of 16 bytes), got K={K}, N={N}")
        grouped_body(cfg, A, B, sizes, C, maps)

    grouped_gemm.config = cfg
    return grouped_gemm


class Schedule:
    """A role's cursor over the tile sequence (``build_grouped_gemm``'s docstring): ``g``,
    the group's first ``row``, ``size`` (its rows), ``start`` and ``end`` (its first tile
    number and one past its last)."""

    def __init__(self, sizes_ptr, groups: int, n_tiles: int, bm: int, group_m: int | None):
        self.ptr, self.groups, self.n_tiles, self.bm = sizes_ptr, groups, n_tiles, bm
        self.group_m = group_m
        self.g = reg.scalar(u32, 0)
        self.row = reg.scalar(u32, 0)
        self.size = reg.scalar(u32)
        ptx.inst.ld.global_.u32(self.size, ptx.addr(sizes_ptr))
        self.start = reg.scalar(u32, 0)
        self.end = self._tiles(self.size)

    def _m_tiles(self, size):
        return (size + (self.bm - 1)) >> (self.bm.bit_length() - 1)

    def _tiles(self, size):
        return self._m_tiles(size) * self.n_tiles

    def seek(self, t):
        """Move forward to the group that holds tile ``t`` (``g == groups``: past the end)."""
        with ptx.while_(lambda: (t >= self.end) & (self.g < self.groups)):
            ptx.inst.add.u32(self.g, self.g, 1)
            ptx.inst.add.u32(self.row, self.row, self.size)
            with ptx.if_(self.g < self.groups):
                at = self.ptr + reg.cvt(self.g, u64) * 4
                ptx.inst.ld.global_.u32(self.size, ptx.addr(at))
                ptx.inst.mov.u32(self.start, self.end)
                ptx.inst.add.u32(self.end, self.end, self._tiles(self.size))

    def tile(self, t):
        """(m tile in the group, n tile) of tile ``t`` of the current group, in ``group_m``'s
        order (``build_grouped_gemm``), else N fastest."""
        local = t - self.start
        if self.group_m is not None:
            return grouped_order(local, self._m_tiles(self.size), self.n_tiles, self.group_m)
        if self.n_tiles & (self.n_tiles - 1) == 0:
            sh = self.n_tiles.bit_length() - 1
            return local >> sh, local & (self.n_tiles - 1)
        return local / self.n_tiles, local % self.n_tiles


def build_group_map(template, slot, staging, lane, address, rows):
    """Warp-collective: the tensor map ``template`` (a u64 global address: a host map) with
    its global address and its outer dimension replaced, written to ``slot`` (u64, global)
    and made visible to the tensor-map proxy. ``staging``: 128 bytes of this warp's shared
    memory (128-byte aligned); ``address`` (u64) and ``rows`` (u32) the new field values.
    Lane 0 then has to order its use after it (``acquire``, done here for lane 0)."""
    word = reg.scalar(b32)
    ptx.inst.ld.global_.b32(word, ptx.addr(template + reg.cvt(lane << 2, u64)))
    ptx.inst.st.shared.b32(ptx.addr(staging + (lane << 2)), word)
    ptx.bar.warp_sync()
    with ptx.if_(lane == 0):
        st64 = reg.cvt(staging, u64)
        ptx.inst.tensormap.replace.tile.global_address.shared__cta.b1024.b64(
            ptx.addr(st64), address)
        ptx.inst.tensormap.replace.tile.global_dim.shared__cta.b1024.b32(ptx.addr(st64), 1,
                                                                          rows)
    ptx.bar.warp_sync()
    copy = ptx.inst.tensormap.cp_fenceproxy.global_.shared__cta.tensormap__generic
    copy.release.gpu.sync.aligned(ptx.addr(slot), ptx.addr(reg.cvt(staging, u64)), MAP_BYTES)
    with ptx.if_(lane == 0):
        ptx.fence.proxy_tensormap_acquire(slot)


def grouped_body(cfg, A, B, sizes, C, maps):
    """The persistent kernel body (``build_grouped_gemm``'s docstring)."""
    K, N = A.shape[1], B.shape[2]
    G = sizes.shape[0]
    ktiles = -(-K // cfg.bk)
    n_tiles = -(-N // cfg.bn)
    st = cfg.stages

    tid = reg.from_(ptx.special.tid.x(), u32)
    wg = tid >> 7
    lane_in_group = tid & 127
    lane = tid & 31
    cta = reg.from_(ptx.special.ctaid.x(), u32)

    sa = smem.alloc(cfg.dtype, (st, cfg.bm, cfg.bk), swizzle="128B", name="sa")
    sb = smem.alloc(cfg.dtype, (st, cfg.bn // 64, cfg.bk, 64), swizzle="128B", name="sb")
    sc = smem.alloc(cfg.out_dtype, (cfg.consumers, 2, 8192 // cfg.out_dtype.nbytes),
                    swizzle="128B", name="sc")
    staging = smem.alloc(u8, (SLOTS, MAP_BYTES), align=128, name="map_staging")
    full = smem.mbarrier(st, name="full")
    empty = smem.mbarrier(st, name="empty")
    a_map = A.tma_desc(box=(cfg.bm, cfg.bk), swizzle=SW128)            # templates: all rows
    b_map = B.tma_desc(box=(1, cfg.bk, 64), swizzle=SW128)
    c_map = C.tma_desc(box=(64, 128 // cfg.out_dtype.nbytes), swizzle=SW128)
    full_base, empty_base = full.ptr(), empty.ptr()
    # this CTA's slots: maps[cta, g, role]
    slots = maps.ptr() + reg.cvt(cta, u64) * (G * SLOTS * MAP_BYTES)

    with ptx.if_(tid == 0):
        for s in range(st):
            ptx.mbarrier.init(full[s], 1)
            ptx.mbarrier.init(empty[s], cfg.consumers)
        ptx.fence.mbarrier_init()
    ptx.bar.sync(0)

    def slot(sched, role):
        return slots + reg.cvt(sched.g, u64) * (SLOTS * MAP_BYTES) + role * MAP_BYTES

    with ptx.if_(wg == 0):
        # ---------------------------------------------------------------- producer warp
        ptx.misc.setmaxnreg(PRODUCER_REGS, inc=False)
        with ptx.if_(tid < 32):
            ptx.mem.prefetch_tensormap(b_map)
            ring = StageRing(st)
            sched = Schedule(sizes.ptr(), G, n_tiles, cfg.bm, cfg.group_m)
            t = reg.scalar(u32, cta)
            sched.seek(t)
            built = reg.scalar(u32, 0xFFFFFFFF)
            sa_base, sb_base = sa.ptr(), sb.ptr()
            tx = cfg.a_bytes + cfg.b_bytes
            with ptx.while_(lambda: sched.g < G):
                a_group = slot(sched, 0)
                with ptx.if_(sched.g != built):
                    rows_at = A.ptr() + reg.cvt(sched.row, u64) * (K * cfg.dtype.nbytes)
                    build_group_map(a_map, a_group, staging.ptr(), lane,
                                    rows_at, sched.size)
                    ptx.inst.mov.u32(built, sched.g)
                mt, nt = sched.tile(t)
                m0, n0 = mt * cfg.bm, nt * cfg.bn
                with ptx.if_(lane == 0):
                    for kt in ptx.range_(0, ktiles, type=u32):
                        ptx.mbarrier.wait(barrier_at(empty_base, ring.stage), ring.phase ^ 1)
                        bar = barrier_at(full_base, ring.stage)
                        ptx.mbarrier.arrive_expect_tx(bar, tx)
                        k0 = kt * cfg.bk
                        ptx.cp.async_.bulk.tensor_2d(sa_base + ring.stage * cfg.a_bytes,
                                                     a_group, (k0, m0), bar)
                        dst = sb_base + ring.stage * cfg.b_bytes
                        for c in range(cfg.bn // 64):
                            ptx.cp.async_.bulk.tensor_3d(
                                ptx.addr(dst, c * cfg.b_box_bytes), b_map,
                                (n0 + 64 * c if c else n0, k0, sched.g), bar)
                        ring.advance()
                ptx.inst.add.u32(t, t, cfg.ctas)
                sched.seek(t)
    with ptx.else_():
        # ---------------------------------------------------------------- consumers
        ptx.misc.setmaxnreg(CONSUMER_REGS[cfg.consumers], inc=True)
        warp = (tid >> 5) & 3
        w = wg - 1
        acc = reg.array(f32, cfg.bn // 2)
        ring = StageRing(st)
        sched = Schedule(sizes.ptr(), G, n_tiles, cfg.bm, cfg.group_m)
        t = reg.scalar(u32, cta)
        sched.seek(t)
        built = reg.scalar(u32, 0xFFFFFFFF)
        epi = EpilogueStore(cfg.out_dtype, sc.ptr() + w * 16384, 1 + w, None, warp, lane,
                            lane_in_group, persistent=True)
        my_staging = staging.ptr() + (w + 1) * MAP_BYTES
        with ptx.while_(lambda: sched.g < G):
            c_group = slot(sched, 1) + reg.cvt(w, u64) * MAP_BYTES
            with ptx.if_(sched.g != built):
                with ptx.if_(warp == 0):
                    rows_at = C.ptr() + reg.cvt(sched.row, u64) * (N * cfg.out_dtype.nbytes)
                    build_group_map(c_map, c_group, my_staging, lane, rows_at,
                                    sched.size)
                ptx.inst.mov.u32(built, sched.g)
            mt, nt = sched.tile(t)
            mainloop(cfg, ktiles, acc, ring, sa, sb, full_base, empty_base, w, lane_in_group)
            epi.c_map = c_group
            epi.store(acc, cfg.bn, mt * cfg.bm + (w << 6), nt * cfg.bn)
            ptx.inst.add.u32(t, t, cfg.ctas)
            sched.seek(t)
        epi.drain()
    ptx.ret()


def grouped_gemm(a, b, group_sizes, *, kernel=None, **build):
    """``C`` of the grouped GEMM as ``jax.lax.ragged_dot`` gives it: rows past
    ``sum(group_sizes)`` are zeros (the kernel leaves them unwritten; one elementwise select,
    which XLA fuses, zeroes them). JAX arrays; ``kernel`` a ``build_grouped_gemm`` kernel, or
    built from ``build`` and the inputs' dtype."""
    import jax.numpy as jnp

    if kernel is None:
        dt = {"bfloat16": bf16, "float16": f16}[str(a.dtype)]
        kernel = _cached(dt, tuple(sorted(build.items())))
    c = kernel(a, b, group_sizes)[0]
    used = jnp.sum(jnp.asarray(group_sizes, jnp.int32))
    rows = jnp.arange(c.shape[0], dtype=jnp.int32)[:, None]
    return jnp.where(rows < used, c, jnp.zeros((), c.dtype))


_KERNELS: dict = {}


def _cached(dt, build):
    k = _KERNELS.get((dt.name, build))
    if k is None:
        k = _KERNELS[(dt.name, build)] = build_grouped_gemm(dt, **dict(build))
    return k


def reference(a, b, group_sizes):
    """NumPy grouped GEMM in float64 (``jax.lax.ragged_dot``'s rows of the groups). Rows past
    ``sum(group_sizes)`` are NaN: the kernel does not write them (on a GPU they hold whatever
    was in C's memory), so they have no reference (``examples.proof.compare`` skips them)."""
    import numpy as np

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    out = np.full((a.shape[0], b.shape[2]), np.nan)
    r = 0
    for g, n in enumerate(np.asarray(group_sizes)):
        out[r:r + n] = a[r:r + n] @ b[g]
        r += int(n)
    return out


def reference_with_workspace(a, b, group_sizes):
    """``(reference(...), None)``: the kernel's two outputs; the tensor-map workspace holds
    device addresses and has no reference."""
    return reference(a, b, group_sizes), None


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
