"""Per-byte arrays of the interpreter's memory (definedness flags, race and in-flight state)
handled a row at a time: ``[start, start + nbytes)`` rows of a flat array set, compared, taken
and put through views whose items are a whole row (or the widest power of two dividing it)
instead of a gather of every byte; and the spans of banked memory (one per CTA) a group of rows
lies in."""
from __future__ import annotations

import numpy as np

_ONES = {1: 0x01, 2: 0x0101, 4: 0x01010101, 8: 0x0101010101010101}


def signed(offs):
    """Byte offsets (checked: below 2**63) as int64, a view where they are uint64."""
    o = np.asarray(offs)
    return o.view(np.int64) if o.dtype == np.uint64 else o.astype(np.int64, copy=False)


def flat_starts(banks, offs, stride: int):
    """The flat first bytes of accesses at (bank, offset) of a banked space of ``stride`` bytes
    a bank (offsets checked: below 2**63)."""
    return banks.astype(np.int64, copy=False) * stride + signed(offs)


_LAST = (None, {})                   # (the starts array ``shifted`` saw last, its shifts)


def shifted(starts, k: int):
    """``starts >> k`` for an int64 array of row starts, made once per array: one store's
    checks (its bounds, the race trackers, the written flags) index by the same rows' chunks
    and items. Only the last array's shifts are kept (a tuple read and replaced whole, so
    concurrent launches never see another's)."""
    global _LAST
    last = _LAST
    if last[0] is starts:
        got = last[1].get(k)
        if got is None:
            got = last[1][k] = starts >> k
        return got
    got = starts >> k
    _LAST = (starts, {k: got})
    return got


BLOCK_SHIFT = 8                      # coarse per-block flags (``BankedSpace.dirty_blk``, the
BLOCK = 1 << BLOCK_SHIFT             # async proxy's in-flight counts): blocks of 256 bytes


def mark_blocks(blk, starts, nbytes):
    """Set the entries of ``blk`` (one per ``BLOCK`` bytes) of the blocks rows ``[start, start +
    nbytes)`` touch."""
    nbytes = int(nbytes)
    if not len(starts):
        return
    b0, b1 = starts >> BLOCK_SHIFT, (starts + (nbytes - 1)) >> BLOCK_SHIFT
    if nbytes > BLOCK:                  # (the last block repeated where a row spans fewer)
        blk[np.minimum(b0[:, None] + np.arange(-(-nbytes // BLOCK) + 1), b1[:, None])] = 1
        return
    blk[b0] = 1
    if (b1 != b0).any():
        blk[b1] = 1


def block_spans(spans) -> tuple:
    """``bank_spans``' spans in blocks of ``BLOCK`` bytes (the blocks they touch), for the
    per-block arrays (``span_views`` with a pitch of ``stride >> BLOCK_SHIFT``)."""
    b, lo, hi, lined = spans
    return b, lo >> BLOCK_SHIFT, ((hi - 1) >> BLOCK_SHIFT) + 1, lined


def bank_spans(banks, lo, hi) -> tuple:
    """Spans ``[lo[i], hi[i])`` of bank ``banks[i]`` merged per bank into one from the lowest to
    the highest offset (a superset: for checks that every entry is clear): ``(banks, lo, hi,
    lined_up)``, ``lined_up`` when the merged spans are at the same offsets of consecutive banks
    (the operands of a batch of CTAs: one 2-D view, ``span_views``)."""
    b, lo, hi = np.asarray(banks, np.int64), np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    key = (b.tobytes(), lo.tobytes(), hi.tobytes())      # an operand's spans come back: memoised
    got = _SPANS.get(key)
    if got is None:
        if len(_SPANS) > 512:
            _SPANS.clear()
        got = _SPANS[key] = _bank_spans(b, lo, hi)
    return got


_SPANS: dict = {}


def _bank_spans(b, lo, hi) -> tuple:
    if len(b) > 1:
        if not (b[1:] >= b[:-1]).all():
            order = np.argsort(b, kind="stable")
            b, lo, hi = b[order], lo[order], hi[order]
        cut = np.flatnonzero(b[1:] != b[:-1]) + 1
        if len(cut) < len(b) - 1:               # a bank with several spans
            at = np.concatenate([[0], cut])
            b, lo, hi = b[at], np.minimum.reduceat(lo, at), np.maximum.reduceat(hi, at)
    n = len(b)
    lined = n > 1 and (lo == lo[0]).all() and (hi == hi[0]).all() and int(b[-1] - b[0]) == n - 1
    return b, lo, hi, lined


def span_views(arr, stride, spans) -> list:
    """The entries of ``bank_spans``' spans in a per-byte array of banked memory (``stride``
    entries per bank): one 2-D view (a row per bank) when they line up, else a view per bank."""
    b, lo, hi, lined = spans
    if lined:                   # consecutive banks: rows of a 2-D view of their bytes
        b0 = int(b[0])
        return [arr[b0 * stride:(b0 + len(b)) * stride].reshape(len(b), stride)[:, int(lo[0]):int(hi[0])]]
    return [arr[int(c) * stride + int(x):int(c) * stride + int(z)] for c, x, z in zip(b, lo, hi)]


def _unit(buf, starts, nbytes):
    """The widest item (a power of two of bytes, up to 64) that rows ``[start, start +
    nbytes)`` of the uint8 array ``buf`` are made of: it divides ``nbytes``, every start and the
    length of ``buf``."""
    u = 64
    while u > 1 and (nbytes % u or len(buf) % u):
        u >>= 1
    while u > 1 and (starts & (u - 1)).any():
        u >>= 1
    return u


def _words(buf, starts, nbytes):
    """(view of ``buf`` with items of the rows' unit, item indices of the rows: (n,) when a row
    is one item, a filled item)."""
    u = _unit(buf, starts, nbytes)
    if u == 1:
        v, q = buf, starts
    else:
        v = buf.view(_ITEM[u])
        q = starts >> (u.bit_length() - 1)
    k = nbytes // u
    return v, (q if k == 1 else q[:, None] + np.arange(k)), _FILL[u]


FEW_ROWS = 8          # rows at most that ``_rows_set`` sets a slice each


def _rows_set(buf, starts, nbytes):
    """Set bytes ``[start, start + nbytes)`` of the per-byte flag array ``buf`` (uint8, 0 / 1)
    to 1, an item of up to 64 bytes at a time where the rows allow; a few rows (``FEW_ROWS``:
    a role's elected threads initializing mbarriers) a slice each."""
    if len(starts) <= FEW_ROWS:
        nbytes = int(nbytes)
        at = starts.tolist()
        if not at or (min(at) >= 0 and max(at) + nbytes <= len(buf)):   # (else the gather's IndexError)
            for s in at:
                buf[s:s + nbytes] = 1
            return
    v, idx, one = _words(buf, starts, int(nbytes))
    v[idx] = one


def _rows_defined(buf, starts, nbytes) -> bool:
    """Whether every byte of rows ``[start, start + nbytes)`` of ``buf`` is 1."""
    if not len(starts):
        return True
    v, idx, _ = _words(buf, starts, int(nbytes))
    got = v[idx]
    if got.dtype.kind == "V":
        return bool((got.view(np.uint64) == _ONES[8]).all())
    return bool((got == _ONES[got.dtype.itemsize]).all())


def row_view(arr, starts, nbytes):
    """``(view, item indices)``: the 1-D per-byte array ``arr`` (any dtype: one entry per byte)
    seen as one item per row ``[start, start + nbytes)``, when every row is aligned to its
    power-of-two size; else None."""
    if nbytes & (nbytes - 1) or len(arr) % nbytes or (nbytes > 1 and (starts & (nbytes - 1)).any()):
        return None
    if nbytes == 1:
        return arr, starts
    return arr.view(np.dtype((np.void, nbytes * arr.itemsize))), starts >> (nbytes.bit_length() - 1)


def take_rows(arr, starts, nbytes):
    """``arr[starts[:, None] + arange(nbytes)]`` (one index per row when ``row_view`` allows)."""
    nbytes = int(nbytes)
    r = row_view(arr, starts, nbytes)
    if r is None:
        return arr[starts[:, None] + np.arange(nbytes)]
    v, q = r
    return v[q].view(arr.dtype).reshape(len(q), nbytes)


def put_rows(arr, starts, nbytes, vals):
    """``arr[starts[:, None] + arange(nbytes)] = vals`` (``vals`` broadcast to (n, nbytes); a
    row written twice keeps the later row, as a fancy-index assignment does)."""
    nbytes = int(nbytes)
    r = row_view(arr, starts, nbytes)
    if r is None:
        arr[starts[:, None] + np.arange(nbytes)] = vals
        return
    v, q = r
    rows = np.ascontiguousarray(np.broadcast_to(vals, (len(q), nbytes)), arr.dtype)
    v[q] = rows.view(v.dtype).reshape(len(q))


_ITEM = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64),
         16: np.dtype((np.void, 16)), 32: np.dtype((np.void, 32)), 64: np.dtype((np.void, 64))}
_FILL = {1: 1, 2: _ONES[2], 4: _ONES[4], 8: _ONES[8],
         **{u: np.frombuffer(b"\x01" * u, _ITEM[u])[0] for u in (16, 32, 64)}}
