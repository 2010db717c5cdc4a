"""RMSNorm on Hopper: ``y = x / sqrt(mean(x**2) + eps) * w``, with a backward kernel.

    from examples.hopper.rms_norm import build_rms_norm
    k = build_rms_norm(4, 64)        # 4 rows per block (one warp each), 64 columns
    out = k(x, w)                    # x: f32[M, 64], w: f32[64]; eager, jit, vmap, shard_map

``M`` (rows) is any multiple of 4; it is independent (sharded ``jit`` splits rows with no
all-gather). ``jax.grad`` runs :func:`build_rms_norm_bwd`'s kernel: it writes ``dx`` and the
per-row terms of ``dw`` (``dy * x * rstd``), summed over rows with ``jnp.sum``.
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/hopper/rms_norm.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.hopper"

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.runtime.call import configure
from jax_pyptx.types import f32

from . import check_n, lane_address, load, row_lane, store, warp_reduce


def _rstd(xs, n: int, eps: float):
    ss = xs[0] * xs[0]
    for v in xs[1:]:
        ss = ss + v * v
    ss = warp_reduce(ss, "add")
    r = reg.scalar(f32)
    ptx.inst.rsqrt.approx.f32(r, ss * (1.0 / n) + eps)
    return r


def build_rms_norm(rows: int = 4, n: int = 64, *, eps: float = 1e-6, backward: bool = True):
    """RMSNorm over the last dim (``n`` columns) for ``Tile("M", n)`` inputs."""
    check_n(n, "build_rms_norm")

    @kernel(arch="sm_90a", in_specs=(Tile("M", n, f32), Tile(n, f32)),
            out_specs=(Tile("M", n, f32),), block=(32 * rows, 1, 1),
            grid=lambda M: (M // rows, 1, 1))
    def rms_norm(X, W, Y):
        row, lane = row_lane(rows)
        xa = lane_address(X.ptr(), row, lane, n)
        xs = load(xa, n)
        ws = load(lane_address(W.ptr(), None, lane, n), n)
        r = _rstd(xs, n, eps)
        store(lane_address(Y.ptr(), row, lane, n), [x * r * w for x, w in zip(xs, ws)])
        ptx.ret()

    configure(rms_norm, independent=("M",), covers={"M": ("x", rows)})
    if backward:
        bwd = build_rms_norm_bwd(rows, n, eps=eps)

        def rms_norm_vjp(x, w, dy):
            dx, dw_rows = bwd(x, w, dy)
            return dx, dw_rows.sum(axis=0)

        configure(rms_norm, backward=rms_norm_vjp)
    return rms_norm


def build_rms_norm_bwd(rows: int = 4, n: int = 64, *, eps: float = 1e-6):
    """(x, w, dy) -> (dx, dy * x * rstd): dx of RMSNorm and the per-row terms of dw."""
    check_n(n, "build_rms_norm_bwd")

    @kernel(arch="sm_90a", in_specs=(Tile("M", n, f32), Tile(n, f32), Tile("M", n, f32)),
            out_specs=(Tile("M", n, f32), Tile("M", n, f32)), block=(32 * rows, 1, 1),
            grid=lambda M: (M // rows, 1, 1))
    def rms_norm_bwd(X, W, DY, DX, DWR):
        row, lane = row_lane(rows)
        xs = load(lane_address(X.ptr(), row, lane, n), n)
        dys = load(lane_address(DY.ptr(), row, lane, n), n)
        ws = load(lane_address(W.ptr(), None, lane, n), n)
        r = _rstd(xs, n, eps)
        xhat = [x * r for x in xs]
        g = [dy * w for dy, w in zip(dys, ws)]            # d loss / d xhat
        dot = g[0] * xhat[0]
        for a, b in zip(g[1:], xhat[1:]):
            dot = dot + a * b
        mean = warp_reduce(dot, "add") * (1.0 / n)
        dx = [(a - h * mean) * r for a, h in zip(g, xhat)]
        store(lane_address(DX.ptr(), row, lane, n), dx)
        store(lane_address(DWR.ptr(), row, lane, n), [dy * h for dy, h in zip(dys, xhat)])
        ptx.ret()

    configure(rms_norm_bwd, independent=("M",), covers={"M": ("x", rows)})
    return rms_norm_bwd


def reference(x, w, eps: float = 1e-6):
    import jax.numpy as jnp

    return x * jax_rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * w


def jax_rsqrt(v):
    import jax

    return jax.lax.rsqrt(v)


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np

    k = build_rms_norm(4, 64)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((8, 64), dtype=np.float32))
    w = jnp.asarray(rng.standard_normal(64, dtype=np.float32))
    ref = reference(x, w)
    out = k(x, w)
    jitted = jax.jit(k)(x, w)
    loss = lambda f: (lambda x, w: jnp.sum(f(x, w) * jnp.cos(x)))
    g = jax.grad(loss(k), argnums=(0, 1))(x, w)
    g_ref = jax.grad(loss(reference), argnums=(0, 1))(x, w)
    errs = {"eager": float(jnp.max(jnp.abs(out - ref))),
            "jit": float(jnp.max(jnp.abs(jitted - ref))),
            "grad x": float(jnp.max(jnp.abs(g[0] - g_ref[0]))),
            "grad w": float(jnp.max(jnp.abs(g[1] - g_ref[1])))}
    for name, e in errs.items():
        print(f"rms_norm {name:7s} max |err| = {e:.2e}")
    assert all(e < 1e-4 for e in errs.values()), errs
    print("rms_norm OK")


if __name__ == "__main__":
    main()
