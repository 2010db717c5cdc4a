"""Issue 22's Triton 3.9 corpus (``corpus_hopper/cases.py``'s ``TRITON39``: sm_80 flash
attention, a histogram and an fp16 scalar param; sm_89 fp8 conversions; sm_90a and sm_100a
persistent matmuls with host and device tensor descriptors, ``warp_specialize=True``, fp8;
sm_100a matmul with and without TMA, attention, and the block-scaled mxfp8, nvfp4 and mixed
fp8 x fp4 matmuls) runs in the interpreter with ``sanitize=True`` and ``sanitize=False`` and
matches NumPy.

Kernels that the hardware runs right but the interpreter stops today carry
``xfail(strict=True, raises=...)`` naming the issue-22 item (``EXPECTED``). The test also
checks that the failure is exactly the recorded one (exception class and message), so any change
shows: a fix makes the case pass (XPASS, strict: a failure; drop its ``EXPECTED`` entry), and a
fix that uncovers the next problem fails with the new exception. The data checks (cases against
their PTX entries and Triton's metadata, ptxas, the validator) are in ``test_corpus_hopper.py``.
"""
from __future__ import annotations

import re

import pytest

from jax_pyptx.errors import (AsyncHazardError, DivergenceError, InterpreterError, RaceError,
                              UninitializedReadError)

from .corpus_hopper import cases as C
from .test_interp_corpus_hopper import run_case

_TCGEN05_LD = (AsyncHazardError, r"that writes it is in flight; tcgen05\.wait::ld must retire it first",
               "issue 22: tcgen05.ld results read before tcgen05.wait::ld")
_TCGEN05_LD_STALE = (AssertionError, r"Mismatched elements",
                     "issue 22: tcgen05.ld results read before tcgen05.wait::ld (sanitize=False: values "
                     "delivered only at the wait, the early reads see stale registers)")
_SAME_VALUE = (RaceError, r"also stored in this same instruction: two warps writing one byte",
               "issue 22: two warps store the same value to the same shared word")
_B8_PARAM = (InterpreterError, r"param 'scale_f16_param_2' is \.b8\[2\]: pass bytes of length 2",
             "issue 22: byte-array parameters (an fp16 scalar is .param .b8 name[2])")
_FP4_MAP = (InterpreterError, r"elemtype b4x16_p64: packed sub-byte element types are not modelled",
            "issue 22: tensor-map types (16U4_ALIGN16B refused and mis-sized)")
_CP_ORDER = (InterpreterError, r"cannot decode this instruction: tcgen05\.cp\.cta_group::1\.warpx4\.32x128b: "
                               r"no form of tcgen05\.cp takes these modifiers",
             "issue 22: modifier orders ptxas accepts (tcgen05.cp .warpx4 before the shape)")

# (case, sanitize) -> (exception class, message regex, reason): how each fails today
EXPECTED = {
    ("histogram_sm80", True): _SAME_VALUE,
    ("scale_f16_sm80", True): _B8_PARAM,
    ("scale_f16_sm80", False): _B8_PARAM,
    ("fp8_convert_sm89", True): (UninitializedReadError,
                                 r"read of uninitialized register %r2: cvt\.rn\.satfinite\.e4m3x2\.f32",
                                 "issue 22: undefined halves that never reach memory"),
    ("matmul_ws_f16_sm90", True): _SAME_VALUE,
    ("attention_fwd_f16_sm100", True): _TCGEN05_LD,
    ("attention_fwd_f16_sm100", False): _TCGEN05_LD_STALE,
    ("matmul_persistent_host_f16_sm100", True): _TCGEN05_LD,
    ("matmul_persistent_host_f16_sm100", False): _TCGEN05_LD_STALE,
    ("matmul_persistent_device_f16_sm100", True): _TCGEN05_LD,
    ("matmul_persistent_device_f16_sm100", False): _TCGEN05_LD_STALE,
    ("matmul_ws_f16_sm100", True): _SAME_VALUE,
    ("matmul_ws_f16_sm100", False): (DivergenceError,
                                     r"warps of a warpgroup execute different setmaxnreg instructions",
                                     "issue 22: setmaxnreg in warp-specialized code; sanitize=False "
                                     "never raises a sanitizer verdict"),
    # not one of issue 22's items: for .kind::mxf8f6f4 a 4-bit operand sits in shared memory
    # as 16-byte chunks of 8 packed bytes and 8 bytes of padding; the threads write only the
    # packed bytes and tcgen05.mma checks the padding for definedness too
    ("matmul_mixed_fp8_fp4_sm100", True): (
        UninitializedReadError,
        r"tcgen05\.mma\.cta_group::1\.kind::mxf8f6f4 \(matrix B\) reads shared address 0x4008 .* "
        r"that no thread or copy of this CTA wrote",
        "tcgen05.mma kind::mxf8f6f4 checks the padding bytes of fp4 operands (hardware ignores them)"),
    ("matmul_mxfp8_tma_sm100", True): _CP_ORDER,
    ("matmul_mxfp8_tma_sm100", False): _CP_ORDER,
    ("matmul_nvfp4_tma_sm100", True): _CP_ORDER,
    ("matmul_nvfp4_tma_sm100", False): _CP_ORDER,
    ("matmul_mixed_fp8_fp4_tma_sm100", True): _FP4_MAP,
    ("matmul_mixed_fp8_fp4_tma_sm100", False): _FP4_MAP,
}


def _params():
    out = []
    for case in C.TRITON39:
        for sanitize in (True, False):
            exp = EXPECTED.get((case.name, sanitize))
            marks = [pytest.mark.xfail(strict=True, raises=exp[0], reason=exp[2])] if exp else []
            out.append(pytest.param(case.name, sanitize, marks=marks,
                                    id=f"{case.name}-{'sanitize' if sanitize else 'nosanitize'}"))
    return out


@pytest.mark.parametrize("name,sanitize", _params())
def test_triton39_case_matches_numpy(name, sanitize):
    exp = EXPECTED.get((name, sanitize))
    try:
        run_case(C.CASE[name], sanitize=sanitize)
    except Exception as e:
        if exp is not None and not (type(e) is exp[0] and re.search(exp[1], str(e))):
            pytest.fail(f"{name} (sanitize={sanitize}): expected {exp[0].__name__} matching {exp[1]!r} "
                        f"({exp[2]}), got {type(e).__name__}: {str(e)[:800]}")
        raise


def test_expected_failures_name_real_cases():
    assert {n for n, _ in EXPECTED} <= set(C.CASE)
    assert {n for n, _ in EXPECTED} <= {c.name for c in C.TRITON39}
