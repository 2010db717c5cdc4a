"""The mbarrier object model (PTX ISA "Parallel Synchronization and Communication Instructions:
mbarrier"), and the plain functions every producer of arrivals and transactions calls.

An mbarrier is an opaque 8-byte object in shared memory. It is addressed by ``(cta, offset)``:
``cta`` is the batch-local CTA index (``Context.slot_cta`` values, the bank of ``ctx.shared``),
``offset`` its ``shared::cta`` byte offset in that CTA. Any CTA of the cluster may arrive on it
(``.shared::cluster`` addresses resolve to ``(cta, offset)`` through ``locate``); only threads of
the owning CTA wait on it. Its state, as the ISA defines it:

* the current *phase* (``phase`` counts completed phases; the parity is ``phase & 1``);
* the *pending arrival count* of the current phase and the *expected arrival count* that
  reloads it when a phase completes (``mbarrier.arrive_drop`` lowers the expected count);
* the *tx-count*: bytes of asynchronous transactions still to complete in the current phase
  (``expect-tx`` raises it, ``complete-tx`` lowers it; it may go negative in between).

The current phase completes when the pending arrival count is zero and the tx-count is zero;
then the phase advances, the pending count reloads from the expected count and the tx-count is
zero again. ``init`` sets phase 0, both counts to ``count`` and tx-count 0.

Functions for other parts of the interpreter (``tcgen05.commit`` arrives, cluster code arrives
remotely, copies complete transactions)::

    mbarrier_arrive(ctx, cta, addr, count=1)          # an arrive-on operation; returns the token
    mbarrier_expect_tx(ctx, cta, addr, nbytes)
    mbarrier_complete_tx(ctx, cta, addr, nbytes)
    defer_complete_tx(ctx, cta, addr, nbytes)         # a copy's completion, seen at the next wait
    defer_complete_each(ctx, lands, nbytes, cbs, g)   # ... of an instruction's boxes at once
    locate(ctx, g, addrs, space)                      # addresses of a group -> (ctas, offsets)
    lookup(ctx, cta, addr)                            # the MBarrier, or None

A state token (what ``mbarrier.arrive`` returns) holds the phase the thread arrived in (high 32
bits) and the pending count its arrival left (low 32 bits; ``mbarrier.pending_count``).

Waiting: a ``try_wait`` whose phase has not completed parks its threads until the phase
completes; a failed ``test_wait`` returns false and parks the threads at the next instruction
(they have their answer, and run again when the phase completes). Parked waiters never burn the
instruction budget. When nothing else can run they are woken anyway (the ``try_wait`` time limit
expires: it returns false), once per state of the batch: if that changes nothing, the batch is
deadlocked and reported with every waiter's barrier state.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError, SanitizerError, UninitializedReadError
from ..state import memory as M
from ..state.operands import per_thread
from .cluster import CLUSTER_BIT, shared_banks

MAX_COUNT = (1 << 20) - 1          # arrival counts: 1 .. 2^20 - 1
MAX_TX = (1 << 20) - 1             # tx-count range: -(2^20 - 1) .. 2^20 - 1

__all__ = ["MBarrier", "mbarrier_arrive", "mbarrier_expect_tx", "mbarrier_complete_tx",
           "defer_complete_tx", "defer_complete_each", "flush", "locate", "lookup", "arrive_threads", "token",
           "describe", "wake_on_starvation",
           "check_balanced"]


class MBarrier:
    """The state of one mbarrier object (see the module doc)."""

    __slots__ = ("expected", "pending", "phase", "tx", "on_complete", "tx_by")

    def __init__(self, count: int):
        self.expected = count
        self.pending = count
        self.phase = 0
        self.tx = 0
        self.on_complete = []      # callables(ctx, cta, off) run once when this phase completes
        self.tx_by = None          # the Decoded of the last instruction that changed tx (messages)

    @property
    def parity(self) -> int:
        return self.phase & 1

    def __repr__(self):
        return (f"MBarrier(phase={self.phase}, pending={self.pending}, expected={self.expected}, "
                f"tx={self.tx})")

    def describe(self) -> str:
        return (f"phase {self.phase} (parity {self.parity}), {self.pending} of {self.expected} "
                f"arrivals pending, tx-count {self.tx}")


# ----------------------------------------------------------------------------- addressing
def locate(ctx, g, addrs, space: str):
    """``(ctas, offsets)`` of the mbarriers at ``addrs`` (one per thread of ``g``): ``space``
    is ``"shared"`` (shared::cta or shared::cluster offsets) or ``"generic"``. Checks the 8-byte
    alignment and the bounds of shared memory."""
    a = np.asarray(addrs, np.uint64)
    if space == "shared" and g.n <= _FEW:
        got = _locate_few(ctx, g, a)
        if got is not None:
            return got
    if space == "generic":
        inwin = (a >= np.uint64(M.SHARED_WINDOW)) & (a < np.uint64(M.SHARED_WINDOW + M.WINDOW_SIZE))
        if not inwin.all():
            lane = int(np.argmin(inwin))
            raise M.MemoryFault("out-of-bounds", lane, int(a[lane]),
                                f"generic address {int(a[lane]):#x} is not in the shared window: an "
                                f"mbarrier object lives in shared memory", "shared")
        a = a - np.uint64(M.SHARED_WINDOW)
    banks, offs = shared_banks(ctx, g, a)
    ctx.shared._check(offs, 8)
    return banks.astype(np.int64), offs.astype(np.int64)


_FEW = 16          # threads at most whose mbarrier addresses ``_locate_few`` checks on ints


def _locate_few(ctx, g, a):
    """``locate`` of the shared::cta offsets ``a`` of a few threads (a role's elected ones), on
    Python ints: every one aligned, in bounds and below the shared::cluster bit; None where one
    is not (``locate`` then checks and reports)."""
    offs = (a if a.shape == (g.n,) else np.broadcast_to(a, (g.n,))).tolist()
    size = ctx.shared.size
    for o in offs:
        if o >= CLUSTER_BIT or o & 7 or o + 8 > size:
            return None
    return ctx.slot_cta[g.idx], np.array(offs, np.int64)        # (slot_cta: int64; a copy)


def lookup(ctx, cta: int, addr: int):
    """The ``MBarrier`` at shared offset ``addr`` of batch CTA ``cta``, or None."""
    return ctx.mbar.get((int(cta), int(addr)))


def _get(ctx, cta, off, g=None, lane=0, what="used"):
    st = ctx.mbar.get((int(cta), int(off)))
    if st is None:
        raise ctx.error(UninitializedReadError,
                        f"mbarrier at shared address {int(off):#x}{_in_cta(ctx, cta)} {what} before "
                        f"mbarrier.init (or after mbarrier.inval)", g, lane)
    return st


def _in_cta(ctx, cta):
    if ctx.nctas == 1:
        return ""
    return f" of CTA {ctx._cta_str(int(cta))}"


def token(phase: int, pending: int) -> int:
    """The state token of an arrival in ``phase`` that left ``pending`` arrivals pending."""
    return ((phase & 0xFFFFFFFF) << 32) | (pending & 0xFFFFFFFF)


# ----------------------------------------------------------------------------- state changes
def _bump(ctx):
    ctx.mbar_version += 1


def init(ctx, cta, off, count, g=None, lane=0):
    if ctx.sanitize and not 1 <= count <= MAX_COUNT:
        raise ctx.error(InterpreterError, f"mbarrier.init count must be 1..{MAX_COUNT}, got {count}",
                        g, lane)
    flush(ctx, [(int(cta), int(off))])          # copies still tracked by an object re-initialized
    ctx.mbar[(int(cta), int(off))] = MBarrier(int(count))
    _bump(ctx)


def inval(ctx, cta, off, g=None, lane=0):
    flush(ctx, [(int(cta), int(off))])
    st = ctx.mbar.pop((int(cta), int(off)), None)
    if st is not None and st.tx != 0 and ctx.sanitize:
        raise ctx.error(SanitizerError,
                        f"mbarrier at shared address {int(off):#x}{_in_cta(ctx, cta)} is invalidated "
                        f"with tx-count {st.tx} ({_tx_words(st.tx)}): {st.describe()}", g, lane)
    _bump(ctx)


def _tx_words(tx):
    if tx > 0:
        return f"{tx} bytes expected by expect_tx never completed"
    return f"{-tx} bytes completed beyond what expect_tx announced"


def _complete(ctx, cta, off, st: MBarrier):
    """The current phase of ``st`` completes: advance it and wake its waiters."""
    st.phase += 1
    st.pending = st.expected
    st.tx = 0
    if ctx.shared.race is not None:
        ctx.shared.race.advance([int(cta)])
    cbs, st.on_complete = st.on_complete, []
    for cb in cbs:
        cb(ctx, cta, off)
    key = (int(cta), int(off))
    if key in ctx.mbar_waiters:
        wake(ctx, key)


def wake(ctx, key):
    """The groups of ``ctx.groups`` parked on the mbarrier ``key`` stop waiting (its phase
    completed): those of ``ctx.mbar_waiters[key]``, every group parked on it since it last woke
    any (``mbarrier_ops``' waits; some may have been woken since, or be parked on another), that
    still wait on it; one not in ``ctx.groups`` (none is, between instructions) keeps waiting and
    stays listed. The groups a scan of ``ctx.groups`` would find, looked for among a few."""
    groups, keep = ctx.groups, []
    for h in ctx.mbar_waiters.pop(key):
        w = h.wait
        if w is None or w[0] != "mbar" or w[1:3] != key:
            continue                # (woken since, or waiting on another now)
        if h in groups:             # (identity: a Group has no __eq__)
            h.wait = None
        elif h not in keep:
            keep.append(h)
    if keep:
        ctx.mbar_waiters[key] = keep


def _maybe_complete(ctx, cta, off, st):
    if st.pending == 0 and st.tx == 0:
        _complete(ctx, cta, off, st)
        return True
    return False


def _tx_change(ctx, cta, off, nbytes, sign, g=None, lane=0):
    st = _get(ctx, cta, off, g, lane, "expects or completes transactions")
    if ctx.sanitize and not 0 <= nbytes <= MAX_TX:
        raise ctx.error(InterpreterError, f"tx-count operand must be 0..{MAX_TX}, got {nbytes}", g, lane)
    st.tx += sign * int(nbytes)
    st.tx_by = ctx.cur
    if ctx.sanitize and abs(st.tx) > MAX_TX:
        raise ctx.error(SanitizerError,
                        f"mbarrier at shared address {int(off):#x}{_in_cta(ctx, cta)}: tx-count "
                        f"{st.tx} leaves the range -{MAX_TX}..{MAX_TX}", g, lane)
    _bump(ctx)
    _maybe_complete(ctx, cta, off, st)


def mbarrier_expect_tx(ctx, cta, addr, nbytes, g=None, lane=0):
    """expect-tx: raise the tx-count of the mbarrier at ``(cta, addr)`` by ``nbytes``."""
    _tx_change(ctx, cta, addr, nbytes, +1, g, lane)


def mbarrier_complete_tx(ctx, cta, addr, nbytes, g=None, lane=0):
    """complete-tx: ``nbytes`` of asynchronous transactions tracked by the mbarrier at
    ``(cta, addr)`` completed (lower its tx-count; the phase may complete)."""
    _tx_change(ctx, cta, addr, nbytes, -1, g, lane)


def defer_complete_tx(ctx, cta, addr, nbytes, on_complete=None, g=None, lane=0):
    """The complete-tx of an asynchronous copy into shared memory: it is applied when a thread
    next waits on this mbarrier (or invalidates it, or nothing else can run, or the batch ends),
    so the copy is never complete before anyone could have observed it. ``on_complete`` (a
    callable ``(ctx, cta, off)``) runs when the phase the bytes are counted in completes."""
    _get(ctx, cta, addr, g, lane, "tracks a copy")
    if ctx.timeline is not None:
        ctx.timeline.copy_issue(ctx, cta, addr, nbytes)
    ctx.mbar_deferred.setdefault((int(cta), int(addr)), []).append((int(nbytes), on_complete, ctx.cur, g, lane))


def defer_complete_each(ctx, lands, nbytes: int, callbacks, g):
    """``defer_complete_tx`` of ``nbytes`` for each ``(lane, cta, offset)`` of ``lands`` (Python
    ints: the boxes of one instruction, lane ``lane`` of ``g`` issuing each), with its callback
    of ``callbacks``, where the caller found every mbarrier initialized and keeps no timeline."""
    dq, cur = ctx.mbar_deferred, ctx.cur
    for (lane, cta, off), cb in zip(lands, callbacks):
        dq.setdefault((cta, off), []).append((nbytes, cb, cur, g, lane))


def defer_action(ctx, keys, fn, g=None):
    """Run ``fn(ctx)`` (an arrival and what precedes it: a ``tcgen05.commit`` under a late
    schedule) when a thread next needs one of the mbarriers ``keys`` (``(cta, offset)``) flushed,
    once, with the issuing instruction current."""
    once = [False]

    def run(ctx_):
        if not once[0]:
            once[0] = True
            fn(ctx_)
    for cta, off in keys:
        _get(ctx, cta, off, g, 0, "arrived on")
        ctx.mbar_deferred.setdefault((int(cta), int(off)), []).append((None, run, ctx.cur, g, 0))


def flush(ctx, keys=None) -> bool:
    """Apply the deferred complete-tx operations of the mbarriers ``keys`` (all when None);
    True when there were any."""
    dq = ctx.mbar_deferred
    if not dq:
        return False
    todo = list(dq) if keys is None else [k for k in keys if k in dq]
    done = False
    for k in todo:
        items = dq.pop(k, ())
        if items and ctx.timeline is not None:
            ctx.timeline.copy_done(k)
        for nbytes, cb, d, g, lane in items:
            if nbytes is None:          # a deferred action (defer_action)
                ctx.as_issued(d, cb)
                done = True
                continue
            st = ctx.mbar.get(k)
            if st is None:
                continue
            if cb is not None:
                st.on_complete.append(cb)
            ctx.as_issued(d, _tx_change, k[0], k[1], nbytes, -1, g, lane)
            done = True
    return done


def mbarrier_arrive(ctx, cta, addr, count=1, *, drop=False, no_complete=False, g=None, lane=0) -> int:
    """One arrive-on operation with ``count`` on the mbarrier at ``(cta, addr)`` (``drop``:
    first lower the expected count by ``count``). Returns the state token."""
    tok = arrive_threads(ctx, np.array([cta]), np.array([addr]), np.array([count], np.int64),
                         drop=drop, no_complete=no_complete, g=g, lane0=lane)
    return int(tok[0])


def arrive_threads(ctx, ctas, offs, counts, tx=None, *, drop=False, no_complete=False, g=None, lane0=0):
    """Arrivals of several threads (in thread order, as the hardware's atomic updates would
    serialize them): thread ``i`` performs (expect-tx of ``tx[i]``, then) an arrive-on with
    ``counts[i]`` on the mbarrier ``(ctas[i], offs[i])``. Returns each thread's state token."""
    ctas = np.asarray(ctas, np.int64)
    offs = np.asarray(offs, np.int64)
    n = len(ctas)
    tokens = np.zeros(n, np.uint64)
    few = n <= 64               # (a few threads, one per CTA or warp: their operands as Python ints)
    if few:
        cl, ol = ctas.tolist(), offs.tolist()
        cn = [int(counts)] * n if np.ndim(counts) == 0 else per_thread(np.asarray(counts, np.int64), n).tolist()
        bad = ctx.sanitize and any(c < 1 or c > MAX_COUNT for c in cn)
    else:
        counts = per_thread(np.asarray(counts, np.int64), n)
        bad = ctx.sanitize and n and ((counts < 1) | (counts > MAX_COUNT)).any()
    if bad:
        counts = per_thread(np.asarray(counts, np.int64), n)
        j = int(np.argmax((counts < 1) | (counts > MAX_COUNT)))
        raise ctx.error(InterpreterError, f"mbarrier arrive count must be 1..{MAX_COUNT}, got {int(counts[j])}",
                        g, lane0 + j)
    if few:                     # in first-thread order, each a list of its threads
        at: dict = {}
        for i, key in enumerate(zip(cl, ol)):
            at.setdefault(key, []).append(i)
        groups = list(at.values())
    elif (ctas == ctas[0]).all() and (offs == offs[0]).all():
        groups = [np.arange(n)]
    else:
        keys = ctas * (1 << 32) + offs
        _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        groups = [np.nonzero(inv == k)[0] for k in np.argsort(first)]
    if tx is not None:
        tx = per_thread(np.asarray(tx, np.int64), n)
    for sel in groups:
        i0 = int(sel[0])
        cta, off = (cl[i0], ol[i0]) if few else (int(ctas[i0]), int(offs[i0]))
        st = _get(ctx, cta, off, g, lane0 + i0, "arrived on")
        if tx is not None:
            if len(sel) == 1:               # (one thread: its operand as an int)
                total = int(tx[i0])
                bad = not 0 <= total <= MAX_TX
            else:
                t = tx[sel]
                total = int(t.sum())
                bad = bool(((t < 0) | (t > MAX_TX)).any())
            if ctx.sanitize and bad:
                raise ctx.error(InterpreterError, f"tx-count operand must be 0..{MAX_TX}, got {int(tx[sel].max())}",
                                g, lane0 + i0)
            # expect-tx of every thread first: no arrival of this group can complete the phase
            # before its own expect-tx, and tx only rises here
            st.tx += total
            st.tx_by = ctx.cur
        _arrive_seq(ctx, cta, off, st, [cn[i] for i in sel] if few else counts[sel], tokens, sel, drop,
                    no_complete, g, lane0)
    _bump(ctx)
    return tokens


def _no_complete(ctx, off, g, lane):
    return ctx.error(SanitizerError, f"mbarrier.arrive.noComplete completes the current phase of the mbarrier "
                                     f"at shared {off:#x} (the ISA leaves that undefined)", g, lane)


def _arrive_seq(ctx, cta, off, st, cnt, tokens, sel, drop, no_complete, g, lane0):
    """The arrivals ``cnt`` (counts, in thread order: a list of ints for a few threads, else
    an array) of threads ``sel`` on the mbarrier ``st`` at ``(cta, off)``, their state tokens
    into ``tokens``. A few threads' one at a time (Python ints) while each leaves arrivals
    pending or is its phase's last with no arrival after it that the phase's tx-count would
    leave without a phase (as the loop below takes them); the rest, many threads' and every
    drop, by the loop (cumulative sums)."""
    m = len(cnt)
    i = 0
    while i < m and not drop and (m == 1 or type(cnt) is list):
        c = int(cnt[i])
        if c < st.pending:              # an arrival that leaves some pending
            tokens[sel[i]] = token(st.phase, st.pending - c)
            st.pending -= c
        elif c == st.pending > 0 and (st.tx == 0 or i == m - 1):     # the phase's last
            tokens[sel[i]] = token(st.phase, 0)
            st.pending = 0
            if st.tx == 0:
                if no_complete and ctx.sanitize:
                    raise _no_complete(ctx, off, g, lane0 + int(sel[i]))
                _complete(ctx, cta, off, st)
        else:
            break
        i += 1
    if i:
        if i == m:
            return
        cnt, sel, m, i = cnt[i:], sel[i:], m - i, 0
    while i < m:
        if drop:
            # one thread at a time: its drop lowers the count the next phase reloads
            c = int(cnt[i])
            st.expected -= c
            if ctx.sanitize and st.expected < 0:
                raise ctx.error(SanitizerError, f"mbarrier.arrive_drop lowers the expected arrival count "
                                f"of the mbarrier at shared {off:#x} below zero", g, lane0 + int(sel[i]))
            take = np.array([c])
        else:
            take = cnt[i:]
        cs = np.cumsum(take)
        hit = np.nonzero(cs >= st.pending)[0]
        if len(hit) == 0:
            tokens[sel[i:i + len(take)]] = (np.uint64((st.phase & 0xFFFFFFFF) << 32)
                                            | (st.pending - cs).astype(np.uint64))
            st.pending -= int(cs[-1])
            i += len(take)
            continue
        j = int(hit[0])
        if st.pending == 0 and ctx.sanitize:
            raise ctx.error(SanitizerError,
                            f"too many arrivals on the mbarrier at shared {off:#x}{_in_cta(ctx, cta)}: every "
                            f"arrival of the current phase happened but its tx-count is {st.tx} "
                            f"({_tx_words(st.tx)}), so this arrive has no phase to count in", g,
                            lane0 + int(sel[i]))
        if int(cs[j]) > st.pending or st.pending == 0:
            if ctx.sanitize:
                lane = lane0 + int(sel[i + j])
                raise ctx.error(SanitizerError,
                                f"too many arrivals on the mbarrier at shared {off:#x}{_in_cta(ctx, cta)}: an "
                                f"arrive with count {int(take[j])} finds {st.pending} arrivals pending "
                                f"({st.describe()})", g, lane)
            st.pending = max(st.pending, int(cs[j]))      # unsanitized: let it complete
        before = st.pending
        for k in range(j + 1):
            tokens[sel[i + k]] = token(st.phase, before - int(cs[k]))
        st.pending = 0
        i += j + 1
        if st.tx == 0:
            if no_complete and ctx.sanitize:
                raise _no_complete(ctx, off, g, lane0 + int(sel[i - 1]))
            _complete(ctx, cta, off, st)
        elif i < m and ctx.sanitize:
            lane = lane0 + int(sel[i])
            raise ctx.error(SanitizerError,
                            f"too many arrivals on the mbarrier at shared {off:#x}{_in_cta(ctx, cta)}: every "
                            f"arrival of the current phase happened but its tx-count is {st.tx} "
                            f"({_tx_words(st.tx)}), so this arrive has no phase to count in", g, lane)


# ----------------------------------------------------------------------------- waiting
def phase_done(st: MBarrier, state, parity: bool) -> bool:
    """Whether the phase named by a wait operand has completed: ``parity`` waits compare the
    parity of the current phase; state tokens name the phase of their arrival."""
    if parity:
        return (st.phase & 1) != (int(state) & 1)
    return (st.phase & 0xFFFFFFFF) != (int(state) >> 32) & 0xFFFFFFFF


def wake_on_starvation(ctx) -> bool:
    """Nothing else can run: wake the threads parked in mbarrier waits (a ``try_wait`` returns
    false: its time limit expired). Returns False when they were already woken in the same state
    of the batch (then it is a deadlock)."""
    if flush(ctx):
        return True                 # copies completed: their waiters may run now
    waiters = [h for h in ctx.groups if h.wait is not None and h.wait[0] == "mbar"]
    if not waiters:
        return False
    sig = (ctx.mbar_version,
           tuple(sorted((h.pc, h.n, int(h.idx[0]), h.wait) for h in ctx.groups)))
    if ctx.mbar_starved == sig:
        return False
    ctx.mbar_starved = sig
    for h in waiters:
        if h.wait[4] == "try":
            if ctx.mbar_timeout is None:
                ctx.mbar_timeout = np.zeros(ctx.N, bool)
            ctx.mbar_timeout[h.idx] = True
        h.wait = None
    return True


def describe(ctx, g) -> str:
    """What a group parked in an mbarrier wait waits on (deadlock reports)."""
    _, cta, off, parity, _kind, _pc = g.wait
    st = ctx.mbar.get((cta, off))
    if st is None:
        return f"waits on mbarrier at shared {off:#x} (never initialized, or invalidated)"
    extra = ""
    if st.tx:
        extra = f": {_tx_words(st.tx)}"
        if st.tx_by is not None:
            extra += f"; the tx-count was last changed by `{st.tx_by.text}` at {st.tx_by.where_line()}"
    return (f"waits on mbarrier at shared {off:#x} for phase parity {parity} to complete "
            f"(current phase {st.phase}, {st.pending} of {st.expected} arrivals pending, "
            f"tx-count {st.tx}){extra}")


def check_balanced(ctx):
    """At the end of a batch (deferred copy completions applied first): an mbarrier whose tx-count is not zero had transactions expected
    that never completed (or completed that were never expected). Report each."""
    flush(ctx)
    bad = [(k, st) for k, st in ctx.mbar.items() if st.tx != 0]
    if not bad or not ctx.sanitize:
        return
    lines = []
    for (cta, off), st in sorted(bad, key=lambda kv: kv[0]):
        by = f"; last changed by `{st.tx_by.text}` at {st.tx_by.where_line()}" if st.tx_by is not None else ""
        lines.append(f"  CTA {ctx._cta_str(cta)} mbarrier at shared {off:#x}: {st.describe()}: "
                     f"{_tx_words(st.tx)}{by}")
    loc = getattr(bad[0][1].tx_by.ins, "loc", None) if bad[0][1].tx_by is not None else None
    raise SanitizerError("unbalanced mbarrier transactions at kernel exit: expect_tx byte counts "
                         "never matched by complete_tx (a copy of the wrong size, or one never "
                         "issued?)\n" + "\n".join(lines), loc=loc)
