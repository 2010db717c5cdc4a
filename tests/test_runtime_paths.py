"""Every path runs a kernel the same way: ``k.interpret``, ``jax.jit`` on CPU,
``k(x, interpret=True)`` and the PyTorch CPU op bind through ``Kernel.bind`` and launch through
the one host launch (``specialize.host``). A ``Layout.COL`` tensor is its last two dims
swapped in memory on every one of them (``docs/runtime.md``)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_pyptx import InterpreterError, Layout, NotSupportedError, SpecializationError, Tile, kernel, ptx, reg
from jax_pyptx.runtime.callspec import CallSpec
from jax_pyptx.runtime.launch_plan import build_plan
from jax_pyptx.types import f16x2, f32, u32, u64

from .test_runtime_kernels import col_copy, tma_touch


@kernel(arch="sm_90a", in_specs=(Tile("M", "N", f32, Layout.COL), f32),
        out_specs=(Tile("M", "N", f32, Layout.COL),), block=(64, 1, 1),
        grid=lambda M, N: ((M * N + 63) // 64, 1, 1))
def col_affine(X, b, Y):
    """Y[m, n] = X[m, n] + b + (memory index) / 1000: which element sits where in memory
    shows in the result."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(i < X.shape[0] * X.shape[1]):
        off = reg.cvt(i, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v + b + reg.cvt(i, f32) * 0.001)
    ptx.ret()


X = np.arange(15, dtype=np.float32).reshape(3, 5)
# column-major (3, 5): memory index of X[m, n] is n * 3 + m
AFFINE = X + 0.5 + (np.arange(5)[None, :] * 3 + np.arange(3)[:, None]).astype(np.float32) / 1000


def _paths(k, *args):
    torch = pytest.importorskip("torch")
    from jax_pyptx.runtime.torch_op import to_torch

    tensors = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    return {
        "k.interpret": np.asarray(k.interpret(*args)),
        "jit on CPU": np.asarray(jax.jit(k)(*jargs)),
        "interpret=True": np.asarray(k(*jargs, interpret=True)),
        "torch CPU": to_torch(k)(*tensors).numpy(),
    }


@pytest.mark.parametrize("path", ["k.interpret", "jit on CPU", "interpret=True", "torch CPU"])
def test_col_input_same_on_every_path(path):
    """col_copy copies memory: a column-major X (3, 5) is, byte for byte, X.T (5, 3)."""
    out = _paths(col_copy, X)[path]
    np.testing.assert_array_equal(out, X.T)


@pytest.mark.parametrize("path", ["k.interpret", "jit on CPU", "interpret=True", "torch CPU"])
def test_col_input_and_output_same_on_every_path(path):
    out = _paths(col_affine, X, 0.5)[path]
    assert out.shape == (3, 5)
    np.testing.assert_allclose(out, AFFINE, rtol=0, atol=1e-6)


def test_bind_is_the_one_binding():
    b = col_affine.bind(X, 1.0)
    assert b.env == {"M": 3, "N": 5} and b.missing == () and b.template == {}
    b = col_copy.bind(np.zeros((3, 5), np.float32), np.zeros((5, 3), np.float32))
    assert b.env == {"M": 3, "N": 5}
    with pytest.raises(SpecializationError) as e:
        col_affine.bind(X, np.ones(2, np.float32))
    assert str(e.value) == ("kernel 'col_affine': parameter b is a runtime scalar (f32); got "
                            "an array of shape (2,)")
    with pytest.raises(SpecializationError) as e:
        col_affine.bind(X, 1.0, M=4)
    assert str(e.value) == ("kernel 'col_affine': shape variable M=4 conflicts with 3 from "
                            "the arrays")
    with pytest.raises(SpecializationError) as e:
        col_affine.interpret(X)
    assert str(e.value) == "kernel 'col_affine' takes 2 inputs (X, b); got 1"


def test_tma_descriptor_on_the_interpreter_is_checked_like_the_driver():
    """Issue 12: the host launch builds the interpreter's tensor map from the Tile spec and
    checks it as cuTensorMapEncodeTiled does (tma_touch's 256-byte inner box does not fit its
    128B swizzle); a valid one runs (test_interp_tma_kernel)."""
    with pytest.raises(InterpreterError) as e:
        tma_touch.interpret(np.ones((16, 64), np.float32))
    assert str(e.value) == (
        "kernel 'tma_touch': TMA descriptor 'X_tma_desc': invalid tensor map (f32 rank 2, "
        "dims (64, 16), byte strides (4, 256), box (64, 8), element strides (1, 1)): the inner box "
        "dimension is 256 bytes, more than the 128-byte swizzle span (the driver's "
        "cuTensorMapEncodeTiled rejects it too)")


@kernel(arch="sm_90a", in_specs=(Tile("M", 64, f16x2),), out_specs=(Tile("M", 64, f32),),
        block=(128, 1, 1))
def tma_f16x2(X, Y):
    d = X.tma_desc(box=(8, 64))
    ptx.inst.prefetch.tensormap(ptx.addr(d))
    ptx.ret()


def test_tma_dtype_without_a_tensor_map_type_is_not_supported():
    spec = CallSpec(kernel=tma_f16x2, template=(), env=(("M", 8),))
    with pytest.raises(NotSupportedError) as e:
        build_plan(spec)
    assert str(e.value).startswith(
        "kernel 'tma_f16x2': TMA descriptor 'X_tma_desc': dtype f16x2 has no "
        "CUtensorMapDataType; allowed: b16, b32, ")
    assert str(e.value).endswith("; describe the tensor with one of those (e.g. its bytes as "
                                 "u8) or load it without TMA")


def test_no_lowering_for_another_platform_is_not_supported():
    from jax_pyptx.runtime.lowering import lower

    class _Ctx:
        class module_context:
            platforms = ("rocm",)

    spec = CallSpec(kernel=col_copy, template=(), env=(("M", 3), ("N", 5)))
    with pytest.raises(NotSupportedError) as e:
        lower(None, None, _Ctx(), spec=spec)
    assert str(e.value) == (
        "kernel 'col_copy': no lowering for platform rocm; jax_pyptx launches on CUDA, runs on "
        "the CPU interpreter, or pass interpret=True to run the interpreter on any platform")
