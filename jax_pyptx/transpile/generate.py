"""The module-level part of the transpiler: file layout, kernels and device functions,
typed-wrapper selection (checked by probing) and mbarrier wait-loop recognition."""
from __future__ import annotations

import re

from ..ir.nodes import (
    Function, Imm, Instruction, Module, RawDirective, Reg, RegDecl, Section, VarDecl, Vec,
)
from ..text import printer
from .codegen import _Fn, _Names, _Probe, _pyname, _same, _IDENT, _RESERVED

_WAITS = ("mbarrier.try_wait", "mbarrier.test_wait")


def _resolve(path: str):
    from ..dsl import ptx as _ptx

    obj = _ptx
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _cta_group(mods):
    for m in mods:
        if m.startswith(".cta_group::"):
            return m.split("::")[1]
    return None


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


def _imm_int(o):
    if type(o) is Imm and re.match(r"^-?\d+$", o.text):
        return int(o.text)
    return None


def _wgmma_candidate(ins, ops, fn):
    mods = ins.modifiers
    if len(mods) < 6 or mods[:2] != (".sync", ".aligned"):
        return None
    m = re.match(r"^\.m64n(\d+)k(\d+)$", mods[2])
    if not m:
        return None
    rest = list(mods[3:])
    sat = ".satfinite" in rest
    rest = [x for x in rest if x != ".satfinite"]
    if len(rest) != 3:
        return None
    dtype, atype, btype = (x[1:] for x in rest)
    acc = _slice(fn, ins.operands[0])
    if acc is None:
        return None
    imms = [_imm_int(o) for o in ins.operands[4:]]
    if any(v is None for v in imms):
        return None
    a_regs = type(ins.operands[1]) is Vec
    kw = [("n", m.group(1), int(m.group(1))), ("dtype", repr(dtype), dtype),
          ("atype", repr(atype), atype), ("btype", repr(btype), btype),
          ("scale_d",) + ((str(_imm_int(ins.operands[3])), _imm_int(ins.operands[3]))
                          if _imm_int(ins.operands[3]) is not None else ops[3])]
    names = ["scale_a", "scale_b"] + ([] if a_regs else ["trans_a"]) + ["trans_b"]
    for name, v in zip(names, imms):
        kw.append((name, str(v), v))
    if sat:
        kw.append(("satfinite", "True", True))
    return "ptx.wgmma.mma_async", [acc, ops[1], ops[2]], kw


def _mma_candidate(ins, ops, fn):
    mods = list(ins.modifiers)
    if len(mods) < 8 or mods[0] != ".aligned":
        return None
    shape, alayout, blayout = mods[1][1:], mods[2][1:], mods[3][1:]
    rest = mods[4:]
    kw = [("shape", repr(shape), shape)]
    if alayout != "row" or blayout != "col":
        kw += [("alayout", repr(alayout), alayout), ("blayout", repr(blayout), blayout)]
    if rest and rest[0] == ".satfinite":
        kw.append(("satfinite", "True", True))
        rest = rest[1:]
    if len(rest) < 4:
        return None
    bitop = None
    if len(rest) == 6 and rest[5] == ".popc":
        bitop = rest[4][1:]
        rest = rest[:4]
    if len(rest) != 4:
        return None
    for name, t in zip(("dtype", "atype", "btype", "ctype"), rest):
        kw.append((name, repr(t[1:]), t[1:]))
    if bitop:
        kw.append(("bitop", repr(bitop), bitop))
    return "ptx.mma.sync", ops, kw


def _typed_candidate(ins: Instruction, ops: list, fn=None):
    """(path, [(code, value)], [(kw, code, value)]) of a typed wrapper that may reproduce
    ``ins``; the caller checks it by probing."""
    op, mods, n = ins.opcode, ins.modifiers, len(ops)

    def s(v):
        return (repr(v), v)

    if op == "wgmma.fence" and n == 0:
        return "ptx.wgmma.fence", [], []
    if op == "wgmma.commit_group" and n == 0:
        return "ptx.wgmma.commit_group", [], []
    if op == "wgmma.wait_group" and n == 1:
        return "ptx.wgmma.wait_group", ops, []
    if op == "mbarrier.init" and n == 2:
        return "ptx.mbarrier.init", ops, []
    if op == "mbarrier.inval" and n == 1:
        return "ptx.mbarrier.inval", ops, []
    if op == "fence.proxy" and n == 0 and mods[:1] == (".async",) and len(mods) <= 2:
        return "ptx.fence.proxy_async", [s(mods[1][1:])] if len(mods) == 2 else [], []
    if op == "fence" and n == 0:
        if mods == (".mbarrier_init", ".release", ".cluster"):
            return "ptx.fence.mbarrier_init", [], []
        if len(mods) == 2 and mods[0] in (".sc", ".acq_rel"):
            return "ptx.fence.fence", [s(mods[0][1:]), s(mods[1][1:])], []
    if op == "membar" and n == 0 and len(mods) == 1:
        return "ptx.fence.membar", [s(mods[0][1:])], []
    if op == "bar.sync" and not mods and n in (1, 2):
        return "ptx.bar.sync", ops, []
    if op == "bar.arrive" and not mods and n == 2:
        return "ptx.bar.arrive", ops, []
    if op == "barrier.sync" and n in (1, 2):
        return "ptx.bar.sync", ops, [("aligned", repr(".aligned" in mods), ".aligned" in mods)]
    if op == "bar.warp.sync" and n == 1:
        return "ptx.bar.warp_sync", ops, []
    if op == "wgmma.mma_async" and n >= 4 and fn is not None:
        return _wgmma_candidate(ins, ops, fn)
    if op == "mma.sync" and n == 4 and fn is not None:
        return _mma_candidate(ins, ops, fn)
    if op.startswith("tcgen05."):
        g = _cta_group(mods)
        cg = [("cta_group", g, int(g))] if g else []
        simple = {"tcgen05.wait::ld": "wait_ld", "tcgen05.wait::st": "wait_st",
                  "tcgen05.fence::before_thread_sync": "fence_before_thread_sync",
                  "tcgen05.fence::after_thread_sync": "fence_after_thread_sync"}
        if op in simple and n == 0:
            return "ptx.tcgen05." + simple[op], [], []
        if op == "tcgen05.relinquish_alloc_permit" and n == 0:
            return "ptx.tcgen05.relinquish_alloc_permit", [], cg
        if op in ("tcgen05.alloc", "tcgen05.dealloc") and n == 2:
            return "ptx.tcgen05." + op.split(".")[1], ops, cg
        if op == "tcgen05.shift" and n == 1:
            return "ptx.tcgen05.shift", ops, cg
        if op == "tcgen05.commit" and n == 1:
            return "ptx.tcgen05.commit", ops, cg
    return None


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
        cand = _typed_candidate(ins, ops, fn)
        if cand is None:
            return None
        path, args, kwargs = cand
        try:
            fn = _resolve(path)
        except AttributeError:
            return None
        def val(v):
            return v.make() if isinstance(v, _Lazy) else v

        got = self.probe.run(lambda: fn(*[val(v) for _, v in args],
                                        **{k: val(v) for k, _, v in kwargs}))
        if got and len(got) == 1 and _same(got[0], ins):
            self.stats["typed"] += 1
            return path, [c for c, _ in args], [(k, c) for k, c, _ in kwargs]
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
        if type(w) is not Instruction or w.opcode not in _WAITS or w.guard is not None \
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
        # the DSL's own helper: try_wait.parity, @!p bra (no .uni), a fresh predicate
        if fresh_flag == flag and style == "retry" and not uni and \
                w.opcode == "mbarrier.try_wait" and len(ops) in (2, 3):
            kw = []
            for m in w.modifiers:
                if m in (".acquire", ".relaxed"):
                    kw.append(("sem", repr(m[1:]), m[1:]))
                elif m in (".cta", ".cluster"):
                    kw.append(("scope", repr(m[1:]), m[1:]))
            if len(ops) == 3:
                kw.append(("suspend_hint", ops[2][0], ops[2][1]))
            tp = _resolve("ptx.mbarrier.try_wait_parity")
            got = self.probe.run(lambda: tp(ops[0][1], ops[1][1], **{k: v for k, _, v in kw}))
            if got and len(got) == 1 and got[0].modifiers == w.modifiers and \
                    got[0].operands[1:] == w.operands[1:]:
                self.stats["typed"] += 1
                args = [ops[0][0], ops[1][0]] + [f"{k}={c}" for k, c, _ in kw]
                return f"ptx.mbarrier.wait({', '.join(args)})"
        full_op = (w.opcode + "".join(w.modifiers))[len("mbarrier."):]
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
