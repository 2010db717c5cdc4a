"""Instruction sequences up to register and label names: the transpiler's "same IR".

``instruction_stream(fn)`` flattens a function's nested scopes into its instructions and
the labels something branches to, then renames

* registers by first appearance (``R0``, ``R1``, ...), scope-aware: a register declared in
  an inner ``{ }`` scope is a different register from a same-named one elsewhere;
  special registers (never declared: ``%tid.x``) keep their names;
* labels by first appearance (``L0``, ...), scope-aware like PTX's (a label in a ``{ }``
  block is local to it); labels no instruction references are dropped.

Two functions are "the same" when their streams are equal: the same opcodes, modifiers,
immediates, symbols and guards, with a one-to-one correspondence of registers and labels.
"""
from __future__ import annotations

from ..ir.nodes import (
    Addr, Block, Function, Guard, Instruction, Label, ParenList, PredPair, Reg, RegDecl, Sym, Vec,
)
from .structure import _syms

__all__ = ["instruction_stream", "same_instructions"]


def _local_labels(stmts, out):
    names = out.setdefault(id(stmts), set())
    for s in stmts:
        if type(s) is Label:
            names.add(s.name)
        elif type(s) is Block:
            _local_labels(s.body, out)


def _flatten(stmts, scopes, out, counter, lstack):
    scope = {"names": {}, "prefixes": {}}
    scopes.append(scope)
    lstack = lstack + [id(stmts)]
    for s in stmts:
        t = type(s)
        if t is RegDecl:
            counter[0] += 1
            tag = f"#{counter[0]}"
            for n in s.names:
                scope["names"][n] = n + tag
            if s.count:
                scope["prefixes"][s.prefix] = (s.count, tag)
        elif t is Block:
            _flatten(s.body, scopes, out, counter, lstack)
        elif t is Instruction or t is Label:
            out.append((s, [dict(x["names"]) for x in scopes],
                        [dict(x["prefixes"]) for x in scopes], lstack))
    scopes.pop()


def _resolve(name, names, prefixes):
    for nm, pf in zip(reversed(names), reversed(prefixes)):
        if name in nm:
            return nm[name]
        stem = name.rstrip("0123456789")
        if stem != name and stem in pf:
            return name + pf[stem][1]
    return None


def instruction_stream(fn: Function) -> list:
    """The normalised stream of ``fn`` (see the module docstring)."""
    flat = []
    local: dict = {}
    _local_labels(fn.body or [], local)
    _flatten(fn.body or [], [], flat, [0], [])

    def lkey(name, lstack):
        for lid in reversed(lstack):
            if name in local.get(lid, ()):
                return (lid, name)
        return None

    referenced = set()
    for s, _, _, lstack in flat:
        if type(s) is Instruction:
            names: set = set()
            for o in s.operands:
                _syms(o, names)
            for n in names:
                k = lkey(n, lstack)
                if k is not None:
                    referenced.add(k)
    regs: dict = {}
    labels: dict = {}

    def reg_name(name, names, prefixes):
        key = _resolve(name, names, prefixes)
        if key is None:
            return name                     # special register or undeclared name
        if key not in regs:
            regs[key] = f"R{len(regs)}"
        return regs[key]

    def lab(key):
        if key not in labels:
            labels[key] = f"L{len(labels)}"
        return labels[key]

    def op(o, names, prefixes, lstack):
        t = type(o)
        if t is Reg:
            return Reg(reg_name(o.name, names, prefixes), None, o.neg)
        if t is Sym:
            k = lkey(o.name, lstack)
            return Sym(lab(k), o.offset) if k is not None else o
        if t is Addr:
            return Addr(None if o.base is None else op(o.base, names, prefixes, lstack),
                        o.offset, tuple(op(e, names, prefixes, lstack) for e in o.extra))
        if t is Vec:
            return Vec(tuple(op(i, names, prefixes, lstack) for i in o.items))
        if t is ParenList:
            return ParenList(tuple(op(i, names, prefixes, lstack) for i in o.items))
        if t is PredPair:
            return PredPair(op(o.first, names, prefixes, lstack),
                            op(o.second, names, prefixes, lstack))
        return o

    out = []
    for s, names, prefixes, lstack in flat:
        if type(s) is Label:
            k = (lstack[-1], s.name)
            if k in referenced:
                out.append(Label(lab(k)))
            continue
        g = s.guard
        if g is not None:
            g = Guard(reg_name(g.reg, names, prefixes), g.negated)
        out.append(Instruction(s.opcode, tuple(s.modifiers),
                               tuple(op(o, names, prefixes, lstack) for o in s.operands), g))
    return out


def same_instructions(a: Function, b: Function) -> bool:
    return instruction_stream(a) == instruction_stream(b)
