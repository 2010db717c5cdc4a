"""The Ampere kernels of the library (``examples/library.py`` explains the entries)."""
from __future__ import annotations

import numpy as np

from jax_pyptx.types import bf16, f16, f32

from ..library import Case, LibraryKernel
from ..proof import SASS
from . import gemm, layer_norm, rms_norm, softmax, swiglu

COLS = 8192                                  # the row kernels' benchmark row length
ROW_SASS = (SASS["ld.global.v4"], SASS["st.global.v4"], SASS["shfl.sync.bfly"])


def _row_cases(extra=()):
    """Rows of 64 (16 rows per CTA on sub-warp segments, the last CTA partly past M), of 1000
    (the last round of chunks partly past the row: predicated), of 8192 (8 warps per row: the
    shared-memory reduction)."""
    return (Case({"M": 37}, {"cols": 64}), Case({"M": 5}, {"cols": 1000}),
            Case({"M": 3}, {"cols": COLS})) + tuple(extra)


def _jnp(name):
    def baseline(*args):
        """The JAX (XLA-fused) computation of the kernel, in the input dtype."""
        import jax
        import jax.numpy as jnp

        x = args[0]
        xf = x.astype(jnp.float32)
        if name == "rms_norm":
            w = args[1].astype(jnp.float32)
            y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-6) * w
        elif name == "layer_norm":
            w, b = (a.astype(jnp.float32) for a in args[1:])
            mean = jnp.mean(xf, axis=-1, keepdims=True)
            var = jnp.mean(jnp.square(xf - mean), axis=-1, keepdims=True)
            y = (xf - mean) * jax.lax.rsqrt(var + 1e-5) * w + b
        elif name == "softmax":
            y = jax.nn.softmax(xf, axis=-1)
        else:                                   # swiglu
            y = jax.nn.silu(xf) * args[1].astype(jnp.float32)
        return y.astype(x.dtype)
    baseline.__name__ = f"jnp_{name}"
    return baseline


def _dot(a, b):
    import jax.numpy as jnp

    return jnp.dot(a, b, preferred_element_type=jnp.float32)


def gemm_tolerance(inputs, ref):
    """Each ``mma.sync`` rounds its f32 result once (the interpreter: one rounding per k16
    step); allow ``2 * K`` roundings of the magnitude ``|A| @ |B|`` (products of bf16/f16
    values are exact in f32)."""
    a, b = (np.abs(np.asarray(x, np.float64)) for x in inputs)
    k = a.shape[1]
    return 2.0 * k * 2.0 ** -24 * (a @ b) + 1e-30


DTYPES = (f32, bf16, f16)
_ROW_BUILDERS = (
    ("rms_norm", rms_norm.build_rms_norm, rms_norm.reference, SASS["rsqrt.approx"]),
    ("layer_norm", layer_norm.build_layer_norm, layer_norm.reference, SASS["rsqrt.approx"]),
    ("softmax", softmax.build_softmax, softmax.reference, SASS["ex2.approx"]))

LIBRARY = []
for _name, _build, _ref, _mufu in _ROW_BUILDERS:
    LIBRARY += [LibraryKernel(
        name=f"ampere/{_name}-{_dt.name}", module=f"examples.ampere.{_name}", builder=_build,
        params={"cols": COLS, "dtype": _dt}, reference=_ref, cases=_row_cases(),
        shape={"M": 8192}, count_shape={"M": 4}, sass=ROW_SASS + (_mufu,),
        page=f"ampere_{_name}.md", baseline=_jnp(_name)) for _dt in DTYPES]
LIBRARY += [LibraryKernel(
    name=f"ampere/swiglu-{_dt.name}", module="examples.ampere.swiglu",
    builder=swiglu.build_swiglu, params={"dtype": _dt}, reference=swiglu.reference,
    cases=(Case({"M": 16, "N": 256}), Case({"M": 7, "N": 33}, note="a partial last chunk"),
           Case({"M": 3, "N": 5}, note="less than one chunk")),
    shape={"M": 8192, "N": 8192}, count_shape={"M": 4, "N": 2048},
    sass=(SASS["ld.global.v4"], SASS["st.global.v4"], SASS["ex2.approx"]),
    page="ampere_swiglu.md", baseline=_jnp("swiglu")) for _dt in DTYPES]
LIBRARY += [LibraryKernel(
    name=f"ampere/gemm-{_dt.name}", module="examples.ampere.gemm",
    builder=gemm.build_gemm, params={"dtype": _dt}, reference=gemm.reference,
    cases=(Case({"M": 256, "N": 256, "K": 64}, note="2 x 2 CTA tiles"),
           Case({"M": 128, "N": 128, "K": 256}, note="8 k tiles: the ring wraps"),
           Case({"M": 200, "N": 136, "K": 72}, note="ragged M, N and K")),
    shape={"M": 8192, "N": 8192, "K": 8192}, count_shape={"M": 128, "N": 128, "K": 64},
    sass=(SASS["mma.sync"], SASS["ldmatrix"], SASS["cp.async"], SASS["cp.async.wait_group"]),
    page="ampere_gemm.md", tolerance=gemm_tolerance, baseline=_dot, rate="flops")
    for _dt in (bf16, f16)]
