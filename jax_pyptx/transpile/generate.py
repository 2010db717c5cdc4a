"""The module-level part of the transpiler: file layout, kernels and device functions,
typed-wrapper selection (:mod:`.wrappers`, checked by probing) and mbarrier wait-loop
recognition."""
from __future__ import annotations

import re

from ..ir.nodes import (
    Function, Instruction, Module, RawDirective, Reg, RegDecl, Section, VarDecl, Vec,
)
from ..errors import PtxError
from ..isa import decode, forms_for
from ..text import printer
from .codegen import _Fn, _Names, _Probe, _pyname, _same, _IDENT, _RESERVED
from .flow import WAIT_PREFIX
from .wrappers import Wrapper, calls, candidates, spell


def _resolve(path: str):
    from ..dsl import ptx as _ptx

    obj = _ptx
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _slice(fn, vec):
    """``(code, probe)`` for a vector operand that is a run of consecutive registers of one
    ``reg.array`` (``f[65:97]``, a RegArray slice), else None."""
    if type(vec) is not Vec or not vec.items:
        return None
    codes = []
    for it in vec.items:
        if type(it) is not Reg or it.neg:
            return None
        codes.append(fn.reg(it.name)[0])
    m0 = re.match(r"^(\w+)\[(\d+)\]$", codes[0])
    if not m0:
        return None
    var, start = m0.group(1), int(m0.group(2))
    if codes != [f"{var}[{start + i}]" for i in range(len(codes))]:
        return None
    regs = [Reg(it.name, it.type) for it in vec.items]

    def probe():
        from ..dsl import context
        from ..dsl.values import RegArray, Register

        tr = context.current()
        return RegArray([Register(r, tr) for r in regs], regs[0].type)
    return f"{var}[{start}:{start + len(codes)}]", _Lazy(probe)


class _Lazy:
    """A probe value built inside the scratch trace."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


def _sliced(fn, o, op):
    """A vector operand spelled as an array slice (``f[0:64]``) is passed to a wrapper as that
    RegArray, as the generated code does."""
    if type(o) is Vec and ":" in op[0]:
        got = _slice(fn, o)
        if got is not None and got[0] == op[0]:
            return got
    return op


def _val(v):
    return v.make() if isinstance(v, _Lazy) else v


def _decode(ins: Instruction):
    """The instruction's decoded form, or None where the table does not take it."""
    try:
        return decode(ins)
    except PtxError:
        return None


def _is_wait(ins: Instruction) -> bool:
    """An mbarrier test/try wait: an instruction under ``flow.mbarrier_wait``'s prefix whose
    every form's result is one predicate (the spin loop's flag)."""
    forms = forms_for(ins.opcode)
    return ins.opcode.startswith(WAIT_PREFIX) and bool(forms) and \
        all(f.operands[:1] == ("pd",) for f in forms)


class Generator:
    def __init__(self, module: Module, source: str = "<ptx>"):
        self.m = module
        self.source = source
        self.arch = module.target[0] if module.target else "sm_90a"
        self.probe = _Probe(self.arch, module.version)
        self.types: set = set()
        self.uses_param = False
        self.stats = {"typed": 0, "inst": 0, "raw": 0}

    # ------------------------------------------------------------------ choices
    def typed(self, ins: Instruction, ops: list, fn=None):
        """``(path, [code], [(keyword, code)])`` of a typed wrapper call that reproduces
        ``ins`` exactly (:mod:`.wrappers`), or None."""
        ws = candidates(ins.opcode, ins.modifiers)
        if not ws:
            return None
        d = _decode(ins)
        if d is None:
            return None
        if fn is not None:
            ops = [_sliced(fn, o, op) for op, o in zip(ops, ins.operands)]
        for w in ws:
            if ins.guard is not None and not w.pred:
                continue
            for args in calls(w, d, ops):
                got = self.probe.run(lambda: w.fn(**{k: _val(v) for k, (_, v, _) in
                                                     args.items()}))
                if got and len(got) == 1 and _same(got[0], ins):
                    self.stats["typed"] += 1
                    return (w.path,) + spell(w, args)
        return None

    def inst_ok(self, full: str, ops: list, ins: Instruction) -> bool:
        from ..dsl.ptx.generic import emit_inst

        got = self.probe.run(lambda: emit_inst(full, [v for _, v in ops], None, None, True))
        ok = bool(got) and len(got) == 1 and _same(got[0], ins)
        self.stats["inst" if ok else "raw"] += 1
        return ok

    def _wait_parts(self, fn: _Fn, node):
        """The pieces of an mbarrier spin loop, or None."""
        _, sid, body, exit_owned = node
        if not body or body[0][0] != "stmt":
            return None
        w = body[0][1]
        if type(w) is not Instruction or not _is_wait(w) or w.guard is not None \
                or len(w.operands) < 3 or type(w.operands[0]) is not Reg or w.operands[0].neg:
            return None
        flag = w.operands[0].name
        if len(body) == 2 and not exit_owned:
            back = body[1]
            if back[0] != "goto" or back[2] != (sid, "head") or back[1].guard is None or \
                    not back[1].guard.negated or back[1].guard.reg != flag:
                return None
            style, unis = "retry", {".uni" in back[1].modifiers}
        elif len(body) == 3 and exit_owned:
            b1, back = body[1], body[2]
            if b1[0] != "goto" or b1[2] != (sid, "exit") or b1[1].guard is None or \
                    b1[1].guard.negated or b1[1].guard.reg != flag or back[0] != "goto" or \
                    back[2] != (sid, "head") or back[1].guard is not None:
                return None
            style, unis = "exit", {".uni" in b1[1].modifiers, ".uni" in back[1].modifiers}
        else:
            return None
        if len(unis) != 1:
            return None
        return w, flag, style, unis.pop()

    def wait_loop(self, fn: _Fn, node, fresh_flag):
        parts = self._wait_parts(fn, node)
        if parts is None:
            return None
        w, flag, style, uni = parts
        if fresh_flag is None and fn.uses(flag) == 2:
            fresh_flag = flag          # the loop's own predicate: nothing else reads it

        ops = [fn.operand(o, None) for o in w.operands[1:]]
        # the DSL's own helper (a wait, then ``@!p bra`` without .uni, on a fresh predicate)
        if fresh_flag == flag and style == "retry" and not uni:
            got = self._wait_helper(w, ops, node[2][-1][1])
            if got is not None:
                return got
        full_op = (w.opcode + "".join(w.modifiers))[len(WAIT_PREFIX):]
        args = [c for c, _ in ops] + [f"op={full_op!r}"]
        if style != "exit":
            args.append(f"style={style!r}")
        if uni:
            args.append("uni=True")
        if fresh_flag != flag:
            args.append(f"flag={fn.reg(flag)[0]}")
        wops = [fn.operand(o, None) for o in w.operands]
        if not self.inst_ok(w.opcode + "".join(w.modifiers), wops, w):
            args.append("check=False")
        self.stats["typed"] += 1
        return f"flow.mbarrier_wait({', '.join(args)})"

    def _wait_helper(self, w: Instruction, ops: list, bra: Instruction):
        """``ptx.mbarrier.wait(...)`` where the DSL's spin-loop helper, called with the wait's
        operands after its flag (arguments as for any wrapper, :mod:`.wrappers`), emits
        exactly ``w`` and the loop's branch ``bra`` back on the flag; else None."""
        d = _decode(w)
        if d is None:
            return None
        path = "ptx.mbarrier.wait"
        helper = Wrapper.of(path, _resolve(path))
        for args in calls(helper, d, ops):
            got = self.probe.run(lambda: helper.fn(**{k: _val(v) for k, (_, v, _) in
                                                      args.items()}))
            if not got or len(got) != 2:
                continue
            first, back = got
            if first.opcode == w.opcode and first.modifiers == w.modifiers and \
                    first.operands[1:] == w.operands[1:] and back.opcode == bra.opcode and \
                    back.modifiers == bra.modifiers and back.guard is not None and \
                    back.guard.negated and back.guard.reg == first.operands[0].name:
                self.stats["typed"] += 1
                pos, kws = spell(helper, args)
                return f"{path}({', '.join(pos + [f'{k}={c}' for k, c in kws])})"
        return None

    def wait_block(self, fn: _Fn, nodes):
        """A ``{ .reg .pred P; <spin loop on P> }`` scope as one helper call."""
        decls = [n for n in nodes if n[0] == "stmt" and type(n[1]) is RegDecl]
        rest = [n for n in nodes if not (n[0] == "stmt" and type(n[1]) is RegDecl)]
        if len(rest) != 1 or rest[0][0] != "loop" or len(decls) != 1:
            return None
        d = decls[0][1]
        if d.count or len(d.names) != 1 or d.type.name != "pred" or d.vector or d.align:
            return None
        parts = self._wait_parts(fn, rest[0])
        if parts is None or parts[1] != d.names[0]:
            return None
        return self.wait_loop(fn, rest[0], d.names[0])

    # ------------------------------------------------------------------ layout
    def _param(self, p) -> str:
        self.types.add(p.type.name)
        if p.space == ".param" and not p.ptr_space and not p.ptr_align:
            if p.array is None and not p.align:
                return f"({p.name!r}, {p.type.name})"
            if p.array is not None:
                tail = f", {p.align}" if p.align else ""
                return f"({p.name!r}, {p.type.name}, {p.array}{tail})"
        self.uses_param = True
        kw = []
        if p.space != ".param":
            kw.append(f"space={p.space!r}")
        if p.align:
            kw.append(f"align={p.align}")
        if p.array is not None:
            kw.append(f"array={p.array}")
        if p.ptr_space:
            kw.append(f"ptr_space={p.ptr_space!r}")
        if p.ptr_align:
            kw.append(f"ptr_align={p.ptr_align}")
        return f"Param({p.name!r}, {p.type.name}{''.join(', ' + k for k in kw)})"

    def _list(self, items, ind="    ") -> str:
        if not items:
            return "[]"
        one = "[" + ", ".join(items) + "]"
        if len(one) < 70:
            return one
        return "[\n" + "".join(f"{ind}    {i},\n" for i in items) + ind + "]"

    def function(self, f: Function, pyname: str) -> list:
        gen = _Fn(self, f)
        body = gen.run()
        for d in gen._decls:
            self.types.add(d.type.name)
        params = [self._param(p) for p in f.params]
        directives = [printer.raw_directive(d).rstrip(";") for d in f.directives]
        version = f"({self.m.version[0]}, {self.m.version[1]})"
        opts = [f"arch={self.arch!r}", f"version={version}"]
        lines = []
        if f.kind == ".entry":
            if params:
                opts.append("raw_params=" + self._list(params))
            if directives:
                opts.append("raw_directives=" + self._list([repr(d) for d in directives]))
            deco = "kernel(" + ", ".join(opts) + ")"
        else:
            opts.append("params=" + self._list(params))
            if f.ret_params:
                opts.append("ret_params=" + self._list([self._param(p) for p in f.ret_params]))
            if f.linkage:
                opts.append(f"linkage={f.linkage!r}")
            if directives:
                opts.append("directives=" + self._list([repr(d) for d in directives]))
            if f.noreturn:
                opts.append("noreturn=True")
            deco = "flow.device_function(" + ", ".join(opts) + ")"
        header = f"{f.linkage + ' ' if f.linkage else ''}{f.kind} {f.name}"
        if pyname == f.name:
            lines.append(f"@{deco}")
            lines.append(f"def {pyname}():")
            lines.append(f'    """Transpiled from `{header}`."""')
            lines += body
        else:
            tmp = f"_{pyname}_body"
            lines.append(f"def {tmp}():")
            lines.append(f'    """Transpiled from `{header}`."""')
            lines += body
            lines.append("")
            lines.append(f"{tmp}.__name__ = {f.name!r}")
            lines.append(f"{pyname} = {deco}({tmp})")
        return lines

    def run(self) -> str:
        m = self.m
        names = _Names()
        chunks: list = []            # code blocks
        items: list = []             # ("text", [lines]) | ("fn", pyname)
        text: list = []
        dropped = {"sections": 0, "files": 0}
        linkage = {}

        def flush():
            if text:
                items.append(("text", list(text)))
                text.clear()

        for it in m.items:
            if isinstance(it, Function) and it.body is not None:
                flush()
                want = it.name if _IDENT.match(it.name) and it.name not in _RESERVED \
                    and not it.name.startswith("_flow") else _pyname(it.name)
                py = names.take(want)
                if py != it.name:
                    py_fn = py
                else:
                    py_fn = it.name
                if it.kind == ".entry" and it.linkage != ".visible":
                    linkage[it.name] = it.linkage
                chunks.append(self.function(it, py_fn))
                items.append(("fn", py_fn))
            elif isinstance(it, Function):
                out: list = []
                printer._function(it, out)
                text.append("".join(out).rstrip("\n"))
            elif isinstance(it, VarDecl):
                text.append(printer.var_decl(it) + ";")
            elif isinstance(it, Section):
                dropped["sections"] += 1
            elif isinstance(it, RawDirective):
                if it.name == ".file":
                    dropped["files"] += 1
                else:
                    text.append(printer.raw_directive(it))
            else:
                text.append(str(it))
        flush()
        return self._file(chunks, items, dropped, linkage)

    def _file(self, chunks, items, dropped, linkage) -> str:
        m = self.m
        out = []
        note = ""
        if dropped["sections"] or dropped["files"]:
            note = (f"\nNot carried over: {dropped['files']} .file directive(s), "
                    f"{dropped['sections']} debug .section(s) and the .loc lines (this file is "
                    f"the new source).\n")
        out.append(f'"""Transpiled from {self.source} by jax-pyptx '
                   f'(python -m jax_pyptx transpile).\n\n'
                   f"PTX ISA {m.version[0]}.{m.version[1]}, target {', '.join(m.target)}. "
                   f"Run this file to print the re-traced PTX; `module()` returns it as IR.\n"
                   f'{note}"""')
        out.append("from jax_pyptx import kernel, ptx, reg  # noqa: F401")
        if self.uses_param:
            out.append("from jax_pyptx.ir.nodes import Param")
        out.append("from jax_pyptx.transpile import flow  # noqa: F401")
        if self.types:
            out.append("from jax_pyptx.types import " + ", ".join(sorted(self.types))
                       + "  # noqa: F401")
        for c in chunks:
            out.append("\n\n" + "\n".join(c))
        item_code = []
        for kind, v in items:
            if kind == "fn":
                item_code.append(f"    {v},")
            else:
                body = "\n".join(v).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
                item_code.append('    """\n' + body + '\n""",')
        out.append("\n\n# module-scope declarations (as PTX) and the functions, in source order\n"
                   "ITEMS = [\n" + "\n".join(item_code) + "\n]")
        tgt = "(" + "".join(f"{t!r}, " for t in m.target).rstrip(" ") + ")"
        link = f", linkage={linkage!r}" if linkage else ""
        out.append(
            "\n\ndef module():\n"
            '    """The whole module, re-traced: declarations and functions in source order."""\n'
            f"    return flow.assemble(ITEMS, version=({m.version[0]}, {m.version[1]}), "
            f"target={tgt}, address_size={m.address_size}{link})\n"
            "\n\nif __name__ == \"__main__\":\n"
            "    from jax_pyptx import emit\n\n"
            "    print(emit(module()), end=\"\")\n")
        return "\n".join(out)
