"""Instruction names and how a dotted PTX opcode splits into name + modifiers.

An instruction's *name* is the part of its opcode that identifies the instruction in the PTX
ISA (``ld``, ``cp.async.bulk.tensor``, ``wgmma.mma_async``, ``mbarrier.try_wait``); the rest
are modifiers (``.global``, ``.v4``, ``.f32``). The parser and the DSL both split with
``split_opcode`` so text and traced kernels give identical IR.

Every name here is derived from the ISA table (:mod:`.table`), computed once at import:

* ``COMPOUND_NAMES``: every table name with a dot (``cp.async.bulk.tensor``), plus the
  CTA-qualified barrier spellings (below). Single-word names need no entry: a split that
  finds no compound prefix takes the first word.
* ``INSTRUCTION_WORDS``: the first word of every table name (``ld``, ``cp``, ``tcgen05``): the
  words the parser accepts as the start of an instruction.

The one spelling the table does not hold as a name is the optional ``.cta`` qualifier of the
CTA barriers (PTX ISA 7.8: ``bar{.cta}.sync``, ``barrier{.cta}.arrive{.aligned}``,
``barrier{.cta}.red...``). It sits between the instruction's two words, so it cannot be a
modifier group of the table's ``bar.sync`` forms; rule: for every two-word table name
``bar.X`` / ``barrier.X``, ``bar.cta.X`` / ``barrier.cta.X`` is a name too (``ALIASES`` maps
it to the table name it qualifies). Other spellings the earlier hand list held need no rule:
``match.sync`` is the table's ``match`` (``match.any.sync.b32``: ``.sync`` is a modifier), and
``cp.async.mbarrier`` only ever appears as the table's ``cp.async.mbarrier.arrive``.
"""
from __future__ import annotations

from .table import TABLE

# The instructions whose ISA grammar has the optional ``.cta`` after their first word.
_CTA_QUALIFIED = ("bar", "barrier")


def _cta_aliases(names) -> dict:
    """``{"bar.cta.sync": "bar.sync", "barrier.cta.red": "barrier.red", ...}``."""
    out = {}
    for n in names:
        first, _, rest = n.partition(".")
        if first in _CTA_QUALIFIED and rest and "." not in rest:
            out[f"{first}.cta.{rest}"] = n
    return out


ALIASES: dict = _cta_aliases(TABLE)
COMPOUND_NAMES = frozenset(n for n in TABLE if "." in n) | frozenset(ALIASES)
INSTRUCTION_WORDS = frozenset(n.split(".", 1)[0].split("::", 1)[0] for n in TABLE)

_MAX_PARTS = max(n.count(".") for n in COMPOUND_NAMES) + 1
_SPLIT: dict = {}        # opcode text -> (name, modifiers): the DSL splits the same few often


def split_opcode(full: str) -> tuple[str, tuple[str, ...]]:
    """``"ld.global.v4.f32"`` -> ``("ld", (".global", ".v4", ".f32"))``.

    The longest dotted prefix that is a known compound name is the instruction name.
    """
    got = _SPLIT.get(full)
    if got is not None:
        return got
    parts = full.split(".")
    got = None
    for n in range(min(len(parts), _MAX_PARTS), 1, -1):
        name = ".".join(parts[:n])
        if name in COMPOUND_NAMES:
            got = name, tuple("." + p for p in parts[n:])
            break
    if got is None:
        got = parts[0], tuple("." + p for p in parts[1:])
    if len(_SPLIT) < 65536:
        _SPLIT[full] = got
    return got


def table_name(name: str) -> str:
    """The table's name for instruction ``name`` (``barrier.cta.sync`` -> ``barrier.sync``)."""
    return ALIASES.get(name, name)
