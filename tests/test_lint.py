"""ruff over the repository (configured in pyproject.toml: pyflakes, pycodestyle errors and
statements, unused ``# noqa`` markers): a finding fails the test with ruff's report."""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _ruff():
    exe = shutil.which("ruff") or str(pathlib.Path(sys.executable).with_name("ruff"))
    if not pathlib.Path(exe).exists():
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    return exe


def test_ruff_finds_nothing():
    r = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_reports_what_it_is_configured_to(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os  # noqa: E501\nx = undefined_name\n")
    r = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise",
                        "--config", str(ROOT / "pyproject.toml"), str(bad)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "F401" in r.stdout and "F821" in r.stdout and "RUF100" in r.stdout
