"""Issue 26, "silent wrong results": trace caches keyed by type and exact value, and runtime
scalars converted only when nothing is lost (every path: ``launch``, ``kernel.interpret``,
JAX eager and under ``jit``, PyTorch)."""
from __future__ import annotations

import numpy as np
import pytest

import jax
import jax.numpy as jnp

from jax_pyptx import SpecializationError, Tile, kernel, ptx, reg
from jax_pyptx.errors import InterpreterError
from jax_pyptx.interpret import launch
from jax_pyptx.runtime.callspec import CallSpec
from jax_pyptx.specialize.keys import exact_key
from jax_pyptx.types import f32, s32, u32, u64

try:
    import torch
except ImportError:            # Python 3.12 CI: no torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

SEEN = []


@kernel(in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),), block=(4, 1, 1))
def scale(X, Y, *, alpha=1.0):
    """Y = X * alpha; a bool alpha means 3 (True) or 5 (False): the trace sees the type."""
    SEEN.append(alpha)
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    factor = (3.0 if alpha else 5.0) if isinstance(alpha, bool) else float(alpha)
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * factor)
    ptx.ret()


X4 = np.ones(4, np.float32)


def _paths():
    return {
        "interpret": lambda a: scale.interpret(X4, alpha=a),
        "eager": lambda a: np.asarray(scale(jnp.asarray(X4), alpha=a, interpret=True)),
        "jit": lambda a: np.asarray(jax.jit(lambda x: scale(x, alpha=a, interpret=True))(X4)),
    }


@pytest.mark.parametrize("path", ["interpret", "eager", "jit"])
def test_template_values_equal_in_python_trace_apart(path):
    run = _paths()[path]
    assert run(1).tolist() == [1.0] * 4
    assert run(True).tolist() == [3.0] * 4          # 1 == True: was the trace of alpha=1
    assert run(1.0).tolist() == [1.0] * 4
    pos, neg = run(0.0), run(-0.0)                  # 0.0 == -0.0: was +0.0 for both
    assert pos.tolist() == [0.0] * 4 and not np.signbit(pos).any()
    assert neg.tolist() == [0.0] * 4 and np.signbit(neg).all()


def test_ptx_of_minus_zero_is_not_the_trace_of_plus_zero():
    plus, minus = scale.ptx(alpha=0.0), scale.ptx(alpha=-0.0)
    assert "0f00000000" in plus and "0f80000000" in minus
    assert scale.trace(alpha=1) is not scale.trace(alpha=True)
    assert scale.trace(alpha=1) is scale.trace(alpha=1)
    SEEN.clear()
    scale.trace(alpha=np.float32(2.0))
    scale.trace(alpha=np.float64(2.0))                # another type: its own trace
    assert [type(v) for v in SEEN] == [np.float32, np.float64]


def test_exact_key_distinguishes_type_and_bits():
    assert exact_key(1) != exact_key(True) != exact_key(1.0)
    assert exact_key(0.0) != exact_key(-0.0)
    assert exact_key((1, [0.0])) != exact_key((1, [-0.0]))
    assert exact_key(np.float32(0.0)) != exact_key(np.float32(-0.0))
    assert exact_key(np.float32(1.0)) != exact_key(np.float64(1.0))
    assert exact_key({"a": 1}) != exact_key({"a": True})
    assert exact_key(float("nan")) == exact_key(float("nan"))
    big = np.arange(5000)                            # its repr elides the middle
    other = big.copy()
    other[2500] = -1
    assert exact_key(big) != exact_key(other)


def test_call_spec_compares_template_scalars_and_raw_exactly():
    a = CallSpec(kernel=scale, template=(("alpha", 1),), env=())
    b = CallSpec(kernel=scale, template=(("alpha", True),), env=())
    assert a != b and a == CallSpec(kernel=scale, template=(("alpha", 1),), env=())
    z = CallSpec(kernel=scale, template=(), env=(), static_scalars=(np.float32(0.0),))
    nz = CallSpec(kernel=scale, template=(), env=(), static_scalars=(np.float32(-0.0),))
    assert z != nz
    r0 = CallSpec(kernel=scale, template=(), env=(), raw=(("c", np.float32(0.0)),))
    r1 = CallSpec(kernel=scale, template=(), env=(), raw=(("c", np.float32(-0.0)),))
    assert r0 != r1


@kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1))
def copy_n(X, Y):
    ptx.ret()


def test_numpy_integer_shape_variable_is_the_int():
    assert copy_n.trace(N=np.int64(7)) is copy_n.trace(N=7)
    assert copy_n.ptx(N=np.int32(7)) == copy_n.ptx(N=7)
    for bad, shown in [(7.0, "7.0 (float)"), (True, "True (bool)"), ("7", "'7' (str)")]:
        with pytest.raises(SpecializationError) as e:
            copy_n.ptx(N=bad)
        assert str(e.value) == (f"kernel 'copy_n': shape variable N must be a positive integer "
                                f"(an int or a NumPy integer), got {shown}")
    with pytest.raises(SpecializationError) as e:
        copy_n.ptx(N=np.int64(0))
    assert str(e.value) == ("kernel 'copy_n': shape variable N must be a positive integer, "
                            "got np.int64(0)")


@needs_torch
def test_torch_families_key_template_values_exactly():
    from jax_pyptx import to_torch

    one, true = to_torch(scale, alpha=1), to_torch(scale, alpha=True)
    assert one is not true and one is to_torch(scale, alpha=1)
    assert one(torch.ones(4)).tolist() == [1.0] * 4
    assert true(torch.ones(4)).tolist() == [3.0] * 4
    neg = to_torch(scale, alpha=-0.0)(torch.ones(4))
    assert bool(torch.signbit(neg).all())


# ----------------------------------------------------------------------------- runtime scalars
@kernel(in_specs=(Tile(4, f32), u32, f32), out_specs=(Tile(4, f32),), block=(4, 1, 1))
def affine_n(X, n, a, Y):
    """Y = X * n + a (n a u32, a an f32)."""
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * reg.cvt(n, f32) + a)
    ptx.ret()


U32 = "a .u32 takes an integer in [0, 4294967295]"
F32 = "a .f32 takes a real number of magnitude at most 3.40282e+38 (rounded)"
REFUSED_N = [
    (3.7, "got 3.7 (float): not an integer (it would be truncated); " + U32),
    (np.float32(2.5), "got np.float32(2.5) (float32): not an integer (it would be truncated); "
     + U32),
    ("5", "got the string '5': strings are never converted; pass a number (" + U32 + ")"),
    (np.int64(-1), "got np.int64(-1) (int64): out of range; " + U32),
    (-1, "got -1 (int): out of range; " + U32),
    (2 ** 32, "got 4294967296 (int): out of range; " + U32),
    (1 + 2j, "got (1+2j) (complex): not a real number; " + U32),
    (None, "got None (NoneType): not a real number; " + U32),
]


def _scalar_paths():
    x = jnp.asarray(X4)
    paths = {
        "interpret": lambda n, a: affine_n.interpret(X4, n, a),
        "eager": lambda n, a: np.asarray(affine_n(x, n, a, interpret=True)),
        "jit": lambda n, a: np.asarray(jax.jit(
            lambda x: affine_n(x, n, a, interpret=True))(x)),
    }
    if torch is not None:
        from jax_pyptx import to_torch

        paths["torch"] = lambda n, a: to_torch(affine_n)(torch.ones(4), n, a).numpy()
    return paths


@pytest.mark.parametrize("path", ["interpret", "eager", "jit", "torch"])
def test_exact_runtime_scalars_of_any_numeric_type_are_accepted(path):
    if path not in _scalar_paths():
        pytest.skip("torch is not installed")
    run = _scalar_paths()[path]
    for n in (3, 3.0, np.float32(3.0), np.int64(3), np.uint8(3)):
        assert run(n, 0.5).tolist() == [3.5] * 4
    assert run(True, np.float16(0.25)).tolist() == [1.25] * 4
    assert run(0, 1e38).tolist() == [float(np.float32(1e38))] * 4     # rounded, in range


@pytest.mark.parametrize("path", ["interpret", "eager", "jit", "torch"])
@pytest.mark.parametrize("value, msg", REFUSED_N)
def test_lossy_runtime_scalars_are_refused(path, value, msg):
    if path not in _scalar_paths():
        pytest.skip("torch is not installed")
    with pytest.raises(SpecializationError) as e:
        _scalar_paths()[path](value, 0.5)
    assert str(e.value) == f"kernel 'affine_n': runtime scalar n (.u32) {msg}"


@pytest.mark.parametrize("path", ["interpret", "eager", "jit", "torch"])
def test_float_scalar_past_its_range_is_refused(path):
    if path not in _scalar_paths():
        pytest.skip("torch is not installed")
    with pytest.raises(SpecializationError) as e:
        _scalar_paths()[path](1, 1e40)
    assert str(e.value) == ("kernel 'affine_n': runtime scalar a (.f32) got 1e+40 (float): out "
                            "of range (it would become inf); " + F32)


def test_traced_float_for_an_integer_scalar_is_refused_under_jit():
    f = jax.jit(lambda x, n: affine_n(x, n, 0.0, interpret=True))
    with pytest.raises(SpecializationError) as e:
        f(X4, jnp.float32(2.9))
    assert str(e.value) == ("kernel 'affine_n': runtime scalar n (.u32) got a float32 traced "
                            "value: it would be truncated; " + U32 + "; cast it explicitly "
                            "(x.astype(jnp.uint32))")
    assert f(X4, jnp.uint32(2)).tolist() == [2.0] * 4
    g = jax.jit(lambda x, n: affine_n(x, n.astype(jnp.uint32), 0.0, interpret=True))
    assert g(X4, jnp.float32(2.0)).tolist() == [2.0] * 4


@needs_torch
def test_torch_float_tensor_for_an_integer_scalar_is_refused():
    from jax_pyptx import to_torch

    with pytest.raises(SpecializationError) as e:
        to_torch(affine_n)(torch.ones(4), torch.tensor(2.9), 0.0)
    assert str(e.value) == ("kernel 'affine_n': runtime scalar n (.u32) got a float32 tensor: "
                            "it would be truncated; " + U32 + "; cast it explicitly "
                            "(t.to(torch.int64))")
    with pytest.raises(SpecializationError) as e:               # CPU: its value is checked
        to_torch(affine_n)(torch.ones(4), torch.tensor(-1), 0.0)
    assert str(e.value) == ("kernel 'affine_n': runtime scalar n (.u32) got -1 (int): out of "
                            "range; " + U32)


LAUNCH_PTX = """
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 Y, .param .u32 n, .param .f16 h, .param .s32 i, .param .pred p)
{
 .reg .b32 %r<3>; .reg .b16 %h<1>; .reg .b64 %rd<1>; .reg .pred %p<1>;
 ld.param.u64 %rd0, [Y]; ld.param.u32 %r0, [n]; ld.param.b16 %h0, [h]; ld.param.s32 %r1, [i];
 cvta.to.global.u64 %rd0, %rd0;
 st.global.u32 [%rd0], %r0; st.global.b16 [%rd0+4], %h0; st.global.s32 [%rd0+8], %r1;
 ret;
}"""


def test_launch_scalars_convert_only_exactly():
    y = np.zeros(3, np.uint32)
    launch(LAUNCH_PTX, "k", [y, np.float64(7.0), 1.5, np.int8(-3), 1])
    assert y[0] == 7 and y[1:2].view(np.float16)[0] == 1.5 and y[2:].view(np.int32)[0] == -3
    cases = [
        ([y, np.int64(-1), 1.0, 0, 0], "param 'n' (.u32) got np.int64(-1) (int64): out of "
         "range; " + U32),
        ([y, 1, 70000.0, 0, 0], "param 'h' (.f16) got 70000.0 (float): out of range (it would "
         "become inf); a .f16 takes a real number of magnitude at most 65504 (rounded)"),
        ([y, 1, 1.0, 2 ** 31, 0], "param 'i' (.s32) got 2147483648 (int): out of range; a .s32 "
         "takes an integer in [-2147483648, 2147483647]"),
        ([y, 1, 1.0, 0, 2], "param 'p' (.pred) got 2 (int): not 0 or 1; a .pred takes True / "
         "False (or a number equal to 0 or 1)"),
        ([y, "3", 1.0, 0, 0], "param 'n' (.u32) got the string '3': strings are never "
         "converted; pass a number (" + U32 + ")"),
    ]
    for args, msg in cases:
        with pytest.raises(InterpreterError) as e:
            launch(LAUNCH_PTX, "k", args)
        assert str(e.value) == msg


def test_raw_params_follow_the_same_rules():
    @kernel(in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32, partial=True),), raw_params=[("k", s32)])
    def with_raw(X, Y):
        ptx.ret()

    with pytest.raises(SpecializationError) as e:
        with_raw.interpret(X4, k=np.float32(1.5))
    assert str(e.value) == ("kernel 'with_raw': raw parameter 'k' (.s32) got np.float32(1.5) "
                            "(float32): not an integer (it would be truncated); a .s32 takes an "
                            "integer in [-2147483648, 2147483647]")
    assert with_raw.interpret(X4, k=np.float32(2.0)).shape == (4,)
