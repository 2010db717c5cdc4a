"""Softmax on Blackwell (sm_100a): ``y = exp(x - max(x)) / sum(exp(x - max(x)))``
over the last dim.

    from examples.blackwell.softmax import build_softmax
    k = build_softmax(4096, bf16)
    y = k(x)                         # x: bf16[M, 4096]; any M

The row kernel of ``examples/ampere/softmax.py`` (the pattern of ``examples/ampere/rows.py``:
16-byte vector loads, the row kept in registers as f32, ``shfl.sync.bfly`` and shared-memory
reductions, one vectorized store) built for ``sm_100a``: a memory-bound row kernel needs no
tensor core, so Blackwell runs the same code; what changes is the target ptxas schedules
for and the roofline it is measured against (B200's 8 TB/s of HBM3e).

    python examples/blackwell/softmax.py   # ptxas resources + interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/blackwell/softmax.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.blackwell"

from jax_pyptx.types import f32

from ..ampere import softmax as _rows
from . import ARCH

reference = _rows.reference


def build_softmax(cols: int = 64, dtype=f32, **options):
    """The row kernel of ``examples.ampere.softmax.build_softmax`` for ``sm_100a``.

    Parameters: as the Ampere builder: ``cols``, ``dtype`` (f32, bf16 or f16),
    ``threads_per_row``, ``rows_per_cta`` (keywords in ``options``). The inputs, outputs
    and shape rules are the same (any ``M``; independent)."""
    return _rows.build_softmax(cols, dtype, arch=ARCH, **options)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
