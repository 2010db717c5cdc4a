"""PTX lexer: one compiled regular expression, tokens produced on demand from a position.

The parser is a cursor over the text, so it can mix token-level parsing (directives, odd
statements) with whole-statement fast paths (the common ``opcode operands;`` line) without a
separate token list. Token kinds:

* ``num``    integers (decimal, ``0x..``, ``0b..``, octal, optional ``U`` suffix), hex floats
             ``0f3F800000`` / ``0d3FF0000000000000`` and decimal floats ``1.5e3``
* ``str``    a double-quoted string (no newlines inside)
* ``dir``    a directive or modifier word starting with a dot: ``.reg``, ``.shared::cta``
* ``name``   identifiers, opcodes and registers: ``ld.global.v4.f32``, ``%tid.x``, ``$L__BB0_1``,
             ``mbarrier.try_wait.parity.shared::cta.b64``
* ``punct``  one of ``{ } [ ] ( ) , ; : + - ! @ | < > = * / ~ & ^ %`` (``%`` alone: the
             modulo of a constant expression; ``%r1`` is a name)
* ``eof``    end of the text

Whitespace and ``//`` / ``/* */`` comments are skipped. Anything else is a ``ParseError`` that
names the line, the column and the offending character.
"""
from __future__ import annotations

import bisect
import re

from ..errors import ParseError

#: whitespace and comments (possibly several in a row)
SKIP_RE = re.compile(r"(?:[ \t\r\n\f\v]+|//[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)*")

_NUM = (
    r"0[fF][0-9a-fA-F]{8}(?![\w$])|0[dD][0-9a-fA-F]{16}(?![\w$])"
    r"|0[xX][0-9a-fA-F]+U?(?![\w$])|0[bB][01]+U?(?![\w$])"
    r"|\d+\.\d*(?:[eE][+-]?\d+)?(?![\w$])|\d+[eE][+-]?\d+(?![\w$])|\d+U?(?![\w$])"
)
NAME_PAT = r"%[\w$]+(?:\.[\w$]+)*|[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*"
TOKEN_RE = re.compile(
    r"(?P<num>" + _NUM + r")"
    r'|(?P<str>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<dir>\.[A-Za-z_][\w$]*(?:::[\w$]+)*)"
    r"|(?P<name>" + NAME_PAT + r")"
    r"|(?P<punct>[{}\[\](),;:+\-!@|<>=*/~&^%])"
)

NAME_RE = re.compile(NAME_PAT)

EOF = "eof"


class Token:
    """One token: ``kind``, ``text`` and its offsets ``start``/``end`` in the source."""

    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind: str, text: str, start: int, end: int):
        self.kind, self.text, self.start, self.end = kind, text, start, end

    def __repr__(self):
        return f"Token({self.kind}, {self.text!r}, {self.start})"


class Source:
    """The text being parsed plus a lazily built line index for error positions."""

    __slots__ = ("text", "name", "_lines")

    def __init__(self, text: str, name: str = "<ptx>"):
        self.text, self.name, self._lines = text, name, None

    def line_col(self, pos: int) -> tuple[int, int]:
        """1-based (line, column) of offset ``pos``."""
        if self._lines is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._lines = starts
        pos = max(0, min(pos, len(self.text)))
        line = bisect.bisect_right(self._lines, pos)
        return line, pos - self._lines[line - 1] + 1

    def error(self, message: str, pos: int, token: str = "") -> ParseError:
        line, col = self.line_col(pos)
        return ParseError(message, line, col, token, self.name)


class TextLoc:
    """Where an instruction sits in PTX text: ``file:line``, the line found only when asked
    (error messages), so parsing pays one small object per instruction."""

    __slots__ = ("src", "pos")

    def __init__(self, src: Source, pos: int):
        self.src, self.pos = src, pos

    @property
    def file(self) -> str:
        return self.src.name

    @property
    def line(self) -> int:
        return self.src.line_col(self.pos)[0]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    __repr__ = __str__


def skip(text: str, pos: int) -> int:
    """Offset of the first character at or after ``pos`` that is not whitespace/comment."""
    return SKIP_RE.match(text, pos).end()


def next_token(src: Source, pos: int) -> Token:
    """The token at or after ``pos`` (whitespace and comments skipped)."""
    text = src.text
    pos = SKIP_RE.match(text, pos).end()
    if pos >= len(text):
        return Token(EOF, "", pos, pos)
    m = TOKEN_RE.match(text, pos)
    if m is None:
        ch = text[pos]
        if text.startswith("/*", pos):
            raise src.error("unterminated comment", pos, "/*")
        if ch == '"':
            raise src.error("unterminated string", pos, text[pos:pos + 20].split("\n")[0])
        raise src.error("unexpected character", pos, ch)
    return Token(m.lastgroup, m.group(), pos, m.end())


def tokenize(text: str, name: str = "<ptx>") -> list[Token]:
    """Every token of ``text`` (a convenience for tools and tests; the parser streams)."""
    src = Source(text, name)
    out, pos = [], 0
    while True:
        t = next_token(src, pos)
        if t.kind == EOF:
            return out
        out.append(t)
        pos = t.end


__all__ = ["Token", "Source", "next_token", "tokenize", "skip", "TOKEN_RE", "NAME_RE", "EOF"]
