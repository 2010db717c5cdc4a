"""toolchain: finding ptxas/nvdisasm, the cubin cache, resource reports, SASS."""
import os
import subprocess
import sys
import textwrap

import pytest

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.errors import ToolchainError
from jax_pyptx.toolchain import compile, find_tool, parse_report, toolchain_info
from jax_pyptx.toolchain import cubin as cubin_mod
from jax_pyptx.types import f32, u32

from .test_kernel_trace import tiny


def test_finds_newest_ptxas_and_reports_it():
    t = find_tool("ptxas")
    assert os.path.isfile(t.path) and t.version >= (12, 0, 0)
    info = toolchain_info()
    assert info["ptxas"] == (t.path, t.version_text)


def test_missing_tool_names_its_package(monkeypatch):
    from jax_pyptx.toolchain import find as find_mod

    monkeypatch.setattr(find_mod, "_candidates", lambda name: [])
    find_mod.find_tool.cache_clear()
    try:
        with pytest.raises(ToolchainError) as e:
            find_mod.find_tool("nvdisasm")
        assert str(e.value) == ("nvdisasm not found on PATH, CUDA_HOME or in site-packages; "
                                "install it with `pip install nvidia-cuda-nvdisasm`")
    finally:
        find_mod.find_tool.cache_clear()


def test_compile_cache_hit_and_corrupt_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path))
    first = compile(tiny.ptx(), "sm_90a")
    assert not first.cached and first.cubin[:4] == b"\x7fELF"
    second = compile(tiny.ptx(), "sm_90a")
    assert second.cached and second.cubin == first.cubin
    with open(first.path, "r+b") as f:      # corrupt the cached cubin
        f.seek(100)
        f.write(b"garbage")
    third = compile(tiny.ptx(), "sm_90a")
    assert not third.cached and third.cubin == first.cubin
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".cubin", ".txt"]


def test_second_process_does_not_run_ptxas(tmp_path):
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
        from jax_pyptx.toolchain import cubin
        from jax_pyptx import kernel, ptx
        calls = []
        real = cubin._run_ptxas
        cubin._run_ptxas = lambda *a: calls.append(1) or real(*a)
        @kernel(arch="sm_80")
        def k():
            ptx.ret()
        res = k.compile()
        print(len(calls))
    ''')
    env = {**os.environ, "JAX_PYPTX_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert runs == ["1", "0"]


def test_ptxas_rejection_is_explained():
    bad = tiny.ptx().replace("add.u32", "add.u33")
    with pytest.raises(ToolchainError) as e:
        cubin_mod.ptxas_check(bad, "sm_90a")
    msg = str(e.value)
    assert "rejected the PTX:" in msg and "> add.u33" in msg


def test_resource_report_parse():
    text = ("ptxas info    : Used 40 registers, used 1 barriers, 16 bytes smem, 372 bytes "
            "cmem[0]\nptxas info    : Function properties for k\n"
            "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n")
    r = parse_report(text)
    assert (r.registers, r.barriers, r.smem, r.cmem, r.stack_frame, r.spill_stores,
            r.spill_loads) == (40, 1, 16, 372, 8, 4, 4)


def test_resources_and_sass():
    @kernel(arch="sm_90a")
    def k():
        a = reg.from_(ptx.special.tid.x(), u32)
        f = reg.cvt(a, f32)
        g = f * f
        p = reg.scalar("u64", 0)
        ptx.inst.st.global_.f32(ptx.addr(p), g)
        ptx.ret()

    rep = k.resources()
    assert rep.registers > 0 and rep.spill_stores == 0 and rep.stack_frame == 0
    sass = k.sass()
    assert "FMUL" in sass and "STG.E" in sass and "S2R" in sass
