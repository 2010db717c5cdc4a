"""The bulk async-groups of the async proxy and its tensor-map rule, on ``async_proxy``'s
state (``AsyncState``):

- a ``.bulk_group`` operation (a TMA store, ``cp.async.bulk`` to global) reads its shared source
  until ``cp.async.bulk.wait_group`` retires its group: ``begin_bulk_read(s)`` record the read
  (counted per CTA-local 16-byte chunk, ``AsyncState.rchunk``), ``bulk_commit`` closes a group,
  ``bulk_wait`` retires them; under a late schedule the store itself waits for its group
  (``defer_bulk``, ``run_bulk``);
- a tensor map in global memory modified through the generic proxy must be fenced
  (``fence.proxy.tensormap::generic``) before a TMA uses it: ``tensormap_modified``,
  ``tensormap_fenced``, ``check_tensormap``.
"""
from __future__ import annotations

import numpy as np

from ...errors import AsyncProxyError
from .async_proxy import _Read, state

__all__ = ["begin_bulk_read", "begin_bulk_reads", "bulk_commit", "defer_bulk", "run_bulk", "bulk_wait",
           "tensormap_modified", "tensormap_fenced", "check_tensormap"]


def begin_bulk_read(ctx, g, flat_bytes, d):
    """A ``.bulk_group`` operation of each thread of ``g`` reads ``flat_bytes`` (distinct flat
    byte indices of ``ctx.shared``, or a slice of them) until its bulk async-group is retired
    by ``bulk_wait``."""
    if not ctx.sanitize:
        return
    st = state(ctx)
    fb = flat_bytes if isinstance(flat_bytes, slice) else np.asarray(flat_bytes, np.int64)
    ch = _chunk_set(fb, st.stride)
    for slot in g.idx:
        r = _Read(int(slot), int(st.committed[slot]), fb, d, ch)
        st.rchunk[ch] += 1
        st.reads.append(r)


def _chunk_set(fb, stride: int):
    """The distinct CTA-local 16-byte chunks a byte set of one CTA (a slice or an index array of
    flat bytes) touches: a slice, or an index array."""
    if isinstance(fb, slice):
        return _local_chunks(fb.start, fb.stop, stride)
    return np.unique((fb % stride) >> 4)


def _local_chunks(a: int, b: int, stride: int) -> slice:
    """The CTA-local 16-byte chunks of one CTA's flat bytes ``[a, b)``."""
    if b <= a:
        return slice(0, 0)
    c = a % stride
    return slice(c >> 4, ((c + b - a - 1) >> 4) + 1)


def _count(rc, chunks, by: int):
    """``rc[ch] += by`` for each chunk set of ``chunks``: once per distinct slice (the CTAs'
    boxes of one stage share their CTA-local chunks)."""
    same: dict = {}
    for ch in chunks:
        if type(ch) is slice:
            k = (ch.start, ch.stop)
            same[k] = same.get(k, 0) + by
        elif by > 0:
            rc[ch] += rc.dtype.type(by)
        else:
            rc[ch] -= rc.dtype.type(-by)
    for (a, b), n in same.items():
        if n > 0:
            rc[a:b] += rc.dtype.type(n)
        elif n < 0:
            rc[a:b] -= rc.dtype.type(-n)


def begin_bulk_reads(ctx, slots, starts, ends, d):
    """``begin_bulk_read`` of the boxes of one instruction, in order: thread ``slots[i]`` reads
    the flat bytes ``[starts[i], ends[i])`` (lists of ints)."""
    if not ctx.sanitize:
        return
    st = state(ctx)
    reads, stride = st.reads, st.stride
    chs = []
    for slot, seq, a, b in zip(slots, st.committed[slots].tolist(), starts, ends):
        ch = _local_chunks(a, b, stride)
        chs.append(ch)
        reads.append(_Read(slot, seq, slice(a, b), d, ch))
    _count(st.rchunk, chs, 1)


def bulk_commit(ctx, g):
    """cp.async.bulk.commit_group: the threads' uncommitted bulk operations form a group."""
    st = state(ctx)
    st.committed[g.idx] += 1


def defer_bulk(ctx, gj, fn):
    """A bulk store (shared to global) of the one thread of ``gj`` under a late schedule: it
    reads its source and writes global memory, ``fn(ctx)``, when ``cp.async.bulk.wait_group``
    retires its bulk async-group (``run_bulk``)."""
    slot = int(gj.idx[0])
    ctx.bulk_late.append((slot, int(state(ctx).committed[slot]), ctx.cur, fn))


def run_bulk(ctx, idx=None, lim=None):
    """Run, in issue order, the late bulk stores of the threads ``idx`` whose group is below
    ``lim`` (per slot; all of them when ``idx`` is None: the batch ended)."""
    keep = []
    st = state(ctx)
    for slot, seq, d, fn in ctx.bulk_late:
        if idx is None or (lim[slot] > seq and slot in idx):
            # as issued: its group is the one it was issued in (the source read it registers is
            # retired with that group)
            now, st.committed[slot] = st.committed[slot], seq
            try:
                ctx.as_issued(d, fn)
            finally:
                st.committed[slot] = now
        else:
            keep.append((slot, seq, d, fn))
    ctx.bulk_late = keep


def bulk_wait(ctx, g, n):
    """cp.async.bulk.wait_group{.read} n: retire all but the n most recent groups of each thread."""
    st = ctx.async_proxy
    if st is not None and ctx.timeline is not None:
        ctx.timeline.retire(ctx, "bulk group", g, st.committed - int(n), 1)
    if ctx.bulk_late:
        lim = np.full(ctx.N, -1, np.int64)
        lim[g.idx] = st.committed[g.idx] - int(n)
        run_bulk(ctx, set(int(s) for s in g.idx), lim)
    if st is None or not st.reads:
        return
    # per waiting thread: the groups below this one are retired (Python ints: a few records
    # per thread)
    lim = dict(zip(g.idx.tolist(), (st.committed[g.idx] - int(n)).tolist()))
    keep, done = [], []
    for r in st.reads:
        if r.seq < lim.get(r.slot, -1):
            done.append(r.chunks)
        else:
            keep.append(r)
    st.reads = keep
    _count(st.rchunk, done, -1)


# ----------------------------------------------------------------------------- tensor maps
def tensormap_modified(ctx, gaddr: int, d):
    """A tensor map in global memory at ``gaddr`` was modified through the generic proxy."""
    if ctx.sanitize:
        state(ctx).tmaps[int(gaddr)] = d


def tensormap_fenced(ctx, gaddr=None):
    """A fence.proxy.tensormap::generic (for ``gaddr``, or every tensor map when None)."""
    st = ctx.async_proxy
    if st is None or not st.tmaps:
        return
    if gaddr is None:
        st.tmaps.clear()
    else:
        st.tmaps.pop(int(gaddr), None)


def check_tensormap(ctx, gaddr: int, g, lane=0):
    """A TMA about to use the tensor map at global ``gaddr``."""
    st = ctx.async_proxy
    if st is None or not st.tmaps:
        return
    d = st.tmaps.get(int(gaddr))
    if d is not None:
        raise ctx.error(AsyncProxyError,
                        f"the tensor map at global {int(gaddr):#x} was modified by `{d.text}` "
                        f"({d.where_line()}) and is used with no tensormap proxy fence since: execute "
                        f"fence.proxy.tensormap::generic.release and .acquire (or copy it with "
                        f"tensormap.cp_fenceproxy) before the TMA", g, lane)
