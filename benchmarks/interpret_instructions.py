"""Machine instructions an interpreted launch executes, for a row of the peer table
(``benchmarks/interpret.py --peers``), counted by valgrind: a figure that stays put on a machine
whose wall times wander 10-40% from run to run, so two checkouts can be compared in one sitting.

    python benchmarks/interpret_instructions.py attention                     # this checkout
    python benchmarks/interpret_instructions.py attention --root /tmp/base    # another checkout too
    python benchmarks/interpret_instructions.py hopper/gemm-bf16 --off --launches 4

Each count runs the row in a child process under ``valgrind --tool=cachegrind --cache-sim=no``
twice, with none and with ``--launches`` launches after the same two warm-up launches, and
divides the difference by the launches: the process's start, its imports and the kernel's
trace cancel out. Counts move by about 1% from one run to the next (hash seeds, the garbage
collector). Under valgrind the CPU has no AVX-512, so the compiled core runs its portable
loops (a wgmma run's products among them): compare the Python side's work between checkouts,
not native speed. That is why each count is also split in two: the instructions of functions
valgrind cannot name (``fn=???`` in the report: the compiled core, which is built stripped;
Python, NumPy and the C library have their symbols) and the rest, the Python side, where a
change to the interpreter's Python shows at its own size. valgrind is not a dependency of
the project (``apt install valgrind``). ``--root`` names another checkout whose compiled
modules are built in place (an editable install's, or copied into a worktree).
"""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def instructions(text: str) -> int:
    """The ``I refs`` total of a cachegrind run's report (its stderr)."""
    m = re.search(r"I\s+refs:\s+([\d,]+)", text)
    if m is None:
        raise SystemExit("interpret_instructions: no 'I refs' line in valgrind's report:\n" + text[-2000:])
    return int(m.group(1).replace(",", ""))


def unnamed(report: str) -> int:
    """The instructions of the functions a cachegrind output file (its text) cannot name
    (``fn=???``): the stripped compiled core's."""
    total, inside = 0, False
    for line in report.splitlines():
        if line.startswith("fn="):
            inside = line == "fn=???"
        elif inside and line[:1].isdigit():
            total += int(line.split()[-1])
    return total


def count(target: str, sanitize: bool = True, launches: int = 8, smoke: bool = False, root=ROOT):
    """``(all, core)``: machine instructions per launch of ``target`` in the checkout at
    ``root``, and those of them in the compiled core (``unnamed``; module doc)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("interpret_instructions: valgrind is not on PATH (apt install valgrind)")
    totals, cores = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (0, launches):
            out = pathlib.Path(tmp) / f"cachegrind.{n}"
            cmd = [valgrind, "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
                   sys.executable, __file__, "--child", str(root), target, "--launches", str(n)] + \
                  (["--off"] if not sanitize else []) + (["--smoke"] if smoke else [])
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=str(root))
            if p.returncode:
                raise SystemExit(f"interpret_instructions: the child failed ({p.returncode}):\n{p.stderr[-2000:]}")
            totals.append(instructions(p.stderr))
            cores.append(unnamed(out.read_text()))
    return (totals[1] - totals[0]) / launches, (cores[1] - cores[0]) / launches


def child(root, target: str, sanitize: bool, launches: int, smoke: bool) -> None:
    """The measured process: the row's kernel of the checkout at ``root`` built and launched
    twice, then ``launches`` more."""
    sys.path.insert(0, str(root))
    # that checkout's package, whichever one is installed (an editable install names its own),
    # and its benchmarks (``main`` loaded this one's for its arguments)
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__.lower()]
    for name in [m for m in sys.modules if m == "benchmarks" or m.startswith("benchmarks.")]:
        del sys.modules[name]
    from benchmarks.interpret_peers.pinning import pin_threads

    pin_threads()
    from benchmarks.interpret_breakdown import row_of
    from benchmarks.interpret_peers import ours, spec

    key, entry = row_of(target)
    k, ins = ours.build(key, entry, spec.shape_of(key, smoke))
    for _ in range(2 + launches):
        k.interpret(*ins, sanitize=sanitize)


def main(argv=None):
    import argparse

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks.interpret_breakdown import row_arguments

    p = argparse.ArgumentParser(description="machine instructions of an interpreted launch (module doc)")
    row_arguments(p, "counted", 8, "the workload's tiny shape")
    p.add_argument("--root", metavar="PATH", action="append", default=[],
                   help="another checkout to count too (repeatable)")
    p.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.launches < (0 if a.child else 1):
        p.error(f"--launches must be >= 1, got {a.launches}")
    if a.child:
        return child(a.child, a.target, not a.off, a.launches, a.smoke)
    rows = []
    for root in [ROOT] + [pathlib.Path(r).resolve() for r in a.root]:
        n, core = count(a.target, not a.off, a.launches, a.smoke, root)
        rows.append((root, n, core))
        print(f"{n / 1e6:10.2f} M instructions a launch  {a.target}, sanitizer {'off' if a.off else 'on'}  "
              f"({root})\n{'':10} of them {core / 1e6:.2f} M in the compiled core, {(n - core) / 1e6:.2f} M "
              f"the Python side", flush=True)
    _, n0, core0 = rows[0]
    for root, n, core in rows[1:]:
        print(f"{root}: {n / n0:.3f}x this checkout's, the Python side {(n - core) / max(n0 - core0, 1):.3f}x")
    return rows


if __name__ == "__main__":
    main()
