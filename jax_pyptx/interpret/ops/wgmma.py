"""Hopper warpgroup MMA: ``wgmma.mma_async`` and ``wgmma.mma_async.sp`` (sparse A, expanded
with its metadata as ``ops.mma_sparse`` does) (every shape and type of the ISA table; A from a
shared-memory descriptor or from registers, B from a descriptor; K-major and MN-major
operands, every swizzle mode; scale-d, imm-scale-a/b, imm-trans-a/b), ``wgmma.commit_group``
and ``wgmma.wait_group`` with the ISA's asynchrony.

Each ``mma_async`` is executed for every warpgroup of the executing group at once: A and B are
gathered from shared memory (``smem_matrix``) or from the A fragment registers, multiplied in
float64 (int64 for the integer and .b1 types; the products of the input types are exact there)
in one batched matmul, and rounded once to the accumulator type. The result is *pending*: the
accumulator registers keep their old values until the ``wgmma.wait_group`` that retires the
instruction's group (``asyncregs``); a later ``mma_async`` on the same accumulator chains on
the pending value, as the hardware does; the pending accumulator is kept as its 64 x N tile
(``asyncregs`` tile blocks, ``_d_layout``), so a chain of ``mma_async`` never spreads it into
registers, which get their values from the tile when the wait_group retires it. With the sanitizer on, any other instruction that
touches an accumulator (or writes an A register) of an in-flight ``mma_async`` is reported, and
so is an ``mma_async`` reading a register an ordinary instruction wrote since the warpgroup's
last ``wgmma.fence``, or run with no ``wgmma.fence`` before it (``wgfence``).

Precision: products are exact and the sum is accumulated in float64, then rounded to .f32 /
.f16 (the ISA allows any order and at least single / half precision; the hardware's .e4m3 /
.e5m2 accumulation into .f32 is documented to be below single precision, so results agree
with it to that tolerance); .tf32 inputs drop their low 13 bits; integer accumulation wraps,
or saturates with ``.satfinite``.
"""
from __future__ import annotations

import sys

import numpy as np

from ...errors import InterpreterError
from ...ir.nodes import Imm, Reg, Vec
from ...isa.fragments import mnk, wgmma_a_fragment, wgmma_d_fragment
from ...types import b32, b64, pred
from ..state import fp
from ..state.arith import ARITH
from . import smem_matrix as SM
from ..sanitizer import wgfence
from ..machine.asyncregs import AsyncWrites, TileLayout, TileRows
from ..machine.group import Group
from ..state.operands import items, parse_int, reader
from ..machine.registry import register

WG = 128
_LITTLE = sys.byteorder == "little"
_A_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}


class WgmmaState:
    """Per batch: the pending accumulators and each thread's open commit group."""

    def __init__(self, ctx):
        self.regs = AsyncWrites(ctx, "wgmma.mma_async", "wgmma.wait_group")
        self.open = np.zeros(ctx.N, np.int64)       # tag of the group being built, per slot
        self.deferred = []      # (tags, slots, finish): operations that read their operands late
        #                         (tags: each slot's group, aligned with slots)
        self._wg = None         # (slots, warpgroups, banks, warps) of the last group checked

    def warpgroups(self, ctx, g):
        """``warpgroups(ctx, g)``, remembered for the slot array ``g`` holds (groups keep theirs
        unchanged; the array is kept alive with the answer, so its identity is not reused) and
        with the slots' facts (``Group.facts``: the groups of a role holding them, launch after
        launch, share one answer, read-only)."""
        c = self._wg
        if c is None or c[0] is not g.idx:
            more = g.facts().more
            key = ("warpgroups", ctx.S, ctx.T, ctx.N)
            got = more.get(key)
            if got is None:
                got = warpgroups(ctx, g) + (g.idx[::32] // 32,)
                got[1].flags.writeable = got[2].flags.writeable = False
                more[key] = got
            c = self._wg = (g.idx,) + got
        return c[1], c[2]

    def warps(self, g):
        """The batch warps of ``g`` (whole warpgroups, ``warpgroups`` asked first): one array
        per slot array, so that a pending tile's warps compare by identity."""
        c = self._wg
        return c[3] if c is not None and c[0] is g.idx else g.idx[::32] // 32

    def run_deferred(self, ctx, idx, limits):
        """Complete, in issue order, the late operations that a ``wgmma.wait_group`` of the
        slots ``idx`` retires (``schedule``): those with a slot in ``idx`` whose group tag is at
        most that slot's limit (``limits``, aligned with ``idx``). Slots are compared one by one:
        one operation may have been issued by warpgroups whose groups differ (a merged group of
        CTAs or warpgroups at different iterations), and it completes at the first wait that
        retires it for one of them (later, the others' reads would follow a wait that freed the
        operands)."""
        lim = np.full(ctx.N, -1, np.int64)          # (group tags are >= 0)
        lim[idx] = limits
        keep = []
        for tags, slots, finish in self.deferred:
            if (tags <= lim[slots]).any():
                finish(ctx)
            else:
                keep.append((tags, slots, finish))
        self.deferred = keep


def state(ctx) -> WgmmaState:
    st = ctx.wgmma
    if st is None:
        st = ctx.wgmma = WgmmaState(ctx)
    return st


def _reg_key(prog, op, scope, bits):
    """The register key of an operand that is a ``bits``-bit register read as it is (no
    negation), else None."""
    if type(op) is not Reg or op.neg or not prog.has_reg(op.name, scope):
        return None
    info = prog.reg(op.name, scope)
    return info.key if info.bits == bits else None



def _imm(op, what, allowed):
    if not isinstance(op, Imm):
        raise InterpreterError(f"{what} must be an immediate, got {op}")
    v = parse_int(op.text)
    if v not in allowed:
        raise InterpreterError(f"{what} is {v}; allowed: {', '.join(map(str, allowed))}")
    return v


def warpgroups(ctx, g):
    """(number of warpgroups, their CTA banks) for a group of whole warpgroups."""
    n = g.n
    if n % WG:
        raise InterpreterError(f"a warpgroup instruction needs whole warpgroups of 128 threads; "
                               f"{n} threads execute it")
    first = g.idx[::WG]
    W = n // WG
    if not (g.full and ctx.S % WG == 0):
        tid0 = ctx.tid_lin[first]
        if (tid0 % WG).any() or ((g.idx.reshape(W, WG) - first[:, None]) != np.arange(WG)).any():
            raise InterpreterError("a warpgroup instruction needs whole warpgroups (threads "
                                   "128k..128k+127 of a CTA) executing it together")
    return W, ctx.slot_cta[first]


def uniform(ctx, vals, W, what, g):
    """The per-warpgroup value of an operand that must be uniform over the warpgroup."""
    v = np.asarray(vals).reshape(W, WG)
    if ctx.sanitize and np.count_nonzero(v != v[:, :1]):
        w, t = np.argwhere(v != v[:, :1])[0]
        raise ctx.error(InterpreterError,
                        f"{what} differs between threads of a warpgroup (thread {t} has "
                        f"{v[w, t]:#x}, thread 0 has {v[w, 0]:#x}); it must be the same in every "
                        f"warp", g, int(w * WG + t))
    return v[:, 0]


def _perm(rows, cols, ncols):
    """Flat (row*ncols+col) of each (thread, element)."""
    return (np.asarray(rows, np.int64) * ncols + np.asarray(cols, np.int64)).reshape(-1)


@register("wgmma.mma_async", "wgmma.mma_async.sp")
def _mma_async(prog, d, ins, scope, dec):
    """Decode the modifiers and operands once (``_MmaAsync``); each execution is its ``issue``."""
    op = _MmaAsync(prog, d, ins, scope, dec)
    if op.sp is None:
        d.wgc = op            # a run of them may issue as one (wgmma_chain, scheduler.wgmma_runs)
    d.sync = "warpgroup"
    d.noun = "wgmma shared-memory operand read"
    d.fn = op.issue


class _MmaAsync:
    """One decoded ``wgmma.mma_async``: its shape and types, immediates, operand readers and
    fragment maps, and the steps that execute it (``issue`` -> ``finish``: ``product``, then
    ``write_back``)."""

    __slots__ = ("d", "form", "shape", "name", "M", "N", "K", "Ka", "dt", "at", "bt", "abits", "sat", "sp", "a_regs",
                 "sa", "sb", "ta", "tb", "keys", "keys_t", "keys_fs", "a_keys", "a_keys_t", "a_keys_fs", "get_a",
                 "get_b", "get_scale", "a_inv", "a_lanes", "d_inv", "layout", "plans", "b_key", "a_key", "sd_imm",
                 "sd_key")

    def __init__(self, prog, d, ins, scope, dec):
        self.d = d
        self.plans = {}           # where its shared-memory operands lie, by descriptors (SM.gather)
        ops = self._shape(prog, ins, scope, dec)
        self._immediates(ops, dec)
        self._accumulator(prog, items(ops[0]), scope)
        self.get_b = reader(prog, ops[2], b64, scope)
        self._a_operand(prog, ops[1], scope)
        self.get_scale = reader(prog, ops[3], pred, scope)
        # what a run's issue reads without the readers (wgmma_chain): the descriptors' 64-bit
        # registers (None: another operand), scale-d as an immediate or its predicate register
        # (None: neither, or negated)
        self.b_key = _reg_key(prog, ops[2], scope, 64)
        self.a_key = None if self.a_regs else _reg_key(prog, ops[1], scope, 64)
        self.sd_imm = bool(parse_int(ops[3].text)) if isinstance(ops[3], Imm) else None
        self.sd_key = _reg_key(prog, ops[3], scope, 1)
        if self.at == "b1" and dec.get("op") != ".and":
            raise InterpreterError(f"wgmma .b1 with {dec.get('op')}: the ISA defines .and.popc only")
        N = self.N
        dfrag = wgmma_d_fragment(N)
        d_pos = _perm([[rc[0] for rc in t] for t in dfrag], [[rc[1] for rc in t] for t in dfrag], N)
        self.d_inv = np.empty(self.M * N, np.int64)
        self.d_inv[d_pos] = np.arange(self.M * N)
        self.layout = _d_layout(N, self.dt)
        self.sat = dec.has(".satfinite")
        self.abits = _A_BITS[self.at]
        wgfence.watched(prog).update(self.keys + self.a_keys)

    def _shape(self, prog, ins, scope, dec):
        """Shape and types, the sparse A's expansion (``.sp``); the operands left (d, a, b,
        scale-d, immediates)."""
        self.form = dec.form.name
        shape = self.shape = dec.get("shape")
        self.M, self.N, K = mnk(shape)
        self.K = K
        self.dt, self.at, self.bt = dec.get("dtype")[1:], dec.get("atype")[1:], dec.get("btype")[1:]
        self.name = f"{self.form}{shape}.{self.dt}.{self.at}.{self.bt}"
        ops = list(ins.operands)
        sparse = self.form == "wgmma.mma_async.sp"
        self.sp = None
        if sparse:        # d, a, b, sp-meta, sp-sel, ...: A holds the kept half of its K
            self.sp = _sparse(prog, ins, ops.pop(3), ops.pop(3), scope, K, self.at)
        self.Ka = K // 2 if sparse else K
        return ops

    def _immediates(self, ops, dec):
        """The operand count; imm-scale-a / -b (floating-point types), imm-trans-a / -b (.f16 / .bf16)."""
        at = self.at
        a_regs = self.a_regs = isinstance(ops[1], Vec)
        fp_kind = at in ("f16", "bf16", "tf32", "e4m3", "e5m2")
        trans_ok = at in ("f16", "bf16")
        want = 3 + 1 + (2 if fp_kind else 0) + ((1 if a_regs else 2) if trans_ok else 0)
        if len(ops) != want:
            raise InterpreterError(f"{dec.form.name} {dec.get('shape')}.{self.dt}.{at}.{self.bt} with A from "
                                   f"{'registers' if a_regs else 'a descriptor'} takes {want} operands, "
                                   f"got {len(ops)}")
        i = 4
        self.sa = self.sb = 1
        self.ta = self.tb = 0
        if fp_kind:
            self.sa = _imm(ops[4], "imm-scale-a", (1, -1))
            self.sb = _imm(ops[5], "imm-scale-b", (1, -1))
            i = 6
        if trans_ok:
            if not a_regs:
                self.ta = _imm(ops[i], "imm-trans-a", (0, 1))
                i += 1
            self.tb = _imm(ops[i], "imm-trans-b", (0, 1))

    def _accumulator(self, prog, d_ops, scope):
        """The accumulator's register keys (N / 2 registers, N / 4 for .f16), each once."""
        nregs = self.N // 4 if self.dt == "f16" else self.N // 2
        if len(d_ops) != nregs:
            raise InterpreterError(f"wgmma.mma_async {self.shape}.{self.dt}: the accumulator has {nregs} "
                                   f"registers, got {len(d_ops)}")
        keys = [prog.reg(o.name, scope).key for o in d_ops]
        if len(set(keys)) != len(keys):
            raise InterpreterError("wgmma.mma_async: an accumulator register appears twice")
        self.keys, self.keys_t = keys, tuple(keys)
        self.keys_fs = frozenset(keys)      # (``Context.plain``'s argument: its hash kept)

    def _a_operand(self, prog, op, scope):
        """A's readers: its 4 fragment registers (with the fragment -> row-major map) or its
        shared-memory descriptor."""
        self.a_keys, self.a_keys_t, self.a_keys_fs = [], (), frozenset()
        self.a_inv = self.a_lanes = None
        if not self.a_regs:
            self.get_a = reader(prog, op, b64, scope)
            return
        a_items = items(op)
        if len(a_items) != 4:
            raise InterpreterError(f"wgmma.mma_async: A from registers takes 4 registers, got "
                                   f"{len(a_items)}")
        self.get_a = [reader(prog, o, b32, scope) for o in a_items]
        self.a_keys = [prog.reg(o.name, scope).key for o in a_items]
        self.a_keys_t, self.a_keys_fs = tuple(self.a_keys), frozenset(self.a_keys)
        afrag = wgmma_a_fragment(self.at)
        M, Ka = self.M, self.Ka
        a_pos = _perm([[rc[0] for rc in t] for t in afrag], [[rc[1] for rc in t] for t in afrag], Ka)
        self.a_inv = np.empty(M * Ka, np.int64)
        self.a_inv[a_pos] = np.arange(M * Ka)
        self.a_lanes = _pair_lanes(afrag, Ka) if self.at == "bf16" and ARITH is not None else None

    def issue(self, ctx, g):
        """Execute for the warpgroups of ``g``: check the fences, read the descriptors, A's
        registers and scale-d, then finish now or (late schedule) at the wait_group retiring it."""
        st = state(ctx)
        fs = wgfence.state(ctx)
        W, banks, bdesc, adesc, A, sd, tag = self.operands(ctx, g, st, fs)
        if st.deferred or ctx.schedule.late():
            # late (schedule): shared-memory operands are read at the wait_group that retires
            # it. The accumulators are owned from now on (their hazards are reported as usual),
            # holding what the operation accumulates onto (read and checked now)
            for k_ in self.keys:
                st.regs.set(ctx, k_, g, _accumulated(ctx, st, k_, g, sd, W), tag, self.d)
            st.deferred.append((tag, g.idx,
                                lambda ctx: self.finish(ctx, g, W, banks, bdesc, adesc, A, sd, tag)))
        else:
            self.finish(ctx, g, W, banks, bdesc, adesc, A, sd, tag)
        if fs is not None:           # the accumulator now holds this mma's (chained) value
            fs.clean(g, self.keys)
        if ctx.timeline is not None:        # in flight until the wait_group retiring it
            ctx.timeline.issue(ctx, "wgmma", g, st.open, 4)

    def operands(self, ctx, g, st, fs):
        """What an issue reads, checked (``fs``: the fence state, None unsanitized): (W, the
        CTA banks, B's descriptors, A's (or None), A from registers (or None), scale-d per
        warpgroup, the open group's tag per thread)."""
        if fs is not None:
            fs.check(ctx, g, (), self.a_keys)
        W, banks = st.warpgroups(ctx, g)
        bdesc = [SM.decode_wgmma(v) for v in uniform(ctx, self.get_b(ctx, g), W, "b-desc", g).tolist()]
        A = adesc = None
        if self.a_regs:
            A = self.a_from_regs(ctx, g, W, st)
        else:
            adesc = [SM.decode_wgmma(v) for v in uniform(ctx, self.get_a(ctx, g), W, "a-desc", g).tolist()]
        scale = np.asarray(self.get_scale(ctx, g))
        if scale.ndim == 0:             # an immediate
            sd = np.full(W, bool(scale))
        else:
            sd = uniform(ctx, np.broadcast_to(scale, (g.n,)).astype(np.uint8), W, "scale-d", g).astype(bool)
        tag = st.open[g.idx]
        if fs is not None:
            self.check_read_fence(ctx, g, fs, W, sd)
        return W, banks, bdesc, adesc, A, sd, tag

    def check_read_fence(self, ctx, g, fs, W, sd, reads=None, every=None):
        """The fence check of the accumulator where it is read (scale-d): ordinary writes to it
        need a ``wgmma.fence`` (``wgfence``), on the warpgroups that read it. ``reads`` /
        ``every``: whether any / every warpgroup reads it, where the caller has them (a run's
        members, at once: ``wgmma_chain._issue``)."""
        if reads if reads is not None else np.count_nonzero(sd):
            every = bool(sd.all()) if every is None else every
            fs.check(ctx, g if every else Group(g.idx.reshape(W, WG)[sd].reshape(-1), g.pc, ctx.N),
                     self.keys, ())

    def a_from_regs(self, ctx, g, W, st):
        """A (W, M, Ka) from its fragment registers (read, and checked against in-flight writes)."""
        A = self.a_native(ctx, g, W)
        if A is not None:
            st.regs.reading_all(ctx, self.a_keys_t, g, st.open[g.idx], self.d)
            return A
        abits = self.abits
        raw = np.empty((g.n, 4), np.uint32)
        for j, f in enumerate(self.get_a):
            raw[:, j] = f(ctx, g)
        if self.at == "bf16" and ARITH is not None and _LITTLE:     # permuted and widened in one pass
            row = raw.view(np.uint16).reshape(-1)
            A = np.empty((W, self.M * self.Ka), np.float64)
            ARITH.take_bf16(row, np.arange(W, dtype=np.int64) * (len(row) // W), self.a_inv, A)
            A = A.reshape(W, self.M, self.Ka)
        else:
            if abits in (8, 16) and _LITTLE:        # a register's elements, its low bits first
                el = raw.view(np.uint8 if abits == 8 else np.uint16).reshape(W, -1)     # (W, 128*elems)
            else:
                per = 32 // abits
                sh = (np.arange(per, dtype=np.uint32) * np.uint32(abits))
                el = ((raw[:, :, None] >> sh) & np.uint32((1 << abits) - 1) if abits < 32
                      else raw[:, :, None]).reshape(W, -1)
            A = SM.values(el[:, self.a_inv].reshape(W, self.M, self.Ka), self.at)
        st.regs.reading_all(ctx, self.a_keys_t, g, st.open[g.idx], self.d)
        return A

    def a_native(self, ctx, g, W):
        """A (W, M, Ka) of bf16 fragment registers in two native passes, where reading them is
        only a gather (``Context.plain``): each warp's registers into its 16 rows of A as bf16
        pairs (``regs_to_tile``, ``_pair_lanes``), then widened; else None."""
        lanes = self.a_lanes
        if lanes is None or ARITH is None or not ctx.plain(self.a_keys_fs, g):
            return None
        regs = ctx.regs
        pairs = np.empty((W * 4, 32 * 4), np.uint32)       # a warp's 16 rows x 8 pairs
        try:
            ARITH.regs_to_tile([regs[k] for k in self.a_keys], g.idx, lanes, pairs)
        except (TypeError, ValueError):     # an array it cannot take (not contiguous, say)
            return None
        A = np.empty((W, self.M, self.Ka), np.float64)
        ARITH.bf16_to_f64(pairs.view(np.uint16).reshape(W, self.M, self.Ka), A)
        return A

    def finish(self, ctx, g, W, banks, bdesc, adesc, A, sd, tag):
        """Read the shared-memory operands, multiply, and make the accumulators pending."""
        self.write_back(ctx, g, W, self.product(ctx, g, W, banks, bdesc, adesc, A), sd, tag)

    def product(self, ctx, g, W, banks, bdesc, adesc, A):
        """A x B (W, M, N) of each warpgroup (``matrices``), negated where scale-a * scale-b < 0."""
        A, Bt = self.matrices(ctx, g, W, banks, bdesc, adesc, A)
        prod = np.matmul(A, Bt)                                                  # (W, M, N)
        if ctx.stats is not None:       # 2*M*N*K FLOPs per warpgroup (stats.py)
            ctx.stats.add_flops(self.form, self.at, 2 * self.M * self.N * self.K * W)
        if self.sa * self.sb < 0:
            prod = -prod
        return prod

    def matrices(self, ctx, g, W, banks, bdesc, adesc, A):
        """A (W, M, K) and B transposed (W, K, N) of each warpgroup: B (and A from a descriptor)
        gathered from shared memory, a sparse A expanded."""
        M, N, K, at, abits, name = self.M, self.N, self.K, self.at, self.abits, self.name
        # B transposed, (W, K, N): contiguous where it is gathered so, which the product wants
        Bt = SM.gather(ctx, banks, bdesc, "MN" if self.tb else "K", N, K, abits, f"{name} (matrix B)",
                       ctx.sanitize, g, t=self.bt, plans=self.plans, trans=True)
        if adesc is not None:
            A = SM.gather(ctx, banks, adesc, "MN" if self.ta else "K", M, self.Ka, abits,
                          f"{name} (matrix A)", ctx.sanitize, g, t=at, plans=self.plans)    # (W, M, Ka)
        if self.sp is not None:
            A = self.sp(ctx, g, self.d, W, A)                                    # (W, M, K)
        return A, Bt

    def write_back(self, ctx, g, W, prod, sd, tag):
        """The accumulators (pending until their wait_group) = ``prod`` + C where scale-d is set
        (``prod`` is this instruction's own array: C is added in place)."""
        st = state(ctx)
        warps = st.warps(g)
        self.pend(ctx, st, g, W, warps, self.accumulate(ctx, st, g, W, warps, prod, sd), tag)

    def accumulate(self, ctx, st, g, W, warps, prod, sd):
        """The accumulator tile's bits (W * 4 warps, 16 rows, N) after this operation: ``prod``
        + C where scale-d is set, C the pending tile or the registers (read and checked)."""
        M, N, dt = self.M, self.N, self.dt
        out = prod
        bits = None
        nsd = np.count_nonzero(sd)
        if nsd:
            C = None
            if nsd == len(sd):        # the accumulator chains on a pending tile: no registers involved
                t_ = st.regs.tile_read(self.keys_t, g, warps)
                if t_ is not None:
                    if dt == "f32" and ARITH is not None:   # the add and the rounding: one pass
                        bits = _round_f32(out, t_)
                    elif dt == "f32":       # f32 -> f64 is exact: the add converts as it goes
                        np.add(out, t_.reshape(W, M, N).view(np.float32), out=out)
                    else:
                        out += _tile_values(t_.reshape(W, M, N), dt)
                    C = out
            if C is None:
                tile = self._registers_tile(ctx, st, g, W, sd)
                if tile is not None:        # the add and the rounding: one pass
                    bits = _round_f32(out, tile)
                else:
                    C = self._registers_value(ctx, st, g, W, sd)
                    if sd.all():
                        out += C
                    else:
                        out[sd] += C
        if bits is None:
            bits = _tile_bits(out, dt, self.sat)
        return bits.reshape(W * 4, M // 4, N)

    def pend(self, ctx, st, g, W, warps, bits, tag):
        """Make the accumulators pending with the tile ``bits`` (``accumulate``) for the open
        group ``tag`` (a later group issued since keeps ownership: late)."""
        d = self.d
        same, o = st.regs.owner(self.keys_t)
        if same:
            st.regs.tile_set(ctx, self.keys_t, g, warps, bits, tag if o is None else np.maximum(tag, o[g.idx]), d,
                             self.layout)
            return
        regs_out = self.layout.regs(bits, g.idx % 32, np.repeat(np.arange(W * 4), 32))
        for j, k_ in enumerate(self.keys):
            owner = st.regs.tag.get(k_)
            st.regs.set(ctx, k_, g, regs_out[:, j], tag if owner is None else np.maximum(tag, owner[g.idx]), d)

    def deliver(self, ctx, g, bits):
        """The accumulator tile ``bits`` (``accumulate``) into the registers of ``g`` at once,
        as the ``wgmma.wait_group`` at hand (``ctx.cur``) retires a pending one
        (``AsyncWrites.retire``): a run of ``mma_async`` that this wait follows with nothing
        in flight (``wgmma_chain.run_chain``)."""
        ctx.write_rows(self.keys_t, g, None, TileRows(self.layout, bits))

    def rounds_natively(self) -> bool:
        """Whether the accumulator is added to and rounded in the native core (.f32)."""
        return self.dt == "f32" and ARITH is not None

    def c_tile(self, ctx, st, g, W, warps, sd):
        """``(tile, fresh)``: C's f32 bits as the accumulator's tile (``W * 4`` warps, 16 rows x
        N) where every warpgroup reads it (scale-d) and that is all reading it does: its
        pending tile (``AsyncWrites.tile_read``, not a copy: ``fresh`` False) or its registers'
        (``_registers_tile``, a new array: ``fresh`` True); else None. It checks nothing: where
        reading C would (``_registers_value``), it answers None."""
        if self.dt != "f32" or not sd.all():
            return None
        t = st.regs.tile_read(self.keys_t, g, warps)
        if t is not None:
            return t, False
        t = self._registers_tile(ctx, st, g, W, sd)
        return None if t is None else (t, True)

    def _registers_tile(self, ctx, st, g, W, sd):
        """C's f32 bits as the accumulator's tile (``W * 4`` warps, 16 rows x N) read from its
        registers in one native pass, where that is all reading them does: an .f32
        accumulator of every warpgroup (scale-d), nothing of it pending, its registers plain
        (``Context.plain``), arrays the native call takes. Else None (``_registers_value``)."""
        if self.dt != "f32" or not sd.all():
            return None
        lanes = self.layout.lanes(self.N)
        tags = st.regs.tag
        if lanes is None or (tags and not tags.keys().isdisjoint(self.keys_t)) or not ctx.plain(self.keys_fs, g):
            return None
        tile = np.empty((W * 4, 16 * self.N), np.uint32)
        regs = ctx.regs
        try:
            ARITH.regs_to_tile([regs[k] for k in self.keys], g.idx, lanes, tile)
        except (TypeError, ValueError):     # an array it cannot take (not contiguous, say)
            return None
        return tile

    def _registers_value(self, ctx, st, g, W, sd):
        """C (warpgroups with scale-d set, M, N) from the accumulator registers (their pending
        values where an ``mma_async`` is in flight), read and checked one by one."""
        sub = g if sd.all() else Group(g.idx.reshape(W, WG)[sd].reshape(-1), g.pc, ctx.N)
        cur = _acc_values(np.stack([np.asarray(st.regs.read_now(ctx, k_, sub)) for k_ in self.keys], axis=1),
                          self.dt)
        return cur.reshape(int(sd.sum()), -1)[:, self.d_inv].reshape(-1, self.M, self.N)


def chained(prod, prev, sd):
    """``_MmaAsync.accumulate`` of an .f32 product ``prod`` (W, M, N) onto the pending tile ``prev`` (its
    bits, W * 4 warps of M / 4 rows): added where scale-d is set, then rounded."""
    n = np.count_nonzero(sd)
    if n == len(sd):
        return _round_f32(prod, prev).reshape(prev.shape)
    if n:
        prod[sd] += prev.reshape(prod.shape)[sd].view(np.float32)
    return _round_f32(prod).reshape(prev.shape)


def _pair_lanes(afrag, Ka):
    """(4, 32): where lane l's A register j (two 16-bit elements of one row, the even column
    in its low half) lies in its warp's 16 rows of A as 32-bit pairs (``Ka / 2`` a row); None
    where the fragment is not such pairs of one warp's rows."""
    out = np.empty((4, 32), np.int64)
    for t in range(32):
        for j in range(4):
            (r, c), (r2, c2) = afrag[t][2 * j], afrag[t][2 * j + 1]
            if r2 != r or c2 != c + 1 or c % 2 or not 0 <= r < 16:
                return None
            out[j, t] = r * (Ka // 2) + c // 2
    for w in range(1, 4):               # the other warps: the same lanes, 16 rows on
        for t in range(32):
            if any(afrag[32 * w + t][e] != (afrag[t][e][0] + 16 * w, afrag[t][e][1]) for e in range(8)):
                return None
    return out if len(set(out.reshape(-1).tolist())) == out.size else None


def _accumulated(ctx, st, key, g, sd, W):
    """Accumulator ``key``'s value that a late wgmma of ``g`` accumulates onto (zeros where
    scale-d is false): read (and checked) at issue, as an eager one reads it."""
    if not sd.any():
        return np.zeros(g.n, np.uint32)
    sub = g if sd.all() else Group(g.idx.reshape(W, WG)[sd].reshape(-1), g.pc, ctx.N)
    v = np.asarray(st.regs.read_now(ctx, key, sub))
    if sd.all():
        return v
    out = np.zeros(g.n, v.dtype)
    out[np.repeat(sd, WG)] = v
    return out


def _sparse(prog, ins, meta_op, sel_op, scope, K, at):
    """The expansion of a sparse A: each warp w of the warpgroup gives the metadata of rows
    16w..16w+15 in the layout of ``mma.sp .m16n8kK`` (PTX ISA "Matrix fragments for
    warpgroup-level multiply-accumulate operation with sparse matrix A")."""
    from .mma_sparse import expand

    bits = _A_BITS[at]
    sel = _imm(sel_op, "sp-sel", (0, 1) if bits in (16, 32) else (0,))
    get_meta = reader(prog, meta_op, b32, scope)
    shape = f"m16n8k{K}"

    def sp(ctx, g, d, W, A):
        meta = np.broadcast_to(np.asarray(get_meta(ctx, g)).astype(np.uint32), (g.n,)).reshape(W * 4, 32)
        dense = expand(ctx, g, d, ins.opcode, meta, A.reshape(W * 4, 16, -1), shape, bits, sel,
                       rows_of_warp=lambda w: 16 * (w % 4))
        return dense.reshape(W, 64, K)
    return sp


def _acc_values(r, dt):
    """Register bits/values (n, nregs) -> accumulator element values (n, N/2): a packed .f16
    register holds two elements, its low half first."""
    r = np.asarray(r)
    if dt == "f16":
        u = r.astype(np.uint32)
        return np.stack([fp.decode(u & np.uint32(0xFFFF), fp.F16), fp.decode(u >> np.uint32(16), fp.F16)],
                        axis=-1).reshape(r.shape[0], -1)
    if dt == "s32":
        return r.view(np.int32).astype(np.int64) if r.dtype != np.int32 else r.astype(np.int64)
    return r.view(np.float32).astype(np.float64) if r.dtype != np.float32 else r.astype(np.float64)


def _tile_bits(res, dt, sat):
    """Accumulator element values -> the bits the accumulator tile keeps: .f32 / .s32 as 32-bit
    words, .f16 as 16-bit codes (rounded once, saturating .s32 with ``.satfinite``)."""
    if dt == "s32":
        v = np.asarray(res, np.int64)
        if sat:
            v = np.clip(v, -2 ** 31, 2 ** 31 - 1)
        return (v & 0xFFFFFFFF).astype(np.uint32)
    if dt == "f32":
        return _round_f32(res) if ARITH is not None else res.astype(np.float32).view(np.uint32)
    return fp.encode(fp.round_to(res, fp.F16, "rn"), fp.F16).astype(np.uint16)


def _round_f32(res, addend=None):
    """``_tile_bits`` of the f32 accumulator ``res`` (+ ``addend``, f32 bits) in one native
    pass (``state.arith``): the same bits as NumPy's add and cast."""
    out = np.empty(res.shape, np.uint32)
    ARITH.round_f32(res.reshape(-1), None if addend is None else addend.reshape(-1), out.reshape(-1))
    return out


def _tile_values(bits, dt):
    """The inverse of ``_tile_bits``: float64 (int64 for .s32) element values."""
    if dt == "f16":
        return fp.decode(bits, fp.F16)
    if dt == "s32":
        return bits.view(np.int32).astype(np.int64)
    return bits.view(np.float32).astype(np.float64)


_LAYOUTS: dict = {}


def _d_layout(n, dt):
    """The accumulator of ``.m64nN`` as a tile of 16 rows x N per warp (``asyncregs``): lane l's
    register j holds the element(s) at the rows / columns of ``wgmma_d_fragment`` (warp 0)."""
    lay = _LAYOUTS.get((n, dt))
    if lay is None:
        per = 2 if dt == "f16" else 1
        fr = np.array(wgmma_d_fragment(n), np.int64)[:32]              # (32, N/2, 2)
        row = fr[:, :, 0].reshape(32, -1, per)
        col = fr[:, :, 1].reshape(32, -1, per)
        encode = None                   # .f32 / .s32: a register is one element's bits
        if dt == "f16":
            def encode(x):
                return x[..., 0].astype(np.uint32) | (x[..., 1].astype(np.uint32) << np.uint32(16))
        lay = _LAYOUTS[(n, dt)] = TileLayout(row, col, encode, np.dtype(np.uint32))
    return lay


@register("wgmma.fence")
def _fence(prog, d, ins, scope, dec):
    d.sync = "aligned"

    def fence(ctx, g):
        fs = wgfence.state(ctx)
        if fs is not None:
            fs.fence(g)
    d.fn = fence


@register("wgmma.commit_group")
def _commit(prog, d, ins, scope, dec):
    d.sync = "aligned"

    def commit(ctx, g):
        state(ctx).open[g.idx] += 1
    d.fn = commit


@register("wgmma.wait_group")
def _wait(prog, d, ins, scope, dec):
    n = _imm(ins.operands[0], "wgmma.wait_group N", range(0, 8))
    d.sync = "aligned"

    def wait(ctx, g):
        st = ctx.wgmma
        if st is None:
            return
        if ctx.timeline is not None:
            ctx.timeline.retire(ctx, "wgmma", g, st.open - n, 4)
        if st.deferred:
            st.run_deferred(ctx, g.idx, st.open[g.idx] - 1 - n)
        if not st.regs.busy():
            return
        st.regs.retire(ctx, g.idx, st.open[g.idx] - 1 - n)
    d.fn = wait

