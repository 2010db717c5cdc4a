"""Interpreter limits: no-progress detection, the instruction limit, the time limit and the
progress line.

No progress. A warp spinning on a flag nobody sets never parks, so the deadlock report (every
warp parked) never comes; without this it runs until a limit. The machine watches the loops
warps run, at their taken backward branches (``tail -> head``):

* the loop ``[head, tail]`` must be *pure*: every instruction in it only reads memory and
  writes registers (loads, arithmetic, compares, moves, warp votes and shuffles,
  ``mbarrier.test_wait``/``try_wait``, fences, no-op forms), or is an atomic (whose writes
  count only when they change memory: a spin lock's failing ``cas``). Stores, barriers,
  arrivals, calls and exits make a loop impure: it is never reported. Branches may leave the
  loop (``while`` loops test at the head and branch out);
* the *deciding* registers of the loop (``loop_keys``): those a branch or a guard tests, those
  a memory instruction, a warp instruction or an atomic reads (addresses, values, masks), and,
  closed backwards, every register an arithmetic / compare / move / convert / logic
  instruction of the loop reads to compute a deciding one (``%cc`` included). A register that
  only feeds itself or other registers nothing decides on (a counter of iterations the exit
  does not test, a sum) cannot change which way the loop goes or what it reads, and is left
  out. Only the deciding registers the loop writes are compared: the others it cannot change;
* every ``CHECK_EVERY`` taken backward branches the machine *arms* the group that took one:
  it records the group's threads, its deciding registers and the memory version
  (``memory`` spaces count their writes, ``Context.mbar_version`` the mbarrier changes). The
  group's very next taken backward branch decides: when it is the same branch, with the same
  registers and no memory change in between, the group went once round the loop and came back
  to the state it started from. Between two consecutive backward branches execution only moved
  forward, from ``head`` to ``tail``, so it never left the loop; the iteration's path and its
  reads depend only on the deciding registers, the registers the loop never writes and memory:
  with memory unchanged the group repeats that iteration forever (``Group.cycle``). Registers
  that read ``%clock`` or a counter the exit tests differ, so bounded loops are never reported;
  a loop whose state repeats only every few iterations, or that contains an inner loop, is not
  detected (it runs to a limit);
* while another group can still run, the spinning group gives way: the scheduler runs it only
  when nothing else can run, until memory changes (``Group.spin``);
* copy completions the mbarrier model still defers are applied first (nothing else can run);
* it is reported, as a ``DeadlockError`` naming each warp's loop (PTX line and the user's
  line) and what every parked warp waits on, only when every other runnable group is also
  such a loop and every other group is parked (a barrier, a named barrier, an mbarrier, a warp
  sync): then nothing can ever write the memory the loops read. A consumer spinning on an
  mbarrier or a flag while a producer still runs is never reported.

Limits. ``max_steps`` bounds the instructions dispatched per batch of CTAs (default
``launch.DEFAULT_MAX_STEPS``); ``timeout`` bounds the wall time of the whole launch (default
``DEFAULT_TIMEOUT`` seconds; ``math.inf`` for none). The clock is read every
``TIME_CHECK_EVERY`` instructions. Both raise ``InterpreterLimitError`` listing where every
warp is and saying which keyword raises the limit on each path. A launch that runs longer than
``PROGRESS_AFTER`` seconds prints a line on stderr every ``PROGRESS_EVERY`` seconds: the
instructions run, their rate, the CTAs done, and the limits.
"""
from __future__ import annotations

import math
import sys
import threading
import time

import numpy as np

from ...errors import DeadlockError, InterpreterLimitError
from ...isa import decode
from ..machine import mbarrier as MB
from ..machine.registry import K_BRA, K_NOP
from ..machine.barriers import _lanes

CHECK_EVERY = 251          # taken backward branches between two samples (prime: groups that
                           # take turns are not always sampled in the same order)
TIME_CHECK_EVERY = 20_000  # instructions between two looks at the clock
DEFAULT_TIMEOUT = 300.0    # seconds a launch may run (timeout=None); see _limit_error
PROGRESS_AFTER = 5.0       # seconds into a launch before the first progress line on stderr
PROGRESS_EVERY = 10.0      # seconds between two progress lines
#: set when Python exits (``runtime.interrupts``): a launch still running on another thread
#: (a device's host callback after Ctrl-C stopped the caller) stops at its next look at the
#: clock, so the process exits cleanly instead of finalizing under it
STOP = threading.Event()

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
# of those, the families that only compute registers from registers: they decide nothing by
# themselves (every other pure instruction reads memory, a lane mask or other lanes)
_REG_FAMILIES = ("arith-", "compare", "cvt", "data", "logic")
_CARRY_IN = frozenset(("addc", "subc", "madc"))


def _form(d):
    if d.kind == K_NOP:
        return None
    try:
        return decode(d.ins).form
    except Exception:
        return False


def _pure(form) -> bool:
    return form.name in _PURE_NAMES or form.family.startswith(_PURE_FAMILIES)


def loop_keys(prog, head: int, tail: int):
    """Register keys of the deciding registers the pure loop ``[head, tail]`` of ``prog``
    writes (see the module docstring), or None when the loop is impure (memoised per
    program)."""
    cache = prog.loops
    key = (head, tail)
    if key in cache:
        return cache[key]
    cache[key] = res = _loop_keys(prog, head, tail)
    return res


def _loop_keys(prog, head, tail):
    deciding, writes, compute = set(), set(), []
    for pc in range(head, tail + 1):
        d = prog.code[pc]
        form = _form(d)
        if form is None:
            continue
        if form is False or not _pure(form) or (d.ins.opcode == "bra" and d.kind != K_BRA):
            return None
        ins = d.ins
        dst = set(_dests(ins))
        if ".cc" in ins.modifiers:
            dst.add("%cc")
        writes |= dst
        src = {n for o in ins.operands[1:] for n in _names(o)}
        if ins.guard is not None:
            src.add(ins.guard.reg)
        if ins.opcode in _CARRY_IN:
            src.add("%cc")
        if d.kind == K_BRA or not form.family.startswith(_REG_FAMILIES):
            # branches, memory, warp and atomic instructions: every register they name decides
            deciding |= src
            deciding.update(n for o in ins.operands[:1] for n in _names(o))
        else:
            compute.append((dst, src))
    grew = True
    while grew:                 # close backwards over register-only computations
        grew = False
        for dst, src in compute:
            if dst & deciding and not src <= deciding:
                deciding |= src
                grew = True
    names = deciding & writes
    # registers are keyed by scope ("f::%r1", "%r1#2"): take every key of those names
    return tuple(sorted(k for k in prog.regs if k.split("::")[-1].split("#")[0] in names))


def _names(o):
    """Names of the registers operand ``o`` mentions (addresses, vectors, pairs included)."""
    from ...ir.nodes import Addr, ParenList, PredPair, Reg, Vec
    if isinstance(o, Reg):
        return (o.name,)
    if isinstance(o, (Vec, ParenList)):
        return tuple(n for x in o.items for n in _names(x))
    if isinstance(o, PredPair):
        return (o.first.name, o.second.name)
    if isinstance(o, Addr):
        return _names(o.base) + tuple(n for x in o.extra for n in _names(x))
    return ()


def _dests(ins):
    """Names of the registers an instruction writes (its first operand: a register, a vector
    or a ``d|p`` pair)."""
    from ...ir.nodes import PredPair, Reg, Vec
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


class _Arm:
    """A group's state at a taken backward branch, to compare at its next one."""
    __slots__ = ("head", "tail", "epoch", "regs", "step")

    def __init__(self, head, tail, epoch, regs, step):
        self.head, self.tail, self.epoch, self.regs, self.step = head, tail, epoch, regs, step


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
    """Group ``g`` took the backward branch ``tail -> head`` and was due a sample (the countdown
    ran out) or armed: arm it, or compare with the state it was armed with; raise when it and
    every other runnable group spin forever while the rest are parked."""
    if not ctx.backs:
        ctx.backs = CHECK_EVERY
    a = g.arm
    g.arm = None
    keys = loop_keys(ctx.prog, head, tail)
    if keys is None:
        return
    ep = epoch(ctx)
    regs = _snapshot(ctx, g, keys)
    if a is None:
        g.arm = _Arm(head, tail, ep, regs, ctx.steps)      # decided at its next backward branch
        return
    if a.head != head or a.tail != tail or a.epoch != ep or not _same(a.regs, regs):
        return
    g.cycle = (head, tail, ep, a.step)
    for h in ctx.groups:
        if h is g or h.wait is not None:
            continue
        if h.cycle is None or h.cycle[2] != ep:
            ctx.backs = 1               # sample the next loop soon: it may be that other group
            g.spin = ep                 # until memory changes, let the others run first
            ctx.spinning = True
            return                      # something else can still run and write memory
    if ctx.mbar_deferred:
        # copies whose completion the mbarrier model defers to "when nothing else can run":
        # that is now (the running loops cannot change anything); apply them and go on
        MB.flush(ctx)
        return
    raise _report(ctx, g, tail)


def _report(ctx, g, tail):
    code = ctx.code
    lines = []
    spin = [g] + [h for h in ctx.groups if h.wait is None]
    since = min(h.cycle[3] for h in spin)
    for h in sorted(spin, key=lambda x: int(x.idx[0])):
        hd, tl = h.cycle[:2]
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
    parked = any(h.wait is not None for h in ctx.groups)
    title = (f"no progress: the warps that can run spin in loops that can never exit (each went round its "
             f"loop and came back to the same state, and for {ctx.steps - since} instructions no thread "
             f"stored, updated memory atomically or changed an mbarrier; the loops only read memory that "
             f"nothing running writes{'' if not parked else ' and every other warp is parked'}: a flag or "
             f"mbarrier that is never set?)")
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
class _Budget:
    """A launch's clock and counts across its batches (kept on the ``LaunchState``)."""

    def __init__(self, launch):
        self.t0 = time.monotonic()
        self.next_line = self.t0 + PROGRESS_AFTER
        self.ctx = None             # the batch running now
        self.steps = 0              # instructions of the batches before it
        self.ctas = 0               # CTAs of the batches before it (they have finished)

    def batch(self, ctx):
        if self.ctx is not None:
            self.end()
        self.ctx = ctx

    def end(self):
        """The batch running now has finished: its counts join the earlier ones, and the
        budget lets go of it (``launch._end_batch``)."""
        self.steps += self.ctx.steps
        self.ctas += self.ctx.nctas
        self.ctx = None


def start(ctx, launch):
    """Set the step and time limits of a batch (``launch``: the LaunchState)."""
    b = launch.__dict__.get("budget")
    if b is None:
        b = launch.budget = _Budget(launch)
    b.batch(ctx)
    ctx.deadline = launch.deadline
    ctx.timeout = launch.timeout
    _next_limit(ctx)


def _next_limit(ctx):
    lim = ctx.max_steps if ctx.max_steps else float("inf")
    ctx.limit_at = min(lim, ctx.steps + TIME_CHECK_EVERY)


def limits(ctx):
    """``ctx.steps`` passed ``ctx.limit_at``: raise if a limit is reached, print the progress
    line when it is due, and set the next check."""
    if ctx.max_steps and ctx.steps > ctx.max_steps:
        raise _limit_error(ctx, f"instruction limit of {ctx.max_steps} exceeded (an infinite loop?)",
                           "max_steps", f"{ctx.max_steps} instructions per batch of CTAs")
    if STOP.is_set():
        raise KeyboardInterrupt(f"kernel {ctx.prog.entry.name!r} stopped: Python is exiting")
    now = time.monotonic()
    if ctx.deadline is not None and now > ctx.deadline:
        raise _limit_error(ctx, f"time limit of {ctx.timeout:g} s exceeded after {ctx.steps} instructions",
                           "timeout", f"{ctx.timeout:g} s, the default {DEFAULT_TIMEOUT:g} s", " (math.inf for none)")
    b = ctx.launch.__dict__.get("budget")
    if b is not None and now >= b.next_line:
        b.next_line = now + PROGRESS_EVERY
        sys.stderr.write(progress_line(ctx, b, now) + "\n")
        sys.stderr.flush()
    _next_limit(ctx)


def progress_line(ctx, b, now) -> str:
    """The progress line of a long launch (printed on stderr every ``PROGRESS_EVERY`` s)."""
    L = ctx.launch
    steps = b.steps + ctx.steps
    secs = max(now - b.t0, 1e-9)
    cx, cy, cz = L.cluster
    total = int(np.prod(L.grid)) - L.cancelled * cx * cy * cz
    stops = []
    if ctx.timeout is not None and math.isfinite(ctx.timeout):
        stops.append(f"{ctx.timeout:g} s (timeout=)")
    if ctx.max_steps:
        stops.append(f"{ctx.max_steps:,} instructions per batch (max_steps=)")
    return (f"jax_pyptx.interpret: kernel {ctx.prog.entry.name!r} running for {secs:.0f} s: {steps:,} "
            f"instructions ({steps / secs:,.0f}/s), {b.ctas} of {total} CTAs done, {ctx.nctas} running; "
            f"stops at {' or '.join(stops)}")


_RAISE = ("raise it with {kw}={extra}: an argument of jax_pyptx.interpret.launch and kernel.interpret, a "
          "call option of ptx_call, or configure(kernel, {kw}=...) for the JAX and PyTorch calls")


def _limit_error(ctx, what, kw, limit, extra=""):
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
    hint = f"the limit is {limit}; " + _RAISE.format(kw=kw, extra=extra)
    body = ("\n" + "\n".join(lines)) if lines else ""
    return InterpreterLimitError(f"{head} ({hint}){body}", loc=getattr(d.ins, "loc", None) if d else None)
