"""One process of ``test_distributed``: ``python -m tests.distributed_worker PORT PROCESS_ID``.

Joins a two-process ``jax.distributed`` cluster on the CPU (4 devices per process, 8 in all),
builds global arrays over the 8-device mesh from per-process data, runs the RMSNorm example
kernel under ``shard_map`` and under sharded ``jit``, and checks each addressable shard of the
results against a NumPy reference. Prints ``OK <process> <checks>`` on success.
"""
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import jax

PORT, PID = int(sys.argv[1]), int(sys.argv[2])
try:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
except Exception:   # newer JAX: gloo is the default and the option may be gone
    pass
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{PORT}", num_processes=2,
                           process_id=PID, initialization_timeout=60)

import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

from examples.hopper.rms_norm import build_rms_norm  # noqa: E402

ROWS, N, M = 4, 64, 64          # 8 devices x 8 rows: two blocks of 4 rows per device


def reference(x, w, eps=1e-6):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w


def main():
    assert jax.process_count() == 2 and jax.device_count() == 8, \
        (jax.process_count(), jax.device_count())
    assert jax.local_device_count() == 4
    mesh = Mesh(np.array(jax.devices()), ("d",))
    rng = np.random.default_rng(0)                  # same data in both processes
    x_all = rng.standard_normal((M, N)).astype(np.float32)
    w_all = rng.standard_normal(N).astype(np.float32)
    want = reference(x_all, w_all)
    rows = NamedSharding(mesh, P("d", None))
    rep = NamedSharding(mesh, P())
    x = jax.make_array_from_callback((M, N), rows, lambda idx: x_all[idx])
    w = jax.make_array_from_callback((N,), rep, lambda idx: w_all[idx])
    k = build_rms_norm(ROWS, N)

    sharded = jax.jit(k, out_shardings=rows)
    # the rows are independent: every device runs the kernel on its own rows, no all-gather
    hlo = sharded.lower(x, w).compile().as_text()
    assert "all-gather" not in hlo, "sharded jit gathered the rows"
    outs = {
        "shard_map": jax.jit(jax.shard_map(k, mesh=mesh, in_specs=(P("d", None), P()),
                                           out_specs=P("d", None)))(x, w),
        "sharded jit": sharded(x, w),
    }
    checks = 0
    for name, y in outs.items():
        assert y.shape == (M, N), (name, y.shape)
        shards = y.addressable_shards
        assert len(shards) == 4, (name, len(shards))
        for s in shards:
            np.testing.assert_allclose(np.asarray(s.data), want[s.index], rtol=2e-5,
                                       atol=2e-5, err_msg=f"{name}: shard {s.index}")
            checks += 1
    # the devices this process checked are its own four
    assert {s.device for s in outs["shard_map"].addressable_shards} == \
        set(jax.local_devices())
    print(f"OK {PID} {checks}", flush=True)
    # an interpreter error on device 0 (a call that is not partitioned) reaches both processes
    from tests.test_runtime_errors import oob

    ones = jax.make_array_from_callback((8,), NamedSharding(mesh, P("d")),
                                        lambda idx: np.ones(8, np.float32)[idx])
    try:
        jax.block_until_ready(jax.jit(lambda v: oob(v).sum())(ones))
        print(f"NO ERROR {PID}", flush=True)
    except Exception as e:
        print(f"ERROR {PID} {type(e).__name__}: {str(e).splitlines()[-1]}", flush=True)


if __name__ == "__main__":
    main()
    jax.distributed.shutdown()
