"""vmap of ``pyptx_call``: the batch goes onto the grid (one launch), or a loop.

Batch on the grid: the call is re-traced with a batched parameter ABI
(``specialize.abi.ParamAbi``, through ``CallSpec.traced``): the grid's
z dimension becomes the batch (nested vmaps multiply into it), every ``X.ptr()`` of a batched
tensor is offset to its item (``%ctaid.z`` split into one index per vmap level, times the
item's bytes) and every global-mode ``X.tma_desc()`` points at the item's own descriptor (the
launcher builds one per item: ``TmaSpec.batch``). Unbatched operands (``in_axes=None``) are
shared by every item without copies. Any ``in_axes`` works: the batch axis is moved to the
front first.

A sequential loop (``lax.map``: one launch per item) is used only when the kernel cannot be
batched on the grid; :func:`grid_batch_blocker` says why:

* its grid already uses z, or its cluster does;
* it reads ``%ctaid.z``, ``%nctaid.z``, ``%clusterid.z`` or ``%nclusterid.z``;
* it reads a tensor parameter other than through ``X.ptr()`` / ``X.tma_desc()``;
* a tensor it describes with a by-value TMA descriptor is batched;
* a runtime scalar operand is batched (it differs per item);
* the batch would exceed the grid's z limit (65535 blocks).
"""
from __future__ import annotations

import math
from dataclasses import replace

import jax
import jax.numpy as jnp

from .callspec import CallSpec

__all__ = ["grid_batch_blocker", "batch_rule"]

MAX_GRID_Z = 65535
_Z_SPECIALS = ("%ctaid.z", "%nctaid.z", "%clusterid.z", "%nclusterid.z")


def grid_batch_blocker(spec: CallSpec, batched_inputs=(), new_size: int = 1) -> str | None:
    """Why this call cannot take one more batch level on the grid (None: it can)."""
    base = spec.unbatched()
    t = base.traced()
    grid = base.item_grid(t)
    if grid[2] != 1:
        return f"its grid {grid} already uses z"
    if t.cluster[2] != 1:
        return f"its cluster {t.cluster} spans z"
    z = sorted(s for s in t.specials if s in _Z_SPECIALS)
    if z:
        return f"it reads {', '.join(z)}"
    if t.raw_tensor_params:
        return (f"it reads tensor parameter {', '.join(t.raw_tensor_params)} directly "
                f"(not through .ptr() / .tma_desc())")
    for i in batched_inputs:
        if spec.is_scalar(i):
            return f"runtime scalar {spec.param_names[i]} is batched"
    for h in t.tma:
        if h.mode == "by_value":
            return f"tensor {h.tensor} has a by-value TMA descriptor"
    total = math.prod(spec.batch) * new_size
    if total > MAX_GRID_Z:
        return f"the batch ({total}) exceeds the grid's z limit ({MAX_GRID_Z})"
    return None


def _broadcast_full(x, mask: tuple, sizes: tuple):
    """``x`` (carrying the levels in ``mask``) broadcast to carry every level."""
    if all(mask):
        return x
    shape = list(x.shape)
    for level, (m, s) in enumerate(zip(mask, sizes)):
        if not m:
            x = jnp.expand_dims(x, level)
            shape.insert(level, s)
    return jnp.broadcast_to(x, tuple(shape))


def batch_rule(prim, args, dims, *, spec: CallSpec):
    """The vmap rule of ``prim``: one launch with the batch on the grid, or a loop."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    batched_inputs = [i for i, d in enumerate(dims) if d is not None]
    why = grid_batch_blocker(spec, batched_inputs, size)
    n_out = spec.n_out
    if why is not None:
        if spec.options.debug:
            print(f"[jax_pyptx] vmap of {spec.label}: sequential loop because {why}")
        return _loop(prim, args, dims, spec), [0] * n_out
    sizes = (size,) + tuple(spec.batch)
    t = spec.unbatched().traced()
    tma_tensors = {h.index for h in t.tma}
    aliased = {spec.tensor_index(i) for i, _ in spec.options.input_output_aliases}
    new_args, masks = [], []
    for i, (a, d) in enumerate(zip(args, dims)):
        if spec.is_scalar(i):
            new_args.append(a)
            continue
        ti = spec.tensor_index(i)
        old = spec.mask(ti) if spec.batch else ()
        if d is None:
            m = (False,) + old
        else:
            a = jnp.moveaxis(a, d, 0)
            m = (True,) + old
        if (ti in tma_tensors or ti in aliased) and any(m) and not all(m):
            # one descriptor per item, and an aliased output: the operand carries every level
            a = _broadcast_full(a, m, sizes)
            m = (True,) * len(sizes)
        if ti in aliased and not any(m):
            a = _broadcast_full(a, m, sizes)
            m = (True,) * len(sizes)
        new_args.append(a)
        masks.append(m)
    masks += [(True,) * len(sizes)] * n_out
    new = replace(spec, batch=sizes, masks=tuple(masks))
    return prim.bind(*new_args, spec=new), [0] * n_out


def _loop(prim, args, dims, spec: CallSpec):
    """One launch per batch item (``lax.map``); unbatched operands are shared."""
    moved = [None if d is None else jnp.moveaxis(a, d, 0)
             for a, d in zip(args, dims)]
    idx = [i for i, m in enumerate(moved) if m is not None]

    def body(xs):
        full = list(args)
        for i, x in zip(idx, xs):
            full[i] = x
        return tuple(prim.bind(*full, spec=spec))

    return list(jax.lax.map(body, tuple(moved[i] for i in idx)))
