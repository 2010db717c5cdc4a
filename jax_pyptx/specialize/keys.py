"""Exact cache keys: values that Python calls equal but that trace differently stay apart.

``1 == 1.0 == True`` and ``0.0 == -0.0`` share one hash, so a dict keyed by the values
themselves would hand the trace made for ``alpha=1`` to a call with ``alpha=True``, or the
one made for ``+0.0`` to ``-0.0``. :func:`exact_key` keys a value by its type and exact
value: floats (Python and NumPy) by their bit pattern, NumPy scalars and arrays by dtype and
bytes, containers item by item, anything else hashable by itself, anything unhashable by its
type and ``repr``.

Examples:
    >>> from jax_pyptx.specialize.keys import exact_key
    >>> exact_key(1) == exact_key(True), exact_key(0.0) == exact_key(-0.0)
    (False, False)
    >>> exact_key((1, 2.5)) == exact_key((1, 2.5))
    True
"""
from __future__ import annotations

import struct

__all__ = ["exact_key", "exact_items"]

_PLAIN = (bool, int, str, bytes, type(None))


def exact_key(v):
    """A hashable key of ``v`` that is equal for two values only when they have the same
    type and the same exact value (floats by bit pattern, so ``-0.0`` and ``+0.0`` differ,
    and NaNs with one payload are equal)."""
    t = type(v)
    if t in _PLAIN:
        return (t, v)
    if t is float:
        return (t, struct.pack("<d", v))
    if t is complex:
        return (t, struct.pack("<dd", v.real, v.imag))
    if t in (tuple, list):
        return (t, tuple(exact_key(x) for x in v))
    if t in (set, frozenset):
        return (t, frozenset(exact_key(x) for x in v))
    if t is dict:
        return (t, frozenset((exact_key(a), exact_key(b)) for a, b in v.items()))
    dtype = getattr(v, "dtype", None)
    if dtype is not None and hasattr(v, "tobytes") and hasattr(v, "shape"):
        try:                        # NumPy scalars and arrays (a JAX tracer has no bytes)
            return (t, str(dtype), tuple(v.shape), v.tobytes())
        except Exception:
            pass
    try:
        hash(v)
    except TypeError:
        return (t, "<repr>", repr(v))
    return (t, v)


def exact_items(d: dict) -> tuple:
    """``d``'s items as ``((name, exact_key(value)), ...)`` sorted by name."""
    return tuple(sorted((n, exact_key(v)) for n, v in d.items()))
