"""GEMMs written in the style of the documented pyptx examples, one per target:

* ``ampere_gemm`` (sm_80): cp.async tiles, ``ptx.ldmatrix``, ``ptx.mma.sync`` keyword form,
  a runtime K loop; runs on the interpreter and matches NumPy;
* ``hopper_ws_gemm`` (sm_90a): warp-specialized (a TMA producer warpgroup that gives back
  registers with setmaxnreg, two wgmma consumer warpgroups), a 3-stage mbarrier ring
  (``ptx.mbarrier.array``, ``ptx.pipeline``), A through a 128B-swizzled 2-d descriptor, B
  through the rank-3 64-column stripe descriptor (``ptx.tma.load_3d``);
* ``blackwell_gemm`` (sm_100a): TMA, tcgen05.mma into tensor memory, tcgen05.commit on an
  mbarrier, tcgen05.ld epilogue.

ptxas accepts each with no spills and no stack; the SASS shows the tensor-core and TMA
instructions. Each runs on the interpreter through the documented user paths, with several
CTAs and more K tiles than pipeline stages, and matches NumPy within f32 accumulation:
``k.interpret(A, B)``, ``k(A, B)`` under ``jax.jit`` on the CPU (interpret mode) and
``k(torch_a, torch_b)`` with CPU tensors. The tensor maps the interpreter loads through are
the ones the Tile specs derive (``Tile.wgmma_a``'s 128B swizzle and box, the rank-3 stripe
form of B) -- the same the CUDA launch plan encodes."""
import re

import ml_dtypes
import numpy as np
import pytest

from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import b32, bf16, f32, u32

from .helpers import assemble
from .pyptx_util import assert_gemm_close


A_BM, A_BN, A_BK = 32, 32, 16


@kernel(arch="sm_80", block=(128, 1, 1),
        in_specs=(Tile("M", "K", bf16, Layout.ROW), Tile("N", "K", bf16, Layout.ROW)),
        out_specs=(Tile("M", "N", f32, Layout.ROW),),
        grid=lambda M, N: (N // A_BN, M // A_BM, 1))
def ampere_gemm(A, B, C):
    """C = A @ B.T: a 32x32 tile per CTA, four warps of 16x16, mma.sync m16n8k16."""
    pa, pb, pc = ptx.global_ptrs(A, B, C)
    K = A.shape[1]
    sA = smem.alloc(bf16, (A_BM, A_BK))
    sB = smem.alloc(bf16, (A_BN, A_BK))
    tid = reg.from_(ptx.special.tid.x(), u32)
    bx = reg.from_(ptx.special.ctaid.x(), u32)
    by = reg.from_(ptx.special.ctaid.y(), u32)
    warp = tid >> 5
    lane = tid & 31
    # cp.async: 64 chunks of 16 bytes per tile; threads 0-63 load A, 64-127 load B
    chunk = tid & 63
    row = chunk >> 1
    half = chunk & 1
    is_a = tid < 64
    g_row = reg.scalar(u32)
    ptx.selp(u32, g_row, by * A_BM, bx * A_BN, is_a)
    g_row += row
    g_off = g_row * (K * 2) + (half << 4)           # bytes within the operand
    src_a = pa + g_off                              # u64 + u32: widened
    src_b = pb + g_off
    s_off = (row << 5) + (half << 4)
    dst_a = smem.base(sA.name) + s_off
    dst_b = smem.base(sB.name) + s_off
    # ldmatrix row addresses: A x4 (rows, k halves), B x4 (two n8 blocks, k halves)
    wm, wn = warp >> 1, warp & 1
    m8 = lane >> 3
    r8 = lane & 7
    a_row = (wm << 4) + ((m8 & 1) << 3) + r8
    a_addr = smem.base(sA.name) + (a_row << 5) + ((m8 >> 1) << 4)
    b_row = (wn << 4) + ((m8 >> 1) << 3) + r8
    b_addr = smem.base(sB.name) + (b_row << 5) + ((m8 & 1) << 4)
    acc = reg.array(f32, 8, init=0.0)
    a = reg.array(b32, 4)
    b = reg.array(b32, 4)
    for _ in ptx.range_(0, K // A_BK):
        with ptx.if_(is_a):
            ptx.cp.async_.cg(ptx.addr(dst_a), ptx.addr(src_a), 16)
        with ptx.else_():
            ptx.cp.async_.cg(ptx.addr(dst_b), ptx.addr(src_b), 16)
        ptx.cp.async_.commit_group()
        ptx.cp.async_.wait_group(0)
        ptx.bar.sync(0)
        ptx.ldmatrix(dst=a, src=ptx.addr(a_addr), layout="x4")
        ptx.ldmatrix(dst=b, src=ptx.addr(b_addr), layout="x4")
        for j in range(2):
            c = acc[4 * j:4 * j + 4]
            ptx.mma.sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16,
                         dtype_c=f32, d=c, a=a, b=[b[2 * j], b[2 * j + 1]], c=c)
        ptx.bar.sync(0)
        src_a += A_BK * 2
        src_b += A_BK * 2
    # epilogue: c0,c1 at (group, 2*t4 + {0,1}); c2,c3 eight rows below
    N = C.shape[1]
    out_row = by * A_BM + (wm << 4) + (lane >> 2)
    out_col = bx * A_BN + (wn << 4) + ((lane & 3) << 1)
    base = pc + (out_row * N + out_col) * 4
    for j in range(2):
        ptx.inst.st.global_.v2.f32(ptx.addr(base, 32 * j), [acc[4 * j], acc[4 * j + 1]])
        ptx.inst.st.global_.v2.f32(ptx.addr(base, 32 * j + 32 * N), [acc[4 * j + 2],
                                                                    acc[4 * j + 3]])
    ptx.ret()


BM, BN, BK, STAGES = 128, 128, 64, 3
A_STAGE = BM * BK * 2            # bytes per stage
B_STAGE = BK * BN * 2


@kernel(arch="sm_90a", block=(384, 1, 1), raw_directives=[("maxntid", (384, 1, 1)), ("minnctapersm", (1,))],
        in_specs=(Tile.wgmma_a("M", "K", bf16, tile_m=BM, tile_k=BK),
                  Tile("K", "N", bf16, Layout.TMA_128B, tma_box=(BK, BN), tma_rank=3)),
        out_specs=(Tile("M", "N", f32),),
        grid=lambda M, N: (N // BN, M // BM, 1))
def hopper_ws_gemm(A, B, C):
    """Warp-specialized: warpgroup 0 loads A and B tiles with TMA into a 3-stage ring,
    warpgroups 1 and 2 each multiply 64 rows of the tile with wgmma."""
    K = A.shape[1]
    sA = smem.wgmma_tile(bf16, (STAGES, BM, BK), major="K")
    sB = smem.wgmma_tile(bf16, (STAGES, BK, BN), major="MN")
    bars = smem.mbarrier(2 * STAGES)
    tid = reg.from_(ptx.special.tid.x(), u32)
    bx = reg.from_(ptx.special.ctaid.x(), u32)
    by = reg.from_(ptx.special.ctaid.y(), u32)
    wg = tid >> 7
    base_bars = smem.base(bars.name)
    full = ptx.mbarrier.array(base_bars, 0, STAGES)
    empty = ptx.mbarrier.array(base_bars, 8 * STAGES, STAGES)
    with ptx.if_(tid == 0):
        full.init_all(1)
        empty.init_all(2)
        ptx.fence.mbarrier_init()
    ptx.bar.sync(0)
    a_desc, b_desc = A.tma_desc(), B.tma_desc()
    a_base = smem.base(sA.name)
    b_base = smem.base(sB.name)
    k_tiles = K // BK
    with ptx.if_(wg == 0):                       # producer
        ptx.setmaxnreg_dec(40)
        st = ptx.pipeline(STAGES)
        with ptx.if_(tid == 0):
            for kt in ptx.range_(0, k_tiles):
                stage, phase = st.advance()
                empty.at(stage).wait(phase ^ 1)
                full.at(stage).arrive_expect_tx(A_STAGE + B_STAGE)
                k0 = kt * BK
                ptx.cp.async_.bulk.tensor_2d(dst=ptx.addr(a_base + stage * A_STAGE),
                                             src=a_desc, coord=(k0, by * BM),
                                             mbar=full.at(stage).address())
                ptx.tma.load_3d(ptx.addr(b_base + stage * B_STAGE), b_desc, row=k0,
                                col=bx * BN, mbar=full.at(stage).address())
    with ptx.else_():                            # consumers
        ptx.setmaxnreg_inc(232)
        acc = reg.wgmma_frag(m=64, n=BN, dtype=f32)
        c = wg - 1                               # 0 or 1: which 64 rows
        st = ptx.pipeline(STAGES)
        for kt in ptx.range_(0, k_tiles):
            stage, phase = st.advance()
            full.at(stage).wait(phase)
            a_addr = a_base + stage * A_STAGE + c * (64 * BK * 2)
            b_addr = b_base + stage * B_STAGE
            da = ptx.wgmma.auto_descriptor(a_addr, dtype=bf16, shape=(64, BK), major="K")
            db = ptx.wgmma.auto_descriptor(b_addr, dtype=bf16, shape=(BK, BN), major="MN")
            accumulate = kt != 0
            ptx.wgmma.fence()
            for kk in range(BK // 16):
                ptx.wgmma.mma_async(shape=f"m64n{BN}k16", dtype_d=f32, dtype_a=bf16,
                                    dtype_b=bf16, d=acc, a=da + 2 * kk, b=db + 128 * kk,
                                    scale_d=accumulate if kk == 0 else True, trans_b=1)
            ptx.wgmma.commit_group()
            ptx.wgmma.wait_group(0)
            with ptx.if_((tid & 127) == 0):
                empty.at(stage).arrive()
        # epilogue: thread t of warp w holds rows 16w + t/4 (+8), columns 8j + 2(t%4) (+1)
        (pc,) = ptx.global_ptrs(C)
        N = C.shape[1]
        t = tid & 127
        row = by * BM + c * 64 + ((t >> 5) << 4) + ((t & 31) >> 2)
        col = bx * BN + ((t & 3) << 1)
        out = pc + (row * N + col) * 4
        for j in range(BN // 8):
            for h in range(2):
                i = 4 * j + 2 * h
                ptx.inst.st.global_.v2.f32(ptx.addr(out, (8 * j + 8 * h * N) * 4),
                                           [acc[i], acc[i + 1]])
    ptx.ret()


TX = (BM * BK + BN * BK) * 2


@kernel(arch="sm_100a", block=(128, 1, 1),
        in_specs=(Tile("M", "K", bf16, Layout.TMA_128B, tma_box=(BM, BK)),
                  Tile("N", "K", bf16, Layout.TMA_128B, tma_box=(BN, BK))),
        out_specs=(Tile("M", "N", f32),),
        grid=lambda M, N: (N // BN, M // BM, 1))
def blackwell_gemm(A, B, C):
    """C = A @ B.T with tcgen05: one thread issues TMA loads and the MMAs into a 128x128 f32
    accumulator in tensor memory; the four warps read it back (tcgen05.ld) and store it."""
    K = A.shape[1]
    sA = smem.alloc(bf16, (BM, BK), swizzle="128B")
    sB = smem.alloc(bf16, (BN, BK), swizzle="128B")
    slot = smem.alloc(u32, 1)
    bars = smem.mbarrier(2)
    loaded, done = bars[0], bars[1]
    tid = reg.from_(ptx.special.tid.x(), u32)
    bx = reg.from_(ptx.special.ctaid.x(), u32)
    by = reg.from_(ptx.special.ctaid.y(), u32)
    warp = tid >> 5
    with ptx.if_(warp == 0):
        ptx.tcgen05.alloc(slot, BN)               # BN f32 columns of tensor memory
    with ptx.if_(tid == 0):
        ptx.mbarrier.init(loaded, 1)
        ptx.mbarrier.init(done, 1)
        ptx.fence.mbarrier_init()
    ptx.tcgen05.fence_before_thread_sync()
    ptx.bar.sync(0)
    ptx.tcgen05.fence_after_thread_sync()
    tmem = smem.load(u32, slot)
    idesc = reg.scalar(b32, init=ptx.tcgen05.make_instr_desc_f16bf16_f32(m=BM, n=BN))
    da = ptx.tcgen05.descriptor(sA, stride_bytes=1024)
    db = ptx.tcgen05.descriptor(sB, stride_bytes=1024)
    a_desc, b_desc = A.tma_desc(), B.tma_desc()
    st = ptx.pipeline(1)
    for kt in ptx.range_(0, K // BK):
        _, phase = st.advance()
        with ptx.if_(tid == 0):
            ptx.mbarrier.arrive_expect_tx(loaded, TX)
            ptx.cp.async_.bulk.tensor_2d(dst=sA, src=a_desc, coord=(kt * BK, by * BM),
                                         mbar=loaded)
            ptx.cp.async_.bulk.tensor_2d(dst=sB, src=b_desc, coord=(kt * BK, bx * BN),
                                         mbar=loaded)
        ptx.mbarrier.wait(loaded, phase)
        ptx.tcgen05.fence_after_thread_sync()
        with ptx.if_(tid == 0):
            for kk in range(BK // 16):
                ptx.tcgen05.mma(tmem, da + 2 * kk, db + 2 * kk, idesc,
                                scale_d=(kt != 0) if kk == 0 else True)
            ptx.tcgen05.commit(done, space="cta")
        ptx.mbarrier.wait(done, phase)
    ptx.tcgen05.fence_after_thread_sync()
    # warp w reads tensor-memory lanes 32w..32w+31: row 32w + lane of the tile
    (pc,) = ptx.global_ptrs(C)
    N = C.shape[1]
    row = by * BM + tid
    out = pc + (row * N + bx * BN) * 4
    lane_base = tmem + ((warp << 5) << 16)
    vals = reg.array(b32, 32)
    for chunk in range(BN // 32):
        ptx.tcgen05.ld(vals, lane_base + 32 * chunk, shape="32x32b", count=32)
        ptx.tcgen05.wait_ld()
        for i in range(0, 32, 4):
            ptx.inst.st.global_.v4.b32(ptx.addr(out, (32 * chunk + i) * 4),
                                       [vals[i], vals[i + 1], vals[i + 2], vals[i + 3]])
    ptx.tcgen05.fence_before_thread_sync()
    ptx.bar.sync(0)
    with ptx.if_(warp == 0):
        ptx.tcgen05.dealloc(tmem, BN)
        ptx.tcgen05.relinquish_alloc_permit()
    ptx.ret()

def test_ampere_gemm_runs_and_matches_numpy():
    rep = assemble(ampere_gemm, M=64, N=96, K=64)
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((96, 64)).astype(ml_dtypes.bfloat16)
    c = ampere_gemm.interpret(a, b)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)   # f32 accumulation
    text = ampere_gemm.ptx(M=64, N=96, K=64)
    assert text.count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") == 2
    assert text.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 2


def test_hopper_warp_specialized_gemm_assembles_with_tma_and_wgmma():
    kw = dict(M=256, N=256, K=256)
    rep = assemble(hopper_ws_gemm, **kw)
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)
    assert "setmaxnreg" not in rep.text          # the register count at entry is known
    text = hopper_ws_gemm.ptx(**kw)
    assert text.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") == 4
    assert "setmaxnreg.dec.sync.aligned.u32 \t40;" in text
    assert "setmaxnreg.inc.sync.aligned.u32 \t232;" in text
    a, b = hopper_ws_gemm.trace(**kw).tma
    assert (a.shape, a.box, a.swizzle) == ((256, 256), (128, 64), 128)
    assert (b.shape, b.box, b.strides, b.swizzle) == ((4, 256, 64), (2, 64, 64), (128, 512, 2),
                                                      128)
    sass = hopper_ws_gemm.sass(**kw)
    assert "HGMMA" in sass and "UTMALDG" in sass
    assert not re.search(r"\b(LDL|STL)\b", sass)


def _bf16(rng, *shape):
    return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)


def _torch_bf16(x):
    torch = pytest.importorskip("torch")
    return torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)    # exact: x is bf16


def test_hopper_warp_specialized_gemm_runs_on_the_interpreter():
    rng = np.random.default_rng(3)
    a, b = _bf16(rng, 256, 320), _bf16(rng, 320, 256)      # 2 x 2 CTAs, 5 K tiles, 3 stages
    assert_gemm_close(hopper_ws_gemm.interpret(a, b), a, b)


def test_hopper_warp_specialized_gemm_under_jax_jit_on_the_cpu():
    import jax

    rng = np.random.default_rng(4)
    a, b = _bf16(rng, 128, 192), _bf16(rng, 192, 384)      # 3 x 1 CTAs, 3 K tiles
    c = jax.jit(lambda x, y: hopper_ws_gemm(x, y) * 2)(a, b)
    assert c.dtype == np.float32 and c.shape == (128, 384)
    assert_gemm_close(np.asarray(c) / 2, a, b)


def test_hopper_warp_specialized_gemm_from_torch_cpu_tensors():
    rng = np.random.default_rng(5)
    a, b = _bf16(rng, 256, 256), _bf16(rng, 256, 128)      # 1 x 2 CTAs, 4 K tiles
    c = hopper_ws_gemm(_torch_bf16(a), _torch_bf16(b))
    assert (str(c.dtype), tuple(c.shape), c.device.type) == ("torch.float32", (256, 128), "cpu")
    assert_gemm_close(c.numpy(), a, b)


def test_blackwell_tcgen05_gemm_assembles():
    kw = dict(M=256, N=256, K=256)
    rep = assemble(blackwell_gemm, **kw)
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)
    text = blackwell_gemm.ptx(**kw)
    assert ".version 8.8\n.target sm_100a" in text
    assert text.count("tcgen05.mma.cta_group::1.kind::f16") == 4
    sass = blackwell_gemm.sass(**kw)
    for op in ("UTCHMMA", "UTMALDG", "LDTM", "UTCBAR"):
        assert op in sass, op
    assert not re.search(r"\b(LDL|STL)\b", sass)


def test_blackwell_tcgen05_gemm_runs_on_the_interpreter():
    rng = np.random.default_rng(6)
    a, b = _bf16(rng, 256, 192), _bf16(rng, 384, 192)      # C = A @ B.T: 3 x 2 CTAs, 3 K tiles
    assert_gemm_close(blackwell_gemm.interpret(a, b), a, b, transpose_b=True)


def test_blackwell_tcgen05_gemm_under_jax_jit_on_the_cpu():
    import jax

    rng = np.random.default_rng(7)
    a, b = _bf16(rng, 128, 128), _bf16(rng, 256, 128)      # 2 x 1 CTAs, 2 K tiles
    assert_gemm_close(np.asarray(jax.jit(blackwell_gemm)(a, b)), a, b, transpose_b=True)


def test_blackwell_tcgen05_gemm_from_torch_cpu_tensors():
    rng = np.random.default_rng(8)
    a, b = _bf16(rng, 256, 64), _bf16(rng, 128, 64)        # 1 x 2 CTAs, 1 K tile
    c = blackwell_gemm(_torch_bf16(a), _torch_bf16(b))
    assert (str(c.dtype), tuple(c.shape), c.device.type) == ("torch.float32", (256, 128), "cpu")
    assert_gemm_close(c.numpy(), a, b, transpose_b=True)
