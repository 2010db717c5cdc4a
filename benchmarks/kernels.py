"""The kernel library's speed: roofline estimates everywhere, measured rates on a GPU.

    python benchmarks/kernels.py                      # every library kernel
    python benchmarks/kernels.py gemm rms_norm-bf16   # entries whose name contains a word
    python benchmarks/kernels.py --devices H100,B200,A100

Tables:

1. **Roofline** (any machine): ``jax_pyptx.perf.roofline`` of each kernel at its
   representative shape (``LibraryKernel.shape``: 8192 x 8192 rows, 8192^3 GEMMs), from the
   interpreter's counts at a small shape, ptxas's registers and shared memory, occupancy, and
   NVIDIA's published peaks.
2. **Interpreter**: seconds per interpreter check (the test shapes), on this machine.
3. **GPU** (when JAX sees a CUDA device): the kernel through ``jax.jit`` next to its JAX
   baseline (``jnp.dot`` for the GEMMs, XLA's fused norms), median of timed runs after
   warm-up; GB/s (unique bytes / time) or TFLOP/s, and the ratio to the baseline and to the
   roofline estimate for this GPU (``--gpu-model``, default H100).

No assertion: this prints tables. ``pytest -m gpu`` (``tests/test_kernels_gpu.py``) checks
the kernels' values on a GPU.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _table(header, rows) -> str:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*map(str, r)) for r in rows]
    return "\n".join(out)


def roofline_table(lib, devices) -> str:
    """The roofline of every entry at its representative shape, one row per device."""
    from examples.proof import counts_roofline
    from jax_pyptx.perf import format_table

    rows = []
    for e in lib:
        rows += list(counts_roofline(e, devices).rows)
    return format_table(rows)


def interpreter_table(lib) -> str:
    """Seconds and errors of every interpreter check of the entries."""
    from examples.proof import run_case

    rows = []
    for e in lib:
        for c in e.cases:
            r = run_case(e, c)
            rows.append((e.name, c.label, f"{r.seconds:.3f}", f"{r.max_err:.2e}",
                         "ok" if r.ok else "MISMATCH"))
    return _table(("kernel", "case", "seconds", "max |err|", "check"), rows)


def gpu_devices():
    """The CUDA devices JAX sees (none when JAX runs on the CPU only)."""
    try:
        import jax

        return [d for d in jax.devices() if d.platform in ("gpu", "cuda")]
    except RuntimeError:
        return []


def _time(f, *args, reps: int = 20) -> float:
    import jax

    jax.block_until_ready(f(*args))
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def gpu_table(lib, model: str) -> str:
    """Measured rates of the kernels and their JAX baselines on the first GPU."""
    import jax
    import jax.numpy as jnp

    from examples.proof import counts_roofline

    from examples.proof import make_inputs, runs_on

    rows = []
    cc = getattr(gpu_devices()[0], "compute_capability", None)
    for e in lib:
        k = e.kernel()
        if not runs_on(k.arch, cc):
            rows.append((e.name, f"(targets {k.arch}; this GPU is {cc})") + ("",) * 7)
            continue
        t = k.trace(**e.shape)
        key = jax.random.PRNGKey(0)
        args = []
        if e.inputs is not None:          # data-dependent work (a grouped GEMM's table)
            args = [jnp.asarray(a) for a in make_inputs(e, k, e.shape)]
        for spec in t.inputs[len(args):]:
            key, sub = jax.random.split(key)
            args.append(jax.random.normal(sub, spec.shape, jnp.float32).astype(
                spec.dtype.np_dtype))
        est = counts_roofline(e, (model,)).rows[0]
        tk = _time(jax.jit(k), *args)
        tb = _time(jax.jit(e.baseline), *args) if e.baseline is not None else float("nan")
        if e.rate == "flops":
            work, unit = est.counts.tensor_flops, 1e12
            name = "TFLOP/s"
        else:
            work, unit = est.counts.unique_bytes, 1e9
            name = "GB/s"
        rows.append((e.name, " ".join(f"{a}={b}" for a, b in e.shape.items()), name,
                     f"{work / tk / unit:.1f}", f"{work / tb / unit:.1f}",
                     f"{tb / tk:.2f}", f"{est.time / tk:.2f}",
                     f"{tk * 1e6:.1f}", f"{tb * 1e6:.1f}"))
        del args
    return _table(("kernel", "shape", "unit", "kernel", "baseline", "vs baseline",
                   "vs roofline", "kernel us", "baseline us"), rows)


def main(argv=None) -> int:
    """Print the tables (module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*", help="run entries whose name contains one of these")
    p.add_argument("--devices", default="H100,B200", help="roofline devices (DEVICES keys)")
    p.add_argument("--gpu-model", default="H100", help="the roofline row the GPU is held to")
    p.add_argument("--no-interpreter", action="store_true", help="skip the interpreter table")
    args = p.parse_args(argv)
    if not gpu_devices():
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from examples.library import entries

    lib = [e for e in entries() if not args.names or any(n in e.name for n in args.names)]
    devices = tuple(args.devices.split(","))
    print("Roofline at the representative shapes (jax_pyptx.perf.roofline)\n")
    print(roofline_table(lib, devices))
    if not args.no_interpreter:
        print("\nInterpreter checks on this machine\n")
        print(interpreter_table(lib))
    gpus = gpu_devices()
    if gpus:
        print(f"\nMeasured on {gpus[0].device_kind} (median of 20 runs; work as counted for "
              f"the roofline)\n")
        print(gpu_table(lib, args.gpu_model))
    else:
        print("\nNo CUDA device visible to JAX: no measured rates (the roofline above is "
              "the estimate).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
