"""The Hopper / Blackwell corpus (real Triton 3.9 and nvcc 13.0 PTX: wgmma with and without
TMA, flash attention, tcgen05) runs in the interpreter and matches the NumPy references of
``corpus_hopper/cases.py`` within the hardware's precision."""
from __future__ import annotations

import functools
import os

import numpy as np
import pytest

from jax_pyptx.interpret import launch
from jax_pyptx.interpret.state.tensormap import tensor_map

from .corpus_hopper import cases as C


def host_tensor_map(spec, array):
    """The interpreter's host tensor map for a case's ``cuTensorMapEncodeTiled`` arguments."""
    return tensor_map(array, box=spec.box_dims, dtype=spec.data_type, dims=spec.global_dims,
                      strides=spec.global_strides, element_strides=spec.element_strides,
                      interleave=spec.interleave, swizzle=spec.swizzle, l2_promotion=spec.l2_promotion,
                      oob_fill=spec.oob_fill)


@functools.lru_cache(maxsize=None)
def _ptx(rel):
    with open(os.path.join(C.HERE, rel)) as f:
        return f.read()


def run_case(case, sanitize=True):
    """Launch ``case`` in the interpreter and compare every output with its NumPy reference
    (``np.testing.assert_allclose`` within the case's tolerance; exact ones after rounding the
    reference once to the output's type)."""
    arrays = C.make_arrays(case)
    args = C.param_values(case, arrays, host_tensor_map)
    launch(_ptx(case.ptx), case.entry, args, grid=case.grid, block=case.block, cluster=case.cluster,
           smem=case.smem, sanitize=sanitize)
    ref = case.reference(arrays)
    assert ref
    for out, want in ref.items():
        rtol, atol = case.tolerance[out]
        got = np.asarray(arrays[out], np.float64)
        if rtol == atol == 0:       # exact: the reference rounded once to the output's type
            want = np.asarray(want, np.float64).astype(arrays[out].dtype).astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{case.name}: {out}")


# the Triton 3.9 cases of issue 22 run in test_interp_triton39.py (both sanitize modes, with
# the failures of today marked there)
@pytest.mark.parametrize("name", [c.name for c in C.CASES if c not in C.TRITON39])
def test_corpus_case_matches_numpy(name):
    run_case(C.CASE[name])
