"""The documented runtime (issue 11, runtime side): ``k(x, w)`` on PyTorch tensors (eager,
``torch.compile``, the CUDA launch through the recording driver), ``Kernel.__call__``'s
keyword split and raw parameters, and ``differentiable_kernel`` with real kernels."""
from __future__ import annotations

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import jax
import jax.numpy as jnp

import pyptx
from jax_pyptx import NotSupportedError, SpecializationError, Tile, kernel, ptx, reg
from jax_pyptx.types import f32, s32, u32, u64

from examples.hopper.rms_norm import build_rms_norm, build_rms_norm_bwd

try:
    import torch
except ImportError:            # Python 3.12 CI: no torch; the JAX half still runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RMS = build_rms_norm(4, 64, backward=False)
RMS_BWD = build_rms_norm_bwd(4, 64)


def nrandn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape, np.float32)


def randn(*shape, seed=0):
    return torch.from_numpy(nrandn(*shape, seed=seed))


def arrays_like(n):
    """The same input as a torch tensor (when torch is installed) and a JAX array."""
    return ([torch.ones(n)] if torch is not None else []) + [jnp.ones(n, jnp.float32)]


def rms_ref(x, w, eps=1e-6):
    x = np.asarray(x, np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * np.asarray(w, np.float64)


def rms_grads_ref(x, w, dy, eps=1e-6):
    """dx, dw of y = x * rstd * w (float64, by hand)."""
    x, w, dy = (np.asarray(a, np.float64) for a in (x, w, dy))
    n = x.shape[-1]
    r = 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    xhat = x * r
    g = dy * w
    dx = r * (g - xhat * (g * xhat).sum(-1, keepdims=True) / n)
    return dx, (dy * xhat).sum(0)


# ----------------------------------------------------------------------------- kernels
@kernel(arch="sm_90a", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),),
        raw_params=[("scale", f32), ("N", u32), ("shift", s32)], block=(64, 1, 1),
        grid=lambda N: ((N + 63) // 64, 1, 1))
def affine(X, Y, *, shift=None):
    """Y[i] = X[i] * scale + shift for i < N: scale, N and shift are raw parameters."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    n = ptx.param_value("N")
    with ptx.if_(i < n):
        off = reg.cvt(i, u64) * 4
        v, b = reg.scalar(f32), reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.cvt.rn.f32.s32(b, ptx.param_value("shift"))
        ptx.inst.fma.rn.f32(v, v, ptx.param_value("scale"), b)
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32), Tile("N", f32)),
        block=(32, 1, 1), grid=lambda N: ((N + 31) // 32, 1, 1))
def split(X, P, Q):
    """P = X + 1, Q = X * 2."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(i < X.shape[0]):
        off = reg.cvt(i, u64) * 4
        v, p, q = reg.scalar(f32), reg.scalar(f32), reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.add.f32(p, v, 1.0)
        ptx.inst.mul.f32(q, v, 2.0)
        ptx.inst.st.global_.f32(ptx.addr(P.ptr() + off), p)
        ptx.inst.st.global_.f32(ptx.addr(Q.ptr() + off), q)
    ptx.ret()


# ----------------------------------------------------------------------------- eager
@needs_torch
def test_kernel_call_on_cpu_tensors_runs_the_interpreter():
    x, w = randn(8, 64), randn(64, seed=1)
    y = RMS(x, w)
    assert isinstance(y, torch.Tensor) and (y.shape, y.dtype) == ((8, 64), torch.float32)
    np.testing.assert_allclose(y.numpy(), rms_ref(x, w), rtol=1e-5, atol=1e-5)


def test_one_output_is_a_tensor_several_are_a_tuple_in_torch_and_jax():
    x = nrandn(40)
    if torch is not None:
        p, q = split(torch.from_numpy(x))
        np.testing.assert_array_equal(p.numpy(), x + 1)
        np.testing.assert_array_equal(q.numpy(), x * 2)
        assert isinstance(RMS(torch.ones(4, 64), torch.ones(64)), torch.Tensor)
    got = split(jnp.asarray(x))
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_array_equal(got[1], x * 2)
    jitted = jax.jit(split)(jnp.asarray(x))
    assert isinstance(jitted, tuple) and jitted[0].shape == (40,)
    single = jax.jit(RMS)(jnp.asarray(nrandn(4, 64)), jnp.ones(64))
    assert isinstance(single, jax.Array) and single.shape == (4, 64)


@needs_torch
def test_torch_call_is_the_kernels_op_with_a_cuda_impl():
    from jax_pyptx.runtime.torch_call import op_name

    name = op_name(RMS, ())
    assert name == pyptx.to_torch(RMS).name
    qual = f"jax_pyptx::{name}"
    for key in ("CPU", "CUDA", "Meta"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(qual, key), key


@needs_torch
def test_compile_traces_the_call_as_one_op():
    from torch._dynamo.testing import CompileCounterWithBackend

    cnt = CompileCounterWithBackend("aot_eager")
    f = torch.compile(lambda x, w: RMS(x, w) * 2, fullgraph=True, backend=cnt)
    x, w = randn(8, 64), randn(64, seed=1)
    np.testing.assert_allclose(f(x, w).numpy(), 2 * rms_ref(x, w), rtol=1e-5, atol=1e-5)
    assert cnt.frame_count == 1 and cnt.op_count == 2      # the kernel's op and the multiply
    graph = cnt.graphs[0]
    targets = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    assert any(t.startswith("jax_pyptx." + pyptx.to_torch(RMS).name) for t in targets), targets


@needs_torch
def test_compile_with_the_default_backend():
    f = torch.compile(lambda x, w: RMS(x, w), fullgraph=True)
    x, w = randn(12, 64), randn(64, seed=1)
    np.testing.assert_allclose(f(x, w).numpy(), rms_ref(x, w), rtol=1e-5, atol=1e-5)


@needs_torch
def test_compile_with_keywords_and_two_kernels():
    from torch._dynamo.testing import CompileCounterWithBackend

    cnt = CompileCounterWithBackend("eager")
    f = torch.compile(lambda x: affine(x, scale=3.0, shift=-1)[:4] + split(x)[1][:4],
                      fullgraph=True, backend=cnt)
    x = randn(100)
    want = x.numpy() * 3 - 1 + x.numpy() * 2
    np.testing.assert_allclose(f(x).numpy(), want[:4], rtol=1e-6)
    assert cnt.frame_count == 1


# ----------------------------------------------------------------------------- keywords
def test_raw_params_from_keywords_shape_env_and_template():
    x = nrandn(100)
    want = x * 0.5 + 7
    # scale by keyword, N from the shape variable, shift from the template parameter
    if torch is not None:
        np.testing.assert_allclose(affine(torch.from_numpy(x), scale=0.5, shift=7).numpy(),
                                   want, rtol=1e-6)
    np.testing.assert_allclose(affine(jnp.asarray(x), scale=0.5, shift=7), want, rtol=1e-6)
    np.testing.assert_allclose(affine.interpret(x, scale=0.5, shift=7), want, rtol=1e-6)
    got = jax.jit(lambda x: affine(x, scale=2.0, shift=0))(jnp.asarray(x))
    np.testing.assert_allclose(got, x * 2, rtol=1e-6)


@pytest.mark.parametrize("call, err, msg", [
    (lambda x: affine(x, shift=1), SpecializationError,
     "kernel 'affine': raw parameter 'scale' (f32) has no value; pass it by keyword "
     "(scale=...), or name it like a shape variable or a template parameter"),
    (lambda x: affine(x, scale=1.0), SpecializationError,
     "kernel 'affine': raw parameter 'shift' (s32) has no value; pass it by keyword "
     "(shift=...), or name it like a shape variable or a template parameter"),
    (lambda x: affine(x, scale=1.0, shift=2 ** 31), SpecializationError,
     "kernel 'affine': raw parameter 'shift' (.s32) got 2147483648 (int): out of range; a "
     ".s32 takes an integer in [-2147483648, 2147483647]"),
    (lambda x: affine(x, scale="a", shift=0), SpecializationError,
     "kernel 'affine': raw parameter 'scale' (.f32) got the string 'a': strings are never "
     "converted; pass a number (a .f32 takes a real number of magnitude at most 3.40282e+38 "
     "(rounded))"),
])
def test_raw_param_errors(call, err, msg):
    for x in arrays_like(8):
        with pytest.raises(err) as e:
            call(x)
        assert str(e.value) == msg


def test_traced_raw_value_is_refused():
    with pytest.raises(SpecializationError, match="raw parameter 'scale' \\(.f32\\) must be a "
                                                  "number known when the kernel is called"):
        jax.jit(lambda x, s: affine(x, scale=s, shift=0))(jnp.ones(8), 2.0)


def test_array_raw_params_cannot_be_given_to_a_call():
    @kernel(arch="sm_90a", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
            raw_params=[("blob", "b8", 16, 8)])
    def k(X, Y):
        ptx.ret()

    for x in arrays_like(4):
        with pytest.raises(NotSupportedError) as e:
            k(x)
        assert str(e.value) == (
            "kernel 'k': raw parameter 'blob' is a .b8[16] array; a kernel call passes scalar "
            "raw parameters only (launch it by hand with jax_pyptx.interpret.launch, or make "
            "it a Tile / runtime scalar parameter)")


@needs_torch
def test_interpret_takes_memory_for_array_and_pointer_raw_params():
    @kernel(arch="sm_90a", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
            raw_params=[("blob", "b8", 16, 8), ("n", u32)])
    def k(X, Y):
        ptx.ret()

    x = np.ones(4, np.float32)
    # the kernel writes nothing: Y is declared written in part, so its fresh 0xFF bytes (NaN)
    # come back
    assert np.isnan(k.interpret(x, blob=bytes(16), n=3, partial_outputs="Y")).all()
    with pytest.raises(SpecializationError) as e:
        k.interpret(x, n=3)
    assert str(e.value) == ("kernel 'k': raw parameter 'blob' (a .b8[16] array) has no value; "
                            "pass it by keyword (blob=...: bytes for an array, a NumPy array "
                            "for the memory a pointer points at)")


@needs_torch
def test_unknown_keyword_in_a_torch_call_lists_every_kind():
    with pytest.raises(TypeError) as e:
        affine(randn(8), scale=1.0, shift=0, bogus=1, M=2)
    assert isinstance(e.value, SpecializationError)
    assert str(e.value) == (
        "kernel 'affine': no template parameter or shape variable named 'bogus', 'M'. "
        "Template params: shift. Shape vars: N. Raw params: scale, N, shift.")


def test_unknown_keyword_in_a_jax_call_lists_raw_params_too():
    with pytest.raises(SpecializationError) as e:
        affine(jnp.ones(8), scale=1.0, bogus=1)
    assert str(e.value) == (
        "kernel 'affine': unknown argument 'bogus'; valid: template parameters (shift), shape "
        "variables (N), raw parameters (scale, N, shift) and the call options out_shape, grid, "
        "interpret, input_output_aliases, name, debug, independent, covers, backward, "
        "save_outputs, sanitize, max_steps, timeout, timeline, partial_outputs, schedule, seed")


@needs_torch
def test_shape_variable_keyword_must_be_a_non_negative_int():
    # a call takes N=0 (an empty call, tests/test_zero_size.py); a float never
    with pytest.raises(SpecializationError) as e:
        split(randn(8), N=2.5)
    assert str(e.value) == ("kernel 'split': shape variable N must be a non-negative integer "
                            "(an int or a NumPy integer), got 2.5 (float)")


def test_a_kernel_without_specs_cannot_be_called():
    @kernel(arch="sm_90a")
    def bare():
        ptx.ret()

    for args in [()] + [(a,) for a in arrays_like(2)]:
        with pytest.raises(NotImplementedError) as e:
            bare(*args)
        assert "in_specs" in str(e.value)
        assert str(e.value).startswith("kernel 'bare' has no in_specs: calling it needs its "
                                       "tensors described")


def test_ptx_takes_raw_param_names_and_ignores_them():
    assert affine.ptx(N=8, scale=1.0) == affine.ptx(N=8)


# ----------------------------------------------------------------------------- CUDA launch
@pytest.fixture
def recording(tmp_path, monkeypatch):
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


@needs_torch
def test_cuda_launch_passes_raw_param_bytes_in_entry_order(recording):
    """The op ``k(x, scale=..)`` calls on CUDA tensors: the launch the recording table sees
    (CPU tensors stand in for device memory)."""
    x = randn(100)
    fam = pyptx.to_torch(affine, scale=1.25, shift=-3)
    (y,) = fam.launch(x, stream=5)
    (launch,) = recording.recorded_launches("affine")
    assert launch["grid"] == (2, 1, 1) and launch["block"] == (64, 1, 1)
    assert launch["param_sizes"] == (8, 8, 4, 4, 4)
    assert struct.unpack("<QQfIi", launch["params"]) == (x.data_ptr(), y.data_ptr(), 1.25,
                                                          100, -3)


def test_jax_launcher_path_passes_raw_param_bytes(recording):
    from jax_pyptx import ptx_call

    x = jnp.ones(70, jnp.float32)
    jax.block_until_ready(ptx_call(affine, interpret=False, scale=0.5, shift=9)(x))
    (launch,) = recording.recorded_launches("affine")
    assert struct.unpack("<QQfIi", launch["params"])[2:] == (0.5, 70, 9)


# ----------------------------------------------------------------------------- autograd
def _rms_backward(x, w, dy):
    dx, dw_rows = RMS_BWD(x, w, dy)
    return dx, dw_rows.sum(0)


@needs_torch
def test_differentiable_kernel_matches_the_analytic_gradient():
    op = pyptx.differentiable_kernel(RMS, _rms_backward)
    assert op.__name__ == "rms_norm" and op.forward_kernel is RMS
    assert op.backward_kernel is _rms_backward and "rms_norm" in op.__doc__
    x = randn(8, 64).requires_grad_()
    w = randn(64, seed=1).requires_grad_()
    dy = randn(8, 64, seed=2)
    y = op(x, w)
    np.testing.assert_allclose(y.detach().numpy(), rms_ref(x.detach(), w.detach()), rtol=1e-5,
                               atol=1e-5)
    y.backward(dy)
    dx, dw = rms_grads_ref(x.detach(), w.detach(), dy)
    np.testing.assert_allclose(x.grad.numpy(), dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), dw, rtol=1e-4, atol=1e-5)


@needs_torch
def test_differentiable_kernel_against_finite_differences():
    op = pyptx.differentiable_kernel(RMS, _rms_backward)
    x0, w0 = randn(4, 64, seed=3).double(), randn(64, seed=4).double()
    c = randn(4, 64, seed=5).double()

    def loss(x, w):
        return float((op(x.float(), w.float()).double() * c).sum())

    x = x0.float().requires_grad_()
    w = w0.float().requires_grad_()
    (op(x, w).double() * c).sum().backward()
    rng = np.random.default_rng(6)
    for _ in range(3):              # directional derivatives, central differences
        vx, vw = (torch.from_numpy(rng.standard_normal(s)) for s in ((4, 64), (64,)))
        h = 1e-2
        fd = (loss(x0 + h * vx, w0 + h * vw) - loss(x0 - h * vx, w0 - h * vw)) / (2 * h)
        an = float((x.grad.double() * vx).sum() + (w.grad.double() * vw).sum())
        assert abs(fd - an) <= 2e-3 * max(1.0, abs(an)), (fd, an)


@needs_torch
def test_save_for_backward_and_num_grad_inputs():
    seen = {}

    def backward(w, dy):                    # only W saved; returns a gradient for X only
        seen["args"] = (w.shape, dy.shape)
        dx, _ = RMS_BWD(seen["x"], w, dy)
        return dx

    op = pyptx.differentiable_kernel(RMS, backward, save_for_backward=(1,), num_grad_inputs=1)
    x = randn(4, 64).requires_grad_()
    w = randn(64, seed=1).requires_grad_()
    seen["x"] = x.detach()
    dy = randn(4, 64, seed=2)
    op(x, w).backward(dy)
    assert seen["args"] == ((64,), (4, 64))
    np.testing.assert_allclose(x.grad.numpy(), rms_grads_ref(x.detach(), w.detach(), dy)[0],
                               rtol=1e-4, atol=1e-5)
    assert w.grad is None                   # padded with None past num_grad_inputs

    extra = pyptx.differentiable_kernel(RMS, lambda x, w, dy: _rms_backward(x, w, dy) + (1,),
                                        num_grad_inputs=2)
    x2 = x.detach().clone().requires_grad_()
    extra(x2, w.detach()).backward(dy)      # a third gradient is cut off
    np.testing.assert_allclose(x2.grad.numpy(), x.grad.numpy(), rtol=1e-6)

    with pytest.raises(SpecializationError, match="save_for_backward index 5 is out of range "
                                                  "for 2 inputs"):
        pyptx.differentiable_kernel(RMS, backward, save_for_backward=(5,))(x, w)


@needs_torch
def test_differentiable_kernel_under_compile():
    op = pyptx.differentiable_kernel(RMS, _rms_backward)
    f = torch.compile(lambda x, w: (op(x, w) * 3).sum(), backend="aot_eager", fullgraph=True)
    x = randn(8, 64).requires_grad_()
    w = randn(64, seed=1).requires_grad_()
    f(x, w).backward()
    dx, dw = rms_grads_ref(x.detach(), w.detach(), np.full((8, 64), 3.0))
    np.testing.assert_allclose(x.grad.numpy(), dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), dw, rtol=1e-4, atol=1e-5)


def test_differentiable_kernel_on_jax_arrays():
    op = pyptx.differentiable_kernel(RMS, _rms_backward)
    x, w = jnp.asarray(nrandn(8, 64)), jnp.asarray(nrandn(64, seed=1))
    dy = nrandn(8, 64, seed=2)
    gx, gw = jax.grad(lambda x, w: jnp.sum(op(x, w) * dy), argnums=(0, 1))(x, w)
    dx, dw = rms_grads_ref(x, w, dy)
    np.testing.assert_allclose(gx, dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gw, dw, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------- imports
def test_runtime_module_map():
    import importlib

    for name, real in [("cache", "jax_pyptx.compat.cache"),
                       ("jax_support", "jax_pyptx.compat.jax_support"),
                       ("torch_support", "jax_pyptx.compat.torch_support")]:
        assert importlib.import_module("pyptx." + name) is sys.modules[real], name
        assert getattr(pyptx, name) is sys.modules[real], name
    from pyptx.jax_support import call_kernel_via_ffi  # noqa: F401
    from pyptx.torch_support import differentiable_kernel

    assert pyptx.differentiable_kernel is differentiable_kernel
    assert callable(pyptx.detect_arch) and pyptx.kernel is not None


def test_runtime_modules_import_lazily():
    code = ("import sys, pyptx; assert 'torch' not in sys.modules, 'torch'; "
            "assert 'jax' not in sys.modules, 'jax'; "
            "import pyptx.torch_support as ts; assert 'torch' not in sys.modules; "
            "assert ts.is_torch_tensor(1.0) is False; "
            "import pyptx.cache; assert 'jax' not in sys.modules; "
            "assert callable(pyptx.detect_arch) and callable(pyptx.differentiable_kernel); "
            "print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                       env={**os.environ, "PYTHONPATH": REPO})
    assert r.stdout.strip() == "ok", r.stderr
