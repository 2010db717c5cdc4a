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

    A store that is a slice away from every element stored before (outside their hull), or one
    whose CTAs' parts stay apart from every other CTA's stores (``_Owners``: per-CTA hulls of
    the batch), is only recorded; the per-element tags are made, and the records applied in
    order, when a check first reads them (``_tag_array``): a row kernel whose CTAs each write
    their own rows (chunk after chunk, batch after batch) never makes them."""

    def __init__(self, launch):
        self.grid = launch.grid
        self.tags = {}            # allocation index -> [element size, int32 per element:
                                  # 2 * (CTA + 1) + changed, 0: no plain store yet (made by
                                  # _tag_array), its length]
        self.ranges = []          # (base, end) of tracked allocations
        self.hull = {}            # allocation index -> [lo, hi): the elements stored so far lie there
        self.pending = {}         # allocation index -> records of slice stores not yet in its tags
        self._npending = 0        # elements of the arrays they hold
        self.owners = {}          # allocation index -> _Owners: where each CTA stored (no tags read)
        self._c2 = None           # (cta_ids, 2 * (CTA + 1) per CTA) of the batch last seen

    def recycle(self):
        """The launch has ended: hand the tag arrays to the next launch (``shadow``)."""
        shadow.recycle(*(e[1] for e in self.tags.values() if e[1] is not None))
        self.tags, self.ranges, self.hull, self.pending, self._npending = {}, [], {}, {}, 0
        self.owners, self._c2 = {}, None

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
                tg = tg.reshape(len(rec[0]), -1)
            np.add(_expand(rec, tg.shape), _changed(changed, tg.shape), out=tg, casting="unsafe")
            self._npending -= _held(rec, changed)
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
            lo, hi = int(e.first.min()), int(e.first.max()) + e.per
            self._grow(al.index, lo, hi)
            owners = self.owners.get(al.index)
            if owners is not None:            # not split per CTA: any CTA may have stored there
                owners.add(lo, hi)
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
        Where the CTAs' stores stay apart (``_Owners``: each CTA of a batch its own range, away
        from what earlier batches stored) the tags are not even looked at: the store is only
        recorded. None when the general path must decide (scattered or overlapping addresses, a
        fault, an element another CTA stored)."""
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
        index = al.index
        per, off = nb // gran, (first - al.base) // gran
        es = [s // gran for s in strides]
        dims = (*shape, per)
        c2 = self._c2
        if c2 is None or c2[0] is not ctx.cta_ids:
            c2 = self._c2 = (ctx.cta_ids, ((ctx.cta_ids + 1) * 2).astype(np.int32))
        c2 = c2[1]                            # 2 * (CTA + 1) per CTA of the batch
        two_d = g.full and _c_dense(dims, (*es, 1))           # slots are CTA-major: a row of S * per per CTA
        if two_d:
            rec = (c2, 0)
        elif g.full:                          # ... each CTA's record S * per times
            rec = (c2, ctx.S * per)
        else:
            rec = (c2[ctx.slot_cta[g.idx]], per)
        lo, hi = off, (fast[1][3] - al.base) // gran + per
        tg = None
        owners = self.owners.get(index)
        if owners is None:          # what was stored before (the general path) lies in the hull
            owners = self.owners[index] = _Owners()
            h = self.hull.get(index)
            if h is not None:
                owners.add(*h)
        if not owners.store(ctx, g, off, shape, es, per, lo, hi, addrs, al.base, gran) and \
                self._stored_near(index, lo, hi):
            tg = M._nest_view(self._tag_array(index), 4, off * 4, shape, [s * 4 for s in es], per)
            if two_d:
                tg = tg.reshape(len(c2), -1)
            if tg.max() > 0:                  # tags are >= 0
                r = _expand(rec, tg.shape)
                if ((tg != 0) & ((tg >> 1) != (r >> 1))).any():
                    return None               # another CTA stored an element: the general path
        self._grow(index, lo, hi)
        ug = _UINT[gran]
        old = M._nest_view(al.view(ug), gran, first - al.base, shape, strides, per)
        new = vals.view(ug).reshape(old.shape)
        changed = old != new
        if changed.all():                     # the common case: one flag, not one per element
            changed = True
        return _Fast(fast, (index, tg, (off, dims, es, two_d, rec, changed)))

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
                    np.add(_expand(record[4], tg.shape), _changed(record[5], tg.shape), out=tg,
                           casting="unsafe")          # 2 * (CTA + 1) + changed
                    return
                self.pending.setdefault(index, []).append(record)
                self._npending += _held(record[4], record[5])
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
_RECORD = 256                     # ... counting each record as this many


def _c_dense(dims, strides) -> bool:
    """Whether a view of ``dims`` with element ``strides`` is C-contiguous (NumPy's rule: a
    dimension of 1 has any stride)."""
    want = 1
    for d, st in zip(reversed(dims), reversed(strides)):
        if d != 1 and st != want:
            return False
        want *= d
    return True


def _expand(rec, shape):
    """The tags a record writes, 2 * (CTA + 1) per element, as an array of ``shape`` (or one
    that broadcasts to it): ``rec`` is (per CTA of the batch, 0) for a store whose tags are one
    row per CTA, else (per CTA or per lane, how many consecutive elements each covers)."""
    arr, k = rec
    if k == 0:
        return arr[:, None]
    return np.repeat(arr, k).reshape(shape)


def _changed(changed, shape):
    """A record's changed flags (True: every element changed) shaped for ``shape``."""
    return changed if changed is True else changed.reshape(shape)


def _held(rec, changed) -> int:
    """What a pending record holds, in elements (``_PENDING_LIMIT``): its arrays, and
    ``_RECORD`` for the record itself (a loop of small stores applies its records now and then)."""
    return _RECORD + len(rec[0]) + (0 if changed is True else changed.size)


_EMPTY = np.iinfo(np.int64).max       # _Owners.lo of a CTA that stored nothing (hi: 0)
_SPLITS: dict = {}


def _split(shape, strides, parts):
    """``parts`` equal consecutive blocks of a nest's positions in C order (the lanes of each
    CTA of a full batch: slots are CTA-major) as (first element of each, relative, int64;
    extent: last minus first element of a block; step: the smallest distance from a block's
    last element to the next block's first, so that the blocks of accesses of ``per`` elements
    are in order and apart when ``per <= step``), or None when a block is not a sub-nest."""
    key = (tuple(shape), tuple(strides), parts)
    got = _SPLITS.get(key, False)
    if got is not False:
        return got
    starts, rem, inner = np.zeros(1, np.int64), parts, None
    for i, (d, s) in enumerate(zip(shape, strides)):
        if rem == 1:
            inner = list(zip(shape[i:], strides[i:]))
            break
        if d % rem == 0:                  # the blocks split this dimension
            q = d // rem
            starts = (starts[:, None] + np.arange(rem, dtype=np.int64) * (q * s)).reshape(-1)
            inner = [(q, s), *zip(shape[i + 1:], strides[i + 1:])]
            break
        if rem % d:
            inner = None
            break
        starts = (starts[:, None] + np.arange(d, dtype=np.int64) * s).reshape(-1)
        rem //= d
    else:
        inner = [] if rem == 1 else None
    if inner is None:
        got = None
    else:
        extent = sum((c - 1) * s for c, s in inner)
        step = int(np.diff(starts).min()) - extent if len(starts) > 1 else 1 << 62
        got = (starts, extent, step)
    if len(_SPLITS) > 256:
        _SPLITS.clear()
    _SPLITS[key] = got
    return got


class _Owners:
    """Where the plain stores into one tracked allocation lie, per CTA (elements), so that a
    store can be shown to meet no element another CTA stored without reading the tags:
    ``prev``, the hull of every element stored by the CTAs of earlier batches (and by stores
    not split per CTA); ``lo`` / ``hi``, the hull of each CTA of the current batch (``key``, its
    ``cta_ids``; a CTA that stored nothing has ``lo`` ``_EMPTY``, ``hi`` 0), ``span`` the hull
    of them all. Every element stored in the launch lies in ``prev`` or in the hull of a CTA
    that stored it. A store whose CTAs' ranges miss ``prev`` and keep the batch's hulls pairwise
    apart meets no element of another CTA (a row kernel: each CTA its own rows, each batch after
    the last)."""
    __slots__ = ("prev", "key", "lo", "hi", "span")

    def __init__(self):
        self.prev = self.key = self.lo = self.hi = self.span = None

    def add(self, lo, hi):
        """Elements ``[lo, hi)`` may hold any CTA's store."""
        p = self.prev
        self.prev = (lo, hi) if p is None else (min(p[0], lo), max(p[1], hi))

    def store(self, ctx, g, off, shape, es, per, lo, hi, addrs, base, gran) -> bool:
        """Record a store of a nest of disjoint elements (first element ``off``, element
        ``shape`` / strides ``es`` of the lanes, ``per`` elements each, hull ``[lo, hi)``);
        whether it is shown to meet no element another CTA stored."""
        if self.key is not ctx.cta_ids:               # a new batch: the last one's hulls are past
            if self.span is not None:
                self.add(*self.span)
            self.key = self.lo = self.hi = self.span = None
        got = _cta_ranges(ctx, g, off, shape, es, per, addrs, base, gran)
        if got is not None and self._apart(ctx, self.prev, lo, hi, *got):
            sp = self.span
            self.span = (lo, hi) if sp is None else (min(sp[0], lo), max(sp[1], hi))
            return True
        self.add(lo, hi)
        return False

    def _apart(self, ctx, p, lo, hi, at, L, H, ordered) -> bool:
        """Whether CTA ranges ``[L, H)`` (CTAs ``at`` of the batch, None: every CTA, in order;
        ``[lo, hi)`` their hull; ``ordered``: known in order and apart) miss ``prev`` and keep
        the batch's hulls pairwise apart; if so they are added."""
        if p is not None and lo < p[1] and p[0] < hi and ((L < p[1]) & (H > p[0])).any():
            return False
        if self.key is None:
            if at is None:                            # every CTA, in order
                nl, nh = L, H
                if ordered:
                    self.key, self.lo, self.hi = ctx.cta_ids, nl, nh
                    return True
            else:
                n = len(ctx.cta_ids)
                nl, nh = np.full(n, _EMPTY, np.int64), np.zeros(n, np.int64)
                nl[at], nh[at] = L, H
        elif at is None:
            nl, nh = np.minimum(self.lo, L), np.maximum(self.hi, H)
        else:
            nl, nh = self.lo.copy(), self.hi.copy()
            nl[at] = np.minimum(nl[at], L)
            nh[at] = np.maximum(nh[at], H)
        if not (nh[:-1] <= nl[1:]).all() or (at is not None and not nh.all()):
            # not in CTA order, or CTAs that stored nothing between: sort those that did
            have = nh > 0
            ls, hs = nl[have], nh[have]
            order = np.argsort(ls, kind="stable")
            if not (hs[order[:-1]] <= ls[order[1:]]).all():
                return False
        self.key, self.lo, self.hi = ctx.cta_ids, nl, nh
        return True


def _cta_ranges(ctx, g, off, shape, es, per, addrs, base, gran):
    """(CTAs' positions in the batch, first element, end element) of each CTA's part of a store
    (``_Owners.store``), or None: the parts of a full batch's store from its nest (``_split``),
    of a partial one from its lanes' addresses (lanes of one CTA are consecutive)."""
    if g.full:
        sp = _split(shape, es, len(ctx.cta_ids))
        if sp is None:
            return None
        starts, extent, step = sp
        L = starts + off
        return None, L, L + (extent + per), per <= step
    cp = ctx.slot_cta[g.idx]
    if len(cp) > 1 and (cp[1:] < cp[:-1]).any():
        return None
    el = ((addrs - np.uint64(base)) // np.uint64(gran)).view(np.int64)
    at = np.concatenate(([0], np.flatnonzero(cp[1:] != cp[:-1]) + 1))
    return cp[at], np.minimum.reduceat(el, at), np.maximum.reduceat(el, at) + per, False


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
