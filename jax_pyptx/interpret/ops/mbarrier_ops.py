"""mbarrier instructions (init, inval, arrive / arrive_drop with counts, expect_tx and
noComplete, expect_tx / complete_tx, test_wait / try_wait with a state token or a phase parity,
pending_count) and cp.async.mbarrier.arrive. The object model is ``mbarrier``.
"""
from __future__ import annotations

import numpy as np

from ...ir.nodes import Sink
from ...types import b64, pred, u32, u64
from ..machine import mbarrier as MB
from ..machine.group import Group
from .load_store import _cp_state, address_getter, cp_complete, space_of
from ..state.operands import per_thread, reader, writer
from ..machine.registry import K_CTRL, register
from ..state.memory import MemoryFault


def _space(dec):
    return "generic" if space_of(dec)[0] == "generic" else "shared"


def _u32s(get, ctx, g):
    return per_thread(np.asarray(get(ctx, g)).astype(np.int64), g.n)


@register("mbarrier.init")
def _init(prog, d, ins, scope, dec):
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    gc = reader(prog, ins.operands[1], u32, scope)
    space = _space(dec)

    def init(ctx, g):
        ctas, offs = MB.locate(ctx, g, getaddr(ctx, g), space)
        c = _u32s(gc, ctx, g)
        for j, (cta, off, count) in enumerate(zip(ctas.tolist(), offs.tolist(), c.tolist())):
            MB.init(ctx, cta, off, count, g, j)
        ctx.shared.mark_init(ctas, offs.astype(np.uint64), 8)
    d.fn = init


@register("mbarrier.inval")
def _inval(prog, d, ins, scope, dec):
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    space = _space(dec)

    def inval(ctx, g):
        ctas, offs = MB.locate(ctx, g, getaddr(ctx, g), space)
        for j in range(g.n):
            MB.inval(ctx, ctas[j], offs[j], g, j)
    d.fn = inval


def _arrive_factory(drop: bool):
    return lambda prog, d, ins, scope, dec: _arrive(prog, d, ins, scope, dec, drop)


def _arrive(prog, d, ins, scope, dec, drop):
    """mbarrier.arrive / arrive_drop{.expect_tx | .noComplete} state|_, [addr]{, count | tx}."""
    space = _space(dec)
    ops = list(ins.operands)
    expect_tx = dec.has(".expect_tx")
    no_complete = dec.has(".noComplete")
    put = None
    if ops and not hasattr(ops[0], "base"):
        dst = ops.pop(0)
        put = None if isinstance(dst, Sink) else writer(prog, dst, b64, scope)
    getaddr, _ = address_getter(prog, ops.pop(0), scope)
    extra = reader(prog, ops[0], u32, scope) if ops else None

    def arrive(ctx, g):
        ctas, offs = MB.locate(ctx, g, getaddr(ctx, g), space)
        if expect_tx:
            tok = MB.arrive_threads(ctx, ctas, offs, 1, tx=_u32s(extra, ctx, g), drop=drop, g=g)
        else:
            cnt = 1 if extra is None else _u32s(extra, ctx, g)
            tok = MB.arrive_threads(ctx, ctas, offs, cnt, drop=drop, no_complete=no_complete, g=g)
        if put is not None:
            put(ctx, g, tok)
    d.fn = arrive


register("mbarrier.arrive")(_arrive_factory(drop=False))
register("mbarrier.arrive_drop")(_arrive_factory(drop=True))


def _tx_factory(sign: int):
    """mbarrier.expect_tx (+tx) / mbarrier.complete_tx (-tx)."""
    def factory(prog, d, ins, scope, dec):
        space = _space(dec)
        getaddr, _ = address_getter(prog, ins.operands[0], scope)
        gtx = reader(prog, ins.operands[1], u32, scope)
        fn = MB.mbarrier_expect_tx if sign > 0 else MB.mbarrier_complete_tx

        def tx(ctx, g):
            ctas, offs = MB.locate(ctx, g, getaddr(ctx, g), space)
            v = _u32s(gtx, ctx, g)
            for j in range(g.n):
                fn(ctx, ctas[j], offs[j], int(v[j]), g, j)
        d.fn = tx
    return factory


register("mbarrier.expect_tx")(_tx_factory(+1))
register("mbarrier.complete_tx")(_tx_factory(-1))


def _phases_done(ctx, sub, ctas, offs, s, parity, lanes):
    """Per thread: whether the phase its wait operand ``s`` names has completed on its mbarrier
    (``MB.phase_done``, vectorized). Each distinct mbarrier is looked up once; one that is not
    initialized is reported for the first thread naming it (``lanes``: the threads' lanes in
    ``sub``, None for all of them in order)."""
    keys = ctas * (1 << 32) + offs
    if not len(keys):
        return np.zeros(0, bool)
    at = _runs(keys)
    if at == [0]:
        lane = 0 if lanes is None else int(lanes[0])
        ph = np.uint64(MB._get(ctx, ctas[0], offs[0], sub, lane, "waited on").phase & 0xFFFFFFFF)
    elif at is not None:        # the runs' first threads are the first-naming threads, in order
        heads = at if lanes is None else [int(lanes[j]) for j in at]
        ph = _run_phases(ctx, sub, heads, ctas[at].tolist(), offs[at].tolist(), np.diff([*at, len(keys)]))
    else:
        uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        phases = np.empty(len(uk), np.uint64)
        for u in np.argsort(first):             # first-naming-thread order, as a per-thread loop
            j = int(first[u])
            lane = j if lanes is None else int(lanes[j])
            phases[u] = MB._get(ctx, ctas[j], offs[j], sub, lane, "waited on").phase & 0xFFFFFFFF
        ph = phases[inv.reshape(-1)]
    return _done(ph, s, parity)


def _run_phases(ctx, sub, heads, ctas, offs, lens):
    """Each thread's mbarrier phase where runs of threads name one mbarrier each: the runs'
    mbarriers (CTAs ``ctas``, offsets ``offs``, as ints) looked up once, a missing one reported
    for its run's first thread (``heads``: their lanes in ``sub``), repeated ``lens`` times."""
    return np.repeat(np.array(_head_phases(ctx, sub, heads, ctas, offs), np.uint64), lens)


def _head_phases(ctx, sub, heads, ctas, offs):
    """The current phase (its low 32 bits, as an int) of each run's mbarrier (``_run_phases``)."""
    mbar, phases = ctx.mbar, []
    for j, c, o in zip(heads, ctas, offs):
        st = mbar.get((c, o))
        if st is None:
            st = MB._get(ctx, c, o, sub, j, "waited on")        # (raises)
        phases.append(st.phase & 0xFFFFFFFF)
    return phases


def _done(ph, s, parity):
    """Whether the phase each wait operand ``s`` names has completed, the mbarriers' current
    phases being ``ph`` (``MB.phase_done``, vectorized)."""
    if parity:
        return (ph & np.uint64(1)) != (s & np.uint64(1))
    return ph != ((s >> np.uint64(32)) & np.uint64(0xFFFFFFFF))


def _runs(keys):
    """The first index of each run of equal ``keys`` when each value forms one run and there
    are a few (a CTA's threads naming its mbarrier together), else None."""
    cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    if len(cut) >= 64:
        return None
    at = [0, *cut.tolist()]
    return at if len(set(keys[at].tolist())) == len(at) else None


def _barrier_set(ctas, offs):
    """The set of ``(cta, offset)`` mbarriers the threads name, built from the first thread of
    each run of equal names (a CTA's threads name theirs together), in thread order: the same
    set, iterated in the same order, as one built from every thread's pair."""
    if len(ctas) > 1:
        cut = np.flatnonzero((ctas[1:] != ctas[:-1]) | (offs[1:] != offs[:-1])) + 1
        at = np.concatenate(([0], cut))
        ctas, offs = ctas[at], offs[at]
    return set(zip(ctas.tolist(), offs.tolist()))


def _wait_factory(blocking):
    """test_wait (non-blocking) / try_wait (potentially blocking, with a time limit)."""
    def factory(prog, d, ins, scope, dec):
        space = _space(dec)
        parity = dec.has(".parity")
        put = writer(prog, ins.operands[0], pred, scope)
        getaddr, _ = address_getter(prog, ins.operands[1], scope)
        gstate = reader(prog, ins.operands[2], u32 if parity else u64, scope)
        d.kind = K_CTRL
        kind = "try" if blocking else "poll"

        def wait(ctx, sub, g):
            a = getaddr(ctx, sub)
            late = ctx.mbar_deferred and ctx.schedule.late()
            if not late and _all_done(ctx, sub, a, space, gstate, parity, put):
                return None
            ctas, offs = MB.locate(ctx, sub, a, space)
            # eager: copies counted on the mbarrier land before it is tested; late (schedule):
            # only when the phase is not done without them (a wait on the wrong parity, which
            # the phase already satisfies, pulls nothing in)
            if ctx.mbar_deferred and not late:
                MB.flush(ctx, _barrier_set(ctas, offs))
            s = per_thread(np.asarray(gstate(ctx, sub)).astype(np.uint64), sub.n)
            done = _phases_done(ctx, sub, ctas, offs, s, parity, None)
            if late and not done.all():
                MB.flush(ctx, _barrier_set(ctas[~done], offs[~done]))
                nd = np.nonzero(~done)[0]
                done[nd] = _phases_done(ctx, sub, ctas[nd], offs[nd], s[nd], parity, nd)
            if done.all():
                put(ctx, sub, done)
                return None
            N = ctx.N
            if blocking:
                # try_wait: not-done threads park and run the instruction again when the phase
                # completes; if they were woken because nothing else could run, the time limit
                # expired and they get false
                go = done.copy()
                if ctx.mbar_timeout is not None:
                    go |= ctx.mbar_timeout[sub.idx]
                    ctx.mbar_timeout[sub.idx] = False
                park_pc = g.pc
            else:
                # test_wait: every thread has its answer; the false ones park at the next
                # instruction until the phase completes
                go = done
                put(ctx, Group(sub.idx[~done], g.pc, N), np.zeros(int((~done).sum()), bool))
                park_pc = g.pc + 1
            out = []
            if go.any():
                a = Group(sub.idx[go], g.pc + 1, N)
                put(ctx, a, done[go])
                out.append(a)
            park = np.nonzero(~go)[0]
            if len(park):
                keys = ctas[park] * (1 << 32) + offs[park]
                for k in np.unique(keys):
                    sel = park[keys == k]
                    sv = int(s[sel[0]])
                    p = (sv & 1) if parity else ((sv >> 32) & 1)
                    h = Group(sub.idx[sel], park_pc, N)
                    h.wait = ("mbar", int(k) >> 32, int(k) & 0xFFFFFFFF, p, kind, g.pc)
                    ctx.mbar_waiters.setdefault(h.wait[1:3], []).append(h)
                    out.append(h)
            if sub is not g:
                out.append(Group(g.idx[~np.isin(g.idx, sub.idx)], g.pc + 1, N))
            return out
        d.fn = wait
    return factory


def _all_done(ctx, sub, a, space, gstate, parity, put) -> bool:
    """A wait of ``sub`` at addresses ``a`` (not late) where every run of consecutive slots of
    one CTA names one mbarrier (a warp-specialized role waiting on its CTA's): the mbarriers
    located, flushed and looked up once a run, as the threads' own would be. True, the
    answers written, where every thread's phase is done; False, having flushed at most, where
    the wait must look at each thread (a thread whose phase is not done parks)."""
    runs = _heads(ctx, sub)
    if runs is None:
        return False
    heads, lens, hidx = runs
    a = np.asarray(a)
    ah = a[hidx]
    if not (a == a[0]).all() and not np.array_equal(np.repeat(ah, lens), a):
        return False                # (every thread at one address: each CTA's at that offset)
    try:
        ctas, offs = MB.locate(ctx, Group(sub.idx[hidx], sub.pc, ctx.N), ah, space)
    except MemoryFault as f:      # (the first thread naming the address)
        f.lane = heads[f.lane]
        raise
    cl, ol = ctas.tolist(), offs.tolist()
    if ctx.mbar_deferred:
        MB.flush(ctx, set(zip(cl, ol)))
    phases = _head_phases(ctx, sub, heads, cl, ol)
    s = np.asarray(gstate(ctx, sub))
    if s.ndim == 0 or (s == s[0]).all():          # (every thread's wait operand one value)
        s0 = int(s.reshape(-1)[0])
        if parity:
            done = all((ph & 1) != (s0 & 1) for ph in phases)
        else:
            done = all(ph != (s0 >> 32) & 0xFFFFFFFF for ph in phases)
        if not done:
            return False
        put(ctx, sub, np.ones(sub.n, bool))
        return True
    ph = np.repeat(np.array(phases, np.uint64), lens)
    done = _done(ph, per_thread(s.astype(np.uint64), sub.n), parity)
    if not done.all():
        return False
    put(ctx, sub, done)
    return True


def _heads(ctx, sub):
    """``(heads, lens, heads as an array)``: the first thread and the length of each run of
    consecutive slots of ``sub`` (``Group.runs``), each run in one CTA, 64 runs at most; else
    None. Kept with the group's slots (``Group.facts``) and the CTA's size."""
    more = sub.facts().more
    key = ("mbar_heads", ctx.S)
    got = more.get(key, 0)
    if got == 0:
        runs = sub.runs()
        got = None
        if runs is not None and len(runs) <= 64 and sub.runs_in_one_cta(ctx):
            heads = [p for p, _, _ in runs]
            got = (heads, [q - p for p, q, _ in runs], np.array(heads, np.int64))
        more[key] = got
    return got


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
    """The mbarrier tracks this thread's prior cp.async copies. Copies complete here (the
    arrive-on their completion triggers happens now); without ``.noinc`` the pending count was
    raised by one first, so the net effect is only that ordering."""
    noinc = dec.has(".noinc")
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    space = _space(dec)

    def arrive(ctx, g):
        ctas, offs = MB.locate(ctx, g, getaddr(ctx, g), space)
        _cp_state(ctx)
        if ctx.timeline is not None:
            ctx.timeline.retire(ctx, "cp.async", g, None, 1)
        cp_complete(ctx, g, None)
        if noinc:
            MB.arrive_threads(ctx, ctas, offs, 1, g=g)
        else:
            for j in range(g.n):
                MB._get(ctx, ctas[j], offs[j], g, j, "arrived on")
    d.fn = arrive
