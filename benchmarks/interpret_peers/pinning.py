"""BLAS, OpenMP and XLA on one thread for every measuring process of the peer table. Imports
nothing heavy: ``benchmarks/interpret.py`` calls ``pin_threads()`` before NumPy loads (OpenBLAS
reads its thread count when it loads), and ``pinned_in_time()`` says whether that held."""
from __future__ import annotations

import os
import sys

PINNED_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}

_LOADED_FIRST: list = []          # the libraries already imported when this process pinned


def pin_threads(env=None) -> dict:
    """``env`` (default ``os.environ``, then also noting whether NumPy or jax had loaded
    already) with ``PINNED_ENV`` set (``XLA_FLAGS`` appended to)."""
    if env is None:
        env = os.environ
        _LOADED_FIRST[:] = [m for m in ("numpy", "jax", "torch") if m in sys.modules] or [""]
    for k, v in PINNED_ENV.items():
        if k != "XLA_FLAGS" or not env.get(k):
            env[k] = v
        elif v not in env[k]:
            env[k] = env[k] + " " + v
    return env


def pinned_in_time() -> bool:
    """True when this process set ``PINNED_ENV`` before NumPy, jax and torch loaded (or they
    were set by whoever started it)."""
    if _LOADED_FIRST:
        return _LOADED_FIRST == [""]
    return all(v in os.environ.get(k, "") for k, v in PINNED_ENV.items())
