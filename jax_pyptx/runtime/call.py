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
from ..kernel_def import Kernel
from ..specialize.binding import check_inputs, unknown_argument
from ..specialize.empty import empty_outputs
from ..scalars import check_dtype, scalar_value
from ..types import PtxType
from .ad import vjp_pair
from .callspec import CallSpec, check_aliases, check_covers_shapes, check_grid_covers
from ..specialize.options import (CallOptions, check_options, merge_options, option_names,
                                  split_options)
from .options import configure, runtime_options
from .primitive import bind

__all__ = ["call_kernel", "ptx_call", "configure", "runtime_options", "export_disabled_checks",
           "as_callable"]

CALL_OPTIONS = ("out_shape",) + option_names("call")     # out_shape is the call's own


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
def call_kernel(kernel, *arrays, out_shape=None, **kw):
    """Call ``kernel`` on JAX arrays; returns its outputs (one array or a tuple).

    ``kw``: template parameters, shape variables and raw parameter values by name, and the
    call options (``CallOptions``; see :func:`ptx_call`). Options left out (or None) come
    from :func:`configure`.
    """
    given, kw = split_options(kw, "call")
    check_inputs(kernel, len(arrays), label=given.get("name"))
    unknown_argument(kernel, kw, allowed=[p.name for p in kernel.raw_params],
                     options=CALL_OPTIONS, what="the call options", label=given.get("name"))
    options = merge_options(runtime_options(kernel), check_options(kernel, given))
    if options.backward is not None:
        fwd = lambda *a: _call(kernel, a, out_shape, options, kw)
        bwd = as_callable(options.backward, interpret=options.interpret, debug=options.debug,
                          sanitize=options.sanitize)
        return vjp_pair(fwd, bwd, options.save_outputs, options.name or kernel.name)(*arrays)
    return _call(kernel, arrays, out_shape, options, kw)


def _call(kernel, arrays, out_shape, options: CallOptions, kw: dict):
    label = options.name or kernel.name
    names = kernel.param_names
    n_in = len(kernel.in_specs)
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
    spec = CallSpec(kernel=kernel, template=b.template_key, env=b.env_key,
                    static_scalars=tuple(statics), raw=tuple(b.raw_values().items()),
                    options=options)
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
    if options.debug:
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


def ptx_call(kernel, out_shape=None, **kw):
    """Pallas-style: ``ptx_call(kernel, out_shape=..., grid=..., ...)(*inputs)``.

    See the module docstring. ``kw``: the call options (``CallOptions``) and template
    parameters, shape variables and raw parameter values.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> import jax_pyptx
        >>> jax_pyptx.ptx_call(twice(), interpret=True)(np.ones(32, np.float32))[:3]
        Array([2., 2., 2.], dtype=float32)
    """
    if not isinstance(kernel, Kernel):
        raise SpecializationError(f"ptx_call: expected a @kernel, got {kernel!r}")
    given, _ = split_options(kw, "call")
    check_options(kernel, given)          # bad options fail here, not at the first call

    def call(*inputs):
        return call_kernel(kernel, *inputs, out_shape=out_shape, **kw)

    call.__name__ = given.get("name") or kernel.name
    call.__doc__ = f"ptx_call of kernel {kernel.name!r}"
    return call
