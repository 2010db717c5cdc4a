"""``ptx.cvt``: conversions. The module is callable: ``ptx.cvt(x, bf16, rnd="rn", relu=True)``
emits one ``cvt``. Packing forms: ``ptx.cvt.pack(hi, lo, "bf16x2")`` (``cvt.rn.bf16x2.f32 d,
hi, lo``; also e4m3x2, e5m2x2, e2m3x2, e3m2x2, e2m1x2, ue8m0x2, and ``rnd="rs", rbits=r``
stochastic rounding), ``ptx.cvt.pack4(v4, "e4m3x4", rbits)``, ``ptx.cvt.unpack(x2, "e4m3x2")``
(to f16x2 / bf16x2), ``ptx.cvt.int_pack(a, b, "u8", c)`` (``cvt.pack.sat``)."""
from __future__ import annotations

import sys
import types as _types

from ...errors import PtxTypeError, PtxValueError
from ...isa.common import RNDI
from ..context import user_loc
from ..values import Special, materialize
from ._wrap import build_mods, emit, new, operand_type, vec

_PACKED_DST = {"f16x2": "b32", "bf16x2": "b32", "e4m3x2": "b16", "e5m2x2": "b16",
               "e2m3x2": "b16", "e3m2x2": "b16", "e2m1x2": "e2m1x2", "ue8m0x2": "b16",
               "tf32": "b32", "e4m3x4": "b32", "e5m2x4": "b32"}


def _tname(t):
    return t.name if hasattr(t, "name") else str(t).lstrip(".")


def _src_mod(x):
    t = operand_type(x)
    if t is None:
        raise PtxTypeError(f"ptx.cvt: the source must be a register, got {x!r}", loc=user_loc())
    if t.kind == "bits":
        return f".u{t.bits}" if t.bits != 16 else ".u16"
    return t.ptx


def cvt(x, to, *, rnd=None, ftz: bool = False, sat: bool = False, relu: bool = False,
        satfinite: bool = False, frm=None, out=None, pred=None):
    """``cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.to.from d, x``; ``frm=`` overrides the
    source type (e.g. ``"e4m3x2"`` for a b16 register)."""
    if isinstance(x, Special):
        x = materialize(x)
    dt = "." + _tname(to)
    st = "." + _tname(frm) if frm is not None else _src_mod(x)
    r = None if rnd is None else "." + str(rnd).lstrip(".")
    kw = {"dtype": dt, "atype": st, "ftz": ftz, "relu": relu}
    if relu or satfinite or dt[1:] in _PACKED_DST or st[1:] in _PACKED_DST:
        kw.update(rnd=r, sat=".satfinite" if satfinite else (".sat" if sat else None))
        try:
            mods = build_mods("ptx.cvt", "cvt", kw)
        except PtxValueError:
            if relu or satfinite:
                raise
            kw.pop("rnd")
            kw["frnd" if r not in RNDI else "irnd"] = r
            mods = build_mods("ptx.cvt", "cvt", kw)
    else:
        kw.pop("relu")
        kw["irnd" if r in RNDI else "frnd"] = r
        kw["sat"] = ".sat" if sat else None
        try:
            mods = build_mods("ptx.cvt", "cvt", kw)
        except PtxValueError as first:
            # f32 -> bf16 takes only .rn/.rz: the narrowing form's ``rnd`` group
            kw.pop("irnd", None)
            kw.pop("frnd", None)
            kw["rnd"] = r
            try:
                mods = build_mods("ptx.cvt", "cvt", kw)
            except PtxValueError:
                raise first from None
    out = out or new(_PACKED_DST.get(dt[1:], dt[1:]))
    emit("cvt" + "".join(mods), (out, x), pred, typed=True)
    return out


def pack(hi, lo, to, *, rnd="rn", relu: bool = False, satfinite=None, rbits=None, out=None,
         pred=None):
    """Two f32 values into one packed register: ``cvt.rnd{.relu}{.satfinite}.to.f32 d, hi,
    lo`` (hi lands in the upper half). fp8/fp6/fp4 need satfinite (default on for them);
    ``rnd="rs"`` with ``rbits`` is stochastic rounding (f16x2/bf16x2, sm_100a)."""
    t = _tname(to)
    if satfinite is None:
        satfinite = t not in ("f16x2", "bf16x2") and not t.startswith("ue8m0")
    kw = {"rnd": rnd, "relu": relu, "sat": ".satfinite" if satfinite else None,
          "dtype": "." + t, "atype": ".f32"}
    mods = build_mods("ptx.cvt.pack", "cvt", kw)
    out = out or new(_PACKED_DST.get(t, "b32"))
    ops = (out, hi, lo) + ((rbits,) if rbits is not None else ())
    emit("cvt" + "".join(mods), ops, pred, typed=True)
    return out


def pack4(values, to, rbits, *, relu: bool = False, out=None, pred=None):
    """``cvt.rs{.relu}.satfinite.e4m3x4|e5m2x4.f32 d, {a, b, c, e}, rbits`` (sm_100a)."""
    t = _tname(to)
    mods = build_mods("ptx.cvt.pack4", "cvt", {"rnd": "rs", "relu": relu, "sat": ".satfinite",
                                                "dtype": "." + t, "atype": ".f32"})
    if len(values) != 4:
        raise PtxValueError(f"ptx.cvt.pack4: values must be 4 f32 registers, got {len(values)}",
                            loc=user_loc())
    out = out or new("b32")
    emit("cvt" + "".join(mods), (out, vec(values), rbits), pred, typed=True)
    return out


def unpack(x, frm, *, to="f16x2", relu: bool = False, out=None, pred=None):
    """A packed narrow pair to f16x2 (or bf16x2 from ue8m0x2): ``cvt.rn{.relu}.f16x2.frm``."""
    kw = {"rnd": "rn", "relu": relu, "dtype": "." + _tname(to), "atype": "." + _tname(frm)}
    mods = build_mods("ptx.cvt.unpack", "cvt", kw)
    out = out or new("b32")
    emit("cvt" + "".join(mods), (out, x), pred, typed=True)
    return out


def from_f16x2(x, to, *, relu: bool = False, out=None, pred=None):
    """``cvt.rn.satfinite{.relu}.e4m3x2|e5m2x2.f16x2 d, a``."""
    mods = build_mods("ptx.cvt.from_f16x2", "cvt", {"rnd": "rn", "sat": ".satfinite",
                                                     "relu": relu, "dtype": "." + _tname(to),
                                                     "atype": ".f16x2"})
    out = out or new("b16")
    emit("cvt" + "".join(mods), (out, x), pred, typed=True)
    return out


def int_pack(a, b, to, c=None, *, out=None, pred=None):
    """``cvt.pack.sat.to.s32{.b32} d, a, b{, c}``: saturate two s32 into narrow ints and pack
    them (with c, above the bits already in c)."""
    mods = build_mods("ptx.cvt.int_pack", "cvt.pack",
                      {"sat": True, "dtype": "." + _tname(to), "atype": ".s32",
                       "ctype": ".b32" if c is not None else None})
    out = out or new("b32")
    emit("cvt.pack" + "".join(mods), (out, a, b) + ((c,) if c is not None else ()), pred, typed=True)
    return out


def convert(dst_type, src_type, dst, src, *, rounding=None, ftz: bool = False, sat: bool = False,
            pred=None):
    """The documented explicit form ``ptx.cvt(dst_type, src_type, dst, src, rounding=)``:
    ``cvt[.rounding][.ftz][.sat].<dst>.<src> dst, src;`` (``.bN`` types convert as
    ``.uN``); returns ``dst``."""
    from .generic import emit_inst

    def name(t):
        n = _tname(t)
        return f"u{n[1:]}" if n[0] == "b" and n[1:].isdigit() else n

    mods = ("." + str(rounding).lstrip(".") if rounding else "") + (".ftz" if ftz else "") + \
        (".sat" if sat else "")
    emit_inst(f"cvt{mods}.{name(dst_type)}.{name(src_type)}", (dst, src), pred, user_loc())
    return dst


class _CallableModule(_types.ModuleType):
    def __call__(self, *args, **kw):
        from .scalar_ops import is_type

        if len(args) == 4 and is_type(args[0]) and is_type(args[1]):
            return convert(*args, **kw)
        return cvt(*args, **kw)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["cvt", "convert", "pack", "pack4", "unpack", "from_f16x2", "int_pack"]
