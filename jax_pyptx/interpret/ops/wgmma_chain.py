"""A run of ``wgmma.mma_async`` on one accumulator issued as one (the ops half of
``scheduler.wgmma_runs``, which finds the runs and hoists the arithmetic between them).

One by one, each ``mma_async`` of a k-loop makes the accumulator's tile pending and the next
reads it back; ``run_chain`` keeps the tile between them and makes it pending once, at the
end. Every operation still reads and checks its operands in order (``_MmaAsync.operands``),
and its product is added to the tile of the one before and rounded, as its own issue would:
in the native core (``mma_chain_f32``, the f64 product and the rounding in one pass) where
the first operation's C is none or a tile (``_MmaAsync.c_tile``), else through NumPy.

Where nothing can be reported (``_at_once`` checks it first, changing nothing), the run's
operands are read at once instead: the descriptors of every k-step from their registers, the
bf16 matrices of all the k-steps as one gather (``smem_matrix.chain_plan``, remembered per
descriptor values and CTAs). That needs
each descriptor's register plain (``Context.plain``) and the same in every thread of a
warpgroup, scale-d an immediate or such a predicate register, A's registers plain, and the shared memory clear of the
sanitizer's marks and written (``smem_matrix.read_chain``), and the operands small enough to
stay in the caches (``AT_ONCE_BYTES``); then the fence checks and the A registers' in-flight
reads follow in issue order, and the products and roundings of every k-step in one native
pass (``_issue``).
"""
from __future__ import annotations

import numpy as np

from ..sanitizer import wgfence
from ..state.arith import ARITH
from . import smem_matrix as SM
from .wgmma import WG, chained, state

#: the most operand bytes (float64) a run reads at once (a 512^3 GEMM's 32 warpgroups: 3 MB a
#: run, a 1024^3 one's 128: 12 MB). Read at once, such runs went 5-8% faster than one k-step at
#: a time from their own gathers (alternated in one process, sanitizer on and off, 2026-12-01);
#: far larger ones would no longer fit the caches
AT_ONCE_BYTES = 16 << 20


def chain_ready(ctx, op) -> bool:
    """A run of ``mma_async`` on ``op``'s accumulator can issue as one (``run_chain``): eager
    (no late schedule, nothing deferred), no timeline or statistics, an .f32 accumulator rounded
    natively, and its registers one tile block or nothing of them pending (so every issue of
    the run would make the block's tile pending)."""
    if not op.rounds_natively() or ctx.stats is not None or ctx.timeline is not None or ctx.schedule.late():
        return False
    st = state(ctx)
    if st.deferred:
        return False
    regs = st.regs
    b = regs.blocks.get(op.keys_t)
    if b is not None:
        return b.layout is op.layout
    return not regs.early and regs.tag.keys().isdisjoint(op.keys_t)


def run_chain(ctx, g, members, memo, wait=None, keep=None):
    """Issue the ``mma_async`` of ``members`` ((decoded, ``_MmaAsync``) in program order, one
    accumulator; ``chain_ready`` said so) for ``g`` (the module doc). ``memo``: a dict the
    caller keeps with the run, where what reading its operands at once needs is remembered.
    ``wait``: the ``wgmma.wait_group 0`` (decoded) that follows the run right after its
    ``wgmma.commit_group``, or None; where nothing else is in flight, a run reading its
    operands at once then delivers its tile into the registers itself, as that wait would
    (``_MmaAsync.deliver``), instead of making it pending for the wait to retire; with ``keep``
    (a list) it appends ``(op, tile)`` instead of delivering it, and the caller delivers it
    (``scheduler.wgmma_runs``' hand-over)."""
    st = state(ctx)
    fs = wgfence.state(ctx)
    if wait is not None and (st.regs.tag or st.regs.rtag or
                             (ctx.rhooks and not ctx.rhooks.keys().isdisjoint(members[0][1].keys_t))):
        wait = None
    if _at_once(ctx, g, members, memo, st, fs, wait, keep):
        return
    warps = acc = bits = last = None
    try:
        for d, op in members:
            ctx.runs_now(d)
            W, banks, bdesc, adesc, A, sd, tag = op.operands(ctx, g, st, fs)
            A, Bt = op.matrices(ctx, g, W, banks, bdesc, adesc, A)
            if warps is None:
                warps = st.warps(g)
                acc = _first_tile(ctx, g, op, st, W, warps, sd)
            if acc is not None:         # the product and rounding of this k-step natively
                neg = np.array([op.sa * op.sb < 0], np.uint8)
                ARITH.mma_chain_f32([np.ascontiguousarray(A)], [np.ascontiguousarray(Bt)],
                                    sd.astype(np.uint8).reshape(1, W), neg, acc)
                bits = acc.reshape(W * 4, op.M // 4, op.N)
            else:
                prod = np.matmul(A, Bt)
                if op.sa * op.sb < 0:
                    prod = -prod
                bits = op.accumulate(ctx, st, g, W, warps, prod, sd) if bits is None else chained(prod, bits, sd)
            last = op, W, tag
            if fs is not None:
                fs.clean(g, op.keys)
    finally:
        if last is not None:            # (on an error, the tile of the operations before it)
            op, W, tag = last
            op.pend(ctx, st, g, W, warps, bits, tag)


def _at_once(ctx, g, members, memo, st, fs, wait, keep=None) -> bool:
    """Issue the run with its operands read at once (the module doc; ``wait``: ``run_chain``'s,
    the run delivers its tile); False, having changed nothing, where they must be read one
    operation at a time."""
    got = memo.get("keys", 0)
    if got == 0:
        got = memo["keys"] = _keys(members)
    if got is None:
        return False
    keys, scales, read = got
    if not ctx.plain(read, g):
        return False
    W, banks = st.warpgroups(ctx, g)
    op0 = members[0][1]
    if len(members) * W * (op0.M * op0.K + op0.K * op0.N) * 8 > AT_ONCE_BYTES:
        return False
    v = _uniform(ctx, g, W, keys, np.uint64)
    if v is None:
        return False                   # (a descriptor differs in a warpgroup: one by one says so)
    sds = _scale_d(ctx, g, W, members, scales)
    if sds is None:
        return False
    plans = _plans(ctx, members, memo, banks, v)
    if plans is None:
        return False
    A = None
    if op0.a_regs:
        A = _a_native(ctx, g, W, members, memo)
        if A is None:
            return False
    Bt = SM.read_chain(ctx, plans[0], ctx.sanitize)
    if Bt is None:
        return False
    if not op0.a_regs:
        A = SM.read_chain(ctx, plans[1], ctx.sanitize)
        if A is None:
            return False
        if plans[1].rows is not None:
            A = A[plans[1].rows]
    _issue(ctx, g, members, st, fs, W, A, Bt, sds, wait, plans[0].rows, keep)
    return True


def _a_native(ctx, g, W, members, memo):
    """Every operation's A (W, M, Ka) from its bf16 fragment registers, for the whole run in
    two native passes (``_MmaAsync.a_native``'s, for all its registers at once): a warp's 16
    rows hold each row's pairs of every k-step side by side, so that step i's A is a view at
    column i * Ka of one (W, M, steps * Ka) array. None where reading them is more than a
    gather (``Context.plain``) or an array is one the native call does not take."""
    op0 = members[0][1]
    got = memo.get("a_keys")
    if got is None:                     # (the keys, and the frozenset ``Context.plain`` hashes once)
        keys = tuple(k for _, op in members for k in op.a_keys)
        got = memo["a_keys"] = (keys, frozenset(keys))
    keys, keyset = got
    if op0.a_lanes is None or not ctx.plain(keyset, g):
        return None
    n, M, Ka = len(members), op0.M, op0.Ka
    lanes = memo.get("a_lanes")
    if lanes is None:                   # a pair at row r, column c of step i: r * n * Ka/2 + i * Ka/2 + c
        r, c = np.divmod(op0.a_lanes, Ka // 2)
        step = np.arange(n).reshape(n, 1, 1) * (Ka // 2)
        lanes = memo["a_lanes"] = np.ascontiguousarray((r * (n * Ka // 2) + step + c).reshape(-1, 32))
    regs = ctx.regs
    pairs = np.empty((W * 4, 32 * len(keys)), np.uint32)
    try:
        ARITH.regs_to_tile([regs[k] for k in keys], g.idx, lanes, pairs)
    except (TypeError, ValueError):     # an array it cannot take (not contiguous, say)
        return None
    A = np.empty((W, M, n * Ka), np.float64)
    ARITH.bf16_to_f64(pairs.view(np.uint16).reshape(W, M, n * Ka), A)
    return [A[:, :, i * Ka:(i + 1) * Ka] for i in range(n)]


def _uniform(ctx, g, W, keys, dtype):
    """(len(keys), W): each register of ``keys`` (plain: ``Context.plain``) as the first thread
    of each warpgroup of ``g`` holds it, in one native pass where it can be; None where,
    sanitized, a warpgroup's threads hold different values (one by one says so)."""
    if ARITH is not None:
        out = np.empty((len(keys), W), dtype)
        regs = ctx.regs
        try:
            same = ARITH.take_uniform([regs[k] for k in keys], g.idx, WG, out)
        except (TypeError, ValueError):     # an array it cannot take (not contiguous, say)
            pass
        else:
            return out if same or not ctx.sanitize else None
    v = np.stack([np.asarray(ctx.read(k, g)).view(dtype) for k in keys]).reshape(len(keys), W, WG)
    if ctx.sanitize and np.count_nonzero(v != v[:, :, :1]):
        return None
    return v[:, :, 0]


def _scale_d(ctx, g, W, members, scales):
    """Each operation's scale-d per warpgroup: its immediate, or its predicate register's
    value (None where it differs in a warpgroup: one by one says so)."""
    out, known = [], {}
    for (_, op), k in zip(members, scales):
        sd = known.get((k, op.sd_imm))
        if sd is None:
            if k is None:
                sd = np.full(W, op.sd_imm)
            else:
                p = _uniform(ctx, g, W, (k,), np.bool_)
                if p is None:
                    return None
                sd = p[0]
            known[(k, op.sd_imm)] = sd
        out.append(sd)
    return out


def _keys(members):
    """(the descriptor registers a run reads, B's then A's of each operation in turn; each
    operation's scale-d predicate register, None for an immediate; the frozenset of both, which
    ``Context.plain`` is asked about, its hash kept); None where it cannot read
    its operands at once: not bf16, operands of other shapes or layouts than the first's, a
    descriptor that is not a 64-bit register, scale-d a negated predicate, or A registers
    named twice (a later read of them sees the earlier operation's in-flight read)."""
    keys, a_keys, scales = [], [], []
    op0 = members[0][1]
    for _, op in members:
        if op.at != "bf16" or op.bt != "bf16" or op.b_key is None or (op.sd_imm is None and op.sd_key is None) \
                or (op.a_regs, op.ta, op.tb, op.N, op.K) != (op0.a_regs, op0.ta, op0.tb, op0.N, op0.K) \
                or (not op.a_regs and op.a_key is None):
            return None
        keys.append(op.b_key)
        scales.append(None if op.sd_imm is not None else op.sd_key)
        if op.a_regs:
            a_keys += op.a_keys
        else:
            keys.append(op.a_key)
    if len(set(a_keys)) < len(a_keys):
        return None
    return tuple(keys), tuple(scales), frozenset(keys + [k for k in scales if k is not None])


def _plans(ctx, members, memo, banks, descs):
    """The ``ChainPlan`` of B and of A (None from registers) of the run for the descriptor
    values ``descs`` (one row per descriptor register, as ``_at_once`` reads them), remembered
    in ``memo``; None where the operands are not such a plan."""
    sh = ctx.shared
    key = (descs.tobytes(), banks.tobytes(), sh.size, sh.stride)
    plans = memo.get(key, 0)
    if plans == 0:
        if len(memo) >= 64:
            memo.clear()
        rows = [[SM.decode_wgmma(x) for x in row] for row in descs.tolist()]
        op0 = members[0][1]
        step = 1 if op0.a_regs else 2
        bp = SM.chain_plan(sh, banks, rows[::step], "MN" if op0.tb else "K", op0.N, op0.K, trans=True)
        ap = None if op0.a_regs else SM.chain_plan(sh, banks, rows[1::2], "MN" if op0.ta else "K", op0.M, op0.Ka)
        plans = memo[key] = None if bp is None or (not op0.a_regs and ap is None) else (bp, ap)
    return plans


def _issue(ctx, g, members, st, fs, W, A, Bt, sds, wait=None, b_rows=None, keep=None):
    """Each operation's checks, product and rounding in issue order (A: per-step arrays from
    registers, or every step's matrices as read, (W, steps * M * K); Bt likewise, (K, N) each,
    or with ``b_rows`` the distinct ones, warpgroup w's at row ``b_rows[w]``; ``sds``: each
    one's scale-d per warpgroup), and the tile made pending, or with ``wait``
    (``run_chain``) delivered (with ``keep`` too, appended to it for the caller instead):
    nothing runs before that wait, so the A registers' in-flight reads, which it would end, are
    not recorded.

    Where the first operation's C is none (scale-d false everywhere) or a tile
    (``_MmaAsync.c_tile``), the checks go first, in issue order, then every product and
    rounding in one native pass (``mma_chain_f32``): no check looks at the tile, and one that
    reports ends the launch, so nothing a launch can see changes."""
    op0 = members[0][1]
    n, M, N, K = len(members), op0.M, op0.N, op0.K
    Bt = Bt.reshape(-1, n, K, N)
    Bt = [Bt[:, i] for i in range(n)]
    if not isinstance(A, list):
        A = A.reshape(W, n, M, K)
        A = [A[:, i] for i in range(n)]
    tag = st.open[g.idx]
    warps = st.warps(g)
    acc = _first_tile(ctx, g, op0, st, W, warps, sds[0])
    bits = None
    sdm = np.array(sds, np.uint8)                  # (members, warpgroups): scale-d
    if fs is not None and fs.quiet(g):
        fs = None                   # (every check and clean of the run would find nothing)
    reads, every = (sdm.any(axis=1).tolist(), sdm.all(axis=1).tolist()) if fs is not None else ((), ())
    for j, ((d, op), a, bt, sd) in enumerate(zip(members, A, Bt, sds)):
        ctx.runs_now(d)
        if fs is not None:
            fs.check(ctx, g, (), op.a_keys)
        if op.a_regs and wait is None:
            st.regs.reading_all(ctx, op.a_keys_t, g, tag, op.d)
        if fs is not None:
            op.check_read_fence(ctx, g, fs, W, sd, reads[j], every[j])
        if acc is None:
            prod = np.matmul(a, bt if b_rows is None else bt[b_rows])     # (W, M, N)
            if op.sa * op.sb < 0:
                prod = -prod
            bits = op.accumulate(ctx, st, g, W, warps, prod, sd) if bits is None else chained(prod, bits, sd)
        if fs is not None:
            fs.clean(g, op.keys)
    if acc is not None:
        ARITH.mma_chain_f32(A, Bt, sdm, np.array([op.sa * op.sb < 0 for _, op in members], np.uint8), acc, b_rows)
        bits = acc.reshape(W * 4, M // 4, N)
    if wait is not None and keep is not None:
        keep.append((op, bits))                     # (delivered by the caller: ``run_chain``)
    elif wait is not None:
        ctx.runs_now(wait)
        op.deliver(ctx, g, bits)
    else:
        op.pend(ctx, st, g, W, warps, bits, tag)


def _first_tile(ctx, g, op, st, W, warps, sd):
    """The array (W, M, N) of f32 bits the run's native pass (``_issue``) starts from: the
    first operation's C (``_MmaAsync.c_tile``: a pending tile copied, it is not ours; one read
    from the registers as it is) where scale-d reads it, uninitialized where it reads none;
    None where C is not such a tile."""
    if not np.count_nonzero(sd):
        return np.empty((W, op.M, op.N), np.uint32)
    got = op.c_tile(ctx, st, g, W, warps, sd)
    if got is None:
        return None
    acc, fresh = got
    return (acc if fresh else np.array(acc, np.uint32)).reshape(W, op.M, op.N)
