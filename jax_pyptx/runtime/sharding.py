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
replicated (gathered only if the caller sharded them). Which dims are split is
``shard_plan.partition_plan``, the decision the abstract eval's output shardings use too.

Partitioning applies when lowering for more than one device and not for ``jax.export`` (an
exported artifact carries the plain custom call, which XLA replicates when partitioning it;
export the function under ``shard_map`` to keep the per-shard launch).

The rules receive the primitive (``primitive`` registers them); nothing here imports it.
"""
from __future__ import annotations

from dataclasses import replace

from jax.interpreters import mlir

from .callspec import CallSpec
from .lowering_host import guarded_launch
from .shard_plan import (factors, local_spec, operand_pspecs, out_pspecs,
                         partition_plan)

__all__ = ["maybe_partitioned_lowering", "factors", "partition_plan", "local_spec",
           "out_shardings", "require_devices"]


def require_devices(prim) -> None:
    """custom_partitioning needs the device assignment while lowering ``prim``."""
    try:
        from jax._src import dispatch as _dispatch

        _dispatch.prim_requires_devices_during_lowering.add(prim)
    except Exception:  # pragma: no cover - an older/newer JAX layout
        pass


def out_shardings(spec: CallSpec, avals):
    """Explicit-sharding mode: the outputs' NamedShardings under the call's partition plan
    (None when no operand carries a mesh)."""
    mesh, pspecs = None, []
    for a in avals:
        sh = getattr(a, "sharding", None)
        m = getattr(sh, "mesh", None)
        if m is None or getattr(m, "empty", True) or not hasattr(sh, "spec"):
            pspecs.append(None)
            continue
        mesh = mesh or m
        pspecs.append(tuple(sh.spec))
    if mesh is None:
        return None
    from jax.sharding import NamedSharding, PartitionSpec

    chosen = partition_plan(spec, mesh, pspecs)
    return [NamedSharding(mesh, PartitionSpec(*p)) for p in out_pspecs(spec, chosen)]


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


def _shardings(spec: CallSpec, mesh, chosen: dict):
    from jax.sharding import NamedSharding, PartitionSpec as P

    args = [NamedSharding(mesh, P(*p)) for p in operand_pspecs(spec, chosen)]
    outs = [NamedSharding(mesh, P(*p)) for p in out_pspecs(spec, chosen)]
    return args, outs


def _pspec_of(sharding):
    from jax.sharding import NamedSharding

    if isinstance(sharding, NamedSharding):
        return tuple(sharding.spec)
    return None


def _make_partitioned(prim, spec: CallSpec, host_index=None, holder=None):
    from jax.experimental.custom_partitioning import custom_partitioning

    inner = replace(spec, options=replace(spec.options, independent=()))

    def call(*xs):
        return tuple(prim.bind(*xs, spec=inner))

    cp = custom_partitioning(call)

    def partition(mesh, arg_shapes, result_shape):
        chosen = partition_plan(spec, mesh, [_pspec_of(a.sharding) for a in arg_shapes])
        local = local_spec(spec, mesh, chosen)
        if host_index is not None:
            holder["spec"] = local
            local = replace(local, host_callback=host_index)
        args, outs = _shardings(spec, mesh, chosen)
        if spec.options.debug:
            print(f"[jax_pyptx] partition {spec.label}: {chosen} -> env {dict(local.env)} "
                  f"batch {local.batch}")

        def lower_fn(*xs):
            return tuple(prim.bind(*xs, spec=local))

        return mesh, lower_fn, tuple(outs), tuple(args)

    def infer(mesh, arg_shapes, result_shape):
        chosen = partition_plan(spec, mesh, [_pspec_of(a.sharding) for a in arg_shapes])
        return tuple(_shardings(spec, mesh, chosen)[1])

    cp.def_partition(partition, infer_sharding_from_operands=infer,
                     sharding_rule=_sharding_rule(spec))
    return cp


def _host_callback(holder):
    """The interpreter callback of a partitioned call, run once per shard."""
    def callback(*arrays):
        return guarded_launch(holder["spec"], *arrays)      # short errors, as lowering_host

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


def maybe_partitioned_lowering(prim, ctx, args, spec: CallSpec, host: bool):
    """The custom_partitioning lowering when it applies, else None. ``host``: the call runs
    on the interpreter (each shard's callback is registered on the enclosing module)."""
    if not spec.options.independent and not spec.batch:
        return None
    if getattr(ctx.module_context.lowering_parameters, "for_export", False):
        return None
    try:
        if _num_devices(ctx) <= 1:
            return None
    except Exception:  # pragma: no cover - an unknown axis context
        return None
    host_index, holder = None, None
    if host:
        holder = {}
        ctx.module_context.add_host_callback(_host_callback(holder))
        host_index = len(ctx.module_context.host_callbacks) - 1
    cp = _make_partitioned(prim, spec, host_index, holder)
    return mlir.lower_fun(lambda *xs: list(cp(*xs)), multiple_results=True)(ctx, *args)
