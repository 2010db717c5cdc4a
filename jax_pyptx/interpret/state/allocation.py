"""A global, const or param allocation of ``FlatSpace`` (``memory``): its bytes and, for an
output that starts uninitialized, which of them a store wrote, kept as intervals
(``unwritten``) while every access is a range, then as flags per 16-byte chunk (``CHUNK``)
while every access is whole chunks, else per byte.
"""
from __future__ import annotations

import numpy as np

from . import shadow
from .nests import _nest_view, coalesce
from .rows import _ONES
from .unwritten import Unwritten

CHUNK = 16                     # bytes per flag of an output's written flags while accesses are whole chunks
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Allocation:
    __slots__ = ("index", "base", "size", "name", "data", "_views", "readonly", "_init", "input",
                 "items", "last_store", "_ibuf", "_undef", "_unit")

    def __init__(self, index, base, size, name, data, readonly=False):
        self.index, self.base, self.size, self.name = index, base, size, name
        self.data = data                  # uint8 array of length >= size (writable view)
        self._views = {}
        self.readonly = readonly
        self._init = None                 # uint8 per _unit bytes (1: written) of an output (``init``)
        self._unit = 1                    # bytes per flag of _init: 1, or CHUNK while every access
        #                                   since the intervals was whole chunks (``_flags``)
        self._undef = None                # the same as intervals (``unwritten.Unwritten``) while
        #                                   every access was a range; both None: all defined
        self._ibuf = None                 # _init's buffer, padded to 64 bytes (wide views: _rows_set)
        self.input = None                 # the argument it is an input of (stores refused); None: any
        self.items = None                 # (item bytes, item per %ctaid.z): vmap items (provenance)
        self.last_store = None            # Decoded of the last store traced to it (provenance)

    def start_uninitialized(self, lo: int = 0, hi: int | None = None):
        """Bytes ``[lo, hi)`` hold no value until a store writes them (an output buffer, as on
        a GPU): a load of them is an uninitialized read (``FlatSpace``). Kept as intervals
        (``unwritten``) until an access that is not a range needs the flags."""
        hi = self.size if hi is None else hi
        if self._init is not None:
            self.init[lo:hi] = 0
            return
        if self._undef is None:
            self._undef = Unwritten()
        self._undef.add(max(lo, 0), min(hi, self.size))

    @property
    def init(self):
        """uint8 per byte (1: written) of an output, made from the intervals (or the per-chunk
        flags) when first asked for; None: every byte is defined."""
        if self._undef is not None or self._unit != 1:
            self._flags(1)
        return self._init

    def padded_flags(self):
        """``init``'s buffer, padded with whole words past its end (what the row checks of
        ``rows`` read and set a word at a time), the flags made per byte first."""
        if self._undef is not None or self._unit != 1:
            self._flags(1)
        return self._ibuf

    def _flags(self, unit):
        """Make ``_init`` one flag per ``unit`` bytes (1 or ``CHUNK``) from the intervals, or per
        byte from the per-chunk flags. Per chunk needs every interval to start and end on a chunk
        (every chunk is then all written or all unwritten, as the accesses that mark them keep
        it); else the flags are per byte."""
        u = self._undef
        if u is None:                       # per chunk -> per byte
            c, cbuf = self._init, self._ibuf
            self._ibuf = shadow.scratch(-(-self.size // 64) * 64, np.uint8)
            full = len(c) - (self.size % CHUNK != 0)
            self._ibuf[:full * CHUNK].reshape(full, CHUNK)[...] = c[:full, None]
            self._ibuf[full * CHUNK:] = c[full] if full < len(c) else 1
            self._init, self._unit = self._ibuf[:self.size], 1
            shadow.recycle(cbuf)
            return
        if unit != 1 and any(a % unit or (b % unit and b != self.size) for a, b in u):
            unit = 1
        self._undef, self._unit = None, unit
        n = -(-self.size // unit)
        whole = list(u) == [(0, self.size)]
        # the whole buffer at once: zeroed pages (calloc), no pass over the bytes
        self._ibuf = shadow.filled(-(-n // 64) * 64, np.uint8, 0 if whole else 1)
        self._init = self._ibuf[:n]
        if not whole:
            for a, b in u:
                self._init[a // unit:-(-b // unit)] = 0

    def _chunks(self, off, strides, nb) -> bool:
        """Whether a nest's elements are whole chunks and the flags are (or can be made) per
        chunk (``_flags``)."""
        if self._unit == CHUNK or self._undef is not None:
            if off % CHUNK == 0 and nb % CHUNK == 0 and all(s % CHUNK == 0 for s in strides):
                if self._undef is not None:
                    self._flags(CHUNK)
                return self._unit == CHUNK
        return False

    def tracked(self) -> bool:
        """Whether some byte may be unwritten (an output's)."""
        return self._init is not None or bool(self._undef)

    def unwritten_in(self, lo: int, hi: int) -> bool:
        """Whether bytes ``[lo, hi)`` (offsets) may hold one no store wrote; True sends the
        caller to the per-byte flags (``init``)."""
        if self._undef is not None:
            return self._undef.meets(lo, hi)
        if self._init is None or hi <= lo:
            return False
        u = self._unit
        return not self._init[lo // u:-(-hi // u)].min()

    def nest_written(self, off, shape, strides, nb) -> bool:
        """Whether every byte of the elements of a nest (``nest``; first byte at offset
        ``off``) was written."""
        u = self._undef
        if u is not None and not u.meets(off, off + sum((c - 1) * s for c, s in zip(shape, strides)) + nb):
            return True
        shape, strides, nb = coalesce(shape, strides, nb)
        if self._chunks(off, strides, nb):
            return bool(_nest_view(self._init, 1, off // CHUNK, shape, [s // CHUNK for s in strides],
                                   nb // CHUNK).all())
        v, one = self._byte_nest(off, shape, strides, nb)
        return bool(v.all()) if one == 1 else bool((v == one).all())

    def mark_nest(self, off, shape, strides, nb):
        """The disjoint elements of a nest were stored: a dense one leaves the intervals, whole
        chunks the per-chunk flags (``_flags``)."""
        shape, strides, nb = coalesce(shape, strides, nb)
        u = self._undef
        if u is not None:
            hi = off + sum((c - 1) * s for c, s in zip(shape, strides)) + nb
            if not u.meets(off, hi):
                return
            n = 1
            for c in shape:
                n *= c
            if n * nb == hi - off:                          # disjoint elements that fill the range
                u.remove(off, hi)
                return
        if self._chunks(off, strides, nb):
            _nest_view(self._init, 1, off // CHUNK, shape, [s // CHUNK for s in strides], nb // CHUNK)[...] = 1
            return
        v, one = self._byte_nest(off, shape, strides, nb)
        v[...] = one

    def _byte_nest(self, off, shape, strides, nb):
        """(the per-byte flags of a nest's elements as a strided view, an item of all ones), up
        to 8 flags an item where the offset, strides and element size allow (``_ibuf`` holds
        ``init`` from its first byte)."""
        init = self.init
        u = 8
        while u > 1 and (off % u or nb % u or any(s_ % u for s_ in strides)):
            u >>= 1
        if u == 1:
            return _nest_view(init, 1, off, shape, strides, nb), 1
        return _nest_view(self._ibuf.view(_UINT[u]), u, off, shape, strides, nb // u), _ONES[u]

    def release_init(self):
        """The flags' buffer (or None), handed back at the end of a launch."""
        buf, self._ibuf, self._init, self._undef, self._unit = self._ibuf, None, None, None, 1
        return buf

    @property
    def end(self):
        return self.base + self.size

    def view(self, dtype):
        v = self._views.get(dtype)
        if v is None:
            isz = np.dtype(dtype).itemsize
            n = len(self.data) // isz
            v = self.data[: n * isz].view(dtype)
            self._views[dtype] = v
        return v

    def describe(self) -> str:
        return f"allocation #{self.index} ({self.name}, {self.size} bytes at {self.base:#x})"
