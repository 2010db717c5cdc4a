"""Typing: both packages ship ``py.typed``; ``kernel()``'s options are a real, typed signature
(what an IDE shows); mypy passes on the public modules (pyproject.toml's ``[tool.mypy] files``)
and flags a misspelled or mistyped ``@kernel`` option in user code."""
from __future__ import annotations

import inspect
import pathlib
import subprocess
import sys
import textwrap
import tomllib

import pytest

from jax_pyptx import SpecializationError, kernel, ptx
from jax_pyptx.kernel_def import _KERNEL_OPTIONS, Kernel

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_py_typed_markers():
    assert (ROOT / "jax_pyptx" / "py.typed").is_file()
    assert (ROOT / "pyptx" / "py.typed").is_file()
    assert (ROOT / "pyptx" / "__init__.pyi").is_file()


def test_kernel_signature_lists_every_option_with_type_and_default():
    sig = inspect.signature(kernel)
    params = list(sig.parameters.values())
    assert params[0].name == "fn" and params[0].default is None
    options = [p for p in params if p.kind is p.KEYWORD_ONLY]
    assert tuple(p.name for p in options) == _KERNEL_OPTIONS
    assert all(p.annotation is not inspect.Parameter.empty for p in options)
    init = inspect.signature(Kernel.__init__).parameters
    assert {p.name: p.default for p in options} == {n: init[n].default for n in _KERNEL_OPTIONS}
    assert sig.parameters["arch"].annotation == "str"
    assert sig.parameters["smem"].annotation == "int"
    assert sig.parameters["block"].annotation == "Dim3"
    assert params[-1].kind is params[-1].VAR_KEYWORD          # only to name unknown options


def test_unknown_option_lists_the_options():
    with pytest.raises(SpecializationError) as e:
        kernel(sanitise=True)
    assert str(e.value) == ("kernel(): unknown option 'sanitise'; options: arch, version, "
                            "in_specs, out_specs, grid, block, cluster, smem, raw_params, "
                            "extern_smem, reqntid, raw_directives")


def test_bare_and_called_forms_still_work():
    def noop():
        ptx.ret()

    assert isinstance(kernel(noop), Kernel)
    k = kernel(arch="sm_80", block=128)(noop)
    assert isinstance(k, Kernel) and k.block == (128, 1, 1) and k.arch == "sm_80"


USER = textwrap.dedent('''\
    from pyptx import Tile, kernel, ptx
    from pyptx.types import f32


    @kernel(arch="sm_90a", block=(128, 1, 1), in_specs=(Tile("N", f32),),
            out_specs=(Tile("N", f32),), grid=lambda N: (N // 128,))
    def copy(X, Y):
        ptx.ret()


    def body() -> None:
        ptx.ret()


    reveal_type(copy)
    reveal_type(kernel(body))
    reveal_type(kernel(arch="sm_80"))
    text: str = copy.ptx(N=128)


    @kernel(sanitise=True)
    def misspelled():
        ptx.ret()


    @kernel(block="128")
    def wrong_type():
        ptx.ret()
    ''')


def test_mypy_public_modules_clean_and_user_options_checked(tmp_path):
    pytest.importorskip("mypy")
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert "jax_pyptx/kernel_def.py" in cfg["files"] and "pyptx/__init__.pyi" in cfg["files"]
    user = tmp_path / "user_kernel.py"
    user.write_text(USER)
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
                        "--no-error-summary", "--hide-error-context", *cfg["files"], str(user)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    lines = [ln.replace(str(user), "user_kernel.py") for ln in r.stdout.splitlines()]
    assert lines == [
        'user_kernel.py:15: note: Revealed type is "jax_pyptx.kernel_def.Kernel"',
        'user_kernel.py:16: note: Revealed type is "jax_pyptx.kernel_def.Kernel"',
        'user_kernel.py:17: note: Revealed type is "def (def (*Any, **Any) -> Any) -> '
        'jax_pyptx.kernel_def.Kernel"',
        'user_kernel.py:21: error: Unexpected keyword argument "sanitise" for overloaded '
        'function "kernel"  [call-overload]',
        'user_kernel.py:26: error: Argument "block" to "kernel" has incompatible type "str"; '
        'expected "int | Sequence[int]"  [arg-type]',
    ], r.stdout + r.stderr


def test_tensor_spec_without_shape_says_so():
    from jax_pyptx import TensorSpec

    with pytest.raises(SpecializationError) as e:
        TensorSpec("A").ndim
    assert str(e.value) == ("TensorSpec 'A'.ndim: the tensor has no shape (a raw pointer "
                            "parameter: give the kernel in_specs / out_specs, or "
                            "TensorSpec(name, shape=...))")
    with pytest.raises(SpecializationError, match=r"TensorSpec 'A'.nbytes: the tensor has no "
                                                  r"dtype"):
        TensorSpec("A", shape=(4,)).nbytes
