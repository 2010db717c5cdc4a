"""``reg``: allocate registers. ``reg.scalar(f32)``, ``reg.array(f32, 8)``,
``reg.from_(ptx.special.tid.x(), u32)``, ``reg.imm(1.0, bf16)``, ``reg.cvt(x, s32)``.

Examples:
    >>> from jax_pyptx import ptx, reg
    >>> from jax_pyptx.types import f32, u32
    >>> from jax_pyptx.dsl.trace_scope import trace_scope
    >>> with trace_scope() as t:
    ...     i = reg.from_(ptx.special.tid.x(), u32)
    ...     acc = reg.scalar(f32, 0.0)
    >>> t.lines()
    ['mov.u32 %r0, %tid.x;', 'mov.f32 %f0, 0f00000000;']
"""
from __future__ import annotations

from ..errors import PtxTypeError, PtxValueError
from ..types import PtxType, by_name
from . import context
from .context import user_loc
from .values import Immediate, NotPred, PipeRef, Register, RegArray, Special, _mov_type, as_operand

Reg = Register          # the documented class names
NegPred = NotPred


def _type(t) -> PtxType:
    if isinstance(t, PtxType):
        return t
    if isinstance(t, str):
        return by_name(t)
    raise PtxTypeError(f"expected a PTX type such as f32 or 'u32', got {t!r}", loc=user_loc(3))


_REG_TYPES = frozenset(("pred", "b16", "b32", "b64", "b128", "u16", "u32", "u64", "s16", "s32",
                        "s64", "f16", "f16x2", "f32", "f64"))


def _decl_type(t: PtxType) -> PtxType:
    """The declared type of a named register of type ``t``: ``t`` itself where PTX has such
    registers, else the bits of the same width (bf16 in .b16, tf32 and bf16x2 in .b32,
    8-bit integers in .b16, fp8/fp6/fp4 in .b8, as for numbered registers)."""
    from .context import prefix_for

    if t.name in _REG_TYPES:
        return t
    if t.kind in ("float", "packed") and t.bits <= 8 or (t.bits == 8 and t.kind != "pred"):
        return by_name(prefix_for(t)[1])
    return by_name(f"b{t.bits}")


def _declare(tr, t: PtxType, names=(), prefix: str = "", count: int = 0):
    """Declare named registers: a ``.reg`` line at the top of the function, or, inside a
    ``ptx.scope()`` block, at this point of the block, visible until it closes (so the same
    name can be declared again in another block, as PTX allows)."""
    from ..errors import TraceError
    from ..ir.nodes import Reg, RegDecl

    regs = tr.named_regs
    scopes = tr.reg_scopes
    scope = scopes[-1] if scopes and scopes[-1][0] is tr.body else None
    new = list(names) or [f"{prefix}{i}" for i in range(count)]
    for n in new:
        outer = scope is not None and n in regs and n not in scope[1]
        if (n in regs and not outer) or n in tr._counts:
            raise TraceError(f"register name {n!r} is already declared in kernel {tr.name!r}",
                             loc=user_loc(3))
    out = []
    for n in new:
        r = Register(Reg(n, t), tr)
        if scope is not None:
            scope[1].setdefault(n, regs.get(n))         # what the block shadows, if anything
        regs[n] = r
        out.append(r)
    decl = RegDecl(_decl_type(t), names=tuple(names), prefix=prefix, count=count)
    if scope is not None:
        tr.body.append(decl)
        return out
    at = 0
    while at < len(tr.prologue) and type(tr.prologue[at]) is RegDecl:
        at += 1
    tr.prologue.insert(at, decl)
    return out


def _check_name(fn, name):
    import re

    from ..errors import TraceError

    if not isinstance(name, str) or not re.match(r"^%?[A-Za-z_$][A-Za-z0-9_$]*$", name):
        raise TraceError(f"{fn}: name={name!r} is not a register name (letters, digits, _ and "
                         f"$, optionally after %)", loc=user_loc(3))
    return name


def scalar(t, init=None, name: str | None = None) -> Register:
    """A new register of type ``t``; ``init`` (number or register) is moved into it.
    ``name`` declares it under that name (``.reg .f32 acc;``) instead of a numbered one.

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     acc = reg.scalar(f32, 0.0, name="acc")
        >>> t.lines()
        ['mov.f32 acc, 0f00000000;']
    """
    t = _type(t)
    tr = context.current("reg.scalar")
    if name is not None:
        r = _declare(tr, t, names=(_check_name("reg.scalar", name),))[0]
    else:
        r = Register(tr.new_reg(t), tr)
    if init is not None:
        tr.emit("mov", (_mov_type(t),), (r.ir, as_operand(init, t)), loc=user_loc())
    return r


def array(t, n: int, init=None, name: str | None = None) -> RegArray:
    """``n`` registers of type ``t`` (a vector operand when passed whole). ``name`` (also
    accepted as the third positional argument, the documented order) declares them as
    ``.reg .f32 name<n>;``: elements ``name0`` ... ``name{n-1}``.

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     acc = reg.array(f32, 4, init=0.0)
        >>> t.lines()  # doctest: +NORMALIZE_WHITESPACE
        ['mov.f32 %f0, 0f00000000;', 'mov.f32 %f1, 0f00000000;', 'mov.f32 %f2, 0f00000000;',
         'mov.f32 %f3, 0f00000000;']
    """
    t = _type(t)
    if isinstance(init, str) and name is None:
        init, name = None, init
    if not isinstance(n, int) or n <= 0:
        raise PtxTypeError(f"reg.array: n must be a positive int, got {n!r}", loc=user_loc())
    tr = context.current("reg.array")
    if name is not None:
        regs = _declare(tr, t, prefix=_check_name("reg.array", name), count=n)
    else:
        regs = [Register(tr.new_reg(t), tr) for _ in range(n)]
    if init is not None:
        loc = user_loc()
        for r in regs:
            tr.emit("mov", (_mov_type(t),), (r.ir, as_operand(init, t)), loc=loc)
    return RegArray(regs, t)


def from_(src, t) -> Register:
    """Reinterpret ``src``'s bits as a new register of type ``t`` (a ``mov``, no conversion).

    ``src`` is a special register, a register or a number. A register of the same width is
    copied bit for bit: ``reg.from_(ptx.special.tid.x(), f32)`` makes thread 1's value
    ``1.4e-45`` (the bits ``0x00000001``), not ``1.0``. To convert a value between types or
    widths (``cvt``), use ``reg.cvt(src, t)``; a different-width register here is an error that
    says so.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32, u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     tid = reg.from_(ptx.special.tid.x(), u32)
        ...     bits = reg.from_(ptx.special.tid.x(), f32)    # the same bits, typed f32
        ...     value = reg.cvt(tid, f32)                     # the number, converted
        >>> t.lines()
        ['mov.u32 %r0, %tid.x;', 'mov.b32 %f0, %tid.x;', 'cvt.rn.f32.u32 %f1, %r0;']
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
    """A typed immediate; floats are exact bit patterns (``0f3F800000`` for 1.0 f32).

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import bf16, f32
        >>> from jax_pyptx import ptx
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.inst.mov.f32(reg.scalar(f32), reg.imm(1.0, f32))
        >>> t.lines()
        ['mov.f32 %f0, 0f3F800000;']
    """
    return Immediate(value, _type(t))


def cvt(x, t, rnd: str | None = None, sat: bool = False, ftz: bool = False) -> Register:
    """``cvt`` to type ``t``. Default rounding: float->int ``.rzi`` (truncate, like C),
    int->float and narrowing float->float ``.rn``; ``rnd`` overrides (``"rn"``, ``"rzi"``...).

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import f32, s32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     x = reg.scalar(f32)
        ...     i = reg.cvt(x, s32)
        ...     y = reg.cvt(i, f32)
        >>> t.lines()
        ['cvt.rzi.s32.f32 %r0, %f0;', 'cvt.rn.f32.s32 %f1, %r0;']
    """
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


# reg.alloc's name families (one counter each, per trace)
_ALLOC_PREFIX = {
    "b8": "%ab", "b16": "%ah", "b32": "%ar", "b64": "%ad", "b128": "%aq", "u8": "%au8",
    "u16": "%au16", "u32": "%au", "u64": "%aud", "s8": "%as8", "s16": "%as16", "s32": "%as",
    "s64": "%asd", "f16": "%af16", "f16x2": "%af16x2", "bf16": "%abf", "bf16x2": "%abfx2",
    "tf32": "%atf", "f32": "%af", "f64": "%afd", "e4m3": "%ae4", "e5m2": "%ae5", "pred": "%ap",
}


def _alloc_name(tr, t: PtxType, array: bool) -> str:
    counts = tr.alloc_counts
    base = _ALLOC_PREFIX.get(t.name, "%ax") + ("arr" if array else "")
    n = counts.get(base, 0)
    counts[base] = n + 1
    return f"{base}{n}_" if array else f"{base}{n}"


def alloc(t) -> Register:
    """A fresh register with its own ``.reg`` line, named by type (``%af0``, ``%au3``...).

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     print(reg.alloc(f32).name)
        %af0
    """
    t = _type(t)
    tr = context.current("reg.alloc")
    return _declare(tr, t, names=(_alloc_name(tr, t, False),))[0]


def alloc_array(t, count: int) -> RegArray:
    """``count`` fresh registers declared as one ``.reg .f32 %afarr0_<count>;`` line.

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     print(reg.alloc_array(f32, 4).count)
        4
    """
    t = _type(t)
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        raise PtxValueError(f"reg.alloc_array: count must be a positive int, got {count!r}",
                            loc=user_loc())
    tr = context.current("reg.alloc_array")
    return RegArray(_declare(tr, t, prefix=_alloc_name(tr, t, True), count=count), t)


def wgmma_frag(*, m: int, n: int, dtype, name: str | None = None) -> RegArray:
    """The accumulator fragment of an m x n wgmma for one thread: ``m*n/128`` registers.

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     print(reg.wgmma_frag(m=64, n=128, dtype=f32).count)
        64
    """
    if not isinstance(m, int) or not isinstance(n, int) or m * n <= 0 or (m * n) % 128:
        raise PtxValueError(f"invalid WGMMA fragment shape m={m} n={n}: m*n must be a positive "
                            f"multiple of 128", loc=user_loc())
    return array(dtype, m * n // 128, name=name)


__all__ = ["scalar", "array", "from_", "imm", "cvt", "alloc", "alloc_array", "wgmma_frag", "Reg",
           "RegArray", "NegPred", "PipeRef"]
