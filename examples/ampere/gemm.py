"""GEMM on Ampere (sm_80): ``C = A @ B`` with bf16/f16 inputs and an f32 result, on the tensor
cores through ``mma.sync``, fed by ``ldmatrix`` from shared memory that a multi-stage
``cp.async`` pipeline fills.

    from examples.ampere.gemm import build_gemm
    k = build_gemm(bf16)             # 128x128x32 CTA tile, 8 warps, 3 stages
    c = k(a, b)                      # a: bf16[M, K], b: bf16[K, N] (row-major) -> f32[M, N]

The CTA (``warps_m x warps_n`` warps; 2 x 4 by default) owns a ``bm x bn`` tile of C and walks
K in steps of ``bk``:

* **Pipeline.** Shared memory holds ``stages`` (A, B) tile pairs. Before the loop the CTA
  issues the first ``stages - 1`` tiles; iteration ``kt`` waits until tile ``kt`` has landed
  (``cp.async.wait_group stages-2``, then ``bar.sync``, which also says every warp is done with
  the stage about to be overwritten), issues tile ``kt + stages - 1`` into that stage, commits
  the group (an empty one past the end, so the count stays uniform) and computes on tile
  ``kt`` while the copies of the next ones are in flight.
* **Copies.** Each thread issues 16-byte ``cp.async.cg`` chunks (8 elements): A's tile is
  ``bm`` rows of ``bk`` elements, B's ``bk`` rows of ``bn``. Chunks are stored XOR-swizzled
  (chunk ``c`` of row ``r`` lands at chunk ``c ^ f(r)``, ``f(r) = (r >> 1) & 3`` for 64-byte
  rows, ``r & 7`` for rows of 128 bytes or more), so the eight 16-byte rows one ``ldmatrix``
  phase reads fall in eight different bank groups.
* **Fragments.** Per 16-wide k step a warp loads, for each 16-row slice of its ``wm x wn``
  tile, A's m16k16 fragment with one ``ldmatrix.x4`` (lane ``l`` gives the address of row
  ``l % 8`` of 8x8 matrix ``l / 8``: rows 0-7/8-15 x k 0-7/8-15, which is the a0..a3 order of
  ``mma.m16n8k16``), and for each pair of n8 columns B's two k16n8 fragments with one
  ``ldmatrix.x4.trans`` (B is row-major [K, N]: the transpose gives each lane the k-pairs of
  one column, the "col" operand). Then ``(wm/16) * (wn/8)`` ``mma.sync.m16n8k16.row.col
  .f32.bf16.bf16.f32`` accumulate into registers: lane ``l`` holds C rows ``l/4`` and
  ``l/4 + 8`` of each m16n8 tile, columns ``2*(l%4)`` and ``+1``.
* **Epilogue.** Each lane stores its accumulator pairs with ``st.global.v2.f32``.

Ragged edges: any ``M``; ``N`` and ``K`` multiples of 8 (a 16-byte chunk never straddles the
edge and rows stay 16-byte aligned). A chunk past ``M``, ``N`` or ``K`` is a ``cp.async`` with
``src-size`` 0, which fills its 16 bytes of shared memory with zeros and reads nothing (its
source address is clamped to the tensor's start); stores past ``M`` or ``N`` are predicated
off. Shapes that tile exactly get none of this code: ``M``, ``N`` and ``K`` are known when the
kernel is traced.

    python examples/ampere/gemm.py   # ptxas resources + interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/ampere/gemm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.ampere"

from jax_pyptx import SpecializationError, Tile, kernel, ptx, reg, smem
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import bf16, f32, u32, u64

from . import ARCH


def build_gemm(dtype=bf16, *, bm: int = 128, bn: int = 128, bk: int = 32, warps_m: int = 2,
               warps_n: int = 4, stages: int = 3):
    """``C[M, N] (f32) = A[M, K] @ B[K, N]`` for ``dtype`` (bf16 or f16) A and B, row-major.

    Parameters:
        dtype: the input type, bf16 or f16 (accumulation and output are f32).
        bm, bn, bk: the CTA tile; ``bk`` is 32 or 64, ``bm / warps_m`` and ``bn / warps_n``
            (the warp tile) multiples of 16.
        warps_m, warps_n: the warp grid of a CTA (``32 * warps_m * warps_n`` threads).
        stages: shared-memory stages of the cp.async pipeline (2 or more; 3 by default:
            48 KiB of static shared memory for the default tile).

    Grid ``(ceil(N / bn), ceil(M / bm))``. ``M``, ``N`` and ``K`` are shape variables: any
    ``M``, ``N`` and ``K`` multiples of 8 (module doc, "Ragged edges"); ``M`` and ``N`` are
    independent (sharded ``jit`` splits A's rows or B's columns with no all-gather).
    """
    fn = "build_gemm"
    if dtype.name not in ("bf16", "f16"):
        raise ValueError(f"{fn}: dtype must be bf16 or f16, got {dtype.name}")
    if bk not in (32, 64):
        raise ValueError(f"{fn}: bk must be 32 or 64, got {bk!r}")
    for name, v in (("warps_m", warps_m), ("warps_n", warps_n)):
        if not isinstance(v, int) or v <= 0:
            raise ValueError(f"{fn}: {name} must be a positive int, got {v!r}")
    threads = 32 * warps_m * warps_n
    wm, wn = bm // warps_m, bn // warps_n
    if bm % warps_m or bn % warps_n or wm % 16 or wn % 16:
        raise ValueError(f"{fn}: the warp tile bm/warps_m x bn/warps_n = {bm}/{warps_m} x "
                         f"{bn}/{warps_n} must be multiples of 16")
    if bn * 2 < 128:
        raise ValueError(f"{fn}: bn must be at least 64 (128-byte rows of B), got {bn}")
    if threads > 1024 or (bm * bk // 8) % threads or (bk * bn // 8) % threads:
        raise ValueError(f"{fn}: {threads} threads must divide the {bm * bk // 8} + "
                         f"{bk * bn // 8} 16-byte chunks of a stage")
    if not isinstance(stages, int) or stages < 2:
        raise ValueError(f"{fn}: stages must be an int >= 2, got {stages!r}")
    cfg = _Config(dtype, bm, bn, bk, warps_m, warps_n, stages)

    @kernel(arch=ARCH, in_specs=(Tile("M", "K", dtype), Tile("K", "N", dtype)),
            out_specs=(Tile("M", "N", f32),), block=(threads, 1, 1),
            grid=lambda M, N: (-(-N // bn), -(-M // bm), 1))
    def gemm(A, B, C):
        """C = A @ B (f32) for bf16/f16 A [M, K] and B [K, N] (module docstring)."""
        _gemm_body(cfg, A, B, C)

    gemm.config = cfg
    return configure(gemm, independent=("M", "N"))


class _Config:
    """The tile, warp and pipeline shape of one GEMM kernel (trace-time constants)."""

    def __init__(self, dtype, bm, bn, bk, warps_m, warps_n, stages):
        self.dtype, self.bm, self.bn, self.bk = dtype, bm, bn, bk
        self.warps_m, self.warps_n, self.stages = warps_m, warps_n, stages
        self.threads = 32 * warps_m * warps_n
        self.wm, self.wn = bm // warps_m, bn // warps_n
        self.esize = dtype.nbytes
        self.row_a = bk * self.esize              # bytes of one smem row of A's tile
        self.row_b = bn * self.esize
        self.stage_a = bm * self.row_a            # bytes of one stage of A / of B
        self.stage_b = bk * self.row_b

    def __repr__(self):
        return (f"gemm {self.dtype.name} tile {self.bm}x{self.bn}x{self.bk}, warps "
                f"{self.warps_m}x{self.warps_n}, {self.stages} stages")


def _swizzle_term(row, row_bytes: int):
    """``f(row)`` of the XOR swizzle (module doc): chunk ``c`` of ``row`` is stored at chunk
    ``c ^ f(row)``."""
    return (row >> 1) & 3 if row_bytes == 64 else row & 7


def _swizzle(row, chunk, row_bytes: int):
    return chunk ^ _swizzle_term(row, row_bytes)


def _gemm_body(cfg: _Config, A, B, C):
    M, K = A.shape
    N = B.shape[1]
    if K % 8 or N % 8:
        raise SpecializationError(
            f"gemm: K and N must be multiples of 8 (16-byte rows of bf16/f16), got K={K}, "
            f"N={N}")
    bm, bn, bk, st, es = cfg.bm, cfg.bn, cfg.bk, cfg.stages, cfg.esize
    ktiles = -(-K // bk)
    m_edge, n_edge, k_edge = M % bm != 0, N % bn != 0, K % bk != 0

    tid = reg.from_(ptx.special.tid.x(), u32)
    lane = tid & 31
    warp = tid >> 5
    warp_m, warp_n = _divmod(warp, cfg.warps_n)
    m0 = reg.from_(ptx.special.ctaid.y(), u32) * bm
    n0 = reg.from_(ptx.special.ctaid.x(), u32) * bn
    sa = smem.alloc(cfg.dtype, (st, bm, bk), align=128, name="smem_a")
    sb = smem.alloc(cfg.dtype, (st, bk, bn), align=128, name="smem_b")
    sa_base, sb_base = sa.ptr(), sb.ptr()

    # ---- the copies of one stage: this thread's chunks, addresses and edge predicates
    a_cpr, b_cpr = bk // 8, bn // 8                        # chunks per smem row
    a_rows_step, b_rows_step = cfg.threads // a_cpr, cfg.threads // b_cpr
    a_iters = bm * bk // 8 // cfg.threads
    b_iters = bk * bn // 8 // cfg.threads
    a_row, a_kc = _divmod(tid, a_cpr)
    b_row, b_nc = _divmod(tid, b_cpr)
    a_dst = sa_base + a_row * cfg.row_a + (_swizzle(a_row, a_kc, cfg.row_a) << 4)
    b_dst = sb_base + b_row * cfg.row_b + (_swizzle(b_row, b_nc, cfg.row_b) << 4)
    a_m = m0 + a_row                                       # 64-bit offsets: M * K may pass 2**32
    a_src = A.ptr() + (reg.cvt(a_m, u64) * K + reg.cvt(a_kc << 3, u64)) * es
    b_src = B.ptr() + (reg.cvt(b_row, u64) * N + reg.cvt(n0 + (b_nc << 3), u64)) * es
    a_row_ok = [a_m + i * a_rows_step < M for i in range(a_iters)] if m_edge \
        else [None] * a_iters
    b_col_ok = (n0 + (b_nc << 3)) < N if n_edge else None
    a_kc8 = a_kc << 3
    k_left = reg.scalar(u32, K) if k_edge else None      # K minus the k of the next load

    def load_stage(stage):
        """Issue this thread's cp.async chunks of the next k tile into ``stage`` (an int in
        the prologue, a register in the loop)."""
        if isinstance(stage, int):
            ad, bd, a0, b0 = a_dst, b_dst, stage * cfg.stage_a, stage * cfg.stage_b
        else:
            ad, bd, a0, b0 = a_dst + stage * cfg.stage_a, b_dst + stage * cfg.stage_b, 0, 0
        a_k_ok = a_kc8 < k_left if k_edge else None
        for i in range(a_iters):
            ok = _and(a_row_ok[i], a_k_ok)
            _copy(ptx.addr(ad, a0 + i * a_rows_step * cfg.row_a), a_src,
                  i * a_rows_step * K * es, ok, A)
        for i in range(b_iters):
            b_k_ok = (b_row + i * b_rows_step) < k_left if k_edge else None
            ok = _and(b_col_ok, b_k_ok)
            _copy(ptx.addr(bd, b0 + i * b_rows_step * cfg.row_b), b_src,
                  i * b_rows_step * N * es, ok, B)
        # the next k tile
        ptx.inst.add.u64(a_src, a_src, bk * es)
        ptx.inst.add.u64(b_src, b_src, bk * N * es)
        if k_edge:
            ptx.inst.sub.u32(k_left, k_left, bk)

    for s in range(st - 1):                                # prologue: tiles 0 .. st-2
        if s < ktiles:
            load_stage(s)
        ptx.cp.async_.commit_group()

    # ---- fragment addresses (per lane; the stage and the tile position are added later)
    quad_row = (lane & 7) + ((lane >> 3) & 1) * 8          # row of the 8x8 matrix a lane names
    half = lane >> 4                                       # second k8 (A) / n8 (B) matrix
    a_row_frag = warp_m * cfg.wm + quad_row
    a_base, a_f = sa_base + a_row_frag * cfg.row_a, _swizzle_term(a_row_frag, cfg.row_a)
    a_frag = [a_base + ((((half + 2 * kk) if kk else half) ^ a_f) << 4)
              for kk in range(bk // 16)]                   # one per 16-wide k step
    b_base, b_f = sb_base + quad_row * cfg.row_b, _swizzle_term(quad_row, cfg.row_b)
    frag_nc = warp_n * (cfg.wn // 8) + half
    b_frag = [b_base + ((((frag_nc + 2 * np_) if np_ else frag_nc) ^ b_f) << 4)
              for np_ in range(cfg.wn // 16)]              # one per pair of n8 columns

    mt, nt = cfg.wm // 16, cfg.wn // 8
    acc = [[reg.array(f32, 4, init=0.0) for _ in range(nt)] for _ in range(mt)]

    read_stage = reg.scalar(u32, 0)
    write_stage = reg.scalar(u32, st - 1)
    for kt in ptx.range_(0, ktiles):
        ptx.cp.async_.wait_group(st - 2)                  # tile kt has landed (this thread)
        ptx.bar.sync(0)                                    # ... for every thread; stage free
        if ktiles > st - 1:
            with ptx.if_(kt < ktiles - (st - 1)):
                load_stage(write_stage)
        ptx.cp.async_.commit_group()
        ra = read_stage * cfg.stage_a
        rb = read_stage * cfg.stage_b if cfg.stage_b != cfg.stage_a else ra
        for kk in range(bk // 16):
            a_at = a_frag[kk] + ra
            af = [ptx.mma.ldmatrix(ptx.addr(a_at, mi * 16 * cfg.row_a), num=4)
                  for mi in range(mt)]
            bf = []
            for np_ in range(cfg.wn // 16):
                r = ptx.mma.ldmatrix(ptx.addr(b_frag[np_] + rb, kk * 16 * cfg.row_b), num=4,
                                     trans=True)
                bf += [[r[0], r[1]], [r[2], r[3]]]
            for mi in range(mt):
                for ni in range(nt):
                    ptx.mma.sync(acc[mi][ni], af[mi], bf[ni], acc[mi][ni], shape="m16n8k16",
                                 dtype=f32, atype=cfg.dtype)
        _advance(read_stage, st)
        _advance(write_stage, st)
    ptx.cp.async_.wait_group(0)

    # ---- epilogue: lane l holds rows l/4 and l/4 + 8, columns 2*(l%4) + {0, 1} of each tile
    g, t4 = lane >> 2, lane & 3
    row0 = m0 + warp_m * cfg.wm + g
    col0 = n0 + warp_n * cfg.wn + (t4 << 1)
    c_at = C.ptr() + (reg.cvt(row0, u64) * N + reg.cvt(col0, u64)) * 4
    col_ok = [col0 + ni * 8 < N for ni in range(nt)] if n_edge else [None] * nt
    for mi in range(mt):
        for h in range(2):
            r_ok = row0 + (mi * 16 + 8 * h) < M if m_edge else None
            for ni in range(nt):
                vals = acc[mi][ni].regs[2 * h:2 * h + 2]
                off = ((mi * 16 + 8 * h) * N + ni * 8) * 4
                ptx.inst.st.global_.v2.f32(ptx.addr(c_at, off), vals, pred=_and(r_ok, col_ok[ni]))
    ptx.ret()


def _divmod(x, n: int):
    """(x / n, x % n) for a u32 register; shifts and masks when ``n`` is a power of two
    (ptxas keeps a ``div.u32`` by a constant as a division)."""
    if n & (n - 1) == 0:
        return x >> (n.bit_length() - 1), x & (n - 1)
    return x / n, x % n


def _and(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _copy(dst, src_reg, src_off: int, ok, tensor):
    """One 16-byte ``cp.async.cg``; with ``ok`` (a predicate) a chunk outside the tensor is
    zero-filled (src-size 0) and its source address clamped to the tensor's start."""
    if ok is None:
        ptx.cp.async_(dst, ptx.addr(src_reg, src_off), 16, cop="cg")
        return
    src = reg.scalar(u64)
    ptx.inst.add.u64(src, src_reg, src_off)
    safe = reg.scalar(u64)
    ptx.inst.selp.b64(safe, src, tensor.ptr(), ok)
    size = reg.scalar(u32)
    ptx.inst.selp.u32(size, 16, 0, ok)
    ptx.cp.async_(dst, ptx.addr(safe), 16, cop="cg", src_size=size)


def _advance(stage, n: int):
    """``stage = (stage + 1) % n`` without a division."""
    nxt = stage + 1
    wrap = nxt == n
    ptx.inst.selp.u32(stage, 0, nxt, wrap)


def reference(a, b):
    """NumPy ``a @ b`` in float64 (the products of bf16/f16 values are exact there)."""
    import numpy as np

    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
