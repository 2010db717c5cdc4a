"""``ptx.warp``: warp-level primitives, one instruction per call, plus reduction helpers that
say exactly what they emit.

``ptx.warp.shfl("bfly", x, 16)``, ``shfl_up/down/bfly/idx`` (with ``width`` for sub-warp
segments), ``vote("any", p)``, ``ballot(p)``, ``match_any(x)``, ``match_all(x)``,
``redux("add", x)``, ``elect()``, ``activemask()``; helpers ``reduce(x, "add")`` (5 x
``shfl.sync.bfly.b32`` + 5 x the operation) and ``reduce_redux`` (one ``redux.sync``).
"""
from __future__ import annotations

from ...errors import PtxValueError
from ...ir.nodes import PredPair, Sink
from ...types import b32, pred as pred_t, u32
from ..context import user_loc
from ..values import Special, as_operand, materialize
from ._wrap import build_mods, choice, emit, int_choice, new, operand_type

FULL = 0xFFFFFFFF
MODES = (".up", ".down", ".bfly", ".idx")


def _clamp(mode, width):
    int_choice("ptx.warp.shfl", "width", width, (1, 2, 4, 8, 16, 32))
    seg = (32 - width) << 8
    return seg if mode == ".up" else seg | 0x1F


def shfl(mode, value, b, c=None, *, mask=FULL, width: int = 32, with_pred: bool = False,
         out=None, pred=None):
    """``shfl.sync.mode.b32 d{|p}, a, b, c, membermask``. ``c`` defaults to the clamp/segment
    value for ``width`` (``((32 - width) << 8) | 31``, or ``(32 - width) << 8`` for up).
    Returns d, or (d, p) with ``with_pred``."""
    m = choice("ptx.warp.shfl", "mode", mode, MODES)
    if isinstance(value, Special):
        value = materialize(value)
    if c is None:
        c = _clamp(m, width)
    t = operand_type(value)
    out = out or new(t if t is not None and t.bits == 32 else b32)
    if with_pred:
        p = new(pred_t)
        emit(f"shfl.sync{m}.b32", (PredPair(as_operand(out), as_operand(p)), value, b, c, mask),
             pred)
        return out, p
    emit(f"shfl.sync{m}.b32", (out, value, b, c, mask), pred)
    return out


def shfl_up(value, delta, *, width=32, mask=FULL, pred=None):
    """``shfl.sync.up.b32 d, value, delta, c, mask;``: each lane reads ``value`` from lane
    ``- delta`` (within segments of ``width`` lanes); returns d.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     v = ptx.warp.shfl_up(reg.scalar(f32), 1)
        >>> t.lines()
        ['shfl.sync.up.b32 %f1, %f0, 1, 0, 4294967295;']
    """
    return shfl("up", value, delta, width=width, mask=mask, pred=pred)


def shfl_down(value, delta, *, width=32, mask=FULL, pred=None):
    """``shfl.sync.down.b32 d, value, delta, c, mask;``: each lane reads ``value`` from lane
    ``+ delta`` (within segments of ``width`` lanes); returns d.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     v = ptx.warp.shfl_down(reg.scalar(f32), 16)
        >>> t.lines()
        ['shfl.sync.down.b32 %f1, %f0, 16, 31, 4294967295;']
    """
    return shfl("down", value, delta, width=width, mask=mask, pred=pred)


def shfl_bfly(value, lane_mask, *, width=32, mask=FULL, pred=None):
    """``shfl.sync.bfly.b32 d, value, lane_mask, c, mask;``: each lane reads ``value`` from lane
    ``^ lane_mask`` (a butterfly, for reductions); returns d.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     v = ptx.warp.shfl_bfly(reg.scalar(f32), 8, width=16)
        >>> t.lines()
        ['shfl.sync.bfly.b32 %f1, %f0, 8, 4127, 4294967295;']
    """
    return shfl("bfly", value, lane_mask, width=width, mask=mask, pred=pred)


def shfl_idx(value, lane, *, width=32, mask=FULL, pred=None):
    """``shfl.sync.idx.b32 d, value, lane, c, mask;``: every lane reads ``value`` from lane
    ``lane`` (a broadcast); returns d.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     v = ptx.warp.shfl_idx(reg.scalar(u32), 0)
        >>> t.lines()
        ['shfl.sync.idx.b32 %r1, %r0, 0, 31, 4294967295;']
    """
    return shfl("idx", value, lane, width=width, mask=mask, pred=pred)


def vote(mode, p, *, mask=FULL, out=None, pred=None):
    """``vote.sync.all|any|uni.pred d, {!}p, membermask``."""
    m = choice("ptx.warp.vote", "mode", mode, (".all", ".any", ".uni"))
    out = out or new(pred_t)
    emit(f"vote.sync{m}.pred", (out, p, mask), pred)
    return out


def ballot(p, *, mask=FULL, out=None, pred=None):
    """``vote.sync.ballot.b32 d, {!}p, membermask``."""
    out = out or new(b32)
    emit("vote.sync.ballot.b32", (out, p, mask), pred)
    return out


def match_any(x, *, mask=FULL, out=None, pred=None):
    """``match.any.sync.b32|b64 d, a, membermask``: lanes holding the same value."""
    t = operand_type(x)
    out = out or new(b32)
    emit(f"match.any.sync.b{t.bits if t is not None else 32}", (out, x, mask), pred)
    return out


def match_all(x, *, mask=FULL, with_pred: bool = True, pred=None):
    """``match.all.sync.b32|b64 d|p, a, membermask``; returns (d, p) (``with_pred=False``:
    ``match.all.sync.type d, a, membermask``, returns d)."""
    t = operand_type(x)
    op = f"match.all.sync.b{t.bits if t is not None else 32}"
    d = new(b32)
    if not with_pred:
        emit(op, (d, x, mask), pred)
        return d
    p = new(pred_t)
    emit(op, (PredPair(as_operand(d), as_operand(p)), x, mask), pred)
    return d, p


def redux(op, x, *, mask=FULL, abs: bool = False, nan: bool = False, type=None, out=None,
          pred=None):
    """``redux.sync.op{.abs}{.NaN}.type d, a, membermask`` (add/min/max u32|s32, and/or/xor
    b32; min/max f32 on sm_100a)."""
    if isinstance(x, Special):
        x = materialize(x)
    o = choice("ptx.warp.redux", "op", op, (".add", ".min", ".max", ".and", ".or", ".xor"))
    t = type or operand_type(x)
    tn = "." + (t.name if hasattr(t, "name") else str(t).lstrip("."))
    if o in (".and", ".or", ".xor"):
        tn = ".b32"
    elif tn == ".b32":
        tn = ".u32"
    mods = build_mods("ptx.warp.redux", "redux.sync", {"op": o, "abs": abs, "nan": nan,
                                                       "type": tn})
    out = out or new(tn[1:])
    emit("redux.sync" + "".join(mods), (out, x, mask), pred)
    return out


def elect(*, mask=FULL, pred=None):
    """``elect.sync d|p, membermask``: one leader lane; returns (leader lane id, is_leader)."""
    d, p = new(u32), new(pred_t)
    emit("elect.sync", (PredPair(as_operand(d), as_operand(p)), mask), pred)
    return d, p


def elect_one(*, mask=FULL, pred=None):
    """``elect.sync _|p, membermask``; returns only the predicate."""
    p = new(pred_t)
    emit("elect.sync", (PredPair(Sink(), as_operand(p)), mask), pred)
    return p


def activemask(*, out=None, pred=None):
    """``activemask.b32 d``."""
    out = out or new(b32)
    emit("activemask.b32", (out,), pred)
    return out


def reduce(x, op="add", *, width: int = 32, mask=FULL):
    """Butterfly reduction over ``width`` lanes; every lane gets the result. Emits, for
    ``s = width/2, ..., 1``: ``shfl.sync.bfly.b32 t, x, s, 0x1f, mask`` then one
    ``add``/``min``/``max``/``and``/``or``/``xor`` of the register type (log2(width) pairs)."""
    from . import bits, math as pmath

    fns = {"add": pmath.add, "min": pmath.min, "max": pmath.max, "and": bits.and_,
           "or": bits.or_, "xor": bits.xor}
    if op not in fns:
        raise PtxValueError(f"ptx.warp.reduce: op={op!r} is not allowed; allowed: "
                            f"{', '.join(fns)}", loc=user_loc())
    int_choice("ptx.warp.reduce", "width", width, (2, 4, 8, 16, 32))
    if isinstance(x, Special):
        x = materialize(x)
    acc = x
    s = width // 2
    while s:
        other = shfl("bfly", acc, s, 0x1F, mask=mask)
        acc = fns[op](acc, other)
        s //= 2
    return acc


def reduce_redux(x, op="add", *, mask=FULL):
    """One ``redux.sync.op.type`` (sm_80; integer, or f32 min/max on sm_100a)."""
    return redux(op, x, mask=mask)


__all__ = ["shfl", "shfl_up", "shfl_down", "shfl_bfly", "shfl_idx", "vote", "ballot",
           "match_any", "match_all", "redux", "elect", "elect_one", "activemask", "reduce",
           "reduce_redux", "FULL"]


_REDUCE_TYPES = ("b32", "u32", "s32", "f32", "tf32")


def _reduce_in_place(fn, op, val, width, mask):
    from ...errors import PtxTypeError
    from ..values import Register

    if isinstance(val, Special):
        raise PtxTypeError(f"{fn}: reduces a register in place; {val.ir.name} is a special "
                           f"register (copy it with reg.from_ first)", loc=user_loc(3))
    if not isinstance(val, Register) or val.type.name not in _REDUCE_TYPES:
        shown = val.type.name if isinstance(val, Register) else repr(val)
        raise PtxTypeError(f"{fn}: val must be a {'/'.join(_REDUCE_TYPES)} register, got "
                           f"{shown}", loc=user_loc(3))
    int_choice(fn, "width", width, (2, 4, 8, 16, 32))
    t = val.type
    if t.name in ("f32", "tf32"):
        ot = ".f32"
    elif op == "add" or t.name == "b32":
        ot = ".u32" if t.name != "s32" else ".s32"
    else:
        ot = "." + t.name
    s = width // 2
    while s:
        other = new(t)
        emit("shfl.sync.bfly.b32", (other, val, s, 0x1F, mask))
        emit(f"{op}{ot}", (val, val, other))
        s //= 2


def reduce_sum(val, *, width: int = 32, mask=FULL):
    """In place: ``val`` becomes the sum over ``width`` lanes (a butterfly: for
    s = width/2 ... 1, ``shfl.sync.bfly.b32 t, val, s, 31, mask;`` then
    ``add.f32|u32|s32 val, val, t;``). Returns None."""
    _reduce_in_place("ptx.warp.reduce_sum", "add", val, width, mask)


def reduce_max(val, *, width: int = 32, mask=FULL):
    """In place: ``val`` becomes the maximum over ``width`` lanes (``max.f32|u32|s32``)."""
    _reduce_in_place("ptx.warp.reduce_max", "max", val, width, mask)


def reduce_min(val, *, width: int = 32, mask=FULL):
    """In place: ``val`` becomes the minimum over ``width`` lanes (``min.f32|u32|s32``)."""
    _reduce_in_place("ptx.warp.reduce_min", "min", val, width, mask)


__all__ += ["reduce_sum", "reduce_max", "reduce_min"]
