"""Pipelined TMA + wgmma GEMMs (a ring of shared-memory stages refilled while the warpgroups
compute, wrapping around with the mbarrier phase parity) and a TMA + tcgen05 tile against
NumPy; the same kernels benchmarks/interpret.py times."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx.interpret import launch

from .mma_kernels import hopper_gemm, hopper_gemm_args, tcgen05_tile, tcgen05_tile_args


@pytest.mark.parametrize("M,N,K,bk,stages", [(128, 128, 64, 16, 3), (128, 256, 128, 32, 2),
                                             (256, 256, 256, 64, 3), (128, 128, 192, 64, 4)])
def test_tma_wgmma_pipeline(M, N, K, bk, stages):
    rng = np.random.default_rng(M + N + K)
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
    C = np.zeros((M, N), np.float32)
    args, kw = hopper_gemm_args(A, Bt, C, bk)
    launch(hopper_gemm(bk, stages), "hopper_gemm", args, **kw)
    # bf16 products are exact in f32; f32 accumulation over K <= 256: |error| << 1e-4
    np.testing.assert_allclose(C, A.astype(np.float64) @ Bt.astype(np.float64).T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n,k", [(256, 64), (128, 128)])
def test_tma_tcgen05_tile(n, k):
    rng = np.random.default_rng(n + k)
    A = rng.standard_normal((128, k)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((n, k)).astype(ml_dtypes.bfloat16)
    C = np.zeros((128, n), np.float32)
    args, kw = tcgen05_tile_args(A, Bt, C)
    launch(tcgen05_tile(n, k), "tcgen05_tile", args, **kw)
    np.testing.assert_allclose(C, A.astype(np.float64) @ Bt.astype(np.float64).T, rtol=1e-5, atol=1e-4)
