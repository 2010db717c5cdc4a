"""``ptx.mma``: warp-level tensor cores (sm_75+/sm_80+). ``ptx.mma.sync(d, a, b, c,
shape="m16n8k16", dtype=f32, atype=bf16)`` emits ``mma.sync.aligned.m16n8k16.row.col.f32.bf16
.bf16.f32``; ``ptx.mma.ldmatrix(addr, num=4, trans=False)``, ``stmatrix``, ``movmatrix``;
``fragment_a/b/c(shape, dtype)`` give (row, col) of every element each lane holds."""
from __future__ import annotations

from ...errors import PtxValueError
from ...isa.fragments import mma_fragment
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
# The layouts are the ISA layer's (``isa.fragments``); these wrappers keep the DSL's spelling.
def _lanes(layout, lane):
    if lane is None:
        return [list(x) for x in layout]
    return list(layout[lane])


def fragment_c(shape="m16n8k16", lane: int | None = None):
    """Accumulator (C/D) layout of ``mma.sync`` m16n8kK (f32/s32: 4 elements per lane): a list,
    per lane, of (row, col) for element i. ``c0,c1`` are row groupID, cols 2*tid+{0,1};
    ``c2,c3`` row groupID+8."""
    s = shape.lstrip(".")
    if not s.startswith("m16n8"):
        raise PtxValueError(f"ptx.mma.fragment_c: shape={shape!r} is not allowed; allowed: "
                            f"m16n8k4, m16n8k8, m16n8k16, m16n8k32, m16n8k64", loc=user_loc())
    return _lanes(mma_fragment(s, "c", 32), lane)


def fragment_a(shape="m16n8k16", elem_bits: int = 16, lane: int | None = None):
    """A-operand layout of ``mma.sync`` m16n8kK (row-major A, 16 x K): per lane, (row, col)
    of element i, elements packed 32/elem_bits per register. Register r holds rows
    groupID + 8*(r & 1), columns tid*per_reg + j + K/2*(r >> 1) (f16/bf16 k8/k16, tf32 k4/k8,
    s8 k16/k32, ...)."""
    return _lanes(mma_fragment(_frag_shape("fragment_a", shape), "a", elem_bits), lane)


def fragment_b(shape="m16n8k16", elem_bits: int = 16, lane: int | None = None):
    """B-operand layout (K x 8, "col"): per lane, (k, n) of element i: n = groupID,
    k = tid*per_reg + j + K/2*r for register r."""
    return _lanes(mma_fragment(_frag_shape("fragment_b", shape), "b", elem_bits), lane)


def _frag_shape(fn, shape):
    s = shape.lstrip(".")
    try:
        mma_fragment(s, "c")
    except ValueError as e:
        raise PtxValueError(f"ptx.mma.{fn}: shape={shape!r} is not allowed: {e}", loc=user_loc()) from None
    return s


__all__ = ["sync", "ldmatrix", "stmatrix", "movmatrix", "fragment_a", "fragment_b",
           "fragment_c", "choice", "dtype"]


# --- the documented keyword form (pyptx surface) ------------------------------------------
_sync_positional = sync


def _sync_keywords(*, shape, dtype_d, dtype_a, dtype_b, dtype_c, d, a, b, c, a_layout="row",
                   b_layout="col", pred=None):
    fn = "ptx.mma.sync"
    for name, v in (("a_layout", a_layout), ("b_layout", b_layout)):
        if v not in ("row", "col"):
            raise PtxValueError(f"{fn}: {name}={v!r} is not allowed; allowed: row, col",
                                loc=user_loc(3))
    if isinstance(shape, (tuple, list)) and len(shape) == 3:
        shape = "m{}n{}k{}".format(*shape)
    return _sync_positional(d, a, b, c, shape=shape, dtype=dtype_d, atype=dtype_a,
                            btype=dtype_b, ctype=dtype_c, alayout=a_layout, blayout=b_layout,
                            pred=pred)


def sync(*args, **kw):
    """``sync(d, a, b, c, shape=, dtype=, atype=, ...)`` (ours) or the documented keyword
    form ``sync(shape="m16n8k16", dtype_d=f32, dtype_a=bf16, dtype_b=bf16, dtype_c=f32,
    d=..., a=..., b=..., c=..., a_layout="row", b_layout="col")``: ``mma.sync.aligned.shape
    .alayout.blayout.d.a.b.c {d}, {a}, {b}, {c}``."""
    if not args and "dtype_d" in kw:
        return _sync_keywords(**kw)
    return _sync_positional(*args, **kw)


sync.__wrapped__ = _sync_positional
