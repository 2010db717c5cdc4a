"""Launch geometry of a specialization: ``dim3`` tuples and the grid, resolved from the shape
variables and template parameters (a ``grid`` may be a callable of them)."""
from __future__ import annotations

import inspect

from ..errors import SpecializationError

__all__ = ["dim3", "resolve_grid", "parse_version"]


def dim3(v, what: str) -> tuple:
    """``v`` (an int or 1 to 3 positive ints) as a 3-tuple padded with ones."""
    if isinstance(v, int):
        v = (v,)
    try:
        t = tuple(int(x) for x in v)
    except TypeError:
        raise SpecializationError(f"{what} must be an int or a tuple of up to 3 ints, got {v!r}")
    if not 1 <= len(t) <= 3 or any(x <= 0 for x in t):
        raise SpecializationError(f"{what} must be 1 to 3 positive ints, got {v!r}")
    return t + (1,) * (3 - len(t))


def resolve_grid(grid, label: str, env: dict, template: dict) -> tuple:
    """The launch grid of kernel ``label``: ``grid`` is None (one block), a dim3, or a
    callable of shape variables and template parameters (by parameter name)."""
    if grid is None:
        return (1, 1, 1)
    if callable(grid):
        avail = {**env, **template}
        try:
            params = list(inspect.signature(grid).parameters.values())
        except (TypeError, ValueError):          # no signature: the documented call order
            try:
                grid = grid(**env)
            except TypeError:
                grid = grid(*env.values())
            return dim3(grid, f"kernel {label!r}: grid")
        if any(p.kind is p.VAR_KEYWORD for p in params):
            args = dict(avail)                      # grid(**shape_env)
        else:
            names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL,)]
            missing = [n for p, n in zip(params, names) if n not in avail and
                       p.default is inspect.Parameter.empty]
            if missing:
                raise SpecializationError(
                    f"kernel {label!r}: grid callable needs {', '.join(missing)}; available: "
                    f"shape variables ({', '.join(env) or 'none'}) and template parameters "
                    f"({', '.join(template) or 'none'})")
            args = {n: avail[n] for n in names if n in avail}
        grid = grid(**args)
    return dim3(grid, f"kernel {label!r}: grid")


def parse_version(v):
    """``version=``: None, ``"8.3"``, ``8.3`` or ``(8, 3)`` -> ``(major, minor)`` or None."""
    if v is None:
        return None
    if isinstance(v, str):
        major, _, minor = v.partition(".")
        return (int(major), int(minor or 0))
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return (int(v[0]), int(v[1]))
    if isinstance(v, float):
        return parse_version(f"{v:.1f}")
    raise SpecializationError(f"version must be like '8.3' or (8, 3), got {v!r}")
