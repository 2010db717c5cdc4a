"""Helpers for the ISA family tests: assemble, and which table forms a kernel used."""
from jax_pyptx.ir.nodes import Block, Instruction
from jax_pyptx.isa import check
from jax_pyptx.isa.model import parse_target
from jax_pyptx.toolchain import ptxas_check


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


def forms_used(k, **kw) -> set:
    """ids of the (un-gated) table forms the kernel's instructions matched."""
    from jax_pyptx.isa import TABLE

    target = parse_target(k.arch)
    fn = [i for i in k.module(**kw).items if hasattr(i, "body")][0]
    used = set()
    for s in _walk(fn.body):
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
