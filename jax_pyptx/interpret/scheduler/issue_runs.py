"""Runs of issuing instructions with their register arithmetic hoisted: a producer's k-loop.

A warp-specialized producer's loop body issues a few asynchronous operations, each after the
register arithmetic of its operands: ``mbarrier.arrive.expect_tx`` on a stage's mbarrier, two
instructions working out the next shared address, the ``cp.async.bulk.tensor`` load into it,
two more, the next arrival... One by one, each of those short stretches of arithmetic is
shorter than a segment (``segments.MIN_SPAN``), so every instruction is a dispatch of its own.

A *run* is a stretch of one function, with no branch target inside, of *issuers* (``ISSUERS``:
unguarded, with no warp synchronization, not pure: mbarrier arrivals, inits and tx-counts,
bulk and tensor copies and their commits, ``fence.proxy``, ``ld.param``) and pure register
arithmetic (what ``segments`` batches) between them, after the last and, fewer than a
segment's, before the first (``_lead``), not inside a run of shared stores (``store_runs``)
or of ``wgmma.mma_async`` (``wgmma_runs``).
No pure instruction of it writes a register an earlier issuer of it names, or reads one an
earlier issuer may write (an arrival's state token, a loaded value: ``written_keys``): an
issuer reads and writes only registers it names, so executing the arithmetic first changes
nothing any issuer reads, and nothing an issuer writes is overwritten or read by the
arithmetic; the arithmetic before an issuer ran before it anyway. The planner (``plan``)
gives the run's first instruction an ``IssueRun``, its arithmetic as one segment and its
issuers' PCs, where the run saves ``MIN_SAVED`` dispatches or more (``_dispatches``: one by
one, each issuer is one, and each stretch of arithmetic one where it is a segment, else one
an instruction): a pipeline's ``mbarrier.init`` in a row, a producer's arrivals and copies.

The scheduler hands a run to ``run`` where it would hand it a segment (``Context._issues``: no
timeline, no yield or other group's PC inside it). ``run`` executes the arithmetic first, as
that one segment, where the segment runs (it reports nothing: else it stands back, and the
whole run goes one by one), then each issuer in order, as the loop would (``Context.runs_now``,
its handler; a memory fault names it). Should an issuer fail, the arithmetic after it has run
already: registers no report shows. A warning of the arithmetic (none is: the segment stands
back where one could be given) would come before the issuers'.
"""
from __future__ import annotations

from ...ir.nodes import Reg, Vec
from ..machine.registry import K_NOP, K_OP
from ..state import memory as M
from . import segments

#: the instruction forms a run issues (by opcode; ``ld`` of the param space only): their
#: handlers read and write only the registers they name and never park, branch or yield
ISSUERS = frozenset({
    "mbarrier.init", "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.expect_tx",
    "mbarrier.complete_tx", "cp.async.bulk", "cp.async.bulk.tensor", "cp.reduce.async.bulk",
    "cp.reduce.async.bulk.tensor", "cp.async.bulk.commit_group", "cp.async.bulk.prefetch",
    "cp.async.bulk.prefetch.tensor", "fence.proxy", "ld",
})

MIN_SAVED = 2        # dispatches a run saves, at least (``_dispatches`` less its one)


class IssueRun:
    """A planned run of ``span`` instructions from ``pc``: ``issues``, its issuers' PCs in
    order; ``seg``, its arithmetic as one segment (``segments.levelled``), or None (none)."""

    __slots__ = ("pc", "span", "issues", "seg")

    def __init__(self, pc, span, issues, seg=None):
        self.pc, self.span, self.issues, self.seg = pc, span, issues, seg

    crosses = segments.Segment.crosses      # one of other groups' PCs strictly inside the run


def issuer(d) -> bool:
    """Whether ``d`` may issue in a run (``ISSUERS``, unguarded, no synchronization)."""
    op = d.ins.opcode
    return (op in ISSUERS and d.kind == K_OP and d.guard is None and d.sync is None and d.fn is not None
            and d.stc is None and d.wgc is None and (op != "ld" or ".param" in d.ins.modifiers))


def plan(code, pure, names, writes):
    """Give the first instruction of every run of ``code`` its ``IssueRun`` (``d.irun``),
    outside the runs already planned (``d.srun``, ``d.wrun``); ``pure`` and ``names`` as for
    ``segments.plan``, ``writes``: pc -> the registers an issuer may write (``written_keys``)."""
    targets = {d.target for d in code if d.target is not None}
    taken = set()
    for d in code:
        r = d.srun or d.wrun
        if r is not None:
            taken.update(range(r.pc, r.pc + r.span))
    uses = None
    pc, end, free = 0, len(code), 0          # (free: the first PC no run holds)
    while pc < end:
        if pc in taken or pc in pure or not issuer(code[pc]):
            pc += 1
            continue
        first = _lead(code, pure, targets, taken, max(free, 0), pc)
        issues, pures = _extent(code, pure, names, writes, targets, taken, pc)
        pures = list(range(first, pc)) + pures
        last = max(issues[-1], pures[-1] if pures else 0)
        if _dispatches(code, issues, pures) - 1 >= MIN_SAVED:
            if uses is None:
                uses = segments.uses_of(names)
            seg = segments.levelled(code, pure, pures, uses, names) if pures else None
            code[first].irun = IssueRun(first, last + 1 - first, tuple(issues), seg)
            free = last + 1
        pc = issues[-1] + 1


def _lead(code, pure, targets, taken, free, pc):
    """The first PC of the pure instructions right before issuer ``pc`` that a run may begin
    with: fewer than a segment's (those have their own, ``segments.MIN_SPAN``), no branch
    target among them or at ``pc``, none in another run; ``pc`` where there are none such."""
    q = pc
    while q > free and q not in targets and (q - 1) in pure and (q - 1) not in taken \
            and code[q - 1].func == code[pc].func and code[q - 1].guard is None and code[q - 1].lanes is None:
        q -= 1
    return q if pc - q < segments.MIN_SPAN else pc


def _dispatches(code, issues, pures) -> int:
    """How many dispatches the run's instructions take one by one: each issuer, each stretch
    of its pure instructions (one where it is a segment, ``segments.MIN_SPAN`` long or more)."""
    n, run, prev = len(issues), 0, None
    for q in pures:
        if prev is not None and q != prev + 1:
            n += 1 if run >= segments.MIN_SPAN else run
            run = 0
        run += 1
        prev = q
    return n + (1 if run >= segments.MIN_SPAN else run)


def _extent(code, pure, names, writes, targets, taken, pc):
    """The issuers' and the pure instructions' PCs of the run from issuer ``pc`` (the module
    doc): it ends before anything else, or at its last issuer where a pure instruction after
    it writes a register an issuer before it names, or reads one such an issuer may write
    (the pure instructions after the last issuer are the run's only where all of them are:
    a segment they begin is not cut)."""
    issues, pures, pending = [pc], [], []     # (pending: the pure instructions after the last issuer)
    named, written = set(names[pc]), set(writes.get(pc, ()))
    q, end, func = pc + 1, len(code), code[pc].func
    while q < end and q not in targets and q not in taken and code[q].func == func:
        dq = code[q]
        if q in pure and dq.guard is None and dq.lanes is None:
            _, dst, srcs = pure[q]
            if dst in named or not written.isdisjoint(srcs):
                return issues, pures
            pending.append(q)
        elif issuer(dq):
            issues.append(q)
            pures += pending
            pending = []
            named.update(names[q])
            written.update(writes.get(q, ()))
        elif dq.kind != K_NOP:
            break
        q += 1
    return issues, pures + pending


def written_keys(prog, ins, scope) -> tuple:
    """The keys of the registers an issuer ``ins`` may write (``decode_program`` hands them to
    ``plan``): an arrival's state token, a load's destination(s); none for the others."""
    ops = ins.operands
    if ins.opcode in _WRITERS and ops and type(ops[0]) in (Reg, Vec):
        return tuple(segments.register_keys(prog, _Operand(ops[0]), scope))
    return ()


_WRITERS = ("mbarrier.arrive", "mbarrier.arrive_drop", "ld")


class _Operand:
    """One operand as an instruction naming only it (``segments.register_keys``)."""

    __slots__ = ("operands", "guard")

    def __init__(self, op):
        self.operands, self.guard = (op,), None


def run(ctx, irun, g) -> bool:
    """Run ``irun`` for the threads of ``g`` (the module doc); True when done, False (nothing
    done) where its instructions must run one by one."""
    if irun.seg is not None and not segments.run(ctx, irun.seg, g, pieces=False):
        return False
    code = ctx.code
    for pc in irun.issues:
        d = code[pc]
        ctx.runs_now(d)
        try:
            d.fn(ctx, g)
        except M.MemoryFault as f:
            raise ctx.fault(f, g, d) from None
    return True
