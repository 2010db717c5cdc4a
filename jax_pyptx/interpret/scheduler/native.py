"""A segment's batches run in native loops (``state.arith``: ``ffi/interp/arith.cc``).

A segment's batches (``segments``) cost one NumPy call each, and a NumPy call over a few
thousand elements costs more in its fixed overhead than in its arithmetic; an ``fma.rn.f32``
or an ``ex2`` takes several passes besides. Consecutive batches whose every instruction has a
native form are compiled at decode into one *block*: the instructions in batch order (which
keeps every dependency: a batch's members read before any later batch writes), each register
a slot, and run for all threads with one call. Every native operation gives the bits the
NumPy handler gives (``tests/test_interp_native.py`` runs each against it on special
values); an ``ex2`` too near an f32 rounding boundary makes the block run through NumPy.

``encode`` gives an instruction its native form (``Decoded.nat``) or None: the forms below,
with every register exactly as wide as the instruction's type, no negated source and no
modifier outside the listed ones; a segment's ``shfl.sync.bfly`` (``Decoded.lanes``, whole
warps: the segment checks) as ``bfly32``. ``blocks`` groups a segment's batches; ``Block.run`` runs
one on the segment's values (False: not run, the caller runs its batches). Without the
compiled module (``state.arith``: not built, or ``JAX_PYPTX_NATIVE=0``) nothing is native
and segments run as before.
"""
from __future__ import annotations

import threading
from operator import itemgetter

import numpy as np

from ...ir.nodes import Imm, Reg, Sym
from ...types import b32, pred, u32
from ..state import arith
from ..state.operands import imm_value
from . import specials

ARITH = arith.ARITH          # None: not built, or turned off; the segments then use NumPy

_OPS = {name: i + 1 for i, name in enumerate(ARITH.ops)} if ARITH is not None else {}
_FTZ, _SIGNED = 1, 16
_CMP = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5, "lo": 2, "ls": 3, "hi": 4, "hs": 5}
_UNUSED = -32768
_SCRATCH = threading.local()  # .buf: the blocks' temporaries, per thread (a launch runs in one)
_SCRATCH_MAX = 64 << 20       # bytes: the most a thread keeps between launches

#: f32 forms: opcode -> (native op, the modifiers allowed besides the type)
_FLOAT = {"add": ("f_add", {".rn", ".ftz"}), "sub": ("f_sub", {".rn", ".ftz"}),
          "mul": ("f_mul", {".rn", ".ftz"}), "fma": ("f_fma", {".rn", ".ftz"}),
          "max": ("f_max", {".ftz"}), "min": ("f_min", {".ftz"}),
          "neg": ("f_neg", {".ftz"}), "abs": ("f_abs", {".ftz"}),
          "ex2": ("f_ex2", {".approx", ".ftz"}), "rcp": ("f_rcp", {".rn", ".approx", ".ftz"})}
#: integer forms: opcode -> native op stem (32 / 64 appended)
_INT = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "shl": "shl"}


class Nat:
    """An instruction's native form: ``op``, ``flags``, the destination (key, bytes) and the
    sources, each ``("r", key, bytes)`` or ``("i", bits)``."""

    __slots__ = ("op", "flags", "dst", "srcs")

    def __init__(self, op, flags, dst, srcs):
        self.op, self.flags, self.dst, self.srcs = op, flags, dst, srcs


def encode(prog, ins, scope, dec):
    """``Nat`` of a pure instruction (``segments.describe`` accepted it), or None."""
    if ARITH is None:
        return None
    form = _form(ins, dec)
    if form is None:
        return None
    name, flags, types = form          # types: the destination's, then each source's
    ops = ins.operands
    if name == "bfly32":
        ops = ops[:3]                  # (the clamp and the membermask: constants it checked)
    if len(ops) != len(types):
        return None
    dst, srcs = _operand(prog, ops[0], types[0], scope), []
    for op, t in zip(ops[1:], types[1:]):
        srcs.append(_operand(prog, op, t, scope))
    if dst is None or dst[0] != "r" or None in srcs:
        return None
    return Nat(_OPS[name], flags, dst[1:], tuple(srcs))


def _form(ins, dec):
    """(native op name, flags, operand types) of ``ins``, or None."""
    op, t = ins.opcode, dec.type
    mods = set(ins.modifiers)
    if dec.form.name == "shfl.sync":   # a segment's warp shuffle (Decoded.lanes): its lane mask
        return "bfly32", 0, (b32, b32, u32)
    if t is None:
        return None
    tn = t.name
    if op in _FLOAT and tn == "f32":
        name, allowed = _FLOAT[op]
        if not mods - {".f32"} <= allowed or (op == "fma" and ".rn" not in mods):
            return None
        if (op == "ex2" and ".approx" not in mods) or (op == "rcp" and not mods & {".rn", ".approx"}):
            return None
        n = {"f_fma": 3, "f_neg": 1, "f_abs": 1, "f_ex2": 1, "f_rcp": 1}.get(name, 2)
        return name, _FTZ if ".ftz" in mods else 0, (t,) * (n + 1)
    if op == "cvt":
        return _cvt(ins, dec, mods)
    w = t.bits
    if tn == "pred":
        if op in ("and", "or", "xor") and mods == {".pred"}:
            return f"{op}8", 0, (t, t, t)
        return ("mov8", 0, (t, t)) if op == "mov" and mods == {".pred"} else None
    if w not in (32, 64):
        return None
    if op == "mov":
        return (f"mov{w}", 0, (t, t)) if mods == {"." + tn} else None
    integer = t.kind in ("signed", "unsigned", "bits")
    if op in _INT and mods == {"." + tn} and integer:
        if op == "shl":
            return f"shl{w}", 0, (t, t, u32)
        return f"{_INT[op]}{w}", 0, (t, t, t)
    if op == "shr" and mods == {"." + tn} and integer:
        return (f"shrs{w}" if t.is_signed else f"shru{w}"), 0, (t, t, u32)
    if op == "mul" and mods == {".lo", "." + tn} and integer:
        return f"mul{w}", 0, (t, t, t)
    if op == "selp" and mods == {"." + tn}:
        return f"selp{w}", 0, (t, t, t, pred)
    if op == "setp" and integer and len(ins.operands) == 3:
        cmp = dec.get("cmp")
        if cmp is None or mods != {cmp, "." + tn} or cmp[1:] not in _CMP:
            return None
        signed = t.is_signed and cmp[1:] not in ("lo", "ls", "hi", "hs")
        return f"setp{w}", (_CMP[cmp[1:]] << 1) | (_SIGNED if signed else 0), (pred, t, t)
    return None


def _cvt(ins, dec, mods):
    """cvt.rn.{bf16x2,f16x2}.f32 and the integer conversions without ``.sat``."""
    tys = list(dec.types)
    if len(tys) != 2:
        return None
    dt, st = tys
    if mods == {".rn", "." + dt.name, ".f32"} and dt.name in ("bf16x2", "f16x2") and st.name == "f32":
        return "cvt_" + dt.name, 0, (dt, st, st)
    ints = ("signed", "unsigned")
    if mods != {"." + dt.name, "." + st.name} or dt.kind not in ints or st.kind not in ints:
        return None
    if {dt.bits, st.bits} - {32, 64}:
        return None
    if dt.bits == st.bits:
        return f"mov{dt.bits}", 0, (dt, st)
    if dt.bits == 64:
        return ("sext32_64" if st.is_signed else "zext32_64"), 0, (dt, st)
    return "trunc64_32", 0, (dt, st)


def _operand(prog, op, t, scope):
    """("r", key, bytes) for a register exactly ``t``'s width, ("i", bits) for an
    immediate or a variable's address, else None."""
    width = 1 if t.kind == "pred" else t.bits // 8
    if type(op) is Imm:
        v = np.asarray(imm_value(op.text, t))
        if v.dtype.itemsize != width:
            return None
        return ("i", int(v.view({1: np.uint8, 4: np.uint32, 8: np.uint64}[width])))
    if type(op) is Sym:                 # a variable's address (``segments.describe``): its bits
        at = prog.symbol_address(op.name, op.offset, scope)
        if at is None or at[0] in ("label", "func") or t.kind not in ("signed", "unsigned", "bits"):
            return None
        return ("i", at[1] & ((1 << (8 * width)) - 1))
    if type(op) is Reg and not op.neg and not prog.has_reg(op.name, scope) and specials.in_segments(op.name):
        return ("r", op.name, 4) if width == 4 and t.kind != "pred" else None      # (a .u32 array)
    if type(op) is not Reg or op.neg or not prog.has_reg(op.name, scope):
        return None
    info = prog.reg(op.name, scope)
    if (1 if info.bits == 1 else info.bits // 8) != width or (info.bits == 1) != (t.kind == "pred"):
        return None
    return ("r", info.key, width)


class Block:
    """Consecutive batches run as one native call (``run``); ``steps``: the batches, run
    through NumPy instead when the call declines. ``live``: the registers read after the
    block or written back; the block's other results are temporaries, kept in one scratch
    array per thread that lives from launch to launch, up to ``_SCRATCH_MAX`` bytes (a fresh
    array for each would fault in its pages). The kept results of one dtype are the rows of one
    array (``kept``: per dtype, its outputs' keys), which a segment writes back at once
    (``Context.write_blocks``)."""

    __slots__ = ("steps", "code", "imms", "widths", "inputs", "outputs", "dtypes", "temps", "tcount",
                 "kept", "take")

    def __init__(self, steps, members, live):
        self.steps = tuple(steps)
        inputs, in_w, out_w = [], [], {}
        for nat in members:
            for s in nat.srcs:
                if s[0] == "r" and s[1] not in out_w and s[1] not in inputs:
                    inputs.append(s[1])
                    in_w.append(s[2])
            out_w[nat.dst[0]] = nat.dst[1]
        # kept ones first, those of one width (so one dtype) together: ``kept``'s rows in order
        outs = sorted(out_w, key=lambda k: (k not in live, out_w[k]))
        self.inputs, self.outputs = tuple(inputs), tuple(outs)
        self.take = taker(self.inputs)
        self.temps = sum(1 for k in outs if k not in live)
        slot = {k: i for i, k in enumerate(inputs)}
        out_slot = {k: len(inputs) + i for i, k in enumerate(outs)}
        imms, rows = [], []
        for nat in members:
            row = [nat.op, nat.flags, 0, _UNUSED, _UNUSED, _UNUSED]
            for j, s in enumerate(nat.srcs):
                if s[0] == "r":
                    row[3 + j] = slot[s[1]]
                else:
                    imms.append(s[1] & 0xFFFFFFFFFFFFFFFF)
                    row[3 + j] = -len(imms)
            k = nat.dst[0]
            slot[k] = row[2] = out_slot[k]
            rows.append(row)
        self.code = np.array(rows, np.int32).reshape(-1, 6)
        self.imms = np.array(imms, np.uint64)
        self.widths = np.array(in_w + [out_w[k] for k in outs], np.uint8)
        self.dtypes = tuple(np.dtype({1: np.bool_, 4: np.uint32, 8: np.uint64}[out_w[k]])
                            for k in outs)
        tw = [out_w[k] for k in outs[len(outs) - self.temps:]]
        self.tcount = (tw.count(1), tw.count(4), tw.count(8))
        by = {}
        for k, dt in zip(outs[:len(outs) - self.temps], self.dtypes):
            by.setdefault(dt, []).append(k)
        self.kept = tuple((dt, tuple(ks)) for dt, ks in by.items())

    def run(self, vals, n, regs=None, idx=None, rows=None, tiles=None) -> bool:
        """Compute the block's registers into ``vals`` for ``n`` threads; False when the
        native call declines (an ex2 near a rounding boundary, an array it cannot take).
        Its inputs are ``vals``'s, or with ``regs`` (the batch's registers) read there at the
        slots ``idx`` (None: every slot) by the native call itself. ``rows``, a list, receives
        the kept results as ``(keys, (len(keys), n) array)`` per dtype (``kept``) instead of
        ``vals``, whose entries the caller makes of them where it needs them
        (``segments._batched``). ``tiles`` (with ``regs``): some inputs read from a register
        block's tile instead, ``(TileInputs, tile (n / 32 warps, elements a warp) uint32, the
        lanes of those inputs (``TileInputs.j``'s rows of the block's (k, 32) lanes) int64)``:
        thread i's value of the input at ``TileInputs.at[r]`` is ``tile[i // 32, lanes[r, i % 32]]``."""
        tl = None
        if regs is None:
            ins, gathered = self.take(vals), 0
        elif tiles is None:
            ins = self.take(regs)
            gathered = len(ins) if idx is not None else 0
        else:
            ti, tile, lanes = tiles
            ins = [tile] * len(self.inputs)     # (the tiled ones' entries are not read)
            for i, v in zip(ti.other, ti.take(regs)):
                ins[i] = v
            gathered = len(ins) if idx is not None else 0
            tl = (tile, lanes, ti.at)
        blocks = [(ks, np.empty((len(ks), n), dt)) for dt, ks in self.kept]
        try:        # (the kept results: the rows of one array per dtype, ``kept``'s order)
            if not ARITH.run(self.code, self.imms, list(ins), self.widths, n, idx, gathered,
                             _scratch(self.temp_bytes(n)) if self.temps else None, [b for _, b in blocks], tl):
                return False
        except (TypeError, ValueError):
            return False
        if rows is not None:
            rows.extend(blocks)
            return True
        for ks, b in blocks:
            vals.update(zip(ks, b))
        return True

    def tiled(self, keys):
        """The ``TileInputs`` of this block's inputs ``keys`` (``(j, key)`` pairs: the key's
        register j of a register block) read from the block's tile (``run``'s ``tiles``)."""
        pos = {k: i for i, k in enumerate(self.inputs)}
        pairs = [(pos[k], j) for j, k in keys]
        tiled = {i for i, _ in pairs}
        other = tuple(i for i in range(len(self.inputs)) if i not in tiled)
        return TileInputs(np.array([i for i, _ in pairs], np.int64), np.array([j for _, j in pairs], np.int64),
                          other, taker(tuple(self.inputs[i] for i in other)))

    def temp_bytes(self, n) -> int:
        """The scratch bytes of the temporaries for ``n`` threads (each at an 8-byte boundary,
        as the native call carves them)."""
        c1, c4, c8 = self.tcount
        return c1 * ((n + 7) & ~7) + c4 * ((4 * n + 7) & ~7) + c8 * 8 * n


class TileInputs:
    """Inputs of a ``Block`` read from a register block's tile (``Block.tiled``): ``at``, their
    positions among the block's inputs (int64); ``j``, each one's register of the register
    block (int64: its row of the block's lanes); ``other``, the positions of the other inputs,
    and ``take``, their values out of the registers' dict (``taker``)."""

    __slots__ = ("at", "j", "other", "take")

    def __init__(self, at, j, other, take):
        self.at, self.j, self.other, self.take = at, j, other, take


def taker(keys):
    """A function of a dict giving the tuple of its values at ``keys`` (``itemgetter``'s C
    loop: a third of a list comprehension's cost over a segment's hundred inputs)."""
    if len(keys) == 1:
        k = keys[0]
        return lambda d: (d[k],)
    return itemgetter(*keys) if keys else (lambda d: ())


def _scratch(need):
    """A uint8 array of at least ``need`` bytes for the temporaries: the thread's kept one,
    grown as needed up to ``_SCRATCH_MAX`` (above it, one for the call)."""
    buf = getattr(_SCRATCH, "buf", None)
    if need > _SCRATCH_MAX:                 # not kept: a launch this large pays its faults
        return np.empty(need, np.uint8)
    if buf is None or buf.size < need:
        buf = _SCRATCH.buf = np.empty(max(need, 1 << 20), np.uint8)
    return buf


def blocks(code, steps, finals):
    """``steps`` with every run of consecutive all-native batches replaced by its ``Block``;
    None when no batch is native. ``finals``: the registers the segment writes back."""
    later = [set(finals)]             # later[i]: read after step i (from the end) or written back
    for st in reversed(steps[1:]):
        later.append(later[-1] | {k for ks in st.srcs for k in ks})
    later.reverse()
    out, cur = [], []
    for i, st in enumerate(steps):
        nats = [code[pc].nat for pc in st.pcs]
        if None not in nats:
            cur.append((st, nats))
        elif cur:
            out.append(_block(cur, later[i - 1]))
            cur = []
        if None in nats:
            out.append(st)
    if cur:
        out.append(_block(cur, later[-1]))
    return tuple(out) if any(type(b) is Block for b in out) else None


def _block(cur, live):
    return Block([s for s, _ in cur], [x for _, ns in cur for x in ns], live)
