"""One process of ``test_distributed``'s sharded-error test:
``python -m tests.sharded_error_worker``.

On 8 CPU devices, calls a kernel that is not partitioned (no independent dims) under ``jit``
with an operand sharded over the mesh and its result summed across the devices; the kernel's
load is out of bounds. Prints the error the call raises (``ERROR <class>`` then its message),
then runs a correct non-partitioned kernel the same way and prints ``OK <value>``.
"""
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

from jax_pyptx import ptx_call  # noqa: E402
from tests.test_runtime_errors import oob  # noqa: E402
from tests.test_runtime_kernels import accumulate  # noqa: E402


def main():
    assert jax.device_count() == 8, jax.device_count()
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Explicit,))
    rows = NamedSharding(mesh, P("d"))
    # the callback runs on device 0 and its result is summed across all eight
    try:
        jax.block_until_ready(jax.jit(lambda x: oob(x).sum())(jax.device_put(jnp.ones(8), rows)))
        print("NO ERROR", flush=True)
    except Exception as e:
        print(f"ERROR {type(e).__name__}\n{e}", flush=True)
    # the devices are still usable, and a correct call's results reach every shard
    x0 = jax.device_put(jnp.arange(64, dtype=jnp.float32), rows)
    d = jax.device_put(jnp.full(64, 2.0, jnp.float32), rows)
    acc = ptx_call(accumulate, sanitize=False)      # Y reads as zeros: Y = D
    y = jax.jit(acc)(x0, d)
    np.testing.assert_array_equal(np.asarray(y), np.full(64, 2.0, np.float32))
    print(f"OK {float(jax.jit(lambda a, b: acc(a, b).sum())(x0, d))}", flush=True)


if __name__ == "__main__":
    main()
