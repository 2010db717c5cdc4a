"""``ptx.inst.<opcode>.<modifier>...(operands, pred=p)``: any instruction.

In the attribute chain a trailing ``_`` escapes a Python keyword (``global_`` is ``.global``),
``__`` spells ``::`` (``shared__cta`` is ``.shared::cta``) and a leading ``_`` before a digit
is dropped (``_2d`` is ``.2d``). A register array passed as one operand is a vector ``{...}``.

Every instruction is validated against the ISA table; an opcode the table does not know is an
error naming the closest ones it does (ptxas refuses unknown opcodes too). For an instruction
the table lacks, ``ptx.raw("...;")`` appends PTX text as written.

Python numbers become immediates typed by the operand's kind in the table (``Decoding.
imm_types``): ``wgmma...bf16.bf16(acc, a, b, p, 1, 1, 0, 0)`` prints its scale and transpose
immediates as ``1, 1, 0, 0``, an ``add.f32`` source ``1`` as ``0f3F800000``.
"""
from __future__ import annotations

import difflib

from ...errors import PtxTypeError, TraceError, ValidationError
from ...ir.nodes import Addr, Guard, Imm, Reg, Sym
from ...isa import ALIASES, TABLE, decode_parts
from ...isa.decoding import type_of
from ...isa.validate import op_sig
from ...isa.opcodes import INSTRUCTION_WORDS, split_opcode
from ...types import pred as pred_t
from .. import context
from ..context import tracing, user_loc
from ..values import NotPred, Register, Special, as_operand


def unescape(attr: str) -> str:
    """A Python attribute of ``ptx.inst`` as the PTX modifier it spells: a trailing ``_``
    dropped (``global_``), a leading ``_`` before a digit dropped (``_16x256b``), ``__`` as
    ``::``.

    Examples:
        >>> from jax_pyptx.dsl.ptx.generic import unescape
        >>> unescape("global_"), unescape("_16x256b"), unescape("shared__cta")
        ('global', '16x256b', 'shared::cta')
    """
    if attr.endswith("_") and not attr.endswith("__"):
        attr = attr[:-1]
    if len(attr) > 1 and attr[0] == "_" and attr[1].isdigit():
        attr = attr[1:]
    return attr.replace("__", "::")


def not_(*args, pred=None):
    """``ptx.not_(p)``: predicate ``p`` negated, as a guard (``pred=ptx.not_(p)`` is
    ``@!p``) or an operand (``!p``); no code. The documented instruction form
    ``ptx.not_(dtype, dst, src)`` emits ``not.<type> dst, src;``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     r = reg.scalar(u32, 0)
        ...     _ = ptx.inst.add.u32(r, r, 1, pred=ptx.not_(r < 4))
        >>> t.lines()[-1]
        '@!%p0 add.u32 %r0, %r0, 1;'
    """
    if len(args) == 1:
        return NotPred(args[0])
    if len(args) == 3:
        from ..reg import _type

        t = _type(args[0])
        return emit_inst(f"not.{'pred' if t.kind == 'pred' else f'b{t.bits}'}",
                         args[1:], pred, user_loc())
    raise PtxTypeError(f"ptx.not_ takes a predicate (ptx.not_(p)) or (dtype, dst, src); got "
                       f"{len(args)} arguments", loc=user_loc())


def guard_of(pred) -> Guard | None:
    """The IR guard of a ``pred=`` argument: ``@p`` for a predicate register, ``@!p`` for
    ``ptx.not_(p)``, None for None (a ``PtxTypeError`` for anything else).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import pred
        >>> from jax_pyptx.dsl.ptx.generic import guard_of
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     p = reg.scalar(pred)
        ...     print(guard_of(p).negated, guard_of(ptx.not_(p)).negated, guard_of(None))
        False True None
    """
    if pred is None:
        return None
    neg = False
    if type(pred) is NotPred:
        pred, neg = pred.reg, True
    if type(pred) is Special:
        pred = pred.value()
    if type(pred) is not Register or pred.type.kind != "pred":
        raise PtxTypeError(f"pred= must be a predicate register (or ptx.not_(p)), got {pred!r}",
                           loc=user_loc(3))
    as_operand(pred)  # ownership check
    return Guard(pred.name, neg)


_HINTS: dict = {}      # (opcode text, operand count) -> (name, modifiers, type per operand)


def _operand_hints(full: str, n: int):
    """(name, modifiers, the type each operand's immediates take): from the table's operand
    kinds when the table knows the instruction, else the instruction's type for every one
    (validation then says what is wrong). None: the table has no instruction of that name."""
    name, mods = split_opcode(full)
    if name not in TABLE and name not in ALIASES:
        return None
    try:
        per = decode_parts(ALIASES.get(name, name), mods, n).imm_types()
        hints = tuple(per[i] if i < len(per) else None for i in range(n))
    except ValidationError:
        hints = (type_of(mods),) * n
    return name, mods, hints


def _unknown_opcode(full: str, name: str, loc) -> ValidationError:
    """The error for an opcode the table does not know, with the closest names it does know
    (each compared with as many leading words of ``full`` as it has)."""
    parts = full.split(".")
    scored = []
    for known in set(TABLE) | set(ALIASES):
        k = known.count(".") + 1
        m = difflib.SequenceMatcher(None, known, ".".join(parts[:k]))
        if m.real_quick_ratio() >= 0.6 and m.quick_ratio() >= 0.6:
            r = m.ratio()
            if r >= 0.6:
                scored.append((-r, known))
    close = [n for _, n in sorted(scored)[:4]]
    shown = ".".join(parts[:2]) if name in INSTRUCTION_WORDS and len(parts) > 1 else name
    hint = f"closest known: {', '.join(close)}" if close else "no known opcode is close"
    return ValidationError(
        f"ptx.inst.{full}: the ISA table has no instruction {shown!r} ({hint}); write an "
        f"instruction the table lacks as PTX text: ptx.raw(\"{full} ...;\")", loc=loc)


def _hints_for(full: str, n: int, validate: bool, loc):
    """(name, modifiers, immediate type per operand) of ``full`` with ``n`` operands."""
    got = _HINTS.get((full, n))
    if got is None:
        got = _operand_hints(full, n)
        if got is None:
            if validate:
                raise _unknown_opcode(full, split_opcode(full)[0], loc or user_loc(3))
            got = split_opcode(full) + ((type_of(split_opcode(full)[1]),) * n,)
        elif len(_HINTS) < 65536:
            _HINTS[(full, n)] = got
    return got


def emit_inst(full: str, operands, pred=None, loc=None, validate: bool = True):
    """Emit ``full`` (dotted opcode) with DSL operands; returns the IR instruction.

    ``validate=False`` (the transpiler's ``flow.inst``) emits it exactly as written, known to
    the table or not."""
    got = _HINTS.get((full, len(operands)))
    if got is None:
        got = _hints_for(full, len(operands), validate, loc)
    name, mods, hints = got
    stack = tracing.stack
    tr = stack[-1] if stack else context.current(f"ptx.inst.{full}")
    n = len(operands)
    if not validate:
        ops = tuple([as_operand(o, h, tr) for o, h in zip(operands, hints)])
        return tr.emit(name, mods, ops, None if pred is None else guard_of(pred),
                       loc or user_loc(2), False)
    if n == 3 or n == 2:             # all registers of this trace (most instructions): direct
        x, y = operands[0], operands[1]
        z = operands[2] if n == 3 else x
        if type(x) is Register and type(y) is Register and type(z) is Register and \
                x.trace is tr and y.trace is tr and z.trace is tr:
            if n == 3:
                ops, key = (x.ir, y.ir, z.ir), (name, mods, x.type, y.type, z.type)
            else:
                ops, key = (x.ir, y.ir), (name, mods, x.type, y.type)
            return tr.emit_keyed(name, mods, ops, None if pred is None else guard_of(pred),
                                 loc or user_loc(2), key)
        if n == 2:                   # a load or a store: a register and an address
            # (two branches: one with the operands swapped costs a load 5%, measured)
            if type(y) is Addr and type(x) is Register and x.trace is tr:
                s = _REG_ADDR_SIG[y.offset != 0] if type(y.base) is Reg and not y.extra \
                    else op_sig(y)
                return tr.emit_keyed(name, mods, (x.ir, y),
                                     None if pred is None else guard_of(pred),
                                     loc or user_loc(2), (name, mods, x.type, s))
            if type(x) is Addr and type(y) is Register and y.trace is tr:
                s = _REG_ADDR_SIG[x.offset != 0] if type(x.base) is Reg and not x.extra \
                    else op_sig(x)
                return tr.emit_keyed(name, mods, (x, y.ir),
                                     None if pred is None else guard_of(pred),
                                     loc or user_loc(2), (name, mods, s, y.type))
    elif n == 4:                     # fma / mad / selp: three registers, then a register or number
        w, x, y, z = operands
        if type(w) is Register and type(x) is Register and type(y) is Register and \
                w.trace is tr and x.trace is tr and y.trace is tr:
            c = type(z)
            zo = None
            if c is Register and z.trace is tr:
                zo, zs = z.ir, z.type
            elif c is float or c is int:
                zo = _number(z, hints[3], c, tr)
                zs = zo.text
            if zo is not None:
                return tr.emit_keyed(name, mods, (w.ir, x.ir, y.ir, zo),
                                     None if pred is None else guard_of(pred),
                                     loc or user_loc(2), (name, mods, w.type, x.type, y.type, zs))
    # the IR operands and the validation signature, in one pass
    ops = []
    key = [name, mods]
    for o, h in zip(operands, hints):
        c = type(o)
        if c is Register and o.trace is tr:            # the common case, inline
            ops.append(o.ir)
            key.append(o.type)
            continue
        if c is float or c is int:                     # a number: its immediate, memoised
            got = _number(o, h, c, tr)
            ops.append(got)
            key.append(got.text)
            continue
        if c is not Addr:
            o = as_operand(o, h, tr)
        ops.append(o)
        key.append(o.type if type(o) is Reg and not o.neg else op_sig(o))
    return tr.emit_keyed(name, mods, tuple(ops), None if pred is None else guard_of(pred),
                         loc or user_loc(2), tuple(key))


# ``op_sig`` of ``[reg]`` and ``[reg+off]`` (the signature validation keys on)
_REG_ADDR_SIG = (op_sig(Addr(Reg("%r0"))), op_sig(Addr(Reg("%r0"), 4)))


_NUMS: dict = {}     # (immediate type, class, value) -> Imm of a Python number operand


def _number(o, h, c, tr):
    """The immediate of Python number ``o`` (class ``c``) typed ``h``, memoised."""
    k = (h, c, o)
    got = _NUMS.get(k)
    if got is None:
        got = as_operand(o, h, tr)
        if (o or c is int) and len(_NUMS) < 65536:     # (-0.0 == 0.0: not memoised)
            _NUMS[k] = got
    return got


class _Chain:
    """``ptx.inst.<opcode>.<modifiers>(*operands, pred=None)``: any PTX instruction, spelled
    as in PTX (``global_`` for ``.global``, ``async_`` for ``.async``, ``__`` for ``::``);
    validated against the ISA table when emitted.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     x = reg.scalar(f32)
        ...     _ = ptx.inst.ex2.approx.ftz.f32(x, x)
        ...     _ = ptx.inst.fence.proxy.async_.shared__cta()
        >>> t.lines()
        ['ex2.approx.ftz.f32 %f0, %f0;', 'fence.proxy.async.shared::cta;']
    """

    def __init__(self, parts=()):
        self._parts = parts
        self._full = ".".join(parts)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        child = _Chain(self._parts + (unescape(attr),))
        self.__dict__[attr] = child
        return child

    def __call__(self, *operands, pred=None):
        """Emit the instruction; returns its first operand when that is a register (the
        destination, for chaining), else None."""
        if not self._parts:
            raise TraceError("ptx.inst needs an opcode: ptx.inst.add.u32(d, a, b)",
                             loc=user_loc())
        emit_inst(self._full, operands, pred, user_loc(2))
        first = operands[0] if operands else None
        return first if type(first) is Register else None

    def __repr__(self):
        return "ptx.inst." + ".".join(self._parts)


inst = _Chain()


def addr(base, offset: int = 0) -> Addr:
    """``[base+offset]`` for a register, a shared buffer, a tensor parameter (``[A]``), a
    TMA descriptor handle, a param or a symbol name; ``ptx.addr(r, -8)`` prints ``[r+-8]``,
    the spelling ptxas reads (it rejects ``[r-8]``).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32, u64
        >>> from jax_pyptx.text.printer import operand
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope():
        ...     p = reg.scalar(u64)
        ...     print(operand(ptx.addr(p, 16)), operand(ptx.addr("X")))
        [%rd0+16] [X]
    """
    if type(base) is Register:
        stack = tracing.stack
        if stack and base.trace is stack[-1]:           # (else as_operand says what is wrong)
            return Addr(base.ir, offset if type(offset) is int else int(offset))
        return Addr(as_operand(base), int(offset))
    if isinstance(base, Register):
        return Addr(as_operand(base), int(offset))
    if isinstance(base, str):
        return Addr(Sym(base), int(offset))
    if type(base) is Addr:                 # already an address: add the offset
        return Addr(base.base, base.offset + int(offset), base.extra)
    sym = getattr(base, "symbol", None)
    if isinstance(sym, str) and not isinstance(base, Special):   # TensorSpec, TMA handle
        return Addr(Sym(sym), int(offset))
    if hasattr(base, "__ptx_operand__"):
        op = base.__ptx_operand__()
        if type(op) is Sym:
            return Addr(Sym(op.name), op.offset + int(offset))
        if type(op) is Addr:
            return Addr(op.base, op.offset + int(offset), op.extra)
    if isinstance(base, Sym):
        return Addr(Sym(base.name), base.offset + int(offset))
    if isinstance(base, int):
        return Addr(None, int(base) + int(offset))
    raise PtxTypeError(f"ptx.addr: cannot take the address of {base!r}", loc=user_loc())


def sym(name: str) -> Sym:
    """A symbol operand by name (a label, a variable, a param, a function).

    Examples:
        >>> from jax_pyptx import ptx
        >>> from jax_pyptx.text.printer import operand
        >>> operand(ptx.sym("my_table"))
        'my_table'
    """
    return Sym(name)


def raw_imm(text: str) -> Imm:
    """An immediate spelled exactly as ``text``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.inst.mov.f32(reg.scalar(f32), ptx.raw_imm("0f3F800000"))
        >>> t.lines()
        ['mov.f32 %f0, 0f3F800000;']
    """
    return Imm(text)


def ret(pred=None):
    """``ret;``

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.ret()
        >>> t.lines()
        ['ret;']
    """
    return emit_inst("ret", (), pred, user_loc())


def exit(pred=None):
    """``exit;``

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     _ = ptx.exit()
        >>> t.lines()
        ['exit;']
    """
    return emit_inst("exit", (), pred, user_loc())


def pred_reg(name: str):
    """The IR predicate register named ``name`` (no declaration, no code).

    Examples:
        >>> from jax_pyptx.dsl.ptx.generic import pred_reg
        >>> pred_reg("%p7")
        Reg(name='%p7', type=pred, neg=False)
    """
    return Reg(name, pred_t)
