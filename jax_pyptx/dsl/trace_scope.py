"""A bare trace, outside any ``@kernel`` (pyptx spells it ``pyptx._trace.trace_scope``).

Inside ``with trace_scope() as t:`` every ``reg.*`` / ``smem.*`` / ``ptx.*`` call appends to
``t`` exactly as it would in a kernel body; ``t.lines()`` gives the emitted statements as PTX
text (one per line, no declarations) and ``t.body`` the IR statements::

    with trace_scope() as t:
        r = reg.scalar(u32, 1)
        ptx.inst.add.u32(r, r, 2)
    t.lines()   # ['mov.u32 %r0, 1;', 'add.u32 %r0, %r0, 2;']

The target is ``arch`` (sm_90a by default); ``ptx_version=(major, minor)`` is the PTX ISA
version instructions are validated against (None: whatever they need).

Examples:
    >>> from jax_pyptx import ptx, reg
    >>> from jax_pyptx.types import u32
    >>> from jax_pyptx.dsl.trace_scope import trace_scope
    >>> with trace_scope() as t:
    ...     r = reg.scalar(u32, 1)
    ...     _ = ptx.inst.add.u32(r, r, 2)
    >>> t.lines()
    ['mov.u32 %r0, 1;', 'add.u32 %r0, %r0, 2;']
"""
from __future__ import annotations

import contextlib

from ..isa.model import parse_target
from . import context

__all__ = ["trace_scope", "BareTrace"]


class BareTrace(context.Trace):
    """A :class:`~jax_pyptx.dsl.context.Trace` with no kernel around it.

    Examples:
        >>> from jax_pyptx.dsl.trace_scope import BareTrace, trace_scope
        >>> with trace_scope() as t:
        ...     pass
        >>> isinstance(t, BareTrace), t.lines()
        (True, [])
    """

    def lines(self) -> list:
        """The statements emitted so far, as PTX text (declarations left out).

        Examples:
            >>> from jax_pyptx import ptx
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope() as t:
            ...     _ = ptx.ret()
            >>> t.lines()
            ['ret;']
        """
        from ..ir.nodes import RegDecl
        from ..text.printer import _body

        text: list = []
        _body([s for s in self.prologue + self.body if type(s) is not RegDecl], text, "")
        return [" ".join(line.split()) for line in "".join(text).splitlines() if line.strip()]


@contextlib.contextmanager
def trace_scope(*, ptx_version=None, arch: str = "sm_90a", name: str = "trace_scope"):
    """Open a bare trace (see the module docstring); yields it.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope(arch="sm_100a") as t:
        ...     _ = ptx.inst.mov.u32(reg.scalar(u32), ptx.special.tid.x())
        >>> t.lines()
        ['mov.u32 %r0, %tid.x;']
    """
    from .smem import SmemLayout

    tr = BareTrace(name, parse_target(arch), tuple(ptx_version) if ptx_version else None)
    tr.smem = SmemLayout()
    context.push(tr)
    try:
        yield tr
    finally:
        context.pop()
        tr.closed = True
