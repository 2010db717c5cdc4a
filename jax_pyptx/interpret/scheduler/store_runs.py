"""Runs of shared-memory stores, sanitized: their operands read one by one, their bookkeeping
made once (``ops.store_runs`` says when that changes nothing).

A *run* is a stretch of one function, with no branch target inside, of weak ``st`` to the
CTA's own shared memory (``Decoded.stc``) and pure register arithmetic between them (what
``segments`` batches: their addresses), starting and ending with a store, no instruction
guarded; the planner (``plan``) gives its first store a ``StoreRun``, with the run's
arithmetic as one segment where no instruction of it overwrites a register an earlier store
reads (an epilogue's address arithmetic: one batch per form, not a segment between each two
stores). The scheduler hands a run to ``run`` where it would hand it a segment
(``Context._stores``: sanitized, no timeline, no yield or other group's PC inside).

``run`` executes the run's arithmetic first, as that one segment, where the segment runs (it
reports nothing: else it stands back), then the stores in order; or else every instruction in
order. Either way a store only reads its address and value registers (every register check
made as before) and is written at the end: pure arithmetic reads and writes registers only, so
no instruction of the run could tell. At the end ``ops.store_runs.commit`` writes the stores
as one access, or they are written one by one, in order, as before.

Should an instruction of the run fail, the stores issued before it are written first (one by
one: their own reports come first, as they would have), then its error is raised. Warnings are
the one difference: a store's warning (a same-value race of lanes) comes after those of the
arithmetic that follows it in the run.
"""
from __future__ import annotations

from ..machine.registry import K_NOP
from ..ops.store_runs import commit
from ..state import memory as M
from . import segments

MIN_STORES = 2


class StoreRun:
    """A planned run of ``span`` instructions from ``pc`` holding ``stores`` stores; ``seg``:
    its arithmetic as one segment (``segments.levelled``), or None."""

    __slots__ = ("pc", "span", "stores", "seg", "memo")

    def __init__(self, pc, span, stores, seg=None):
        self.pc, self.span, self.stores, self.seg = pc, span, stores, seg
        self.memo = {}          # what ``commit`` keeps of the run's last stores (``ops.store_runs``)

    crosses = segments.Segment.crosses      # one of other groups' PCs strictly inside the run


def plan(code, pure, names):
    """Give the first store of every run of ``code`` its ``StoreRun`` (``d.srun``); ``pure``:
    pc -> ``segments.describe``'s answer for the pure instructions, ``names``: pc -> the
    register keys each instruction names (``segments.register_keys``)."""
    targets = {d.target for d in code if d.target is not None}
    uses = None
    pc, end = 0, len(code)
    while pc < end:
        if not _store(code[pc]):
            pc += 1
            continue
        last, stores, q = pc, 1, pc + 1
        while q < end and q not in targets and code[q].func == code[pc].func:
            if _store(code[q]):
                last, stores = q, stores + 1
            elif q not in pure and code[q].kind != K_NOP:
                break
            q += 1
        if stores >= MIN_STORES:
            if uses is None:
                uses = segments.uses_of(names)
            code[pc].srun = StoreRun(pc, last + 1 - pc, stores, _arithmetic(code, pure, names, uses, pc, last + 1))
        pc = last + 1


def _arithmetic(code, pure, names, uses, s, e):
    """The pure instructions of the run ``code[s:e]`` as one segment, to run before its stores
    read their registers; None where one overwrites a register an earlier store reads (the store
    must read the value before it) or there are fewer than two."""
    pcs = [q for q in range(s, e) if q in pure]
    if len(pcs) < 2:
        return None
    read = set()
    for q in range(s, e):
        if q in pure:
            if pure[q][1] in read:
                return None
        elif code[q].stc is not None:
            read.update(names[q])
    return segments.levelled(code, pure, pcs, uses, names)


def _store(d) -> bool:
    return d.stc is not None and d.guard is None and d.sync is None


def run(ctx, srun, g) -> bool:
    """Run ``srun`` for the threads of ``g`` (the module doc); True when done."""
    code = ctx.code
    items = []
    pc, end = srun.pc, srun.pc + srun.span
    # the arithmetic at once where it can be (then the stores read their registers in order)
    hoisted = srun.seg is not None and ctx.fuse and segments.run(ctx, srun.seg, g, pieces=False)
    d = None
    try:
        while pc < end:
            d = code[pc]
            if hoisted and d.stc is None:
                pc += 1
                continue
            ctx.runs_now(d)
            if d.stc is not None:
                a, vals = d.stc[0](ctx, g)
                items.append((d, a, vals))
                pc += 1
            elif d.seg is not None and ctx.fuse and segments.run(ctx, d.seg, g):
                pc += d.seg.span
            else:
                if d.kind != K_NOP:
                    d.fn(ctx, g)
                pc += 1
    except Exception as e:
        _one_by_one(ctx, g, items)
        if isinstance(e, M.MemoryFault):
            raise ctx.fault(e, g, d) from None
        raise
    if not commit(ctx, g, items, srun.memo):
        _one_by_one(ctx, g, items)
    return True


def _one_by_one(ctx, g, items):
    """Write the stores ``items`` in order, as their instructions would (a memory fault names
    its store)."""
    for d, a, vals in items:
        ctx.cur = d
        try:
            d.stc[1](ctx, g, a, vals)
        except M.MemoryFault as f:
            raise ctx.fault(f, g, d) from None
