"""The library's kernels on a real GPU (``pytest -m gpu``; skipped where JAX sees no CUDA
device, e.g. under the tests' default ``JAX_PLATFORMS=cpu``: run them with
``JAX_PLATFORMS=cuda,cpu python -m pytest -m gpu tests/test_kernels_gpu.py``). Values only,
never timings (``benchmarks/kernels.py`` measures)."""
from __future__ import annotations

import numpy as np
import pytest

from examples import proof
from examples.library import entries

LIB = entries()
CASES = [(e, c) for e in LIB for c in e.cases]


def _gpus():
    try:
        import jax

        return [d for d in jax.devices() if d.platform in ("gpu", "cuda")]
    except RuntimeError:
        return []


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _gpus(), reason="no CUDA device visible to JAX")]


@pytest.mark.parametrize("entry,case", CASES, ids=[f"{e.name}:{c.label}" for e, c in CASES])
def test_gpu_matches_reference(entry, case):
    import jax

    k = entry.kernel(**case.build)
    dev = _gpus()[0]
    cc = getattr(dev, "compute_capability", None)
    if not proof.runs_on(k.arch, cc):
        pytest.skip(f"{entry.name} targets {k.arch}; this GPU is compute capability {cc}")
    inputs = proof.make_inputs(entry, k, case.shape)
    out = jax.jit(k)(*[jax.device_put(a, dev) for a in inputs])
    out = np.asarray(out)
    ref = entry.reference(*inputs)
    _, excess = proof.compare(out, ref, proof.allowed_error(entry, inputs, out, ref))
    assert excess <= 1.0, f"{entry.name} {case.label}: error {excess:.2f}x the allowed"
