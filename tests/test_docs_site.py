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
    for name in _figure_names():                 # every figure the hook draws is a real PNG
        assert (site / "figures" / f"{name}.png").stat().st_size > 1000, name
    bw = (site / "guides" / "blackwell-tcgen05" / "index.html").read_text()
    assert "figures/tcgen05_ld_16x256b_x1.png" in bw
    viz = (site / "api" / "viz" / "index.html").read_text()
    assert "tcgen05_ld_map" in viz and "wgmma_types" in viz       # API reference of new names


def _figure_names() -> list:
    import importlib.util

    spec = importlib.util.spec_from_file_location("figures_hook", DOCS / "_hooks" / "figures.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return [name for name, _ in hook._figures()]


def test_every_figure_is_shown_and_every_shown_figure_is_drawn():
    drawn = set(_figure_names())
    shown = set()
    for page in _pages():
        shown.update(re.findall(r"\((?:\.\./)?figures/([\w.-]+)\.png\)", page.read_text()))
    assert sorted(drawn - shown) == [] and sorted(shown - drawn) == []
    assert {"tcgen05_ld_32x32b_x2", "wgmma_a_bf16", "swizzle_128B_base32B"} <= drawn


# the public modules of the package, each documented by a ``::: module`` page of docs/api
PUBLIC = ("jax_pyptx.kernel_def", "jax_pyptx.specs", "jax_pyptx.types", "jax_pyptx.dsl.reg",
          "jax_pyptx.dsl.smem", "jax_pyptx.dsl.ptx", "jax_pyptx.text", "jax_pyptx.isa",
          "jax_pyptx.interpret", "jax_pyptx.runtime", "jax_pyptx.viz", "jax_pyptx.perf",
          "jax_pyptx.toolchain", "jax_pyptx.transpile", "jax_pyptx.errors",
          "jax_pyptx.interpret.stats", "jax_pyptx.interpret.state.tensormap",
          "jax_pyptx.example_kernels")


def test_api_reference_covers_the_public_modules():
    documented = set()
    for page in (DOCS / "api").glob("*.md"):
        documented.update(re.findall(r"^::: ([\w.]+)", page.read_text(), re.M))
    missing = [m for m in PUBLIC
               if not any(d == m or d.startswith(m + ".") for d in documented)]
    assert missing == []


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
    if re.search(r"^\s*(import|from) torch\b", script, re.M):
        pytest.importorskip("torch")            # the torch extra is not installed everywhere
    r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"},
                       timeout=300)
    assert r.returncode == 0, f"{page.name}:\n{r.stderr[-4000:]}"
