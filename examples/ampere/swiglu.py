"""SwiGLU on Ampere (sm_80): ``y = silu(gate) * up = gate * sigmoid(gate) * up``, elementwise.

    from examples.ampere.swiglu import build_swiglu
    k = build_swiglu(bf16)
    y = k(gate, up)                  # gate, up: bf16[M, N]; any M, N

The elementwise pattern: each thread moves one 16-byte chunk of each operand (``ld.global.v4``
of 4 f32 or 8 bf16/f16), computes in f32 (``ex2.approx.ftz`` and ``rcp.approx.ftz`` for the
sigmoid) and stores one chunk. The tensors are flat arrays of ``M * N`` elements here: the
last chunk may be partial (``M * N`` not a multiple of the chunk), and its thread falls back
to predicated scalar loads and stores, element by element.

    python examples/ampere/swiglu.py   # ptxas resources + interpreter check
"""
from __future__ import annotations

if __package__ in (None, ""):   # run as a file: python examples/ampere/swiglu.py
    import os as _os
    import sys as _sys

    _sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.dirname(
        _os.path.abspath(__file__)))))
    __package__ = "examples.ampere"

import math

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.runtime.options import configure
from jax_pyptx.types import b16, b32, f32, u32, u64

from . import ARCH
from .rows import pack2, unpack2

LOG2E = 1.0 / math.log(2.0)


def build_swiglu(dtype=f32, *, threads: int = 256):
    """SwiGLU of two ``dtype`` tensors (f32, bf16 or f16) of the same shape ``[M, N]``.

    Parameters:
        dtype: the element type of ``gate``, ``up`` and ``y``; the arithmetic is f32.
        threads: threads per CTA (a multiple of 32 up to 1024); each handles one 16-byte
            chunk (4 f32 or 8 bf16/f16 elements) of each tensor.

    ``M`` and ``N`` are shape variables (any positive values); ``M`` is independent.
    """
    if dtype.name not in ("f32", "bf16", "f16"):
        raise ValueError(f"build_swiglu: dtype must be f32, bf16 or f16, got {dtype.name}")
    if not isinstance(threads, int) or threads % 32 or not 32 <= threads <= 1024:
        raise ValueError(f"build_swiglu: threads must be a multiple of 32 in 32..1024, got "
                         f"{threads!r}")
    esize = dtype.nbytes
    vec = 16 // esize

    @kernel(arch=ARCH, in_specs=(Tile("M", "N", dtype), Tile("M", "N", dtype)),
            out_specs=(Tile("M", "N", dtype),), block=(threads, 1, 1),
            grid=lambda M, N: (-(-(M * N) // (vec * threads)), 1, 1))
    def swiglu(G, U, Y):
        """Y = silu(G) * U, one 16-byte chunk of each tensor per thread."""
        total = G.shape[0] * G.shape[1]
        full, tail = divmod(total, vec)
        i = reg.from_(ptx.special.ctaid.x(), u32) * threads + ptx.special.tid.x()
        off = reg.cvt(i, u64) * 16
        g_addr, u_addr, y_addr = G.ptr() + off, U.ptr() + off, Y.ptr() + off
        if full:
            with ptx.if_(i < full):
                gs = _load(g_addr, dtype, vec)
                us = _load(u_addr, dtype, vec)
                _store(y_addr, dtype, [_silu(g) * u for g, u in zip(gs, us)])
        if tail:
            with ptx.if_(i == full):            # the last, partial chunk: element by element
                for e in range(tail):
                    g = _load_one(g_addr, dtype, e)
                    u = _load_one(u_addr, dtype, e)
                    _store_one(y_addr, dtype, e, _silu(g) * u)
        ptx.ret()

    swiglu.vec = vec
    return configure(swiglu, independent=("M",))


def _silu(g):
    """``g * sigmoid(g) = g / (1 + exp(-g))``."""
    e = reg.scalar(f32)
    ptx.inst.ex2.approx.ftz.f32(e, g * (-LOG2E))
    r = reg.scalar(f32)
    ptx.inst.rcp.approx.ftz.f32(r, e + 1.0)
    return g * r


def _load(addr, dtype, vec):
    if dtype is f32:
        vals = [reg.scalar(f32) for _ in range(vec)]
        ptx.inst.ld.global_.v4.f32(vals, ptx.addr(addr))
        return vals
    words = [reg.scalar(b32) for _ in range(4)]
    ptx.inst.ld.global_.v4.b32(words, ptx.addr(addr))
    return [v for w in words for v in unpack2(w, dtype)]


def _store(addr, dtype, vals):
    if dtype is f32:
        ptx.inst.st.global_.v4.f32(ptx.addr(addr), vals)
        return
    words = [pack2(vals[2 * i], vals[2 * i + 1], dtype) for i in range(4)]
    ptx.inst.st.global_.v4.b32(ptx.addr(addr), words)


def _load_one(addr, dtype, e):
    v = reg.scalar(f32)
    if dtype is f32:
        ptx.inst.ld.global_.f32(v, ptx.addr(addr, 4 * e))
        return v
    h = reg.scalar(b16)
    ptx.inst.ld.global_.b16(h, ptx.addr(addr, 2 * e))
    getattr(ptx.inst.cvt.f32, dtype.name)(v, h)
    return v


def _store_one(addr, dtype, e, v):
    if dtype is f32:
        ptx.inst.st.global_.f32(ptx.addr(addr, 4 * e), v)
        return
    h = reg.scalar(b16)
    getattr(ptx.inst.cvt.rn, dtype.name).f32(h, v)
    ptx.inst.st.global_.b16(ptx.addr(addr, 2 * e), h)


def reference(gate, up):
    """NumPy SwiGLU in float64."""
    import numpy as np

    g = np.asarray(gate, np.float64)
    return g / (1.0 + np.exp(-g)) * np.asarray(up, np.float64)


if __name__ == "__main__":
    from examples.library import script_main

    raise SystemExit(script_main(__name__, __file__))
