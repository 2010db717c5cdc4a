"""The async proxy and its sanitizer rules (PTX ISA memory consistency model: proxies).

TMA (``cp.async.bulk.tensor``), the bulk copies (``cp{.reduce}.async.bulk``), ``wgmma`` and
``tcgen05`` access shared memory through the *async proxy*; ``ld``/``st``, ``cp.async``,
``stmatrix`` and atomics through the *generic proxy*. The interpreter performs an asynchronous
copy when it is issued (loads deliver their bytes and complete their transactions at once, stores
read their source at once), and the sanitizer checks the ordering a GPU needs:

* **generic writes, then an async read, with no proxy fence.** Every shared byte the generic
  proxy writes is marked (``BankedSpace.dirty``) until its CTA executes ``fence.proxy.async``
  (``.shared::cta``, ``.shared::cluster`` or no state space). An async-proxy read of a marked byte
  (a TMA store's or bulk copy's source, a wgmma / tcgen05 operand via ``check_async_read``) is
  reported. The rule is per CTA: a fence by any thread of the CTA covers the writes that precede
  it in the run (the usual code fences in every writing thread and then synchronizes);
* **an asynchronous copy's destination read before it completed.** A TMA / bulk load's bytes are
  *in flight* until the mbarrier phase that tracks them completes; a generic read of an in-flight
  byte (or an async read via ``check_async_read``) is reported, and so is a generic write to one;
* **a bulk store's source overwritten too early.** A ``.bulk_group`` copy's source bytes are being
  read until ``cp.async.bulk.wait_group{.read}`` retires its group in the issuing thread; a
  generic write to one of them is reported (the groups: ``bulk_groups``);
* **a tensor map modified in global memory and used without a tensormap proxy fence**
  (``tensormap.replace`` on ``.global`` memory, then ``cp.async.bulk.tensor`` with no
  ``fence.proxy.tensormap::generic`` in between: ``bulk_groups``).

For other parts of the interpreter::

    check_async_read(ctx, ctas, offs, nbytes, what, g=None, lane=0, d=None)
        # an async-proxy read (wgmma / tcgen05 operands) of nbytes at each (cta, shared offset)
    fence_async(ctx, ctas)          # fence.proxy.async by threads of these (distinct) CTAs
    write_shared_async(ctx, g, ctas, flat, values, warps=None)
        # an async-proxy write of values (any dtype) at flat element indices of ctx.shared
    race_ranges(race, kind, banks, los, his, warps)
        # the race tracker's check and record of one copy instruction's boxes, all at once
"""
from __future__ import annotations

import numpy as np

from ...errors import AsyncProxyError
from ..state import memory as M
from ..state import shadow
from .race_ranges import race_load_range, race_ranges, race_store_range   # (a copy's boxes)

__all__ = ["AsyncState", "state", "check_async_read", "spans_clear", "fence_async", "write_shared_async",
           "race_ranges", "race_load_range", "race_store_range", "track_inflight", "track_cp_async",
           "cp_async_landed", "on_generic_load", "on_generic_store", "generic_store_clear"]


class _Write:
    """An asynchronous copy's bytes in flight; called ``(ctx, cta, off)`` when it lands (the
    callback ``track_inflight`` returns: ``_landed``)."""

    __slots__ = ("flat", "d", "cta", "off", "live", "rows", "counted", "span")

    def __init__(self, flat, d, cta, off, span=None, counted=True):
        self.flat, self.d, self.cta, self.off, self.live = flat, d, cta, off, True
        self.rows = None          # a cp.async: the row starts still in flight
        self.counted = counted    # its bytes are in ``inflight`` (``_counts``)
        self.span = span          # (lowest, end) shared offset of its bytes, any CTA

    def __call__(self, ctx, cta, off):
        """The copy landed (``_uncounted_landed`` and ``_retire`` inline: one lands for every
        box of a copy)."""
        if self.live:
            self.live = False
            s = ctx.async_proxy
            if self.counted:
                s.inflight[self.flat] -= 1
                s.blk[_blocks(self.flat)] -= 1
                s.n_counted -= 1
            else:
                s.uncounted.pop(self, None)
                us = s.unc_spans
                n = us.get(self.span, 0) - 1
                if n > 0:
                    us[self.span] = n
                else:
                    us.pop(self.span, None)
            s.n_inflight -= 1
            s.dead += 1
            if 2 * s.dead > len(s.writes):
                s.writes = [w for w in s.writes if w.live]
                s.dead = 0


class _Read:
    __slots__ = ("slot", "seq", "flat", "d", "chunks")

    def __init__(self, slot, seq, flat, d, chunks):
        self.slot, self.seq, self.flat, self.d = slot, seq, flat, d
        self.chunks = chunks      # the CTA-local 16-byte chunks its bytes touch (``AsyncState.rchunk``)


class AsyncState:
    """Per-batch bookkeeping of the async proxy (created on first use; see the module doc)."""

    def __init__(self, ctx):
        self._n = ctx.shared.data.size
        self.stride = ctx.shared.stride
        # per byte: async writes not yet completed (those counted: ``_counts``), ``inflight``;
        # per block of M.BLOCK bytes: records touching it (a superset: spans_clear's filter),
        # ``blk``; per 16-byte chunk of a CTA's shared memory: bulk-store sources not yet retired
        # that touch it in some CTA, ``rchunk`` (each made when first used: a pipeline whose
        # copies land before any check meets them counts none)
        self._inflight = self._blk = self._rchunk = None
        self.n_counted = 0                         # live records counted in ``inflight``
        self.writes: list[_Write] = []            # live ones, and dead ones not yet pruned (_retire)
        self.dead = 0                              # dead records in ``writes``
        self.reads: list[_Read] = []
        self.n_inflight = 0
        self.committed = np.zeros(ctx.N, np.int64)  # bulk async-groups committed per thread
        self.scratch = None                        # _bump: int32 per 4 bytes (made on first use)
        self.uncounted = {}                        # copy records not yet in ``inflight`` (live:
                                                   # a dict as an ordered set, left as they land)
        self.unc_spans = {}                        # ... the spans of their live ones: how many
        self.tmaps = {}                            # global address -> Decoded that modified it

    @property
    def inflight(self):
        if self._inflight is None:
            self._inflight = shadow.filled(self._n, np.uint16)
        return self._inflight

    @property
    def blk(self):
        if self._blk is None:
            self._blk = shadow.filled(-(-self._n // M.BLOCK), np.int32)
        return self._blk

    @property
    def rchunk(self):
        """uint16 per 16-byte chunk of a CTA's shared memory: how many bulk reads not yet retired
        (``reads``) touch it, in any CTA (a filter: a store meeting one is checked against the
        reads' own bytes, ``_reads_hit``; the CTAs' reads of one stage are one slice each)."""
        if self._rchunk is None:
            self._rchunk = shadow.filled(-(-self.stride // 16), np.uint16)
        return self._rchunk

    def recycle(self):
        """The batch is over: the per-byte arrays go to the next one (``shadow``)."""
        shadow.recycle(self._inflight, self._rchunk, self.scratch, self._blk)


def state(ctx) -> AsyncState:
    st = ctx.async_proxy
    if st is None:
        st = ctx.async_proxy = AsyncState(ctx)
    return st


def _at(flat, k: int) -> int:
    """Byte ``k`` of a byte set (a slice or an index array)."""
    return flat.start + k if isinstance(flat, slice) else int(flat[k])


def _has(flat, f: int) -> bool:
    if isinstance(flat, slice):
        return flat.start <= f < flat.stop
    if isinstance(flat, _Rows):
        return bool(((flat.starts <= f) & (f < flat.starts + flat.size)).any())
    return bool((flat == f).any())


def _clear(arr, starts, nbytes, stride, ctas, offs) -> bool:
    """Whether ``arr`` (one entry per byte) is 0 at every byte of rows ``[start, start +
    nbytes)`` (rows at shared offsets ``offs`` of CTAs ``ctas``): the span of offsets the rows
    lie in, in each CTA from the lowest to the highest, when it is not much larger than the rows
    (an operand tile: one contiguous pass per CTA), else row by row (``memory.take_rows``)."""
    if not len(starts):
        return True
    nbytes = int(nbytes)
    lo, hi = int(offs.min()), int(offs.max()) + nbytes
    c0, c1 = int(np.min(ctas)), int(np.max(ctas))
    if (hi - lo) * (c1 - c0 + 1) <= 4 * len(starts) * nbytes and \
            not any(arr[c * stride + lo:c * stride + hi].any() for c in range(c0, c1 + 1)):
        return True
    return not M.take_rows(arr, starts, nbytes).any()


def _starts(ctx, ctas, offs):
    """Flat first bytes of accesses at (cta, shared offset)."""
    offs = np.atleast_1d(np.asarray(offs, np.int64))
    return np.asarray(ctas, np.int64) * ctx.shared.stride + offs


def _where(ctx, flat):
    """'shared address 0x40 ('buf' (+64)) of CTA (1,0,0)' for a flat byte index."""
    sh = ctx.shared
    cta, off = divmod(int(flat), sh.stride)
    w = sh.describe_offset(off)
    c = f" of CTA {ctx._cta_str(cta)}" if ctx.nctas > 1 else ""
    return f"shared address {off:#x}{' ' + w if w else ''}{c}"


def _dirty_msg(ctx, flat, what):
    return (f"{what} reads {_where(ctx, flat)} through the async proxy, but the generic proxy wrote it "
            f"(st.shared, cp.async, stmatrix, ...) with no fence.proxy.async since: the read may see "
            f"stale data. Execute fence.proxy.async.shared::cta after the writes (in the writing "
            f"threads, before the barrier that orders them with this instruction)")


def _inflight_msg(ctx, flat, verb):
    rec = _record_of(ctx, flat)
    if rec is not None and rec.cta is None:            # a cp.async (track_cp_async)
        src = f"`{rec.d.text}` ({rec.d.where_line()})" if rec.d is not None else "a cp.async"
        return (f"{verb} {_where(ctx, flat)} that {src} is still writing: complete it first "
                f"(cp.async.commit_group, then cp.async.wait_group / cp.async.wait_all in the "
                f"copying threads, and a barrier before other threads touch the bytes)")
    if rec is None:
        src = "an asynchronous copy"
        tail = "wait on its mbarrier (mbarrier.try_wait) first"
    else:
        src = f"`{rec.d.text}` ({rec.d.where_line()})" if rec.d is not None else "an asynchronous copy"
        mb = ctx.mbar.get((rec.cta, rec.off))
        ph = f" (phase {mb.phase}: {mb.pending} of {mb.expected} arrivals pending, tx-count {mb.tx})" \
            if mb is not None else ""
        tail = (f"its mbarrier at shared {rec.off:#x}{ph} has not completed the phase that tracks it; "
                f"wait on it (mbarrier.try_wait) before touching the bytes")
    return f"{verb} {_where(ctx, flat)} that {src} is still writing: {tail}"


def _record_of(ctx, flat):
    st = ctx.async_proxy
    for r in reversed(st.writes):
        if r.live and _has(r.flat, flat):
            return r
    return None


def check_async_read(ctx, ctas, offs, nbytes, what, g=None, lane=0, d=None):
    """An async-proxy read of ``nbytes`` at each ``(cta, shared offset)`` (``offs`` an int or an
    array; ``ctas`` batch CTA indices, broadcast): report bytes the generic proxy wrote without
    a following fence.proxy.async, and bytes an asynchronous copy is still writing. ``what``
    names the reader in the message ("wgmma.mma_async operand A"); ``d`` is the instruction to
    name (default: the one executing)."""
    if not ctx.sanitize:
        return
    sh, st = ctx.shared, ctx.async_proxy
    inflight = st is not None and st.n_inflight
    if sh.dirty is None and not inflight:
        return
    offs = np.atleast_1d(np.asarray(offs, np.int64))
    dirty = None
    if sh.dirty is not None and len(offs) and _dirty_near(sh, int(offs.min()), int(offs.max()) + int(nbytes)):
        dirty = sh.dirty
    if dirty is None and not inflight:
        return
    starts = _starts(ctx, ctas, offs)
    counts = _counts_at(st, offs, nbytes) if inflight else None
    if (dirty is None or _clear(dirty, starts, nbytes, sh.stride, ctas, offs)) and \
            (counts is None or _clear(counts, starts, nbytes, sh.stride, ctas, offs)):
        return                  # (the byte is found below)
    _check_flat_read(ctx, (starts[:, None] + np.arange(int(nbytes))).reshape(-1), what, g, lane, d)


def _dirty_near(sh, lo: int, hi: int) -> bool:
    """Whether bytes the generic proxy wrote without a fence since may lie at shared offsets
    ``[lo, hi)`` (of some CTA): ``BankedSpace.dirty_lo`` / ``dirty_hi`` bound them."""
    return getattr(sh, "dirty_lo", 0) < hi and lo < getattr(sh, "dirty_hi", 1 << 62)


def spans_clear(ctx, ctas, lo, hi, bounds=None) -> bool:
    """Whether no byte of shared offsets ``[lo[i], hi[i])`` of CTA ``ctas[i]`` (one span per
    operand: a few) is marked for ``check_async_read`` (written by the generic proxy without a
    fence since, or in flight): then no access inside the spans is reported, and a caller
    checks them as slices instead of byte by byte. ``bounds``: ``(min(lo), max(hi))`` where
    the caller has them."""
    sh, st = ctx.shared, ctx.async_proxy
    lo0, hi0 = (int(lo.min()), int(hi.max())) if bounds is None else bounds
    pairs = [(sh.dirty, getattr(sh, "dirty_blk", None))] \
        if _dirty_near(sh, lo0, hi0) and sh.dirty is not None and sh.dirty_bank[np.asarray(ctas)].any() else []
    if st is not None and st.n_inflight:
        counts = _counts(st, lo0, hi0)
        if counts is not None:
            pairs.append((counts, st.blk))
    if not pairs:
        return True
    spans = M.bank_spans(ctas, lo, hi)
    if sh.stride % M.BLOCK == 0:            # the per-block entries first: a block's bytes when set
        bspans, pitch = M.block_spans(spans), sh.stride >> M.BLOCK_SHIFT
        pairs = [(arr, blk) for arr, blk in pairs
                 if blk is None or any(v.max(initial=0) for v in M.span_views(blk, pitch, bspans))]
    return not any(v.max(initial=0) for arr, _ in pairs for v in M.span_views(arr, sh.stride, spans))


def _blocks(flat):
    """The entries of ``AsyncState.blk`` of a byte set (a slice, or the blocks from its lowest
    to its highest byte)."""
    if isinstance(flat, slice):
        return slice(flat.start >> M.BLOCK_SHIFT, ((flat.stop - 1) >> M.BLOCK_SHIFT) + 1)
    if not len(flat):
        return slice(0, 0)
    return slice(int(flat.min()) >> M.BLOCK_SHIFT, (int(flat.max()) >> M.BLOCK_SHIFT) + 1)


def _counts(st, lo=None, hi=None):
    """``st.inflight`` with the copies in flight counted: a copy (a cp.async, a TMA or bulk
    copy) is only recorded when issued and is added to the per-byte counts when a check first
    reads bytes it may write (a copy that lands before any check never touches them). ``lo,
    hi``: the checked bytes lie at shared offsets ``[lo, hi)`` (any CTA): a copy whose bytes lie
    elsewhere (``_Write.span``) cannot write them and stays uncounted (the records are looked at
    only when the span of a live one, ``unc_spans``, meets the bytes). None when no byte there
    can be in flight."""
    if st.uncounted and (lo is None or any(a < hi and lo < b for a, b in st.unc_spans)):
        keep = []
        for rec in st.uncounted:
            if rec.live and lo is not None and (rec.span[1] <= lo or hi <= rec.span[0]):
                keep.append(rec)
                continue
            if rec.live:
                _count(st, rec)
                st.n_counted += 1
            rec.counted = True
        _keep_uncounted(st, keep)
    if lo is not None and not st.n_counted:
        return None
    return st.inflight


def _count(st, rec):
    """Add the bytes of a live record to ``st.inflight`` (and ``st.blk``)."""
    if rec.rows is None:                # a TMA / bulk copy: distinct bytes, each written once
        st.inflight[rec.flat] += 1
        st.blk[_blocks(rec.flat)] += 1
    elif len(rec.rows):
        _bump_rows(st, rec.rows, rec.flat.size, 1)


def _uncounted(st, rec):
    """Keep a new record out of ``st.inflight`` until a check may meet it (``_counts``)."""
    rec.counted = False
    st.uncounted[rec] = None
    st.unc_spans[rec.span] = st.unc_spans.get(rec.span, 0) + 1


def _keep_uncounted(st, recs):
    """``st.uncounted`` becomes ``recs`` (and ``st.unc_spans`` the spans of the live ones: the
    few distinct ones of a pipeline's stages, looked at before the records themselves)."""
    st.uncounted = dict.fromkeys(recs)
    spans = st.unc_spans = {}
    for r in recs:
        if r.live:
            spans[r.span] = spans.get(r.span, 0) + 1


def _uncounted_landed(st, rec):
    """A record of ``st.uncounted`` landed: it leaves it, and its span ``unc_spans``."""
    st.uncounted.pop(rec, None)
    n = st.unc_spans.get(rec.span, 0) - 1
    if n > 0:
        st.unc_spans[rec.span] = n
    else:
        st.unc_spans.pop(rec.span, None)


def _counts_at(st, offs, nbytes):
    """``_counts`` for accesses of ``nbytes`` at shared offsets ``offs`` (an array)."""
    if not len(offs):
        return None
    return _counts(st, int(offs.min()), int(offs.max()) + int(nbytes))


def _check_flat_read(ctx, flat, what, g=None, lane=0, d=None):
    """``flat``: the bytes read (a slice or an index array of ``ctx.shared``)."""
    sh = ctx.shared
    if sh.dirty is not None:
        bad = sh.dirty[flat]
        if bad.any():
            raise ctx.error(AsyncProxyError, _dirty_msg(ctx, _at(flat, int(np.argmax(bad))), what), g, lane, d)
    st = ctx.async_proxy
    counts = _counts(st, *_offsets(sh, flat)) if st is not None and st.n_inflight else None
    if counts is not None:
        bad = counts[flat]
        if bad.any():
            f = _at(flat, int(np.argmax(bad)))
            raise ctx.error(AsyncProxyError, _inflight_msg(ctx, f, f"{what} reads"), g, lane, d)


def _offsets(sh, flat):
    """(lowest, end) shared offset, any CTA, of a byte set (a slice within one CTA or an index
    array)."""
    if isinstance(flat, slice):
        c = flat.start // sh.stride * sh.stride
        return flat.start - c, flat.stop - c
    o = flat % sh.stride
    return (int(o.min()), int(o.max()) + 1) if len(o) else (0, 0)


def _drop_marks(sh, ctas):
    """Forget the rows of the CTAs ``ctas`` in the backlog of generic-store marks
    (``BankedSpace.dirty``): a fence would clear them as soon as they were made."""
    keep, n = [], 0
    fenced = np.zeros(sh.nbanks, bool)
    fenced[ctas] = True
    if fenced[sh.dirty_bank].all():     # every CTA that may have marks (the usual fence of them all)
        sh._dpend.clear()
        sh._dpend_rows = 0
        return
    for banks, offs, nbytes in sh._dpend:
        b = np.broadcast_to(np.asarray(banks), np.shape(offs))
        m = ~fenced[b]
        if m.all():
            keep.append((banks, offs, nbytes))
        elif m.any():
            keep.append((b[m], offs[m], nbytes))
        else:
            continue
        n += int(m.sum())
    sh._dpend[:] = keep
    sh._dpend_rows = n


def fence_async(ctx, ctas):
    """fence.proxy.async by threads of the batch CTAs ``ctas`` (distinct: ``Group.ctas``): the
    generic writes of those CTAs so far are visible to the async proxy."""
    sh = ctx.shared
    ctas = np.asarray(ctas, np.int64)
    if getattr(sh, "_dpend", None):                 # (before ``dirty`` marks them)
        _drop_marks(sh, ctas[sh.dirty_bank[ctas]])    # their marks would be cleared at once
    if sh.dirty is None:
        return
    ctas = ctas[sh.dirty_bank[ctas]]        # (no byte of the others is marked)
    if not len(ctas):
        return
    dirty, blk = sh.dirty, getattr(sh, "dirty_blk", None)
    if blk is None:
        for c in ctas.tolist():
            dirty[c * sh.stride:(c + 1) * sh.stride] = 0
    else:                                   # only the blocks that may hold marked bytes
        p = sh.stride >> M.BLOCK_SHIFT
        for c in ctas[blk.reshape(-1, p)[ctas].any(axis=1)].tolist():
            nz = np.flatnonzero(blk[c * p:(c + 1) * p])
            if 4 * len(nz) < p:
                dirty.reshape(-1, M.BLOCK)[c * p + nz] = 0
            else:
                dirty[c * sh.stride:(c + 1) * sh.stride] = 0
            blk[c * p:(c + 1) * p] = 0
    sh.dirty_bank[ctas] = False
    if hasattr(sh, "dirty_hi") and not sh.dirty_bank.any():     # no byte of any CTA is marked
        sh.dirty_lo, sh.dirty_hi = 1 << 62, 0


def span_written(sh, c: int, lo: int, hi: int):
    """The bookkeeping of an async-proxy write of exactly shared offsets ``[lo, hi)`` of CTA
    ``c`` (``write_shared_async`` with a span; its values written by the caller): the bytes
    become initialized and are not generic-dirty (``spans_written`` of the one span)."""
    spans_written(sh, ((c, lo, hi),))


def spans_written(sh, spans):
    """The bookkeeping of async-proxy writes of exactly shared offsets ``[lo, hi)`` of CTA
    ``cta``, each ``(cta, lo, hi)`` of ``spans`` (the copies of one instruction, their values
    written by the caller): the bytes become initialized (a span known written stays so: a
    copy ring's stages), then they are not generic-dirty (two arrays a span's bookkeeping
    touches independently)."""
    init = sh.init
    if init is not None and not sh.init_full:
        written, st = sh.written, sh.stride
        for c, lo, hi in spans:
            if (c, lo, hi) not in written:
                init[c * st + lo:c * st + hi] = 1
                if len(written) < 4096:
                    written.add((c, lo, hi))
                sh.note_copied(c, lo, hi)
    dlo, dhi = getattr(sh, "dirty_lo", 0), getattr(sh, "dirty_hi", 1 << 62)     # (``_dirty_near``)
    for c, lo, hi in spans:
        if dlo < hi and lo < dhi:
            _clear_dirty_span(sh, c, lo, hi)


def _clear_dirty_span(sh, c: int, lo: int, hi: int):
    """The generic-dirty part of ``spans_written`` for one span: its marked bytes cleared."""
    if sh.dirty is not None and sh.dirty_bank[c]:
        dirty, blk = sh.dirty, sh.dirty_blk     # (a superset of the marked bytes' blocks)
        a, b = c * sh.stride + lo, c * sh.stride + hi
        if blk is None or blk[a >> M.BLOCK_SHIFT:((b - 1) >> M.BLOCK_SHIFT) + 1].any():
            dirty[a:b] = 0


def write_shared_async(ctx, g, ctas, flat_elems, values, warps=None, span=None):
    """An async-proxy write of ``values`` (1-D, any dtype) at element indices ``flat_elems`` of
    ``ctx.shared`` viewed as that dtype (with ``span``, they may be a slice): the bytes become
    initialized and are not generic-dirty.
    ``warps`` (the issuing thread's warp, for the race tracker; None: not tracked). ``span``:
    ``(cta, lo, hi)`` when the written bytes are exactly shared offsets ``[lo, hi)`` of one CTA
    (bookkeeping by slices)."""
    sh = ctx.shared
    dt = values.dtype
    esz = dt.itemsize
    if span is not None:
        cta, lo, hi = span
        c = int(cta)
        if sh.race is not None and warps is not None:
            w0 = int(np.asarray(warps).reshape(-1)[0])
            sh._race(lambda *a: race_store_range(sh.race, c, lo, hi, w0), None, None, 0, None)
        sh.view(dt)[flat_elems] = values
        span_written(sh, c, lo, hi)
        return
    flat_elems = np.asarray(flat_elems, np.int64)
    if sh.race is not None and warps is not None and len(flat_elems):
        ctas_e = flat_elems * esz // sh.stride
        offs_e = flat_elems * esz - ctas_e * sh.stride
        sh._race(sh.race.on_store, ctas_e, offs_e.astype(np.uint64), esz, np.broadcast_to(warps, ctas_e.shape))
    sh.view(dt)[flat_elems] = values
    sh.version += 1                     # memory.py: writes are counted (progress)
    if sh.init is not None:
        sh.iview(esz)[flat_elems] = M._ONES[esz]
    if sh.dirty is not None:
        sh.dview(esz)[flat_elems] = 0


def track_inflight(ctx, flat_bytes, d, cta, off, span=None):
    """The bytes ``flat_bytes`` (distinct flat byte indices of ``ctx.shared``, or a slice of
    them) of an asynchronous copy tracked by the mbarrier ``(cta, off)`` are in flight until the phase its bytes are
    counted in completes: returns the callback to run then (``mbarrier.defer_complete_tx``
    attaches it), or None when the sanitizer is off. ``span``: their (lowest, end) shared
    offset when the caller knows it."""
    if not ctx.sanitize:
        return None
    st = state(ctx)
    fb = flat_bytes if isinstance(flat_bytes, slice) else np.asarray(flat_bytes, np.int64)
    rec = _Write(fb, d, int(cta), int(off))
    rec.span = _offsets(ctx.shared, fb) if span is None else span
    return _in_flight(st, rec)


def track_spans(ctx, d, spans):
    """``track_inflight`` of copies that each write exactly one span of shared memory (the
    boxes of one instruction), in order: ``spans``, ``(cta, mbarrier offset, lo, hi, (lowest,
    end) offset of the bytes)``; the callbacks, one a copy. (``_in_flight`` of each record, its
    steps inline: a multicast load's boxes land in many CTAs.)"""
    st, stride = state(ctx), ctx.shared.stride
    out = []
    put, writes = out.append, st.writes
    unc, us = st.uncounted, st.unc_spans
    for cta, off, lo, hi, span in spans:
        base = cta * stride
        rec = _Write(slice(base + lo, base + hi), d, cta, off, span, False)     # (``_uncounted``)
        unc[rec] = None
        us[span] = us.get(span, 0) + 1
        writes.append(rec)
        put(rec)                            # (``_landed``)
    st.n_inflight += len(out)
    return out


def _in_flight(st, rec):
    """Keep the copy record ``rec`` as in flight (counted when a check may meet it:
    ``_counts``); the callback its landing runs (``_landed``)."""
    _uncounted(st, rec)
    st.writes.append(rec)
    st.n_inflight += 1
    return _landed(rec)


def _landed(rec):
    """The callback ``track_inflight`` returns for the record ``rec``: the record itself
    (``_Write.__call__``)."""
    return rec


def _retire(st):
    """A record of ``st.writes`` went dead: the list is pruned once half of it is dead (its
    readers skip dead records), not at every landing."""
    st.dead += 1
    if 2 * st.dead > len(st.writes):
        st.writes = [w for w in st.writes if w.live]
        st.dead = 0


class _Rows:
    """Byte rows ``[start, start + size)`` (one per thread) of a ``cp.async``: a byte set for
    ``_has`` without spreading the rows over their bytes."""
    __slots__ = ("starts", "size")

    def __init__(self, starts, size):
        self.starts, self.size = starts, size


def _bump_rows(st, starts, size: int, by: int):
    """``_bump``, and ``st.blk`` of the blocks the rows touch (rows of at most a block)."""
    _bump(st, starts, size, by)
    if len(starts):
        b0, b1 = starts >> M.BLOCK_SHIFT, (starts + (size - 1)) >> M.BLOCK_SHIFT
        np.add.at(st.blk, b0, by)
        if (b1 != b0).any():
            np.add.at(st.blk, b1[b1 != b0], by)


def _bump(st, starts, size: int, by: int):
    """``st.inflight`` of the bytes of rows ``[start, start + size)`` += ``by``. Rows aligned to
    their power-of-two size of at least 4 bytes (every ``cp.async``) overlap only when they start
    together: when no two do (found on one scratch index, no sort), the four uint16 counters of
    each 4 bytes move at once (a uint64 view); else ``np.add.at`` byte by byte."""
    n = len(starts)
    if not n:
        return
    counts = st.inflight
    if size >= 4 and size & (size - 1) == 0 and not (starts & (size - 1)).any():
        q = starts >> 2
        distinct = True
        if n > 1:
            sc = st.scratch
            if sc is None:
                sc = st.scratch = shadow.scratch(len(counts) // 4, np.int32)
            ar = np.arange(n, dtype=np.int32)
            sc[q] = ar
            distinct = not (sc[q] != ar).any()
        if distinct:
            w = counts.view(np.uint64)
            e = q if size == 4 else (q[:, None] + np.arange(size // 4)).reshape(-1)
            if by > 0:
                w[e] += np.uint64(0x0001000100010001 * by)
            else:
                w[e] -= np.uint64(0x0001000100010001 * -by)
            return
    flat = (starts[:, None] + np.arange(size)).reshape(-1)
    if by > 0:
        np.add.at(counts, flat, np.uint16(by))
    else:
        np.subtract.at(counts, flat, np.uint16(-by))


def track_cp_async(ctx, banks, offs, size: int, d, starts=None, span=None):
    """The shared-memory destinations of one ``cp.async`` (``size`` bytes at each (bank,
    offset), one per thread) are in flight until ``cp.async.wait_group`` / ``wait_all`` (or
    ``cp.async.mbarrier.arrive``) completes them: a generic load or store of those bytes before
    that is reported. Returns ``(starts, record)``: the (threads,) flat first bytes and the
    record to hand to :func:`cp_async_landed`, or None when the sanitizer is off. The rows are
    counted in ``inflight`` only when a check first reads it (``_counts``). ``starts`` (int64)
    and ``span`` ((lowest, end) offset): what the caller computed of the destinations."""
    if not ctx.sanitize:
        return None
    st = state(ctx)
    size = int(size)
    if starts is None or span is None:
        o = M.signed(offs)
        starts = np.broadcast_to(np.asarray(banks, np.int64), o.shape) * ctx.shared.stride + o
        span = (int(o.min()), int(o.max()) + size) if o.size else (0, 0)
    rec = _Write(_Rows(starts, size), d, None, None)
    rec.rows = starts
    rec.span = span
    _uncounted(st, rec)
    st.writes.append(rec)
    st.n_inflight += 1
    return starts, rec


def cp_async_landed(ctx, tracked, done, remaining: int):
    """The copies of rows ``done`` (a bool mask) of a ``track_cp_async`` result completed;
    ``remaining``: how many of its rows are still pending after them."""
    st = ctx.async_proxy
    if st is None or tracked is None:
        return
    starts, rec = tracked
    if remaining == 0:                      # every row lands (no mask to apply)
        if rec.counted:
            _bump_rows(st, starts, rec.flat.size, -1)
        rec.rows = starts[:0]
    else:
        if rec.counted:
            _bump_rows(st, starts[done], rec.flat.size, -1)
        rec.rows = starts[~done]
    if remaining == 0 and rec.live:
        rec.live = False
        st.n_inflight -= 1
        st.n_counted -= rec.counted
        if not rec.counted:
            _uncounted_landed(st, rec)
        _retire(st)


def on_generic_load(ctx, g, banks, offs, nbytes, span=None):
    """A generic load of ``nbytes`` at each (bank, offset): report in-flight bytes. ``span``:
    (lowest, end) offset of the accesses when the caller has checked their bounds; ``g``: the
    group, or a function that makes it (a report needs it)."""
    st = ctx.async_proxy
    if st is None or not st.n_inflight:
        return
    if span is None:
        ctx.shared._check(offs, nbytes)
        counts = _counts_at(st, offs, nbytes)
    else:
        counts = _counts(st, *span) if len(offs) else None
    if counts is None:
        return
    starts = _starts(ctx, banks, offs)
    if not M.take_rows(counts, starts, nbytes).any():
        return
    flat = (starts[:, None] + np.arange(int(nbytes))).reshape(-1)
    bad = st.inflight[flat]
    if bad.any():
        k = int(np.argmax(bad))
        rec = _record_of(ctx, flat[k])
        init = ctx.shared.init
        if rec is not None and rec.cta is None and init is not None and not init[flat[k]]:
            return      # never written: the uninitialized-read check names the pending cp.async
        g = g() if callable(g) else g
        lane = min(k // max(int(nbytes), 1), g.n - 1)
        raise ctx.error(AsyncProxyError, _inflight_msg(ctx, flat[k], "the load reads"), g, lane)


def on_generic_store(ctx, g, banks, offs, nbytes, span=None, starts=None, aligned=False):
    """A generic store: report bytes an asynchronous copy still writes, or a bulk store still
    reads. ``span``: (lowest, end) offset of the accesses when the caller has checked their
    bounds, ``starts``: their flat first bytes when it has them, ``aligned``: every start is a
    multiple of ``nbytes``, a power of two (known to the caller)."""
    meets = _store_meets(ctx, banks, offs, nbytes, span, starts, aligned)
    if meets is None:
        return
    inflight, reading, starts = meets
    st = ctx.async_proxy
    nbytes = int(nbytes)
    flat = (starts[:, None] + np.arange(nbytes)).reshape(-1)
    if inflight:
        bad = st.inflight[flat]
        if bad.any():
            k = int(np.argmax(bad))
            raise ctx.error(AsyncProxyError, _inflight_msg(ctx, flat[k], "the store writes"), g,
                            min(k // max(nbytes, 1), g.n - 1))
    if reading:
        bad = _reads_hit(st.reads, flat)
        if bad.any():
            k = int(np.argmax(bad))
            f = flat[k]
            rec = next((r for r in reversed(st.reads) if _has(r.flat, f)), None)
            src = f"`{rec.d.text}` ({rec.d.where_line()})" if rec is not None and rec.d is not None \
                else "a bulk copy"
            raise ctx.error(AsyncProxyError,
                            f"the store overwrites {_where(ctx, f)} that {src} may still be reading "
                            f"through the async proxy: retire its bulk async-group first "
                            f"(cp.async.bulk.commit_group, then cp.async.bulk.wait_group.read)", g,
                            min(k // max(nbytes, 1), g.n - 1))


def generic_store_clear(ctx, banks, offs, nbytes, span, starts, aligned) -> bool:
    """Whether ``on_generic_store`` of a store (its arguments) has nothing to look at byte by
    byte: no byte of it can be in flight or read by a bulk store."""
    return _store_meets(ctx, banks, offs, nbytes, span, starts, aligned) is None


def _store_meets(ctx, banks, offs, nbytes, span, starts, aligned):
    """(whether a byte of a generic store may be in flight, whether one may be read by a bulk
    store, its flat first bytes) for ``on_generic_store``; None when neither."""
    st = ctx.async_proxy
    if st is None or not (st.n_inflight or st.reads):
        return None
    if span is None:
        ctx.shared._check(offs, nbytes)
        counts = _counts_at(st, offs, nbytes) if st.n_inflight else None
    else:
        counts = _counts(st, *span) if st.n_inflight and len(offs) else None
    if starts is None:
        starts = _starts(ctx, banks, offs)
    nbytes = int(nbytes)
    inflight = counts is not None and M.take_rows(counts, starts, nbytes).any()
    reading = bool(st.reads) and bool(st.rchunk[_row_chunks(M.signed(offs), nbytes, aligned)].any())
    if not (inflight or reading):
        return None
    return inflight, reading, starts


def _row_chunks(starts, nbytes: int, aligned=False):
    """The 16-byte chunks of rows ``[start, start + nbytes)``: (n,) when every row lies in one
    chunk, else (n, k) (the last chunk repeated where a row spans fewer)."""
    c0 = M.shifted(starts, 4)
    if nbytes <= 16 and (aligned or not len(starts) or int((starts & 15).max()) + nbytes <= 16):
        return c0
    c1 = (starts + (nbytes - 1)) >> 4
    return np.minimum(c0[:, None] + np.arange((nbytes + 30) // 16), c1[:, None])


def _reads_hit(reads, flat):
    """Per byte of ``flat`` (flat byte indices): whether a bulk read not yet retired reads it
    (its own bytes: ``rchunk`` only says a chunk holds some)."""
    bad = np.zeros(len(flat), bool)
    lo, hi = int(flat.min()), int(flat.max()) + 1
    for r in reads:
        fb = r.flat
        if isinstance(fb, slice):
            if fb.start < hi and lo < fb.stop:
                bad |= (flat >= fb.start) & (flat < fb.stop)
        else:
            bad |= np.isin(flat, fb)
    return bad
