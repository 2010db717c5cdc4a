"""``tcgen05.mma`` (and ``.ws``, block-scaled kinds): D[TMEM] = A * B (+ D), issued by one
thread, executed when issued.

The instruction descriptor (PTX ISA "Instruction descriptor", Tables 42-44) gives M, N, the
types, negation, transposes (MN-major operands), saturation and, for the block-scaled kinds,
the scale-factor type and the byte offsets (IDs) of the scale factors in their TMEM words. A
comes from a shared-memory descriptor or from TMEM (rows in the lanes the data-path layout
gives them, K packed in 32-bit columns), B from a shared-memory descriptor. D sits in TMEM in
the data-path layout of M / cta_group / .ws (``isa.fragments.tcgen05_d_layout``); sub-word D
elements take the low bits of their 32-bit cell.

``.cta_group::2``: the pair is the CTAs of cluster ranks 2k and 2k+1. Each holds half of A's
rows (the even CTA the first half) and half of B's N columns at the same shared-memory
offsets, and receives its rows of D, all N columns, in its own TMEM at the same address.

Block scaling: scale_A is M x SF (one factor per row per block of K / SF elements), scale_B is
SF x N. A factor of row m sits in TMEM lane m (duplicated over the lane quarters), column
``sfa + m // 32``, byte ``A ID + j``; a factor of column n of B in lane n % 32 of its quarter,
column ``sfb + n // 32``, byte ``B ID + j`` (the "2x2" data path of .cta_group::2 M=128 puts
B's columns N/2.. in lanes 64.. at column ``sfb + (n - N/2) // 32``). .ue8m0 factors scale by
2^(e-127), .ue4m3 by their E4M3 value.

Precision as wgmma: exact products, float64 sums, one rounding to the D type.

Threads of distinct CTAs that issue the same operation together (one elected thread per CTA)
have their shared-memory operands gathered at once; each thread's product and its accumulation
into D then run in issue order, as for one thread. D is read and written in TMEM as the few
rectangles its data-path layout is made of (``tmem.rects``).
"""
from __future__ import annotations

import functools

import numpy as np

from ...errors import InterpreterError, PtxError, TensorMemoryError
from ...ir.nodes import Addr, Imm, Vec
from ...isa.descriptors import IDESC_D_TYPE_CODES, IDESC_TYPE_CODES, TCGEN05_IDESC, TCGEN05_IDESC_BLOCK_SCALED, decode
from ...isa.fragments import tcgen05_d_layout
from ...types import b32, b64, pred
from ..state import fp
from . import smem_matrix as SM
from ..state.operands import items, parse_int, reader
from .load_store import address_getter
from .tcgen05 import _pair, defer_late
from ..machine.registry import register
from ..state.tmem import read_rects, read_rects_of, rects, rects_ok, split, tmem, write_rects, write_rects_of

_TYPES = IDESC_TYPE_CODES
_D_TYPES = IDESC_D_TYPE_CODES


class IDesc:
    __slots__ = ("m", "n", "k", "dtype", "atype", "btype", "neg_a", "neg_b", "ta", "tb", "sat",
                 "sfa_id", "sfb_id", "ue8m0", "sparse", "raw")


_IDESCS: dict = {}


def decode_idesc(v: int, kind: str, ws: bool, cta_group: int) -> IDesc:
    """The fields of a 32-bit instruction descriptor for ``kind`` (PTX ISA Tables 42-44); an
    ``IDesc`` is never changed, so each valid one is decoded once."""
    key = (int(v) & 0xFFFFFFFF, kind, ws, cta_group)
    d = _IDESCS.get(key)
    if d is None:
        if len(_IDESCS) > 4096:
            _IDESCS.clear()
        d = _IDESCS[key] = _decode_idesc(*key)
    return d


def _decode_idesc(v: int, kind: str, ws: bool, cta_group: int) -> IDesc:
    d = IDesc()
    d.raw = v
    bs = kind.startswith("mx")
    f = decode(TCGEN05_IDESC_BLOCK_SCALED if bs else TCGEN05_IDESC, v)
    d.sparse = f["sparse"]
    d.neg_a, d.neg_b = f["neg_a"], f["neg_b"]
    d.ta, d.tb = f["a_mn"], f["b_mn"]
    d.n = f["n"]
    ta_code = f["a_type"]
    tb_code = f["b_type"] & (3 if kind in ("mxf4", "mxf4nvf4") else 7)   # mxf4*: bits 10-11
    types = _TYPES[kind]
    if ta_code not in types or tb_code not in types:
        bad = ta_code if ta_code not in types else tb_code
        raise InterpreterError(f"instruction descriptor {v:#010x}: type code {bad} is not a .kind::{kind} "
                               f"type; allowed: " + ", ".join(f"{c} {t}" for c, t in types.items()))
    d.atype, d.btype = types[ta_code], types[tb_code]
    if bs:
        d.dtype = "f32"
        d.sat = 0
        d.sfb_id, d.sfa_id, d.ue8m0, d.m = f["b_sf_id"], f["a_sf_id"], f["ue8m0"], f["m"]
        k96 = kind != "mxf8f6f4" and f["k96"]
        d.k = {"mxf8f6f4": 32}.get(kind, 96 if k96 else 64)
    else:
        d.sat = f["saturate"]
        code = f["d_type"]
        if code not in _D_TYPES:
            raise InterpreterError(f"instruction descriptor {v:#010x}: D type code {code} is invalid")
        d.dtype = _D_TYPES[code]
        d.m = f["m"]
        d.sfa_id = d.sfb_id = d.ue8m0 = 0
        d.k = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32}[kind]
    allowed_d = {"f16": ("f16", "f32"), "tf32": ("f32",), "f8f6f4": ("f16", "f32"), "i8": ("s32",)}
    if not bs and d.dtype not in allowed_d[kind]:
        raise InterpreterError(f"instruction descriptor {v:#010x}: D type .{d.dtype} is not allowed for "
                               f".kind::{kind} (allowed: {', '.join(allowed_d[kind])})")
    ms = ((32, 64, 128) if ws else (64, 128)) if cta_group == 1 else (128, 256)
    if bs:
        ms = (128,) if cta_group == 1 else (128, 256)
    if d.m not in ms:
        raise InterpreterError(f"instruction descriptor {v:#010x}: M={d.m} is not allowed for .kind::{kind}"
                               f"{' .ws' if ws else ''} with .cta_group::{cta_group} (allowed: "
                               f"{', '.join(map(str, ms))})")
    step = 16 if cta_group == 2 else 8
    if d.n < step or d.n > 256 or d.n % step or (ws and d.n not in (64, 128, 256)):
        raise InterpreterError(f"instruction descriptor {v:#010x}: N={d.n} is not allowed for .kind::{kind}"
                               f"{' .ws' if ws else ''} with .cta_group::{cta_group}")
    return d


def _elem_bits(t):
    return SM.ELEM_BITS[t]


def _unpack_padded(raw, t):
    """f8f6f4 4/6-bit elements in shared memory: each 16-byte chunk holds 16 elements packed
    from its first bit (4-bit: 8 bytes, 6-bit: 12 bytes) and padding (``b4x16_p64``,
    ``b6x16_p32``). ``raw`` is (..., k) bytes of the chunks -> (..., k) element codes."""
    bits = _elem_bits(t)
    sh = raw.shape
    chunks = raw.reshape(sh[:-1] + (sh[-1] // 16, 16)).astype(np.uint64)
    word = np.zeros(chunks.shape[:-1], np.uint64)
    for i in range(8):
        word |= chunks[..., i] << np.uint64(8 * i)
    hi = np.zeros(chunks.shape[:-1], np.uint64)
    for i in range(8, 12):
        hi |= chunks[..., i] << np.uint64(8 * (i - 8))
    out = np.empty(chunks.shape, np.uint8)
    for e in range(16):
        b = e * bits
        if b + bits <= 64:
            val = word >> np.uint64(b)
        elif b >= 64:
            val = hi >> np.uint64(b - 64)
        else:
            val = (word >> np.uint64(b)) | (hi << np.uint64(64 - b))
        out[..., e] = (val & np.uint64((1 << bits) - 1)).astype(np.uint8)
    return out.reshape(sh)


_PLANS: dict = {}       # where shared-memory operands lie, by descriptors (SM.gather)


def _operand(ctx, ctas, descs, t, mn, k, major, kind, what, g=None, lane=0):
    """(len(descs), mn, k) float64 / int64 values of shared-memory operands, descriptor i in the
    shared memory of CTA ``ctas[i]``."""
    bits = _elem_bits(t)
    if kind in ("f8f6f4", "mxf8f6f4") and bits < 8:
        if major != "K":
            raise InterpreterError(f"{what}: MN-major .{t} operands of .kind::{kind} are not supported "
                                   f"by the interpreter")
        # 16-byte units of 8 (4-bit) or 12 (6-bit) packed bytes: the padding is never read
        used = np.arange(k) % 16 < 16 * bits // 8
        raw = SM.gather(ctx, ctas, descs, "K", mn, k, 8, what, ctx.sanitize, g, lane, used)
        raw = _unpack_padded(raw, t)
    else:
        return SM.gather(ctx, ctas, descs, major, mn, k, bits, what, ctx.sanitize, g, lane, t=t, plans=_PLANS)
    return SM.values(raw, t)


def _a_from_tmem(ctx, tm, cta, lane0, col0, rows_lanes, k, t, what, g, j):
    """A (rows, k) from TMEM: row r in lane ``rows_lanes[r]``, K packed in 32-bit columns."""
    bits = _elem_bits(t)
    if bits < 8 and t != "e2m1":
        raise InterpreterError(f"{what}: .{t} A in Tensor Memory is not supported by the interpreter")
    if bits < 8:
        raise InterpreterError(f"{what}: 4-bit A in Tensor Memory is not supported by the interpreter")
    per = 32 // bits
    ncols = -(-k // per)
    words = tm.read(ctx, cta, (lane0 + rows_lanes)[:, None], col0 + np.arange(ncols)[None, :], what, g,
                    lambda _i: j)                                      # (rows, ncols)
    sh = (np.arange(per, dtype=np.uint32) * np.uint32(bits))
    el = (words[:, :, None] >> sh) & np.uint32((1 << bits) - 1) if bits < 32 else words[:, :, None]
    return SM.values(el.reshape(len(rows_lanes), -1)[:, :k], t)


@functools.lru_cache(maxsize=128)
def _layout_arrays(m, n, cta_group, ws):
    """(lane offsets, column offsets, ``tmem.rects`` or None) of D's rows x N cells."""
    lay = np.array(tcgen05_d_layout(m, n, cta_group, ws), np.int64)
    rows = m // cta_group
    lane_of, col_of = lay[:, 0].reshape(rows, n), lay[:, 1].reshape(rows, n)
    return lane_of, col_of, rects(lane_of, col_of)


def _scale_values(ctx, tm, cta, addr, rows, nsf, sf_id, ue8m0, what, g, j, two_by_two_n=None):
    """(rows, nsf) scale factors: row r in lane r (its quarter), column base + r // 32 (the 2x2
    B layout: columns n >= N/2 in lanes 64.. at base + (n - N/2) // 32), byte sf_id + s."""
    lane0, col0 = split(addr)
    r = np.arange(rows)
    if two_by_two_n is not None:
        half = two_by_two_n // 2
        q, rr = np.divmod(r, half)
        lanes = lane0 + (rr % 32) + 64 * q
        cols = col0 + rr // 32
    else:
        lanes = lane0 + r
        cols = col0 + r // 32
    words = tm.read(ctx, cta, lanes, cols, what, g, lambda _i: j)        # (rows,)
    byte = sf_id + np.arange(nsf)
    if (byte > 3).any():
        raise InterpreterError(f"{what}: scale factor ID {sf_id} with {nsf} factors per row runs past "
                               f"the 4 bytes of a TMEM word")
    codes = (words[:, None] >> (8 * byte).astype(np.uint32)) & np.uint32(0xFF)
    if ue8m0:
        e = codes.astype(np.int64)
        return np.where(e == 255, np.nan, np.ldexp(1.0, e - 127))
    return SM.values(codes.astype(np.uint8), "ue4m3")


@register("tcgen05.mma", "tcgen05.mma.ws")
def _mma(prog, d, ins, scope, dec):
    """Decode the modifiers and operands once (``_Tcgen05Mma``); each execution is its ``issue``."""
    d.fn = _Tcgen05Mma(prog, d, ins, scope, dec).issue


class _Tcgen05Mma:
    """One decoded ``tcgen05.mma`` instruction: its modifiers, its operand readers, and the steps
    that execute it (``issue`` -> ``batched`` or ``run`` -> ``one`` -> ``accumulate``)."""

    __slots__ = ("d", "ws", "cg", "kind", "bs", "sv", "what", "a_tmem", "scale_in", "get_d", "get_a",
                 "get_b", "get_idesc", "get_sfa", "get_sfb", "get_lanes", "get_en", "get_zcm")

    def __init__(self, prog, d, ins, scope, dec):
        self.d = d
        self._modifiers(dec)
        self._operands(prog, list(ins.operands), scope)

    def _modifiers(self, dec):
        """The form and modifiers: .ws, .cta_group, .kind, .block_scale, .scale_vec."""
        name = dec.form.name
        self.ws = name == "tcgen05.mma.ws"
        self.cg = int(dec.get("cta_group", ".cta_group::1")[-1])
        self.kind = kind = dec.get("kind")[len(".kind::"):]
        self.bs = dec.has(".block_scale")
        if dec.has(".ashift"):
            raise InterpreterError("tcgen05.mma .ashift is not supported by the interpreter")
        self.sv = dec.get("scale_vec")
        self.what = f"{name}{dec.get('cta_group', '')}.kind::{kind}"

    def _operands(self, prog, ops, scope):
        """Readers of d, a, b, idesc, the scale factors, disable-output-lane, enable-input-d and
        scale-input-d (an immediate) / the zero-column mask (.ws)."""
        cg = self.cg
        self.get_d, _ = address_getter(prog, ops[0], scope)
        self.a_tmem = isinstance(ops[1], Addr)
        self.get_a = address_getter(prog, ops[1], scope)[0] if self.a_tmem else reader(prog, ops[1], b64, scope)
        self.get_b = reader(prog, ops[2], b64, scope)
        self.get_idesc = reader(prog, ops[3], b32, scope)
        rest = ops[4:]
        self.get_sfa = self.get_sfb = self.get_lanes = self.get_zcm = None
        self.scale_in = 0
        if self.bs:
            self.get_sfa = address_getter(prog, rest[0], scope)[0]
            self.get_sfb = address_getter(prog, rest[1], scope)[0]
            rest = rest[2:]
        if rest and isinstance(rest[0], Vec):
            self.get_lanes = [reader(prog, o, b32, scope) for o in items(rest[0])]
            if len(self.get_lanes) != 4 * cg:
                raise InterpreterError(f"disable-output-lane of .cta_group::{cg} takes {4 * cg} registers")
            rest = rest[1:]
        self.get_en = reader(prog, rest[0], pred, scope)
        if len(rest) > 1:
            if self.ws:
                self.get_zcm = reader(prog, rest[1], b64, scope)
            else:
                if not isinstance(rest[1], Imm):
                    raise InterpreterError("scale-input-d must be an immediate")
                self.scale_in = parse_int(rest[1].text)
                if not 0 <= self.scale_in <= 15:
                    raise InterpreterError(f"scale-input-d is {self.scale_in}; allowed: 0..15")

    def issue(self, ctx, g):
        """Execute for the threads of ``g``: read their operands, then run the operation now, or
        (late schedule) when the commit that tracks it arrives."""
        tmem(ctx)
        vals = self._read(ctx, g)
        if ctx.timeline is not None:        # in flight until the issuing thread's commit
            for s in g.idx.tolist():
                ctx.timeline.begin(ctx, "tcgen05.mma", (int(ctx.slot_cta[s]), s), 0, int(ctx.slot_cta[s]))
        # late (schedule): it reads its operands and writes D when the commit that tracks it
        # arrives, and that arrival waits for a thread that needs its mbarrier
        if not defer_late(ctx, g, self.d, lambda ctx_, j: self.run(ctx_, g, j, vals)):
            if g.n > 1 and self.batched(ctx, g, vals):
                return
            for j in range(g.n):
                self.run(ctx, g, j, vals)

    def _read(self, ctx, g):
        """The per-thread register operands of ``g``: (idesc, zero-column mask, D address, A, B
        descriptor, enable-input-d, scale A, scale B, disable-output-lane)."""
        dad = np.asarray(self.get_d(ctx, g))
        aad = np.asarray(self.get_a(ctx, g))
        bds = np.asarray(self.get_b(ctx, g))
        ids = np.broadcast_to(np.asarray(self.get_idesc(ctx, g)), (g.n,))
        ens = np.broadcast_to(np.asarray(self.get_en(ctx, g)), (g.n,))
        sfas = sfbs = None
        if self.bs:
            sfas, sfbs = np.asarray(self.get_sfa(ctx, g)), np.asarray(self.get_sfb(ctx, g))
        lanes_off = None
        if self.get_lanes is not None:
            lanes_off = np.stack([np.asarray(f(ctx, g)).astype(np.uint32) for f in self.get_lanes], axis=1)
        zcm = np.asarray(self.get_zcm(ctx, g)) if self.get_zcm is not None else None
        return ids, zcm, dad, aad, bds, ens, sfas, sfbs, lanes_off

    def batched(self, ctx, g, vals):
        """Threads of distinct CTAs issuing the same operation (one per CTA, the usual case):
        their operands are gathered and multiplied at once, then each thread accumulates into
        its D in order, as ``run`` does. Where a gather reports a problem, nothing has happened
        yet and False lets ``run`` give the report of the first thread that has one."""
        ids, zcm, dad, aad, bds, ens, sfas, _, lanes_off = vals
        if self.cg != 1 or self.a_tmem or sfas is not None or lanes_off is not None or zcm is not None:
            return False
        ctas = ctx.slot_cta[g.idx]
        if len(np.unique(ctas)) != g.n or (ids != ids[0]).any():
            return False
        kind, what = self.kind, self.what
        try:
            idesc = decode_idesc(int(ids[0]), kind, self.ws, 1)
            bd = [SM.decode_tcgen05(int(v), f"{what} b-desc") for v in bds]
            ad = [SM.decode_tcgen05(int(v), f"{what} a-desc") for v in aad]
            M, N, K = idesc.m, idesc.n, idesc.k
            B = _operand(ctx, ctas, bd, idesc.btype, N, K, "MN" if idesc.tb else "K", kind,
                         f"{what} (matrix B)", g)                                           # (n, N, K)
            A = _operand(ctx, ctas, ad, idesc.atype, M, K, "MN" if idesc.ta else "K", kind,
                         f"{what} (matrix A)", g)                                           # (n, M, K)
        except PtxError:
            return False
        tm = tmem(ctx)
        if self._accumulate_all(ctx, tm, g, ctas.tolist(), idesc, dad, ens, A, B):
            return True
        for j in range(g.n):
            if ctx.stats is not None:       # 2*M*N*K FLOPs per issued instruction (stats.py)
                ctx.stats.add_flops("tcgen05.mma", str(idesc.atype), 2 * M * N * K)
            self.check_d(ctx, g, j, M, int(dad[j]))
            # one 2-D product per thread, as ``one`` makes it (the same BLAS call: the same sums)
            self.accumulate(ctx, tm, g, j, int(ctas[j]), idesc, int(dad[j]), A[j] @ B[j].T, bool(ens[j]),
                            None, 0)
        return True

    def _accumulate_all(self, ctx, tm, g, ctas, idesc, dad, ens, A, B):
        """``accumulate`` of every thread's product at once, where the threads (of distinct CTAs)
        name one D address and enable-input-d and every CTA's D is rectangles of TMEM that
        ``rects_ok`` finds nothing to report in (each thread's cells are its own CTA's: the
        order does not matter). False (nothing done) elsewhere."""
        M, N, K = idesc.m, idesc.n, idesc.k
        _, _, pieces = _layout_arrays(M, N, 1, self.ws)
        daddr, enable = int(dad[0]), bool(ens[0])
        if pieces is None or (dad != dad[0]).any() or (ens != ens[0]).any():
            return False
        self.check_d(ctx, g, 0, M, daddr)
        lane0, col0 = (int(x) for x in split(daddr))
        if not (rects_ok(tm, ctas, lane0, col0, pieces, False)
                and (not enable or rects_ok(tm, ctas, lane0, col0, pieces, True))):
            return False
        n = len(ctas)
        P, cells = tm.scratch(n, M, N)
        for j in range(n):
            if ctx.stats is not None:       # 2*M*N*K FLOPs per issued instruction (stats.py)
                ctx.stats.add_flops("tcgen05.mma", str(idesc.atype), 2 * M * N * K)
            # one 2-D product per thread, as ``one`` makes it (the same BLAS call: the same sums)
            np.matmul(A[j], B[j].T, out=P[j])
        if idesc.neg_a ^ idesc.neg_b:
            np.negative(P, out=P)
        f32 = idesc.dtype == "f32"
        if enable:
            old = read_rects_of(tm, ctas, lane0, col0, pieces, cells)
            if f32 and not self.scale_in:       # (f32 -> f64 is exact: the add converts as it goes)
                np.add(P, old.view(np.float32), out=P)
            else:
                Dold = _from_cells(old, idesc.dtype)
                P += Dold * 2.0 ** -self.scale_in if self.scale_in else Dold
        if f32:
            cells.view(np.float32)[...] = P
        else:
            cells = _to_cells(P, idesc.dtype, idesc.sat and self.kind == "i8")
        write_rects_of(tm, ctas, lane0, col0, pieces, cells)
        return True

    def run(self, ctx, g, j, vals):
        """Execute thread ``j``'s operation: read the operands, accumulate into D."""
        ids, zcm, dad, aad, bds, ens, sfas, sfbs, lanes_off = vals
        cta = int(ctx.slot_cta[g.idx[j]])
        try:
            idesc = decode_idesc(int(ids[j]), self.kind, self.ws, self.cg)
        except InterpreterError as e:
            raise ctx.error(InterpreterError, e.message, g, j) from None
        if zcm is not None:
            z = int(zcm[j])
            if (z >> 39) & 1 or (z >> 56) & 0x3F:
                raise ctx.error(InterpreterError, "a non-zero zero-column-mask descriptor is not "
                                "supported by the interpreter", g, j)
        self.one(ctx, tmem(ctx), g, j, cta, idesc, int(dad[j]), int(aad[j]), int(bds[j]), bool(ens[j]),
                 None if sfas is None else (int(sfas[j]), int(sfbs[j])),
                 None if lanes_off is None else lanes_off[j])

    def check_d(self, ctx, g, j, M, daddr):
        """D's TMEM address starts at the lane the data-path layout of M needs."""
        d_lane0 = split(daddr)[0]
        if M // self.cg == 64 and not self.ws and self.cg == 1:
            if d_lane0 not in (0, 16):
                raise ctx.error(TensorMemoryError, f"{self.what}: M=64 D must start at TMEM lane 0 or 16, "
                                f"got {int(d_lane0)}", g, j)
        elif d_lane0:
            raise ctx.error(TensorMemoryError, f"{self.what}: D must start at TMEM lane 0 for M={M}, got "
                            f"{int(d_lane0)}", g, j)

    def one(self, ctx, tm, g, j, cta, idesc, daddr, aval, bdesc, enable, sf, disable):
        """Thread ``j``'s operation: gather A and B (and scale them), accumulate into each CTA's D."""
        M, N, K = idesc.m, idesc.n, idesc.k
        if ctx.stats is not None:       # 2*M*N*K FLOPs per issued instruction (stats.py)
            ctx.stats.add_flops("tcgen05.mma", str(idesc.atype), 2 * M * N * K)
        ctas = [cta] if self.cg == 1 else _pair(ctx, cta, g, j)
        self.check_d(ctx, g, j, M, daddr)
        As, B = self.gather(ctx, tm, g, j, ctas, idesc, aval, bdesc)
        if sf is not None:
            As, B = self.block_scale(ctx, tm, g, j, ctas, idesc, sf, As, B)
        for i, c in enumerate(ctas):
            self.accumulate(ctx, tm, g, j, c, idesc, daddr, As[i] @ B.T, enable, disable, i)

    def gather(self, ctx, tm, g, j, ctas, idesc, aval, bdesc):
        """(A's rows of each CTA of ``ctas``, B (N, K)): B's N / cta_group columns from each CTA's
        shared memory, A from its shared memory or its TMEM."""
        M, N, K = idesc.m, idesc.n, idesc.k
        cg, kind, what = self.cg, self.kind, self.what
        rows = M // cg
        lane_of = _layout_arrays(M, N, cg, self.ws)[0]
        try:
            bd = SM.decode_tcgen05(bdesc, f"{what} b-desc")
            ad = None if self.a_tmem else SM.decode_tcgen05(aval, f"{what} a-desc")
        except InterpreterError as e:
            raise ctx.error(InterpreterError, e.message, g, j) from None
        # B: N/cg columns per CTA (N x K operand, K-major unless transposed)
        B = np.concatenate([_operand(ctx, [c], [bd], idesc.btype, N // cg, K, "MN" if idesc.tb else "K",
                                     kind, f"{what} (matrix B)", g, j)[0] for c in ctas], axis=0)  # (N, K)
        As = []
        for c in ctas:
            if self.a_tmem:
                a_lane0, a_col0 = split(aval)
                As.append(_a_from_tmem(ctx, tm, c, a_lane0, a_col0, lane_of[:, 0], K, idesc.atype,
                                       f"{what} (matrix A in TMEM)", g, j))
            else:
                As.append(_operand(ctx, [c], [ad], idesc.atype, rows, K, "MN" if idesc.ta else "K", kind,
                                   f"{what} (matrix A)", g, j)[0])
        return As, B

    def block_scale(self, ctx, tm, g, j, ctas, idesc, sf, As, B):
        """(As, B) multiplied by their scale factors from TMEM (``sf``: their TMEM addresses)."""
        M, N, K = idesc.m, idesc.n, idesc.k
        sv, cg, what = self.sv, self.cg, self.what
        nsf = {".scale_vec::1X": 1, ".scale_vec::2X": 2, ".scale_vec::4X": 4}.get(sv)
        if sv in (None, ".block32"):
            nsf = K // 32
        elif sv == ".block16":
            nsf = K // 16
        blk = K // nsf
        sfb_all = []
        for i, c in enumerate(ctas):
            sfa = _scale_values(ctx, tm, c, sf[0], M // cg, nsf, idesc.sfa_id, idesc.ue8m0,
                                f"{what} (scale A)", g, j)
            As[i] = As[i] * np.repeat(sfa, blk, axis=1)
            sfb_all.append(_scale_values(ctx, tm, c, sf[1], N, nsf, idesc.sfb_id, idesc.ue8m0,
                                         f"{what} (scale B)", g, j,
                                         two_by_two_n=N if (cg == 2 and M == 128) else None))
        return As, B * np.repeat(sfb_all[0], blk, axis=1)

    def accumulate(self, ctx, tm, g, j, c, idesc, daddr, P, enable, disable, i):
        """D (in CTA ``c``'s TMEM at ``daddr``) = ``P`` (the product, rows x N) + D if ``enable``."""
        M, N = idesc.m, idesc.n
        what = self.what
        lane_of, col_of, pieces = _layout_arrays(M, N, self.cg, self.ws)
        d_lane0, d_col0 = split(daddr)
        d_lane0, d_col0 = int(d_lane0), int(d_col0)
        if idesc.neg_a ^ idesc.neg_b:
            P = -P
        rel = (lane_of, col_of)         # the cells' TMEM lanes and columns, from (d_lane0, d_col0)
        lane_j = lambda _i: j
        if enable:
            if pieces is not None:
                old = read_rects(tm, ctx, c, d_lane0, d_col0, pieces, P.shape, rel,
                                 f"{what} (accumulator D)", g, lane_j)
            else:
                old = tm.read(ctx, c, d_lane0 + lane_of, d_col0 + col_of, f"{what} (accumulator D)", g,
                              lane_j)
            Dold = _from_cells(old, idesc.dtype)
            if self.scale_in:
                Dold = Dold * 2.0 ** -self.scale_in
            P = P + Dold
        cells = _to_cells(P, idesc.dtype, idesc.sat and self.kind == "i8")
        if disable is not None:
            lanes = d_lane0 + lane_of
            regs = disable[4 * i:4 * i + 4] if self.cg == 2 else disable
            bit = (regs[(lanes // 32) % 4] >> (lanes % 32).astype(np.uint32)) & np.uint32(1)
            keep = bit == 0
            tm.write(ctx, c, lanes[keep], (d_col0 + col_of)[keep], cells[keep], f"{what} (accumulator D)", g,
                     lane_j)
        elif pieces is not None:
            write_rects(tm, ctx, c, d_lane0, d_col0, pieces, cells, rel, f"{what} (accumulator D)", g, lane_j)
        else:
            tm.write(ctx, c, d_lane0 + lane_of, d_col0 + col_of, cells, f"{what} (accumulator D)", g, lane_j)


def _from_cells(cells, dt):
    if dt == "f32":
        return cells.view(np.float32).astype(np.float64)
    if dt == "s32":
        return cells.view(np.int32).astype(np.int64)
    return fp.decode(cells & np.uint32(0xFFFF), fp.F16)


def _to_cells(P, dt, sat):
    if dt == "f32":
        return P.astype(np.float32).view(np.uint32)
    if dt == "s32":
        v = np.asarray(P, np.int64)
        if sat:
            v = np.clip(v, -2 ** 31, 2 ** 31 - 1)
        return (v & 0xFFFFFFFF).astype(np.uint32)
    return fp.encode(fp.round_to(P, fp.F16, "rn"), fp.F16).astype(np.uint32)
