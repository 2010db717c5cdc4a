"""Straight-line register arithmetic run in batches: one NumPy operation for many instructions.

PTX spells a tile's arithmetic one register at a time: a softmax over a wgmma accumulator is
64 ``fma`` and 64 ``ex2``, each run for every thread of the batch, so the interpreter's cost
is the fixed cost per instruction, not the arithmetic. A *segment* is a maximal run of
consecutive *pure* instructions of one function: no guard, no synchronization, a form in
``FUSABLE`` whose handler reads its sources and writes its one destination register through
the operand readers and writers and touches nothing else. A source is a register, an
immediate, a variable's address (a ``mov`` of a symbol: the program fixes it) or a special
register the batch fixes (``specials.in_segments``: ``%tid``, ``%ctaid``, ...; the segment
reads its array as a register, ``_defined``). At decode (``plan``) its
instructions are levelled by their register dependencies; the instructions of one level with
the same *signature* (opcode, modifiers, operand kinds, register widths, immediates) form a
*batch*, which runs as one call of the first one's handler on the sources of all of them laid
end to end (a stand-in context, ``_Lanes``). Instructions are pure, so any order the
dependencies allow gives the same registers, and every element is computed by the same
element-wise code: results are bit-identical.

A ``shfl.sync.bfly`` with constant operands and the full membermask (``Decoded.lanes``) is
pure too where whole warps run it: a permutation of each warp's values (its batches permute
every warp of their sources; natively ``bfly32``), and each one still orders its warps'
shared accesses for the race checker at the segment's end (``_synced``: no memory access lies
in between). A group that is not whole warps runs such a segment one by one.

Where the real context would check or report something, the segment is not used and its
instructions run one by one as before, so every diagnostic is the one they give (``run``
returns False): a join point of another group inside the segment, a timeline hook, or an
exception in a handler. Where some of its sources would be reported or looked at (a source
not written on every thread, a register owned by an asynchronous operation:
``Context.rhooks``, a value tagged undefined or with a pointer provenance), only the
instructions that read them, or what those wrote, run one by one, and the runs of the others
between them as segments, in program order (``_by_pieces``).
Destinations are written once each at the end, through ``Context.write`` (its hooks and
masks), named for the instruction that wrote them last; a register that only the segment
names, and that it writes before it reads, is a temporary and is not written back. The
scheduler's counts and yields (``YIELD_AFTER``) see the same instruction numbers, so
schedules are unchanged. ``Context.fuse = False`` turns batching off.

Consecutive batches whose every instruction has a native form run as one call of the compiled
core instead (a ``native.Block``, ``Segment.blocks``), with the same bits; where the call
declines, the block's batches run as above. A segment that is one block hands the call the
batch's registers and the group's slots, and the call reads its inputs there itself; right
after a wgmma run that hands it its accumulator's tile (``scheduler.wgmma_runs``), it reads
those registers from the tile (``run_tiled``).
"""
from __future__ import annotations

import numpy as np

from ...ir.nodes import Addr, Imm, ParenList, PredPair, Reg, Sym, Vec
from ..machine.group import gather
from ..sanitizer.smem_races import warp_synced
from . import specials
from .native import Block, blocks

#: ISA forms whose handlers are pure: they read their register and immediate sources and
#: write their one destination through ``state.operands``' readers and writers only
#: (``tests/test_interp_segments.py`` runs each batched against one by one)
FUSABLE = frozenset({
    "add", "sub", "mul", "mad", "fma", "min", "max", "neg", "abs",
    "ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos", "tanh", "copysign",
    "mov", "cvt", "selp", "setp", "and", "or", "xor", "not", "cnot", "shl", "shr",
    "mul24", "mad24", "popc", "clz", "brev", "lop3", "prmt", "bfe", "bfi",
})
_NO = (".cc", ".f32x2")       # modifiers whose forms write a second register or pack lanes
MIN_SPAN = 3                  # shorter runs are left to the loop
#: the fewest results a native block writes back at once (``Context.write_blocks``: about 10 us
#: and 2 us a register, against 3 us a register one by one)
WRITE_AT_ONCE = 8


class Segment:
    """A planned run of ``span`` pure instructions starting at ``pc``."""

    __slots__ = ("pc", "span", "steps", "ext", "ext_set", "dsts", "finals", "final_keys", "blocks", "shuffles",
                 "plan", "pieces", "specials")

    def __init__(self, pc, span, steps, ext, finals, dsts, blocks=None, shuffles=0):
        self.pc, self.span, self.steps = pc, span, steps
        self.shuffles = shuffles  # its warp shuffles (``Decoded.lanes``): whole warps run it
        self.plan = None          # ({pc: describe's answer}, {pc: register keys}, uses_of): ``_split``
        self.pieces = None        # ``_split``'s answers, by the sources and hooks that stopped it
        self.blocks = blocks      # the steps with native runs as ``native.Block``s, or None
        self.ext = ext            # source keys read before any write of the segment
        self.ext_set = frozenset(ext)     # ... as a set (``Context.plain``)
        self.specials = tuple(k for k in ext if specials.in_segments(k))    # ... special registers
        self.finals = finals      # ((key, Decoded writing it last), ...): the registers written back
        self.final_keys = tuple(k for k, _ in finals)     # ... their keys
        self.dsts = dsts          # every register the segment writes

    def crosses(self, marks, pc):
        """True when one of ``marks`` (other groups' PCs) lies strictly inside the segment."""
        end = pc + self.span
        for m in marks:
            if pc < m < end:
                return True
        return False


class _Step:
    """One batch: ``fn`` (its first instruction's handler) over ``srcs[p]`` laid end to end."""

    __slots__ = ("fn", "keys0", "srcs", "dsts", "pcs")

    def __init__(self, fn, keys0, srcs, dsts, pcs):
        self.pcs = pcs            # the members' PCs, in order
        self.fn = fn              # the handler of the batch's first instruction
        self.keys0 = keys0        # per register position: the key that handler reads
        self.srcs = srcs          # per register position: the keys of every member, in order
        self.dsts = dsts          # destination key of every member, in order


def describe(prog, d, ins, scope, dec):
    """``(signature, destination key, source keys)`` of a pure instruction, or None. A source
    position holds a register key, or None for an immediate (part of the signature)."""
    if d.guard is not None:
        return None
    if d.lanes is None and (dec.form.name not in FUSABLE or d.sync is not None or d.fn is None
                            or any(m in _NO for m in ins.modifiers) or len(ins.operands) < 2):
        return None               # (d.lanes: a warp shuffle, a permutation of whole warps)
    dst = ins.operands[0]
    if type(dst) is not Reg or dst.neg or not prog.has_reg(dst.name, scope):
        return None
    out = prog.reg(dst.name, scope)
    if out.bits > 64:
        return None               # .b128 registers: (n, 2) views, their own handlers
    shape = [("d", out.bits)]
    keys = []
    for op in ins.operands[1:]:
        if type(op) is Imm:
            shape.append(("i", op.text))
            keys.append(None)
        elif type(op) is Sym and ins.opcode == "mov":      # an address the program fixes: a constant
            at = prog.symbol_address(op.name, op.offset, scope)
            if at is None or at[0] in ("label", "func"):
                return None
            shape.append(("s", at[1]))
            keys.append(None)
        elif type(op) is Reg and prog.has_reg(op.name, scope):
            info = prog.reg(op.name, scope)
            if info.bits > 64:
                return None
            same = keys.index(info.key) if info.key in keys else -1
            shape.append(("r", info.bits, op.neg, same))
            keys.append(info.key)
        elif type(op) is Reg and not op.neg and specials.in_segments(op.name):    # (its array: ``_defined``)
            same = keys.index(op.name) if op.name in keys else -1
            shape.append(("r", 32, False, same))
            keys.append(op.name)
        else:
            return None           # other special registers and symbols, vectors: not pure here
    return (ins.opcode, ins.modifiers, tuple(shape)), out.key, tuple(keys)


def register_keys(prog, ins, scope):
    """The keys of every register ``ins`` names (its guard, operands, vector elements, address
    bases), special registers by name."""
    out = []
    todo = list(ins.operands)
    if ins.guard is not None:
        todo.append(Reg(ins.guard.reg))
    while todo:
        op = todo.pop()
        t = type(op)
        if t is Reg:
            e = scope.get(op.name) if scope is not None else None
            out.append(e[1] if e is not None and e[0] == "reg" else op.name)
        elif t is Addr:
            todo.append(op.base)
            todo.extend(op.extra)
        elif t is Vec or t is ParenList:
            todo.extend(op.items)
        elif t is PredPair:
            todo.extend((op.first, op.second))
    return out


def plan(code, infos, names):
    """Give the first instruction of every segment of ``code`` its ``Segment`` (``d.seg``);
    ``infos``: pc -> ``describe``'s answer for the pure instructions; ``names``: pc -> the
    register keys each instruction names (``register_keys``), which tell the registers a
    segment writes that nothing reads after it (its temporaries: never written back)."""
    uses = uses_of(names)
    targets = {d.target for d in code if d.target is not None}
    pc, end = 0, len(code)
    while pc < end:
        if pc not in infos:
            pc += 1
            continue
        q = pc + 1
        while q < end and q in infos and q not in targets and code[q].func == code[pc].func:
            q += 1
        if q - pc >= MIN_SPAN:
            code[pc].seg = levelled(code, infos, range(pc, q), uses, names)
        pc = q


def uses_of(names):
    """Register key -> how many instructions name it (``names``: as for ``plan``)."""
    uses = {}
    for keys in names.values():
        for k in keys:
            uses[k] = uses.get(k, 0) + 1
    return uses


def levelled(code, infos, run, uses, names):
    """The ``Segment`` of the pure instructions at PCs ``run`` (in order; ``uses``: ``uses_of``
    ``names``): each instruction's level is one past the levels of
    the writers it reads or overwrites, and no lower than its earlier readers of the register
    it writes (one past them unless it shares their signature: a batch reads before it
    writes). Batches are the instructions of one level and signature, run level by level.
    A register the segment writes is written back unless only the segment names it and it
    does not read it before writing it (a temporary)."""
    writer_level, readers, ext = {}, {}, []
    batches = {}
    last = {}
    for pc in run:
        sig, dst, keys = infos[pc]
        lv = 0
        for k in keys:
            if k is None:
                continue
            if k in writer_level:
                lv = max(lv, writer_level[k] + 1)
            elif k not in ext:
                ext.append(k)
        if dst in writer_level:
            lv = max(lv, writer_level[dst] + 1)
        for rl, rsig in readers.get(dst, ()):
            lv = max(lv, rl if rsig == sig else rl + 1)
        for k in keys:
            if k is not None:
                readers.setdefault(k, []).append((lv, sig))
        writer_level[dst] = lv
        readers[dst] = []
        batches.setdefault((lv, sig), []).append(pc)
        last[dst] = code[pc]
    steps = []
    for (_, _), pcs in sorted(batches.items(), key=lambda kv: (kv[0][0], kv[1][0])):
        first = infos[pcs[0]][2]
        pos = [p for p, k in enumerate(first) if k is not None]
        lanes = code[pcs[0]].lanes
        steps.append(_Step(code[pcs[0]].fn if lanes is None else lanes[1], tuple(first[p] for p in pos),
                           tuple(tuple(infos[pc][2][p] for pc in pcs) for p in pos),
                           tuple(infos[pc][1] for pc in pcs), tuple(pcs)))
    inside = {}
    for pc in run:
        for k in names[pc]:
            inside[k] = inside.get(k, 0) + 1
    finals = tuple((k, d) for k, d in last.items() if k in ext or uses[k] > inside[k])
    seg = Segment(run[0], run[-1] + 1 - run[0], tuple(steps), tuple(ext), finals, tuple(last),
                  blocks(code, steps, [k for k, _ in finals]),
                  sum(1 for pc in run if code[pc].lanes is not None))
    seg.plan = ({pc: infos[pc] for pc in run}, {pc: names[pc] for pc in run}, uses)
    return seg


class _Lanes:
    """The context a batch's handler sees: its reads are the batch's sources laid end to end,
    its write is the batch's result. Inputs are defined (``run`` checked), so definedness
    bookkeeping (``sanitize``, ``telem``, ``tshift``, ``lenient``) has nothing to do."""

    __slots__ = ("src", "out", "lenient", "telem", "tshift")
    sanitize = False

    def __init__(self):
        self.src = {}
        self.out = None
        self.lenient = False
        self.telem = self.tshift = 0

    def read(self, key, g, nbytes=None):
        return self.src[key]

    def special(self, name):
        return self.src[name]

    def write(self, key, g, v):
        self.out = v


class _Wide:
    """The group a batch's handler sees: ``n`` elements, all of them. It has no slot indices:
    a handler asking for them raises, and the segment runs one by one (``run``)."""

    __slots__ = ("n",)
    full = True

    def __init__(self, n):
        self.n = n


def _defined(ctx, seg, g, ext=None):
    """The segment's sources (``ext``: those of them it reads from the registers, all when
    None) are written on every thread of ``g`` and plain (``Context.plain``), and its
    destinations have no hook. A special register it reads (``specials.in_segments``) is put
    among the registers first: its array over the batch (``Context.special``, read-only),
    defined everywhere."""
    if seg.specials:
        regs = ctx.regs
        for k in seg.specials:
            if k not in regs:
                regs[k] = ctx.special(k)
    rh = ctx.rhooks
    if rh:
        for k in seg.dsts:
            if k in rh:
                return False
    return ctx.plain(seg.ext_set if ext is None else ext, g)


def run(ctx, seg, g, pieces=True) -> bool:
    """Run ``seg`` for the threads of ``g``; False (nothing done) where the instructions must
    run one by one (see the module docstring). Where some of its sources or destinations
    stop it (``_defined``), the instructions that touch them run one by one and the others in
    batches, in program order (``_by_pieces``), unless ``pieces`` is False: a run's arithmetic
    hoisted over other instructions (``store_runs``, ``wgmma_runs``), whose one by one order is
    theirs."""
    if seg.shuffles and not g.whole_warps():
        return False
    if not _defined(ctx, seg, g):
        return pieces and _by_pieces(ctx, seg, g)
    return _batched(ctx, seg, g)


def _by_pieces(ctx, seg, g) -> bool:
    """``seg`` in pieces, in program order: the instructions that read a source ``Context.plain``
    refuses (a pointer's provenance, undefined bits, a partial write, a hook), or a register
    one of those wrote, or that write a hooked register, one by one; the runs of the others
    in between as segments (each run one by one where it stands back too). False (nothing
    done) where no run is long enough to gain, or a warp shuffle would run one by one."""
    rh = ctx.rhooks
    key = (frozenset(k for k in seg.ext if not ctx.plain((k,), g)),
           frozenset(k for k in seg.dsts if k in rh) if rh else frozenset())
    cache = seg.pieces
    if cache is None:
        cache = seg.pieces = {}
    pieces = cache.get(key)
    if pieces is None:
        if len(cache) >= 8:
            cache.clear()
        pieces = cache[key] = _split(ctx.code, seg, *key)
    if not pieces:
        return False
    code = ctx.code
    for p in pieces:
        if type(p) is Segment:
            if _defined(ctx, p, g) and _batched(ctx, p, g):
                continue
            todo = p.plan[0]
        else:
            todo = (p,)
        for pc in todo:
            d = code[pc]
            ctx.runs_now(d)
            d.fn(ctx, g)
    return True


def _split(code, seg, bad, hooked):
    """``_by_pieces``'s pieces of ``seg`` (segments and PCs, in order) when ``bad`` sources
    and ``hooked`` destinations stop it; () where it runs one by one."""
    infos, names, uses = seg.plan
    dirty, pieces, cur = set(bad), [], []
    for pc, (_, dst, keys) in infos.items():
        if dst in hooked or any(k in dirty for k in keys if k is not None):
            if code[pc].lanes is not None:
                return ()
            dirty.add(dst)
            _close(code, infos, names, uses, cur, pieces)
            pieces.append(pc)
        else:
            dirty.discard(dst)
            cur.append(pc)
    _close(code, infos, names, uses, cur, pieces)
    return tuple(pieces) if any(type(p) is Segment for p in pieces) else ()


def _close(code, infos, names, uses, cur, pieces):
    """The run ``cur`` of ``_split`` as a segment (one instruction at a time if short); empties it."""
    if len(cur) >= MIN_SPAN:
        pieces.append(levelled(code, infos, cur, uses, names))
    else:
        pieces.extend(cur)
    cur.clear()


def _batched(ctx, seg, g) -> bool:
    """``run`` of a segment whose sources are plain: its batches (a native block reading the
    registers itself where it is one), the results written back."""
    regs = ctx.regs
    todo = seg.blocks or seg.steps
    if len(todo) == 1 and type(todo[0]) is Block:   # one native block: it reads the registers
        if _native(ctx, seg, g, todo[0]):
            return True
        todo = todo[0].steps                         # declined: its batches through NumPy
    if g.full:
        vals = {k: regs[k] for k in seg.ext}
    elif g.strided is False:
        vals = {k: regs[k][g.idx] for k in seg.ext}
    else:
        vals = {k: gather(regs[k], g, ctx.S, ctx.nctas) for k in seg.ext}
    n = g.n
    lanes = _Lanes()
    one = _Wide(n)
    try:
        for st in todo:
            if type(st) is Block:
                if st.run(vals, n):
                    continue
                for sub in st.steps:          # declined: its batches through NumPy
                    if not _step(sub, vals, lanes, one, n):
                        return False
            elif not _step(st, vals, lanes, one, n):
                return False
    except Exception:             # the instructions say what went wrong, one by one (a
        return False              # handler that wrote nothing: out is None, .shape raises)
    _write_back(ctx, seg, g, vals)
    _synced(ctx, seg, g)
    return True


def _native(ctx, seg, g, blk, tiles=None) -> bool:
    """Segment ``seg``, the one native block ``blk``, run for ``g`` reading the registers
    itself (``tiles``: ``Block.run``'s), its results written back; False where the call
    declines (nothing written)."""
    vals, rows = {}, []
    if not blk.run(vals, g.n, ctx.regs, None if g.full else g.idx, rows, tiles):
        return False
    if len(seg.finals) < WRITE_AT_ONCE or not ctx.write_blocks(seg.finals, g, rows, seg.final_keys):
        for ks, b in rows:                   # (each register's row, as its own)
            vals.update(zip(ks, b))
        _write_back(ctx, seg, g, vals)
    _synced(ctx, seg, g)
    return True


def run_tiled(ctx, seg, g, tiles, rest) -> bool:
    """``run`` of ``seg``, one native block, some of whose sources (``tiles``, as ``Block.run``
    takes them) are a wgmma accumulator's registers that its run has not written
    (``wgmma_runs``' hand-over: they are read from the tile): its other sources ``rest``
    (``ext_set`` less those) as ``_defined`` asks them. False, having done nothing, where it
    cannot (the caller writes the registers and the segment runs as usual)."""
    blk = seg.blocks
    if (seg.shuffles and not g.whole_warps()) or blk is None or len(blk) != 1 or type(blk[0]) is not Block \
            or not _defined(ctx, seg, g, rest):
        return False
    return _native(ctx, seg, g, blk[0], tiles)


def _synced(ctx, seg, g):
    """Each warp shuffle of the segment synchronizes its warps for the race checker, as it
    would one by one (no memory access lies between them)."""
    for _ in range(seg.shuffles):
        warp_synced(ctx, g)


def _write_back(ctx, seg, g, vals):
    """The segment's results (``seg.finals``) into the registers, each as its instruction."""
    for k, d in seg.finals:
        ctx.cur = d
        ctx.write(k, g, vals[k])


def _step(st, vals, lanes, one, n):
    """Run batch ``st`` through its NumPy handler on ``vals``; False when its result is not
    one element per thread (the segment then runs one by one)."""
    src, dsts = lanes.src, st.dsts
    lanes.out = None
    if len(dsts) == 1:
        for k in st.keys0:
            src[k] = vals[k]
        st.fn(lanes, one)
        out = vals[dsts[0]] = lanes.out
        ok = out.shape == (n,)
    else:
        for k, ks in zip(st.keys0, st.srcs):
            src[k] = np.concatenate([vals[x] for x in ks])
        st.fn(lanes, _Wide(n * len(dsts)))
        out = lanes.out
        ok = out.shape == (n * len(dsts),)
        for j, k in enumerate(dsts):
            vals[k] = out[j * n:(j + 1) * n]
    src.clear()
    return ok
