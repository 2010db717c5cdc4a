"""LayerNorm on Ampere (sm_80): ``y = (x - mean) / sqrt(var + eps) * w + b`` over the last dim.

    from examples.ampere.layer_norm import build_layer_norm
    k = build_layer_norm(4096, bf16)
    y = k(x, w, b)                   # x: bf16[M, 4096]; w, b: bf16[4096]; any M

The row pattern of ``examples/ampere/rows.py`` with two reductions: the mean, then the
variance of the centred values still in registers (two passes over registers, one over
memory: no cancellation as in ``E[x^2] - E[x]^2``). The two reductions use separate shared
slots, so they need one ``bar.sync`` each and no barrier in between.

    python examples/ampere/layer_norm.py   # ptxas resources + interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/ampere/layer_norm.py
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


def build_layer_norm(cols: int = 64, dtype=f32, *, eps: float = 1e-5, threads_per_row=None,
                     rows_per_cta=None, arch: str = ARCH):
    """LayerNorm over rows of ``cols`` elements of ``dtype`` (f32, bf16 or f16).

    Parameters:
        cols: the row length (at most 8192 with the default plan; see ``rows.plan_rows``).
        dtype: the element type of ``x``, ``w``, ``b`` and ``y``; the statistics are f32.
        eps: added to the variance.
        threads_per_row, rows_per_cta: override the plan.
        arch: the target (``sm_80``; the row pattern needs nothing newer, and
            ``examples.blackwell`` builds the same kernel for ``sm_100a``).

    Inputs ``x: dtype[M, cols]``, ``w: dtype[cols]``, ``b: dtype[cols]``; output ``y:
    dtype[M, cols]``. ``M`` is a shape variable: any positive value, independent.
    """
    plan = plan_rows("build_layer_norm", cols, dtype, threads_per_row, rows_per_cta)

    @kernel(arch=arch, in_specs=(Tile("M", cols, dtype), Tile(cols, dtype), Tile(cols, dtype)),
            out_specs=(Tile("M", cols, dtype),), block=(plan.threads, 1, 1),
            grid=lambda M: plan.grid(M))
    def layer_norm(X, W, B, Y):
        """Y = (X - mean) / sqrt(var + eps) * W + B, row by row."""
        th = RowThread(plan, X.shape[0])
        reduce = RowReducer(plan, th, slots=2)
        xs = load_chunks(th, th.row_address(X))
        mean = reduce(tree_sum(xs), "add") * (1.0 / cols)
        ds = [x - mean for x in xs]
        if plan.ragged:
            # values past the row (loaded as 0) must not add mean**2 to the variance
            ds = _zero_outside(th, ds)
        var = reduce(tree_sum([d * d for d in ds]), "add") * (1.0 / cols)
        r = reg.scalar(f32)
        ptx.inst.rsqrt.approx.ftz.f32(r, var + eps)
        ws = load_chunks(th, th.vector_address(W), row=False)
        bs = load_chunks(th, th.vector_address(B), row=False)
        out = []
        for d, w, b in zip(ds, ws, bs):
            y = reg.scalar(f32)
            ptx.inst.fma.rn.f32(y, d * r, w, b)
            out.append(y)
        store_chunks(th, th.row_address(Y), out)
        ptx.ret()

    layer_norm.plan = plan
    return configure(layer_norm, independent=("M",))


def _zero_outside(th, ds):
    """``d`` where its chunk lies inside the row, else 0 (``selp``)."""
    p = th.plan
    out = []
    for j in range(p.cpt):
        ok = th.chunk_ok[j][1]
        for d in ds[j * p.vec:(j + 1) * p.vec]:
            if ok is None:
                out.append(d)
            else:
                z = reg.scalar(f32)
                ptx.inst.selp.f32(z, d, 0.0, ok)
                out.append(z)
    return out


def reference(x, w, b, eps: float = 1e-5):
    """NumPy LayerNorm in float64."""
    import numpy as np

    x = np.asarray(x, np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * np.asarray(w, np.float64) + np.asarray(b, np.float64)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
