"""Warp-level matrix instructions: mma.sync, ldmatrix, stmatrix, movmatrix.

Fragments follow the PTX ISA's layouts (``groupID = laneid >> 2``, ``threadID_in_group =
laneid % 4``). Every warp of the executing group is handled in one batched NumPy matmul:
fragments are scattered into (warps, M, K) / (warps, K, N) matrices, multiplied in float64
(int64 for integer types; products of f16/bf16/tf32/fp8 values are exact there) and the result
is rounded once to the accumulator type.

Fragments stay matrices between instructions (``_frags``): an A or B matrix made from registers,
and the D tile an ``mma.sync`` writes, are kept with the register arrays they correspond to, and
a later ``mma.sync`` whose operand registers still hold those very arrays uses the matrix
without regathering (registers are written by replacing their array, never in place). The
registers are always written and always read (the sanitizer sees every access), so ordinary
instructions in between, the epilogue included, see and change ordinary registers. ``ldmatrix``
of whole warps hands each matrix's rows to the registers as they are (lane ``l``'s register is
row ``l / 4``, columns ``2 (l % 4)``, ``+1``: the matrix in row-major order).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...errors import InterpreterError
from ...ir.nodes import Reg
from ...isa.fragments import ldmatrix_fragment, ldmatrix_row_lane, mma_fragment, mnk, stmatrix_fragment
from ...types import b32, b64
from ..state import fp
from ..machine.cluster import shared_banks
from ..machine.registry import register
from ..sanitizer.async_proxy import on_generic_load, on_generic_store
from .load_store import address_getter, space_of
from ..state.operands import items, reader, writer


_INPUTS = {"f16": np.float16, "bf16": fp.BF16.dtype, "s8": np.int8, "u8": np.uint8,
           "e4m3": fp.E4M3.dtype, "e5m2": fp.E5M2.dtype, "tf32": np.uint32, "f64": np.float64}


@lru_cache(maxsize=None)
def _frag_maps(shape, atype, bits):
    """(M, N, K, A map, B map, C map) from the ISA's fragment layouts; a map is (rows[32, n],
    cols[32, n])."""
    if atype not in _INPUTS:
        raise InterpreterError(f"mma shape .{shape} with .{atype} inputs is not supported by the interpreter")
    try:
        maps = [np.array(mma_fragment(shape, w, bits), np.int64) for w in ("a", "b", "c")]
    except ValueError:
        raise InterpreterError(f"mma shape .{shape} with .{atype} inputs is not supported by the "
                               f"interpreter") from None
    M, N, K = mnk(shape)
    return (M, N, K) + tuple((m[:, :, 0], m[:, :, 1]) for m in maps)


def _elements(regs, nelem, t):
    """Registers (list of (n,) arrays) -> (n, nelem) float64/int64 element values."""
    bits = t.bits
    if bits == 64:
        return np.stack([np.asarray(r).view(np.float64) for r in regs], axis=1)
    per = 32 // bits
    u = np.stack([np.asarray(r).astype(np.uint32) for r in regs], axis=1)      # (n, nregs)
    shifts = (np.arange(per) * bits).astype(np.uint32)
    e = (u[:, :, None] >> shifts) & np.uint32((1 << bits) - 1)               # (n, nregs, per)
    e = e.reshape(u.shape[0], -1)[:, :nelem]
    name = t.name
    if name in ("s8", "u8"):
        v = e.astype(np.int64)
        if name == "s8":
            v = np.where(v >= 128, v - 256, v)
        return v
    if name == "tf32":
        return (e & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    return fp.decode(e.astype(np.uint16 if bits == 16 else np.uint8), fp.FORMATS[name])


@register("mma.sync")
def _mma(prog, d, ins, scope, dec):
    """Decode the types and operands once (``_MmaSync``); each execution is its ``issue``."""
    op = _MmaSync(prog, ins, scope, dec)
    d.sync = "aligned"
    d.fn = op.issue


class _MmaSync:
    """One decoded ``mma.sync``: its shape and types, fragment maps, register readers / writers
    and fragment cache keys, and the two ways to execute it (``fast``: groups of whole warps,
    fragments <-> matrices as fixed permutations; ``general``: any group)."""

    __slots__ = ("shape", "dt_", "at", "bt", "ct", "satf", "M", "N", "K", "ar", "ac", "br", "bc", "cr", "cc",
                 "ga", "gb", "gc", "pd", "acc_packed", "a_keys", "b_keys", "c_keys", "d_keys", "a_t", "b_t",
                 "c_t", "d_t", "integer", "gA", "gB", "gC", "sD", "edt", "cdt_fast", "rdt", "ebits")

    def __init__(self, prog, ins, scope, dec):
        self._types(dec)
        self._operands(prog, ins, scope)
        self._fast_maps()

    def _types(self, dec):
        """Shape, .dtype.atype.btype.ctype, layouts (.row.col only), .satfinite, fragment maps."""
        shape = self.shape = dec.get("shape")[1:]
        tys = list(dec.types)
        if len(tys) == 4:
            dt_, at, bt, ct = tys
        elif len(tys) == 2:        # mma.sync...f64.f64 style shorthand is not used; keep explicit
            dt_, at, bt, ct = tys[0], tys[1], tys[1], tys[0]
        else:
            raise InterpreterError("mma needs .dtype.atype.btype.ctype")
        self.dt_, self.at, self.bt, self.ct = dt_, at, bt, ct
        if dec.get("alayout") != ".row" or dec.get("blayout") != ".col":
            raise InterpreterError("mma layouts other than .row.col are not supported")
        self.satf = dec.has(".satfinite")
        self.M, self.N, self.K, (self.ar, self.ac), (self.br, self.bc), (self.cr, self.cc) = \
            _frag_maps(shape, at.name, at.bits)
        self.integer = at.name in ("s8", "u8")

    def _operands(self, prog, ins, scope):
        """Readers of A, B, C and writers of D (packed .f16 pairs in .b32 registers), their
        register keys and fragment cache keys (``_frags``)."""
        shape, at, bt, ct, dt_ = self.shape, self.at, self.bt, self.ct, self.dt_
        dops, aops, bops, cops = (items(o) for o in ins.operands[:4])
        rt_a = b64 if at.bits == 64 else b32
        self.ga = [reader(prog, o, rt_a, scope) for o in aops]
        self.gb = [reader(prog, o, rt_a, scope) for o in bops]
        self.acc_packed = ct.name == "f16"
        ct_reg = b32 if self.acc_packed else ct
        self.gc = [reader(prog, o, ct_reg, scope) for o in cops]
        dt_reg = b32 if dt_.name == "f16" else dt_
        self.pd = [writer(prog, o, dt_reg, scope) for o in dops]
        a_keys, b_keys, c_keys, d_keys = (_keys(prog, ops, scope) for ops in (aops, bops, cops, dops))
        self.a_keys, self.b_keys, self.c_keys, self.d_keys = a_keys, b_keys, c_keys, d_keys
        # fragment cache keys (``_frags``): the role, the shape and type, the registers
        self.a_t, self.b_t = (("a", shape, at.name, a_keys), ("b", shape, bt.name, b_keys))
        self.c_t = ("c", shape, ct.name, c_keys)
        self.d_t = ("c", shape, dt_.name, d_keys) if d_keys is not None and dt_.name == ct.name else None

    def _fast_maps(self):
        """The fast path's permutations (fragment elements in lane order <-> row-major matrices)
        and element / register dtypes."""
        at, N, K = self.at, self.N, self.K
        self.gA = _gather(self.ar, self.ac, K)
        self.gB = _gather(self.br, self.bc, N)
        self.gC = _gather(self.cr, self.cc, N)
        self.sD = (self.cr * N + self.cc).reshape(-1)
        self.edt = _INPUTS.get(at.name)
        self.cdt_fast = {"f32": np.float32, "s32": np.int32, "f64": np.float64}.get(self.ct.name)
        self.rdt = np.uint64 if at.bits == 64 else np.uint32
        self.ebits = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}.get(at.bits)

    def issue(self, ctx, g):
        """Execute for the warps of ``g``: the fast path when ``g`` is whole warps, lanes in order."""
        if ctx.stats is not None:       # 2*M*N*K FLOPs per warp (stats.py)
            ctx.stats.add_flops("mma.sync", self.at.name, 2 * self.M * self.N * self.K * len(g.warp_masks()[0]))
        if self.cdt_fast is not None and self.edt is not None and g.n % 32 == 0:
            W = g.n // 32
            if g.full or (g.idx[::32] % 32 == 0).all() and \
                    (g.idx.reshape(W, 32) - g.idx[::32, None] == np.arange(32)).all():
                return self.fast(ctx, g, W)
        return self.general(ctx, g)

    def values(self, bits):
        """Element bits -> their exact values (float64, int64 for the integer types)."""
        name = self.at.name
        if name == "tf32":
            return (bits & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
        if name == "bf16":          # bf16 bits are the high half of an f32
            return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        return bits.view(self.edt).astype(np.int64 if self.integer else np.float64)

    def operand(self, ctx, g, W, fs, keys, key_t, rdt_, build):
        """An operand matrix: ``build`` of its registers, or, on a full group whose registers
        are the very arrays an earlier mma.sync made it from (``_frags``), that matrix again.
        The registers are read either way (the sanitizer's checks)."""
        vals = [f(ctx, g) for f in fs]
        cache = _frags(ctx) if g.full and keys is not None else None
        if cache is not None:
            hit = cache.get(key_t)
            now = [ctx.regs.get(k) for k in keys]
            if hit is not None and all(a is b for a, b in zip(hit[0], now)):
                return hit[1]
            m = build(_columns(vals, rdt_, g.n))
            cache[key_t] = (now, m)
            return m
        return build(_columns(vals, rdt_, g.n))

    def fast(self, ctx, g, W):
        """Whole warps: registers -> element bits in lane order, permuted into row-major matrices
        per warp; one matmul; D permuted back into registers (and kept as the next C)."""
        M, N, K, ebits, values, integer = self.M, self.N, self.K, self.ebits, self.values, self.integer
        gA, gB, gC = self.gA, self.gB, self.gC
        Am = self.operand(ctx, g, W, self.ga, self.a_keys, self.a_t, self.rdt,
                          lambda r: values(np.take(r.view(ebits).reshape(W, -1), gA, axis=1)).reshape(W, M, K))
        Bm = self.operand(ctx, g, W, self.gb, self.b_keys, self.b_t, self.rdt,
                          lambda r: values(np.take(r.view(ebits).reshape(W, -1), gB, axis=1)).reshape(W, K, N))
        Cm = self.operand(ctx, g, W, self.gc, self.c_keys, self.c_t, self.cdt_fast,
                          lambda r: np.take(r.reshape(W, -1), gC, axis=1).reshape(W, M, N))
        out = (np.matmul(Am, Bm) + Cm.astype(np.int64 if integer else np.float64)).reshape(W, M * N)
        if integer:
            if self.satf:
                out = np.clip(out, -2 ** 31, 2 ** 31 - 1)
            res = (out & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        else:
            res = out.astype(self.cdt_fast)
        regs = np.take(res, self.sD, axis=1).reshape(g.n, -1)
        for i, p in enumerate(self.pd):
            p(ctx, g, np.ascontiguousarray(regs[:, i]))
        if g.full and self.d_t is not None:              # D is the next mma's C: keep the tile
            _frags(ctx)[self.d_t] = ([ctx.regs.get(k) for k in self.d_keys], res.reshape(W, M, N))

    def general(self, ctx, g):
        """Any group: each thread's fragment elements scattered into its warp's matrices, one
        matmul, D gathered back per thread (``write_general``)."""
        M, N, K, integer = self.M, self.N, self.K, self.integer
        ar, ac, br, bc, cr, cc = self.ar, self.ac, self.br, self.bc, self.cr, self.cc
        uw, _ = g.warp_masks()
        inv = g._wl
        W = len(uw)
        lane = (g.idx & 31)
        ea = _elements([f(ctx, g) for f in self.ga], ar.shape[1], self.at)
        eb = _elements([f(ctx, g) for f in self.gb], br.shape[1], self.bt)
        if self.acc_packed:
            craw = np.stack([np.asarray(f(ctx, g)).astype(np.uint32) for f in self.gc], axis=1)
            ec = np.stack([craw & 0xFFFF, craw >> 16], axis=2).reshape(g.n, -1).astype(np.uint16)
            ec = fp.decode(ec, fp.F16)
        else:
            ec = np.stack([np.asarray(f(ctx, g)) for f in self.gc], axis=1).astype(np.int64 if integer else np.float64)
        dtp = np.int64 if integer else np.float64
        Am = np.zeros((W, M, K), dtp)
        Bm = np.zeros((W, K, N), dtp)
        Cm = np.zeros((W, M, N), dtp)
        Am[inv[:, None], ar[lane], ac[lane]] = ea
        Bm[inv[:, None], br[lane], bc[lane]] = eb
        Cm[inv[:, None], cr[lane], cc[lane]] = ec
        Dm = np.matmul(Am, Bm) + Cm
        self.write_general(ctx, g, Dm[inv[:, None], cr[lane], cc[lane]])                    # (n, nc)

    def write_general(self, ctx, g, out):
        """Write each thread's D elements ``out`` (n, nc), rounded to the D type, to its registers."""
        pd, satf = self.pd, self.satf
        if self.integer:
            if satf:
                out = np.clip(out, -2 ** 31, 2 ** 31 - 1)
            res = (out & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
            for i, p in enumerate(pd):
                p(ctx, g, np.ascontiguousarray(res[:, i]))
            return
        if self.dt_.name == "f32":
            res = out.astype(np.float32)
            for i, p in enumerate(pd):
                p(ctx, g, np.ascontiguousarray(res[:, i]))
        elif self.dt_.name == "f64":
            for i, p in enumerate(pd):
                p(ctx, g, np.ascontiguousarray(out[:, i]))
        else:   # f16 accumulators, two per register
            h = fp.encode(fp.round_to(out, fp.F16, "rn", sat=satf), fp.F16).astype(np.uint32)
            for i, p in enumerate(pd):
                p(ctx, g, np.ascontiguousarray(h[:, 2 * i] | (h[:, 2 * i + 1] << 16)))


def _columns(vals, dt, n):
    """Per-thread register values (a list of (n,) arrays) -> (n, len(vals)) of type ``dt``."""
    out = np.empty((n, len(vals)), dt)
    for i, v in enumerate(vals):
        out[:, i] = v
    return out


def _keys(prog, ops, scope):
    """The register keys of a fragment's operands (a tuple), or None when one is not a plain
    register."""
    out = []
    for o in ops:
        if not isinstance(o, Reg) or o.neg or not prog.has_reg(o.name, scope):
            return None
        out.append(prog.reg(o.name, scope).key)
    return tuple(out)


def _frags(ctx) -> dict:
    """The batch's fragment matrices: (role, shape, type, register keys) -> (the register arrays
    it was made from, the matrix). ``Context.write`` replaces a register's array whenever it is
    written (never in place), so a matrix is current exactly while every array is the one the
    register holds: fragments stay matrices from one mma.sync to the next (an A or B loaded
    once and used by several, an accumulator chained through a loop)."""
    f = ctx.mma_frags
    if f is None:
        f = ctx.mma_frags = {}
    return f


def _gather(rows, cols, ncols):
    """Index that reorders lane-major fragment elements into a row-major matrix."""
    pos = (rows * ncols + cols).reshape(-1)
    g = np.empty(len(pos), np.int64)
    g[pos] = np.arange(len(pos))
    return g


# ----------------------------------------------------------------------------- ldmatrix / stmatrix
# the ISA's .m8n8 b16 fragment: lane -> row, column of its low and high half
_LDF = np.array(ldmatrix_fragment(), np.int64)                  # [32, 2 halves, (row, col)]
_LD_ROW, _LD_C0, _LD_C1 = _LDF[:, 0, 0], _LDF[:, 0, 1], _LDF[:, 1, 1]
_ROW_LANES = np.array([[ldmatrix_row_lane(i, r) for r in range(8)] for i in range(4)])
_LANES = np.arange(32)
assert (_LD_ROW == _LANES // 4).all() and (_LD_C0 == 2 * (_LANES % 4)).all() and (_LD_C1 == _LD_C0 + 1).all()


assert all(_ROW_LANES[i, r] == 8 * i + r for i in range(4) for r in range(8))   # (``_row_layout``)


class _Layout:
    """What ldmatrix derives from its group alone (``_row_layout``): the warps, each thread's
    warp position and lane, whether the group is whole warps with lanes in order (then lane
    8 i + r gives row r of matrix i: the row addresses are the first ``8 nm`` lanes' addresses
    of each warp), the group of the rows' threads, their CTAs and (race-checked) warps."""
    __slots__ = ("g", "uw", "inv", "lane", "inorder", "fake", "banks", "warps")


def _row_layout(ctx, g, nm):
    """``_Layout`` of ``g`` for ``.x{nm}``, made once per group (the group of a k-loop runs
    every ldmatrix of it; a group's threads never change)."""
    cache = ctx.ldm_layouts
    lay = cache.get((id(g), nm))
    if lay is not None and lay.g is g:
        return lay
    from ..machine.group import Group
    if len(cache) >= 64:
        cache.clear()
    lay = cache[(id(g), nm)] = _Layout()
    uw, _ = g.warp_masks()
    lay.g, lay.uw, lay.inv, lay.lane = g, uw, g._wl, g.idx & 31
    W = len(uw)
    lay.inorder = g.n == 32 * W and bool((lay.lane.reshape(W, 32) == _LANES).all()) and \
        bool((g.idx[::32] == uw * 32).all())
    lay.fake = Group(np.repeat(uw * 32, nm * 8), 0, ctx.N)
    lay.banks = ctx.slot_cta[lay.fake.idx]
    lay.warps = ctx.warp_in_cta[lay.fake.idx] if ctx.shared.race is not None else None
    return lay


def _row_addresses(ctx, g, addrs, nm):
    """(W, nm, 8) row addresses: lane 8*i + r of each warp gives row r of matrix i."""
    uw, _ = g.warp_masks()
    inv = g._wl
    lane = (g.idx & 31)
    full = np.zeros((len(uw), 32), np.uint64)
    have = np.zeros((len(uw), 32), bool)
    full[inv, lane] = addrs
    have[inv, lane] = True
    lanes = _ROW_LANES[:nm]
    if not have[:, lanes].all():
        raise InterpreterError("ldmatrix/stmatrix: a lane that provides a row address is not active")
    return full[:, lanes], uw, inv, lane


def _row_lanes(uw, nm, ctx):
    """The group of the threads that gave the row addresses, in row order (W, nm, 8): an
    access check names the lane whose row address it reports."""
    from ..machine.group import Group
    return Group((uw[:, None] * 32 + _ROW_LANES[:nm].reshape(-1)).reshape(-1), 0, ctx.N)


@register("ldmatrix.sync")
def _ldmatrix(prog, d, ins, scope, dec):
    d.noun = "ldmatrix load"
    if dec.get("shape") != ".m8n8" or dec.get("type") != ".b16":
        raise InterpreterError("only ldmatrix .m8n8 .b16 is supported")
    nm = int(dec.get("num", ".x1")[2:])
    trans = dec.has(".trans")
    puts = [writer(prog, o, b32, scope) for o in items(ins.operands[0])]
    getaddr, _ = address_getter(prog, ins.operands[1], scope)
    space = space_of(dec)[0]
    d.sync = "aligned"

    def ldmatrix(ctx, g):
        addrs = getaddr(ctx, g)
        lay = _row_layout(ctx, g, nm)
        uw, inv, lane = lay.uw, lay.inv, lay.lane
        W = len(uw)
        # load 8 rows x 8 b16 of every matrix: per warp and matrix
        if lay.inorder:                     # every lane active: rows are lanes 0 .. 8 nm - 1
            a = addrs if nm == 4 else addrs.reshape(W, 32)[:, :8 * nm].reshape(-1)
        else:
            a = _row_addresses(ctx, g, addrs, nm)[0].reshape(-1)
        if space == "generic":
            from ..state import memory as Mm
            a = a - np.uint64(Mm.SHARED_WINDOW)
        banks, offs = shared_banks(ctx, lay.fake, a, lay.banks)
        span = None
        if ctx.sanitize:                    # the bounds once, for every check
            offs = np.asarray(offs, np.uint64)
            span = ctx.shared.check_span(offs, 16)
        if ctx.async_proxy is not None:     # a cp.async destination still in flight is reported
            on_generic_load(ctx, lambda: _row_lanes(uw, nm, ctx), banks, offs, 16, span)
        vals = ctx.shared.load(banks, offs, np.uint16, 8, check_init=ctx.sanitize, warps=lay.warps,
                               span=span)                       # (W*nm*8, 8)
        mats = vals.reshape(W, nm, 8, 8)
        if trans:
            mats = mats.transpose(0, 1, 3, 2)
        if lay.inorder:
            # whole warps, lanes in order: lane l's register i is row l // 4, columns
            # 2 (l % 4) and 2 (l % 4) + 1 of matrix i, i.e. matrix i's 64 halves in row-major
            # order read as 32 words
            regs = np.ascontiguousarray(mats.transpose(1, 0, 2, 3)).view(np.uint32).reshape(nm, g.n)
            for i, p in enumerate(puts):
                p(ctx, g, regs[i])
            return
        r, c0, c1 = _LD_ROW[lane], _LD_C0[lane], _LD_C1[lane]
        for i, p in enumerate(puts):
            m = mats[inv, i]                                     # (n, 8, 8)
            lo = m[np.arange(g.n), r, c0].astype(np.uint32)
            hi = m[np.arange(g.n), r, c1].astype(np.uint32)
            p(ctx, g, lo | (hi << 16))
    d.fn = ldmatrix


@register("stmatrix.sync")
def _stmatrix(prog, d, ins, scope, dec):
    """stmatrix.sync.aligned.shape.num{.trans}{.ss}.type [p], r: .m8n8 .b16 (row-major or
    .trans) and .m16n8 .b8 (.trans: column-major), fragments from ``isa.fragments``."""
    d.noun = "stmatrix store"
    nm = int(dec.get("num", ".x1")[2:])
    trans = dec.has(".trans")
    shape = dec.get("shape")
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    gets = [reader(prog, o, b32, scope) for o in items(ins.operands[1])]
    if len(gets) != nm:
        raise InterpreterError(f"stmatrix .x{nm} takes {nm} source registers, got {len(gets)}")
    space = space_of(dec)[0]
    d.sync = "aligned"
    if shape == ".m16n8":
        fr = np.array(stmatrix_fragment("m16n8"), np.int64)          # [32, 4, (row, col)]
        rows_of, cols_of = fr[:, :, 0], fr[:, :, 1]

        def store16(ctx, g):
            addrs = getaddr(ctx, g)
            rows, uw, inv, lane = _row_addresses(ctx, g, addrs, nm)
            mats = np.zeros((len(uw), nm, 16, 8), np.uint8)
            r, c = rows_of[lane], cols_of[lane]                       # (n, 4)
            for i, f in enumerate(gets):
                v = np.asarray(f(ctx, g)).astype(np.uint32)
                for e in range(4):
                    mats[inv, i, r[:, e], c[:, e]] = ((v >> np.uint32(8 * e)) & np.uint32(0xFF)).astype(np.uint8)
            # .trans: row address c of each matrix receives column c (16 bytes)
            _store_rows(ctx, uw, rows, space, np.ascontiguousarray(mats.transpose(0, 1, 3, 2).reshape(-1, 16)))
        d.fn = store16
        return

    def stmatrix(ctx, g):
        addrs = getaddr(ctx, g)
        rows, uw, inv, lane = _row_addresses(ctx, g, addrs, nm)
        W = len(uw)
        mats = np.zeros((W, nm, 8, 8), np.uint16)
        r, c0, c1 = _LD_ROW[lane], _LD_C0[lane], _LD_C1[lane]
        for i, f in enumerate(gets):
            v = np.asarray(f(ctx, g)).astype(np.uint32)
            mats[inv, i, r, c0] = (v & 0xFFFF).astype(np.uint16)
            mats[inv, i, r, c1] = (v >> 16).astype(np.uint16)
        if trans:
            mats = mats.transpose(0, 1, 3, 2)
        _store_rows(ctx, uw, rows, space, np.ascontiguousarray(mats.reshape(-1, 8)))
    d.fn = stmatrix


def _store_rows(ctx, uw, rows, space, vals):
    """Store one row of ``vals`` (W * nm * 8 rows) at each row address of ``rows``."""
    from ..machine.group import Group
    a = rows.reshape(-1)
    if space == "generic":
        from ..state import memory as Mm
        a = a - np.uint64(Mm.SHARED_WINDOW)
    fake = Group(np.repeat(uw * 32, len(a) // len(uw)), 0, ctx.N)
    banks, offs = shared_banks(ctx, fake, a)
    if ctx.async_proxy is not None:         # bytes a cp.async still writes / a bulk copy reads
        on_generic_store(ctx, _row_lanes(uw, len(a) // len(uw) // 8, ctx), banks, offs,
                         vals.dtype.itemsize * vals.shape[1])
    warps = ctx.warp_in_cta[fake.idx] if ctx.shared.race is not None else None
    ctx.shared.store(banks, offs, vals, warps=warps)


@register("movmatrix.sync")
def _movmatrix(prog, d, ins, scope, dec):
    put = writer(prog, ins.operands[0], b32, scope)
    get = reader(prog, ins.operands[1], b32, scope)
    d.sync = "aligned"

    def movmatrix(ctx, g):
        uw, _ = g.warp_masks()
        inv = g._wl
        lane = g.idx & 31
        v = np.asarray(get(ctx, g)).astype(np.uint32)
        m = np.zeros((len(uw), 8, 8), np.uint16)
        r, c0, c1 = _LD_ROW[lane], _LD_C0[lane], _LD_C1[lane]
        m[inv, r, c0] = v & 0xFFFF
        m[inv, r, c1] = v >> 16
        m = m.transpose(0, 2, 1)
        put(ctx, g, m[inv, r, c0].astype(np.uint32) | (m[inv, r, c1].astype(np.uint32) << 16))
    d.fn = movmatrix
