"""Interpreter limits: no-progress detection, the instruction limit and the time limit.

No progress. A warp spinning on a flag nobody sets never parks, so the deadlock report (every
warp parked) never comes; without this it runs until the instruction limit. Every
``CHECK_EVERY`` taken backward branches the machine samples the loop it is in:

* the loop (from the branch target, its head, to the branch, its tail) must be *pure*: every
  instruction in it only reads memory and writes registers (loads, arithmetic, compares,
  moves, warp votes and shuffles, ``mbarrier.test_wait``/``try_wait``, no-op forms), or is an
  atomic (whose writes count only when they change memory: a spin lock's failing ``cas``),
  and every branch in it stays in it. Stores, barriers, arrivals, calls and exits make a loop
  impure: it is never reported;
* the sample is the group's threads, the registers the loop writes, and the memory version
  (``memory`` spaces count their writes, ``Context.mbar_version`` the mbarrier changes).
  Two samples of one loop with the same threads, the same registers and no memory change
  between them mean the loop went round and came back to the same state: with memory
  unchanged it will do so forever (registers that read ``%clock`` or a counter differ between
  samples, so bounded loops are never reported);
* while another group can still run, the spinning group gives way: the scheduler runs it only
  when nothing else can run, until memory changes (``Group.spin``);
* copy completions the mbarrier model still defers are applied first (nothing else can run);
* it is reported, as a ``DeadlockError`` naming each warp's loop (PTX line and the user's
  line) and what every parked warp waits on, only when every other runnable group is also
  such a loop and every other group is parked (a barrier, an mbarrier, a warp sync): then
  nothing can ever write the memory the loops read. A consumer spinning on an mbarrier or a
  flag while a producer still runs is never reported.

Limits. ``max_steps`` bounds the instructions dispatched per batch of CTAs; ``timeout`` bounds
the wall time of the whole launch (checked every ``TIME_CHECK_EVERY`` instructions). Both raise
``InterpreterLimitError`` listing where every warp is.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import DeadlockError, InterpreterLimitError
from ..isa import decode
from . import mbarrier as MB
from .registry import K_BRA, K_NOP
from .sync import _lanes

CHECK_EVERY = 251          # taken backward branches between two samples (prime: groups that
                           # take turns are not always sampled in the same order)
TIME_CHECK_EVERY = 20_000  # instructions between two looks at the clock

# instructions that only read memory and write registers (ISA table names and families)
_PURE_FAMILIES = ("arith-", "compare", "cvt", "data", "logic", "warp", "fence")
_PURE_NAMES = frozenset((
    "ld", "ldu", "cvta", "isspacep", "mapa", "getctarank", "createpolicy", "prefetch", "prefetchu",
    "mbarrier.test_wait", "mbarrier.try_wait", "mbarrier.pending_count", "ldmatrix.sync",
    "movmatrix.sync", "mma.sync", "mma.sp", "mma.sp::ordered_metadata", "bra", "nanosleep",
    "bar.warp.sync",
    # atomics write memory, but only a value that changes counts (ops_mem): a cas that keeps
    # failing or an add of 0 that polls a counter leaves the memory version as it was
    "atom", "red",
))


def _pure(d) -> bool:
    if d.kind == K_NOP:
        return True
    try:
        form = decode(d.ins).form
    except Exception:
        return False
    return form.name in _PURE_NAMES or form.family.startswith(_PURE_FAMILIES)


def loop_writes(prog, head: int, tail: int):
    """Register keys the pure, closed loop ``[head, tail]`` of ``prog`` may write, or None
    when the loop is impure or branches out of itself (memoised per program)."""
    cache = prog.__dict__.setdefault("_loops", {})
    key = (head, tail)
    if key in cache:
        return cache[key]
    names = set()
    res = None
    for pc in range(head, tail + 1):
        d = prog.code[pc]
        if not _pure(d) or (d.kind == K_BRA and not head <= d.target <= tail) or \
                (d.ins.opcode == "bra" and d.kind != K_BRA):
            break
        names.update(_dests(d.ins))
    else:
        # registers are keyed by scope ("f::%r1", "%r1#2"): take every key of those names
        res = tuple(sorted(k for k in prog.regs if k.split("::")[-1].split("#")[0] in names))
    cache[key] = res
    return res


def _dests(ins):
    """Names of the registers an instruction writes (its first operand: a register, a vector
    or a ``d|p`` pair)."""
    from ..ir.nodes import PredPair, Reg, Vec
    if not ins.operands:
        return ()
    first = ins.operands[0]
    if isinstance(first, Vec):
        items = first.items
    elif isinstance(first, PredPair):
        items = (first.first, first.second)
    else:
        items = (first,)
    return tuple(o.name for o in items if isinstance(o, Reg))


class _Sample:
    __slots__ = ("epoch", "idx", "regs", "cycling", "step")

    def __init__(self, epoch, idx, regs, step):
        self.epoch, self.idx, self.regs, self.step = epoch, idx, regs, step
        self.cycling = False


def epoch(ctx) -> int:
    """A number that changes whenever memory or an mbarrier phase may have changed."""
    return ctx.mem.gspace.version + ctx.shared.version + ctx.local.version + ctx.mbar_version


def _snapshot(ctx, g, keys):
    out = []
    for k in keys:
        a = ctx.regs.get(k)
        out.append(None if a is None else (a if g.full else a[g.idx]))
    return out


def _same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if x is None or y is None or not np.array_equal(x, y):
            return False
    return True


def check(ctx, g, head: int, tail: int):
    """Sample group ``g`` at the backward branch ``tail -> head``; raise when it and every
    other runnable group spin forever while the rest are parked."""
    keys = loop_writes(ctx.prog, head, tail)
    if keys is None:
        return
    ep = epoch(ctx)
    samples = ctx.spin_samples
    s = samples.get((head, tail))
    regs = _snapshot(ctx, g, keys)
    if s is None or s.epoch != ep or not np.array_equal(s.idx, g.idx) or not _same(s.regs, regs):
        samples[(head, tail)] = _Sample(ep, g.idx, regs, ctx.steps)
        return
    s.cycling = True
    for h in ctx.groups:
        if h is g or h.wait is not None:
            continue
        if not any(t.cycling and t.epoch == ep and hk[0] == h.pc and np.array_equal(t.idx, h.idx)
                   for hk, t in samples.items()):
            ctx.backs = 1               # sample the next loop soon: it may be that other group
            g.spin = ep                 # until memory changes, let the others run first
            ctx.spinning = True
            return                      # something else can still run and write memory
    if ctx.mbar_deferred:
        # copies whose completion the mbarrier model defers to "when nothing else can run":
        # that is now (the running loops cannot change anything); apply them and go on
        MB.flush(ctx)
        return
    raise _report(ctx, g, head, tail, s)


def _report(ctx, g, head, tail, s):
    code = ctx.code
    lines = []
    ep = s.epoch
    spin = []
    for h in [g] + [h for h in ctx.groups if h.wait is None]:
        hk = next(k for k, t in ctx.spin_samples.items()
                  if t.cycling and t.epoch == ep and k[0] == h.pc and np.array_equal(t.idx, h.idx)) \
            if h is not g else (head, tail)
        spin.append((h, hk))
    for h, (hd, tl) in sorted(spin, key=lambda x: int(x[0].idx[0])):
        uw, m = h.warp_masks()
        dh, dt = code[hd], code[tl]
        for w, mm in zip(uw, m):
            c = int(w) * 32 // ctx.S
            lines.append(f"  CTA {ctx._cta_str(c)} warp {int(w) % ctx.W} lanes {_lanes(int(mm))}: spins in the "
                         f"loop from {dh.where_line()} `{dh.text}` to {dt.where_line()} `{dt.text}`")
    for h in sorted((h for h in ctx.groups if h.wait is not None), key=lambda x: (int(x.idx[0]), x.pc)):
        d = code[min(_wait_pc(h), len(code) - 1)]
        uw, m = h.warp_masks()
        for w, mm in zip(uw, m):
            c = int(w) * 32 // ctx.S
            lines.append(f"  CTA {ctx._cta_str(c)} warp {int(w) % ctx.W} lanes {_lanes(int(mm))}: at "
                         f"{d.where_line()} `{d.text}` {ctx._waits_on(h, c, d, int(w))}")
    n = ctx.steps - s.step
    parked = any(h.wait is not None for h in ctx.groups)
    title = (f"no progress: the warps that can run spin in loops that can never exit (for {n} "
             f"instructions no thread stored, updated memory atomically or changed an mbarrier; the "
             f"loops only read memory that nothing running writes{'' if not parked else ' and every other warp is parked'}: "
             f"a flag or mbarrier that is never set?)")
    total = int(np.prod(ctx.launch.grid))
    if total > ctx.nctas:
        lines.append(f"  (the interpreter runs the grid's {total} CTAs in batches of {ctx.nctas}: a CTA only sees "
                     f"what CTAs of its own batch write; a flag that a later CTA would set is never seen, and a "
                     f"GPU does not promise that CTAs waiting for each other are resident together either)")
    loc = getattr(code[tail].ins, "loc", None)
    return DeadlockError(title + "\n" + "\n".join(lines), loc=loc)


def _wait_pc(h) -> int:
    """The instruction a parked group waits at (as the deadlock report names it)."""
    w = h.wait
    if w is None:
        return h.pc
    if w[0] == "bar":
        return w[3]
    if w[0] == "mbar":
        return w[5]
    return h.pc


# ----------------------------------------------------------------------------- limits
def start(ctx, launch):
    """Set the step and time limits of a batch (``launch``: the LaunchState)."""
    ctx.deadline = launch.deadline
    ctx.timeout = launch.timeout
    _next_limit(ctx)


def _next_limit(ctx):
    lim = ctx.max_steps if ctx.max_steps else float("inf")
    if ctx.deadline is not None:
        lim = min(lim, ctx.steps + TIME_CHECK_EVERY)
    ctx.limit_at = lim


def limits(ctx):
    """``ctx.steps`` passed ``ctx.limit_at``: raise if a limit is reached, else set the next."""
    if ctx.max_steps and ctx.steps > ctx.max_steps:
        raise _limit_error(ctx, f"instruction limit of {ctx.max_steps} exceeded (an infinite loop?)",
                           "pass a larger max_steps= to launch / kernel.interpret / configure")
    if ctx.deadline is not None and time.monotonic() > ctx.deadline:
        raise _limit_error(ctx, f"time limit of {ctx.timeout:g} s exceeded after {ctx.steps} instructions",
                           "pass a larger timeout= to launch / kernel.interpret / configure")
    _next_limit(ctx)


def _limit_error(ctx, what, hint):
    code = ctx.code
    d = ctx.cur
    lines = []
    groups = list(ctx.groups)
    if ctx.cur_group is not None and ctx.cur_group not in groups:
        groups.append(ctx.cur_group)
    for h in sorted(groups, key=lambda x: (int(x.idx[0]), x.pc)):
        pc = _wait_pc(h)
        if h is ctx.cur_group and d is not None:
            pc = d.pc                   # the running group: where it is now
        dd = code[min(pc, len(code) - 1)]
        uw, m = h.warp_masks()
        for w, mm in zip(uw, m):
            c = int(w) * 32 // ctx.S
            state = ctx._waits_on(h, c, dd, int(w)) if h.wait is not None else "runnable"
            lines.append(f"  CTA {ctx._cta_str(c)} warp {int(w) % ctx.W} lanes {_lanes(int(mm))}: at "
                         f"{dd.where_line()} `{dd.text}` {state}")
    head = f"{what} at: {d.text} [{d.where()}]" if d is not None else what
    body = ("\n" + "\n".join(lines)) if lines else ""
    return InterpreterLimitError(f"{head} ({hint}){body}", loc=getattr(d.ins, "loc", None) if d else None)
