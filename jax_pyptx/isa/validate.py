"""Check an IR instruction against the ISA table: modifiers, operands, arch and version."""
from __future__ import annotations

import re
from dataclasses import replace

from ..errors import ArchError, PtxTypeError, PtxValueError, ValidationError
from ..ir.nodes import Addr, Imm, Instruction, ParenList, PredPair, Reg, Sink, Sym, Vec
from ..ir.render import operand
from ..types import PtxType, by_name, is_type_name
from .model import Form, Target, parse_range
from .orders import match_modifiers

_SPEC_RE = re.compile(r"^(pd|pq|dp|tx|d\|p|[dsripmtavlx_])(\d*|@\w+)(_?)(?::([\w.:]+))?(\?)?$")


class Spec:
    """One operand spec of a form (``kind[count][:type][?][=range]``, see :mod:`.model`)."""

    __slots__ = ("kind", "count", "type", "optional", "rule", "sink", "range")

    def __init__(self, text: str):
        text, eq, rng = text.partition("=")
        m = _SPEC_RE.match(text)
        if not m:
            raise ValueError(f"bad operand spec {text!r}")
        self.kind, count, sink, self.type, opt = m.groups()
        self.sink = bool(sink)
        self.rule = count[1:] if count.startswith("@") else None
        self.count = int(count) if count and not self.rule else 0
        self.optional = bool(opt)
        self.range = parse_range(rng) if eq else None


_SPECS: dict = {}
_U32 = by_name("u32")


def specs_of(form: Form) -> list:
    got = _SPECS.get(form)
    if got is None:
        got = _SPECS[form] = [Spec(t) for t in form.operands]
    return got


# ----------------------------------------------------------------------------- types
def compatible(reg_t: PtxType, inst_t: PtxType, relaxed: bool = False) -> bool:
    """PTX operand type-checking rules (PTX ISA "Operand type information")."""
    if inst_t.kind == "pred" or reg_t.kind == "pred":
        return inst_t.kind == reg_t.kind
    if relaxed and inst_t.kind in ("bits", "signed", "unsigned") and reg_t.kind != "float":
        return reg_t.bits >= inst_t.bits
    if reg_t.bits != inst_t.bits:
        # 8-bit integers are kept in .b16 registers (mov has no 8-bit form): their storage
        # is 16 bits wide
        if not (reg_t.bits == 8 and inst_t.bits == 16 and reg_t.kind != "float"):
            return False
    if inst_t.kind == "bits" or reg_t.kind == "bits":
        return True
    if inst_t.kind in ("signed", "unsigned"):
        return reg_t.kind in ("signed", "unsigned")
    if inst_t.kind == "float" and inst_t.name == "tf32":
        return reg_t.kind in ("float", "bits") and reg_t.bits == 32
    return reg_t.name == inst_t.name


def _allowed(inst_t: PtxType) -> str:
    if inst_t.kind == "pred":
        return "pred"
    if inst_t.kind in ("signed", "unsigned"):
        return f"s{inst_t.bits}/u{inst_t.bits}/b{inst_t.bits}"
    if inst_t.kind == "bits":
        return f"any {inst_t.bits}-bit register"
    return f"{inst_t.name}/b{inst_t.bits}"


def no_immediates(t: PtxType) -> bool:
    """PTX has no immediates of the half-precision, 8-bit and narrower float types nor of the
    packed ones (.f16, .bf16, .e4m3, .f16x2, ...): ptxas refuses them ("Arguments mismatch");
    such a constant goes through a ``mov.bN`` into a register."""
    return t.kind == "packed" or (t.kind == "float" and t.bits < 32)


_INT_LIT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?\Z")
_HEX_F32 = re.compile(r"0[fF][0-9a-fA-F]{8}\Z")
_HEX_F64 = re.compile(r"0[dD][0-9a-fA-F]{16}\Z")
_DEC_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)\Z")
_EXPR_FLOAT = re.compile(r"(?<![\w.])(?:\d+\.\d*|\d+[eE][+-]?\d+|0[fFdD][0-9a-fA-F]{8,16})")
_EXPR_OK = re.compile(r"[-+~!()<>=&|^*/%?:\s\w.]*\Z")
_LIMIT = 1 << 64


def literal_kind(text: str) -> str:
    """What an immediate's text spells (PTX ISA "Constants"): ``"int"`` (an integer literal,
    or a constant expression of integers), ``"f32"`` (a ``0f`` hex float), ``"f64"`` (a ``0d``
    hex float), ``"float"`` (a decimal float literal, or an expression with one: a double),
    ``"big"`` (an integer literal of more than 64 bits) or ``"bad"`` (a negated hex float,
    which ptxas refuses as a syntax error, or anything else)."""
    if _INT_LIT.match(text):
        v = imm_int(text)
        return "int" if v is not None and -_LIMIT < v < _LIMIT else "big"
    if _HEX_F32.match(text):
        return "f32"
    if _HEX_F64.match(text):
        return "f64"
    if _DEC_FLOAT.match(text):
        return "float"
    if _EXPR_OK.match(text) and any(c.isdigit() for c in text):
        if re.search(r"[-+~!]0[fFdD][0-9a-fA-F]", text):
            return "bad"
        return "float" if _EXPR_FLOAT.search(text) else "int"
    return "bad"


def imm_error(text: str, t: PtxType) -> str | None:
    """Why immediate ``text`` cannot be an operand of type ``t`` (None: it can), by ptxas's
    rule (CUDA 13.0, checked by ``tests/test_parse_rejects.py``):

    * an integer (or an integer constant expression) is taken by every integer, bit-size and
      predicate type, whatever its value: ptxas keeps its low bits (``mov.u16 %rs, 70000``
      is 4464), but a literal of more than 64 bits is refused (PTX integer constants are
      64-bit; ptxas says "Constant overflow" beyond a few more bits and truncates below);
    * a float literal is taken by ``.f32`` / ``.f64`` (a decimal one, ``0f...`` or
      ``0d...``); of the integer types, ``.b32`` takes ``0f...`` and ``.b64`` takes ``0d...``
      or a decimal float (its double bits); no other integer type takes a float, and no float
      type takes an integer;
    * ``.f16``, ``.bf16``, the 8-bit and narrower floats and the packed types take no
      immediate (``no_immediates``)."""
    if no_immediates(t):
        return (f"a .{t.name} operand cannot be an immediate (got {text}); put the value "
                f"in a register first (mov.b{t.bits})")
    k = literal_kind(text)
    if k == "big":
        return f"integer literal {text} does not fit 64 bits (PTX integer constants are 64-bit)"
    if k == "bad":
        return f"immediate {text} is not a PTX constant"
    if t.kind == "float":
        if k == "int":
            return (f"immediate {text} does not fit .{t.name}: an integer for a float type "
                    f"(write a float literal such as 1.0 or 0f3F800000)")
        return None
    if k == "int":
        return None
    if t.kind == "bits" and ((t.bits == 32 and k == "f32") or
                             (t.bits == 64 and k in ("f64", "float"))):
        return None
    allowed = ("an integer or a 0f... literal" if t.kind == "bits" and t.bits == 32 else
               "an integer, a 0d... or a decimal float literal"
               if t.kind == "bits" and t.bits == 64 else "an integer")
    return f"immediate {text} does not fit .{t.name}: a float literal; allowed: {allowed}"


def imm_int(text: str):
    """The integer an immediate's text spells (PTX: decimal, 0x hex, 0b binary, 0 octal, a
    trailing U), or None (a float literal, a symbol expression)."""
    t = text.rstrip("Uu")
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    try:
        if t[:2] in ("0x", "0X", "0b", "0B"):
            v = int(t, 0)
        elif len(t) > 1 and t[0] == "0":
            v = int(t, 8)
        else:
            v = int(t)
    except ValueError:
        return None
    return -v if neg else v


def _range_error(op, spec: Spec, chosen) -> str | None:
    """An error if the immediate ``op`` is outside the values the ISA allows the operand."""
    v = imm_int(op.text)
    if v is None:
        return f"expected an integer immediate, got {op.text}"
    if spec.range.allows(v, chosen):
        return None
    return RangeMsg(f"immediate {op.text} is out of range; allowed: "
                    f"{spec.range.describe(chosen)}")


class RangeMsg(str):
    """An operand error that is a value out of the ISA's range (raised as PtxValueError)."""


def optype(spec: Spec, chosen) -> PtxType | None:
    """The type of an operand spec once the form's modifiers are chosen (None: untyped)."""
    if spec.type is None:
        return None
    opt = chosen.get(spec.type)
    if opt is not None:
        return by_name(opt) if is_type_name(opt) else None
    return by_name(spec.type) if is_type_name(spec.type) else None


def _is_pred(op) -> bool:
    return type(op) is Reg and not op.neg and (op.type is None or op.type.kind == "pred")


def _data_reg(op, t, form, what: str) -> str | None:
    """Error for ``op`` as a data register destination of type ``t`` (None if it fits)."""
    if type(op) is not Reg:
        return f"expected {what}, got {_describe(op)}"
    return _reg_error(op, t, form)


def _reg_error(op, t, form) -> str | None:
    if op.neg:
        return "a negated register is only allowed for predicate operands"
    if t is not None and op.type is not None and not compatible(op.type, t, form.relaxed):
        return (f"register {op.name} has type {op.type.name}; expected "
                f"{_allowed(t)} (instruction type .{t.name})")
    return None


def _count(spec: Spec, chosen, form, group: str) -> int:
    """A ``v`` / ``t`` operand's element count (0: any), see the model's docstring."""
    if spec.rule:
        return form.count_rule(spec.rule)(chosen)
    if spec.count:
        return spec.count
    opt = chosen.get(group)
    if group == "dim":
        return int(opt[1]) if opt and opt[1].isdigit() else 0
    return int(opt[2:]) if opt and opt[2:].isdigit() else 0


def _items_error(items, t, form, what: str = "vector element") -> str | None:
    for item in items:
        ti = type(item)
        if ti is Reg and t is not None and item.type is not None and not compatible(
                item.type, t, form.relaxed):
            return f"{what} {item.name} has type {item.type.name}; expected {_allowed(t)}"
        if ti is Imm and t is not None and what != "vector element":
            err = imm_error(item.text, t)
            if err:
                return f"{what} {item.text}: {err}"
    return None


def _check_operand(op, spec: Spec, t, chosen, form) -> str | None:
    """An error message, or None if ``op`` fits ``spec`` (``t``: its resolved type)."""
    k = spec.kind
    if type(op) is Reg and (op.type is t or t is None) and not op.neg and k in ("d", "r", "s"):
        return None                      # the common case, checked first
    check = _OPERAND_CHECKS.get(k)       # none for ``x`` (anything)
    return None if check is None else check(op, spec, t, chosen, form)


def _register_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``d`` (a destination register), ``r`` (a register), ``s`` (a register, immediate or symbol)."""
    k = spec.kind
    kind = type(op)
    if kind is Vec and spec.count == 1 and k != "r" and len(op.items) == 1:
        op = op.items[0]             # ``{x}``: the one-element vector spelling (d1 / s1)
        kind = type(op)
        if kind not in (Reg, Imm) or (kind is Imm and k == "d"):
            return f"expected a register in {{...}}, got {_describe(op)}"
    if kind is Reg:
        if op.neg:                   # ``!%p``: ptxas takes any predicate source negated
            if k == "d":
                return "a destination register cannot be negated"
            if (op.type is None or op.type.kind == "pred") and (t is None or t.kind == "pred"):
                return None
        return _reg_error(op, t, form)
    if kind is Imm and k == "s":
        if t is not None:
            err = imm_error(op.text, t)
            if err:
                return err
        return None if spec.range is None else _range_error(op, spec, chosen)
    if kind is Sym and k == "s":
        return None   # address of a variable
    if kind is Sink and k == "d" and spec.sink:
        return None
    want = {"d": "a destination register", "r": "a register", "s": "a register or immediate"}[k]
    return f"expected {want}, got {_describe(op)}"


def _immediate_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``i``: an immediate (in the spec's range, if it has one)."""
    if type(op) is not Imm:
        return f"expected an immediate, got {_describe(op)}"
    return None if spec.range is None else _range_error(op, spec, chosen)


def _sink_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``_``: the sink."""
    return None if type(op) is Sink else f"expected the sink _, got {_describe(op)}"


def _predicate_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``p``: a predicate register, or an immediate where ptxas takes one as a predicate value."""
    kind = type(op)
    if kind is Reg and (op.type is None or op.type.kind == "pred"):
        return None
    if kind is Imm and form.name.startswith(("wgmma.mma_async", "tcgen05.mma")):
        v = imm_int(op.text)     # a predicate immediate: false or true
        return None if v in (0, 1) else \
            RangeMsg(f"immediate {op.text} is out of range; allowed: 0 or 1")
    if kind is Imm and literal_kind(op.text) == "int" and form.name != "cp.async":
        # ptxas: any integer is a predicate value (0: false); cp.async's fourth operand
        # as an immediate is its src-size, the other form
        return None
    return f"expected a predicate, got {_describe(op)}"


def _pred_dest_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``pd``: a predicate destination."""
    if _is_pred(op):
        return None
    return f"expected a predicate destination, got {_describe(op)}"


def _pred_pair_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``pq``: a predicate destination or a pair ``p|q`` (either may be the sink)."""
    if _is_pred(op) or type(op) is Sink:
        return None
    if type(op) is PredPair and all(_is_pred(x) or type(x) is Sink
                                    for x in (op.first, op.second)):
        return None
    return f"expected a predicate destination (p or p|q), got {_describe(op)}"


def _data_pred_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``dp`` (a data register, optionally ``d|p``) and ``d|p`` (the pair; ``_|p`` allowed)."""
    k = spec.kind
    if type(op) is PredPair:
        first = op.first
        if not (type(first) is Sink and k == "d|p"):
            err = _data_reg(first, t, form, "a data register before |")
            if err:
                return err
        if not _is_pred(op.second):
            return f"expected a predicate after |, got {_describe(op.second)}"
        return None
    if k == "dp":
        return _data_reg(op, t, form, "a data register (d or d|p)")
    return f"expected a register|predicate pair d|p, got {_describe(op)}"


def _memory_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``m``: a memory operand ``[addr]``."""
    if type(op) is not Addr:
        return f"expected a memory operand [addr], got {_describe(op)}"
    if op.extra:
        return f"expected a memory operand [addr], got {_describe(op)}"
    return None


def _arglist_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``a``: an argument list ``(...)``."""
    return None if type(op) is ParenList else \
        f"expected an argument list (...), got {_describe(op)}"


def _label_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``l``: a label."""
    return None if type(op) is Sym else f"expected a label, got {_describe(op)}"


def _vector_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``v``: a vector ``{...}`` of the count the form gives, its elements of type ``t``."""
    if type(op) is not Vec:
        return f"expected a vector operand {{...}}, got {_describe(op)}"
    n = _count(spec, chosen, form, form.vec_group)
    if n and len(op.items) != n:
        return f"expected a vector of {n} registers, got {len(op.items)}"
    return _items_error(op.items, t, form)


def _coords_error(op, spec: Spec, t, chosen, form) -> str | None:
    """``[a, {c, ...}]`` (``t``), or ``[tex{, sampler}, {c, ...}]`` (``tx``)."""
    shape = "[a, {coords}]" if spec.kind == "t" else "[tex, {coords}] or [tex, sampler, {coords}]"
    if type(op) is not Addr or op.offset or op.base is None or type(op.base) is Imm:
        return f"expected {shape}, got {_describe(op)}"
    extra = op.extra
    if spec.kind == "tx" and len(extra) == 2 and type(extra[0]) in (Reg, Sym):
        extra = extra[1:]               # the explicit sampler
    if len(extra) != 1 or type(extra[0]) is not Vec:
        return f"expected {shape}, got {_describe(op)}"
    items = extra[0].items
    n = _count(spec, chosen, form, "dim")
    if n and len(items) != n:
        return f"expected {n} coordinates in {{...}}, got {len(items)}"
    if spec.kind == "tx" and chosen.get("geom", "").startswith(".a") and items:
        # the array geometries lead with the .u32 array index, whatever the coordinate type
        err = _items_error(items[:1], _U32, form, "array index")
        if err:
            return err
        items = items[1:]
    return _items_error(items, t, form, "coordinate")


# operand spec kind -> its check (``_check_operand``); ``x`` (anything) has none
_OPERAND_CHECKS = {
    "d": _register_error, "r": _register_error, "s": _register_error, "i": _immediate_error,
    "_": _sink_error, "p": _predicate_error, "pd": _pred_dest_error, "pq": _pred_pair_error,
    "dp": _data_pred_error, "d|p": _data_pred_error, "m": _memory_error, "t": _coords_error,
    "tx": _coords_error, "a": _arglist_error, "l": _label_error, "v": _vector_error,
}


def _describe(op) -> str:
    return {Reg: "register", Imm: "immediate", Sym: "symbol", Addr: "memory operand",
            Vec: "vector", PredPair: "predicate pair", Sink: "sink",
            ParenList: "argument list"}[type(op)] + f" {operand(op)}"


# ----------------------------------------------------------------------------- entry point
class _Cand:
    """A form whose modifier groups match, with its operand specs' types resolved."""

    __slots__ = ("form", "chosen", "specs", "types", "lo", "hi", "supports")

    def __init__(self, form, chosen):
        self.form, self.chosen = form, chosen
        self.specs = specs_of(form)
        self.types = [optype(sp, chosen) for sp in self.specs]
        self.lo = sum(1 for sp in self.specs if not sp.optional)
        self.hi = len(self.specs)
        self.supports = {}


_CANDS: dict = {}


def _supports(c: _Cand, target: Target) -> bool:
    sup = c.supports.get(target.name)
    if sup is None:
        sup = c.supports[target.name] = target.supports(c.form)
    return sup


def _candidates(ins, forms):
    key = (ins.opcode, ins.modifiers)
    got = _CANDS.get(key)
    if got is None or got[0] is not forms:
        # gated options raise the form's minimum arch / PTX version (see ``effective``)
        cands = [_Cand(effective(f, ins.modifiers), c) for f in forms
                 if (c := match_modifiers(f, ins.modifiers)) is not None]
        got = _CANDS[key] = (forms, cands)
    return got[1]


_ACCEPTED: dict = {}   # operand signature -> Form, for instructions that passed before


_VEC_SIGS: dict = {}      # element signatures of a vector -> its interned signature


class _VecSig:
    """The interned signature of a vector's elements: one object per distinct element
    signature tuple, hashed and compared by identity (cheap in a validation key)."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = n

    def __repr__(self):
        return f"<vector of {self.n}>"


def op_sig(o):
    """What validation reads of operand ``o`` (a hashable stand-in for it): a register's type
    and negation (not its name), an immediate's text, a symbol's kind, an address's shape, a
    vector's element signatures (kept on the Vec: a vector is immutable)."""
    t = type(o)
    if t is Reg:
        return ("!", o.type) if o.neg else o.type
    if t is Imm:
        return o.text
    if t is Vec:
        got = o.sig
        if got is None:
            # interned: equal vectors share one short signature, cheap to hash in a key
            full = tuple([op_sig(i) for i in o.items])
            got = _VEC_SIGS.get(full)
            if got is None:       # (setdefault: threads interning the same vector agree)
                got = (Vec, full) if len(_VEC_SIGS) >= 65536 else \
                    _VEC_SIGS.setdefault(full, _VecSig(len(full)))
            o.sig = got
        return got
    if t is Addr:
        return (Addr, type(o.base), bool(o.offset),
                tuple([op_sig(e) for e in o.extra]) if o.extra else ())
    if t is PredPair:
        return (PredPair, op_sig(o.first), op_sig(o.second))
    if t is Sym or t is Sink or t is ParenList:
        return t
    return (t, o)


_IMM_TEXT_MATTERS: dict = {}


def imm_text_matters(name: str, forms: list, index: int) -> bool:
    """Whether validating instruction ``name`` can depend on the value of an immediate at
    operand ``index`` beyond its fitting the instruction type: some form has a range there,
    or an operand kind other than a register or a register-or-immediate. Where it cannot,
    register operators key such immediates by kind only (one verdict for ``x ^ 1`` and
    ``x ^ 2``)."""
    key = (name, index)
    got = _IMM_TEXT_MATTERS.get(key)
    if got is None:
        got = not forms
        for f in forms:
            sp = specs_of(f)
            if index >= len(sp) or sp[index].range is not None or \
                    sp[index].kind not in ("s", "r", "d"):
                got = True
        _IMM_TEXT_MATTERS[key] = got
    return got


def _signature(ins: Instruction, target: Target, version):
    """What the verdict depends on: opcode, modifiers, target, version and each operand's
    signature (``op_sig``: registers matter only by type and negation)."""
    return (ins.opcode, ins.modifiers, target.name, version,
            *[o.type if type(o) is Reg and not o.neg else op_sig(o) for o in ins.operands])


def check(ins: Instruction, target: Target, forms: list, version=None, kernel: str = "",
          sig: tuple | None = None) -> Form:
    """The form ``ins`` matches; raises ValidationError / PtxTypeError / ArchError. ``sig``:
    ``(opcode, modifiers, *map(op_sig, operands))`` when the caller has it."""
    key = _signature(ins, target, version) if sig is None else (target.name, version, sig)
    try:
        got = _ACCEPTED.get(key)
    except TypeError:                    # an operand that cannot be hashed: no memo
        return _check(ins, target, forms, version, kernel)
    if got is not None and got[0] is forms:
        return got[1]
    form = _check(ins, target, forms, version, kernel)
    if len(_ACCEPTED) < 100_000:
        _ACCEPTED[key] = (forms, form)
    return form


def _arch_error(ins: Instruction, f: Form, target: Target, kernel: str) -> ArchError:
    return ArchError(
        f"{ins.full_opcode} needs {f.arch_text()} (PTX ISA {f.min_ptx[0]}.{f.min_ptx[1]}); "
        f"kernel{' ' + repr(kernel) if kernel else ''} targets {target.name}",
        loc=ins.loc,
    )


_NO_TARGET: dict = {}     # (first form, target) -> the form to name when no form fits target


def _unsupported(forms: list, target: Target):
    """The form to name in an ArchError when no form of ``forms`` runs on ``target`` (the
    newest arch / ISA first needed), else None. An instruction the target lacks is reported
    as such before its modifiers or operands are checked."""
    key = (forms[0], target.name)
    got = _NO_TARGET.get(key, _NO_TARGET)
    if got is _NO_TARGET:
        got = None if any(target.supports(f) for f in forms) else \
            min(forms, key=lambda f: (f.min_sm, f.min_ptx))
        _NO_TARGET[key] = got
    return got


class Selection:
    """What ``select`` found: ``cands`` (the forms whose modifiers match, as ``_Cand``),
    ``chosen`` (the first of them whose operand count and operands fit, or None), ``sized``
    (whether any takes the operand count) and ``error`` / ``ranged`` (the first operand
    error of the others, and whether it is a value out of the ISA's range)."""

    __slots__ = ("cands", "chosen", "sized", "error", "ranged")

    def __init__(self, cands, chosen, sized, error, ranged):
        self.cands, self.chosen, self.sized = cands, chosen, sized
        self.error, self.ranged = error, ranged

    def fallback(self):
        """The form to read when none fits: the first that takes the operand count (else
        the first whose modifiers match), or None."""
        n = None
        for c in self.cands:
            if n is None:
                n = c
            if c.sized:
                return c
        return n


def select(ins: Instruction, forms: list) -> Selection:
    """The one rule that picks an instruction's form, read by the validator and by ``decode``
    (interpreter, transpiler): the first form of the table, in table order, whose modifiers
    match (in an order ``orders.match_modifiers`` takes), whose operand count fits, and whose
    every operand fits its spec (kind, register type, immediate range). It does not depend on
    the target: the validator then checks the chosen form's arch and PTX version (no two
    forms that both fit one instruction differ in either: ``tests/test_isa_one_rule.py``)."""
    cands = _candidates(ins, forms)
    ops = ins.operands
    n = len(ops)
    error, ranged, sized = None, False, None
    for c in cands:
        if not c.lo <= n <= c.hi:
            continue
        if sized is None:
            sized = c
        err = None
        for i, op in enumerate(ops):
            err = _check_operand(op, c.specs[i], c.types[i], c.chosen, c.form)
            if err:
                if error is None:
                    error = f"{ins.full_opcode} operand {i + 1}: {err}"
                    ranged = type(err) is RangeMsg
                break
        if err is None:
            return Selection(cands, c, sized, None, False)
    return Selection(cands, None, sized, error, ranged)


def fitting(ins: Instruction, forms: list) -> list:
    """Every form (``_Cand``) whose modifiers, operand count and operands fit ``ins``, in
    table order: ``select`` takes the first; the tests check that the others never ask for
    another arch or PTX version."""
    n = len(ins.operands)
    return [c for c in _candidates(ins, forms) if c.lo <= n <= c.hi and not any(
        _check_operand(op, c.specs[i], c.types[i], c.chosen, c.form)
        for i, op in enumerate(ins.operands))]


def _check(ins: Instruction, target: Target, forms: list, version, kernel: str) -> Form:
    cands = _candidates(ins, forms)
    if not cands:
        bad = _unsupported(forms, target)
        if bad is not None:
            raise _arch_error(ins, bad, target, kernel)
        raise ValidationError(_modifier_error(ins, forms), loc=ins.loc)
    if not any(_supports(c, target) for c in cands):
        raise _arch_error(ins, min((c.form for c in cands),
                                   key=lambda f: (f.min_sm, f.min_ptx)), target, kernel)
    sel = select(ins, forms)
    n = len(ins.operands)
    if sel.sized is None:
        lo = min(c.lo for c in cands)
        hi = max(c.hi for c in cands)
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        shapes = "; ".join(sorted({" ".join(c.form.operands) for c in cands}))
        raise ValidationError(f"{ins.full_opcode} takes {want} operands ({shapes}); got {n}",
                              loc=ins.loc)
    if sel.chosen is None:
        cls = PtxValueError if sel.ranged else PtxTypeError
        raise cls(sel.error, loc=ins.loc)
    best = sel.chosen.form
    if not _supports(sel.chosen, target):
        raise _arch_error(ins, best, target, kernel)
    if version is not None and tuple(version) < best.min_ptx:
        raise ArchError(
            f"{ins.full_opcode} needs PTX ISA {best.min_ptx[0]}.{best.min_ptx[1]}; "
            f"kernel{' ' + repr(kernel) if kernel else ''} sets version="
            f"{version[0]}.{version[1]}",
            loc=ins.loc,
        )
    return best


_EFFECTIVE: dict = {}


def effective(form: Form, mods: tuple) -> Form:
    """``form`` with its minimum arch / PTX version raised by the gated options in ``mods``."""
    key = (form, mods)
    got = _EFFECTIVE.get(key)
    if got is not None:
        return got
    got = form
    gates = form.gated()
    if gates:
        sm, archs, ptx = form.min_sm, form.archs, form.min_ptx
        for opt, gsm, garchs, gptx in gates:
            if opt in mods:
                sm, ptx = max(sm, gsm), max(ptx, gptx)
                if garchs:
                    archs = tuple(a for a in garchs if not archs or a in archs) or garchs
        if (sm, archs, ptx) != (form.min_sm, form.archs, form.min_ptx):
            got = replace(form, min_sm=sm, archs=archs, min_ptx=ptx)
    if len(_EFFECTIVE) < 100_000:
        _EFFECTIVE[key] = got
    return got


def _modifier_error(ins: Instruction, forms: list) -> str:
    full = ins.full_opcode
    known = {o for f in forms for g in f.groups for o in g.options}
    bad = [m for m in ins.modifiers if m not in known]
    if bad:
        opts = " ".join(sorted(known))
        return f"{full}: illegal modifier {bad[0]} for {ins.opcode}; allowed modifiers: {opts}"
    mods = set(ins.modifiers)
    for f in forms:
        order = [o for g in f.groups for o in g.options if o in mods]
        if len(order) == len(ins.modifiers) and set(order) == mods and len(set(ins.modifiers)) == len(ins.modifiers):
            c = match_modifiers(f, tuple(order))
            if c is not None:
                return (f"{full}: modifiers out of order; write "
                        f"{ins.opcode}{''.join(order)}")
    shapes = "; ".join(f.describe() for f in forms[:6])
    return f"{full}: no form of {ins.opcode} takes these modifiers; forms: {shapes}"
