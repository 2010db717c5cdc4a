"""The tcgen05 primitives one at a time (sm_100a): small kernels that each exercise one part of
Blackwell's Tensor Memory (TMEM) interface, with a NumPy reference for what it must compute.

==================  ================================================================
builder             what it exercises
==================  ================================================================
``build_alloc``     ``tcgen05.alloc`` of 32..512 columns (the address written to shared
                    memory), ``relinquish_alloc_permit``, ``dealloc``; a round trip of
                    every allocated cell (``st``/``ld .32x32b``)
``build_ld``        ``tcgen05.ld`` in each data-path shape (``.32x32b``, ``.16x64b``,
                    ``.16x128b``, ``.16x256b``): which lane and column each register of
                    each thread holds
``build_st``        ``tcgen05.st`` in each shape, read back with ``.32x32b``;
                    ``.unpack::16b`` / ``.pack::16b`` (two 16-bit halves per register)
``build_cp``        ``tcgen05.cp`` shared memory -> TMEM (``.128x256b``, ``.128x128b``,
                    ``.32x128b.warpx4``), completion through ``tcgen05.commit``
``build_shift``     ``tcgen05.shift.down`` (rows move down one lane), ``commit``
``build_mma``       ``tcgen05.mma.cta_group::1.kind::f16`` from shared-memory descriptors
                    (no swizzle: A K-major, B MN-major), ``enable-input-d`` false then
                    true, ``commit`` to an mbarrier
==================  ================================================================

Every kernel allocates with one warp, orders TMEM accesses across threads with
``tcgen05.fence::before_thread_sync`` / ``bar.sync`` / ``tcgen05.fence::after_thread_sync``,
and frees what it allocated; the interpreter's sanitizer checks each of these (accesses to
unallocated columns, reads of unwritten cells, lanes outside a warp's quarter, registers
read before ``tcgen05.wait::ld``, allocations never freed). ``tcgen05.commit`` is observed
through the mbarrier it arrives on (``build_cp``, ``build_shift``, ``build_mma``; the
multicast form in ``gemm_2sm``).

**The data-path layouts** (PTX ISA "Matrix fragments for tcgen05.ld / st"; the register
order of the figures as CUTLASS's TMEM copy traits read them). A warp ``w`` reaches TMEM
lanes ``32 (w % 4) ..``; for thread ``l`` (``g = l / 4``, ``t = l % 4``) and repetition
``j`` of ``.x<num>``:

* ``.32x32b``: 1 register: lane ``l``, column ``j``;
* ``.16x64b``: 1 register: lane ``g + 8 (l % 2)``, column ``2 j + (l / 2) % 2``;
* ``.16x128b``: 2 registers ``r``: lane ``g + 8 r``, column ``4 j + t``;
* ``.16x256b``: 4 registers ``r``: lane ``g + 8 (r / 2)``, column ``8 j + 2 t + r % 2``.

``layout(shape, num)`` gives these as arrays; the references use it.

    python examples/blackwell/tcgen05_suite.py   # ptxas + interpreter check of each
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/blackwell/tcgen05_suite.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.blackwell"

from contextlib import nullcontext

import numpy as np

from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.types import b32, bf16, f32, u32, u64

from . import ARCH

COLS = 32                                       # columns the ld / st kernels move per lane
SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b")
_PER_REP = {"32x32b": (1, 1), "16x64b": (1, 2), "16x128b": (2, 4), "16x256b": (4, 8)}
#           shape -> (registers per repetition, columns per repetition)


def layout(shape: str, num: int) -> tuple:
    """(lane offset, column offset) arrays, each ``[32 threads, registers]``, of
    ``tcgen05.ld/st .<shape>.x<num>`` (module docstring)."""
    per, width = _PER_REP[shape]
    lane_of = np.zeros((32, per * num), np.int64)
    col_of = np.zeros((32, per * num), np.int64)
    for l in range(32):
        g, t = l // 4, l % 4
        for j in range(num):
            for r in range(per):
                if shape == "32x32b":
                    lane, col = l, 0
                elif shape == "16x64b":
                    lane, col = g + 8 * (l % 2), (l // 2) % 2
                elif shape == "16x128b":
                    lane, col = g + 8 * r, t
                else:
                    lane, col = g + 8 * (r // 2), 2 * t + r % 2
                lane_of[l, j * per + r] = lane
                col_of[l, j * per + r] = j * width + col
    return lane_of, col_of


def _passes(shape: str):
    """(num, lane bases) covering a warp's 32 lanes x ``COLS`` columns in ``shape``."""
    per, width = _PER_REP[shape]
    return COLS // width, ((0,) if shape == "32x32b" else (0, 16))


# ----------------------------------------------------------------------------- pieces
class _Cta:
    """Thread registers and the TMEM allocation of a suite kernel (warp 0 allocates)."""

    def __init__(self, ncols: int, *, cta_warps=4):
        self.ncols = ncols
        self.tid = reg.from_(ptx.special.tid.x(), u32)
        self.warp = self.tid >> 5
        self.lane = self.tid & 31
        self.slot = smem.alloc(u32, (1,), align=4, name="tmem_slot")
        with ptx.if_(self.warp == 0):
            ptx.tcgen05.alloc(self.slot, ncols)
            ptx.tcgen05.relinquish_alloc_permit()
        self.sync()
        self.tmem = reg.scalar(u32)
        ptx.inst.ld.shared.u32(self.tmem, self.slot[0])
        self.quarter = self.tmem + ((self.warp & 3) << 21)      # lane 32 (w % 4), column 0

    def sync(self):
        """Order TMEM accesses and shared memory across the CTA's threads."""
        ptx.tcgen05.fence_before_thread_sync()
        ptx.bar.sync(0)
        ptx.tcgen05.fence_after_thread_sync()

    def free(self):
        self.sync()
        with ptx.if_(self.warp == 0):
            ptx.tcgen05.dealloc(self.tmem, self.ncols)


def _row_ptr(tensor, row, row_bytes: int):
    return tensor.ptr() + reg.cvt(row, u64) * row_bytes


def _load_row(tensor, row, n: int):
    """``n`` 32-bit values of row ``row`` (u32 register) of a 32-bit tensor with ``n``
    columns (``ld.global.v4``)."""
    p = _row_ptr(tensor, row, 4 * n)
    vals = reg.array(b32, n)
    for i in range(0, n, 4):
        ptx.inst.ld.global_.v4.b32([vals[i + k] for k in range(4)], ptx.addr(p, 4 * i))
    return vals


def _store_row(tensor, row, vals, n: int, col0: int = 0, row_cols: int | None = None):
    p = _row_ptr(tensor, row, 4 * (row_cols or n))
    for i in range(0, n, 4):
        ptx.inst.st.global_.v4.b32(ptx.addr(p, 4 * (col0 + i)), [vals[i + k] for k in range(4)])


def _mbarrier(cta: _Cta):
    bar = smem.mbarrier(1, name="done")
    with ptx.if_(cta.tid == 0):
        ptx.mbarrier.init(bar[0], 1)
        ptx.fence.mbarrier_init()
    return bar


# ----------------------------------------------------------------------------- alloc
def build_alloc(ncols: int = 32):
    """``tcgen05.alloc`` of ``ncols`` columns (32, 64, 128, 256 or 512) by warp 0,
    ``relinquish_alloc_permit``, a round trip of every cell (each warp stores its 32 lanes
    with ``tcgen05.st.32x32b.x32`` chunk by chunk and loads them back with ``ld``), and
    ``dealloc``. ``x: f32[128, ncols]`` -> ``y = x`` (lane = row, column = column)."""
    if ncols not in (32, 64, 128, 256, 512):
        raise ValueError(f"build_alloc: ncols must be 32, 64, 128, 256 or 512, got {ncols!r}")

    @kernel(arch=ARCH, in_specs=(Tile(128, ncols, f32),), out_specs=(Tile(128, ncols, f32),),
            block=(128, 1, 1), grid=(1, 1, 1))
    def tcgen05_alloc(X, Y):
        """Y = X through every cell of an ``ncols``-column TMEM allocation."""
        cta = _Cta(ncols)
        for c in range(0, ncols, 32):
            vals = _load_row_cols(X, cta.tid, ncols, c)
            ptx.tcgen05.st(cta.quarter + c if c else cta.quarter, vals, "32x32b")
        ptx.tcgen05.wait_st()
        cta.sync()
        for c in range(0, ncols, 32):
            out = ptx.tcgen05.ld(cta.quarter + c if c else cta.quarter, "32x32b", 32)
            ptx.tcgen05.wait_ld()
            _store_row(Y, cta.tid, out, 32, c, ncols)
        cta.free()
        ptx.ret()

    return tcgen05_alloc


def _load_row_cols(tensor, row, row_cols: int, c0: int):
    p = _row_ptr(tensor, row, 4 * row_cols)
    vals = reg.array(b32, 32)
    for i in range(0, 32, 4):
        ptx.inst.ld.global_.v4.b32([vals[i + k] for k in range(4)], ptx.addr(p, 4 * (c0 + i)))
    return vals


def identity(x):
    """The reference of a round trip: ``x`` (float64)."""
    return np.asarray(x, np.float64)


# ----------------------------------------------------------------------------- ld
def build_ld(shapes=SHAPES):
    """``tcgen05.ld`` in each of ``shapes``: each warp stores its 32 lanes x 32 columns with
    ``st.32x32b`` (lane = row of ``x``), then loads them with every shape (two loads of 16
    lanes for the ``16x*`` shapes) and writes its registers in order: ``x: f32[128, 32]`` ->
    ``y: f32[len(shapes), 128, 32]``, ``y[s, 32 w + l, i]`` = the cell register ``i`` of
    thread ``l`` of warp ``w`` holds after the load in ``shapes[s]`` (``reference_ld``)."""
    shapes = _check_shapes("build_ld", shapes)

    @kernel(arch=ARCH, in_specs=(Tile(128, COLS, f32),),
            out_specs=(Tile(len(shapes), 128, COLS, f32),), block=(128, 1, 1), grid=(1, 1, 1))
    def tcgen05_ld(X, Y):
        """Y[s] = X's cells in the register order of tcgen05.ld.<shapes[s]>."""
        cta = _Cta(32)
        ptx.tcgen05.st(cta.quarter, _load_row(X, cta.tid, COLS), "32x32b")
        ptx.tcgen05.wait_st()
        cta.sync()
        for si, shape in enumerate(shapes):
            num, bases = _passes(shape)
            regs = []
            for base in bases:
                at = cta.quarter + (base << 16) if base else cta.quarter
                regs += list(ptx.tcgen05.ld(at, shape, num))
            ptx.tcgen05.wait_ld()
            _store_row(Y, cta.tid + 128 * si if si else cta.tid, regs, COLS)
        cta.free()
        ptx.ret()

    tcgen05_ld.shapes = shapes
    return tcgen05_ld


def _check_shapes(fn, shapes):
    shapes = tuple(shapes)
    bad = [s for s in shapes if s not in SHAPES]
    if bad or not shapes:
        raise ValueError(f"{fn}: shapes must be some of {', '.join(SHAPES)}, got {shapes!r}")
    return shapes


def _gather(shape: str):
    """Index arrays (rows, cols) into a ``[128, COLS]`` matrix of the cells thread
    ``32 w + l``'s registers of ``build_ld``'s loads hold."""
    num, bases = _passes(shape)
    rows = np.zeros((128, COLS), np.int64)
    cols = np.zeros((128, COLS), np.int64)
    lane_of, col_of = layout(shape, num)
    per = lane_of.shape[1]
    for w in range(4):
        for i, base in enumerate(bases):
            rows[32 * w:32 * w + 32, i * per:(i + 1) * per] = 32 * w + base + lane_of
            cols[32 * w:32 * w + 32, i * per:(i + 1) * per] = col_of
    return rows, cols


def reference_ld(x, shapes=SHAPES):
    """``y[s, thread, i] = x[lane, column]`` of register ``i`` in ``shapes[s]`` (``layout``)."""
    x = np.asarray(x, np.float64)
    return np.stack([x[_gather(sh)] for sh in shapes])


# ----------------------------------------------------------------------------- st
def build_st(shapes=SHAPES, unpack16: bool = True):
    """``tcgen05.st`` in each of ``shapes``, each into its own 32 TMEM columns, read back
    lane by lane with ``ld.32x32b``: thread ``32 w + l`` stores row ``32 w + l`` of ``x`` as
    its registers, in order. ``x: f32[128, 32]`` -> ``y: f32[len(shapes) + unpack16, 128,
    32]`` with ``y[s, lane, column]`` = the register ``st.<shapes[s]>`` puts there
    (``reference_st``). ``unpack16`` adds ``st.32x32b.unpack::16b`` (each register split
    into two 16-bit cells, low half in the even column) read back with ``ld.pack::16b``:
    the last ``y`` is ``x`` bit for bit."""
    shapes = _check_shapes("build_st", shapes)
    n_out = len(shapes) + int(bool(unpack16))
    ncols = 1 << (32 * len(shapes) + 64 * int(bool(unpack16)) - 1).bit_length()

    @kernel(arch=ARCH, in_specs=(Tile(128, COLS, f32),),
            out_specs=(Tile(n_out, 128, COLS, f32),), block=(128, 1, 1), grid=(1, 1, 1))
    def tcgen05_st(X, Y):
        """TMEM cells written by tcgen05.st in each shape, read back lane by lane."""
        cta = _Cta(ncols)
        vals = list(_load_row(X, cta.tid, COLS))
        for si, shape in enumerate(shapes):
            num, bases = _passes(shape)
            n = len(vals) // len(bases)
            for i, base in enumerate(bases):
                at = cta.quarter + ((base << 16) + 32 * si)
                ptx.tcgen05.st(at, vals[i * n:(i + 1) * n], shape)
        if unpack16:
            ptx.tcgen05.st(cta.quarter + 32 * len(shapes), vals, "32x32b", unpack16=True)
        ptx.tcgen05.wait_st()
        cta.sync()
        for si in range(n_out):
            packed = si == len(shapes)
            at = cta.quarter + 32 * si if si else cta.quarter
            out = ptx.tcgen05.ld(at, "32x32b", COLS, pack16=packed)
            ptx.tcgen05.wait_ld()
            _store_row(Y, cta.tid + 128 * si if si else cta.tid, out, COLS)
        cta.free()
        ptx.ret()

    tcgen05_st.shapes = shapes
    return tcgen05_st


def reference_st(x, shapes=SHAPES, unpack16: bool = True):
    """``y[s, lane, column] = x[thread, i]`` for the register ``i`` that ``st.<shapes[s]>``
    puts there (the inverse of ``reference_ld``); the ``unpack16`` round trip: ``x``."""
    x = np.asarray(x, np.float64)
    out = []
    for sh in shapes:
        y = np.empty_like(x)
        y[_gather(sh)] = x
        out.append(y)
    if unpack16:
        out.append(x)
    return np.stack(out)


# ----------------------------------------------------------------------------- cp
CP_SHAPES = (("128x256b", 128, 8, None), ("128x128b", 128, 4, None),
             ("32x128b", 32, 4, "warpx4"))
#             shape, source rows, 32-bit columns, multicast


def build_cp():
    """``tcgen05.cp.cta_group::1`` in three shapes: ``.128x256b`` (128 lanes x 8 columns),
    ``.128x128b`` (x 4) and ``.32x128b.warpx4`` (32 rows x 4 columns copied to each of the
    four lane quarters), into TMEM columns 0-7, 8-11 and 12-15. The sources (``x[:, :8]``,
    ``x[:, :4]``, ``x[:32, :4]``; rows x 16-byte chunks) are written to shared memory in the
    canonical K-major layout with no swizzle (8-row core matrices of 16-byte rows: row
    ``r``, chunk ``c`` at ``(r % 8) 16 + (r / 8) 128 + c * LBO``, LBO = rows x 16); one thread
    issues the copies from their descriptors and ``tcgen05.commit``s an mbarrier; every warp
    waits on it and loads its lanes. ``x: f32[128, 8]`` -> ``y: f32[128, 16]``
    (``reference_cp``)."""

    @kernel(arch=ARCH, in_specs=(Tile(128, 8, f32),), out_specs=(Tile(128, 16, f32),),
            block=(128, 1, 1), grid=(1, 1, 1))
    def tcgen05_cp(X, Y):
        """Y = X copied shared memory -> TMEM by tcgen05.cp in three shapes."""
        srcs = [smem.alloc(f32, (rows * cols,), align=128, name=f"src{i}")
                for i, (_, rows, cols, _) in enumerate(CP_SHAPES)]
        cta = _Cta(32)
        bar = _mbarrier(cta)
        vals = _load_row(X, cta.tid, 8)
        for src, (_, rows, cols, _) in zip(srcs, CP_SHAPES):
            row = src.ptr() + (cta.tid & 7) * 16 + (cta.tid >> 3) * 128
            with ptx.if_(cta.tid < rows) if rows < 128 else nullcontext():
                for c in range(cols // 4):
                    ptx.inst.st.shared.v4.b32(ptx.addr(row, c * rows * 16),
                                              [vals[4 * c + k] for k in range(4)])
        ptx.fence.proxy_async_shared_cta()                  # generic writes -> async proxy
        cta.sync()
        with ptx.if_(cta.tid == 0):
            col = 0
            for src, (shape, rows, cols, multicast) in zip(srcs, CP_SHAPES):
                desc = ptx.tcgen05.smem_desc_reg(src, rows * 16, 128, swizzle="none")
                ptx.tcgen05.cp(cta.tmem + col if col else cta.tmem, desc, shape,
                               multicast=multicast)
                col += cols
            ptx.tcgen05.commit(bar[0], cluster=True)
        ptx.mbarrier.wait(bar[0], 0)
        ptx.tcgen05.fence_after_thread_sync()
        out = ptx.tcgen05.ld(cta.quarter, "32x32b", 16)
        ptx.tcgen05.wait_ld()
        _store_row(Y, cta.tid, out, 16)
        cta.free()
        ptx.ret()

    return tcgen05_cp


def reference_cp(x):
    """``[x, x[:, :4], the 32 rows x[:32, :4] in each lane quarter]`` side by side."""
    x = np.asarray(x, np.float64)
    return np.concatenate([x, x[:, :4], np.tile(x[:32, :4], (4, 1))], axis=1)


# ----------------------------------------------------------------------------- shift
def build_shift():
    """``tcgen05.shift.cta_group::1.down``: one warp stores ``x: f32[32, 8]`` into TMEM
    lanes 0-31 (8 columns: the 32-byte elements the shift moves), one thread shifts and
    commits an mbarrier, the warp loads the lanes back: ``y[0] = x[0]``, ``y[i] = x[i - 1]``
    (every row but the last moves down one lane; lanes 0-31 are the same whether the
    shift spans one lane quarter or all 128 lanes)."""

    @kernel(arch=ARCH, in_specs=(Tile(32, 8, f32),), out_specs=(Tile(32, 8, f32),),
            block=(32, 1, 1), grid=(1, 1, 1))
    def tcgen05_shift(X, Y):
        """Y = X shifted down one TMEM lane."""
        cta = _Cta(32)
        bar = _mbarrier(cta)
        ptx.tcgen05.st(cta.tmem, _load_row(X, cta.tid, 8), "32x32b")
        ptx.tcgen05.wait_st()
        cta.sync()
        with ptx.if_(cta.tid == 0):
            ptx.tcgen05.shift(cta.tmem)
            ptx.tcgen05.commit(bar[0], cluster=True)
        ptx.mbarrier.wait(bar[0], 0)
        ptx.tcgen05.fence_after_thread_sync()
        out = ptx.tcgen05.ld(cta.tmem, "32x32b", 8)
        ptx.tcgen05.wait_ld()
        _store_row(Y, cta.tid, out, 8)
        cta.free()
        ptx.ret()

    return tcgen05_shift


def reference_shift(x):
    """Rows move down one: ``y[0] = x[0]``, ``y[1:] = x[:-1]``."""
    x = np.asarray(x, np.float64)
    return np.concatenate([x[:1], x[:-1]])


# ----------------------------------------------------------------------------- mma
def build_mma(n: int = 64, k: int = 32, dtype=bf16):
    """``tcgen05.mma.cta_group::1.kind::f16``, M = 128, N = ``n``, ``k / 16`` instructions
    of K = 16 (the first with ``enable-input-d`` false: D = A B; then D += A B). A and B are
    written to shared memory by all threads in the canonical layouts with no swizzle: A
    K-major (core matrices of 8 rows x 16 bytes; SBO = 128 between 8-row groups, LBO =
    2048 between 8-element K chunks), B MN-major (8 n x 8 k core matrices: 16 bytes of n per
    k row; SBO = 128 between 8-column groups of n, LBO = ``n * 16`` between 8-row groups of
    k). One thread issues the MMAs and ``tcgen05.commit``s an mbarrier; the warps load D
    (``ld.32x32b``: lane = row). ``a: dtype[128, k]``, ``b: dtype[k, n]`` -> ``f32[128, n]``.
    """
    if n % 16 or not 16 <= n <= 256:
        raise ValueError(f"build_mma: n must be a multiple of 16 in 16..256, got {n!r}")
    if k % 16 or k <= 0:
        raise ValueError(f"build_mma: k must be a positive multiple of 16, got {k!r}")
    if getattr(dtype, "name", None) not in ("bf16", "f16"):
        raise ValueError(f"build_mma: dtype must be bf16 or f16, got {dtype!r}")
    a_lbo, a_sbo = 128 * 16, 128
    b_lbo, b_sbo = n * 16, 128
    ncols = max(32, 1 << (n - 1).bit_length())
    idesc = ptx.tcgen05.instr_desc("f16", 128, n, f32, dtype.name, b_major="MN")

    @kernel(arch=ARCH, in_specs=(Tile(128, k, dtype), Tile(k, n, dtype)),
            out_specs=(Tile(128, n, f32),), block=(128, 1, 1), grid=(1, 1, 1))
    def tcgen05_mma(A, B, D):
        """D = A @ B on one tcgen05.mma chain."""
        sa = smem.alloc(dtype, (128 * k,), align=128, name="sa")
        sb = smem.alloc(dtype, (k * n,), align=128, name="sb")
        cta = _Cta(ncols)
        bar = _mbarrier(cta)
        # A: thread t copies row t, one 16-byte chunk (8 elements of k) at a time
        a_row = A.ptr() + reg.cvt(cta.tid, u64) * (2 * k)
        a_dst = sa.ptr() + (cta.tid & 7) * 16 + (cta.tid >> 3) * a_sbo
        for c in range(k // 8):
            v = reg.array(b32, 4)
            ptx.inst.ld.global_.v4.b32(list(v), ptx.addr(a_row, 16 * c))
            ptx.inst.st.shared.v4.b32(ptx.addr(a_dst, c * a_lbo), list(v))
        # B: chunk i = (k row, 8 columns of n); 16 bytes of n land contiguously
        chunks = k * n // 8
        for i0 in range(0, chunks, 128):
            i = cta.tid + i0
            with ptx.if_(i < chunks) if chunks - i0 < 128 else nullcontext():
                kk, nc = i / (n // 8), i % (n // 8)
                v = reg.array(b32, 4)
                src = B.ptr() + reg.cvt(i, u64) * 16
                ptx.inst.ld.global_.v4.b32(list(v), ptx.addr(src))
                dst = sb.ptr() + nc * b_sbo + (kk & 7) * 16 + (kk >> 3) * b_lbo
                ptx.inst.st.shared.v4.b32(ptx.addr(dst), list(v))
        ptx.fence.proxy_async_shared_cta()
        cta.sync()
        with ptx.if_(cta.tid == 0):
            da = ptx.tcgen05.smem_desc_reg(sa, a_lbo, a_sbo, swizzle="none")
            db = ptx.tcgen05.smem_desc_reg(sb, b_lbo, b_sbo, swizzle="none")
            idr = reg.scalar(b32, idesc)
            for j in range(k // 16):                        # K = 16: two 8-element chunks
                a = ptx.tcgen05.desc_advance(da, 2 * j * a_lbo) if j else da
                b = ptx.tcgen05.desc_advance(db, 2 * j * b_lbo) if j else db
                ptx.tcgen05.mma(cta.tmem, a, b, idr, int(j > 0), kind="f16")
            ptx.tcgen05.commit(bar[0], cluster=True)
        ptx.mbarrier.wait(bar[0], 0)
        ptx.tcgen05.fence_after_thread_sync()
        for c in range(0, n, 32):
            w = min(32, n - c)
            out = ptx.tcgen05.ld(cta.quarter + c if c else cta.quarter, "32x32b", w)
            ptx.tcgen05.wait_ld()
            _store_row(D, cta.tid, out, w, c, n)
        cta.free()
        ptx.ret()

    return tcgen05_mma


def reference_mma(a, b):
    """``a @ b`` in float64 (products of bf16/f16 values are exact)."""
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
