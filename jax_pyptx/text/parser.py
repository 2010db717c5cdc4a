"""PTX text -> IR ``Module``.

Accepts the PTX that nvcc, Triton, LLVM and CUTLASS produce (and hand-written PTX):
module directives, ``.entry``/``.func`` definitions and prototypes (return params, ``.ptr``
attributes, ``.noreturn``), function directives, ``.reg``/``.shared``/``.global``/``.const``/
``.local``/``.param`` variables with alignment, vectors, array dims and initializers, nested
``{ }`` scopes, labels, guards, vector / address / ``call`` list operands, ``.pragma``,
``.loc``/``.file`` and DWARF ``.section`` blocks.

Design choices (documented here because the IR is shared with the DSL):

* Opcodes are split with :func:`jax_pyptx.isa.opcodes.split_opcode`, so parsed and traced IR
  are equal. The first dotted word must start an instruction of the ISA table
  (``jax_pyptx.isa.INSTRUCTION_WORDS``); anything else is a ``ParseError``.
* ``%name`` operands are ``Reg``; a bare identifier is a ``Reg`` when a ``.reg`` declaration in
  the function declared it (``.reg .pred p;``), otherwise a ``Sym`` (label, param, variable,
  function). ``Reg.type`` is filled from the declarations when known.
* Directives with free-form arguments are kept as ``RawDirective(name, args)``: function
  directives get one normalised argument string (``RawDirective(".maxntid", ("128, 1, 1",))``);
  statements that end in ``;`` (``.alias``, ``.callprototype``, module ``.pragma``) set
  ``terminated=True``. ``.file`` and ``.loc`` arguments are split on whitespace with commas
  kept on the preceding word; plain decimal numbers in ``.loc`` are ``int``.
* DWARF ``.section`` lines become ``RawDirective(".b8", ("1,2,3",))`` (whitespace removed)
  or ``Label``.
* Registers declared in an inner ``{ }`` scope stay known as registers for the rest of the
  function (PTX tools never reuse such a name as a symbol).
* Speed: the common instruction line is matched by one regular expression and its operands
  are parsed once per distinct spelling (operand nodes are immutable, so they are cached per
  function); everything else goes through the token-level parser, which also produces every
  error message. Any failure inside the parser surfaces as ``ParseError`` with line, column
  and the offending token: no other exception escapes.

Examples:
    >>> from jax_pyptx.text.parser import parse
    >>> m = parse(".version 8.5 .target sm_90a .address_size 64 .visible .entry k() { ret; }")
    >>> m.version, [f.name for f in m.functions]
    ((8, 5), ['k'])
"""
from __future__ import annotations

import gc
import re

from ..errors import ArchError, ParseError, PtxError
from ..ir.nodes import (
    Block, Function, Label, Loc, Module, Pragma, RawDirective, Section, VarDecl,
)
from ..isa.directives import (
    BODY_STATEMENTS, FUNCTION_DIRECTIVES, FUNCTION_DIRECTIVE_MIN_SM, MODULE_STATEMENTS,
)
from ..isa.model import parse_target, target_min_ptx
from .lexer import TextLoc, EOF, next_token, SKIP_RE, Source, Token
from .parse_decls import DeclParser
from .parse_instructions import InstructionParser
from .parser_base import (
    _DEC_RE, _FAST_RE, _FAST_WS_RE, _int, _INT_RE, _join, KNOWN_INSTRUCTIONS, _LABEL_RE,
    _LINKAGE, _LOC_RE, _MAX_DEPTH, _SECTION_LINE_RE, _VAR_SPACES, _WS_RE,
)


__all__ = ["parse", "parse_statements", "KNOWN_INSTRUCTIONS"]


def parse(text: str, source: str = "<ptx>", check: bool = True) -> Module:
    """Parse PTX ``text`` into a ``Module``, refusing what ptxas refuses.

    With ``check`` (the default) the module is checked as ptxas checks it before assembling:
    the header (a known ``sm_`` target, a ``.version`` that has it), every directive known
    where it stands (module scope, function header, body) and available on the target, no
    label defined twice in one scope, no function or module variable defined twice, and every
    instruction valid for the module's target and version (``isa.module_check``: operand
    count, kinds and types, immediates by ptxas's rule, ranges, arch and PTX version, special
    registers). ``check=False`` reads any syntactically valid text (tools that print PTX
    back as it was written, or check it themselves).

    Raises ``ParseError`` (syntax, directives, labels, duplicate definitions, the header; with
    line and column) or, for an instruction, the validator's ``ValidationError`` /
    ``PtxTypeError`` / ``PtxValueError`` / ``ArchError`` naming the PTX line (``source:line``);
    all are ``PtxError``.

    Examples:
        >>> from jax_pyptx.text.parser import parse
        >>> m = parse(".version 8.5 .target sm_90a .address_size 64 .visible .entry k() { ret; }")
        >>> m.functions[0].name
        'k'
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParseError(f"PTX text is not UTF-8 ({e.reason})", 1, 1, "", source) from None
    if not isinstance(text, str):
        raise ParseError(f"expected PTX text (str), got {type(text).__name__}", 1, 1, "", source)
    p = _Parser(text, source)
    p.check = check
    gc_was_on = gc.isenabled()
    gc.disable()          # the IR is acyclic; collection passes while building it are waste
    try:
        m = p.module()
        if check:
            from ..isa.module_check import check_module

            check_module(m)
        return m
    except PtxError:
        raise
    except RecursionError:
        raise p.src.error("nesting too deep", p.pos, p._tok_text()) from None
    except Exception as e:  # never let an internal failure escape as anything else
        raise p.src.error(f"cannot parse ({type(e).__name__}: {e})", p.pos, p._tok_text()) from None
    finally:
        if gc_was_on:
            gc.enable()


def parse_statements(text: str, source: str = "<ptx>", unknown_ok: bool = False) -> list:
    """Parse ``text`` as the statements of a function body (instructions, labels, ``.reg``
    declarations, scopes) and return them. ``unknown_ok``: an instruction the ISA table does
    not know is kept as written (an ``Instruction`` with the opcode split at its dots) instead
    of being a ``ParseError``: ``ptx.raw`` uses it for the instructions the table lacks.
    Raises only ``ParseError``.

    Examples:
        >>> from jax_pyptx.text.parser import parse_statements
        >>> [ins.opcode for ins in parse_statements("add.u32 %r1, %r1, 4; ret;")]
        ['add', 'ret']
    """
    if not isinstance(text, str):
        raise ParseError(f"expected PTX text (str), got {type(text).__name__}", 1, 1, "", source)
    body = text + "\n}"
    p = _Parser(body, source)
    p.unknown_ok = unknown_ok
    try:
        stmts = p.body(0)
        rest = SKIP_RE.match(body, p.pos).end()
        if rest < len(body):
            raise p.src.error("unbalanced '}'", p.pos - 1, "}")
        return stmts
    except ParseError:
        raise
    except RecursionError:
        raise p.src.error("nesting too deep", p.pos, p._tok_text()) from None
    except Exception as e:  # never let an internal failure escape as anything else
        raise p.src.error(f"cannot parse ({type(e).__name__}: {e})", p.pos, p._tok_text()) from None


class _Parser(DeclParser, InstructionParser):
    unknown_ok = False        # parse_statements(..., unknown_ok=True)
    check = False             # parse(..., check=True): refuse what ptxas refuses
    target = None             # the module's sm_ Target (with check)

    def __init__(self, text: str, source: str):
        self.src = Source(text, source)
        self.text = text
        self.pos = 0
        self._tok: Token | None = None
        self._tokpos = -1
        self._new_function()

    def _new_function(self):
        self.ocache: dict = {}
        self.reg_names: dict = {}       # explicit register name -> type
        self.reg_prefixes: dict = {}    # prefix of %r<N> -> (type, N)

    # ------------------------------------------------------------------ token helpers
    def peek(self) -> Token:
        if self._tokpos != self.pos:
            self._tok = next_token(self.src, self.pos)
            self._tokpos = self.pos
        return self._tok

    def advance(self) -> Token:
        t = self.peek()
        self.pos = t.end
        return t

    def accept(self, text: str) -> bool:
        t = self.peek()
        if t.text == text and t.kind in ("punct", "dir"):
            self.pos = t.end
            return True
        return False

    def expect(self, text: str, what: str = "") -> Token:
        t = self.peek()
        if t.text != text or t.kind not in ("punct", "dir"):
            raise self.error(f"expected {what or repr(text)}", t)
        self.pos = t.end
        return t

    def expect_kind(self, kind: str, what: str) -> Token:
        t = self.peek()
        if t.kind != kind:
            raise self.error(f"expected {what}", t)
        self.pos = t.end
        return t

    def expect_int(self, what: str = "an integer") -> int:
        t = self.peek()
        if t.kind != "num" or not _INT_RE.match(t.text):
            raise self.error(f"expected {what}", t)
        self.pos = t.end
        return _int(t.text)

    def error(self, message: str, tok: Token | None = None) -> ParseError:
        if tok is None:
            tok = self.peek()
        if tok.kind == EOF:
            return self.src.error(message + " (end of input)", tok.start, "")
        return self.src.error(message, tok.start, tok.text)

    def _tok_text(self) -> str:
        try:
            return self.peek().text
        except ParseError:
            return ""

    # ------------------------------------------------------------------ module
    def module(self) -> Module:
        t = self.peek()
        if t.text != ".version":
            raise self.error("a PTX module starts with .version", t)
        self.advance()
        t = self.expect_kind("num", "a PTX ISA version such as 8.0")
        m = re.fullmatch(r"(\d+)\.(\d+)", t.text)
        if not m:
            raise self.error("expected a PTX ISA version such as 8.0", t)
        version = (int(m.group(1)), int(m.group(2)))
        self.expect(".target", ".target after .version")
        ttoks = [self.expect_kind("name", "a target such as sm_90a")]
        while self.accept(","):
            ttoks.append(self.expect_kind("name", "a target such as sm_90a"))
        targets = [t.text for t in ttoks]
        if self.check:
            self._check_header(version, ttoks)
        address_size = 32
        if self.accept(".address_size"):
            address_size = self.expect_int("32 or 64")
            if address_size not in (32, 64):
                raise self.error("address size must be 32 or 64", self._last_tok())
        mod = Module(version=version, target=tuple(targets), address_size=address_size, items=[])
        items = mod.items
        defined: dict = {}            # name -> (what, a definition?, line) (with check)
        while True:
            t = self.peek()
            if t.kind == EOF:
                return mod
            if t.kind != "dir":
                raise self.error("expected a directive at module scope", t)
            d = t.text
            linkage = ""
            if d in _LINKAGE:
                self.advance()
                linkage = d
                t = self.peek()
                d = t.text
                if t.kind != "dir":
                    raise self.error(f"expected .entry, .func or a variable after {linkage}", t)
            if d in (".entry", ".func"):
                items.append(self.function(linkage))
                if self.check:
                    self._check_defined(items[-1], defined)
            elif d in _VAR_SPACES:
                items.append(self.var_decl(linkage))
                if self.check:
                    self._check_defined(items[-1], defined)
            elif linkage:
                raise self.error(f"expected .entry, .func or a variable after {linkage}", t)
            elif d == ".file":
                items.append(self.file_directive())
            elif d == ".section":
                items.append(self.section())
            elif d in (".version", ".target", ".address_size"):
                raise self.error(f"{d} may appear only once, at the top of the module", t)
            elif d in (".reg", ".loc"):
                raise self.error(f"{d} is not allowed at module scope", t)
            else:
                if self.check and d not in MODULE_STATEMENTS:
                    raise self._unknown_directive(t, "at module scope", MODULE_STATEMENTS)
                items.append(self.raw_statement())

    # ------------------------------------------------------------------ checks (check=True)
    _OTHER_TARGETS = ("texmode_unified", "texmode_independent", "debug", "map_f64_to_f32")

    def _check_header(self, version: tuple, ttoks: list) -> None:
        """ptxas: an unknown target is refused, and so is a .version older than the
        target."""
        for t in ttoks:
            if t.text in self._OTHER_TARGETS:
                continue
            try:
                target = parse_target(t.text)
            except ArchError as e:
                raise self.error(f"unknown .target: {e.message.split('; ', 1)[-1]}", t) from None
            if self.target is None:
                self.target = target
            need = target_min_ptx(target)
            if version < need:
                raise self.error(f".version {version[0]}.{version[1]} does not support .target "
                                 f"{target.name}; it needs .version {need[0]}.{need[1]} or "
                                 "later", t)

    def _unknown_directive(self, t: Token, where: str, allowed) -> ParseError:
        return self.error(f"unknown directive {t.text} {where}; allowed here: "
                          f"{', '.join(sorted(allowed))}", t)

    def _check_defined(self, item, defined: dict) -> None:
        """ptxas: a function or module variable is defined once; a name is a function or a
        variable, an entry or a .func, not two of them (a prototype or an ``.extern``
        declaration may precede the definition)."""
        if isinstance(item, Function):
            what, name = item.kind[1:], item.name
            is_def = item.body is not None
        elif isinstance(item, VarDecl):
            what, name = "variable", item.name
            is_def = item.linkage != ".extern"
        else:
            return
        at = self._def_pos
        line = self.src.line_col(at)[0]
        prev = defined.get(name)
        if prev is None:
            defined[name] = (what, is_def, line)
            return
        pwhat, pdef, pline = prev
        kind = {"entry": "entry", "func": "function", "variable": "variable"}
        if pwhat != what:
            raise self.src.error(f"{name!r} is defined as {_a(kind[what])} here and as "
                                 f"{_a(kind[pwhat])} at line {pline}", at, name)
        if is_def and pdef:
            raise self.src.error(f"duplicate definition of {kind[what]} {name!r} (first "
                                 f"defined at line {pline})", at, name)
        if is_def:
            defined[name] = (what, True, line)

    def _check_label(self, name: str, pos: int, labels: dict) -> None:
        first = labels.get(name)
        if first is not None:
            raise self.src.error(f"duplicate label {name!r} in this scope (first defined at "
                                 f"line {self.src.line_col(first)[0]})", pos, name)
        labels[name] = pos

    def _check_function_directive(self, t: Token) -> None:
        if t.text not in FUNCTION_DIRECTIVES:
            raise self._unknown_directive(t, "in a function header", FUNCTION_DIRECTIVES)
        sm = FUNCTION_DIRECTIVE_MIN_SM.get(t.text)
        if sm is not None and self.target is not None and not self.target.allows(sm, ()):
            from .lexer import TextLoc

            raise ArchError(f"{t.text} needs sm_{sm} or higher; the module targets "
                            f"{self.target.name}", loc=TextLoc(self.src, t.start))

    def _last_tok(self) -> Token:
        return Token("num", "", self.pos, self.pos)

    def raw_statement(self) -> RawDirective:
        """``.name tokens... ;`` kept as a terminated RawDirective."""
        name = self.advance()
        toks = []
        while True:
            t = self.peek()
            if t.kind == EOF:
                raise self.error(f"missing ';' after {name.text}", t)
            if t.kind == "punct" and t.text in "{}":
                raise self.error(f"unexpected {t.text!r} in {name.text}", t)
            self.advance()
            if t.text == ";" and t.kind == "punct":
                break
            toks.append(t)
        return RawDirective(name.text, (_join(toks),) if toks else (), terminated=True)

    def _line_tokens(self) -> list:
        """Tokens up to the end of the current line."""
        end = self.text.find("\n", self.pos)
        if end < 0:
            end = len(self.text)
        toks = []
        while True:
            t = self.peek()
            if t.kind == EOF or t.start >= end:
                return toks
            toks.append(self.advance())

    @staticmethod
    def _words(toks, ints: bool) -> tuple:
        out = []
        for t in toks:
            if t.text == "," and t.kind == "punct":
                if not out or str(out[-1]).endswith(","):
                    return None
                out[-1] = f"{out[-1]},"
            elif ints and t.kind == "num" and _DEC_RE.match(t.text) and not (
                    len(t.text) > 1 and t.text[0] == "0"):
                out.append(int(t.text))
            elif t.kind == "punct":
                return None
            else:
                out.append(t.text)
        return tuple(out)

    def file_directive(self) -> RawDirective:
        start = self.advance()
        toks = self._line_tokens()
        if (len(toks) < 2 or toks[0].kind != "num" or toks[1].kind != "str"
                or any(t.kind not in ("num", "punct") or (t.kind == "punct" and t.text != ",")
                       for t in toks[2:])):
            raise self.error(".file takes an index, a quoted file name and optional numbers",
                             toks[0] if toks else start)
        args = self._words(toks, False)
        if args is None or (isinstance(args[-1], str) and args[-1].endswith(",")):
            raise self.error("malformed .file directive", start)
        return RawDirective(".file", args)

    def loc(self) -> Loc:
        start = self.advance()
        toks = self._line_tokens()
        bad = [t for t in toks[:3] if t.kind != "num" or not _INT_RE.match(t.text)]
        if len(toks) < 3 or bad:
            raise self.error(".loc takes a file index, a line and a column",
                             bad[0] if bad else start)
        args = self._words(toks, True)
        if args is None or (isinstance(args[-1], str) and args[-1].endswith(",")):
            raise self.error("malformed .loc directive", start)
        return Loc(args)

    def section(self) -> Section:
        self.advance()
        t = self.peek()
        if t.kind not in ("dir", "name"):
            raise self.error("expected a section name", t)
        self.advance()
        sec = Section(t.text, [])
        self.expect("{", "'{' after the section name")
        text, body = self.text, sec.body
        while True:
            pos = SKIP_RE.match(text, self.pos).end()
            self.pos = pos
            if pos >= len(text):
                raise self.error("missing '}' at the end of the section")
            c = text[pos]
            if c == "}":
                self.pos = pos + 1
                return sec
            if c == ".":
                m = _SECTION_LINE_RE.match(text, pos)
                if m is None:
                    tok = self.advance()
                    raise self.error("malformed section data line", self.peek() if tok.kind == "dir" else tok)
                body.append(RawDirective(m.group(1), (_WS_RE.sub("", m.group(2)),)))
                self.pos = m.end()
                continue
            m = _LABEL_RE.match(text, pos)
            if m is None:
                raise self.error("expected a data directive or a label in the section")
            body.append(Label(m.group(1)))
            self.pos = m.end()

    # ------------------------------------------------------------------ declarations
    def function(self, linkage: str) -> Function:
        self._new_function()
        kind = self.advance().text
        ret = []
        if kind == ".func" and self.peek().text == "(" and self.peek().kind == "punct":
            ret = self.param_list()
        nt = self.peek()
        if nt.kind != "name" or nt.text[0] == "%" or "." in nt.text or "::" in nt.text:
            raise self.error("expected a function name", nt)
        self.advance()
        self._def_pos = nt.start
        f = Function(name=nt.text, kind=kind, linkage=linkage, params=[], ret_params=ret,
                     directives=[], body=[])
        if self.peek().text == "(" and self.peek().kind == "punct":
            f.params = self.param_list()
        while True:
            t = self.peek()
            if t.kind != "dir":
                break
            if self.check:
                self._check_function_directive(t)
            self.advance()
            if t.text == ".noreturn":
                f.noreturn = True
            elif t.text == ".pragma":
                strs = [self.expect_kind("str", "a quoted pragma").text]
                while self.accept(","):
                    strs.append(self.expect_kind("str", "a quoted pragma").text)
                self.expect(";", "';' after .pragma")
                f.directives.append(RawDirective(".pragma", (", ".join(strs),), terminated=True))
            else:
                nums = []
                if self.peek().kind == "num":
                    nums.append(self.expect_int("an integer"))
                    while self.accept(","):
                        nums.append(self.expect_int("an integer"))
                f.directives.append(RawDirective(t.text, (", ".join(map(str, nums)),) if nums else ()))
        if self.accept(";"):
            f.body = None
            return f
        self.expect("{", "'{' (the function body) or ';'")
        f.body = self.body(0)
        return f

    def body(self, depth: int) -> list:
        text = self.text
        src = self.src
        n = len(text)
        stmts: list = []
        append = stmts.append
        labels: dict = {}             # label -> its offset, in this scope (with check)
        check = self.check
        fast = _FAST_RE.match
        fast_ws = _FAST_WS_RE.match
        skip = SKIP_RE.match
        while True:
            m = fast_ws(text, self.pos)
            if m is not None:
                ins = self._fast_instruction(m)
                if ins is not None:
                    ins.loc = TextLoc(src, m.start(3) if m.start(2) < 0 else m.start(2))
                    append(ins)
                    self.pos = m.end()
                    continue
            pos = skip(text, self.pos).end()
            self.pos = pos
            if pos >= n:
                raise self.error("missing '}' at the end of the function body")
            c = text[pos]
            if c == "}":
                self.pos = pos + 1
                return stmts
            if c == "{":
                if depth >= _MAX_DEPTH:
                    raise self.error("scopes nested too deep")
                self.pos = pos + 1
                append(Block(self.body(depth + 1)))
                continue
            if c == ".":
                self.body_directive(stmts)
                continue
            m = fast(text, pos)
            if m is not None:
                ins = self._fast_instruction(m)
                if ins is not None:
                    ins.loc = TextLoc(src, pos)
                    append(ins)
                    self.pos = m.end()
                    continue
            m = _LABEL_RE.match(text, pos)
            if m is not None:
                if check:
                    self._check_label(m.group(1), pos, labels)
                append(Label(m.group(1)))
                self.pos = m.end()
                continue
            self.pos = pos
            ins = self.instruction()
            ins.loc = TextLoc(src, pos)
            append(ins)

    def body_directive(self, stmts: list) -> None:
        t = self.peek()
        d = t.text
        if t.kind != "dir":
            raise self.error("expected a directive or an instruction", t)
        if d == ".reg":
            stmts.extend(self.reg_decl())
        elif d == ".loc":
            m = _LOC_RE.match(self.text, self.pos)
            if m is not None:
                stmts.append(Loc((int(m.group(1)), int(m.group(2)), int(m.group(3)))))
                self.pos = m.end()
            else:
                stmts.append(self.loc())
        elif d == ".pragma":
            self.advance()
            s = self.expect_kind("str", "a quoted pragma")
            self.expect(";", "';' after .pragma")
            stmts.append(Pragma(s.text[1:-1]))
        elif d in _VAR_SPACES:
            stmts.append(self.var_decl("", in_body=True))
        elif d in _LINKAGE:
            self.advance()
            t2 = self.peek()
            if t2.kind != "dir" or t2.text not in _VAR_SPACES:
                raise self.error(f"expected a variable declaration after {d}", t2)
            stmts.append(self.var_decl(d, in_body=True))
        elif d in (".entry", ".func", ".version", ".target", ".address_size", ".section", ".file"):
            raise self.error(f"{d} is not allowed inside a function body", t)
        else:
            if self.check and d not in BODY_STATEMENTS:
                raise self._unknown_directive(t, "in a function body", BODY_STATEMENTS | {
                    ".reg", ".loc", ".pragma", *_VAR_SPACES})
            stmts.append(self.raw_statement())

    # ------------------------------------------------------------------ instructions


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun
