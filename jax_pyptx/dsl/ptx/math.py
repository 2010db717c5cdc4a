"""``ptx.math``: arithmetic, one PTX instruction per call, modifiers as keywords.

``d = ptx.math.fma(a, b, c, rnd="rn", ftz=True)`` emits ``fma.rn.ftz.f32 d, a, b, c``. The
instruction type comes from the first register operand (``type=`` overrides: ``"f16x2"``,
``"u16x2"``, ``"f32x2"``); the destination is a new register unless ``out=`` names one. Options
are the ISA's modifier groups: ``rnd`` (rn/rz/rm/rp), ``ftz``, ``sat``, ``mode`` (lo/hi/wide,
approx/full), ``relu``, ``nan`` (NaN), ``xorsign``/``abs``, ``oob``, ``cc``. Every call is
validated against the ISA table, so an option the instruction does not have for that type
raises with the accepted forms listed.
"""
from __future__ import annotations

from ...errors import PtxTypeError, PtxValueError
from ...types import by_name, pred as pred_t
from ..context import user_loc
from ..values import Special, materialize
from ._wrap import build_mods, dtype, emit, new, operand_type, reg_type

_INT_BITS = {"bits": "u"}
_WIDE = {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}


def _type_mod(fn, srcs, type_):
    if type_ is not None:
        return "." + (type_.name if hasattr(type_, "name") else str(type_).lstrip("."))
    for s in srcs:
        t = operand_type(s)
        if t is not None:
            if t.kind == "bits":
                return f".u{t.bits}"
            return t.ptx
    raise PtxTypeError(f"{fn}: cannot infer the instruction type from Python numbers; pass "
                       f"type= (e.g. type=f32)", loc=user_loc())


def _srcs(srcs):
    return [materialize(s) if isinstance(s, Special) else s for s in srcs]


def _op(name, nsrc, int_default_mode=None, dest=None, doc=""):
    fn_name = f"ptx.math.{name.replace('.', '_')}"

    def fn(*srcs, out=None, type=None, pred=None, **opts):
        if len(srcs) != nsrc:
            raise PtxTypeError(f"{fn_name} takes {nsrc} source operand"
                               f"{'s' if nsrc > 1 else ''}, got {len(srcs)}", loc=user_loc())
        srcs = _srcs(srcs)
        tmod = _type_mod(fn_name, srcs, type)
        kw = dict(opts)
        if int_default_mode and "mode" not in kw and tmod[1] in "us" and "x2" not in tmod:
            kw["mode"] = int_default_mode
        kw["type"] = tmod
        mods = build_mods(fn_name, name, kw)
        if out is None:
            if dest is not None:
                dt = dest(tmod, kw)
            elif kw.get("mode") in ("wide", ".wide"):
                dt = by_name(_WIDE[tmod[1:]])
            else:
                dt = reg_type(tmod)
            out = new(dt)
        emit(name + "".join(mods), (out, *srcs), pred, typed=True)
        return out

    fn.__name__ = name.replace(".", "_")
    fn.__qualname__ = fn.__name__
    fn.__doc__ = doc or f"``{name}``: see the ISA table (``jax_pyptx.isa.forms_for({name!r})``)."
    return fn


add = _op("add", 2, doc="``add{.rnd}{.ftz}{.sat}.type d, a, b`` (also ``cc=True``, packed "
                        "f16x2/bf16x2/u16x2/f32x2 via type=, mixed ``type='f32', atype='f16'``)")
sub = _op("sub", 2, doc="``sub``: as add")
addc = _op("addc", 2, doc="``addc{.cc}.type d, a, b`` (carry in)")
subc = _op("subc", 2, doc="``subc{.cc}.type d, a, b``")
mul = _op("mul", 2, int_default_mode="lo",
          doc="``mul.lo|hi|wide.type`` for integers (default lo), ``mul{.rnd}{.ftz}{.sat}`` float")
mad = _op("mad", 3, int_default_mode="lo", doc="``mad.lo|hi|wide.type`` / ``mad.rnd.f32``")
madc = _op("madc", 3, doc="``madc.lo|hi{.cc}.type``")
mul24 = _op("mul24", 2, int_default_mode="lo")
mad24 = _op("mad24", 3, int_default_mode="lo")
sad = _op("sad", 3)
fma = _op("fma", 3, doc="``fma.rnd{.ftz}{.sat}.type`` (rnd required; .relu/.oob for f16/bf16)")
div = _op("div", 2, doc="integer ``div.type``; float ``div.approx|full|rnd{.ftz}.f32``")
rem = _op("rem", 2)
abs = _op("abs", 1)
neg = _op("neg", 1)
min = _op("min", 2, doc="``min{.relu}{.ftz}{.NaN}{.xorsign.abs}.type`` (three f32 sources "
                        "with min3)")
max = _op("max", 2)
min3 = _op("min", 3, doc="``min{.ftz}{.NaN}{.abs}.f32 d, a, b, c`` (sm_100)")
max3 = _op("max", 3, doc="``max{.ftz}{.NaN}{.abs}.f32 d, a, b, c`` (sm_100)")
copysign = _op("copysign", 2)
rcp = _op("rcp", 1, doc="``rcp.approx{.ftz}.f32`` (mode='approx') or ``rcp.rnd{.ftz}.f32``")
sqrt = _op("sqrt", 1)
rsqrt = _op("rsqrt", 1)
ex2 = _op("ex2", 1)
lg2 = _op("lg2", 1)
sin = _op("sin", 1)
cos = _op("cos", 1)
tanh = _op("tanh", 1)
testp = _op("testp", 1, dest=lambda t, kw: pred_t,
            doc="``testp.op.type p, a``; op = finite, infinite, number, notanumber, normal, "
                "subnormal")


def dp4a(a, b, c, *, out=None, atype=None, btype=None, pred=None):
    """``dp4a.atype.btype d, a, b, c``: four-way byte dot product plus accumulate."""
    at = "." + dtype(atype or operand_type(a)).name
    bt = "." + dtype(btype or operand_type(b)).name
    mods = build_mods("ptx.math.dp4a", "dp4a", {"atype": at, "btype": bt})
    out = out or new("u32" if at == bt == ".u32" else "s32")
    emit("dp4a" + "".join(mods), (out, a, b, c), pred, typed=True)
    return out


def dp2a(a, b, c, *, mode="lo", out=None, atype=None, btype=None, pred=None):
    """``dp2a.lo|hi.atype.btype d, a, b, c``."""
    at = "." + dtype(atype or operand_type(a)).name
    bt = "." + dtype(btype or operand_type(b)).name
    mods = build_mods("ptx.math.dp2a", "dp2a", {"mode": mode, "atype": at, "btype": bt})
    out = out or new("u32" if at == bt == ".u32" else "s32")
    emit("dp2a" + "".join(mods), (out, a, b, c), pred, typed=True)
    return out


def approx(name: str, x, *, ftz: bool = False, out=None):
    """``name.approx{.ftz}.type``: the fast special-function unit form of rcp, sqrt, rsqrt,
    ex2, lg2, sin, cos, tanh."""
    fns = {"rcp": rcp, "sqrt": sqrt, "rsqrt": rsqrt, "ex2": ex2, "lg2": lg2, "sin": sin,
           "cos": cos, "tanh": tanh}
    if name not in fns:
        raise PtxValueError(f"ptx.math.approx: name={name!r} is not allowed; allowed: "
                            f"{', '.join(fns)}", loc=user_loc())
    kw = {"mode": "approx"}
    if ftz:
        kw["ftz"] = True
    return fns[name](x, out=out, **kw)


__all__ = ["add", "sub", "addc", "subc", "mul", "mad", "madc", "mul24", "mad24", "sad", "fma",
           "div", "rem", "abs", "neg", "min", "max", "min3", "max3", "copysign", "rcp", "sqrt",
           "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "testp", "dp4a", "dp2a", "approx"]
