"""The one sharding decision of a call: which mesh axes split which dims. No JAX here.

A kernel that declares *independent* shape variables (``configure(kernel,
independent=("M",))``) promises that running it on blocks of those dims gives the blocks of
the result; vmap batch dims are always independent. :func:`partition_plan` picks, from the
operands' partition specs, the mesh axes of each independent dim that can be split evenly
(and, with ``covers``, into shards the grid still covers). The abstract eval's output
shardings (explicit-sharding mode) and the partitioner (``sharding``) both read it, so the
sharding promised for the outputs is the one the partition produces.
"""
from __future__ import annotations

import math
from dataclasses import replace

from .callspec import CallSpec

__all__ = ["factors", "partition_plan", "out_pspecs", "operand_pspecs", "local_spec",
           "pspec_entry"]


def factors(spec: CallSpec):
    """Per tensor (inputs then outputs) the factor of each dim, and the independent ones.

    A factor is ``("b", level)`` for a vmap batch level, ``("s", name)`` for a shape
    variable and ``("c", tensor, dim)`` for a fixed dim.
    """
    out = []
    for t, tile in enumerate(spec.tensor_tiles):
        f = [("b", level) for level, m in enumerate(spec.mask(t)) if m]
        for d, dim in enumerate(tile.dims):
            f.append(("s", dim) if isinstance(dim, str) else ("c", t, d))
        out.append(f)
    indep = {("b", level) for level in range(len(spec.batch))}
    indep |= {("s", s) for s in spec.options.independent}
    return out, indep


def _factor_sizes(spec: CallSpec, per_tensor) -> dict:
    env = spec.env_dict
    sizes = {}
    for fs, tile in zip(per_tensor, spec.tensor_tiles):
        for f in fs:
            if f[0] == "b":
                sizes[f] = spec.batch[f[1]]
            elif f[0] == "s":
                sizes[f] = env[f[1]]
            else:
                sizes[f] = tile.dims[f[2]]
    return sizes


def partition_plan(spec: CallSpec, mesh, operand_specs) -> dict:
    """Mesh axes for each independent factor, from the operands' partition specs.

    ``mesh``: anything with ``.shape`` (axis name -> size: a Mesh or AbstractMesh);
    ``operand_specs``: per operand a PartitionSpec-like tuple (or None). Returns
    ``{factor: axes}`` (``axes`` a tuple of mesh axis names) for the factors that can be
    split evenly into shards the grid covers; every other dim is replicated.
    """
    per_tensor, indep = factors(spec)
    sizes = _factor_sizes(spec, per_tensor)
    per_block = {("s", sym): per for sym, _axis, per in spec.options.covers}
    axis_size = dict(mesh.shape)
    chosen, used_axes = {}, set()
    t = 0
    for i in range(spec.n_in):
        if spec.is_scalar(i):
            continue
        pspec = operand_specs[i]
        fs = per_tensor[t]
        t += 1
        if pspec is None:
            continue
        pspec = tuple(pspec)
        for f, entry in zip(fs, pspec + (None,) * (len(fs) - len(pspec))):
            if f not in indep or f in chosen or entry is None:
                continue
            axes = (entry,) if isinstance(entry, str) else tuple(entry)
            if not axes or any(a in used_axes for a in axes):
                continue
            n = math.prod(axis_size[a] for a in axes)
            if sizes[f] % n or (sizes[f] // n) % per_block.get(f, 1):
                continue                  # uneven, or a shard the grid could not cover
            chosen[f] = axes
            used_axes.update(axes)
    return chosen


def pspec_entry(axes):
    """A PartitionSpec entry for ``axes``: None, one axis name, or a tuple of names."""
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else tuple(axes)


def out_pspecs(spec: CallSpec, chosen: dict) -> list:
    """The outputs' partition-spec entries (tuples) under the plan ``chosen``."""
    per_tensor, _ = factors(spec)
    n_tin = len(spec.tensor_inputs)
    return [tuple(pspec_entry(chosen.get(f)) for f in per_tensor[n_tin + j])
            for j in range(spec.n_out)]


def operand_pspecs(spec: CallSpec, chosen: dict) -> list:
    """The operands' partition-spec entries under ``chosen`` (scalars: ``()``)."""
    per_tensor, _ = factors(spec)
    out, t = [], 0
    for i in range(spec.n_in):
        if spec.is_scalar(i):
            out.append(())
        else:
            out.append(tuple(pspec_entry(chosen.get(f)) for f in per_tensor[t]))
            t += 1
    return out


def local_spec(spec: CallSpec, mesh, chosen: dict) -> CallSpec:
    """The per-shard call: shape variables and batch sizes divided by their shard counts."""
    axis_size = dict(mesh.shape)
    env = dict(spec.env)
    batch = list(spec.batch)
    for f, axes in chosen.items():
        n = math.prod(axis_size[a] for a in axes)
        if f[0] == "s":
            env[f[1]] //= n
        else:
            batch[f[1]] //= n
    return replace(spec, env=tuple(env.items()), batch=tuple(batch),
                   options=replace(spec.options, independent=()))
