"""Kernels written with the DSL's typed wrappers (``ptx.wgmma.*``, ``ptx.tcgen05.*``) run in
the interpreter and match NumPy; planted bugs are reported with the user's Python line."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.errors import AsyncHazardError, TensorMemoryError
from jax_pyptx.types import b32, bf16, f32, u32, u64

from .helpers import assemble, line_of

N = 64


def _copy_k_major(src, buf, rows, tid, lbo):
    """Thread t copies 16 bytes (row t//2, K chunk t%2) of a rows x 16 bf16 row-major matrix
    into ``buf`` in the K-major no-swizzle canonical layout (8-row core matrices 128 bytes
    apart, the second K chunk ``lbo`` bytes on)."""
    for j in range(rows * 2 // 128):
        t = tid + 128 * j
        r, kc = t >> 1, t & 1
        v = reg.array(b32, 4)
        ptx.inst.ld.global_.v4.b32(v, ptx.addr(src.ptr() + reg.cvt(t * 16, u64)))
        ptx.inst.st.shared.v4.b32(ptx.addr(buf.ptr() + (r & 7) * 16 + (r >> 3) * 128 + kc * lbo), v)


def build_wgmma(read_early=False):
    @kernel(arch="sm_90a", in_specs=(Tile(64, 16, bf16), Tile(N, 16, bf16)), out_specs=(Tile(64, N, f32),),
            block=(128, 1, 1), grid=(1, 1, 1))
    def wgmma_tile(A, Bt, C):
        sa = smem.alloc(bf16, (64, 16), align=128, name="sa")
        sb = smem.alloc(bf16, (N, 16), align=128, name="sb")
        tid = reg.from_(ptx.special.tid.x(), u32)
        _copy_k_major(A, sa, 64, tid, 1024)
        _copy_k_major(Bt, sb, N, tid, (N // 8) * 128)
        ptx.inst.fence.proxy.async_.shared__cta()
        ptx.bar.sync(0)
        da = ptx.wgmma.desc_reg(sa, 1024, 128, swizzle="none")
        db = ptx.wgmma.desc_reg(sb, (N // 8) * 128, 128, swizzle="none")
        acc = ptx.wgmma.zero_acc(N)
        ptx.wgmma.fence()
        ptx.wgmma.mma_async(acc, da, db, n=N, atype=bf16, scale_d=0)   # the mma
        ptx.wgmma.commit_group()
        if read_early:
            acc[0] += acc[1]                                             # before the wait
        ptx.wgmma.wait_group(0)
        lane = tid & 31
        rowbase = (tid >> 5) * 16 + (lane >> 2)
        base = C.ptr() + reg.cvt((rowbase * N + (lane & 3) * 2) * 4, u64)
        for i in range(N // 2):        # the ISA's accumulator layout
            ptx.inst.st.global_.f32(ptx.addr(base, (8 * ((i // 2) % 2) * N + 8 * (i // 4) + i % 2) * 4), acc[i])
        ptx.ret()
    return wgmma_tile


def test_dsl_wgmma_tile_matches_numpy_and_assembles():
    k = build_wgmma()
    assemble(k)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((64, 16)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((N, 16)).astype(ml_dtypes.bfloat16)
    C = k.interpret(A, Bt)
    C = C[0] if isinstance(C, (tuple, list)) else C
    np.testing.assert_allclose(C, A.astype(np.float64) @ Bt.astype(np.float64).T, rtol=1e-6, atol=1e-5)


def test_dsl_wgmma_accumulator_read_before_wait_names_the_user_lines():
    k = build_wgmma(read_early=True)
    rng = np.random.default_rng(1)
    A = rng.standard_normal((64, 16)).astype(ml_dtypes.bfloat16)
    with pytest.raises(AsyncHazardError) as ei:
        k.interpret(A, rng.standard_normal((N, 16)).astype(ml_dtypes.bfloat16))
    msg = str(ei.value)
    fn = build_wgmma.__code__
    src = line_of(build_wgmma, "# before the wait")
    mma = line_of(build_wgmma, "# the mma")
    assert msg.startswith(f"{src}: this instruction reads register ")
    assert f"while the asynchronous wgmma.mma_async ({mma}: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" in msg
    assert "wgmma.wait_group must retire it first" in msg and fn


def build_tcgen05(leak=False):
    @kernel(arch="sm_100a", in_specs=(Tile(128, 16, bf16), Tile(N, 16, bf16)), out_specs=(Tile(128, N, f32),),
            block=(128, 1, 1), grid=(1, 1, 1))
    def umma_tile(A, Bt, C):
        sa = smem.alloc(bf16, (128, 16), align=128, name="sa")
        sb = smem.alloc(bf16, (N, 16), align=128, name="sb")
        slot = smem.alloc(u32, (1,), name="slot")
        bar = smem.mbarrier(1, name="bar")
        tid = reg.from_(ptx.special.tid.x(), u32)
        warp = tid >> 5
        with ptx.if_(warp == 0):
            ptx.tcgen05.alloc(slot, 128)                      # the alloc
        with ptx.if_(tid == 0):
            ptx.mbarrier.init(bar, 1)
        _copy_k_major(A, sa, 128, tid, 2048)
        _copy_k_major(Bt, sb, N, tid, (N // 8) * 128)
        ptx.inst.fence.proxy.async_.shared__cta()
        ptx.tcgen05.fence_before_thread_sync()
        ptx.bar.sync(0)
        ptx.tcgen05.fence_after_thread_sync()
        taddr = reg.scalar(u32)
        ptx.inst.ld.shared.u32(taddr, slot[0])
        with ptx.if_(tid == 0):
            da = ptx.tcgen05.smem_desc_reg(sa, 2048, 128, swizzle="none")
            db = ptx.tcgen05.smem_desc_reg(sb, (N // 8) * 128, 128, swizzle="none")
            idesc = reg.scalar(u32, ptx.tcgen05.instr_desc("f16", 128, N, f32, bf16, bf16))
            ptx.tcgen05.mma(taddr, da, db, idesc, 0, kind="f16")
            ptx.tcgen05.commit(bar)
        ptx.mbarrier.wait(bar, 0)
        ptx.tcgen05.fence_after_thread_sync()
        regs = ptx.tcgen05.ld(taddr + ((warp * 32) << 16), "32x32b", N)
        ptx.tcgen05.wait_ld()
        base = C.ptr() + reg.cvt(tid * (N * 4), u64)
        for j in range(N):
            ptx.inst.st.global_.b32(ptx.addr(base, 4 * j), regs[j])
        ptx.tcgen05.fence_before_thread_sync()
        ptx.bar.sync(0)
        if not leak:
            with ptx.if_(warp == 0):
                ptx.tcgen05.dealloc(taddr, 128)
        ptx.ret()
    return umma_tile


def test_dsl_tcgen05_tile_matches_numpy_and_assembles():
    k = build_tcgen05()
    assemble(k)
    rng = np.random.default_rng(2)
    A = rng.standard_normal((128, 16)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((N, 16)).astype(ml_dtypes.bfloat16)
    C = k.interpret(A, Bt)
    C = C[0] if isinstance(C, (tuple, list)) else C
    np.testing.assert_allclose(C, A.astype(np.float64) @ Bt.astype(np.float64).T, rtol=1e-6, atol=1e-5)


def test_dsl_tcgen05_leak_names_the_user_line_of_the_alloc():
    k = build_tcgen05(leak=True)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((128, 16)).astype(ml_dtypes.bfloat16)
    with pytest.raises(TensorMemoryError) as ei:
        k.interpret(A, rng.standard_normal((N, 16)).astype(ml_dtypes.bfloat16))
    alloc = line_of(build_tcgen05, "# the alloc")
    assert str(ei.value).startswith(f"{alloc}: Tensor Memory not deallocated at exit: 128 columns at column 0 of "
                                    f"CTA (0,0,0), allocated by {alloc}: ")
