"""``@intrinsic``: a Python helper whose instructions are marked as one unit in the PTX.

Outside a trace the function simply runs. Inside one, what it emits is bracketed by comment
lines naming the call::

    // BEGIN twice(%r0, n=1)
    add.u32 %r0, %r0, 1;
    // END twice

Nesting works (each call brackets its own instructions); the return value passes through.
The comments change neither ptxas's output nor the interpreter's.

Examples:
    >>> from jax_pyptx import kernel, ptx, reg
    >>> from jax_pyptx.dsl.intrinsic import intrinsic
    >>> from jax_pyptx.types import u32
    >>> @intrinsic
    ... def zero(r):
    ...     ptx.inst.mov.u32(r, 0)
    >>> @kernel
    ... def k():
    ...     zero(reg.scalar(u32))
    ...     ptx.ret()
    >>> "// BEGIN zero" in k.ptx()
    True
"""
from __future__ import annotations

import functools

from ..ir.nodes import RawDirective
from . import context


def _arg_text(a) -> str:
    name = getattr(a, "name", None)
    if isinstance(name, str):
        return name
    text = repr(a)
    return text[:37] + "..." if len(text) > 40 else text


def _call_text(fn, args, kwargs) -> str:
    parts = [_arg_text(a) for a in args] + [f"{k}={_arg_text(v)}" for k, v in kwargs.items()]
    return f"{fn.__name__}({', '.join(parts)})"


def intrinsic(fn):
    """Decorator: mark the instructions ``fn`` emits with BEGIN/END comments.

    Examples:
        >>> from jax_pyptx import intrinsic, kernel, ptx, reg
        >>> from jax_pyptx.types import u32
        >>> @intrinsic
        ... def bump(r):
        ...     ptx.inst.add.u32(r, r, 1)
        >>> @kernel
        ... def k():
        ...     r = reg.scalar(u32, 0)
        ...     bump(r)
        ...     ptx.ret()
        >>> [l.strip() for l in k.ptx().splitlines() if "bump" in l]
        ['// BEGIN bump(%r0)', '// END bump']
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        stack = context.tracing.stack
        if not stack:
            return fn(*args, **kwargs)
        tr = stack[-1]
        body = tr.body
        start = len(body)
        body.append(RawDirective("// BEGIN " + _call_text(fn, args, kwargs)))
        try:
            return fn(*args, **kwargs)
        finally:
            if tr.body is body and len(body) > start:
                body.append(RawDirective("// END " + fn.__name__))

    wrapper.__is_ptx_intrinsic__ = True
    return wrapper


__all__ = ["intrinsic"]
