"""Shared test setup. 8 host devices for the sharding tests (set before jax is imported).

The editable install exposes only ``jax_pyptx`` and ``pyptx``; the tests import ``examples``
(and ``tests``) from the repository root, which is put on ``sys.path`` here, for the test
session only (subprocesses that need it set ``PYTHONPATH`` themselves).
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _cache_dir(tmp_path_factory):
    """A private cubin cache per test session unless CI pins one."""
    if "JAX_PYPTX_CACHE_DIR" not in os.environ:
        os.environ["JAX_PYPTX_CACHE_DIR"] = str(tmp_path_factory.mktemp("cubin-cache"))
    yield
