"""What a user checks about the package: the version it reports is the installed one, the
metadata carries a license, classifiers and project URLs, and the changelog has the version."""
from __future__ import annotations

import importlib.metadata as md
import pathlib
import re

import pytest

import jax_pyptx

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _distribution():
    """The installed jax-pyptx distribution; the test skips where the package is imported
    from a source tree without being installed (e.g. the Python 3.12 CI environment)."""
    try:
        return md.distribution("jax-pyptx")
    except md.PackageNotFoundError:
        pytest.skip("jax-pyptx is not installed here (imported from the source tree): no "
                    "distribution metadata to check")


def test_version_is_reported_and_single_sourced():
    assert re.fullmatch(r"\d+\.\d+\.\d+", jax_pyptx.__version__)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject            # read from jax_pyptx/__init__.py
    assert _distribution().version == jax_pyptx.__version__


def test_metadata_license_classifiers_urls():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT"' in text and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Environment :: GPU :: NVIDIA CUDA" in text
    assert "[project.urls]" in text and "Changelog =" in text
    assert _distribution().metadata["Name"] == "jax-pyptx"


def test_changelog_lists_the_version():
    log = (ROOT / "docs" / "changelog.md").read_text()
    assert f"## {jax_pyptx.__version__}" in log
