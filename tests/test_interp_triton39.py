"""Issue 22's Triton 3.9 corpus (``corpus_hopper/cases.py``'s ``TRITON39``: sm_80 flash
attention, a histogram and an fp16 scalar param; sm_89 fp8 conversions; sm_90a and sm_100a
persistent matmuls with host and device tensor descriptors, ``warp_specialize=True``, fp8;
sm_100a matmul with and without TMA, attention, and the block-scaled mxfp8, nvfp4 and mixed
fp8 x fp4 matmuls) runs in the interpreter with ``sanitize=True`` and ``sanitize=False`` and
matches NumPy.

A kernel that the hardware runs right but the interpreter stops would carry
``xfail(strict=True, raises=...)`` naming why (``EXPECTED``, empty now that issue 22's items are
fixed: tcgen05.ld read before its wait, the same value stored by two warps, LLVM undef halves,
setmaxnreg in warp-specialized code, ``.b8 name[2]`` fp16 params, modifier orders, packed
sub-byte tensor maps). The test also checks that a failure is exactly the recorded one, so a fix
makes the case pass (XPASS, strict: a failure; drop its entry). The data checks (cases against
their PTX entries and Triton's metadata, ptxas, the validator) are in ``test_corpus_hopper.py``.
"""
from __future__ import annotations

import re

import pytest

from .corpus_hopper import cases as C
from .test_interp_corpus_hopper import run_case

# (case, sanitize) -> (exception class, message regex, reason): a case the interpreter still
# stops although hardware runs it right (none: every issue-22 item is fixed)
EXPECTED = {}


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
