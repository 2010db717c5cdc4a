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

``--opcodes`` counts instead the Python bytecodes each part executes (``sys.monitoring``'s
instruction events from Python 3.12, ``sys.settrace``'s opcode events before; the native core, NumPy and the C library are not counted), and lists the Python
functions that execute the most. A count does not wander with the machine as wall time does (a
launch gives the same count to a few in 100,000 from process to process: the hash seed orders
some sets), so two checkouts, or a change and its undoing, compare in seconds where wall times
need many alternated launches and valgrind minutes (``interpret_instructions.py``); it measures
the interpreter's Python work only, not the time of each bytecode nor the native core's. The
tracing makes a launch some fifty times slower: one measured launch is the default.

    python benchmarks/interpret_breakdown.py attention --opcodes
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


def measure(target: str, sanitize: bool = True, launches: int = 10, smoke: bool = False,
            opcodes: bool = False) -> dict:
    """Seconds per launch of the whole launch and of each part (``module doc``), after two
    warm-up launches: ``{"total_s", "parts": [(name, seconds per launch, calls per launch)]}``,
    the parts slowest first. ``opcodes``: Python bytecodes instead of seconds (``"unit"``), and
    ``"functions"``: ``[(file:line name, bytecodes per launch)]``, the 40 that execute most."""
    from benchmarks.interpret_peers import ours, spec
    from jax_pyptx.interpret.scheduler import context, issue_runs, segments, store_runs, wgmma_runs

    key, entry = row_of(target)
    k, ins = ours.build(key, entry, spec.shape_of(key, smoke))
    for _ in range(2):
        k.interpret(*ins, sanitize=sanitize)
    spent: dict = {}
    wrapped: list = []
    inner = [0.0]           # the time of the timed calls made inside the current one
    ops = _Opcodes() if opcodes else None
    clock = ops.now if opcodes else time.perf_counter

    def timed(fn, name):
        def run(*a, **kw):
            outer, inner[0] = inner[0], 0.0
            t0 = clock()
            try:
                return fn(*a, **kw)
            finally:
                t = clock() - t0
                c = spent.setdefault(name, [0.0, 0])
                c[0] += t - inner[0]
                c[1] += 1
                inner[0] = outer + t
        return run

    init = context.Context.__init__

    def init_timed(self, *a, **kw):
        init(self, *a, **kw)
        if ops is not None:
            ops.paused = True       # (the wrapping is not the launch's)
        for d in self.code:
            if d.fn is not None and not getattr(d.fn, "_timed", False):
                wrapped.append((d, d.fn))
                d.fn = timed(d.fn, d.ins.full_opcode)
                d.fn._timed = True
        if ops is not None:
            ops.paused = False

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
        if ops is not None:       # (the wrappers' own bytecodes are not the launch's)
            ops.start(skip={init_timed.__code__, timed(None, "").__code__})
        t0 = clock()
        for _ in range(launches):
            k.interpret(*ins, sanitize=sanitize)
        total = (clock() - t0) / launches
    finally:
        if ops is not None:
            ops.stop()
        for obj, name, old in saved:
            setattr(obj, name, old)
        for d, fn in wrapped:
            d.fn = fn
    parts = sorted(((name, s / launches, n / launches) for name, (s, n) in spent.items()),
                   key=lambda p: -p[1])
    parts.append((REST, max(total - sum(p[1] for p in parts), 0.0), 0))
    r = {"target": target, "key": key, "entry": entry, "sanitize": sanitize, "unit": "s",
         "shape": spec.shape_of(key, smoke), "launches": launches, "total_s": total, "parts": parts}
    if ops is not None:
        r["unit"] = "opcodes"
        by = {}                 # (a function's code objects of one name and line: one row)
        for c, n in ops.functions.items():
            by[_where(c)] = by.get(_where(c), 0) + n
        r["functions"] = sorted(((f, n / launches) for f, n in by.items()), key=lambda fn: -fn[1])[:40]
    return r


def _where(code) -> str:
    """``dir/file.py:line name`` of a code object."""
    return f"{'/'.join(code.co_filename.rsplit('/', 2)[-2:])}:{code.co_firstlineno} {code.co_name}"


class _Opcodes:
    """A count of the Python bytecodes executed between ``start`` and ``stop`` (``now``), and of
    each function's (``functions``: code object -> count). Python 3.12 and later count through
    ``sys.monitoring``'s instruction events (3.12's ``sys.settrace`` no longer delivers opcode
    events), earlier versions through ``sys.settrace``'s."""

    def __init__(self):
        import collections

        self.n = 0
        self.functions = collections.Counter()
        self.skip = frozenset()     # code objects whose own bytecodes are not counted
        self.paused = False         # nothing counted meanwhile
        self.tool = None            # the sys.monitoring tool id held while counting

    def now(self) -> int:
        return self.n

    def start(self, skip=frozenset()) -> None:
        self.skip = frozenset(skip)
        mon = getattr(sys, "monitoring", None)
        if mon is None:
            sys.settrace(self.trace)
            return
        free = [i for i in (mon.PROFILER_ID, 3, 4) if mon.get_tool(i) is None]
        if not free:
            raise RuntimeError("interpret_breakdown --opcodes: every sys.monitoring tool id it "
                               "could use (2, 3, 4) is held by another tool; stop that one first")
        self.tool = free[0]
        mon.restart_events()        # (instructions an earlier count disabled: reported again)
        mon.use_tool_id(self.tool, "interpret_breakdown")
        mon.register_callback(self.tool, mon.events.INSTRUCTION, self.instruction)
        mon.set_events(self.tool, mon.events.INSTRUCTION)

    def stop(self) -> None:
        if self.tool is None:
            sys.settrace(None)
            return
        mon = sys.monitoring
        mon.set_events(self.tool, 0)
        mon.register_callback(self.tool, mon.events.INSTRUCTION, None)
        mon.free_tool_id(self.tool)
        self.tool = None

    def instruction(self, code, offset):
        if code in self.skip:
            return sys.monitoring.DISABLE       # (this instruction is not reported again)
        if not self.paused:
            self.n += 1
            self.functions[code] += 1
        return None

    def trace(self, frame, event, arg):
        if event == "call":
            if frame.f_code in self.skip:
                return None
            frame.f_trace_opcodes, frame.f_trace_lines = True, False
            return self.trace
        if event == "opcode" and not self.paused:
            self.n += 1
            self.functions[frame.f_code] += 1
        return self.trace


def format_table(r: dict, top: int = 25) -> str:
    from benchmarks.interpret_peers import spec

    ops = r.get("unit") == "opcodes"
    total = r["total_s"]
    what = f"{total:,.0f} Python bytecodes a launch" if ops else f"{total * 1e3:.2f} ms a launch"
    head = (f"{r['entry'] or r['key']} {spec.shape_text(r['shape'])}, sanitizer "
            f"{'on' if r['sanitize'] else 'off'}: {what} (mean of {r['launches']})")
    cols = f"{'ops/launch':>10} {'share':>6} {'calls':>7} {'ops/call':>9}" if ops else \
        f"{'ms/launch':>10} {'share':>6} {'calls':>7} {'us/call':>9}"
    lines = [head, f"{cols}  part"]
    parts = r["parts"]
    shown = parts[:top] if len(parts) <= top + 1 else parts[:top] + [parts[-1]]
    for name, s, n in shown:
        per = f"{s / n * (1 if ops else 1e6):9.1f}" if n else f"{'':9}"
        calls = f"{n:7.1f}" if n else f"{'':7}"
        lines.append(f"{_amount(s, ops):>10} {100 * s / total:5.1f}% {calls} {per}  {name}")
    if len(shown) < len(parts):
        lines.append(f"({len(parts) - len(shown)} more parts below {_amount(shown[-2][1], ops)}"
                     f"{'' if ops else ' ms'})")
    if ops and r.get("functions"):
        lines += ["", f"{'ops/launch':>10} {'share':>6}  Python function (its own bytecodes)"]
        lines += [f"{_amount(c, True):>10} {100 * c / total:5.1f}%  {f}" for f, c in r["functions"][:top]]
    return "\n".join(lines)


def _amount(x, ops: bool) -> str:
    return f"{x:,.0f}" if ops else f"{x * 1e3:.3f}"


def row_arguments(p, what: str, launches, smoke: str, default_text: str | None = None) -> None:
    """A row's arguments on parser ``p`` (shared with ``interpret_instructions``): the row, the
    sanitizer off, the ``what`` launches (``launches`` by default, said ``default_text`` where
    given) and the smoke shape."""
    p.add_argument("target", help="a workload key (attention, rms_norm, ...) or a library entry "
                                  "of the peer table (hopper/gemm-bf16, ...)")
    p.add_argument("--off", action="store_true", help="sanitizer off")
    p.add_argument("--launches", type=int, default=launches,
                   help=f"{what} launches (default {default_text or launches})")
    p.add_argument("--smoke", action="store_true", help=smoke)


def main(argv=None):
    import argparse
    import json

    p = argparse.ArgumentParser(description="where an interpreted launch's time goes (module doc)")
    row_arguments(p, "measured", None, "the workload's tiny shape, one launch", "10; 1 with --opcodes")
    p.add_argument("--top", type=int, default=25, help="parts printed (default 25)")
    p.add_argument("--opcodes", action="store_true",
                   help="Python bytecodes instead of wall time (module doc); one launch unless --launches")
    p.add_argument("--json", metavar="PATH", help="write the rows to PATH")
    a = p.parse_args(argv)
    if a.launches is None:
        a.launches = 1 if a.opcodes else 10
    if a.launches < 1:
        p.error(f"--launches must be >= 1, got {a.launches}")
    r = measure(a.target, not a.off, 1 if a.smoke else a.launches, a.smoke, a.opcodes)
    print(format_table(r, a.top))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(r, indent=1))
        print(f"wrote {a.json}")
    return r


if __name__ == "__main__":
    main()
