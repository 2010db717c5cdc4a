"""Pallas (``pl.pallas_call(..., interpret=True)``, the running environment's jax) side of the
peer comparison: the workloads of ``spec`` as Pallas kernels, jitted, timed warm.

Blocks (``spec.PEER_BLOCKS`` by default, the tilings a GPU kernel would use): ``y = x*2+1``
1024 elements per program; RMSNorm and softmax one row per program; GEMM 128 x 128 output
tiles stepping K by 64 into an f32 accumulator (the output block); attention one program per
head and 128 query rows, looping over 128-key blocks with an online softmax (f32), P rounded
to bf16 for ``P V`` as the library kernel does.
"""
from __future__ import annotations

import math

import numpy as np

from . import spec


def available() -> str | None:
    """None when Pallas imports, else why not."""
    try:
        from jax.experimental import pallas  # noqa: F401
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return None


def _axpb(shape, blocks):
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    n = shape["n"]
    (b,) = spec.blocks_for("axpb", shape, blocks)

    def body(x_ref, y_ref):
        y_ref[...] = x_ref[...] * 2.0 + 1.0

    spec_ = pl.BlockSpec((b,), lambda i: (i,))
    return jax.jit(pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((n,), jnp.float32),
                                  grid=(n // b,), in_specs=[spec_], out_specs=spec_,
                                  interpret=True))


def _rows(key, shape, blocks):
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    M, cols = shape["M"], shape["cols"]
    (r,) = spec.blocks_for(key, shape, blocks)
    row = pl.BlockSpec((r, cols), lambda i: (i, 0))
    out = jax.ShapeDtypeStruct((M, cols), jnp.float32)

    if key == "rms_norm":
        def body(x_ref, w_ref, y_ref):
            x = x_ref[...]
            ms = jnp.mean(x * x, axis=-1, keepdims=True)
            y_ref[...] = x * jax.lax.rsqrt(ms + 1e-6) * w_ref[...][None, :]

        in_specs = [row, pl.BlockSpec((cols,), lambda i: (0,))]
    else:
        def body(x_ref, y_ref):
            x = x_ref[...]
            e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
            y_ref[...] = e / jnp.sum(e, axis=-1, keepdims=True)

        in_specs = [row]
    return jax.jit(pl.pallas_call(body, out_shape=out, grid=(M // r,),
                                  in_specs=in_specs, out_specs=row, interpret=True))


def _gemm(shape, blocks):
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    M, N, K = shape["M"], shape["N"], shape["K"]
    bm, bn, bk = spec.blocks_for("gemm", shape, blocks)

    def body(a_ref, b_ref, c_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            c_ref[...] = jnp.zeros_like(c_ref)

        c_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    return jax.jit(pl.pallas_call(
        body, out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32), grid=(M // bm, N // bn, K // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)), interpret=True))


def _attention(shape, blocks):
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    H, S, L, D = shape["H"], shape["S"], shape["L"], shape["D"]
    bq, bk = spec.blocks_for("attention", shape, blocks)
    scale = 1.0 / math.sqrt(D)

    def body(q_ref, k_ref, v_ref, o_ref):
        q = q_ref[0]

        def step(j, carry):
            m, l, acc = carry
            k = k_ref[0, pl.ds(j * bk, bk), :]
            v = v_ref[0, pl.ds(j * bk, bk), :]
            s = jnp.dot(q, k.T, preferred_element_type=jnp.float32) * scale
            m_new = jnp.maximum(m, jnp.max(s, axis=-1))
            p = jnp.exp(s - m_new[:, None])
            alpha = jnp.exp(m - m_new)
            l = l * alpha + jnp.sum(p, axis=-1)
            acc = acc * alpha[:, None] + jnp.dot(p.astype(v.dtype), v,
                                                 preferred_element_type=jnp.float32)
            return m_new, l, acc

        init = (jnp.full((bq,), -jnp.inf, jnp.float32), jnp.zeros((bq,), jnp.float32),
                jnp.zeros((bq, D), jnp.float32))
        _, l, acc = jax.lax.fori_loop(0, L // bk, step, init)
        o_ref[0] = (acc / l[:, None]).astype(o_ref.dtype)

    return jax.jit(pl.pallas_call(
        body, out_shape=jax.ShapeDtypeStruct((H, S, D), jnp.bfloat16), grid=(H, S // bq),
        in_specs=[pl.BlockSpec((1, bq, D), lambda h, i: (h, i, 0)),
                  pl.BlockSpec((1, L, D), lambda h, i: (h, 0, 0)),
                  pl.BlockSpec((1, L, D), lambda h, i: (h, 0, 0))],
        out_specs=pl.BlockSpec((1, bq, D), lambda h, i: (h, i, 0)), interpret=True))


def build(key: str, shape: dict, blocks: dict | None = None):
    """``(jitted function, jax inputs)`` for the workload at ``shape`` (``blocks``: the
    peers' blocks, default ``spec.PEER_BLOCKS``)."""
    import jax.numpy as jnp

    ins = spec.inputs(key, shape)
    if key == "axpb":
        fn = _axpb(shape, blocks)
    elif key in ("rms_norm", "softmax"):
        fn = _rows(key, shape, blocks)
    elif key == "gemm":
        fn = _gemm(shape, blocks)
    elif key == "attention":
        fn = _attention(shape, blocks)
    else:
        raise KeyError(f"unknown workload {key!r}")
    dt = jnp.bfloat16 if key in ("gemm", "attention") else jnp.float32
    return fn, [jnp.asarray(a, dt) for a in ins]


def measure(key: str, shape: dict, reps: int, blocks: dict | None = None) -> dict:
    """Warm seconds (best of ``reps`` after the compiling, checked call) and max |err|."""
    fn, xs = build(key, shape, blocks)
    out = np.asarray(fn(*xs).block_until_ready(), np.float32)
    err = spec.check(key, out, spec.inputs(key, shape), "Pallas interpret")
    t = spec.best_of(lambda: fn(*xs).block_until_ready(), reps, warmup=False)
    return {"workload": key, "shape": shape, "seconds": t, "max_err": err}
