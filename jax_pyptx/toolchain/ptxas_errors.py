"""ptxas's complaints, explained at the user's line.

ptxas names a line of the temporary ``.ptx`` file. Each line is shown with the PTX text it
names and, when the IR module the text was printed from is given, the user's Python
``file:line`` of the instruction on that line (the printer writes one instruction per line,
in the module's order, so matching rendered instructions against the text in order maps PTX
lines to instructions and their ``loc``).
"""
from __future__ import annotations

import re

_LINE = re.compile(r"^ptxas (?:\S+), line (\d+); ")
_ANY_LINE = re.compile(r"line (\d+)")


def instruction_lines(ptx: str, module) -> dict:
    """{1-based PTX line number: Instruction} for the instructions of ``module`` found, in
    order, in ``ptx`` (the text printed from ``module``)."""
    from ..ir.nodes import Block, Function, Instruction
    from ..ir.render import instruction as render

    def walk(stmts):
        for s in stmts:
            if type(s) is Instruction:
                yield s
            elif type(s) is Block:
                yield from walk(s.body)

    insts = []
    for item in getattr(module, "items", ()):
        if isinstance(item, Function) and item.body is not None:
            insts.extend(walk(item.body))
    out, i = {}, 0
    lines = ptx.splitlines()
    for n, line in enumerate(lines, 1):
        if i >= len(insts):
            break
        try:
            text = render(insts[i])
        except Exception:
            i += 1
            continue
        if line.strip() == text.strip():
            out[n] = insts[i]
            i += 1
    return out


def explain(stderr: str, ptx: str, tool, module=None) -> tuple:
    """(message, user's SourceLoc or None) of the ToolchainError for a rejected PTX text."""
    lines = ptx.splitlines()
    where = instruction_lines(ptx, module) if module is not None else {}
    msg = [f"ptxas {tool.version_text} ({tool.path}) rejected the PTX:"]
    first_loc = None
    for line in stderr.strip().splitlines():
        m = _LINE.search(line) or _ANY_LINE.search(line)
        if not m or not 0 < int(m.group(1)) <= len(lines):
            msg.append("  " + line)
            continue
        n = int(m.group(1))
        inst = where.get(n)
        loc = getattr(inst, "loc", None) if inst is not None else None
        text = _LINE.sub("", line).strip() if _LINE.search(line) else line.strip()
        prefix = f"{loc}: " if loc is not None else ""
        msg.append(f"  {prefix}PTX line {n}: {text}")
        msg.append(f"    > {lines[n - 1].strip()}")
        if first_loc is None and loc is not None:
            first_loc = loc
    return "\n".join(msg), first_loc
