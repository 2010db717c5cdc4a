"""Check every instruction of a parsed module against the ISA table for the module's own
``.target`` and ``.version``, as ptxas does before it assembles anything.

``check_module(module)`` raises the validator's error for the first instruction that does not
fit (``ValidationError``: unknown instruction or modifiers, wrong operand count;
``PtxTypeError``: an operand of the wrong kind or type, an immediate of the wrong kind;
``PtxValueError``: an immediate outside the ISA's range; ``ArchError``: an instruction or
special register the target or PTX version lacks), each naming the PTX line (the
instruction's ``loc``). ``text.parser.parse`` calls it unless ``check=False``; the checks of
the module's structure (directives, labels, duplicate definitions, the header) are the
parser's, which knows their positions.
"""
from __future__ import annotations

from ..errors import ArchError, ValidationError
from ..ir.nodes import Addr, Block, Instruction, PredPair, Reg, Vec
from .directives import SPECIAL_MIN, special_need
from .model import Target, parse_target


def module_target(module) -> Target | None:
    """The module's ``sm_`` target (the first, when ``.target`` names several), or None."""
    for name in module.target:
        if name.startswith("sm_"):
            return parse_target(name)
    return None


def _walk(stmts):
    for s in stmts:
        t = type(s)
        if t is Instruction:
            yield s
        elif t is Block:
            yield from _walk(s.body)


def _regs(op):
    t = type(op)
    if t is Reg:
        yield op
    elif t is Vec:
        for i in op.items:
            yield from _regs(i)
    elif t is Addr:
        if op.base is not None:
            yield from _regs(op.base)
        for e in op.extra:
            yield from _regs(e)
    elif t is PredPair:
        yield from _regs(op.first)
        yield from _regs(op.second)


def check_specials(ins, target: Target, version) -> None:
    """An ArchError if ``ins`` reads a special register ``target`` / ``version`` lacks."""
    for op in ins.operands:
        for r in _regs(op):
            if r.type is not None or not r.name.startswith("%"):
                continue
            need = special_need(r.name)
            if need is None:
                continue
            sm, ptx = need
            if not target.allows(sm, ()):
                raise ArchError(f"special register {r.name} needs sm_{sm} or higher; the "
                                f"module targets {target.name}", loc=ins.loc)
            if version is not None and tuple(version) < ptx:
                raise ArchError(f"special register {r.name} needs PTX ISA {ptx[0]}.{ptx[1]}; "
                                f"the module sets .version {version[0]}.{version[1]}",
                                loc=ins.loc)


def check_module(module) -> None:
    """Validate every instruction of ``module`` for its target and version (module docstring).

    Examples:
        >>> from jax_pyptx.text.parser import parse
        >>> from jax_pyptx.isa.module_check import check_module
        >>> m = parse(".version 8.0 .target sm_80 .address_size 64 .visible .entry k() "
        ...           "{ barrier.cluster.arrive; ret; }", check=False)
        >>> try:
        ...     check_module(m)
        ... except Exception as e:
        ...     print(type(e).__name__, "needs sm_90" in str(e))
        ArchError True
    """
    from . import check      # the package's ``check`` (table lookup, aliases, validator)

    target = module_target(module)
    if target is None:
        return
    version = module.version
    # (no special register needs more than sm_90 and PTX ISA 8.1: most modules skip the walk)
    specials = any(not target.allows(sm, ()) or tuple(version) < ptx
                   for sm, ptx in SPECIAL_MIN.values())
    for f in module.functions:
        if f.body is None:
            continue
        for ins in _walk(f.body):
            if check(ins, target, version, kernel=f.name) is None:
                raise ValidationError(f"unknown instruction {ins.full_opcode}: the ISA table "
                                      f"has no instruction {ins.opcode}", loc=ins.loc)
            if specials:
                check_specials(ins, target, version)
