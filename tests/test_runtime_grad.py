"""Autodiff: a forward kernel paired with a backward kernel (custom_vjp)."""
from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

from examples.hopper.rms_norm import build_rms_norm, reference as rms_ref
from examples.hopper.softmax import build_softmax
from jax_pyptx import NotSupportedError, SpecializationError, ptx_call
from jax_pyptx.runtime.autodiff import with_backward

from .test_runtime_kernels import accumulate, axpy

RMS = build_rms_norm(4, 64)


def _rand(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


def _loss(f):
    return lambda x, w: jnp.sum(f(x, w) * jnp.cos(3.0 * x))


class GradTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_grad_with_backward_kernel(self):
        x, w = _rand(8, 64), _rand(64, seed=1)
        g = self.variant(jax.grad(_loss(RMS), argnums=(0, 1)))(x, w)
        r = jax.grad(_loss(rms_ref), argnums=(0, 1))(x, w)
        np.testing.assert_allclose(g[0], r[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g[1], r[1], rtol=1e-4, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_grad_under_vmap(self):
        x, w = _rand(2, 4, 64), _rand(64, seed=1)
        f = jax.vmap(jax.grad(_loss(RMS)), in_axes=(0, None))
        r = jax.vmap(jax.grad(_loss(rms_ref)), in_axes=(0, None))
        np.testing.assert_allclose(self.variant(f)(x, w), r(x, w), rtol=1e-4, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_grad_sharded(self):
        mesh = jax.make_mesh((8,), ("d",))
        x, w = _rand(32, 64), _rand(64, seed=1)
        xs = jax.device_put(x, NamedSharding(mesh, P("d")))
        with jax.set_mesh(mesh):    # eager grad on an explicit mesh needs it (JAX's rule)
            g = self.variant(jax.grad(_loss(RMS), argnums=(0, 1)))(xs, w)
        r = jax.grad(_loss(rms_ref), argnums=(0, 1))(x, w)
        np.testing.assert_allclose(g[0], r[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g[1], r[1], rtol=1e-4, atol=1e-4)

    @chex.variants(with_jit=True, without_jit=True)
    def test_with_backward_kernels_and_scalars(self):
        # d(alpha*x + w)/dx = alpha: the backward is a kernel too (axpy with w = 0)
        zeros = jnp.zeros(40, jnp.float32)
        f = with_backward(axpy, lambda x, w, a, dy: (axpy(dy, zeros, a), dy.sum(0), None))
        x, w = _rand(3, 40), _rand(40, seed=1)
        g = self.variant(jax.grad(lambda x, w: jnp.sum(f(x, w, 2.5) ** 2), argnums=(0, 1)))(
            x, w)
        y = 2.5 * x + w
        np.testing.assert_allclose(g[0], 2.5 * 2 * y, rtol=1e-5)
        np.testing.assert_allclose(g[1], (2 * y).sum(0), rtol=1e-5)


def test_value_and_grad_runs_forward_kernel_once():
    x, w = _rand(8, 64), _rand(64, seed=1)
    jaxpr = str(jax.make_jaxpr(jax.value_and_grad(_loss(RMS)))(x, w))
    assert jaxpr.count("spec=rms_norm(M=8") == 1 and jaxpr.count("spec=rms_norm_bwd(M=8") == 1


def test_grad_without_backward_errors():
    sm = build_softmax(4, 64)
    with pytest.raises(NotSupportedError) as e:
        jax.grad(lambda x: jnp.sum(sm(x)))(jnp.ones((4, 64)))
    assert str(e.value) == JVP_MESSAGE


JVP_MESSAGE = (
    "kernel 'softmax' has no derivative: jax_pyptx kernels are opaque to autodiff. Reverse "
    "mode (jax.grad, jax.vjp) needs a backward kernel paired with it: "
    "jax_pyptx.runtime.autodiff.with_backward(fwd, bwd) or jax_pyptx.configure(kernel, "
    "backward=bwd). Forward mode (jax.jvp, jax.jacfwd) needs a JVP, which a backward kernel "
    "does not give: wrap the call in jax.custom_jvp and compute the tangent yourself (with "
    "another kernel or jax.numpy)")


def test_backward_with_wrong_gradient_count():
    # sanitize=False: accumulate reads its (uninitialized) output, which the sanitizer reports
    f = ptx_call(accumulate, backward=lambda x0, d, dy: (dy,), sanitize=False)
    with pytest.raises(SpecializationError) as e:
        jax.grad(lambda a: jnp.sum(f(a, a)))(jnp.ones(8))
    assert str(e.value) == ("backward of 'accumulate' returned 1 gradients for 2 inputs; "
                            "return one per forward input (None for none)")
