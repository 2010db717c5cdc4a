"""Where an interpreted launch's time goes, for a row of the peer table (``benchmarks/interpret.py
--peers``): the wall time of each PTX instruction form's handler, of the batched segments (native
blocks and NumPy batches, ``scheduler/segments.py``), of the runs of shared stores
(``scheduler/store_runs.py``), of the runs of ``wgmma.mma_async`` issued as one
(``scheduler/wgmma_runs.py``) and of the runs of issuers (``scheduler/issue_runs.py``: what they
add to their issuers' handlers and hoisted segment), per launch, the scheduler's loop (``Context.run`` less all of
those) and the rest (the launch outside its batches: the arguments, the tensor maps, each
batch's state). A part's time excludes the parts it calls (a run's hoisted segment is a
segment's).

    python benchmarks/interpret_breakdown.py attention                  # sanitizer on
    python benchmarks/interpret_breakdown.py hopper/gemm-bf16 --off --launches 5
    python benchmarks/interpret_breakdown.py rms_norm --smoke           # tiny shape, one launch

The row is a workload key with one kernel (``axpb``, ``rms_norm``, ``softmax``, ``attention``)
or a library entry of the table (``ampere/gemm-bf16``, ``hopper/gemm-bf16``,
``blackwell/gemm-bf16``, ...), at the table's shape. BLAS, OpenMP and XLA run on one thread,
as in the table. The handlers are timed by wrapping them for the measured launches (restored
after), which adds about a microsecond a call: a form called thousands of times a launch reads
a little slower than it runs. ``--json PATH`` writes the rows.
"""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

if __name__ == "__main__":
    from benchmarks.interpret_peers.pinning import pin_threads  # NumPy loads after the pinning

    pin_threads()

import time  # noqa: E402

SEGMENTS, STORE_RUNS, WGMMA_RUNS = "(batched segments)", "(runs of shared stores)", "(runs of wgmma.mma_async)"
ISSUE_RUNS = "(runs of issuers)"
LOOP = "(scheduler loop)"                   # Context.run less the parts it calls
REST = "(launch outside the batches)"       # the arguments, tensor maps, the batches' state


def row_of(target: str) -> tuple:
    """``(workload key, library entry or None)`` of a peer-table row named by its workload key
    (one kernel) or its library entry."""
    from benchmarks.interpret_peers import ours

    rows = [(key, entry) for _, key, entry in ours.ROWS if target in (key, entry)]
    if len(rows) != 1:
        names = sorted({k for _, k, _ in ours.ROWS} | {e for _, _, e in ours.ROWS if e})
        raise SystemExit(f"interpret_breakdown: {target!r} names {len(rows)} rows of the peer table; "
                         f"give one of {', '.join(names)}")
    return rows[0]


def measure(target: str, sanitize: bool = True, launches: int = 10, smoke: bool = False) -> dict:
    """Seconds per launch of the whole launch and of each part (``module doc``), after two
    warm-up launches: ``{"total_s", "parts": [(name, seconds per launch, calls per launch)]}``,
    the parts slowest first."""
    from benchmarks.interpret_peers import ours, spec
    from jax_pyptx.interpret.scheduler import context, issue_runs, segments, store_runs, wgmma_runs

    key, entry = row_of(target)
    k, ins = ours.build(key, entry, spec.shape_of(key, smoke))
    for _ in range(2):
        k.interpret(*ins, sanitize=sanitize)
    spent: dict = {}
    wrapped: list = []
    inner = [0.0]           # the time of the timed calls made inside the current one

    def timed(fn, name):
        def run(*a, **kw):
            outer, inner[0] = inner[0], 0.0
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                t = time.perf_counter() - t0
                c = spent.setdefault(name, [0.0, 0])
                c[0] += t - inner[0]
                c[1] += 1
                inner[0] = outer + t
        return run

    init = context.Context.__init__

    def init_timed(self, *a, **kw):
        init(self, *a, **kw)
        for d in self.code:
            if d.fn is not None and not getattr(d.fn, "_timed", False):
                wrapped.append((d, d.fn))
                d.fn = timed(d.fn, d.ins.full_opcode)
                d.fn._timed = True

    patches = [(context.Context, "__init__", init_timed),
               (context.Context, "run", timed(context.Context.run, LOOP)),
               (segments, "run", timed(segments.run, SEGMENTS)),
               (store_runs, "run", timed(store_runs.run, STORE_RUNS)),
               (wgmma_runs, "run", timed(wgmma_runs.run, WGMMA_RUNS)),
               (issue_runs, "run", timed(issue_runs.run, ISSUE_RUNS))]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    try:
        for obj, name, new in patches:
            setattr(obj, name, new)
        t0 = time.perf_counter()
        for _ in range(launches):
            k.interpret(*ins, sanitize=sanitize)
        total = (time.perf_counter() - t0) / launches
    finally:
        for obj, name, old in saved:
            setattr(obj, name, old)
        for d, fn in wrapped:
            d.fn = fn
    parts = sorted(((name, s / launches, n / launches) for name, (s, n) in spent.items()),
                   key=lambda p: -p[1])
    parts.append((REST, max(total - sum(p[1] for p in parts), 0.0), 0))
    return {"target": target, "key": key, "entry": entry, "sanitize": sanitize,
            "shape": spec.shape_of(key, smoke), "launches": launches, "total_s": total, "parts": parts}


def format_table(r: dict, top: int = 25) -> str:
    from benchmarks.interpret_peers import spec

    head = (f"{r['entry'] or r['key']} {spec.shape_text(r['shape'])}, sanitizer "
            f"{'on' if r['sanitize'] else 'off'}: {r['total_s'] * 1e3:.2f} ms a launch "
            f"(mean of {r['launches']})")
    lines = [head, f"{'ms/launch':>10} {'share':>6} {'calls':>7} {'us/call':>9}  part"]
    parts = r["parts"]
    shown = parts[:top] if len(parts) <= top + 1 else parts[:top] + [parts[-1]]
    for name, s, n in shown:
        per = f"{s / n * 1e6:9.1f}" if n else f"{'':9}"
        calls = f"{n:7.1f}" if n else f"{'':7}"
        lines.append(f"{s * 1e3:10.3f} {100 * s / r['total_s']:5.1f}% {calls} {per}  {name}")
    if len(shown) < len(parts):
        lines.append(f"({len(parts) - len(shown)} more parts below {shown[-2][1] * 1e3:.3f} ms)")
    return "\n".join(lines)


def row_arguments(p, what: str, launches: int, smoke: str) -> None:
    """A row's arguments on parser ``p`` (shared with ``interpret_instructions``): the row, the
    sanitizer off, the ``what`` launches and the smoke shape."""
    p.add_argument("target", help="a workload key (attention, rms_norm, ...) or a library entry "
                                  "of the peer table (hopper/gemm-bf16, ...)")
    p.add_argument("--off", action="store_true", help="sanitizer off")
    p.add_argument("--launches", type=int, default=launches, help=f"{what} launches (default {launches})")
    p.add_argument("--smoke", action="store_true", help=smoke)


def main(argv=None):
    import argparse
    import json

    p = argparse.ArgumentParser(description="where an interpreted launch's time goes (module doc)")
    row_arguments(p, "measured", 10, "the workload's tiny shape, one launch")
    p.add_argument("--top", type=int, default=25, help="parts printed (default 25)")
    p.add_argument("--json", metavar="PATH", help="write the rows to PATH")
    a = p.parse_args(argv)
    if a.launches < 1:
        p.error(f"--launches must be >= 1, got {a.launches}")
    r = measure(a.target, not a.off, 1 if a.smoke else a.launches, a.smoke)
    print(format_table(r, a.top))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(r, indent=1))
        print(f"wrote {a.json}")
    return r


if __name__ == "__main__":
    main()
