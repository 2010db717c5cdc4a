"""RMSNorm on Ampere (sm_80): ``y = x / sqrt(mean(x**2) + eps) * w`` over the last dim.

    from examples.ampere.rms_norm import build_rms_norm
    k = build_rms_norm(4096, bf16)   # 4096 columns of bf16; statistics in f32
    y = k(x, w)                      # x: bf16[M, 4096], w: bf16[4096]; any M

The row pattern of ``examples/ampere/rows.py``: 16-byte vector loads, the row kept in
registers as f32, one reduction (``shfl.sync.bfly``, then shared memory across the warps of
a row), ``rsqrt.approx.ftz`` (relative error about 2**-22) and one vectorized store.

    python examples/ampere/rms_norm.py   # ptxas resources + interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/ampere/rms_norm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.ampere"

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import f32

from . import ARCH
from .rows import RowReducer, RowThread, load_chunks, plan_rows, store_chunks, tree_sum


def build_rms_norm(cols: int = 64, dtype=f32, *, eps: float = 1e-6, threads_per_row=None,
                   rows_per_cta=None, arch: str = ARCH):
    """RMSNorm over rows of ``cols`` elements of ``dtype`` (f32, bf16 or f16).

    Parameters:
        cols: the row length (a shape fixed per kernel: each thread keeps its part of a row in
            registers, at most 32 values with the default plan, so up to 8192 columns).
        dtype: the element type of ``x``, ``w`` and ``y``; the statistics are f32.
        eps: added to the mean square.
        threads_per_row, rows_per_cta: override the plan (``rows.plan_rows``): a power of two
            up to 1024 threads per row; rows per CTA (default: 256 threads per CTA).
        arch: the target (``sm_80``; the row pattern needs nothing newer, and
            ``examples.blackwell`` builds the same kernel for ``sm_100a``).

    Inputs ``x: dtype[M, cols]``, ``w: dtype[cols]``; output ``y: dtype[M, cols]``. ``M`` is a
    shape variable (any positive value; rows past it are predicated off) and independent
    (sharded ``jit`` splits it with no all-gather; ``jax.vmap`` puts the batch on the grid).
    """
    plan = plan_rows("build_rms_norm", cols, dtype, threads_per_row, rows_per_cta)

    @kernel(arch=arch, in_specs=(Tile("M", cols, dtype), Tile(cols, dtype)),
            out_specs=(Tile("M", cols, dtype),), block=(plan.threads, 1, 1),
            grid=lambda M: plan.grid(M))
    def rms_norm(X, W, Y):
        """Y = X / sqrt(mean(X**2) + eps) * W, row by row."""
        th = RowThread(plan, X.shape[0])
        reduce = RowReducer(plan, th, slots=1)
        xs = load_chunks(th, th.row_address(X))
        ws = load_chunks(th, th.vector_address(W), row=False)
        ss = reduce(tree_sum([x * x for x in xs]), "add")
        r = reg.scalar(f32)
        ptx.inst.rsqrt.approx.ftz.f32(r, ss * (1.0 / cols) + eps)
        store_chunks(th, th.row_address(Y), [x * r * w for x, w in zip(xs, ws)])
        ptx.ret()

    rms_norm.plan = plan
    return configure(rms_norm, independent=("M",))


def reference(x, w, eps: float = 1e-6):
    """NumPy RMSNorm in float64 (inputs of any float dtype)."""
    import numpy as np

    x = np.asarray(x, np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * np.asarray(w, np.float64)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
