"""Every kernel of the library (``examples/library.py``), proven without a GPU: ptxas accepts it
for its target with no spills and no stack frame; its SASS has the instructions its pattern
depends on and no local-memory traffic; the interpreter matches the NumPy reference at every
case; ``jax.jit`` runs it on the CPU; the CUDA lowering carries its PTX hash and launch shape;
the PyTorch op runs it; ``docs/kernels.md`` is the generated page."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from examples import kernels_doc, proof
from examples.library import Case, LibraryKernel, entries, get, script_main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = entries()
IDS = [e.name for e in LIB]
CASES = [(e, c) for e in LIB for c in e.cases]
TARGET = {"ampere": "sm_80", "hopper": "sm_90a", "blackwell": "sm_100a"}


def test_registry():
    assert len(IDS) == len(set(IDS))
    assert {e.family for e in LIB} <= set(TARGET)
    assert sum(e.family == "ampere" for e in LIB) == 14
    for e in LIB:
        assert os.path.exists(os.path.join(ROOT, "docs", "examples", e.page)), e.page
        assert e.sass and e.cases and e.rate in ("bytes", "flops")
        assert e.module.startswith(f"examples.{e.family}.")
    assert get("ampere/gemm-bf16").params["dtype"].name == "bf16"
    with pytest.raises(KeyError, match="no library kernel 'ampere/nope'; known: ampere/"):
        get("ampere/nope")


@pytest.mark.parametrize("entry", LIB, ids=IDS)
def test_ptxas_accepts_without_spills_or_stack(entry):
    k = entry.kernel()
    assert k.arch == TARGET[entry.family]
    rep, version = proof.resources(entry)
    assert proof.resource_problems(rep) == []
    assert (rep.spill_stores, rep.spill_loads, rep.stack_frame) == (0, 0, 0)
    assert 0 < rep.registers <= 255
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)


@pytest.mark.parametrize("entry", LIB, ids=IDS)
def test_sass_has_the_pattern_and_no_local_memory(entry):
    ops = proof.sass_mnemonics(entry)
    assert proof.missing_sass(entry, ops) == []
    assert proof.local_memory(ops) == []
    assert all(proof.count_prefix(ops, p) > 0 for p in entry.sass)


@pytest.mark.parametrize("entry,case", CASES,
                         ids=[f"{e.name}:{c.label}" for e, c in CASES])
def test_interpreter_matches_reference(entry, case):
    r = proof.run_case(entry, case)
    assert r.ok, f"{entry.name} {case.label}: max |err| {r.max_err:.3e} is {r.excess:.2f}x " \
                 f"the allowed error"


def _small(entry):
    """The first case's kernel and inputs (the entry's own params: no builder override)."""
    case = next((c for c in entry.cases if not c.build), None)
    shape = case.shape if case else (entry.count_shape or entry.cases[0].shape)
    k = entry.kernel()
    return k, proof.make_inputs(entry, k, shape, seed=1)


@pytest.mark.parametrize("entry", LIB, ids=IDS)
def test_jax_jit_on_cpu_runs_the_interpreter(entry):
    import jax
    import jax.numpy as jnp

    k, inputs = _small(entry)
    want = k.interpret(*inputs)
    got = jax.jit(k)(*[jnp.asarray(a) for a in inputs])
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("entry", LIB, ids=IDS)
def test_cuda_lowering_carries_ptx_and_launch(entry):
    import jax

    from jax_pyptx import Tile

    k = entry.kernel()
    # the representative shape, without allocating it; runtime scalars are numbers known at
    # the call (passed by value: the plain trace)
    t = k.trace(**entry.shape)
    tensors = [jax.ShapeDtypeStruct(x.shape, x.dtype.np_dtype) for x in t.inputs]

    def call(*ts):
        it = iter(ts)
        return k(*[next(it) if isinstance(s, Tile) else s.np_dtype.type(1)
                   for s in k.in_specs])

    text = jax.jit(call).trace(*tensors).lower(lowering_platforms=("cuda",)).as_text()
    m = re.search(r"stablehlo\.custom_call @jax_pyptx_launch\((.*?)\) \{(.*?)\} : ", text)
    assert m, text[:2000]
    attrs = m.group(2)

    def attr(name):
        a = re.search(rf'\b{name} = (dense<[^>]*> : tensor<[^>]*>|"[^"]*"|[-\w.]+ : \w+)',
                      attrs)
        return a.group(1)

    def dense3(v):
        return (f"dense<{v[0]}> : tensor<3xi64>" if len(set(v)) == 1
                else f"dense<[{', '.join(map(str, v))}]> : tensor<3xi64>")

    assert attr("ptx_sha256") == f'"{t.sha256}"'
    assert attr("kernel_name") == f'"{t.name}"'
    assert attr("arch") == f'"{t.arch}"'
    assert attr("grid") == dense3(t.grid)
    assert attr("block") == dense3(t.block)
    assert attr("cluster") == dense3(t.cluster)
    assert attr("smem_bytes") == f"{t.dynamic_smem} : i64"


@pytest.mark.parametrize("entry", LIB, ids=IDS)
def test_torch_op_runs_it(entry):
    torch = pytest.importorskip("torch")
    from jax_pyptx import to_torch

    k, inputs = _small(entry)
    want = k.interpret(*inputs)

    def tensor(a):
        a = np.asarray(a)                      # runtime scalars: 0-d tensors
        if a.dtype.name == "bfloat16":
            return torch.from_numpy(a.view(np.uint16).astype(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(a)

    got = to_torch(k)(*[tensor(a) for a in inputs])
    for o, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g = o.float().numpy() if o.dtype == torch.bfloat16 else o.numpy()
        np.testing.assert_array_equal(g, np.asarray(w).astype(g.dtype))


# ----------------------------------------------------------------------------- the machinery
def test_mnemonics_leave_out_never_executed_padding():
    sass = ("        /*0a70*/              @!PT LDS RZ, [RZ] ;\n"
            "        /*0af0*/                   LDSM.16.M88.4 R36, [R119] ;\n"
            "        /*0b00*/              @P0 LDTM.x16 R4, tmem[UR4] ;\n"
            "        /*0b10*/              @!P1 STL [R1], R2 ;\n")
    ops = proof.mnemonics(sass)
    assert ops == {"LDSM.16.M88.4": 1, "LDTM.x16": 1, "STL": 1}
    assert proof.count_prefix(ops, "LDSM") == 1 and proof.count_prefix(ops, "LDS") == 0
    assert proof.local_memory(ops) == ["STL"]


def test_resource_problems_name_spills_and_stack():
    from jax_pyptx.toolchain import parse_report

    rep = parse_report("ptxas info    : Used 40 registers, 16 bytes stack frame, 8 bytes spill "
                       "stores, 8 bytes spill loads")
    assert proof.resource_problems(rep) == ["8 bytes spill stores, 8 bytes spill loads",
                                            "16 bytes stack frame"]


def test_a_wrong_kernel_fails_its_case_and_its_script(monkeypatch, capsys):
    """The checks can fail: a reference off by one ulp-scale amount on one element is caught,
    and the script exits 1."""
    good = get("ampere/rms_norm-f32")

    def off(x, w):
        y = good.reference(x, w)
        y[0, 0] += 1e-3
        return y

    bad = LibraryKernel(**{**good.__dict__, "reference": off, "name": "ampere/rms_norm-bad",
                           "cases": (Case({"M": 37}, {"cols": 64}),)})
    r = proof.run_case(bad, bad.cases[0])
    assert not r.ok and r.excess > 10
    import examples.library as lib

    monkeypatch.setattr(lib, "entries", lambda families=lib.FAMILIES: [bad])
    assert script_main("examples.ampere.rms_norm", "") == 1
    out = capsys.readouterr().out
    assert "interpreter M=37 cols=64" in out and "MISMATCH" in out and out.endswith("FAILED\n")


def test_committed_doc_is_generated_output():
    with open(kernels_doc.PATH) as f:
        text = f.read()
    recorded = kernels_doc.recorded_ptxas(text)
    if recorded != proof.ptxas_info():
        pytest.skip(f"docs/kernels.md was generated with ptxas {recorded}; this machine's is "
                    f"{proof.ptxas_info()} (registers may differ)")
    assert text == kernels_doc.generate()
    for e in LIB:
        assert f"| {e.name} | [" in text


@pytest.mark.parametrize("page", sorted({e.page for e in LIB}))
def test_example_pages_have_current_figures(page):
    with open(kernels_doc.page_path(page)) as f:
        text = f.read()
    assert text.startswith("# ") and text.index(kernels_doc.BEGIN) > 400     # prose first
    recorded = kernels_doc.recorded_ptxas(text)
    if recorded != proof.ptxas_info():
        pytest.skip(f"{page} was generated with ptxas {recorded}")
    assert kernels_doc.with_figures(text, kernels_doc.page_figures(page)) == text
    with pytest.raises(ValueError, match="no <!-- figures --> ... <!-- /figures --> block"):
        kernels_doc.with_figures("# no figures", "")


@pytest.mark.parametrize("ptx_file,arch,names", [
    ("cuda/wgmma_bf16.sm90a.ptx", "sm_90a", ("wgmma",)),
    ("cuda/tma_load_2d.sm90a.ptx", "sm_90a", ("tma.load",)),
    ("cuda/tma_store_reduce.sm90a.ptx", "sm_90a", ("tma.store",)),
    ("cuda/tcgen05_mma.sm100a.ptx", "sm_100a",
     ("tcgen05.mma.f16", "tcgen05.ld", "tcgen05.commit", "tcgen05.alloc", "tma.load")),
    ("cuda/tcgen05_variants.sm100a.ptx", "sm_100a",
     ("tcgen05.mma.f8f6f4", "tcgen05.mma.i8", "tcgen05.cp")),
    ("triton/matmul_f16_sm100.ptx", "sm_100a", ("tcgen05.st",)),
])
def test_sass_names_of_the_hopper_and_blackwell_patterns(ptx_file, arch, names):
    """The SASS names ``proof.SASS`` gives the later families' patterns, found in what ptxas
    makes of real nvcc / Triton PTX (the corpus)."""
    from jax_pyptx.toolchain import disassemble

    with open(os.path.join(ROOT, "tests", "corpus", *ptx_file.split("/"))) as f:
        ops = proof.mnemonics(disassemble(f.read(), arch))
    for n in names:
        assert proof.count_prefix(ops, proof.SASS[n]) > 0, (n, proof.SASS[n])


def test_compare_skips_elements_without_a_reference_and_fails_on_nan_elsewhere():
    """A NaN in the reference marks an element the kernel does not write (a partial output's
    rest): not compared, whatever its tolerance; a NaN output elsewhere is a mismatch."""
    from examples import proof

    ref = np.array([1.0, np.nan, 3.0])
    allowed = np.array([0.1, np.nan, 0.1])
    err, excess = proof.compare(np.array([1.0, 123.0, 3.05], np.float32), ref, allowed)
    assert err == pytest.approx(0.05) and excess == pytest.approx(0.5)
    assert proof.compare(np.array([np.nan, 0.0, 3.0]), ref, allowed) == (np.inf, np.inf)


def test_gpu_run_rows_pick_the_fastest_baseline_and_use_the_recorded_work():
    rows = [{"entry": "x/k", "impl": "kernel", "shape": {"M": 8}, "unit": "GB/s", "work": 4e9,
             "seconds": 2e-3},
            {"entry": "x/k", "impl": "slow", "shape": {"M": 8}, "unit": "GB/s", "work": 4e9,
             "seconds": 8e-3},
            {"entry": "x/k", "impl": "fast", "shape": {"M": 8}, "unit": "GB/s", "work": 4e9,
             "seconds": 4e-3},
            {"entry": "x/k", "impl": "broken", "shape": {"M": 8}, "unit": "GB/s", "work": 4e9,
             "error": "boom"}]
    table = kernels_doc._gpu_rows(rows, {"copy_gbs": 2500.0, "bf16_dot_tflops": 700.0})
    assert table[2] == ("| x/k | M=8 | 2000.0 GB/s | 2000.0 | fast | 1000.0 GB/s | 2.00x "
                        "| 80% |")
    assert len(table) == 3
