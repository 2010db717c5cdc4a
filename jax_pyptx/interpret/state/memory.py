"""Address spaces of the interpreter and their sanitizer checks.

* ``FlatSpace``: a table of allocations at distinct addresses (global, const, kernel params).
  Every access is resolved to one allocation and bounds- and alignment-checked; a miss names
  the allocation it was nearest to. An output buffer (``launch(..., outputs=...)``) starts
  uninitialized, as on a GPU: its allocation tracks which bytes were written and a load (or an
  atomic) of a byte nothing wrote is reported; at the end of the launch the bytes still unwritten
  are reported too (``launch``). An input buffer (``launch(..., inputs=...)``) refuses stores
  and atomics (``Allocation.input``). A tensor batched on the grid by ``jax.vmap`` splits into
  per-item parts (``Allocation.items``) that ``provenance`` checks one by one. An allocation
  and its written-byte bookkeeping are ``allocation.Allocation``.
* ``BankedSpace``: one bank per CTA (shared) or per thread (local); an address is an offset
  into the bank of the accessing thread. Shared memory tracks which bytes were written so a read
  of uninitialized shared memory is reported.

Generic addresses: global allocations live at their own addresses (generic == global, as on
the GPU); the shared, local, const and param windows are fixed ranges of the generic space.

Every space counts its writes in ``version`` (``store`` and ``mark_init`` do; code that writes
through a ``view`` directly, as atomics do, adds 1): the no-progress detector (``progress``)
knows from it that no memory changed while a loop went round.
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np

from . import shadow
from .allocation import _UINT, CHUNK, Allocation  # noqa: F401 (re-exported)
from .nests import FAST_MIN, Span, _nest_view, disjoint, nest, span_of  # noqa: F401
from .rows import (_FILL, _ITEM, _ONES, BLOCK, BLOCK_SHIFT, _rows_defined, _rows_set, bank_spans, block_spans, flat_starts, signed,  # noqa: F401
                   mark_blocks, put_rows, row_view, shifted, span_views, take_rows)

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_WINDOW = 0x0100_0000_0000
LOCAL_WINDOW = 0x0200_0000_0000
CONST_BASE = 0x0300_0000_0000
PARAM_BASE = 0x7000_0000            # kernel params: 32-bit addressable, like the constant bank
PARAM_SIZE = 0x0100_0000
CONST_SIZE = 1 << 32
WINDOW_SIZE = 1 << 32          # size of the shared / local windows in the generic space

M_WINDOW_HINT = 1 << 32
_U64 = 1 << 64


def _vector(view_of, nb, off):
    """A gather index for ``nb``-byte vectors at byte offsets ``off`` (all multiples of
    ``nb``) into ``view_of(void nb)``: one element per vector, where indexing ``count``
    elements per lane costs a 2-D gather."""
    if off.dtype == np.int64 and _pow2(nb):       # (row starts: shared with the other checks)
        return view_of(np.dtype((np.void, nb))), shifted(off, nb.bit_length() - 1)
    return view_of(np.dtype((np.void, nb))), (off // nb).astype(np.int64, copy=False)


def _pow2(x):
    return x & (x - 1) == 0


def _misaligned(addrs, align):
    """Bool per address: not a multiple of ``align``."""
    if _pow2(align):
        return (addrs & np.uint64(align - 1)) != 0
    return (addrs % np.uint64(align)) != 0


class MemoryFault(Exception):
    """Raised by an access; the machine turns it into an ``InterpreterError`` that names the
    instruction and the thread. ``lane`` indexes the active threads of the access."""

    def __init__(self, kind: str, lane: int, address: int, detail: str, space: str = ""):
        super().__init__(detail)
        self.kind, self.lane, self.address, self.detail, self.space = kind, lane, address, detail, space


class FlatSpace:
    """Allocations at distinct addresses: the global, const and param state spaces."""

    def __init__(self, kind: str, base: int):
        self.kind = kind
        self.allocs: list[Allocation] = []
        self.version = 0                  # writes so far (see the module docstring)
        self._next = base
        self._arrays = None                 # (bases, ends) as arrays, made on first use
        self._base_ints: list[int] = []     # the bases as ints, ascending (``find``)
        self.counter = None         # Stats.global_access of an opted-in launch (stats.py)
        self.tracks_init = False    # some allocation starts uninitialized (Allocation.init)
        self.item_mask = None       # bool per allocation: split into vmap items (Allocation.items)

    def add(self, data: np.ndarray, name: str, align: int = 256, readonly=False) -> Allocation:
        """Register ``data`` (uint8, modified in place by stores) and give it an address."""
        size = int(data.nbytes)
        base = -(-self._next // align) * align
        a = Allocation(len(self.allocs), base, size, name, data.reshape(-1).view(np.uint8), readonly)
        self.allocs.append(a)
        # keep a guard gap after every allocation so a small overrun is never another's byte
        self._next = base + max(size, 1) + 4096
        self._arrays = None
        self._base_ints.append(base)
        return a

    def _tables(self):
        """(first addresses, ends) of the allocations, ascending, as arrays: made when first
        asked after an ``add`` (a launch adds a dozen before anything looks)."""
        if self._arrays is None:
            self._arrays = (np.array([x.base for x in self.allocs], np.uint64),
                            np.array([x.end for x in self.allocs], np.uint64))
        return self._arrays

    @property
    def _bases(self):
        return self._tables()[0]

    @property
    def _ends(self):
        return self._tables()[1]

    def find(self, addr: int):
        """The allocation containing byte ``addr`` or None."""
        k = bisect_right(self._base_ints, addr) - 1
        if k >= 0 and addr < self.allocs[k].end:
            return self.allocs[k]
        return None

    def read_row(self, addr: int, nbytes: int, align: int):
        """The ``nbytes`` bytes at the one address ``addr`` as ``bytes`` when every check of
        ``load`` passes (aligned, inside one allocation, written); None: ``load`` must decide
        (and report). A TMA's tensor map read, on Python ints."""
        if addr % align:
            return None
        al = self.find(addr)
        if al is None or addr + nbytes > al.end:
            return None
        off = addr - al.base
        if self.tracks_init and al.tracked() and al.unwritten_in(off, off + nbytes):
            return None
        if self.counter is not None:
            self.counter("load", nbytes, [(al, None, np.array([off], np.uint64))], nbytes)
        return al.data[off:off + nbytes].tobytes()

    def explain(self, addr: int, size: int) -> str:
        """Why an access of ``size`` bytes at ``addr`` is out of bounds."""
        if addr == 0:
            return f"address 0x0 is a null pointer ({self.kind} space)"
        if not self.allocs:
            return f"address {addr:#x} is not in any {self.kind} allocation (there are none)"
        k = int(np.searchsorted(self._bases, np.uint64(addr), "right")) - 1
        cands = []
        if k >= 0:
            a = self.allocs[k]
            if addr >= a.base:
                past = addr + size - a.end
                cands.append((addr - a.end, f"address {addr:#x} is {past} bytes past the end of {a.describe()}"))
        if k + 1 < len(self.allocs):
            a = self.allocs[k + 1]
            cands.append((a.base - addr, f"address {addr:#x} is {a.base - addr} bytes before the start of {a.describe()}"))
        dist, text = min(cands, key=lambda c: c[0])
        if dist > (1 << 20):
            return f"address {addr:#x} is not in any {self.kind} allocation (nearest: {text.split(' of ', 1)[-1]})"
        return text

    # ------------------------------------------------------------------ accesses
    def _resolve(self, addrs: np.ndarray, nbytes: int, write: bool, align: int | None = None, span=None):
        """Check the accesses and return [(alloc, positions, offsets)] grouped by allocation
        (``span``: a ``Span`` of ``addrs``, whose bounds it reuses)."""
        n = len(addrs)
        if n == 0:
            return []
        align = nbytes if align is None else align
        if align > 1:
            mis = _misaligned(addrs, align)
            if mis.any():
                lane = int(np.argmax(mis))
                a = int(addrs[lane])
                raise MemoryFault("misaligned", lane, a,
                                  f"address {a:#x} is not aligned to {align} bytes"
                                  + _within(self.find(a), a), self.kind)
        lo, hi = span_of(addrs, span).bounds()
        k = int(np.searchsorted(self._bases, np.uint64(lo), "right")) - 1
        if k >= 0:
            al = self.allocs[k]
            if lo >= al.base and hi + nbytes <= al.end:
                self._check_ro(al, write, addrs, 0)
                return [(al, None, addrs - np.uint64(al.base))]
        ks = np.searchsorted(self._bases, addrs, "right").astype(np.int64) - 1
        out = []
        bad = ks < 0
        if bad.any():
            lane = int(np.argmax(bad))
            a = int(addrs[lane])
            raise MemoryFault("out-of-bounds", lane, a, self.explain(a, nbytes), self.kind)
        for k in np.unique(ks):
            al = self.allocs[int(k)]
            pos = np.nonzero(ks == k)[0]
            sub = addrs[pos]
            over = sub + np.uint64(nbytes) > np.uint64(al.end)
            if over.any():
                j = int(np.argmax(over))
                a = int(sub[j])
                raise MemoryFault("out-of-bounds", int(pos[j]), a, self.explain(a, nbytes), self.kind)
            self._check_ro(al, write, sub, int(pos[0]))
            out.append((al, pos, sub - np.uint64(al.base)))
        return out

    def _check_ro(self, al, write, addrs, lane):
        if write and al.readonly:
            a = int(addrs[0])
            raise MemoryFault("read-only", lane, a, f"address {a:#x} is in read-only {al.describe()}", self.kind)
        if write and al.input is not None:
            a = int(addrs[0])
            raise MemoryFault("input", lane, a,
                              f"address {a:#x} (byte {a - al.base} of {al.describe()}) is in {al.input}, an "
                              f"input that is not an aliased output: under jax.jit on a GPU this writes a "
                              f"buffer XLA owns; write an output instead, or alias the input to an output "
                              f"(input_output_aliases) to update it in place", self.kind)

    def _check_init(self, parts, nbytes, what="is read"):
        """Uninitialized bytes of outputs (``Allocation.init``) among the accessed ones (the rows
        are compared a word at a time, ``_rows_defined``; a row with an unwritten byte is then
        found byte by byte)."""
        for al, pos, off in parts:
            if not al.tracked() or not _meets(al, off, nbytes):
                continue
            o = off.astype(np.int64)
            if _rows_defined(al.padded_flags(), o, nbytes):
                continue
            b = o[:, None] + np.arange(nbytes)
            bad = al.init[b] == 0
            if bad.any():
                j, k = np.argwhere(bad)[0]
                lane = int(j) if pos is None else int(pos[j])
                o = int(b[j, k])
                raise MemoryFault("uninitialized", lane, al.base + o,
                                  f"{self.kind} address {al.base + o:#x} (byte {o} of {al.describe()}) "
                                  f"{what} before any thread wrote it: an output starts uninitialized, as "
                                  f"on a GPU; write it before reading it, or make the buffer an "
                                  f"input-output alias to keep its contents", self.kind)

    @staticmethod
    def _mark_init(parts, nbytes):
        for al, pos, off in parts:
            if al.tracked() and _meets(al, off, nbytes):
                _rows_set(al.padded_flags(), off.astype(np.int64), nbytes)

    def _fast(self, addrs, nbytes, esz, write, align=None, span=None):
        """``(allocation, nest)`` of an access whose addresses form an affine nest (``nest``)
        inside one allocation, aligned and allowed: every check of ``_resolve`` passes, so the
        access is a strided slice of the allocation. None when ``_resolve`` must decide (and
        report the first failing lane). ``span``: a ``Span`` of ``addrs`` (its nest reused)."""
        if len(addrs) < FAST_MIN:
            return None
        ns = span_of(addrs, span).nest()
        if ns is None:
            return None
        first, shape, strides, last = ns
        align = nbytes if align is None else align
        unit = align if align % esz == 0 else esz * align      # every address a multiple of esz too
        al = self._nest_home(first, strides, last, nbytes, unit, esz, write)
        return None if al is None else (al, ns)

    def _nest_home(self, first: int, strides, last: int, nbytes: int, unit: int, esz: int, write: bool):
        """The allocation holding accesses of ``nbytes`` at every address of a nest (``first``
        to ``last``, ``strides``) when each address is a multiple of ``unit``, the allocation's
        base of ``esz`` and, for a ``write``, the allocation writable and not an input: every
        check of ``_resolve`` passes. None: ``_resolve`` must decide (and report)."""
        if unit > 1 and (first % unit or any(s % unit for s in strides)):
            return None
        if first < 0 or last >= _U64:
            return None
        al = self.find(first)
        if al is None or last + nbytes > al.end or al.base % esz:
            return None
        if write and (al.readonly or al.input is not None):
            return None
        return al

    def load_nest(self, first: int, shape, strides, dtype):
        """The elements of ``dtype`` at the addresses of an affine nest (``nest``'s shape and
        strides; ``first``, its first address) as a flat array, read as a strided slice, when
        every check of ``load`` passes on Python ints (aligned, inside one allocation, written)
        and no statistics are kept; None: ``load`` must decide (and report). A TMA box."""
        out = np.empty((1, int(np.prod(shape))), dtype)
        return out[0] if self.load_nests([first], shape, strides, out) else None

    def load_nests(self, firsts, shape, strides, out) -> bool:
        """``load_nest`` of several nests of one shape and strides (first addresses ``firsts``,
        Python ints) into the rows of ``out`` (one a nest, of the elements' dtype), when every
        one passes its checks; False, having read nothing the caller keeps, where one does not
        (the caller then reads them one by one, and reports). One allocation look-up for
        them all: the nests lie between the lowest first address and the highest last one,
        so inside one allocation when that span is. A TMA load's boxes."""
        esz = out.itemsize
        ext = sum((n - 1) * s for n, s in zip(shape, strides))
        lo, hi = min(firsts), max(firsts) + ext
        al = None if self.counter is not None else self._nest_home(lo, strides, hi, esz, esz, esz, False)
        if al is None or any(f % esz for f in firsts):
            return False
        base = al.base
        if self.tracks_init and al.tracked():
            for f in firsts:
                if not al.nest_written(f - base, shape, strides, esz):
                    return False
        view, dst = al.view(out.dtype), out.reshape(len(firsts), *shape, 1)
        for j, f in enumerate(firsts):
            dst[j] = _nest_view(view, esz, f - base, shape, strides, 1)
        return True

    def store_nest(self, first: int, shape, strides, values) -> bool:
        """Write ``values`` (1-D, in the nest's order) at the addresses of an affine nest of
        disjoint elements (``load_nest``) as a strided slice, when every check of ``store``
        passes on Python ints (aligned, inside one writable allocation) and no statistics are
        kept; False: nothing was written, ``store`` must decide (and report)."""
        return self.store_nests([first], shape, strides, values.reshape(1, -1))

    def store_nests(self, firsts, shape, strides, rows) -> bool:
        """``store_nest`` of several nests of one shape and strides (first addresses ``firsts``,
        Python ints), nest ``i`` taking row ``i`` of ``rows``, in order, when every one passes
        its checks; False, having written nothing, where one does not (the caller then stores
        them one by one, and reports). One allocation look-up and one disjointness test for
        them all (``load_nests``). A TMA store's boxes."""
        esz = rows.dtype.itemsize
        if self.counter is not None or not disjoint(shape, strides, esz):
            return False
        ext = sum((n - 1) * s for n, s in zip(shape, strides))
        al = self._nest_home(min(firsts), strides, max(firsts) + ext, esz, esz, esz, True)
        if al is None or any(f % esz for f in firsts):
            return False
        self.version += 1
        base, view, mark = al.base, al.view(rows.dtype), self.tracks_init and al.tracked()
        src = rows.reshape(len(firsts), *shape, 1)
        for f, row in zip(firsts, src):
            if mark:
                al.mark_nest(f - base, shape, strides, esz)
            _nest_view(view, esz, f - base, shape, strides, 1)[...] = row
        return True

    def load(self, addrs, dtype, count=1, align=None, span=None):
        """Gather ``count`` consecutive elements of ``dtype`` at each address -> (n, count).
        Addresses forming an affine nest in one allocation (``nest``) are read as a strided
        slice (an output's written-byte flags checked over the same slice), vectors aligned to
        their size as one element each; the checks and their reports are those of
        ``_resolve`` and ``_check_init``. ``span``: a ``Span`` of ``addrs`` to reuse."""
        dt = np.dtype(dtype)
        esz = dt.itemsize
        nb = esz * count
        n = len(addrs)
        fast = self._fast(addrs, nb, esz, False, align, span)
        if fast is not None:
            al, (first, shape, strides, _) = fast
            if self.tracks_init and al.tracked() and not al.nest_written(first - al.base, shape, strides, nb):
                self._check_init([(al, None, addrs - np.uint64(al.base))], nb)     # the report
            if self.counter is not None:
                self.counter("load", n * nb, [(al, None, addrs - np.uint64(al.base))], nb)
            return np.array(_nest_view(al.view(dt), esz, first - al.base, shape, strides, count), order="C").reshape(n, count)
        parts = self._resolve(addrs, nb, False, align, span)
        if self.tracks_init:
            self._check_init(parts, nb)
        if self.counter is not None:
            self.counter("load", n * nb, parts, nb)
        vec = count > 1 and _pow2(nb) and (align is None or align % nb == 0)
        if len(parts) == 1 and parts[0][1] is None:
            al, _, off = parts[0]
            if vec and al.base % nb == 0:
                view, idx = _vector(al.view, nb, off)
                return view[idx].view(dt).reshape(n, count)
            idx = (off // np.uint64(esz)).astype(np.int64)
            v = al.view(dt)
            if count == 1:
                return v[idx][:, None]
            return v[idx[:, None] + np.arange(count)]
        out = np.empty((n, count), dt)
        for al, pos, off in parts:
            sel = np.arange(n) if pos is None else pos
            if vec and al.base % nb == 0:
                view, idx = _vector(al.view, nb, off)
                out[sel] = view[idx].view(dt).reshape(-1, count)
                continue
            idx = (off // np.uint64(esz)).astype(np.int64)
            v = al.view(dt)
            out[sel] = v[idx[:, None] + np.arange(count)]
        return out

    def store(self, addrs, values, fast=False, span=None):
        """Scatter ``values`` of shape (n, count) to the addresses (a strided slice when they
        form a nest of disjoint elements in one allocation, ``load``; an output's written-byte
        flags set over the same slice). ``fast``: ``_fast``'s answer for this access when the
        caller already has it; ``span``: a ``Span`` of ``addrs`` to reuse."""
        self.version += 1
        dt = values.dtype
        esz = dt.itemsize
        count = values.shape[1]
        nb = esz * count
        n = len(addrs)
        if fast is False:
            fast = self._fast(addrs, nb, esz, True, None, span)
        if fast is not None and disjoint(fast[1][1], fast[1][2], nb):
            al, (first, shape, strides, _) = fast
            if self.counter is not None:
                self.counter("store", n * nb, [(al, None, addrs - np.uint64(al.base))], nb)
            if self.tracks_init and al.tracked():            # the bytes written, as _mark_init
                al.mark_nest(first - al.base, shape, strides, nb)
            _nest_view(al.view(dt), esz, first - al.base, shape, strides, count)[...] = \
                values.reshape(*shape, count)
            return
        parts = self._resolve(addrs, nb, True, None, span)
        if self.counter is not None:
            self.counter("store", n * nb, parts, nb)
        if self.tracks_init:
            self._mark_init(parts, nb)
        vec = count > 1 and _pow2(nb)
        for al, pos, off in parts:
            vals = values if pos is None else values[pos]
            if vec and al.base % nb == 0:
                view, idx = _vector(al.view, nb, off)
                view[idx] = np.ascontiguousarray(vals).view(view.dtype).reshape(-1)
                continue
            idx = (off // np.uint64(esz)).astype(np.int64)
            v = al.view(dt)
            if count == 1:
                v[idx] = vals[:, 0]
            else:
                v[idx[:, None] + np.arange(count)] = vals

    def locate(self, addrs, nbytes, write):
        """Resolve for read-modify-write users (atomics): [(alloc, positions, offsets)]."""
        parts = self._resolve(addrs, nbytes, write)
        if self.counter is not None:
            self.counter("atomic", len(addrs) * nbytes, parts, nbytes)
        if self.tracks_init:
            # an atomic reads the old value (red too): an output's bytes must hold one
            self._check_init(parts, nbytes, "is updated atomically")
            self._mark_init(parts, nbytes)
        return parts


def _meets(al, off, nbytes) -> bool:
    """Whether accesses of ``nbytes`` at offsets ``off`` of ``al`` may meet an unwritten byte
    (their hull meets an interval of ``Allocation._undef``; always, once flags are per byte)."""
    return al._undef is None or (len(off) > 0 and al._undef.meets(int(off.min()), int(off.max()) + int(nbytes)))


def _within(al, a):
    return "" if al is None else f" (inside {al.describe()})"


class BankedSpace:
    """One bank of ``size`` bytes per CTA (shared memory) or per thread (local memory)."""

    def __init__(self, kind: str, nbanks: int, size: int, track_init: bool, layout=None, pitch: int = 16):
        self.kind = kind
        self.size = int(size)
        self.stride = max(pitch, -(-self.size // pitch) * pitch)    # a multiple of ``pitch``
        self.nbanks = nbanks
        # recycled from the last batch (``shadow``: its pages are mapped; ``recycle``)
        self.data = shadow.filled(nbanks * self.stride, np.uint8)
        self.init = shadow.filled(nbanks * self.stride, np.uint8) if track_init else None
        self.layout = layout or []       # [(name, offset, size)] for messages
        self._views = {}
        self._iviews = {}
        self.race = None                 # sanitizer.RaceTracker for shared memory
        self.version = 0                 # writes so far (see the module docstring)
        self._dirty = None               # shared, sanitized: bytes the generic proxy wrote since
        self._dviews = {}                # their CTA's last fence.proxy.async (async_proxy, ``dirty``)
        self._dpend = []                 # rows of ``mark_written`` not yet marked in ``_dirty``
        self._dpend_rows = 0
        self.dirty_bank = np.zeros(nbanks, bool)     # banks that may hold such bytes (a superset)
        self.dirty_blk = None            # per block of ``BLOCK`` bytes: it may hold such bytes
        self.dirty_lo, self.dirty_hi = 1 << 62, 0     # offsets (any bank) that may hold them
        self.written = set()             # span keys known initialized (smem_matrix, bulk copies; init only grows)
        self.copied = {}                 # per CTA: {start: end} of the spans async copies wrote (``copied_over``)
        self._copied_starts = {}         # ... their starts in order (made when asked)
        self.init_full = False           # every byte of every bank written (``all_written``)
        self._full_wait = self._full_gap = 1     # all_written's backoff
        self._full_version = -1

    def note_copied(self, cta: int, lo: int, hi: int):
        """An asynchronous copy wrote offsets ``[lo, hi)`` of CTA ``cta`` (``copied``)."""
        d = self.copied.get(cta)
        if d is None:
            d = self.copied[cta] = {}
        if d.get(lo, lo) < hi:
            d[lo] = hi

    def copied_over(self, cta: int, lo: int, hi: int) -> bool:
        """Whether asynchronous copies wrote every byte of offsets ``[lo, hi)`` of CTA ``cta``:
        the copy holding ``lo`` and those that follow it end to end (a ring stage's boxes)
        reach ``hi``."""
        d = self.copied.get(cta)
        if d is None:
            return False
        ks = self._copied_starts.get(cta)
        if ks is None or len(ks) != len(d):          # (starts are only ever added)
            ks = self._copied_starts[cta] = sorted(d)
        i = bisect_right(ks, lo) - 1                 # the last copy starting at or before lo
        if i < 0:
            return False
        end = d[ks[i]]
        if end <= lo:
            return False
        while end < hi:
            end = d.get(end, -1)
            if end < 0:
                return False
        return True

    def track_dirty(self):
        """Start the sanitizer's ``dirty`` flags (shared memory: ``async_proxy``'s fence rule),
        per byte and per block of ``BLOCK`` bytes (the banks' pitch must be a multiple of it)."""
        self.dirty = shadow.filled(len(self.data), np.uint8)
        self.dirty_blk = shadow.filled(len(self.data) >> BLOCK_SHIFT, np.uint8)

    def recycle(self):
        """The batch is over: hand the space's large arrays to the next one (``shadow``); the
        space is not used again."""
        shadow.recycle(self.data, self.init, self._dirty, self.dirty_blk)
        self.data = self.init = self._dirty = self.dirty_blk = None
        self._dpend.clear()
        self._views, self._iviews, self._dviews = {}, {}, {}

    def view(self, dt):
        v = self._views.get(dt)
        if v is None:
            v = self._views[dt] = self.data.view(dt)
        return v

    def iview(self, isz):
        v = self._iviews.get(isz)
        if v is None:
            v = self._iviews[isz] = self.init.view(_UINT[isz])
        return v

    def describe_offset(self, off: int) -> str:
        for name, start, size in self.layout:
            if start <= off < start + size:
                return f"{name!r} (+{off - start})"
        return ""

    def _check(self, offs, nbytes, align=None):
        align = nbytes if align is None else align
        if align > 1:
            mis = _misaligned(offs, align)
            if np.count_nonzero(mis):
                lane = int(np.argmax(mis))
                a = int(offs[lane])
                raise MemoryFault("misaligned", lane, a,
                                  f"{self.kind} address {a:#x} is not aligned to {align} bytes", self.kind)
        if len(offs) and int(offs.max()) + nbytes <= self.size:
            return
        over = offs + np.uint64(nbytes) > np.uint64(self.size)
        if over.any():
            lane = int(np.argmax(over))
            a = int(offs[lane])
            raise MemoryFault("out-of-bounds", lane, a, self._explain(a, nbytes), self.kind)

    def check_span(self, offs, nbytes):
        """``_check`` of accesses of ``nbytes`` (a power of two, their alignment) at offsets
        ``offs`` (uint64), three reductions when they pass; returns (lowest, end) offset."""
        if not len(offs):
            return 0, 0
        lo, top = int(offs.min()), int(offs.max())
        if top + nbytes > self.size or int(np.bitwise_or.reduce(offs)) & (nbytes - 1):
            self._check(offs, nbytes)               # the report
        return lo, top + nbytes

    def _explain(self, a, nbytes):
        what = "shared memory of this CTA" if self.kind == "shared" else "local memory of this thread"
        lay = ", ".join(f"{n!r} {s} bytes at {o:#x}" for n, o, s in self.layout) or "no variables"
        if a >= (1 << 63):
            return f"{self.kind} address {a - (1 << 64)} is negative ({what}: {self.size} bytes: {lay})"
        if a >= M_WINDOW_HINT:
            return (f"{self.kind} address {a:#x} is far outside the {what} ({self.size} bytes: {lay}); "
                    f"is it a generic address used without cvta.to.{self.kind}?")
        past = a + nbytes - self.size
        return (f"{self.kind} address {a:#x} is {past} bytes past the end of {what} "
                f"({self.size} bytes: {lay})")

    def flat(self, banks, offs):
        """Flat byte indices of (bank, offset) pairs (offsets checked: below 2**63)."""
        return flat_starts(banks, offs, self.stride)

    def _race(self, fn, banks, offs, nbytes, warps, *vals, **kw):
        try:
            fn(banks, offs, nbytes, warps, *vals, **kw)
        except MemoryFault as f:
            where = self.describe_offset(f.address)
            f.detail = f.detail.replace("{where}", f" ({where})" if where else "")
            raise

    def _vec(self, nb, count, align):
        """Whether ``count`` elements of ``nb`` bytes in all move as one ``nb``-byte element
        (``_vector``): the offsets are checked multiples of ``nb``, as is a bank's stride."""
        return count > 1 and _pow2(nb) and self.stride % nb == 0 and (align is None or align % nb == 0)

    def load(self, banks, offs, dtype, count=1, check_init=False, align=None, warps=None, span=None):
        """``count`` elements of ``dtype`` at each (bank, offset) -> (n, count), bounds-checked
        (``span``: (lowest, end) offset of the accesses when the caller checked their bounds),
        race-checked for ``warps`` and, with ``check_init``, checked for unwritten bytes."""
        dt = np.dtype(dtype)
        esz = dt.itemsize
        offs = np.asarray(offs, np.uint64)
        if span is None:
            self._check(offs, esz * count, align)
        if self.race is not None and warps is not None:
            self._race(self.race.on_load, banks, offs, esz * count, warps, span=span)
        if self._vec(esz * count, count, align):
            # a vector per lane: one element of its size
            view, idx = _vector(self.view, esz * count, self.flat(banks, offs))
            out = view[idx].view(dt).reshape(-1, count)
        else:
            f = self.flat(banks, offs) // esz
            out = self.view(dt)[f[:, None] + np.arange(count) if count > 1 else f[:, None]]
        if check_init and self.init is not None:
            self.check_init(banks, offs, esz, count, span)
        return out

    def all_written(self) -> bool:
        """Whether every byte of every bank has been written (``init_full``; bytes never become
        unwritten, so it stays true). Looked at again after a miss only once twice as many
        passing ``check_init`` calls as before the last look have gone by and something was
        written since: a few passes over the flags in all."""
        if self.init_full:
            return True
        self._full_wait -= 1
        if self._full_wait > 0 or self.version == self._full_version:
            return False
        self._full_version = self.version
        rows = self.init.reshape(self.nbanks, self.stride)
        if self.size % 8 == 0:      # a word of 0 / 1 bytes is all ones exactly when it is the largest
            full = int(rows.view(np.uint64)[:, :self.size // 8].min(initial=_ONES[8])) == _ONES[8]
        else:
            full = bool(rows[:, :self.size].min(initial=1))
        if full:
            self.init_full = True
            return True
        self._full_gap *= 2
        self._full_wait = self._full_gap
        return False

    def check_init(self, banks, offs, esz, count=1, span=None):
        """Report the first element (``esz`` bytes, ``count`` per row) of the rows at (bank,
        offset) that holds a byte no thread wrote (rows compared a word at a time first; nothing
        to compare once every byte is written, ``all_written``, or, with ``span`` ((lowest, end)
        offset of the rows), once their blocks are, ``_hull_written``)."""
        if self.init_full:
            return
        if span is not None and len(offs) and self._hull_written(banks, offs, esz * count, *span):
            self.all_written()
            return
        starts = self.flat(banks, offs)
        if _rows_defined(self.init, starts, esz * count):
            self.all_written()
            return
        f = starts // esz
        f = f[:, None] + np.arange(count) if count > 1 else f[:, None]
        bad = self.iview(esz)[f] != _ONES[esz]
        if bad.any():
            lane, k = np.argwhere(bad)[0]
            a = int(offs[lane]) + int(k) * esz
            where = self.describe_offset(a)
            raise MemoryFault("uninitialized", int(lane), a,
                              f"{self.kind} address {a:#x}{' ' + where if where else ''} is read before any "
                              f"thread of this CTA wrote it", self.kind)

    def _hull_written(self, banks, offs, nbytes, lo, hi) -> bool:
        """Whether every byte of offsets ``[lo, hi)`` (the hull of rows of ``nbytes`` at
        ``offs``) of every bank from the lowest to the highest of ``banks`` was written: one
        pass over a 2-D slice of the flags, when it is not much larger than the rows (the
        operand tiles of a batch of CTAs), instead of a gather of the rows."""
        b = np.asarray(banks)
        b0, b1 = (int(b.min()), int(b.max())) if b.ndim else (int(b), int(b))
        if (b1 - b0 + 1) * (hi - lo) > 2 * len(offs) * nbytes:
            return False
        return bool(self.init.reshape(self.nbanks, self.stride)[b0:b1 + 1, lo:hi].min())     # (0 / 1 flags)

    def store(self, banks, offs, values, align=None, warps=None, span=None, starts=None, aligned=False):
        """Store ``values`` (n, count) at each (bank, offset), bounds-checked (``span``: as for
        ``load``), race-checked for ``warps``. ``starts``: the flat first bytes, ``aligned``:
        every offset is a multiple of the row's size, a power of two (what the caller's checks
        found, when it made them)."""
        self.version += 1
        dt = values.dtype
        esz = dt.itemsize
        count = values.shape[1]
        offs = np.asarray(offs, np.uint64)
        if span is None:
            self._check(offs, esz * count, align)
        if self.race is not None and warps is not None:
            self._race(self.race.on_store, banks, offs, esz * count, warps, values, span=span, starts=starts)
        if starts is None:
            starts = self.flat(banks, offs)
        if self._vec(esz * count, count, align):
            # a vector per lane: one element of its size (aligned vectors coincide or are
            # disjoint, so the last lane storing one wins, as element by element)
            view, idx = _vector(self.view, esz * count, starts)
            view[idx] = np.ascontiguousarray(values).view(view.dtype).reshape(-1)
        else:
            f = starts // esz
            if count > 1:
                self.view(dt)[f[:, None] + np.arange(count)] = values
            else:
                self.view(dt)[f] = values[:, 0]
        self.mark_written(banks, offs, esz * count, starts, aligned, span)

    @property
    def dirty(self):
        """uint8 per byte (shared, sanitized; else None): 1 where the generic proxy wrote since
        the CTA's last ``fence.proxy.async`` (``async_proxy``). A store's rows are marked when
        the array is next looked at: a kernel whose shared memory nothing reads through the
        async proxy never marks them (a bounded backlog, ``_DIRTY_PEND``)."""
        if self._dpend:
            self._mark_backlog()
        return self._dirty

    def _mark_backlog(self):
        for banks, offs, nbytes in self._dpend:
            starts = self.flat(banks, offs)
            _rows_set(self._dirty, starts, nbytes)
            if self.dirty_blk is not None:
                mark_blocks(self.dirty_blk, starts, nbytes)
        self._dpend.clear()
        self._dpend_rows = 0

    @dirty.setter
    def dirty(self, arr):
        self._dirty, self._dviews = arr, {}
        self._dpend.clear()
        self._dpend_rows = 0

    def dview(self, isz):
        v = self._dviews.get(isz)
        if v is None:
            v = self._dviews[isz] = self.dirty.view(_UINT[isz])
        elif self._dpend:
            self._mark_backlog()
        return v

    def mark_written(self, banks, offs, nbytes, starts=None, aligned=False, span=None):
        """A generic-proxy store of ``nbytes`` at each (bank, offset): the bytes are initialized
        and (shared, sanitized) written since their CTA's last fence.proxy.async (``dirty``,
        ``dirty_bank`` and ``dirty_lo`` / ``dirty_hi``). ``starts``: their flat first bytes,
        ``aligned``: as for ``store``, ``span``: (lowest, end) offset, when the caller has them."""
        if (self.init is None or self.init_full) and self._dirty is None:
            return
        if self.init is not None and not self.init_full:
            if starts is None:
                starts = self.flat(banks, offs)
            item = _ROW_ITEM.get(nbytes) if aligned else None
            if item is not None and len(self.init) % nbytes == 0:     # one item per row
                self.init.view(item[0])[shifted(starts, item[1])] = item[2]
            else:
                _rows_set(self.init, starts, nbytes)
        if self._dirty is not None:
            self._dpend.append((banks, offs, nbytes))
            self._dpend_rows += len(offs)
            if self._dpend_rows > _DIRTY_PEND:
                self._mark_backlog()
            if not self.dirty_bank.all():        # (no fence since every bank was marked: a scatter less)
                self.dirty_bank[banks] = True
            if len(offs):
                lo, hi = span if span is not None else (int(offs.min()), int(offs.max()) + nbytes)
                if lo < self.dirty_lo:
                    self.dirty_lo = lo
                if hi > self.dirty_hi:
                    self.dirty_hi = hi

    def mark_init(self, banks, offs, nbytes):
        self.version += 1
        if self.init is None or self.init_full:
            return
        _rows_set(self.init, self.flat(banks, np.asarray(offs, np.uint64)), int(nbytes))


# rows of a power-of-two size aligned to it: (item dtype, log2 of the size, the item of 1 bytes)
_ROW_ITEM = {k: (_ITEM[k], k.bit_length() - 1, _FILL[k]) for k in (2, 4, 8, 16, 32, 64)}
_DIRTY_PEND = 1 << 20           # rows of generic stores marked in BankedSpace.dirty beyond this many
