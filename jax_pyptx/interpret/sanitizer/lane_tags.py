"""Per-byte tags of shared memory kept per 4-byte word (the race tracker's lanes-of-one-warp
state, ``smem_races.RaceTracker.intra_load`` / ``intra_store``).

Every byte of shared memory carries an int32 tag (the interval and lane of its last store, or
of its readers). Loads and stores of whole aligned words (``.b32`` and wider, the common case)
give the four bytes of a word one tag, so the tags are kept one per word (``w``): a word of
``MIXED`` has bytes with different tags, kept byte by byte in ``b``. An access of whole aligned
words reads and writes the word tags (a quarter of the entries, or fewer); one that is not
(a byte, a half word, a misaligned vector) or that meets a ``MIXED`` word first spreads the
words it touches to ``b`` (``_spread``), works byte by byte and, when it wrote, folds the words
whose four bytes agree back into one tag (``promote``). Every tag read is the per-byte tag, so
the checks built on them are those of per-byte state.

Interval ids grow across batches (``first_id``, ``used``): every tag a finished batch left in its
word array names an interval below any a later batch hands out, so the array goes to the next
batch as it is (``recycle``, ``LaneTags(base=...)``) instead of being refilled with zeros: an old
tag never matches a current interval. (Not an array holding a ``MIXED`` word, whose -1 would.)
"""
from __future__ import annotations

import threading

import numpy as np

from ..state import rows as R
from ..state import shadow

MIXED = -1                       # word tag: its bytes carry different tags (``b``)
ROWS, WORDS, BYTES = 2, 1, 0     # ``LaneTags.layout``
ID_LIMIT = (1 << 25) - (1 << 16)  # interval ids: 64 * id fits an int32

_free: list = []                 # [(word array of a finished batch, the end of its interval ids)]
_KEEP_BYTES = 64 << 20           # ... at most this many bytes of them (the rest: ``shadow``)
_next = 1                        # the lowest interval id no finished batch used
_lock = threading.Lock()


def first_id(n: int) -> int:
    """The first interval id of a batch's ``n`` warps (ids start over, and the arrays waiting
    are refilled, when they near ``ID_LIMIT``)."""
    global _next
    with _lock:
        if _next + n >= ID_LIMIT // 2:
            _next = 1
            shadow.recycle(*(a for a, _ in _free))
            _free.clear()
        return _next


def used(end: int) -> None:
    """A batch's interval ids ended below ``end``."""
    global _next
    with _lock:
        _next = max(_next, end)


class LaneTags:
    """Tags of ``n`` bytes, none (0, or a tag of a finished batch's interval below ``base``: the
    lowest id this batch uses) to begin with."""

    def __init__(self, n: int, base: int = 0):
        self.w = _reuse((n + 3) >> 2, base)              # per word: the tag of its 4 bytes, or MIXED
        if self.w is None:
            self.w = shadow.filled((n + 3) >> 2, np.int32)
        self.b = None                                       # per byte, for MIXED words (made on first use)
        self.mixed = False                                  # some word may be MIXED
        self._views = {}                                    # k -> ``_rows(k)``

    def recycle(self, end: int = 0):
        """The batch is over; its interval ids ended below ``end`` (0: unknown, refill)."""
        shadow.recycle(self.b)
        if end and not self.mixed:
            with _lock:
                if len(_free) < 4 and sum(a.nbytes for a, _ in _free) + self.w.nbytes <= _KEEP_BYTES:
                    _free.append((self.w, end))
                    return
        shadow.recycle(self.w)

    def clear(self):
        """Every tag back to 0."""
        self.w.fill(0)
        self.mixed = False

    @staticmethod
    def layout(starts, nbytes, aligned=False) -> int:
        """How rows ``[start, start + nbytes)`` lie on the words: ``ROWS`` (whole words, every
        row aligned to its power-of-two size: one item per row), ``WORDS`` (whole aligned
        words) or ``BYTES``. ``aligned``: the caller knows every start is a multiple of
        ``nbytes``, a power of two."""
        if nbytes & 3:
            return BYTES
        if aligned:
            return ROWS
        if not len(starts):
            return ROWS if nbytes & (nbytes - 1) == 0 else WORDS
        m = int(np.bitwise_or.reduce(starts))
        if nbytes & (nbytes - 1) == 0 and not m & (nbytes - 1):
            return ROWS
        return WORDS if not m & 3 else BYTES

    @staticmethod
    def items(starts, nbytes):
        """The item index of each row of a ``ROWS`` layout (``take`` / ``put`` ``q``: one for
        every ``LaneTags``)."""
        return R.shifted(starts, (nbytes).bit_length() - 1)

    def take(self, starts, nbytes, lay, q=None):
        """(the tags of rows ``[start, start + nbytes)`` per unit, the unit: 4 (one tag per word,
        (n, nbytes // 4)) or 1 (per byte, (n, nbytes))); ``lay``: ``layout``; ``q``: ``items``
        of a ``ROWS`` layout, when the caller has them."""
        if lay != BYTES:
            k = nbytes >> 2
            if lay == ROWS:
                v, sh = self._rows(k)
                t = v[starts >> sh if q is None else q].view(np.int32).reshape(-1, k)
            else:
                t = self.w[(starts >> 2)[:, None] + np.arange(k)]
            if not self.mixed or not (t < 0).any():
                return t, 4
        self._spread(starts, nbytes)
        return R.take_rows(self.b, starts, nbytes), 1

    def _rows(self, k):
        """(the word tags seen as one item per ``k`` words, log2 of the item's bytes)."""
        v = self._views.get(k)
        if v is None:
            if k == 1:
                v = self.w
            elif k == 2:
                v = self.w.view(np.int64)
            else:
                v = self.w.view(np.dtype((np.void, 4 * k)))
            v = self._views[k] = (v, (4 * k).bit_length() - 1)
        return v

    def words(self, q, nbytes):
        """The word tags (n, nbytes // 4) of a ``ROWS`` layout's rows at items ``q``, as they
        are (``MIXED`` words included)."""
        k = nbytes >> 2
        return self._rows(k)[0][q].view(np.int32).reshape(-1, k)

    def at(self, starts, nbytes, unit):
        """(array, the rows' indices into it (n, nbytes // unit)) for unit 4 (words) or 1."""
        if unit == 4:
            return self.w, (starts >> 2)[:, None] + np.arange(nbytes >> 2)
        return self.b, starts[:, None] + np.arange(nbytes)

    def put(self, starts, nbytes, unit, vals, lay, q=None):
        """Set the tags of rows ``[start, start + nbytes)``: ``vals`` (n, nbytes // unit) int32,
        contiguous, per unit; unit 4 only for whole aligned words (``lay`` not ``BYTES``), whose
        bytes all get the word's value (a row written twice keeps the later row). After byte
        writes, ``promote``. ``q``: as for ``take``."""
        if unit == 4:
            k = nbytes >> 2
            if lay == ROWS:
                v, sh = self._rows(k)
                v[starts >> sh if q is None else q] = vals.view(v.dtype).reshape(-1)
            else:
                self.w[(starts >> 2)[:, None] + np.arange(k)] = vals
            return
        self._spread(starts, nbytes)
        R.put_rows(self.b, starts, nbytes, vals)

    def _spread(self, starts, nbytes):
        """The words touched by rows ``[start, start + nbytes)`` kept byte by byte (MIXED)."""
        if self.b is None:
            self.b = shadow.filled(len(self.w) * 4, np.int32)
        q = ((starts[:, None] + np.arange(nbytes)) >> 2).reshape(-1)
        v = self.w[q]
        one = v != MIXED
        if one.any():
            q = q[one]
            self.b[(q * 4)[:, None] + np.arange(4)] = v[one][:, None]
            self.w[q] = MIXED
            self.mixed = True

    def promote(self, starts, nbytes):
        """Words touched by rows ``[start, start + nbytes)`` whose four bytes agree kept as one
        tag again (after byte writes)."""
        q = ((starts[:, None] + np.arange(nbytes)) >> 2).reshape(-1)
        q = q[self.w[q] == MIXED]
        if not len(q):
            return
        bb = self.b[(q * 4)[:, None] + np.arange(4)]
        same = (bb == bb[:, :1]).all(axis=1)
        self.w[q[same]] = bb[same, 0]


def _reuse(length: int, base: int):
    """A waiting word array of ``length`` whose tags are all of intervals below ``base``."""
    if base <= 1:
        return None
    with _lock:
        for i, (a, end) in enumerate(_free):
            if len(a) == length and end <= base:
                del _free[i]
                return a
    return None
