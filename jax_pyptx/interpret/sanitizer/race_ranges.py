"""A copy's shared ranges on the race tracker (part of the sanitizer, ``smem_races``): the
checks and records of whole ranges of bytes that ``RaceTracker`` inherits, and the functions the
async proxy applies to the boxes of TMA and bulk copies (``race_store_range`` /
``race_load_range``, one box; ``race_ranges``, the boxes of one instruction; ``async_proxy``
re-exports them).

A range is kept per chunk (``RaceTracker.c_w`` / ``c_r``: the 16-byte chunks' stamps, epoch <<
``_CODE`` | warp + 1) and, while every CTA is in one epoch, deferred as one row (``_defer``); the
ranges of one instruction's boxes are checked and recorded together (``ranges_hit``,
``record_ranges``), their chunks read and written whole rows at a time through a window view
when the ranges are whole chunks (``_windows``: a box of a TMA copy is 128-byte aligned).
"""
from __future__ import annotations

import numpy as np

from ..state import memory as M
from .warp_cover import span_bits

_CODE = 7                                # chunk stamps: epoch << _CODE | (warp + 1)
_SEVERAL = (1 << _CODE) - 1              # ... | _SEVERAL: several warps accessed the chunk


class RangeChecks:
    """``RaceTracker``'s methods for whole ranges (its state: ``smem_races``)."""

    def range_hit(self, kind: str, bank: int, lo: int, hi: int, warp: int) -> bool:
        """Whether a chunk of CTA ``bank``'s bytes ``[lo, hi)`` was loaded (``kind`` "r") or
        stored ("w") in its current epoch by a warp other than ``warp``; the per-byte state of
        that kind is then brought up to date (``async_proxy``'s range checks read it)."""
        if self._clear(kind, lo, hi) or not self._covered(kind, [(warp, span_bits(lo, hi))]):
            return False
        self._settle(kind)
        b = bank * self.stride
        arr = self.c_r if kind == "r" else self.c_w
        sl = slice((b + lo) >> 4, ((b + hi - 1) >> 4) + 1)
        floor = int(self.epoch[bank]) << _CODE
        if not self._other(arr[sl], floor | (warp + 1), floor).any():
            return False
        self._flush_loads() if kind == "r" else self._flush_stores()
        return True

    def record_range(self, kind: str, bank: int, lo: int, hi: int, warp: int):
        """A load ("r") or store ("w") by ``warp`` of CTA ``bank``'s bytes ``[lo, hi)``."""
        b = bank * self.stride
        starts, warps = np.array([b + lo], np.int64), np.array([warp], np.int64)
        lst = self._pl if kind == "r" else self._ps
        self._wc.add(kind, self._emax, [(warp, span_bits(lo, hi))])
        if self._one is not None:
            self._defer(kind, starts, hi - lo, warps, lo, hi)
            self._pend(lst, starts, hi - lo, warps, self._one)
            return
        self._settle(kind)
        ep = int(self.epoch[bank])
        self._stamp_range(self.c_r if kind == "r" else self.c_w, b + lo, b + hi, ep, warp)
        self._top[kind] = max(self._top[kind], ep)
        self._pend(lst, starts, hi - lo, warps, np.array([ep], np.int32))

    def ranges_hit(self, kind: str, banks, los, his, warps, shape=None) -> bool:
        """Whether ``range_hit`` could be true for one of several ranges (a copy instruction's
        boxes: bytes ``[los[i], his[i])`` of CTA ``banks[i]`` by ``warps[i]``, int64 arrays), all
        at once (no flush: a caller that gets True checks the ranges one by one). ``shape``:
        their ``_shape``, when the caller has it."""
        lo, hi, _, hulls = _shape(los, his, warps) if shape is None else shape
        if self._clear(kind, lo, hi) or not self._covered(kind, hulls):
            return False
        self._settle(kind)
        arr = self.c_r if kind == "r" else self.c_w
        starts, k = _whole_chunks(self.stride, banks, los, his)
        old = _windows(arr, k)[starts >> 4] if k else arr[_range_chunks(self.stride, banks, los, his)]
        floor = self.epoch[banks].astype(np.int64)[:, None] << _CODE
        return bool(self._other(old, floor | (warps[:, None] + 1), floor).any())

    def record_ranges(self, kind: str, banks, los, his, warps, shape=None):
        """``record_range`` of several ranges in order (int64 arrays and ``shape`` as for
        ``ranges_hit``): one deferred or stamped set of rows when they are of one size."""
        lo, hi, nb, hulls = _shape(los, his, warps) if shape is None else shape
        if nb is None:
            for args in zip(banks.tolist(), los.tolist(), his.tolist(), warps.tolist()):
                self.record_range(kind, *args)
            return
        self._wc.add(kind, self._emax, hulls)
        starts = banks * self.stride + los
        lst = self._pl if kind == "r" else self._ps
        if self._one is not None:
            self._defer(kind, starts, nb, warps, lo, hi)
            self._pend(lst, starts, nb, warps, self._one)
            return
        self._settle(kind)
        ep = self.epoch[banks]
        floor = ep.astype(np.int64)[:, None] << _CODE
        arr = self.c_r if kind == "r" else self.c_w
        if nb % 16 == 0 and not (starts & 15).any():
            self._stamp_rows(arr, starts >> 4, nb >> 4, floor | (warps[:, None] + 1), floor)
        else:
            self._stamp(arr, _range_chunks(self.stride, banks, los, his), floor | (warps[:, None] + 1), floor)
        self._top[kind] = max(self._top[kind], int(ep.max()))
        self._pend(lst, starts, nb, warps, ep.astype(np.int32))

    def _stamp_rows(self, arr, c0, k, mine, floor):
        """``_stamp`` of rows of ``k`` whole chunks from chunks ``c0`` (a window view: each row
        read and written whole, not chunk by chunk)."""
        win = _windows(arr, k)
        old = win[c0]
        if int(old.max()) < int(np.min(floor)):     # every chunk of an older epoch: no comparison
            new = mine
        else:
            new = np.where(self._other(old, mine, floor), mine | _SEVERAL, mine)
        win[c0] = new
        if len(c0) > 1 and int(np.diff(np.sort(c0)).min()) < k:
            mixed = win[c0] != new      # another row, of another warp, in the chunk
            if mixed.any():
                arr[(c0[:, None] + np.arange(k))[mixed]] |= _SEVERAL

    def _stamp_range(self, arr, lo, hi, ep, warp):
        """Chunks of flat bytes ``[lo, hi)`` accessed by ``warp`` in epoch ``ep`` (chunks all of
        older epochs, or all this warp's already: no comparison chunk by chunk)."""
        v = arr[lo >> 4:((hi - 1) >> 4) + 1]
        floor = ep << _CODE
        mine = floor | (warp + 1)
        top = int(v.max())
        if top < floor:
            v.fill(mine)
        elif top != mine or int(v.min()) != mine:
            v[...] = np.where(self._other(v, mine, floor), mine | _SEVERAL, mine)


def _shape(los, his, warps):
    """(lowest offset, end, the size of every range or None when they differ, ``warp_cover``
    hulls: each warp's ranges as one) of ranges ``[los[i], his[i])`` by ``warps[i]`` (any CTAs;
    a copy instruction's few boxes: on Python ints)."""
    ll, hl, ws = los.tolist(), his.tolist(), warps.tolist()
    lo, hi = min(ll), max(hl)
    nb = hl[0] - ll[0]
    if any(b - a != nb for a, b in zip(ll, hl)):
        nb = None
    w = ws[0]
    if ws.count(w) == len(ws):
        return lo, hi, nb, [(w, span_bits(lo, hi))]
    hull = {}
    for w, a, b in zip(ws, ll, hl):
        h = hull.get(w)
        hull[w] = (a, b) if h is None else (min(h[0], a), max(h[1], b))
    return lo, hi, nb, [(w, span_bits(a, b)) for w, (a, b) in hull.items()]


def _range_chunks(stride, banks, los, his):
    """The 16-byte chunks of ranges ``[los[i], his[i])`` of banks ``banks[i]``: (n, k), the
    last chunk of a range repeated where it spans fewer."""
    c0 = (banks * stride + los) >> 4
    c1 = (banks * stride + his - 1) >> 4
    return np.minimum(c0[:, None] + np.arange(int((c1 - c0).max()) + 1), c1[:, None])


def _whole_chunks(stride, banks, los, his):
    """(flat first bytes, chunks per range) of ranges of one size made of whole 16-byte chunks
    (a TMA box: ``_windows`` rows); (None, 0) when they are not."""
    nb = int(his[0] - los[0])
    if nb % 16 or (los & 15).any() or ((his - los) != nb).any():
        return None, 0
    return banks * stride + los, nb >> 4


def _windows(arr, k):
    """The runs of ``k`` consecutive entries of the 1-D array ``arr``, row ``i`` from entry
    ``i`` (a writable view; rows fancy-indexed are copied whole)."""
    return np.ndarray((len(arr) - k + 1, k), arr.dtype, arr, 0, (arr.itemsize, arr.itemsize))


# ----------------------------------------------------------------------------- copies
# A copy's whole box at once, by the issuing thread's warp, on ``smem_races.RaceTracker``'s state:
# one recorded range; its per-byte arrays (slices) are read only when a chunk of the range was
# accessed in the current epoch (``RaceTracker.range_hit``).
def race_store_range(race, bank: int, lo: int, hi: int, warp: int):
    """A store by ``warp`` of CTA ``bank`` to its shared bytes ``[lo, hi)``."""
    if race.range_hit("r", bank, lo, hi, warp):
        sl = slice(bank * race.stride + lo, bank * race.stride + hi)
        cur = race.epoch[bank]
        t = race.rmask.dtype.type
        readers = np.where(race.repoch[sl] == cur, race.rmask[sl], t(0)) & ~t(1 << int(warp))
        if readers.any():
            k = int(np.argmax(readers != 0))
            other = int(readers[k])
            w = (other & -other).bit_length() - 1
            who = f"warp {w} of this CTA" if w < 32 else f"CTA rank {w - 32} of the cluster"
            raise M.MemoryFault("race", 0, lo + k,
                                f"it overwrites shared address {lo + k:#x}{{where}} that {who} loaded since "
                                f"the last barrier: a bar.sync (or the mbarrier wait that frees the buffer) is "
                                f"missing between that load and this copy", "shared")
    race.record_range("w", bank, lo, hi, warp)


def race_load_range(race, bank: int, lo: int, hi: int, warp: int):
    """A load by ``warp`` of CTA ``bank`` of its shared bytes ``[lo, hi)``."""
    if race.range_hit("w", bank, lo, hi, warp):
        sl = slice(bank * race.stride + lo, bank * race.stride + hi)
        cur = race.epoch[bank]
        ww = race.wwarp[sl]
        bad = (ww >= 0) & (ww != warp) & (race.wepoch[sl] == cur)
        if bad.any():
            k = int(np.argmax(bad))
            w = int(ww[k])
            who = f"warp {w} of this CTA" if w < 32 else f"CTA rank {w - 32} of the cluster"
            raise M.MemoryFault("race", 0, lo + k,
                                f"it reads shared address {lo + k:#x}{{where}} that {who} stored since the "
                                f"last barrier: a bar.sync (__syncthreads) is missing between the store and "
                                f"this copy", "shared")
    race.record_range("r", bank, lo, hi, warp)


def race_ranges(race, kind: str, banks, los, his, warps) -> bool:
    """The ranges of one copy instruction's boxes at once: ``kind`` "w" (it writes them, as
    ``race_store_range``) or "r" (it reads them, as ``race_load_range``) of bytes ``[los[i],
    his[i])`` of CTA ``banks[i]`` by ``warps[i]`` (int64 arrays). True when no range can race:
    all are recorded; False: none is, and the caller checks them one by one, in order."""
    shape = _shape(los, his, warps)
    if race.ranges_hit("r" if kind == "w" else "w", banks, los, his, warps, shape):
        return False
    race.record_ranges(kind, banks, los, his, warps, shape)
    return True
