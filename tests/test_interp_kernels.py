"""The project's own DSL kernels (examples/) run in the interpreter through
``kernel.interpret`` and match NumPy; a hand-written PTX RMSNorm does too. Tolerances follow
the hardware's documented precision (rsqrt.approx: 2^-22.9 relative, ex2.approx: 2^-22.5)."""
from __future__ import annotations

import pathlib
import sys

import numpy as np

from jax_pyptx.interpret import launch

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
    ptx = (ROOT / "tests" / "ptx_interp" / "rmsnorm.ptx").read_text()
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
