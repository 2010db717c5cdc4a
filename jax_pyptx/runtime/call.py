"""Calling kernels from JAX: ``kernel(*arrays)`` and the Pallas-style ``ptx_call``.

    out = k(x, w)                                   # eager, or inside jax.jit / vmap / shard_map
    f = ptx_call(k, out_shape=jax.ShapeDtypeStruct((4, 64), jnp.float32),
                 input_output_aliases={0: 0}, interpret=True, name="rms")
    out = f(x, w)

``ptx_call`` follows ``pl.pallas_call``: it takes the kernel and the call's options and returns
a function of the inputs; ``out_shape`` (a ShapeDtypeStruct or a tuple/list of them) gives the
result structure and binds shape variables that appear only in outputs; ``grid`` overrides the
launch grid (a tuple or a callable of the shape variables); ``input_output_aliases`` maps
input positions to output indices (the output is written in place of the input);
``interpret=True`` runs the CPU interpreter on any platform; ``debug=True`` prints the launch
(and the PTX when lowering for CUDA); ``name`` names the call in jaxprs and errors.
Runtime scalars (a kernel parameter whose spec is a PTX type) are operands: changing their
value never re-traces the kernel.

Runtime options can also be attached to the kernel once with :func:`configure`
(``independent`` shape variables for sharding, ``covers`` for grid-coverage checks,
``backward`` for autodiff); ``kernel(*arrays)`` then uses them.
"""
from __future__ import annotations

import numpy as np

import jax
import jax.numpy as jnp

from ..errors import SpecializationError
from ..types import PtxType

__all__ = ["call_kernel", "ptx_call", "configure", "runtime_options", "export_disabled_checks"]

_OPTIONS = ("independent", "covers", "backward", "save_outputs", "interpret", "grid")
_AXES = "xyz"


def configure(kernel, **options):
    """Attach runtime options to ``kernel`` (returns it): ``independent=("M",)``,
    ``covers={"M": (axis, elements_per_block)}``, ``backward=<Kernel or function>``,
    ``save_outputs=bool`` (the backward also receives the forward's outputs), ``interpret``,
    ``grid``."""
    unknown = [k for k in options if k not in _OPTIONS]
    if unknown:
        raise SpecializationError(f"configure(): unknown option {unknown[0]!r}; options: "
                                  f"{', '.join(_OPTIONS)}")
    opts = dict(getattr(kernel, "_jax_runtime", {}))
    opts.update(options)
    kernel._jax_runtime = opts
    if "independent" in options:
        _check_independent(kernel, options["independent"])
    return kernel


def runtime_options(kernel) -> dict:
    return dict(getattr(kernel, "_jax_runtime", {}))


def export_disabled_checks() -> list:
    """``disabled_checks`` for ``jax.export`` (the target is also allow-listed on import)."""
    from .lowering_cuda import EXPORT_DISABLED_CHECKS

    return list(EXPORT_DISABLED_CHECKS)


def _check_independent(kernel, independent):
    for s in independent or ():
        if s not in kernel.shape_vars:
            raise SpecializationError(
                f"kernel {kernel.name!r}: independent dim {s!r} is not a shape variable; "
                f"shape variables: {', '.join(kernel.shape_vars) or 'none'}")


def _norm_covers(kernel, covers) -> tuple:
    if not covers:
        return ()
    out = []
    for sym, v in dict(covers).items():
        if sym not in kernel.shape_vars:
            raise SpecializationError(f"kernel {kernel.name!r}: covers names {sym!r}, not a "
                                      f"shape variable ({', '.join(kernel.shape_vars)})")
        axis, per = v
        axis = _AXES.index(axis) if isinstance(axis, str) else int(axis)
        out.append((sym, axis, int(per)))
    return tuple(out)


def _is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def _static_scalar(v):
    if _is_tracer(v):
        return None
    try:
        a = np.asarray(v)
    except Exception:
        return None
    if a.shape != ():
        return None
    return a.item()


# ----------------------------------------------------------------------------- the call
def call_kernel(kernel, *arrays, out_shape=None, grid=None, interpret=None,
                input_output_aliases=None, name=None, debug=False, independent=None,
                covers=None, backward=None, save_outputs=None, sanitize=True, **kw):
    """Call ``kernel`` on JAX arrays; returns its outputs (one array or a tuple).

    ``kw``: template parameters and shape variables by name. Other keywords: see
    :func:`ptx_call`. Options left out come from :func:`configure`.
    """
    opts = runtime_options(kernel)
    independent = opts.get("independent", ()) if independent is None else independent
    covers = opts.get("covers") if covers is None else covers
    backward = opts.get("backward") if backward is None else backward
    save_outputs = opts.get("save_outputs", False) if save_outputs is None else save_outputs
    interpret = opts.get("interpret") if interpret is None else interpret
    grid = opts.get("grid") if grid is None else grid
    call_kw = dict(out_shape=out_shape, grid=grid, interpret=interpret,
                   input_output_aliases=input_output_aliases, name=name, debug=debug,
                   independent=independent, covers=covers, sanitize=sanitize, **kw)
    if backward is not None:
        from .autodiff import _vjp_pair, _as_callable

        fwd = lambda *a: _call(kernel, a, **call_kw)  # noqa: E731
        bwd = _as_callable(backward, interpret=interpret, debug=debug, sanitize=sanitize)
        return _vjp_pair(fwd, bwd, bool(save_outputs), name or kernel.name)(*arrays)
    return _call(kernel, arrays, **call_kw)


def _call(kernel, arrays, *, out_shape, grid, interpret, input_output_aliases, name, debug,
          independent, covers, sanitize, **kw):
    from .primitive import CallSpec, bind

    label = name or kernel.name
    n_in = len(kernel.in_specs)
    if len(arrays) != n_in:
        raise SpecializationError(
            f"kernel {label!r} takes {n_in} inputs ({', '.join(kernel._positional[:n_in])}); "
            f"got {len(arrays)}")
    template = {k: v for k, v in kw.items() if k in kernel.template_params}
    explicit = {k: v for k, v in kw.items() if k in kernel.shape_vars}
    unknown = [k for k in kw if k not in template and k not in explicit]
    if unknown:
        raise SpecializationError(
            f"kernel {label!r}: unknown argument {unknown[0]!r}; valid: template parameters "
            f"({', '.join(kernel.template_params) or 'none'}), shape variables "
            f"({', '.join(kernel.shape_vars) or 'none'}) and the call options out_shape, grid, "
            f"interpret, input_output_aliases, name, debug, independent, covers, backward")
    _check_independent(kernel, independent)
    # operands: tensors as they are (jnp arrays or tracers), scalars as 0-d arrays. A scalar
    # known while tracing (a constant of a jit-ed function) is also kept as a static value, so
    # CUDA passes it by value; eager calls keep none, so one executable serves every value.
    eager = not any(_is_tracer(a) for a in arrays)
    operands, statics = [], []
    for i, (a, s) in enumerate(zip(arrays, kernel.in_specs)):
        if isinstance(s, PtxType):
            if np.ndim(a) != 0:
                raise SpecializationError(
                    f"kernel {label!r}: parameter {kernel._positional[i]} is a runtime scalar "
                    f"({s.name}); got an array of shape {tuple(np.shape(a))}")
            statics.append(None if eager else _static_scalar(a))
            operands.append(jnp.asarray(a, dtype=s.np_dtype))
        else:
            if not hasattr(a, "shape") or not hasattr(a, "dtype"):
                a = jnp.asarray(a)
            operands.append(a)
    # shape variables from the inputs (rank / dtype / conflict errors name the parameter)
    outs_sds = _out_shape_list(out_shape)
    env = kernel.bind_shapes(*arrays, *(outs_sds or ()))
    for s, v in explicit.items():
        if s in env and env[s] != v:
            raise SpecializationError(f"kernel {label!r}: shape variable {s}={v} conflicts "
                                      f"with {env[s]} from the arrays")
        env[s] = v
    missing = [s for s in kernel.shape_vars if s not in env]
    if missing:
        raise SpecializationError(
            f"kernel {label!r}: shape variable {', '.join(missing)} appears only in outputs; "
            f"pass out_shape=... or {missing[0]}=...")
    env = {s: int(env[s]) for s in kernel.shape_vars}
    spec = CallSpec(
        kernel=kernel, template=tuple(sorted(template.items())), env=tuple(env.items()),
        grid=_norm_grid(grid), aliases=_norm_aliases(input_output_aliases),
        static_scalars=tuple(statics), interpret=interpret, name=name, debug=bool(debug),
        independent=tuple(independent or ()), covers=_norm_covers(kernel, covers),
        sanitize=bool(sanitize))
    traced = spec.traced()             # trace errors surface here, at the call site
    check_grid_covers(spec, traced)
    check_aliases(spec)
    if outs_sds is not None:
        got = spec.out_avals()
        for j, (sds, (shape, dtype)) in enumerate(zip(outs_sds, got)):
            if tuple(sds.shape) != tuple(shape) or np.dtype(sds.dtype) != np.dtype(dtype):
                raise SpecializationError(
                    f"kernel {label!r}: out_shape[{j}] is {np.dtype(sds.dtype)}"
                    f"{list(sds.shape)} but output {kernel._positional[n_in + j]} "
                    f"({kernel.out_specs[j]!r}) is {np.dtype(dtype)}{list(shape)}")
    if debug:
        print(f"[jax_pyptx] call {label}: env={env} grid={spec.launch_grid(traced)} "
              f"block={traced.block} sha256={traced.sha256[:16]}")
    outs = bind(spec, *operands)
    if out_shape is not None and not isinstance(out_shape, (tuple, list)):
        return outs[0]
    if isinstance(out_shape, list):
        return list(outs)
    if out_shape is None and len(outs) == 1:
        return outs[0]
    return tuple(outs)


def _out_shape_list(out_shape):
    if out_shape is None:
        return None
    if isinstance(out_shape, (tuple, list)):
        return list(out_shape)
    return [out_shape]


def _norm_grid(grid):
    if grid is None or callable(grid):
        return grid
    from ..kernel import _dim3

    return _dim3(grid, "ptx_call grid")


def _norm_aliases(aliases) -> tuple:
    if not aliases:
        return ()
    return tuple(sorted((int(i), int(o)) for i, o in dict(aliases).items()))


def check_grid_covers(spec, traced=None) -> None:
    """``covers`` declarations: each block along a grid axis handles a fixed number of
    elements of a shape variable; the shape must be a multiple and the grid must reach it."""
    if not spec.covers:
        return
    grid = spec.item_grid(traced)
    env = spec.env_dict
    for sym, axis, per in spec.covers:
        n = env[sym]
        g = grid[axis]
        if n % per:
            raise SpecializationError(
                f"kernel {spec.label!r}: the grid {grid} cannot cover {sym}={n}: each block "
                f"along grid {_AXES[axis]} handles {per} of {sym}, so {sym} must be a multiple "
                f"of {per}")
        if g * per < n:
            raise SpecializationError(
                f"kernel {spec.label!r}: the grid {grid} cannot cover {sym}={n}: {g} blocks "
                f"along grid {_AXES[axis]} handle {per} each, {g * per} in all")


def check_aliases(spec) -> None:
    k = spec.kernel
    names = k._positional
    ins = spec.in_avals()
    outs = spec.out_avals()
    seen = set()
    for i, o in spec.aliases:
        if not 0 <= i < spec.n_in:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: there is no input "
                f"{i} (the kernel has {spec.n_in})")
        if not 0 <= o < spec.n_out:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: there is no output "
                f"{o} (the kernel has {spec.n_out})")
        if spec.is_scalar(i):
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: input {i} "
                f"({names[i]}) is a runtime scalar; only tensors alias outputs")
        if o in seen:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases: output {o} is aliased twice")
        seen.add(o)
        (ishape, idt), (oshape, odt) = ins[i], outs[o]
        if tuple(ishape) != tuple(oshape) or np.dtype(idt) != np.dtype(odt) or \
                k.in_specs[i].layout is not k.out_specs[o].layout:
            raise SpecializationError(
                f"kernel {spec.label!r}: input_output_aliases {{{i}: {o}}}: input {i} "
                f"({names[i]}: {_fmt(idt, ishape)}) and output {o} "
                f"({names[spec.n_in + o]}: {_fmt(odt, oshape)}) must have the same shape, "
                f"dtype and layout")


def _fmt(dtype, shape) -> str:
    from .primitive import _dtype_name

    return f"{_dtype_name(np.dtype(dtype))}{list(shape)}"


def ptx_call(kernel, out_shape=None, *, grid=None, interpret=None, input_output_aliases=None,
             name=None, debug=False, independent=None, covers=None, backward=None,
             save_outputs=None, **kw):
    """Pallas-style: ``ptx_call(kernel, out_shape=..., grid=..., ...)(*inputs)``.

    See the module docstring. ``kw``: template parameters and shape variables.
    """
    from ..kernel import Kernel

    if not isinstance(kernel, Kernel):
        raise SpecializationError(f"ptx_call: expected a @kernel, got {kernel!r}")
    if independent is not None:
        _check_independent(kernel, independent)

    def call(*inputs):
        return call_kernel(kernel, *inputs, out_shape=out_shape, grid=grid,
                           interpret=interpret, input_output_aliases=input_output_aliases,
                           name=name, debug=debug, independent=independent, covers=covers,
                           backward=backward, save_outputs=save_outputs, **kw)

    call.__name__ = name or kernel.name
    call.__doc__ = f"ptx_call of kernel {kernel.name!r}"
    return call
