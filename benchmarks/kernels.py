"""The kernel library's speed: roofline estimates everywhere, measured rates on a GPU.

    python benchmarks/kernels.py                      # every library kernel
    python benchmarks/kernels.py gemm rms_norm-bf16   # entries whose name contains a word
    python benchmarks/kernels.py --devices H100,H200,B200,A100
    python benchmarks/kernels.py --gpu --json figures.json     # on a GPU (an error without one)
    python benchmarks/kernels.py --dry-run --json figures.json # the GPU run's steps on the CPU

Tables:

1. **Roofline** (any machine): ``jax_pyptx.perf.roofline`` of each kernel at its
   representative shape (``LibraryKernel.shape``: 8192 x 8192 rows, 8192^3 GEMMs), from the
   interpreter's counts at a small shape, ptxas's registers and shared memory, occupancy, and
   NVIDIA's published peaks.
2. **Interpreter**: seconds per interpreter check (the test shapes), on this machine.
3. **GPU** (when JAX sees a CUDA device, or with ``--gpu``): first the machine's ceilings (a
   1 GiB device copy, ``x * 2`` in f32, counting bytes read and written; an 8192^3 bf16
   ``jnp.dot``), then each kernel through ``jax.jit`` next to its JAX baselines (``jnp.dot``
   / ``jax.lax.ragged_dot`` through cuBLAS, XLA's fused norms, and
   ``jax.nn.dot_product_attention`` with ``implementation="cudnn"`` and ``"xla"``). Each is
   timed over one jitted call of several independent input sets (together past the L2, so
   no set is read from the cache, and the dispatch cost is shared), median of timed runs
   after warm-up; GB/s (unique bytes / time) or TFLOP/s (tensor-core FLOPs / time), with the
   ratio to the best baseline and to the roofline estimate for this GPU (``--gpu-model``,
   default: from the device's name).

``--dry-run`` does on the CPU everything the GPU run does up to its first GPU call: the
roofline, and each kernel and baseline lowered for CUDA at the representative shape
(``.lower(lowering_platforms=("cuda",))``: ptxas, the launch plan, the custom call) with
abstract inputs; no timing. ``--json PATH`` writes every figure (rewritten after each entry,
so a run stopped by a time limit keeps what it measured); ``--budget SECONDS`` starts no new
entry after that long. Exit status 1 when a kernel failed to lower or run.

No assertion on time: this prints tables. ``pytest -m gpu`` (``tests/test_kernels_gpu.py``)
checks the kernels' values on a GPU; ``benchmarks/gpu_proof.sh`` runs both there.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

L2_BYTES = 60 * 1024 * 1024          # Hopper's L2 (50 MB on the H100 PCIe, 60 MB SXM / H200)
SET_BYTES = 1 << 30                  # the input bytes one timed call reads, at least
TIMING = ("wall clock of one jitted call that runs 2 to 64 input sets (as many as take the "
          "inputs past 4x the L2 and 1 GiB), divided by the sets; the median of 3 to 10 timed "
          "calls after two warm-ups; the host's dispatch is included")
# the measuring order: what the goals name first (GEMM, attention, norms)
PRIORITY = ("gemm-", "attention", "rms_norm", "layer_norm", "softmax", "swiglu",
            "grouped_gemm")


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


def roofline_figures(lib, devices) -> list:
    """The roofline rows as JSON-able dicts."""
    from examples.proof import counts_roofline

    out = []
    for e in lib:
        for r in counts_roofline(e, devices).rows:
            out.append({"entry": e.name, "device": r.device.name, "shape": dict(r.shape),
                        "threads": r.threads, "registers": r.registers, "smem": r.smem,
                        "waves": r.waves, "unique_bytes": r.counts.unique_bytes,
                        "tensor_flops": r.counts.tensor_flops, "t_mem_s": r.t_mem,
                        "t_tc_s": r.t_tc, "time_s": r.time, "bound": r.bound})
    return out


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


def gpu_model(device_kind: str) -> str:
    """The ``DEVICES`` key a GPU named ``device_kind`` is held to ("NVIDIA H200" -> H200)."""
    from jax_pyptx.perf import DEVICES

    kind = device_kind.upper()
    for key in sorted(DEVICES, key=len, reverse=True):
        if key in kind:
            return key
    return "H100"


# ----------------------------------------------------------------------------- baselines
def _sdpa(implementation: str, causal: bool, native: bool = False):
    """``jax.nn.dot_product_attention`` on the kernel's ``[H, S, D]`` inputs (transposed to
    its ``[B=1, S, N=H, D]`` and back inside the timed call), or, ``native``, on inputs that
    ``baseline.prepare`` put in its layout beforehand (untimed), its output left there:
    cuDNN's fastest case, with no transpose to pay."""
    def baseline(q, k, v):
        import jax

        if native:
            return jax.nn.dot_product_attention(q, k, v, is_causal=causal,
                                                implementation=implementation)
        t = [x[None].swapaxes(1, 2) for x in (q, k, v)]
        return jax.nn.dot_product_attention(*t, is_causal=causal,
                                            implementation=implementation)[0].swapaxes(0, 1)

    if native:
        def prepare(q, k, v):
            import jax

            return jax.jit(lambda *xs: [x[None].swapaxes(1, 2) for x in xs])(q, k, v)
        baseline.prepare = prepare
    baseline.__name__ = f"dot_product_attention[{implementation}{', BTNH' if native else ''}]"
    return baseline


def _group_dots():
    """cuBLAS once per group (``jnp.dot``, f32 out) on blocks of A and B split by the group
    sizes beforehand (``prepare``, untimed: it reads the sizes, so it needs their values): what
    a caller who knows the sizes on the host could write instead. Empty groups are skipped."""
    def prepare(a, b, sizes):
        import numpy as np

        sizes = np.asarray(sizes)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        used = [g for g, n in enumerate(sizes) if n]
        return ([a[int(starts[g]):int(starts[g] + sizes[g])] for g in used] +
                [b[g] for g in used])

    def baseline(*xs):
        import jax.numpy as jnp

        half = len(xs) // 2
        return [jnp.dot(x, w, preferred_element_type=jnp.float32)
                for x, w in zip(xs[:half], xs[half:])]
    baseline.prepare, baseline.concrete = prepare, True
    baseline.__name__ = "jnp_dot_per_group"
    return baseline


def _hopper_row(name: str):
    """XLA's fused version of a Hopper row kernel (f32; the eps of the kernel's defaults)."""
    def baseline(*args):
        import jax
        import jax.numpy as jnp

        x = args[0]
        if name == "rms_norm":
            return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * args[1]
        if name == "layer_norm":
            mu = jnp.mean(x, axis=-1, keepdims=True)
            var = jnp.mean(jnp.square(x - mu), axis=-1, keepdims=True)
            return (x - mu) * jax.lax.rsqrt(var + 1e-5) * args[1] + args[2]
        if name == "softmax":
            return jax.nn.softmax(x, axis=-1)
        return x * jax.nn.sigmoid(args[2] * x) * args[1]            # swiglu(G, U, beta)
    baseline.__name__ = f"xla_{name}"
    return baseline


def baselines(entry) -> list:
    """``(name, function)`` of the JAX computations an entry is measured against."""
    short = entry.name.split("/", 1)[1]
    if short.startswith("attention"):
        causal = "causal" in short
        return [(f"dot_product_attention[{i}]", _sdpa(i, causal)) for i in ("cudnn", "xla")] + \
            [("dot_product_attention[cudnn, BTNH]", _sdpa("cudnn", causal, native=True))]
    if short.startswith("grouped_gemm"):
        return [("ragged_dot", entry.baseline), ("jnp_dot_per_group", _group_dots())]
    if entry.baseline is not None:
        name = getattr(entry.baseline, "__name__", "baseline").lstrip("_")
        return [("jnp_" + name if name.endswith("dot") and "_" not in name else name,
                 entry.baseline)]
    if entry.family == "hopper":
        for name in ("rms_norm", "layer_norm", "softmax", "swiglu"):
            if short.startswith(name):
                return [(f"xla_{name}", _hopper_row(name))]
    return []


def prepared(fn, args) -> list:
    """The arguments a baseline ``fn`` is timed on: ``fn.prepare``'s (its own layout or
    blocks, made outside the timed call) where it has one, else ``args``."""
    return list(fn.prepare(*args)) if hasattr(fn, "prepare") else list(args)


# ----------------------------------------------------------------------------- inputs
def _specs(entry):
    """(kernel, [(shape, numpy dtype) or a scalar]) of the entry at its representative shape."""
    from jax_pyptx.specs import Tile

    k = entry.kernel()
    out = []
    for spec in k.in_specs:
        if isinstance(spec, Tile):
            out.append((tuple(spec.resolve(entry.shape)), spec.dtype.np_dtype))
        else:
            out.append(spec.np_dtype.type(1))
    return k, out


def abstract_inputs(entry):
    """ShapeDtypeStructs (scalars as numbers) for lowering without data."""
    import jax

    k, specs = _specs(entry)
    return k, [jax.ShapeDtypeStruct(*s) if isinstance(s, tuple) else s for s in specs]


def device_input_sets(entry, n_max: int = 64, seed: int = 0):
    """(kernel, input sets on the GPU): floats random normal, integers (a grouped GEMM's
    group sizes) and scalars from the entry's inputs; as many sets as take the inputs past
    ``4 * L2_BYTES`` and ``SET_BYTES`` (2 to ``n_max``). One jitted call runs every set, so
    the host's dispatch is shared by many launches (the H200's first run, with at most 8
    sets, timed a 30 us norm at twice its device time)."""
    import jax
    import numpy as np

    k, specs = _specs(entry)
    fixed = {}
    if entry.inputs is not None:                  # data-dependent work: the hook's values
        from examples.proof import make_inputs

        hooked = make_inputs(entry, k, entry.shape, seed)
        fixed = {i: a for i, a in enumerate(hooked)
                 if not np.issubdtype(np.asarray(a).dtype, np.floating)
                 and np.asarray(a).dtype.name not in ("bfloat16",)}
    nbytes = sum(math.prod(s[0]) * np.dtype(s[1]).itemsize for s in specs
                 if isinstance(s, tuple))
    n = max(2, min(n_max, math.ceil(max(4 * L2_BYTES, SET_BYTES) / max(nbytes, 1))))
    key = jax.random.PRNGKey(seed)
    sets = []
    for _ in range(n):
        args = []
        for i, s in enumerate(specs):
            if i in fixed:
                args.append(jax.device_put(fixed[i]))
            elif isinstance(s, tuple):
                key, sub = jax.random.split(key)
                args.append(jax.random.normal(sub, s[0], jax.numpy.float32).astype(s[1]))
            else:
                args.append(s)
        sets.append(args)
    return k, sets


# ----------------------------------------------------------------------------- timing
def time_sets(fn, sets, max_reps: int = 10, seconds: float = 0.5) -> dict:
    """Seconds per call of ``fn`` over the input ``sets`` (one jitted call runs every set):
    median, min and max over the timed runs, after two warm-up runs."""
    import jax

    multi = jax.jit(lambda sets: [fn(*s) for s in sets])
    jax.block_until_ready(multi(sets))
    t0 = time.perf_counter()
    jax.block_until_ready(multi(sets))
    first = time.perf_counter() - t0
    reps = max(3, min(max_reps, int(seconds / max(first, 1e-9))))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(multi(sets))
        times.append((time.perf_counter() - t0) / len(sets))
    return {"seconds": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "reps": reps, "sets": len(sets)}


def ceilings(dry: bool = False, n: int = 1 << 28, m: int = 8192, copies: int = 4) -> dict:
    """The machine's measured ceilings: a device copy of ``n`` f32 (1 GiB; GB/s counting
    bytes read + written; ``copies`` arrays, one jitted call) and an ``m``^3 bf16
    ``jnp.dot`` (TFLOP/s). On ``dry`` only lowered for CUDA."""
    import jax
    import jax.numpy as jnp

    copy = lambda x: x * 2.0
    dot = lambda a, b: jnp.dot(a, b)
    if dry:
        for f, args in ((copy, (jax.ShapeDtypeStruct((n,), jnp.float32),)),
                        (dot, (jax.ShapeDtypeStruct((m, m), jnp.bfloat16),) * 2)):
            jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",))
        return {"copy_gbs": None, "bf16_dot_tflops": None}
    key = jax.random.PRNGKey(1)
    xs = [[jax.random.normal(k, (n,), jnp.float32)] for k in jax.random.split(key, copies)]
    tc = time_sets(copy, xs)
    del xs
    ab = [[jax.random.normal(jax.random.PRNGKey(i), (m, m), jnp.float32).astype(jnp.bfloat16)
           for i in (2 * j, 2 * j + 1)] for j in range(2)]
    td = time_sets(dot, ab)
    del ab
    return {"copy_gbs": 2 * 4 * n / tc["seconds"] / 1e9, "copy_s": tc["seconds"],
            "bf16_dot_tflops": 2 * m ** 3 / td["seconds"] / 1e12, "bf16_dot_s": td["seconds"]}


# ----------------------------------------------------------------------------- GPU rows
def measure_entry(entry, model: str, dry: bool = False, devices=None) -> list:
    """One dict per implementation (the kernel, then each baseline): unit, work, seconds,
    rate, and for the kernel the ratios to the best baseline and to the roofline estimate
    for ``model`` (taken from the roofline over ``devices`` when given, which the tables
    computed already). An implementation that fails gets ``error``. On ``dry`` each is
    lowered for CUDA only."""
    import jax

    from examples.proof import counts_roofline
    from jax_pyptx.perf import device

    rows_est = counts_roofline(entry, tuple(devices or (model,))).rows
    est = next(r for r in rows_est if r.device.name == device(model).name)
    if entry.rate == "flops":
        work, unit, scale = est.counts.tensor_flops, "TFLOP/s", 1e12
    else:
        work, unit, scale = est.counts.unique_bytes, "GB/s", 1e9
    roofline_s = est.time
    if entry.work is not None:        # data-dependent work: the roofline's time scaled to it
        exact = entry.work(entry.shape)
        roofline_s, work = est.time * exact / work, exact
    impls = [("kernel", None)] + baselines(entry)
    rows = []
    if dry:
        k, args = abstract_inputs(entry)
        for name, fn in impls:
            row = {"entry": entry.name, "impl": name, "shape": dict(entry.shape), "unit": unit,
                   "work": work, "roofline_s": roofline_s}
            if getattr(fn, "concrete", False):          # its prepare reads input values
                row["note"] = "prepared from the inputs' values: lowered in the GPU run only"
                rows.append(row)
                continue
            try:
                its = jax.eval_shape(fn.prepare, *args) if hasattr(fn, "prepare") else args
                text = jax.jit(fn or k).trace(*its).lower(
                    lowering_platforms=("cuda",)).as_text()
                row["lowered"] = True
                if fn is None:
                    row["custom_calls"] = text.count("stablehlo.custom_call @jax_pyptx_launch")
            except Exception as e:
                row["lowered"] = False
                # a kernel that does not lower is an error; a baseline may need what only a
                # GPU jaxlib has (cuDNN's attention): noted
                row["error" if fn is None else "note"] = f"{type(e).__name__}: {e}"[:500]
            rows.append(row)
        return rows
    k, sets = device_input_sets(entry)
    for name, fn in impls:
        row = {"entry": entry.name, "impl": name, "shape": dict(entry.shape), "unit": unit,
               "work": work, "roofline_s": roofline_s}
        try:
            its = [prepared(fn, s) for s in sets]
            row.update(time_sets(fn or k, its))
            del its
            row["rate"] = work / row["seconds"] / scale
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"[:2000]
        rows.append(row)
    del sets
    kern, base = rows[0], [r for r in rows[1:] if "seconds" in r]
    if "seconds" in kern:
        kern["vs_roofline"] = roofline_s / kern["seconds"]
        if base:
            best = min(base, key=lambda r: r["seconds"])
            kern["best_baseline"] = best["impl"]
            kern["vs_baseline"] = best["seconds"] / kern["seconds"]
    return rows


def gpu_rows_table(rows) -> str:
    """The measured (or lowered) rows as a table."""
    out = []
    for r in rows:
        if "error" in r:
            status = "ERROR " + r["error"].splitlines()[0][:60]
        elif "seconds" in r:
            status = ""
        elif "note" in r:
            status = "not lowered here: " + r["note"].splitlines()[0][:50]
        else:
            status = "lowered" if r.get("lowered") else "-"
        out.append((r["entry"], r["impl"], " ".join(f"{a}={b}" for a, b in r["shape"].items()),
                    r["unit"], f"{r['rate']:.1f}" if "rate" in r else "",
                    f"{r['seconds'] * 1e6:.1f}" if "seconds" in r else "",
                    f"{r['vs_baseline']:.2f}" if "vs_baseline" in r else "",
                    f"{r['vs_roofline']:.2f}" if "vs_roofline" in r else "", status))
    return _table(("kernel", "impl", "shape", "unit", "rate", "us", "vs best baseline",
                   "vs roofline", "note"), out)


def gpu_table(lib, model: str) -> str:
    """Measured rates of the kernels and their JAX baselines on the first GPU."""
    rows = []
    for e in lib:
        rows += measure_entry(e, model)
    return gpu_rows_table(rows)


def _ordered(lib) -> list:
    def key(e):
        short = e.name.split("/", 1)[1]
        rank = next((i for i, p in enumerate(PRIORITY) if short.startswith(p)), len(PRIORITY))
        return ({"hopper": 0, "ampere": 1}.get(e.family, 2), rank)
    return sorted(lib, key=key)


def environment() -> dict:
    """What ran: Python, JAX and its devices, the ptxas the toolchain found."""
    import jax

    env = {"python": platform.python_version(), "jax": jax.__version__,
           "devices": [f"{d.platform}:{d.device_kind}" for d in jax.devices()]}
    try:
        from examples.proof import ptxas_info

        env["ptxas"] = ptxas_info()
    except Exception as e:
        env["ptxas"] = f"not found: {e}"
    return env


class Figures:
    """The JSON of every figure, rewritten (atomically) at each change."""

    def __init__(self, path):
        self.path, self.data = path, {"roofline": [], "ceilings": {}, "gpu": [], "errors": []}

    def write(self):
        if not self.path:
            return
        tmp = f"{self.path}.tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, default=str)
        os.replace(tmp, self.path)


def main(argv=None) -> int:
    """Print the tables (module docstring); the exit status says whether every kernel ran."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*", help="run entries whose name contains one of these")
    p.add_argument("--devices", default="H100,B200", help="roofline devices (DEVICES keys)")
    p.add_argument("--gpu-model", default="auto",
                   help="the roofline row the GPU is held to (auto: from the device's name)")
    p.add_argument("--families", default="ampere,hopper,blackwell",
                   help="library families to include (comma-separated)")
    p.add_argument("--no-interpreter", action="store_true", help="skip the interpreter table")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--gpu", action="store_true", help="measure on the GPU (error if none)")
    mode.add_argument("--dry-run", action="store_true",
                      help="no GPU: lower every kernel and baseline for CUDA, time nothing")
    p.add_argument("--json", metavar="PATH", help="write every figure as JSON here")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="start no new GPU entry after this many seconds")
    args = p.parse_args(argv)
    if args.dry_run:
        os.environ["JAX_PLATFORMS"] = "cpu"       # nothing may touch a GPU
    fams = tuple(f for f in args.families.split(",") if f)
    gpus = [] if args.dry_run else gpu_devices()
    if args.gpu and not gpus:
        print("--gpu: JAX sees no CUDA device (JAX_PLATFORMS, the CUDA plugin?)", file=sys.stderr)
        return 2
    from examples.library import entries

    lib = [e for e in entries(fams) if not args.names or any(n in e.name for n in args.names)]
    if not lib:
        print(f"no library entry matches {args.names} in {fams}", file=sys.stderr)
        return 2
    model = args.gpu_model
    if model == "auto":
        model = gpu_model(gpus[0].device_kind) if gpus else "H200"
    devices = tuple(dict.fromkeys(args.devices.split(",") + [model]))
    fig = Figures(args.json)
    fig.data["environment"] = environment()
    fig.data["gpu_model"] = model
    fig.data["mode"] = "dry-run" if args.dry_run else ("gpu" if gpus else "cpu")
    fig.write()
    print("Roofline at the representative shapes (jax_pyptx.perf.roofline)\n")
    print(roofline_table(lib, devices))
    fig.data["roofline"] = roofline_figures(lib, devices)
    fig.write()
    if not args.no_interpreter:
        print("\nInterpreter checks on this machine\n")
        print(interpreter_table(lib))
    if not gpus and not args.dry_run:
        print("\nNo CUDA device visible to JAX: no measured rates (the roofline above is "
              "the estimate).")
        return 0
    from examples.proof import runs_on

    cc = getattr(gpus[0], "compute_capability", None) if gpus else "9.0"
    t_start, failed = time.perf_counter(), False
    if gpus:
        print(f"\nMeasured on {gpus[0].device_kind} (compute capability {cc}); held to the "
              f"{model} roofline\n")
    else:
        print(f"\nDry run: each kernel and baseline lowered for CUDA (as for compute "
              f"capability {cc}; nothing timed)\n")
    try:
        fig.data["ceilings"] = ceilings(dry=args.dry_run)
    except Exception as e:
        fig.data["errors"].append(f"ceilings: {type(e).__name__}: {e}"[:2000])
    fig.write()
    for e in _ordered(lib):
        if not runs_on(e.kernel().arch, cc):
            fig.data["gpu"].append({"entry": e.name, "impl": "kernel", "shape": dict(e.shape),
                                    "unit": "", "skipped": f"targets {e.kernel().arch}"})
            continue
        if args.budget is not None and time.perf_counter() - t_start > args.budget:
            fig.data["gpu"].append({"entry": e.name, "impl": "kernel", "shape": dict(e.shape),
                                    "unit": "", "skipped": "budget"})
            continue
        try:
            rows = measure_entry(e, model, dry=args.dry_run, devices=devices)
        except Exception as ex:
            rows = [{"entry": e.name, "impl": "kernel", "shape": dict(e.shape), "unit": "",
                     "error": f"{type(ex).__name__}: {ex}"[:2000]}]
        failed |= "error" in rows[0]
        fig.data["gpu"] += rows
        fig.write()
        print("\n".join(gpu_rows_table(rows).splitlines()[2:]), flush=True)
    c = fig.data["ceilings"]
    measured = [r for r in fig.data["gpu"] if "skipped" not in r]
    print("\n" + gpu_rows_table(measured))
    if c.get("copy_gbs"):
        print(f"\nCeilings: device copy {c['copy_gbs']:.0f} GB/s; bf16 8192^3 jnp.dot "
              f"{c['bf16_dot_tflops']:.1f} TFLOP/s")
    skipped = [r for r in fig.data["gpu"] if "skipped" in r]
    if skipped:
        print(f"skipped: {', '.join(r['entry'] + ' (' + r['skipped'] + ')' for r in skipped)}")
    fig.data["seconds"] = time.perf_counter() - t_start
    fig.write()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
