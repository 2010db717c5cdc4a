"""The documentation site: ``mkdocs build --strict`` succeeds (API reference from the
docstrings, figures drawn at build time), and every ``python`` code block of every page runs
(a page's blocks in order, in one process, as a reader would paste them)."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _pages():
    return sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)


def _blocks(page: pathlib.Path) -> list:
    return BLOCK.findall(page.read_text())


def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocstrings")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                        str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-4000:]
    site = tmp_path / "site"
    assert (site / "figures" / "swizzle_128B.png").stat().st_size > 1000
    api = (site / "api" / "kernel" / "index.html").read_text()
    assert "trace with" in api and "Shape variables from arrays" in api   # from docstrings
    guide = (site / "guides" / "fragments" / "index.html").read_text()
    assert "figures/mma_m16n8k16_a_bf16.png" in guide


def test_every_page_is_in_the_nav():
    pytest.importorskip("yaml")
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", ""))["nav"]

    def flat(items):
        for it in items:
            for v in it.values():
                yield from (flat(v) if isinstance(v, list) else [v])
    listed = set(flat(nav))
    pages = {str(p.relative_to(DOCS)) for p in _pages()}
    assert sorted(pages - listed) == []


@pytest.mark.parametrize("page", [p for p in _pages() if _blocks(p)],
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_page_code_blocks_run(page, tmp_path):
    script = "\n\n".join(_blocks(page))
    if re.search(r"^import torch\b", script, re.M):
        pytest.importorskip("torch")        # pages with PyTorch examples (not on Python 3.12)
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"},
                       timeout=300)
    assert r.returncode == 0, f"{page.name}:\n{r.stderr[-4000:]}"
