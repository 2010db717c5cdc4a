"""The interpreter's handler registry, keyed by the ISA table's instruction names.

A family module (``ops_*``) registers ``factory(prog, d, ins, dec, scope)`` for the names of
``isa.TABLE`` it runs; ``dec`` is the instruction's ``isa.Decoding`` (its form and chosen
modifiers), which is where a factory reads modifiers from. A factory fills in the ``Decoded``
record ``d`` (``fn``, ``kind``, ``sync``, ``target``).

This module is the bottom of ``interpret/``'s instruction side: it imports no op family, and
registering a name the table does not know is an error at import time.
"""
from __future__ import annotations

from ...errors import InterpreterError
from ...isa import TABLE

# kinds of decoded instructions
K_OP, K_BRA, K_EXIT, K_CTRL, K_NOP = 0, 1, 2, 3, 4

HANDLERS: dict = {}


def register(*names):
    """Decorator: the factory runs the instructions ``names`` (ISA table names)."""
    for n in names:
        if n not in TABLE:
            raise InterpreterError(
                f"register({n!r}): the ISA table has no instruction {n!r}; handlers are keyed "
                f"by isa.TABLE names (e.g. 'mma.sync', 'bar.sync')")

    def deco(f):
        for n in names:
            if n in HANDLERS and HANDLERS[n] is not f:
                raise InterpreterError(f"register({n!r}): {n} already has a handler "
                                       f"({HANDLERS[n].__module__}.{HANDLERS[n].__name__})")
            HANDLERS[n] = f
        return f
    return deco


def handler(name: str):
    """The factory registered for ``name``, or None."""
    return HANDLERS.get(name)
