"""A group: threads of a batch that are at the same PC (see ``scheduler.context``)."""
from __future__ import annotations

import numpy as np


class Group:
    __slots__ = ("idx", "pc", "n", "full", "wait", "last", "spin", "arm", "cycle", "_wm", "_wl", "_wb", "_sl", "ok",
                 "strided", "_ww", "synced", "_runs", "_f")

    def __init__(self, idx: np.ndarray, pc: int, N: int):
        self.pc = pc
        self.wait = None
        self.last = 0
        self.spin = None          # progress.epoch when found spinning in a loop that cannot exit
        self.arm = None           # progress: its state at a backward branch, to compare at the next
        self.cycle = None         # progress: (head, tail, epoch, step) of a loop it repeats forever
        self.narrow(idx, N)

    def narrow(self, idx, N):
        """The group's slots become ``idx``: what was worked out from the old ones is dropped."""
        self.idx = idx
        self.n = len(idx)
        self.full = self.n == N
        self._wm = None
        self._wl = None
        self._wb = None
        self._sl = None
        self.ok = None            # register keys found written on every slot of idx (Context._set_on)
        self.strided = None       # ``rect``'s answer, once asked (False: fancy indexing)
        self._ww = None
        self.synced = None        # the last warp-synchrony check passed (Context.check_sync)
        self._runs = 0            # ``runs``'s answer, once asked
        self._f = None            # the ``_Facts`` of idx, once looked up (``facts``)

    def facts(self) -> "_Facts":
        """What the group's slots are, worked out once for every group holding the same slots,
        in any batch (``_Facts``)."""
        f = self._f
        if f is None:
            f = self._f = _facts_of(self.idx)
        return f

    def runs(self):
        """``[(p, q, s)]``: the group's slots ``idx[p:q]`` are ``s, s + 1, ...``, a run of
        consecutive slots each; None where there are 16 runs or more (then fancy indexing is no
        slower). Cached."""
        r = self._runs
        if r == 0:
            f = self.facts()
            r = f.runs
            if r == 0:
                idx = self.idx
                cut = np.flatnonzero(np.diff(idx) != 1) + 1
                r = None
                if len(cut) < 16:
                    at = [0, *cut.tolist(), len(idx)]
                    r = list(zip(at, at[1:], idx[at[:-1]].tolist()))
                f.runs = r
            self._runs = r
        return r

    def subset(self, mask, N) -> "Group":
        return Group(self.idx[mask], self.pc, N)

    def minus(self, other: "Group", N) -> "Group":
        keep = ~np.isin(self.idx, other.idx, assume_unique=True)
        return Group(self.idx[keep], self.pc, N)

    def warp_masks(self):
        """(warp indices touched, lane bitmask of this group in each) - cached. ``_wl``: the
        position in the first array of each thread's warp."""
        if self._wm is None:
            f = self.facts()
            if f.wm is None:
                f.wm, f.wl = _warp_masks(self.idx)
            self._wm, self._wl = f.wm, f.wl
        return self._wm

    def whole_warps(self) -> bool:
        """Whether the group is whole warps in slot order: its ``idx`` is rows of the 32 slots
        of a warp, lane 0 first. Cached."""
        if self._ww is None:
            f = self.facts()
            if f.ww is None:
                s = self.idx
                w = s[::32]
                f.ww = bool(self.n % 32 == 0 and not (w % 32).any() and
                            (s.reshape(-1, 32) == w[:, None] + np.arange(32)).all())
            self._ww = f.ww
        return self._ww

    def slot_info(self, ctx):
        """(batch warp, lane, warp within its CTA) of each thread (``idx >> 5``, ``ctx.lane``,
        ``ctx.warp_in_cta``, which depend on the CTA's slots ``S`` only): cached, read-only."""
        if self._sl is None:
            more = self.facts().more
            key = ("slot_info", ctx.S)
            sl = more.get(key)
            if sl is None:
                sl = more[key] = (self.idx >> 5, ctx.lane[self.idx], ctx.warp_in_cta[self.idx])
            self._sl = sl
        return self._sl

    def ctas(self, ctx):
        """The batch CTAs the group's threads belong to, ascending (``np.unique`` of their
        ``ctx.slot_cta``, which depends on the CTA's slots ``S`` only): cached, read-only."""
        more = self.facts().more
        key = ("ctas", ctx.S)
        c = more.get(key)
        if c is None:
            c = more[key] = np.unique(ctx.slot_cta[self.idx])
            c.flags.writeable = False
        return c

    def runs_in_one_cta(self, ctx) -> bool:
        """Whether each run of consecutive slots (``runs``, which must not be None) lies in one
        CTA (of ``ctx.S`` slots): cached."""
        more = self.facts().more
        key = ("runs_in_one_cta", ctx.S)
        r = more.get(key)
        if r is None:
            S = ctx.S
            r = more[key] = all(s // S == (s + q - p - 1) // S for p, q, s in self.runs())
        return r

    def warp_blocks(self, W: int):
        """(blocks, warps a block, [each one's warp within its CTA]) when the group is whole
        warps, in slot order one sequence of warps of a CTA repeated (every CTA the same ones,
        the usual case): its threads are then those blocks by those warps by 32 lanes. None
        otherwise; cached. ``W``: the warps of a CTA."""
        if self._wb is None:
            more = self.facts().more
            wb = more.get(("warp_blocks", W))
            if wb is None:
                wb = False
                uw, m = self.warp_masks()
                if len(uw) * 32 == self.n and (m == _ALL_LANES).all():
                    local = uw % W
                    nw = int(np.searchsorted(uw, (int(uw[0]) // W + 1) * W))
                    if len(uw) % nw == 0 and (local.reshape(-1, nw) == local[:nw]).all():
                        wb = (len(uw) // nw, nw, local[:nw].tolist())
                more[("warp_blocks", W)] = wb
            self._wb = wb
        return self._wb or None

    def rect(self, S: int, nctas: int):
        """(CTAs, S, first, end) when the group is slots ``[first, end)`` of each of the
        ``nctas`` CTAs of ``S`` slots (a warp-specialized role: a register of the batch, viewed
        (CTAs, S), holds the group's values as a strided slice); else False. Cached."""
        r = self.strided
        if r is None:
            n, idx = self.n, self.idx
            r = False
            if nctas > 1 and n >= _RECT_MIN and n % nctas == 0:
                more = self.facts().more
                r = more.get(("rect", S, nctas))
                if r is None:
                    r = False
                    w = n // nctas
                    lo = int(idx[0])
                    v = idx.reshape(nctas, w)
                    if lo + w <= S and (v[:, 0] == np.arange(nctas) * S + lo).all() and \
                            (np.diff(v, axis=1) == 1).all():
                        r = (nctas, S, lo, lo + w)
                    more[("rect", S, nctas)] = r
            self.strided = r
        return r

    def __repr__(self):
        return f"Group(pc={self.pc}, n={self.n}, wait={self.wait})"


_ALL_LANES = np.uint64(0xFFFFFFFF)
_RECT_MIN = 2048              # (smaller groups: a gather costs no more than a strided copy)


def _warp_masks(idx):
    """``Group.warp_masks``'s answer and the warp position of each thread (``_wl``)."""
    w = idx >> 5
    lanes = np.left_shift(np.uint64(1), (idx & 31).astype(np.uint64))
    if len(w) and (w[1:] >= w[:-1]).all():
        # threads in slot order (as groups hold them): warps are runs, no sort needed
        new = np.empty(len(w), bool)
        new[0] = True
        np.not_equal(w[1:], w[:-1], out=new[1:])
        start = np.flatnonzero(new)
        return (w[start], np.bitwise_or.reduceat(lanes, start)), np.cumsum(new) - 1
    uw, inv = np.unique(w, return_inverse=True)
    m = np.bincount(inv, weights=lanes.astype(np.float64), minlength=len(uw)).astype(np.uint64)
    return (uw, m), inv


class _Facts:
    """What one set of slots is (its warps, runs, rectangles...), worked out once for every
    group that holds it: a warp-specialized role's group is made anew at every divergence and
    every launch. Each answer only depends on the slots and the parameters in its key
    (``more``: the warps of a CTA, its slots, the CTAs of the batch). Read-only."""

    __slots__ = ("wm", "wl", "ww", "runs", "more")

    def __init__(self):
        self.wm = self.wl = self.ww = None
        self.runs = 0
        self.more = {}


#: (n, first, last slot) -> [(the slots' content, their ``_Facts``)]: a few slot sets per key,
#: looked up by content (``_facts_of``, ``slots_content``)
_FACTS: dict = {}
_FACTS_MAX = 4096


def _facts_of(idx) -> _Facts:
    """The ``_Facts`` of the slot set ``idx``."""
    return by_slots(_FACTS, idx, _Facts, _FACTS_MAX)


def by_slots(table, idx, make, limit=None):
    """The value ``table`` keeps for the slot set ``idx`` (``(n, first, last slot) -> [(the
    slots' content, value)]``: a few sets a key, matched by content, ``slots_content``), made by
    ``make()`` and kept (up to 8 sets a key) where it has none; ``limit``: the most keys, the
    table emptied before one more."""
    n = len(idx)
    key = (n, int(idx[0]), int(idx[-1])) if n else (0, 0, 0)
    same = table.get(key)
    if same is None:
        if limit is not None and len(table) >= limit:
            table.clear()
        same = table[key] = []
    content = slots_content(idx)
    for other, v in same:
        if other == content:
            return v
    v = make()
    if len(same) < 8:
        same.append((content, v))
    return v


def slots_content(idx) -> bytes:
    """A slot set's slots (an integer array) as the bytes of their int64s: two sets hold the
    same slots in the same order exactly when these are equal (one ``memcmp``, where
    ``np.array_equal`` costs four times as much)."""
    return idx.astype(np.int64, copy=False).tobytes()


def gather(a, g: Group, S: int, nctas: int):
    """``a[g.idx]`` (a new array) of a register ``a`` of the batch (``Group.rect``)."""
    r = g.strided if g.strided is not None else g.rect(S, nctas)
    if not r or a.ndim != 1:
        return a[g.idx]
    return a.reshape(r[0], r[1])[:, r[2]:r[3]].reshape(-1)       # (strided: a copy)


def scatter(a, g: Group, v, S: int, nctas: int):
    """``a[g.idx] = v`` (``Group.rect``)."""
    r = g.strided if g.strided is not None else g.rect(S, nctas)
    if r and a.ndim == 1 and np.ndim(v) == 1:
        a.reshape(r[0], r[1])[:, r[2]:r[3]] = v.reshape(r[0], -1)
    else:
        a[g.idx] = v


def merge(groups, N) -> Group:
    """One group of the slots of ``groups`` (at one PC), in increasing order. Each group's slots
    are in order already, so a stable sort (which merges runs) gives them: a tenth of a
    quicksort's cost for a warp-specialized batch, whose roles' slots interleave by CTA."""
    if len(groups) == 1:
        return groups[0]
    return Group(np.sort(np.concatenate([g.idx for g in groups]), kind="stable"), groups[0].pc, N)

