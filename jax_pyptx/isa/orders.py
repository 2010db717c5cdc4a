"""Which orders of its modifiers a form takes: the one rule every reader of the table uses.

ptxas reads an instruction's modifiers in nearly any order: ``atom.u32.global.add``,
``add.s32.sat``, ``tcgen05.commit.cta_group::2.mbarrier::arrive::one.multicast::cluster
.shared::cluster.b64`` and ``tcgen05.cp.cta_group::1.warpx4.32x128b`` assemble as their ISA
spellings do. What it does not reorder is what the order means or what it reads as the name
(``tests/test_isa_orders.py`` checks every adjacent exchange of every form's examples, and
every order the table takes, against ptxas):

* groups of one *ordered class* keep their canonical order among themselves: the types
  (``cvt.f32.s32`` converts from .s32; ``mma``'s d/a/b/c types), the state spaces (a copy's
  destination, then its source), the matrix layouts (``.row.col``), and any groups that share
  an option (``createpolicy``'s primary and secondary priorities);
* a *pinned* group keeps its canonical place against every group: ``.vN`` and, in a form
  with one, its type groups (ptxas: "Vector Type not specified properly"), and the words ptxas reads as part of the instruction's name
  (``mbarrier.arrive.expect_tx``, ``mbarrier.try_wait.parity``, ``cvta.to``, ``brx.idx``);
* every other group may stand anywhere.

A group's ``order`` field (``model.Group``) names its class; left empty, its options decide
(``order_class``). ``match_modifiers`` assigns each written modifier to a group so that every
pair of groups that must keep their order does: the validator, ``decode`` (interpreter,
transpiler) and the DSL all read modifiers through it, and the IR keeps the order as written,
so the printer writes the instruction back as it was spelled.
"""
from __future__ import annotations

import re

from ..types import is_type_name
from .model import Form, Group

SPACES = frozenset((".global", ".shared", ".shared::cta", ".shared::cluster", ".local",
                    ".param", ".param::entry", ".param::func", ".const"))
# types the type table lacks: .b1, .u4/.s4/.u2/.s2 (cvt.pack, mma), matrix formats (.b8x16,
# .b6x16_p32), .b1024 (tensormap)
_FORMAT = re.compile(r"^\.(b\d+(x\d+(_p\d+)?)?|[su][24])$")
_VEC = re.compile(r"^\.v\d+$")
PIN = "pin"
FREE = "free"


def order_class(group: Group) -> str:
    """``"pin"``, an ordered class (``"type"``, ``"space"``, ``"layout"``, or the group's own
    ``order``) or ``""`` (the group may stand anywhere)."""
    if group.order:
        return "" if group.order == FREE else group.order
    opts = group.options
    if opts and all(_VEC.match(o) for o in opts):
        return PIN
    if any(is_type_name(o) or _FORMAT.match(o) for o in opts):
        return "type"
    if opts and all(o in SPACES for o in opts):
        return "space"
    if opts and set(opts) <= {".row", ".col"}:
        return "layout"
    return ""


class _Rule:
    """A form's groups as bit masks: per option the groups that take it, per group the
    groups it keeps its order against, the required ones."""

    __slots__ = ("by_option", "keep", "required", "names")

    def __init__(self, form: Form):
        groups = form.groups
        cls = [order_class(g) for g in groups]
        if any(g.options and all(_VEC.match(o) for o in g.options) for g in groups):
            # ptxas reads ``.vN`` with the type after it: both keep their places
            cls = [PIN if c == "type" else c for c in cls]
        self.names = [g.name for g in groups]
        self.by_option: dict = {}
        for i, g in enumerate(groups):
            for o in g.options:
                self.by_option.setdefault(o, []).append(i)
        self.keep = []
        for i, g in enumerate(groups):
            mask = 0
            for j, h in enumerate(groups):
                if i != j and (cls[i] == PIN or cls[j] == PIN or (cls[i] and cls[i] == cls[j])
                               or set(g.options) & set(h.options)):
                    mask |= 1 << j
            self.keep.append(mask)
        self.required = sum(1 << i for i, g in enumerate(groups) if g.required)

    def match(self, mods: tuple):
        n = len(mods)
        at = [0] * n
        by_option, keep = self.by_option, self.keep

        def place(k: int, used: int) -> bool:
            if k == n:
                return used & self.required == self.required
            for g in by_option.get(mods[k], ()):
                bit = 1 << g
                # a group placed before this one that must keep its order comes earlier
                # canonically: no such group with a higher index
                if used & bit or (used & keep[g]) >> (g + 1):
                    continue
                at[k] = g
                if place(k + 1, used | bit):
                    return True
            return False

        if not place(0, 0):
            return None
        return tuple(self.names[g] for g in at)


_RULES: dict = {}
_MATCHED: dict = {}


def match_modifiers(form: Form, mods: tuple):
    """``{group name: option}`` if the modifiers ``mods`` (as written) are an order of the
    form's groups that the form takes, else None."""
    key = (form, mods)
    got = _MATCHED.get(key, _MATCHED)
    if got is not _MATCHED:
        return None if got is None else dict(got)
    names = assignment(form, mods)
    got = None if names is None else dict(zip(names, mods))
    if len(_MATCHED) < 200_000:
        _MATCHED[key] = got
    return None if got is None else dict(got)


def assignment(form: Form, mods: tuple):
    """The group name of each modifier of ``mods`` (as ``match_modifiers`` assigns them),
    or None."""
    rule = _RULES.get(form)
    if rule is None:
        rule = _RULES[form] = _Rule(form)
    return rule.match(mods)


def keeps_order(form: Form, a: str, b: str) -> bool:
    """Whether groups ``a`` and ``b`` of ``form`` keep their canonical order between them."""
    names = [g.name for g in form.groups]
    rule = _RULES.get(form)
    if rule is None:
        rule = _RULES[form] = _Rule(form)
    return bool(rule.keep[names.index(a)] >> names.index(b) & 1)


def same_class(form: Form, a: str, b: str) -> bool:
    """Whether groups ``a`` and ``b`` are of one ordered class (exchanging their options makes
    another instruction, ``cvt.f32.s32`` / ``cvt.s32.f32``, not another order)."""
    ga = next(g for g in form.groups if g.name == a)
    gb = next(g for g in form.groups if g.name == b)
    ca, cb = order_class(ga), order_class(gb)
    return bool(ca and ca == cb and ca != PIN) or bool(set(ga.options) & set(gb.options))


def canonical(form: Form, chosen: dict) -> tuple:
    """The chosen options in the form's canonical order (how the DSL writes them)."""
    return tuple(chosen[g.name] for g in form.groups if g.name in chosen)
