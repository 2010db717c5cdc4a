"""The command line: ``python -m jax_pyptx ptx|sass|resources|run|timeline FILE.py:NAME``
(``jax_pyptx/cli.py``) next to ``transpile``."""
from __future__ import annotations

import json
import os
import pathlib
import re
import textwrap

import pytest

from jax_pyptx.__main__ import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "examples" / "demo.py")

SCALE = textwrap.dedent('''\
    import numpy as np

    from jax_pyptx import Tile, kernel, ptx, reg
    from jax_pyptx.types import f32, u32, u64


    @kernel(in_specs=(Tile("N", f32), f32), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            grid=lambda N: ((N + 31) // 32, 1, 1))
    def scale(X, s, Y, *, bias=0.0):
        i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
        with ptx.if_(i < X.shape[0]):
            off = reg.cvt(i, u64) * 4
            v = reg.scalar(f32)
            ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * s + bias)
        ptx.ret()


    def reference(x, s):
        return np.asarray(x, np.float64) * float(s)


    def wrong(x, s):
        return np.asarray(x, np.float64) * float(s) + 1.0
    ''')


@pytest.fixture
def scale_file(tmp_path):
    f = tmp_path / "scale_kernel.py"
    f.write_text(SCALE)
    return str(f)


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    listed = re.findall(r"^    (\w+)", out, re.M)
    assert listed == ["transpile", "ptx", "sass", "resources", "run", "timeline"]
    assert "interpret on random inputs; compare with the file's reference" in out
    assert out.startswith("usage: jax-pyptx [-h] command ...")


def test_ptx_is_the_traced_ptx(capsys):
    from examples.demo import saxpy

    assert main(["ptx", f"{DEMO}:saxpy", "--arg", "N=256", "--arg", "alpha=3.0"]) == 0
    out = capsys.readouterr().out
    assert out == saxpy.ptx(N=256, alpha=3.0)
    assert "fma.rn.f32 \t%f2, %f0, 0f40400000, %f1;" in out     # alpha = 3.0


def test_resources_is_ptxas_line(capsys):
    from examples.demo import saxpy

    assert main(["resources", f"{DEMO}:saxpy", "--arg", "N=256"]) == 0
    line = capsys.readouterr().out
    assert re.fullmatch(r"saxpy sm_90a N=256: ptxas \d+\.\d+\.\d+: registers=\d+ "
                        r"spill_stores=0B spill_loads=0B stack=0B smem=0B\n", line), line
    assert line.endswith(saxpy.resources(N=256).line() + "\n")


def test_sass_and_its_error_without_nvdisasm(capsys, monkeypatch):
    from jax_pyptx.toolchain import find as tfind

    assert main(["sass", f"{DEMO}:saxpy", "--arg", "N=256"]) == 0
    out = capsys.readouterr().out
    assert "FFMA" in out and "EXIT" in out
    real = tfind._candidates
    monkeypatch.setattr(tfind, "_candidates",
                        lambda name: [] if name == "nvdisasm" else real(name))
    tfind.find_tool.cache_clear()
    try:
        assert main(["sass", f"{DEMO}:saxpy", "--arg", "N=256"]) == 1
    finally:
        monkeypatch.undo()
        tfind.find_tool.cache_clear()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("jax-pyptx sass: ToolchainError: nvdisasm not found on PATH, "
                            "CUDA_HOME or in site-packages; install it with `pip install "
                            "nvidia-cuda-nvdisasm`\n")


def test_run_compares_with_the_files_reference(scale_file, capsys):
    assert main(["run", f"{scale_file}:scale", "--arg", "N=100", "--arg", "s=2.5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"scale sm_90a N=100: interpreter \d+\.\d\d s, sanitizer on", lines[0])
    assert lines[1].startswith("  Y: (100,) float32, min ")
    assert re.fullmatch(r"  Y vs reference: max \|err\| \S+, max \|err\| / allowed 0\.\d\d "
                        r"\(rtol 1e-05, atol 1e-06\): OK", lines[2]), lines[2]
    # a template parameter the reference does not know about: a mismatch, exit status 1
    assert main(["run", f"{scale_file}:scale", "--arg", "N=100", "--arg", "bias=1.0"]) == 1
    assert capsys.readouterr().out.splitlines()[2].endswith(": MISMATCH")
    assert main(["run", f"{scale_file}:scale", "--arg", "N=7", "--reference", "wrong"]) == 1
    assert "Y vs wrong: max |err| 1.00e+00" in capsys.readouterr().out
    assert main(["run", f"{scale_file}:scale", "--arg", "N=7", "--no-reference"]) == 0
    assert "vs" not in capsys.readouterr().out


def test_run_a_builder_of_the_library(capsys):
    f = str(ROOT / "examples" / "ampere" / "softmax.py")
    assert main(["run", f"{f}:build_softmax", "--build", "cols=32", "--arg", "M=3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("softmax sm_80 M=3: interpreter ")
    assert lines[1].startswith("  Y: (3, 32) float32, ")
    assert lines[2].startswith("  Y vs reference: ") and lines[2].endswith(": OK")


def test_run_without_a_reference_says_how_to_give_one(capsys):
    assert main(["run", f"{DEMO}:saxpy", "--arg", "N=64"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "  no reference: define saxpy_reference(*inputs) or reference(*inputs) in the file, "
        "or pass --reference FN")


@pytest.mark.parametrize("argv, message", [
    (["run", f"{DEMO}:saxpy"], "jax-pyptx run: kernel 'saxpy': give every shape variable with "
                               "--arg (missing: N; e.g. --arg N=1024)"),
    (["ptx", DEMO], f"jax-pyptx ptx: {DEMO!r}: expected FILE.py:NAME (a @kernel, or a function "
                    f"returning one), e.g. examples/demo.py:saxpy"),
    (["ptx", f"{DEMO}:saxpi"], f"jax-pyptx ptx: {DEMO} has no 'saxpi'; its kernels: saxpy"),
    (["ptx", "nowhere.py:k"], "jax-pyptx ptx: nowhere.py: no such file"),
    (["ptx", f"{DEMO}:saxpy", "--arg", "N"], "jax-pyptx ptx: --arg 'N': expected NAME=VALUE "
                                             "(e.g. --arg N=1024)"),
    (["ptx", f"{DEMO}:saxpy", "--build", "n=1"], "jax-pyptx ptx: --build is for a function "
     "returning a kernel; saxpy is a kernel (give its parameters with --arg)"),
])
def test_usage_errors(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == message + "\n" and captured.out == ""


def test_timeline_writes_a_trace(scale_file, tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["timeline", f"{scale_file}:scale", "--arg", "N=64", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"  timeline: {out} (open it in ui.perfetto.dev or chrome://tracing)" in text
    assert ": OK" in text
    events = json.loads(out.read_text())["traceEvents"]
    assert any(e.get("ph") == "X" for e in events)


def test_timeline_checks_the_directory_before_running(scale_file, tmp_path, capsys):
    missing = tmp_path / "no" / "t.json"
    assert main(["timeline", f"{scale_file}:scale", "--arg", "N=64", "-o", str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"jax-pyptx timeline: -o {missing}: the directory "
                            f"{os.path.dirname(missing)} does not exist\n")
