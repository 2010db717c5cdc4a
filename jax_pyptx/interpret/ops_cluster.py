"""Cluster instructions: ``mapa`` and ``getctarank`` (distributed shared memory addresses) and
``barrier.cluster.arrive`` / ``wait`` (``.release`` / ``.relaxed`` / ``.acquire``,
``.aligned``). The model is in ``cluster``; ld / st / atom / red on ``.shared::cluster`` run in
``ops_mem``."""
from __future__ import annotations

import numpy as np

from ..types import u32, u64
from . import memory as M
from .cluster import CLUSTER_BIT, OFFSET_MASK, RANK_MASK, RANK_SHIFT, encode
from .ops_mem import space_of
from .operands import np_dtype, reader, writer
from .registry import K_CTRL, register

_BIT, _SHIFT, _RANK, _OFF = (np.uint64(CLUSTER_BIT), np.uint64(RANK_SHIFT), np.uint64(RANK_MASK),
                             np.uint64(OFFSET_MASK))
_WIN, _WSIZE = np.uint64(M.SHARED_WINDOW), np.uint64(M.WINDOW_SIZE)


def _generic_to_shared(ctx, g, a, d, what):
    inwin = (a >= _WIN) & (a < _WIN + _WSIZE)
    if not inwin.all():
        from ..errors import InterpreterError
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
            from ..errors import InterpreterError
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
