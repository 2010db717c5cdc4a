"""SwiGLU on Hopper: ``y = gate * sigmoid(beta * gate) * up``, elementwise.

    from examples.hopper.swiglu import build_swiglu
    k = build_swiglu()
    y = k(gate, up, 1.0)             # gate, up: f32[M, N]; beta: a runtime scalar

``beta`` is a runtime scalar parameter (``.param .f32 beta``): a new value is a new launch
argument, never a new trace. One thread per element, 128 per block; any ``M x N``.
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
LOG2E = 1.0 / math.log(2.0)


def build_swiglu(threads: int = THREADS):
    @kernel(arch="sm_90a", in_specs=(Tile("M", "N", f32), Tile("M", "N", f32), f32),
            out_specs=(Tile("M", "N", f32),), block=(threads, 1, 1),
            grid=lambda M, N: ((M * N + threads - 1) // threads, 1, 1))
    def swiglu(G, U, beta, Y):
        tid = reg.from_(ptx.special.tid.x(), u32)
        cta = reg.from_(ptx.special.ctaid.x(), u32)
        i = cta * threads + tid
        total = G.shape[0] * G.shape[1]
        with ptx.if_(i < total):
            off = reg.cvt(i, u64) * 4
            g, u = reg.scalar(f32), reg.scalar(f32)
            ptx.inst.ld.global_.f32(g, ptx.addr(G.ptr() + off))
            ptx.inst.ld.global_.f32(u, ptx.addr(U.ptr() + off))
            e = reg.scalar(f32)
            ptx.inst.ex2.approx.f32(e, g * beta * (-LOG2E))     # exp(-beta * g)
            sig = reg.scalar(f32)
            ptx.inst.rcp.rn.f32(sig, e + 1.0)
            ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), g * sig * u)
        ptx.ret()

    return configure(swiglu, independent=("M",))


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
