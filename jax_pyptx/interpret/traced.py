"""``TracedContext``: the batch context of a launch with a timeline (``timeline``).

Its ``run_group`` is ``Context.run_group`` with the timeline's bookkeeping added: the clock
advances by the group's warp count per instruction, and each run of instructions in one
segment is handed to the timeline. Keeping it a separate loop keeps launches without a
timeline free of any per-instruction work; the two loops must schedule identically (the
tests compare step counts and results).
"""
from __future__ import annotations

import numpy as np

from . import memory as M
from . import progress
from .group import Group
from .machine import Context
from .registry import K_BRA, K_EXIT, K_NOP, K_OP


class TracedContext(Context):
    """A ``Context`` recording into ``timeline`` (an ``interpret.timeline.Timeline``)."""

    def __init__(self, prog, launch, cta_ids, sanitize=True, timeline=None):
        super().__init__(prog, launch, cta_ids, sanitize=sanitize)
        self.timeline = timeline
        timeline.begin_batch(self)

    def run_group(self, g: Group):
        tl = self.timeline
        seg_of = tl.seg_of
        warps = g.warp_masks()[0].tolist()
        nw = len(warps)
        code = self.code
        N = self.N
        pc = g.pc
        n = 0
        tn = 0
        d = None
        sub = g
        seg = seg_of[pc]
        ta = tl.t
        cnt = 0
        stops = {h.pc for h in self.groups if h.wait is None or h.wait[0] == "warp"}
        stops.discard(pc)
        try:
            while True:
                if stops and pc in stops:
                    g.pc = pc
                    self._count(n, tn)
                    return [g]
                d = code[pc]
                s = seg_of[pc]
                if s != seg:
                    tl.run(self, warps, seg, ta, cnt)
                    seg, ta, cnt = s, tl.t, 0
                tl.now = tl.t
                tl.t += nw
                cnt += 1
                self.cur = d
                if self._taint_d is not None:
                    self._taint_d = None
                if self._pt_d is not None:
                    self._pt_d = None
                sub = g
                gk = d.guard
                p = None
                if gk is not None:
                    p = self.read(gk, g)
                    c = np.count_nonzero(p)           # threads whose guard holds
                    if d.gneg:
                        c = g.n - c
                    if c == g.n:
                        p = None
                    elif not c:
                        pc += 1
                        n += 1
                        continue
                    else:
                        if d.gneg:
                            p = ~p
                        sub = Group(g.idx[p], pc, N)
                k = d.kind
                n += 1
                tn += sub.n
                if k == K_OP:
                    if d.sync is not None and not self.check_sync(d, sub, g):
                        g.pc = pc
                        tl.t -= nw
                        cnt -= 1
                        self._count(n - 1, tn - sub.n)
                        return [g]
                    d.fn(self, sub)
                    pc += 1
                    if n >= self.YIELD_AFTER:
                        self._count(n, tn)
                        n = tn = 0
                        if self._others_can_merge():
                            g.pc = pc
                            return [g]
                    continue
                if k == K_BRA:
                    if p is None:
                        back = d.target <= pc
                        pc = d.target
                        if back:
                            self.backs -= 1
                            if not self.backs or g.arm is not None:
                                self._count(n, tn)
                                n = tn = 0
                                g.pc = pc
                                progress.check(self, g, pc, d.pc)
                        if back and (n >= 64 or self.groups):
                            self._count(n, tn)
                            n = tn = 0
                            if self._others_can_merge():
                                g.pc = pc
                                return [g]
                        continue
                    self._count(n, tn)
                    taken = sub
                    taken.pc = d.target
                    rest = Group(g.idx[~p], pc + 1, N)
                    return [taken, rest]
                if k == K_NOP:
                    pc += 1
                    continue
                if k == K_EXIT:
                    self._count(n, tn)
                    n = tn = 0
                    self.exit_threads(sub)
                    if p is None:
                        return []
                    tl.run(self, warps, seg, ta, cnt)
                    ta, cnt = tl.t, 0
                    g = Group(g.idx[~p], pc + 1, N)
                    warps = g.warp_masks()[0].tolist()
                    nw = len(warps)
                    pc += 1
                    continue
                if d.sync is not None and not self.check_sync(d, sub, g):
                    g.pc = pc
                    tl.t -= nw
                    cnt -= 1
                    self._count(n - 1, tn - sub.n)
                    return [g]
                g.pc = pc
                r = d.fn(self, sub, g)
                if r is None:
                    pc += 1
                    continue
                self._count(n, tn)
                return r
        except M.MemoryFault as f:
            raise self.fault(f, sub, d) from None
        finally:
            tl.run(self, warps, seg, ta, cnt)
