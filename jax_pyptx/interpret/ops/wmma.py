"""wmma.load / wmma.store / wmma.mma (the CUDA C++ ``nvcuda::wmma`` API).

The PTX ISA leaves the distribution of wmma fragments over the threads of a warp
unspecified; a program may only move fragments through wmma.load, wmma.mma and wmma.store (and
apply element-wise operations, which do not depend on the distribution). The interpreter uses
a simple one: element ``e`` of lane ``l`` is element ``(l * E + e) mod T`` of the row-major
matrix, where ``E`` is the number of elements per thread and ``T`` the matrix size (fragments
that hold more than ``T`` elements in total carry copies).
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ...isa.fragments import mnk
from ...types import b32, b64, u32
from ..state import fp
from ..machine.registry import register
from .load_store import address_getter, space_load, space_store, space_of
from ..state.operands import items, reader, writer

_EDT = {"f16": np.float16, "bf16": fp.BF16.dtype, "tf32": np.float32, "f32": np.float32, "s32": np.int32,
        "s8": np.int8, "u8": np.uint8, "f64": np.float64}


def _dims(which, M, N, K):
    return {"a": (M, K), "b": (K, N), "c": (M, N), "d": (M, N)}[which]


def _regs_to_elems(regs, et):
    """(n, nregs) register bits -> (n, E) element values (float64 or int64)."""
    if et in ("f32", "tf32", "s32", "f64"):
        v = regs.view({"f32": np.float32, "tf32": np.float32, "s32": np.int32, "f64": np.float64}[et])
        if et == "tf32":
            v = (regs & np.uint32(0xFFFFE000)).view(np.float32)
        return v.astype(np.int64 if et == "s32" else np.float64)
    if et in ("f16",):
        return regs.view(np.float16).astype(np.float64)
    if et == "bf16":
        return (regs.view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if et in ("s8", "u8"):
        return regs.view(_EDT[et]).astype(np.int64)
    raise InterpreterError(f"wmma element type .{et} is not supported")


def _elems_to_regs(vals, et, rdt):
    if et in ("f32", "tf32"):
        return vals.astype(np.float32).view(rdt)
    if et == "f64":
        return vals.astype(np.float64).view(rdt)
    if et == "s32":
        return vals.astype(np.int64).astype(np.int32).view(rdt)
    if et == "f16":
        return fp.encode(fp.round_to(vals, fp.F16), fp.F16).view(rdt)
    if et == "bf16":
        return fp.encode(fp.round_to(vals, fp.BF16), fp.BF16).view(rdt)
    raise InterpreterError(f"wmma element type .{et} is not supported")


def _index(E, T):
    """flat matrix index of element e of lane l: [32, E]."""
    return (np.arange(32)[:, None] * E + np.arange(E)[None, :]) % T


def _warp_layout(g):
    uw, _ = g.warp_masks()
    if g.n != 32 * len(uw):
        raise InterpreterError("wmma needs every lane of the warp")
    return len(uw), g._wl, g.idx & 31


def _per_reg(et):
    return {"f16": 2, "bf16": 2, "s8": 4, "u8": 4}.get(et, 1)


@register("wmma.load")
def _wmma_load(prog, d, ins, scope, dec):
    which = dec.get("frag")[1:]         # a | b | c
    layout = dec.get("layout", ".row")[1:]      # row | col
    M, N, K = mnk(dec.get("shape"))
    R, C = _dims(which, M, N, K)
    tys = list(dec.types)
    et = tys[-1].name
    dst = items(ins.operands[0])
    rbits = 64 if et == "f64" else 32
    puts = [writer(prog, o, b64 if rbits == 64 else b32, scope) for o in dst]
    E = len(dst) * _per_reg(et)
    T = R * C
    idx = _index(E, T)
    rows, cols = idx // C, idx % C
    getaddr, _ = address_getter(prog, ins.operands[1], scope)
    gstride = reader(prog, ins.operands[2], u32, scope) if len(ins.operands) > 2 else None
    space = space_of(dec)[0]
    edt = np.dtype(_EDT[et]) if et != "tf32" else np.dtype(np.uint32)
    mdt = np.dtype(f"u{edt.itemsize}")
    d.sync = "aligned"

    def load(ctx, g):
        W, inv, lane = _warp_layout(g)
        base = np.asarray(getaddr(ctx, g), np.uint64)
        stride = np.asarray(gstride(ctx, g), np.int64) if gstride is not None else np.int64(C if layout == "row" else R)
        stride = np.broadcast_to(stride, (g.n,))
        r, c = rows[lane], cols[lane]                                  # (n, E)
        off = (r * stride[:, None] + c) if layout == "row" else (c * stride[:, None] + r)
        addrs = base[:, None] + (off * edt.itemsize).astype(np.uint64)
        from ..machine.group import Group
        big = Group(np.repeat(g.idx, E), 0, ctx.N)
        vals = space_load(ctx, big, space, addrs.reshape(-1), mdt, 1).reshape(g.n, E)
        regs = np.ascontiguousarray(vals).view(np.uint64 if rbits == 64 else np.uint32)
        for i, p in enumerate(puts):
            p(ctx, g, np.ascontiguousarray(regs[:, i]))
    d.fn = load


@register("wmma.store")
def _wmma_store(prog, d, ins, scope, dec):
    layout = dec.get("layout", ".row")[1:]      # row | col
    M, N, K = mnk(dec.get("shape"))
    et = list(dec.types)[-1].name
    srcs = items(ins.operands[1])
    rbits = 64 if et == "f64" else 32
    gets = [reader(prog, o, b64 if rbits == 64 else b32, scope) for o in srcs]
    E = len(srcs) * _per_reg(et)
    T = M * N
    idx = _index(E, T)
    rows, cols = idx // N, idx % N
    getaddr, _ = address_getter(prog, ins.operands[0], scope)
    gstride = reader(prog, ins.operands[2], u32, scope) if len(ins.operands) > 2 else None
    space = space_of(dec)[0]
    edt = np.dtype(_EDT[et])
    mdt = np.dtype(f"u{edt.itemsize}")
    d.sync = "aligned"

    def store(ctx, g):
        W, inv, lane = _warp_layout(g)
        regs = np.empty((g.n, len(gets)), np.uint64 if rbits == 64 else np.uint32)
        for i, f in enumerate(gets):
            regs[:, i] = f(ctx, g)
        vals = regs.view(mdt)                                          # (n, E)
        base = np.asarray(getaddr(ctx, g), np.uint64)
        stride = np.asarray(gstride(ctx, g), np.int64) if gstride is not None else np.int64(N if layout == "row" else M)
        stride = np.broadcast_to(stride, (g.n,))
        r, c = rows[lane], cols[lane]
        off = (r * stride[:, None] + c) if layout == "row" else (c * stride[:, None] + r)
        addrs = base[:, None] + (off * edt.itemsize).astype(np.uint64)
        from ..machine.group import Group
        big = Group(np.repeat(g.idx, E), 0, ctx.N)
        space_store(ctx, big, space, addrs.reshape(-1), np.ascontiguousarray(vals.reshape(-1, 1)))
    d.fn = store


@register("wmma.mma")
def _wmma_mma(prog, d, ins, scope, dec):
    M, N, K = mnk(dec.get("shape"))
    tys = [t.name for t in list(dec.types)]
    if len(tys) == 2:
        dt_, at, bt, ct = tys[0], "f16", "f16", tys[1]
    elif len(tys) == 4:
        dt_, at, bt, ct = tys
    else:
        raise InterpreterError("wmma.mma needs .dtype.ctype or .dtype.atype.btype.ctype")
    satf = dec.has(".satfinite")
    dops, aops, bops, cops = (items(o) for o in ins.operands[:4])
    rb = lambda t: 64 if t == "f64" else 32
    ga = [reader(prog, o, b64 if rb(at) == 64 else b32, scope) for o in aops]
    gb = [reader(prog, o, b64 if rb(bt) == 64 else b32, scope) for o in bops]
    gc = [reader(prog, o, b64 if rb(ct) == 64 else b32, scope) for o in cops]
    pd = [writer(prog, o, b64 if rb(dt_) == 64 else b32, scope) for o in dops]
    Ea, Eb, Ec = len(aops) * _per_reg(at), len(bops) * _per_reg(bt), len(cops) * _per_reg(ct)
    Ed = len(dops) * _per_reg(dt_)
    ia, ib, ic, idd = _index(Ea, M * K), _index(Eb, K * N), _index(Ec, M * N), _index(Ed, M * N)
    integer = at in ("s8", "u8")
    d.sync = "aligned"

    def regs(fs, ctx, g, bits):
        out = np.empty((g.n, len(fs)), np.uint64 if bits == 64 else np.uint32)
        for i, f in enumerate(fs):
            out[:, i] = f(ctx, g)
        return out

    def matrix(vals, index, W, inv, lane, size):
        m = np.zeros((W, size), vals.dtype)
        m[inv[:, None], index[lane]] = vals
        return m

    def mma(ctx, g):
        W, inv, lane = _warp_layout(g)
        if ctx.stats is not None:
            ctx.stats.add_flops("wmma.mma", at, 2 * M * N * K * W)
        A = matrix(_regs_to_elems(regs(ga, ctx, g, rb(at)), at), ia, W, inv, lane, M * K).reshape(W, M, K)
        B = matrix(_regs_to_elems(regs(gb, ctx, g, rb(bt)), bt), ib, W, inv, lane, K * N).reshape(W, K, N)
        C = matrix(_regs_to_elems(regs(gc, ctx, g, rb(ct)), ct), ic, W, inv, lane, M * N).reshape(W, M, N)
        D = (np.matmul(A, B) + C).reshape(W, M * N)
        vals = D[inv[:, None], idd[lane]]
        if integer and satf:
            vals = np.clip(vals, -2 ** 31, 2 ** 31 - 1)
        elif integer:
            vals = ((vals + 2 ** 31) % 2 ** 32) - 2 ** 31
        out = _elems_to_regs(np.ascontiguousarray(vals), dt_, np.uint64 if rb(dt_) == 64 else np.uint32)
        out = out.reshape(g.n, len(pd))
        for i, p in enumerate(pd):
            p(ctx, g, np.ascontiguousarray(out[:, i]))
    d.fn = mma
