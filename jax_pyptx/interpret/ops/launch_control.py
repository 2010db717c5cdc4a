"""Cluster launch control (sm_100): ``clusterlaunchcontrol.try_cancel`` and
``clusterlaunchcontrol.query_cancel``, the work-stealing of persistent kernels.

``try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128
[addr], [mbar]`` asks to cancel the launch of a cluster of the grid that has not started yet.
The interpreter models it for real: clusters start batch by batch (``launch``), and a request
succeeds when a cluster that has not started exists (``LaunchState.try_cancel``: the next one
in launch order, which then never runs) and fails otherwise. The 16-byte response is written
through the async proxy to ``addr`` (16-byte aligned shared::cta memory) of the issuing CTA, or
with ``.multicast::cluster::all`` of every CTA of its cluster, and its 16 bytes complete on the
mbarrier at ``mbar`` (at the same offset in each CTA), as a bulk copy's do.

The response is opaque to the program; the interpreter's encoding is 4 words: ``TAG | 1`` on
success (``TAG`` on failure), then the ctaid x, y, z of the first CTA of the cancelled
cluster. ``query_cancel.is_canceled.pred.b128`` reads the success bit;
``query_cancel.get_first_ctaid{::x,::y,::z}`` the ctaid, which the ISA leaves undefined for a
failed request (reported here). Per the ISA, a CTA that has observed a failed request (an
``is_canceled`` that was false) must not issue another ``try_cancel``; that is reported too.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...types import b32, pred
from ..sanitizer import async_proxy as AP
from ..machine import mbarrier as MB
from ..machine.cluster import shared_target
from ..machine.group import Group
from ..state.operands import b128_reader, items, writer
from .load_store import address_getter
from ..machine.registry import register

TAG = 0x434C4300          # "CLC": marks a try_cancel response; bit 0 is success
SIZE = 16


def _shared_cta(ctx, gj, addr: int, align: int, what: str, d):
    banks, offs, _ = shared_target(ctx, gj, np.array([addr], np.uint64), True)
    off = int(offs[0])
    if off % align:
        raise ctx.error(InterpreterError, f"clusterlaunchcontrol.try_cancel: {what} at shared address "
                                          f"{off:#x} is not {align}-byte aligned", gj, 0, d)
    return int(banks[0]), off


def _observed_failure(ctx) -> set:
    s = ctx.clc_failed
    if s is None:
        s = ctx.clc_failed = set()
    return s


@register("clusterlaunchcontrol.try_cancel")
def _try_cancel(prog, d, ins, scope, dec):
    d.noun = "try_cancel response write"
    gaddr, _ = address_getter(prog, ins.operands[0], scope)
    gmbar, _ = address_getter(prog, ins.operands[1], scope)
    multicast = dec.has(".multicast::cluster::all")

    def try_cancel(ctx, g):
        addrs, mbars = np.asarray(gaddr(ctx, g), np.uint64), np.asarray(gmbar(ctx, g), np.uint64)
        addrs, mbars = np.broadcast_to(addrs, (g.n,)), np.broadcast_to(mbars, (g.n,))
        for j in range(g.n):                       # in thread order: each is one request
            gj = Group(g.idx[j:j + 1], g.pc, ctx.N)
            cta, off = _shared_cta(ctx, gj, int(addrs[j]), SIZE, "the response", d)
            _, moff = _shared_cta(ctx, gj, int(mbars[j]), 8, "the mbarrier", d)
            if cta in _observed_failure(ctx):
                raise ctx.error(InterpreterError,
                                "clusterlaunchcontrol.try_cancel issued by a CTA that has observed a "
                                "failed request (query_cancel.is_canceled was false); the ISA leaves that "
                                "undefined: stop requesting once a request fails", gj, 0, d)
            got = ctx.launch.try_cancel()
            words = np.array([TAG, 0, 0, 0] if got is None else [TAG | 1, *got], np.uint32)
            ctas = ctx.masked_banks(cta, (1 << ctx.cluster_size) - 1) if multicast else [cta]
            sh = ctx.shared
            for c in ctas:
                base = int(c) * sh.stride + off
                w = ctx.warp_in_cta[gj.idx[:1]] if c == cta else None
                AP.write_shared_async(ctx, gj, c, base // 4 + np.arange(4), words, warps=w,
                                      span=(int(c), off, off + SIZE))
                landed = AP.track_inflight(ctx, slice(base, base + SIZE), d, c, moff)
                MB.defer_complete_tx(ctx, c, moff, SIZE, landed, gj)
    d.fn = try_cancel


def _responses(ctx, g, get, d):
    """The (n, 4) uint32 words of the response registers, checked to be responses."""
    w = get(ctx, g).view(np.uint32).reshape(-1, 4)
    bad = (w[:, 0] & np.uint32(0xFFFFFFFE)) != np.uint32(TAG)
    if bad.any():
        j = int(np.argmax(bad))
        v = int(w[j, 0]) | int(w[j, 1]) << 32 | int(w[j, 2]) << 64 | int(w[j, 3]) << 96
        raise ctx.error(InterpreterError, f"clusterlaunchcontrol.query_cancel: the .b128 operand ({v:#034x}) is "
                                          f"not a response written by clusterlaunchcontrol.try_cancel", g, j, d)
    return w


@register("clusterlaunchcontrol.query_cancel")
def _query_cancel(prog, d, ins, scope, dec):
    query = dec.get("query")
    get = b128_reader(prog, ins.operands[1], scope)
    if query == ".is_canceled":
        put = writer(prog, ins.operands[0], pred, scope)

        def is_canceled(ctx, g):
            ok = (_responses(ctx, g, get, d)[:, 0] & np.uint32(1)).astype(bool)
            if not ok.all():
                _observed_failure(ctx).update(int(c) for c in np.unique(ctx.slot_cta[g.idx[~ok]]))
            put(ctx, g, ok)
        d.fn = is_canceled
        return
    dims = (0, 1, 2) if query == ".get_first_ctaid" else ("xyz".index(query[-1]),)
    puts = [writer(prog, o, b32, scope) for o in items(ins.operands[0])]

    def get_first_ctaid(ctx, g):
        w = _responses(ctx, g, get, d)
        bad = (w[:, 0] & np.uint32(1)) == 0
        if bad.any():
            raise ctx.error(InterpreterError, "clusterlaunchcontrol.query_cancel.get_first_ctaid of a request "
                                              "that failed (no cluster was cancelled): the ISA leaves the "
                                              "result undefined; test is_canceled first", g, int(np.argmax(bad)), d)
        for p, k in zip(puts, dims):
            p(ctx, g, np.ascontiguousarray(w[:, 1 + k]))
        if len(puts) == 4:
            puts[3](ctx, g, np.zeros(g.n, np.uint32))
    d.fn = get_first_ctaid
