"""What an install exposes: only the packages (``jax_pyptx``, ``pyptx``), never the repository
root, so ``import tests`` / ``import examples`` / ``import benchmarks`` do not resolve from any
directory; the test session imports ``examples`` through tests/conftest.py instead."""
from __future__ import annotations

import base64
import glob
import hashlib
import os
import pathlib
import site
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "build_support"))
import pth_filter  # noqa: E402

sys.path.remove(str(ROOT / "build_support"))


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_pth_filter_keeps_the_finder_import_and_drops_directories(tmp_path):
    pth = b"import _editable_skbc_jax_pyptx\n/src/repo\n/src/repo\n"
    mod = b"x = 1\n"
    record = (f"_editable_skbc_jax_pyptx.pth,{_hash(pth)},{len(pth)}\n"
              f"_editable_skbc_jax_pyptx.py,{_hash(mod)},{len(mod)}\n"
              "jax_pyptx-0.1.0.dist-info/RECORD,,\n").encode()
    whl = tmp_path / "jax_pyptx-0.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("_editable_skbc_jax_pyptx.pth", pth)
        z.writestr("_editable_skbc_jax_pyptx.py", mod)
        z.writestr("jax_pyptx-0.1.0.dist-info/RECORD", record)
    assert pth_filter.strip_editable_paths(str(whl)) == ["/src/repo", "/src/repo"]
    with zipfile.ZipFile(whl) as z:
        new_pth = z.read("_editable_skbc_jax_pyptx.pth")
        rows = z.read("jax_pyptx-0.1.0.dist-info/RECORD").decode().splitlines()
        assert z.read("_editable_skbc_jax_pyptx.py") == mod
    assert new_pth == b"import _editable_skbc_jax_pyptx\n"
    assert rows == [f"_editable_skbc_jax_pyptx.pth,{_hash(new_pth)},{len(new_pth)}",
                    f"_editable_skbc_jax_pyptx.py,{_hash(mod)},{len(mod)}",
                    "jax_pyptx-0.1.0.dist-info/RECORD,,"]
    # a .pth without a finder import is all the install has: left as it is
    assert pth_filter.packages_only_pth("/src/repo\n") == "/src/repo\n"
    assert pth_filter.strip_editable_paths(str(whl)) == []


def test_pyproject_builds_through_the_filtering_backend():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'build-backend = "editable_backend"' in text
    assert 'backend-path = ["build_support"]' in text
    assert 'wheel.packages = ["jax_pyptx", "pyptx"]' in text


def _editable_pth():
    dirs = site.getsitepackages() + [site.getusersitepackages()]
    found = [p for d in dirs for p in glob.glob(os.path.join(d, "*jax_pyptx*.pth"))]
    if not found:
        pytest.skip("jax-pyptx is not installed editable in this environment")
    return pathlib.Path(found[0])


def test_editable_install_puts_no_directory_on_sys_path(tmp_path):
    lines = [ln for ln in _editable_pth().read_text().splitlines() if ln.strip()]
    assert lines and all(ln.startswith("import ") for ln in lines), lines
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = ("import importlib, jax_pyptx, pyptx\n"
             "print(jax_pyptx.__file__)\n"
             "for name in ('tests', 'examples', 'benchmarks'):\n"
             "    try:\n"
             "        importlib.import_module(name)\n"
             "    except ModuleNotFoundError as e:\n"
             "        print(e)\n"
             "    else:\n"
             "        print('imported', name)\n")
    r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(ROOT / "jax_pyptx" / "__init__.py"),
                                     "No module named 'tests'",
                                     "No module named 'examples'",
                                     "No module named 'benchmarks'"]


def test_the_test_session_imports_examples_from_the_root():
    import examples
    from examples import proof

    assert pathlib.Path(examples.__file__) == ROOT / "examples" / "__init__.py"
    assert pathlib.Path(proof.__file__) == ROOT / "examples" / "proof.py"
    assert str(ROOT) in sys.path
