"""Sharding on 8 CPU devices: shard_map with per-shard shapes, and sharded jit partitioned
along the kernel's independent dims (and vmap batch dims) with no all-gather."""
from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

from examples.hopper.rms_norm import build_rms_norm, reference as rms_ref
from examples.hopper.softmax import build_softmax, reference as sm_ref
from jax_pyptx import ptx_call
from jax_pyptx.runtime.primitive import CallSpec
from jax_pyptx.specialize.options import CallOptions
from jax_pyptx.runtime.sharding import local_spec, partition_plan

from .test_runtime_kernels import accumulate

RMS = build_rms_norm(4, 64)
SOFTMAX = build_softmax(4, 64)

pytestmark = pytest.mark.skipif(jax.device_count() < 8, reason="needs 8 host devices")


def _rand(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


def _mesh(kind=AxisType.Explicit, shape=(8,), names=("d",)):
    return jax.make_mesh(shape, names, axis_types=(kind,) * len(shape))


class ShardMapTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_shard_map_per_shard_shapes(self):
        mesh = _mesh()
        x, w = _rand(32, 64), _rand(64, seed=1)
        xs = jax.device_put(x, NamedSharding(mesh, P("d")))
        f = jax.shard_map(RMS, mesh=mesh, in_specs=(P("d"), P()), out_specs=P("d"))
        out = self.variant(f)(xs, w)
        np.testing.assert_allclose(out, rms_ref(x, w), rtol=1e-5, atol=1e-5)
        assert out.sharding.spec[0] == "d"


class ShardedJitTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_rows_sharded(self):
        for kind in (AxisType.Explicit, AxisType.Auto):
            mesh = _mesh(kind)
            x, w = _rand(32, 64), _rand(64, seed=1)
            xs = jax.device_put(x, NamedSharding(mesh, P("d")))
            out = self.variant(RMS)(xs, w)
            np.testing.assert_allclose(out, rms_ref(x, w), rtol=1e-5, atol=1e-5)
            assert out.sharding.spec[0] == "d"

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_batch_sharded(self):
        mesh = _mesh()
        x = _rand(8, 4, 64) * 3
        xs = jax.device_put(x, NamedSharding(mesh, P("d")))
        out = self.variant(jax.vmap(SOFTMAX))(xs)
        np.testing.assert_allclose(out, sm_ref(x), rtol=1e-5, atol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_not_independent_still_correct(self):
        mesh = _mesh()
        x0, d = jnp.arange(64, dtype=jnp.float32), jnp.ones(64, jnp.float32)
        sh = NamedSharding(mesh, P("d"))
        # accumulate reads its output Y, which starts as X0 (an input-output alias)
        out = self.variant(ptx_call(accumulate, input_output_aliases={0: 0}))(
            jax.device_put(x0, sh), jax.device_put(d, sh))
        np.testing.assert_allclose(out, x0 + d)


def _compiled(f, *args):
    return jax.jit(f).lower(*args).compile().as_text()


def test_sharded_jit_has_no_all_gather():
    mesh = _mesh()
    x, w = _rand(32, 64), _rand(64, seed=1)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    hlo = _compiled(RMS, xs, w)
    assert "all-gather" not in hlo and "all-to-all" not in hlo
    # each device runs the interpreter callback on its (4, 64) shard
    assert "f32[4,64]{1,0} custom-call(" in hlo and "xla_ffi_python_cpu_callback" in hlo
    # 2-D mesh: a vmap batch along one axis, rows along the other
    mesh2 = _mesh(shape=(2, 4), names=("b", "r"))
    xb = jax.device_put(_rand(2, 16, 64), NamedSharding(mesh2, P("b", "r")))
    hlo2 = _compiled(jax.vmap(SOFTMAX), xb)
    assert "all-gather" not in hlo2 and "f32[1,4,64]{2,1,0} custom-call(" in hlo2
    np.testing.assert_allclose(jax.jit(jax.vmap(SOFTMAX))(xb), sm_ref(xb), rtol=1e-5,
                               atol=1e-6)


def test_not_independent_dims_are_gathered():
    mesh = _mesh()
    sh = NamedSharding(mesh, P("d"))
    hlo = _compiled(accumulate, jax.device_put(jnp.zeros(64), sh), jax.device_put(
        jnp.ones(64), sh))
    assert "all-gather" in hlo


def test_cuda_lowering_sharded_jit():
    """Under sharded jit the kernel call is partitioned with a Shardy rule: rows (M) pass
    through, the fixed 64 columns are replicated; per shard it is the FFI launch of the
    kernel re-specialized for M / 8."""
    mesh = _mesh()
    x, w = _rand(32, 64), _rand(64, seed=1)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    text = jax.jit(RMS).trace(xs, w).lower(lowering_platforms=("cuda",)).as_text()
    assert "@CustomSPMDPartitioning" in text
    assert "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k])->([i, l])" in text
    assert "need_replication={j, k, l}" in text
    # the per-shard call: the partition step's spec, lowered for CUDA
    spec = CallSpec(kernel=RMS, template=(), env=(("M", 32),),
                    options=CallOptions(independent=("M",)))
    chosen = partition_plan(spec, mesh, [("d",), ()])
    local = local_spec(spec, mesh, chosen)
    assert chosen == {("s", "M"): ("d",)} and local.env == (("M", 4),)
    from jax_pyptx.runtime.primitive import bind

    shard_text = jax.jit(lambda a, b: bind(local, a, b)).trace(
        x[:4], w).lower(lowering_platforms=("cuda",)).as_text()
    assert "stablehlo.custom_call @jax_pyptx_launch" in shard_text
    assert "grid = dense<1> : tensor<3xi64>" in shard_text
    assert "(tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>" in shard_text


def test_cuda_lowering_shard_map():
    mesh = _mesh()
    x, w = _rand(32, 64), _rand(64, seed=1)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    f = jax.jit(jax.shard_map(RMS, mesh=mesh, in_specs=(P("d"), P()), out_specs=P("d")))
    text = f.trace(xs, w).lower(lowering_platforms=("cuda",)).as_text()
    assert "stablehlo.custom_call @jax_pyptx_launch" in text
    assert "grid = dense<1> : tensor<3xi64>" in text                  # 4 rows per shard
    assert "all_gather" not in text and "all-gather" not in text


def test_export_sharded_for_cuda():
    mesh = _mesh()
    x, w = _rand(32, 64), _rand(64, seed=1)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    exp = jax.export.export(jax.jit(RMS), platforms=["cuda"])(xs, w)
    text = exp.mlir_module()
    assert "stablehlo.custom_call @jax_pyptx_launch" in text      # no process-local callback
    assert "CustomSPMDPartitioning" not in text
    assert "grid = dense<[8, 1, 1]> : tensor<3xi64>" in text
    assert exp.nr_devices == 8
    pytest.importorskip("flatbuffers", reason="jax.export serialization needs flatbuffers")
    back = jax.export.deserialize(exp.serialize())
    assert back.nr_devices == 8 and "@jax_pyptx_launch" in back.mlir_module()


def test_shards_the_grid_cannot_cover_are_not_split():
    mesh = _mesh()
    spec = CallSpec(kernel=RMS, template=(), env=(("M", 16),),
                    options=CallOptions(independent=("M",), covers=(("M", 0, 4),)))
    assert partition_plan(spec, mesh, [("d",), ()]) == {}        # 2 rows per shard < 4
    spec32 = CallSpec(kernel=RMS, template=(), env=(("M", 32),),
                      options=CallOptions(independent=("M",), covers=(("M", 0, 4),)))
    assert partition_plan(spec32, mesh, [("d",), ()]) == {("s", "M"): ("d",)}
    x, w = _rand(16, 64), _rand(64, seed=1)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    np.testing.assert_allclose(jax.jit(RMS)(xs, w), rms_ref(x, w), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows, split", [(16, False), (32, True)])
def test_one_sharding_decision(rows, split):
    """Explicit mode: the output sharding the abstract eval promises is the partition's. With
    M=16 on 8 devices a shard would hold 2 rows, fewer than a block covers (4): both fall
    back to replicated rows; with M=32 both split them."""
    from jax_pyptx.runtime.shard_plan import out_pspecs
    from jax_pyptx.runtime.sharding import out_shardings

    mesh = _mesh(AxisType.Explicit)
    x, w = _rand(rows, 64), _rand(64, seed=1)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    spec = CallSpec(kernel=RMS, template=(), env=(("M", rows),),
                    options=CallOptions(independent=("M",), covers=(("M", 0, 4),)))
    chosen = partition_plan(spec, mesh, [("d",), ()])
    assert chosen == ({("s", "M"): ("d",)} if split else {})
    assert out_pspecs(spec, chosen) == [("d", None) if split else (None, None)]
    avals = [jax.typeof(xs), jax.typeof(w)]
    (promised,) = out_shardings(spec, avals)
    assert tuple(promised.spec) == out_pspecs(spec, chosen)[0]
    out = jax.jit(RMS)(xs, w)
    np.testing.assert_allclose(out, rms_ref(x, w), rtol=1e-5, atol=1e-5)
    assert tuple(out.sharding.spec) == (("d", None) if split else (None, None))
    hlo = _compiled(RMS, xs, w)
    assert (f"f32[{rows // 8},64]{{1,0}} custom-call(" in hlo) == split
