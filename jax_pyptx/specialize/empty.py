"""Calls over empty inputs: a shape variable bound to 0 (an empty batch) gives empty outputs
of the right shapes and dtypes without tracing or launching the kernel, as XLA does for an
empty operation. Every runtime asks here first (``Kernel.interpret``, the JAX call, the PyTorch
op); each allocates the arrays of its own kind.

A trace itself needs positive sizes (``k.ptx(N=0)`` is refused: there is no PTX for an empty
shape), and an output that would not be empty is refused too: the kernel is not launched, so
nothing would write it (a reduction over an empty axis, say).
"""
from __future__ import annotations

import math

from ..errors import SpecializationError

__all__ = ["empty_outputs"]


def empty_outputs(k, env: dict) -> list | None:
    """``[(shape, NumPy dtype), ...]`` of ``k``'s outputs when a shape variable of ``env`` is 0,
    else None.

    Examples:
        >>> from jax_pyptx import Tile, kernel, ptx
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.specialize.empty import empty_outputs
        >>> @kernel(in_specs=(Tile("B", 64, f32),), out_specs=(Tile("B", 64, f32),))
        ... def rows(X, Y):
        ...     ptx.ret()
        >>> empty_outputs(rows, {"B": 0}), empty_outputs(rows, {"B": 8})
        ([((0, 64), dtype('float32'))], None)
    """
    zero = [s for s in k.shape_vars if s in env and env[s] == 0]
    if not zero:
        return None
    names = k.param_names[len(k.in_specs):]
    out = []
    for name, spec in zip(names, k.out_specs):
        unbound = [d for d in spec.symbols if d not in env]
        if unbound:
            raise SpecializationError(
                f"kernel {k.name!r}: shape variable {zero[0]} is 0 (an empty input: no launch), "
                f"and output {name} ({spec}) needs {unbound[0]}, which no input binds; pass "
                f"{unbound[0]}=...")
        shape = spec.resolve(env)
        if math.prod(shape) != 0:
            raise SpecializationError(
                f"kernel {k.name!r}: shape variable {zero[0]} is 0 (an empty input), so the "
                f"kernel is not launched, but output {name} ({spec}) has shape {shape}, which "
                f"nothing would write; an empty input gives empty outputs only when each "
                f"output has a dimension of size 0 (skip the call for empty inputs otherwise)")
        out.append((shape, spec.dtype.np_dtype))
    return out
