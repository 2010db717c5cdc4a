"""Modifier orders against ptxas: the helper the order tests use (``tests/test_isa_orders.py``),
also a script (``python -m tests.isa_orders``) that prints every verdict on which the table
and ptxas disagree.

The examples are the instructions of the family tests' kernels (together they use every form
and every option of the ISA table). For each form a few examples are kept, so that every
modifier group any example of the form carries is in one of them. Each example's modifiers
are then reordered:

* ``swaps``: every exchange of two adjacent modifiers (``a.b.c`` -> ``b.a.c``, ``a.c.b``);
* ``table_orders``: random orders of its modifiers among those the table takes.

The reordered lines are written right after the example in a copy of its kernel's PTX, and
ptxas judges each line (an error or a warning of its own on the line: refused; a warning
means ptxas guessed, as with ``ld.v2.global.u32``: "Vector Type not specified properly").
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile

from jax_pyptx.errors import PtxError
from jax_pyptx.ir.nodes import Instruction
from jax_pyptx.isa import check
from jax_pyptx.isa.model import parse_target
from jax_pyptx.isa.orders import assignment, keeps_order, same_class
from jax_pyptx.text.printer import instruction

from .isa_util import instruction_lines

_VERSION = re.compile(r"^\.version (\d+)\.(\d+)$", re.M)


def kernels() -> list:
    """The family tests' kernels: together they use every form and option of the table."""
    from . import (test_isa_arith as A, test_isa_extra as X, test_isa_hopper_blackwell as H,
                   test_isa_memory as M, test_isa_mma as W, test_isa_options as O)

    return [O.sweep_sm100, O.sweep_sm90, A.arith_sm100, A.arith_sm90, M.mem_sm100,
            M.misc_sm90, M.calls_sm80, W.mma_sm80, W.mma_sm90, W.mma_sm100, W.wgmma_sm90,
            H.hopper, H.blackwell, H.blackwell_pair, *X.KERNELS]


def _version(text: str) -> tuple:
    return tuple(int(x) for x in _VERSION.search(text).groups())


@functools.lru_cache(maxsize=None)
def examples(per_form: int = 4) -> tuple:
    """``(kernel, line, instruction, form)``: per form, up to ``per_form`` examples, together
    carrying every modifier group that any example of the form carries (most modifiers
    first)."""
    by_form: dict = {}
    for k in kernels():
        target = parse_target(k.arch)
        version = _version(k.ptx())
        for line, s in instruction_lines(k):
            if type(s) is not Instruction or len(s.modifiers) < 2:
                continue
            form = check(s, target, version)
            if form is not None:
                by_form.setdefault((form.name, form.groups, form.operands), []).append(
                    (k, line, s, form))
    out = []
    for _, items in sorted(by_form.items(), key=lambda kv: kv[0][0]):
        items.sort(key=lambda it: -len(it[2].modifiers))
        seen_mods, kept = set(), []
        for it in items:
            mods = it[2].modifiers
            new = set(mods) - seen_mods
            if not kept or (new and len(kept) < per_form):
                kept.append(it)
                seen_mods |= set(mods)
        out += kept
    return tuple(out)


def swaps(mods: tuple) -> list:
    """Every order of ``mods`` with two adjacent modifiers exchanged."""
    out = []
    for i in range(len(mods) - 1):
        if mods[i] != mods[i + 1]:
            out.append(mods[:i] + (mods[i + 1], mods[i]) + mods[i + 2:])
    return out


def table_orders(form, mods: tuple, n: int, seed: int = 0) -> list:
    """Up to ``n`` orders of ``mods`` (an instruction of ``form``) other than its own, drawn
    at random (seeded) among the orders the table's rule takes: each a random walk that
    writes next any modifier that no unwritten one must precede (``orders.keeps_order``)."""
    import random

    rng = random.Random(hash((form.name, mods, seed)) & 0xFFFFFFFF)
    names = assignment(form, mods)
    index = {g.name: i for i, g in enumerate(form.groups)}
    out = set()
    for _ in range(4 * n):
        left = list(range(len(mods)))
        order = []
        while left:
            free = [i for i in left if not any(
                index[names[j]] < index[names[i]] and keeps_order(form, names[i], names[j])
                for j in left if j != i)]
            i = rng.choice(free)
            left.remove(i)
            order.append(mods[i])
        if tuple(order) != mods:
            out.add(tuple(order))
        if len(out) >= n:
            break
    return sorted(out)


def table_accepts(s: Instruction, mods: tuple, target, version) -> bool:
    ins = Instruction(s.opcode, mods, s.operands, s.guard, s.loc)
    try:
        return check(ins, target, version) is not None
    except PtxError:
        return False


def _ptxas():
    from jax_pyptx.toolchain import find_tool

    return find_tool("ptxas").path


def ptxas_verdicts(probes) -> dict:
    """``probes``: ``(kernel, line, instruction, modifiers)``; returns ``{(kernel name, line,
    modifiers): None (accepted) or ptxas's message}`` with each probe's line written after
    the example's line in a copy of the kernel's text, one ptxas run per kernel. A kernel
    whose ``.version`` this ptxas does not know is judged at the newest it knows; probes of
    an example ptxas refuses as it stands are left out."""
    by_kernel: dict = {}
    for k, line, s, mods in probes:
        by_kernel.setdefault(k.name, (k, []))[1].append((line, s, mods))
    out = {}
    for name, (k, items) in by_kernel.items():
        lines = k.ptx().split("\n")
        base, newest = _run(k.arch, "\n".join(lines))
        if newest:
            lines = [f".version {newest}" if _VERSION.match(t) else t for t in lines]
            base, newest = _run(k.arch, "\n".join(lines))
            assert not newest, newest
        extra: dict = {}
        for line, s, mods in items:
            if line in base:
                continue
            text = instruction(Instruction(s.opcode, mods, s.operands, s.guard))
            extra.setdefault(line, []).append((text, mods))
        new, where = [], {}
        for i, text in enumerate(lines, 1):
            new.append(text)
            for t, mods in extra.get(i, ()):
                new.append("\t" + t)
                where[len(new)] = (i, mods)
        got, _ = _run(k.arch, "\n".join(new))
        for at, (line, mods) in where.items():
            msgs = got.get(at, ())
            out[(name, line, mods)] = "; ".join(msgs) if msgs else None
    return out


def _run(arch: str, text: str):
    """``({line: [messages]}, newest .version)``: ptxas's errors and warnings, per line, and
    the newest PTX ISA version it knows when it refuses the text's (else None)."""
    with tempfile.TemporaryDirectory(prefix="isa-orders-") as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(text)
        proc = subprocess.run([_ptxas(), f"-arch={arch}", "-o", os.path.join(d, "k.cubin"),
                               src], capture_output=True, text=True)
    out: dict = {}
    for ln in proc.stderr.splitlines():
        m = re.search(r"Unsupported \.version [\d.]+; current version is '([\d.]+)'", ln)
        if m:
            return {}, m.group(1)
        m = re.search(r", line (\d+); (error|warning)\s*:\s*(.*)", ln)
        if m:
            out.setdefault(int(m.group(1)), []).append(f"{m.group(2)}: {m.group(3)}")
        elif "fatal" in ln and "aborted due to errors" not in ln:
            raise AssertionError(f"ptxas: {ln}")
    return out, None


def swap_probes() -> list:
    """``(kernel, line, instruction, modifiers)`` of every adjacent exchange of every example
    that is another order of the same instruction: not an exchange of two options of one
    ordered class (``cvt.f32.s32`` -> ``cvt.s32.f32`` is another conversion, ``.row.col`` ->
    ``.col.row`` other layouts; ``orders.same_class``)."""
    out = []
    for k, line, s, form in examples():
        names = assignment(form, s.modifiers)
        for i in range(len(s.modifiers) - 1):
            mods = s.modifiers
            if mods[i] == mods[i + 1] or same_class(form, names[i], names[i + 1]):
                continue
            out.append((k, line, s, mods[:i] + (mods[i + 1], mods[i]) + mods[i + 2:]))
    return out


def order_probes(per_example: int = 2) -> list:
    """``(kernel, line, instruction, modifiers)``: for every example, ``per_example`` orders
    the table takes (``table_orders``)."""
    return [(k, line, s, mods) for k, line, s, form in examples()
            for mods in table_orders(form, s.modifiers, per_example)]


def compare_swaps() -> list:
    """``(kernel, line, text, table verdict, ptxas verdict)`` of every adjacent exchange on
    which the table and ptxas disagree."""
    probes = swap_probes()
    verdicts = ptxas_verdicts(probes)
    out = []
    for k, line, s, mods in probes:
        target = parse_target(k.arch)
        table = table_accepts(s, mods, target, _version(k.ptx()))
        if (k.name, line, mods) not in verdicts:
            continue
        ptxas = verdicts[(k.name, line, mods)]
        if table != (ptxas is None):
            out.append((k.name, line, s.opcode + "".join(mods), table, ptxas))
    return out


def main() -> int:
    bad = compare_swaps()
    for name, line, text, table, ptxas in bad:
        print(f"{name}:{line}\t{text}\ttable={'ok' if table else 'refused'}\t"
              f"ptxas={ptxas or 'ok'}")
    print(f"{len(bad)} disagreements over {len(swap_probes())} adjacent exchanges "
          f"of {len(examples())} examples")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
