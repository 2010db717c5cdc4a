"""Special registers (``%tid``, ``%ctaid``, ``%laneid``, ...) over the slots of a batch, and
the batch's slot geometry, both made once and cached per launch where they depend only on its
shape (``Context.special``)."""
from __future__ import annotations

import time

import numpy as np

from ...errors import InterpreterError

__all__ = ["make", "geometry", "TIMERS", "PER_CTA", "in_segments"]

TIMERS = frozenset({"%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"})
PER_CTA = frozenset({"%ctaid", "%smid", "%cluster_ctaid", "%clusterid", "%cluster_ctarank"})
#: the .u32 special registers whose values a batch fixes (a thread's place and the launch's
#: shape): a segment reads them as registers (``in_segments``)
_FIXED = frozenset({"%laneid", "%warpid", "%nwarpid", "%cluster_ctarank", "%cluster_nctarank",
                    "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge"}
                   | {f"{b}.{c}" for b in ("%tid", "%ntid", "%ctaid", "%nctaid", "%cluster_ctaid",
                                           "%clusterid", "%cluster_nctaid", "%nclusterid") for c in "xyz"})


def in_segments(name: str) -> bool:
    """Whether special register ``name`` is a .u32 value the batch fixes (not a timer), which a
    segment may read as a register: ``Context.special``'s array, put among the registers
    (``segments``)."""
    return name in _FIXED


def make(ctx, name):
    """Special register ``name`` over every slot of ``ctx``'s batch (``Context.special``
    caches it)."""
    L = ctx.launch
    N = ctx.N
    bx, by, bz = L.block
    cx, cy, cz = L.cluster
    u32 = np.uint32
    comp = {"x": 0, "y": 1, "z": 2}
    base, _, c = name.partition(".")
    k = comp.get(c)
    if base in PER_CTA:          # one value per CTA of the batch, repeated over its slots
        gx, gy, gz = L.grid
        cl = ctx.cta_ids
        ctaid = (cl % gx, (cl // gx) % gy, cl // (gx * gy))
        if base == "%ctaid":
            v = ctaid[k]
        elif name == "%smid":
            v = cl % 132
        elif base == "%cluster_ctaid":
            v = ctaid[k] % L.cluster[k]
        elif base == "%clusterid":
            v = ctaid[k] // L.cluster[k]
        else:                     # %cluster_ctarank
            v = (ctaid[0] % cx) + cx * ((ctaid[1] % cy) + cy * (ctaid[2] % cz))
        return np.repeat(v.astype(u32), ctx.S)
    t = ctx.tid_lin
    if base == "%tid":
        return (t % bx if k == 0 else (t // bx) % by if k == 1 else t // (bx * by)).astype(u32)
    if base == "%ntid":
        return np.full(N, L.block[k], u32)
    if base == "%nctaid":
        return np.full(N, L.grid[k], u32)
    if name == "%laneid":
        return ctx.lane.copy()
    if name == "%warpid":
        return (t // 32).astype(u32)
    if name == "%nwarpid":
        return np.full(N, ctx.W, u32)
    if name == "%nsmid":
        return np.full(N, 132, u32)
    if name == "%gridid":
        return np.zeros(N, np.uint64)
    if name.startswith("%lanemask_"):
        lane = ctx.lane.astype(np.uint64)
        one = np.uint64(1)
        eq = one << lane
        kind = name[len("%lanemask_"):]
        full = np.uint64(0xFFFFFFFF)
        v = {"eq": eq, "lt": eq - one, "le": (eq << one) - one, "gt": full & ~((eq << one) - one),
             "ge": full & ~(eq - one)}[kind]
        return (v & full).astype(u32)
    if name in ("%clock", "%clock64"):
        v = np.full(N, ctx.steps * 4 + 1000, np.uint64)
        return v.astype(u32) if name == "%clock" else v
    if name.startswith("%globaltimer"):
        v = np.full(N, time.time_ns(), np.uint64)
        if name.endswith("_lo"):
            return (v & np.uint64(0xFFFFFFFF)).astype(u32)
        if name.endswith("_hi"):
            return (v >> np.uint64(32)).astype(u32)
        return v
    if base == "%cluster_nctaid":
        return np.full(N, L.cluster[k], u32)
    if base == "%nclusterid":
        return np.full(N, L.grid[k] // L.cluster[k], u32)
    if name == "%cluster_nctarank":
        return np.full(N, cx * cy * cz, u32)
    if name == "%is_explicit_cluster":
        return np.full(N, L.explicit_cluster, np.bool_)
    if name == "%dynamic_smem_size":
        return np.full(N, L.smem, u32)
    if name in ("%total_smem_size", "%aggr_smem_size"):
        return np.full(N, ctx.shared.size, u32)
    if name.startswith(("%envreg", "%pm", "%reserved_smem")):
        return np.zeros(N, u32)
    raise InterpreterError(f"unknown special register {name}")


def geometry(nctas, S, T):
    """Slot arrays of a batch of ``nctas`` CTAs of ``S`` slots (``T`` threads) each: slot's
    CTA, linear thread id, valid, lane, warp in its CTA, and the initial live flags and per-warp
    live lane masks (to copy): read-only, shared by every batch of that shape (``_GEOMETRY``)."""
    key = (nctas, S, T)
    got = _GEOMETRY.get(key)
    if got is not None:
        return got
    N = nctas * S
    slots = np.arange(N, dtype=np.int64)
    tid_lin = slots % S
    valid = tid_lin < T
    W = S // 32
    lm = np.zeros(N // 32, np.uint64)
    for w in range(W):
        k = min(32, T - w * 32)
        lm[w::W] = np.uint64((1 << k) - 1)
    got = (slots // S, tid_lin, valid, (slots & 31).astype(np.uint32), (tid_lin // 32).astype(np.int64),
           valid, lm)
    for a in got:
        a.flags.writeable = False
    if len(_GEOMETRY) >= 64:
        _GEOMETRY.clear()
    _GEOMETRY[key] = got
    return got


#: ``geometry``'s answers by (CTAs, slots and threads a CTA): they depend on nothing else, so
#: every launch of a shape shares them (read-only)
_GEOMETRY: dict = {}
