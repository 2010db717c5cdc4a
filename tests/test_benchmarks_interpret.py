"""``benchmarks/interpret.py --peers`` (``benchmarks/interpret_peers/``) at its smoke shapes:
every workload of the peer table runs for ours (sanitizer on and off, checked against NumPy)
and for Pallas ``interpret=True`` when it imports; the table prints; a Triton that cannot be
imported reads "not installed". Nothing here is timed: the figures are only checked to exist.
Triton itself is never run here (it is no project dependency)."""
import importlib.util
import json
import os
import pathlib
import shutil
import sys

import numpy as np
import pytest

from benchmarks.interpret_peers import ours, pallas_peer, spec, table

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def smoke():
    return table.measure(smoke=True, reps=1, triton=False)


def test_every_row_runs_ours_and_pallas(smoke):
    rows = smoke["rows"]
    assert [r["row"] for r in rows] == [label for label, _, _ in ours.ROWS]
    for r in rows:
        assert r["shape"] == spec.shape_of(r["workload"], smoke=True)
        assert r["san_on_s"] > 0 and r["san_off_s"] > 0
        assert r["thread_instructions"] >= r["instructions"] > 0
        assert r["thread_instr_per_s_on"] == r["thread_instructions"] / r["san_on_s"]
        assert r["triton_s"] is None and r["ours_over_triton"] is None
    if pallas_peer.available() is None:
        assert smoke["peers"]["pallas"]["status"] == "ok"
        for r in rows:
            assert r["ours_over_pallas"] == r["san_on_s"] / r["pallas_s"]
    assert smoke["peers"]["triton"] == {"status": table.NOT_RUN, "why": "--no-triton"}


def test_table_prints_every_row(smoke):
    text = table.format_table(smoke)
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["workload", "shape"]
    for (label, _, _), line in zip(ours.ROWS, lines[1:]):
        assert line.startswith(label) and "not run" in line
    assert "Triton not run: --no-triton" in text
    json.dumps(smoke)                       # --json writes exactly this


def test_triton_missing_reads_not_installed(tmp_path):
    """A peers dir without triton (and no triton in this Python): the Triton columns say
    "not installed", with why."""
    if importlib.util.find_spec("triton") is not None:
        pytest.skip("triton is importable from this Python")
    status, why, results = table.run_triton(["axpb"], smoke=True, reps=1, peers_dir=str(tmp_path))
    assert status == table.NOT_INSTALLED and results == {}
    assert ("triton is not importable" in why or "needs torch" in why), why


def test_checks_catch_wrong_math():
    """The NumPy check the peers and ours pass through rejects a wrong result."""
    ins = spec.inputs("softmax", spec.shape_of("softmax", smoke=True))
    good = spec.reference("softmax", ins).astype(np.float32)
    assert spec.check("softmax", good, ins, "x") < 1e-7
    bad = good.copy()
    bad[3, 5] += 1e-3
    with pytest.raises(AssertionError, match=r"x softmax: 1 of 512 elements differ from NumPy "
                                             r"\(worst at \(np.int64\(3\), np.int64\(5\)\)"):
        spec.check("softmax", bad, ins, "x")


def test_bf16_values_match_ml_dtypes():
    import ml_dtypes

    x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    x[:3] = (1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, -0.0)      # ties to even, signed zero
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    got = spec.to_bf16_values(x)
    assert got.tobytes() == want.tobytes()


def test_every_side_is_timed_with_the_collector_off_and_it_is_restored():
    import gc

    seen = []
    assert gc.isenabled()
    assert spec.best_of(lambda: seen.append(gc.isenabled()), 2) >= 0
    assert spec.best_of_each([lambda: seen.append(gc.isenabled())], 2, warmups=0)[0] >= 0
    assert seen == [True, False, False, False, False]       # (best_of's warm-up call is not timed)
    assert gc.isenabled()
    gc.disable()
    try:
        spec.timed(lambda: None)
        assert not gc.isenabled()                           # (left as it was)
    finally:
        gc.enable()


def test_pinning_env():
    env = spec.pin_threads({"XLA_FLAGS": "--xla_force_host_platform_device_count=8"})
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
    assert env["XLA_FLAGS"] == ("--xla_force_host_platform_device_count=8 "
                                "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    assert spec.pin_threads(dict(env)) == env                          # idempotent


def test_cli_options_conflict(capsys):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))
    try:
        import interpret
    finally:
        sys.path.pop(0)
    with pytest.raises(SystemExit):
        interpret.parse_args(["--peers-dir", "a", "--install-peers", "b"])
    assert "give --peers-dir or --install-peers, not both" in capsys.readouterr().err
    a = interpret.parse_args(["--smoke"])
    assert a.peers and a.smoke


def test_peer_blocks_parse_and_divide():
    b = spec.parse_blocks("rows=64, gemm=64x64x32")
    assert b == {"axpb": 1024, "rows": 64, "gemm": (64, 64, 32), "attention": (128, 128)}
    assert spec.blocks_for("softmax", {"M": 4096, "cols": 1024}, b) == (64,)
    assert spec.blocks_for("gemm", {"M": 128, "N": 32, "K": 64}, b) == (64, 32, 32)
    with pytest.raises(ValueError, match=r"^--peer-blocks: unknown block 'row' in 'row=4'; "
                                         r"known: axpb, rows, gemm, attention$"):
        spec.parse_blocks("row=4")
    with pytest.raises(ValueError, match=r"^--peer-blocks: attention takes 2 positive "
                                         r"integer\(s\) as NxN, got '128'$"):
        spec.parse_blocks("attention=128")
    with pytest.raises(ValueError, match=r"^peer block 3 does not divide M=8 of rms_norm$"):
        spec.blocks_for("rms_norm", {"M": 8, "cols": 64}, spec.parse_blocks("rows=3"))


@pytest.mark.skipif(pallas_peer.available() is not None, reason="Pallas does not import")
def test_pallas_other_blocks_same_math():
    """Several rows / elements per program: still checked against NumPy inside ``measure``."""
    b = spec.parse_blocks("rows=4,axpb=2048")
    for key in ("axpb", "softmax"):
        r = pallas_peer.measure(key, spec.shape_of(key, smoke=True), 1, b)
        assert r["max_err"] < 1e-6


def test_kernel_interpret_stats():
    """``Kernel.interpret(..., stats=)`` fills launch's counters: 4 CTAs of 256 threads; with
    1024 elements every thread runs the same instructions, with 1000 the last 24 threads skip
    the same body."""
    k = ours.axpb_kernel()
    full, part = {}, {}
    x = np.arange(1024, dtype=np.float32)
    np.testing.assert_array_equal(k.interpret(x, stats=full), x * 2 + 1)
    np.testing.assert_array_equal(k.interpret(x[:1000], stats=part), x[:1000] * 2 + 1)
    assert full["ctas"] == part["ctas"] == 4
    assert 0 < full["instructions"] <= full["thread_instructions"]
    assert full["thread_instructions"] % 1024 == 0
    skipped = full["thread_instructions"] - part["thread_instructions"]
    assert skipped > 0 and skipped % 24 == 0


def test_breakdown_names_the_parts_of_a_launch():
    """``benchmarks/interpret_breakdown.py``: at the smoke shape, attention's launch splits into
    its instruction forms (the wgmmas, the mbarrier waits, TMA), the batched segments, the
    scheduler's loop and the rest, which add up to the launch (a part's time excludes the parts
    it calls); the handlers are unwrapped afterwards."""
    from benchmarks import interpret_breakdown as B
    from jax_pyptx.interpret.scheduler import context, segments

    run_seg, init, run = segments.run, context.Context.__init__, context.Context.run
    r = B.measure("attention", sanitize=True, launches=1, smoke=True)
    names = [p[0] for p in r["parts"]]
    assert r["entry"] == "hopper/attention-bf16" and names[-1] == B.REST
    assert B.SEGMENTS in names and B.LOOP in names and "mbarrier.try_wait.parity.shared::cta.b64" in names
    assert B.WGMMA_RUNS in names          # the k-steps on one accumulator, issued as one
    assert B.ISSUE_RUNS in names          # the producer's arrivals and loads, arithmetic hoisted
    inner = sum(s for _, s, _ in r["parts"][:-1])          # the timed parts lie inside the launch
    assert 0 < inner <= r["total_s"] * 1.1 and all(s > 0 for _, s, _ in r["parts"][:-1])
    assert r["parts"][-1][1] == pytest.approx(max(r["total_s"] - inner, 0.0))
    assert segments.run is run_seg and context.Context.__init__ is init and context.Context.run is run
    text = B.format_table(r, top=3)
    lines = text.splitlines()
    assert lines[0].startswith("hopper/attention-bf16 H=") and "sanitizer on" in lines[0]
    assert lines[-2].endswith(B.REST) and lines[-1].startswith(f"({len(names) - 4} more parts")


def test_breakdown_counts_python_bytecodes_the_same_launch_after_launch():
    """``interpret_breakdown.py --opcodes``: the Python bytecodes of each part of a launch,
    measured twice to within 1% (a figure the machine's phases do not move; the second kernel
    finds some caches warm), the parts adding up to the launch, the functions executing most
    named by file, line and name, and none of the measurement's own wrappers counted; the
    tracer and the handlers are gone afterwards."""
    import sys

    from benchmarks import interpret_breakdown as B
    from jax_pyptx.interpret.scheduler import context, segments

    run_seg, init = segments.run, context.Context.__init__
    a = B.measure("attention", sanitize=True, launches=1, smoke=True, opcodes=True)
    b = B.measure("attention", sanitize=True, launches=1, smoke=True, opcodes=True)
    assert a["unit"] == "opcodes" and a["total_s"] > 10_000 and abs(b["total_s"] / a["total_s"] - 1) < 0.01
    assert {p[0] for p in a["parts"]} == {p[0] for p in b["parts"]}
    assert sum(p[1] for p in a["parts"]) == a["total_s"]           # (counts: no rounding)
    names = [p[0] for p in a["parts"]]
    assert B.SEGMENTS in names and B.WGMMA_RUNS in names and names[-1] == B.REST
    funcs = dict(a["functions"])
    assert any(f.startswith("scheduler/context.py:") and f.endswith(" write") for f in funcs)
    assert not any("interpret_breakdown" in f for f in funcs)      # (the wrappers: not counted)
    assert sys.gettrace() is None and segments.run is run_seg and context.Context.__init__ is init
    if hasattr(sys, "monitoring"):      # (3.12 on: counted through sys.monitoring, then freed)
        assert all(sys.monitoring.get_tool(i) is None for i in (2, 3, 4))
    text = B.format_table(a, top=3)
    assert text.splitlines()[0].endswith(f": {a['total_s']:,.0f} Python bytecodes a launch (mean of 1)")
    assert "ops/launch" in text and "Python function (its own bytecodes)" in text


def test_breakdown_refuses_a_row_it_cannot_name():
    from benchmarks import interpret_breakdown as B

    with pytest.raises(SystemExit, match=r"'gemm' names 3 rows of the peer table; give one of .*hopper/gemm-bf16"):
        B.row_of("gemm")
    assert B.row_of("blackwell/gemm-bf16") == ("gemm", "blackwell/gemm-bf16")


def test_instruction_counts_read_valgrinds_report_and_say_what_is_missing(monkeypatch):
    """``benchmarks/interpret_instructions.py``: the ``I refs`` total of a cachegrind report,
    and a clear stop where valgrind is not installed or its report has no total."""
    from benchmarks import interpret_instructions as I

    assert I.instructions("==22313== Cachegrind\n==22313== I   refs:      6,041,301,205\n") == 6041301205
    # the functions a report cannot name: the stripped compiled core's lines, not the others'
    report = "events: Ir\nfl=???\nfn=???\n0 120\n0 30\nfl=Python/ceval.c\nfn=_PyEval_EvalFrameDefault\n" \
             "4211 999\nfl=???\nfn=???\n0 7\nfn=PyArray_TakeFrom\n0 5\n"
    assert I.unnamed(report) == 157
    with pytest.raises(SystemExit, match="no 'I refs' line in valgrind's report"):
        I.instructions("==1== Cachegrind, a cache and branch-prediction profiler\n")
    monkeypatch.setattr(I.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match=r"valgrind is not on PATH \(apt install valgrind\)"):
        I.count("attention", smoke=True)
    with pytest.raises(SystemExit):
        I.main(["attention", "--launches", "0"])


def test_instruction_counts_child_runs_the_row():
    """The counted process builds the row and launches it (here without valgrind, at the smoke
    shape); a row it cannot name stops it with the breakdown's message."""
    import subprocess

    script = str(ROOT / "benchmarks" / "interpret_instructions.py")
    ok = subprocess.run([sys.executable, script, "--child", str(ROOT), "attention", "--smoke", "--launches", "1"],
                        capture_output=True, text=True, cwd=str(ROOT))
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = subprocess.run([sys.executable, script, "--child", str(ROOT), "gemm", "--launches", "0"],
                         capture_output=True, text=True, cwd=str(ROOT))
    assert bad.returncode != 0 and "'gemm' names 3 rows of the peer table" in bad.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_instruction_counts_under_valgrind(capsys):
    """A count of the smoke ``y = x*2+1`` (about 20 s under valgrind): a launch's instructions,
    between the kernel's own work and the whole process's."""
    from benchmarks import interpret_instructions as I

    ((root, n, core),) = I.main(["axpb", "--smoke", "--launches", "2"])
    assert root == ROOT and 1e5 < n < 5e7 and 0 <= core < n
    out = capsys.readouterr().out
    assert f"M instructions a launch  axpb, sanitizer on  ({ROOT})" in out
    assert f"of them {core / 1e6:.2f} M in the compiled core, {(n - core) / 1e6:.2f} M the Python side" in out
