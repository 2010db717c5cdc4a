"""The project's own DSL kernels (examples/) run in the interpreter through
``kernel.interpret`` and match NumPy; a hand-written PTX RMSNorm does too. Tolerances follow
the hardware's documented precision (rsqrt.approx: 2^-22.9 relative, ex2.approx: 2^-22.5)."""
from __future__ import annotations

import pathlib
import sys

import ml_dtypes
import numpy as np

from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.interpret import launch
from jax_pyptx.types import b32, bf16, f32, u32, u64

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from examples.demo import saxpy  # noqa: E402
from examples.hopper.layer_norm import build_layer_norm  # noqa: E402
from examples.hopper.rms_norm import build_rms_norm, build_rms_norm_bwd  # noqa: E402
from examples.hopper.softmax import build_softmax  # noqa: E402
from examples.hopper.swiglu import build_swiglu  # noqa: E402

RNG = np.random.default_rng(0)


def rms_ref(x, w, eps=1e-6):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + eps) * w


def test_rms_norm_4x64():
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    w = RNG.standard_normal(64).astype(np.float32)
    y = build_rms_norm(4, 64).interpret(x, w)
    np.testing.assert_allclose(y, rms_ref(x, w), rtol=2e-6, atol=1e-6)


def test_rms_norm_more_rows_and_backward():
    x = RNG.standard_normal((12, 64)).astype(np.float32)
    w = RNG.standard_normal(64).astype(np.float32)
    dy = RNG.standard_normal((12, 64)).astype(np.float32)
    y = build_rms_norm(4, 64).interpret(x, w)
    np.testing.assert_allclose(y, rms_ref(x, w), rtol=2e-6, atol=1e-6)
    dx, dwr = build_rms_norm_bwd(4, 64).interpret(x, w, dy)
    x64, w64, dy64 = (v.astype(np.float64) for v in (x, w, dy))
    r = 1 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6)
    xhat = x64 * r
    g = dy64 * w64
    ref_dx = (g - xhat * (g * xhat).mean(-1, keepdims=True)) * r
    np.testing.assert_allclose(dx, ref_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dwr, dy64 * xhat, rtol=1e-5, atol=1e-6)


def test_softmax_4x64():
    x = (RNG.standard_normal((8, 64)) * 3).astype(np.float32)
    y = build_softmax(4, 64).interpret(x)
    e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_layer_norm_4x64():
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    w = RNG.standard_normal(64).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    y = build_layer_norm(4, 64).interpret(x, w, b)
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    ref = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_swiglu_and_saxpy():
    g = RNG.standard_normal((16, 256)).astype(np.float32)
    u = RNG.standard_normal((16, 256)).astype(np.float32)
    y = build_swiglu().interpret(g, u, np.float32(1.0))
    g64 = g.astype(np.float64)
    np.testing.assert_allclose(y, g64 / (1 + np.exp(-g64)) * u, rtol=1e-5, atol=1e-6)
    x = RNG.standard_normal(1024).astype(np.float32)
    z = RNG.standard_normal(1024).astype(np.float32)
    out = saxpy.interpret(x, z)
    np.testing.assert_array_equal(out, (np.float32(2.0) * x + z).astype(np.float32))


def test_hand_written_ptx_rmsnorm():
    ptx = (ROOT / "tests" / "cuda_interp" / "rmsnorm_hand.ptx").read_text()
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    w = RNG.standard_normal(64).astype(np.float32)
    y = np.zeros_like(x)
    launch(ptx, "rmsnorm", [x, w, y, np.float32(1e-6)], grid=4, block=32)
    np.testing.assert_allclose(y, rms_ref(x, w), rtol=2e-6, atol=1e-6)


def test_sanitizer_can_be_turned_off_for_speed():
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    w = RNG.standard_normal(64).astype(np.float32)
    k = build_rms_norm(4, 64)
    np.testing.assert_array_equal(k.interpret(x, w, sanitize=False), k.interpret(x, w))


@kernel(arch="sm_80", in_specs=(Tile(16, 16, bf16), Tile(8, 16, bf16)), out_specs=(Tile(16, 8, f32),),
        block=(32, 1, 1), grid=(1, 1, 1))
def mma_tile(A, Bt, C):
    """One m16n8k16 bf16 tile written with the DSL: stage A and B^T in shared memory,
    ldmatrix.x4 / .x2 fragments, mma.sync, store the f32 accumulators."""
    sA = smem.alloc(bf16, (16, 16))
    sB = smem.alloc(bf16, (8, 16))
    lane = reg.from_(ptx.special.tid.x(), u32)
    off = reg.cvt(lane, u64) * 16
    v = reg.array(b32, 4)
    ptx.inst.ld.global_.v4.b32(v, ptx.addr(A.ptr() + off))
    ptx.inst.st.shared.v4.b32(ptx.addr(sA.ptr() + lane * 16), v)
    with ptx.if_(lane < 16):
        w = reg.array(b32, 4)
        ptx.inst.ld.global_.v4.b32(w, ptx.addr(Bt.ptr() + off))
        ptx.inst.st.shared.v4.b32(ptx.addr(sB.ptr() + lane * 16), w)
    ptx.bar.sync(0)
    a = ptx.mma.ldmatrix(ptx.addr(sA.ptr() + (lane % 16) * 32 + (lane // 16) * 16), num=4)
    b = ptx.mma.ldmatrix(ptx.addr(sB.ptr() + (lane % 8) * 32 + ((lane // 8) % 2) * 16), num=2)
    d = reg.array(f32, 4, init=0.0)
    ptx.mma.sync(d, a, b, d, shape="m16n8k16", dtype=f32, atype=bf16)
    base = C.ptr() + reg.cvt((lane >> 2) * 8 + (lane & 3) * 2, u64) * 4
    ptx.inst.st.global_.v2.f32(ptx.addr(base), [d[0], d[1]])
    ptx.inst.st.global_.v2.f32(ptx.addr(base + 8 * 8 * 4), [d[2], d[3]])
    ptx.ret()


def test_dsl_mma_sync_tile():
    A = RNG.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)
    Bt = RNG.standard_normal((8, 16)).astype(ml_dtypes.bfloat16)
    C = mma_tile.interpret(A, Bt)
    np.testing.assert_allclose(C, A.astype(np.float64) @ Bt.astype(np.float64).T, rtol=1e-6, atol=1e-6)
