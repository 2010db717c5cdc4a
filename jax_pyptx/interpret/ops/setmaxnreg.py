"""``setmaxnreg``: per-warp register counts and the CTA's register pool (PTX ISA
"setmaxnreg").

The model:

* every warp starts with the kernel's per-thread register count ``R0``: the entry's
  ``.maxnreg``, else the most a CTA of its ``.maxntid`` / ``.reqntid`` (with ``.minnctapersm``)
  can hold of the 65536-register file, in units of 8 (ptxas ignores ``setmaxnreg`` in a kernel
  with neither, and so does the interpreter's register accounting);
* the warps' starting registers must fit the register file (else the launch would fail);
* the CTA's pool starts empty; ``setmaxnreg.dec`` releases ``(current - N) * 32`` registers of
  the warp into it, ``setmaxnreg.inc`` takes ``(N - current) * 32`` from it and blocks (parks)
  until the pool holds that many: a request that can never be met ends as a deadlock naming
  the registers it waits for and every warp's count;
* ``.sync.aligned``: every thread of the warp executes it together. The ISA also asks every
  warp of the warpgroup to execute the same ``setmaxnreg`` and to synchronize before the next
  one, but the hardware accounts registers per warp: Triton's Blackwell warp specialization
  splits a warpgroup into 1-warp partitions that reach their own ``setmaxnreg`` (with the same
  count) at their own time, and an idle warp runs two in a row, and the code runs right. So
  what is checked is what the hardware enforces: the count (24..256 in steps of 8: an error
  always), its direction (``.inc`` must not lower the count, ``.dec`` must not raise it: a
  sanitizer error) and the CTA's register pool (a request it can never meet is a deadlock),
  not which instruction each warp executed.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...types import u32
from ..machine.cluster import directive_ints
from ..machine.group import Group
from ..state.operands import reader
from ..machine.registry import K_CTRL, register

REGISTER_FILE = 65536           # 32-bit registers per SM (sm_90, sm_100)


def initial_count(prog, nthreads: int):
    """The per-thread register count every warp of the entry starts with, or None when the
    kernel declares no bound ptxas could derive it from."""
    fn = prog.entry
    mx = directive_ints(fn.directives, ".maxnreg")
    if mx:
        return int(mx[0])
    nt = directive_ints(fn.directives, ".maxntid") or directive_ints(fn.directives, ".reqntid")
    if not nt:
        return None
    threads = int(np.prod(nt))
    blocks = (directive_ints(fn.directives, ".minnctapersm") or (1,))[0]
    per = REGISTER_FILE // (max(blocks, 1) * (-(-threads // 32) * 32))
    return max(24, min(256, per // 8 * 8))


class RegFile:
    """Register accounting of a batch (``Context.regfile``, created by the first setmaxnreg)."""

    __slots__ = ("r0", "count", "pool", "waiting")

    def __init__(self, ctx):
        known = ctx.prog.start_regs             # (the entry's directives: read once a program)
        if ctx.T not in known:
            known[ctx.T] = initial_count(ctx.prog, ctx.T)
        self.r0 = known[ctx.T]
        nw = ctx.N // 32
        self.count = np.full(nw, self.r0 or 0, np.int64)      # per-thread count of each batch warp
        self.pool = np.zeros(ctx.nctas, np.int64)              # free registers of each CTA
        self.waiting = np.zeros(nw, bool)                      # parked in a setmaxnreg.inc

    def describe_wait(self, ctx, g) -> str:
        """What a group parked in ``setmaxnreg.inc`` waits for (deadlock reports)."""
        _, cta, n, _pc = g.wait
        w = int(g.idx[0]) >> 5
        need = (n - int(self.count[w])) * 32
        first = cta * ctx.W
        counts = ", ".join(f"warp {i}: {int(self.count[first + i])}" for i in range(ctx.W))
        return (f"waits for {need} registers from its CTA's pool to grow to {n} per thread ({int(self.pool[cta])} "
                f"free; per-thread counts {counts}; {self.r0} x {ctx.T} threads were allocated at launch of the "
                f"{REGISTER_FILE}-register file): no warp releases enough with setmaxnreg.dec")


def _state(ctx, sub, d) -> RegFile:
    if ctx.regfile is None:
        rf = RegFile(ctx)
        if rf.r0 is not None:
            total = -(-rf.r0 // 8) * 8 * ctx.W * 32
            if total > REGISTER_FILE:
                raise ctx.error(InterpreterError,
                                f"the kernel starts every warp with {rf.r0} registers per thread: {ctx.W} warps "
                                f"need {total}, more than the {REGISTER_FILE} of the register file (a launch "
                                f"would fail)", sub, 0, d)
        ctx.regfile = rf
    return ctx.regfile


def _at_once(ctx, rf, uw, n: int, inc: bool) -> bool:
    """The warps ``uw`` (batch warps, ascending) set their count to ``n`` at once, where the
    loop one warp after the other would do the same: no warp's count goes the wrong way and
    every CTA's pool covers all of its warps' ``.inc`` (an ``.inc`` takes, a ``.dec`` gives,
    so none parks); each CTA's parked warps are woken once. False, having changed nothing,
    where the loop must decide (and report or park)."""
    if len(uw) <= _FEW:
        return _at_once_few(ctx, rf, uw, n, inc)
    counts = rf.count[uw]
    if (counts > n).any() if inc else (counts < n).any():
        return False
    delta = (n - counts) * 32
    ctas = uw // ctx.W
    take = np.bincount(ctas, weights=delta, minlength=len(rf.pool)).astype(np.int64)
    if inc and (take > rf.pool).any():
        return False
    rf.waiting[uw] = False
    rf.pool -= take
    rf.count[uw] = n
    if not inc:
        for cta in np.unique(ctas[delta < 0]).tolist():
            _wake(ctx, cta)
    return True


_FEW = 64          # warps at most that ``_at_once_few`` takes on Python ints


def _at_once_few(ctx, rf, uw, n: int, inc: bool) -> bool:
    """``_at_once`` of a few warps (a role's warps in a few CTAs) on Python ints."""
    counts = rf.count[uw].tolist()
    if any(c > n for c in counts) if inc else any(c < n for c in counts):
        return False
    W, take, woken = ctx.W, {}, set()
    for w, c in zip(uw.tolist(), counts):
        cta = w // W
        take[cta] = take.get(cta, 0) + (n - c) * 32
        if c > n:
            woken.add(cta)
    pool = rf.pool
    if inc and any(t > pool[cta] for cta, t in take.items()):
        return False
    rf.waiting[uw] = False
    for cta, t in take.items():
        pool[cta] -= t
    rf.count[uw] = n
    for cta in sorted(woken):
        _wake(ctx, cta)
    return True


def _wname(ctx, w):
    return f"warp {w % ctx.W} of CTA {ctx._cta_str(w // ctx.W)}"


def _wake(ctx, cta):
    for h in ctx.groups:
        if h.wait is not None and h.wait[0] == "regs" and h.wait[1] == cta:
            h.wait = None


@register("setmaxnreg")
def _setmaxnreg(prog, d, ins, scope, dec):
    inc = dec.get("action") == ".inc"
    get = reader(prog, ins.operands[0], u32, scope)
    d.kind = K_CTRL
    d.sync = "aligned"
    name = f"setmaxnreg.{'inc' if inc else 'dec'}"

    def setmaxnreg(ctx, sub, g):
        n = int(np.asarray(get(ctx, sub)).reshape(-1)[0])
        if not (24 <= n <= 256 and n % 8 == 0):
            raise ctx.error(InterpreterError, f"setmaxnreg count {n} is not allowed: 24..256 in steps of 8",
                            sub, 0, d)
        rf = _state(ctx, sub, d)
        uw, _ = sub.warp_masks()
        if rf.r0 is None or _at_once(ctx, rf, uw, n, inc):
            return None                  # (no register bound: ptxas ignores setmaxnreg)
        parked = []
        for w in (int(x) for x in uw):
            cur = int(rf.count[w])
            if n < cur if inc else n > cur:
                if not ctx.sanitize:
                    continue             # the ISA leaves it undefined; unsanitized: no change
                raise ctx.error(InterpreterError,
                                f"{name} to {n} but {_wname(ctx, w)} holds {cur} registers per thread (.inc "
                                f"must not lower the count, .dec must not raise it)", sub, 0, d)
            cta = w // ctx.W
            delta = (n - cur) * 32
            if delta > int(rf.pool[cta]):
                rf.waiting[w] = True
                parked.append(w)
                continue
            rf.waiting[w] = False
            rf.pool[cta] -= delta
            rf.count[w] = n
            if delta < 0:
                _wake(ctx, cta)
        if not parked:
            return None
        out = []
        for w in parked:
            h = Group(sub.idx[(sub.idx >> 5) == w], g.pc, ctx.N)
            h.wait = ("regs", w // ctx.W, n, g.pc)
            out.append(h)
        go = ~np.isin(sub.idx >> 5, parked)
        if go.any():
            out.append(Group(sub.idx[go], g.pc + 1, ctx.N))
        if sub is not g:
            out.append(Group(g.idx[~np.isin(g.idx, sub.idx)], g.pc + 1, ctx.N))
        return out
    d.fn = setmaxnreg
