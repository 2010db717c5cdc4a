"""The Hopper kernels of the library (``examples/library.py`` explains the entries).

Tolerances follow the hardware's precision. Products of bf16/f16 values are exact in f32 and
the tensor cores accumulate in f32: each wgmma k16 step rounds once, so a GEMM's result is
within ``2 * K * 2**-24 * (|A| @ |B|)`` of the exact one; a bf16/f16 output adds its rounding
(one unit in the last place: ``2**-8`` / ``2**-11`` relative). Attention adds the rounding of
the probabilities to bf16/f16 before ``P V`` (at most one ulp of each, so ``2**-8 (P @ |V|)``
for bf16) and ``ex2.approx`` (``2**-22`` relative).
"""
from __future__ import annotations

import numpy as np

from jax_pyptx.types import bf16, f16, f32

from ..library import Case, LibraryKernel, grouped_flops, grouped_rows
from ..proof import SASS
from . import attention, gemm, grouped_gemm, layer_norm, rms_norm, softmax, swiglu

ULP = {"f32": 0.0, "bf16": 2.0 ** -8, "f16": 2.0 ** -11}
# the SASS of the sm_90a patterns (nvdisasm 13.5), found once from these kernels:
#   wgmma.mma_async -> HGMMA.64xNx16.F32.BF16; TMA load / store -> UTMALDG / UTMASTG
#   (multicast: UTMALDG.2D.MULTICAST); mbarrier try_wait / arrive(.expect_tx) ->
#   SYNCS.PHASECHK.TRANS64.TRYWAIT / SYNCS.ARRIVE.TRANS64; setmaxnreg.inc / .dec ->
#   USETMAXREG.TRY_ALLOC / USETMAXREG.DEALLOC; barrier.cluster arrive / wait -> UCGABAR_ARV /
#   UCGABAR_WAIT; elect.sync -> ELECT; prefetch.tensormap -> UTMACCTL.PF;
#   fence.proxy.tensormap::generic.acquire -> UTMACCTL.IV; tensormap.cp_fenceproxy -> LDS +
#   ATOMG.E.EXCH.STRONG.GPU (each lane exchanges 4 bytes of the map)
HOPPER_SASS = {"mbarrier.wait": "SYNCS.PHASECHK.TRANS64.TRYWAIT",
               "mbarrier.arrive": "SYNCS.ARRIVE.TRANS64", "setmaxnreg.inc": "USETMAXREG.TRY_ALLOC",
               "setmaxnreg.dec": "USETMAXREG.DEALLOC", "tma.multicast": "UTMALDG.2D.MULTICAST",
               "cluster.arrive": "UCGABAR_ARV", "cluster.wait": "UCGABAR_WAIT",
               "elect.sync": "ELECT", "fence.proxy.tensormap": "UTMACCTL.IV",
               "tensormap.cp_fenceproxy": "ATOMG.E.EXCH"}
PIPELINE_SASS = (SASS["wgmma"], SASS["tma.load"], SASS["tma.store"],
                 HOPPER_SASS["mbarrier.wait"], HOPPER_SASS["mbarrier.arrive"],
                 HOPPER_SASS["setmaxnreg.inc"], HOPPER_SASS["setmaxnreg.dec"],
                 HOPPER_SASS["elect.sync"])


# ----------------------------------------------------------------------------- tolerances
def gemm_tolerance(out_dtype):
    """``2 K 2**-24 (|A| @ |B|)`` (a rounding per k16 step, with margin) plus one ulp of the
    output type."""
    ulp = ULP[out_dtype.name]

    def tol(inputs, ref):
        a, b = (np.abs(np.asarray(x, np.float64)) for x in inputs[:2])
        k = a.shape[-1]
        mag = gemm.reference(a, b) if b.ndim == 2 else grouped_gemm.reference(a, b, inputs[2])
        return 2.0 * k * 2.0 ** -24 * mag + ulp * np.abs(ref) + 1e-30
    tol.__name__ = f"gemm_tolerance_{out_dtype.name}"
    return tol


def attention_tolerance(dtype, causal: bool):
    """One ulp of the output, plus one ulp of every probability (``2**-p (P @ |V|)`` with P
    the exact softmax), plus f32 accumulation and ``ex2.approx``."""
    ulp = ULP[dtype.name]

    def tol(inputs, ref):
        q, k, v = (np.asarray(x, np.float64) for x in inputs)
        p = attention.probabilities(q, k, causal=causal)
        pv = np.einsum("hsl,hld->hsd", p, np.abs(v))
        return ulp * np.abs(ref) + (ulp + 2.0 ** -20) * pv + 1e-6
    tol.__name__ = f"attention_tolerance_{dtype.name}"
    return tol


# ----------------------------------------------------------------------------- inputs
def grouped_inputs(kernel, shape, rng):
    """A: [T, K], B: [G, K, N] normal; group sizes that leave the last rows unused
    (``grouped_rows``) and include an empty group when G > 2."""
    T, K, G, N = shape["T"], shape["K"], shape["G"], shape["N"]
    dt = kernel.config.dtype.np_dtype
    a = rng.standard_normal((T, K)).astype(np.float32).astype(dt)
    b = rng.standard_normal((G, K, N)).astype(np.float32).astype(dt)
    used = grouped_rows(shape)
    cuts = np.sort(rng.integers(0, used + 1, G - 1))
    sizes = np.diff(np.concatenate([[0], cuts, [used]])).astype(np.int32)
    if G > 2:
        sizes[1], sizes[2] = 0, sizes[2] + sizes[1]
    return a, b, sizes


# ----------------------------------------------------------------------------- baselines
def _dot(out_dtype):
    def baseline(a, b):
        """``jnp.dot`` in the output type: on a GPU cuBLAS accumulates in f32 and writes that
        type itself (a separate conversion pass would slow the baseline down)."""
        import jax.numpy as jnp

        return jnp.dot(a, b, preferred_element_type=out_dtype.np_dtype)
    baseline.__name__ = "jnp_dot"
    return baseline


def _ragged_dot(a, b, sizes):
    import jax

    return jax.lax.ragged_dot(a, b, sizes, preferred_element_type=np.float32)


def _sdpa(causal):
    def baseline(q, k, v):
        import jax

        return jax.nn.dot_product_attention(q[None].swapaxes(1, 2), k[None].swapaxes(1, 2),
                                            v[None].swapaxes(1, 2), is_causal=causal
                                            )[0].swapaxes(0, 1)
    baseline.__name__ = "jax_dot_product_attention"
    return baseline


def _row_ref(name):
    def ref(*args):
        x = np.asarray(args[0], np.float64)
        if name == "rms_norm":
            w = np.asarray(args[1], np.float64)
            return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w
        if name == "layer_norm":
            w, b = (np.asarray(a, np.float64) for a in args[1:3])
            mu = x.mean(axis=-1, keepdims=True)
            var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
            return (x - mu) / np.sqrt(var + 1e-5) * w + b
        if name == "softmax":
            e = np.exp(x - x.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        u, beta = np.asarray(args[1], np.float64), float(args[2])
        return x / (1.0 + np.exp(-beta * x)) * u
    ref.__name__ = f"{name}_reference"
    return ref


# ----------------------------------------------------------------------------- entries
ROW = 1024                                    # the row kernels' benchmark row length
LIBRARY = [
    LibraryKernel(
        name=f"hopper/{name}-f32", module=f"examples.hopper.{name}", builder=build,
        params={"rows": 4, "n": ROW}, reference=_row_ref(name),
        cases=(Case({"M": 8}), Case({"M": 12}, {"n": 64})), shape={"M": 8192},
        count_shape={"M": 4}, sass=("LDG.E", "STG.E", SASS["shfl.sync.bfly"], mufu),
        page="hopper_norms.md")
    for name, build, mufu in (("rms_norm", rms_norm.build_rms_norm, SASS["rsqrt.approx"]),
                              ("layer_norm", layer_norm.build_layer_norm, SASS["rsqrt.approx"]),
                              ("softmax", softmax.build_softmax, SASS["ex2.approx"]))]
LIBRARY += [LibraryKernel(
    name="hopper/swiglu-f32", module="examples.hopper.swiglu", builder=swiglu.build_swiglu,
    params={}, reference=_row_ref("swiglu"),
    cases=(Case({"M": 6, "N": 40}), Case({"M": 3, "N": 129}, note="a partial last block")),
    shape={"M": 8192, "N": 8192}, count_shape={"M": 4, "N": 256},
    sass=(SASS["ld.global.v4"], SASS["st.global.v4"], SASS["ex2.approx"], SASS["rcp.approx"]),
    page="hopper_norms.md")]

GEMM_CASES = (
    Case({"M": 256, "N": 256, "K": 256}, {"stages": 2},
         note="2 clusters of 2 CTAs, 4 k tiles on 2 stages: the ring wraps twice"),
    Case({"M": 128, "N": 128, "K": 512},
         note="the default plan: 8 k tiles on 4 stages; the cluster's second CTA is past M"),
    Case({"M": 200, "N": 200, "K": 72}, {"stages": 2}, note="ragged M, N and K"),
    Case({"M": 128, "N": 256, "K": 128}, {"bn": 256, "cluster": 1}, note="m64n256, no cluster"),
    Case({"M": 64, "N": 64, "K": 64}, {"bm": 64, "bn": 64}, note="one consumer warpgroup"),
)
LIBRARY += [LibraryKernel(
    name=f"hopper/gemm-{dt.name}" + ("" if odt is f32 else f"-out-{odt.name}"),
    module="examples.hopper.gemm", builder=gemm.build_gemm,
    params={"dtype": dt, "out_dtype": odt}, reference=gemm.reference, cases=GEMM_CASES,
    shape={"M": 8192, "N": 8192, "K": 8192}, count_shape={"M": 256, "N": 256, "K": 128},
    sass=PIPELINE_SASS + (HOPPER_SASS["tma.multicast"], HOPPER_SASS["cluster.arrive"],
                          HOPPER_SASS["cluster.wait"]),
    page="hopper_gemm.md", tolerance=gemm_tolerance(odt), baseline=_dot(odt), rate="flops")
    for dt, odt in ((bf16, f32), (bf16, bf16), (f16, f16))]

LIBRARY += [LibraryKernel(
    name=f"hopper/grouped_gemm-{dt.name}", module="examples.hopper.grouped_gemm",
    builder=grouped_gemm.build_grouped_gemm, params={"dtype": dt, "out_dtype": odt},
    reference=grouped_gemm.reference_with_workspace,
    cases=(Case({"T": 384, "K": 128, "G": 4, "N": 192}, {"ctas": 3, "stages": 2},
                note="4 groups (one empty), 3 persistent CTAs: several tiles each"),
           Case({"T": 200, "K": 72, "G": 2, "N": 136}, {"ctas": 2},
                note="ragged K and N, groups ending mid-tile")),
    shape={"T": 8192, "K": 4096, "G": 8, "N": 4096},
    count_shape={"T": 512, "K": 128, "G": 4, "N": 256},
    sass=PIPELINE_SASS + (HOPPER_SASS["fence.proxy.tensormap"],
                          HOPPER_SASS["tensormap.cp_fenceproxy"]),
    page="hopper_grouped_gemm.md", inputs=grouped_inputs, tolerance=gemm_tolerance(odt),
    baseline=_ragged_dot, rate="flops", work=grouped_flops)
    for dt, odt in ((bf16, f32), (f16, f16))]

ATTENTION_SASS = PIPELINE_SASS + (SASS["ex2.approx"], SASS["shfl.sync.bfly"])


def _seq(causal, **shape):
    """A shape of the attention kernels: causal ones have one sequence variable, S."""
    if causal:
        shape.pop("L")
    return shape


LIBRARY += [LibraryKernel(
    name=f"hopper/attention{'-causal' if causal else ''}-{dt.name}",
    module="examples.hopper.attention", builder=attention.build_attention,
    params={"dtype": dt, "head_dim": 128, "causal": causal},
    reference=attention.reference_for(causal),
    cases=(Case(_seq(causal, H=2, S=256, L=256), {"bn": 64}, note="2 heads, 2 query tiles"),
           Case(_seq(causal, H=1, S=200, L=200), {"head_dim": 64},
                note="head_dim 64, ragged sequence: masked tail block")),
    shape=_seq(causal, H=32, S=4096, L=4096), count_shape=_seq(causal, H=1, S=256, L=256),
    sass=ATTENTION_SASS, page="hopper_attention.md",
    tolerance=attention_tolerance(dt, causal), baseline=_sdpa(causal), rate="flops")
    for dt, causal in ((bf16, False), (bf16, True), (f16, True))]
