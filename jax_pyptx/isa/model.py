"""The ISA table's record types, targets and the PTX version each target needs.

A ``Form`` is one instruction form of the PTX ISA: its name, its modifier groups in canonical
order, its operands, and the minimum architecture and PTX ISA version. Operand specs are short
strings ``kind[:type][?]``:

========  ==============================================================
kind      meaning
========  ==============================================================
``d``     destination register (``d_``: or the sink ``_``)
``_``     the sink ``_`` (no result: mbarrier.arrive on .shared::cluster)
``s``     source: register or immediate
``r``     source register (no immediate)
``i``     immediate (integer constant)
``p``     predicate (source; ``!p`` allowed)
``pd``    predicate destination: one predicate register
``pq``    ``p[|q]``: a predicate destination, or a pair of them; ``_`` for
          either (setp)
``dp``    ``d[|p]``: a data register (of the spec's type), optionally paired
          with a predicate destination (shfl.sync, match.all.sync)
``d|p``   a data register or ``_``, paired with a predicate destination
          (elect.sync, lop3.BoolOp)
``m``     memory operand ``[addr]`` / ``[addr+imm]``
``t``     coordinate operand ``[a, {c, ...}]`` (TMA tensor maps, surfaces):
          the count of coordinates as for ``v``, or the ``.Nd`` option of
          the form's ``dim`` group; ``:type`` is the coordinates' type
``tx``    texture operand ``[tex, {c, ...}]`` or ``[tex, sampler, {c, ...}]``;
          with an array geometry (``.a1d``, ``.a2d``, ...) the first item is
          the .u32 array index
``a``     parenthesized argument list ``(a, b, ...)`` (call)
``v``     vector ``{...}`` of registers (length from a ``.vN`` group or ``vN``)
``l``     label or symbol
``x``     anything (checked by the wrapper, not the table)
========  ==============================================================

``:type`` names a modifier group whose chosen option is the operand's type, or a literal type
(``:u32``, ``:b64``); a trailing ``?`` makes the operand optional (only trailing ones).

``=range`` (last) records the values the PTX ISA allows an immediate of the operand (a register
is not checked): ``i=24..256/8`` (24 to 256, a multiple of 8), ``s:u32=0..15``,
``s:u32=32../32`` (no upper bound), ``i=-1|1`` (these values), or a range chosen by a modifier
group's option, ``i=cop{.ca:4|8|16;.cg:16}`` (an option not listed: no check).
The validator refuses an immediate outside it, naming the range.

How an immediate prints follows the operand's kind, never the instruction's type suffix: ``i``
operands (counts, sizes, selectors, scale/transpose flags) and predicate immediates are plain
integers; ``s`` operands print as their resolved ``:type`` (``0f3F800000`` for ``:f32``).
A ``v`` operand's length is a literal count (``v4``), the ``.vN`` option of the form's
``vec_group``, or ``v@name``: computed by the form's ``counts`` rule ``name`` from the chosen
modifiers (wgmma accumulators, tcgen05.ld registers). ``d1`` / ``s1`` are ``d`` / ``s`` that
may also be written as a one-element vector ``{x}``: ptxas takes ``ld.global.b32 {%r1}, [a]``
and ``st.global.b32 [a], {%r1}`` (Triton emits them), but no other instruction's scalar
operand in braces.

Immediates, as ptxas has them (``validate.imm_error``): an integer of up to 64 bits fits every
integer, bit-size and predicate type whatever its width (ptxas keeps the low bits:
``mov.u16 %rs, 70000`` is 4464); a float literal (decimal, ``0f``, ``0d``) fits ``.f32`` /
``.f64`` and no integer fits those; of the integer types only ``.b32`` takes ``0f...`` and
``.b64`` takes ``0d...`` or a decimal float. ``.f16`` / ``.bf16`` / packed operands take none.
A ``p`` operand takes any integer (0: false), except cp.async's, where it is the src-size.

Modifier order: the ISA's grammar gives one order, which ``groups`` keeps and the DSL emits.
ptxas takes the modifiers of an instruction in nearly any order (``atom.u32.global.add``,
``add.s32.sat``, ``tcgen05.cp.cta_group::1.warpx4.32x128b``), and so does the table: a
group's ``order`` (see :mod:`.orders`) says which other groups it must keep its canonical
place against. By default a group's options decide it: type groups keep their order among
themselves (``cvt.f32.s32`` is not ``cvt.s32.f32``), as do state spaces (a copy's destination
and source), matrix layouts (``.row.col``) and groups sharing an option; a ``.vN`` group keeps
its place against every group (ptxas: "Vector Type not specified properly"); every other
group may stand anywhere. ``order="pin"`` keeps a group in place (the words ptxas reads as
part of the instruction's name: ``mbarrier.arrive.expect_tx``, ``cvta.to``); another name
makes an ordered class of the groups that carry it.

Options may be *gated*: ``G("vec", ".v2", ".v4", ".v8", gate={".v8": (100, (8, 8))})`` makes
``.v8`` need sm_100 and PTX ISA 8.8 while the rest of the form keeps the form's minimum; a gate
may also name targets, ``(("sm_100a", "sm_101a"), (8, 6))``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ArchError


@dataclass(frozen=True)
class Group:
    """A modifier slot: at most one of ``options`` (or exactly one if ``required``).

    ``gates``: ``(option, min_sm, archs, min_ptx)`` for options that need more than the form.
    ``order``: which groups it keeps its canonical place against (module docstring).
    """

    name: str
    options: tuple
    required: bool = False
    gates: tuple = ()
    order: str = ""            # "" (from the options), "pin", "free" or an ordered class


@dataclass(frozen=True, eq=False)
class Form:
    """Compared by identity: each form is one row of the table."""

    name: str
    groups: tuple = ()
    operands: tuple = ()
    min_sm: int = 50
    archs: tuple = ()          # non-empty: only these targets (arch-specific features, e.g. sm_90a)
    min_ptx: tuple = (6, 0)
    family: str = "misc"
    doc: str = ""
    vec_group: str = "vec"     # group giving the length of ``v`` operands
    relaxed: bool = False      # ld/st/cvt-style relaxed type checks: wider integer registers ok
    counts: tuple = ()         # (name, fn(chosen modifiers) -> int) for ``v@name`` operands
    cpu: str = ""              # "nop": no effect a CPU interpreter can observe (fences,
                               # prefetches, scheduling hints); the interpreter skips it

    def count_rule(self, name: str):
        for n, fn in self.counts:
            if n == name:
                return fn
        raise KeyError(f"form {self.name} has no count rule {name!r}")

    def gated(self):
        """``(option, min_sm, archs, min_ptx)`` of every gated option of this form."""
        return [g for grp in self.groups for g in grp.gates]

    def describe(self) -> str:
        mods = "".join(
            ("" if g.required else "[") + "|".join(g.options) + ("" if g.required else "]")
            for g in self.groups
        )
        return f"{self.name}{mods} {', '.join(self.operands)}".rstrip()

    def arch_text(self) -> str:
        return " or ".join(self.archs) if self.archs else f"sm_{self.min_sm}"


def _gates(gate) -> tuple:
    out = []
    for opt, (req, ptx) in (gate or {}).items():
        if isinstance(req, int):
            out.append((opt, req, (), tuple(ptx)))
        else:
            archs = tuple(req)
            sm = min(int(a[3:].rstrip("af")) for a in archs)
            out.append((opt, sm, archs, tuple(ptx)))
    return tuple(out)


class Range:
    """The values the PTX ISA allows an immediate operand: ``lo..hi`` (``hi`` None: no upper
    bound) in steps of ``step`` from 0, or exactly ``values``."""

    __slots__ = ("lo", "hi", "step", "values")

    def __init__(self, lo=None, hi=None, step=1, values=()):
        self.lo, self.hi, self.step, self.values = lo, hi, step, tuple(values)

    def allows(self, v: int, chosen=None) -> bool:
        if self.values:
            return v in self.values
        return self.lo <= v and (self.hi is None or v <= self.hi) and v % self.step == 0

    def describe(self, chosen=None) -> str:
        if self.values:
            vals = [str(v) for v in self.values]
            return vals[0] if len(vals) == 1 else ", ".join(vals[:-1]) + " or " + vals[-1]
        text = f"{self.lo} or more" if self.hi is None else f"{self.lo}..{self.hi}"
        return text + (f", a multiple of {self.step}" if self.step > 1 else "")

    def __repr__(self):
        return f"Range({self.describe()})"


class ChosenRange:
    """A range chosen by the option of modifier group ``group`` (``{option: Range}``)."""

    __slots__ = ("group", "by_option")

    def __init__(self, group: str, by_option: dict):
        self.group, self.by_option = group, by_option

    def pick(self, chosen):
        return self.by_option.get((chosen or {}).get(self.group))

    def allows(self, v: int, chosen=None) -> bool:
        r = self.pick(chosen)
        return r is None or r.allows(v)

    def describe(self, chosen=None) -> str:
        r = self.pick(chosen)
        opt = (chosen or {}).get(self.group)
        return f"{r.describe()} (with {opt})" if r is not None else "any"


_RANGE_RE = re.compile(r"^(-?\d+)\.\.(-?\d+)?(?:/(\d+))?$")
_CHOSEN_RE = re.compile(r"^(\w+)\{(.*)\}$")


def parse_range(text: str):
    """``"24..256/8"`` / ``"0..15"`` / ``"32../32"`` / ``"-1|1"`` / ``"cop{.ca:4|8|16;.cg:16}"``
    -> ``Range`` / ``ChosenRange`` (see the module docstring)."""
    m = _CHOSEN_RE.match(text)
    if m:
        by = {}
        for part in m.group(2).split(";"):
            opt, _, sub = part.partition(":")
            by[opt.strip()] = parse_range(sub.strip())
        return ChosenRange(m.group(1), by)
    m = _RANGE_RE.match(text)
    if m:
        lo, hi, step = m.groups()
        return Range(int(lo), None if hi is None else int(hi), int(step or 1))
    try:
        return Range(values=[int(v) for v in text.split("|")])
    except ValueError:
        raise ValueError(f"bad immediate range {text!r}") from None


def G(name: str, *options: str, required: bool = False, gate=None, order: str = "") -> Group:
    """Shorthand: ``G("type", ".u32", ".s32", required=True)``; ``gate={opt: (sm, (maj, min))}``;
    ``order``: see the module docstring."""
    return Group(name, tuple(options), required, _gates(gate), order)


def R(name: str, *options: str, gate=None, order: str = "") -> Group:
    return Group(name, tuple(options), True, _gates(gate), order)


# ----------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    name: str      # "sm_90a"
    sm: int        # 90
    suffix: str    # "", "a" or "f"

    def supports(self, form: Form) -> bool:
        return self.allows(form.min_sm, form.archs)

    def allows(self, min_sm: int, archs: tuple) -> bool:
        if archs:
            return self.name in archs or (
                self.suffix == "f" and any(a.rstrip("af") == f"sm_{self.sm}" for a in archs)
            )
        return self.sm >= min_sm


_TARGET_RE = re.compile(r"^sm_(\d+)([af]?)$")

# The PTX ISA version that introduced each target (PTX ISA "Release notes" / target tables).
TARGET_MIN_PTX = {
    50: (4, 0), 52: (4, 1), 53: (4, 2), 60: (5, 0), 61: (5, 0), 62: (5, 0), 70: (6, 0),
    72: (6, 1), 75: (6, 3), 80: (7, 0), 86: (7, 1), 87: (7, 4), 89: (7, 8), 90: (7, 8),
    100: (8, 6), 101: (8, 6), 103: (8, 8), 110: (9, 0), 120: (8, 7), 121: (8, 8),
}
# arch-specific ("a") and family ("f") variants need a later ISA than the base target
SUFFIX_MIN_PTX = {("a", 90): (8, 0), ("a", 100): (8, 6), ("f", 100): (8, 8), ("a", 120): (8, 7),
                  ("f", 120): (8, 8), ("a", 101): (8, 6), ("a", 103): (8, 8), ("f", 103): (8, 8),
                  ("a", 110): (9, 0), ("f", 110): (9, 0)}

KNOWN_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f",
               "sm_101a", "sm_103a", "sm_110a", "sm_120", "sm_120a", "sm_121a")


def parse_target(name: str) -> Target:
    m = _TARGET_RE.match(name or "")
    if not m or int(m.group(1)) not in TARGET_MIN_PTX:
        raise ArchError(
            f"unknown arch {name!r}; allowed: {', '.join(KNOWN_ARCHS)} or 'auto'"
        )
    return Target(name, int(m.group(1)), m.group(2))


def target_min_ptx(t: Target) -> tuple:
    base = TARGET_MIN_PTX[t.sm]
    return max(base, SUFFIX_MIN_PTX.get((t.suffix, t.sm), base)) if t.suffix else base
