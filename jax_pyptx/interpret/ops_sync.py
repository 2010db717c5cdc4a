"""mbarrier objects (init, arrive, expect_tx/complete_tx, test_wait/try_wait with phase
parity) and cluster barriers.

An mbarrier lives at an 8-byte-aligned shared-memory address of a CTA; its state (expected
count, pending arrivals, phase, tx-count) is kept beside the memory. ``try_wait`` that would
return false parks the threads until the barrier's phase changes (equivalent to the spin loop
around it), so a barrier that never completes is reported as a deadlock with its state.
"""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, UninitializedReadError
from ..ir.nodes import Sink
from ..types import b64, pred, u32, u64
from . import memory as M
from .registry import K_CTRL
from .registry import register
from .group import Group
from .ops_mem import _cp_state, _shared_banks, address_getter, cp_complete, space_of
from .operands import reader, writer


class MBar:
    __slots__ = ("count", "pending", "phase", "tx")

    def __init__(self, count):
        self.count = count
        self.pending = count
        self.phase = 0
        self.tx = 0


def _locate(ctx, g, addrs, space):
    a = addrs
    if space == "generic":
        a = a - np.uint64(M.SHARED_WINDOW)
    banks, offs = _shared_banks(ctx, g, a)
    ctx.shared._check(offs, 8)
    return banks, offs


def _get(ctx, g, bank, off, lane=0):
    st = ctx.mbar.get((int(bank), int(off)))
    if st is None:
        raise ctx.error(UninitializedReadError,
                        f"mbarrier at shared address {int(off):#x} used before mbarrier.init", g, lane)
    return st


def _complete_phase(ctx, key, st):
    ctx.sync_version += 1
    if ctx.shared.race is not None:
        ctx.shared.race.advance([key[0]])
    st.phase += 1
    st.pending = st.count
    # wake threads waiting on this barrier
    for h in ctx.groups:
        if h.wait is not None and h.wait[0] == "mbar" and (h.wait[1], h.wait[2]) == key:
            h.wait = None


def mbar_arrive(ctx, g, addrs, counts, space="generic", tx=None, drop=False):
    """Arrive on the mbarriers at ``addrs`` (shared::cta offsets or generic); returns the
    phase token of each thread."""
    banks, offs = _locate(ctx, g, addrs, space)
    tokens = np.zeros(g.n, np.uint64)
    keys = banks.astype(np.int64) * (1 << 32) + offs.astype(np.int64)
    for k in np.unique(keys):
        sel = keys == k
        b, o = int(k) >> 32, int(k) & 0xFFFFFFFF
        st = _get(ctx, g, b, o, int(np.argmax(sel)))
        # state token: phase in the high word, this thread's pending count (after its
        # arrival, in thread order) in the low word
        after = np.maximum(st.pending - np.cumsum(np.asarray(counts)[sel]), 0)
        tokens[sel] = (np.uint64(st.phase) << np.uint64(32)) | after.astype(np.uint64)
        if tx is not None:
            st.tx += int(np.asarray(tx)[sel].sum()) if np.ndim(tx) else int(tx) * int(sel.sum())
        total = int(np.asarray(counts)[sel].sum())
        if drop:
            st.count -= int(sel.sum())
        while total > 0:
            step = min(total, st.pending)
            st.pending -= step
            total -= step
            if st.pending == 0 and st.tx == 0:
                _complete_phase(ctx, (b, o), st)
            elif st.pending == 0:
                break
        if total > 0 and ctx.sanitize:
            raise ctx.error(InterpreterError, f"mbarrier at shared {o:#x} received more arrivals than expected", g)
    return tokens


@register("mbarrier.init")
def _init(prog, d, ins, scope, dec):
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    gc = reader(prog, ins.operands[1], u32, scope)
    space = space_of(dec)[0]

    def init(ctx, g):
        banks, offs = _locate(ctx, g, getaddr(ctx, g), space)
        c = np.broadcast_to(np.asarray(gc(ctx, g)).astype(np.int64), (g.n,))
        for j in range(g.n):
            ctx.mbar[(int(banks[j]), int(offs[j]))] = MBar(int(c[j]))
        ctx.sync_version += 1
        ctx.shared.mark_init(banks, offs, 8)
    d.fn = init


@register("mbarrier.inval")
def _inval(prog, d, ins, scope, dec):
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    space = space_of(dec)[0]

    def inval(ctx, g):
        banks, offs = _locate(ctx, g, getaddr(ctx, g), space)
        ctx.sync_version += 1
        for j in range(g.n):
            ctx.mbar.pop((int(banks[j]), int(offs[j])), None)
    d.fn = inval


def _arrive_factory(drop: bool):
    return lambda prog, d, ins, scope, dec: _arrive(prog, d, ins, scope, dec, drop)


def _arrive(prog, d, ins, scope, dec, drop):
    """mbarrier.arrive / arrive_drop{.expect_tx} [state,] [addr]{, count | tx}."""
    space = space_of(dec)[0]
    ops = list(ins.operands)
    expect_tx = dec.has(".expect_tx")
    put = None
    if ops and not hasattr(ops[0], "base"):
        dst = ops.pop(0)
        put = None if isinstance(dst, Sink) else writer(prog, dst, b64, scope)
    getaddr, _ = address_getter(prog, ops.pop(0), scope)
    extra = reader(prog, ops[0], u32, scope) if ops else None

    def arrive(ctx, g):
        a = getaddr(ctx, g)
        if expect_tx:
            tx = np.broadcast_to(np.asarray(extra(ctx, g)).astype(np.int64), (g.n,))
            tok = mbar_arrive(ctx, g, a, np.ones(g.n, np.int64), space, tx=tx, drop=drop)
        else:
            cnt = np.ones(g.n, np.int64) if extra is None else np.broadcast_to(
                np.asarray(extra(ctx, g)).astype(np.int64), (g.n,))
            tok = mbar_arrive(ctx, g, a, cnt, space, drop=drop)
        if put is not None:
            put(ctx, g, tok)
    d.fn = arrive


register("mbarrier.arrive")(_arrive_factory(drop=False))
register("mbarrier.arrive_drop")(_arrive_factory(drop=True))


def _tx_factory(sign: int):
    """mbarrier.expect_tx (+tx) / mbarrier.complete_tx (-tx)."""
    return lambda prog, d, ins, scope, dec: _tx(prog, d, ins, scope, dec, sign)


def _tx(prog, d, ins, scope, dec, sign):
    space = space_of(dec)[0]
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    gtx = reader(prog, ins.operands[1], u32, scope)

    def tx(ctx, g):
        banks, offs = _locate(ctx, g, getaddr(ctx, g), space)
        v = np.broadcast_to(np.asarray(gtx(ctx, g)).astype(np.int64), (g.n,))
        for j in range(g.n):
            st = _get(ctx, g, banks[j], offs[j], j)
            st.tx += sign * int(v[j])
            if st.tx == 0 and st.pending == 0:
                _complete_phase(ctx, (int(banks[j]), int(offs[j])), st)
    d.fn = tx


register("mbarrier.expect_tx")(_tx_factory(+1))
register("mbarrier.complete_tx")(_tx_factory(-1))


def _wait_factory(blocking):
    def factory(prog, d, ins, scope, dec):
        space = space_of(dec)[0]
        parity = dec.has(".parity")
        put = writer(prog, ins.operands[0], pred, scope)
        getaddr, _ = address_getter(prog, ins.operands[1], scope)
        gstate = reader(prog, ins.operands[2], u64, scope)
        d.kind = K_CTRL

        def wait(ctx, sub, g):
            banks, offs = _locate(ctx, sub, getaddr(ctx, sub), space)
            s = np.broadcast_to(np.asarray(gstate(ctx, sub)).astype(np.int64), (sub.n,))
            done = np.zeros(sub.n, bool)
            for j in range(sub.n):
                st = _get(ctx, sub, banks[j], offs[j], j)
                if parity:
                    done[j] = (st.phase & 1) != (int(s[j]) & 1)
                else:
                    done[j] = st.phase != (int(s[j]) >> 32)
            if done.all() or not blocking:
                put(ctx, sub, done)
                if not done.all() and not blocking:
                    # a failed test_wait: let other threads run before this one spins again
                    rest = Group(g.idx, g.pc + 1, ctx.N)
                    rest.last = ctx.steps
                    return [rest] if ctx.groups else None
                return None
            # park threads whose phase has not completed; they re-execute the try_wait
            out = []
            if done.any():
                ok = Group(sub.idx[done], g.pc, ctx.N)
                put(ctx, ok, np.ones(ok.n, bool))
                ok.pc = g.pc + 1
                out.append(ok)
            nd = ~done
            keys = banks[nd].astype(np.int64) * (1 << 32) + offs[nd].astype(np.int64)
            for k in np.unique(keys):
                sel = np.nonzero(nd)[0][keys == k]
                h = Group(sub.idx[sel], g.pc, ctx.N)
                st = ctx.mbar[(int(k) >> 32, int(k) & 0xFFFFFFFF)]
                h.wait = ("mbar", int(k) >> 32, int(k) & 0xFFFFFFFF,
                          int(s[sel[0]]) & 1 if parity else (int(s[sel[0]]) >> 32) & 1)
                out.append(h)
            if sub is not g:
                out.append(Group(g.idx[~np.isin(g.idx, sub.idx)], g.pc + 1, ctx.N))
            return out
        d.fn = wait
    return factory


register("mbarrier.try_wait")(_wait_factory(True))
register("mbarrier.test_wait")(_wait_factory(False))


@register("mbarrier.pending_count")
def _pending(prog, d, ins, scope, dec):
    """The pending arrival count captured in a state token by its arrive."""
    put = writer(prog, ins.operands[0], u32, scope)
    get = reader(prog, ins.operands[1], u64, scope)
    d.fn = lambda ctx, g: put(ctx, g, np.broadcast_to(
        (np.asarray(get(ctx, g)).astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32), (g.n,)).copy())


# ----------------------------------------------------------------------------- cp.async + mbarrier
@register("cp.async.mbarrier.arrive")
def _cp_mbar(prog, d, ins, scope, dec):
    noinc = dec.has(".noinc")
    getaddr, _ = address_getter(prog, ins.operands[0], scope)

    def arrive(ctx, g):
        _cp_state(ctx)
        cp_complete(ctx, g, None)
        if noinc:
            mbar_arrive(ctx, g, getaddr(ctx, g), np.ones(g.n, np.int64))
    d.fn = arrive
