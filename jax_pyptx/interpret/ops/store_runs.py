"""A run of shared-memory stores written as one access (the ops half of
``scheduler.store_runs``, which finds the runs and reads each store's operands in order).

An epilogue stages a tile in shared memory with a handful of ``st.shared`` instructions, each
by every thread of the group, with only register arithmetic (their addresses) in between. The
sanitizer's bookkeeping of one store (bounds, the async proxy, the race tracker's chunks and
per-warp sets, the lanes' tags, the written flags) is a few dozen NumPy calls whatever its
rows, so ``commit`` records the run's stores as one store of all their rows: the same checks,
made once. It does so only where that provably changes nothing:

* the rows of the whole run are pairwise disjoint (a byte stored twice in the run, by one lane
  or two, is left to the one-by-one order, where the second store is checked against the
  first);
* every check passes without looking byte by byte: the stores lie in bounds and aligned, no
  byte is in flight or read by a bulk store, no chunk another warp accessed in the current
  epoch is near (``RaceTracker.quiet_store``) and no lane of a warp stored or loaded those
  bytes in its interval (``intra_store(quiet=True)``).

Then nothing can be reported, the state the stores leave is the state the stores one by one
leave, and the bytes are written at once (disjoint: in any order). Else ``commit`` answers
False having changed nothing, and the caller writes the stores one by one, each reporting
what it finds.
"""
from __future__ import annotations

import numpy as np

from ..machine.cluster import shared_target
from ..sanitizer.async_proxy import generic_store_clear
from ..state import memory as M
from ..state import shadow
from .load_store import _bounds


def commit(ctx, g, items, memo=None) -> bool:
    """Write the stores ``items`` ([(decoded, addresses, values (n, elements))], in issue
    order; every one a weak ``st`` to the CTA's own shared memory by the threads of ``g``) as
    one access where the module doc allows; False (nothing done) where they must be written
    one by one. ``memo``: a dict the run keeps its rows' layout in (``_layout``)."""
    k = len(items)
    v0 = items[0][2]
    dt, w = v0.dtype, v0.shape[1]
    nbytes = dt.itemsize * w
    if k < 2 or not g.n or nbytes & (nbytes - 1):
        return False
    for _, _, v in items:
        if v.dtype != dt or v.shape[1] != w:
            return False
    rows = _rows(ctx, g, k)
    banks, warps, gw, lanes = rows
    offs = np.concatenate([a for _, a, _ in items])
    lay = _layout(ctx, g, banks, offs, nbytes, k, memo)
    if lay is None:
        return False
    span, starts, aligned = lay
    b = g.warp_blocks(ctx.W)
    if ctx.async_proxy is not None and not generic_store_clear(ctx, banks, offs, nbytes, span, starts, aligned):
        return False
    vals = np.concatenate([v for _, _, v in items])
    race = ctx.shared.race
    if race is not None:
        blocks = None if b is None else (b[0] * k, b[1], b[2])      # the stores' rows one after another
        hulls = race.quiet_store(offs, nbytes, span, blocks)
        if hulls is None or not race.intra_store(banks, offs, nbytes, gw, lanes, ctx.N >> 5, vals, starts=starts,
                                                 aligned=aligned, uw=g.warp_masks()[0], quiet=True):
            return False
        race.on_store(banks, offs, nbytes, warps, vals, span=span, starts=starts, aligned=aligned,
                      blocks=blocks, hulls=hulls)
    ctx.shared.store(banks, offs, vals, span=span, starts=starts, aligned=aligned)
    return True


def _layout(ctx, g, banks, offs, nbytes: int, k: int, memo):
    """``(span, starts, aligned)`` of the rows of ``k`` stores of ``nbytes`` at shared offsets
    ``offs`` by ``g`` (CTAs ``banks``), as ``load_store._bounds`` gives them, where they are
    the CTAs' own shared memory, in bounds, aligned and pairwise disjoint; else None. They
    depend only on the offsets, the rows' CTAs and the shared memory's size, so a run keeps the
    last answer in ``memo`` (an epilogue stores at the same offsets tile after tile and launch
    after launch): the same rows (``banks``, one array per slot set: ``_rows``) at equal
    offsets of a space of the same size get it again, read-only, without the checks."""
    sh = ctx.shared
    geo = (sh.size, sh.stride, ctx.W, nbytes)
    got = memo.get("layout") if memo is not None else None
    if got is not None and got[0] is banks and got[1] == geo and np.array_equal(got[2], offs):
        return got[3]
    try:
        shared_target(ctx, g, offs, True, warps=False, banks=banks)     # (an address from mapa)
        span, starts, aligned = _bounds(ctx, banks, offs, nbytes)
    except M.MemoryFault:
        return None
    if not aligned or not _disjoint(ctx, _distinct(offs, starts, k, g.warp_blocks(ctx.W)), nbytes):
        return None
    if memo is not None:
        offs.flags.writeable = starts.flags.writeable = False
        memo["layout"] = (banks, geo, offs, (span, starts, aligned))
    return span, starts, aligned


def _rows(ctx, g, k):
    """(CTA, warp within the CTA, batch warp, lane) of each row of ``k`` stores by ``g``: kept
    with the group's slot set (``Group.facts``: they depend on the CTA's slots ``S`` too; an
    epilogue's group is made anew each tile; the lanes' tags cache by these arrays)."""
    more = g.facts().more
    key = ("store_rows", ctx.S, k)
    rows = more.get(key)
    if rows is None:
        gw, lanes, warps = g.slot_info(ctx)
        rows = more[key] = tuple(np.tile(x, k) for x in (ctx.slot_cta[g.idx], warps, gw, lanes))
        for x in rows:
            x.flags.writeable = False
    return rows


def _distinct(offs, starts, k, blocks):
    """The rows of ``k`` stores by a group laid out as ``blocks`` (``Group.warp_blocks``: a
    CTA's warps, CTA after CTA) that can share a byte: rows of two CTAs never do, so where
    every CTA stores at the same offsets, the first CTA's rows (its offsets: one bank) answer
    for all; else every row's flat first byte."""
    if blocks is None or blocks[0] < 2:
        return starts
    o = offs.reshape(k, blocks[0], -1)
    return o[:, 0].reshape(-1).astype(np.int64) if (o == o[:, :1]).all() else starts


def _disjoint(ctx, starts, nbytes: int) -> bool:
    """Whether rows of ``nbytes`` (a power of two) at flat first bytes ``starts`` (multiples of
    it) share no byte: each row's unit (``starts // nbytes``) is written its row's number in a
    scratch array; a unit two rows share keeps one of them."""
    units = starts >> (nbytes.bit_length() - 1)
    scratch = ctx.store_units.get(nbytes)
    if scratch is None:
        scratch = ctx.store_units[nbytes] = shadow.scratch(ctx.shared.data.size // nbytes, np.int32)
    n = len(units)
    order = np.arange(n, dtype=np.int32)
    scratch[units] = order
    return bool(np.array_equal(scratch[units], order))
