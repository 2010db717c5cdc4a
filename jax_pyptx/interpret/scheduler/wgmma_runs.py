"""Runs of ``wgmma.mma_async`` on one accumulator issued as one (``ops.wgmma_chain.run_chain``).

A k-loop's body issues its ``mma_async`` one k-step after the other, all on one accumulator,
with only the descriptors' register arithmetic between them (``add.s64 %rd23, %rd12, 2``).
One by one, each issue makes the accumulator's tile pending and the next reads it back; the
register arithmetic between them runs one instruction at a time. A *run* is such a stretch of
one function, with no branch target inside, starting and ending with an ``mma_async``, no
instruction guarded: ``mma_async`` of one accumulator (``Decoded.wgc``: not the sparse form)
and pure instructions (what ``segments`` batches) that name none of the run's accumulator or A
registers and write no register an earlier ``mma_async`` of the run reads. The planner
(``plan``) gives the run's first ``mma_async`` a ``WgmmaRun``, with the pure instructions as one
segment (none, or two and more: a lone one ends the run before it).

``run`` executes the pure instructions first, as that one segment (where it stands back, the
whole run goes one by one), then the ``mma_async`` in order through ``run_chain``: each reads
and checks its operands as its issue would, in the same order, and only the pending tile is
made once. The pure instructions touch no register of an ``mma_async`` before them, and no
``mma_async`` touches theirs, so no instruction of the run could tell the order. The scheduler
hands a run to ``run`` where it would hand it a segment (``Context._fused``: no timeline, no
yield or other group's PC inside), ``run_chain`` where ``ops.wgmma_chain.chain_ready`` says the
accumulator allows it.

Where the run's last ``mma_async`` is followed right away by ``wgmma.commit_group`` and
``wgmma.wait_group 0`` (a flash-attention block's two products), those two are part of the run
(``WgmmaRun.waits``): ``run`` executes them after the chain, and a chain with nothing else in
flight delivers its tile into the registers itself, as the wait would retire it
(``run_chain``'s ``wait``), so the wait finds nothing to retire. No instruction runs between
the chain and the wait, so none could see the tile pending.

Such a run *hands its tile over* (``WgmmaRun.hand``) to the segment right after its wait
where that segment is one native block and the only instructions of the program that name the
accumulator's registers are the run's own ``mma_async`` (the first with scale-d an immediate
0: it reads no C) and that segment's (which only reads them): a flash-attention block's S
tile and its softmax. The accumulator's registers are then read by nothing but that segment,
and only right after the run, so ``run`` runs the segment itself with those registers read
from the tile (``segments.run_tiled``) and never writes them; where the segment cannot run
so (the loop's next yield or another group's PC at or in it, a source ``Context.plain``
refuses, the native call declining), the tile is delivered into the registers as the wait
would have, and the segment runs as usual.
"""
from __future__ import annotations

import numpy as np

from ...ir.nodes import Imm
from ..machine.asyncregs import TileRows
from ..machine.registry import K_NOP
from ..state.operands import parse_int
from ..ops.wgmma_chain import chain_ready, run_chain
from . import segments
from .native import Block

MIN_MMAS = 2


class WgmmaRun:
    """A planned run of ``span`` instructions from ``pc``: ``members``, its ``mma_async``
    ((decoded, ``ops.wgmma._MmaAsync``), in order); ``seg``, its pure instructions as one
    segment (``segments.levelled``), or None (there are none); ``waits``, the
    ``wgmma.commit_group`` and ``wgmma.wait_group 0`` right after its last ``mma_async``
    (decoded), part of the run, or None; ``hand``: ``(segment, TileInputs, rest)`` where the
    run hands its tile over to the segment after it (the module doc: the accumulator's
    registers its native block reads, ``native.Block.tiled``, and its other sources), else
    None; ``lanes``: those registers' lanes in the tile, made at the first hand-over."""

    __slots__ = ("pc", "span", "members", "seg", "memo", "waits", "hand", "lanes")

    def __init__(self, pc, span, members, seg=None, waits=None, hand=None):
        self.pc, self.span, self.members, self.seg = pc, span, members, seg
        self.waits, self.hand = waits, hand
        self.memo = {}            # what run_chain remembers of the run (its operands' plans)
        self.lanes = None

    crosses = segments.Segment.crosses      # one of other groups' PCs strictly inside the run


def plan(code, pure, names):
    """Give the first ``mma_async`` of every run of ``code`` its ``WgmmaRun`` (``d.wrun``);
    ``pure``: pc -> ``segments.describe``'s answer for the pure instructions, ``names``: pc ->
    the register keys each instruction names (``segments.register_keys``)."""
    targets = {d.target for d in code if d.target is not None}
    uses = None
    pc, end = 0, len(code)
    while pc < end:
        d = code[pc]
        if d.wgc is None or d.guard is not None:
            pc += 1
            continue
        members, pures = _extent(code, pure, names, targets, pc)
        last = members[-1][0].pc
        if len(members) >= MIN_MMAS:
            seg = None
            if pures:
                if uses is None:
                    uses = segments.uses_of(names)
                seg = segments.levelled(code, pure, pures, uses, names)
            waits = _waits(code, targets, last)
            span = last + 1 - pc + (2 if waits else 0)
            hand = _hand(code, names, targets, members, pc + span) if waits else None
            d.wrun = WgmmaRun(pc, span, tuple(members), seg, waits, hand)
        pc = last + 1


def _waits(code, targets, last):
    """The ``wgmma.commit_group`` and ``wgmma.wait_group 0`` (decoded) at ``last + 1`` and
    ``last + 2``, unguarded, no branch target, in ``last``'s function; else None."""
    if last + 2 >= len(code) or last + 1 in targets or last + 2 in targets:
        return None
    c, w = code[last + 1], code[last + 2]
    if (c.ins.opcode, w.ins.opcode) != ("wgmma.commit_group", "wgmma.wait_group") or \
            c.guard is not None or w.guard is not None or c.func != code[last].func or w.func != c.func:
        return None
    n = w.ins.operands[0]
    return (c, w) if type(n) is Imm and parse_int(n.text) == 0 else None


def _hand(code, names, targets, members, after):
    """``WgmmaRun.hand`` of the run of ``members`` whose wait ends before ``after``: the
    segment there (one native block, not a branch target) where the module doc's conditions
    hold, else None."""
    d0, op = members[0]
    if after >= len(code) or after in targets or op.sd_imm is not False or code[after].func != d0.func:
        return None
    seg = code[after].seg
    if seg is None or seg.blocks is None or len(seg.blocks) != 1 or type(seg.blocks[0]) is not Block:
        return None
    acc = frozenset(op.keys)
    read = acc.intersection(seg.blocks[0].inputs)
    if not read or not acc.isdisjoint(seg.dsts):
        return None
    own = {d.pc for d, _ in members}
    end = seg.pc + seg.span
    for q, ks in names.items():
        if q not in own and not seg.pc <= q < end and not acc.isdisjoint(ks):
            return None             # another instruction names the accumulator's registers
    return seg, seg.blocks[0].tiled([(j, k) for j, k in enumerate(op.keys) if k in read]), seg.ext_set - acc


def _extent(code, pure, names, targets, pc):
    """The ``mma_async`` (decoded, op) and the pure instructions' PCs of the run from ``pc``
    (the module doc)."""
    op = code[pc].wgc
    acc = set(op.keys)
    members, pures = [(code[pc], op)], []
    owned = acc | set(op.a_keys)          # the mma_async's accumulator and A registers
    read = set(names[pc])                 # every register an mma_async of the run names
    named = set()                         # every register a pure instruction of it names
    q, end, func = pc + 1, len(code), code[pc].func
    while q < end and q not in targets and code[q].func == func:
        dq = code[q]
        w = dq.wgc
        if w is not None and dq.guard is None and w.keys_t == op.keys_t:
            mine = acc | set(w.a_keys)
            if (set(names[q]) - mine) & acc or mine & named:
                break                     # a descriptor in the accumulator; a pure one's register
            members.append((dq, w))
            owned |= mine
            read |= set(names[q])
        elif q in pure and dq.guard is None:
            keys = set(names[q])
            if keys & owned or pure[q][1] in read:
                break
            pures.append(q)
            named |= keys
        elif dq.kind != K_NOP:
            break
        q += 1
    pures = [p for p in pures if p < members[-1][0].pc]
    if len(pures) == 1:                   # one pure instruction: the run ends before it
        members = [m for m in members if m[0].pc < pures[0]]
        pures = []
    return members, pures


def run(ctx, wrun, g, room=0, marks=None) -> int:
    """Run ``wrun`` for the threads of ``g`` (the module doc); the instructions run: its span,
    and its hand-over segment's where that ran too (``room``: how many instructions the loop
    lets run before its next yield, which both must stay under; ``marks``: its join points,
    none at or in the segment), or 0 (nothing done) where its instructions must run one by one."""
    if g.synced != (ctx.nlive, 1) or not chain_ready(ctx, wrun.members[0][1]):
        return 0
    if wrun.seg is not None and not segments.run(ctx, wrun.seg, g, pieces=False):
        return 0
    waits, hand = wrun.waits, wrun.hand
    if hand is not None and (wrun.span + hand[0].span >= room or
                             (marks and (hand[0].pc in marks or hand[0].crosses(marks, hand[0].pc)))):
        hand = None                   # (the loop would yield at or in the segment)
    kept = [] if hand is not None else None
    run_chain(ctx, g, wrun.members, wrun.memo, None if waits is None else waits[1], kept)
    if waits is not None:
        for d in waits:               # (after a run that retired itself, nothing is in flight)
            ctx.runs_now(d)
            d.fn(ctx, g)
    if kept:                          # the tile the wait would have delivered, still the run's
        op, bits = kept[0]
        seg, ti, rest = hand
        flat = TileRows(op.layout, bits).flat()
        if flat is not None:
            if wrun.lanes is None:        # (the layout's: one per run)
                wrun.lanes = np.ascontiguousarray(flat[1][ti.j])
            if segments.run_tiled(ctx, seg, g, (ti, flat[0], wrun.lanes), rest):
                return wrun.span + seg.span
        op.deliver(ctx, g, bits)       # (``ctx.cur``: the wait, as it would deliver it)
    return wrun.span
