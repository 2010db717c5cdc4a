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
* ``.sync.aligned``: every thread of the warp executes it together, and the same
  ``setmaxnreg`` (same instruction, same count) must be executed by every warp of the warpgroup
  (4 consecutive warps of the CTA), with all of them done before any executes the next one;
  a warpgroup whose warps disagree, run ahead, or leave one out by the end of the kernel is
  reported with each warp's line. ``.inc`` must not lower the count, ``.dec`` must not raise it,
  and the count is 24..256 in steps of 8.
"""
from __future__ import annotations

import numpy as np

from ..errors import DivergenceError, InterpreterError
from ..types import u32
from .cluster import directive_ints
from .group import Group
from .operands import reader
from .registry import K_CTRL, register

REGISTER_FILE = 65536           # 32-bit registers per SM (sm_90, sm_100)
WARPGROUP = 4                   # warps


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

    __slots__ = ("r0", "count", "pool", "log", "waiting")

    def __init__(self, ctx):
        self.r0 = initial_count(ctx.prog, ctx.T)
        nw = ctx.N // 32
        self.count = np.full(nw, self.r0 or 0, np.int64)      # per-thread count of each batch warp
        self.pool = np.zeros(ctx.nctas, np.int64)              # free registers of each CTA
        self.log = [[] for _ in range(nw)]                     # per warp: [(Decoded, count)]
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


def _wg_warps(ctx, w):
    """Batch warp indices of the warpgroup of batch warp ``w`` (the warps that exist)."""
    first = (w // ctx.W) * ctx.W
    g0 = first + ((w - first) // WARPGROUP) * WARPGROUP
    return list(range(g0, min(g0 + WARPGROUP, first + ctx.W)))


def _wname(ctx, w):
    return f"warp {w % ctx.W} of CTA {ctx._cta_str(w // ctx.W)}"


def _agree(ctx, rf, w, d, n, sub):
    """Warp ``w`` executes ``setmaxnreg`` ``d`` with count ``n`` for the k-th time: the other
    warps of its warpgroup executed the same k-th one, or have not got there yet but did the
    previous one."""
    k = len(rf.log[w])
    for x in _wg_warps(ctx, w):
        if x == w:
            continue
        lx = rf.log[x]
        if len(lx) > k and (lx[k][0] is not d or lx[k][1] != n):
            od, on = lx[k]
            raise ctx.error(DivergenceError,
                            f"warps of a warpgroup execute different setmaxnreg instructions: {_wname(ctx, x)} "
                            f"executed `{od.text}` (count {on}) at {od.where_line()}; the same setmaxnreg must be "
                            f"executed by every warp of the warpgroup", sub, 0, d)
        if len(lx) < k:
            pd = rf.log[w][k - 1][0]
            raise ctx.error(DivergenceError,
                            f"{_wname(ctx, w)} executes another setmaxnreg before {_wname(ctx, x)} executed "
                            f"`{pd.text}` at {pd.where_line()}: the warps of a warpgroup must synchronize between "
                            f"two setmaxnreg", sub, 0, d)
    rf.log[w].append((d, n))


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
        parked = []
        for w in (int(x) for x in uw):
            if not rf.waiting[w]:
                _agree(ctx, rf, w, d, n, sub)
            if rf.r0 is None:
                continue                 # no register bound: ptxas ignores setmaxnreg
            cur = int(rf.count[w])
            if n < cur if inc else n > cur:
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


def check_at_exit(ctx):
    """At the end of a batch: every warp of a warpgroup executed the same setmaxnreg
    instructions (a warp that exited early left one out)."""
    rf = ctx.regfile
    if rf is None or not ctx.sanitize:
        return
    for w in range(ctx.N // 32):
        if w % ctx.W % WARPGROUP:
            continue
        ws = _wg_warps(ctx, w)
        longest = max(ws, key=lambda x: len(rf.log[x]))
        for x in ws:
            if len(rf.log[x]) < len(rf.log[longest]):
                d, n = rf.log[longest][len(rf.log[x])]
                did = ", ".join(str(y % ctx.W) for y in ws if len(rf.log[y]) > len(rf.log[x]))
                raise DivergenceError(
                    f"{_wname(ctx, x)} never executed `{d.text}` at {d.where_line()} that warp{'s' if ',' in did else ''} "
                    f"{did} of its warpgroup executed: the same setmaxnreg must be executed by every warp of the "
                    f"warpgroup", loc=getattr(d.ins, "loc", None))
