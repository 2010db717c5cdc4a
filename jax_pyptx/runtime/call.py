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
(and the PTX when lowering for CUDA); ``name`` names the call in jaxprs and errors;
``max_steps`` / ``timeout`` bound an interpreted call (instructions per batch of CTAs, seconds);
``timeline="run.json"`` makes an interpreted call write its Chrome / Perfetto trace there (each
time it runs: eagerly, or each execution of a jit-ed function on the CPU;
``jax_pyptx.interpret.launch``); ``partial_outputs`` (output names or indices) names outputs the
kernel writes only in part, whose unwritten elements an interpreted call does not report
(``UnwrittenOutputError``; ``Tile(..., partial=True)`` says it in the spec).
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
from ..interpret.severity import sanitize_mode
from ..interpret.timeline import check_path
from ..kernel import Kernel
from ..specialize.binding import did_you_mean, split_keywords, valid_names
from ..specialize.empty import empty_outputs
from ..scalars import check_dtype, scalar_value
from ..types import PtxType
from .ad import vjp_pair
from .callspec import CallSpec, check_aliases, check_covers_shapes, check_grid_covers
from .options import (check_independent, configure, norm_aliases, norm_covers,  # noqa: F401
                      norm_grid, runtime_options)
from .primitive import bind

__all__ = ["call_kernel", "ptx_call", "configure", "runtime_options", "export_disabled_checks",
           "as_callable"]

_CALL_OPTIONS = ("out_shape", "grid", "interpret", "input_output_aliases", "name", "debug",
                 "independent", "covers", "backward", "save_outputs", "sanitize", "max_steps",
                 "timeout", "timeline", "partial_outputs")


def export_disabled_checks() -> list:
    """``disabled_checks`` for ``jax.export`` (the target is also allow-listed on import)."""
    from .lowering_cuda import EXPORT_DISABLED_CHECKS

    return list(EXPORT_DISABLED_CHECKS)


def as_callable(f, **call_kw):
    """A Kernel as a function of JAX arrays (``call_kw`` passed to each call); anything else
    as it is."""
    if isinstance(f, Kernel):
        return lambda *a: call_kernel(f, *a, **call_kw)
    return f


def _is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


# ----------------------------------------------------------------------------- the call
def call_kernel(kernel, *arrays, out_shape=None, grid=None, interpret=None,
                input_output_aliases=None, name=None, debug=False, independent=None,
                covers=None, backward=None, save_outputs=None, sanitize=True, max_steps=None,
                timeout=None, timeline=None, partial_outputs=(), **kw):
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
    max_steps = opts.get("max_steps") if max_steps is None else max_steps
    timeout = opts.get("timeout") if timeout is None else timeout
    timeline = opts.get("timeline") if timeline is None else timeline
    call_kw = dict(out_shape=out_shape, grid=grid, interpret=interpret,
                   input_output_aliases=input_output_aliases, name=name, debug=debug,
                   independent=independent, covers=covers, sanitize=sanitize,
                   max_steps=max_steps, timeout=timeout, timeline=timeline,
                   partial_outputs=partial_outputs, **kw)
    if backward is not None:
        fwd = lambda *a: _call(kernel, a, **call_kw)  # noqa: E731
        bwd = as_callable(backward, interpret=interpret, debug=debug, sanitize=sanitize)
        return vjp_pair(fwd, bwd, bool(save_outputs), name or kernel.name)(*arrays)
    return _call(kernel, arrays, **call_kw)


def _call(kernel, arrays, *, out_shape, grid, interpret, input_output_aliases, name, debug,
          independent, covers, sanitize, max_steps=None, timeout=None, timeline=None,
          partial_outputs=(), **kw):
    label = name or kernel.name
    names = kernel.param_names
    n_in = len(kernel.in_specs)
    if len(arrays) != n_in:
        raise SpecializationError(
            f"kernel {label!r} takes {n_in} inputs ({', '.join(names[:n_in])}); "
            f"got {len(arrays)}")
    _, _, unknown = split_keywords(kernel, kw)
    if unknown:
        names = [*kernel.template_params, *kernel.shape_vars, *_CALL_OPTIONS,
                 *(p.name for p in kernel.raw_params)]
        raise SpecializationError(
            f"kernel {label!r}: unknown argument {unknown[0]!r}"
            f"{did_you_mean(unknown[0], names)}; valid: "
            f"{valid_names(kernel, 'the call options ' + ', '.join(_CALL_OPTIONS))}")
    check_independent(kernel, independent)
    # operands: tensors as they are (jnp arrays or tracers), scalars as 0-d arrays. A scalar
    # known while tracing (a constant of a jit-ed function) is also kept as a static value, so
    # CUDA passes it by value; eager calls keep none, so one executable serves every value.
    eager = not any(_is_tracer(a) for a in arrays)
    operands, statics = [], []
    for pname, a, s in zip(names, arrays, kernel.in_specs):
        if isinstance(s, PtxType):
            what = f"kernel {label!r}: runtime scalar {pname}"
            if _is_tracer(a):            # its value is known when the kernel runs: by dtype
                check_dtype(s, a.dtype, what, noun="traced value", fix=f"; cast it explicitly "
                            f"(x.astype(jnp.{np.dtype(s.np_dtype).name}))")
                if np.ndim(a) == 0:
                    statics.append(None)
                    a = jnp.asarray(a, dtype=s.np_dtype)
            elif isinstance(a, str) or np.ndim(a) == 0:
                v = scalar_value(s, a, what)      # refused when lossy or out of range
                statics.append(None if eager else v)
                a = jnp.asarray(v, dtype=s.np_dtype)
            elif not hasattr(a, "shape"):
                a = jnp.asarray(a)           # binding names its shape in the error
            elif not hasattr(a, "shape"):
                a = jnp.asarray(a)           # binding names its shape in the error
        elif not hasattr(a, "shape") or not hasattr(a, "dtype"):
            a = jnp.asarray(a)
        operands.append(a)
    # the one binding: ranks, dtypes, dims, shape variables (errors name the parameter)
    outs_sds = _out_shape_list(out_shape)
    b = kernel.bind(*operands, *(outs_sds or ()), **kw)
    if b.missing:
        raise SpecializationError(
            f"kernel {label!r}: shape variable {', '.join(b.missing)} appears only in outputs; "
            f"pass out_shape=... or {b.missing[0]}=...")
    empty = empty_outputs(kernel, b.env)    # an empty input: empty outputs, no launch
    if empty is not None:
        return _structured([jnp.zeros(shape, dtype) for shape, dtype in empty], out_shape)
    opts = runtime_options(kernel)
    spec = CallSpec(
        kernel=kernel, template=b.template_key, env=b.env_key,
        grid=norm_grid(grid), aliases=norm_aliases(input_output_aliases),
        static_scalars=tuple(statics), interpret=interpret, name=name, debug=bool(debug),
        independent=tuple(independent or ()), covers=norm_covers(kernel, covers),
        sanitize=sanitize_mode(sanitize), raw=tuple(b.raw_values().items()),
        max_steps=None if max_steps is None else int(max_steps),
        timeout=None if timeout is None else float(timeout), timeline=check_path(timeline),
        partial=kernel._output_indices(partial_outputs or ()),
        schedule=opts.get("schedule", "eager"), seed=opts.get("seed"))
    check_covers_shapes(spec)          # a shape too small for one block, before the grid
    traced = spec.traced()             # trace errors surface here, at the call site
    check_grid_covers(spec, traced)
    check_aliases(spec)
    if outs_sds is not None:
        got = spec.out_avals()
        for j, (sds, (shape, dtype)) in enumerate(zip(outs_sds, got)):
            if tuple(sds.shape) != tuple(shape) or np.dtype(sds.dtype) != np.dtype(dtype):
                raise SpecializationError(
                    f"kernel {label!r}: out_shape[{j}] is {np.dtype(sds.dtype)}"
                    f"{list(sds.shape)} but output {names[n_in + j]} "
                    f"({kernel.out_specs[j]!r}) is {np.dtype(dtype)}{list(shape)}")
    if debug:
        print(f"[jax_pyptx] call {label}: env={b.env} grid={spec.launch_grid(traced)} "
              f"block={traced.block} sha256={traced.sha256[:16]}")
    return _structured(bind(spec, *operands), out_shape)


def _structured(outs, out_shape):
    """The outputs as the call returns them: like ``out_shape`` (one, a tuple or a list),
    else one array or a tuple."""
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


def ptx_call(kernel, out_shape=None, *, grid=None, interpret=None, input_output_aliases=None,
             name=None, debug=False, independent=None, covers=None, backward=None,
             save_outputs=None, max_steps=None, timeout=None, timeline=None, partial_outputs=(),
             **kw):
    """Pallas-style: ``ptx_call(kernel, out_shape=..., grid=..., ...)(*inputs)``.

    See the module docstring. ``kw``: template parameters and shape variables.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u64
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def twice(X, Y):
        ...     off = reg.cvt(ptx.special.tid.x(), u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> import jax_pyptx
        >>> jax_pyptx.ptx_call(twice, interpret=True)(np.ones(32, np.float32))[:3]
        Array([2., 2., 2.], dtype=float32)
    """
    if not isinstance(kernel, Kernel):
        raise SpecializationError(f"ptx_call: expected a @kernel, got {kernel!r}")
    if independent is not None:
        check_independent(kernel, independent)

    def call(*inputs):
        return call_kernel(kernel, *inputs, out_shape=out_shape, grid=grid,
                           interpret=interpret, input_output_aliases=input_output_aliases,
                           name=name, debug=debug, independent=independent, covers=covers,
                           backward=backward, save_outputs=save_outputs, max_steps=max_steps,
                           timeout=timeout, timeline=timeline, partial_outputs=partial_outputs,
                           **kw)

    call.__name__ = name or kernel.name
    call.__doc__ = f"ptx_call of kernel {kernel.name!r}"
    return call
