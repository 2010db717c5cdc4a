"""Registers of a block at once: ``Context.write_rows`` writes them (a wgmma accumulator its
``wait_group`` delivers, ``machine.asyncregs``), with what ``Context.write`` does for each:
its hooks, the ``wgmma.fence`` bookkeeping, definedness and provenance, the partial-write
masks; the values scattered in one native pass (from rows, or from the block's tile) into
each register's old array where nothing else holds it, else into a copy (``targets``).
``Context.plain`` says when reading registers is only a gather, which a caller may then do
its own way (a segment's native block, a wgmma accumulator read as a tile)."""
from __future__ import annotations

from sys import getrefcount

import numpy as np

from ..state.arith import ARITH

#: what ``getrefcount(a)`` reads in the caller of ``sole`` for an old register array ``a`` that
#: only the registers' dict holds: in ``targets`` the dict, the list of old arrays, its local
#: name and the call's argument; in ``Context.write`` the dict, its local name, the argument
SOLE_IN_LIST = 4
SOLE_IN_WRITE = 3


def sole(a, refs: int) -> bool:
    """Whether a register's old array ``a`` may take a write in place: it owns its memory (so
    every view of it holds a reference to it), is writable, and ``refs`` references are all
    that the caller's ``getrefcount`` would find (``SOLE_IN_*``: the registers' dict's and its own).
    A value read earlier is then a copy or holds a reference, so nothing that can still see
    the old values sees them change."""
    return a.base is None and a.flags.writeable and getrefcount(a) == refs + 1     # (+1: ``a`` here)


def plain(self, keys, g) -> bool:      # self: the Context
    """Whether ``read(k, g)`` of every register of ``keys`` (any iterable; a frozenset is
    used as it is) would only gather its values: each is written on every thread of ``g``
    (the sanitizer's masks), with no hook, no undefined value and no pointer tag. The tests
    are set operations on the dicts' keys; only registers not yet known written on ``g``'s
    slots (``_set_on``) look at their masks, and a frozenset of keys found written there is
    remembered whole (keys of ``_set_on``'s dict are never dropped: the next ask is one look-up)."""
    ks = keys if type(keys) is frozenset else frozenset(keys)
    regs, rh, undef, ptag = self.regs, self.rhooks, self.undef, self.ptag
    if not regs.keys() >= ks or (rh and not rh.keys().isdisjoint(ks)) or \
            (undef and not undef.keys().isdisjoint(ks)) or (ptag and not ptag.keys().isdisjoint(ks)):
        return False
    if self.pinit:
        known = g.ok if g.ok is not None else self._set_on(g)
        if ks in known:             # (every one of them found written before: it stays so)
            return True
        # (a frozenset's ``difference`` with the dict itself looks each key up in C, with its
        # cached hash; ``ks - known.keys()`` made a set of every known key, hundreds by then)
        todo = ks.difference(known)
        if todo:
            pinit = self.pinit
            for k in todo:
                m = pinit.get(k)
                if m is not None and not (m if g.full else m[g.idx]).all():
                    return False
                known[k] = True
        if len(ks) > 8:             # (a segment's sources, a run's operands: asked again)
            known[ks] = True
    return True


def write_rows(self, keys, g, rows, tile=None):   # self: the Context
    """``write(keys[j], g, rows[j])`` for every j (a register block delivered at once: a
    wgmma accumulator at its wait_group): the same checks, in ``write``'s order (the hooks, which
    may report, before any value lands), the values written by one scatter, and the
    per-register bookkeeping only for the registers it concerns.
    ``tile``: instead of ``rows``, the block's tile (``machine.asyncregs.TileRows``), which
    the native core scatters into the new arrays."""
    regs = self.regs
    olds = list(map(regs.get, keys))
    dtype = rows.dtype if tile is None else tile.dtype
    if g.full or not _all_of(olds, dtype, None):
        for k, v in zip(keys, np.ascontiguousarray(rows if tile is None else tile.rows())):
            self.write(k, g, v)
        return
    rh = self.rhooks             # (before the values land, which may be in the old arrays)
    if rh and not rh.keys().isdisjoint(keys):
        for key in keys:
            if key in rh:
                rh[key](self, key, g, True)
    if self.wgfence is not None:
        self.wgfence.wrote_all(self, keys, g)
    undef = self.undef
    if self._taint_d is not None:
        for key in keys:
            self._undef_write(key, g)
    elif undef and not undef.keys().isdisjoint(keys):     # (only a key with undefined bits changes)
        for key in keys:
            if key in undef:
                self._undef_write(key, g)
    ptag = self.ptag
    if ptag and (self._pt_d is not None or not ptag.keys().isdisjoint(keys)):
        for key in keys:
            if self._pt_d is not None or key in ptag:
                self._pt_write(key, g)
    new = targets(olds, self.N, dtype)
    if tile is None or not tile.into(new, g.idx):
        _scatter(new, g, rows if tile is None else tile.rows())
    if self.sanitize:
        _masks(self, keys, olds, g)
    regs.update(zip(keys, new))


def targets(olds, N, dtype):
    """The arrays a block's new values are written into, one per register (``olds``, a list of
    its old arrays, None: not written yet): the old array itself where it may take the write in
    place (``sole``), else a copy of it; zeros for one not written yet, an array of its own (so
    that its next write lands in place too)."""
    # ``sole(a, SOLE_IN_LIST)`` inline: the comprehension's name ``a`` is the local one
    return [a if a is not None and a.base is None and getrefcount(a) == SOLE_IN_LIST and a.flags.writeable
            else np.zeros(N, dtype) if a is None else a.copy() for a in olds]


def _targets_of(olds, N, dtype):
    """``targets`` of ``olds`` where every old array is of ``dtype`` and shape ``(N,)``
    (``_all_of``), in the same one pass; None (nothing changed) where one is not."""
    out = []
    put = out.append
    for a in olds:          # (``a``'s references in a loop: those of ``targets``' comprehension)
        if a is None:
            put(np.zeros(N, dtype))
        elif (a.dtype is not dtype and a.dtype != dtype) or a.shape != (N,):
            return None
        elif a.base is None and getrefcount(a) == SOLE_IN_LIST and a.flags.writeable:
            put(a)
        else:
            put(a.copy())
    return out


def _all_of(olds, dtype, shape) -> bool:
    """Whether every old array of ``olds`` (None: not written yet) is of ``dtype`` (and, where
    given, of ``shape``). (One loop, a dtype matched by identity first: sets of dtypes hash
    each one, 16 us for a block of 64 registers against 7.)"""
    for a in olds:
        if a is not None and ((a.dtype is not dtype and a.dtype != dtype) or
                              (shape is not None and a.shape != shape)):
            return False
    return True


def _masks(self, keys, olds, g):   # self: the Context
    """The partial-write masks of the registers ``keys`` (old arrays ``olds``, None: not written
    yet) that ``g`` writes, as ``write`` sets them."""
    known = self._set_on(g)
    if type(keys) is tuple and keys in known:      # (every one written there before: it stays so)
        return
    fresh = [key for key, a in zip(keys, olds) if a is None]
    if fresh:
        first = self._first_mask(g, known)          # shared, read-only
        marks = dict.fromkeys(fresh, first)
        self.pinit.update(marks)
        known.update(marks)
    for key in [k for k in keys if k not in known]:     # (old arrays: fresh ones are known now)
        self._mask_gain(key, g, known)
    if type(keys) is tuple and len(keys) > 8:       # (a block's registers: written again as one)
        known[keys] = True


def write_blocks(self, finals, g, blocks, keys=None) -> bool:   # self: the Context
    """``write(k, g, v)`` for every ``(k, d)`` of ``finals`` (a segment's results, each written
    as its instruction ``d``; ``keys``: their keys, where the caller keeps them), whose values
    are the rows of ``blocks`` (``(keys, (len(keys), g.n) array)`` per dtype,
    ``native.Block.run``): the old arrays copied at once and the rows scattered at once a
    block, with what ``write`` does for each register only where it applies (the
    ``wgmma.fence`` bookkeeping, the partial-write masks). False, having done nothing, for a
    full group, rows that are not the finals' (as many), or where a register needs ``write``
    itself: a hook, undefined bits, a pointer tag, an array of another dtype."""
    if not finals and not blocks:
        return True
    if keys is None:
        keys = tuple(k for k, _ in finals)
    rh, undef, ptag = self.rhooks, self.undef, self.ptag
    if sum(len(ks) for ks, _ in blocks) != len(keys) or g.full or self._taint_d is not None or self._pt_d is not None \
            or (rh and not rh.keys().isdisjoint(keys)) or (undef and not undef.keys().isdisjoint(keys)) \
            or (ptag and not ptag.keys().isdisjoint(keys)):
        return False
    regs, N = self.regs, self.N
    olds, news = [], []
    for ks, rows in blocks:     # (nothing changes before every block passes)
        old = list(map(regs.get, ks))
        new = _targets_of(old, N, rows.dtype)
        if new is None:
            return False
        olds.append(old)
        news.append(new)
    wf = self.wgfence
    if wf is not None and not wf.keys.isdisjoint(keys):
        wf.wrote_each(finals, g)
    for (ks, rows), old, new in zip(blocks, olds, news):
        if self.sanitize:
            _masks(self, ks, old, g)
        _scatter(new, g, rows)
        regs.update(zip(ks, new))
    self.cur = finals[-1][1]
    return True


def _scatter(new, g, rows):
    """``new[j][g.idx] = rows[j]`` for each array of ``new``: in one native pass, else a slice
    per run of consecutive slots where there are a few (``Group.runs``)."""
    if ARITH is not None:
        try:
            ARITH.rows_to_regs(np.ascontiguousarray(rows), np.ascontiguousarray(g.idx, np.int64), new)
            return
        except (TypeError, ValueError):     # (its checks come before it writes anything)
            pass
    runs = g.runs()
    for a, row in zip(new, rows):
        if runs is None:
            a[g.idx] = row
            continue
        for p, q, s in runs:
            a[s:s + q - p] = row[p:q]
