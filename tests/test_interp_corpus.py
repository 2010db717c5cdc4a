"""PTX from other compilers runs in the interpreter: Triton's sm_80 matmuls (mma.sync, ldmatrix,
cp.async pipelines over dynamic shared memory) and softmax, and nvcc kernels from the shared
corpus (mbarrier rings, cuda::barrier, a one-warp ldmatrix + mma.sync tile, clusters).
Every ``.entry`` of every corpus file also decodes without error."""
from __future__ import annotations

import glob
import pathlib

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx.interpret import launch
from jax_pyptx.interpret.machine.program import Program
from jax_pyptx.interpret.scheduler.handlers import decode_program
from jax_pyptx.interpret.launch import get_module

CORPUS = pathlib.Path(__file__).parent / "corpus"
SCRATCH = [np.zeros(1024, np.uint8), np.zeros(1024, np.uint8)]      # Triton's two extra params


def corpus(rel):
    p = CORPUS / rel
    if not p.exists():
        pytest.skip(f"{rel} is not in the corpus")
    return p.read_text()


def test_triton_matmul_f16_sm80():
    ptx = corpus("triton/matmul_f16_sm80.ptx")        # BM=128 BN=64 BK=32, 4 warps, 3 stages
    M = N = K = 128
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = np.zeros((M, N), np.float16)
    launch(ptx, "matmul_kernel", [A, B, C, np.int32(M), np.int32(N), np.int32(K), np.int32(K), np.int32(N),
                                  np.int32(N), *SCRATCH], grid=2, block=128, smem=49152)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(C.astype(np.float64), ref, rtol=2e-3, atol=2e-2)


def test_triton_matmul_tf32_sm80_truncates_inputs_like_the_tensor_core():
    ptx = corpus("triton/matmul_tf32_sm80.ptx")
    M = N = K = 64
    rng = np.random.default_rng(1)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.zeros((M, N), np.float32)
    launch(ptx, "matmul_kernel", [A, B, C, np.int32(M), np.int32(N), np.int32(K), np.int32(K), np.int32(N),
                                  np.int32(N), *SCRATCH], grid=1, block=128, smem=65536)
    tf32 = lambda X: (X.view(np.uint32) & 0xFFFFE000).view(np.float32).astype(np.float64)
    np.testing.assert_allclose(C, tf32(A) @ tf32(B), rtol=1e-5, atol=1e-5)


def test_triton_softmax_sm80():
    ptx = corpus("triton/softmax_sm80.ptx")            # BLOCK=4096, 16 warps
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3, 1000)) * 2).astype(np.float16)
    out = np.zeros_like(x)
    launch(ptx, "softmax_kernel", [out, x, np.int32(1000), np.int32(1000), np.int32(1000), *SCRATCH],
           grid=3, block=512, smem=1024)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(out.astype(np.float64), e / e.sum(1, keepdims=True), rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("arch", ["sm80", "sm90a"])
def test_nvcc_mbarrier_ring_and_cuda_barrier(arch):
    ptx = corpus(f"cuda/mbarrier_pipeline.{arch}.ptx")
    names = [f.name for f in get_module(ptx).functions if f.kind == ".entry"]
    iters = 8
    rng = np.random.default_rng(3)
    x = rng.random(iters * 128).astype(np.float32)
    out = np.zeros(256, np.float32)
    launch(ptx, names[0], [x, out, np.int32(iters)], grid=2, block=128)
    ref = sum(x.reshape(iters, 128)[i][(np.arange(128) + 1) & 127] for i in range(iters))
    # + mbarrier.pending_count of each thread's arrive on the (never waited) "empty" barrier:
    # threads arrive in thread order, so thread t sees 127 - t arrivals still pending
    ref = ref + iters * (127 - np.arange(128))
    np.testing.assert_allclose(out[:128], ref, rtol=1e-6)
    np.testing.assert_array_equal(out[:128], out[128:])
    xb = rng.random(128).astype(np.float32)
    x0 = xb.copy()
    launch(ptx, names[1], [xb], block=128)
    np.testing.assert_allclose(xb, 2 * x0 + 2 * np.roll(x0, -1), rtol=1e-6)


def test_nvcc_one_warp_mma_tile():
    ptx = corpus("cuda/mma_sync_gemm.sm80.ptx")
    rng = np.random.default_rng(4)
    K = 32
    A = rng.standard_normal((16, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((8, K)).astype(ml_dtypes.bfloat16)          # n-major
    C = np.zeros((16, 8), np.float32)
    launch(ptx, "_Z8mma_tilePK13__nv_bfloat16S1_Pfi", [A, B, C, np.int32(K)], block=32)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64).T, rtol=1e-5, atol=1e-5)


def test_every_corpus_entry_decodes():
    files = sorted(glob.glob(str(CORPUS / "**" / "*.ptx"), recursive=True))
    if not files:
        pytest.skip("no corpus")
    n = 0
    for f in files:
        m = get_module(pathlib.Path(f).read_text())
        for fn in m.functions:
            if fn.kind == ".entry" and fn.body is not None:
                prog = Program(m, fn.name)
                decode_program(prog)
                assert len(prog.code) > 0
                n += 1
    assert n > 50
