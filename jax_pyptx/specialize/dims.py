"""Launch geometry of a specialization: ``dim3`` tuples and the grid, resolved from the shape
variables and template parameters (a ``grid`` may be a callable of them).

Every dim is an integer (a float is refused, never truncated) within the CUDA launch limits:
grid x up to 2**31 - 1, grid y and z up to 65535; block x and y up to 1024, z up to 64 (the
kernel layer checks the block's 1024 threads in all).
"""
from __future__ import annotations

import inspect
import numbers
import weakref

from ..errors import SpecializationError

__all__ = ["dim3", "resolve_grid", "parse_version", "check_cluster_grid", "GRID_LIMITS",
           "BLOCK_LIMITS"]

GRID_LIMITS = (2**31 - 1, 65535, 65535)
BLOCK_LIMITS = (1024, 1024, 64)
AXES = "xyz"
_LIMITS = {"block": BLOCK_LIMITS}


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def dim3(v, what: str, limits: tuple | None = None) -> tuple:
    """``v`` (an int or 1 to 3 positive ints) as a 3-tuple padded with ones; ``limits``: the
    largest value of each dim (``what == "block"``: the CUDA block limits)."""
    items = (v,) if _is_int(v) else v
    try:
        items = tuple(items)
    except TypeError:
        raise SpecializationError(f"{what} must be an int or a tuple of up to 3 ints, got {v!r}")
    bad = [x for x in items if not _is_int(x)]
    if bad:
        hint = " (use // for integer division)" if any(isinstance(x, float) for x in bad) else ""
        raise SpecializationError(f"{what} must be ints, got {v!r}: {bad[0]!r} is a "
                                  f"{type(bad[0]).__name__}{hint}")
    t = tuple(int(x) for x in items)
    if not 1 <= len(t) <= 3 or any(x <= 0 for x in t):
        raise SpecializationError(f"{what} must be 1 to 3 positive ints, got {v!r}")
    t = t + (1,) * (3 - len(t))
    limits = limits or _LIMITS.get(what)
    if limits:
        for axis, (x, top) in enumerate(zip(t, limits)):
            if x > top:
                raise SpecializationError(
                    f"{what} {AXES[axis]} is {x}; CUDA allows at most {top} (limits: x <= "
                    f"{limits[0]}, y <= {limits[1]}, z <= {limits[2]})")
    return t


def _lambda_source(fn) -> str | None:
    """The source text of lambda ``fn``, found by its body's position (there may be other
    lambdas on the line)."""
    try:
        code = fn.__code__
        pos = [p for p in code.co_positions()           # (RESUME and friends: 0, 0)
               if p[0] is not None and p[2] is not None and (p[2], p[3]) != (0, 0)]
        lines, first = inspect.getsourcelines(fn)
    except (AttributeError, OSError, TypeError):
        return None
    if not pos:
        return None
    (l0, _, c0, _), (_, l1, _, c1) = min(pos, key=lambda p: (p[0], p[2])), \
        max(pos, key=lambda p: (p[1], p[3]))
    try:
        head = lines[l0 - first][:c0]
        body = "".join(lines[l0 - first:l1 - first + 1])
    except IndexError:
        return None
    at = head.rfind("lambda")
    if at < 0:
        return None
    body_end = len(body) - len(lines[l1 - first]) + c1
    return " ".join(body[at:body_end].split())


def _callable_text(fn) -> str:
    """``lambda M: (M // rows, 1, 1)`` / ``grid_fn`` with its closure values and location, for
    error messages."""
    name = getattr(fn, "__name__", repr(fn))
    text = name
    if name == "<lambda>":
        text = _lambda_source(fn) or "lambda"
    extra = []
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is not None:
        for var, cell in zip(code.co_freevars, cells):
            try:
                val = cell.cell_contents
            except ValueError:
                continue
            if isinstance(val, (numbers.Number, str)):
                extra.append(f"{var}={val!r}")
        extra.append(f"{code.co_filename}:{code.co_firstlineno}")
    return f"{text} ({', '.join(extra)})" if extra else text


_PARAMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _params_of(fn):
    """The parameters of grid callable ``fn`` (None: it has no signature), found once per
    callable: a kernel traced for many shapes asks again each time."""
    try:
        return _PARAMS[fn]
    except (KeyError, TypeError):
        pass
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):          # no signature: the documented call order
        params = None
    try:
        _PARAMS[fn] = params
    except TypeError:                        # not weakly referenceable: not memoised
        pass
    return params


def resolve_grid(grid, label: str, env: dict, template: dict) -> tuple:
    """The launch grid of kernel ``label``: ``grid`` is None (one block), a dim3, or a
    callable of shape variables and template parameters (by parameter name)."""
    if grid is None:
        return (1, 1, 1)
    what = f"kernel {label!r}: grid"
    if callable(grid):
        avail = {**env, **template}
        params = _params_of(grid)
        if params is None:
            try:
                got = grid(**env)
            except TypeError:
                got = grid(*env.values())
            args = dict(env)
        else:
            if any(p.kind is p.VAR_KEYWORD for p in params):
                args = dict(avail)                      # grid(**shape_env)
            else:
                names = [p.name for p in params if p.kind is not p.VAR_POSITIONAL]
                missing = [n for p, n in zip(params, names) if n not in avail and
                           p.default is inspect.Parameter.empty]
                if missing:
                    raise SpecializationError(
                        f"kernel {label!r}: grid callable needs {', '.join(missing)}; available: "
                        f"shape variables ({', '.join(env) or 'none'}) and template parameters "
                        f"({', '.join(template) or 'none'})")
                args = {n: avail[n] for n in names if n in avail}
            got = grid(**args)
        try:                                # the usual case: no message to build
            return dim3(got, "grid", GRID_LIMITS)
        except SpecializationError:
            pass                            # said again below, with the callable's text
        given = ", ".join(f"{n}={v!r}" for n, v in args.items()) or "no arguments"
        what = f"kernel {label!r}: grid {_callable_text(grid)} for {given}"
        try:
            items = (got,) if _is_int(got) else tuple(got)
        except TypeError:
            items = None
        if items is not None and all(_is_int(x) for x in items) and \
                any(x <= 0 for x in items) and len(items) <= 3:
            axis = next(i for i, x in enumerate(items) if x <= 0)
            raise SpecializationError(
                f"{what} gives {tuple(items)}: grid {AXES[axis]} is {items[axis]}, but every "
                f"grid dim must be at least 1 ({given} is too small for this grid)")
        grid = got
    return dim3(grid, what, GRID_LIMITS)


def check_cluster_grid(label: str, grid: tuple, cluster: tuple, loc=None) -> None:
    """A grid that is not a whole number of clusters along every axis cannot be launched:
    a ``SpecializationError`` naming the kernel (and its ``def`` line, ``loc``), both shapes,
    the axes that do not divide and the nearest grids that do.

    Examples:
        >>> from jax_pyptx.specialize.dims import check_cluster_grid
        >>> check_cluster_grid("k", (4, 2, 1), (2, 1, 1)) is None
        True
    """
    bad = [i for i, (g, c) in enumerate(zip(grid, cluster)) if g % c]
    if not bad:
        return
    from ..errors import SpecializationError

    axes = ", ".join(f"{'xyz'[i]}: {grid[i]} is not a multiple of {cluster[i]}" for i in bad)
    fix = tuple(-(-g // c) * c for g, c in zip(grid, cluster))
    raise SpecializationError(
        f"kernel {label!r}: grid {tuple(grid)} is not a whole number of clusters "
        f"{tuple(cluster)} ({axes}); launch a grid that is a multiple of the cluster along "
        f"every axis, e.g. {fix}", loc=loc)


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
