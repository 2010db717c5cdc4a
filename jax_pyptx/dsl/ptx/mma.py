"""``ptx.mma``: warp-level tensor cores (sm_75+/sm_80+). ``ptx.mma.sync(d, a, b, c,
shape="m16n8k16", dtype=f32, atype=bf16)`` emits ``mma.sync.aligned.m16n8k16.row.col.f32.bf16
.bf16.f32``; ``ptx.mma.ldmatrix(addr, num=4, trans=False)``, ``stmatrix``, ``movmatrix``;
``fragment_a/b/c(shape, dtype)`` give (row, col) of every element each lane holds."""
from __future__ import annotations

from ...errors import PtxValueError
from ..context import user_loc
from ..values import RegArray
from ._wrap import addr as _addr, build_mods, choice, dtype, emit, int_choice, new_array


def _tn(t):
    return "." + (t.name if hasattr(t, "name") else str(t).lstrip("."))


def sync(d, a, b, c, *, shape="m16n8k16", dtype=None, atype=None, btype=None, ctype=None,
         alayout="row", blayout="col", satfinite: bool = False, bitop=None, pred=None):
    """``mma.sync.aligned.shape.alayout.blayout{.satfinite}.dtype.atype.btype.ctype d, a, b, c``
    (b1: ``bitop="and"|"xor"`` adds ``.bitop.popc``). Types default from the registers: dtype
    from d, ctype from c; atype/btype must be given for sub-32-bit inputs (f16, bf16, tf32, s8,
    e4m3...)."""
    dt = _tn(dtype or d.type)
    ct = _tn(ctype or (c.type if isinstance(c, RegArray) else dtype))
    if dt == ".b32":
        dt = ".f16"
    if ct == ".b32":
        ct = ".f16"
    at = _tn(atype or "f16")
    bt = _tn(btype or atype or "f16")
    kw = {"aligned": True, "shape": "." + shape.lstrip("."), "alayout": alayout,
          "blayout": blayout, "sat": satfinite and ".satfinite", "dtype": dt, "atype": at,
          "btype": bt, "ctype": ct,
          "bitop": bitop, "popc": bitop is not None}
    mods = build_mods("ptx.mma.sync", "mma.sync", kw)
    emit("mma.sync" + "".join(mods), (d, a, b, c), pred)
    return d


def ldmatrix(address, *, num: int = 4, trans: bool = False, shape="m8n8", type="b16",
             src_fmt=None, space="shared", out=None, pred=None):
    """``ldmatrix.sync.aligned.shape.xN{.trans}{.shared}.type r, [p]``; returns the
    registers (N for m8n8, 2N for m16n16)."""
    n = int_choice("ptx.mma.ldmatrix", "num", num, (1, 2, 4))
    per = 2 if shape.lstrip(".") == "m16n16" else 1
    kw = {"aligned": True, "shape": "." + shape.lstrip("."), "num": f".x{n}", "trans": trans,
          "space": space, "type": _tn(type), "src": src_fmt and _tn(src_fmt)}
    mods = build_mods("ptx.mma.ldmatrix", "ldmatrix.sync", kw)
    out = out or new_array("b32", n * per)
    emit("ldmatrix.sync" + "".join(mods), (out, _addr(address, "ptx.mma.ldmatrix")), pred)
    return out


def stmatrix(address, regs, *, trans: bool = False, shape="m8n8", type="b16", space="shared",
             pred=None):
    """``stmatrix.sync.aligned.shape.xN{.trans}{.shared}.type [p], r`` (N = len(regs))."""
    n = int_choice("ptx.mma.stmatrix", "len(regs)", len(regs), (1, 2, 4))
    kw = {"aligned": True, "shape": "." + shape.lstrip("."), "num": f".x{n}", "trans": trans,
          "space": space, "type": _tn(type)}
    mods = build_mods("ptx.mma.stmatrix", "stmatrix.sync", kw)
    emit("stmatrix.sync" + "".join(mods), (_addr(address, "ptx.mma.stmatrix"), regs), pred)


def movmatrix(x, *, out=None, pred=None):
    """``movmatrix.sync.aligned.m8n8.trans.b16 d, a``: transpose an 8x8 b16 fragment."""
    from ._wrap import new

    out = out or new("b32")
    emit("movmatrix.sync.aligned.m8n8.trans.b16", (out, x), pred)
    return out


# ----------------------------------------------------------------------------- fragments
def _groupid(lane):
    return lane >> 2, lane % 4


def fragment_c(shape="m16n8k16", lane: int | None = None):
    """Accumulator (C/D) layout of ``mma.sync`` m16n8kK (f32/s32: 4 elements per lane): a list,
    per lane, of (row, col) for element i. ``c0,c1`` are row groupID, cols 2*tid+{0,1};
    ``c2,c3`` row groupID+8."""
    s = shape.lstrip(".")
    if not s.startswith("m16n8"):
        raise PtxValueError(f"ptx.mma.fragment_c: shape={shape!r} is not allowed; allowed: "
                            f"m16n8k4, m16n8k8, m16n8k16, m16n8k32, m16n8k64", loc=user_loc())
    lanes = range(32) if lane is None else (lane,)
    out = []
    for ln in lanes:
        g, t = _groupid(ln)
        out.append([(g + 8 * (i >= 2), 2 * t + (i & 1)) for i in range(4)])
    return out if lane is None else out[0]


def fragment_a(shape="m16n8k16", elem_bits: int = 16, lane: int | None = None):
    """A-operand layout of ``mma.sync`` m16n8kK (row-major A, 16 x K): per lane, (row, col)
    of element i, elements packed 32/elem_bits per register. Register r holds rows
    groupID + 8*(r & 1), columns tid*per_reg + j + K/2*(r >> 1) (f16/bf16 k8/k16, tf32 k4/k8,
    s8 k16/k32, ...)."""
    k = int(shape.lstrip(".").split("k")[1])
    per_reg = 32 // elem_bits
    lanes = range(32) if lane is None else (lane,)
    out = []
    for ln in lanes:
        g, t = _groupid(ln)
        out.append([(g + 8 * ((i // per_reg) & 1),
                     t * per_reg + i % per_reg + (k // 2) * ((i // per_reg) >> 1))
                    for i in range(16 * k // 32)])
    return out if lane is None else out[0]


def fragment_b(shape="m16n8k16", elem_bits: int = 16, lane: int | None = None):
    """B-operand layout (K x 8, "col"): per lane, (k, n) of element i: n = groupID,
    k = tid*per_reg + j + K/2*r for register r."""
    k = int(shape.lstrip(".").split("k")[1])
    per_reg = 32 // elem_bits
    lanes = range(32) if lane is None else (lane,)
    out = []
    for ln in lanes:
        g, t = _groupid(ln)
        out.append([(t * per_reg + i % per_reg + (k // 2) * (i // per_reg), g)
                    for i in range(8 * k // 32)])
    return out if lane is None else out[0]


__all__ = ["sync", "ldmatrix", "stmatrix", "movmatrix", "fragment_a", "fragment_b",
           "fragment_c", "choice", "dtype"]
