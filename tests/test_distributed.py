"""Issue 15, scale-out across processes: two processes join a ``jax.distributed`` cluster on
the CPU (4 devices each, an 8-device global mesh) and run the RMSNorm example under
``shard_map`` and under sharded ``jit``; each checks the values of its own shards
(``tests/distributed_worker.py``)."""
import os
import socket
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_cluster():
    port = _free_port()
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_PLATFORMS="cpu")
    procs = [subprocess.Popen([sys.executable, "-m", "tests.distributed_worker", str(port),
                               str(i)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for i in range(2)]
    outs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=TIMEOUT)
            outs.append((p.returncode, out))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def test_two_processes_shard_map_and_sharded_jit_over_a_global_mesh():
    outs = _run_cluster()
    for i, (rc, out) in enumerate(outs):
        assert rc == 0, f"process {i} exited {rc}:\n{out[-4000:]}"
        # 4 local shards x (shard_map, sharded jit), each compared with NumPy
        assert out.strip().splitlines()[-1] == f"OK {i} 8", out[-4000:]
