"""The documented explicit-destination wrappers: ``ptx.mov(dtype, dst, src)``,
``ptx.add(dtype, dst, a, b)`` (``sub``, ``shl``, ``shr``, ``and_``, ``or_``, ``xor_``),
``ptx.mul(dtype, dst, a, b, mode=)``, ``ptx.mad``, ``ptx.setp``, ``ptx.selp``, ``ptx.ld``,
``ptx.st``, ``ptx.cvta.to_global/param``, ``ptx.var``, ``ptx.elect_sync``, ``ptx.setmaxnreg``.

Each emits one instruction, ``op.<type> dst, a, b;``; Python numbers become immediates of the
instruction's type (``ptx.add(f32, x, x, 1.0)`` is ``add.f32 %f1, %f1, 0f3F800000;``)::

    ptx.add(u32, r, r, 1)          # add.u32 %r0, %r0, 1;
    ptx.mul(u32, w, a, 4, mode="wide")
    d = ptx.mad(a, 4, b)           # the expression form: mad.lo.s32 d, a, 4, b;
"""
from __future__ import annotations

from ...errors import PtxTypeError, PtxValueError
from ...ir.nodes import Addr, PredPair, Sink, Sym, VarDecl
from ...types import PtxType, b64, by_name, is_type_name, pred as pred_t
from .. import context
from ..context import user_loc
from ..values import Register, Special, as_operand, materialize
from .generic import emit_inst

# no __all__: these are not family wrappers the transpiler picks (it writes ptx.inst)


def is_type(x) -> bool:
    """A PTX type or a type name (``f32``, ``"u32"``, ``".b64"``)."""
    return isinstance(x, PtxType) or isinstance(x, str) and is_type_name(x)


def _t(fn, dtype) -> PtxType:
    if isinstance(dtype, PtxType):
        return dtype
    if isinstance(dtype, str) and is_type_name(dtype):
        return by_name(dtype)
    raise PtxTypeError(f"{fn}: dtype must be a PTX type such as u32 or 'f32', got {dtype!r}",
                       loc=user_loc(3))


# ld/st/mov have no .f16/.bf16 forms: half-precision values move as bits
_BITS = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}


def mov(dtype, dst, src, *, pred=None):
    """``mov.<type> dst, src;`` (f16/bf16 move as ``.b16``); returns ``dst``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.mov(u32, reg.scalar(u32), ptx.special.tid.x())
        >>> t.lines()
        ['mov.u32 %r0, %tid.x;']
    """
    t = _t("ptx.mov", dtype)
    emit_inst(f"mov.{_BITS.get(t.name, t.name)}", (dst, src), pred, user_loc())
    return dst


def _binop_example(op: str, name: str) -> str:
    """The generated ``Examples:`` section of ``ptx.<name>`` (a ``_binop`` wrapper)."""
    t = "b32" if op in ("and", "or", "xor", "shl") else "u32"
    return (f"Examples:\n"
            f"    >>> from jax_pyptx import ptx, reg\n"
            f"    >>> from jax_pyptx.types import {t}\n"
            f"    >>> from jax_pyptx.dsl.trace_scope import trace_scope\n"
            f"    >>> with trace_scope() as t:\n"
            f"    ...     a, d = reg.scalar({t}), reg.scalar({t})\n"
            f"    ...     _ = ptx.{name}({t}, d, a, 2)\n"
            f"    >>> t.lines()\n"
            f"    ['{op}.{t} %r1, %r0, 2;']\n")


def _binop(op):
    def fn(dtype, dst, a, b, *, pred=None):
        t = _t(f"ptx.{op}", dtype)
        name = t.name
        if op in ("and", "or", "xor", "shl") and t.kind not in ("pred",):
            name = f"b{t.bits}"
        emit_inst(f"{op}.{name}", (dst, a, b), pred, user_loc())
        return dst
    fn.__name__ = op if op not in ("and", "or", "xor") else op + "_"
    fn.__doc__ = (f"``{op}.<type> dst, a, b;`` (returns ``dst``; ``and``/``or``/``xor``/``shl`` "
                  f"use ``.b<bits>``).\n\n" + _binop_example(op, fn.__name__))
    return fn


add = _binop("add")
sub = _binop("sub")
shl = _binop("shl")
shr = _binop("shr")
and_ = _binop("and")
or_ = _binop("or")
xor_ = _binop("xor")


def mul(dtype, dst, a, b, *, mode=None, pred=None):
    """``mul[.lo|.hi|.wide].<type> dst, a, b;`` (integers need a mode; ``wide`` doubles the
    destination width).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32, u64
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     a, w = reg.scalar(u32), reg.scalar(u64)
        ...     _ = ptx.mul(u32, w, a, 4, mode="wide")
        >>> t.lines()
        ['mul.wide.u32 %rd0, %r0, 4;']
    """
    t = _t("ptx.mul", dtype)
    if mode not in (None, "lo", "hi", "wide"):
        raise PtxValueError(f"ptx.mul: mode={mode!r} is not allowed; allowed: None, 'lo', 'hi', "
                            f"'wide'", loc=user_loc())
    emit_inst(f"mul{'.' + mode if mode else ''}.{t.name}", (dst, a, b), pred, user_loc())
    return dst


def mad(*args, mode="lo", pred=None):
    """``ptx.mad(dtype, dst, a, b, c, mode="lo")`` emits ``mad.<mode>.<type> dst, a, b, c;``
    (floats: ``mad.rn.<type>``); the expression form ``ptx.mad(a, b, c, mode="lo")`` takes
    the type from the first register (32-bit integers as ``.s32``), allocates the result and
    returns it.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import s32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     a, b, c = reg.scalar(s32), reg.scalar(s32), reg.scalar(s32)
        ...     d = ptx.mad(a, b, c)
        >>> t.lines()
        ['mad.lo.s32 %r3, %r0, %r1, %r2;']
    """
    fn = "ptx.mad"
    if len(args) == 5 and is_type(args[0]):
        t = _t(fn, args[0])
        dst, a, b, c = args[1:]
        _mad(fn, t, mode, dst, a, b, c, pred)
        return None
    if len(args) != 3:
        raise PtxTypeError(f"{fn} takes (dtype, dst, a, b, c) or (a, b, c); got {len(args)} "
                           f"arguments", loc=user_loc())
    a, b, c = (materialize(x) if isinstance(x, Special) else x for x in args)
    first = next((x for x in (a, b, c) if isinstance(x, Register)), None)
    if first is None:
        raise PtxTypeError(f"{fn}(a, b, c): one of the operands must be a register (its type "
                           f"is the instruction's)", loc=user_loc())
    t = first.type
    if t.kind in ("signed", "unsigned", "bits") and t.bits == 32:
        t = by_name("s32")
    tr = context.current(fn)
    dst = Register(tr.new_reg(first.type), tr)
    _mad(fn, t, mode, dst, a, b, c, pred)
    return dst


def _mad(fn, t, mode, dst, a, b, c, pred):
    if t.kind == "float":
        m = "rn" if mode in ("lo", None) else mode
    else:
        if mode not in ("lo", "hi", "wide"):
            raise PtxValueError(f"{fn}: mode={mode!r} is not allowed; allowed: 'lo', 'hi', "
                                f"'wide'", loc=user_loc(4))
        m = mode
    emit_inst(f"mad.{m}.{t.name}", (dst, a, b, c), pred, user_loc(4))


_CMP = ("lt", "le", "gt", "ge", "eq", "ne")


def setp(cmp_op, dtype, pred_out, a, b, *, pred_negate=None):
    """``setp.<cmp>.<type> pred_out, a, b;`` (cmp: lt, le, gt, ge, eq, ne; ``.b32`` compares
    as ``.u32``); ``pred_negate`` is the guard (``@p`` / ``@!p`` with ``ptx.not_(p)``).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import pred, s32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     a, p = reg.scalar(s32), reg.scalar(pred)
        ...     _ = ptx.setp("lt", s32, p, a, 10)
        >>> t.lines()
        ['setp.lt.s32 %p0, %r0, 10;']
    """
    if cmp_op not in _CMP:
        raise PtxValueError(f"ptx.setp: cmp_op={cmp_op!r} is not allowed; allowed: "
                            f"{', '.join(_CMP)}", loc=user_loc())
    t = _t("ptx.setp", dtype)
    name = f"u{t.bits}" if t.kind == "bits" and cmp_op not in ("eq", "ne") else t.name
    emit_inst(f"setp.{cmp_op}.{name}", (pred_out, a, b), pred_negate, user_loc())
    return pred_out


def selp(dtype, dst, true_val, false_val, pred_reg, *, pred=None):
    """``selp.<type> dst, true_val, false_val, pred_reg;``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r, d = reg.scalar(u32, 3), reg.scalar(u32)
        ...     _ = ptx.selp(u32, d, 1, 0, r > 2)
        >>> t.lines()[-1]
        'selp.u32 %r1, 1, 0, %p0;'
    """
    t = _t("ptx.selp", dtype)
    emit_inst(f"selp.{t.name}", (dst, true_val, false_val, pred_reg), pred, user_loc())
    return dst


_SPACES = ("global", "shared", "local", "param", "const", "generic")


def _addr(x):
    if isinstance(x, Addr):
        return x
    if isinstance(x, Special):
        x = materialize(x)
    if isinstance(x, Register):
        return Addr(as_operand(x), 0)
    if isinstance(x, str):
        from ..values import str_operand

        return Addr(str_operand(x), 0)
    op = as_operand(x)
    if type(op) is Sym:
        return Addr(Sym(op.name), op.offset)
    if type(op) is Addr:
        return op
    raise PtxTypeError(f"expected an address (a register, ptx.addr(...), a shared buffer or a "
                       f"symbol), got {x!r}", loc=user_loc(4))


def _ldst(fn, op, dtype, space, cache):
    t = _t(fn, dtype)
    if space not in _SPACES:
        raise PtxValueError(f"{fn}: space={space!r} is not allowed; allowed: "
                            f"{', '.join(_SPACES)}", loc=user_loc(3))
    mods = "" if space == "generic" else "." + space
    if cache is not None:
        mods += "." + str(cache).lstrip(".")
    return f"{op}{mods}.{_BITS.get(t.name, t.name)}"


def ld(dtype, dst, addr, *, space="global", cache=None, pred=None):
    """``ld[.space][.cache].<type> dst, [addr];`` (``addr`` bracketed for you; ``space``:
    global, shared, local, param, const or generic); returns ``dst``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32, u64
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     p, v = reg.scalar(u64), reg.scalar(f32)
        ...     _ = ptx.ld(f32, v, p)
        ...     _ = ptx.ld(f32, v, ptx.addr(p, 4), space="shared")
        >>> t.lines()
        ['ld.global.f32 %f0, [%rd0];', 'ld.shared.f32 %f0, [%rd0+4];']
    """
    emit_inst(_ldst("ptx.ld", "ld", dtype, space, cache), (dst, _addr(addr)), pred, user_loc())
    return dst


def st(dtype, addr, src, *, space="global", cache=None, pred=None):
    """``st[.space][.cache].<type> [addr], src;``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32, u64
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     p, v = reg.scalar(u64), reg.scalar(f32)
        ...     _ = ptx.st(f32, ptx.addr(p, 8), v)
        >>> t.lines()
        ['st.global.f32 [%rd0+8], %f0;']
    """
    emit_inst(_ldst("ptx.st", "st", dtype, space, cache), (_addr(addr), src), pred, user_loc())


class _Cvta:
    """``ptx.cvta.to_global(src)`` (``cvta.to.global.u64``) and ``ptx.cvta.param(src)``
    (``cvta.param.u64``); each returns the destination (a fresh b64 register unless
    ``dst`` is given)."""

    def _one(self, full, src, dst):
        if dst is None:
            tr = context.current(f"ptx.{full}")
            dst = Register(tr.new_reg(b64), tr)
        emit_inst(full, (dst, src), None, user_loc(3))
        return dst

    def to_global(self, src, dst=None):
        """``cvta.to.global.u64 dst, src;``."""
        return self._one("cvta.to.global.u64", src, dst)

    def param(self, src, dst=None):
        """``cvta.param.u64 dst, src;``."""
        return self._one("cvta.param.u64", src, dst)

    def to_shared(self, src, dst=None):
        """``cvta.to.shared.u64 dst, src;``."""
        return self._one("cvta.to.shared.u64", src, dst)


cvta = _Cvta()


_VAR_SPACES = (".shared", ".local", ".global", ".const", ".shared::cta")


def var(state_space, dtype, name: str, *, size=None, align=None, linking=None) -> str:
    """Declare a variable with the function's declarations:
    ``[.linking ].<space> [.align A ].<type> name[[size]];`` (``__`` in the space is ``::``);
    returns ``name`` (usable as a string operand).

    Examples:
        >>> from jax_pyptx import kernel, ptx
        >>> from jax_pyptx.types import b8
        >>> @kernel
        ... def k():
        ...     ptx.var("shared", b8, "scratch", size=256, align=16)
        ...     ptx.ret()
        >>> [line.strip() for line in k.ptx().splitlines() if "scratch" in line]
        ['.shared .align 16 .b8 scratch[256];']
    """
    fn = "ptx.var"
    import re

    tr = context.current(fn)
    space = "." + str(state_space).lstrip(".").replace("__", "::")
    if space not in _VAR_SPACES:
        raise PtxValueError(f"{fn}: state_space={state_space!r} is not allowed; allowed: "
                            f"{', '.join(s[1:] for s in _VAR_SPACES)}", loc=user_loc())
    if not isinstance(name, str) or not re.match(r"^[A-Za-z_$][A-Za-z0-9_$]*$", name):
        raise PtxValueError(f"{fn}: name={name!r} is not a PTX identifier", loc=user_loc())
    variables = tr.variables
    if name in variables or (tr.smem is not None and any(b.name == name
                                                          for b in tr.smem.buffers)):
        raise PtxValueError(f"{fn}: {name!r} is already declared in kernel {tr.name!r}",
                            loc=user_loc())
    t = _t(fn, dtype)
    link = "" if linking is None else "." + str(linking).lstrip(".")
    variables[name] = VarDecl(space, t, name, align=int(align or 0),
                              dims=() if size is None else (int(size),), linkage=link)
    return name


def elect_sync(dst, pred_out, membermask=0xFFFFFFFF):
    """``elect.sync dst|pred_out, membermask;`` (``dst=None`` writes ``_``): one lane of the
    mask is elected; ``pred_out`` is true in it. Returns ``pred_out``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import pred
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     leader = ptx.elect_sync(None, reg.scalar(pred))
        >>> t.lines()
        ['elect.sync _|%p0, 4294967295;']
    """
    tr = context.current("ptx.elect_sync")
    d = Sink() if dst is None else as_operand(dst, None, tr)
    if not isinstance(pred_out, Register) or pred_out.type is not pred_t:
        raise PtxTypeError(f"ptx.elect_sync: pred_out must be a predicate register, got "
                           f"{pred_out!r}", loc=user_loc())
    emit_inst("elect.sync", (PredPair(d, as_operand(pred_out, None, tr)), membermask), None,
              user_loc())
    return pred_out


def setmaxnreg(count: int, *, inc: bool = True, pred=None):
    """``setmaxnreg.inc|dec.sync.aligned.u32 count;`` (24..256, a multiple of 8; sm_90a).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.setmaxnreg(240)
        ...     _ = ptx.setmaxnreg(40, inc=False)
        >>> t.lines()
        ['setmaxnreg.inc.sync.aligned.u32 240;', 'setmaxnreg.dec.sync.aligned.u32 40;']
    """
    from .misc import setmaxnreg as _s

    _s(count, inc=inc, pred=pred)


def setmaxnreg_inc(count: int, *, pred=None):
    """``setmaxnreg.inc.sync.aligned.u32 count;``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.setmaxnreg_inc(232)
        >>> t.lines()
        ['setmaxnreg.inc.sync.aligned.u32 232;']
    """
    setmaxnreg(count, inc=True, pred=pred)


def setmaxnreg_dec(count: int, *, pred=None):
    """``setmaxnreg.dec.sync.aligned.u32 count;``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.setmaxnreg_dec(40)
        >>> t.lines()
        ['setmaxnreg.dec.sync.aligned.u32 40;']
    """
    setmaxnreg(count, inc=False, pred=pred)
