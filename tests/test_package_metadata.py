"""What a user checks about the package: the version it reports is the installed one, the
metadata carries a license, classifiers and project URLs, and the changelog has the version."""
from __future__ import annotations

import importlib.metadata as md
import pathlib
import re

import jax_pyptx

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_version_is_reported_and_single_sourced():
    assert re.fullmatch(r"\d+\.\d+\.\d+", jax_pyptx.__version__)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject            # read from jax_pyptx/__init__.py
    assert md.version("jax-pyptx") == jax_pyptx.__version__


def test_metadata_license_classifiers_urls():
    meta = md.metadata("jax-pyptx")
    text = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT"' in text and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Environment :: GPU :: NVIDIA CUDA" in text
    assert "[project.urls]" in text and "Changelog =" in text
    assert meta["Name"] == "jax-pyptx"


def test_changelog_lists_the_version():
    log = (ROOT / "docs" / "changelog.md").read_text()
    assert f"## {jax_pyptx.__version__}" in log
