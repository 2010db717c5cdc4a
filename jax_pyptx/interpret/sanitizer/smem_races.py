"""Shared-memory race detection (part of the sanitizer).

The interpreter runs the warps of a CTA in lock step, so a kernel that forgets a ``bar.sync``
between one warp's store to shared memory and another warp's load of it still computes the
right answer here, and the wrong one on a GPU. This tracker makes such bugs visible: every byte
of shared memory remembers the warp that last stored it and the warps that read it, each
stamped with the CTA's *synchronization epoch*, which advances whenever the CTA passes a
barrier (bar.sync / barrier.sync / bar.red, named barriers included), an mbarrier completes a
phase or a cluster barrier completes. Then

* a load of a byte that another warp stored in the current epoch is a read-after-write race;
* a store to a byte that another warp loaded in the current epoch is a write-after-read race;
* a store to a byte that another warp stored in the current epoch is a write-write race, and so
  are stores of one instruction by lanes of different warps to the same byte (the group runs
  several warps). When both store the same value, every order leaves the same bytes: the PTX
  memory model still calls it a data race, but hardware gives the defined result (Triton's
  prologues and histograms zero shared words from every warp), so it is a
  ``SanitizerWarning`` (``RaceTracker.warn``), a ``RaceError`` under ``sanitize="strict"``.

Lanes of one warp (``intra_load`` / ``intra_store``, for ``ld`` / ``st``): since independent
thread scheduling (sm_70) the lanes of a warp are not in lock step, so lanes exchanging shared
memory need a ``bar.warp.sync`` (``__syncwarp``) between the store and the load. Every warp has
a *sync interval* id that changes whenever the warp executes ``bar.warp.sync`` or a ``.sync``
collective (``shfl`` / ``vote`` / ``match`` / ``redux`` / ``elect``: ``warp_synced``) and
whenever its CTA passes a barrier (``advance``); every byte remembers the lane and interval of
its last store, and the interval of the last warp that read it with the lane that read it (or
"several lanes"), these tags kept one per 4-byte word while its four bytes agree (``lane_tags``).
Then, within one interval of one warp, a load of a byte another lane stored is a
read-after-write race, a store to a byte another lane loaded a write-after-read race, and a
store to a byte another lane stored a write-write race (a ``SanitizerWarning`` when both store
the same value, as between warps). Lanes of one warp in *one* instruction never race (one of
the stored values lands, the ISA's unspecified winner). This half of the tracker is
``lane_races.LaneRaces``; stores whose earlier tags are all of older intervals than every
storing warp's (the usual case) skip the lane-by-lane comparison.

Atomics and strong loads / stores (``.volatile``, ``.relaxed``, ``.acquire``, ``.release``:
flags that threads poll) are not tracked. Byte granularity: neighbouring bytes owned by
different warps never conflict.

Bookkeeping (between warps). The verdicts are those of per-byte state, but the state is kept
per access where that is exact: every 16-byte chunk of shared memory remembers the epoch of its
CTA in which it was last stored and last loaded, with the warp that did or "several" (one stamp
each: ``c_w`` / ``c_r``), and an access is only *recorded* (a pending row list: row
starts, size, warps, epochs), not spread over its bytes. A load needs the per-byte writer state
only when a chunk it reads was stored by another warp in the current epoch, a store needs the
per-byte reader (writer) state only when a chunk it writes was loaded (stored) by another warp
in it; only then are the pending rows of that kind applied to the per-byte arrays (made on
first use: a kernel that never comes near a race never allocates them; ``_flush_loads`` /
``_flush_stores``, in issue order) and the rows that hit checked byte by byte, with the
messages, lanes and addresses of the per-byte check. Pending rows of a past epoch
are dropped (their state could never be compared equal again). While every CTA is in one epoch
the chunk stamps themselves are deferred too (``_defer``; a copy's range, ``record_range``, as
one row): an access only notes the shared offsets it spans, and the stamps are applied, in issue
order, when a later access or range check reads chunks where one may lie; stamps of an epoch
every CTA has left are dropped unapplied (a past epoch's stamp never compares as current). A
pipelined GEMM that loads one stage while copies land in another never applies one. A store
whose chunks are checked anyway stamps them at once (a warp storing again into chunks that all
hold its own stamp of this epoch, an epilogue filling its staging buffer, has nothing to check
or stamp), and lanes of different warps storing the
same bytes in one instruction are looked for only where that shows rows of two warps in one
chunk (or where the stamps were deferred): per row when the rows are aligned to their size
(equal starts), else byte by byte; a layout found to have none is remembered (``_apart``: the
same CTAs and warps row by row with every offset moved by one amount, a copy's or an epilogue's
layout in the next stage, has none either). The chunks where deferred stamps lie are kept as a
bitmask per kind (a Python int, one bit per chunk of a CTA). And every access adds the blocks it
spans to its warp's set of the epoch (``warp_cover``): an access whose warps each stay clear of
the blocks of the other warps' sets (an epilogue's warps filling their own staging buffers, and
the TMA stores that read them) is not compared chunk by chunk, and its stamps stay deferred.

Distributed shared memory: an access of another CTA of the cluster (through a
``.shared::cluster`` address) counts as accessor ``32 + its rank`` (``cluster.REMOTE_WARP``) and
is ordered against the owner's accesses only by what synchronizes the cluster: a completed
``barrier.cluster`` phase with release arrivals, or a phase of the owner's mbarrier.
"""
from __future__ import annotations

import numpy as np

from ..state import shadow
from ..state.rows import flat_starts, shifted
from . import lane_tags
from .lane_races import _IV_LIMIT, _MISSING_WARP, _MULTI, LaneRaces, RaceFault  # noqa: F401 (re-exported)
from .race_ranges import _CODE, _SEVERAL, RangeChecks
from .warp_cover import ANY, WarpCover, span_bits, warp_hulls


class RaceTracker(RangeChecks, LaneRaces):
    def __init__(self, nbanks: int, stride: int, data=None):
        n = nbanks * stride
        self.stride = stride
        self.data = data                            # the space's bytes (same-value stores)
        self.warn = None                            # (RaceFault, warp, bank) -> None: same-value
                                                    # write-write races warn instead of raising
        # epochs count from 1, so every array starts as zeroed pages (0: no access yet)
        self.n = n
        self._wwarp = self._wepoch = None           # per byte: ``wwarp`` ... (made on first use)
        self._rmask = self._repoch = None
        self.epoch = np.ones(nbanks, np.int32)
        self._one = 1                               # the epoch of every CTA, when they share one
        self._emax, self._nmax = 1, nbanks          # the latest epoch, how many CTAs are in it
        # per 16-byte chunk: epoch << _CODE | (warp + 1) of its last store / load; the warp part
        # _SEVERAL when several warps accessed it in that epoch
        self.c_w = shadow.filled(n // 16, np.int64)        # (recycled: ``recycle``)
        self.c_r = shadow.filled(n // 16, np.int64)
        self._pl = []                               # pending loads, stores (module doc)
        self._lazy = {"r": [], "w": []}             # chunk stamps not applied yet (``_defer``),
        self._cover = {"r": 0, "w": 0}              # the chunks of a CTA where they lie (a bit per
                                                    # chunk: a Python int),
        self._lazy_rows = {"r": 0, "w": 0}          # their rows
        self._top = {"r": 0, "w": 0}                # latest epoch of a stamp applied to c_r / c_w
        self._ps = []
        self._npend = 0                             # rows pending in both
        self._scratch = None                        # per byte: a writer of the current store
        self._rscratch = {}                         # k -> the same per row of 2**k bytes
        self._bscratch = None                       # per byte: the value it stores (made on first use)
        self.iv = None                              # lanes of one warp: made by the first intra_* call
        self._memo = []                             # store layouts with no byte of two warps (``_apart``)
        self._wc = WarpCover()                      # blocks each warp accessed (``warp_cover``)

    # The per-byte state (module doc: applied only where a chunk shows a possible race; the
    # arrays are made on first use: tens of megabytes a kernel that never races never touches).
    @property
    def wwarp(self):
        """int16 per byte: the warp (within its CTA) that last stored it."""
        if self._wwarp is None:
            self._wwarp = np.zeros(self.n, np.int16)
        return self._wwarp

    @property
    def wepoch(self):
        """int32 per byte: the epoch of its CTA in which it was last stored."""
        if self._wepoch is None:
            self._wepoch = np.zeros(self.n, np.int32)
        return self._wepoch

    @property
    def rmask(self):
        """uint64 per byte: the warps (and remote CTAs, bit 32 + rank) that read it in ``repoch``."""
        if self._rmask is None:
            self._rmask = np.zeros(self.n, np.uint64)
        return self._rmask

    @property
    def repoch(self):
        """int32 per byte: the epoch of its CTA in which ``rmask``'s readers read it."""
        if self._repoch is None:
            self._repoch = np.zeros(self.n, np.int32)
        return self._repoch

    def recycle(self):
        """The batch is over: its most used arrays go to the next one (``shadow``)."""
        shadow.recycle(self.c_w, self.c_r, self._scratch, self._bscratch)
        if self.iv is not None:
            for t in (self.w_tag, self.r_tag):
                if t is not None:
                    t.recycle(self._iv_next)
            lane_tags.used(self._iv_next)

    def advance(self, banks):
        """The CTAs ``banks`` passed a synchronization point (one CTA, the usual case: an
        mbarrier phase or a named barrier, is bookkept on Python ints)."""
        if len(banks) == 1:
            b = int(banks[0])
            e = int(self.epoch[b]) + 1
            self.epoch[b] = e
            if e > self._emax:
                self._emax, self._nmax = e, 1
            elif e == self._emax:
                self._nmax += 1
            if self.iv is not None:
                W = len(self.iv) // len(self.epoch)
                self._renew(slice(b * W, (b + 1) * W), W)
        else:
            self.epoch[banks] += 1
            e = self.epoch
            self._emax = int(e.max())
            self._nmax = int(np.count_nonzero(e == self._emax))
            if self.iv is not None:
                W = len(self.iv) // len(self.epoch)
                b = np.asarray(banks, np.int64).reshape(-1)
                gw = (b[:, None] * W + np.arange(W)).reshape(-1)
                self._renew(gw, len(gw))
        self._one = self._emax if self._nmax == len(self.epoch) else None

    def advance_each(self, ctas):
        """``advance([c])`` for each CTA ``c`` of ``ctas`` in turn (Python ints; a CTA may come
        more than once: a warpgroup's named barrier each), at once: the same epochs, and each
        CTA's warps given new lane intervals once (a renewal right after another finds no access
        since: the second changes nothing the first did not, but the interval ids)."""
        u, k = np.unique(np.array(ctas, np.int64), return_counts=True)
        self.epoch[u] += k.astype(self.epoch.dtype)
        e = self.epoch
        self._emax = int(e.max())
        self._nmax = int(np.count_nonzero(e == self._emax))
        if self.iv is not None:
            W = len(self.iv) // len(e)
            gw = (u[:, None] * W + np.arange(W)).reshape(-1)
            self._renew(gw, len(gw))
        self._one = self._emax if self._nmax == len(e) else None

    def advance_all(self):
        self.epoch += 1
        self._emax += 1
        if self._one is not None:
            self._one += 1
        self._pl.clear()                # every pending row is of a past epoch now
        self._ps.clear()
        self._drop()                    # ... and every deferred chunk stamp (``_defer``)
        self._npend = 0
        if self.iv is not None:
            self._renew(slice(None), len(self.iv))

    def _bytes(self, banks, offs, nbytes):
        base = banks.astype(np.int64) * self.stride + offs.astype(np.int64)
        return base[:, None] + np.arange(nbytes)

    # ------------------------------------------------------------------ between warps
    def _chunks(self, starts, nbytes, aligned=False):
        """The 16-byte chunks of rows ``[start, start + nbytes)``: (n,) when every row lies in
        one chunk, else (n, k) (the last chunk repeated where a row spans fewer). ``aligned``:
        every start is a multiple of ``nbytes`` (a power of two), known to the caller."""
        c0 = shifted(starts, 4)
        if nbytes <= 16 and (aligned or len(starts) == 0 or int((starts & 15).max()) + nbytes <= 16):
            return c0
        c1 = (starts + (nbytes - 1)) >> 4
        return np.minimum(c0[:, None] + np.arange((nbytes + 30) // 16), c1[:, None])

    def _pend(self, lst, starts, nbytes, warps, ep):
        """Record rows of an access (``ep``: their epochs, or one int for all)."""
        lst.append((starts, int(nbytes), warps.astype(np.int64, copy=False), ep))
        self._npend += len(starts)
        if self._npend > _PEND_LIMIT:
            self._flush_loads()
            self._flush_stores()

    def _current(self, lst):
        """The pending rows of ``lst`` of their CTA's current epoch: [(starts, nbytes, warps,
        epochs)]; empties ``lst``."""
        out = []
        for starts, nb, warps, ep in lst:
            self._npend -= len(starts)
            starts = _rows(starts)
            ep = np.broadcast_to(np.asarray(ep, np.int32), starts.shape)
            keep = ep == self.epoch[starts // self.stride]
            if not keep.all():
                starts, warps, ep = starts[keep], warps[keep], ep[keep]
            if len(starts):
                out.append((starts, nb, warps, ep))
        lst.clear()
        return out

    def _flush_loads(self):
        """Apply the pending loads to the per-byte reader state (``rmask`` / ``repoch``)."""
        rows = self._current(self._pl)
        if not rows:
            return
        flat = np.concatenate([(s[:, None] + np.arange(nb)).reshape(-1) for s, nb, _, _ in rows])
        cur = np.concatenate([np.repeat(e, nb) for _, nb, _, e in rows])
        bits = np.concatenate([np.repeat(np.left_shift(np.uint64(1), w.astype(np.uint64)), nb)
                               for _, nb, w, _ in rows])
        stale = self.repoch[flat] != cur
        if stale.any():
            self.rmask[flat[stale]] = 0
        self.repoch[flat] = cur
        rm = self.rmask
        rm[flat] = rm[flat] | bits
        # bytes several rows read: the assignment kept one row's bits; or in the others' (each
        # round settles at least one more row of every such byte)
        lost = (rm[flat] & bits) != bits
        while lost.any():
            flat, bits = flat[lost], bits[lost]
            rm[flat] = rm[flat] | bits
            lost = (rm[flat] & bits) != bits

    def _flush_stores(self):
        """Apply the pending stores, in issue order, to the per-byte writer state."""
        rows = self._current(self._ps)
        if not rows:
            return
        flat = np.concatenate([(s[:, None] + np.arange(nb)).reshape(-1) for s, nb, _, _ in rows])
        self.wwarp[flat] = np.concatenate([np.repeat(w.astype(np.int16), nb) for _, nb, w, _ in rows])
        self.wepoch[flat] = np.concatenate([np.repeat(e, nb) for _, nb, _, e in rows])

    def flush(self):
        """Bring the per-byte arrays up to date (every pending access applied)."""
        self._flush_loads()
        self._flush_stores()

    def _stamps(self, banks, warps, ch):
        """(the chunk stamps of an access by warps ``warps`` of CTAs ``banks``, the lowest stamp
        of their current epoch: one int when every CTA of the batch is in one epoch (``_one``),
        else per row), both shaped for ``ch``."""
        if self._one is not None:
            floor = self._one << _CODE
            m = warps.astype(np.int64, copy=False) + (floor + 1)
        else:
            floor = self.epoch[banks].astype(np.int64) << _CODE
            m = floor | (warps + 1)
            if ch.ndim != 1:
                floor = floor[:, None]
        return (m if ch.ndim == 1 else m[:, None]), floor

    @staticmethod
    def _other(v, mine, floor):
        """Chunk stamps ``v`` of the current epoch (stamps of a CTA's chunks never pass its
        epoch: at least ``floor`` is the current one) left by another warp (or several)."""
        return (v >= floor) & (v != mine)

    def _hits(self, arr, ch, mine, floor, old=None):
        """(rows whose chunks another warp accessed in the current epoch (``arr``: ``c_w`` or
        ``c_r``; ``old``: ``arr[ch]`` when the caller has it) or None, the per-chunk mask)."""
        hit = self._other(arr[ch] if old is None else old, mine, floor)
        if not hit.any():
            return None, hit
        return np.flatnonzero(hit if hit.ndim == 1 else hit.any(axis=1)), hit

    def _stamp(self, arr, ch, mine, floor, hit=None, old=None):
        """Chunks ``ch`` accessed with stamps ``mine``; ``hit``: ``_other`` of their old stamps
        when the caller has it (False: none was hit), ``old``: the old stamps. Returns False
        when no two rows of different warps share a chunk (True when they may)."""
        if hit is None:
            hit = self._other(arr[ch] if old is None else old, mine, floor)
        some = hit is not False and bool(hit.any())
        new = np.where(hit, mine | _SEVERAL, mine) if some else mine
        arr[ch] = new
        mixed = arr[ch] != new          # another row of this access, of another warp, in the chunk
        if mixed.any():
            arr[ch[mixed]] |= _SEVERAL
            return True
        return some                     # rows of two warps meeting where both were hit agree

    # ------------------------------------------------------------------ deferred chunk stamps
    def _defer(self, kind, starts, nbytes, warps, lo, hi):
        """Record the chunk stamps of an access of the current epoch (``_one``) at shared
        offsets ``[lo, hi)`` of its CTAs without applying them: they are applied, in issue
        order, only when an access or a range reads the chunk stamps of that kind where a
        deferred one may lie (``_clear``), and dropped once every CTA has passed a barrier
        since (``advance_all``, ``_clear``, ``_settle``: stamps of a past epoch never compare
        as current)."""
        lst = self._lazy[kind]
        c0 = lo >> 4
        bits = ((1 << ((((hi - 1) >> 4) + 1) - c0)) - 1) << c0
        lst.append((starts, int(nbytes), warps, self._one, bits))
        self._cover[kind] |= bits
        rows = self._lazy_rows[kind] = self._lazy_rows[kind] + len(starts)
        if len(lst) > _LAZY_LIMIT or rows > _LAZY_ROWS:
            self._settle(kind)

    def _settle(self, kind):
        """Apply the deferred chunk stamps of ``kind`` ("r": ``c_r``, "w": ``c_w``)."""
        lst = self._lazy[kind]
        if not lst:
            return
        arr = self.c_r if kind == "r" else self.c_w
        low = self._one if self._one is not None else int(self.epoch.min())
        for starts, nb, warps, ep, _ in lst:
            if ep < low:                # of a past epoch of every CTA: never current again
                continue
            self._top[kind] = max(self._top[kind], ep)
            if len(starts) == 1:        # one row (a copy's range): a slice of chunks
                s0 = int(_rows(starts)[0])
                self._stamp_range(arr, s0, s0 + nb, ep, int(warps[0]))
                continue
            floor = ep << _CODE
            m = warps.astype(np.int64, copy=False) + (floor + 1)
            rows = _rows(starts)
            if nb > 16 and nb % 16 == 0 and not (rows & 15).any():     # copies' ranges: whole rows
                self._stamp_rows(arr, rows >> 4, nb >> 4, m[:, None], floor)
                continue
            ch = self._chunks(rows, nb)
            self._stamp(arr, ch, m if ch.ndim == 1 else m[:, None], floor)
        self._drop(kind)

    def _clear(self, kind, lo, hi) -> bool:
        """Whether no chunk at shared offsets ``[lo, hi)`` (of any CTA) can hold a stamp of
        ``kind`` of the current epoch: every applied stamp is older and no deferred one lies
        in those chunks. Only while every CTA is in one epoch (``_one``)."""
        one = self._one
        if one is None or self._top[kind] >= one:
            return False
        lst = self._lazy[kind]
        if not lst:
            return True
        if lst[-1][3] < one:            # all of a past epoch of every CTA: dropped
            self._drop(kind)
            return True
        if lst[0][3] < one:             # the first ones (issue order) are: never current again
            k = 1
            while lst[k][3] < one:
                k += 1
            for e in lst[:k]:
                self._lazy_rows[kind] -= len(e[0])
            del lst[:k]
            cover = 0
            for e in lst:
                cover |= e[4]
            self._cover[kind] = cover
        c0 = lo >> 4
        return not (self._cover[kind] >> c0) & ((1 << ((((hi - 1) >> 4) + 1) - c0)) - 1)

    def _drop(self, kind=None):
        """Forget the deferred chunk stamps (of ``kind``; None: both)."""
        for k in ("r", "w") if kind is None else (kind,):
            if self._lazy[k]:
                self._lazy[k].clear()
                self._cover[k] = 0
                self._lazy_rows[k] = 0

    @staticmethod
    def _span(offs, nbytes):
        """(lowest, end) shared offset of an access (not empty)."""
        return int(offs.min()), int(offs.max()) + int(nbytes)

    def _hulls(self, offs, nbytes, lo, hi, blocks):
        """(``warp_cover.warp_hulls`` of an access, or its whole span under ``ANY``, whether
        its warps' hulls are known disjoint)."""
        if blocks is not None:
            h = warp_hulls(offs, nbytes, blocks)
            if h is not None:
                return h
        return [(ANY, span_bits(lo, hi))], False

    def _covered(self, kind, hulls) -> bool:
        """Whether an access's warps (``hulls``) may meet chunks of ``kind`` another warp
        accessed in the current epoch (always while the CTAs are in different epochs)."""
        one = self._one
        return one is None or hulls[0][0] == ANY or not self._wc.clear(kind, one, hulls)

    def on_load(self, banks, offs, nbytes, warps, idx=None, span=None, starts=None, aligned=False,
                blocks=None):
        """A load by warps ``warps`` of ``nbytes`` at each (bank, offset): report a store by
        another warp in the current epoch; record the load (``span``: (lowest, end) offset of
        the accesses, ``starts``: their flat first bytes, ``aligned``: every start is a multiple
        of ``nbytes``, a power of two, ``blocks``: ``Group.warp_blocks`` of its rows, when the
        caller has them)."""
        if not len(offs):
            return
        if starts is None:
            starts = _Starts(banks, offs, self.stride)  # made when a check or a flush needs them
        lo, hi = self._span(offs, nbytes) if span is None else span
        hulls, _ = self._hulls(offs, nbytes, lo, hi, blocks)
        ch = None
        if self._covered("w", hulls) and not self._clear("w", lo, hi):
            self._settle("w")
            ch = self._chunks(_rows(starts), nbytes, aligned)
            mine, floor = self._stamps(banks, warps, ch)
            self._check_raw(banks, offs, nbytes, warps, idx, ch, mine, floor)
        if self._one is not None:
            self._defer("r", starts, nbytes, warps, lo, hi)
        else:
            self._settle("r")
            if ch is None:
                ch = self._chunks(_rows(starts), nbytes, aligned)
                mine, floor = self._stamps(banks, warps, ch)
            self._stamp(self.c_r, ch, mine, floor)
            if self._top["r"] < self._emax:
                self._top["r"] = self._emax
        self._wc.add("r", self._emax, hulls)
        self._pend(self._pl, starts, nbytes, warps, self._epochs(banks))

    def _check_raw(self, banks, offs, nbytes, warps, idx, ch, mine, floor):
        """A load's chunks ``ch`` that another warp stored in the current epoch, checked byte
        by byte (read-after-write)."""
        sel, _ = self._hits(self.c_w, ch, mine, floor)
        if sel is None:
            return
        self._flush_stores()
        idx = (idx if idx is not None else self._bytes(banks, offs, nbytes))[sel]
        ww = self.wwarp[idx]
        w = warps[sel]
        bad = (ww >= 0) & (ww != w[:, None]) & (self.wepoch[idx] == self.epoch[banks[sel]][:, None])
        if bad.any():
            j, k = np.argwhere(bad)[0]
            lane = int(sel[j])
            addr = int(offs[lane]) + int(k)
            raise RaceFault("race", lane, addr,
                            f"it reads shared address {addr:#x}{{where}} that {_who(int(ww[j, k]), int(warps[lane]))} "
                            f"stored since the last barrier: {_missing(int(ww[j, k]), int(warps[lane]))} "
                            f"between the store and this load", "shared")

    def quiet_store(self, offs, nbytes, span, blocks):
        """``on_store``'s ``hulls`` of a store (not empty; ``span``, ``blocks`` as for it) that
        meets no chunk another warp loaded or stored in the current epoch, so that recording it
        checks nothing byte by byte (and reports nothing); None when it may meet one."""
        lo, hi = span
        hulls = self._hulls(offs, nbytes, lo, hi, blocks)
        for kind in ("r", "w"):
            if self._covered(kind, hulls[0]) and not self._clear(kind, lo, hi):
                return None
        return hulls

    def on_store(self, banks, offs, nbytes, warps, vals=None, idx=None, span=None, starts=None,
                 aligned=False, blocks=None, hulls=None):
        """``vals``: the stored bytes (n, nbytes), to tell same-value write-write races apart
        (None: every write-write race is an error); ``idx``: the bytes, ``span``, ``starts``,
        ``aligned`` and ``blocks`` as for ``on_load``, when the caller has them; ``hulls``:
        ``quiet_store``'s answer."""
        if not len(offs):
            return
        if starts is None:
            starts = _Starts(banks, offs, self.stride)  # made when a check or the chunks need them
        lo, hi = self._span(offs, nbytes) if span is None else span
        hulls, apart = self._hulls(offs, nbytes, lo, hi, blocks) if hulls is None else hulls
        # (the per-warp sets first: a few machine words each, the deferred chunks' bits hundreds)
        war = self._covered("r", hulls) and not self._clear("r", lo, hi)
        ww = self._covered("w", hulls) and not self._clear("w", lo, hi)
        now = ww or self._one is None
        if war or now:
            starts = _rows(starts)
            ch = self._chunks(starts, nbytes, aligned)
            stamp, floor = self._stamps(banks, warps, ch)
            if war:
                self._settle("r")
                idx = self._check_war(banks, offs, nbytes, warps, idx, ch, stamp, floor)
        if now:
            self._settle("w")
            old = self.c_w[ch]
            if old.flat[0] == stamp.flat[0] and (old == stamp).all():
                # every chunk holds its row's own stamp already (a warp storing again where it
                # stored in this epoch): nothing another warp did to report, nothing to stamp,
                # and rows of two warps never share a chunk (they would hold one stamp)
                several = False
            else:
                whit = None
                if ww:
                    idx, whit = self._check_ww(banks, offs, nbytes, warps, vals, idx, ch, stamp, floor, old)
                # stamped now (the check read them anyway): rows of two warps that share a byte
                # share a chunk, and a shared chunk shows as mixed (``_stamp``)
                several = self._stamp(self.c_w, ch, stamp, floor, whit, old)
            if self._top["w"] < self._emax:
                self._top["w"] = self._emax
        else:
            self._defer("w", starts, nbytes, warps, lo, hi)
            several = True
        # (rows of two warps share no byte where the warps' hulls are apart)
        if several and not apart and len(warps) > 1 and not self._apart(banks, offs, nbytes, warps):
            self._same_instruction(banks, offs, nbytes, warps, vals, idx, starts)
        self._wc.add("w", self._emax, hulls)
        self._pend(self._ps, starts, nbytes, warps, self._epochs(banks))

    def _check_war(self, banks, offs, nbytes, warps, idx, ch, stamp, floor):
        """A store's chunks another warp loaded in the current epoch, checked byte by byte
        (write-after-read). Returns ``idx`` (the bytes, when they were made)."""
        old = self.c_r[ch]
        if int(old.max()) < (floor if isinstance(floor, int) else int(floor.min())):
            return idx                  # every chunk last loaded in an earlier epoch
        sel, _ = self._hits(self.c_r, ch, stamp, floor, old)
        if sel is None:
            return idx
        self._flush_loads()
        if idx is None:
            idx = self._bytes(banks, offs, nbytes)
        sx = idx[sel]
        mine = np.left_shift(np.uint64(1), warps[sel].astype(np.uint64))[:, None]
        readers = np.where(self.repoch[sx] == self.epoch[banks[sel]][:, None], self.rmask[sx],
                           np.uint64(0)) & ~mine
        if readers.any():
            j, k = np.argwhere(readers != 0)[0]
            lane = int(sel[j])
            addr = int(offs[lane]) + int(k)
            other = int(readers[j, k])
            w = (other & -other).bit_length() - 1
            raise RaceFault("race", lane, addr,
                            f"it overwrites shared address {addr:#x}{{where}} that {_who(w, int(warps[lane]))} loaded "
                            f"since the last barrier: {_missing(w, int(warps[lane]))} between that load and "
                            f"this store", "shared")
        return idx

    def _check_ww(self, banks, offs, nbytes, warps, vals, idx, ch, stamp, floor, old=None):
        """A store's chunks another warp stored in the current epoch, checked byte by byte
        (write-after-write; ``old``: their stamps, when the caller has them). Returns ``(idx,
        the per-chunk hit mask)``."""
        sel, whit = self._hits(self.c_w, ch, stamp, floor, old)
        if sel is None:
            return idx, False
        self._flush_stores()
        if idx is None:
            idx = self._bytes(banks, offs, nbytes)
        sx = idx[sel]
        ww = self.wwarp[sx]
        bad = (ww >= 0) & (ww != warps[sel][:, None]) & (self.wepoch[sx] == self.epoch[banks[sel]][:, None])
        if bad.any():
            new = self._new_bytes(None if vals is None else vals[sel], sx.shape)
            diff = bad if new is None else bad & (self.data[sx] != new)
            j, k = np.argwhere(diff if diff.any() else bad)[0]
            lane = int(sel[j])
            self._ww(offs, lane, k, int(ww[j, k]), int(warps[lane]), value=not diff.any(), bank=banks[lane])
        return idx, whit

    def _epochs(self, banks):
        """The current epoch of CTAs ``banks``: one int when they all share one."""
        return self._one if self._one is not None else self.epoch[banks]

    def _apart(self, banks, offs, nbytes, warps) -> bool:
        """Whether a store's rows are known to hold no byte stored by lanes of two warps: they
        are a layout found so before (``_same_instruction``: the same CTAs and warps row by
        row, every offset moved by one amount; a copy or an epilogue repeats its layout every
        loop iteration, in another stage of the buffer)."""
        memo = self._memo
        if not memo:
            return False
        key = (len(offs), int(nbytes))
        rel = bb = None
        for k, r, b, w in memo:
            if k != key:
                continue
            if rel is None:
                rel = (offs - offs[0]).tobytes()
            if r != rel:
                continue
            if bb is None:
                bb, wb = banks.tobytes(), warps.tobytes()
            if b == bb and w == wb:
                return True
        return False

    def _same_instruction(self, banks, offs, nbytes, warps, vals, idx, starts):
        """Lanes of different warps storing the same byte in this one instruction (a layout
        found to have none is remembered: ``_apart``)."""
        if warps.min() == warps.max():
            return self._remember(banks, offs, nbytes, warps)
        starts = _rows(starts)
        w = warps.astype(np.int16)
        if self._scratch is None:
            self._scratch = shadow.scratch(len(self.c_w) * 16, np.int16)
        if nbytes & (nbytes - 1) == 0 and not (starts & (nbytes - 1)).any():
            # rows aligned to their power-of-two size overlap exactly when they start together:
            # one entry per row of that size
            k = int(nbytes).bit_length() - 1
            sc = self._rscratch.get(k)
            if sc is None:
                sc = self._rscratch[k] = np.zeros(len(self._scratch) >> k, np.int16)
            q = starts >> k
            sc[q] = w
            if not (sc[q] != w).any():
                return self._remember(banks, offs, nbytes, warps)
        if idx is None:
            idx = self._bytes(banks, offs, nbytes)
        flat = idx.reshape(-1)
        w = np.repeat(w, nbytes)
        self._scratch[flat] = w
        other = self._scratch[flat] != w
        if other.any():
            new = self._new_bytes(vals, idx.shape)
            if new is not None:          # the byte the winning lane stores, against each lane's
                nb = new.reshape(-1)
                if self._bscratch is None:
                    self._bscratch = shadow.scratch(len(self._scratch), np.uint8)
                win = self._bscratch
                win[flat] = nb
                diff = other & (win[flat] != nb)
            else:
                diff = other
            j = int(np.argmax(diff if diff.any() else other))
            lane, k = divmod(j, nbytes)
            self._ww(offs, lane, k, int(self._scratch[flat[j]]), int(warps[lane]), same=True,
                     value=not diff.any(), bank=banks[lane])
        else:
            self._remember(banks, offs, nbytes, warps)

    def _remember(self, banks, offs, nbytes, warps):
        """A store's layout holds no byte of two warps (``_apart``): the last few kept."""
        memo = self._memo
        if len(memo) >= _MEMO:
            del memo[0]
        memo.append(((len(offs), int(nbytes)), (offs - offs[0]).tobytes(), banks.tobytes(), warps.tobytes()))

    def _new_bytes(self, vals, shape):
        if vals is None or self.data is None:
            return None
        return np.ascontiguousarray(vals).view(np.uint8).reshape(shape)

    def _ww(self, offs, lane, k, w, me, same=False, value=False, bank=0):
        """Report a write-write race; ``value``: both store the same value (a warning through
        ``self.warn`` where one is set)."""
        addr = int(offs[lane]) + int(k)
        when = "in this same instruction" if same else "since the last barrier"
        fix = "let one warp write it" if same else f"{_missing(w, me)} between the two stores, or let one warp write it"
        if value:
            f = RaceFault("race", int(lane), addr,
                          f"it stores to shared address {addr:#x}{{where}} the value that {_who(w, me)} also "
                          f"stored {when}: a data race by the PTX memory model, but every order leaves the same "
                          f"bytes ({fix})", "shared")
            if self.warn is not None:
                self.warn(f, me, int(bank))
                return
            raise f
        raise RaceFault("race", int(lane), addr,
                        f"it stores to shared address {addr:#x}{{where}} that {_who(w, me)} also stored "
                        f"{when}, a different value, with no barrier between them: which one the byte "
                        f"keeps is undefined ({fix})", "shared")


class _Starts:
    """The flat first bytes of accesses at (bank, offset), made when first asked for (a
    deferred load may never need them)."""
    __slots__ = ("banks", "offs", "stride", "_v")

    def __init__(self, banks, offs, stride):
        self.banks, self.offs, self.stride, self._v = banks, offs, stride, None

    def get(self):
        if self._v is None:
            self._v = flat_starts(self.banks, self.offs, self.stride)
        return self._v

    def __len__(self):
        return len(self.offs)


def _rows(starts):
    """The array of a ``_Starts`` (or the array itself)."""
    return starts.get() if type(starts) is _Starts else starts


_PEND_LIMIT = 1 << 18                    # pending rows applied (or dropped) beyond this many
_LAZY_LIMIT = 1024                       # deferred chunk stamps of a kind applied beyond this many
_LAZY_ROWS = 1 << 18                     # ... or beyond this many rows (those of the pending lists)
_MEMO = 8                                # store layouts remembered (``RaceTracker._apart``)

def warp_synced(ctx, g) -> None:
    """The threads of ``g`` executed ``bar.warp.sync`` or a ``.sync`` warp collective: their
    warps' shared accesses before it are ordered before those after it (module doc)."""
    race = ctx.shared.race
    if race is not None and race.iv is not None:
        race.warp_synced(g.warp_masks()[0], True)      # the group's warps (cached: ``check_sync``)


def _who(w: int, me: int) -> str:
    if w >= 32:
        return f"CTA rank {w - 32} of the cluster (through distributed shared memory)"
    return f"warp {w} of {'the CTA that owns it' if me >= 32 else 'this CTA'}"


def _missing(w: int, me: int) -> str:
    if w >= 32 or me >= 32:
        return ("a barrier.cluster (arrive.release + wait) or an mbarrier wait of the owning CTA "
                "is missing")
    return "a bar.sync (__syncthreads) is missing"
