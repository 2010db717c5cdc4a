"""Per-call overhead of a jitted kernel call vs. the equivalent jnp op, and trace+lower time.

    python benchmarks/dispatch.py

Rows (4x64 f32 RMSNorm, CPU):

* ``jnp``: ``jax.jit`` of the jnp RMSNorm (XLA-fused), per call.
* ``kernel, interpreter``: ``jax.jit`` of the kernel call lowered to the interpreter callback;
  the time spent inside the interpreter is measured separately and subtracted, leaving the
  dispatch + host-callback overhead.
* ``kernel, C++ launcher``: ``interpret=False``: XLA -> the typed-FFI handler -> the launcher
  with the recording driver table (what a GPU launch goes through, minus the driver), when
  the extension is built.

Then trace + lower (``jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))``): cold (a new
kernel object: DSL trace, PTX print, ptxas into an empty cache), cold with the cubin cache warm
(a new kernel object in a process that has the cubin on disk), and warm (the kernel already
traced: a new jitted function, which JAX traces and lowers again, and the same jitted kernel,
which JAX serves from its cache).
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["JAX_PYPTX_CACHE_DIR"] = tempfile.mkdtemp(prefix="jax_pyptx-bench-")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from examples.hopper.rms_norm import build_rms_norm, reference  # noqa: E402
from jax_pyptx import ptx_call  # noqa: E402
from jax_pyptx.runtime import primitive  # noqa: E402

N_CALLS = 300


def per_call(f, *args, n=N_CALLS):
    jax.block_until_ready(f(*args))                  # compile
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            out = f(*args)
        jax.block_until_ready(out)
        times.append((time.perf_counter() - t0) / n)
    return min(times)


def interpreter_overhead(f, *args, n=N_CALLS):
    jax.block_until_ready(f(*args))
    best = None
    for _ in range(5):
        s0 = dict(primitive.interpreter_stats)
        t0 = time.perf_counter()
        for _ in range(n):
            out = f(*args)
        jax.block_until_ready(out)
        total = time.perf_counter() - t0
        inside = primitive.interpreter_stats["seconds"] - s0["seconds"]
        launches = primitive.interpreter_stats["launches"] - s0["launches"]
        assert launches == n, launches
        row = ((total - inside) / n, inside / n)
        best = row if best is None or row[0] < best[0] else best
    return best


def lower_time(make, x, w, repeat=5):
    out = []
    for _ in range(repeat):
        k = make()
        t0 = time.perf_counter()
        jax.jit(k).trace(x, w).lower(lowering_platforms=("cuda",))
        out.append(time.perf_counter() - t0)
    return out


def main():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((4, 64), dtype=np.float32))
    w = jnp.asarray(rng.standard_normal(64, dtype=np.float32))
    k = build_rms_norm(4, 64)
    ref_f = jax.jit(reference)
    kern_f = jax.jit(k)
    np.testing.assert_allclose(kern_f(x, w), ref_f(x, w), rtol=1e-5, atol=1e-5)

    t_jnp = per_call(ref_f, x, w)
    t_interp, t_inside = interpreter_overhead(kern_f, x, w)
    rows = [("jnp (jit, XLA)", t_jnp, None),
            ("kernel, interpreter callback", t_interp, t_inside)]
    try:
        from jax_pyptx.runtime import ffi_bridge

        if ffi_bridge.available():
            ffi_f = jax.jit(ptx_call(k, interpret=False))
            t_ffi = per_call(ffi_f, x, w)
            ffi_bridge.clear_recording()
            rows.append(("kernel, C++ launcher (recording)", t_ffi, None))
    except ImportError:
        pass

    print("per-call time of a jitted 4x64 RMSNorm (CPU; best of 5 x "
          f"{N_CALLS} calls)\n")
    print(f"{'path':36s} {'per call':>10s} {'vs jnp':>8s} {'interpreter (excluded)':>24s}")
    for name, t, inside in rows:
        extra = f"{inside * 1e6:14.1f} us" if inside is not None else ""
        print(f"{name:36s} {t * 1e6:8.1f} us {t / t_jnp:7.2f}x {extra:>24s}")

    # trace + lower
    fresh = iter(range(1, 1000))                 # a new eps: new PTX text, so ptxas runs
    cold = lower_time(lambda: build_rms_norm(4, 64, eps=1e-6 * (1 + next(fresh) / 64)), x, w)
    cold_cached = lower_time(lambda: build_rms_norm(4, 64), x, w)[1:]   # cubin on disk
    k2 = build_rms_norm(4, 64)
    jax.jit(k2).trace(x, w).lower(lowering_platforms=("cuda",))
    warm_new_fn = []
    for _ in range(5):
        t0 = time.perf_counter()
        jax.jit(lambda a, b: k2(a, b)).trace(x, w).lower(lowering_platforms=("cuda",))
        warm_new_fn.append(time.perf_counter() - t0)
    warm = lower_time(lambda: k2, x, w)
    print("\ntrace + lower for CUDA (jax.jit(k).trace(x, w).lower(lowering_platforms=('cuda',)))"
          "\n")
    print(f"{'case':52s} {'median':>10s} {'min':>10s}")
    for name, ts in (("cold: new kernel, trace + PTX + ptxas", cold),
                     ("cold: new kernel, cubin already in the disk cache", cold_cached),
                     ("warm: kernel traced, new jitted function", warm_new_fn),
                     ("warm: same jitted kernel (JAX's trace cache)", warm)):
        print(f"{name:52s} {statistics.median(ts) * 1e3:7.2f} ms {min(ts) * 1e3:7.2f} ms")
    print(f"\nratio cold / warm (new jitted function): "
          f"{statistics.median(cold) / statistics.median(warm_new_fn):.1f}x")


if __name__ == "__main__":
    main()
