"""The execution model: a batch of CTAs, warps of 32 lanes, groups of threads sharing a PC.

Threads of a batch occupy *slots*: CTA ``c`` of the batch owns slots ``[c*S, (c+1)*S)`` where
``S`` is its thread count rounded up to whole warps (padding lanes never run), so a slot's
warp is ``slot // 32`` and its lane ``slot % 32``. Registers are one array per register over
all slots.

A *group* is a set of threads at the same PC; it may span warps and CTAs, so converged code
runs as one NumPy operation per instruction for the whole batch. Scheduling (sound for any
PTX, since any interleaving of warps is legal):

* the runnable group with the lowest PC runs next and all runnable groups at that PC merge
  first, which reconverges diverged threads at the join point of structured code;
* a branch whose predicate differs between threads splits the group;
* ``bar.sync`` parks threads until their CTA's barrier completes; warp-synchronous and
  ``.aligned`` instructions wait for the rest of the warp to arrive at the same PC;
* a group that has run for a long time while others are runnable yields to the one that has
  waited longest (round robin), so spin loops on memory make progress;
* when nothing is runnable and something is parked, the sanitizer reports a deadlock, with
  every parked warp's PC and what it waits on; when the only runnable warps spin in loops that
  can never exit, ``progress`` reports that the same way;
* ``max_steps`` and ``timeout`` stop a batch that runs too long (``progress``).
"""
from __future__ import annotations

import numpy as np

from ...errors import DivergenceError, InterpreterError, MisalignedAccessError, OutOfBoundsError, UninitializedReadError
from ..state import memory as M
from ..state import stack
from ..state.operands import per_thread
from . import progress, specials
from .fused import FusedMixin
from .register_blocks import SOLE_IN_WRITE, plain, sole, write_blocks, write_rows
from ..sanitizer import severity
from ..machine.group import Group, by_slots, gather, merge, scatter
from ..machine.cluster import ClusterMixin
from ..sanitizer.definedness import DefinednessMixin
from ..sanitizer.provenance import ProvenanceMixin
from ..machine.mbarrier import wake_on_starvation
from ..machine.registry import K_BRA, K_EXIT, K_NOP, K_OP
from ..machine.barriers import SyncMixin, _lanes




class Context(SyncMixin, ClusterMixin, DefinednessMixin, ProvenanceMixin, FusedMixin):
    """Everything one batch of CTAs needs while it runs."""

    stats = None                # interpret.stats.Stats of a launch that opted in to counting
    timeline = None             # timeline.Timeline of a launch with one (timeline.TracedContext)
    wgfence = None              # wgfence.FenceState once a wgmma.fence / mma_async ran (sanitizer)
    # per-family state, one field each: None until the family's first instruction makes it
    wgmma = None                # ops_wgmma.WgmmaState: open groups, pending accumulators
    tcgen05_ld = None           # asyncregs.AsyncWrites of tcgen05.ld destinations (ops_tcgen05)
    tmem = None                 # tmem.TensorMemory of the batch's CTAs
    mma_frags = None            # ops_mma: register arrays -> the fragment matrix they came from
    clc_failed = None           # ops_clc: set of CTAs that observed a failed cancellation
    global_races = False        # global_races.GlobalRaces, or None (not checked); False: not decided
    deadline = None             # progress: the launch's time limit (monotonic seconds) and
    timeout = None              # its length (seconds), or None
    limit_at = 0                # progress: the step count of the next limit / time check
    YIELD_AFTER = 4096          # instructions between checks of the step limit / yields
    STARVE = 64                 # consecutive picks of the lowest PC before others get a turn
    fuse = True                 # run planned segments of register arithmetic in batches (segments)

    def __init__(self, prog, launch, cta_ids, sanitize=True):
        self.prog = prog
        self.code = prog.code
        self.launch = launch
        self.strict = sanitize == "strict"        # SanitizerWarnings raise (severity)
        self.schedule = launch.schedule           # schedule.Schedule: eager, late or random
        self.random = launch.schedule.mode == "random"
        self.sanitize = sanitize = bool(sanitize)
        bx, by, bz = launch.block
        self.T = bx * by * bz
        self.W = -(-self.T // 32)
        self.S = self.W * 32
        self.cta_ids = np.asarray(cta_ids, np.int64)
        self.nctas = len(cta_ids)
        self.N = N = self.nctas * self.S
        geo = specials.geometry(self.nctas, self.S, self.T)
        self.slot_cta, self.tid_lin, self.valid, self.lane, self.warp_in_cta = geo[:5]
        self.live = geo[5].copy()
        self.live_mask = geo[6].copy()
        self.nlive = self.nctas * self.T
        self.live_count = np.full(self.nctas, self.T, np.int64)
        self.exited = False       # some thread exited (sync: .aligned barriers it skipped)
        self._exits = [] if sanitize else None    # (slots, pc) of each exit (``exit_pc``)
        self.regs = {}
        self.pinit = {}            # register key -> bool (N,): slots written (partial writes only gain
                                   # slots; a read-only one is shared: _first_mask)
        self._slot_sets = {}       # _set_on's dicts by slot set (machine.group.by_slots)
        self.rhooks = {}          # register key -> hook(ctx, key, g, write): async-owned registers
        self._init_definedness()
        self._init_provenance()
        self.at_exit = []         # checks run when the batch has finished (ctx) -> None
        self.mem = launch.mem
        self.shared = M.BankedSpace("shared", self.nctas, prog.dynamic_shared_offset + launch.smem
                                    if prog.extern_shared else max(prog.static_shared_size, 0),
                                    track_init=sanitize, layout=prog.shared_layout(launch.smem),
                                    pitch=M.BLOCK if sanitize else 16)      # (coarse flags)
        if sanitize and self.shared.size:
            from ..sanitizer.smem_races import RaceTracker
            self.shared.race = RaceTracker(self.nctas, self.shared.stride, self.shared.data)
            if not self.strict:
                self.shared.race.warn = self._race_warning
            self.shared.track_dirty()                                # async_proxy's fence rule
        self.local = M.BankedSpace("local", N, max(prog.local_size, 0), track_init=False,
                                   layout=[(v.name, v.addr, v.size) for v in prog.local_vars])
        self._special = {}
        self.ldm_layouts = {}      # (id(group), .x count) -> ops.mma._Layout (ldmatrix, ``_row_layout``)
        self.store_units = {}      # ... its scratch per row size (the rows' disjointness)
        self.groups = []
        self.bars = {}
        self.bar_pending = 0
        self.steps = self.tsteps = 0      # instructions dispatched, thread-instructions
        self.tick = 0
        self.streak = 0
        self.callstack = None
        self.stack_sp = None      # alloca's per-thread stack pointers (stack.pointers)
        self.cp_pending = []
        self.cp_committed = None
        self.mbar = {}            # (cta, shared offset) -> mbarrier.MBarrier
        self.mbar_deferred = {}   # (cta, offset) -> copy completions not yet applied
        self.mbar_waiters = {}    # (cta, offset) -> groups parked on it (machine.mbarrier.wake)
        self.tcgen05_late = {}    # slot -> [(Decoded, run)]: tcgen05.mma / cp waiting for its commit (schedule)
        self.bulk_late = []       # [(slot, bulk group, Decoded, run)]: bulk stores at their wait (schedule)
        self.tcgen05_st_late = {}  # slot -> [(Decoded, run)]: tcgen05.st waiting for its wait::st (schedule)
        self.mbar_version = 0     # bumped on every mbarrier state change (starvation wake-ups)
        self.mbar_timeout = None  # per slot: a parked try_wait's time limit expired
        self.mbar_starved = None
        self.async_proxy = None   # async_proxy.AsyncState once an async-proxy op ran
        self.cur = None           # Decoded being executed (for messages)
        self.cur_group = None
        self.max_steps = launch.max_steps
        cx, cy, cz = launch.cluster
        self.cluster_size = cx * cy * cz
        self.cluster_rank_of_cta = launch.cluster_rank(cta_ids)
        self.cl_state = None      # cluster.ClusterState, made by the first barrier.cluster
        self.regfile = None       # ops_regs.RegFile, made by the first setmaxnreg
        # no-progress detection and limits (progress)
        self.spinning = False     # some group has Group.spin set
        self.backs = progress.CHECK_EVERY
        progress.start(self, launch)

    # ------------------------------------------------------------------ registers
    def read(self, key, g, nbytes=None):
        """Register ``key`` for the threads of ``g`` (``nbytes``: only its low bytes are used)."""
        if self.rhooks and key in self.rhooks:
            self.rhooks[key](self, key, g, False)
        a = self.regs.get(key)
        if a is None:
            if self.sanitize:
                if not self.computes_here():
                    self._uninit_reg(key, g, None)
                self._lenient_read(key, g, None)
                return np.zeros(g.n, self.prog.regs[key].sdt)
            a = self.regs[key] = np.zeros(self.N, self.prog.regs[key].sdt)
        if self.pinit:
            known = g.ok if g.ok is not None else self._set_on(g)
            if key not in known:
                m = self.pinit.get(key)
                if m is None:
                    known[key] = True           # written by whole batches: defined for good
                else:
                    ok = m if g.full else m[g.idx]
                    if not ok.all():
                        if not self.computes_here():
                            self._uninit_reg(key, g, ok)
                        self._lenient_read(key, g, ok)
                    else:
                        known[key] = True
        if self.undef and key in self.undef:
            self._undef_read(key, g, nbytes)
        if self.ptag and key in self.ptag:
            self._pt_read(key, g)
        if g.full:
            return a
        return a[g.idx] if g.strided is False else gather(a, g, self.S, self.nctas)

    def write(self, key, g, v):
        if self.rhooks and key in self.rhooks:
            self.rhooks[key](self, key, g, True)
        if self.wgfence is not None and key in self.wgfence.keys:
            self.wgfence.wrote(self, key, g)
        if self._taint_d is not None or self.undef:
            self._undef_write(key, g)
        if self.ptag and (self._pt_d is not None or key in self.ptag):
            self._pt_write(key, g)
        if g.full:
            self.regs[key] = v
            if self.pinit:
                self.pinit.pop(key, None)
            return
        a = self.regs.get(key)
        if a is None:
            a = np.zeros(self.N, v.dtype)
            if self.sanitize:
                known = g.ok if g.ok is not None else self._set_on(g)
                self.pinit[key] = known[key] = self._first_mask(g, known)
        else:
            if not sole(a, SOLE_IN_WRITE):         # (else written in place: nothing else holds it)
                a = a.copy()
            if self.pinit:
                known = g.ok if g.ok is not None else self._set_on(g)
                if key not in known:
                    self._mask_gain(key, g, known)
        if g.strided is False:
            a[g.idx] = v
        else:
            scatter(a, g, v, self.S, self.nctas)
        self.regs[key] = a

    write_rows = write_rows     # a register block delivered at once (``rows``)
    write_blocks = write_blocks  # a segment's results, rows of a native block
    plain = plain               # reading these registers is only a gather

    def _set_on(self, g):
        """``{register key: ...}``: the registers found written on every slot of ``g`` (their
        partial-write mask set there, or no mask: written whole). A register gets a mask only at
        its first write (a partial one, ``write``), the mask only gains slots (copies of a shared
        one included: ``_mask_gain``) and a full write drops it for good, so a register found
        written stays so: the test is made once per register and set of slots. It depends only
        on the slots, so groups holding the same slots (a warp-specialized role, split off and
        merged again every loop iteration) share one dict (``_slot_sets``, matched by content
        once per group). ``None`` maps to the slots' shared first-write mask (``_first_mask``)."""
        known = g.ok
        if known is None:
            known = g.ok = by_slots(self._slot_sets, g.idx, dict)
        return known

    def _first_mask(self, g, known):
        """The partial-write mask of a register ``g`` writes first: its slots and the threads
        not live. Made once per set of slots while no thread exits (``known[None]``) and shared,
        read-only, by every register those slots write first: a later partial write by other
        slots copies it (``_mask_gain``)."""
        t = known.get(None)
        if t is None or t[0] != self.nlive:
            m = ~self.live
            m[g.idx] = True
            m.flags.writeable = False
            known[None] = t = (self.nlive, m)
        return t[1]

    def _mask_gain(self, key, g, known):
        """The partial write of ``key`` by ``g`` (not known written there: ``known``, its
        ``_set_on``) sets its slots in the register's mask (a copy when that is a shared
        first-write mask, ``_first_mask``); a register without one was written whole."""
        m = self.pinit.get(key)
        if m is not None:
            if not m.flags.writeable:
                m = self.pinit[key] = m.copy()
            m[g.idx] = True
        known[key] = True

    def _uninit_reg(self, key, g, ok):
        lane = 0 if ok is None else int(np.argmin(ok))
        name = key.split("::")[-1].split("#")[0]
        raise self.error(UninitializedReadError,
                         f"read of uninitialized register {name}", g, lane)

    # ------------------------------------------------------------------ special registers
    def special(self, name):
        """Special register ``name`` over all slots. Those that depend only on the launch
        shape are made once per launch and batch size (read-only: a register holding one is
        copied before a partial write, ``write``), those of the CTA once per CTA."""
        a = self._special.get(name)
        if a is None:
            if name in specials.TIMERS:
                return specials.make(self, name)
            base = name.partition(".")[0]
            if base in specials.PER_CTA:
                a = specials.make(self, name)
            else:
                cache = getattr(self.launch, "special_cache", None)
                key = (name, self.N)
                a = None if cache is None else cache.get(key)
                if a is None:
                    a = specials.make(self, name)
                    if cache is not None:
                        a.flags.writeable = False
                        cache[key] = a
            self._special[name] = a
        return a

    # ------------------------------------------------------------------ messages
    def thread_coords(self, slot: int):
        bx, by, _ = self.launch.block
        gx, gy, _ = self.launch.grid
        t = int(self.tid_lin[slot])
        c = int(self.cta_ids[self.slot_cta[slot]])
        return (t % bx, (t // bx) % by, t // (bx * by)), (c % gx, (c // gx) % gy, c // (gx * gy))

    def who(self, slot: int) -> str:
        tid, cta = self.thread_coords(slot)
        return f"thread ({tid[0]},{tid[1]},{tid[2]}) of CTA ({cta[0]},{cta[1]},{cta[2]})"

    def error(self, cls, message, g=None, lane=0, d=None):
        d = d or self.cur
        parts = []
        if d is not None:
            parts.append(f"{message}: {d.text}")
        else:
            parts.append(message)
        if g is not None and g.n:
            parts.append(f" by {self.who(int(g.idx[min(lane, g.n - 1)]))}")
        if d is not None:
            parts.append(f" [{d.where()}]")
        loc = getattr(d.ins, "loc", None) if d is not None else None
        return cls("".join(parts), loc=loc)

    def runs_now(self, d):
        """``d`` is the instruction running, as ``_run`` makes each (inline there): reports
        name it, and the definedness and provenance its writes carry start afresh. For the
        planned runs that execute several instructions in one dispatch."""
        self.cur = d
        self._taint_d = self._pt_d = None

    def as_issued(self, d, fn, *args):
        """``fn(self, *args)`` with ``d`` (the instruction that issued deferred work) as the
        current instruction, so that its reports name it."""
        cur, self.cur = self.cur, d
        try:
            return fn(self, *args)
        finally:
            self.cur = cur

    def warn(self, cls, message, g=None, lane=0, d=None):
        """A breach of the ISA that hardware forgives: ``SanitizerWarning`` once per PTX
        instruction, ``cls`` raised under ``sanitize="strict"`` (``severity``)."""
        severity.warn(self, cls, message, g, lane, d)

    def _race_warning(self, f, warp, bank):
        """A same-value write-write race on shared memory (``sanitizer.RaceTracker.warn``)."""
        from ...errors import RaceError
        where = self.shared.describe_offset(f.address)
        detail = f.detail.replace("{where}", f" ({where})" if where else "")
        who = f"warp {warp} of CTA {self._cta_str(bank)}" if warp < 32 else f"CTA rank {warp - 32} of the cluster"
        d = self.cur
        severity.warn(self, RaceError, f"race on shared {d.noun or d.ins.opcode} {d.text} by {who}: {detail} "
                                       f"[{d.where()}]", d=d, whole=True)

    def fault(self, f: M.MemoryFault, g, d):
        from ...errors import InputWriteError, ProvenanceError, RaceError
        cls = {"out-of-bounds": OutOfBoundsError, "misaligned": MisalignedAccessError,
               "uninitialized": UninitializedReadError, "race": RaceError, "provenance": ProvenanceError,
               "input": InputWriteError}.get(f.kind, OutOfBoundsError)
        kind = d.noun or d.ins.opcode
        what = {"out-of-bounds": "out-of-bounds", "misaligned": "misaligned",
                "uninitialized": "uninitialized", "read-only": "write to read-only memory in",
                "race": "race on", "provenance": "wrong-buffer",
                "input": "write into an input:"}.get(f.kind, f.kind)
        space = f.space or ""
        lane = min(f.lane, g.n - 1) if g.n else 0
        msg = f"{what} {space} {kind} {d.text} by {self.who(int(g.idx[lane]))}: {f.detail} [{d.where()}]"
        return cls(" ".join(msg.split(" ")), loc=getattr(d.ins, "loc", None))

    # ------------------------------------------------------------------ threads
    @property
    def exit_pc(self):
        """int64 per slot (sanitized; else None): the pc its thread exited at, -1 while live
        (recorded per exit, made when a report asks)."""
        if self._exits is None:
            return None
        pcs = np.full(self.N, -1, np.int64)
        for idx, pc in self._exits:
            pcs[idx] = pc
        return pcs

    def exit_threads(self, g: Group):
        idx = g.idx
        if self._exits is not None:
            self.exited = True
            self._exits.append((idx, self.cur.pc if self.cur is not None else -1))
        if g.n == self.nlive:
            # every live thread exits (a converged batch): no per-thread bookkeeping
            ctas = np.flatnonzero(self.live_count)
            self.live[:] = False
            self.live_count[:] = 0
            self.live_mask[:] = 0
        else:
            self.live[idx] = False
            cnt = np.bincount(self.slot_cta[idx], minlength=self.nctas)
            self.live_count -= cnt
            ctas = np.flatnonzero(cnt)
            uw, m = g.warp_masks()
            self.live_mask[uw] &= ~m
        self.nlive -= g.n
        if self.bar_pending:
            for (c, b), st in list(self.bars.items()):
                if st.arrived and st.aligned_pc is not None and c in ctas:
                    raise self._exited_at_barrier(c, b, self.code[st.aligned_pc])
                if st.arrived and st.expected is None and st.arrived >= self.live_count[c]:
                    self._complete_bar(c, b, st)
        if self.cl_state is not None:
            self._cluster_exit(g)

    # ------------------------------------------------------------------ calls
    def push_call(self, g: Group, ret_pc: int):
        if self.callstack is None:
            self.cs_pc = np.zeros((self.N, 32), np.int64)
            self.cs_depth = np.zeros(self.N, np.int64)
            self.cs_sp = np.zeros((self.N, 32), np.uint64)
            self.callstack = True
        dep = self.cs_depth[g.idx]
        if (dep >= 32).any():
            raise self.error(InterpreterError, "call stack deeper than 32 frames", g)
        self.cs_pc[g.idx, dep] = ret_pc
        if getattr(self.prog, "stack_base", None) is not None:     # the callee's alloca frame
            self.cs_sp[g.idx, dep] = stack.pointers(self)[g.idx]
        self.cs_depth[g.idx] = dep + 1

    # ------------------------------------------------------------------ warp synchrony
    def check_sync(self, d, sub: Group, g: Group):
        """True when every lane the instruction needs is in ``sub``; else park or report. A
        group that passed a check passes it again while no thread exits (``nlive``, which only
        falls, and ``live_mask`` change together): ``Group.synced`` remembers the last pass."""
        sync = d.sync
        if sync == "warpgroup":
            if sub.synced == (self.nlive, 1):
                return True
            ok = self._check_warpgroup(d, sub, g)
            if ok:
                sub.synced = (self.nlive, 1)
            return ok
        if sync == "aligned":
            if sub.n == self.nlive or sub.synced == (self.nlive, 0):
                return True
            uw, m = sub.warp_masks()
            need = self.live_mask[uw]
            if (m == need).all():
                sub.synced = (self.nlive, 0)
                return True
            missing = need & ~m
            return self._sync_missing(d, sub, g, uw, missing, "all threads of the warp (.aligned)")
        mask = sync(self, sub)
        if np.ndim(mask) == 0:          # an immediate membermask: its pass is remembered too
            key = (self.nlive, 2, int(mask))
            if sub.synced == key:
                return True
            ok = self._check_mask(d, sub, g, mask)
            if ok:
                sub.synced = key
            return ok
        return self._check_mask(d, sub, g, mask)

    def _check_mask(self, d, sub, g, mask):
        """``check_sync`` of an instruction with a membermask (``mask``: its value, one or per
        thread)."""
        mask = per_thread(np.asarray(mask).astype(np.uint64), sub.n)
        lane = self.lane[sub.idx].astype(np.uint64)
        own = (mask >> lane) & np.uint64(1)
        if self.sanitize and not own.all():
            j = int(np.argmin(own))
            raise self.error(DivergenceError,
                             f"thread is not in the instruction's membermask {int(mask[j]):#010x}", sub, j, d)
        if sub.n == self.nlive and (mask == mask[0]).all():
            return True
        uw, m = sub.warp_masks()
        w = sub.idx >> 5
        pos = np.searchsorted(uw, w)
        need = mask & self.live_mask[w]
        miss = need & ~m[pos]
        if not miss.any():
            return True
        per_warp = np.zeros(len(uw), np.uint64)
        np.bitwise_or.at(per_warp, pos, miss)
        return self._sync_missing(d, sub, g, uw, per_warp, "every lane of its membermask")

    def _check_warpgroup(self, d, sub, g):
        """``.sync.aligned`` warpgroup instructions (wgmma): every live thread of the four warps
        of each warpgroup ``sub`` touches must be in ``sub``."""
        if sub.n == self.nlive:
            return True
        uw, m = sub.warp_masks()
        cta, wl = uw // self.W, uw % self.W
        cand = (cta * self.W + (wl // 4) * 4)[:, None] + np.arange(4)      # warps of each group
        cand = cand[((wl // 4) * 4)[:, None] + np.arange(4) < self.W]
        need_w = np.unique(cand)
        have = np.zeros(len(need_w), np.uint64)
        pos = np.searchsorted(need_w, uw)
        have[pos] = m
        missing = self.live_mask[need_w] & ~have
        if not missing.any():
            return True
        return self._sync_missing(d, sub, g, need_w, missing, "every thread of its warpgroup (.aligned)")

    def _sync_missing(self, d, sub, g, uw, missing, what):
        # lanes that are at this PC but predicated off can never join: report now
        if sub is not g:
            guw, gm = g.warp_masks()
            pos = np.searchsorted(guw, uw)
            off = missing & gm[np.minimum(pos, len(gm) - 1)]
            if off.any() and self.sanitize:
                w = int(uw[int(np.argmax(off != 0))])
                raise self.error(DivergenceError,
                                 f"divergent warp-synchronous instruction: warp {w % self.W} needs {what} "
                                 f"but lanes {_lanes(int(off[np.argmax(off != 0)]))} are predicated off", sub, 0, d)
        g.wait = ("warp", d.pc, [(int(w), int(mm)) for w, mm in zip(uw, missing) if mm])
        return False

    # ------------------------------------------------------------------ running
    def run(self):
        N = self.N
        live = np.nonzero(self.live)[0]
        self.groups = [Group(live, 0, N)] if len(live) else []
        groups = self.groups
        while groups:
            runnable = [g for g in groups if g.wait is None]
            if not runnable:
                # groups waiting at a warp sync at the same PC may now be complete together
                if self._merge_warp_waiters():
                    continue
                if wake_on_starvation(self):
                    continue
                raise self.deadlock()
            self.tick += 1
            g = self.schedule.pick(runnable) if self.random else None
            if g is None:
                g = min(runnable, key=_pc_key)
            if self.spinning and g.spin is not None and len(runnable) > 1:
                # g spins on memory nothing changed since (progress): run another group
                ep = progress.epoch(self)
                others = [h for h in runnable if h.spin != ep]
                if others:
                    g = min(others, key=_pc_key)
            if len(runnable) > 1:
                self.streak += 1
                if self.streak > self.STARVE:
                    # round robin: the lowest-PC group has run many times in a row while others
                    # waited (a spin loop?): let the one that waited longest run once
                    others = [h for h in runnable if h.pc != g.pc]
                    if others:
                        g = min(others, key=_last_key)
                    self.streak = 0
            else:
                self.streak = 0
            pc = g.pc
            same = [h for h in groups if h.pc == pc and (h.wait is None or h.wait[0] == "warp")]
            for h in same:
                groups.remove(h)
            g = merge(same, N)
            g.wait = None
            g.last = self.tick
            self.cur_group = g
            out = self.run_group(g)
            for h in out:
                if h.last == 0:
                    h.last = self.tick
            groups.extend(out)
            if len(groups) > 1:
                self._coalesce()

    def _coalesce(self):
        """Merge parked-at-warp-sync groups sharing a PC so a completed warp can proceed."""
        seen = {}
        for g in self.groups:
            if g.wait is not None and g.wait[0] == "warp":
                seen.setdefault(g.pc, []).append(g)
        for pc, gs in seen.items():
            if len(gs) > 1:
                for h in gs:
                    self.groups.remove(h)
                m = merge(gs, self.N)
                m.wait = None
                self.groups.append(m)

    def _merge_warp_waiters(self):
        n0 = len(self.groups)
        self._coalesce()
        return len(self.groups) < n0

    def _others_can_merge(self):
        for h in self.groups:
            if h.wait is None or h.wait[0] == "warp":
                return True
        return False

    def run_group(self, g: Group):
        """Run ``g`` until it branches divergently, parks, exits or yields; return the groups
        that replace it (the loop is ``_run``).

        A launch with a timeline runs the same loop, with a hook (``Timeline.group_run``, a
        ``timeline.GroupRun``) that counts every instruction issued on the timeline's clock,
        so launches with and without a timeline schedule identically by construction.
        """
        # PCs where other groups wait to run: reaching one by falling through is a join
        # point, so yield there and let the scheduler merge (reconvergence)
        stops = {h.pc for h in self.groups if h.wait is None or h.wait[0] == "warp"}
        stops.discard(g.pc)
        if self.timeline is None:
            return self._run(g, stops, stops, None)
        hook = self.timeline.group_run(self, g)
        try:
            return self._run(g, stops, hook.every_pc, hook)
        finally:
            hook.close()

    def _run(self, g: Group, stops, marks, hook):
        """The scheduling loop (``run_group``): the instructions of ``g`` one after the other.

        Every instruction first tests whether its PC is in ``marks``, the loop's one per
        instruction test beside the dispatch: without a hook ``marks`` is ``stops``, the join
        points where the group yields; with one it is every PC, and at a PC that is not a join
        point the hook counts the instruction (``hook.step``). So the timeline costs launches
        without one nothing per instruction.
        """
        code = self.code
        pc = g.pc
        n = tn = 0                 # instructions (thread-instructions) since the last flush
        try:
            while True:
                if marks and pc in marks:
                    if hook is None or pc in stops:
                        return self._stay(g, pc, n, tn)
                    hook.step(pc)
                d = code[pc]
                self.cur = d                              # (runs_now, inline)
                self._taint_d = self._pt_d = None
                sub = g
                p = None
                if d.guard is not None:
                    p = self.read(d.guard, g)
                    c = np.count_nonzero(p)           # threads whose guard holds
                    if d.gneg:
                        c = g.n - c
                    if c == g.n:
                        p = None
                    elif not c:
                        pc += 1
                        n += 1
                        continue
                    else:
                        if d.gneg:
                            p = ~p
                        sub = Group(g.idx[p], pc, self.N)
                k = d.kind
                n += 1
                tn += sub.n
                if k == K_OP:
                    if d.sync is not None and not self.check_sync(d, sub, g):
                        return self._stay(g, pc, n - 1, tn - sub.n, hook)
                    if (d.seg is not None or d.srun is not None or d.wrun is not None or d.irun is not None) \
                            and hook is None \
                            and (s := self._fused(d, sub, n, pc, marks)):
                        n, tn, pc = n + s - 1, tn + (s - 1) * sub.n, pc + s
                        continue
                    d.fn(self, sub)
                    pc += 1
                    if n >= self.YIELD_AFTER:
                        if self._turn(g, pc, n, tn):
                            return [g]
                        n = tn = 0
                    continue
                if k == K_BRA:
                    if p is not None:
                        return self._split(g, sub, p, d.target, pc, n, tn)
                    back = d.target <= pc
                    pc = d.target
                    if back:
                        self.backs -= 1
                        if not self.backs or g.arm is not None:
                            self._sample_loop(g, pc, d, n, tn)
                            n = tn = 0
                        if n >= 64 or self.groups:   # a loop iteration: give others a turn
                            if self._turn(g, pc, n, tn):
                                return [g]
                            n = tn = 0
                    continue
                if k == K_NOP:
                    pc += 1
                    continue
                if k == K_EXIT:
                    g = self._exit(g, sub, p, pc, n, tn, hook)
                    if g is None:
                        return []
                    pc += 1
                    n = tn = 0
                    continue
                r = self._control(d, sub, g, pc, n, tn, hook)
                if r is not None:
                    return r
                pc += 1
        except M.MemoryFault as f:
            raise self.fault(f, sub, d) from None

    def _stay(self, g, pc, n, tn, hook=None):
        """``g`` leaves the loop at ``pc`` (a join point, or waiting there for the rest of its
        warp: ``check_sync``) after ``n`` instructions (``tn`` thread-instructions). A waiting
        instruction did not issue: the timeline (``hook``) takes it back."""
        g.pc = pc
        if hook is not None:
            hook.unstep()
        self._count(n, tn)
        return [g]

    def _turn(self, g, pc, n, tn):
        """Account ``n`` / ``tn`` instructions and give other groups a turn: True when ``g``
        yields at ``pc`` because another group may merge with it."""
        self._count(n, tn)
        if self._others_can_merge():
            g.pc = pc
            return True
        return False

    def _split(self, g, taken, p, target, pc, n, tn):
        """The branch at ``pc`` diverges in ``g`` after ``n`` / ``tn`` instructions:
        ``taken`` (where the guard ``p`` holds) goes to ``target``, the rest falls through."""
        self._count(n, tn)
        taken.pc = target
        return [taken, Group(g.idx[~p], pc + 1, self.N)]

    def _sample_loop(self, g, pc, d, n, tn):
        """The back branch ``d`` to ``pc``: sample the loop for no-progress detection
        (``progress``), after accounting the ``n`` / ``tn`` instructions run so far."""
        self._count(n, tn)
        g.pc = pc
        progress.check(self, g, pc, d.pc)

    def _exit(self, g, sub, p, pc, n, tn, hook):
        """The threads ``sub`` of ``g`` exit at ``pc`` after ``n`` / ``tn`` instructions (all
        of them when ``p``, the guard, is None); return the group of the others, which runs
        on from ``pc + 1`` (None: none)."""
        self._count(n, tn)
        self.exit_threads(sub)
        if p is None:
            return None
        g = Group(g.idx[~p], pc + 1, self.N)
        if hook is not None:
            hook.regroup(g)
        return g

    def _control(self, d, sub, g, pc, n, tn, hook):
        """A control instruction (``K_CTRL``, ``d`` at ``pc``; ``sub`` the threads of ``g``
        whose guard holds): its handler decides what happens to the group. None: ``g`` goes
        on with the next instruction; else the groups that replace it."""
        if d.sync is not None and not self.check_sync(d, sub, g):
            return self._stay(g, pc, n - 1, tn - sub.n, hook)
        g.pc = pc
        r = d.fn(self, sub, g)
        if r is not None:
            self._count(n, tn)
        return r

    def _count(self, n, tn=0):
        self.steps += n
        self.tsteps += tn
        if self.steps > self.limit_at:
            progress.limits(self)       # raises at max_steps / the timeout

def _pc_key(g):
    return g.pc


def _last_key(g):
    return g.last
