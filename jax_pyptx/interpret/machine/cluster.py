"""Thread-block clusters: the launch shape, distributed shared memory addresses and the
cluster barrier. Mixed into ``scheduler.context.Context`` (``ClusterMixin``).

The model (PTX ISA "Cluster of Cooperative Thread Arrays", "Distributed shared memory"):

* every CTA of a cluster is interpreted in the same batch, at consecutive batch indices in
  rank order (``%cluster_ctarank``), so CTA ``bank`` of the batch belongs to cluster
  ``bank // cluster_size`` and the CTA of rank ``r`` in its cluster is ``first + r``;
* a ``.shared::cluster`` address is either a ``.shared::cta`` address of the executing CTA
  (below ``CLUSTER_BIT``) or one that ``mapa`` made: ``CLUSTER_BIT | rank << 24 | offset``.
  The generic address of either is ``SHARED_WINDOW`` plus it, as for any shared address;
* an access through a ``.shared::cluster`` address of another CTA reads or writes that CTA's
  shared memory; one through a ``.shared::cta`` space with a ``mapa`` address, to a rank
  outside the cluster or to a CTA that has exited is reported;
* ``barrier.cluster.arrive`` / ``wait``: every non-exited thread of the cluster arrives once
  per phase; ``wait`` blocks until the phase its thread arrived in has completed; exiting
  threads no longer hold the barrier up. A phase whose arrivals were all ``.release`` (the
  default) orders every CTA's earlier shared-memory accesses for the race checker; one with a
  ``.relaxed`` arrival orders nothing.

Helpers other families use: ``shared_target`` (address -> CTA bank, offset, race-checker
warp), ``encode`` (rank, offset -> address), ``Context.cluster_banks(bank)``,
``Context.bank_of_rank(bank, rank)`` (the peer of a ``cta_group::2`` pair is rank ``r ^ 1``) and
``Context.masked_banks(bank, ctaMask)`` (the CTAs a multicast reaches).
"""
from __future__ import annotations

import numpy as np

from ...errors import DeadlockError, DivergenceError, InterpreterError
from ..state import memory as M
from .group import Group

CLUSTER_BIT = 1 << 31           # set in a shared::cluster address that mapa made
RANK_SHIFT = 24
RANK_MASK = 0x7F
OFFSET_MASK = (1 << RANK_SHIFT) - 1
MAX_CLUSTER = 16                # CTAs per cluster with the non-portable size allowed (sm_90)
PORTABLE_CLUSTER = 8
REMOTE_WARP = 32                # race-checker id of an access from CTA rank r: REMOTE_WARP + r

_U_BIT = np.uint64(CLUSTER_BIT)
_U_SHIFT = np.uint64(RANK_SHIFT)
_U_RANK = np.uint64(RANK_MASK)
_U_OFF = np.uint64(OFFSET_MASK)


def encode(rank, offs):
    """The ``.shared::cluster`` address of shared offset ``offs`` of CTA ``rank`` (uint64)."""
    return _U_BIT | (np.asarray(rank, np.uint64) << _U_SHIFT) | (np.asarray(offs, np.uint64) & _U_OFF)


def directive_ints(directives, name):
    """The integer arguments of performance directive ``name`` (``.maxnreg``,
    ``.reqnctapercluster`` ...) of an entry, or None when it has none."""
    for d in directives:
        if d.name == name:
            return tuple(int(x, 0) for a in d.args for x in str(a).replace(",", " ").split())
    return None


def launch_shape(cluster, grid, directives):
    """The cluster shape of a launch: ``cluster`` (None when the launch names none) checked
    against the grid and the kernel's ``.reqnctapercluster`` / ``.maxclusterrank`` /
    ``.explicitcluster`` directives (``RawDirective`` records). Returns (shape, explicit)."""
    req = directive_ints(directives, ".reqnctapercluster")
    if req is not None:
        req = tuple(req) + (1,) * (3 - len(req))
    mr = directive_ints(directives, ".maxclusterrank")
    maxrank = mr[0] if mr else None
    explicit_dir = any(d.name == ".explicitcluster" for d in directives)
    if cluster is None:
        if req is None and explicit_dir:
            raise InterpreterError(
                "the kernel declares .explicitcluster but the launch gives no cluster shape; "
                "pass cluster=(x, y, z)")
        shape = req or (1, 1, 1)
    else:
        shape = _dim3(cluster)
        if req is not None and shape != req:
            raise InterpreterError(
                f"the kernel declares .reqnctapercluster {', '.join(map(str, req))} but the launch "
                f"gives cluster={shape}; launch it with cluster={req} (or none)")
    size = shape[0] * shape[1] * shape[2]
    if size > MAX_CLUSTER:
        raise InterpreterError(
            f"cluster={shape} has {size} CTAs; a cluster has at most {MAX_CLUSTER} CTAs "
            f"({PORTABLE_CLUSTER} portably)")
    if maxrank is not None and size > maxrank:
        raise InterpreterError(
            f"cluster={shape} has {size} CTAs but the kernel declares .maxclusterrank {maxrank}")
    if any(g % c for g, c in zip(grid, shape)):
        raise InterpreterError(f"grid {grid} is not a multiple of the cluster shape {shape}")
    explicit = explicit_dir or req is not None or (cluster is not None and shape != (1, 1, 1))
    return shape, explicit


def _dim3(v):
    if isinstance(v, (int, np.integer)):
        t = (int(v), 1, 1)
    else:
        t = tuple(int(x) for x in v) + (1,) * (3 - len(tuple(v)))
    if len(t) != 3 or any(x < 1 for x in t):
        raise InterpreterError(f"cluster must be a positive int or a tuple of up to 3 positive ints, got {v!r}")
    return t


def shared_target(ctx, g, addrs, cta_only=False, warps=True, banks=None):
    """(CTA banks, offsets, race-checker warps or None) of shared addresses ``addrs``
    (shared-window offsets) accessed by the threads of ``g``. ``cta_only``: the access names
    ``.shared`` / ``.shared::cta``, where an address from ``mapa`` is undefined. ``warps=False``:
    the caller does not want the warps (always None). ``banks``: the threads' own CTAs
    (``ctx.slot_cta[g.idx]``) when the caller has them.

    Raises ``MemoryFault`` for a rank outside the cluster or a CTA that has exited."""
    if banks is None:
        banks = ctx.slot_cta[g.idx]
    race = warps and ctx.shared.race is not None
    if not addrs.size or addrs.max() < _U_BIT:
        return banks, addrs, (g.slot_info(ctx)[2] if race else None)
    cl = addrs >= _U_BIT
    rank = ((addrs >> _U_SHIFT) & _U_RANK).astype(np.int64)
    if cta_only:
        j = int(np.argmax(cl))
        a = int(addrs[j])
        raise M.MemoryFault(
            "out-of-bounds", j, a,
            f"address {a:#x} is a shared::cluster address (from mapa, CTA rank {int(rank[j])}) but the "
            f"access names .shared::cta; use the .shared::cluster state space (or a generic address)",
            "shared")
    own = ctx.cluster_rank_of_cta[banks]
    bad = cl & (rank >= ctx.cluster_size)
    if bad.any():
        j = int(np.argmax(bad))
        a = int(addrs[j])
        raise M.MemoryFault(
            "out-of-bounds", j, a,
            f"shared::cluster address {a:#x} names CTA rank {int(rank[j])} but the cluster has "
            f"{ctx.cluster_size} CTA{'s' if ctx.cluster_size > 1 else ''} (ranks 0-{ctx.cluster_size - 1})",
            "shared")
    tgt = np.where(cl, banks - own + rank, banks)
    offs = np.where(cl, addrs & _U_OFF, addrs)
    gone = cl & (ctx.live_count[tgt] == 0)
    if gone.any():
        j = int(np.argmax(gone))
        a = int(addrs[j])
        raise M.MemoryFault(
            "out-of-bounds", j, a,
            f"shared::cluster address {a:#x} is in the shared memory of CTA rank {int(rank[j])} "
            f"(CTA {ctx._cta_str(int(tgt[j]))}), which has exited: a CTA's shared memory must not be "
            f"accessed once it exits (is a barrier.cluster before its exit missing?)", "shared")
    warps = None
    if race:
        remote = tgt != banks
        warps = np.where(remote, REMOTE_WARP + own, ctx.warp_in_cta[g.idx])
    return tgt, offs, warps


class ClusterState:
    """Cluster barrier bookkeeping of a batch (created on first use)."""

    __slots__ = ("phase", "arrived", "relaxed", "cid")

    def __init__(self, nclusters, nslots, slot_cluster):
        self.phase = np.zeros(nclusters, np.int64)
        # phase a thread arrived in and has not waited on yet; -1: none
        self.arrived = np.full(nslots, -1, np.int64)
        self.relaxed = np.zeros(nclusters, bool)
        self.cid = slot_cluster              # batch cluster index of every slot


class ClusterMixin:
    """Cluster helpers and ``barrier.cluster`` for ``scheduler.context.Context``."""

    def cluster_banks(self, bank: int) -> range:
        """Batch indices (CTA banks) of the CTAs of ``bank``'s cluster, in rank order."""
        first = bank - int(self.cluster_rank_of_cta[bank])
        return range(first, first + self.cluster_size)

    def bank_of_rank(self, bank, rank):
        """Batch index of the CTA of rank ``rank`` in the cluster of CTA ``bank``."""
        return np.asarray(bank) - self.cluster_rank_of_cta[bank] + np.asarray(rank)

    def masked_banks(self, bank: int, mask: int) -> list:
        """Batch indices of the CTAs whose rank bit is set in ``mask`` (a ``.multicast::cluster``
        ctaMask) in the cluster of CTA ``bank``; a bit beyond the cluster size raises."""
        mask = int(mask) & 0xFFFF
        if mask >> self.cluster_size:
            raise InterpreterError(
                f"ctaMask {mask:#06x} names CTA ranks beyond the cluster's {self.cluster_size} CTAs "
                f"(ranks 0-{self.cluster_size - 1})")
        first = bank - int(self.cluster_rank_of_cta[bank])
        return [first + r for r in range(self.cluster_size) if mask >> r & 1]

    def _cl_state(self):
        st = self.cl_state
        if st is None:
            st = self.cl_state = ClusterState(self.nctas // self.cluster_size, self.N,
                                              self.slot_cta // self.cluster_size)
        return st

    def _cluster_slots(self, c):
        span = self.cluster_size * self.S
        return slice(c * span, (c + 1) * span)

    def cluster_barrier(self, sub: Group, g: Group, wait: bool, relaxed: bool = False, d=None):
        """``barrier.cluster.arrive`` (``wait`` False) or ``.wait`` by the threads of ``sub``
        (``g``: the group at the instruction, ``sub`` its active threads)."""
        st = self._cl_state()
        cid = st.cid[sub.idx]
        if not wait:
            ph = st.phase[cid]
            if self.sanitize:
                again = st.arrived[sub.idx] == ph
                if again.any():
                    j = int(np.argmax(again))
                    raise self.error(DivergenceError,
                                     "barrier.cluster.arrive by a thread that already arrived in this phase "
                                     "of the cluster barrier (each thread arrives once, then waits)", sub, j, d)
            st.arrived[sub.idx] = ph
            if sub.n == self.nlive:
                # every live thread of the batch arrives: every cluster's phase completes
                if relaxed:
                    st.relaxed[:] = True
                self._cluster_complete(np.arange(len(st.phase)))
                return None
            for c in np.unique(cid):
                c = int(c)
                if relaxed:
                    st.relaxed[c] = True
                self._cluster_try_complete(c)
            return None
        have = st.arrived[sub.idx]
        if (have < 0).any():
            j = int(np.argmax(have < 0))
            raise self.error(DeadlockError,
                             "barrier.cluster.wait by a thread that has not performed barrier.cluster.arrive "
                             "since its last wait: it would wait for its own arrival forever", sub, j, d)
        ready = have < st.phase[cid]
        done = sub.idx[ready]
        st.arrived[done] = -1
        if ready.all():
            return None
        out = []
        if ready.any():
            out.append(Group(done, g.pc + 1, self.N))
        for c in np.unique(cid[~ready]):
            sel = (~ready) & (cid == c)
            h = Group(sub.idx[sel], g.pc, self.N)
            h.wait = ("cluster", int(c))
            out.append(h)
        if sub is not g:
            out.append(Group(g.idx[~np.isin(g.idx, sub.idx)], g.pc + 1, self.N))
        return out

    def _cluster_try_complete(self, c: int):
        """Complete cluster ``c``'s barrier phase when every live thread has arrived in it."""
        st = self.cl_state
        sl = self._cluster_slots(c)
        mine = st.arrived[sl] == st.phase[c]
        if not (mine | ~self.live[sl]).all() or not mine.any():
            return          # someone has to arrive, or nobody arrived (every thread exited)
        self._cluster_complete(np.array([c]))

    def _cluster_complete(self, cs):
        """The current barrier phase of clusters ``cs`` completes: waiters go on; accesses
        before it are ordered after it for the race checker unless an arrival was relaxed."""
        st = self.cl_state
        st.phase[cs] += 1
        if self.shared.race is not None:
            ordered = cs[~st.relaxed[cs]]
            if len(ordered) == len(st.phase):
                self.shared.race.advance_all()
            elif len(ordered):
                k = self.cluster_size
                self.shared.race.advance((ordered[:, None] * k + np.arange(k)).reshape(-1))
        st.relaxed[cs] = False
        for h in self.groups:
            if h.wait is not None and h.wait[0] == "cluster" and np.isin(h.wait[1], cs):
                h.wait = None

    def _cluster_exit(self, g: Group):
        """Exiting threads no longer hold the cluster barrier of their cluster up."""
        for c in np.unique(self.slot_cta[g.idx] // self.cluster_size):
            self._cluster_try_complete(int(c))

    def _cluster_waits_on(self, c: int) -> str:
        st = self.cl_state
        sl = self._cluster_slots(c)
        live = self.live[sl]
        arrived = int(((st.arrived[sl] == st.phase[c]) & live).sum())
        return (f"waits on barrier.cluster (phase {int(st.phase[c])}: {arrived} of {int(live.sum())} "
                f"live threads of the cluster arrived)")


def shared_banks(ctx, g, addrs, banks=None):
    """(CTA banks, offsets) of shared addresses (``.shared::cluster`` addresses allowed);
    ``banks``: as for ``shared_target``."""
    banks, offs, _ = shared_target(ctx, g, addrs, warps=False, banks=banks)
    return banks, offs
