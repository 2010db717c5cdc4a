"""Parser constants, regular expressions and small helpers shared by its parts."""
from __future__ import annotations

import re

from ..isa.opcodes import INSTRUCTION_WORDS
from .lexer import _NUM, NAME_PAT

# The words that start an instruction: the first word of every name in the ISA table (the
# parser knows an instruction when the table does).
KNOWN_INSTRUCTIONS = INSTRUCTION_WORDS

_LINKAGE = frozenset({".visible", ".extern", ".weak", ".common"})
_VAR_SPACES = frozenset({".global", ".const", ".shared", ".local", ".param", ".tex"})
_PTR_SPACES = frozenset({".global", ".shared", ".const", ".local"})
_OPAQUE_TYPES = frozenset({".texref", ".samplerref", ".surfref"})
_MAX_DEPTH = 64

_INT_RE = re.compile(r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)U?\Z")
_DEC_RE = re.compile(r"\d+\Z")

# The common instruction statement, on one match: guard, opcode, operand text, ';'.
_FAST_PAT = (
    r"(?:@(!?)(%?[\w$]+)[ \t]+)?([a-z][\w$]*(?:(?:\.|::)[\w$]+)*)"
    r"(?:[ \t]+([^;()\"/:]*?))?[ \t]*;"
)
_FAST_RE = re.compile(_FAST_PAT)
_FAST_WS_RE = re.compile(r"[ \t\r\n]*" + _FAST_PAT)
_LABEL_RE = re.compile(r"([A-Za-z_$][\w$]*)[ \t]*:(?!:)")
_PIECE_RE = re.compile(r"(?:[^,{}\[\]]|\{[^{}\[\]]*\}|\[[^\[\]]*\])*")
_SECTION_ITEM = r"-?[\w$.]+(?:[ \t]*[-+][ \t]*[\w$.]+)*"
_SECTION_LINE_RE = re.compile(
    r"(\.[A-Za-z_]\w*)[ \t]+(" + _SECTION_ITEM + r"(?:[ \t]*,[ \t]*" + _SECTION_ITEM
    + r")*)[ \t]*(?://[^\n]*)?(?=\n|\Z)"
)
_WS_RE = re.compile(r"[ \t]+")
# One operand of the common shapes (register/symbol, number, [base], [base+off]); anything
# else goes through the token-level operand parser.
_QUICK_RE = re.compile(
    r"[ \t]*(?:(" + NAME_PAT + r")|(" + _NUM + r")|\[[ \t]*(" + NAME_PAT
    + r")[ \t]*(?:(\+[ \t]*-?|-)[ \t]*(\d+))?[ \t]*\])[ \t]*\Z"
)
_LOC_RE = re.compile(r"\.loc[ \t]+(0|[1-9]\d*)[ \t]+(0|[1-9]\d*)[ \t]+(0|[1-9]\d*)[ \t]*(?://[^\n]*)?(?=\n|\Z)")

_OPCODE_CACHE: dict = {}


def _int(text: str) -> int:
    t = text[:-1] if text.endswith("U") else text
    if t[:2] in ("0x", "0X"):
        return int(t, 16)
    if t[:2] in ("0b", "0B"):
        return int(t, 2)
    if len(t) > 1 and t[0] == "0":
        return int(t, 8)
    return int(t)


def _join(tokens) -> str:
    """Normalised text of a token sequence (stable under re-parsing)."""
    out = []
    prev = None
    unary_minus = False
    for t in tokens:
        s = t.text
        if prev is not None:
            p = prev.text
            if not (p in "([{!~" or s in ")]},;:" or (p == "-" and unary_minus)
                    or (s == "(" and prev.kind == "name" and p != "_")):
                out.append(" ")
        unary_minus = s == "-" and (prev is None or (prev.kind == "punct" and prev.text not in ")]}"))
        out.append(s)
        prev = t
    return "".join(out)
