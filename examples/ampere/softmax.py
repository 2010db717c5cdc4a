"""Row softmax on Ampere (sm_80): ``y = exp(x - max(x)) / sum(exp(x - max(x)))``.

    from examples.ampere.softmax import build_softmax
    k = build_softmax(4096, bf16)
    y = k(x)                         # x: bf16[M, 4096]; any M

The row pattern of ``examples/ampere/rows.py`` with a max reduction, ``ex2.approx.ftz`` of
``(x - max) * log2(e)`` (relative error about 2**-22), a sum reduction and one reciprocal.
Columns past the row's end are loaded as ``-inf`` so they neither win the max nor add to the
sum.

    python examples/ampere/softmax.py   # ptxas resources + interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/ampere/softmax.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.ampere"

import math

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import f32

from . import ARCH
from .rows import RowReducer, RowThread, load_chunks, plan_rows, store_chunks, tree_max, tree_sum

LOG2E = 1.0 / math.log(2.0)


def build_softmax(cols: int = 64, dtype=f32, *, threads_per_row=None, rows_per_cta=None,
                  arch: str = ARCH):
    """Softmax over rows of ``cols`` elements of ``dtype`` (f32, bf16 or f16).

    Parameters:
        cols: the row length (at most 8192 with the default plan; see ``rows.plan_rows``).
        dtype: the element type of ``x`` and ``y``; the arithmetic is f32.
        threads_per_row, rows_per_cta: override the plan.
        arch: the target (``sm_80``; the row pattern needs nothing newer, and
            ``examples.blackwell`` builds the same kernel for ``sm_100a``).

    Input ``x: dtype[M, cols]``, output ``y: dtype[M, cols]``; ``M`` any positive value,
    independent.
    """
    plan = plan_rows("build_softmax", cols, dtype, threads_per_row, rows_per_cta)

    @kernel(arch=arch, in_specs=(Tile("M", cols, dtype),), out_specs=(Tile("M", cols, dtype),),
            block=(plan.threads, 1, 1), grid=lambda M: plan.grid(M))
    def softmax(X, Y):
        """Y = softmax(X) over each row."""
        th = RowThread(plan, X.shape[0])
        reduce = RowReducer(plan, th, slots=2)
        xs = load_chunks(th, th.row_address(X))
        if plan.ragged:
            xs = _neg_inf_outside(th, xs)
        m = reduce(tree_max(xs), "max")
        es = []
        for x in xs:
            e = reg.scalar(f32)
            ptx.inst.ex2.approx.ftz.f32(e, (x - m) * LOG2E)
            es.append(e)
        s = reduce(tree_sum(es), "add")
        inv = reg.scalar(f32)
        ptx.inst.rcp.approx.ftz.f32(inv, s)
        store_chunks(th, th.row_address(Y), [e * inv for e in es])
        ptx.ret()

    softmax.plan = plan
    return configure(softmax, independent=("M",))


def _neg_inf_outside(th, xs):
    p = th.plan
    out = []
    for j in range(p.cpt):
        ok = th.chunk_ok[j][1]
        for x in xs[j * p.vec:(j + 1) * p.vec]:
            if ok is None:
                out.append(x)
            else:
                z = reg.scalar(f32)
                ptx.inst.selp.f32(z, x, float("-inf"), ok)
                out.append(z)
    return out


def reference(x):
    """NumPy softmax over the last dim in float64."""
    import numpy as np

    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
