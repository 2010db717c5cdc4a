"""Issue 15, scale-out across processes: two processes join a ``jax.distributed`` cluster on
the CPU (4 devices each, an 8-device global mesh) and run the RMSNorm example under
``shard_map`` and under sharded ``jit``; each checks the values of its own shards, then calls a
kernel that fails on device 0: both processes raise (``tests/distributed_worker.py``).

An interpreter error inside a sharded ``jit`` call on 8 devices reaches the user as the short
error of a one-device call, promptly, and the process exits normally: not after XLA's 40 s
collective timeout with an abort (``tests/sharded_error_worker.py``)."""
import os
import socket
import subprocess
import sys
import time

from .test_runtime_errors import FIRST, WHERE

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
        lines = [s for s in out.splitlines() if s.startswith(("OK ", "ERROR "))]
        assert lines[0] == f"OK {i} 8", out[-4000:]
        # device 0's interpreter error: its own in process 0; in process 1 a pointer to it
        # (jax 0.10, where the callback runs on device 0 alone) or its own, where JAX runs
        # the callback in each process (jax 0.12)
        assert len(lines) == 2 and (lines[1].startswith(f"ERROR {i} JaxRuntimeError: {FIRST}")
                                    or i == 1 and lines[1].startswith(
            "ERROR 1 JaxRuntimeError: CallbackError: the interpreter failed on a device of "
            "another process (error #")), out[-4000:]
        assert "Exception ignored" not in out, out[-4000:]


def _worker_line(marker: str) -> str:
    path = os.path.join(ROOT, "tests", "sharded_error_worker.py")
    with open(path) as f:
        line = next(i for i, text in enumerate(f, 1) if marker in text)
    return f"{path}:{line}"


def _short_error(where: str, name: str, first: str) -> list:
    file, line = where.rsplit(":", 1)
    return ["JaxRuntimeError",
            "INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):",
            f'  File "{file}", line {line}, in {name}', first]


def test_an_interpreter_error_on_8_devices_is_raised_not_an_abort():
    """Device 0 alone (a call that is not partitioned) or device 3 alone (its ``shard_map``
    shard) fails, and a collective follows: every device raises the interpreter's error."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "tests.sharded_error_worker"], cwd=ROOT, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=TIMEOUT)
    took = time.monotonic() - start
    assert p.returncode == 0, f"exited {p.returncode}:\n{p.stdout}\n{p.stderr[-4000:]}"
    assert took < 30, took                  # XLA gives up on a stuck collective at 40 s
    lines = p.stdout.splitlines()
    assert len(lines) == 22, p.stdout
    for at, case in ((0, "jit"), (5, "jit under set_mesh")):
        assert lines[at] == f"== {case}", p.stdout
        assert lines[at + 1:at + 5] == _short_error(WHERE, "oob", lines[at + 4]), p.stdout
        assert lines[at + 4].startswith(FIRST), lines[at + 4]
    where = _worker_line("# out of bounds on shard 3")
    first = (f"OutOfBoundsError: {where}: out-of-bounds global load ld.global.u32 %r1, "
             f"[%rd5]; by thread (0,0,0) of CTA (0,0,0): address 0x7f0000000fa0 is 352 bytes "
             f"before the start of allocation #1 (param 'Y' (uint32[8], an output), 32 bytes "
             f"at 0x7f0000001100) [instruction #9 of gather_first]")
    for at, case in ((10, "shard_map"), (15, "shard_map under set_mesh")):
        assert lines[at] == f"== {case}", p.stdout
        assert lines[at + 1:at + 5] == _short_error(where, "gather_first", first), p.stdout
    assert lines[20:] == ["OK 2144.0", "OK 2144.0"], p.stdout     # sum(arange(64) + 2)
    # no stuck collective, and the error is not printed again at exit
    assert "rendezvous" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    assert "OutOfBoundsError" not in p.stderr, p.stderr
