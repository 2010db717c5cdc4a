"""The TMA's tensor copies: cp.async.bulk.tensor 1d-5d loads and stores (tile, tile::gather4 /
scatter4, im2col / im2col_no_offs) and cp.reduce.async.bulk.tensor, with the tensor maps they
read (decoded once per content). Which elements a box covers and where they land is
``tma_boxes``; the bulk async-groups, the helpers shared with the other bulk copies and
``read_shared_async`` are ``bulk``'s.

A copy is performed when it is issued (``bulk``'s module doc). The boxes of one instruction
(one per issuing thread) are issued in thread order; sanitized, their checks run first, all at
once (``_deliver_boxes``, ``_put_boxes``), and box by box only where one may fail, so the values
and the reports (naming the thread whose box it is) are those of issuing them one by one. An
in-bound tile box moves as strided slices of global memory, and a box whose swizzled slots fill
a contiguous span of shared memory as one slice in address order (``_Slots``).
``.multicast::cluster`` loads deliver through ``multicast_ctas``, the cluster helper's hook. A
unicast load's bytes complete on the mbarrier its operand names: in the destination's CTA, or,
with ``.cta_group::2``, in the peer CTA of the pair (a 2-SM GEMM's loads all count on the
leader CTA's barrier).
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError, MisalignedAccessError
from ...types import u16, u32
from ..machine import mbarrier as MB
from ..machine.cluster import CLUSTER_BIT
from ..machine.group import Group
from ..machine.registry import register
from ..sanitizer import async_proxy as AP
from ..sanitizer import bulk_groups as BG
from ..state import memory as M
from ..state import tensormap as TM
from ..state.operands import items, per_thread, reader
from . import tma_boxes as T
from .bulk import _UINT, _land_late, _one, _shared_at, _vals, multicast_ctas, read_shared_async
from .load_store import address_getter, space_code


# ----------------------------------------------------------------------------- tensor maps


def read_tensormap(ctx, gj, addr: int, symspace=None) -> TM.TensorMapFields:
    """Decode the tensor map at ``addr`` (a param, const or global address, or a generic one):
    its bytes are read (and checked) every time, their fields and problems found once per
    content (``tensormap.decode_checked``)."""
    code = space_code(addr) if symspace != "param" else 4
    if addr % 64:
        raise ctx.error(MisalignedAccessError,
                        f"the tensor map address {addr:#x} is not 64-byte aligned", gj)
    space = {0: ctx.mem.gspace, 3: ctx.mem.cspace, 4: ctx.mem.pspace}.get(code)
    if space is None:
        where = {1: "shared", 2: "local"}.get(code, "unknown")
        raise ctx.error(InterpreterError, f"the tensor map address {addr:#x} is in {where} memory; a "
                                          f"TMA reads its tensor map from param, const or global memory", gj)
    raw = space.read_row(addr, TM.SIZE, 64)
    if raw is None:         # (a check fails: the gather reports it)
        raw = space.load(np.array([addr], np.uint64), np.uint8, TM.SIZE, align=64)[0].tobytes()
    if code == 0:
        BG.check_tensormap(ctx, addr, gj)
    f, bad = TM.decode_checked(raw)
    if bad:
        raise ctx.error(InterpreterError, f"the tensor map at {addr:#x} is not valid: " + "; ".join(bad)
                        + " (built with tensor_map() / by tensormap.replace?)", gj)
    return f


def _tmap_operand(prog, op, scope):
    getaddr, symspace = address_getter(prog, op, scope)
    vec = op.extra[0] if getattr(op, "extra", None) else None
    coords = [reader(prog, o, u32, scope) for o in (items(vec) if vec is not None else [])]
    return getaddr, symspace, coords


def _coords(coords, ctx, g):
    """Each thread's coordinates (signed 32-bit, innermost first) as lists of Python ints, one
    list per thread (a box takes them as ints)."""
    cols = [per_thread(np.asarray(c(ctx, g)).astype(np.uint32).view(np.int32), g.n).tolist() for c in coords]
    return list(zip(*cols)) if cols else [()] * g.n


def _mode(dec):
    m = dec.get("mode") or ".tile"
    return {".tile": "tile", ".tile::gather4": "gather4", ".tile::scatter4": "gather4",
            ".im2col": "im2col", ".im2col_no_offs": "im2col"}.get(m, m[1:])


# ----------------------------------------------------------------------------- tensor copies
@register("cp.async.bulk.tensor")
def _tensor(prog, d, ins, scope, dec):
    dims = int(dec.get("dim")[1])
    mode = _mode(dec)
    if mode not in ("tile", "gather4", "im2col"):
        raise InterpreterError(f"cp.async.bulk.tensor .{mode} (sm_100 wide im2col) is not supported by "
                               f"the interpreter yet")
    if dec.get("dst") == ".global":
        _tensor_store(prog, d, ins, scope, dec, dims, mode, None)
    else:
        _tensor_load(prog, d, ins, scope, dec, dims, mode)


@register("cp.reduce.async.bulk.tensor")
def _tensor_reduce(prog, d, ins, scope, dec):
    _tensor_store(prog, d, ins, scope, dec, int(dec.get("dim")[1]), _mode(dec), dec.get("op")[1:])


def _check_rank(ctx, gj, f, dims, what):
    if f.rank != dims:
        raise ctx.error(InterpreterError, f"{what}.{dims}d uses a tensor map of rank {f.rank}", gj)


def _check_direction(ctx, gj, f, what):
    bad = T.direction_problem(f, what)
    if bad:
        raise ctx.error(InterpreterError, bad, gj)


def _tensor_load(prog, d, ins, scope, dec, dims, mode):
    d.noun = "TMA load"
    ops = list(ins.operands)
    gdst, _ = address_getter(prog, ops[0], scope)
    gtm, symspace, coords = _tmap_operand(prog, ops[1], scope)
    gmbar, _ = address_getter(prog, ops[2], scope)
    rest = ops[3:]
    offs = None
    if mode == "im2col" and rest:
        offs = [reader(prog, o, u16, scope) for o in items(rest.pop(0))]
    mask = reader(prog, rest.pop(0), u16, scope) if dec.has(".multicast::cluster") else None
    pair = dec.get("cta_group") == ".cta_group::2"

    def load(ctx, g):
        dst, tma, mb = _vals(gdst, ctx, g, np.uint64), _vals(gtm, ctx, g, np.uint64), _vals(gmbar, ctx, g, np.uint64)
        cs = _coords(coords, ctx, g)
        ms = _vals(mask, ctx, g) if mask is not None else None
        if mode == "tile" and offs is None and _tiles_at_once(ctx, g, d, dst, tma, mb, cs, ms, symspace, dims):
            return
        io = [_vals(o, ctx, g) for o in offs] if offs is not None else None
        boxes = []
        # tensor map address -> its fields (a load writes no global memory; an opted-in launch's
        # statistics count every read of a map)
        maps = {} if ctx.mem.gspace.counter is None else None
        try:
            for j in range(g.n):
                gj = _one(ctx, g, j)
                a = int(tma[j])
                f = maps.get(a) if maps is not None else None
                if f is None:
                    f = read_tensormap(ctx, gj, a, symspace)
                    if maps is not None:
                        maps[a] = f
                    _check_rank(ctx, gj, f, dims, "cp.async.bulk.tensor")
                    _check_direction(ctx, gj, f, "load")
                box = T.make_box(f, mode, list(cs[j]), [int(o[j]) for o in io] if io else None)
                cta, off = _shared_at(ctx, gj, int(dst[j]), 128, "the TMA destination")
                mcta, moff = _shared_at(ctx, gj, int(mb[j]), 8, "the mbarrier")
                ctas = [cta] if ms is None else multicast_ctas(ctx, gj, int(ctx.slot_cta[gj.idx[0]]), int(ms[j]))
                if ms is None and mcta != cta:
                    _check_peer_mbarrier(ctx, gj, pair, cta, mcta)
                vals = T.gather_global(ctx, f, box)
                boxes.append((j, gj, f, box, vals, ctas, off, moff, mcta if ms is None else None))
        except M.MemoryFault as e:
            e.lane = j          # (the thread whose box it is)
            raise
        finally:        # (the boxes before one that fails are delivered, as if one by one)
            if boxes:
                _deliver_boxes(ctx, boxes, d)
    d.fn = load


def _tiles_at_once(ctx, g, d, dst, tma, mb, cs, ms, symspace, dims) -> bool:
    """A tiled load whose threads (two or more, one a CTA) each copy one in-bound box through
    one tensor map into their own CTA (unicast: ``ms`` None) or into the CTAs of their
    ``.multicast::cluster`` mask ``ms``, at a CTA-relative shared offset that no other box of
    the instruction lands on in the same CTA, and complete it on an mbarrier at their offset in
    each CTA it lands in (a producer warp's elected thread per CTA loading the next stage of a
    ring, or its share of a tile for the cluster): what ``load`` and ``_deliver_boxes`` do box by
    box, done at once, the boxes swizzled together and written into shared memory as slices.
    False, having changed nothing, where any of that does not hold or a check would report
    (``load`` then issues the boxes one by one and reports): a late or random schedule,
    statistics kept, a box partly out of bounds, a destination or mbarrier not in the CTA's own
    window or misaligned, a mask naming no CTA or one outside the cluster, an mbarrier not
    initialized, shared memory or the race tracker not taking the boxes at once."""
    n = g.n
    if n < 2 or ctx.schedule.mode != "eager" or ctx.mem.gspace.counter is not None or ctx.timeline is not None:
        return False
    maps, offs, moffs = tma.tolist(), dst.tolist(), mb.tolist()
    if maps.count(maps[0]) != n or any(o >= CLUSTER_BIT or o % 128 for o in offs) or \
            any(m >= CLUSTER_BIT or m % 8 for m in moffs):
        return False
    ctas = ctx.slot_cta[g.idx].tolist()
    if len(set(ctas)) != n:
        return False
    if ms is None:
        dests = [(c,) for c in ctas]
    else:
        try:
            dests = [ctx.masked_banks(c, k) for c, k in zip(ctas, ms.tolist())]
        except InterpreterError:        # (``multicast_ctas`` reports it)
            return False
    # every box's copies: (box, CTA, offset, mbarrier offset), in issue order
    lands = [(j, c, offs[j], moffs[j]) for j in range(n) for c in dests[j]]
    if any(not t for t in dests) or any((c, m) not in ctx.mbar for _, c, _, m in lands):
        return False
    try:
        f = read_tensormap(ctx, _one(ctx, g, 0), maps[0], symspace)
    except Exception:           # (``load`` reads it again and reports)
        return False
    if f.rank != dims or f.mode != 0 or f.packed or T.direction_problem(f, "load"):
        return False
    p = T.tile_plan(f)
    if not p.shape or not all(all(map(T.inside, c, p.lims)) for c in cs):
        return False
    sh, es = ctx.shared, f.elem_size
    count = len(p.rel)
    nbytes = count * es
    at = sorted(set(offs))          # the offsets the boxes land at: apart, or one CTA each
    if ms is not None and any(b - a < nbytes for a, b in zip(at, at[1:])) or \
            len({(c, o) for _, c, o, _ in lands}) != len(lands):
        return False
    try:
        slots = {o: box_slots(f, o, count, es, sh.size) for o in at}
    except M.MemoryFault:
        return False
    if not all(sl.contig for sl in slots.values()) or es > 1 and (any(o % es for o in at) or sh.stride % es):
        return False
    dt, gs, base = np.dtype(_UINT[es]), ctx.mem.gspace, int(f.address)
    rows = np.empty((n, count), dt)              # each box a strided slice of the tensor
    if not gs.load_nests([base + sum(map(int.__mul__, c, p.strides)) for c in cs], p.shape, p.nstrides, rows):
        return False
    race = sh.race if ctx.sanitize else None
    if race is not None:        # (a box's copy in its own CTA is its warp's; the others are not tracked)
        own = [(j, c, o) for j, c, o, _ in lands if c == ctas[j]]
        if own:
            js, cs_own, os_own = (np.array(v, np.int64) for v in zip(*own))
            if not AP.race_ranges(race, "w", cs_own, os_own, os_own + nbytes,
                                  ctx.warp_in_cta[g.idx[js]].astype(np.int64)):
                return False
    if len(at) == 1:                    # every box in address order: a slice
        ordered = slots[at[0]].rows_in_order(rows)
    else:
        ordered = np.empty_like(rows)
        for o, sl in slots.items():
            pick = [j for j in range(n) if offs[j] == o]
            ordered[pick] = sl.rows_in_order(rows[pick])
    flat, per = sh.view(dt), sh.stride // es
    for j, c, o, _ in lands:
        e0 = c * per + o // es
        flat[e0:e0 + count] = ordered[j]
    AP.spans_written(sh, [(c, o, o + nbytes) for _, c, o, _ in lands])
    landed = AP.track_spans(ctx, d, [(c, m, o, o + nbytes, slots[o].span) for _, c, o, m in lands]) \
        if ctx.sanitize else [None] * len(lands)
    issuers = Group(g.idx, g.pc, ctx.N)     # (the threads as they are now: box j's is lane j)
    MB.defer_complete_each(ctx, [(j, c, m) for j, c, _, m in lands], nbytes, landed, issuers)
    return True


def _deliver_boxes(ctx, boxes, d):
    """``deliver`` of each box one instruction loaded (``boxes``: (lane, gj, f, box, vals, ctas,
    off, moff, mbar_cta)), in issue order. Sanitized, the race tracker's checks of all of them
    come first, at once: where no box can race, their ranges are recorded together and the
    boxes written with no race check left; else box by box. A memory fault names the thread
    of its box (``lane``)."""
    race = ctx.shared.race
    late = [ctx.schedule.late() for _ in boxes]     # (drawn box by box, as one by one)
    rng = _race_ranges(ctx, [(gj, f, box, off, [] if lt else
                              [c for c in ctas if int(c) == int(ctx.slot_cta[gj.idx[0]])])
                             for (_, gj, f, box, _, ctas, off, _, _), lt in zip(boxes, late)]) \
        if race is not None and ctx.sanitize else None
    if rng is not None and not AP.race_ranges(race, "w", *rng):
        rng = None
    for (j, gj, f, box, vals, ctas, off, moff, mcta), lt in zip(boxes, late):
        try:
            deliver(ctx, gj, f, box, vals, ctas, off, moff, d, mcta, race=rng is None, late=lt)
        except M.MemoryFault as e:
            e.lane = j
            raise


def _race_ranges(ctx, boxes):
    """(CTAs, lows, ends, warps): the shared ranges of one instruction's boxes (``boxes``: (gj,
    f, box, off, the CTAs whose copy is the issuing warp's)) for ``RaceTracker.ranges_hit``; None
    when one is not a contiguous span (its bytes are checked one by one) or fails its checks."""
    sh = ctx.shared
    ctas, los, his, slots = [], [], [], []
    ends = {}               # (map, offset, elements) -> end offset: the boxes repeat a few
    for gj, f, box, off, mine in boxes:
        key = (id(f), off, box.n)
        end = ends.get(key)
        if end is None:
            try:
                contig = box_slots(f, off, box.n, box.esz, sh.size).contig
            except M.MemoryFault:
                return None
            if not contig:
                return None
            end = ends[key] = off + box.nbytes
        for c in mine:
            ctas.append(c)
            los.append(off)
            his.append(end)
            slots.append(gj.idx[0])
    if not ctas:
        return None
    return (np.array(ctas, np.int64), np.array(los, np.int64), np.array(his, np.int64),
            ctx.warp_in_cta[np.array(slots, np.int64)].astype(np.int64))


def _check_peer_mbarrier(ctx, gj, pair: bool, cta: int, mcta: int):
    """A unicast load completes on an mbarrier in its destination's CTA or, with
    ``.cta_group::2``, in the peer CTA of that CTA's pair (ranks 2k, 2k+1)."""
    from .tcgen05 import _pair

    if pair and mcta in _pair(ctx, cta, gj, 0):
        return
    raise ctx.error(InterpreterError,
                    "the mbarrier of a cp.async.bulk.tensor load must be in the shared memory "
                    "of the destination's CTA" + (" or of its peer CTA of the pair" if pair else
                                                 " (.cta_group::2 also allows the peer CTA of "
                                                 "the pair)") +
                    f"; the destination is in cluster rank {int(ctx.cluster_rank_of_cta[cta])}, "
                    f"the mbarrier in rank {int(ctx.cluster_rank_of_cta[mcta])}", gj)


_SLOTS: dict = {}
_CHUNK = np.dtype((np.void, 16))


class _Slots:
    """Where a box of ``n`` elements stored from shared offset ``off`` lands (memoised by
    ``box_slots``): ``phys``, its elements' swizzled offsets; ``contig``, whether they are
    exactly the bytes ``[off, off + n * es)``; ``elems``, ``phys // es``; ``span``, its lowest
    and end offset; ``bytes_rel``, the offsets of all its bytes (made on first use). A
    contiguous box (``off`` a multiple of ``es``) moves as one slice of the span: ``order``,
    its elements in address order, and ``local``, their places in the span (both None when the
    swizzle leaves them in order). A swizzle moves 16-byte chunks whole: ``chunks``, the order
    of the box's 16-byte chunks, lets ``in_order`` move them as such (None where it does not)."""

    __slots__ = ("phys", "contig", "elems", "span", "es", "_bytes", "order", "local", "chunks", "_alike",
                 "_from")

    def __init__(self, phys, off, n, es):
        self.phys, self.es, self._bytes = phys, es, None
        self._alike, self._from = {}, None
        lo, hi = (int(phys.min()), int(phys.max()) + es) if n else (off, off)
        self.contig = bool(n) and lo == off and hi == off + n * es
        self.span = (lo, hi)
        self.elems = phys // es
        # contiguous: the elements in address order (None: already), so that the box is written
        # as one slice of ``values[order]``
        self.order = self.local = self.chunks = None
        if self.contig and off % es == 0:
            order = np.argsort(self.elems, kind="stable")
            if not (order == np.arange(n)).all():
                self.order = order
                self.local = self.elems - off // es     # the elements' places in the span
                c = 16 // es if 16 % es == 0 else 0
                if c and n % c == 0:
                    runs = order.reshape(-1, c)
                    first = runs[:, 0]
                    if not (first % c).any() and (runs == first[:, None] + np.arange(c)).all():
                        self.chunks = first // c

    def in_order(self, vals):
        """A contiguous box's ``vals`` (box order) in address order: ``vals[order]``, moved
        16-byte chunk by chunk where the swizzle keeps chunks whole."""
        return vals if self.order is None else self.rows_in_order(vals.reshape(1, -1))[0]

    def rows_in_order(self, rows):
        """``in_order`` of each row of ``rows`` (boxes, elements): one gather for them all."""
        if self.order is None:
            return rows
        if self.chunks is not None and rows.dtype.itemsize == self.es and rows.flags.c_contiguous:
            return np.take(rows.view(_CHUNK), self.chunks, axis=1).view(rows.dtype)     # (C order)
        return np.take(rows, self.order, axis=1)

    def alike(self, other) -> bool:
        """Whether the contiguous box ``other`` places its elements in its span as this one does
        (remembered)."""
        got = self._alike.get(other)
        if got is None:
            if len(self._alike) > 64:
                self._alike.clear()
            got = self._alike[other] = other.contig and (
                other.local is self.local if self.local is None or other.local is None
                else np.array_equal(other.local, self.local))
        return got

    def read_rows(self, data, starts):
        """The elements of contiguous boxes like this one (``alike``) whose spans start at
        elements ``starts`` of ``data`` (shared memory's bytes), in box order, one row a box:
        by 16-byte chunks where the swizzle keeps them whole."""
        dt = np.dtype(_UINT[self.es])
        n = len(self.elems)
        st = np.asarray(starts, np.int64)[:, None]
        if self.order is None:
            return data.view(dt)[st + np.arange(n)]
        c = 16 // self.es
        if self.chunks is not None and len(data) % 16 == 0 and all(x % c == 0 for x in starts):
            if self._from is None:          # box chunk j: span chunk _from[j]
                self._from = np.argsort(self.chunks).astype(np.int64)
            return data.view(_CHUNK)[st // c + self._from].view(dt).reshape(len(starts), n)
        return data.view(dt)[st + self.local]

    def bytes_rel(self):
        if self._bytes is None:
            self._bytes = (self.phys[:, None] + np.arange(self.es)).reshape(-1)
        return self._bytes


def box_slots(f, off: int, n: int, es: int, size: int) -> _Slots:
    """The ``_Slots`` of a box of ``n`` elements of ``es`` bytes stored from ``off`` (memoised)."""
    key = (f.swizzle, f.atomicity, off, n, es, size)
    got = _SLOTS.get(key)
    if got is None:
        if len(_SLOTS) > 1024:
            _SLOTS.clear()
        got = _SLOTS[key] = _Slots(T.smem_slots(f, off, n, es, size), off, n, es)
    return got


def deliver(ctx, gj, f, box, vals, ctas, off, mbar_off, d, mbar_cta=None, race=True, late=None):
    """Write a loaded box at shared offset ``off`` of each batch CTA in ``ctas`` and complete its
    bytes on the mbarrier at ``mbar_off`` of that CTA, or of batch CTA ``mbar_cta`` when given
    (a ``.cta_group::2`` load signalling the peer CTA's mbarrier; the multicast hook calls this
    too). ``race=False``: the race tracker has checked and recorded the box (``_deliver_boxes``);
    ``late``: whether it lands late (None: the schedule draws it)."""
    es = box.esz
    sh = ctx.shared
    sl = box_slots(f, off, box.n, es, sh.size)
    contig = sl.contig
    own = int(ctx.slot_cta[gj.idx[0]]) if race else -1
    warp = ctx.warp_in_cta[gj.idx[:1]] if race else None
    late = ctx.schedule.late() if late is None else late
    ordered = None
    for c in ctas:
        base = int(c) * sh.stride
        w = warp if int(c) == own else None
        span = (int(c), off, off + box.nbytes) if contig else None
        if contig and base % es == 0 and off % es == 0:      # one slice, in address order
            e0 = (base + off) // es
            elems = slice(e0, e0 + box.n)
            if ordered is None:
                ordered = sl.in_order(vals)
            vals_c = ordered
        else:
            elems = sl.elems + base // es if base % es == 0 else (base + sl.phys) // es
            vals_c = vals
        if not late:
            AP.write_shared_async(ctx, gj, c, elems, vals_c, warps=w, span=span)
        mc = c if mbar_cta is None else mbar_cta
        if ctx.sanitize:
            fb = slice(base + off, base + off + box.nbytes) if contig else base + sl.bytes_rel()
            landed = AP.track_inflight(ctx, fb, d, mc, mbar_off, span=sl.span)
        else:
            landed = None
        if late:            # the bytes land when the phase that counts them completes (schedule)
            landed = _land_late(gj, c, elems, vals_c, span, landed)
        MB.defer_complete_tx(ctx, mc, mbar_off, box.tx_bytes, landed, gj)


def _tensor_store(prog, d, ins, scope, dec, dims, mode, op):
    d.noun = "TMA store" if op is None else "TMA reduction"
    ops = list(ins.operands)
    gtm, symspace, coords = _tmap_operand(prog, ops[0], scope)
    gsrc, _ = address_getter(prog, ops[1], scope)
    what = "cp.async.bulk.tensor" if op is None else "cp.reduce.async.bulk.tensor"

    def store(ctx, g):
        tma, src = _vals(gtm, ctx, g, np.uint64), _vals(gsrc, ctx, g, np.uint64)
        cs = _coords(coords, ctx, g)
        boxes = []              # issued, not yet put: every box of the instruction at once
        extents = set()         # their tensors' extents (``_writes_near``)
        # tensor map address -> its fields, while no box is put (as for a load)
        maps = {} if ctx.mem.gspace.counter is None else None
        lane = -1               # the box being issued (-1: boxes being put, which name theirs)
        try:
            for j in range(g.n):
                gj = _one(ctx, g, j)
                a = int(tma[j])
                if boxes and _writes_near(extents, a):      # a tensor map the boxes may overwrite
                    _put_boxes(ctx, boxes, d, put, op)
                    boxes, extents = [], set()
                    maps = {} if maps is not None else None
                lane = j
                f = maps.get(a) if maps is not None else None
                if f is None:
                    f = read_tensormap(ctx, gj, a, symspace)
                    if maps is not None:
                        maps[a] = f
                    _check_rank(ctx, gj, f, dims, what)
                    _check_direction(ctx, gj, f, "store" if op is None else op)
                box = T.make_box(f, mode, list(cs[j]), None)
                cta, off = _shared_at(ctx, gj, int(src[j]), 128, "the TMA source")
                if cta != int(ctx.slot_cta[gj.idx[0]]):
                    raise ctx.error(InterpreterError, f"the source of {what} is shared::cta memory of the "
                                                      f"issuing CTA", gj)
                if ctx.schedule.late():     # reads its source at its bulk wait_group (schedule)
                    BG.defer_bulk(ctx, gj, lambda ctx_, gj=gj, f=f, box=box, cta=cta, off=off:
                                  put(ctx_, gj, f, box, cta, off))
                else:
                    boxes.append((j, gj, f, box, cta, off))
                    extents.add(_extent(f))
                lane = -1
        except M.MemoryFault as e:
            if lane >= 0:       # (the thread whose box it is)
                e.lane = lane
            raise
        finally:        # (the boxes before one that fails are put, as if one by one)
            if boxes:
                _put_boxes(ctx, boxes, d, put, op)

    def put(ctx, gj, f, box, cta, off, checked=False):
        """Read the box from shared memory and write (or reduce) it into the tensor
        (``checked``: ``_put_boxes`` has done the sanitizer's checks of its source)."""
        es = box.esz
        sl = box_slots(f, off, box.n, es, ctx.shared.size)
        phys, contig = sl.phys, sl.contig
        need = T.store_units(box)
        if need is None:
            vals = read_shared_async(ctx, gj, cta, phys, es, f"the {d.noun}",
                                     span=(off, off + box.nbytes) if contig else None, checked=checked,
                                     local=sl.local if contig and off % es == 0 else None)
        else:       # only what lands inside the tensor is read (and checked)
            vals = np.zeros(box.n, _UINT[es])
            vals[need] = read_shared_async(ctx, gj, cta, phys[need], es, f"the {d.noun}")
        tname = T.REDUCE_TYPES.get(f.elemtype) if op is not None else None
        T.scatter_global(ctx, f, box, vals, op, tname)
    d.fn = store


def _extent(f):
    """(lowest, end) global address a store through tensor map ``f`` may write: its tensor's
    extent, with a margin for the last element."""
    return f.address, f.address + sum((d - 1) * s for d, s in zip(f.dims, f.strides)) + 64


def _writes_near(extents, addr: int) -> bool:
    """Whether a store of boxes (not yet put) into tensors of ``extents`` (``_extent``) may
    write the 128 bytes at global ``addr``."""
    return any(addr < hi and lo < addr + TM.SIZE for lo, hi in extents)


def _put_boxes(ctx, boxes, d, put, op=None):
    """``put`` of each box of one TMA store (``boxes``: (lane, gj, f, box, cta, off)), in issue
    order. Sanitized, the checks of every source come first, at once (written, fenced, not in
    flight, no race): when they all pass, the race tracker records the ranges together and the
    boxes are read with no check left (at once where ``_sources`` can: a plain store, ``op``
    None); else box by box (the first failing box reports). A memory fault names the thread of
    its box (``lane``)."""
    rng = _store_checks(ctx, boxes) if ctx.sanitize else None
    srcs = None
    if rng is not None:         # (one range per box, in order)
        st = ctx.shared.stride
        BG.begin_bulk_reads(ctx, [int(b[1].idx[0]) for b in boxes], (rng[0] * st + rng[1]).tolist(),
                            (rng[0] * st + rng[2]).tolist(), ctx.cur)
        srcs = _sources(ctx, boxes) if op is None and ctx.timeline is None else None
        if srcs is not None and _stored_at_once(ctx, boxes, srcs):
            return
    for i, (j, gj, f, box, cta, off) in enumerate(boxes):
        try:
            if srcs is not None:        # (a plain store: ``put`` with its source read)
                T.scatter_global(ctx, f, box, srcs[i])
            else:
                put(ctx, gj, f, box, cta, off, checked=rng is not None)
        except M.MemoryFault as e:
            e.lane = j
            raise


def _sources(ctx, boxes):
    """Every box's source elements read at once, one row a box (what ``put`` reads of each,
    its checks made, for a plain store with no timeline): where the boxes go through one
    tensor map, each a contiguous span at an element-aligned offset, whose swizzle places the
    elements alike in every span (``_Slots.alike``). Else None (``put`` reads each, and
    reports)."""
    f0, b0 = boxes[0][2], boxes[0][3]
    es, n, sh = b0.esz, b0.n, ctx.shared
    if n == 0 or sh.stride % es:
        return None
    sl0, starts = None, []
    for _, _, f, box, cta, off in boxes:
        if f is not f0 or type(box) is not type(b0) or box.n != n or box.esz != es or off % es \
                or T.store_units(box) is not None:
            return None
        try:
            sl = box_slots(f, off, n, es, sh.size)
        except M.MemoryFault:
            return None
        if not sl.contig:
            return None
        if sl0 is None:
            sl0 = sl
        elif sl is not sl0 and not sl0.alike(sl):
            return None
        starts.append((int(cta) * sh.stride + off) // es)
    return sl0.read_rows(sh.data, starts)


def _stored_at_once(ctx, boxes, srcs) -> bool:
    """The boxes of a plain store whose sources ``_sources`` read (one tensor map), written
    into the tensor at once (``FlatSpace.store_nests``) where each is an in-bound tile of one
    shape; False, having written nothing, where not (``_put_boxes`` then stores box by box)."""
    f, grid0, firsts = boxes[0][2], None, []
    for _, _, _, box, _, _ in boxes:
        g = box.grid if type(box) is T.Box and box.valid is None else None     # (a PackedBox has none)
        if g is None or grid0 is not None and (g[1] != grid0[1] or g[2] != grid0[2]):
            return False
        grid0 = grid0 or g
        firsts.append(int(f.address) + int(g[0]))
    return ctx.mem.gspace.store_nests(firsts, grid0[1], grid0[2], srcs)


def _store_checks(ctx, boxes):
    """The checks ``read_shared_async`` makes of each box's source, all at once: when every box
    reads a whole contiguous span that passes them, ``_race_ranges``' ranges (recorded by the
    race tracker), else None (and no effect)."""
    sh = ctx.shared
    for _, _, f, box, _, _ in boxes:
        if T.store_units(box) is not None:
            return None
    rng = _race_ranges(ctx, [(gj, f, box, off, [cta]) for _, gj, f, box, cta, off in boxes])
    if rng is None:
        return None
    ctas, los, his, warps = rng
    if sh.init is not None and not sh.init_full:
        known, st = sh.written, sh.stride
        for c, lo, hi in zip(ctas.tolist(), los.tolist(), his.tolist()):
            if (c, lo, hi) not in known:
                if not sh.init[c * st + lo:c * st + hi].all():
                    return None
                if len(known) < 4096:           # (bytes never become unwritten)
                    known.add((c, lo, hi))
    if not AP.spans_clear(ctx, ctas, los, his):
        return None
    if sh.race is not None and not AP.race_ranges(sh.race, "r", *rng):     # (recorded when it passes)
        return None
    return rng
