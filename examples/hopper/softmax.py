"""Row softmax on Hopper: ``y = exp(x - max(x)) / sum(exp(x - max(x)))`` over the last dim.

    from examples.hopper.softmax import build_softmax
    k = build_softmax(4, 64)         # 4 rows per block (one warp each), 64 columns
    y = k(x)                         # x: f32[M, 64]

``exp`` is ``ex2.approx`` of ``x * log2(e)`` (relative error about 2**-22).
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/hopper/softmax.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.hopper"

import math

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.runtime.call import configure
from jax_pyptx.types import f32

from . import check_n, lane_address, load, row_lane, store, warp_reduce

LOG2E = 1.0 / math.log(2.0)


def exp(v):
    e = reg.scalar(f32)
    ptx.inst.ex2.approx.f32(e, v * LOG2E)
    return e


def build_softmax(rows: int = 4, n: int = 64):
    check_n(n, "build_softmax")

    @kernel(arch="sm_90a", in_specs=(Tile("M", n, f32),), out_specs=(Tile("M", n, f32),),
            block=(32 * rows, 1, 1), grid=lambda M: (M // rows, 1, 1))
    def softmax(X, Y):
        row, lane = row_lane(rows)
        xs = load(lane_address(X.ptr(), row, lane, n), n)
        m = xs[0]
        for v in xs[1:]:
            mm = reg.scalar(f32)
            ptx.inst.max.f32(mm, m, v)
            m = mm
        m = warp_reduce(m, "max")
        es = [exp(v - m) for v in xs]
        s = es[0]
        for e in es[1:]:
            s = s + e
        s = warp_reduce(s, "add")
        inv = reg.scalar(f32)
        ptx.inst.rcp.rn.f32(inv, s)
        store(lane_address(Y.ptr(), row, lane, n), [e * inv for e in es])
        ptx.ret()

    return configure(softmax, independent=("M",), covers={"M": ("x", rows)})


def reference(x):
    import jax

    return jax.nn.softmax(x, axis=-1)


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np

    k = build_softmax(4, 64)
    x = jnp.asarray(np.random.default_rng(1).standard_normal((8, 64), dtype=np.float32) * 3)
    ref = reference(x)
    errs = {"eager": float(jnp.max(jnp.abs(k(x) - ref))),
            "jit": float(jnp.max(jnp.abs(jax.jit(k)(x) - ref))),
            "vmap": float(jnp.max(jnp.abs(jax.vmap(k)(jnp.stack([x, -x])) -
                                          jnp.stack([ref, reference(-x)]))))}
    for name, e in errs.items():
        print(f"softmax {name:6s} max |err| = {e:.2e}")
    assert all(e < 1e-5 for e in errs.values()), errs
    print("softmax OK")


if __name__ == "__main__":
    main()
