"""Binding a call: where arrays meet a kernel's specs (``Kernel.bind``).

Arrays are anything with ``.shape`` and ``.dtype`` (NumPy, JAX arrays and tracers, the torch
runtime's views); runtime scalars are numbers or 0-d arrays. Binding checks rank, dtype and
fixed dims against the ``Tile`` specs, binds the shape variables (errors name the parameter,
its spec and what was passed) and fills in the template parameters. Nothing here imports JAX.
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass, field

from ..errors import NotSupportedError, SpecializationError
from ..types import PtxType

__all__ = ["Binding", "bind"]


@dataclass(frozen=True)
class Binding:
    """One call's specialization: template parameters, shape variables, raw param values."""

    kernel: object
    template: dict
    env: dict                       # shape variables bound so far (arrays, then keywords)
    missing: tuple = ()             # shape variables neither the arrays nor keywords bound
    raw: dict = field(default_factory=dict)   # raw_params values given by keyword

    def raw_values(self, host: bool = False) -> dict:
        """Every raw parameter's value for a launch (:func:`raw_values`)."""
        return raw_values(self.kernel, self.raw, self.env, self.template, host=host)

    @property
    def template_key(self) -> tuple:
        return tuple(sorted(self.template.items()))

    @property
    def env_key(self) -> tuple:
        """(symbol, value) in the kernel's shape-variable order."""
        return tuple((s, int(self.env[s])) for s in self.kernel.shape_vars if s in self.env)

    def trace(self, abi=None):
        """The traced specialization (the generic error when a shape variable is missing)."""
        return self.kernel.trace_for(abi, **self.template, **self.env)


def _is_traced(v) -> bool:
    """A JAX tracer or array (duck-typed: nothing here imports JAX)."""
    t = type(v)
    return t.__module__.split(".", 1)[0] in ("jax", "jaxlib") and hasattr(v, "aval")


def _static_value(k, name: str, v):
    """A template parameter's value: static (part of the trace cache key), so known now; a JAX
    tracer gets the way to pass a runtime value."""
    if _is_traced(v):
        scalars = [p for p, s in zip(k.param_names, k.in_specs) if isinstance(s, PtxType)]
        how = (f"pass it as the kernel's runtime scalar{'s' if len(scalars) > 1 else ''} "
               f"{', '.join(scalars)}" if scalars else
               "declare it as a runtime scalar: a positional parameter whose in_specs entry is "
               "a PTX type (in_specs=(..., f32)), passed like an array")
        traced = "Tracer" in type(v).__name__
        aval = f"{v.dtype}{list(v.shape)}"
        got = (f"a JAX tracer ({aval}): a value traced by jit / vmap / grad" if traced else
               f"a JAX array ({aval})")
        fix = ("pass a Python value (a static argument: jax.jit(..., static_argnames=...))"
               if traced else "pass a Python number (float(x), int(x))")
        raise SpecializationError(
            f"kernel {k.name!r}: template parameter {name!r} is static (baked into the trace) "
            f"but got {got}; {fix}, or for a value known only at run time, {how}")
    return v                         # unhashable values (a list...) are keyed by their repr


def shape_value(k, name: str, v, *, zero_ok: bool = False) -> int:
    """Shape variable ``name``'s value as an ``int``: a positive Python or NumPy integer
    (``7``, ``np.int64(7)``, anything with ``__index__``), or 0 where ``zero_ok`` (a call: an
    empty batch gives empty outputs, ``specialize/empty.py``; a trace needs positive sizes); a
    bool, a float, a string or a traced value is refused, naming the variable, the value and
    its type."""
    least = "a non-negative" if zero_ok else "a positive"
    tracer = _is_traced(v) and "Tracer" in type(v).__name__
    if not isinstance(v, (bool, float, str, bytes)) and type(v).__name__ != "bool_" \
            and not tracer:
        try:
            n = operator.index(v)
        except TypeError:
            n = None
        if n is not None and (n > 0 or (zero_ok and n == 0)):
            return n
        if n is not None:
            raise SpecializationError(f"kernel {k.name!r}: shape variable {name} must be "
                                      f"{least} integer, got {v!r}")
    what = (f"a JAX value ({v.dtype}{list(v.shape)}): shape variables are static; pass a "
            f"Python int" if tracer else f"{v!r} ({type(v).__name__})")
    raise SpecializationError(f"kernel {k.name!r}: shape variable {name} must be {least} "
                              f"integer (an int or a NumPy integer), got {what}")


def template_values(k, kw: dict) -> dict:
    """Template parameters from ``kw``, defaults filled in (errors name the missing one)."""
    template = {}
    for name, default in k.template_params.items():
        if name in kw:
            template[name] = _static_value(k, name, kw[name])
        elif default is inspect.Parameter.empty:
            raise SpecializationError(f"kernel {k.name!r}: template parameter {name!r} "
                                      f"has no default; pass {name}=...")
        else:
            template[name] = default
    return template


def did_you_mean(name: str, candidates) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``candidates`` to a misspelled ``name``,
    or ``""``.

    Examples:
        >>> from jax_pyptx.specialize.binding import did_you_mean
        >>> did_you_mean("sanitise", ["sanitize", "timeout"])
        " (did you mean 'sanitize'?)"
    """
    import difflib

    best = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=1, cutoff=0.6)
    return f" (did you mean {best[0]!r}?)" if best else ""


def unknown_argument(k, kw: dict, allowed=(), options=(), what: str = "the options",
                     label: str | None = None) -> None:
    """Raise for the first keyword that is neither a template parameter, a shape variable,
    in ``allowed`` nor in ``options`` (listed as ``what``: a call's options), naming what is
    valid and the closest valid name (``label``: the call's name, default the kernel's)."""
    tp, sv = k.template_params, k.shape_vars
    unknown = [n for n in kw if n not in tp and n not in sv and n not in allowed and
               n not in options]
    if unknown:
        n = unknown[0]
        raw = [p.name for p in k.raw_params]
        hint = did_you_mean(n, [*tp, *sv, *raw, *allowed, *options])
        extra = f"{what} {', '.join(options)}" if options else ""
        raise SpecializationError(f"kernel {label or k.name!r}: unknown argument {n!r}{hint}; "
                                  f"valid: {valid_names(k, extra)}")


def check_inputs(k, n: int, label: str | None = None, outputs_ok: bool = False) -> None:
    """A call passed ``n`` arrays: it must be ``k``'s number of inputs (``outputs_ok``:
    optionally followed by its outputs); the error names the inputs. ``label``: the call's
    name (default: the kernel's)."""
    n_in = len(k.in_specs)
    if n == n_in or (outputs_ok and n_in <= n <= n_in + len(k.out_specs)):
        return
    raise SpecializationError(
        f"kernel {label or k.name!r} takes {n_in} inputs ({', '.join(k.param_names[:n_in])}); "
        f"got {n}")


def valid_names(k, extra: str = "") -> str:
    """``template parameters (..) and shape variables (..)`` (and raw parameters when the
    kernel has some; ``extra`` is appended as the last item)."""
    items = [f"template parameters ({', '.join(k.template_params) or 'none'})",
             f"shape variables ({', '.join(k.shape_vars) or 'none'})"]
    if k.raw_params:
        items.append(f"raw parameters ({', '.join(p.name for p in k.raw_params)})")
    if extra:
        items.append(extra)
    return ", ".join(items[:-1]) + " and " + items[-1]


def shapes_env(k, arrays) -> dict:
    """Shape variables bound by ``arrays`` (inputs, optionally followed by outputs)."""
    specs = k.in_specs + k.out_specs
    names = k.param_names
    check_inputs(k, len(arrays), outputs_ok=True)
    env, where = {}, {}
    for i, (spec, a) in enumerate(zip(specs, arrays)):
        pname = names[i]
        if isinstance(a, (list, tuple)):
            want = f"a runtime scalar ({spec.name})" if isinstance(spec, PtxType) else \
                f"an array ({spec})"
            raise SpecializationError(
                f"kernel {k.name!r}: parameter {pname} expects {want}; got a Python "
                f"{type(a).__name__} (convert it with np.asarray(...) or jnp.asarray(...))")
        shape = tuple(getattr(a, "shape", ()))
        if isinstance(spec, PtxType):
            if shape != ():
                raise SpecializationError(
                    f"kernel {k.name!r}: parameter {pname} is a runtime scalar ({spec.name}); "
                    f"got an array of shape {shape}")
            continue
        if len(shape) != len(spec.dims):
            raise SpecializationError(
                f"kernel {k.name!r}: parameter {pname} expects rank {len(spec.dims)} "
                f"({spec}), got an array of shape {shape}")
        dt = getattr(a, "dtype", None)
        want = spec.dtype.np_dtype
        if want is not None and dt is not None and dt is not want and str(dt) != str(want):
            raise SpecializationError(
                f"kernel {k.name!r}: parameter {pname} expects dtype {spec.dtype.name} "
                f"({spec}), got {dt}")
        for axis, (d, n) in enumerate(zip(spec.dims, shape)):
            if isinstance(d, int):
                if d != n:
                    raise SpecializationError(
                        f"kernel {k.name!r}: parameter {pname} dim {axis} must be {d} "
                        f"({spec}), got shape {shape}")
            elif d in env:
                if env[d] != n:
                    first, at = where[d]
                    raise SpecializationError(
                        f"kernel {k.name!r}: shape variable {d} bound to {env[d]} by "
                        f"{first} (dim {at}) but {n} by {pname} (dim {axis})")
            else:
                env[d] = n
                where[d] = (pname, axis)
    return env


def split_keywords(k, kw: dict):
    """``(template and shape-variable keywords, raw parameter values, unknown names)``: a
    name is a shape variable, else a template parameter, else a raw parameter."""
    tp, sv = k.template_params, k.shape_vars
    raw_names = {p.name for p in k.raw_params}
    spec, raw, unknown = {}, {}, []
    for n, v in kw.items():
        if n in sv or n in tp:
            spec[n] = v
        elif n in raw_names:
            raw[n] = v
        else:
            unknown.append(n)
    return spec, raw, unknown


def raw_values(k, given: dict, env: dict, template: dict, host: bool = False) -> dict:
    """The value of each of ``k``'s raw parameters for a launch, by name: given by keyword,
    else the shape variable of that name, else a template parameter of that name (not None).
    Values are NumPy scalars of the parameter's type (checked against its range). A raw
    parameter that is an array or a typed pointer cannot be given a value for a kernel call
    (``NotSupportedError``); on the interpreter (``host``) a NumPy array given by keyword
    stands for the memory a pointer points at, as in ``interpret.launch``. One with no value
    is a ``SpecializationError``."""
    out = {}
    for p in k.raw_params:
        if host and p.name in given and (p.array is not None or p.ptr_space or
                                         getattr(given[p.name], "ndim", 0)):
            out[p.name] = given[p.name]        # the interpreter's buffer for a pointer
            continue
        if p.array is not None or p.ptr_space:
            what = (f".{p.type.name}[{p.array}] array" if p.array is not None
                    else f".ptr {p.ptr_space} pointer")
            if host:
                raise SpecializationError(
                    f"kernel {k.name!r}: raw parameter {p.name!r} (a {what}) has no value; "
                    f"pass it by keyword ({p.name}=...: bytes for an array, a NumPy array "
                    f"for the memory a pointer points at)")
            raise NotSupportedError(
                f"kernel {k.name!r}: raw parameter {p.name!r} is a {what}; a kernel call "
                f"passes scalar raw parameters only (launch it by hand with "
                f"jax_pyptx.interpret.launch, or make it a Tile / runtime scalar parameter)")
        if p.name in given:
            v, where = given[p.name], "given"
        elif p.name in env:
            v, where = env[p.name], "the shape variable"
        elif template.get(p.name) is not None:
            v, where = template[p.name], "the template parameter"
        else:
            raise SpecializationError(
                f"kernel {k.name!r}: raw parameter {p.name!r} ({p.type.name}) has no value; "
                f"pass it by keyword ({p.name}=...), or name it like a shape variable or a "
                f"template parameter")
        out[p.name] = scalar_value(k, p.name, p.type, v, where)
    return out


def scalar_value(k, name: str, t, v, where: str = "given"):
    """``v`` as a NumPy scalar holding PTX type ``t`` for raw parameter ``name``: the rules
    of ``jax_pyptx.scalars`` (an integer type takes an exact integer in range, a ``.bN``
    either signedness; a float type any real number within its range; ``pred`` a bool or
    0/1; never a string)."""
    from ..scalars import scalar_value as _checked

    return _checked(t, v, f"kernel {k.name!r}: raw parameter {name!r}")


def bind(k, arrays, kw: dict) -> Binding:
    """``Kernel.bind``: see the module docstring. ``kw``: template parameters, shape
    variables and raw parameter values by name (a name is a shape variable, else a template
    parameter, else a raw parameter)."""
    kw, raw, unknown = split_keywords(k, kw)
    if unknown:
        unknown_argument(k, {unknown[0]: None})
    env = shapes_env(k, arrays)
    for s in k.shape_vars:
        if s in kw:
            v = shape_value(k, s, kw[s], zero_ok=True)
            if s in env and env[s] != v:
                raise SpecializationError(f"kernel {k.name!r}: shape variable {s}={v} "
                                          f"conflicts with {env[s]} from the arrays")
            env[s] = v
    env = {s: env[s] for s in k.shape_vars if s in env}
    missing = tuple(s for s in k.shape_vars if s not in env)
    return Binding(k, template_values(k, kw), env, missing, raw)
