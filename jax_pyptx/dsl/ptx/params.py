"""Kernel parameters by name: ``ptx.param("n")`` (the symbol), ``ptx.param_value("n")``
(a register loaded with ``ld.param`` once per trace)."""
from __future__ import annotations

from ...errors import TraceError
from ...ir.nodes import Addr, Sym
from .. import context
from ..context import user_loc
from ..values import Register


def _find(tr, name):
    for p in tr.params:
        if p.name == name:
            return p
    have = ", ".join(p.name for p in tr.params) or "none"
    raise TraceError(f"kernel {tr.name!r} has no parameter {name!r}; parameters: {have}",
                     loc=user_loc(3))


def param(name: str) -> Sym:
    """The parameter symbol (use as ``ptx.addr(ptx.param("n"))``)."""
    tr = context.current("ptx.param")
    _find(tr, name)
    return Sym(name)


def param_value(name: str) -> Register:
    """The parameter's value in a register (``ld.param`` emitted once, at the kernel's start)."""
    tr = context.current("ptx.param_value")
    p = _find(tr, name)
    if name in tr.param_loads:
        return tr.param_loads[name]
    if p.array is not None:
        raise TraceError(f"parameter {name!r} is a byte array; use ptx.param({name!r})",
                         loc=user_loc())
    r = Register(tr.new_reg(p.type), tr)
    tr.emit("ld", (".param", p.type.ptx), (r.ir, Addr(Sym(name))), loc=user_loc(), prologue=True)
    tr.param_loads[name] = r
    return r
