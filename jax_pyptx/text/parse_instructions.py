"""Parser part: instructions and operands (guards, opcodes, vectors, addresses, constant
expressions), with the fast path for the common instruction line.

A mixin of the PTX parser (``jax_pyptx.text.parser._Parser``); see that module's docstring.
"""
from __future__ import annotations

from ..errors import ParseError
from ..ir.nodes import Addr, Guard, Imm, Instruction, ParenList, PredPair, Reg, Sink, Sym, Vec
from ..isa.opcodes import split_opcode
from .lexer import next_token, SKIP_RE, Token
from .parser_base import (
    KNOWN_INSTRUCTIONS, _INT_RE, _MAX_DEPTH, _OPCODE_CACHE, _PIECE_RE, _QUICK_RE, _int,
)


class InstructionParser:
    """Instructions and their operands."""

    def _opcode(self, full: str, tok: Token | None = None, pos: int = 0):
        r = _OPCODE_CACHE.get(full)
        if r is None:
            base = full.split(".", 1)[0].split("::", 1)[0]
            if base not in KNOWN_INSTRUCTIONS:
                if self.unknown_ok:                  # parse_statements(..., unknown_ok=True)
                    return split_opcode(full)
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
                k = p.strip()
                o = cache.get(k)
                if o is None:
                    o = self._quick(p)
                    if o is None:
                        o = self._operand_at(base, base + len(p))
                    if o is None:
                        return None
                    if len(cache) < 50000:
                        cache[k] = o
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
                    off = self.offset_value(nt, "an offset after the symbol")
                    return Sym(first.name, off)
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
        if self.text.startswith("?", SKIP_RE.match(self.text, pos).end()):
            return None                          # ``c ? a : b`` (see const_value)
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

    # integer constant expressions of addresses and symbol offsets, evaluated (PTX ISA
    # "Constant Expressions": C operators and precedence, 64-bit integers): ``[%r1+288+128]``
    # (LLVM) is ``Addr(%r1, 416)``, printed back as ``[%r1+416]``
    _PREC = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
             "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}

    def offset_value(self, sign_tok: Token, what: str) -> int:
        """The offset after ``base+`` (``sign_tok``: the ``+``; a ``-`` is taken as the
        offset's sign, as the printer never writes it but hand-written text may)."""
        v = self.const_value(what)
        return -v if sign_tok.text == "-" else v

    def const_value(self, what: str = "a constant", depth: int = 0) -> int:
        """Parse and evaluate an integer constant expression (``?:`` included)."""
        if depth > _MAX_DEPTH:
            raise self.error("expression nested too deep")
        cond = self._binary_value(1, what, depth)
        at = SKIP_RE.match(self.text, self.pos).end()
        if self.text.startswith("?", at):       # (not a token: only here does PTX use it)
            self.pos = at + 1
            a = self.const_value(what, depth + 1)
            self.expect(":", "':' in the conditional expression")
            b = self.const_value(what, depth + 1)
            return a if cond else b
        return cond

    def _binary_value(self, min_prec: int, what: str, depth: int) -> int:
        left = self._unary_value(what, depth)
        while True:
            b = self._binop_at(self.pos)
            if b is None or self._PREC[b[0]] < min_prec:
                return left
            op, end = b
            at = self.peek()
            self.pos = end
            right = self._binary_value(self._PREC[op] + 1, what, depth + 1)
            left = self._apply(op, left, right, at)

    def _apply(self, op: str, a: int, b: int, tok: Token) -> int:
        if op in ("/", "%"):
            if b == 0:
                raise self.error("division by zero in the constant expression", tok)
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)     # C: toward zero
            return q if op == "/" else a - q * b
        if op == "<<":
            return a << (b & 63)
        if op == ">>":
            return a >> (b & 63)
        return {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b,
                "<": int(a < b), ">": int(a > b), "<=": int(a <= b), ">=": int(a >= b),
                "==": int(a == b), "!=": int(a != b), "&&": int(bool(a) and bool(b)),
                "||": int(bool(a) or bool(b))}[op]

    def _unary_value(self, what: str, depth: int) -> int:
        if depth > _MAX_DEPTH:
            raise self.error("expression nested too deep")
        t = self.peek()
        if t.kind == "punct" and t.text in "-~!+":
            self.pos = t.end
            v = self._unary_value(what, depth + 1)
            return {"-": -v, "~": ~v, "!": int(not v), "+": v}[t.text]
        if t.kind == "punct" and t.text == "(":
            self.pos = t.end
            v = self.const_value(what, depth + 1)
            self.expect(")", "')' in the constant expression")
            return v
        if t.kind == "num" and _INT_RE.match(t.text):
            self.pos = t.end
            return _int(t.text)
        raise self.error(f"expected {what} (an integer constant expression)", t)

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
            nt = self.peek()
            if nt.kind == "punct" and nt.text in "+-":
                self.pos = nt.end
                offset = self.offset_value(nt, "an offset")
        elif t.kind == "num" or (t.kind == "punct" and t.text in "-(~"):
            offset = self.const_value("an address")
        else:
            raise self.error("expected an address", t)
        extra = []
        while self.accept(","):
            extra.append(self.operand())
        self.expect("]", "']' closing the address")
        return Addr(base, offset, tuple(extra))
