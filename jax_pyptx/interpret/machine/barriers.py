"""Synchronization state of a batch: CTA barriers (bar/barrier with ids and thread counts,
bar.red) and the deadlock report listing every parked warp and what it waits on (cluster
barriers: ``cluster``). Mixed into ``scheduler.context.Context``.

Exited threads and barriers (PTX ISA, ``barrier`` and ``exit``): a barrier with no thread
count waits for the non-exited threads of the CTA, and a thread that exits releases a barrier
it was the last one holding up; so a plain ``barrier.sync a`` after some warps exited is
defined. But ``.aligned`` (``bar.sync``, ``bar.red``, ``barrier.sync.aligned``) promises that
*every* thread of the CTA executes that barrier instruction: in conditional code it is only
allowed when all threads of the CTA take the same path. A warp that exits without reaching an
aligned barrier with no thread count that other warps of its CTA wait at (or reach later)
breaks that promise, and on a GPU such a kernel can hang or let the waiting warps through
early; the sanitizer reports it (``_exited_at_barrier``) naming the barrier, the warps waiting
at it and where each warp that skipped it exited.
"""
from __future__ import annotations

import numpy as np

from ...errors import DeadlockError, DivergenceError
from .group import Group
from .mbarrier import describe as describe_mbarrier_wait


class BarState:
    __slots__ = ("arrived", "expected", "red", "red_kind", "red_writes", "arrivers", "aligned_pc")

    def __init__(self):
        self.aligned_pc = None    # the .aligned no-count barrier instruction the waiters are at
        self.arrived = 0
        self.expected = None
        self.red = None
        self.red_kind = None
        self.red_writes = []
        self.arrivers = []


class SyncMixin:
    # ------------------------------------------------------------------ barriers
    def bar_arrive(self, g: Group, bar, count, wait: bool, red=None, aligned=False):
        """Threads of ``g`` arrive at barrier(s) ``bar`` (int or per-thread array). Returns None
        when every arriving thread may continue, else the list of groups to hand back.
        ``aligned``: an ``.aligned`` barrier instruction (see the module doc on exits)."""
        uniform_bar = np.ndim(bar) == 0
        strict = aligned and count is None and self.sanitize
        if strict and self.exited:
            ctas = g.ctas(self)
            short = ctas[self.live_count[ctas] < self.T]
            if len(short):
                c = int(short[0])
                b = int(np.broadcast_to(np.asarray(bar), (g.n,))[int(np.argmax(self.slot_cta[g.idx] == c))])
                raise self._exited_at_barrier(c, b, self.cur, g)
        if (uniform_bar and count is None and red is None and not self.bar_pending
                and g.n == self.nlive):
            if self.shared.race is not None:
                self.shared.race.advance_all()
            return None      # the whole batch arrives together: nothing to wait for
        cta = self.slot_cta[g.idx]
        key = cta * 16 + (bar if type(bar) is int else np.asarray(bar, np.int64))
        keys, sels, cnts = _barrier_groups(key)
        counts = None if count is None or np.ndim(count) == 0 else np.asarray(count, np.int64)
        if counts is None and count is not None and red is None and self._complete_at_once(keys, cnts, int(count)):
            return None
        done_keys = set()
        for j, k in enumerate(keys):
            c, b = k >> 4, k & 15
            st = self.bars.get((c, b))
            if st is None:
                st = self.bars[(c, b)] = BarState()
            if st.arrived == 0:
                self.bar_pending += 1
                st.aligned_pc = self.cur.pc if strict else None
            sel = sels[j]
            st.arrived += cnts[j]
            if count is not None:
                st.expected = int(count) if counts is None else int(counts[sel][0])
            if red is not None:
                kind, vals, put = red
                v = vals[sel]
                if st.red is None:
                    st.red_kind = kind
                    st.red = 0 if kind == "popc" else (True if kind == "and" else False)
                if kind == "popc":
                    st.red += int(v.sum())
                elif kind == "and":
                    st.red = st.red and bool(v.all())
                else:
                    st.red = st.red or bool(v.any())
                st.red_writes.append((g.idx[sel], put))
            exp = st.expected if st.expected is not None else int(self.live_count[c])
            if st.arrived > exp and self.sanitize:
                raise self.error(DivergenceError,
                                 f"barrier {b} of CTA {self._cta_str(c)} expects {exp} threads but "
                                 f"{st.arrived} arrived", g)
            if st.arrived >= exp:
                self._complete_bar(c, b, st)
                done_keys.add(j)
        if not wait or len(done_keys) == len(keys):
            return None
        go = np.zeros(g.n, bool)
        for j in done_keys:
            go[sels[j]] = True
        stay = g.subset(~go, self.N)
        stay.pc = g.pc + 1
        stay.wait = ("bar", int(key[~go][0]) & 15,
                     count is not None and int(count if counts is None else counts[0]), g.pc)
        out = [stay]
        if go.any():
            rel = g.subset(go, self.N)
            rel.pc = g.pc + 1
            out.append(rel)
        return out

    def _complete_at_once(self, keys, cnts, count: int) -> bool:
        """Where every barrier ``keys`` (``cta * 16 + barrier``) the threads arrive at has none
        arrived yet and gets ``count`` of them now, ``cnts`` (a warpgroup's named barrier with
        its thread count, each warpgroup its own): each completes as it would key by key, with
        no waiter to release (a group parked at a barrier has arrived at it) and no state left
        behind. True, done; else False, nothing done."""
        bars = self.bars
        for k, n in zip(keys, cnts):
            st = bars.get((k >> 4, k & 15))
            if n != count or (st is not None and st.arrived):
                return False
        race = self.shared.race
        if race is not None:
            if len(keys) == 1:
                race.advance([keys[0] >> 4])
            else:
                race.advance_each([k >> 4 for k in keys])    # (as key by key, at once)
        return True

    def _exited_at_barrier(self, c, b, d, g=None):
        """The DivergenceError for threads of CTA ``c`` that exited without reaching the
        ``.aligned`` no-count barrier ``b`` (instruction ``d``) that others wait at."""
        base = c * self.S
        slots = np.arange(base, base + self.S)
        gone = slots[self.valid[slots] & ~self.live[slots]]
        exits = []
        exit_pc = self.exit_pc
        for w in np.unique(gone >> 5):
            mine = gone[(gone >> 5) == w]
            for pc in np.unique(exit_pc[mine]):
                lanes = mine[exit_pc[mine] == pc] & 31
                m = int(np.bitwise_or.reduce(np.left_shift(1, lanes.astype(np.int64))))
                e = self.code[int(pc)]
                exits.append(f"warp {int(w) % self.W} lanes {_lanes(m)} exited at {e.where_line()} `{e.text}`")
        waiting = [h for h in self.groups if h.wait is not None and h.wait[0] == "bar" and h.wait[1] == b]
        idx = [h.idx[self.slot_cta[h.idx] == c] for h in waiting]
        if g is not None:
            idx.append(g.idx[self.slot_cta[g.idx] == c])
        idx = np.unique(np.concatenate(idx)) if idx else np.zeros(0, np.int64)
        who = Group(idx, d.pc, self.N)
        uw, m = who.warp_masks()
        waits = ", ".join(f"warp {int(w) % self.W} lanes {_lanes(int(mm))}" for w, mm in zip(uw, m))
        return self.error(
            DivergenceError,
            f"threads exited without reaching an .aligned barrier that other threads of CTA "
            f"{self._cta_str(c)} wait at: barrier {b} has no thread count, so every thread of the "
            f"CTA must execute this instruction, but {'; '.join(exits)}, while {waits} "
            f"{'wait' if len(uw) > 1 else 'waits'} at it (on a GPU this hangs or lets the waiting "
            f"warps through early: let every thread reach the barrier before exiting, or give "
            f"the barrier the thread count of the warps that reach it)", who, 0, d)

    def _cta_str(self, c):
        return "({},{},{})".format(*self.thread_coords(c * self.S)[1])

    def _complete_bar(self, c, b, st: BarState):
        """Barrier ``b`` of CTA ``c`` completes: its threads parked at it are released."""
        if self.shared.race is not None:
            self.shared.race.advance([c])
        st.arrived = 0
        st.expected = None
        self.bar_pending -= 1
        if st.red is not None:
            val = st.red
            for idx, put in st.red_writes:
                put(self, Group(idx, 0, self.N), val)
            st.red = None
            st.red_writes = []
        # release parked threads of this CTA waiting on b
        new = []
        for g in self.groups:
            if g.wait is not None and g.wait[0] == "bar" and g.wait[1] == b:
                inc = self.slot_cta[g.idx] == c
                if inc.all():
                    g.wait = None
                elif inc.any():
                    rel = g.subset(inc, self.N)
                    rel.pc = g.pc
                    stay = g.subset(~inc, self.N)
                    stay.pc, stay.wait = g.pc, g.wait
                    g.narrow(stay.idx, self.N)
                    new.append(rel)
        self.groups.extend(new)

    # ------------------------------------------------------------------ deadlock
    def deadlock(self):
        lines = []
        for g in sorted(self.groups, key=lambda h: (h.idx[0], h.pc)):
            pc = g.wait[3] if g.wait and g.wait[0] == "bar" else g.pc
            if g.wait and g.wait[0] == "mbar":
                pc = g.wait[5]
            d = self.code[min(pc, len(self.code) - 1)]
            uw, m = g.warp_masks()
            for w, mm in zip(uw, m):
                c = int(w) * 32 // self.S
                wi = int(w) % self.W
                head = (f"  CTA {self._cta_str(c)} warp {wi} lanes {_lanes(int(mm))}: at "
                        f"{d.where_line()} `{d.text}`")
                lines.append(head + " " + self._waits_on(g, c, d, int(w)))
        kinds = {g.wait[0] for g in self.groups if g.wait}
        if kinds == {"warp"}:
            title = ("divergent warp-synchronous instruction: a .sync/.aligned instruction needs the "
                     "other lanes of its warp (its membermask, or the whole warp for .aligned), but they "
                     "are at another PC or have exited")
            cls = DivergenceError
        else:
            title = "deadlock: every warp is parked and none can make progress"
            cls = DeadlockError
        # several warps at several places: each line names its own instruction and line
        return cls(title + "\n" + "\n".join(lines))

    def _waits_on(self, g, c, d, w):
        kind = g.wait[0]
        if kind == "bar":
            b = g.wait[1]
            st = self.bars.get((c, b))
            exp = (st.expected if st is not None and st.expected is not None else
                   (g.wait[2] or int(self.live_count[c])))
            arrived = st.arrived if st is not None else 0
            return f"waits on barrier {b} ({arrived} of {exp} threads arrived)"
        if kind == "warp":
            miss = dict(g.wait[2]).get(w, 0)
            where = []
            for h in self.groups:
                if h is g:
                    continue
                uw, m = h.warp_masks()
                for ww, mm in zip(uw, m):
                    if int(ww) == w and int(mm) & miss:
                        where.append(f"lanes {_lanes(int(mm) & miss)} parked at {self.code[h.pc].where_line()} "
                                     f"`{self.code[h.pc].text}`")
            gone = miss & ~int(self.live_mask[w]) if w < len(self.live_mask) else 0
            if gone:
                where.append(f"lanes {_lanes(gone)} exited")
            rest = "; ".join(where) or "they never arrive"
            return f"waits for lanes {_lanes(miss)} of its warp ({rest})"
        if kind == "mbar":
            return describe_mbarrier_wait(self, g)
        if kind == "cluster":
            return self._cluster_waits_on(g.wait[1])
        if kind == "regs":
            return self.regfile.describe_wait(self, g)
        return f"waits ({kind})"


def _lanes(mask: int) -> str:
    """'0-15,20' for a lane bitmask."""
    out = []
    i = 0
    while i < 32:
        if mask >> i & 1:
            j = i
            while j + 1 < 32 and mask >> (j + 1) & 1:
                j += 1
            out.append(f"{i}-{j}" if j > i else f"{i}")
            i = j + 1
        else:
            i += 1
    return ",".join(out) or "none"


def _barrier_groups(key):
    """The distinct barrier keys (``cta * 16 + barrier``) of the arriving threads in ascending
    order, the threads naming each (a slice of them where each key is one run of consecutive
    threads: a CTA's threads, a warpgroup's named barrier; else a mask) and their numbers."""
    n = len(key)
    cut = np.flatnonzero(key[1:] != key[:-1]) + 1
    if len(cut) < 64:
        at = [0, *cut.tolist(), n]
        runs = key[at[:-1]].tolist()
        if len(set(runs)) == len(runs):
            order = sorted(range(len(runs)), key=runs.__getitem__)
            return ([runs[j] for j in order], [slice(at[j], at[j + 1]) for j in order],
                    [at[j + 1] - at[j] for j in order])
    keys, inv, cnts = np.unique(key, return_inverse=True, return_counts=True)
    return keys.tolist(), [inv == j for j in range(len(keys))], cnts.tolist()
