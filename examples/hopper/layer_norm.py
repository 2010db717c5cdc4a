"""LayerNorm on Hopper: ``y = (x - mean) / sqrt(var + eps) * w + b`` over the last dim.

    from examples.hopper.layer_norm import build_layer_norm
    k = build_layer_norm(4, 64)      # 4 rows per block (one warp each), 64 columns
    y = k(x, w, b)                   # x: f32[M, 64]; w, b: f32[64]
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/hopper/layer_norm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.hopper"

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.runtime.call import configure
from jax_pyptx.types import f32

from . import check_n, lane_address, load, row_lane, store, warp_reduce


def _sum(vals):
    s = vals[0]
    for v in vals[1:]:
        s = s + v
    return s


def build_layer_norm(rows: int = 4, n: int = 64, *, eps: float = 1e-5):
    check_n(n, "build_layer_norm")

    @kernel(arch="sm_90a", in_specs=(Tile("M", n, f32), Tile(n, f32), Tile(n, f32)),
            out_specs=(Tile("M", n, f32),), block=(32 * rows, 1, 1),
            grid=lambda M: (M // rows, 1, 1))
    def layer_norm(X, W, B, Y):
        row, lane = row_lane(rows)
        xs = load(lane_address(X.ptr(), row, lane, n), n)
        mean = warp_reduce(_sum(xs), "add") * (1.0 / n)
        ds = [x - mean for x in xs]                       # two-pass variance: no cancellation
        var = warp_reduce(_sum([d * d for d in ds]), "add") * (1.0 / n)
        r = reg.scalar(f32)
        ptx.inst.rsqrt.approx.f32(r, var + eps)
        ws = load(lane_address(W.ptr(), None, lane, n), n)
        bs = load(lane_address(B.ptr(), None, lane, n), n)
        store(lane_address(Y.ptr(), row, lane, n), [d * r * w + b for d, w, b in zip(ds, ws, bs)])
        ptx.ret()

    return configure(layer_norm, independent=("M",), covers={"M": ("x", rows)})


def reference(x, w, b, eps: float = 1e-5):
    import jax.numpy as jnp

    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * w + b


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np

    k = build_layer_norm(4, 64)
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.standard_normal((8, 64), dtype=np.float32) + 3)
    w = jnp.asarray(rng.standard_normal(64, dtype=np.float32))
    b = jnp.asarray(rng.standard_normal(64, dtype=np.float32))
    ref = reference(x, w, b)
    errs = {"eager": float(jnp.max(jnp.abs(k(x, w, b) - ref))),
            "jit": float(jnp.max(jnp.abs(jax.jit(k)(x, w, b) - ref)))}
    for name, e in errs.items():
        print(f"layer_norm {name:5s} max |err| = {e:.2e}")
    assert all(e < 1e-4 for e in errs.values()), errs
    print("layer_norm OK")


if __name__ == "__main__":
    main()
