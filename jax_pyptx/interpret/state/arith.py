"""The interpreter's compiled core: ``ARITH``, the module ``_arith`` built from
``ffi/interp/arith.cc``, ``ex2.cc``, ``matrix.cc`` and ``mma.cc`` (``pip install`` builds it with the
rest), or None where it was not built (a source tree run in place) or ``JAX_PYPTX_NATIVE=0``
is set: its users then compute with NumPy, bit for bit the same (``scheduler.native`` runs a
segment's arithmetic with it; ``ops.wgmma``, ``ops.smem_matrix`` and ``machine.asyncregs`` an
accumulator's rounding, a bf16 operand's gather and widening, and an accumulator's moves
between its registers and its tile; ``ops.wgmma_chain`` a run's products and roundings)."""
from __future__ import annotations

import os

try:
    if os.environ.get("JAX_PYPTX_NATIVE", "1") == "0":
        raise ImportError
    from . import _arith as ARITH
except ImportError:
    ARITH = None
