"""``ptx.bits``: logic and bit manipulation, one instruction per call.

``ptx.bits.lop3(a, b, c, lut)`` (``lut`` from :func:`lut3`), ``prmt``, ``bfe``, ``bfi``,
``bfind``, ``popc``, ``clz``, ``brev``, ``shf``, ``fns``, ``bmsk``, ``szext``, ``and_``, ``or_``,
``xor``, ``not_``, ``cnot``, ``shl``, ``shr``. Results are new registers unless ``out=``.
"""
from __future__ import annotations

from ...errors import PtxTypeError
from ...ir.nodes import PredPair
from ...types import b32, pred as pred_t, u32
from ..context import user_loc
from ..values import Special, as_operand, materialize
from ._wrap import build_mods, choice, emit, int_range, new, operand_type, reg_type

A, B, C = 0xF0, 0xCC, 0xAA


def lut3(f) -> int:
    """The lop3 immLut for ``f(a, b, c)`` written with Python bit operators on the constants
    0xF0, 0xCC, 0xAA: ``lut3(lambda a, b, c: (a & b) ^ c)`` is 0x6A."""
    return f(A, B, C) & 0xFF


def _bits_mod(fn, x, type_, allowed_kind="b"):
    if type_ is not None:
        return "." + (type_.name if hasattr(type_, "name") else str(type_).lstrip("."))
    t = operand_type(x)
    if t is None:
        raise PtxTypeError(f"{fn}: pass type= for an immediate operand", loc=user_loc())
    if t.kind == "pred":
        return ".pred"
    if allowed_kind == "b":
        return f".b{max(t.bits, 16)}"
    return t.ptx if t.kind in ("signed", "unsigned") else f".u{t.bits}"


def _simple(name, nsrc, kind="b", dest=None):
    fn_name = f"ptx.bits.{name}"

    def fn(*srcs, out=None, type=None, pred=None, **opts):
        if len(srcs) != nsrc:
            raise PtxTypeError(f"{fn_name} takes {nsrc} source operands, got {len(srcs)}",
                               loc=user_loc())
        srcs = [materialize(s) if isinstance(s, Special) else s for s in srcs]
        tmod = _bits_mod(fn_name, srcs[0], type, kind)
        mods = build_mods(fn_name, name, {**opts, "type": tmod})
        out = out or new(dest or (pred_t if tmod == ".pred" else reg_type(tmod)))
        emit(name + "".join(mods), (out, *srcs), pred, typed=True)
        return out

    fn.__name__ = name
    fn.__doc__ = _simple_doc(name, nsrc, kind)
    return fn


def _simple_doc(name: str, nsrc: int, kind: str) -> str:
    """The generated docstring of ``ptx.bits.<name>``: the PTX it emits and an example."""
    t = "u32" if kind == "us" else "b32"
    srcs = ", ".join(["a"] * nsrc)
    regs = ", ".join(["%r0"] * nsrc)
    return (f"``{name}.<type> out, {', '.join('abcd'[:nsrc])};`` (the type from the first "
            f"source, or ``type=``); returns ``out`` (a fresh register unless given).\n\n"
            f"Examples:\n"
            f"    >>> from jax_pyptx import ptx, reg\n"
            f"    >>> from jax_pyptx.types import {t}\n"
            f"    >>> from jax_pyptx.dsl.trace_scope import trace_scope\n"
            f"    >>> with trace_scope() as t:\n"
            f"    ...     a = reg.scalar({t})\n"
            f"    ...     _ = ptx.bits.{name.rstrip('_')}{'_' if name in ('and', 'or', 'not') else ''}"
            f"({srcs})\n"
            f"    >>> t.lines()\n"
            f"    ['{name}.{t[0] + '32'} %r1, {regs};']\n")


and_ = _simple("and", 2)
or_ = _simple("or", 2)
xor = _simple("xor", 2)
not_ = _simple("not", 1)
cnot = _simple("cnot", 1)
shl = _simple("shl", 2)
shr = _simple("shr", 2, kind="us")
brev = _simple("brev", 1)
popc = _simple("popc", 1, dest=u32)
clz = _simple("clz", 1, dest=u32)
bfe = _simple("bfe", 3, kind="us")
bfi = _simple("bfi", 4)


def bfind(a, *, shiftamt: bool = False, out=None, type=None, pred=None):
    """``bfind{.shiftamt}.type d, a``: position of the most significant non-sign bit."""
    tmod = _bits_mod("ptx.bits.bfind", a, type, "us")
    mods = build_mods("ptx.bits.bfind", "bfind", {"shiftamt": shiftamt, "type": tmod})
    out = out or new(u32)
    emit("bfind" + "".join(mods), (out, a), pred, typed=True)
    return out


def lop3(a, b, c, lut: int, *, out=None, pred=None):
    """``lop3.b32 d, a, b, c, immLut`` (``lut`` 0..255; see :func:`lut3`)."""
    int_range("ptx.bits.lop3", "lut", lut, 0, 255)
    out = out or new(b32)
    emit("lop3.b32", (out, a, b, c, lut), pred, typed=True)
    return out


def lop3_pred(a, b, c, lut: int, q, *, bool_op: str = "or", out=None, p_out=None, pred=None):
    """``lop3.or|and.b32 d|p, a, b, c, immLut, q``: also a predicate, ``p = (d != 0) op q``.
    Returns ``(d, p)``."""
    op = choice("ptx.bits.lop3_pred", "bool_op", bool_op, (".or", ".and"))
    int_range("ptx.bits.lop3_pred", "lut", lut, 0, 255)
    out = out or new(b32)
    p_out = p_out or new(pred_t)
    emit(f"lop3{op}.b32", (PredPair(as_operand(out), as_operand(p_out)), a, b, c, lut, q), pred, typed=True)
    return out, p_out


def prmt(a, b, c, *, mode=None, out=None, pred=None):
    """``prmt.b32{.mode} d, a, b, c`` (mode: f4e, b4e, rc8, ecl, ecr, rc16)."""
    mods = build_mods("ptx.bits.prmt", "prmt", {"type": ".b32", "mode": mode})
    out = out or new(b32)
    emit("prmt" + "".join(mods), (out, a, b, c), pred, typed=True)
    return out


def shf(a, b, c, *, dir: str = "l", mode: str = "clamp", out=None, pred=None):
    """``shf.l|r.clamp|wrap.b32 d, a, b, c``: funnel shift of the pair b:a by c."""
    mods = build_mods("ptx.bits.shf", "shf", {"dir": dir, "mode": mode, "type": ".b32"})
    out = out or new(b32)
    emit("shf" + "".join(mods), (out, a, b, c), pred, typed=True)
    return out


def fns(mask, base, offset, *, out=None, pred=None):
    """``fns.b32 d, mask, base, offset``: find the n-th set bit."""
    out = out or new(b32)
    emit("fns.b32", (out, mask, base, offset), pred, typed=True)
    return out


def bmsk(a, b, *, mode: str = "clamp", out=None, pred=None):
    """``bmsk.clamp|wrap.b32 d, a, b``: a mask of b bits from position a."""
    mods = build_mods("ptx.bits.bmsk", "bmsk", {"mode": mode, "type": ".b32"})
    out = out or new(b32)
    emit("bmsk" + "".join(mods), (out, a, b), pred, typed=True)
    return out


def szext(a, b, *, mode: str = "clamp", signed: bool = False, out=None, pred=None):
    """``szext.clamp|wrap.u32|s32 d, a, b``: sign/zero-extend the low b bits of a."""
    t = ".s32" if signed else ".u32"
    mods = build_mods("ptx.bits.szext", "szext", {"mode": mode, "type": t})
    out = out or new(t[1:])
    emit("szext" + "".join(mods), (out, a, b), pred, typed=True)
    return out


__all__ = ["lut3", "and_", "or_", "xor", "not_", "cnot", "shl", "shr", "brev", "popc", "clz",
           "bfe", "bfi", "bfind", "lop3", "lop3_pred", "prmt", "shf", "fns", "bmsk", "szext"]
