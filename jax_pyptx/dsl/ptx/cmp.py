"""``ptx.cmp``: comparisons and selection. ``p = ptx.cmp.setp("lt", a, b)``,
``ptx.cmp.setp("ge", a, b, bool_op="and", c=q)``, ``ptx.cmp.setp_x2("lt", h2a, h2b)`` (f16x2 /
bf16x2: two predicates), ``ptx.cmp.set_("lt", a, b, dtype=u32)``, ``ptx.cmp.selp(a, b, p)``,
``ptx.cmp.slct(a, b, c)``."""
from __future__ import annotations

from ...ir.nodes import PredPair
from ...types import pred as pred_t
from ..values import Special, as_operand, materialize
from ._wrap import build_mods, dtype, emit, new, operand_type, reg_type
from .math import _type_mod


def _src(x):
    return materialize(x) if isinstance(x, Special) else x


def _mods(fn, name, cmp, srcs, type_, **kw):
    t = _type_mod(fn, srcs, type_)
    t = {".u8": ".u16", ".s8": ".s16"}.get(t, t)
    return build_mods(fn, name, {"cmp": cmp, "type": t, **kw})


def setp(cmp: str, a, b, *, bool_op=None, c=None, ftz: bool = False, type=None, out=None,
         pred=None):
    """``setp.cmp{.bool}{.ftz}.type p, a, b{, c}``; returns the predicate."""
    a, b = _src(a), _src(b)
    mods = _mods("ptx.cmp.setp", "setp", cmp, (a, b), type, bool=bool_op, ftz=ftz)
    out = out or new(pred_t)
    emit("setp" + "".join(mods), (out, a, b) + ((c,) if bool_op else ()), pred, typed=True)
    return out


def setp_x2(cmp: str, a, b, *, bool_op=None, c=None, ftz: bool = False, type=None, pred=None):
    """``setp.cmp{.bool}{.ftz}.f16x2|bf16x2 p|q, a, b{, c}``: one predicate per half."""
    mods = _mods("ptx.cmp.setp_x2", "setp", cmp, (a, b), type, bool=bool_op, ftz=ftz)
    p, q = new(pred_t), new(pred_t)
    emit("setp" + "".join(mods), (PredPair(as_operand(p), as_operand(q)), a, b) +
         ((c,) if bool_op else ()), pred)
    return p, q


def set_(cmp: str, a, b, *, dtype_=None, bool_op=None, c=None, ftz: bool = False, type=None,
         out=None, pred=None):
    """``set.cmp{.bool}{.ftz}.dtype.stype d, a, b{, c}``: d is all ones (or 1.0) when true."""
    a, b = _src(a), _src(b)
    st = _type_mod("ptx.cmp.set_", (a, b), type)
    dt = "." + dtype(dtype_ or "u32").name
    mods = build_mods("ptx.cmp.set_", "set", {"cmp": cmp, "bool": bool_op, "ftz": ftz,
                                               "dtype": dt, "stype": st})
    out = out or new(reg_type(dt))
    emit("set" + "".join(mods), (out, a, b) + ((c,) if bool_op else ()), pred, typed=True)
    return out


def selp(a, b, p, *, type=None, out=None, pred=None):
    """``selp.type d, a, b, p``: d = p ? a : b."""
    a, b = _src(a), _src(b)
    t = _type_mod("ptx.cmp.selp", (a, b), type)
    mods = build_mods("ptx.cmp.selp", "selp", {"type": t})
    out = out or new(reg_type(t))
    emit("selp" + "".join(mods), (out, a, b, p), pred, typed=True)
    return out


def slct(a, b, c, *, ftz: bool = False, type=None, out=None, pred=None):
    """``slct{.ftz}.dtype.s32|f32 d, a, b, c``: d = c >= 0 ? a : b."""
    a, b = _src(a), _src(b)
    t = _type_mod("ptx.cmp.slct", (a, b), type)
    ct = operand_type(c)
    cmod = ".f32" if ct is not None and ct.kind == "float" else ".s32"
    mods = build_mods("ptx.cmp.slct", "slct", {"ftz": ftz, "dtype": t, "ctype": cmod})
    out = out or new(reg_type(t))
    emit("slct" + "".join(mods), (out, a, b, c), pred, typed=True)
    return out


__all__ = ["setp", "setp_x2", "set_", "selp", "slct"]
