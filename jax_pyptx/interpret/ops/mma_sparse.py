"""Sparse warp-level mma: ``mma.sp.sync.aligned`` and ``mma.sp::ordered_metadata.sync.aligned``
(``.row.col``; f16 / bf16, tf32, u8 / s8, u4 / s4, e4m3 / e5m2), ``d, a, b, c, e, f``.

A is structured sparse (PTX ISA "Sparse matrix storage"): each chunk of a row keeps half of its
elements (2:4 for 16- and 8-bit types, 1:2 for tf32, 4:8 in pairs for 4-bit types) and the A
fragment holds only the kept ones; the metadata register ``e`` of the threads the sparsity
selector ``f`` picks says where each lies in its chunk (``isa.fragments.mma_sp_metadata``). The
warp's dense A is rebuilt from both and multiplied as ``mma.sync`` does (exact float64 / int64
products, one rounding to the accumulator type).

The ISA gives the metadata layouts as figures only; ``isa.fragments.mma_sp_metadata`` is one
rule for all of them: it agrees with a published hardware test of m16n8k16 .f16 and with a
published reading of the m16n8k32 .f16 figure; the tf32, 8-bit and 4-bit shapes apply it to
their chunk counts and have not been checked against hardware.

Metadata the ISA leaves undefined is reported: two equal indices in a chunk (0b0000, 0b0101,
0b1010, 0b1111), indices out of order with ``::ordered_metadata``, a tf32 index other than
0b0100 / 0b1110.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...errors import InterpreterError
from ...ir.nodes import Imm
from ...isa.fragments import SP_CHUNK, mma_sp_fragment, mma_sp_metadata, mnk
from ...types import b32, by_name
from ..state import fp
from ..state.operands import items, parse_int, reader, writer
from .mma import _INPUTS, _elements
from ..machine.registry import register

_TYPES = set(_INPUTS) - {"f64"} | {"s4", "u4"}


class _Int4:
    """The 4-bit integer types (no PTX register type of their own)."""
    bits = 4

    def __init__(self, name):
        self.name = name


def _type(mod):
    name = mod[1:]
    return _Int4(name) if name in ("s4", "u4") else by_name(name)


@lru_cache(maxsize=None)
def _maps(shape, bits):
    return tuple(np.array(mma_sp_fragment(shape, w, bits), np.int64) for w in ("a", "b", "c"))


@lru_cache(maxsize=None)
def _meta(shape, bits, sel):
    """(lanes, bits) of each (row, chunk) field: two (16, chunks) arrays."""
    m = np.array(mma_sp_metadata(shape, bits, sel), np.int64)
    return m[:, :, 0], m[:, :, 1]


def _values(regs, n, t):
    """Register values -> (threads, n) int64 / float64 elements of type ``t``."""
    if t.name in ("s4", "u4"):
        u = np.stack([np.asarray(r).astype(np.uint32) for r in regs], axis=1)
        e = ((u[:, :, None] >> (np.arange(8, dtype=np.uint32) * 4)) & 0xF).reshape(u.shape[0], -1)[:, :n]
        v = e.astype(np.int64)
        return np.where(v >= 8, v - 16, v) if t.name == "s4" else v
    return _elements(regs, n, t)


def _selector(ins, shape, bits):
    op = ins.operands[5] if len(ins.operands) > 5 else None
    if not isinstance(op, Imm):
        raise InterpreterError(f"{ins.opcode}: the sparsity selector must be an integer constant, got {op!r}")
    sel = parse_int(op.text)
    try:
        _meta(shape, bits, sel)
    except ValueError as e:
        raise InterpreterError(str(e)) from None
    return sel


def expand(ctx, g, d, what, meta, ac, shape, bits, sel, ordered=False, rows_of_warp=None):
    """The dense (W, 16, K) A of W warps from their kept elements ``ac`` (W, 16, K/2) and their
    lanes' metadata registers ``meta`` (W, 32), per ``isa.fragments.mma_sp_metadata`` for
    ``shape`` (m16n8kK). Undefined metadata raises, naming the row, chunk, lane and bits
    (``rows_of_warp(w)``: the first A row of warp w, for wgmma; lanes are then threads of the
    warpgroup)."""
    K = mnk(shape)[2]
    chunk = SP_CHUNK[bits]
    keep = chunk // 2                      # kept elements per chunk
    mlane, mbit = _meta(shape, bits, sel)
    f = (meta[:, mlane] >> mbit.astype(np.uint32)) & np.uint32(0xF)             # (W, 16, chunks)
    lo, hi = f & 3, f >> 2
    if bits == 32:
        bad = (f != 0b0100) & (f != 0b1110)
        why = "a tf32 field must be 0b0100 or 0b1110"
    elif ordered:
        bad = lo >= hi
        why = "::ordered_metadata needs the first index below the second"
    else:
        bad = lo == hi
        why = "the two indices of a chunk must differ"
    if bad.any():
        w, r, c = (int(x) for x in np.argwhere(bad)[0])
        lane, row, who = int(mlane[r, c]), r, "lane"
        if rows_of_warp is not None:
            row, lane, who = rows_of_warp(w) + r, 32 * (w % 4) + lane, "warpgroup thread"
        raise ctx.error(InterpreterError,
                        f"{what}: undefined sparsity metadata {int(f[w, r, c]):#06b} for chunk {c} "
                        f"(columns {c * chunk}..{c * chunk + chunk - 1}) of row {row} of A, bits "
                        f"{int(mbit[r, c])}..{int(mbit[r, c]) + 3} of {who} {lane}'s metadata register "
                        f"(sparsity selector {sel}): {why}", g, 0, d)
    cc = np.arange(K // 2)                 # compressed columns of a row
    q = cc // keep                         # their chunk
    fq = f[:, :, q]                                                               # (W, 16, K/2)
    if bits == 32:
        dcol = q * 2 + (fq == 0b1110)
    else:
        idx = np.where((cc % keep) < keep // 2, fq & 3, fq >> 2)
        dcol = q * chunk + 2 * idx + cc % 2 if bits == 4 else q * chunk + idx   # 4-bit: pairs
    W = ac.shape[0]
    A = np.zeros((W, 16, K), ac.dtype)
    A[np.arange(W)[:, None, None], np.arange(16)[None, :, None], dcol] = ac
    return A


@register("mma.sp", "mma.sp::ordered_metadata")
def _mma_sp(prog, d, ins, scope, dec):
    shape = dec.get("shape")[1:]
    dt_, at, bt, ct = (_type(dec.get(k)) for k in ("dtype", "atype", "btype", "ctype"))
    if at.name not in _TYPES:
        raise InterpreterError(f"{ins.opcode} with .{at.name} inputs is not supported by the interpreter")
    ordered = ins.opcode.startswith("mma.sp::ordered_metadata")
    satf = dec.has(".satfinite")
    bits = at.bits
    M, N, K = mnk(shape)
    amap, bmap, cmap = _maps(shape, bits)
    sel = _selector(ins, shape, bits)
    dops, aops, bops, cops = (items(o) for o in ins.operands[:4])
    ga = [reader(prog, o, b32, scope) for o in aops]
    gb = [reader(prog, o, b32, scope) for o in bops]
    acc_packed = ct.name == "f16"
    gc = [reader(prog, o, b32 if acc_packed else ct, scope) for o in cops]
    pd = [writer(prog, o, b32 if dt_.name == "f16" else dt_, scope) for o in dops]
    ge = reader(prog, ins.operands[4], b32, scope)
    integer = at.name in ("s8", "u8", "s4", "u4")
    wt = np.int64 if integer else np.float64
    na, nb = amap.shape[1], bmap.shape[1]
    d.sync = "aligned"

    def mma_sp(ctx, g):
        if ctx.stats is not None:
            ctx.stats.add_flops(ins.opcode, at.name, 2 * M * N * K * len(g.warp_masks()[0]))
        uw, _ = g.warp_masks()
        inv = g._wl
        W = len(uw)
        lane = g.idx & 31
        meta = np.zeros((W, 32), np.uint32)
        meta[inv, lane] = np.broadcast_to(np.asarray(ge(ctx, g)).astype(np.uint32), (g.n,))
        ac = np.zeros((W, M, K // 2), wt)
        ac[inv[:, None], amap[lane, :, 0], amap[lane, :, 1]] = _values([f(ctx, g) for f in ga], na, at)
        A = expand(ctx, g, d, ins.opcode, meta, ac, shape, bits, sel, ordered)
        B = np.zeros((W, K, N), wt)
        B[inv[:, None], bmap[lane, :, 0], bmap[lane, :, 1]] = _values([f(ctx, g) for f in gb], nb, bt)
        if acc_packed:
            raw = np.stack([np.asarray(f(ctx, g)).astype(np.uint32) for f in gc], axis=1)
            ec = fp.decode(np.stack([raw & 0xFFFF, raw >> 16], axis=2).reshape(g.n, -1).astype(np.uint16), fp.F16)
        else:
            ec = np.stack([np.broadcast_to(np.asarray(f(ctx, g)), (g.n,)) for f in gc], axis=1).astype(wt)
        C = np.zeros((W, M, N), wt)
        C[inv[:, None], cmap[lane, :, 0], cmap[lane, :, 1]] = ec
        out = (np.matmul(A, B) + C)[inv[:, None], cmap[lane, :, 0], cmap[lane, :, 1]]
        if integer:
            if satf:
                out = np.clip(out, -2 ** 31, 2 ** 31 - 1)
            res = (out & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        elif dt_.name == "f32":
            res = out.astype(np.float32)
        else:                              # f16 accumulators, two per register
            h = fp.encode(fp.round_to(out, fp.F16, "rn"), fp.F16).astype(np.uint32)
            res = h[:, 0::2] | (h[:, 1::2] << 16)
        for i, p in enumerate(pd):
            p(ctx, g, np.ascontiguousarray(res[:, i]))
    d.fn = mma_sp
