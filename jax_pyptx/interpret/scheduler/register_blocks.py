"""``Context.write_rows``: the registers of one block written at once (a wgmma accumulator its
``wait_group`` delivers, ``machine.asyncregs``), with what ``Context.write`` does for each:
its hooks, the ``wgmma.fence`` bookkeeping, definedness and provenance, the partial-write
masks; the new arrays are rows of one array filled by a slice per run of consecutive slots."""
from __future__ import annotations

import numpy as np


def write_rows(self, keys, g, rows):   # self: the Context
    """``write(keys[j], g, rows[j])`` for every j (a register block delivered at once: a
    wgmma accumulator at its wait_group): the same checks, the new arrays made by one scatter."""
    olds = [self.regs.get(k) for k in keys]
    if g.full or any(a is not None and a.dtype != rows.dtype for a in olds):
        for k, v in zip(keys, np.ascontiguousarray(rows)):
            self.write(k, g, v)
        return
    if all(a is not None for a in olds):
        new = np.stack(olds)
    else:
        new = np.zeros((len(keys), self.N), rows.dtype)
        for j, a in enumerate(olds):
            if a is not None:
                new[j] = a
    cut = np.flatnonzero(np.diff(g.idx) != 1) + 1       # runs of consecutive slots: slices
    if len(cut) < 16:
        at = [0, *cut.tolist(), g.n]
        for p, q, s in zip(at, at[1:], g.idx[at[:-1]].tolist()):
            new[:, s:s + q - p] = rows[:, p:q]
    else:
        new[:, g.idx] = rows
    known = self._set_on(g) if self.sanitize else None
    fresh = sum(a is None for a in olds)
    first = self._first_mask(g, known) if known is not None and fresh else None   # shared, read-only
    if self.wgfence is not None:
        self.wgfence.wrote_all(self, keys, g)
    for j, key in enumerate(keys):
        if self.rhooks and key in self.rhooks:
            self.rhooks[key](self, key, g, True)
        if self._taint_d is not None or self.undef:
            self._undef_write(key, g)
        if self.ptag and (self._pt_d is not None or key in self.ptag):
            self._pt_write(key, g)
        if olds[j] is None:
            if known is not None:
                self.pinit[key] = known[key] = first
        elif known is not None and key not in known:
            self._mask_gain(key, g, known)
        self.regs[key] = new[j]
