"""``decode(instruction) -> Decoding``: which form of the table an instruction is, and which
option of each modifier group it chose.

This is the one reading of the table that every consumer shares: the validator checks what
``decode`` finds, the interpreter dispatches on ``Decoding.form.name`` and reads modifiers
from ``Decoding.chosen``, the transpiler picks a wrapper from the form, and the parser knows
an instruction when ``known(name)``. None of them keeps an opcode or modifier list of its own.

``decode`` and the validator pick the form by one rule, ``validate.select``: the first form
whose modifiers (in any order the form takes, :mod:`.orders`), operand count and operands fit.
``decode`` does not check the target or raise for operands (``validate.check`` does): where no
form's operands fit it reads the first form that takes the operand count, so the interpreter
can still run what the validator would refuse. Memoised on (opcode, modifiers, each operand's
signature: a register's type, an immediate's text, a vector's elements).
"""
from __future__ import annotations

from types import MappingProxyType

from ..errors import ValidationError
from ..types import PtxType, by_name, is_type_name
from .model import Form
from .validate import effective, match_modifiers, op_sig, optype, select, specs_of

# operand kinds whose immediates are plain integers whatever the instruction's type
_PLAIN_INT = frozenset(("i", "p", "pd", "pq", "l", "a", "_"))


class Decoding:
    """One instruction's form and its chosen modifiers (group name -> option, e.g.
    ``{"space": ".global", "vec": ".v4", "type": ".f32"}``). Shared and read-only.

    Examples:
        >>> from jax_pyptx.isa.decoding import Decoding, decode
        >>> from jax_pyptx.text.parser import parse_statements
        >>> d = decode(parse_statements("cvt.rn.f32.s32 %f0, %r0;")[0])
        >>> isinstance(d, Decoding), d.modifiers
        (True, ('.rn', '.f32', '.s32'))
    """

    __slots__ = ("form", "chosen", "modifiers", "type", "types", "_imm_types")

    def __init__(self, form: Form, chosen: dict, modifiers: tuple):
        self.form = form
        self.chosen = MappingProxyType(chosen)
        self.modifiers = modifiers
        self.types = tuple(by_name(m) for m in modifiers if is_type_name(m))
        self.type = self.types[-1] if self.types else None
        self._imm_types = None

    def imm_types(self) -> tuple:
        """Per operand of the form, the type its immediates take (how they print), by the
        operand's kind in the table, never the instruction's type suffix alone:

        * ``i`` (counts, sizes, selectors, scale / transpose flags), predicates, labels and
          argument lists: ``None``, a plain integer;
        * an operand with a ``:type``: that type (``mad.wide.s32``'s ``c`` is ``.s64``'s
          width, ``cvt.f32.s32``'s source ``.s32``);
        * an operand without one: the instruction's type (its last type modifier).

        Examples:
            >>> from jax_pyptx.isa.decoding import decode
            >>> from jax_pyptx.text.parser import parse_statements
            >>> decode(parse_statements("cvt.rn.f32.s32 %f0, 3;")[0]).imm_types()
            (f32, s32)
            >>> decode(parse_statements("shl.b64 %rd0, %rd0, 3;")[0]).imm_types()   # the count: u32
            (b64, b64, u32)
        """
        got = self._imm_types
        if got is None:
            out = []
            for sp in specs_of(self.form):
                if sp.kind in _PLAIN_INT:
                    out.append(None)
                else:
                    out.append(optype(sp, self.chosen) or self.type)
            got = self._imm_types = tuple(out)
        return got

    @property
    def name(self) -> str:
        """The name of the form in the ISA table (what the interpreter dispatches on).

        Examples:
            >>> from jax_pyptx.isa.decoding import decode
            >>> from jax_pyptx.text.parser import parse_statements
            >>> decode(parse_statements("add.u32 %r0, %r0, 1;")[0]).name
            'add'
        """
        return self.form.name

    def get(self, group: str, default=None):
        """The option chosen for ``group`` (``".rn"``), or ``default``.

        Examples:
            >>> from jax_pyptx.isa.decoding import decode
            >>> from jax_pyptx.text.parser import parse_statements
            >>> d = decode(parse_statements("cvt.rn.f32.s32 %f0, %r0;")[0])
            >>> d.get("frnd"), d.get("sat", "none")
            ('.rn', 'none')
        """
        return self.chosen.get(group, default)

    def has(self, option: str) -> bool:
        """Whether ``option`` (``".cc"``) is among the chosen modifiers.

        Examples:
            >>> from jax_pyptx.isa.decoding import decode
            >>> from jax_pyptx.text.parser import parse_statements
            >>> d = decode(parse_statements("add.cc.u32 %r0, %r0, 1;")[0])
            >>> d.has(".cc"), d.has(".sat")
            (True, False)
        """
        return option in self.modifiers

    def __repr__(self):
        return f"Decoding({self.form.name}, {dict(self.chosen)})"


_MEMO: dict = {}


def decode(ins) -> Decoding:
    """The form ``ins`` (an IR ``Instruction``) is and its chosen modifiers: the form
    ``validate.select`` picks (the validator's choice), else the first form that takes its
    modifiers and operand count.

    Raises ``ValidationError`` when the table does not know the instruction or no form takes
    its modifiers and operand count.

    Examples:
        >>> from jax_pyptx.isa.decoding import decode
        >>> from jax_pyptx.text.parser import parse_statements
        >>> d = decode(parse_statements("ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0];")[0])
        >>> d.name, d.get("space"), d.get("vec"), d.get("type")
        ('ld', '.global', '.v4', '.f32')
        >>> d = decode(parse_statements("mov.b64 %rd0, {%r0, %r1};")[0])   # the pack form
        >>> d.form.operands
        ('d:type', 'v2:b32')
    """
    try:
        key = (ins.opcode, ins.modifiers, *[op_sig(o) for o in ins.operands])
        got = _MEMO.get(key)
    except TypeError:                    # an operand that cannot be hashed: no memo
        return _decode(ins.opcode, ins.modifiers, len(ins.operands), ins)
    if got is None:
        got = _decode(ins.opcode, ins.modifiers, len(ins.operands), ins)
        if len(_MEMO) < 100_000:
            _MEMO[key] = got
    return got


def decode_parts(opcode: str, modifiers: tuple, n_operands: int | None = None) -> Decoding:
    """``decode`` from an opcode and modifiers alone (``n_operands=None``: any count): the
    first form that takes them (the operands, unknown, are taken to fit)."""
    key = ("parts", opcode, modifiers, n_operands)
    got = _MEMO.get(key)
    if got is None:
        got = _MEMO[key] = _decode(opcode, modifiers, n_operands, None)
    return got


def _decode(opcode: str, modifiers: tuple, n, ins) -> Decoding:
    from . import TABLE

    forms = TABLE.get(opcode)
    loc = getattr(ins, "loc", None)
    full = opcode + "".join(modifiers)
    if not forms:
        raise ValidationError(f"{full}: the ISA table has no instruction {opcode!r}", loc=loc)
    if ins is not None:
        sel = select(ins, forms)
        c = sel.chosen or sel.sized
        if c is not None:
            return Decoding(c.form, c.chosen, modifiers)
        if sel.cands:
            raise ValidationError(
                f"{full}: no form of {opcode} takes {n} operands with these modifiers", loc=loc)
        raise ValidationError(f"{full}: no form of {opcode} takes these modifiers", loc=loc)
    first = None
    for f in forms:
        chosen = match_modifiers(f, modifiers)
        if chosen is None:
            continue
        if first is None:
            first = (f, chosen)
        if n is not None:
            specs = specs_of(f)
            lo = sum(1 for s in specs if not s.optional)
            if not lo <= n <= len(specs):
                continue
        return Decoding(effective(f, modifiers), chosen, modifiers)
    if first is not None:
        raise ValidationError(
            f"{full}: no form of {opcode} takes {n} operands with these modifiers", loc=loc)
    raise ValidationError(f"{full}: no form of {opcode} takes these modifiers", loc=loc)


def type_of(modifiers: tuple, default: PtxType | None = None) -> PtxType | None:
    """The instruction's type: the last modifier that names a PTX type (``cvt.rn.f16.f32`` ->
    f32, the source; ``ld.global.v4.f32`` -> f32), or ``default``."""
    for m in reversed(modifiers):
        if is_type_name(m):
            return by_name(m)
    return default
