"""``reg``: allocate registers. ``reg.scalar(f32)``, ``reg.array(f32, 8)``,
``reg.from_(ptx.special.tid.x(), u32)``, ``reg.imm(1.0, bf16)``, ``reg.cvt(x, s32)``."""
from __future__ import annotations

from ..errors import PtxTypeError
from ..types import PtxType, by_name
from . import context
from .context import user_loc
from .values import Immediate, Register, RegArray, Special, _mov_type, as_operand


def _type(t) -> PtxType:
    if isinstance(t, PtxType):
        return t
    if isinstance(t, str):
        return by_name(t)
    raise PtxTypeError(f"expected a PTX type such as f32 or 'u32', got {t!r}", loc=user_loc(3))


def scalar(t, init=None) -> Register:
    """A new register of type ``t``; ``init`` (number or register) is moved into it."""
    t = _type(t)
    tr = context.current("reg.scalar")
    r = Register(tr.new_reg(t), tr)
    if init is not None:
        tr.emit("mov", (_mov_type(t),), (r.ir, as_operand(init, t)), loc=user_loc())
    return r


def array(t, n: int, init=None) -> RegArray:
    """``n`` registers of type ``t`` (a vector operand when passed whole)."""
    t = _type(t)
    if not isinstance(n, int) or n <= 0:
        raise PtxTypeError(f"reg.array: n must be a positive int, got {n!r}", loc=user_loc())
    tr = context.current("reg.array")
    regs = [Register(tr.new_reg(t), tr) for _ in range(n)]
    if init is not None:
        loc = user_loc()
        for r in regs:
            tr.emit("mov", (_mov_type(t),), (r.ir, as_operand(init, t)), loc=loc)
    return RegArray(regs, t)


def from_(src, t) -> Register:
    """A new register of type ``t`` holding ``src`` (special register, register, number).

    Same-width sources are moved bit for bit; a different width needs ``reg.cvt``.
    """
    t = _type(t)
    tr = context.current("reg.from_")
    loc = user_loc()
    if isinstance(src, (Register, Special)) and src.type.bits != t.bits:
        raise PtxTypeError(
            f"reg.from_: {src.ir.name} is {src.type.name} ({src.type.bits}-bit), target type "
            f"{t.name} is {t.bits}-bit; use reg.cvt(x, {t.name})", loc=loc)
    r = Register(tr.new_reg(t), tr)
    mt = _mov_type(t)
    if isinstance(src, (Register, Special)) and src.type is not t:
        mt = f".b{t.bits}" if t.kind != "pred" else ".pred"
    tr.emit("mov", (mt,), (r.ir, as_operand(src, t)), loc=loc)
    return r


def imm(value, t) -> Immediate:
    """A typed immediate; floats are exact bit patterns (``0f3F800000`` for 1.0 f32)."""
    return Immediate(value, _type(t))


def cvt(x, t, rnd: str | None = None, sat: bool = False, ftz: bool = False) -> Register:
    """``cvt`` to type ``t``. Default rounding: float->int ``.rzi`` (truncate, like C),
    int->float and narrowing float->float ``.rn``; ``rnd`` overrides (``"rn"``, ``"rzi"``...)."""
    t = _type(t)
    tr = context.current("reg.cvt")
    loc = user_loc()
    if isinstance(x, Special):
        x = x.value()
    if not isinstance(x, Register):
        raise PtxTypeError(f"reg.cvt: expected a register, got {x!r}", loc=loc)
    s = x.type
    if rnd is None:
        if s.kind == "float" and t.kind != "float":
            rnd = "rzi"
        elif t.kind == "float" and (s.kind != "float" or t.bits < s.bits):
            rnd = "rn"
    mods = []
    if rnd:
        mods.append("." + rnd.lstrip("."))
    if ftz:
        mods.append(".ftz")
    if sat:
        mods.append(".sat")
    st = s if s.kind != "bits" else by_name(f"u{s.bits}")
    dt = t if t.kind != "bits" else by_name(f"u{t.bits}")
    mods += [dt.ptx, st.ptx]
    r = Register(tr.new_reg(t), tr)
    tr.emit("cvt", tuple(mods), (r.ir, x.ir), loc=loc)
    return r


__all__ = ["scalar", "array", "from_", "imm", "cvt"]
