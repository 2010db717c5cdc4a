"""Trace speed: the cost of each emitted PTX line, vector operands, a 30k-line kernel, the
first import, the example library's big kernels, and re-tracing in an edit loop (with the share
of Python's cyclic collector).

    python benchmarks/trace.py            # the targets and the big kernels
    python benchmarks/trace.py --all      # also every module-level @kernel in examples/, tests/

"cold" is the first trace of a specialization: a fresh ``Kernel`` object each repeat, so the
kernel's own cache is empty (the process-wide memos of opcodes and validation verdicts are
warm: one warm-up trace runs first). A cold ``.ptx()`` traces and prints. Times are CPU time
of this process (``time.process_time``: robust to other load on the machine), the median of
the repeats; the fresh-process figures (import, 30k-line kernel) are wall clock, median of
several subprocesses.

Targets (issue 14): <= 3 us per emitted line for ``ptx.inst.*``, typed wrappers and register
operators (``a + b * 3``, comparisons, ``ptx.if_``); <= 10 us for an instruction with a 64-128
register vector operand; trace + print of a 30k-line kernel < 120 ms and < 150 MB peak RSS;
``import pyptx`` < 300 ms; the README quickstart's first ``.ptx()`` < 50 ms after it.
"""
from __future__ import annotations

import glob
import importlib
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jax_pyptx import Kernel, kernel, ptx, reg  # noqa: E402
from jax_pyptx.types import b32, b64, bf16, f32, pred, u32  # noqa: E402

N = 3000


# ----------------------------------------------------------------------------- line kernels
@kernel(arch="sm_90a")
def inst_add(*, N=N):
    """``ptx.inst.add.f32(d, a, b)``: one explicit instruction a line."""
    a, b, d = reg.scalar(f32, 1.0), reg.scalar(f32, 2.0), reg.scalar(f32)
    for _ in range(N):
        ptx.inst.add.f32(d, a, b)
    ptx.ret()


@kernel(arch="sm_90a")
def inst_fma(*, N=N):
    """``ptx.inst.fma.rn.f32(d, a, b, 0.5)``: four operands, one an immediate."""
    a, b, d = reg.scalar(f32, 1.0), reg.scalar(f32, 2.0), reg.scalar(f32)
    for _ in range(N):
        ptx.inst.fma.rn.f32(d, a, b, 0.5)
    ptx.ret()


@kernel(arch="sm_90a")
def inst_ld_st(*, N=N):
    """``ptx.inst.ld.global_.f32`` / ``st``: memory operands ``[r+off]``."""
    p = reg.scalar(b64, 0)
    v = reg.scalar(f32)
    for i in range(N // 2):
        ptx.inst.ld.global_.f32(v, ptx.addr(p, 4 * (i % 64)))
        ptx.inst.st.global_.f32(ptx.addr(p, 4 * (i % 64)), v)
    ptx.ret()


@kernel(arch="sm_90a")
def wrappers(*, N=N):
    """Typed wrappers: ``ptx.add(f32, d, a, b)``, ``ptx.mad``, ``ptx.setp``, ``ptx.selp``."""
    a, b, d = reg.scalar(f32, 1.0), reg.scalar(f32, 2.0), reg.scalar(f32)
    x, y = reg.scalar(u32, 1), reg.scalar(u32, 2)
    p = reg.scalar(pred)
    for _ in range(N // 4):
        ptx.add(f32, d, a, b)
        ptx.mad(u32, x, x, y, 3)
        ptx.setp("lt", u32, p, x, y)
        ptx.selp(f32, d, a, b, p)
    ptx.ret()


@kernel(arch="sm_90a")
def operators(*, N=N):
    """Register operators: ``a + b * 3`` (two instructions) and ``c ^= a`` in place."""
    a, b = reg.scalar(u32, 1), reg.scalar(u32, 2)
    c = reg.scalar(u32, 0)
    for _ in range(N // 3):
        c ^= a + b * 3
    ptx.ret()


@kernel(arch="sm_90a")
def straight_line(*, N=N):
    """``a += 1.5``: a float operator with an immediate, in place."""
    a = reg.scalar(f32, 1.0)
    for _ in range(N):
        a += 1.5
    ptx.ret()


@kernel(arch="sm_90a")
def compares(*, N=N):
    """Comparisons: ``a < b`` (register) and ``a >= 7`` (immediate), each a ``setp``."""
    a, b = reg.scalar(u32, 1), reg.scalar(u32, 2)
    for _ in range(N // 2):
        _ = a < b
        _ = a >= 7
    ptx.ret()


@kernel(arch="sm_90a")
def branches(*, N=N):
    """``ptx.if_`` / ``ptx.else_`` around operators (setp, two bra, two ops, two labels)."""
    t = reg.from_(ptx.special.tid.x(), u32)
    acc = reg.scalar(u32, 0)
    for i in range(N // 5):
        with ptx.if_(t < i):
            acc += t
        with ptx.else_():
            acc ^= i
    ptx.ret()


@kernel(arch="sm_90a")
def loops(*, N=N):
    """``ptx.range_`` loops (a register counter) with operators in the body."""
    acc = reg.scalar(u32, 0)
    for _ in range(N // 8):
        for i in ptx.range_(0, 4, 1, type=u32):
            acc += i
    ptx.ret()


def _unrolled_source(n: int) -> str:
    """A kernel body written out, one instruction per source line (what the transpiler and
    code generators produce): the user's line is found in a 3000-line function."""
    body = "".join(f"    ptx.inst.add.f32(d, a, b)\n    a += {i % 7 + 0.5}\n"
                   for i in range(n // 2))
    return ("from jax_pyptx import kernel, ptx, reg\nfrom jax_pyptx.types import f32\n\n\n"
            "@kernel(arch=\"sm_90a\")\ndef unrolled():\n"
            "    \"\"\"3000 instructions, one per source line.\"\"\"\n"
            "    a, b, d = reg.scalar(f32, 1.0), reg.scalar(f32, 2.0), reg.scalar(f32)\n"
            f"{body}    ptx.ret()\n")


def _load_unrolled(n: int = N):
    path = os.path.join(tempfile.mkdtemp(prefix="jax-pyptx-bench-"), "unrolled_kernel.py")
    with open(path, "w") as f:
        f.write(_unrolled_source(n))
    spec = importlib.util.spec_from_file_location("unrolled_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.unrolled


unrolled = _load_unrolled()

LINE_KERNELS = (inst_add, inst_fma, inst_ld_st, wrappers, operators, straight_line, compares,
                branches, loops, unrolled)


# ----------------------------------------------------------------------------- vector operands
@kernel(arch="sm_90a", block=(128, 1, 1))
def wgmma_64(*, N=500):
    """``wgmma.mma_async`` m64n128k16 bf16 -> f32: a 64-register accumulator."""
    from jax_pyptx import smem

    sa = smem.alloc(bf16, (64, 64), align=1024, name="sa")
    da = ptx.wgmma.desc_reg(sa, 16, 1024, "128B")
    acc = reg.array(f32, 64)
    for _ in range(N):
        ptx.wgmma.mma_async(acc, da, da, dtype="f32", atype="bf16")
    ptx.ret()


@kernel(arch="sm_100a", block=(128, 1, 1))
def tcgen05_ld(*, N=500, num=64):
    """``tcgen05.ld.sync.aligned.32x32b.x64.b32`` (64 registers) / ``.x32``."""
    taddr = reg.scalar(u32, 0)
    out = reg.array(b32, num)
    for _ in range(N):
        ptx.tcgen05.ld(taddr, "32x32b", num, out=out)
    ptx.ret()


VECTOR_KERNELS = ((wgmma_64, {}), (tcgen05_ld, {"num": 64}), (tcgen05_ld, {"num": 32}))


# ----------------------------------------------------------------------------- measuring
def fresh(k: Kernel) -> Kernel:
    return Kernel(k.fn, arch=k.arch, in_specs=k.in_specs, out_specs=k.out_specs,
                  grid=k.grid, block=k.block, cluster=k.cluster, smem=k.smem,
                  raw_params=k.raw_params, extern_smem=k.extern_smem,
                  reqntid=k.reqntid, raw_directives=k.raw_directives)


def cold_ptx(k: Kernel, kw: dict, repeats: int):
    """(instructions, median CPU seconds of a cold ``.ptx()``, median of the trace alone)."""
    n = fresh(k).trace(**kw).instruction_count          # warm-up
    both, alone = [], []
    for _ in range(repeats):
        f = fresh(k)
        t0 = time.process_time()
        tr = f.trace(**kw)
        t1 = time.process_time()
        tr.ptx
        both.append(time.process_time() - t0)
        alone.append(t1 - t0)
    return n, statistics.median(both), statistics.median(alone)


def row(name, value, unit, target, lower=True):
    ratio = value / target
    ok = "ok" if (value <= target if lower else value >= target) else "MISS"
    print(f"  {name:<46} {value:>9.2f} {unit:<6} target {'<=' if lower else '>='} "
          f"{target:<7g} ratio {ratio:5.2f}  {ok}")


def lines_section(repeats):
    print("per emitted line (cold .ptx(): trace + print), us per instruction")
    for k in LINE_KERNELS:
        n, both, alone = cold_ptx(k, {}, repeats)
        row(f"{k.name} ({n} instrs; trace alone {alone / n * 1e6:.2f})", both / n * 1e6,
            "us", 3.0)


def vector_section(repeats):
    print("\ninstructions with a 64-128 register vector operand, us per instruction")
    for k, kw in VECTOR_KERNELS:
        n, both, _ = cold_ptx(k, kw, repeats)
        label = k.name + "".join(f" {a}={b}" for a, b in kw.items())
        row(f"{label} ({n} instrs)", both / n * 1e6, "us", 10.0)


# ----------------------------------------------------------------------------- fresh processes
BIG_CHILD = r"""
import resource, sys, time
sys.path.insert(0, {root!r})
from jax_pyptx import kernel, ptx, reg
from jax_pyptx.types import f32, u32, b64
@kernel(arch="sm_90a")
def big(*, N={n}):
    a = reg.scalar(f32, 1.0)
    t = reg.from_(ptx.special.tid.x(), u32)
    p = reg.scalar(b64, 0)
    for i in range(N // 6):
        a += 1.5
        t ^= i
        ptx.inst.ld.global_.f32(a, ptx.addr(p, 4 * (i % 32)))
        with ptx.if_(t < 7):
            ptx.inst.fma.rn.f32(a, a, a, 0.5)
    ptx.ret()
t0 = time.perf_counter()
text = big.ptx()
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(dt, peak, big.trace().instruction_count, text.count("\n"))
"""

IMPORT_CHILD = r"""
import sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import pyptx
t1 = time.perf_counter()
from pyptx import kernel, reg, smem, ptx, Tile, Layout
from pyptx.types import f32, u32, bf16

@kernel(arch="sm_90a")
def tiny():
    tid = reg.from_(ptx.special.tid.x(), u32)
    x = tid + 1
    ptx.inst.mov.u32(tid, x)
    ptx.ret()

t2 = time.perf_counter()
tiny.ptx()
t3 = time.perf_counter()
print(t1 - t0, t3 - t2, " ".join(sorted(m for m in ("jax", "numpy", "torch", "ml_dtypes")
                                            if m in sys.modules)))
"""


# a user's installed package has its bytecode cached; this environment may not write it
# (PYTHONDONTWRITEBYTECODE): the children cache theirs under a temporary prefix
_PYC = os.path.join(tempfile.gettempdir(), "jax-pyptx-bench-pycache")


def _child(code: str, cached: bool = True):
    env = dict(os.environ)
    if cached:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = _PYC
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=env).stdout.split()
    return out


def big_section(runs: int = 3):
    print("\na 30k-line kernel in a fresh process (trace + print, wall clock)")
    _child(BIG_CHILD.format(root=ROOT, n=30_000))           # writes the bytecode cache
    got = [_child(BIG_CHILD.format(root=ROOT, n=30_000)) for _ in range(runs)]
    ms = statistics.median(float(g[0]) for g in got) * 1e3
    rss = statistics.median(int(g[1]) for g in got) / 1024
    row(f"trace + print ({got[0][2]} instrs, {got[0][3]} lines) ms", ms, "ms", 120)
    row("peak RSS of that process, MB", rss, "MB", 150)


def import_section(runs: int = 5):
    print("\nfirst import (fresh process, wall clock, bytecode cached as installed)")
    _child(IMPORT_CHILD.format(root=ROOT))                  # writes the bytecode cache
    got = [_child(IMPORT_CHILD.format(root=ROOT)) for _ in range(runs)]
    imp = statistics.median(float(g[0]) for g in got) * 1e3
    first = statistics.median(float(g[1]) for g in got) * 1e3
    row("import pyptx, ms", imp, "ms", 300)
    row("README quickstart's first .ptx() after it, ms", first, "ms", 50)
    loaded = got[0][2:]
    print(f"  heavy modules loaded by then: {', '.join(loaded) if loaded else 'none'}")
    raw = statistics.median(float(_child(IMPORT_CHILD.format(root=ROOT), False)[0])
                            for _ in range(3)) * 1e3
    print(f"  (without a bytecode cache, compiling every module: {raw:.0f} ms)")


# ----------------------------------------------------------------------------- big kernels
BIGGEST = (("hopper/gemm-bf16", {"bn": 256}), ("hopper/gemm-bf16-out-bf16", {"bn": 256}),
           ("hopper/grouped_gemm-bf16", {"bn": 256}), ("blackwell/gemm-bf16", {"bn": 256}),
           ("ampere/gemm-bf16", {"bm": 128, "bn": 256, "warps_n": 4}))
def library_section(repeats: int = 3):
    """The example library's kernels at their benchmark shapes and default (largest) tiles."""
    from examples.library import entries, get

    print("\nthe example library's big kernels (cold .ptx() at the benchmark shape)")
    print(f"  {'kernel':<42} {'lines':>7} {'instrs':>7} {'ms':>8} {'us/line':>8}")
    rows = []
    for e in entries():
        k = e.kernel()
        try:
            n, both, _ = cold_ptx(k, e.shape, repeats)
        except Exception as ex:
            print(f"  {e.name:<42} skipped: {str(ex)[:60]}")
            continue
        lines = k.ptx(**e.shape).count("\n")
        rows.append((n, e.name, lines, both))
    # the largest tiles the builders take, beyond the registered defaults
    for name, over in BIGGEST:
        e = get(name)
        k = e.kernel(**over)
        try:
            n, both, _ = cold_ptx(k, e.shape, repeats)
        except Exception as ex:
            print(f"  {name} {over} skipped: {str(ex)[:60]}")
            continue
        label = name + " " + " ".join(f"{a}={b}" for a, b in over.items())
        rows.append((n, label, k.ptx(**e.shape).count("\n"), both))
    rows.sort(reverse=True)
    for n, name, lines, both in rows[:14]:
        print(f"  {name:<42} {lines:>7} {n:>7} {both * 1e3:>8.2f} {both / lines * 1e6:>8.2f}")


def retrace_section(n: int = 100):
    """An edit loop: the same kernel traced and printed again and again (a fresh ``Kernel``
    each time, the previous one dropped), with the time Python's cyclic collector takes."""
    import gc

    from examples.library import get

    print(f"\nre-tracing (an edit loop: {n} cold .ptx() in a row, wall clock)")
    print(f"  {'kernel':<42} {'ms/trace':>9} {'in the cyclic collector':>24}")
    spent = [0.0, 0.0]

    def watch(phase, info):
        if phase == "start":
            spent[1] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - spent[1]

    for name in ("blackwell/gemm-bf16", "hopper/attention-causal-bf16"):
        e = get(name)
        k = e.kernel()
        fresh(k).ptx(**e.shape)
        gc.collect()
        spent[0] = 0.0
        gc.callbacks.append(watch)
        try:
            t0 = time.perf_counter()
            for _ in range(n):
                fresh(k).ptx(**e.shape)
            dt = time.perf_counter() - t0
        finally:
            gc.callbacks.remove(watch)
        print(f"  {name:<42} {dt / n * 1e3:>9.2f} {spent[0] / dt * 100:>23.1f}%")


# ----------------------------------------------------------------------------- every kernel
def _module_kernels(path, modname):
    try:
        mod = importlib.import_module(modname)
    except Exception:
        return []
    return [(os.path.relpath(path, ROOT), attr, v, {s: 64 for s in v.shape_vars})
            for attr, v in vars(mod).items() if isinstance(v, Kernel)]


def all_section(repeats):
    print("\nevery module-level @kernel of examples/ and tests/ (shape variables = 64)")
    print(f"  {'source':<34} {'kernel':<22} {'instrs':>7} {'cold us/instr':>14}")
    for sub in ("examples", "tests"):
        for path in sorted(glob.glob(os.path.join(ROOT, sub, "**", "*.py"), recursive=True)):
            rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
            if rel.endswith("__init__") or "corpus" in rel:
                continue
            for where, name, k, kw in _module_kernels(path, rel):
                try:
                    n, both, _ = cold_ptx(k, kw, repeats)
                except Exception:
                    continue
                print(f"  {where:<34} {name:<22} {n:>7} {both / max(n, 1) * 1e6:>14.2f}")


def calibrate() -> float:
    """ns per call of a tiny Python function on this machine now (about 50-60 ns on an idle
    modern x86 core): the numbers above scale with it, so a loaded machine shows here."""
    def f(a, b):
        return a

    best = None
    for _ in range(5):
        t0 = time.process_time()
        for i in range(200_000):
            f(i, i)
        dt = (time.process_time() - t0) / 200_000 * 1e9
        best = dt if best is None else min(best, dt)
    return best


def main(argv):
    repeats = 7
    print(f"machine: a Python call takes {calibrate():.0f} ns now (~55 on an idle core)\n")
    lines_section(repeats)
    vector_section(repeats)
    big_section()
    import_section()
    library_section()
    retrace_section()
    if "--all" in argv:
        all_section(3)


if __name__ == "__main__":
    main(sys.argv[1:])
