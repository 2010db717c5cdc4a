"""Binding a call: where arrays meet a kernel's specs (``Kernel.bind``).

Arrays are anything with ``.shape`` and ``.dtype`` (NumPy, JAX arrays and tracers, the torch
runtime's views); runtime scalars are numbers or 0-d arrays. Binding checks rank, dtype and
fixed dims against the ``Tile`` specs, binds the shape variables (errors name the parameter,
its spec and what was passed) and fills in the template parameters. Nothing here imports JAX.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field

from ..errors import SpecializationError
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


def unknown_argument(k, kw: dict, allowed=()) -> None:
    """Raise for the first keyword that is neither a template parameter, a shape variable
    nor in ``allowed``."""
    tp, sv = k.template_params, k.shape_vars
    unknown = [n for n in kw if n not in tp and n not in sv and n not in allowed]
    if unknown:
        raise SpecializationError(
            f"kernel {k.name!r}: unknown argument {unknown[0]!r}; valid: template "
            f"parameters ({', '.join(tp) or 'none'}) and shape variables "
            f"({', '.join(sv) or 'none'})")


def shapes_env(k, arrays) -> dict:
    """Shape variables bound by ``arrays`` (inputs, optionally followed by outputs)."""
    specs = k.in_specs + k.out_specs
    names = k.param_names
    n_in = len(k.in_specs)
    if not n_in <= len(arrays) <= len(specs):
        raise SpecializationError(
            f"kernel {k.name!r} takes {n_in} inputs ({', '.join(names[:n_in])}); got "
            f"{len(arrays)}")
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
        if spec.dtype.np_dtype is not None and dt is not None and \
                str(dt) != str(spec.dtype.np_dtype):
            raise SpecializationError(
                f"kernel {k.name!r}: parameter {pname} expects dtype {spec.dtype.name} "
                f"({spec}), got {dt}")
        for axis, (d, n) in enumerate(zip(spec.dims, shape)):
            if isinstance(d, int):
                if d != n:
                    raise SpecializationError(
                        f"kernel {k.name!r}: parameter {pname} dim {axis} must be {d} "
                        f"({spec}), got shape {shape}")
            elif d in env and env[d] != n:
                raise SpecializationError(
                    f"kernel {k.name!r}: shape variable {d} bound to {env[d]} by "
                    f"{where[d]} but {n} by {pname} (dim {axis})")
            else:
                env.setdefault(d, n)
                where.setdefault(d, f"{pname} (dim {axis})")
    return env


def bind(k, arrays, kw: dict) -> Binding:
    """``Kernel.bind``: see the module docstring. ``kw``: template parameters, shape
    variables and raw parameter values by name."""
    raw_names = {p.name for p in k.raw_params}
    raw = {n: v for n, v in kw.items() if n in raw_names}
    kw = {n: v for n, v in kw.items() if n not in raw_names}
    unknown_argument(k, kw)
    env = shapes_env(k, arrays)
    for s in k.shape_vars:
        if s in kw:
            v = kw[s]
            if s in env and env[s] != v:
                raise SpecializationError(f"kernel {k.name!r}: shape variable {s}={v} "
                                          f"conflicts with {env[s]} from the arrays")
            env[s] = v
    env = {s: env[s] for s in k.shape_vars if s in env}
    missing = tuple(s for s in k.shape_vars if s not in env)
    return Binding(k, template_values(k, kw), env, missing, raw)
