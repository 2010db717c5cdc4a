"""IR module -> Python source that re-traces to the same instructions.

Per function:

* registers: a ``.reg .b32 %r<39>`` declaration becomes ``r = reg.array(b32, 39)`` and
  ``%r5`` is ``r[5]``; named registers (``%SP``, ``temp_param_reg``, a block's ``p``) become
  ``reg.scalar`` variables named after them. Special registers are ``ptx.special.*``.
* instructions: a typed wrapper (``ptx.wgmma.mma_async(f[65:97], ...)``, ``ptx.mma.sync``,
  ``ptx.wgmma.fence()``, ``ptx.mbarrier.init(...)``, ``ptx.tcgen05.*``, ``ptx.fence.*``,
  ``ptx.bar.sync(0)``, ...) where one reproduces the instruction exactly (chosen from the
  decoded form and the wrappers' names and signatures, :mod:`.wrappers`), else
  ``ptx.inst.<opcode>.<mods>(...)``; ``flow.inst("...")`` only where the ISA table rejects the
  instruction as written. Every choice is checked at transpile time by emitting the candidate
  into a scratch trace and comparing it with the source instruction.
* control flow: ``flow.if_`` / ``flow.else_`` / ``flow.loop`` from :mod:`.structure`;
  mbarrier spin loops become ``ptx.mbarrier.wait(...)`` (or ``flow.mbarrier_wait`` for the
  shapes the DSL's helper does not emit); other branches keep their labels by name.
* declarations other than registers (``.param``/``.local``/``.shared`` variables, call
  prototypes) are kept as PTX text (``flow.decl``).

The file ends with ``ITEMS`` (module-scope PTX text and the functions, in source order),
``module()`` (the whole module, traced) and a ``__main__`` that prints it. ``.loc``,
``.file`` and DWARF ``.section`` blocks are not carried over: the generated Python is the
new source.
"""
from __future__ import annotations

import keyword
import re

from .. import types as _types
from ..ir.nodes import (
    Addr, Block, Function, Guard, Imm, Instruction, Loc, ParenList, Pragma, PredPair,
    RawDirective, Reg, RegDecl, Sink, Sym, VarDecl, Vec,
)
from ..isa import type_of
from ..text import printer
from .structure import structure

_TYPE_NAMES = {t.name for t in _types.ALL_TYPES}
_RESERVED = set(keyword.kwlist) | {"ptx", "reg", "smem", "flow", "kernel", "Param", "ITEMS",
                                   "module", "emit", "print", "len", "range", "int", "str"} \
    | _TYPE_NAMES
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DEC = re.compile(r"^-?(0|[1-9]\d*)$")


def _pyname(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name.lstrip("%"))
    if not s or s[0].isdigit():
        s = "_" + s
    return s


class _Names:
    def __init__(self):
        self.used = set(_RESERVED)

    def take(self, want: str) -> str:
        base = _pyname(want)
        if base in self.used:
            base += "_"
        name, n = base, 2
        while name in self.used:
            name = f"{base}{n}"
            n += 1
        self.used.add(name)
        return name


def _chain(full: str):
    """``ld.global.v4.f32`` -> ``ld.global_.v4.f32`` attribute chain, or None if some part
    cannot be spelled."""
    out = []
    for part in full.split("."):
        if not part or "__" in part or part.endswith("_") or part.startswith("_"):
            return None
        p = part.replace("::", "__")
        if not re.match(r"^\w+$", p):
            return None
        if p[0].isdigit():
            p = "_" + p
        elif keyword.iskeyword(p):
            p += "_"
        out.append(p)
    return ".".join(out)


def _int_ok(text: str, hint) -> bool:
    """Does the Python int ``int(text)`` re-trace to the immediate ``text`` exactly?"""
    if not _DEC.match(text):
        return False
    from ..dsl.values import imm_text

    try:
        if hint is None:
            return str(int(text)) == text
        if hint.kind in ("float", "packed"):
            return False
        return imm_text(int(text), hint) == text
    except Exception:
        return False


# ----------------------------------------------------------------------------- probing
class _Probe:
    """Emit a candidate into a scratch trace and read back the instruction (or None)."""

    def __init__(self, arch: str, version):
        from ..isa.model import parse_target

        try:
            self.target = parse_target(arch)
        except Exception:
            self.target = None
        self.version = version

    def run(self, call):
        if self.target is None:
            return None
        from ..dsl import context

        tr = context.Trace("_transpile_probe", self.target, None)
        context.push(tr)
        try:
            call()
        except Exception:
            return None
        finally:
            context.pop()
        ins = [s for s in tr.body if type(s) is Instruction]
        if self.version is not None and tr.min_ptx > tuple(self.version):
            return None
        return ins


def _same(a: Instruction, b: Instruction) -> bool:
    return a.opcode == b.opcode and a.modifiers == b.modifiers and a.operands == b.operands


# ----------------------------------------------------------------------------- functions
class _Fn:
    """Code for one function."""

    def __init__(self, gen, f: Function):
        self.gen, self.f = gen, f
        self.names = _Names()
        self.lines: list = []
        self.scopes: list = [({}, {})]          # (explicit name -> var, prefix -> (var, n))
        self.sid_names: dict = {}
        self.loops = 0
        self.blocks = 0

    # ------------------------------------------------------------------ registers
    def declare(self, d: RegDecl, ind: str, nested: bool):
        explicit, prefixes = self.scopes[-1]
        tname = d.type.name
        if d.vector or d.align:
            self.emit(ind, f"flow.decl({printer.reg_decl(d)[:-1]!r})")
            for n in d.names:
                explicit[n] = ("raw", n)
            if d.count:
                prefixes[d.prefix] = ("raw", d.count)
            return
        if d.count:
            var = self.names.take(d.prefix)
            prefixes[d.prefix] = (var, d.count)
            self.emit(ind, f"{var} = reg.array({tname}, {d.count})"
                      + (f"  # {d.prefix}<{d.count}>" if _pyname(d.prefix) != var else ""))
        for n in d.names:
            var = self.names.take(n)
            explicit[n] = (var, d.type)
            self.emit(ind, f"{var} = reg.scalar({tname})" + (f"  # {n}" if _pyname(n) != var
                                                             else ""))

    def reg(self, name: str):
        """(code, probe value) for register ``name``."""
        for explicit, prefixes in reversed(self.scopes):
            got = explicit.get(name)
            if got is not None:
                var, t = got
                if var == "raw":
                    return f"flow.sreg({name!r})", Reg(name)
                return var, Reg(name, t)
            stem = name.rstrip("0123456789")
            if stem != name and stem in prefixes:
                var, n = prefixes[stem]
                idx = name[len(stem):]
                if (len(idx) == 1 or idx[0] != "0") and int(idx) < n:
                    if var == "raw":
                        return f"flow.sreg({name!r})", Reg(name)
                    t = self.decl_type(stem)
                    return f"{var}[{int(idx)}]", Reg(name, t)
        return self.special(name)

    def decl_type(self, prefix):
        for d in self._decls:
            if d.prefix == prefix:
                return d.type
        return None

    def special(self, name: str):
        from ..dsl.ptx import special as sp

        m = re.match(r"^%([a-z_]+)\.([xyz])$", name)
        if m and hasattr(sp, m.group(1)) and hasattr(getattr(sp, m.group(1)), "x"):
            val = getattr(getattr(sp, m.group(1)), m.group(2))()
            return f"ptx.special.{m.group(1)}.{m.group(2)}()", val
        m = re.match(r"^%([a-z_0-9]+)$", name)
        if m and not m.group(1)[-1].isdigit() and callable(getattr(sp, m.group(1), None)) \
                and m.group(1) not in ("envreg", "pm"):
            val = getattr(sp, m.group(1))()
            if getattr(val, "ir", None) is not None and val.ir.name == name:
                return f"ptx.special.{m.group(1)}()", val
        m = re.match(r"^%envreg(\d+)$", name)
        if m and int(m.group(1)) < 32:
            return f"ptx.special.envreg({int(m.group(1))})", sp.envreg(int(m.group(1)))
        return f"flow.sreg({name!r})", Reg(name)

    # ------------------------------------------------------------------ operands
    def operand(self, o, hint):
        """(code, probe value) for an IR operand."""
        from .flow import _Operand

        t = type(o)
        if t is Reg:
            code, val = self.reg(o.name)
            if o.neg:
                return f"flow.neg({code})", _Operand(lambda v=val: Reg(_irname(v), None, True))
            return code, val
        if t is Imm:
            if _int_ok(o.text, hint):
                return o.text, int(o.text)
            return f"ptx.raw_imm({o.text!r})", o
        if t is Sym:
            if o.offset:
                return f"flow.sym({o.name!r}, {o.offset})", o
            return f"ptx.sym({o.name!r})", o
        if t is Addr:
            return self.address(o, hint)
        if t is Vec:
            items = [self.operand(i, hint) for i in o.items]
            codes = [c for c, _ in items]
            vals = [v for _, v in items]
            n = len(codes)
            if n >= 4 and len(set(codes)) == 1:
                return f"[{codes[0]}] * {n}", vals
            m0 = re.match(r"^(\w+)\[(\d+)\]$", codes[0]) if n >= 4 else None
            if m0 and all(type(i) is Reg and not i.neg for i in o.items):
                var, a = m0.group(1), int(m0.group(2))
                if codes == [f"{var}[{a + k}]" for k in range(n)]:
                    return f"{var}[{a}:{a + n}]", vals
            return "[" + ", ".join(codes) + "]", vals
        if t is PredPair:
            a = self.operand(o.first, None)
            b = self.operand(o.second, None)
            return f"flow.pair({a[0]}, {b[0]})", _Operand(lambda: PredPair(_ir(a[1]), _ir(b[1])))
        if t is Sink:
            return "flow.SINK", _Operand(Sink)
        if t is ParenList:
            items = []
            for i in o.items:
                if type(i) is Sym and not i.offset:
                    items.append((repr(i.name), i))
                else:
                    items.append(self.operand(i, None))
            return ("flow.args(" + ", ".join(c for c, _ in items) + ")",
                    _Operand(lambda: ParenList(tuple(_ir(v) for _, v in items))))
        raise TypeError(f"cannot transpile operand {o!r}")

    def address(self, a: Addr, hint):
        from .flow import _Operand

        if a.extra:
            if a.base is None:
                bcode, bval = "None", None
            elif type(a.base) is Sym and not a.base.offset:
                bcode, bval = repr(a.base.name), a.base
            else:
                bcode, bval = self.operand(a.base, None)
            ex = [self.operand(e, None) for e in a.extra]
            code = f"flow.addr({bcode}, {a.offset}" + "".join(", " + c for c, _ in ex) + ")"
            return code, _Operand(lambda: Addr(_ir(bval) if bval is not None else None,
                                               a.offset, tuple(_ir(v) for _, v in ex)))
        if a.base is None:
            return f"ptx.addr({a.offset})", a
        if type(a.base) is Sym and not a.base.offset:
            off = f", {a.offset}" if a.offset else ""
            return f"ptx.addr({a.base.name!r}{off})", a
        if type(a.base) is Reg and not a.base.neg:
            code, val = self.reg(a.base.name)
            if type(val) is Reg and not code.startswith("flow."):
                return f"{code}.addr({a.offset if a.offset else ''})", a
            return f"flow.addr({code}, {a.offset})", a
        code, val = self.operand(a.base, None)
        return f"flow.addr({code}, {a.offset})", a

    def guard(self, g: Guard):
        if g is None:
            return "", None
        code, val = self.reg(g.reg)
        if g.negated:
            return f"ptx.not_({code})", ("not", val)
        return code, val

    # ------------------------------------------------------------------ emission
    def emit(self, ind: str, line: str):
        self.lines.append(ind + line)

    def instruction(self, ins: Instruction, ind: str):
        gcode, _ = self.guard(ins.guard)
        hint = type_of(ins.modifiers)
        ops = [self.operand(o, hint) for o in ins.operands]
        typed = self.gen.typed(ins, ops, self)
        if typed is not None:
            path, args, kwargs = typed
            parts = [c for c in args] + [f"{k}={v}" for k, v in kwargs]
            if gcode:
                parts.append(f"pred={gcode}")
            self.emit(ind, f"{path}({', '.join(parts)})")
            return
        full = ins.opcode + "".join(ins.modifiers)
        parts = [c for c, _ in ops] + ([f"pred={gcode}"] if gcode else [])
        chain = _chain(full)
        if chain is not None and self.gen.inst_ok(full, ops, ins):
            self.emit(ind, f"ptx.inst.{chain}({', '.join(parts)})")
        else:
            self.emit(ind, f"flow.inst({', '.join([repr(full)] + parts)})")

    def bra(self, ins: Instruction, owner, ind: str, name: str):
        gcode, _ = self.guard(ins.guard)
        uni = ".uni" in ins.modifiers
        kw = []
        if gcode:
            kw.append(f"pred={gcode}")
        if uni:
            kw.append("uni=True")
        if owner is None:
            self.emit(ind, f"ptx.bra({name!r}" + "".join(", " + k for k in kw) + ")")
            return
        sid, role = owner
        var = self.sid_names[sid]
        meth = {"head": "continue_", "exit": "break_", "end": "leave"}[role]
        self.emit(ind, f"{var}.{meth}({', '.join(kw)})")

    def stmt(self, s, ind: str, nested: bool):
        t = type(s)
        if t is Instruction:
            if s.opcode == "ret" and not s.operands and not s.modifiers:
                g, _ = self.guard(s.guard)
                self.emit(ind, f"ptx.ret({'pred=' + g if g else ''})")
            elif s.opcode == "exit" and not s.operands and not s.modifiers:
                g, _ = self.guard(s.guard)
                self.emit(ind, f"ptx.exit({'pred=' + g if g else ''})")
            else:
                self.instruction(s, ind)
        elif t is RegDecl:
            self.declare(s, ind, nested)
        elif t is VarDecl:
            self.emit(ind, f"flow.decl({printer.var_decl(s)!r})")
        elif t is RawDirective:
            self.emit(ind, f"flow.decl({printer.raw_directive(s)!r})")
        elif t is Pragma:
            self.emit(ind, f"flow.pragma({s.text!r})")
        elif t is Loc:
            pass
        else:
            raise TypeError(f"cannot transpile statement {s!r}")

    def nodes(self, nodes: list, ind: str, nested: bool):
        start = len(self.lines)
        for n in nodes:
            self.node(n, ind, nested)
        if len(self.lines) == start:
            self.emit(ind, "pass")

    def node(self, n, ind: str, nested: bool):
        kind = n[0]
        if kind == "stmt":
            self.stmt(n[1], ind, nested)
        elif kind == "label":
            self.emit(ind, f"flow.label({n[1]!r})")
        elif kind == "goto":
            self.bra(n[1], n[2], ind, n[3])
        elif kind == "block":
            wait = self.gen.wait_block(self, n[1])
            if wait is not None:
                self.emit(ind, wait)
                return
            self.scopes.append(({}, {}))
            self.emit(ind, "with flow.scope():")
            self.nodes(n[1], ind + "    ", True)
            self.scopes.pop()
        elif kind == "loop":
            wait = self.gen.wait_loop(self, n, None)
            if wait is not None:
                self.emit(ind, wait)
                return
            _, sid, body, _exit = n
            self.loops += 1
            var = self.names.take(f"loop{self.loops}")
            self.sid_names[sid] = var
            self.emit(ind, f"with flow.loop() as {var}:")
            self.nodes(body, ind + "    ", nested)
        elif kind == "if":
            _, sid, bra, then = n
            self.if_head(sid, bra, ind)
            self.nodes(then, ind + "    ", nested)
        elif kind == "ifelse":
            _, sid, bra, then, sid2, bra2, els = n
            self.if_head(sid, bra, ind)
            self.nodes(then, ind + "    ", nested)
            self.blocks += 1
            var = self.names.take(f"blk{self.blocks}")
            self.sid_names[sid2] = var
            uni = ", uni=True" if ".uni" in bra2.modifiers else ""
            self.emit(ind, f"with flow.else_({uni[2:]}) as {var}:")
            self.nodes(els, ind + "    ", nested)
        else:
            raise TypeError(n)

    def if_head(self, sid, bra, ind):
        code, _ = self.reg(bra.guard.reg)
        cond = code if bra.guard.negated else f"ptx.not_({code})"
        uni = ", uni=True" if ".uni" in bra.modifiers else ""
        self.blocks += 1
        var = self.names.take(f"blk{self.blocks}")
        self.sid_names[sid] = var
        self.emit(ind, f"with flow.if_({cond}{uni}) as {var}:")

    def uses(self, name: str) -> int:
        """How many operands and guards of the function name register ``name``."""
        if not hasattr(self, "_uses"):
            counts: dict = {}

            def op(o):
                t = type(o)
                if t is Reg:
                    counts[o.name] = counts.get(o.name, 0) + 1
                elif t is Addr:
                    if o.base is not None:
                        op(o.base)
                    for e in o.extra:
                        op(e)
                elif t in (Vec, ParenList):
                    for i in o.items:
                        op(i)
                elif t is PredPair:
                    op(o.first)
                    op(o.second)

            def walk(stmts):
                for s in stmts:
                    if type(s) is Block:
                        walk(s.body)
                    elif type(s) is Instruction:
                        for o in s.operands:
                            op(o)
                        if s.guard is not None:
                            counts[s.guard.reg] = counts.get(s.guard.reg, 0) + 1
            walk(self.f.body)
            self._uses = counts
        return self._uses.get(name, 0)

    # ------------------------------------------------------------------ function
    def run(self) -> list:
        f = self.f
        self._decls = []
        _collect_decls(f.body, self._decls)
        body = list(f.body)
        ind = "    "
        # function-scope register declarations first
        head = [s for s in body if type(s) is RegDecl]
        for d in head:
            self.declare(d, ind, False)
        rest = [s for s in body if type(s) is not RegDecl]
        tree = structure(rest)
        self.nodes(tree, ind, False)
        # drop "as blkN" where nothing leaves the region early
        text = "\n".join(self.lines)
        for var in self.sid_names.values():
            if var.startswith("blk") and f"{var}." not in text:
                self.lines = [ln.replace(f") as {var}:", "):") for ln in self.lines]
        return self.lines


def _collect_decls(stmts, out):
    for s in stmts:
        if type(s) is RegDecl:
            out.append(s)
        elif type(s) is Block:
            _collect_decls(s.body, out)


def _ir(v):
    """The IR operand a probe value stands for."""
    from ..dsl.values import Special

    if isinstance(v, Special):
        return v.ir
    if hasattr(v, "__ptx_operand__"):
        return v.__ptx_operand__()
    if isinstance(v, int):
        return Imm(str(v))
    if isinstance(v, (list, tuple)):        # a coordinate vector inside [tmap, {...}]
        return Vec(tuple(_ir(x) for x in v))
    return v


def _irname(v):
    return _ir(v).name
