"""The Python side of ``benchmarks/gpu_proof.sh`` (its docstring says what the run does).

    python benchmarks/gpu_proof.py ffi [--dry-run]                # the launcher and libcuda
    python benchmarks/gpu_proof.py sanitize NAME... [--dry-run]   # library calls, checked
    python benchmarks/gpu_proof.py once NAME... [--dry-run]       # one call each, for ncu
    python benchmarks/gpu_proof.py finalize STEPS OUT             # summary, first failure
    python benchmarks/gpu_proof.py record OUT DEST COMMIT         # docs/gpu_runs/ record

``sanitize`` runs each entry ``NAME`` (``hopper/gemm-bf16``, ``hopper/attention-bf16``) once
through ``jax.jit`` at its first interpreter case and compares with the reference: the
program ``compute-sanitizer`` watches. With ``--dry-run`` it lowers the call for CUDA instead
(no GPU).

``once`` runs a 1 GiB device copy, then each entry one time at its benchmark shape
(``entry.shape``) followed by each of its baselines: the program that ``ncu --metrics
gpu__time_duration.sum`` times kernel by kernel on the device, apart from the host's
dispatch, in the order it prints. With ``--dry-run`` it lowers each entry's call for CUDA.

``record`` turns a run's output folder (fetched from the device) into the record under
``docs/gpu_runs/`` that ``docs/kernels.md``'s "Measured on a GPU" renders; ``COMMIT`` is the
commit that ran (the device's copy of the tree has no git history).

``finalize`` reads the step table the script wrote (``name<TAB>status<TAB>seconds<TAB>log
<TAB>output file``), writes ``OUT/summary.txt``, adds the steps to ``OUT/figures.json`` and
copies the first failed step's full log (and, where pytest failed, the first failed test's
full report from its junit XML) to ``OUT/first_failure.log``.
"""
from __future__ import annotations

import collections
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def ffi(dry: bool) -> int:
    """Import the launcher, print where it was built and what the real driver table says;
    on a GPU the table must load (libcuda.so.1 found and its functions resolved)."""
    from jax_pyptx.runtime import ffi_bridge

    ext = ffi_bridge.extension()
    ok, why = ext.driver_status()
    print(f"jax_pyptx._ffi: {ext.__file__}")
    print(f"libcuda driver table: {'loaded' if ok else 'not loaded'} ({why})")
    if dry:
        print("dry run: a missing libcuda is expected here")
        return 0
    return 0 if ok else 1


def sanitize(name: str, dry: bool) -> int:
    """One call of the entry ``name`` (module docstring)."""
    if dry:
        os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import numpy as np

    from examples import proof
    from examples.library import get

    entry = get(name)
    case = entry.cases[0]
    k = entry.kernel(**case.build)
    inputs = proof.make_inputs(entry, k, case.shape, seed=11)
    if dry:
        text = jax.jit(k).trace(*inputs).lower(lowering_platforms=("cuda",)).as_text()
        n = text.count("stablehlo.custom_call @jax_pyptx_launch")
        print(f"{name} {case.label}: lowered for CUDA ({n} launch)")
        return 0 if n else 1
    out = jax.block_until_ready(jax.jit(k)(*inputs))
    out = out[0] if isinstance(out, (tuple, list)) else out
    ref = entry.reference(*inputs)
    ref = ref[0] if isinstance(ref, tuple) else ref
    o = np.asarray(out)
    err, excess = proof.compare(o, ref, proof.allowed_error(entry, inputs, o, ref))
    print(f"{name} {case.label}: max |err| {err:.3e}, {excess:.2f}x the allowed")
    return 0 if excess <= 1.0 else 1


def once(name: str, dry: bool) -> int:
    """One call of the entry ``name`` at its benchmark shape, then one of each of its
    baselines, for ncu to time on the device (module docstring); with ``dry`` the kernel's
    call lowered for CUDA instead. The inputs are made on the host (no random-number kernel
    joins the profile), so ncu's kernels come in the order this prints."""
    if dry:
        os.environ["JAX_PLATFORMS"] = "cpu"
    import jax

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kernels

    from examples.library import get
    from examples.proof import make_inputs

    entry = get(name)
    shape = " ".join(f"{a}={b}" for a, b in entry.shape.items())
    if dry:
        k, args = kernels.abstract_inputs(entry)
        jax.jit(k).trace(*args).lower(lowering_platforms=("cuda",))
        print(f"{name} {shape}: lowered for CUDA")
        return 0
    k = entry.kernel()
    args = [jax.device_put(a) for a in make_inputs(entry, k, entry.shape)]
    jax.block_until_ready(args)
    for impl, fn in [("kernel", None)] + kernels.baselines(entry):
        its = kernels.prepared(fn, args)
        jax.block_until_ready(its)
        try:
            jax.block_until_ready(jax.jit(fn or k)(*its))
            print(f"{name} {shape}: {impl} ran once")
        except Exception as e:      # a baseline this machine cannot run: said, not fatal
            print(f"{name} {shape}: {impl} did not run: {type(e).__name__}: "
                  f"{str(e).splitlines()[0][:120]}")
    return 0


def copy_once(dry: bool) -> int:
    """One device copy of 1 GiB of f32 (``x * 2``, as ``kernels.ceilings`` times it), for ncu
    to time the machine's bandwidth on the device; with ``dry`` lowered for CUDA instead."""
    import jax
    import numpy as np

    n = 1 << 28
    if dry:
        os.environ["JAX_PLATFORMS"] = "cpu"
        jax.jit(lambda x: x * 2.0).trace(jax.ShapeDtypeStruct((n,), np.float32)).lower(
            lowering_platforms=("cuda",))
        print("copy: 1 GiB of f32 lowered for CUDA")
        return 0
    x = jax.device_put(np.ones(n, np.float32))
    jax.block_until_ready(jax.jit(lambda x: x * 2.0)(x))
    print("copy: 1 GiB of f32 ran once")
    return 0


def _first_failed_test(xml_path: str) -> str:
    """The first failed or errored test case of a junit XML, with its full report."""
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError):
        return ""
    for tc in root.iter("testcase"):
        for tag in ("failure", "error"):
            el = tc.find(tag)
            if el is not None:
                head = f"{tc.get('classname')}::{tc.get('name')} ({tag})"
                return f"{head}\n{el.get('message', '')}\n\n{el.text or ''}"
    return ""


def finalize(steps_path: str, out: str) -> int:
    """summary.txt, figures.json's steps and first_failure.log (module docstring)."""
    steps = []
    with open(steps_path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 5:
                steps.append({"step": parts[0], "status": parts[1],
                              "seconds": float(parts[2]), "log": parts[3], "file": parts[4]})
    env_path = os.path.join(os.path.dirname(steps_path), "env.txt")
    env = open(env_path).read() if os.path.exists(env_path) else ""
    figures_path = os.path.join(out, "figures.json")
    figures = {}
    if os.path.exists(figures_path):
        try:
            with open(figures_path) as f:
                figures = json.load(f)
        except json.JSONDecodeError as e:
            figures = {"errors": [f"figures.json was not JSON: {e}"]}
    figures["steps"] = [{k: v for k, v in s.items() if k != "log"} for s in steps]
    figures["machine"] = env
    with open(figures_path, "w") as f:
        json.dump(figures, f, indent=1, default=str)

    failed = [s for s in steps if s["status"] not in ("ok", "skipped", "refused")]
    lines = ["gpu_proof summary", "", env.strip(), "",
             f"{'step':<18}{'status':<22}{'seconds':>8}  output in"]
    lines += [f"{s['step']:<18}{s['status']:<22}{s['seconds']:>8.1f}  {s['file']}"
              for s in steps]
    gpu = [r for r in figures.get("gpu", []) if "rate" in r or "error" in r]
    if gpu:
        lines += ["", "figures (figures.json has every one):"]
        for r in gpu:
            if "error" in r:
                lines.append(f"  {r['entry']} {r['impl']}: ERROR {r['error'].splitlines()[0]}")
                continue
            extra = "".join(f", {k} {r[k]:.2f}" for k in ("vs_baseline", "vs_roofline") if k in r)
            lines.append(f"  {r['entry']} {r['impl']}: {r['rate']:.1f} {r['unit']}, "
                         f"{r['seconds'] * 1e6:.1f} us{extra}")
    c = figures.get("ceilings") or {}
    if c.get("copy_gbs"):
        lines.append(f"  ceilings: copy {c['copy_gbs']:.0f} GB/s, bf16 jnp.dot "
                     f"{c['bf16_dot_tflops']:.1f} TFLOP/s")
    lines += ["", f"failed steps: {', '.join(s['step'] for s in failed) or 'none'}"]
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    if failed:
        first = failed[0]
        text = f"first failed step: {first['step']} ({first['status']})\n"
        if first["step"] == "pytest":
            test = _first_failed_test(os.path.join(out, "pytest_gpu.xml"))
            if test:
                text += f"\n=== first failed test (junit)\n{test}\n"
        log = first["log"]
        if log and os.path.exists(log):
            with open(log, errors="replace") as f:
                text += f"\n=== full log of the step: {log}\n{f.read()}"
        with open(os.path.join(out, "first_failure.log"), "w") as f:
            f.write(text)
    print("\n".join(lines))
    return 1 if failed else 0


ROW_KEYS = ("entry", "impl", "shape", "unit", "work", "seconds", "min_s", "max_s", "reps", "sets")


def record(out: str, dest: str, commit: str) -> int:
    """Write ``dest`` (``docs/gpu_runs/<gpu>-<date>.json``, which ``examples/kernels_doc.py``
    renders in ``docs/kernels.md``) from a run's output folder ``out``: the machine, the
    checks, the ceilings and every timed row. Its ``findings`` are left empty, for whoever
    reads the run to write (what met its goal, what did not and why)."""
    with open(os.path.join(out, "figures.json")) as f:
        figures = json.load(f)
    m = dict(line.split(": ", 1) for line in figures.get("machine", "").splitlines()
             if ": " in line)
    gpu = [p.strip() for p in m.get("gpu", "?").split(",")]
    soft = ", ".join(f"{k} {m[k].replace('Version ', '').split()[0]}" for k in
                     ("python", "jax", "jaxlib", "numpy", "torch", "compute-sanitizer")
                     if m.get(k, "").strip())
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kernels

    run = {"date": m.get("date", "?").split()[0],
           "gpu": f"{gpu[0]} ({gpu[2]})" if len(gpu) > 2 else gpu[0],
           "driver": gpu[1] if len(gpu) > 1 else "?",
           "cuda": f"{m.get('cuda (driver)', '?').replace('CUDA Version: ', '')} (driver), "
                   f"ptxas {m.get('ptxas', '?').replace('release ', '')}",
           "software": soft, "command": "bash benchmarks/gpu_proof.sh", "commit": commit,
           "timing": kernels.TIMING,
           "ceilings": dict(figures.get("ceilings") or {}),
           "tests": _tests(os.path.join(out, "pytest_gpu.xml")),
           "sanitizer": _sanitizer(os.path.join(out, "sanitizer.log")),
           "rows": [{k: r[k] for k in ROW_KEYS if k in r} for r in figures.get("gpu", [])
                    if "seconds" in r],
           "findings": []}
    with open(dest, "w") as f:
        json.dump(run, f, indent=1)
        f.write("\n")
    print(f"wrote {dest}: {len(run['rows'])} timed rows; write its findings, then "
          f"python -m examples.kernels_doc --write")
    return 0


def _tests(xml_path: str) -> dict:
    """The junit XML's counts, the failed tests and the commonest skip reasons (entry names
    replaced by ``<entry>``)."""
    root = ET.parse(xml_path).getroot()
    failed, skipped, passed = [], collections.Counter(), 0
    for tc in root.iter("testcase"):
        bad = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
        if bad is not None:
            failed.append(tc.get("name"))
        elif tc.find("skipped") is not None:
            why = tc.find("skipped").get("message", "")
            skipped[re.sub(r"\b\w+/[\w.-]+", "<entry>", why)] += 1
        else:
            passed += 1
    shown = ", ".join(failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5 else "")
    return {"command": "pytest -m gpu tests/test_kernels_gpu.py", "passed": passed,
            "failed": len(failed), "skipped": sum(skipped.values()),
            "failed_why": shown or "none",
            "skipped_why": "; ".join(f"{n}: {w}" for w, n in skipped.most_common(3)) or "none"}


def _sanitizer(log_path: str) -> dict:
    """Each tool's step status and compute-sanitizer's summary line (or why it did not run)."""
    text = ""
    if os.path.exists(log_path):
        with open(log_path, errors="replace") as f:
            text = f.read()
    out = {}
    for tool in ("memcheck", "racecheck"):
        m = re.search(rf"^=== {tool}: (.*)$", text, re.M)
        if m is None:
            out[tool] = "not run"
            continue
        start = text.rfind(f"=== {tool} (limit", 0, m.start())      # -1: it did not run
        summary = re.findall(r"^========= (\w+ SUMMARY: .*)$", text[start:m.start()],
                             re.M) if start >= 0 else []
        out[tool] = m.group(1) + (f"; {summary[-1]}" if summary else "")
    return out


def main(argv=None) -> int:
    """Dispatch the subcommands (module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    dry = "--dry-run" in argv
    argv = [a for a in argv if a != "--dry-run"]
    if argv[:1] == ["ffi"]:
        return ffi(dry)
    if argv[:1] == ["sanitize"] and len(argv) >= 2:
        return max(sanitize(name, dry) for name in argv[1:])
    if argv[:1] == ["once"] and len(argv) >= 2:
        return max([copy_once(dry)] + [once(name, dry) for name in argv[1:]])
    if argv[:1] == ["record"] and len(argv) == 4:
        return record(argv[1], argv[2], argv[3])
    if argv[:1] == ["finalize"] and len(argv) == 3:
        return finalize(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
