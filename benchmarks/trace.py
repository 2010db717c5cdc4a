"""Trace speed: instructions emitted and trace time per instruction, cold and warm.

    python benchmarks/trace.py

"cold": the first trace of a specialization in this process (a fresh Kernel object each
repeat, so nothing is cached); "warm": ``.ptx()`` of an already-traced specialization.
Times are CPU time of this process (``time.process_time``), median of repeats.
Target (DESIGN.md): <= 5 us per instruction traced; < 50 us for a cached ``.ptx()``.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jax_pyptx import Kernel, kernel, ptx, reg  # noqa: E402
from jax_pyptx.types import f32, u32  # noqa: E402


@kernel(arch="sm_90a")
def straight_line(*, N=5000):
    """N float ops in a row: the per-instruction cost with nothing else going on."""
    a = reg.scalar(f32, 1.0)
    for _ in ptx.static_range(N):
        a += 1.5
    ptx.ret()


@kernel(arch="sm_90a")
def loops(*, N=300):
    t = reg.from_(ptx.special.tid.x(), u32)
    acc = reg.scalar(u32, 0)
    for i in ptx.static_range(N):
        with ptx.if_(t < i):
            acc += t
        with ptx.else_():
            acc ^= i
    ptx.ret()


def _module_kernels(path, modname):
    try:
        mod = importlib.import_module(modname)
    except Exception:  # noqa: BLE001 - a module that needs more than an import
        return []
    return [(os.path.relpath(path, ROOT), attr, v, {s: 64 for s in v.shape_vars})
            for attr, v in vars(mod).items() if isinstance(v, Kernel)]


def _kernels():
    """Benchmark kernels plus every module-level @kernel in examples/ and tests/ (shape
    variables set to 64)."""
    found = [("bench", "straight_line", straight_line, {}), ("bench", "loops", loops, {})]
    for sub in ("examples", "tests"):
        for path in sorted(glob.glob(os.path.join(ROOT, sub, "**", "*.py"), recursive=True)):
            rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
            if rel.endswith("__init__") or "corpus" in rel:
                continue
            found += _module_kernels(path, rel)
    return found


def _time(fn, repeats):
    """Median CPU seconds of this process per call (robust to other load on the machine)."""
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return statistics.median(out)


def main(repeats: int = 5):
    rows = []
    for where, name, k, kw in _kernels():
        try:
            t = k.trace(**kw)
        except Exception as e:  # noqa: BLE001 - needs shape variables we cannot guess
            rows.append((where, name, None, None, None, str(e)[:40]))
            continue
        n = t.instruction_count

        def cold():
            Kernel(k.fn, arch=k.arch, in_specs=k.in_specs, out_specs=k.out_specs,
                   grid=k.grid, block=k.block, cluster=k.cluster, smem=k.smem,
                   raw_params=k.raw_params, extern_smem=k.extern_smem,
                   reqntid=k.reqntid, raw_directives=k.raw_directives).ptx(**kw)

        c = _time(cold, repeats)
        w = _time(lambda: [k.ptx(**kw) for _ in range(100)], repeats) / 100
        rows.append((where, name, n, c / max(n, 1) * 1e6, w * 1e6, ""))
    print(f"{'source':<34} {'kernel':<18} {'instrs':>7} {'cold us/instr':>14} "
          f"{'warm .ptx() us':>15}")
    for where, name, n, per, warm, note in rows:
        if n is None:
            print(f"{where:<34} {name:<18} {'-':>7} {'skipped: ' + note}")
        else:
            print(f"{where:<34} {name:<18} {n:>7} {per:>14.2f} {warm:>15.2f}")
    measured = [r for r in rows if r[2]]
    big = [r for r in measured if r[2] >= 1000]     # per-instruction cost, not fixed cost
    worst = max(r[3] for r in big)
    small = [r[3] * r[2] for r in measured if r[2] < 100]
    print(f"\nkernels of >= 1000 instructions: worst cold cost {worst:.2f} us/instruction "
          f"(target <= 5.00: ratio {worst / 5.0:.2f})")
    if small:
        print(f"fixed cost of a small kernel's first trace (median, < 100 instructions): "
              f"{statistics.median(small):.0f} us")
    print(f"worst warm .ptx(): {max(r[4] for r in measured):.2f} us (target < 50)")


if __name__ == "__main__":
    main()
