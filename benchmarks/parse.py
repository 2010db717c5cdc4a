"""Text speed over the PTX corpus: parse, print, parse+print and transpile, in MB/s and
lines/s.

    python benchmarks/parse.py [--repeat 3]

Each stage runs over every ``tests/corpus/**/*.ptx`` file; times are CPU time of this
process (``time.process_time``), best of ``--repeat`` runs. "transpile" is PTX IR -> Python
source (parsing not included); "retrace" runs the generated Python and traces every
function (the other half of the transpiler's promise). Target (DESIGN.md): parse + print
>= 3 MB/s.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from jax_pyptx import emit, parse  # noqa: E402
from jax_pyptx.transpile import transpile  # noqa: E402

TARGET_MBS = 3.0


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "tests", "corpus"))
    args = ap.parse_args(argv)

    files = sorted(glob.glob(os.path.join(args.corpus, "**", "*.ptx"), recursive=True))
    texts = [open(f, encoding="utf-8").read() for f in files]
    nbytes = sum(len(t.encode()) for t in texts)
    nlines = sum(t.count("\n") for t in texts)
    modules = [parse(t, f) for t, f in zip(texts, files)]
    sources = [transpile(m, f) for m, f in zip(modules, files)]
    pylines = sum(src.count("\n") for src in sources)

    def do_parse():
        for t, f in zip(texts, files):
            parse(t, f)

    def do_print():
        for m in modules:
            emit(m)

    def do_both():
        for t, f in zip(texts, files):
            emit(parse(t, f))

    def do_transpile():
        for m, f in zip(modules, files):
            transpile(m, f)

    def do_retrace():
        from jax_pyptx.kernel_def import Kernel
        from jax_pyptx.transpile.flow import DeviceFunction

        for src, f in zip(sources, files):
            ns = {"__name__": "bench"}
            exec(compile(src, f + ".py", "exec"), ns)
            for v in list(ns.values()):
                if isinstance(v, Kernel):
                    v.module()
                elif isinstance(v, DeviceFunction):
                    v.function()

    stages = [("parse", do_parse), ("print", do_print), ("parse+print", do_both),
              ("transpile", do_transpile), ("retrace", do_retrace)]
    print(f"corpus: {len(files)} files, {nbytes / 1e6:.2f} MB, {nlines} lines "
          f"(generated Python: {pylines} lines)")
    print(f"{'stage':<12} {'seconds':>8} {'MB/s':>8} {'lines/s':>10}")
    results = {}
    for name, fn in stages:
        reps = args.repeat if name != "retrace" else 1
        s = _best(fn, reps)
        results[name] = s
        print(f"{name:<12} {s:8.3f} {nbytes / 1e6 / s:8.2f} {nlines / s:10.0f}")
    both = nbytes / 1e6 / results["parse+print"]
    print(f"parse+print: {both:.2f} MB/s = {both / TARGET_MBS:.2f}x the {TARGET_MBS:g} MB/s target")
    print(f"print/parse speed ratio: {results['parse'] / results['print']:.1f}x; "
          f"transpile/parse time ratio: {results['transpile'] / results['parse']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
