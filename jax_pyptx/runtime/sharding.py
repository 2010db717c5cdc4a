"""Partitioning ``pyptx_call`` under ``jit`` with sharded operands.

``shard_map`` needs nothing from here: inside it the kernel is called with per-shard shapes
(its shape variables bind from them) and lowered like any single-device call.

Under ``jit`` with sharded inputs an opaque custom call would be all-gathered. A kernel that
declares *independent* shape variables (``configure(kernel, independent=("M",))`` or
``ptx_call(..., independent=...)``) promises that splitting those dims into blocks and
running the kernel on each block gives the blocks of the result. vmap batch dims are always
independent. Such calls are lowered through ``jax.experimental.custom_partitioning`` with a
Shardy sharding rule (and the GSPMD callbacks): each device runs the kernel re-specialized for
its shard's shape (``M / shards``), with no all-gather; dims not declared independent are
replicated (gathered only if the caller sharded them). Multi-host runs go through the same
JAX machinery.

Partitioning applies when lowering for more than one device and not for ``jax.export`` (an
exported artifact carries the plain custom call, which XLA replicates when partitioning it;
export the function under ``shard_map`` to keep the per-shard launch).
"""
from __future__ import annotations

import math
from dataclasses import replace

from jax.interpreters import mlir

from .primitive import CallSpec, bind, pyptx_call_p

__all__ = ["maybe_partitioned_lowering", "factors", "partition_plan"]

try:  # pragma: no branch
    from jax._src import dispatch as _dispatch

    # custom_partitioning needs the device assignment while lowering
    _dispatch.prim_requires_devices_during_lowering.add(pyptx_call_p)
except Exception:  # pragma: no cover
    pass


# ----------------------------------------------------------------------------- factors
def factors(spec: CallSpec):
    """Per tensor (inputs then outputs) the factor of each dim, and the independent ones.

    A factor is ``("b", level)`` for a vmap batch level, ``("s", name)`` for a shape
    variable and ``("c", tensor, dim)`` for a fixed dim.
    """
    k = spec.kernel
    tiles = [k.in_specs[i] for i in spec.tensor_inputs] + list(k.out_specs)
    out = []
    for t, tile in enumerate(tiles):
        f = [("b", level) for level, m in enumerate(spec.mask(t)) if m]
        for d, dim in enumerate(tile.dims):
            f.append(("s", dim) if isinstance(dim, str) else ("c", t, d))
        out.append(f)
    indep = {("b", level) for level in range(len(spec.batch))}
    indep |= {("s", s) for s in spec.independent}
    return out, indep


def _factor_name(f) -> str:
    if f[0] == "b":
        return f"b{f[1]}"
    if f[0] == "s":
        return f"s_{f[1]}"
    return f"c{f[1]}_{f[2]}"


def _sharding_rule(spec: CallSpec):
    from jax.experimental.custom_partitioning import SdyShardingRule

    per_tensor, indep = factors(spec)
    n_tin = len(spec.tensor_inputs)
    ops, t = [], 0
    for i in range(spec.n_in):
        if spec.is_scalar(i):
            ops.append(())
        else:
            ops.append(tuple(_factor_name(f) for f in per_tensor[t]))
            t += 1
    res = [tuple(_factor_name(f) for f in per_tensor[n_tin + j]) for j in range(spec.n_out)]
    used = {f for fs in per_tensor for f in fs}
    need_rep = tuple(sorted(_factor_name(f) for f in used if f not in indep))
    return SdyShardingRule(tuple(ops), tuple(res), need_replication_factors=need_rep)


# ----------------------------------------------------------------------------- partition
def partition_plan(spec: CallSpec, mesh, arg_shardings_specs, sizes_of=None):
    """Mesh axes for each independent factor, from the operands' partition specs.

    ``arg_shardings_specs``: per operand a PartitionSpec-like tuple (or None). Returns
    ``{factor: axes}`` for the factors that can be split evenly.
    """
    per_tensor, indep = factors(spec)
    sizes = _factor_sizes(spec, per_tensor)
    per_block = {("s", sym): per for sym, _axis, per in spec.covers}
    chosen, used_axes = {}, set()
    t = 0
    for i in range(spec.n_in):
        if spec.is_scalar(i):
            continue
        pspec = arg_shardings_specs[i]
        fs = per_tensor[t]
        t += 1
        if pspec is None:
            continue
        for f, entry in zip(fs, tuple(pspec) + (None,) * (len(fs) - len(tuple(pspec)))):
            if f not in indep or f in chosen or entry is None:
                continue
            axes = (entry,) if isinstance(entry, str) else tuple(entry)
            if not axes or any(a in used_axes for a in axes):
                continue
            n = math.prod(mesh.shape[a] for a in axes)
            if sizes[f] % n or (sizes[f] // n) % per_block.get(f, 1):
                continue                  # uneven, or a shard the grid could not cover
            chosen[f] = axes
            used_axes.update(axes)
    return chosen


def _factor_sizes(spec: CallSpec, per_tensor) -> dict:
    env = spec.env_dict
    sizes = {}
    k = spec.kernel
    tiles = [k.in_specs[i] for i in spec.tensor_inputs] + list(k.out_specs)
    for fs, tile in zip(per_tensor, tiles):
        for f in fs:
            if f[0] == "b":
                sizes[f] = spec.batch[f[1]]
            elif f[0] == "s":
                sizes[f] = env[f[1]]
            else:
                sizes[f] = tile.dims[f[2]]
    return sizes


def local_spec(spec: CallSpec, mesh, chosen: dict) -> CallSpec:
    """The per-shard call: shape variables and batch sizes divided by their shard counts."""
    env = dict(spec.env)
    batch = list(spec.batch)
    for f, axes in chosen.items():
        n = math.prod(mesh.shape[a] for a in axes)
        if f[0] == "s":
            env[f[1]] //= n
        else:
            batch[f[1]] //= n
    return replace(spec, env=tuple(env.items()), batch=tuple(batch), independent=())


def _shardings(spec: CallSpec, mesh, chosen: dict):
    from jax.sharding import NamedSharding, PartitionSpec as P

    per_tensor, _ = factors(spec)
    n_tin = len(spec.tensor_inputs)

    def one(fs):
        return NamedSharding(mesh, P(*[chosen.get(f) if f in chosen else None for f in fs]))

    args, t = [], 0
    for i in range(spec.n_in):
        if spec.is_scalar(i):
            args.append(NamedSharding(mesh, P()))
        else:
            args.append(one(per_tensor[t]))
            t += 1
    outs = [one(per_tensor[n_tin + j]) for j in range(spec.n_out)]
    return args, outs


def _pspec_of(sharding):
    from jax.sharding import NamedSharding

    if isinstance(sharding, NamedSharding):
        return tuple(sharding.spec)
    return None


def _make_partitioned(spec: CallSpec, host_index=None, holder=None):
    from jax.experimental.custom_partitioning import custom_partitioning

    inner = replace(spec, independent=())

    def call(*xs):
        return tuple(bind(inner, *xs))

    cp = custom_partitioning(call)

    def partition(mesh, arg_shapes, result_shape):
        chosen = partition_plan(spec, mesh, [_pspec_of(a.sharding) for a in arg_shapes])
        local = local_spec(spec, mesh, chosen)
        if host_index is not None:
            holder["spec"] = local
            local = replace(local, host_callback=host_index)
        args, outs = _shardings(spec, mesh, chosen)
        if spec.debug:
            print(f"[jax_pyptx] partition {spec.label}: {chosen} -> env {dict(local.env)} "
                  f"batch {local.batch}")

        def lower_fn(*xs):
            return tuple(bind(local, *xs))

        return mesh, lower_fn, tuple(outs), tuple(args)

    def infer(mesh, arg_shapes, result_shape):
        chosen = partition_plan(spec, mesh, [_pspec_of(a.sharding) for a in arg_shapes])
        return tuple(_shardings(spec, mesh, chosen)[1])

    cp.def_partition(partition, infer_sharding_from_operands=infer,
                     sharding_rule=_sharding_rule(spec))
    return cp


def _host_callback(holder):
    """The interpreter callback of a partitioned call, run once per shard."""
    from .primitive import host_launch

    def callback(*arrays):
        return host_launch(holder["spec"], *arrays)

    return callback


def _num_devices(ctx) -> int:
    from jax._src import sharding_impls as si

    ac = ctx.module_context.axis_context
    if isinstance(ac, si.SPMDAxisContext):
        if set(ac.manual_axes) == set(ac.mesh.axis_names):
            return 1                      # fully manual (shard_map): per-shard already
        return ac.mesh.size
    if isinstance(ac, si.ShardingContext):
        return ac.num_devices
    return 1


def maybe_partitioned_lowering(ctx, args, spec: CallSpec):
    """The custom_partitioning lowering when it applies, else None."""
    if not spec.independent and not spec.batch:
        return None
    if getattr(ctx.module_context.lowering_parameters, "for_export", False):
        return None
    try:
        if _num_devices(ctx) <= 1:
            return None
    except Exception:  # pragma: no cover - an unknown axis context
        return None
    host_index, holder = None, None
    platform = ctx.module_context.platforms[0]
    if spec.interpret or (platform == "cpu" and spec.interpret is None):
        holder = {}
        ctx.module_context.add_host_callback(_host_callback(holder))
        host_index = len(ctx.module_context.host_callbacks) - 1
    cp = _make_partitioned(spec, host_index, holder)
    return mlir.lower_fun(lambda *xs: list(cp(*xs)), multiple_results=True)(ctx, *args)
