"""A group: threads of a batch that are at the same PC (see ``scheduler.context``)."""
from __future__ import annotations

import numpy as np


class Group:
    __slots__ = ("idx", "pc", "n", "full", "wait", "last", "spin", "arm", "cycle", "_wm", "_wl", "ok")

    def __init__(self, idx: np.ndarray, pc: int, N: int):
        self.idx = idx
        self.pc = pc
        self.n = len(idx)
        self.full = self.n == N
        self.wait = None
        self.last = 0
        self.spin = None          # progress.epoch when found spinning in a loop that cannot exit
        self.arm = None           # progress: its state at a backward branch, to compare at the next
        self.cycle = None         # progress: (head, tail, epoch, step) of a loop it repeats forever
        self._wm = None
        self._wl = None
        self.ok = None            # register keys found written on every slot of idx (Context._set_on)

    def subset(self, mask, N) -> "Group":
        return Group(self.idx[mask], self.pc, N)

    def minus(self, other: "Group", N) -> "Group":
        keep = ~np.isin(self.idx, other.idx, assume_unique=True)
        return Group(self.idx[keep], self.pc, N)

    def warp_masks(self):
        """(warp indices touched, lane bitmask of this group in each) - cached. ``_wl``: the
        position in the first array of each thread's warp."""
        if self._wm is None:
            w = self.idx >> 5
            lanes = np.left_shift(np.uint64(1), (self.idx & 31).astype(np.uint64))
            if len(w) and (w[1:] >= w[:-1]).all():
                # threads in slot order (as groups hold them): warps are runs, no sort needed
                new = np.empty(len(w), bool)
                new[0] = True
                np.not_equal(w[1:], w[:-1], out=new[1:])
                start = np.flatnonzero(new)
                self._wm = (w[start], np.bitwise_or.reduceat(lanes, start))
                self._wl = np.cumsum(new) - 1
                return self._wm
            uw, inv = np.unique(w, return_inverse=True)
            m = np.bincount(inv, weights=lanes.astype(np.float64), minlength=len(uw)).astype(np.uint64)
            self._wm = (uw, m)
            self._wl = inv
        return self._wm

    def __repr__(self):
        return f"Group(pc={self.pc}, n={self.n}, wait={self.wait})"


def merge(groups, N) -> Group:
    if len(groups) == 1:
        return groups[0]
    idx = np.sort(np.concatenate([g.idx for g in groups]))
    return Group(idx, groups[0].pc, N)
