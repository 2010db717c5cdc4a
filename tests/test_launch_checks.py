"""Issue 15, launch geometry and arguments: grid limits, grids computed as floats, a shape too
small for the grid, JAX tracers as template parameters, Python lists as arrays. Each test
reproduces the attack and checks the exact message."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from examples.hopper.rms_norm import build_rms_norm
from jax_pyptx import Tile, kernel, ptx
from jax_pyptx.errors import SpecializationError
from jax_pyptx.types import f32

RMS = build_rms_norm(4, 64)
RMS_GRID = f"lambda M: (M // rows, 1, 1) (rows=4, {RMS.grid.__code__.co_filename}:" \
           f"{RMS.grid.__code__.co_firstlineno})"
LIMITS = "(limits: x <= 2147483647, y <= 65535, z <= 65535)"


def _plain(grid, name="k"):
    def body():
        ptx.ret()
    body.__name__ = name
    return kernel(arch="sm_90a", grid=grid)(body)


def _err(fn):
    with pytest.raises(SpecializationError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("grid, message", [
    ((2**31, 1, 1), f"grid x is 2147483648; CUDA allows at most 2147483647 {LIMITS}"),
    ((1, 65536), f"grid y is 65536; CUDA allows at most 65535 {LIMITS}"),
    ((1, 1, 65536), f"grid z is 65536; CUDA allows at most 65535 {LIMITS}"),
])
def test_grid_limits(grid, message):
    assert _err(_plain(grid).ptx) == f"kernel 'k': {message}"


def test_the_largest_grid_is_accepted():
    assert _plain((2**31 - 1, 65535, 65535)).trace().grid == (2**31 - 1, 65535, 65535)


def test_block_limits():
    with pytest.raises(SpecializationError) as e:
        kernel(arch="sm_90a", block=(1, 1, 128))(lambda: ptx.ret())
    assert str(e.value) == ("block z is 128; CUDA allows at most 64 (limits: x <= 1024, "
                            "y <= 1024, z <= 64)")


def test_a_grid_callable_returning_floats_is_refused_not_truncated():
    @kernel(arch="sm_90a", in_specs=(Tile("M", f32),), grid=lambda M: (M / 4, 1))
    def k(X):
        ptx.ret()

    code = k.grid.__code__
    assert _err(lambda: k.ptx(M=10)) == (
        f"kernel 'k': grid lambda M: (M / 4, 1) ({code.co_filename}:{code.co_firstlineno}) "
        f"for M=10 must be ints, got (2.5, 1): 2.5 is a float (use // for integer division)")
    # an exact float is refused too: the grid is integers
    assert "4.0 is a float" in _err(lambda: k.ptx(M=16))


def test_a_constant_float_grid_is_refused():
    assert _err(_plain((2.0, 1)).ptx) == ("kernel 'k': grid must be ints, got (2.0, 1): 2.0 is "
                                          "a float (use // for integer division)")


def test_rms_norm_with_fewer_rows_than_a_block_says_what_is_wrong():
    x, w = np.ones((2, 64), np.float32), np.ones(64, np.float32)
    zero = (f"kernel 'rms_norm': grid {RMS_GRID} for M=2 gives (0, 1, 1): grid x is 0, but "
            f"every grid dim must be at least 1 (M=2 is too small for this grid)")
    assert _err(lambda: RMS.ptx(M=2)) == zero
    assert _err(lambda: RMS.interpret(x, w)) == zero
    # the JAX call knows the kernel's covers declaration (4 rows per block along x)
    covered = ("kernel 'rms_norm': M=2 is less than one block's share: each block along grid x "
               "handles 4 of M, so M must be a positive multiple of 4 (with M=2 the grid has "
               "no blocks along x)")
    assert _err(lambda: RMS(jnp.asarray(x), jnp.asarray(w))) == covered
    assert _err(lambda: jax.jit(RMS)(jnp.asarray(x), jnp.asarray(w))) == covered


@kernel(arch="sm_90a", in_specs=(Tile("M", f32),), out_specs=(Tile("M", f32),))
def scaled(X, Y, *, scale=2.0):
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("M", f32), f32), out_specs=(Tile("M", f32),))
def scaled_rt(X, beta, Y, *, scale=2.0):
    ptx.ret()


def test_a_jax_tracer_as_template_parameter_says_how_to_pass_a_runtime_scalar():
    x = jnp.ones(8)
    msg = _err(lambda: jax.jit(lambda a, s: scaled(a, scale=s))(x, 3.0))
    assert msg == (
        "kernel 'scaled': template parameter 'scale' is static (baked into the trace) but got "
        "a JAX tracer (float32[]): a value traced by jit / vmap / grad; pass a Python value "
        "(a static argument: jax.jit(..., static_argnames=...)), or for a value known only at "
        "run time, declare it as a runtime scalar: a positional parameter whose in_specs entry "
        "is a PTX type (in_specs=(..., f32)), passed like an array")
    msg = _err(lambda: jax.jit(lambda a, s: scaled_rt(a, 1.0, scale=s))(x, 3.0))
    assert msg.endswith("or for a value known only at run time, pass it as the kernel's "
                        "runtime scalar beta")
    assert _err(lambda: scaled(x, scale=jnp.float32(3.0))) == (
        "kernel 'scaled': template parameter 'scale' is static (baked into the trace) but got "
        "a JAX array (float32[]); pass a Python number (float(x), int(x)), or for a value "
        "known only at run time, declare it as a runtime scalar: a positional parameter whose "
        "in_specs entry is a PTX type (in_specs=(..., f32)), passed like an array")
    # an unhashable Python value (a list) is a valid template value, keyed by its repr
    # (pyptx_api.md 2.2; tests/test_pyptx_kernel_api.py)


def test_a_python_list_argument_is_named():
    x = np.ones((8, 64), np.float32).tolist()
    assert _err(lambda: RMS.interpret(x, np.ones(64, np.float32))) == (
        "kernel 'rms_norm': parameter X expects an array (Tile('M', 64, f32)); got a Python "
        "list (convert it with np.asarray(...) or jnp.asarray(...))")
    assert _err(lambda: scaled_rt.bind(np.ones(8, np.float32), [1.0])) == (
        "kernel 'scaled_rt': parameter beta expects a runtime scalar (f32); got a Python list "
        "(convert it with np.asarray(...) or jnp.asarray(...))")
    # the JAX call converts lists (jnp.asarray) and runs
    got = RMS(x, np.ones(64, np.float32))
    np.testing.assert_allclose(np.asarray(got), np.ones((8, 64)), rtol=1e-5)
