"""Shared machinery of the typed wrappers: option checking with exact messages, modifiers built
in canonical order from the ISA table, destination registers, addresses.

Every wrapper ends in :func:`emit`, so every instruction goes through ``Trace.emit`` and is
validated against the one ISA table (``jax_pyptx.isa``).
"""
from __future__ import annotations

from ...errors import ArchError, PtxTypeError, PtxValueError
from ...ir.nodes import Addr, Imm, PredPair, Reg, Sink, Sym, Vec
from ...isa import forms_for, type_of
from ...isa.opcodes import split_opcode
from ...isa.validate import op_sig
from ...types import PtxType, b32, b64, by_name, is_type_name
from .. import context
from ..context import user_loc
from ..values import Immediate, Register, RegArray, Special, as_operand, materialize
from .generic import guard_of


def norm(value) -> str:
    """``"rn"`` / ``".rn"`` / ``"shared__cta"`` -> ``".rn"`` / ``".shared::cta"``."""
    v = str(value)
    if not v.startswith("."):
        v = "." + v
    return v.replace("__", "::")


def _plain(options) -> str:
    return ", ".join(o.lstrip(".") for o in options)


def _arch_first(fn: str) -> None:
    """Before a wrapper's value error: if the target has no form of the wrapper's instruction
    at all (``ptx.tcgen05.alloc`` on sm_90a), say which architecture it needs instead."""
    tr = context.tracing.stack[-1] if context.tracing.stack else None
    if tr is None:
        return
    parts = fn.split(".")[1:] if fn.startswith("ptx.") else fn.split(".")
    for i in range(len(parts)):
        forms = forms_for(".".join(parts[i:]))
        if forms:
            if not any(tr.target.supports(f) for f in forms):
                f = min(forms, key=lambda f: (f.min_sm, f.min_ptx))
                raise ArchError(f"{fn} needs {f.arch_text()} (PTX ISA {f.min_ptx[0]}."
                                f"{f.min_ptx[1]}); kernel {tr.name!r} targets {tr.target.name}",
                                loc=user_loc(3))
            return


def choice(fn: str, param: str, value, allowed, none_ok: bool = False):
    """``value`` normalized to a modifier from ``allowed``, or PtxValueError naming ``param``."""
    if value is None and none_ok:
        return None
    if isinstance(value, PtxType):
        value = value.name
    v = norm(value) if isinstance(value, str) else value
    if v not in allowed:
        _arch_first(fn)
        shown = repr(value.name if isinstance(value, PtxType) else value)
        raise PtxValueError(f"{fn}: {param}={shown} is not allowed; allowed: {_plain(allowed)}",
                            loc=user_loc())
    return v


def int_choice(fn: str, param: str, value, allowed):
    if not isinstance(value, int) or isinstance(value, bool) or value not in allowed:
        _arch_first(fn)
        raise PtxValueError(f"{fn}: {param}={value!r} is not allowed; allowed: "
                            f"{', '.join(map(str, allowed))}", loc=user_loc())
    return value


def int_range(fn: str, param: str, value, lo: int, hi: int, multiple: int = 1):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi or \
            value % multiple:
        _arch_first(fn)
        extra = f", multiple of {multiple}" if multiple > 1 else ""
        raise PtxValueError(f"{fn}: {param}={value!r} is not allowed; allowed: {lo}..{hi}{extra}",
                            loc=user_loc())
    return value


def dtype(t) -> PtxType:
    """``t`` as a ``PtxType`` (a type, or its name such as ``"bf16"``).

    Examples:
        >>> from jax_pyptx.dsl.ptx.mma import dtype
        >>> dtype("bf16"), dtype(dtype("f32"))
        (bf16, f32)
    """
    return t if isinstance(t, PtxType) else by_name(str(t))


def reg_type(mod: str) -> PtxType:
    """Register type for an instruction type modifier (``.f32x2`` -> b64, ``.u16x2`` -> b32)."""
    if is_type_name(mod):
        return by_name(mod)
    return {".f32x2": b64, ".u16x2": b32, ".s16x2": b32}.get(mod, b32)


def new(t) -> Register:
    tr = context.current()
    return Register(tr.new_reg(dtype(t)), tr)


def new_array(t, n: int) -> RegArray:
    tr = context.current()
    t = dtype(t)
    return RegArray([Register(tr.new_reg(t), tr) for _ in range(n)], t)


def operand_type(x):
    """The PTX type of a DSL value (None for Python numbers)."""
    if isinstance(x, (Register, Special, Immediate, RegArray)):
        return x.type
    return None


def addr(x, fn: str = "", param: str = "addr") -> Addr:
    """A memory operand from an Addr, a register (address in it), a shared buffer, a symbol
    or the name of one (``"mbar_0"``)."""
    if isinstance(x, Addr):
        return x
    if isinstance(x, Special):
        x = materialize(x)
    if isinstance(x, Register):
        return Addr(as_operand(x), 0)
    if hasattr(x, "__ptx_operand__"):
        op = x.__ptx_operand__()
        if type(op) is Sym:
            return Addr(Sym(op.name), op.offset)
        if type(op) is Addr:
            return op
    if isinstance(x, Sym):
        return Addr(Sym(x.name), x.offset)
    if isinstance(x, str) and x and not (x[0].isdigit() or x[0] in "+-%"):
        from ..values import str_operand

        op = str_operand(x)                  # a symbol the kernel declares, by name
        if type(op) is Sym:
            return Addr(op, 0)
    raise PtxTypeError(f"{fn}: {param} must be an address (ptx.addr(...), a register holding an "
                       f"address, a shared buffer or a symbol's name), got {x!r}",
                       loc=user_loc())


def reg_addr(x, fn: str = "", param: str = "addr") -> Addr:
    """Like :func:`addr`, but a symbol base is first moved into a u32 register (instructions
    whose address operand must be a register, e.g. st.bulk)."""
    a = addr(x, fn, param)
    if type(a.base) is Sym:
        from ...types import u32

        r = new(u32)
        emit("mov.u32", (r, Sym(a.base.name, a.base.offset)))
        return Addr(as_operand(r), a.offset)
    return a


def vec(items, t=None) -> Vec:
    """A vector operand ``{a, b, ...}`` of ``items`` (numbers become immediates of type ``t``).

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.ptx.mem import vec
        >>> from jax_pyptx.text.printer import operand
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     print(operand(vec([reg.scalar(f32), reg.scalar(f32)])))
        {%f0, %f1}
    """
    return Vec(tuple(as_operand(i, t) for i in items))


def sink() -> Sink:
    return Sink()


_PASS = (PredPair, Sink, Vec, Addr, Imm, Reg, Sym)


_PLAIN_IMMS: dict = {}    # int -> its untyped Imm node (immutable: shared)


def _op(o, hint):
    t = type(o)
    if t in _PASS:
        return o
    if hint is None and (t is int or t is bool):
        v = int(o)
        got = _PLAIN_IMMS.get(v)
        if got is None:
            got = Imm(str(v))
            if len(_PLAIN_IMMS) < 4096:
                _PLAIN_IMMS[v] = got
        return got
    return as_operand(o, hint)


def emit(full: str, operands, pred=None, typed: bool = False):
    """Emit ``full`` (dotted opcode) through the table-validated path; returns the instruction.
    Python ints are plain integer immediates unless ``typed`` (then they take the instruction
    type, as arithmetic operands do)."""
    name, mods = split_opcode(full)
    stack = context.tracing.stack
    tr = stack[-1] if stack else context.current(f"ptx.{full}")
    hint = type_of(mods) if typed else None
    ops = []
    key = [name, mods]
    for o in operands:
        t = type(o)
        if t is Register and o.trace is tr:             # the common case, inline
            ops.append(o.ir)
            key.append(o.type)
            continue
        if (t is int or t is bool) and hint is None:     # a plain integer immediate
            got = _PLAIN_IMMS.get(o)
            if got is None:
                got = _op(o, None)
            ops.append(got)
            key.append(got.text)
            continue
        o = _op(o, hint)
        ops.append(o)
        key.append(o.type if type(o) is Reg and not o.neg else op_sig(o))
    return tr.emit_keyed(name, mods, tuple(ops), None if pred is None else guard_of(pred),
                         user_loc(), tuple(key))


# ----------------------------------------------------------------------------- table-driven
def build_mods(fn: str, name: str, kw: dict) -> tuple:
    """Modifiers of instruction ``name`` for keyword options ``kw`` (group name -> value), in
    the canonical order of the first table form that takes them all."""
    given = {k: v for k, v in kw.items() if v is not None and v is not False}
    forms = forms_for(name)
    try:
        key = (name, tuple(given.items()))
        got = _MODS.get(key)
    except TypeError:                    # an unhashable option value: no memo
        key, got = None, None
    if got is not None and got[0] is forms:
        return got[1]
    mods = _build_mods(fn, name, given, forms)
    if key is not None:
        _MODS[key] = (forms, mods)
    return mods


_MODS: dict = {}      # (instruction, options) -> modifiers, for options that built before
_GROUPS: dict = {}    # instruction -> (its forms, group name -> every option of that group)


def _group_options(name: str, forms: list) -> dict:
    got = _GROUPS.get(name)
    if got is None or got[0] is not forms:
        groups: dict = {}
        for f in forms:
            for g in f.groups:
                groups.setdefault(g.name, set()).update(g.options)
        got = _GROUPS[name] = (forms, groups)
    return got[1]


def _build_mods(fn: str, name: str, given: dict, forms: list) -> tuple:
    groups = _group_options(name, forms)
    for k, v in given.items():
        if k not in groups:
            raise PtxValueError(f"{fn}: unknown option {k}={v!r}; options: "
                                f"{', '.join(sorted(groups))}", loc=user_loc())
        if v is not True and norm(v) not in groups[k]:
            raise PtxValueError(f"{fn}: {k}={v!r} is not allowed; allowed: "
                                f"{_plain(sorted(groups[k]))}", loc=user_loc())
    for f in forms:
        mods, ok = [], True
        names = {g.name for g in f.groups}
        if any(k not in names for k in given):
            continue
        for g in f.groups:
            if g.name in given:
                v = given[g.name]
                if v is True:
                    if len(g.options) != 1:
                        ok = False
                        break
                    v = g.options[0]
                v = norm(v)
                if v not in g.options:
                    ok = False
                    break
                mods.append(v)
            elif g.required:
                ok = False
                break
        if ok:
            return tuple(mods)
    desc = ", ".join(f"{k}={v!r}" for k, v in given.items())
    raise PtxValueError(f"{fn}: no form of {name} takes {desc}; forms: "
                        f"{'; '.join(f.describe() for f in forms[:8])}", loc=user_loc())
