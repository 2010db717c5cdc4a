"""Warp-level instructions: shfl.sync, vote.sync, redux.sync, match.sync, elect.sync, activemask.

All run vectorized over every warp of the executing group. The scheduler guarantees (through
``Decoded.sync``) that every live lane named in the membermask executes the instruction
together; lanes of the warp outside the group keep their values.

Exited lanes (and lanes past the end of a partial warp) named in a membermask: the PTX ISA has
``shfl`` / ``vote`` / ``redux`` / ``match`` wait for, and combine, the *non-exited* threads of
the membermask, so naming them is defined and not reported. A ``shfl`` that *reads* a lane not
executing it gets an unpredictable value (the ISA's shfl semantics): under the sanitizer the
destination's bits are undefined for that lane, reported where they reach memory, an address,
a branch or a predicate (``definedness``). Each of these instructions orders the shared-memory
accesses of its warp's lanes for the race checker (``smem_races.warp_synced``).
"""
from __future__ import annotations

import numpy as np

from ...ir.nodes import Imm, PredPair, Reg
from ...types import b32, pred, u32
from ..machine.registry import register
from ..state.operands import np_dtype, parse_int, per_thread, reader, writer
from ..sanitizer.smem_races import warp_synced


def _full(ctx, g, vals, dtype):
    """Scatter per-thread ``vals`` of the group into an array over all slots."""
    vals = np.broadcast_to(np.asarray(vals, dtype), (g.n,))
    if g.full:
        return vals
    t = np.zeros(ctx.N, dtype)
    t[g.idx] = vals
    return t


def _dst_pair(prog, op, t, scope):
    if isinstance(op, PredPair):
        return writer(prog, op.first, t, scope), writer(prog, op.second, pred, scope)
    return writer(prog, op, t, scope), None


def _mask_reader(prog, ins, scope, pos=-1):
    return reader(prog, ins.operands[pos], u32, scope)


# ----------------------------------------------------------------------------- shfl
@register("shfl.sync")
def _shfl(prog, d, ins, scope, dec):
    mode = dec.get("mode")[1:]          # up | down | bfly | idx
    t = b32
    put, putp = _dst_pair(prog, ins.operands[0], t, scope)
    ga = reader(prog, ins.operands[1], t, scope)
    gb = reader(prog, ins.operands[2], u32, scope)
    gc = reader(prog, ins.operands[3], u32, scope)
    gm = _mask_reader(prog, ins, scope, 4)
    d.sync = gm
    a_op = ins.operands[1]
    a_key = prog.reg(a_op.name, scope).key if isinstance(a_op, Reg) else None

    perms = {}          # (b, c) immediates -> each lane's source lane and whether it is in range
    d.lanes = _in_segments(ins, mode, putp, a_key, ga, put)

    def shfl(ctx, g):
        b, c = gb(ctx, g), gc(ctx, g)
        if np.ndim(b) == 0 and np.ndim(c) == 0 and g.whole_warps():
            return _shfl_warps(ctx, g, _lane_perm(perms, mode, int(b), int(c)), ga, a_key, put, putp)
        lane = ctx.lane[g.idx].astype(np.int64)
        j, ok = _source_lanes(mode, lane, np.asarray(b).astype(np.int64) & 31, np.asarray(c).astype(np.int64))
        src = (g.idx & ~31) + j
        a, ua = _source_values(ctx, g, ga, a_key)
        if g.full:
            vals = np.broadcast_to(a, (g.n,))[src]
            srcv, here = src, None
        else:
            full = _full(ctx, g, a, np.uint32)
            active = np.zeros(ctx.N, bool)
            active[g.idx] = True
            here = active[src]
            srcv = np.where(here, src, g.idx)       # inactive source: own value
            vals = full[srcv]
        if ctx.sanitize:
            _undefined_sources(ctx, g, srcv, here, ua, a_key)
        put(ctx, g, np.ascontiguousarray(vals, np.uint32))
        ctx._taint_d = None                         # the predicate (source lane in range) is defined
        if putp is not None:
            putp(ctx, g, np.broadcast_to(ok, (g.n,)).copy())
        warp_synced(ctx, g)
    d.fn = shfl


def _in_segments(ins, mode, putp, a_key, ga, put):
    """``(lane mask, batch handler)`` of a ``shfl.sync.bfly.b32`` a segment may hold
    (``scheduler.segments``), else None: no predicate destination, a register source, the lane
    mask, the clamp 31 and the full membermask immediates. Run by whole warps (the segment
    checks), it is a permutation of each warp's values: every lane executes it, its source
    lane ``lane ^ b`` is in range, and it is synchronized. The handler takes the sources of
    a batch of them laid end to end (whole warps each) and permutes every warp."""
    ops = ins.operands
    if mode != "bfly" or putp is not None or a_key is None or not all(type(o) is Imm for o in ops[2:5]):
        return None
    b, c, m = (parse_int(o.text) for o in ops[2:5])
    if c != 31 or m != 0xFFFFFFFF or not 0 <= b < 32:
        return None
    src = _source_lanes(mode, np.arange(32, dtype=np.int64), b, c)[0]      # (lane ^ b, all in range)

    def batch(ctx, g):
        v = np.asarray(ga(ctx, g))
        put(ctx, g, np.ascontiguousarray(v.reshape(-1, 32)[:, src].reshape(-1), np.uint32))
    return b, batch


def _lane_perm(perms, mode, b, c):
    """``(source lane, in range)`` (32,) of each lane of a warp for the constant operands ``b``
    and ``c`` of a ``shfl`` in ``mode`` (the ISA's pseudocode; an out-of-range lane reads its
    own value), remembered per ``(b, c)``."""
    b &= 31
    got = perms.get((b, c))
    if got is None:
        got = perms[(b, c)] = _source_lanes(mode, np.arange(32, dtype=np.int64), b, c)
    return got


def _source_lanes(mode, lane, b, c):
    """``(source lane, in range)`` of each ``lane`` of a ``shfl`` in ``mode`` with operands
    ``b`` (masked to 5 bits) and ``c`` (one each, or one per lane): the ISA's pseudocode; a lane
    whose source is out of range reads its own value."""
    cval, seg = c & 31, (c >> 8) & 31
    maxl = (lane & seg) | (cval & ~seg)
    if mode == "up":
        j = lane - b
        ok = j >= maxl
    elif mode == "down":
        j = lane + b
        ok = j <= maxl
    elif mode == "bfly":
        j = lane ^ b
        ok = j <= maxl
    else:
        j = (lane & seg) | (b & ~seg)
        ok = j <= maxl
    return np.where(ok, j, lane), ok


def _shfl_warps(ctx, g, perm, ga, a_key, put, putp):
    """``shfl`` with constant ``b`` and ``c`` by a group of whole warps: every source lane
    executes it, so each warp's values are permuted by ``perm`` (``_lane_perm``)."""
    src, ok = perm
    a, ua = _source_values(ctx, g, ga, a_key)
    vals = per_thread(a, g.n).reshape(-1, 32)[:, src].reshape(-1)
    if ctx.sanitize and ua is not None:
        srcv = (g.idx.reshape(-1, 32)[:, :1] + src).reshape(-1)
        _undefined_sources(ctx, g, srcv, None, ua, a_key)
    put(ctx, g, np.ascontiguousarray(vals, np.uint32))
    ctx._taint_d = None                         # the predicate (source lane in range) is defined
    if putp is not None:
        putp(ctx, g, np.tile(ok, g.n // 32))
    warp_synced(ctx, g)


def _source_values(ctx, g, ga, a_key):
    """Operand a of a ``shfl`` (its values, and its undefined bits ``ctx.undef`` holds, or
    None): read without the definedness check, since a lane's bits go to another lane, which
    takes them as its own (``_undefined_sources``)."""
    ua = ctx.undef.pop(a_key, None) if ctx.undef and a_key is not None else None
    try:
        return np.asarray(ga(ctx, g)), ua
    finally:
        if ua is not None:
            ctx.undef[a_key] = ua


def _undefined_sources(ctx, g, srcv, here, ua, a_key):
    """Definedness through a ``shfl``: each destination takes the undefined bits of the value it
    reads (``ua``: those of operand a), and all of them where the source lane does not execute
    this ``shfl`` (exited, past a partial warp's end, predicated off, at another instruction: the
    ISA makes that value unpredictable)."""
    t = ua[srcv] if ua is not None else None
    if here is not None and not here.all():
        t = np.zeros(g.n, np.uint64) if t is None else t.copy()
        t[~here] = np.uint64(0xFFFFFFFF)
        src = (ctx.cur, None)
    elif t is not None and t.any():
        src = ctx.undef_src.get(a_key)
    else:
        return
    ctx._taint_add(g.idx, t, src)


# ----------------------------------------------------------------------------- vote
def _ballot(ctx, g, p):
    """Per-thread ballot over its warp of the boolean ``p`` (uint64 lane bitmask)."""
    p = np.broadcast_to(np.asarray(p, bool), (g.n,))
    bits = np.left_shift(np.uint64(1), (g.idx & 31).astype(np.uint64))
    uw, m = g.warp_masks()
    inv = g._wl
    ball = np.bincount(inv, weights=np.where(p, bits, np.uint64(0)).astype(np.float64),
                       minlength=len(uw)).astype(np.uint64)
    return ball[inv], m[inv]


@register("vote.sync")
def _vote(prog, d, ins, scope, dec):
    kind = dec.get("mode")[1:]          # all | any | uni | ballot
    dt = b32 if kind == "ballot" else pred
    put = writer(prog, ins.operands[0], dt, scope)
    ga = reader(prog, ins.operands[1], pred, scope)
    gm = _mask_reader(prog, ins, scope, 2)
    d.sync = gm

    def vote(ctx, g):
        a = np.broadcast_to(np.asarray(ga(ctx, g), bool), (g.n,))
        ball, present = _ballot(ctx, g, a)
        mask = np.broadcast_to(np.asarray(gm(ctx, g)).astype(np.uint64), (g.n,)) & present
        ball = ball & mask
        if kind == "ballot":
            put(ctx, g, ball.astype(np.uint32))
        elif kind == "all":
            put(ctx, g, ball == mask)
        elif kind == "any":
            put(ctx, g, ball != 0)
        else:
            put(ctx, g, (ball == 0) | (ball == mask))
        warp_synced(ctx, g)
    d.fn = vote


# ----------------------------------------------------------------------------- redux
@register("redux.sync")
def _redux(prog, d, ins, scope, dec):
    op = dec.get("op")[1:]              # add | min | max | and | or | xor
    t = dec.type
    put = writer(prog, ins.operands[0], t, scope)
    ga = reader(prog, ins.operands[1], t, scope)
    gm = _mask_reader(prog, ins, scope, 2)
    d.sync = gm
    dt = np_dtype(t)
    absmod = dec.has(".abs")
    nan = dec.has(".NaN")
    if t.kind == "float":
        f = {"min": np.fmin, "max": np.fmax}[op] if not nan else {"min": np.minimum, "max": np.maximum}[op]
    else:
        f = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

    def redux(ctx, g):
        a = np.broadcast_to(np.asarray(ga(ctx, g), dt), (g.n,))
        if absmod:
            a = np.abs(a)
        mask = np.broadcast_to(np.asarray(gm(ctx, g)).astype(np.uint64), (g.n,))
        uw, present = g.warp_masks()
        inv = g._wl
        if (mask == (mask[0] if g.n else 0)).all() and ((present[inv] & ~mask) == 0).all():
            # one reduction per warp over the contiguous (sorted) slots of that warp
            starts = np.r_[0, np.nonzero(np.diff(inv))[0] + 1]
            r = f.reduceat(a, starts)
            out = r[inv]
        else:
            out = np.empty(g.n, dt)
            for j in range(g.n):
                sel = (inv == inv[j]) & ((mask[j] >> (g.idx & 31).astype(np.uint64)) & np.uint64(1)).astype(bool)
                out[j] = f.reduce(a[sel])
        put(ctx, g, np.ascontiguousarray(out, dt))
        warp_synced(ctx, g)
    d.fn = redux


# ----------------------------------------------------------------------------- match
@register("match")
def _match(prog, d, ins, scope, dec):
    kind = dec.get("mode")[1:]          # all | any
    t = dec.type
    put, putp = _dst_pair(prog, ins.operands[0], b32, scope)
    ga = reader(prog, ins.operands[1], t, scope)
    gm = _mask_reader(prog, ins, scope, 2)
    d.sync = gm
    udt = np.dtype(np.uint64 if t.bits == 64 else np.uint32)

    def match(ctx, g):
        a = np.broadcast_to(np.asarray(ga(ctx, g)).view(udt) if np.asarray(ga(ctx, g)).ndim else
                            np.asarray(ga(ctx, g)).astype(udt), (g.n,))
        full = _full(ctx, g, a, udt)
        active = np.zeros(ctx.N, bool)
        active[g.idx] = True
        base = (g.idx & ~31)[:, None] + np.arange(32)
        eq = (full[base] == a[:, None]) & active[base]
        bits = (eq * (np.uint64(1) << np.arange(32, dtype=np.uint64))).sum(axis=1).astype(np.uint64)
        mask = np.broadcast_to(np.asarray(gm(ctx, g)).astype(np.uint64), (g.n,))
        bits &= mask
        if kind == "any":
            put(ctx, g, bits.astype(np.uint32))
        else:
            _, present = _ballot(ctx, g, np.ones(g.n, bool))
            allm = bits == (mask & present)
            put(ctx, g, np.where(allm, mask & present, 0).astype(np.uint32))
            if putp is not None:
                putp(ctx, g, allm)
        warp_synced(ctx, g)
    d.fn = match


# ----------------------------------------------------------------------------- elect / activemask
_FULL = 0xFFFFFFFF


@register("elect.sync")
def _elect(prog, d, ins, scope, dec):
    put, putp = _dst_pair(prog, ins.operands[0], u32, scope)
    gm = _mask_reader(prog, ins, scope, 1)
    d.sync = gm

    def elect(ctx, g):
        mask = gm(ctx, g)
        if np.ndim(mask) == 0 and int(mask) & _FULL == _FULL and g.whole_warps():
            # every lane of each warp, all of them in the mask: lane 0 leads (a producer warp's
            # elected thread)
            put(ctx, g, np.zeros(g.n, np.uint32))
            if putp is not None:
                putp(ctx, g, ctx.lane[g.idx] == 0)
            warp_synced(ctx, g)
            return
        mask = np.broadcast_to(np.asarray(mask).astype(np.uint64), (g.n,))
        _, present = _ballot(ctx, g, np.ones(g.n, bool))
        m = mask & present
        # lowest set bit
        low = m & (~m + np.uint64(1))
        leader = np.where(m == 0, 0, np.bitwise_count(low - np.uint64(1))).astype(np.uint32)
        put(ctx, g, leader)
        if putp is not None:
            putp(ctx, g, (ctx.lane[g.idx] == leader) & (m != 0))
        warp_synced(ctx, g)
    d.fn = elect


@register("activemask")
def _activemask(prog, d, ins, scope, dec):
    put = writer(prog, ins.operands[0], b32, scope)

    def activemask(ctx, g):
        _, present = _ballot(ctx, g, np.ones(g.n, bool))
        put(ctx, g, present.astype(np.uint32))
    d.fn = activemask
