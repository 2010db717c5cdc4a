"""The CUDA lowering: a typed-FFI custom call carrying the PTX, its sha256 and the launch
(checked on the StableHLO text of a CPU-only jaxlib), jax.export for CUDA, the persistent cubin
cache, and the C++ launcher run on CPU with the recording driver table."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

from examples.hopper.rms_norm import build_rms_norm
from examples.hopper.swiglu import build_swiglu
from jax_pyptx import SpecializationError, ptx_call
from jax_pyptx.runtime.ffi_plan import FFI_TARGET
from jax_pyptx.specialize import ParamAbi

from .test_runtime_kernels import accumulate, axpy, col_copy

RMS = build_rms_norm(4, 64)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cuda_text(f, *args) -> str:
    return jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def launches(text: str) -> list:
    """(attribute dict text, operand/result signature) of every jax_pyptx_launch call."""
    out = []
    for m in re.finditer(r"stablehlo\.custom_call @jax_pyptx_launch\((.*?)\) \{(.*?)\} : "
                         r"\((.*?)\) -> (.*)", text):
        out.append({"attrs": m.group(2), "operands": m.group(3), "results": m.group(4)})
    return out


def attr(a: str, name: str) -> str:
    m = re.search(rf'\b{name} = (dense<[^>]*> : tensor<[^>]*>|"(?:[^"\\]|\\.)*"|[-\w.]+ : \w+)',
                  a)
    assert m, f"no attribute {name}"
    return m.group(1)


def test_custom_call_attributes():
    x, w = jnp.ones((8, 64)), jnp.ones(64)
    (call,) = launches(cuda_text(RMS, x, w))
    a = call["attrs"]
    t = RMS.trace(M=8)
    assert attr(a, "kernel_name") == '"rms_norm"'
    assert attr(a, "arch") == '"sm_90a"'
    assert attr(a, "ptx_sha256") == f'"{t.sha256}"'
    assert t.sha256 == hashlib.sha256(t.ptx.encode()).hexdigest()
    assert ".visible .entry rms_norm(" in attr(a, "ptx")
    assert attr(a, "grid") == "dense<[2, 1, 1]> : tensor<3xi64>"
    assert attr(a, "block") == "dense<[128, 1, 1]> : tensor<3xi64>"
    assert attr(a, "cluster") == "dense<1> : tensor<3xi64>"
    assert attr(a, "smem_bytes") == "0 : i64"
    assert attr(a, "abi_version") == "1 : i64"
    assert attr(a, "param_kind") == "dense<0> : tensor<3xi64>"          # X, W, Y buffers
    assert attr(a, "param_index") == "dense<[0, 1, 2]> : tensor<3xi64>"
    assert attr(a, "workspace_bytes") == "0 : i64"
    assert call["operands"] == "tensor<8x64xf32>, tensor<64xf32>"
    assert call["results"].startswith("tensor<8x64xf32>")


def test_scalar_params_are_bytes():
    x, w = jnp.ones((2, 40)), jnp.ones(40)
    (call,) = launches(cuda_text(lambda x, w: axpy(x, w, 2.0), x, w))
    a = call["attrs"]
    assert attr(a, "param_kind") == "dense<[0, 0, 1, 0]> : tensor<4xi64>"
    assert attr(a, "param_data") == "dense<[0, 0, 0, 64]> : tensor<4xui8>"     # 2.0f LE
    assert attr(a, "param_size") == "dense<[8, 8, 4, 8]> : tensor<4xi64>"
    assert call["operands"] == "tensor<2x40xf32>, tensor<40xf32>"          # scalar not a buffer


def test_traced_scalar_goes_by_pointer():
    """A traced runtime scalar on CUDA: the kernel is traced with that parameter as a device
    pointer (loaded once), the value is one more buffer operand; no re-trace per value."""
    sw = build_swiglu()
    g = jnp.ones((2, 40))
    (call,) = launches(cuda_text(sw, g, g, 1.0))
    a = call["attrs"]
    assert attr(a, "param_kind") == "dense<0> : tensor<4xi64>"            # G, U, beta, Y
    assert attr(a, "param_index") == "dense<[0, 1, 2, 3]> : tensor<4xi64>"
    assert call["operands"] == "tensor<2x40xf32>, tensor<2x40xf32>, tensor<f32>"
    t = sw.trace_for(ParamAbi.make(scalar_ptrs=("beta",)), M=2, N=40)
    assert attr(a, "ptx_sha256") == f'"{t.sha256}"'
    assert re.search(r"ld\.param\.u64 \t(%rd\d+), \[beta\];", t.ptx)
    # the pointer variant computes the same thing (hand launch on the interpreter)
    from jax_pyptx.interpret import launch

    gv = np.linspace(-2, 2, 80, dtype=np.float32).reshape(2, 40)
    uv = np.ones((2, 40), np.float32)
    y = np.zeros((2, 40), np.float32)
    launch(t.module, "swiglu", [gv, uv, np.array([0.5], np.float32), y],
           grid=(1, 1, 1), block=(128, 1, 1))
    np.testing.assert_allclose(y, gv / (1 + np.exp(-0.5 * gv)), rtol=1e-5, atol=1e-6)
    # a known value still goes by value (launch attribute bytes)
    (call,) = launches(cuda_text(lambda g, u: sw(g, u, 1.0), g, g))
    assert attr(call["attrs"], "param_kind") == "dense<[0, 0, 1, 0]> : tensor<4xi64>"


def test_traced_scalar_read_directly_is_an_error():
    from jax_pyptx import Tile, kernel, ptx, reg
    from jax_pyptx.types import f32

    @kernel(arch="sm_90a", in_specs=(Tile("N", f32), f32), out_specs=(Tile("N", f32),))
    def direct(X, s, Y):
        v = reg.scalar(f32)
        ptx.inst.ld.param.f32(v, ptx.addr(ptx.param("s")))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr()), v)
        ptx.ret()

    x = jnp.ones(4)
    with pytest.raises(SpecializationError) as e:
        cuda_text(direct, x, 1.0)
    assert str(e.value) == (
        "kernel 'direct': runtime scalar s is a traced value and the kernel reads its "
        "parameter directly (ptx.param), so it cannot be passed by pointer; pass a Python or "
        "NumPy number")
    assert launches(cuda_text(lambda x: direct(x, 1.0), x))


def test_aliasing_and_layouts():
    x = jnp.ones(100)
    text = cuda_text(ptx_call(accumulate, input_output_aliases={0: 0}), x, x)
    assert ("output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = "
            "[], operand_index = 0, operand_tuple_indices = []>]") in text
    (call,) = launches(cuda_text(col_copy, jnp.ones((3, 5))))
    assert "operand_layouts = [dense<[0, 1]> : tensor<2xindex>]" in call["attrs"]
    assert "result_layouts = [dense<[1, 0]> : tensor<2xindex>]" in call["attrs"]


CASES = {
    "jit": (lambda x, w: RMS(x[0], w), 0),
    "vmap": (jax.vmap(RMS, in_axes=(0, None)), 0),
    "vmap in_axes=1": (lambda x, w: jax.vmap(RMS, in_axes=(1, None))(jnp.swapaxes(x, 0, 1),
                                                                       w), 0),
    "nested vmap": (lambda x, w: jax.vmap(jax.vmap(RMS, in_axes=(0, None)),
                                          in_axes=(0, None))(x.reshape(2, 2, 8, 64), w), 0),
    "grad": (jax.grad(lambda x, w: jnp.sum(RMS(x[0], w) ** 2)), 0),
}
GRIDS = {"jit": [(2, 1, 1)], "vmap": [(2, 1, 4)], "vmap in_axes=1": [(2, 1, 4)],
         "nested vmap": [(2, 1, 4)], "grad": [(2, 1, 1), (2, 1, 1)]}


@pytest.mark.parametrize("case", list(CASES))
def test_cuda_lowering_of_each_case(case):
    f, _ = CASES[case]
    x, w = jnp.ones((4, 8, 64)), jnp.ones(64)
    calls = launches(cuda_text(f, x, w))
    grids = [tuple(int(v) for v in re.search(r"grid = dense<\[?([\d, ]+)\]?>",
                                              c["attrs"]).group(1).split(", ")) for c in calls]
    grids = [g if len(g) == 3 else g * 3 for g in grids]
    assert grids == GRIDS[case]
    names = [attr(c["attrs"], "kernel_name") for c in calls]
    assert names == (['"rms_norm"', '"rms_norm_bwd"'] if case == "grad" else ['"rms_norm"'])


def test_export_for_cuda_is_self_contained():
    x, w = jnp.ones((8, 64)), jnp.ones(64)
    exp = jax.export.export(jax.jit(jax.vmap(RMS, in_axes=(0, None))), platforms=["cuda"])(
        jnp.ones((3, 8, 64)), w)
    t = RMS.trace_for(ParamAbi.make((3,), ((True,), (False,), (True,))), M=8)
    for text in (exp.mlir_module(), _roundtrip(exp)):
        assert f"stablehlo.custom_call @{FFI_TARGET}" in text
        assert f'ptx_sha256 = "{t.sha256}"' in text and "callback" not in text
    assert exp.platforms == ("cuda",)
    assert exp.in_avals[0].shape == (3, 8, 64)
    # grad exports too (forward and backward kernels)
    g = jax.export.export(jax.jit(jax.grad(lambda x, w: jnp.sum(RMS(x, w) ** 2))),
                          platforms=["cuda"])(x, w)
    assert g.mlir_module().count(f"@{FFI_TARGET}") == 2
    assert _roundtrip(g).count(f"@{FFI_TARGET}") == 2


def _roundtrip(exp) -> str:
    """serialize -> deserialize -> the module text (jax.export needs flatbuffers for it)."""
    pytest.importorskip("flatbuffers", reason="jax.export serialization needs flatbuffers")
    blob = exp.serialize()
    assert isinstance(blob, (bytes, bytearray)) and len(blob) > 1000
    return jax.export.deserialize(blob).mlir_module()


_CACHE_SCRIPT = r"""
import json, os, sys
sys.path.insert(0, {repo!r})
import jax, jax.numpy as jnp
from examples.hopper.rms_norm import build_rms_norm
from jax_pyptx.runtime import lowering_cuda
k = build_rms_norm(4, 64)
jax.jit(k).trace(jnp.ones((8, 64)), jnp.ones(64)).lower(lowering_platforms=("cuda",))
print(json.dumps(lowering_cuda.compile_log))
"""


def test_second_process_runs_no_ptxas(tmp_path):
    from jax_pyptx.toolchain.find import find_tool
    from jax_pyptx.errors import ToolchainError

    try:
        find_tool("ptxas")
    except ToolchainError:
        pytest.skip("no ptxas")
    env = dict(os.environ, JAX_PYPTX_CACHE_DIR=str(tmp_path), JAX_PLATFORMS="cpu")
    script = _CACHE_SCRIPT.format(repo=REPO)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    sha = RMS.trace(M=8).sha256
    assert runs[0] == [[sha, "sm_90a", False]]         # first process: ptxas ran
    assert runs[1] == [[sha, "sm_90a", True]]          # second: the disk cache
    assert (tmp_path / f"{sha}-sm_90a.cubin").exists()  # where the launcher looks


@pytest.fixture
def recording():
    from jax_pyptx.runtime import ffi_bridge as fb

    if not fb.available():
        pytest.skip("jax_pyptx._ffi is not built")
    fb.ensure_registered()
    fb.clear_recording()
    yield fb
    fb.clear_recording()


def test_launcher_records_batched_launch(recording):
    """interpret=False on CPU: XLA -> the C++ handler -> the recording driver table."""
    x, w = jnp.ones((3, 8, 64)), jnp.ones(64)
    f = jax.jit(jax.vmap(lambda x: ptx_call(RMS, interpret=False)(x, w)))
    jax.block_until_ready(f(x))
    (launch,) = recording.recorded_launches("rms_norm")
    assert launch["grid"] == (2, 1, 3) and launch["block"] == (128, 1, 1)
    assert launch["smem"] == 0


def test_launcher_records_traced_scalar(recording):
    sw = build_swiglu()
    g = jnp.ones((2, 40))
    f = jax.jit(lambda g, u, b: ptx_call(sw, interpret=False)(g, u, b))
    jax.block_until_ready(f(g, g, jnp.float32(0.5)))
    jax.block_until_ready(f(g, g, jnp.float32(2.0)))
    assert f._cache_size() == 1
    got = recording.recorded_launches("swiglu")
    assert len(got) == 2 and got[0]["grid"] == (1, 1, 1)


def test_launcher_records_sharded_launches(recording):
    mesh = jax.make_mesh((8,), ("d",))
    xs = jax.device_put(jnp.ones((32, 64)), NamedSharding(mesh, P("d")))
    f = jax.jit(lambda x, w: ptx_call(RMS, interpret=False)(x, w))
    hlo = f.lower(xs, jnp.ones(64)).compile().as_text()
    assert "all-gather" not in hlo
    jax.block_until_ready(f(xs, jnp.ones(64)))
    got = recording.recorded_launches("rms_norm")
    assert len(got) == 8 and {g["grid"] for g in got} == {(1, 1, 1)}   # 4 rows per device


def test_cuda_lowering_registers_the_handler_only_with_a_cuda_backend(monkeypatch):
    from jax_pyptx.runtime import ffi_bridge, lowering_cuda

    assert lowering_cuda.has_cuda_backend() is False      # CPU-only jaxlib here
    calls = []
    monkeypatch.setattr(ffi_bridge, "ensure_registered", lambda: calls.append(1))
    monkeypatch.setattr(lowering_cuda, "has_cuda_backend", lambda: True)
    x = jnp.ones((4, 64), jnp.float32)
    w = jnp.ones((64,), jnp.float32)
    jax.jit(RMS).trace(x, w).lower(lowering_platforms=("cuda",)).as_text()
    assert calls == [1]
