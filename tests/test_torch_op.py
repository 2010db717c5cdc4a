"""PyTorch runtime (``jax_pyptx.runtime.torch_op``): the custom op, its fake impl, the CPU
interpreter impl and the CUDA launch (through the recording driver table)."""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from jax_pyptx import Layout, SpecializationError, Tile, kernel, ptx, reg  # noqa: E402
from jax_pyptx.runtime.torch_op import to_torch  # noqa: E402
from jax_pyptx.types import bf16, f32, u32, u64  # noqa: E402

from examples.hopper.rms_norm import build_rms_norm  # noqa: E402
from examples.hopper.softmax import build_softmax  # noqa: E402
from examples.hopper.swiglu import build_swiglu  # noqa: E402

RMS = to_torch(build_rms_norm(4, 64))
SOFTMAX = to_torch(build_softmax(4, 64))
SWIGLU = to_torch(build_swiglu())
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------- kernels
@kernel(arch="sm_90a", in_specs=(Tile("M", "N", f32, Layout.COL),),
        out_specs=(Tile("N", "M", f32),), block=(64, 1, 1),
        grid=lambda M, N: ((M * N + 63) // 64, 1, 1))
def col_in(X, Y):
    """Copies memory: a column-major X (M, N) is, byte for byte, the row-major (N, M) X.T."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(i < X.shape[0] * X.shape[1]):
        off = reg.cvt(i, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("M", "N", f32),),
        out_specs=(Tile("M", "N", f32, Layout.COL),), block=(64, 1, 1),
        grid=lambda M, N: ((M * N + 63) // 64, 1, 1))
def col_out(X, Y):
    """Copies memory into a column-major Y: Y (M, N) is X.reshape(N, M).T."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(i < X.shape[0] * X.shape[1]):
        off = reg.cvt(i, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("N", bf16),), out_specs=(Tile("N", f32), Tile("N", bf16)),
        block=(32, 1, 1), grid=lambda N: ((N + 31) // 32, 1, 1))
def widen(X, Y, Z):
    """Y = f32(X), Z = X (bf16 in and out of the CPU impl's NumPy views)."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(i < X.shape[0]):
        off = reg.cvt(i, u64)
        h, y = reg.scalar(bf16), reg.scalar(f32)
        ptx.inst.ld.global_.b16(h, ptx.addr(X.ptr() + off * 2))
        ptx.inst.cvt.f32.bf16(y, h)
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off * 4), y)
        ptx.inst.st.global_.b16(ptx.addr(Z.ptr() + off * 2), h)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("M", 64, f32),), out_specs=(Tile("M", 64, f32),),
        block=(128, 1, 1), grid=lambda M: (M // 8, 1, 1))
def tma_touch(X, Y):
    """Takes X's TMA descriptor (global mode) and prefetches it."""
    d = X.tma_desc(box=(8, 32), swizzle=128)      # 32 f32 = the 128-byte span
    ptx.inst.prefetch.tensormap(ptx.addr(d))
    ptx.ret()


def rms_ref(x, w, eps=1e-6):
    x64 = x.double()
    return (x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + eps) * w.double()).float()


def swiglu_ref(g, u, beta):
    return g * torch.sigmoid(beta * g) * u


def randn(*shape, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape, np.float32))


# ----------------------------------------------------------------------------- registration
def test_import_jax_pyptx_does_not_import_torch_nor_torch_op_jax():
    code = ("import sys, jax_pyptx; assert 'torch' not in sys.modules, 'torch'; "
            "import jax_pyptx.runtime.torch_op; assert 'jax' not in sys.modules, 'jax'; "
            "print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=REPO, env={**os.environ, "PYTHONPATH": REPO})
    assert r.stdout.strip() == "ok", r.stderr


def test_jax_pyptx_to_torch_is_the_lazy_entry_point():
    import jax_pyptx

    assert jax_pyptx.to_torch is to_torch


def test_one_op_per_kernel_family():
    assert re.fullmatch(r"jax_pyptx::rms_norm_[0-9a-f]{8}", RMS.qualname)
    assert RMS.schema == "(Tensor X, Tensor W) -> Tensor"
    assert SWIGLU.schema == "(Tensor G, Tensor U, Tensor beta) -> Tensor"
    assert to_torch(RMS.kernel) is RMS
    again = to_torch(build_rms_norm(4, 64))          # another kernel object, same definition
    assert re.fullmatch(re.escape(RMS.qualname) + r"_\d+", again.qualname)
    other = to_torch(build_rms_norm(2, 64))          # another block: another digest
    assert re.fullmatch(r"jax_pyptx::rms_norm_[0-9a-f]{8}", other.qualname)
    assert other.qualname != RMS.qualname
    name = RMS.qualname.split("::")[1]
    assert getattr(torch.ops.jax_pyptx, name).default is RMS._overload


# ----------------------------------------------------------------------------- values (CPU)
def test_rms_norm_eager_matches_reference():
    x, w = randn(8, 64), randn(64, seed=1)
    y = RMS(x, w)
    assert y.shape == (8, 64) and y.dtype == torch.float32 and y.is_contiguous()
    np.testing.assert_allclose(y.numpy(), rms_ref(x, w).numpy(), rtol=1e-5, atol=1e-5)
    assert torch.equal(x, randn(8, 64))              # inputs untouched


def test_softmax_eager_matches_torch():
    x = randn(12, 64) * 3
    y = SOFTMAX(x)
    np.testing.assert_allclose(y.numpy(), torch.softmax(x.double(), -1).float().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_non_contiguous_input_is_made_contiguous():
    x = randn(64, 8).t()                                # (8, 64), strides (1, 8)
    w = randn(128, seed=1)[::2]                         # stride 2
    np.testing.assert_allclose(RMS(x, w).numpy(), rms_ref(x, w).numpy(), rtol=1e-5, atol=1e-5)


def test_runtime_scalar_as_number_or_0d_tensor():
    g, u = randn(6, 40) * 2, randn(6, 40, seed=1)
    for beta in (1.5, torch.tensor(0.5), torch.tensor(2.0, dtype=torch.float64), 3):
        want = swiglu_ref(g, u, float(beta))
        np.testing.assert_allclose(SWIGLU(g, u, beta).numpy(), want.numpy(), rtol=1e-5,
                                   atol=1e-5)


def test_bf16_and_two_outputs():
    x = torch.linspace(-3, 3, 40).to(torch.bfloat16)
    y, z = to_torch(widen)(x)
    assert (y.dtype, z.dtype) == (torch.float32, torch.bfloat16)
    assert torch.equal(y, x.float()) and torch.equal(z, x)


def test_col_layout_input_and_output():
    x = randn(3, 5)
    assert torch.equal(to_torch(col_in)(x), x.t())
    y = to_torch(col_out)(x)
    assert y.shape == (3, 5) and y.stride() == (1, 3)      # column-major, as written
    assert torch.equal(y, x.reshape(5, 3).t())


# ----------------------------------------------------------------------------- torch.compile
def test_compile_fullgraph_aot_eager_one_graph_with_the_op():
    from torch._dynamo.testing import CompileCounterWithBackend

    cnt = CompileCounterWithBackend("aot_eager")

    def f(x, w, g, u):
        return torch.softmax(RMS(x, w), -1) + 1, SWIGLU(g, u, 1.25) * 2

    x, w, g, u = randn(8, 64), randn(64, seed=1), randn(6, 40, seed=2), randn(6, 40, seed=3)
    a, b = torch.compile(f, fullgraph=True, backend=cnt)(x, w, g, u)
    assert cnt.frame_count == 1
    code = cnt.graphs[0].code
    assert RMS.qualname.replace("::", ".") in code and SWIGLU.qualname.replace("::", ".") in code
    np.testing.assert_allclose(a.numpy(), (torch.softmax(rms_ref(x, w), -1) + 1).numpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.numpy(), (swiglu_ref(g, u, 1.25) * 2).numpy(), rtol=1e-5,
                               atol=1e-5)


def test_compile_dynamic_shapes_one_graph_for_every_m():
    from torch._dynamo.testing import CompileCounterWithBackend

    cnt = CompileCounterWithBackend("aot_eager")
    f = torch.compile(lambda x, w: RMS(x, w) * 2, fullgraph=True, backend=cnt, dynamic=True)
    w = randn(64, seed=1)
    for m in (4, 8, 16):
        x = randn(m, 64, seed=m)
        np.testing.assert_allclose(f(x, w).numpy(), (rms_ref(x, w) * 2).numpy(), rtol=1e-5,
                                   atol=1e-5)
    assert cnt.frame_count == 1


def test_compile_0d_tensor_scalar_is_a_graph_input():
    from torch._dynamo.testing import CompileCounterWithBackend

    cnt = CompileCounterWithBackend("aot_eager")
    f = torch.compile(lambda g, u, b: SWIGLU(g, u, b), fullgraph=True, backend=cnt)
    g, u = randn(6, 40), randn(6, 40, seed=1)
    for beta in (0.5, 1.5, 2.5):                      # a new value is no new graph
        np.testing.assert_allclose(f(g, u, torch.tensor(beta)).numpy(),
                                   swiglu_ref(g, u, beta).numpy(), rtol=1e-5, atol=1e-5)
    assert cnt.frame_count == 1


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("JAX_PYPTX_TORCH_INDUCTOR") != "1",
                    reason="inductor's first CPU compile takes ~20 s; "
                           "set JAX_PYPTX_TORCH_INDUCTOR=1")
def test_compile_inductor():
    x, w = randn(8, 64), randn(64, seed=1)
    f = torch.compile(lambda x, w: RMS(x, w) * 2 + 1, fullgraph=True, backend="inductor")
    np.testing.assert_allclose(f(x, w).numpy(), (rms_ref(x, w) * 2 + 1).numpy(), rtol=1e-5,
                               atol=1e-5)


# ----------------------------------------------------------------------------- fake impl
def test_fake_impl_shapes_dtypes_and_strides():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        y = RMS(torch.empty(1024, 64), torch.empty(64))
        s = SWIGLU(torch.empty(7, 9), torch.empty(7, 9), 2.0)
        yw, zw = to_torch(widen)(torch.empty(100, dtype=torch.bfloat16))
        c = to_torch(col_out)(torch.empty(6, 10))
    assert type(y).__name__ == "FakeTensor"
    assert (tuple(y.shape), y.dtype) == ((1024, 64), torch.float32)
    assert tuple(s.shape) == (7, 9)
    assert (tuple(yw.shape), yw.dtype, zw.dtype) == ((100,), torch.float32, torch.bfloat16)
    assert (tuple(c.shape), c.stride()) == ((6, 10), (1, 6))


def test_meta_tensors_use_the_fake_impl():
    y = RMS(torch.empty(16, 64, device="meta"), torch.empty(64, device="meta"))
    assert y.device.type == "meta" and tuple(y.shape) == (16, 64)


@pytest.mark.parametrize("op, args", [
    ("RMS", lambda: (randn(8, 64), randn(64, seed=1))),
    ("SWIGLU", lambda: (randn(6, 40), randn(6, 40, seed=1), torch.tensor(0.5))),
    ("col_out", lambda: (randn(3, 5),)),
])
def test_opcheck(op, args):
    fam = globals()[op] if op.isupper() else to_torch(globals()[op])
    got = torch.library.opcheck(fam.op, args())
    assert set(got.values()) == {"SUCCESS"}, got


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call, msg", [
    (lambda: RMS(torch.ones(64), torch.ones(64)),
     "kernel 'rms_norm': parameter X expects rank 2 (Tile('M', 64, f32)), got an array of "
     "shape (64,)"),
    (lambda: RMS(torch.ones(8, 64, dtype=torch.bfloat16), torch.ones(64)),
     "kernel 'rms_norm': parameter X expects dtype f32 (Tile('M', 64, f32)), got bfloat16"),
    (lambda: RMS(torch.ones(8, 32), torch.ones(64)),
     "kernel 'rms_norm': parameter X dim 1 must be 64 (Tile('M', 64, f32)), got shape (8, 32)"),
    (lambda: SWIGLU(torch.ones(6, 40), torch.ones(6, 41), 1.0),
     "kernel 'swiglu': shape variable N bound to 40 by G (dim 1) but 41 by U (dim 1)"),
    (lambda: SWIGLU(torch.ones(6, 40), torch.ones(6, 40), torch.ones(3)),
     "kernel 'swiglu': parameter beta is a runtime scalar (f32); got a tensor of shape (3,)"),
    (lambda: RMS(torch.ones(8, 64)),
     "kernel 'rms_norm' takes 2 inputs (X, W); got 1"),
    (lambda: RMS(torch.ones(6, 64), torch.ones(64)),
     "kernel 'rms_norm': the grid (1, 1, 1) cannot cover M=6: each block along grid x handles "
     "4 of M, so M must be a multiple of 4"),
    (lambda: RMS(torch.ones(8, 64), torch.ones(64, device="meta")),
     "kernel 'rms_norm': parameter W is on meta but X is on cpu; tensor inputs must be on one "
     "device"),
    (lambda: to_torch(RMS.kernel, K=3),
     "kernel 'rms_norm': unknown argument 'K'; valid: template parameters (none) and shape "
     "variables (M)"),
    (lambda: to_torch(col_in, M=4)(torch.ones(3, 5)),
     "kernel 'col_in': shape variable M=4 (given to to_torch) conflicts with 3 from the "
     "tensors"),
])
def test_errors_name_the_parameter_its_spec_and_what_was_passed(call, msg):
    with pytest.raises(SpecializationError) as e:
        call()
    assert str(e.value) == msg


def test_error_under_compile_comes_from_the_fake_impl():
    f = torch.compile(lambda x, w: RMS(x, w), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=re.escape(
            "kernel 'rms_norm': parameter X expects dtype f32 (Tile('M', 64, f32)), got "
            "float64")):
        f(torch.ones(8, 64, dtype=torch.float64), torch.ones(64))


# ----------------------------------------------------------------------------- CUDA launch
@pytest.fixture
def recording(tmp_path, monkeypatch):
    """The CUDA impl's launch on CPU tensors through the recording driver table. The PTX is
    loaded as text (no cubin), so the recording table knows the parameter layout."""
    from jax_pyptx.runtime import ffi_bridge as fb

    if not fb.available():
        pytest.skip("jax_pyptx._ffi is not built (pip install -e .)")
    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JAX_PYPTX_PRECOMPILE", "0")
    fb.set_recording(True)
    fb.clear_recording()
    yield fb
    fb.clear_recording()
    fb.set_recording(False)


def test_cuda_launch_rms_norm_records_geometry_and_pointers(recording):
    x, w = randn(8, 64), randn(64, seed=1)
    (y,) = RMS.launch(x, w, stream=0x5EED)
    (y2,) = RMS.launch(x, w, stream=0x5EED)
    assert (y.shape, y.dtype, y.device.type) == ((8, 64), torch.float32, "cpu")
    launches = recording.recorded_launches("rms_norm")
    assert len(launches) == 2
    for launch, out in zip(launches, (y, y2)):
        assert (launch["grid"], launch["block"], launch["cluster"], launch["smem"]) == \
            ((2, 1, 1), (128, 1, 1), (1, 1, 1), 0)
        assert launch["stream"] == 0x5EED
        assert launch["param_sizes"] == (8, 8, 8)
        assert struct.unpack("<QQQ", launch["params"]) == \
            (x.data_ptr(), w.data_ptr(), out.data_ptr())
    loads = [c for c in recording.recorded_calls() if c["fn"] == "cuModuleLoadDataEx"]
    assert len(loads) == 1 and loads[0]["image"] == RMS.kernel.ptx(M=8).encode()


def test_cuda_launch_publishes_the_cubin_and_the_launcher_loads_it(recording, tmp_path,
                                                                   monkeypatch):
    from jax_pyptx.errors import ToolchainError
    from jax_pyptx.toolchain.find import find_tool

    try:
        find_tool("ptxas")
    except ToolchainError:
        pytest.skip("no ptxas")
    monkeypatch.setenv("JAX_PYPTX_PRECOMPILE", "1")
    x = randn(4, 64)
    SOFTMAX.launch(x)
    t = SOFTMAX.kernel.trace(M=4)
    cubin = tmp_path / f"{t.sha256}-sm_90a.cubin"
    assert cubin.exists()
    (load,) = [c for c in recording.recorded_calls() if c["fn"] == "cuModuleLoadData"]
    assert load["image"] == cubin.read_bytes()
    assert [c["name"] for c in recording.recorded_calls() if c["fn"] == "cuLaunchKernelEx"] \
        == ["softmax"]


def test_cuda_launch_scalar_by_value_and_by_pointer(recording):
    g, u = randn(6, 40), randn(6, 40, seed=1)
    (y,) = SWIGLU.launch(g, u, torch.tensor(1.5))          # a CPU 0-d tensor: by value
    beta = torch.tensor(0.5)
    (y2,) = SWIGLU.launch(g, u, beta, scalars_by_pointer=True)
    by_value, by_ptr = recording.recorded_launches("swiglu")
    assert by_value["grid"] == (1, 1, 1) and by_value["block"] == (128, 1, 1)   # 60 chunks of 4
    assert by_value["param_sizes"] == (8, 8, 4, 8)
    assert struct.unpack("<QQfQ", by_value["params"]) == \
        (g.data_ptr(), u.data_ptr(), 1.5, y.data_ptr())
    assert by_ptr["param_sizes"] == (8, 8, 8, 8)
    assert struct.unpack("<QQQQ", by_ptr["params"]) == \
        (g.data_ptr(), u.data_ptr(), beta.data_ptr(), y2.data_ptr())
    t, plan, names = SWIGLU.plan(g, u, beta, scalars_by_pointer=True)
    assert names == ("beta",) and ".param .u64 beta" in t.ptx
    assert [(p.kind, p.index) for p in plan.params] == \
        [("buffer", 0), ("buffer", 1), ("buffer", 2), ("buffer", 3)]


def test_cuda_launch_col_layout_passes_column_major_memory_without_copy(recording):
    xt = randn(5, 3)
    x = xt.t()                                 # (3, 5), already column-major
    (y,) = to_torch(col_in).launch(x)
    (launch,) = recording.recorded_launches("col_in")
    assert struct.unpack("<QQ", launch["params"]) == (xt.data_ptr(), y.data_ptr())
    (z,) = to_torch(col_out).launch(randn(3, 5))
    assert z.shape == (3, 5) and z.stride() == (1, 3)


def test_cuda_launch_tma_workspace_and_tensor_map(recording):
    x = randn(16, 64)
    (y,) = to_torch(tma_touch).launch(x, stream=7)
    (enc,) = [c for c in recording.recorded_calls() if c["fn"] == "cuTensorMapEncodeTiled"]
    assert enc["global_address"] == x.data_ptr()
    assert (enc["global_dims"], enc["box_dims"], enc["swizzle"]) == ((64, 16), (32, 8), 3)
    stores = [c for c in recording.recorded_calls() if c["fn"] == "cuLaunchKernelEx"
              and c["name"] == recording.STORE_KERNEL_NAME]
    (launch,) = recording.recorded_launches("tma_touch")
    assert launch["grid"] == (2, 1, 1) and launch["stream"] == 7 and len(stores) == 1
    xp, out, ws = struct.unpack("<QQQ", launch["params"])     # X, Y, X_tma_desc
    assert (xp, out) == (x.data_ptr(), y.data_ptr()) and ws % 64 == 0
    assert struct.unpack("<Q", stores[0]["params"][:8]) == (ws,)
