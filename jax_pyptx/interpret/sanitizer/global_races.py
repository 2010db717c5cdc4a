"""Plain loads and stores of one global byte by different CTAs of a launch (part of the
sanitizer).

The CTAs of a grid run concurrently and in any order, so when one CTA stores a global byte with
a plain ``st`` and another CTA loads or stores the same byte with a plain ``ld`` / ``st`` in
the same launch, nothing orders the two accesses unless the CTAs synchronize through memory
(atomics, ``.release`` / ``.acquire`` / ``.relaxed`` / ``.volatile`` accesses, fences) or a
cluster barrier. The interpreter runs CTAs in batches, one after the other, so such a kernel
(the classic ``y[0] += partial`` of every CTA with a plain load and store) computes one order's
answer here and another on a GPU. So, for a launch of several CTAs whose program has no
instruction that could order CTAs (no ``atom`` / ``red`` / ``multimem`` / ``cp.reduce``, no
strong ``ld`` / ``st``, no ``fence`` other than a proxy fence, no ``membar``, no cluster
barrier, a cluster of one CTA), the sanitizer keeps, for every element of a global allocation a
plain store wrote in this launch, the CTA that wrote it last (and whether the store changed it):

* a plain load by another CTA of an element such a store changed is a ``RaceError``; of one the
  store left as it was, a ``SanitizerWarning`` (either order reads the same value);
* a plain store by another CTA of a different value is a ``RaceError``, of the same value a
  ``SanitizerWarning`` (every order leaves the same bytes); so are lanes of different CTAs
  storing one element in one instruction (CTAs of one batch run in lock step).

A program that synchronizes its CTAs in any of those ways is not checked (no false reports on
split-K semaphores, "last block" reductions and locks). Atomics and strong accesses themselves
are never tracked. Writes by the async proxy (TMA, bulk copies) are not tracked either.
Allocations over ``LIMIT`` bytes are not tracked (the tracker keeps 4 bytes per element).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...errors import RaceError
from ..state import memory as M
from ..state import shadow

LIMIT = 1 << 24
_STRONG = frozenset({".volatile", ".relaxed", ".acquire", ".release", ".mmio", ".acq_rel", ".sc"})
_SYNC_FIRST = frozenset({"atom", "red", "multimem", "membar", "griddepcontrol", "clusterlaunchcontrol"})
_SYNC_OPCODES = ("cp.reduce", "barrier.cluster", "st.async")


def _synchronizes(ins) -> bool:
    """Whether ``ins`` could order the memory accesses of different CTAs."""
    op = ins.opcode
    first = op.split(".", 1)[0]
    if first in _SYNC_FIRST:
        if first in ("atom", "red") and op in ("atom", "red") and any(m.startswith(".shared")
                                                                      for m in ins.modifiers):
            return False                # a CTA's own shared memory
        return True
    if op.startswith(_SYNC_OPCODES):
        return True
    if op == "fence":
        return not any(m.startswith((".proxy", ".mbarrier_init")) for m in ins.modifiers)
    if op in ("ld", "st", "ldu"):
        return any(m in _STRONG for m in ins.modifiers)
    return False


def tracker(ctx):
    """The launch's ``GlobalRaces`` or None (no sanitizer, one CTA, clusters, or a program that
    synchronizes CTAs)."""
    gr = ctx.global_races
    if gr is not False:
        return gr
    launch = ctx.launch
    gr = launch.global_races
    if gr is False:
        gr = None
        gx, gy, gz = launch.grid
        cx, cy, cz = launch.cluster
        if ctx.sanitize and gx * gy * gz > 1 and cx * cy * cz == 1:
            sync = ctx.prog.orders_ctas
            if sync is None:
                sync = ctx.prog.orders_ctas = any(_synchronizes(d.ins) for d in ctx.code
                                                  if getattr(d.ins, "opcode", None))
            if not sync:
                gr = GlobalRaces(launch)
        launch.global_races = gr
    ctx.global_races = gr
    return gr


class GlobalRaces:
    """Per launch: the last plain-storing CTA of every tracked global element (module doc).

    Granularity: an allocation is tracked in elements of the size of the first plain store into
    it (4 bytes for ``st.global.f32``, ``.v4.f32`` included); an access whose element size is a
    multiple of it covers several, one with a smaller or misaligned element is not tracked.

    A store that is a slice away from every element stored before (outside their hull) is only
    recorded; the per-element tags are made, and the records applied in order, when a check
    first reads them (``_tag_array``): a row kernel whose CTAs each write their own rows never
    makes them."""

    def __init__(self, launch):
        self.grid = launch.grid
        self.tags = {}            # allocation index -> [element size, int32 per element:
                                  # 2 * (CTA + 1) + changed, 0: no plain store yet (made by
                                  # _tag_array), its length]
        self.ranges = []          # (base, end) of tracked allocations
        self.hull = {}            # allocation index -> [lo, hi): the elements stored so far lie there
        self.pending = {}         # allocation index -> records of slice stores not yet in its tags
        self._npending = 0        # elements in them

    def recycle(self):
        """The launch has ended: hand the tag arrays to the next launch (``shadow``)."""
        shadow.recycle(*(e[1] for e in self.tags.values() if e[1] is not None))
        self.tags, self.ranges, self.hull, self.pending, self._npending = {}, [], {}, {}, 0

    def _tag_array(self, index):
        """The tags of allocation ``index`` with every pending slice store applied, in order: a
        slice store away from every earlier one is only recorded (``_fast_store``), and the
        array is made and written when a check first reads it."""
        e = self.tags[index]
        if e[1] is None:
            e[1] = shadow.filled(e[2], np.int32)
        for off, dims, es, two_d, rec, changed in self.pending.pop(index, ()):
            tg = M._nest_view(e[1], 4, off * 4, dims[:-1], [x * 4 for x in es], dims[-1])
            if two_d:
                tg = tg.reshape(len(rec), -1)
            np.add(rec, changed, out=tg, casting="unsafe")          # 2 * (CTA + 1) + changed
            self._npending -= changed.size
        return e[1]

    def _cta(self, c: int) -> str:
        gx, gy, _ = self.grid
        return f"({c % gx},{(c // gx) % gy},{c // (gx * gy)})"

    def _elements(self, al, off, esz, count, create):
        """(tags, element size, ``_Elems`` of the access) or None (not tracked)."""
        e = self._track(al, esz, create)
        if e is None or esz % e[0]:
            return None
        gran = e[0]
        return self._tag_array(al.index), gran, _Elems((off // np.uint64(gran)).astype(np.int64), esz // gran * count)

    def _track(self, al, esz, create=True):
        """``tags[al.index]``, made (tracked in elements of ``esz`` bytes) with ``create``;
        None for an allocation that is not (or too large to be) tracked."""
        e = self.tags.get(al.index)
        if e is None:
            if not create or al.size > LIMIT:
                return None
            e = self.tags[al.index] = [esz, None, al.size // esz]
            self.ranges.append((al.base, al.end))
        return e

    # ------------------------------------------------------------------ stores
    def before_store(self, ctx, g, addrs, vals, span=None):
        """Check a plain store against earlier ones of other CTAs; returns what ``after_store``
        records. Raises the ``MemoryFault`` of an access outside every allocation first.
        ``span``: a ``memory.Span`` of ``addrs`` to reuse."""
        fast = self._fast_store(ctx, g, addrs, vals, span)
        if fast is not None:
            return fast
        esz, count = vals.dtype.itemsize, vals.shape[1]
        parts = ctx.mem.gspace._resolve(addrs, esz * count, True, None, span)
        ctas = ctx.cta_ids[ctx.slot_cta[g.idx]]
        work = []
        for al, pos, off in parts:
            got = self._elements(al, off, esz, count, True)
            if got is None:
                continue
            t, gran, e = got
            self._grow(al.index, int(e.first.min()), int(e.first.max()) + e.per)
            c = (ctas if pos is None else ctas[pos])[:, None] + 1
            v = vals if pos is None else vals[pos]
            new = np.ascontiguousarray(v).view(_UINT[gran]).reshape(e.shape)
            old = e.take(al.view(_UINT[gran]))
            tg = e.take(t)
            if tg.any():                      # else no element was stored before
                prior = (tg != 0) & ((tg >> 1) != c)
                if prior.any():
                    diff = prior & (old != new)
                    j, k = np.argwhere(diff if diff.any() else prior)[0]
                    self._store_race(ctx, g, al, e, gran, pos, j, k, (int(tg[j, k]) >> 1) - 1, not diff.any(),
                                     False)
            work.append((t, e, gran, c, new, old, al, pos))
        return work

    def _fast_store(self, ctx, g, addrs, vals, span):
        """``before_store`` of a store whose addresses form a nest of disjoint elements in one
        allocation (``FlatSpace._fast``) that no other CTA stored before: the tags and old
        values are strided views, nothing is copied, and ``after_store`` writes the records
        through the same view (disjoint elements: no two lanes of this instruction meet).
        None when the general path must decide (scattered or overlapping addresses, a fault,
        an element another CTA stored)."""
        esz, count = vals.dtype.itemsize, vals.shape[1]
        nb = esz * count
        gs = ctx.mem.gspace
        fast = gs._fast(addrs, nb, esz, True, None, span)
        if fast is None:
            return None
        al, (first, shape, strides, _) = fast
        if not M.disjoint(shape, strides, nb):
            return None
        e = self._track(al, esz)
        if e is None or esz % e[0]:
            return _Fast(fast, None)
        gran = e[0]
        per, off = nb // gran, (first - al.base) // gran
        es = [s // gran for s in strides]
        dims = (*shape, per)
        c2 = ((ctx.cta_ids + 1) * 2).astype(np.int32)          # per CTA of the batch
        two_d = g.full and _c_dense(dims, (*es, 1))           # slots are CTA-major: a row of S * per per CTA
        shp = (len(c2), -1) if two_d else dims
        if two_d:
            rec = c2[:, None]
        elif g.full:                          # ... each CTA's record S * per times
            rec = np.repeat(c2, ctx.S * per).reshape(dims)
        else:
            rec = np.repeat(c2[ctx.slot_cta[g.idx]], per).reshape(dims)
        lo, hi = off, (fast[1][3] - al.base) // gran + per
        tg = None
        if self._stored_near(al.index, lo, hi):
            tg = M._nest_view(self._tag_array(al.index), 4, off * 4, shape, [s * 4 for s in es], per).reshape(shp)
            if tg.max() > 0 and ((tg != 0) & ((tg >> 1) != (rec >> 1))).any():     # tags are >= 0
                return None                   # another CTA stored an element: the general path
        self._grow(al.index, lo, hi)
        ug = _UINT[gran]
        old = M._nest_view(al.view(ug), gran, first - al.base, shape, strides, per).reshape(shp)
        new = vals.view(ug).reshape(old.shape)
        return _Fast(fast, (al.index, tg, (off, dims, es, two_d, rec, old != new)))

    def _stored_near(self, index, lo, hi) -> bool:
        """Whether elements ``[lo, hi)`` of allocation ``index`` may hold a tag: they meet the
        hull of the elements stored so far (else every tag there is 0)."""
        h = self.hull.get(index)
        return h is not None and lo < h[1] and h[0] < hi

    def _grow(self, index, lo, hi):
        h = self.hull.get(index)
        self.hull[index] = (lo, hi) if h is None else (min(h[0], lo), max(h[1], hi))

    def after_store(self, ctx, g, work):
        if type(work) is _Fast:
            if work.rec is not None:
                index, tg, record = work.rec
                if tg is not None:            # the tags are there (and up to date): write them
                    np.add(record[4], record[5], out=tg, casting="unsafe")     # 2 * (CTA + 1) + changed
                    return
                self.pending.setdefault(index, []).append(record)
                self._npending += record[5].size
                if self._npending > _PENDING_LIMIT:
                    for i in list(self.pending):
                        self._tag_array(i)
            return
        for t, e, gran, c, new, old, al, pos in work:
            rec = (old != new).astype(np.int32)      # 2 * (CTA + 1) + changed
            rec += (c * 2).astype(np.int32)
            e.put(t, rec)
            if len(c) < 2 or c.min() == c.max():
                continue                      # one CTA: no other stored in this instruction
            if e.aligned:
                # rows aligned to their power-of-two size overlap only when they start together
                if not ((t[e.first] >> 1) != c[:, 0]).any():
                    continue
            back = e.take(t) >> 1
            other = back != c                 # another CTA stored the element in this same instruction
            if other.any():
                diff = other & (e.take(al.view(_UINT[gran])) != new)
                j, k = np.argwhere(diff if diff.any() else other)[0]
                self._store_race(ctx, g, al, e, gran, pos, j, k, int(back[j, k]) - 1, not diff.any(), True)

    def _store_race(self, ctx, g, al, e, gran, pos, j, k, other, same, now):
        lane = int(j) if pos is None else int(pos[j])
        o = int(e[j, k]) * gran
        when = "in this same instruction" if now else "earlier in this launch"
        where = f"global address {al.base + o:#x} (byte {o} of {al.describe()})"
        if same:
            ctx.warn(RaceError,
                     f"race on global {ctx.cur.noun or 'store'}: it stores to {where} the value that CTA "
                     f"{self._cta(other)} also stored {when}: CTAs of a grid run concurrently and in any order, "
                     f"a data race by the PTX memory model, but every order leaves the same bytes (let one "
                     f"CTA write it)", g, lane)
            return
        raise M.MemoryFault("race", lane, al.base + o,
                            f"it stores to {where} that CTA {self._cta(other)} also stored {when}, a different "
                            f"value: CTAs of a grid run concurrently and in any order, so which value it keeps "
                            f"is undefined (let one CTA own each word, or combine the CTAs' values with atom / "
                            f"red)", "global")

    # ------------------------------------------------------------------ loads
    def on_load(self, ctx, g, addrs, esz, count, span=None):
        """Check a plain load against plain stores of other CTAs in this launch (``span``: a
        ``memory.Span`` of ``addrs`` to reuse)."""
        if not self.ranges or not len(addrs):
            return
        span = M.span_of(addrs, span)
        lo, hi = span.bounds()
        hi += esz * count
        if not any(lo < e and hi > s for s, e in self.ranges):
            return
        parts = ctx.mem.gspace._resolve(addrs, esz * count, False, None, span)
        ctas = ctx.cta_ids[ctx.slot_cta[g.idx]]
        for al, pos, off in parts:
            got = self._elements(al, off, esz, count, False)
            if got is None:
                continue
            t, gran, e = got
            c = (ctas if pos is None else ctas[pos])[:, None] + 1
            tg = e.take(t)
            if not tg.any():
                continue
            bad = (tg != 0) & ((tg >> 1) != c)
            if not bad.any():
                continue
            changed = bad & ((tg & 1) == 1)
            j, k = np.argwhere(changed if changed.any() else bad)[0]
            lane = int(j) if pos is None else int(pos[j])
            o = int(e[j, k]) * gran
            other = self._cta((int(tg[j, k]) >> 1) - 1)
            where = f"global address {al.base + o:#x} (byte {o} of {al.describe()})"
            if not changed.any():
                ctx.warn(RaceError,
                         f"race on global load: it reads {where}, which CTA {other} stored earlier in this "
                         f"launch with a plain store that left its value as it was: CTAs of a grid run "
                         f"concurrently and in any order, a data race by the PTX memory model, but either order "
                         f"reads the same value", g, lane)
                continue
            raise M.MemoryFault("race", lane, al.base + o,
                                f"it reads {where} that CTA {other} stored earlier in this launch with a plain "
                                f"store: CTAs of a grid run concurrently and in any order, so whether this load "
                                f"sees the old or the new value is undefined (let one CTA own each word, combine "
                                f"the CTAs' values with atom / red, or order the CTAs with a release / acquire "
                                f"pair)", "global")


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_PENDING_LIMIT = 1 << 22          # elements of pending slice stores applied beyond this many


def _c_dense(dims, strides) -> bool:
    """Whether a view of ``dims`` with element ``strides`` is C-contiguous (NumPy's rule: a
    dimension of 1 has any stride)."""
    want = 1
    for d, st in zip(reversed(dims), reversed(strides)):
        if d != 1 and st != want:
            return False
        want *= d
    return True


class _Fast:
    """What ``GlobalRaces._fast_store`` found: ``fast``, the ``FlatSpace._fast`` result the
    store reuses, and ``rec``, (allocation index, tag view or None, the record: (first element,
    nest dims, element strides, one row per CTA, 2 * (CTA + 1), whether the store changes each
    element)) or None (the allocation is not tracked)."""
    __slots__ = ("fast", "rec")

    def __init__(self, fast, rec):
        self.fast, self.rec = fast, rec


class _Elems:
    """The elements ``first + [0, per)`` of each access (n rows of ``per`` elements). Rows
    whose first elements form an affine nest (``memory.nest``: a warp's consecutive vectors,
    the rows of a tile) are read and written as a strided slice; other rows aligned to their
    power-of-two size whole, through a view of ``per`` elements as one item (one index per
    row, not per element)."""
    __slots__ = ("first", "per", "aligned", "_idx", "_nest")

    def __init__(self, first, per):
        self.first, self.per, self._idx, self._nest = first, per, None, False
        self.aligned = per & (per - 1) == 0 and not (first & (per - 1)).any()

    @property
    def shape(self):
        return (len(self.first), self.per)

    def __getitem__(self, jk):
        """Element index of row j, element k (messages)."""
        j, k = jk
        return self.first[j] + k

    def _strided(self, arr, write):
        """``arr`` at the elements as a strided view (n, per) of ``arr`` itself, or None (the
        rows are scattered, fall outside ``arr``, or, for ``write``, overlap)."""
        ns = self._nest
        if ns is False:
            ns = self._nest = M.nest(self.first) if len(self.first) >= M.FAST_MIN else None
        if ns is None:
            return None
        f0, shape, strides, last = ns
        if f0 < 0 or last + self.per > len(arr) or (write and not M.disjoint(shape, strides, self.per)):
            return None
        isz = arr.itemsize
        return as_strided(arr[f0:], shape=(*shape, self.per),
                            strides=(*(s * isz for s in strides), isz))

    def _rows(self, arr):
        if self.per == 1:
            return arr, self.first
        if self.aligned and len(arr) % self.per == 0 and arr.flags.c_contiguous:
            return arr.view(np.dtype((np.void, self.per * arr.itemsize))), self.first // self.per
        return None, None

    def take(self, arr):
        """``arr`` at the elements: (n, per), a copy."""
        v = self._strided(arr, False)
        if v is not None:
            return np.array(v, order="C").reshape(self.shape)
        v, q = self._rows(arr)
        if v is None:
            return arr[self.index()]
        return v[q].view(arr.dtype).reshape(self.shape)

    def put(self, arr, vals):
        v = self._strided(arr, True)
        if v is not None:
            v[...] = vals.reshape(v.shape)
            return
        v, q = self._rows(arr)
        if v is None:
            arr[self.index()] = vals
        else:
            v[q] = np.ascontiguousarray(vals).view(v.dtype).reshape(-1)

    def index(self):
        if self._idx is None:
            self._idx = self.first[:, None] + np.arange(self.per)
        return self._idx
