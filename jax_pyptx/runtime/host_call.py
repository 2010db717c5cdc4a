"""A call on the CPU interpreter: :func:`host_launch` runs a :class:`CallSpec` on host
arrays through the one host launch (``jax_pyptx.specialize.host``). No JAX here: the JAX
CPU lowering calls it from a host callback, the PyTorch CPU impl directly."""
from __future__ import annotations

import threading

from ..specialize.host import HostLaunch, interpreter_stats
from .callspec import CallSpec

__all__ = ["host_launch", "interpreter_stats"]

_host_plans: dict = {}          # CallSpec -> HostLaunch
_MAX_PLANS = 4096
_lock = threading.Lock()


def _plan(spec: CallSpec) -> HostLaunch:
    plan = _host_plans.get(spec)
    if plan is None:
        t = spec.traced()
        aliases = [(spec.tensor_index(i), o) for i, o in spec.options.input_output_aliases]
        plan = HostLaunch(t, grid=spec.launch_grid(t), aliases=aliases, label=spec.label,
                          out_shapes=[shape for shape, _ in spec.out_avals()])
        with _lock:
            if len(_host_plans) >= _MAX_PLANS:
                _host_plans.clear()
            _host_plans[spec] = plan
    return plan


def host_launch(spec: CallSpec, *arrays) -> tuple:
    """Run the call on the CPU interpreter: the operands (NumPy: tensors in their logical
    layout, runtime scalars) in, the outputs (NumPy) out."""
    plan = _plan(spec)
    t = plan.traced
    if spec.options.debug:
        print(f"[jax_pyptx] interpret {spec.label}: grid={plan.grid} block={t.block} "
              f"cluster={t.cluster} smem={t.dynamic_smem} batch={spec.batch}")
    tensors = [arrays[i] for i in spec.tensor_inputs]
    scalars = [arrays[i] for i in spec.scalar_inputs]
    return plan(tensors, scalars, dict(spec.raw), spec.options)
