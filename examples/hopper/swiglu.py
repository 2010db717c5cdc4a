"""SwiGLU on Hopper: ``y = gate * sigmoid(beta * gate) * up``, elementwise.

    from examples.hopper.swiglu import build_swiglu
    k = build_swiglu()
    y = k(gate, up, 1.0)             # gate, up: f32[M, N]; beta: a runtime scalar

``beta`` is a runtime scalar parameter (``.param .f32 beta``): a new value is a new launch
argument, never a new trace. Each thread moves one 16-byte chunk (4 elements) of each tensor
(``ld.global.v4.f32``), 128 threads per block; the sigmoid is ``ex2.approx.ftz`` and
``rcp.approx.ftz`` (the correctly rounded ``rcp.rn`` is a multi-instruction sequence); any
``M x N``: the last, partial chunk's thread goes element by element.
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/hopper/swiglu.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.hopper"

import math

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.runtime.call import configure
from jax_pyptx.types import f32, u32, u64

THREADS = 128
VEC = 4                          # f32 elements of a 16-byte chunk
LOG2E = 1.0 / math.log(2.0)


def build_swiglu(threads: int = THREADS):
    @kernel(arch="sm_90a", in_specs=(Tile("M", "N", f32), Tile("M", "N", f32), f32),
            out_specs=(Tile("M", "N", f32),), block=(threads, 1, 1),
            grid=lambda M, N: (-(-(M * N) // (VEC * threads)), 1, 1))
    def swiglu(G, U, beta, Y):
        tid = reg.from_(ptx.special.tid.x(), u32)
        cta = reg.from_(ptx.special.ctaid.x(), u32)
        i = cta * threads + tid                 # this thread's chunk
        full, tail = divmod(G.shape[0] * G.shape[1], VEC)
        off = reg.cvt(i, u64) * (4 * VEC)
        g_at, u_at, y_at = G.ptr() + off, U.ptr() + off, Y.ptr() + off
        scale = beta * (-LOG2E)                 # exp(-beta * g) = 2^(g * scale)
        if full:
            with ptx.if_(i < full):
                gs, us = [reg.scalar(f32) for _ in range(VEC)], [reg.scalar(f32) for _ in range(VEC)]
                ptx.inst.ld.global_.v4.f32(gs, ptx.addr(g_at))
                ptx.inst.ld.global_.v4.f32(us, ptx.addr(u_at))
                ptx.inst.st.global_.v4.f32(ptx.addr(y_at), [_swish(g, scale) * u for g, u in zip(gs, us)])
        if tail:
            with ptx.if_(i == full):            # the last, partial chunk: element by element
                for e in range(tail):
                    g, u = reg.scalar(f32), reg.scalar(f32)
                    ptx.inst.ld.global_.f32(g, ptx.addr(g_at, 4 * e))
                    ptx.inst.ld.global_.f32(u, ptx.addr(u_at, 4 * e))
                    ptx.inst.st.global_.f32(ptx.addr(y_at, 4 * e), _swish(g, scale) * u)
        ptx.ret()

    return configure(swiglu, independent=("M",))


def _swish(g, scale):
    """``g * sigmoid(beta * g) = g / (1 + 2^(g * scale))`` with ``scale = -beta * log2(e)``."""
    e = reg.scalar(f32)
    ptx.inst.ex2.approx.ftz.f32(e, g * scale)
    r = reg.scalar(f32)
    ptx.inst.rcp.approx.ftz.f32(r, e + 1.0)
    return g * r


def reference(gate, up, beta=1.0):
    import jax

    return gate * jax.nn.sigmoid(beta * gate) * up


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np

    k = build_swiglu()
    rng = np.random.default_rng(3)
    g = jnp.asarray(rng.standard_normal((6, 40), dtype=np.float32) * 2)
    u = jnp.asarray(rng.standard_normal((6, 40), dtype=np.float32))
    errs = {"eager": float(jnp.max(jnp.abs(k(g, u, 1.0) - reference(g, u)))),
            "jit": float(jnp.max(jnp.abs(jax.jit(lambda g, u: k(g, u, 1.5))(g, u) -
                                         reference(g, u, 1.5)))),
            "jit scalar operand": float(jnp.max(jnp.abs(
                jax.jit(k)(g, u, jnp.float32(0.5)) - reference(g, u, 0.5))))}
    for name, e in errs.items():
        print(f"swiglu {name:18s} max |err| = {e:.2e}")
    assert all(e < 1e-5 for e in errs.values()), errs
    print("swiglu OK")


if __name__ == "__main__":
    main()
