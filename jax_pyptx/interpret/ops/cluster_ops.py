"""Cluster instructions: ``mapa`` and ``getctarank`` (distributed shared memory addresses),
``barrier.cluster.arrive`` / ``wait`` (``.release`` / ``.relaxed`` / ``.acquire``,
``.aligned``), and the asynchronous remote stores and reductions ``st.async`` / ``red.async``
(``.mbarrier::complete_tx::bytes``: the store is performed when issued and completes its bytes
on the mbarrier of the CTA it wrote, as the TMA copies do). The model is in ``cluster``; ld /
st / atom / red on ``.shared::cluster`` run in ``ops.load_store``."""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...types import u32, u64
from ..machine import mbarrier as MB
from ..state import memory as M
from ..machine.cluster import CLUSTER_BIT, OFFSET_MASK, RANK_MASK, RANK_SHIFT, encode, shared_target
from .load_store import _atom_apply, address_getter, mem_dtype, space_of
from ..state.operands import items, np_dtype, reader, writer
from ..machine.registry import K_CTRL, register

_BIT, _SHIFT, _RANK, _OFF = (np.uint64(CLUSTER_BIT), np.uint64(RANK_SHIFT), np.uint64(RANK_MASK),
                             np.uint64(OFFSET_MASK))
_WIN, _WSIZE = np.uint64(M.SHARED_WINDOW), np.uint64(M.WINDOW_SIZE)


def _generic_to_shared(ctx, g, a, d, what):
    inwin = (a >= _WIN) & (a < _WIN + _WSIZE)
    if not inwin.all():
        j = int(np.argmin(inwin))
        raise ctx.error(InterpreterError, f"{what}: generic address {int(a[j]):#x} is not in the shared "
                                          f"memory window", g, j, d)
    return a - _WIN


@register("mapa")
def _mapa(prog, d, ins, scope, dec):
    """mapa{.shared::cluster}.type d, a, rank: the address of ``a``'s offset in CTA ``rank``."""
    t = dec.type
    put = writer(prog, ins.operands[0], t, scope)
    ga = reader(prog, ins.operands[1], t, scope)
    gr = reader(prog, ins.operands[2], u32, scope)
    generic = space_of(dec)[0] == "generic"
    dt = np_dtype(t)

    def mapa(ctx, g):
        a = np.broadcast_to(np.asarray(ga(ctx, g)).astype(np.uint64), (g.n,))
        r = np.broadcast_to(np.asarray(gr(ctx, g)).astype(np.int64), (g.n,))
        bad = r >= ctx.cluster_size
        if bad.any():
            j = int(np.argmax(bad))
            raise ctx.error(InterpreterError, f"mapa: target CTA rank {int(r[j])} is not in the cluster "
                                              f"(it has {ctx.cluster_size} CTAs, ranks 0-{ctx.cluster_size - 1})",
                            g, j, d)
        if generic:
            a = _generic_to_shared(ctx, g, a, d, "mapa")
        out = encode(r, a & _OFF)
        if generic:
            out = out + _WIN
        put(ctx, g, out.astype(dt))
    d.fn = mapa


@register("getctarank")
def _getctarank(prog, d, ins, scope, dec):
    """getctarank{.shared::cluster}.type d, a: the rank of the CTA whose shared memory ``a`` is in."""
    generic = space_of(dec)[0] == "generic"
    put = writer(prog, ins.operands[0], u32, scope)
    ga = reader(prog, ins.operands[1], (dec.type or u64), scope)

    def getctarank(ctx, g):
        a = np.broadcast_to(np.asarray(ga(ctx, g)).astype(np.uint64), (g.n,))
        if generic:
            a = _generic_to_shared(ctx, g, a, d, "getctarank")
        own = ctx.cluster_rank_of_cta[ctx.slot_cta[g.idx]]
        r = np.where(a >= _BIT, (a >> _SHIFT) & _RANK, own)
        put(ctx, g, r.astype(np.uint32))
    d.fn = getctarank


def _cluster_barrier(wait: bool):
    def factory(prog, d, ins, scope, dec):
        d.kind = K_CTRL
        if dec.has(".aligned"):
            d.sync = "aligned"
        relaxed = dec.get("sem") == ".relaxed"

        def cluster_barrier(ctx, sub, g):
            return ctx.cluster_barrier(sub, g, wait, relaxed, d)
        d.fn = cluster_barrier
    return factory


register("barrier.cluster.arrive")(_cluster_barrier(wait=False))
register("barrier.cluster.wait")(_cluster_barrier(wait=True))


# ----------------------------------------------------------------------------- st.async / red.async
def _async_targets(ctx, g, d, addrs, mbars, what, other_cta):
    """(CTA banks, offsets, race warps, mbarrier offsets) of an asynchronous remote operation,
    checked as the ISA requires: a cluster of more than one CTA, the destination and the
    mbarrier in the same CTA (for ``red.async`` one other than the executing thread's)."""
    if ctx.cluster_size < 2:
        raise ctx.error(InterpreterError, f"{what} needs a cluster of more than one CTA "
                                          f"(%cluster_nctarank is 1)", g, 0, d)
    banks, offs, warps = shared_target(ctx, g, addrs)
    mb, mo, _ = shared_target(ctx, g, mbars)
    bad = mb != banks
    if bad.any():
        j = int(np.argmax(bad))
        rk = ctx.cluster_rank_of_cta
        raise ctx.error(InterpreterError, f"{what}: the destination is in CTA rank {int(rk[banks[j]])} but the "
                                          f"mbarrier in CTA rank {int(rk[mb[j]])}; both must be in the same CTA",
                        g, j, d)
    if other_cta:
        own = banks == ctx.slot_cta[g.idx]
        if own.any():
            j = int(np.argmax(own))
            raise ctx.error(InterpreterError, f"{what}: the destination is in the executing thread's own CTA; "
                                              f"it must be another CTA of the cluster", g, j, d)
    return banks, offs, warps, mo


def _complete(ctx, g, banks, moffs, nbytes):
    """complete-tx of ``nbytes`` per thread on each thread's mbarrier (thread order)."""
    keys = banks.astype(np.int64) * (1 << 32) + moffs.astype(np.int64)
    uk, first, cnt = np.unique(keys, return_index=True, return_counts=True)
    for k in np.argsort(first):
        MB.mbarrier_complete_tx(ctx, int(uk[k]) >> 32, int(uk[k]) & 0xFFFFFFFF, int(cnt[k]) * nbytes, g,
                                int(first[k]))


@register("st.async")
def _st_async(prog, d, ins, scope, dec):
    """st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.vec}.type [a], b, [mbar]"""
    d.noun = "async store"
    t = dec.type
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    gets = [reader(prog, o, t, scope) for o in items(ins.operands[1])]
    getmbar, _ = address_getter(prog, ins.operands[2], scope)
    dt = mem_dtype(t)
    nbytes = dt.itemsize * len(gets)

    def st_async(ctx, g):
        banks, offs, warps, mo = _async_targets(ctx, g, d, getaddr(ctx, g), getmbar(ctx, g), "st.async", False)
        cols = []
        for f in gets:
            v = np.broadcast_to(np.asarray(f(ctx, g)), (g.n,))
            cols.append(v.view(dt) if v.dtype.itemsize == dt.itemsize else v.astype(dt))
        vals = np.ascontiguousarray(np.stack(cols, axis=1))
        if ctx.schedule.late():
            _land_late(ctx, g, banks, offs, vals, mo, nbytes)
            return
        ctx.shared.store(banks, offs, vals, warps=warps)
        _complete(ctx, g, banks, mo, nbytes)
    d.fn = st_async


def _land_late(ctx, g, banks, offs, vals, moffs, nbytes):
    """st.async under a late schedule: the stores counted on each mbarrier land when a thread
    needs its phase (``mbarrier.defer_complete_tx``), not attributed to a warp for race tracking
    (the phase orders them)."""
    keys = banks.astype(np.int64) * (1 << 32) + moffs.astype(np.int64)
    uk, first = np.unique(keys, return_index=True)
    for k in uk[np.argsort(first)]:
        sel = np.nonzero(keys == k)[0]

        def land(ctx_, cta, off, sel=sel):
            ctx_.shared.store(banks[sel], offs[sel], vals[sel], warps=None)
        MB.defer_complete_tx(ctx, int(k) >> 32, int(k) & 0xFFFFFFFF, nbytes * len(sel), land, g, int(sel[0]))


@register("red.async")
def _red_async(prog, d, ins, scope, dec):
    """red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type [a], b, [mbar]:
    the reduction on another CTA's shared memory, then complete-tx of its size there."""
    d.noun = "async reduction"
    t = dec.type
    op = dec.get("op")[1:]
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    gb = reader(prog, ins.operands[1], t, scope)
    getmbar, _ = address_getter(prog, ins.operands[2], scope)
    cdt = np_dtype(t)
    esz = cdt.itemsize

    def red_async(ctx, g):
        banks, offs, _, mo = _async_targets(ctx, g, d, getaddr(ctx, g), getmbar(ctx, g), "red.async", True)
        b = np.broadcast_to(np.asarray(gb(ctx, g), cdt), (g.n,))
        sh = ctx.shared
        sh._check(offs, esz)
        flat = sh.flat(banks, offs)
        if ctx.sanitize and sh.init is not None:
            bad = (sh.init[flat[:, None] + np.arange(esz)] == 0).any(axis=1)
            if bad.any():
                j = int(np.argmax(bad))
                raise M.MemoryFault(
                    "uninitialized", j, int(offs[j]),
                    f"shared address {int(offs[j]):#x} of CTA rank {int(ctx.cluster_rank_of_cta[banks[j]])} is "
                    f"reduced before any thread of that CTA wrote it", "shared")
        view = sh.view(cdt)
        idx = (flat // esz).astype(np.int64)
        sh.version += 1
        for j in range(g.n):                # in thread order, one at a time (they may collide)
            view[idx[j]] = _atom_apply(op, t, view[idx[j]:idx[j] + 1], b[j:j + 1], None)[0]
        _complete(ctx, g, banks, mo, esz)
    d.fn = red_async
