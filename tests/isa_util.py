"""Helpers for the ISA family tests: assemble, which table forms a kernel used, and ptxas's
per-line errors for a kernel's text re-targeted / re-versioned (the version and arch probes)."""
from jax_pyptx import ptx
from jax_pyptx.ir.nodes import Block, Instruction
from jax_pyptx.isa import check
from jax_pyptx.isa.model import parse_target
from jax_pyptx.toolchain import ptxas_check


def inst(full: str, operands=(), pred=None):
    """``ptx.inst`` spelled from a dotted opcode (``inst("ld.global.v4.f32", ops)`` is
    ``ptx.inst.ld.global_.v4.f32(*ops)``): table-validated, as a kernel writes it."""
    chain = ptx.inst
    for part in full.split("."):
        chain = getattr(chain, part)
    return chain(*operands, pred=pred)


def coord_count(spec, chosen: dict, form) -> int:
    """The coordinates a tensor operand (``[tmap, {c0, ...}]``) of ``form`` takes with the
    modifiers ``chosen``: the operand's rule or count, else N of the ``.Nd`` dimension
    modifier (0: any)."""
    if spec.rule:
        return form.count_rule(spec.rule)(chosen)
    if spec.count:
        return spec.count
    dim = chosen.get("dim") or ""
    return int(dim[1]) if dim[1:2].isdigit() else 0


def assemble(k, **kw):
    """ptxas accepts the kernel for its arch; returns the PTX text."""
    text = k.ptx(**kw)
    ptxas_check(text, k.arch)
    return text


def _walk(stmts):
    for s in stmts:
        if type(s) is Block:
            yield from _walk(s.body)
        else:
            yield s


def functions(module) -> list:
    """The functions with a body, in source order (a text kernel's callees first)."""
    return [i for i in module.items if getattr(i, "body", None) is not None]


class TextKernel:
    """Hand-written PTX standing in for a traced kernel in these helpers, for instructions the
    DSL does not emit (call, brx.idx): ``ptx()`` is the text as the printer writes it."""

    def __init__(self, name: str, arch: str, text: str):
        from jax_pyptx import emit, parse

        self.name, self.arch = name, arch
        self._text = emit(parse(text))

    def ptx(self, **kw) -> str:
        return self._text

    def module(self, **kw):
        from jax_pyptx import parse

        return parse(self._text)


def forms_used(k, **kw) -> set:
    """ids of the (un-gated) table forms the kernel's instructions matched."""
    from jax_pyptx.isa import TABLE

    target = parse_target(k.arch)
    used = set()
    for s in (s for fn in functions(k.module(**kw)) for s in _walk(fn.body)):
        if type(s) is Instruction:
            f = check(s, target)
            if f is None:
                continue
            for base in TABLE[f.name]:
                if base is f or (base.groups == f.groups and base.operands == f.operands):
                    used.add(id(base))
    return used


def family_forms(*families) -> dict:
    from jax_pyptx.isa import TABLE

    return {id(f): f for fs in TABLE.values() for f in fs if f.family in families}


def missing(used: set, *families) -> list:
    return sorted(f.describe() for i, f in family_forms(*families).items() if i not in used)


# ----------------------------------------------------------------------------- ptxas probes
# PTX ISA versions in order (the ISA's release history; 6.6-6.9 and 7.9 were never released)
VERSIONS = tuple((6, i) for i in range(6)) + tuple((7, i) for i in range(9)) + \
    tuple((8, i) for i in range(9)) + ((9, 0), (9, 1))


def prev_version(v):
    return VERSIONS[VERSIONS.index(tuple(v)) - 1]


def instruction_lines(k, **kw):
    """(1-based line number in ``k.ptx()``, IR instruction) of every instruction."""
    from jax_pyptx.text.printer import instruction

    text = k.ptx(**kw).split("\n")
    out, at = [], 0
    for s in (s for fn in functions(k.module(**kw)) for s in _walk(fn.body)):
        if type(s) is not Instruction:
            continue
        want = instruction(s)
        while text[at].lstrip("\t") != want:
            at += 1
        out.append((at + 1, s))
        at += 1
    return out


def ptxas_errors(text: str, arch: str, version) -> dict:
    """{line: [messages]} of ptxas's per-line errors for ``text`` re-targeted to ``arch``
    with ``.version`` replaced (the parser-free path: the DSL's text, edited)."""
    import os
    import re
    import subprocess
    import tempfile

    from jax_pyptx.toolchain import find_tool

    text = re.sub(r"^\.version \d+\.\d+$", f".version {version[0]}.{version[1]}", text,
                  count=1, flags=re.M)
    text = re.sub(r"^\.target \S+$", f".target {arch}", text, count=1, flags=re.M)
    with tempfile.TemporaryDirectory(prefix="isa-ver-") as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(text)
        proc = subprocess.run([find_tool("ptxas").path, f"-arch={arch}", "-o",
                               os.path.join(d, "k.cubin"), src], capture_output=True, text=True)
    errs: dict = {}
    for line in proc.stderr.splitlines():
        m = re.search(r", line (\d+); error\s*:\s*(.*)", line)
        if m:
            errs.setdefault(int(m.group(1)), []).append(m.group(2))
        elif "fatal" in line and "aborted due to errors" not in line:
            errs.setdefault(0, []).append(line)
    return errs
