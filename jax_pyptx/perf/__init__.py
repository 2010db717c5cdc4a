"""Performance estimates without a GPU: the roofline of a kernel from what it does.

    from jax_pyptx.perf import roofline
    r = roofline(kernel, *small_inputs, at={"M": 8192, "N": 8192, "K": 8192})
    print(r)                         # one row per device: bytes, FLOPs, occupancy, bound

* ``counts``: global bytes and tensor-core FLOPs counted by the interpreter
  (``interpret.Stats``) at a small shape, fitted as power laws of the shape variables;
* ``occupancy``: resident CTAs per SM from registers, shared memory and threads;
* ``devices``: NVIDIA's published peaks of H100, H200, B200 and A100 (sources in the module);
* ``roofline``: the estimate and its table.

No JAX is imported; the layer sits beside the runtimes (it reads kernels, the host launch,
the interpreter and ptxas).

Examples:
    >>> import numpy as np
    >>> from jax_pyptx.example_kernels import twice
    >>> from jax_pyptx.perf import roofline
    >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
    >>> r.rows[0].bound
    'memory'
"""
from .counts import BufferCounts, Counts, Scaling, fit, measure, random_inputs
from .devices import DEVICES, Device, device
from .occupancy import Occupancy, occupancy
from .roofline import (
    DEFAULT_DEVICES, Roofline, RooflineRow, estimate, format_table, roofline,
)

__all__ = ["roofline", "Roofline", "RooflineRow", "estimate", "format_table", "measure", "fit",
           "Counts", "BufferCounts", "Scaling", "random_inputs", "occupancy", "Occupancy", "DEVICES", "Device",
           "device", "DEFAULT_DEVICES"]
