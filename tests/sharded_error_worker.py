"""One process of ``test_distributed``'s sharded-error test:
``python -m tests.sharded_error_worker``.

On 8 CPU devices, calls kernels whose loads go out of bounds, each result then reduced across
the devices (a collective after the kernel):

- ``jit``: a kernel that is not partitioned (no independent dims) under ``jit`` with an
  operand sharded over the mesh: its callback runs on device 0 alone (also with the mesh set
  as the context mesh);
- ``shard_map``: a kernel run per shard that fails on the shard of device 3 only, with the
  mesh set as the context mesh (``jax.set_mesh``) too.

Prints ``== <case>`` then ``<error class>`` and the error's message for each, then runs a
correct non-partitioned kernel the same way (without, then with a context mesh) and prints
``OK <value>`` for each.
"""
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

from jax_pyptx import Tile, kernel, ptx, ptx_call, reg
from jax_pyptx.types import u32, u64
from tests.test_runtime_errors import oob
from tests.test_runtime_kernels import accumulate


@kernel(arch="sm_80", in_specs=(Tile("M", u32),), out_specs=(Tile("M", u32, partial=True),), block=(1, 1, 1))
def gather_first(X, Y):
    """Y[0] = X[X[0]] (the rest of Y is left as it is: a partial output)."""
    p = reg.from_(X.ptr(), u64)
    i, v = reg.scalar(u32), reg.scalar(u32)
    ptx.inst.ld.global_.u32(i, ptx.addr(p))
    ptx.inst.ld.global_.u32(v, ptx.addr(p + reg.cvt(i, u64) * 4))   # out of bounds on shard 3
    ptx.inst.st.global_.u32(ptx.addr(reg.from_(Y.ptr(), u64)), v)
    ptx.ret()


def _report(case, fn, *args):
    print(f"== {case}", flush=True)
    try:
        jax.block_until_ready(fn(*args))
        print("NO ERROR", flush=True)
    except Exception as e:
        print(f"{type(e).__name__}\n{e}", flush=True)


def main():
    assert jax.device_count() == 8, jax.device_count()
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Explicit,))
    rows = NamedSharding(mesh, P("d"))
    on_device0 = jax.jit(lambda x: oob(x).sum())
    _report("jit", on_device0, jax.device_put(jnp.ones(8), rows))
    with jax.set_mesh(mesh):
        _report("jit under set_mesh", on_device0, jax.device_put(jnp.ones(8), rows))
    x = np.zeros(64, np.uint32)
    x[3 * 8] = 1000                        # the first element of device 3's shard
    x = jax.device_put(jnp.asarray(x), rows)
    summed = jax.jit(jax.shard_map(lambda a: jax.lax.psum(gather_first(a), "d"), mesh=mesh,
                                   in_specs=P("d"), out_specs=P()))
    _report("shard_map", summed, x)
    with jax.set_mesh(mesh):
        _report("shard_map under set_mesh", summed, x)
    # the devices are still usable, and a correct call's results reach every shard
    x0 = jax.device_put(jnp.arange(64, dtype=jnp.float32), rows)
    d = jax.device_put(jnp.full(64, 2.0, jnp.float32), rows)
    acc = ptx_call(accumulate, input_output_aliases={0: 0})      # Y starts as X0: Y = X0 + D
    y = jax.jit(acc)(x0, d)
    np.testing.assert_array_equal(np.asarray(y), np.arange(64, dtype=np.float32) + 2.0)
    print(f"OK {float(jax.jit(lambda a, b: acc(a, b).sum())(x0, d))}", flush=True)
    with jax.set_mesh(mesh):
        print(f"OK {float(jax.jit(lambda a, b: acc(a, b).sum())(x0, d))}", flush=True)


if __name__ == "__main__":
    main()
