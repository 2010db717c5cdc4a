"""Bulk copies: cp.async.bulk (global -> shared::cta/cluster with mbarrier complete_tx,
shared::cta -> global with bulk_group, shared::cta -> shared::cluster), cp.reduce.async.bulk,
bulk commit/wait groups, tensormap.replace, tensormap.cp_fenceproxy and the proxy fences;
st.bulk (zero-filling shared memory). Prefetches are no-ops (the ISA table marks them). The
TMA's tensor copies are ``tma``'s; the helpers they share with these (a thread's group, its
operands' values, a checked shared address, the multicast CTAs, ``read_shared_async``) are
here.

An asynchronous copy is performed when it is issued (see ``async_proxy`` for the ordering the
sanitizer checks): a load writes its destination at once and its bytes complete on the mbarrier
when a thread next waits on it (``mbarrier.defer_complete_tx``), a store reads its source and
writes global memory at once.
"""
from __future__ import annotations

import struct

import numpy as np

from ...errors import InterpreterError, MisalignedAccessError, UninitializedReadError
from ...types import b64, u16, u32, u64
from ..sanitizer import async_proxy as AP
from ..sanitizer import bulk_groups as BG
from ..machine import mbarrier as MB
from ..state import memory as M
from ..state import tensormap as TM
from . import tma_boxes as T
from ..machine.group import Group
from ..state.operands import per_thread, reader
from ..machine.cluster import CLUSTER_BIT, shared_banks, shared_target
from .load_store import address_getter
from ..machine.registry import register

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _one(ctx, g, j):
    return Group(g.idx[j:j + 1], g.pc, ctx.N)


def _vals(get, ctx, g, dt=np.int64):
    return per_thread(np.asarray(get(ctx, g)), g.n).astype(dt)


def _shared_at(ctx, gj, addr: int, align: int, what: str):
    """(cta, offset) of a shared::cta / shared::cluster address, checked for alignment."""
    if addr < CLUSTER_BIT:          # a shared::cta window offset: the thread's own CTA
        cta, off = int(ctx.slot_cta[gj.idx[0]]), addr
    else:
        banks, offs = shared_banks(ctx, gj, np.array([addr], np.uint64))
        cta, off = int(banks[0]), int(offs[0])
    if off % align:
        raise ctx.error(MisalignedAccessError,
                        f"{what} at shared address {off:#x} is not {align}-byte aligned", gj)
    return cta, off


def multicast_ctas(ctx, gj, cta: int, mask: int):
    """The batch CTAs a ``.multicast::cluster`` copy issued by batch CTA ``cta`` with CTA mask
    ``mask`` delivers to: bit ``r`` of ``mask`` is the CTA of ``%cluster_ctarank`` ``r`` of the
    issuing CTA's cluster (``cluster.ClusterMixin.masked_banks``); the data lands at the same
    CTA-relative offset in each and completes its bytes on the mbarrier at the same offset."""
    try:
        return ctx.masked_banks(cta, mask)
    except InterpreterError as e:
        raise ctx.error(InterpreterError, f".multicast::cluster: {e.message}", gj) from None


def _land_late(gj, c, elems, vals, span, landed):
    """The phase-completion callback of a copy that lands late: write it, then what the
    sanitizer runs on landing. Not attributed to a warp for race tracking: it lands after the
    barrier phase that orders it."""
    def land(ctx, cta, off):
        AP.write_shared_async(ctx, gj, c, elems, vals, warps=None, span=span)
        if landed is not None:
            landed(ctx, cta, off)
    return land


def read_shared_async(ctx, gj, cta, phys, es, what, span=None, checked=False, local=None):
    """An async-proxy read of elements of ``es`` bytes at shared offsets ``phys`` of batch CTA
    ``cta`` by the bulk operation of thread ``gj``: sanitizer checks (initialized, fenced, not in
    flight, race tracker; ``checked``: the caller made them), then the bulk group tracks the
    bytes; returns the element bits. ``span``: ``(lo, hi)`` when the bytes read are exactly
    offsets ``[lo, hi)`` (``local``: the elements' indices in it, when ``lo`` is a multiple of
    ``es`` and they are not in order; None: in order)."""
    sh = ctx.shared
    cb = int(cta) * sh.stride
    if ctx.timeline is not None and ".bulk_group" in ctx.cur.ins.modifiers:
        # in flight until the cp.async.bulk.wait_group retiring its bulk async-group
        ctx.timeline.issue(ctx, "bulk group", gj, AP.state(ctx).committed, 1, len(phys) * es)
    if ctx.sanitize:
        if span is not None:
            fb = slice(cb + span[0], cb + span[1])
        else:
            base = cb + np.asarray(phys, np.int64)
            fb = (base[:, None] + np.arange(es)).reshape(-1)
        if checked:         # (and its bulk read begun: _put_boxes)
            return _shared_elems(sh, cb, phys, es, span, local)
        if sh.init is not None and not sh.init[fb].all():
            bad = sh.init[fb] == 0
            if bad.any():
                k = int(np.argmax(bad))
                a = (fb.start + k if span is not None else int(fb[k])) - int(cta) * sh.stride
                w = sh.describe_offset(a)
                raise ctx.error(UninitializedReadError,
                                f"{what} reads shared address {a:#x}{' ' + w if w else ''} before any thread "
                                f"of this CTA wrote it", gj)
        AP._check_flat_read(ctx, fb, what, gj)
        if sh.race is not None:
            warp = int(ctx.warp_in_cta[gj.idx[0]])
            if span is not None:
                sh._race(lambda *a: AP.race_load_range(sh.race, int(cta), span[0], span[1], warp),
                         None, None, 0, None)
            else:
                offs = (base - cb).astype(np.uint64)
                sh._race(sh.race.on_load, np.full(len(offs), int(cta)), offs, es, np.full(len(offs), warp))
        BG.begin_bulk_read(ctx, gj, fb, ctx.cur)
    return _shared_elems(sh, cb, phys, es, span, local)


def _shared_elems(sh, cb: int, phys, es: int, span, local):
    """The bits of the ``es``-byte elements at shared offsets ``phys`` from flat byte ``cb`` (a
    CTA's first): a slice where ``span`` is theirs (``read_shared_async``)."""
    view = sh.view(np.dtype(_UINT[es]))
    if span is not None and cb % es == 0 and span[0] % es == 0:
        e0 = (cb + span[0]) // es
        got = view[e0:e0 + len(phys)]
        return got[local] if local is not None else got.copy()
    return view[(cb + np.asarray(phys, np.int64)) // es]


# ----------------------------------------------------------------------------- non-tensor bulk copies
def _bulk_size(ctx, gj, size, what):
    if size % 16 or size <= 0:
        raise ctx.error(InterpreterError, f"{what}: size {size} must be a positive multiple of 16 bytes", gj)


@register("cp.async.bulk")
def _bulk(prog, d, ins, scope, dec):
    dst, src = dec.get("dst"), dec.get("src")
    ops = list(ins.operands)
    gdst, _ = address_getter(prog, ops[0], scope)
    gsrc, _ = address_getter(prog, ops[1], scope)
    gsize = reader(prog, ops[2], u32, scope)
    if dst == ".global":
        d.noun = "bulk store"
        gmask = reader(prog, ops[-1], u16, scope) if dec.has(".cp_mask") else None

        def s2g(ctx, g):
            da, sa, sz = _vals(gdst, ctx, g, np.uint64), _vals(gsrc, ctx, g, np.uint64), _vals(gsize, ctx, g)
            bm = _vals(gmask, ctx, g) if gmask is not None else None
            for j in range(g.n):
                gj = _one(ctx, g, j)
                n = int(sz[j])
                _bulk_size(ctx, gj, n, "cp.async.bulk")
                cta, off = _shared_at(ctx, gj, int(sa[j]), 16, "the bulk copy source")
                if int(da[j]) % 16:
                    raise ctx.error(MisalignedAccessError,
                                    f"the bulk copy destination {int(da[j]):#x} is not 16-byte aligned", gj)
                keep = None if bm is None else ((int(bm[j]) >> (np.arange(n) % 16)) & 1).astype(bool)
                if ctx.schedule.late():     # reads its source at its bulk wait_group (schedule)
                    BG.defer_bulk(ctx, gj, lambda ctx_, gj=gj, a=(cta, off, n, int(da[j]), keep): put(ctx_, gj, *a))
                else:
                    put(ctx, gj, cta, off, n, int(da[j]), keep)

        def put(ctx, gj, cta, off, n, dst, keep):
            data = read_shared_async(ctx, gj, cta, off + np.arange(n), 1, "the bulk store", span=(off, off + n))
            addrs = np.uint64(dst) + np.arange(n, dtype=np.uint64)
            if keep is not None:
                addrs, data = addrs[keep], data[keep]
            if len(addrs):
                ctx.mem.gspace.store(addrs, data[:, None])
        d.fn = s2g
        return
    d.noun = "bulk load" if src == ".global" else "bulk copy"
    gmbar, _ = address_getter(prog, ops[3], scope)
    mask = reader(prog, ops[4], u16, scope) if dec.has(".multicast::cluster") else None

    def to_shared(ctx, g):
        da, sa, sz = _vals(gdst, ctx, g, np.uint64), _vals(gsrc, ctx, g, np.uint64), _vals(gsize, ctx, g)
        mb = _vals(gmbar, ctx, g, np.uint64)
        ms = _vals(mask, ctx, g) if mask is not None else None
        for j in range(g.n):
            gj = _one(ctx, g, j)
            n = int(sz[j])
            _bulk_size(ctx, gj, n, "cp.async.bulk")
            cta, off = _shared_at(ctx, gj, int(da[j]), 16, "the bulk copy destination")
            _, moff = _shared_at(ctx, gj, int(mb[j]), 8, "the mbarrier")
            if src == ".global":
                if int(sa[j]) % 16:
                    raise ctx.error(MisalignedAccessError,
                                    f"the bulk copy source {int(sa[j]):#x} is not 16-byte aligned", gj)
                data = ctx.mem.gspace.load(np.array([int(sa[j])], np.uint64), np.uint8, n, align=16)[0]
            else:
                scta, soff = _shared_at(ctx, gj, int(sa[j]), 16, "the bulk copy source")
                data = read_shared_async(ctx, gj, scta, soff + np.arange(n), 1, "the bulk copy",
                                         span=(soff, soff + n))
            ctas = [cta] if ms is None else multicast_ctas(ctx, gj, int(ctx.slot_cta[gj.idx[0]]), int(ms[j]))
            _deliver_bytes(ctx, gj, ctas, off, data, moff, d)
    d.fn = to_shared


def _deliver_bytes(ctx, gj, ctas, off, data, moff, d, op=None, tname=None):
    """Write ``data`` (elements of any dtype) at shared offset ``off`` of each batch CTA in
    ``ctas`` (with ``op``: reduce into what is there) and complete its bytes on the mbarrier at
    ``moff`` of that CTA."""
    sh = ctx.shared
    nbytes = int(data.nbytes)
    es = data.dtype.itemsize
    if off + nbytes > sh.size:
        raise M.MemoryFault("out-of-bounds", 0, off, f"the copy ({nbytes} bytes from shared address "
                            f"{off:#x}) ends {off + nbytes - sh.size} bytes past the end of shared memory "
                            f"({sh.size} bytes)", "shared")
    own = int(ctx.slot_cta[gj.idx[0]])
    late = op is None and ctx.schedule.late()
    for c in ctas:
        start = int(c) * sh.stride + off
        elems = start // es + np.arange(len(data), dtype=np.int64)
        span = (int(c), off, off + nbytes)
        if not late:
            vals = data if op is None else T.reduce_bits(op, tname, sh.view(data.dtype)[elems], data)
            AP.write_shared_async(ctx, gj, c, elems, vals,
                                  warps=ctx.warp_in_cta[gj.idx[:1]] if int(c) == own else None, span=span)
        landed = AP.track_inflight(ctx, slice(start, start + nbytes), d, c, moff)
        if late:            # lands when the phase that counts its bytes completes (schedule)
            landed = _land_late(gj, c, elems, data, span, landed)
        MB.defer_complete_tx(ctx, c, moff, nbytes, landed, gj)


@register("cp.reduce.async.bulk")
def _bulk_reduce(prog, d, ins, scope, dec):
    op = dec.get("op")[1:]
    t = dec.type
    tname = t.name
    es = t.nbytes
    dt = np.dtype(_UINT[es])
    ops = list(ins.operands)
    gdst, _ = address_getter(prog, ops[0], scope)
    gsrc, _ = address_getter(prog, ops[1], scope)
    gsize = reader(prog, ops[2], u32, scope)
    to_global = dec.get("dst") == ".global"
    gmbar = None if to_global else address_getter(prog, ops[3], scope)[0]
    d.noun = "bulk reduction"

    def red(ctx, g):
        da, sa, sz = _vals(gdst, ctx, g, np.uint64), _vals(gsrc, ctx, g, np.uint64), _vals(gsize, ctx, g)
        mb = _vals(gmbar, ctx, g, np.uint64) if gmbar is not None else None
        for j in range(g.n):
            gj = _one(ctx, g, j)
            n = int(sz[j])
            _bulk_size(ctx, gj, n, "cp.reduce.async.bulk")
            scta, soff = _shared_at(ctx, gj, int(sa[j]), 16, "the bulk reduction source")
            vals = read_shared_async(ctx, gj, scta, soff + es * np.arange(n // es), es, "the bulk reduction",
                                     span=(soff, soff + n))
            if to_global:
                if int(da[j]) % 16:
                    raise ctx.error(MisalignedAccessError,
                                    f"the bulk reduction destination {int(da[j]):#x} is not 16-byte aligned", gj)
                addrs = np.uint64(int(da[j])) + np.uint64(es) * np.arange(n // es, dtype=np.uint64)
                old = ctx.mem.gspace.load(addrs, dt, 1)[:, 0]
                ctx.mem.gspace.store(addrs, T.reduce_bits(op, tname, old, vals)[:, None])
            else:
                cta, off = _shared_at(ctx, gj, int(da[j]), 16, "the bulk reduction destination")
                _, moff = _shared_at(ctx, gj, int(mb[j]), 8, "the mbarrier")
                _deliver_bytes(ctx, gj, [cta], off, vals.astype(dt), moff, d, op, tname)
    d.fn = red


@register("cp.async.bulk.commit_group")
def _bulk_commit(prog, d, ins, scope, dec):
    d.fn = lambda ctx, g: BG.bulk_commit(ctx, g)


@register("cp.async.bulk.wait_group")
def _bulk_wait(prog, d, ins, scope, dec):
    gn = reader(prog, ins.operands[0], u32, scope)
    d.fn = lambda ctx, g: BG.bulk_wait(ctx, g, int(np.asarray(gn(ctx, g)).flat[0]))


# ----------------------------------------------------------------------------- tensor-map edits
@register("tensormap.replace")
def _replace(prog, d, ins, scope, dec):
    field = dec.get("field")
    space = dec.get("space")
    ops = list(ins.operands)
    gaddr, _ = address_getter(prog, ops[0], scope)
    gord = reader(prog, ops[1], u32, scope) if field in TM.ORDINALS else None
    val_op = ops[-1]
    is64 = field in (".global_address", ".global_stride")
    gval = reader(prog, val_op, b64 if is64 else u32, scope)
    off0, fmt = TM.FIELD_AT[field]
    size = struct.calcsize(fmt)
    d.noun = "tensor-map edit"

    def replace(ctx, g):
        a = _vals(gaddr, ctx, g, np.uint64)
        ords = _vals(gord, ctx, g) if gord is not None else np.zeros(g.n, np.int64)
        v = _vals(gval, ctx, g, np.uint64)
        for j in range(g.n):
            gj = _one(ctx, g, j)
            o, val = int(ords[j]), int(v[j])
            name = f"tensormap.replace.tile{field}"
            if field in TM.ORDINALS and not 0 <= o < TM.ORDINALS[field]:
                raise ctx.error(InterpreterError, f"{name}: ordinal {o} (0..{TM.ORDINALS[field] - 1})", gj)
            lo, hi = TM.FIELD_RANGE.get(field, (0, (1 << 64) - 1))
            if not lo <= val <= hi:
                raise ctx.error(InterpreterError, f"{name}: new value {val} is outside {lo}..{hi}", gj)
            if field == ".global_stride" and val % 16:
                raise ctx.error(InterpreterError, f"{name}: stride {val} bytes is not a multiple of 16", gj)
            if int(a[j]) % 64:
                raise ctx.error(MisalignedAccessError,
                                f"the tensor map address {int(a[j]):#x} is not 64-byte aligned", gj)
            raw = np.frombuffer(int(val).to_bytes(size, "little"), np.uint8).reshape(1, -1)
            at = int(a[j]) + off0 + o * size
            if space == ".global":
                ctx.mem.gspace.store(np.array([at], np.uint64), raw)
                BG.tensormap_modified(ctx, int(a[j]), d)
            else:
                banks, offs = shared_banks(ctx, gj, np.array([at], np.uint64))
                ctx.shared.store(banks, offs, raw, align=1)
    d.fn = replace


@register("tensormap.cp_fenceproxy")
def _cp_fenceproxy(prog, d, ins, scope, dec):
    """Copy a 128-byte tensor map from shared::cta to global memory and release-fence it for
    the tensormap proxy. A warp-collective (.sync.aligned): one copy per distinct (dst, src)."""
    gdst, _ = address_getter(prog, ins.operands[0], scope)
    gsrc, _ = address_getter(prog, ins.operands[1], scope)
    d.sync = "aligned"
    d.noun = "tensor-map copy"

    def cp(ctx, g):
        da, sa = _vals(gdst, ctx, g, np.uint64), _vals(gsrc, ctx, g, np.uint64)
        cta = ctx.slot_cta[g.idx]
        seen = set()
        for j in range(g.n):
            key = (int(da[j]), int(sa[j]), int(cta[j]))
            if key in seen:
                continue
            seen.add(key)
            gj = _one(ctx, g, j)
            if key[0] % 64 or key[1] % 64:
                raise ctx.error(MisalignedAccessError, "tensormap.cp_fenceproxy addresses must be "
                                                       "64-byte aligned", gj)
            banks, offs = shared_banks(ctx, gj, np.array([key[1]], np.uint64))
            data = ctx.shared.load(banks, offs, np.uint8, TM.SIZE, check_init=ctx.sanitize, align=64)
            ctx.mem.gspace.store(np.array([key[0]], np.uint64), data)
            BG.tensormap_fenced(ctx, key[0])
    d.fn = cp


@register("fence.proxy")
def _fence_proxy(prog, d, ins, scope, dec):
    kind = dec.get("kind")
    if kind == ".async" or (kind == ".async::generic" and dec.get("sem") == ".release"):
        space = dec.get("space")
        if space == ".global":
            d.fn = lambda ctx, g: None
            return
        cluster = space == ".shared::cluster"

        def fence(ctx, g):
            ctas = g.ctas(ctx)
            if cluster and ctx.cluster_size > 1:
                first = ctas - ctx.cluster_rank_of_cta[ctas]
                ctas = np.unique((first[:, None] + np.arange(ctx.cluster_size)).reshape(-1))
            AP.fence_async(ctx, ctas)
        d.fn = fence
        return
    if kind == ".tensormap::generic":
        if ins.operands:
            gaddr, _ = address_getter(prog, ins.operands[0], scope)

            def acquire(ctx, g):
                for a in np.unique(_vals(gaddr, ctx, g, np.uint64)):
                    BG.tensormap_fenced(ctx, int(a))
            d.fn = acquire
        else:
            d.fn = lambda ctx, g: BG.tensormap_fenced(ctx, None)
        return
    d.fn = lambda ctx, g: None


# ----------------------------------------------------------------------------- st.bulk
@register("st.bulk")
def _st_bulk(prog, d, ins, scope, dec):
    """st.bulk{.weak}{.shared::cta} [a], size, initval: each thread sets the ``size`` bytes of
    shared memory from ``a`` to ``initval``. The ISA requires ``initval`` to be 0, ``size`` to be
    a multiple of 8 and ``a`` to be 8-byte aligned; without ``.shared::cta`` ``a`` is a generic
    address, which must fall in the executing CTA's shared memory window."""
    d.noun = "bulk store"
    ops = list(ins.operands)
    gaddr, _ = address_getter(prog, ops[0], scope)
    gsize = reader(prog, ops[1], u64, scope)
    ginit = reader(prog, ops[2], u64, scope)
    generic = dec.get("space") is None

    def st_bulk(ctx, g):
        a, size, init = (_vals(gaddr, ctx, g, np.uint64), _vals(gsize, ctx, g, np.uint64),
                         _vals(ginit, ctx, g, np.uint64))
        for j in range(g.n):
            if int(init[j]) != 0:
                raise ctx.error(InterpreterError, f"st.bulk: initval is {int(init[j])}; the ISA allows "
                                                  f"only 0", g, j, d)
            if int(size[j]) % 8:
                raise ctx.error(InterpreterError, f"st.bulk: size is {int(size[j])} bytes; it must be "
                                                  f"a multiple of 8", g, j, d)
            addr = int(a[j])
            if generic:
                if not M.SHARED_WINDOW <= addr < M.SHARED_WINDOW + M.WINDOW_SIZE:
                    raise ctx.error(InterpreterError, f"st.bulk: generic address {addr:#x} is not in the "
                                                      f"shared memory window (st.bulk writes only "
                                                      f"shared::cta memory)", g, j, d)
                addr -= M.SHARED_WINDOW
            if addr % 8:
                raise ctx.error(MisalignedAccessError, f"st.bulk: shared address {addr:#x} is not "
                                                       f"8-byte aligned", g, j, d)
            n = int(size[j]) // 8
            if n == 0:
                continue
            gj = _one(ctx, g, j)
            banks, offs, warps = shared_target(ctx, gj, np.array([addr], np.uint64), True)
            if ctx.async_proxy is not None:
                AP.on_generic_store(ctx, gj, banks, offs, 8 * n)
            ctx.shared.store(banks, offs, np.zeros((1, n), np.uint64), align=8, warps=warps)
    d.fn = st_bulk
