"""``benchmarks/gpu_proof.sh --dry-run`` (the GPU run's steps up to the first GPU call, on the
CPU) and the pieces of ``benchmarks/kernels.py`` / ``benchmarks/gpu_proof.py`` it relies on,
so that a broken script never costs GPU time.

The dry run here skips the install (the package is installed already: the README's
``pip install -e .``) and benchmarks three entries; its output folder must hold what the GPU
run's does, within the device machine's limits (at most 8 files, flat, plain names).
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "gpu_proof.sh")
BENCH = ("hopper/gemm-bf16-out-bf16", "hopper/attention-bf16", "ampere/rms_norm-f32")
DRY_STEPS = ["env", "install", "ffi", "collect", "pytest", "pytest-cpu", "bench",
             "sanitize-prog"]
FILES = {"summary.txt", "figures.json", "setup.log", "pytest_gpu.xml", "pytest_gpu.log",
         "bench.log", "sanitizer.log"}


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_bench_{name}",
                                                  os.path.join(ROOT, "benchmarks", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


kernels = _load("kernels")
gpu_proof = _load("gpu_proof")


def _ffi_built() -> bool:
    from jax_pyptx.runtime import ffi_bridge

    return ffi_bridge.available()


@pytest.fixture(scope="module")
def dry(tmp_path_factory):
    """The dry run's output folder, exit status and printed output."""
    if not (shutil.which("bash") and shutil.which("timeout")):
        pytest.skip("bash and coreutils' timeout are needed")
    if not _ffi_built():
        pytest.skip("jax_pyptx._ffi is not built (pip install -e .)")
    out = tmp_path_factory.mktemp("gpu_proof_out")
    env = dict(os.environ, PYTHON=sys.executable)
    env.pop("OUT", None)
    r = subprocess.run(["bash", SCRIPT, "--dry-run", "--skip-install", "--out", str(out),
                        "--bench", " ".join(BENCH), "--tests-k",
                        "(hopper/rms_norm-f32 and (eager or vmap)) or grad"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    return out, r.returncode, r.stdout + r.stderr


def test_dry_run_passes_and_writes_the_files(dry):
    out, rc, text = dry
    assert rc == 0, text
    names = set(os.listdir(out))
    assert names == FILES, text                      # no first_failure.log: nothing failed
    assert len(names) <= 8
    for n in names:
        p = out / n
        assert p.is_file() and re.fullmatch(r"[A-Za-z0-9._-]+", n)
        assert 0 < p.stat().st_size < 16 << 20


def test_summary_lists_every_step(dry):
    out, _, _ = dry
    text = (out / "summary.txt").read_text()
    assert "mode: dry-run" in text
    rows = {m.group(1): m.group(2) for m in
            re.finditer(r"^(\S+)\s+(ok|skipped|failed rc=\d+|timeout \d+s)\s+[\d.]+\s+\S+$",
                        text, re.M)}
    assert list(rows) == DRY_STEPS + [
        "sanitizer-version" if shutil.which("compute-sanitizer") else "sanitizer",
        "sweep", "once", "ncu-version" if shutil.which("ncu") else "ncu"]
    assert rows["install"] == "skipped"
    assert all(rows[s] == "ok" for s in DRY_STEPS + ["sweep", "once"] if s != "install")
    assert text.rstrip().endswith("failed steps: none")


def test_bench_log_has_the_gemm_plans_and_the_calls_ncu_times(dry):
    out, _, _ = dry
    text = (out / "bench.log").read_text()
    for plan in ("default", "bn256-s4-c2", "persistent-bn128-s4"):   # built, ptxas, lowered
        assert re.search(rf"^{plan} -> f32 +\d+ KiB smem, 0 spill bytes; lowered; "
                         rf"interpreter 256\^3 ok", text, re.M)
    for name in ("hopper/rms_norm-f32 M=8192", "hopper/grouped_gemm-bf16 T=8192 K=4096 G=8 "
                 "N=4096", "ampere/rms_norm-f32"):
        assert re.search(rf"^{re.escape(name)}.*: lowered for CUDA$", text, re.M), name
    assert re.search(r"^copy: 1 GiB of f32 lowered for CUDA$", text, re.M)


def test_figures_json_has_the_roofline_and_every_lowering(dry):
    out, _, _ = dry
    fig = json.loads((out / "figures.json").read_text())
    assert (fig["mode"], fig["gpu_model"]) == ("dry-run", "H200")
    assert [s["step"] for s in fig["steps"]][:len(DRY_STEPS)] == DRY_STEPS
    h200 = {r["entry"]: r for r in fig["roofline"] if r["device"] == "H200 SXM"}
    assert set(h200) == set(BENCH)
    rms = h200["ampere/rms_norm-f32"]                # memory-bound: unique bytes / 4.8 TB/s
    assert rms["bound"] == "memory"
    assert rms["t_mem_s"] == pytest.approx(rms["unique_bytes"] / 4800e9, rel=1e-3)
    assert rms["unique_bytes"] >= 2 * 8192 * 8192 * 4      # x read once, y written once
    rows = {(r["entry"], r["impl"]): r for r in fig["gpu"]}
    for name in BENCH:
        k = rows[(name, "kernel")]
        assert k["lowered"] is True and k["custom_calls"] == 1, k
        assert k["roofline_s"] == pytest.approx(h200[name]["time_s"])
        assert "seconds" not in k                          # nothing timed in a dry run
    assert rows[("hopper/gemm-bf16-out-bf16", "jnp_dot")]["lowered"] is True
    assert rows[("hopper/attention-bf16", "dot_product_attention[xla]")]["lowered"] is True
    assert {"dot_product_attention[cudnn]", "dot_product_attention[xla]"} <= {
        impl for (e, impl) in rows if e == "hopper/attention-bf16"}
    assert fig["ceilings"] == {"copy_gbs": None, "bf16_dot_tflops": None}


def test_pytest_gpu_collects_and_skips_cleanly(dry):
    out, _, _ = dry
    suite = ET.parse(out / "pytest_gpu.xml").getroot().find("testsuite")
    n = int(suite.get("tests"))
    assert n > 100 and suite.get("failures") == "0" and suite.get("errors") == "0"
    assert int(suite.get("skipped")) == n               # no GPU here: every one skips
    log = (out / "pytest_gpu.log").read_text()
    assert re.search(rf"^{n} tests collected", log, re.M), log[-2000:]
    cpu = log[log.index("=== pytest-cpu"):]               # a few run on the CPU instead
    m = re.search(r"(\d+) passed", cpu)
    assert m and int(m.group(1)) >= 3 and " failed" not in cpu, cpu[-2000:]


def test_setup_and_sanitizer_logs(dry):
    out, _, _ = dry
    setup = (out / "setup.log").read_text()
    assert "jax_pyptx._ffi: " in setup and "libcuda driver table: " in setup
    assert re.search(r"^jax: \d", setup, re.M)
    san = (out / "sanitizer.log").read_text()
    for name in ("hopper/gemm-bf16", "hopper/attention-bf16"):
        assert re.search(rf"^{re.escape(name)} .*: lowered for CUDA \(1 launch\)$", san, re.M)


# ----------------------------------------------------------------------------- pieces
def test_finalize_reports_the_first_failure(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir(), out.mkdir()
    (work / "env.txt").write_text("gpu: NVIDIA H200, 580.159.04\n")
    (work / "pytest.log").write_text("1 failed, 3 passed\n")
    (work / "bench.log").write_text("Traceback: boom\n")
    (out / "pytest_gpu.xml").write_text(
        '<testsuites><testsuite tests="2"><testcase classname="t" name="ok"/>'
        '<testcase classname="tests.test_kernels_gpu" name="test_gpu_vmap[x]">'
        '<failure message="AssertionError: 3.1x the allowed">full traceback</failure>'
        '</testcase></testsuite></testsuites>')
    (out / "figures.json").write_text(json.dumps({"gpu": [
        {"entry": "hopper/gemm-bf16", "impl": "kernel", "unit": "TFLOP/s", "rate": 701.5,
         "seconds": 1.567e-3, "vs_baseline": 0.93, "vs_roofline": 0.63}]}))
    (work / "steps.tsv").write_text(
        f"env\tok\t0.5\t{work}/env.log\tsetup.log\n"
        f"pytest\tfailed rc=1\t100.0\t{work}/pytest.log\tpytest_gpu.log\n"
        f"bench\ttimeout 130s\t130.0\t{work}/bench.log\tbench.log\n"
        f"memcheck\trefused\t3.0\t{work}/m.log\tsanitizer.log\n")
    assert gpu_proof.finalize(str(work / "steps.tsv"), str(out)) == 1
    first = (out / "first_failure.log").read_text()
    assert first.startswith("first failed step: pytest (failed rc=1)")
    assert "tests.test_kernels_gpu::test_gpu_vmap[x] (failure)" in first
    assert "AssertionError: 3.1x the allowed\n\nfull traceback" in first
    assert "1 failed, 3 passed" in first and "boom" not in first
    summary = (out / "summary.txt").read_text()
    assert "gpu: NVIDIA H200, 580.159.04" in summary
    assert "hopper/gemm-bf16 kernel: 701.5 TFLOP/s, 1567.0 us, vs_baseline 0.93, " \
           "vs_roofline 0.63" in summary
    assert summary.rstrip().endswith("failed steps: pytest, bench")   # refused is not failed
    fig = json.loads((out / "figures.json").read_text())
    assert [(s["step"], s["status"], s["file"]) for s in fig["steps"]][-1] == \
        ("memcheck", "refused", "sanitizer.log")
    assert fig["gpu"][0]["rate"] == 701.5


def test_measure_entry_times_kernel_and_baseline_on_any_backend():
    """The GPU run's timing path, on the CPU backend at a small shape (the interpreter runs
    the kernel): figures are consistent with the counted work and each other."""
    from examples.library import get

    e = dataclasses.replace(get("hopper/rms_norm-f32"), shape={"M": 8})
    kern, base = kernels.measure_entry(e, "H200")
    assert (kern["impl"], base["impl"]) == ("kernel", "xla_rms_norm")
    for r in (kern, base):
        assert r["seconds"] > 0 and r["sets"] >= 2 and r["min_s"] <= r["seconds"] <= r["max_s"]
        assert r["rate"] == pytest.approx(r["work"] / r["seconds"] / 1e9)
    assert kern["work"] >= 2 * 8 * 1024 * 4                 # x in, y out, f32
    assert kern["vs_baseline"] == pytest.approx(base["seconds"] / kern["seconds"])
    assert kern["vs_roofline"] == pytest.approx(kern["roofline_s"] / kern["seconds"])
    assert kern["best_baseline"] == "xla_rms_norm"


def test_measure_entry_counts_a_grouped_gemms_work_from_its_group_sizes():
    """The roofline's power laws, fitted at small shapes, cannot know data-dependent work
    (the H200 run reported 2831 TFLOP/s for the grouped GEMM): ``work`` counts
    ``2 sum(sizes) K N``, and the roofline's time is scaled to it."""
    from examples.library import get
    from examples.proof import counts_roofline, make_inputs

    e = dataclasses.replace(get("hopper/grouped_gemm-bf16"),
                            shape={"T": 256, "K": 128, "G": 4, "N": 128})
    sizes = make_inputs(e, e.kernel(), e.shape)[2]
    est = next(r for r in counts_roofline(e, ("H200",)).rows)
    rows = kernels.measure_entry(e, "H200", dry=True)
    assert [r["impl"] for r in rows] == ["kernel", "ragged_dot", "jnp_dot_per_group"]
    for r in rows:
        assert r["work"] == 2 * int(sizes.sum()) * 128 * 128
        assert r["roofline_s"] == pytest.approx(est.time * r["work"] / est.counts.tensor_flops)


def test_gemm_sweep_reports_a_plan_whose_product_is_off(monkeypatch, capsys):
    """A plan that computes a wrong product is an error row and a failed sweep, never a
    figure; the relative error is measured against the largest reference value."""
    sweep = _load("gemm_sweep")
    assert sweep.relative_error([[1.0, 2.0]], [[1.0, 4.0]]) == 0.5
    monkeypatch.setattr(sweep, "interpreted_error", lambda name, out: 0.25)
    assert sweep.main(["--dry-run", "--size", "256", "--plans", "default", "--out", "f32"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^default -> f32 +ERROR ValueError: the interpreter's 256\^3 product is "
                     r"off by 2\.50e-01 of its largest value", out, re.M), out


def test_gemm_sweep_prints_each_row_as_it_is_measured(monkeypatch, capsys):
    """A sweep cut short (the GPU step's time limit) has printed the rows it finished: here the
    second plan is interrupted, and the first plan's row is already out."""
    sweep = _load("gemm_sweep")

    class Cut(BaseException):
        pass

    calls = []

    def check(name, out):
        calls.append(name)
        if len(calls) > 1:
            raise Cut
        return 0.0

    monkeypatch.setattr(sweep, "interpreted_error", check)
    with pytest.raises(Cut):
        sweep.main(["--dry-run", "--size", "256", "--plans", "default", "bn128-s4-c1", "--out", "f32"])
    out = capsys.readouterr().out
    assert re.search(r"^default -> f32 +\d+ KiB smem, 0 spill bytes; lowered; interpreter 256\^3 ok$",
                     out, re.M), out
    assert "bn128-s4-c1" not in out


def test_record_turns_a_runs_folder_into_the_page_record(tmp_path, monkeypatch):
    """``gpu_proof.py record``: the machine, checks, ceilings and timed rows of a run's output
    folder, in the form ``docs/kernels.md``'s "Measured on a GPU" renders."""
    from examples import kernels_doc

    out = tmp_path / "out"
    out.mkdir()
    machine = ("date: 2026-12-01 10:00:00 UTC\nmode: gpu\ngpu: NVIDIA H200, 580.1, 143771 MiB, "
               "345 MHz\ncuda (driver): CUDA Version: 13.0\nptxas: release 13.0\npython: "
               "3.12.3 /usr/bin/python3\njax: 0.11.2\ncompute-sanitizer: Version 2025.3.1.0\n")
    rows = [{"entry": "hopper/softmax-f32", "impl": "kernel", "shape": {"M": 8}, "unit": "GB/s",
             "work": 2e9, "seconds": 1e-3, "rate": 2000.0, "vs_baseline": 1.5},
            {"entry": "hopper/softmax-f32", "impl": "xla_softmax", "shape": {"M": 8},
             "unit": "GB/s", "work": 2e9, "seconds": 1.5e-3},
            {"entry": "hopper/softmax-f32", "impl": "broken", "shape": {"M": 8},
             "unit": "GB/s", "work": 2e9, "error": "boom"}]
    (out / "figures.json").write_text(json.dumps({"machine": machine, "gpu": rows, "ceilings": {
        "copy_gbs": 4000.0, "bf16_dot_tflops": 700.0}}))
    (out / "pytest_gpu.xml").write_text(
        '<testsuites><testsuite><testcase name="test_a[hopper/x]"/>'
        '<testcase name="test_b[hopper/x]"><failure message="m">t</failure></testcase>'
        '<testcase name="test_a[blackwell/y]"><skipped message="blackwell/y targets sm_100a"/>'
        '</testcase><testcase name="test_b[blackwell/z-f16]"><skipped message="blackwell/z-f16 '
        'targets sm_100a"/></testcase></testsuite></testsuites>')
    (out / "sanitizer.log").write_text(
        "=== memcheck (limit 90s): env compute-sanitizer ...\n========= COMPUTE-SANITIZER\n"
        "========= ERROR SUMMARY: 0 errors\n=== memcheck: ok (4.0s)\n"
        "=== racecheck: skipped: compute-sanitizer not found\n")
    dest = tmp_path / "runs" / "h200-2026-12-01.json"
    dest.parent.mkdir()
    assert gpu_proof.record(str(out), str(dest), "abc1234") == 0
    run = json.loads(dest.read_text())
    assert (run["date"], run["gpu"], run["driver"], run["commit"]) == \
        ("2026-12-01", "NVIDIA H200 (143771 MiB)", "580.1", "abc1234")
    assert run["cuda"] == "13.0 (driver), ptxas 13.0"
    assert run["software"] == "python 3.12.3, jax 0.11.2, compute-sanitizer 2025.3.1.0"
    assert run["tests"] == {"command": "pytest -m gpu tests/test_kernels_gpu.py", "passed": 1,
                            "failed": 1, "skipped": 2, "failed_why": "test_b[hopper/x]",
                            "skipped_why": "2: <entry> targets sm_100a"}
    assert run["sanitizer"] == {"memcheck": "ok (4.0s); ERROR SUMMARY: 0 errors",
                                "racecheck": "skipped: compute-sanitizer not found"}
    assert [r["impl"] for r in run["rows"]] == ["kernel", "xla_softmax"]     # timed rows only
    assert "rate" not in run["rows"][0] and run["findings"] == []
    monkeypatch.setattr(kernels_doc, "GPU_RUNS", str(dest.parent))
    page = "\n".join(kernels_doc.gpu_runs_section())
    assert "### NVIDIA H200 (143771 MiB), 2026-12-01" in page
    assert ("| hopper/softmax-f32 | M=8 | 2000.0 GB/s | 1000.0 | xla_softmax | 1333.3 GB/s | "
            "1.50x | 50% |") in page


def test_attention_baselines_include_cudnn_in_its_own_layout():
    """cuDNN's attention is also timed on inputs already in its ``[1, S, H, D]`` layout (made
    by ``prepare``, outside the timed call), so that the kernel is not measured against a
    baseline paying for transposes. Checked here with the XLA implementation."""
    import jax.numpy as jnp

    from examples.library import get

    names = [n for n, _ in kernels.baselines(get("hopper/attention-bf16"))]
    assert names == ["dot_product_attention[cudnn]", "dot_product_attention[xla]",
                     "dot_product_attention[cudnn, BTNH]"]
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal((2, 16, 8)), jnp.float32) for _ in range(3))
    plain, native = kernels._sdpa("xla", True), kernels._sdpa("xla", True, native=True)
    assert not hasattr(plain, "prepare")
    prepared = native.prepare(q, k, v)
    assert [x.shape for x in prepared] == [(1, 16, 2, 8)] * 3
    np.testing.assert_allclose(np.asarray(native(*prepared))[0].swapaxes(0, 1),
                               np.asarray(plain(q, k, v)), rtol=1e-6, atol=1e-6)


def test_grouped_gemm_is_also_timed_against_cublas_per_group():
    """Besides ``ragged_dot``: one ``jnp.dot`` per non-empty group on A's and B's blocks,
    split by the sizes beforehand; its products are the groups' rows of the reference."""
    import jax.numpy as jnp

    from examples.hopper.grouped_gemm import reference
    from examples.library import get

    names = [n for n, _ in kernels.baselines(get("hopper/grouped_gemm-bf16"))]
    assert names == ["ragged_dot", "jnp_dot_per_group"]
    rng = np.random.default_rng(1)
    a = jnp.asarray(rng.standard_normal((10, 8)), jnp.float32)
    b = jnp.asarray(rng.standard_normal((3, 8, 4)), jnp.float32)
    sizes = jnp.asarray([4, 0, 5], jnp.int32)
    fn = kernels._group_dots()
    parts = fn.prepare(a, b, sizes)
    assert [p.shape for p in parts] == [(4, 8), (5, 8), (8, 4), (8, 4)]
    out = np.concatenate([np.asarray(o) for o in fn(*parts)])
    np.testing.assert_allclose(out, reference(a, b, sizes)[:9], rtol=1e-5, atol=1e-5)


def test_once_runs_the_kernel_then_each_baseline(monkeypatch, capsys):
    """The program ncu times: the entry's kernel once, then each baseline once, in the order
    printed (here on the CPU, at a small shape)."""
    import examples.library as library

    small = dataclasses.replace(library.get("hopper/rms_norm-f32"), shape={"M": 8})
    monkeypatch.setattr(library, "get", lambda name: small)
    assert gpu_proof.once("hopper/rms_norm-f32", dry=False) == 0
    assert capsys.readouterr().out.splitlines() == [
        "hopper/rms_norm-f32 M=8: kernel ran once", "hopper/rms_norm-f32 M=8: xla_rms_norm ran once"]


def test_ceilings_and_gpu_model():
    c = kernels.ceilings(n=1 << 16, m=128)
    assert c["copy_gbs"] == pytest.approx(2 * 4 * (1 << 16) / c["copy_s"] / 1e9)
    assert c["bf16_dot_tflops"] == pytest.approx(2 * 128 ** 3 / c["bf16_dot_s"] / 1e12)
    assert kernels.gpu_model("NVIDIA H200") == "H200"
    assert kernels.gpu_model("NVIDIA H100 80GB HBM3") == "H100"
    assert kernels.gpu_model("NVIDIA A100-SXM4-80GB") == "A100"
    assert kernels.gpu_model("Tesla T4") == "H100"


def test_kernels_gpu_mode_without_a_gpu_is_an_error(capsys):
    assert kernels.main(["--gpu", "--no-interpreter", "hopper/rms_norm-f32"]) == 2
    assert "--gpu: JAX sees no CUDA device" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        kernels.main(["--gpu", "--dry-run"])
    assert e.value.code == 2


def test_gpu_tests_fail_where_a_gpu_is_required_and_absent():
    """The GPU run sets JAX_PYPTX_REQUIRE_GPU=1: a JAX that sees no GPU there fails the
    collection instead of skipping every test."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_PYPTX_REQUIRE_GPU="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "--collect-only", "-q",
                        "-p", "no:cacheprovider", "tests/test_kernels_gpu.py"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert ("RuntimeError: JAX_PYPTX_REQUIRE_GPU=1 but JAX sees no CUDA device "
            "(JAX_PLATFORMS='cpu'); its backends: ['cpu']") in r.stdout
