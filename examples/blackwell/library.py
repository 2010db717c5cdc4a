"""The Blackwell kernels of the library (``examples/library.py`` explains the entries).

Tolerances follow the hardware's precision. Products of bf16/f16 values are exact in f32 and
the tensor core accumulates in f32 (the interpreter: exact products summed in float64, one
rounding to f32 per ``tcgen05.mma`` of K = 16), so a GEMM's result is within
``2 * K * 2**-24 * (|A| @ |B|)`` of the exact one; a bf16 / f16 output adds its own rounding
(half a unit in the last place: ``2**-8`` / ``2**-11`` relative). The TMEM round trips of the
suite are exact.
"""
from __future__ import annotations

import numpy as np

from jax_pyptx.types import bf16, f16, f32

from ..ampere.library import COLS, DTYPES, ROW_SASS, _jnp, _row_cases
from ..library import Case, LibraryKernel, grouped_flops
from ..proof import SASS
from . import (
    gemm, gemm_2sm, grouped_gemm, layer_norm, persistent_gemm, rms_norm, softmax,
    tcgen05_suite,
)

# SASS of the sm_100a patterns (nvdisasm 13.5), found once from these kernels:
#   tcgen05.mma.cta_group::2 -> UTCHMMA.2CTA; tcgen05.commit .cta_group::2 .multicast::cluster
#   -> UTCBAR.2CTA.MULTICAST; cp.async.bulk.tensor.2d ... .cta_group::2 -> UTMALDG.2D.2CTA;
#   tcgen05.alloc.cta_group::2 -> UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN (dealloc:
#   UTCATOMSWS.AND); tcgen05.ld/st .16x64b / .16x128b / .16x256b -> LDTM/STTM.16dp64bit /
#   16dp128bit / 16dp256bit, .pack::16b -> LDTM.*.PACK16BIT, .unpack::16b ->
#   STTM.*.EXPAND16BIT; tcgen05.cp .128x256b / .128x128b / .32x128b.warpx4 -> UTCCP.T.S /
#   UTCCP.T.S.128dp128bit / UTCCP.T.S.4x32dp128bit; tcgen05.shift.down -> UTCSHIFT.DOWN;
#   mbarrier try_wait / arrive.expect_tx -> SYNCS.PHASECHK.TRANS64.TRYWAIT /
#   SYNCS.ARRIVE.TRANS64 (remote: .RED); elect.sync -> ELECT; barrier.cluster arrive / wait
#   -> UCGABAR_ARV / UCGABAR_WAIT; the 3-d TMA load -> UTMALDG.3D
BLACKWELL_SASS = {"tcgen05.mma.2cta": "UTCHMMA.2CTA", "tcgen05.commit.multicast":
                  "UTCBAR.2CTA.MULTICAST", "tma.load.2cta": "UTMALDG.2D.2CTA",
                  "tcgen05.alloc.2cta": "UTCATOMSWS.2CTA", "tcgen05.ld.16x64b":
                  "LDTM.16dp64bit", "tcgen05.ld.16x128b": "LDTM.16dp128bit",
                  "tcgen05.ld.16x256b": "LDTM.16dp256bit", "tcgen05.st.16x64b":
                  "STTM.16dp64bit", "tcgen05.st.16x128b": "STTM.16dp128bit",
                  "tcgen05.st.16x256b": "STTM.16dp256bit", "tcgen05.ld.pack16":
                  "LDTM.x32.PACK16BIT", "tcgen05.st.unpack16": "STTM.x32.EXPAND16BIT",
                  "tcgen05.cp.128x128b": "UTCCP.T.S.128dp128bit", "tcgen05.cp.warpx4":
                  "UTCCP.T.S.4x32dp128bit", "tcgen05.shift": "UTCSHIFT.DOWN",
                  "mbarrier.wait": "SYNCS.PHASECHK.TRANS64.TRYWAIT", "mbarrier.arrive":
                  "SYNCS.ARRIVE.TRANS64", "elect.sync": "ELECT", "cluster.arrive":
                  "UCGABAR_ARV", "cluster.wait": "UCGABAR_WAIT", "tma.load.3d": "UTMALDG.3D"}
# what every warp-specialized tcgen05 GEMM depends on
PIPELINE_SASS = (SASS["tcgen05.mma.f16"], SASS["tma.load"], SASS["tcgen05.ld"],
                 SASS["tcgen05.commit"], SASS["tcgen05.alloc"], BLACKWELL_SASS["mbarrier.wait"],
                 BLACKWELL_SASS["mbarrier.arrive"], BLACKWELL_SASS["elect.sync"])
ULP = {"f32": 0.0, "bf16": 2.0 ** -8, "f16": 2.0 ** -11}
GEMM_SHAPE = {"M": 8192, "N": 8192, "K": 8192}


# ----------------------------------------------------------------------------- tolerances
def gemm_tolerance(out_dtype, grouped: bool = False):
    """``2 K 2**-24 (|A| @ |B|)`` (a rounding per K = 16 MMA, with margin) plus half an ulp
    of the output type."""
    ulp = ULP[out_dtype.name]

    def tol(inputs, ref):
        a, b = (np.abs(np.asarray(x, np.float64)) for x in inputs[:2])
        k = a.shape[-1]
        mag = grouped_gemm.reference(a, b, inputs[2]) if grouped else a @ b
        return 2.0 * k * 2.0 ** -24 * mag + ulp * np.abs(ref) + 1e-30
    tol.__name__ = f"gemm_tolerance_{out_dtype.name}"
    return tol


def _dot(out_dtype):
    def baseline(a, b):
        """``jnp.dot`` in the output type: on a GPU cuBLAS accumulates in f32 and writes that
        type itself (a separate conversion pass would slow the baseline down)."""
        import jax.numpy as jnp

        return jnp.dot(a, b, preferred_element_type=out_dtype.np_dtype)
    baseline.__name__ = "jnp_dot"
    return baseline


def _ragged_dot(out_dtype):
    def baseline(a, b, sizes):
        """``jax.lax.ragged_dot`` with f32 accumulation, in the output type."""
        import jax

        return jax.lax.ragged_dot(a, b, sizes, preferred_element_type=np.float32
                                  ).astype(out_dtype.np_dtype)
    baseline.__name__ = "jax_ragged_dot"
    return baseline


def _suffix(dt, odt):
    return dt.name + ("" if odt is f32 else f"-out-{odt.name}")


# ----------------------------------------------------------------------------- row kernels
_ROW_BUILDERS = (
    ("rms_norm", rms_norm.build_rms_norm, rms_norm.reference, SASS["rsqrt.approx"]),
    ("layer_norm", layer_norm.build_layer_norm, layer_norm.reference, SASS["rsqrt.approx"]),
    ("softmax", softmax.build_softmax, softmax.reference, SASS["ex2.approx"]))

LIBRARY = []
for _name, _build, _ref, _mufu in _ROW_BUILDERS:
    LIBRARY += [LibraryKernel(
        name=f"blackwell/{_name}-{_dt.name}", module=f"examples.blackwell.{_name}",
        builder=_build, params={"cols": COLS, "dtype": _dt}, reference=_ref,
        cases=_row_cases(), shape={"M": 8192}, count_shape={"M": 4}, sass=ROW_SASS + (_mufu,),
        page="blackwell_norms.md", baseline=_jnp(_name)) for _dt in DTYPES]

# ----------------------------------------------------------------------------- GEMMs
GEMM_DTYPES = ((bf16, f32), (bf16, bf16), (f16, f16))
_GEMM_CASES = {
    f32: (Case({"M": 256, "N": 256, "K": 256}, {"bn": 128, "stages": 2},
               note="2 x 2 tiles, 4 k tiles on 2 stages: the ring wraps"),
          Case({"M": 128, "N": 256, "K": 64}, note="one 128 x 256 x 64 tile"),
          Case({"M": 200, "N": 136, "K": 72}, note="ragged M, N and K")),
    "narrow": (Case({"M": 200, "N": 136, "K": 72}, note="ragged M, N and K"),
               Case({"M": 128, "N": 128, "K": 128}, {"bn": 64},
                    note="bn = 64: 2 tiles, 2 k tiles")),
}
LIBRARY += [LibraryKernel(
    name=f"blackwell/gemm-{_suffix(dt, odt)}", module="examples.blackwell.gemm",
    builder=gemm.build_gemm, params={"dtype": dt, "out_dtype": odt}, reference=gemm.reference,
    cases=_GEMM_CASES[f32 if odt is f32 else "narrow"], shape=GEMM_SHAPE,
    count_shape={"M": 256, "N": 512, "K": 128},
    sass=PIPELINE_SASS + (SASS["tma.store"],), page="blackwell_gemm.md",
    tolerance=gemm_tolerance(odt), baseline=_dot(odt), rate="flops")
    for dt, odt in GEMM_DTYPES]

LIBRARY += [LibraryKernel(
    name=f"blackwell/persistent_gemm-{_suffix(dt, odt)}",
    module="examples.blackwell.persistent_gemm",
    builder=persistent_gemm.build_persistent_gemm,
    params={"dtype": dt, "out_dtype": odt, "ctas": persistent_gemm.B200_SMS},
    reference=gemm.reference,
    cases=(Case({"M": 520, "N": 200, "K": 72}, {"ctas": 3, "bn": 128},
                note="10 ragged tiles on 3 CTAs: both accumulators reused"),
           Case({"M": 256, "N": 512, "K": 192}, {"ctas": 2, "stages": 2},
                note="4 tiles on 2 CTAs, 3 k tiles on 2 stages")),
    shape=GEMM_SHAPE, count_shape={"M": 256, "N": 512, "K": 128},
    sass=PIPELINE_SASS + (SASS["tma.store"],), page="blackwell_persistent_gemm.md",
    tolerance=gemm_tolerance(odt), baseline=_dot(odt), rate="flops")
    for dt, odt in ((bf16, f32), (bf16, bf16))]

LIBRARY += [LibraryKernel(
    name=f"blackwell/gemm_2sm-{_suffix(dt, odt)}", module="examples.blackwell.gemm_2sm",
    builder=gemm_2sm.build_gemm_2sm, params={"dtype": dt, "out_dtype": odt},
    reference=gemm.reference,
    cases=(Case({"M": 256, "N": 256, "K": 256}, {"stages": 2},
                note="one pair, 4 k tiles on 2 stages"),
           Case({"M": 600, "N": 384, "K": 200}, {"bn": 128},
                note="3 x 3 pair tiles, ragged; the last pair's second CTA is past M")),
    shape=GEMM_SHAPE, count_shape={"M": 512, "N": 512, "K": 128},
    sass=PIPELINE_SASS + (SASS["tma.store"], BLACKWELL_SASS["tcgen05.mma.2cta"],
                          BLACKWELL_SASS["tcgen05.commit.multicast"],
                          BLACKWELL_SASS["tma.load.2cta"], BLACKWELL_SASS["tcgen05.alloc.2cta"],
                          BLACKWELL_SASS["cluster.arrive"], BLACKWELL_SASS["cluster.wait"]),
    page="blackwell_gemm_2sm.md", tolerance=gemm_tolerance(odt), baseline=_dot(odt),
    rate="flops")
    for dt, odt in ((bf16, f32), (f16, f16))]

LIBRARY += [LibraryKernel(
    name=f"blackwell/grouped_gemm-{_suffix(dt, odt)}", module="examples.blackwell.grouped_gemm",
    builder=grouped_gemm.build_grouped_gemm,
    params={"dtype": dt, "out_dtype": odt, "ctas": persistent_gemm.B200_SMS},
    reference=grouped_gemm.reference,
    cases=(Case({"T": 384, "K": 128, "G": 4, "N": 192}, {"ctas": 3},
                note="4 groups (one empty), 3 persistent CTAs, a zero tail"),
           Case({"T": 200, "K": 72, "G": 2, "N": 136}, {"ctas": 2, "bn": 128},
                note="ragged K and N, groups ending mid-tile")),
    shape={"T": 8192, "K": 4096, "G": 8, "N": 4096},
    count_shape={"T": 512, "K": 128, "G": 4, "N": 256},
    sass=PIPELINE_SASS + (BLACKWELL_SASS["tma.load.3d"], SASS["st.global.v4"]),
    page="blackwell_grouped_gemm.md", inputs=grouped_gemm.inputs,
    tolerance=gemm_tolerance(odt, grouped=True), baseline=_ragged_dot(odt), rate="flops",
    work=grouped_flops)
    for dt, odt in ((bf16, f32), (f16, f16))]

# ----------------------------------------------------------------------------- the suite
_TMEM = (SASS["tcgen05.alloc"], SASS["tcgen05.ld"], SASS["tcgen05.st"])
_SUITE = "examples.blackwell.tcgen05_suite"
LIBRARY += [
    LibraryKernel(
        name="blackwell/tcgen05-alloc", module=_SUITE, builder=tcgen05_suite.build_alloc,
        params={"ncols": 32}, reference=tcgen05_suite.identity,
        cases=(Case({}, {"ncols": 32}), Case({}, {"ncols": 512}, note="all of TMEM")),
        shape={}, sass=_TMEM, page="blackwell_tcgen05_suite.md"),
    LibraryKernel(
        name="blackwell/tcgen05-ld", module=_SUITE, builder=tcgen05_suite.build_ld, params={},
        reference=tcgen05_suite.reference_ld,
        cases=(Case({}, note="32x32b, 16x64b, 16x128b, 16x256b"),), shape={},
        sass=_TMEM + tuple(BLACKWELL_SASS[f"tcgen05.ld.{s}"]
                           for s in ("16x64b", "16x128b", "16x256b")),
        page="blackwell_tcgen05_suite.md"),
    LibraryKernel(
        name="blackwell/tcgen05-st", module=_SUITE, builder=tcgen05_suite.build_st, params={},
        reference=tcgen05_suite.reference_st,
        cases=(Case({}, note="32x32b, 16x64b, 16x128b, 16x256b, unpack::16b"),), shape={},
        sass=_TMEM + tuple(BLACKWELL_SASS[f"tcgen05.st.{s}"]
                           for s in ("16x64b", "16x128b", "16x256b", "unpack16")) +
        (BLACKWELL_SASS["tcgen05.ld.pack16"],),
        page="blackwell_tcgen05_suite.md"),
    LibraryKernel(
        name="blackwell/tcgen05-cp", module=_SUITE, builder=tcgen05_suite.build_cp, params={},
        reference=tcgen05_suite.reference_cp,
        cases=(Case({}, note="128x256b, 128x128b, 32x128b.warpx4"),), shape={},
        sass=(SASS["tcgen05.cp"], BLACKWELL_SASS["tcgen05.cp.128x128b"],
              BLACKWELL_SASS["tcgen05.cp.warpx4"], SASS["tcgen05.commit"], SASS["tcgen05.ld"]),
        page="blackwell_tcgen05_suite.md"),
    LibraryKernel(
        name="blackwell/tcgen05-shift", module=_SUITE, builder=tcgen05_suite.build_shift,
        params={}, reference=tcgen05_suite.reference_shift, cases=(Case({}),), shape={},
        sass=(BLACKWELL_SASS["tcgen05.shift"], SASS["tcgen05.commit"]) + _TMEM,
        page="blackwell_tcgen05_suite.md"),
    LibraryKernel(
        name="blackwell/tcgen05-mma", module=_SUITE, builder=tcgen05_suite.build_mma,
        params={"n": 64, "k": 32}, reference=tcgen05_suite.reference_mma,
        cases=(Case({}, {"n": 64, "k": 32}, note="two K = 16 steps: overwrite, accumulate"),
               Case({}, {"n": 256, "k": 16}, note="N = 256"),
               Case({}, {"n": 48, "k": 64, "dtype": f16}, note="f16, N = 48")),
        shape={}, sass=(SASS["tcgen05.mma.f16"], SASS["tcgen05.commit"], SASS["tcgen05.ld"]),
        page="blackwell_tcgen05_suite.md", tolerance=gemm_tolerance(f32), rate="flops"),
]
