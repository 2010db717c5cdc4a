"""The README's python code blocks run verbatim, and its two set-up commands exist."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = open(os.path.join(ROOT, "README.md")).read()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_readme_python_block_runs(i):
    proc = subprocess.run([sys.executable, "-c", BLOCKS[i]], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stderr
    if i == 0:
        assert ".visible .entry tiny()" in proc.stdout and "add.u32" in proc.stdout


def test_readme_has_install_and_test_commands():
    for marker in ("<!-- install -->", "<!-- test -->"):
        block = README.split(marker, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
        assert block.strip()
    assert len(BLOCKS) >= 2


def test_demo_prints_ptx_and_resource_line():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "demo.py")],
                          cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stderr
    assert ".visible .entry saxpy(" in proc.stdout
    assert re.search(r"ptxas [\d.]+: saxpy sm_90a: registers=\d+ spill_stores=0B", proc.stdout)
