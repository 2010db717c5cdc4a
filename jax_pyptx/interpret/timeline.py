"""The interpreter timeline: a Chrome / Perfetto trace of a launch (``launch(...,
timeline="run.json")``), in the Trace Event Format (``{"traceEvents": [...]}``).

The clock is abstract: one unit is one warp instruction issued by the scheduler. When the
scheduler runs an instruction for a group of threads spanning ``k`` warps (converged code runs
as one NumPy operation for every warp at that PC), the clock advances by ``k``; every warp of
the group is busy for those ``k`` units. Instructions a guard switches off for every thread
count too (a GPU issues them). The clock runs on across batches of CTAs.

What the trace holds (``ts`` / ``dur`` in clock units, which viewers show as microseconds):

* one process per CTA (``pid`` = the CTA's linear id, named ``CTA (x,y,z)``);
* one track per warp (``tid`` = the warp's index in its CTA, named ``warp w``) with complete
  events (``ph: "X"``) for runs of instructions of one *segment*: a basic block (from a label or
  the instruction after a branch to the next one), or a waiting instruction with the spin loop
  around it (``bar.sync`` / ``barrier.sync`` / ``bar.red`` / ``barrier.cluster.wait``, an
  ``mbarrier.try_wait`` / ``test_wait`` and the branch that retries it). Consecutive runs of a
  warp in the same segment merge into one slice, so a wait slice lasts from the first time
  the warp reaches the wait until it leaves the loop (time parked included), and a loop that
  stays in one block is one slice;
* asynchronous operations in flight, as complete events on extra tracks of the CTA
  (``TMA #0``, ``wgmma #0``, ...; an operation takes the lowest-numbered track of its kind
  free when it is issued): TMA / bulk copies into shared memory from the issuing instruction
  to the complete-tx on their mbarrier (applied when a thread next waits on it), bulk-group
  operations to the ``cp.async.bulk.wait_group`` that retires them, the ``wgmma.mma_async``
  of one commit group of a warpgroup to the ``wgmma.wait_group`` that retires it, the
  ``tcgen05.mma`` of a thread to its ``tcgen05.commit``, the ``cp.async`` of one commit group
  of a warp to its ``cp.async.wait_group`` / ``wait_all`` / ``cp.async.mbarrier.arrive``. An
  operation still in flight at the end of the batch ends there (``args.completed: "at
  exit"``);
* metadata events (``ph: "M"``) naming the processes and threads.

Every slice's ``args`` hold the PTX line and text of its first instruction (``ptx_line``,
``ptx``), the number of warp instructions it covers, and ``src``, the user's ``file:line``
when the kernel was written with the DSL.

Examples:
    >>> import json, os, tempfile
    >>> import numpy as np
    >>> from jax_pyptx.interpret import launch
    >>> ptx_text = '''
    ... .version 8.5
    ... .target sm_90a
    ... .address_size 64
    ... .visible .entry k()
    ... {
    ...     bar.sync 0;
    ...     ret;
    ... }
    ... '''
    >>> path = os.path.join(tempfile.mkdtemp(), "run.json")
    >>> launch(ptx_text, "k", [], grid=1, block=64, timeline=path)
    >>> events = json.load(open(path))["traceEvents"]
    >>> [e["args"]["name"] for e in events if e["name"] in ("process_name", "thread_name")]
    ['CTA (0,0,0)', 'warp 0', 'warp 1']
    >>> [(e["tid"], e["name"], e["ts"], e["dur"]) for e in events if e["ph"] == "X"]
    [(0, 'wait bar.sync', 0, 2), (1, 'wait bar.sync', 0, 2), (0, 'k+1', 2, 2), (1, 'k+1', 2, 2)]
"""
from __future__ import annotations

import json
import os
import tempfile

import numpy as np

from ..errors import InterpreterError
from .scheduler.context import Context
from .machine.registry import K_BRA, K_EXIT

__all__ = ["Timeline", "check_path"]

ASYNC_TID = 1000                 # async tracks of a CTA: tids from here on


def check_path(timeline, what: str = "timeline"):
    """``timeline`` as a path string (None stays None); anything else, or a path whose
    directory does not exist (checked before the run, so that no result is lost to it), is
    an error."""
    if timeline is None:
        return None
    if isinstance(timeline, (str, os.PathLike)):
        p = os.fspath(timeline)
        if isinstance(p, str) and p:
            folder = os.path.dirname(os.path.abspath(p))
            if not os.path.isdir(folder) or os.path.isdir(p):
                why = (f"{p!r} is a directory" if os.path.isdir(p) else
                       f"its directory {folder!r} does not exist")
                raise InterpreterError(f"{what}={p!r}: {why}; pass a file path in an existing "
                                       f"directory (create it first: os.makedirs)")
            return p
    raise InterpreterError(f"{what} must be a file path (str or os.PathLike) for the trace JSON, "
                           f"or None; got {timeline!r} ({type(timeline).__name__})")


def _is_wait(d) -> bool:
    """Whether ``d`` may wait on other threads: a CTA barrier that waits, ``barrier.cluster.wait``,
    an mbarrier ``try_wait`` / ``test_wait``."""
    parts = d.ins.opcode.split(".")
    if parts[0] in ("bar", "barrier"):
        if "warp" in parts:            # bar.warp.sync: a warp's lanes meet, no CTA barrier
            return False
        if "cluster" in parts:
            return "wait" in parts
        return "sync" in parts or "red" in parts
    return parts[0] == "mbarrier" and ("try_wait" in parts or "test_wait" in parts)


class _Segments:
    """The static partition of a program's PCs into named segments (module doc)."""

    def __init__(self, prog):
        code = prog.code
        n = len(code)
        starts = {0}
        names = {}
        for fname, labels in prog.labels.items():
            for lab, pc in labels.items():
                if pc < n:
                    starts.add(pc)
                    names.setdefault(pc, lab)
        for fname, (pc, _, _) in prog.funcs.items():
            if pc < n:
                starts.add(pc)
                names[pc] = fname
        names.setdefault(0, prog.name)
        for d in code:
            if d.kind in (K_BRA, K_EXIT) and d.pc + 1 < n:
                starts.add(d.pc + 1)
        waits = {}                     # first pc of a wait range -> (last pc, the wait's pc)
        for d in code:
            if not _is_wait(d):
                continue
            lo = hi = d.pc
            for q in range(d.pc + 1, min(d.pc + 4, n)):
                c = code[q]
                if c.kind == K_BRA and c.target is not None and d.pc - 4 <= c.target <= d.pc:
                    lo, hi = min(c.target, d.pc), q
                    break
            if any(a <= hi and lo <= b for a, (b, _) in waits.items()):
                continue
            waits[lo] = (hi, d.pc)
        seg_of = [0] * n
        self.info = []                 # per segment: (name, first pc, is_wait)
        label, label_pc = prog.name, 0
        cur = -1
        pc = 0
        while pc < n:
            if pc in names:
                label, label_pc = names[pc], pc
            if pc in waits:
                hi, wpc = waits[pc]
                self.info.append((f"wait {code[wpc].ins.full_opcode}", wpc, True))
                cur = len(self.info) - 1
                for q in range(pc, hi + 1):
                    seg_of[q] = cur
                    if q in names:
                        label, label_pc = names[q], q
                pc = hi + 1
                if pc < n and pc not in starts:
                    self.info.append((label if pc == label_pc else f"{label}+{pc - label_pc}", pc, False))
                    cur = len(self.info) - 1
                continue
            if pc in starts or cur < 0:
                self.info.append((label if pc == label_pc else f"{label}+{pc - label_pc}", pc, False))
                cur = len(self.info) - 1
            seg_of[pc] = cur
            pc += 1
        self.seg_of = seg_of


def _ptx_lines(prog) -> list:
    """The PTX line of every instruction (None where unknown): from the parsed text, or, for a
    module built in Python, from its printed text parsed again (same layout, same PCs)."""
    code = prog.code
    lines = [None] * len(code)
    direct = False
    for d in code:
        loc = d.ins.loc
        if loc is not None and hasattr(loc, "src"):        # text.lexer.TextLoc
            lines[d.pc] = loc.line
            direct = True
    if direct:
        return lines
    try:
        from ..text.parser import parse
        from ..text.printer import emit
        from .machine.program import Program
        again = Program(parse(emit(prog.module), check=False), prog.name)
        if len(again.code) == len(code):
            for a, d in zip(again.code, code):
                if a.ins.loc is not None and a.ins.opcode == d.ins.opcode:
                    lines[d.pc] = a.ins.loc.line
    except Exception:
        pass
    return lines


class Timeline:
    """Records one launch (all its batches of CTAs) and writes the trace (module doc)."""

    def __init__(self, path: str, prog, launch_state):
        self.path = path
        self.prog = prog
        self.launch = launch_state
        self.segs = _Segments(prog)
        self.seg_of = self.segs.seg_of
        self.is_wait = [w for _, _, w in self.segs.info]
        self.every_pc = range(len(prog.code))     # GroupRun.every_pc
        self.t = 0                     # the clock: warp instructions issued
        self.now = 0                   # start time of the instruction being executed
        self.slices = []               # (pid, tid, segment, ts, dur, instructions)
        self.async_events = []         # (pid, kind, lane, name, ts, dur, args)
        self.pids = {}                 # pid -> CTA name
        self.tracks = {}               # (pid, kind, lane) -> tid
        self._lines = None
        self.error = None

    # ------------------------------------------------------------------ per batch
    def begin_batch(self, ctx):
        self.ctx = ctx
        self.pend = {}                 # batch warp index -> [segment, ts, end, count]
        self.open = {}                 # (kind, owner, tag) -> [cta, lane, ts, count, bytes, d]
        self.busy = {}                 # (batch cta, kind) -> set of lanes in use
        self.gen = {}                  # TMA: (batch cta, mbarrier) -> complete-tx applied so far
        gx, gy, _ = self.launch.grid
        for c in ctx.cta_ids.tolist():
            x, y, z = c % gx, (c // gx) % gy, c // (gx * gy)
            self.pids.setdefault(int(c), f"CTA ({x},{y},{z})")

    def end_batch(self, ctx):
        for w in list(self.pend):
            p = self.pend.pop(w)
            if self.is_wait[p[0]]:
                p[2] = self.t          # parked to the end (a deadlock): waited until now
            self._emit_warp(ctx, w, p)
        for key in list(self.open):
            self._close(key, completed="at exit")

    # ------------------------------------------------------------------ warp slices
    def group_run(self, ctx, g) -> "GroupRun":
        """The hook of one ``Context.run_group`` of ``g``: what it runs, on the clock."""
        return GroupRun(self, ctx, g)

    def run(self, ctx, warps, seg, ta, count):
        """Warps ``warps`` (batch warp indices) ran ``count`` instructions of segment ``seg``
        from ``ta`` to now."""
        if not count:
            return
        tb = self.t
        pend = self.pend
        for w in warps:
            p = pend.get(w)
            if p is not None and p[0] == seg:
                p[2] = tb
                p[3] += count
                continue
            if p is not None:
                if self.is_wait[p[0]]:
                    p[2] = ta          # a wait lasts until the warp runs again
                self._emit_warp(ctx, w, p)
            pend[w] = [seg, ta, tb, count]

    def _emit_warp(self, ctx, w, p):
        W = ctx.W
        pid = int(ctx.cta_ids[w // W])
        self.slices.append((pid, w % W, p[0], p[1], p[2] - p[1], p[3]))

    # ------------------------------------------------------------------ async operations
    def begin(self, ctx, kind, owner, tag, cta, nbytes=0):
        """An asynchronous operation of ``kind`` issued now by ``owner`` (a tuple with the batch
        CTA first), in its group ``tag``: opens a slice or joins the open one of that group."""
        key = (kind, owner, tag)
        rec = self.open.get(key)
        if rec is not None:
            rec[3] += 1
            rec[4] += nbytes
            return
        lanes = self.busy.setdefault((cta, kind), set())
        lane = 0
        while lane in lanes:
            lane += 1
        lanes.add(lane)
        self.open[key] = [cta, lane, self.now, 1, nbytes, ctx.cur]

    def end(self, kind, owner, limit=None):
        """Close the open operations of ``owner`` whose tag is below ``limit`` (all: None)."""
        for key in [k for k in self.open if k[0] == kind and k[1] == owner
                    and (limit is None or k[2] < limit)]:
            self._close(key)

    def _close(self, key, completed=None):
        kind, owner, tag = key
        cta, lane, ts, count, nbytes, d = self.open.pop(key)
        self.busy[(cta, kind)].discard(lane)
        ctx = self.ctx
        args = {"issued": count}
        if nbytes:
            args["bytes"] = nbytes
        if completed:
            args["completed"] = completed
        if kind in ("wgmma", "cp.async", "bulk group"):
            args["group"] = int(tag)
        if kind == "TMA":
            args["mbarrier"] = f"{owner[1]:#x}"
            args["completion"] = int(tag)
        args.update(self._where(d))
        name = kind if d is None else (d.ins.opcode if kind == "tcgen05.mma" else
                                       d.ins.full_opcode.split(".shared")[0])
        self.async_events.append((int(ctx.cta_ids[cta]), kind, lane, name, ts, self.t - ts, args))

    # --- the hooks the instruction handlers call (only when ctx.timeline is set)
    def copy_issue(self, ctx, cta, mbar_off, nbytes):
        """A copy completing on the mbarrier at ``(cta, mbar_off)``: the copies a barrier
        receives until its next complete-tx form one slice."""
        owner = (int(cta), int(mbar_off))
        self.begin(ctx, "TMA", owner, self.gen.get(owner, 0), int(cta), int(nbytes))

    def copy_done(self, key):
        owner = (int(key[0]), int(key[1]))
        self.end("TMA", owner)
        self.gen[owner] = self.gen.get(owner, 0) + 1

    def per_unit(self, ctx, g, unit_size):
        """{(batch cta, unit): [a slot of it in g, its thread count in g]} for units of
        ``unit_size`` warps (a warp: 1, a warpgroup: 4)."""
        out = {}
        if not g.n:
            return out
        uw, first, counts = np.unique(g.idx >> 5, return_index=True, return_counts=True)
        W = ctx.W
        for w, s, c in zip(uw.tolist(), g.idx[first].tolist(), counts.tolist()):
            u = out.setdefault((w // W, (w % W) // unit_size), [s, 0])
            u[1] += c
        return out

    def issue(self, ctx, kind, g, tags, unit_size, nbytes=0):
        """Every ``unit_size``-warp unit of ``g`` issues one operation of ``kind`` in its group
        ``tags[slot]`` (an array over the batch's slots); ``nbytes``: bytes per thread."""
        for (cta, u), (s, n) in self.per_unit(ctx, g, unit_size).items():
            self.begin(ctx, kind, (cta, u), int(tags[s]), cta, nbytes * n)

    def retire(self, ctx, kind, g, limits, unit_size):
        """Units of ``g`` retire their operations of ``kind`` in groups below ``limits[slot]``
        (None: all)."""
        for (cta, u), (s, _) in self.per_unit(ctx, g, unit_size).items():
            self.end(kind, (cta, u), None if limits is None else int(limits[s]))

    # ------------------------------------------------------------------ output
    def _where(self, d) -> dict:
        if d is None:
            return {}
        if self._lines is None:
            self._lines = _ptx_lines(self.prog)
        out = {}
        line = self._lines[d.pc] if d.pc < len(self._lines) else None
        if line is not None:
            out["ptx_line"] = line
        out["ptx"] = d.text
        loc = d.ins.loc
        if loc is not None and not hasattr(loc, "src"):
            out["src"] = str(loc)
        return out

    def events(self) -> list:
        code = self.prog.code
        info = self.segs.info
        ev = []
        warps_of = {}
        seg_args = {}
        for pid, tid, seg, ts, dur, n in self.slices:
            warps_of.setdefault(pid, set()).add(tid)
            a = seg_args.get(seg)
            if a is None:
                name, pc, is_wait = info[seg]
                a = seg_args[seg] = self._where(code[pc])
            args = dict(a, instructions=n)
            ev.append({"name": info[seg][0], "cat": "wait" if info[seg][2] else "instructions",
                       "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args})
        for pid, kind, lane, name, ts, dur, args in self.async_events:
            tid = self.tracks.setdefault((pid, kind, lane), ASYNC_TID + len(self.tracks))
            ev.append({"name": name, "cat": kind, "ph": "X", "pid": pid, "tid": tid, "ts": ts,
                       "dur": dur, "args": args})
        meta = []
        for pid, name in sorted(self.pids.items()):
            meta.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}})
            meta.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                         "args": {"sort_index": pid}})
            for w in sorted(warps_of.get(pid, ())):
                meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": w,
                             "args": {"name": f"warp {w}"}})
                meta.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": w,
                             "args": {"sort_index": w}})
        for (pid, kind, lane), tid in sorted(self.tracks.items(), key=lambda kv: kv[1]):
            meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                         "args": {"name": f"{kind} #{lane}"}})
            meta.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                         "args": {"sort_index": tid}})
        return meta + ev

    def write(self):
        """Write the trace to ``path`` atomically (a temporary file renamed over it)."""
        L = self.launch
        doc = {"traceEvents": self.events(), "displayTimeUnit": "ms",
               "otherData": {"kernel": self.prog.name, "grid": list(L.grid), "block": list(L.block),
                             "cluster": list(L.cluster),
                             "clock": "1 unit = one warp instruction issued by the scheduler",
                             "warp_instructions": self.t}}
        if self.error is not None:
            doc["otherData"]["error"] = self.error
        path = os.path.abspath(self.path)
        fd, tmp = tempfile.mkstemp(prefix=".timeline-", suffix=".json", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f, separators=(",", ":"))
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


class GroupRun:
    """The timeline's hook in the scheduling loop (``Context._run``) for one run of a group:
    the warps it spans, the segment it is in, since when (``ta``) and how many instructions
    (``cnt``). The loop calls ``step`` before each instruction that issues, ``unstep`` when
    one waits instead (a warp-synchronous instruction parks the group), ``regroup`` when some
    threads exit and the others run on, and ``close`` when the run ends; each run of
    instructions in one segment is handed to ``Timeline.run``.

    ``every_pc`` is what the loop tests each PC against in place of its join points, so that
    it calls ``step`` for every instruction; launches without a timeline have no hook and pay
    nothing for it.
    """

    __slots__ = ("tl", "ctx", "seg_of", "every_pc", "warps", "nw", "seg", "ta", "cnt")

    def __init__(self, tl: Timeline, ctx, g):
        self.tl = tl
        self.ctx = ctx
        self.seg_of = tl.seg_of
        self.every_pc = tl.every_pc
        self.warps = g.warp_masks()[0].tolist()
        self.nw = len(self.warps)
        self.seg = tl.seg_of[g.pc]
        self.ta = tl.t
        self.cnt = 0

    def step(self, pc):
        """The instruction at ``pc`` issues: the clock advances by the group's warp count
        (``Timeline.now`` is when it starts); a new segment hands the last one's run over."""
        tl = self.tl
        s = self.seg_of[pc]
        if s != self.seg:
            tl.run(self.ctx, self.warps, self.seg, self.ta, self.cnt)
            self.seg, self.ta, self.cnt = s, tl.t, 0
        tl.now = t = tl.t
        tl.t = t + self.nw
        self.cnt += 1

    def unstep(self):
        """The instruction last stepped did not issue: it waits (``check_sync``)."""
        self.tl.t -= self.nw
        self.cnt -= 1

    def regroup(self, g):
        """Some threads exited; ``g``, the others, runs on from here in the same segment."""
        self.close()
        self.ta, self.cnt = self.tl.t, 0
        self.warps = g.warp_masks()[0].tolist()
        self.nw = len(self.warps)

    def close(self):
        """The run ends: hand its last segment's instructions to the timeline."""
        self.tl.run(self.ctx, self.warps, self.seg, self.ta, self.cnt)


class TracedContext(Context):
    """A ``Context`` recording into ``timeline`` (a ``Timeline``): the same scheduling loop,
    which hands the timeline its hook (``GroupRun``) for every run of a group."""

    def __init__(self, prog, launch, cta_ids, sanitize=True, timeline=None):
        super().__init__(prog, launch, cta_ids, sanitize=sanitize)
        self.timeline = timeline
        timeline.begin_batch(self)
