"""Kernels written in the style of the documented pyptx examples (spec section 9 names):
an RMS norm, an Ampere mma.sync GEMM tile with cp.async, and a Hopper TMA + wgmma + mbarrier
GEMM. Each traces, ptxas accepts it with no spills, and each runs on the interpreter and
matches NumPy.

The two GEMMs as first written here only assembled; running them on the interpreter exposed
bugs a pyptx user would have hit on a GPU, fixed here as such a user would:
* ``mma_tile`` gave every lane of ``ldmatrix`` the same row address and stored the mma
  fragment as if it were row-major;
* ``hopper_gemm`` described A and B as ``Layout.ROW`` tiles with no ``tma_box``, so each
  TMA load brought the default 128-row box (more bytes than the shared buffers hold and than
  ``arrive_expect_tx`` announced: the mbarrier never completes), unswizzled while the wgmma
  descriptors of ``smem.wgmma_tile`` read 128B-swizzled tiles; it stepped B's descriptor by
  a row-major K stride, and its epilogue ignored the wgmma fragment layout and the CTA's
  tile. Now A is ``Tile.wgmma_a`` (128B swizzle, 64x64 box), B ``Tile.wgmma_b`` with
  ``tile_n=64`` loaded as two 64-column stripes, and the epilogue follows the fragment."""
import ml_dtypes
import numpy as np

from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import b32, bf16, f32, u32

from .helpers import assemble
from .pyptx_util import assert_gemm_close

N_COLS = 256


@kernel(arch="sm_80", block=(32, 1, 1), grid=lambda R: (R, 1, 1),
        in_specs=(Tile("R", N_COLS, f32, Layout.ROW),),
        out_specs=(Tile("R", N_COLS, f32, Layout.ROW),))
def rms_norm(X, Y, *, eps=1e-6):
    px, py = ptx.global_ptrs(X, Y)
    tid = reg.from_(ptx.special.tid.x(), u32)
    row = reg.from_(ptx.special.ctaid.x(), u32)
    row_off = reg.scalar("u64")
    ptx.inst.mul.wide.u32(row_off, row, N_COLS * 4)
    base_x = px + row_off
    base_y = py + row_off
    acc = reg.scalar(f32, 0.0)
    vals = []
    for j in range(N_COLS // 32):
        off = reg.scalar("u64")
        ptx.inst.mul.wide.u32(off, tid, 4)
        addr = base_x + off
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(addr, j * 128))
        ptx.inst.fma.rn.f32(acc, v, v, acc)
        vals.append(v)
    ptx.warp.reduce_sum(acc)
    mean = reg.scalar(f32)
    ptx.inst.mul.f32(mean, acc, 1.0 / N_COLS)
    ptx.inst.add.f32(mean, mean, eps)
    inv = reg.scalar(f32)
    ptx.inst.rsqrt.approx.f32(inv, mean)
    off = reg.scalar("u64")
    ptx.inst.mul.wide.u32(off, tid, 4)
    out = base_y + off
    for j, v in enumerate(vals):
        ptx.inst.mul.f32(v, v, inv)
        ptx.inst.st.global_.f32(ptx.addr(out, j * 128), v)
    ptx.ret()


def test_rms_norm_traces_assembles_and_runs():
    rep = assemble(rms_norm, R=4)
    assert (rep.spill_stores, rep.spill_loads) == (0, 0)
    x = np.random.default_rng(0).standard_normal((4, N_COLS)).astype(np.float32)
    y = np.asarray(rms_norm.interpret(x))
    ref = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)


@kernel(arch="sm_80", block=(32, 1, 1),
        in_specs=(Tile(16, 16, bf16), Tile(8, 16, bf16)), out_specs=(Tile(16, 8, f32),))
def mma_tile(A, B, C):
    pa, pb, pc = ptx.global_ptrs(A, B, C)
    sA = smem.alloc(bf16, (16, 16), align=128)
    sB = smem.alloc(bf16, (8, 16), align=128)
    tid = reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(tid < 32):
        off = tid << 4
        goff = reg.scalar("u64")
        ptx.inst.cvt.u64.u32(goff, off)
        sa = smem.base(sA.name) + off
        ptx.cp.async_.cg(ptx.addr(sa), ptx.addr(pa + goff), 16)
    with ptx.if_(tid < 16):
        off = tid << 4
        goff = reg.scalar("u64")
        ptx.inst.cvt.u64.u32(goff, off)
        sb = smem.base(sB.name) + off
        ptx.cp.async_.cg(ptx.addr(sb), ptx.addr(pb + goff), 16)
    ptx.cp.async_.commit_group()
    ptx.cp.async_.wait_group(0)
    ptx.bar.sync(0)
    # ldmatrix: lanes 0-15 name A's rows, lanes 16-31 the same rows' second k half; lanes
    # 0-15 name B's 8 rows (k halves by lane bit 3)
    lane = tid & 31
    a_addr = smem.base(sA.name) + ((lane & 15) << 5) + ((lane >> 4) << 4)
    b_addr = smem.base(sB.name) + ((lane & 7) << 5) + (((lane >> 3) & 1) << 4)
    a = reg.array(b32, 4)
    b = reg.array(b32, 2)
    ptx.ldmatrix(dst=a, src=ptx.addr(a_addr), layout="x4")
    ptx.ldmatrix(dst=b, src=ptx.addr(b_addr), layout="x2")
    c = reg.array(f32, 4, init=0.0)
    ptx.mma.sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16, dtype_c=f32,
                 d=c, a=a, b=b, c=c)
    # c0, c1 at row lane/4, columns 2*(lane%4) + {0, 1}; c2, c3 eight rows below
    o = reg.scalar("u64")
    ptx.inst.mul.wide.u32(o, ((lane >> 2) << 3) + ((lane & 3) << 1), 4)
    out = pc + o
    ptx.inst.st.global_.v2.f32(ptx.addr(out), [c[0], c[1]])
    ptx.inst.st.global_.v2.f32(ptx.addr(out, 8 * 8 * 4), [c[2], c[3]])
    ptx.ret()


def test_ampere_mma_tile_assembles_without_spills():
    text = mma_tile.ptx()
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in text
    assert "cp.async.cg.shared.global" in text
    rep = assemble(mma_tile)
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)


def test_ampere_mma_tile_runs_and_matches_numpy():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((8, 16)).astype(ml_dtypes.bfloat16)
    assert_gemm_close(mma_tile.interpret(a, b), a, b, transpose_b=True)


BM, BN, BK = 64, 128, 64


@kernel(arch="sm_90a", block=(128, 1, 1),
        in_specs=(Tile.wgmma_a("M", "K", bf16, tile_m=BM, tile_k=BK),
                  Tile.wgmma_b("K", "N", bf16, tile_k=BK, tile_n=64)),
        out_specs=(Tile("M", "N", f32, Layout.ROW),),
        grid=lambda M, N: (N // BN, M // BM, 1))
def hopper_gemm(A, B, C, *, K_TILES=2):
    """C = A @ B, one 64x128 tile per CTA, one warpgroup: A (K-major) and B (MN-major, two
    64-column stripes) arrive by TMA in the 128B-swizzled layouts the wgmma descriptors of
    ``smem.wgmma_tile`` describe."""
    sA = smem.wgmma_tile(bf16, (BM, BK), major="K")
    sB = smem.wgmma_tile(bf16, (BK, BN), major="MN")
    bar = smem.mbarrier(1)
    tid = reg.from_(ptx.special.tid.x(), u32)
    bx = reg.from_(ptx.special.ctaid.x(), u32)
    by = reg.from_(ptx.special.ctaid.y(), u32)
    acc = reg.wgmma_frag(m=BM, n=BN, dtype=f32)
    with ptx.if_(tid == 0):
        ptx.mbarrier.init(bar[0], 1)
    ptx.fence.proxy_async_shared_cta()
    ptx.bar.sync(0)
    phase = reg.scalar(u32, 0)
    for kt in range(K_TILES):
        with ptx.if_(tid == 0):
            ptx.mbarrier.arrive_expect_tx(bar[0], (BM * BK + BK * BN) * 2)
            ptx.cp.async_.bulk.tensor_2d(dst=sA[0], src=A.tma_desc(),
                                         coord=(kt * BK, by * BM), mbar=bar[0])
            for s in range(BN // 64):            # a 64-column stripe is 64 rows of 128 B
                ptx.cp.async_.bulk.tensor_2d(dst=ptx.addr(sB, s * BK * 128), src=B.tma_desc(),
                                             coord=(bx * BN + 64 * s, kt * BK), mbar=bar[0])
        ptx.mbarrier.wait(bar[0], phase)
        phase ^= 1
        ptx.wgmma.fence()
        for kk in range(BK // 16):
            ptx.wgmma.mma_async(shape="m64n128k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                                d=acc, a=sA, b=sB, scale_d=(kt > 0 or kk > 0), trans_b=1,
                                a_k_offset=kk * 32, b_k_offset=kk * 16 * 128)
        ptx.wgmma.commit_group()
        ptx.wgmma.wait_group(0)
        ptx.bar.sync(0)
    # epilogue: thread t of warp w holds rows 16w + t/4 (+8), columns 8j + 2(t%4) (+1)
    (pc,) = ptx.global_ptrs(C)
    N = C.shape[1]
    row = by * BM + ((tid >> 5) << 4) + ((tid & 31) >> 2)
    col = bx * BN + ((tid & 3) << 1)
    dst = pc + (row * N + col) * 4
    for j in range(BN // 8):
        for h in range(2):
            i = 4 * j + 2 * h
            ptx.inst.st.global_.v2.f32(ptx.addr(dst, (8 * j + 8 * h * N) * 4),
                                       [acc[i], acc[i + 1]])
    ptx.ret()


def test_hopper_tma_wgmma_gemm_assembles_without_spills():
    text = hopper_gemm.ptx(M=128, N=256, K=128)
    assert text.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") == 8
    # per K tile: A, and B as two 64-column stripes
    assert text.count("cp.async.bulk.tensor.2d.shared::cluster.global"
                      ".mbarrier::complete_tx::bytes") == 6
    rep = assemble(hopper_gemm, M=128, N=256, K=128)
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)
    assert rep.registers > 64   # the accumulator lives in registers


def test_hopper_tma_wgmma_gemm_runs_and_matches_numpy():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 128)).astype(ml_dtypes.bfloat16)     # 2 x 2 CTAs, 2 K tiles
    b = rng.standard_normal((128, 256)).astype(ml_dtypes.bfloat16)
    a_map, b_map = hopper_gemm.trace(M=128, N=256, K=128).tma
    assert (a_map.box, a_map.swizzle, b_map.box, b_map.swizzle) == ((64, 64), 128, (64, 64), 128)
    assert_gemm_close(hopper_gemm.interpret(a, b), a, b)
