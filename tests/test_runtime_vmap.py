"""vmap: the batch goes onto the grid's z (one launch, batch-offset pointers), nested vmaps and
any in_axes compose; a sequential loop only where the kernel cannot be batched on the grid."""
from __future__ import annotations

import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from examples.hopper.rms_norm import build_rms_norm, reference as rms_ref
from examples.hopper.softmax import build_softmax, reference as sm_ref
from jax_pyptx.runtime.batching import grid_batch_blocker
from jax_pyptx.specialize import ParamAbi

from .test_runtime_kernels import axpy, tma_touch, z_guard, z_rows

RMS = build_rms_norm(4, 64)
SOFTMAX = build_softmax(4, 64)


def _rand(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


def _eqns(jaxpr, name):
    """Every equation of primitive ``name`` in ``jaxpr`` and its sub-jaxprs."""
    from jax.extend.core import ClosedJaxpr, Jaxpr

    for e in jaxpr.eqns:
        if e.primitive.name == name:
            yield e
        for v in e.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(sub, ClosedJaxpr):
                    yield from _eqns(sub.jaxpr, name)
                elif isinstance(sub, Jaxpr):
                    yield from _eqns(sub, name)


def _specs(fn, *args):
    return [e.params["spec"] for e in _eqns(jax.make_jaxpr(fn)(*args).jaxpr, "pyptx_call")]


def _scans(fn, *args):
    return list(_eqns(jax.make_jaxpr(fn)(*args).jaxpr, "scan"))


class VmapTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_shared_weight(self):
        x, w = _rand(3, 8, 64), _rand(64, seed=1)
        out = self.variant(jax.vmap(RMS, in_axes=(0, None)))(x, w)
        np.testing.assert_allclose(out, rms_ref(x, w), rtol=1e-5, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_in_axes_1(self):
        x, w = _rand(8, 3, 64), _rand(3, 64, seed=1)
        f = jax.vmap(RMS, in_axes=(1, 0), out_axes=1)
        out = self.variant(f)(x, w)
        ref = jnp.stack([rms_ref(x[:, b], w[b]) for b in range(3)], axis=1)
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_nested_vmap(self):
        # x batched on both levels, w only on the outer one: one launch, grid z = 2 * 3
        x, w = _rand(2, 3, 4, 64), _rand(2, 64, seed=1)
        f = jax.vmap(jax.vmap(RMS, in_axes=(0, None)), in_axes=(0, 0))
        out = self.variant(f)(x, w)
        np.testing.assert_allclose(out, rms_ref(x, w[:, None, None, :]), rtol=1e-5, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_nested_vmap_in_axes_1_inner_only_weight(self):
        # w batched on the inner level only (axis 1 of the outer view)
        x, w = _rand(4, 2, 3, 64), _rand(3, 64, seed=2)
        inner = jax.vmap(RMS, in_axes=(1, 0))            # over the 3
        f = jax.vmap(inner, in_axes=(1, None))           # over the 2
        out = self.variant(f)(x, w)                      # (2, 3, 4, 64)
        ref = rms_ref(jnp.transpose(x, (1, 2, 0, 3)), w[None, :, None, :])
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_runtime_scalar_shared(self):
        x, w = _rand(2, 3, 40), _rand(40, seed=1)
        out = self.variant(jax.vmap(lambda x: axpy(x, w, 2.0)))(x)
        np.testing.assert_allclose(out, 2.0 * x + w, rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_batched_scalar_loops(self):
        x, w, a = _rand(3, 2, 40), _rand(40, seed=1), jnp.asarray([1.0, 2.0, -3.0])
        out = self.variant(jax.vmap(lambda x, a: axpy(x, w, a)))(x, a)
        np.testing.assert_allclose(out, a[:, None, None] * x + w, rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_kernel_using_grid_z_loops(self):
        x = _rand(3, 5)
        out = self.variant(jax.vmap(z_rows))(x)
        np.testing.assert_allclose(out, x + jnp.arange(5.0), rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_kernel_reading_ctaid_z_loops(self):
        x = _rand(3, 70)
        out = self.variant(jax.vmap(z_guard))(x)
        np.testing.assert_allclose(out, x + 1.0, rtol=1e-6)


def test_one_launch_on_the_grid():
    x, w = _rand(2, 3, 4, 64), _rand(2, 64, seed=1)
    f = jax.vmap(jax.vmap(RMS, in_axes=(0, None)), in_axes=(0, 0))
    assert not _scans(f, x, w)
    (spec,) = _specs(f, x, w)
    assert "rms_norm(M=4, batch=(2, 3), masks=11,10,11" in repr(spec)
    assert spec.launch_grid() == (1, 1, 6)
    t = spec.traced()
    # %ctaid.z is the linear batch index; w (outer level only) divides it by the inner size
    z = re.search(r"mov\.u32 \t(%r\d+), %ctaid\.z;", t.ptx).group(1)
    assert len(re.findall(rf"mul\.wide\.u32 \t%rd\d+, {z}, 1024;", t.ptx)) == 2   # x and y
    q = re.search(rf"div\.u32 \t(%r\d+), {z}, 3;", t.ptx).group(1)               # w: outer
    assert re.search(rf"mul\.wide\.u32 \t%rd\d+, {q}, 256;", t.ptx)


def test_loops_where_needed():
    x = _rand(3, 5)
    assert len(_scans(jax.vmap(z_rows), x)) == 1
    xa, w, a = _rand(3, 2, 40), _rand(40, seed=1), jnp.ones(3)
    assert len(_scans(jax.vmap(lambda x, a: axpy(x, w, a)), xa, a)) == 1
    assert not _scans(jax.vmap(lambda x: axpy(x, w, 1.0)), xa)


def test_loop_fallback_is_explained(capsys):
    x = _rand(3, 5)
    jaxpr = str(jax.make_jaxpr(jax.vmap(lambda x: z_rows(x, debug=True)))(x))
    assert "scan[" in jaxpr and "batch=" not in jaxpr
    assert "[jax_pyptx] vmap of z_rows: sequential loop because its grid (1, 1, 5) already " \
        "uses z" in capsys.readouterr().out
    jax.make_jaxpr(jax.vmap(lambda x: z_guard(x, debug=True)))(x)
    assert "[jax_pyptx] vmap of z_guard: sequential loop because it reads %ctaid.z" in \
        capsys.readouterr().out


def test_grid_batch_blockers():
    from jax_pyptx.runtime.primitive import CallSpec
    from jax_pyptx.specialize.options import CallOptions

    spec = CallSpec(kernel=z_rows, template=(), env=(("M", 5),))
    assert grid_batch_blocker(spec) == "its grid (1, 1, 5) already uses z"
    spec = CallSpec(kernel=z_guard, template=(), env=(("M", 5),))
    assert grid_batch_blocker(spec) == "it reads %ctaid.z"
    spec = CallSpec(kernel=axpy, template=(), env=(("M", 4), ("N", 40)))
    assert grid_batch_blocker(spec) is None
    assert grid_batch_blocker(spec, [2]) == "runtime scalar alpha is batched"
    assert grid_batch_blocker(spec, [0], 70000) == \
        "the batch (70000) exceeds the grid's z limit (65535)"
    g = CallSpec(kernel=axpy, template=(), env=(("M", 4), ("N", 40)),
                 options=CallOptions(grid=(4, 2, 2)))
    assert grid_batch_blocker(g) == "its grid (4, 2, 2) already uses z"


def test_vmap_tma_descriptor_per_item():
    """A batched global-mode TMA descriptor: one per item in the workspace, the kernel's
    descriptor address offset by %ctaid.z * 128; the plan asks the launcher for them."""
    x = jnp.ones((3, 16, 64), jnp.float32)
    f = jax.jit(jax.vmap(tma_touch))
    text = f.trace(x).lower(lowering_platforms=("cuda",)).as_text()
    assert "tma_batch = dense<3> : tensor<1xi64>" in text
    assert f"tma_batch_stride = dense<{16 * 64 * 4}> : tensor<1xi64>" in text
    assert "workspace_bytes = 384 : i64" in text
    assert "tensor<384xui8>" in text
    assert "grid = dense<[2, 1, 3]> : tensor<3xi64>" in text
    t = tma_touch.trace_for(ParamAbi.make((3,), ((True,), (True,))), M=16)
    assert "ld.param.u64 \t%rd0, [X_tma_desc];" in t.ptx
    assert "mul.wide.u32 \t%rd1, %r0, 128;" in t.ptx


@pytest.mark.parametrize("shape", [(2, 8, 64)])
def test_vmap_softmax_values(shape):
    x = _rand(*shape) * 3
    np.testing.assert_allclose(jax.vmap(SOFTMAX)(x), sm_ref(x), rtol=1e-5, atol=1e-6)
