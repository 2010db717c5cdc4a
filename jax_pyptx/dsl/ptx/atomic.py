"""``ptx.atomic``: ``atom`` and ``red`` with every operation, type, memory order and scope.

``old = ptx.atomic.atom("add", ptx.addr(p), v, space="global", sem="relaxed", scope="gpu")``;
``ptx.atomic.atom("cas", a, cmp, new)``; ``ptx.atomic.red("add", a, v)``; a RegArray value is
a vector atomic (``.v2/.v4/.v8`` f16/bf16/f32 adds, global only). f16/bf16 adds get
``.noftz`` as the ISA requires. ``policy=`` adds ``.L2::cache_hint``.
"""
from __future__ import annotations

from ..values import RegArray
from ._wrap import addr as _addr, build_mods, choice, dtype, emit, new, new_array, operand_type

OPS = (".and", ".or", ".xor", ".cas", ".exch", ".add", ".inc", ".dec", ".min", ".max")
_HALF = ("f16", "f16x2", "bf16", "bf16x2")


def _mods(fn, name, op, t, *, sem, scope, space, policy, n):
    op = choice(fn, "op", op, OPS)
    tn = t.name
    if op in (".and", ".or", ".xor", ".exch", ".cas") and t.kind != "bits":
        tn = f"b{t.bits}"
    kw = {"sem": sem, "scope": scope, "space": space, "op": op, "hint": policy is not None,
          "type": "." + tn, "vec": f".v{n}" if n else None,
          "noftz": tn in _HALF}
    return build_mods(fn, name, kw)


def atom(op, address, value, c=None, *, type=None, sem=None, scope=None, space=None,
         policy=None, out=None, pred=None):
    """``atom{.sem}{.scope}{.space}.op{.noftz}{.L2::cache_hint}{.vN}.type d, [a], b{, c}``;
    returns the old value (``cas`` takes the compare value ``value`` and the new value ``c``)."""
    t = dtype(type or operand_type(value))
    n = len(value) if isinstance(value, (RegArray, list, tuple)) else 0
    mods = _mods("ptx.atomic.atom", "atom", op, t, sem=sem, scope=scope, space=space,
                 policy=policy, n=n)
    if out is None:
        out = new_array(t, n) if n else new(t)
    ops = (out, _addr(address, "ptx.atomic.atom"), value) + ((c,) if c is not None else ()) + \
        ((policy,) if policy is not None else ())
    emit("atom" + "".join(mods), ops, pred)
    return out


def red(op, address, value, *, type=None, sem=None, scope=None, space=None, policy=None,
        pred=None):
    """``red{.sem}{.scope}{.space}.op{.noftz}{.L2::cache_hint}{.vN}.type [a], b``."""
    t = dtype(type or operand_type(value))
    n = len(value) if isinstance(value, (RegArray, list, tuple)) else 0
    mods = _mods("ptx.atomic.red", "red", op, t, sem=sem, scope=scope, space=space,
                 policy=policy, n=n)
    ops = (_addr(address, "ptx.atomic.red"), value) + ((policy,) if policy is not None else ())
    emit("red" + "".join(mods), ops, pred)


def red_async(op, address, value, mbar, *, type=None, pred=None):
    """``red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type
    [a], b, [mbar]``: a reduction into a peer CTA's shared memory (sm_90)."""
    t = dtype(type or operand_type(value))
    op = choice("ptx.atomic.red_async", "op", op, (".inc", ".dec", ".min", ".max", ".add",
                                                   ".and", ".or", ".xor"))
    tn = "." + (f"b{t.bits}" if op in (".and", ".or", ".xor") else t.name)
    mods = build_mods("ptx.atomic.red_async", "red.async", {
        "sem": ".relaxed", "scope": ".cluster", "space": ".shared::cluster",
        "completion": ".mbarrier::complete_tx::bytes", "op": op, "type": tn})
    emit("red.async" + "".join(mods), (_addr(address), value, _addr(mbar)), pred)


__all__ = ["atom", "red", "red_async"]
