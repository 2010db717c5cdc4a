"""PTX text -> IR ``Module``.

Accepts the PTX that nvcc, Triton, LLVM and CUTLASS produce (and hand-written PTX):
module directives, ``.entry``/``.func`` definitions and prototypes (return params, ``.ptr``
attributes, ``.noreturn``), function directives, ``.reg``/``.shared``/``.global``/``.const``/
``.local``/``.param`` variables with alignment, vectors, array dims and initializers, nested
``{ }`` scopes, labels, guards, vector / address / ``call`` list operands, ``.pragma``,
``.loc``/``.file`` and DWARF ``.section`` blocks.

Design choices (documented here because the IR is shared with the DSL):

* Opcodes are split with :func:`jax_pyptx.isa.opcodes.split_opcode`, so parsed and traced IR
  are equal. The first dotted word must be a PTX instruction name (a fixed list below, plus
  whatever the isa table knows); anything else is a ``ParseError``.
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
"""
from __future__ import annotations

import re

from ..errors import ParseError
from ..ir.nodes import (
    Addr, Block, Function, Guard, Imm, Instruction, Label, Loc, Module, Param, ParenList,
    Pragma, PredPair, RawDirective, Reg, RegDecl, Section, Sink, Sym, VarDecl, Vec,
)
from ..isa.opcodes import split_opcode
from ..types import _ALL as _TYPES
from .lexer import _NUM, EOF, NAME_PAT, SKIP_RE, Source, Token, next_token

__all__ = ["parse", "KNOWN_INSTRUCTIONS"]

#: First words of every PTX instruction (PTX ISA 9.x).
KNOWN_INSTRUCTIONS = frozenset("""
abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev
brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div
dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep istypep ld ldmatrix
ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24
multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt
sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff
vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote
vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor
""".split())

_LINKAGE = frozenset({".visible", ".extern", ".weak", ".common"})
_VAR_SPACES = frozenset({".global", ".const", ".shared", ".local", ".param", ".tex"})
_PTR_SPACES = frozenset({".global", ".shared", ".const", ".local"})
_OPAQUE_TYPES = frozenset({".texref", ".samplerref", ".surfref"})
_MAX_DEPTH = 64

_INT_RE = re.compile(r"(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)U?\Z")
_DEC_RE = re.compile(r"\d+\Z")

# The common instruction statement, on one match: guard, opcode, operand text, ';'.
_FAST_RE = re.compile(
    r"(?:@(!?)(%?[\w$]+)[ \t]+)?([a-z][\w$]*(?:(?:\.|::)[\w$]+)*)"
    r"(?:[ \t]+([^;()\"/]*?))?[ \t]*;"
)
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


def parse(text: str, source: str = "<ptx>") -> Module:
    """Parse PTX ``text`` into a ``Module``. Raises only ``ParseError``."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParseError(f"PTX text is not UTF-8 ({e.reason})", 1, 1, "", source) from None
    if not isinstance(text, str):
        raise ParseError(f"expected PTX text (str), got {type(text).__name__}", 1, 1, "", source)
    p = _Parser(text, source)
    try:
        return p.module()
    except ParseError:
        raise
    except RecursionError:
        raise p.src.error("nesting too deep", p.pos, p._tok_text()) from None
    except Exception as e:  # never let an internal failure escape as anything else
        raise p.src.error(f"cannot parse ({type(e).__name__}: {e})", p.pos, p._tok_text()) from None


def _in_isa_table(full: str) -> bool:
    """Instruction names the ISA table knows count as known too."""
    try:
        from ..isa import TABLE
    except Exception:  # pragma: no cover - the table failing to load must not break parsing
        return False
    return split_opcode(full)[0] in TABLE


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


class _Parser:
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
        targets = [self.expect_kind("name", "a target such as sm_90a").text]
        while self.accept(","):
            targets.append(self.expect_kind("name", "a target such as sm_90a").text)
        address_size = 32
        if self.accept(".address_size"):
            address_size = self.expect_int("32 or 64")
            if address_size not in (32, 64):
                raise self.error("address size must be 32 or 64", self._last_tok())
        mod = Module(version=version, target=tuple(targets), address_size=address_size, items=[])
        items = mod.items
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
            elif d in _VAR_SPACES:
                items.append(self.var_decl(linkage))
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
                items.append(self.raw_statement())

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
    def _type(self, tok: Token):
        t = _TYPES.get(tok.text[1:]) if tok.kind == "dir" else None
        if t is None:
            raise self.error("expected a PTX type such as .b32", tok)
        return t

    def var_decl(self, linkage: str, in_body: bool = False) -> VarDecl | RawDirective:
        start = self.pos
        space = self.advance().text
        attrs, align, vector, typ = [], 0, 0, None
        while True:
            t = self.peek()
            if t.kind != "dir":
                break
            d = t.text
            if d == ".align":
                self.advance()
                align = self.expect_int("an alignment")
            elif d in (".v2", ".v4", ".v8"):
                self.advance()
                vector = int(d[2:])
            elif d == ".attribute":
                self.advance()
                a0 = self.expect("(", "'(' after .attribute")
                toks = []
                while not self.accept(")"):
                    tt = self.advance()
                    if tt.kind == EOF or tt.text in (";", "{", "}"):
                        raise self.error("unterminated .attribute(...)", tt)
                    toks.append(tt)
                if not toks:
                    raise self.error("empty .attribute()", a0)
                attrs.append(".attribute(" + _join(toks) + ")")
            elif d in _OPAQUE_TYPES:
                # .texref/.samplerref/.surfref: no IR type; keep the statement verbatim
                self.pos = start
                raw = self.raw_statement()
                if linkage:
                    raw = RawDirective(linkage, (raw.name + (" " + raw.args[0] if raw.args else ""),),
                                       terminated=True)
                return raw
            elif typ is None:
                typ = self._type(t)
                self.advance()
            else:
                raise self.error("unexpected directive in a variable declaration", t)
        if typ is None:
            raise self.error(f"expected the type of the {space} variable")
        nt = self.peek()
        if nt.kind != "name" or "." in nt.text or "::" in nt.text:
            raise self.error("expected a variable name", nt)
        self.advance()
        dims = []
        while self.accept("["):
            if self.accept("]"):
                dims.append(None)
                continue
            dims.append(self.expect_int("an array size"))
            self.expect("]", "']'")
        init = None
        if self.accept("="):
            init = self.init_value(0)
        if in_body and space == ".param" and init is not None:
            raise self.error("a .param variable cannot have an initializer", nt)
        self.expect(";", "';' after the variable declaration")
        return VarDecl(space=space, type=typ, name=nt.text, align=align, dims=tuple(dims),
                       init=init, linkage=linkage, vector=vector, attrs=tuple(attrs))

    def init_value(self, depth: int):
        if depth > _MAX_DEPTH:
            raise self.error("initializer nested too deep")
        if self.accept("{"):
            items = [self.init_value(depth + 1)]
            while self.accept(","):
                items.append(self.init_value(depth + 1))
            self.expect("}", "',' or '}' in the initializer")
            return tuple(items)
        toks, parens = [], 0
        while True:
            t = self.peek()
            if t.kind == EOF:
                raise self.error("unterminated initializer", t)
            if t.kind in ("str", "dir"):
                raise self.error("unexpected token in an initializer", t)
            if t.kind == "punct":
                if t.text in ",};" and parens == 0:
                    break
                if t.text in "{};@:[]":
                    raise self.error("unexpected token in an initializer", t)
                if t.text == "(":
                    parens += 1
                elif t.text == ")":
                    parens -= 1
                    if parens < 0:
                        raise self.error("unbalanced ')'", t)
            elif toks and (toks[-1].kind != "punct" or toks[-1].text == ")"):
                raise self.error("expected an operator or ',' in the initializer", t)
            toks.append(self.advance())
        if not toks or parens:
            raise self.error("expected an initializer value", self.peek())
        return _join(toks)

    def param(self) -> Param:
        t = self.peek()
        if t.text not in (".param", ".reg") or t.kind != "dir":
            raise self.error("expected .param or .reg", t)
        space = self.advance().text
        align = ptr_align = 0
        typ, ptr, ptr_space = None, False, ""
        while True:
            t = self.peek()
            if t.kind != "dir":
                break
            d = t.text
            if d == ".align":
                self.advance()
                a = self.expect_int("an alignment")
                if ptr:
                    ptr_align = a
                else:
                    align = a
            elif d == ".ptr":
                self.advance()
                ptr = True
            elif ptr and d in _PTR_SPACES:
                self.advance()
                ptr_space = d
            elif typ is None:
                typ = self._type(t)
                self.advance()
            else:
                raise self.error("unexpected directive in a parameter", t)
        if typ is None:
            raise self.error("expected the parameter's type")
        nt = self.expect_kind("name", "a parameter name")
        if "." in nt.text or "::" in nt.text:
            raise self.error("expected a parameter name", nt)
        array = None
        if self.accept("["):
            array = self.expect_int("an array size")
            self.expect("]", "']'")
        if space == ".reg":
            self._declare(nt.text, typ)
        return Param(name=nt.text, type=typ, space=space, align=align, array=array,
                     ptr_space=ptr_space, ptr_align=ptr_align)

    def param_list(self) -> list:
        self.expect("(", "'('")
        if self.accept(")"):
            return []
        params = [self.param()]
        while self.accept(","):
            params.append(self.param())
        self.expect(")", "',' or ')' after a parameter")
        return params

    def _declare(self, name: str, typ):
        self.reg_names[name] = typ
        self.ocache = {}

    def reg_decl(self) -> list:
        self.advance()
        align = vector = 0
        typ = None
        while True:
            t = self.peek()
            if t.kind != "dir":
                break
            if t.text == ".align":
                self.advance()
                align = self.expect_int("an alignment")
            elif t.text in (".v2", ".v4", ".v8"):
                self.advance()
                vector = int(t.text[2:])
            elif typ is None:
                typ = self._type(t)
                self.advance()
            else:
                raise self.error("unexpected directive in a .reg declaration", t)
        if typ is None:
            raise self.error("expected the register type")
        decls, names = [], []
        while True:
            nt = self.expect_kind("name", "a register name")
            if "." in nt.text or "::" in nt.text:
                raise self.error("expected a register name", nt)
            if self.accept("<"):
                count = self.expect_int("a register count")
                if count <= 0:
                    raise self.error("register count must be positive", self._last_tok())
                self.expect(">", "'>'")
                if names:
                    decls.append(RegDecl(typ, tuple(names), vector=vector, align=align))
                    names = []
                decls.append(RegDecl(typ, prefix=nt.text, count=count, vector=vector, align=align))
                self.reg_prefixes[nt.text] = typ
                self.ocache = {}
            else:
                names.append(nt.text)
                self._declare(nt.text, typ)
            if not self.accept(","):
                break
        self.expect(";", "';' after the register declaration")
        if names:
            decls.append(RegDecl(typ, tuple(names), vector=vector, align=align))
        return decls

    # ------------------------------------------------------------------ functions
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
        f = Function(name=nt.text, kind=kind, linkage=linkage, params=[], ret_params=ret,
                     directives=[], body=[])
        if self.peek().text == "(" and self.peek().kind == "punct":
            f.params = self.param_list()
        while True:
            t = self.peek()
            if t.kind != "dir":
                break
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
        n = len(text)
        stmts: list = []
        append = stmts.append
        fast = _FAST_RE.match
        skip = SKIP_RE.match
        while True:
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
                    append(ins)
                    self.pos = m.end()
                    continue
            m = _LABEL_RE.match(text, pos)
            if m is not None:
                append(Label(m.group(1)))
                self.pos = m.end()
                continue
            self.pos = pos
            append(self.instruction())

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
            stmts.append(self.raw_statement())

    # ------------------------------------------------------------------ instructions
    def _opcode(self, full: str, tok: Token | None = None, pos: int = 0):
        r = _OPCODE_CACHE.get(full)
        if r is None:
            base = full.split(".", 1)[0].split("::", 1)[0]
            if base not in KNOWN_INSTRUCTIONS and not _in_isa_table(full):
                if tok is None:
                    tok = Token("name", full, pos, pos + len(full))
                raise self.error(f"unknown instruction {base!r}", tok)
            r = split_opcode(full)
            if len(_OPCODE_CACHE) < 100000:
                _OPCODE_CACHE[full] = r
        return r

    def _fast_instruction(self, m):
        """Build an instruction from a ``_FAST_RE`` match, or None to use the token path."""
        neg, greg, opc, ops = m.groups()
        name, mods = self._opcode(opc, None, m.start(3))
        guard = None if greg is None else Guard(greg, neg == "!")
        if not ops:
            return Instruction(name, mods, (), guard)
        cache = self.ocache
        if "{" in ops or "[" in ops:
            pieces = []
            i, n = 0, len(ops)
            pm = _PIECE_RE.match
            while True:
                j = pm(ops, i).end()
                pieces.append(ops[i:j])
                if j >= n:
                    break
                if ops[j] != ",":
                    return None
                i = j + 1
        else:
            pieces = ops.split(",")
        out = []
        base = m.start(4)
        for p in pieces:
            o = cache.get(p)
            if o is None:
                o = self._quick(p)
                if o is None:
                    o = self._operand_at(base, base + len(p))
                if o is None:
                    return None
                if len(cache) < 50000:
                    cache[p] = o
            out.append(o)
            base += len(p) + 1
        return Instruction(name, mods, tuple(out), guard)

    def _quick(self, p: str):
        q = _QUICK_RE.match(p)
        if q is None:
            return None
        name, num, base, sign, off = q.groups()
        if name is not None:
            return Sink() if name == "_" else self._name_operand(name)
        if num is not None:
            return Imm(num)
        if base == "_" or (off is not None and len(off) > 1 and off[0] == "0"):
            return None
        o = 0 if off is None else int(off)
        if sign is not None and "-" in sign:
            o = -o
        return Addr(self._name_operand(base), o)

    def _operand_at(self, start: int, end: int):
        """Parse exactly one operand in text[start:end]; None when it is not exactly one."""
        save = self.pos
        self.pos = start
        try:
            if SKIP_RE.match(self.text, start).end() >= end:
                return None
            o = self.operand()
            if SKIP_RE.match(self.text, self.pos).end() != end:
                return None
            return o
        except ParseError:
            return None
        finally:
            self.pos = save

    def instruction(self) -> Instruction:
        guard = None
        if self.accept("@"):
            neg = self.accept("!")
            g = self.expect_kind("name", "a predicate register after '@'")
            guard = Guard(g.text, neg)
        t = self.peek()
        if t.kind != "name" or not ("a" <= t.text[0] <= "z"):
            if t.kind == "dir":
                raise self.error("unexpected directive (expected an instruction)", t)
            raise self.error("expected an instruction", t)
        name, mods = self._opcode(t.text, t)
        self.advance()
        ops = []
        if not self.accept(";"):
            ops.append(self.operand())
            while self.accept(","):
                ops.append(self.operand())
            self.expect(";", "',' or ';' after an operand")
        return Instruction(name, mods, tuple(ops), guard)

    def _name_operand(self, text: str):
        if text[0] == "%":
            typ = self.reg_names.get(text)
            if typ is None:
                typ = self.reg_prefixes.get(text.rstrip("0123456789"))
            return Reg(text, typ)
        typ = self.reg_names.get(text)
        if typ is not None:
            return Reg(text, typ)
        stem = text.rstrip("0123456789")
        if stem != text:
            typ = self.reg_prefixes.get(stem)
            if typ is not None:
                return Reg(text, typ)
        return Sym(text)

    def operand(self):
        t = self.peek()
        k = t.kind
        if k == "name":
            self.pos = t.end
            first = Sink() if t.text == "_" else self._name_operand(t.text)
            if type(first) is Sym:
                nt = self.peek()
                if nt.kind == "punct" and nt.text in "+-":
                    self.pos = nt.end
                    sign = -1 if nt.text == "-" or self.accept("-") else 1
                    off = self.expect_int("an offset after the symbol")
                    return Sym(first.name, sign * off)
            if self.accept("|"):
                s = self.expect_kind("name", "a predicate after '|'")
                second = Sink() if s.text == "_" else self._name_operand(s.text)
                return PredPair(first, second)
            return first
        if k == "num":
            self.pos = t.end
            if self._binop_next():
                self.pos = t.start
                return Imm(self.const_expr())
            return Imm(t.text)
        if k == "punct":
            c = t.text
            if c == "{":
                return self.vector()
            if c == "[":
                return self.address()
            if c == "(":
                self.pos = t.end
                nt = self.peek()
                if nt.kind == "num" or (nt.kind == "punct" and nt.text in "-~(!"):
                    self.pos = t.start
                    return Imm(self.const_expr())
                items = []
                if not self.accept(")"):
                    items.append(self.operand())
                    while self.accept(","):
                        items.append(self.operand())
                    self.expect(")", "',' or ')'")
                return ParenList(tuple(items))
            if c == "!":
                self.pos = t.end
                r = self.expect_kind("name", "a predicate after '!'")
                o = self._name_operand(r.text)
                if not isinstance(o, Reg) or r.text == "_":
                    raise self.error("'!' applies to a predicate register", r)
                return Reg(o.name, o.type, neg=True)
            if c == "-" or c == "~":
                self.pos = t.end
                nt = self.peek()
                if c == "-" and nt.kind == "num":
                    self.pos = nt.end
                    if not self._binop_next():
                        return Imm("-" + nt.text)
                self.pos = t.start
                return Imm(self.const_expr())
        raise self.error("expected an operand", t)

    # constant expressions in operands: ``(1 << 4)``, ``3+4*2``, ``-(2)``; kept as the
    # immediate's text, normalised (no spaces), so printing re-parses to the same IR
    _BINOPS = ("<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "&",
               "|", "^", "<", ">")

    def _binop_at(self, pos: int):
        t = next_token(self.src, pos)
        if t.kind != "punct":
            return None
        for op in self._BINOPS:
            if self.text.startswith(op, t.start):
                return op, t.start + len(op)
        return None

    def _binop_next(self) -> bool:
        return self._binop_at(self.pos) is not None

    def const_expr(self, depth: int = 0) -> str:
        if depth > _MAX_DEPTH:
            raise self.error("expression nested too deep")
        out = [self._unary(depth)]
        while True:
            b = self._binop_at(self.pos)
            if b is None:
                return "".join(out)
            out.append(b[0])
            self.pos = b[1]
            out.append(self._unary(depth))

    def _unary(self, depth: int) -> str:
        t = self.peek()
        if t.kind == "punct" and t.text in "-~!+":
            self.pos = t.end
            return t.text + self._unary(depth + 1)
        if t.kind == "punct" and t.text == "(":
            self.pos = t.end
            inner = self.const_expr(depth + 1)
            self.expect(")", "')' in the constant expression")
            return "(" + inner + ")"
        if t.kind == "num":
            self.pos = t.end
            return t.text
        raise self.error("expected a number in the constant expression", t)

    def vector(self) -> Vec:
        open_tok = self.advance()
        text = self.text
        close = text.find("}", open_tok.end)
        inner = text[open_tok.end:close] if close >= 0 else ""
        if close >= 0 and not any(c in inner for c in "{[(/"):
            # fast: comma-separated simple items, parsed once per spelling
            items = []
            cache = self.ocache
            base = open_tok.end
            for p in inner.split(","):
                o = cache.get(p)
                if o is None:
                    o = self._quick(p)
                    if o is None:
                        o = self._operand_at(base, base + len(p))
                    if o is None:
                        break
                    cache[p] = o
                if not isinstance(o, (Reg, Imm, Sink, Sym)):
                    break
                items.append(o)
                base += len(p) + 1
            else:
                self.pos = close + 1
                return Vec(tuple(items))
            self.pos = open_tok.end
        items = [self._vec_item()]
        while self.accept(","):
            items.append(self._vec_item())
        self.expect("}", "',' or '}' in the vector")
        return Vec(tuple(items))

    def _vec_item(self):
        t = self.peek()
        o = self.operand()
        if not isinstance(o, (Reg, Imm, Sink, Sym)):
            raise self.error("a vector holds registers, immediates or '_'", t)
        return o

    def address(self) -> Addr:
        self.advance()
        base, offset = None, 0
        t = self.peek()
        if t.kind == "name":
            self.pos = t.end
            if t.text == "_":
                raise self.error("expected an address", t)
            base = self._name_operand(t.text)
            if self.accept("+"):
                sign = -1 if self.accept("-") else 1
                offset = sign * self.expect_int("an offset")
            elif self.accept("-"):
                offset = -self.expect_int("an offset")
        elif t.kind == "num":
            offset = self.expect_int("an address")
        elif t.text == "-" and t.kind == "punct":
            self.advance()
            offset = -self.expect_int("an address")
        else:
            raise self.error("expected an address", t)
        extra = []
        while self.accept(","):
            extra.append(self.operand())
        self.expect("]", "']' closing the address")
        return Addr(base, offset, tuple(extra))
