"""Empty inputs: a shape variable bound to 0 gives empty outputs of the right shapes and dtypes
without tracing or launching the kernel (``jax_pyptx/specialize/empty.py``), on the
interpreter, through JAX (eager, jit, vmap, the CUDA lowering) and through PyTorch."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import jax_pyptx
from jax_pyptx import SpecializationError, Tile, kernel
from jax_pyptx.types import bf16, f32, u32


@kernel(in_specs=(Tile("B", 64, f32),), out_specs=(Tile("B", 64, bf16), Tile("B", u32)),
        block=(64, 1, 1), grid=lambda B: (B, 1, 1))
def never(X, Y, Z):
    raise AssertionError("traced: an empty call must not trace the kernel")


@kernel(in_specs=(Tile("B", "N", f32),), out_specs=(Tile("B", f32),), block=(32, 1, 1),
        grid=lambda B, N: (B, 1, 1))
def row_sum(X, Y):
    raise AssertionError("traced")


def _check(outs, kind):
    y, z = outs
    assert isinstance(y, kind) and isinstance(z, kind)
    assert y.shape == (0, 64) and np.dtype(y.dtype) == np.dtype(ml_dtypes.bfloat16)
    assert z.shape == (0,) and np.dtype(z.dtype) == np.dtype(np.uint32)


def test_interpret_returns_empty_outputs_without_tracing():
    _check(never.interpret(np.zeros((0, 64), np.float32)), np.ndarray)


def test_jax_eager_jit_and_vmap():
    x = jnp.zeros((0, 64), jnp.float32)
    _check(never(x), jax.Array)
    _check(jax.jit(never)(x), jax.Array)
    y, z = jax.vmap(never)(jnp.zeros((3, 0, 64), jnp.float32))    # an empty batch inside vmap
    assert y.shape == (3, 0, 64) and z.shape == (3, 0)
    f = jax_pyptx.ptx_call(never, out_shape=[jax.ShapeDtypeStruct((0, 64), jnp.bfloat16),
                                              jax.ShapeDtypeStruct((0,), jnp.uint32)])
    got = f(x)
    assert isinstance(got, list) and [a.shape for a in got] == [(0, 64), (0,)]


def test_cuda_lowering_has_no_launch():
    x = jnp.zeros((0, 64), jnp.float32)
    text = jax.jit(never).trace(x).lower(lowering_platforms=("cuda",)).as_text()
    assert "custom_call" not in text and "jax_pyptx" not in text
    assert re.search(r"tensor<0x64xbf16>", text) and re.search(r"tensor<0xui32>", text)


def test_an_output_that_would_not_be_empty_is_refused():
    msg = ("kernel 'row_sum': shape variable N is 0 (an empty input), so the kernel is not "
           "launched, but output Y (Tile('B', f32)) has shape (4,), which nothing would write; "
           "an empty input gives empty outputs only when each output has a dimension of size 0 "
           "(skip the call for empty inputs otherwise)")
    x = np.zeros((4, 0), np.float32)
    with pytest.raises(SpecializationError) as e:
        row_sum.interpret(x)
    assert str(e.value) == msg
    with pytest.raises(SpecializationError) as e:
        row_sum(jnp.asarray(x))
    assert str(e.value) == msg
    y = row_sum.interpret(np.zeros((0, 5), np.float32))          # B = 0: empty too
    assert y.shape == (0,) and y.dtype == np.float32


def test_a_trace_still_needs_positive_sizes():
    with pytest.raises(SpecializationError, match=r"^kernel 'never': shape variable B must be a positive "
                                                  r"integer, got 0"):
        never.ptx(B=0)


def test_a_shape_variable_given_as_0_is_an_empty_call():
    # B named by keyword (as for a variable that only outputs use) gives the same empty call
    _check(never.interpret(np.zeros((0, 64), np.float32), B=0), np.ndarray)
    _check(never(jnp.zeros((0, 64), jnp.float32), B=0), jax.Array)
    with pytest.raises(SpecializationError, match=r"^kernel 'never': shape variable B must be a "
                                                  r"non-negative integer, got -1$"):
        never.interpret(np.zeros((0, 64), np.float32), B=-1)
    with pytest.raises(SpecializationError, match=r"shape variable B=0 conflicts with 2 from the "
                                                  r"arrays"):
        never.interpret(np.zeros((2, 64), np.float32), B=0)


def test_to_torch_with_a_shape_variable_fixed_at_0():
    torch = pytest.importorskip("torch")
    from jax_pyptx import to_torch

    y, z = to_torch(never, B=0)(torch.zeros((0, 64), dtype=torch.float32))
    assert tuple(y.shape) == (0, 64) and y.dtype == torch.bfloat16
    assert tuple(z.shape) == (0,) and z.dtype == torch.uint32
    with pytest.raises(SpecializationError, match=r"^kernel 'never': shape variable B must be a "
                                                  r"non-negative integer, got -2$"):
        to_torch(never, B=-2)


def test_torch_returns_empty_tensors():
    torch = pytest.importorskip("torch")
    y, z = never(torch.zeros((0, 64), dtype=torch.float32))
    assert isinstance(y, torch.Tensor) and tuple(y.shape) == (0, 64) and y.dtype == torch.bfloat16
    assert tuple(z.shape) == (0,) and z.dtype == torch.uint32
    with pytest.raises(SpecializationError, match=r"output Y \(Tile\('B', f32\)\) has shape "
                                                  r"\(4,\)"):
        row_sum(torch.zeros((4, 0), dtype=torch.float32))
