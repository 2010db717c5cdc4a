"""Parser part: declarations (variables, initializers, params, registers).

A mixin of the PTX parser (``jax_pyptx.text.parser._Parser``); see that module's docstring.
"""
from __future__ import annotations

from ..ir.nodes import Param, RawDirective, RegDecl, VarDecl
from ..types import _ALL as _TYPES
from .lexer import EOF, Token
from .parser_base import _join, _MAX_DEPTH, _OPAQUE_TYPES, _PTR_SPACES

class DeclParser:
    """Declarations: ``.reg``, state-space variables, params."""

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
        self._def_pos = nt.start
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
