"""Kernels as JAX operations on the CPU interpreter: values (eager and jit), ptx_call options,
and the errors for wrong dtype / rank / shape, grid coverage and aliasing."""
from __future__ import annotations

import logging

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_pyptx import SpecializationError, ptx_call
from examples.hopper.layer_norm import build_layer_norm, reference as ln_ref
from examples.hopper.rms_norm import build_rms_norm, reference as rms_ref
from examples.hopper.softmax import build_softmax, reference as sm_ref
from examples.hopper.swiglu import build_swiglu, reference as swiglu_ref

from .test_runtime_kernels import accumulate, axpy, col_copy

RMS = build_rms_norm(4, 64)
SOFTMAX = build_softmax(4, 64)
LN = build_layer_norm(4, 64)
SWIGLU = build_swiglu()


def _rand(*shape, seed=0, scale=1.0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
                       * scale)


class ExamplesTest(chex.TestCase):
    """The documented flow: ``k = build_rms_norm(4, 64); out = k(x, w)``, with and without jit."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_rms_norm(self):
        x, w = _rand(8, 64), _rand(64, seed=1)
        out = self.variant(RMS)(x, w)
        chex.assert_shape(out, (8, 64))
        np.testing.assert_allclose(out, rms_ref(x, w), rtol=1e-5, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_softmax(self):
        x = _rand(8, 64, scale=3.0)
        np.testing.assert_allclose(self.variant(SOFTMAX)(x), sm_ref(x), rtol=1e-5, atol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_layer_norm(self):
        x, w, b = _rand(4, 64) + 2.0, _rand(64, seed=1), _rand(64, seed=2)
        np.testing.assert_allclose(self.variant(LN)(x, w, b), ln_ref(x, w, b),
                                   rtol=1e-5, atol=1e-5)

    @chex.variants(with_jit=True, without_jit=True)
    def test_swiglu_scalar_operand(self):
        g, u = _rand(6, 40, scale=2.0), _rand(6, 40, seed=1)
        f = self.variant(lambda g, u, beta: SWIGLU(g, u, beta))
        b1, b2 = jnp.float32(1.0), jnp.float32(0.5)
        np.testing.assert_allclose(f(g, u, b1), swiglu_ref(g, u, 1.0), rtol=1e-5, atol=1e-6)
        # a new value of the runtime scalar: no new trace, no new compile
        with _Records() as logged, jax.log_compiles():
            np.testing.assert_allclose(f(g, u, b2), swiglu_ref(g, u, 0.5), rtol=1e-5,
                                       atol=1e-6)
        assert not [m for m in logged if m.startswith(("Compiling", "Finished tracing"))], \
            logged


class _Records(logging.Handler):
    """The messages JAX logs while it is entered (``jax.log_compiles()``)."""

    def __enter__(self):
        self.messages = []
        self._was = logging.getLogger("jax").level
        logging.getLogger("jax").addHandler(self)
        logging.getLogger("jax").setLevel(logging.WARNING)
        return self.messages

    def __exit__(self, *exc):
        logging.getLogger("jax").removeHandler(self)
        logging.getLogger("jax").setLevel(self._was)

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_runtime_scalar_is_an_operand_not_a_recompile():
    x, w = _rand(3, 40), _rand(40, seed=1)
    f = jax.jit(lambda x, w, a: axpy(x, w, a))
    for a in (2.0, -1.0, 0.25):
        np.testing.assert_allclose(f(x, w, jnp.float32(a)), a * x + w, rtol=1e-6)
    assert f._cache_size() == 1
    jaxpr = jax.make_jaxpr(lambda x, w, a: axpy(x, w, a))(x, w, 1.0)
    eqn = next(e for e in jaxpr.jaxpr.eqns if e.primitive.name == "pyptx_call")
    assert len(eqn.invars) == 3 and eqn.invars[2].aval.shape == ()


def test_eager_scalar_values_share_one_specialization(caplog):
    x, w = _rand(11, 40), _rand(40, seed=1)
    with caplog.at_level(logging.WARNING, logger="jax"), jax.log_compiles():
        for a in (2.0, -1.0, 0.25):
            np.testing.assert_allclose(axpy(x, w, a), a * x + w, rtol=1e-6)
        axpy(_rand(12, 40), w, 1.0)             # (a new shape is a new executable)
    compiled = [r.getMessage() for r in caplog.records
                if r.getMessage().startswith("Compiling jit(pyptx_call)")]
    assert len(compiled) == 2 and "float32[11,40]" in compiled[0], compiled


def test_jaxpr_shows_the_call():
    x, w = _rand(8, 64), _rand(64)
    text = str(jax.make_jaxpr(ptx_call(RMS, name="my_rms"))(x, w))
    assert "custom_vjp_call[\n      name=my_rms" in text        # RMS has a backward
    assert "pyptx_call[\n            spec=rms_norm(M=8, independent=('M',), name='my_rms')" in text


class PtxCallTest(chex.TestCase):
    """``ptx_call`` follows ``pl.pallas_call``: options first, then the inputs."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_out_shape_structure(self):
        x, w = _rand(8, 64), _rand(64)
        sds = jax.ShapeDtypeStruct((8, 64), jnp.float32)
        single = self.variant(ptx_call(RMS, out_shape=sds))(x, w)
        as_tuple = self.variant(ptx_call(RMS, out_shape=(sds,)))(x, w)
        as_list = self.variant(ptx_call(RMS, out_shape=[sds]))(x, w)
        assert isinstance(as_tuple, tuple) and isinstance(as_list, list)
        np.testing.assert_allclose(single, as_tuple[0])
        np.testing.assert_allclose(single, as_list[0])

    @chex.variants(with_jit=True, without_jit=True)
    def test_input_output_aliases(self):
        x0, d = jnp.arange(100, dtype=jnp.float32), jnp.full((100,), 0.5, jnp.float32)
        aliased = self.variant(ptx_call(accumulate, input_output_aliases={0: 0}))(x0, d)
        np.testing.assert_allclose(aliased, x0 + d)       # Y started as X0
        # without the alias Y is a fresh output: uninitialized, as on a GPU, and reading it is
        # reported (test_interp_sanitizer_misses); with the sanitizer off it reads its fresh
        # 0xFF bytes (NaN), as it would read garbage on a GPU: never a plausible zero
        fresh = self.variant(ptx_call(accumulate, sanitize=False))(x0, d)
        assert np.isnan(np.asarray(fresh)).all()

    @chex.variants(with_jit=True, without_jit=True)
    def test_grid_override(self):
        x, w = _rand(3, 40), _rand(40, seed=1)
        with pytest.raises(Exception, match="left 24 of the 120 elements of output 'Y'"):
            self.variant(ptx_call(axpy, grid=(3, 1)))(x, w, 2.0)   # reported: columns 32.. unwritten
        half = self.variant(ptx_call(axpy, grid=(3, 1), partial_outputs="Y"))(x, w, 2.0)   # only 0..31
        np.testing.assert_allclose(half[:, :32], 2.0 * x[:, :32] + w[:32], rtol=1e-6)
        assert np.isnan(np.asarray(half[:, 32:])).all()     # never written: 0xFF bytes, NaN

    @chex.variants(with_jit=True, without_jit=True)
    def test_col_layout(self):
        x = _rand(3, 5)
        out = self.variant(col_copy)(x)
        np.testing.assert_array_equal(out, x.T)

    def test_interpret_true(self):
        x, w = _rand(8, 64), _rand(64)
        np.testing.assert_allclose(ptx_call(RMS, interpret=True)(x, w), rms_ref(x, w),
                                   rtol=1e-5, atol=1e-5)


def test_debug_output(capsys):
    x, w = _rand(8, 64), _rand(64)
    jax.jit(ptx_call(RMS, debug=True, name="dbg"))(x, w).block_until_ready()
    out = capsys.readouterr().out
    assert "[jax_pyptx] call dbg: env={'M': 8} grid=(2, 1, 1) block=(128, 1, 1)" in out
    assert "[jax_pyptx] interpret dbg: grid=(2, 1, 1) block=(128, 1, 1)" in out


# ----------------------------------------------------------------------------- errors
X8, W64 = jnp.ones((8, 64), jnp.float32), jnp.ones((64,), jnp.float32)


def _raises(fn, message):
    with pytest.raises(SpecializationError) as e:
        fn()
    assert str(e.value) == message
    return e.value


@pytest.mark.parametrize("jit", [False, True])
def test_wrong_dtype(jit):
    f = jax.jit(RMS) if jit else RMS
    _raises(lambda: f(X8.astype(jnp.bfloat16), W64),
            "kernel 'rms_norm': parameter X expects dtype f32 (Tile('M', 64, f32)), "
            "got bfloat16")


@pytest.mark.parametrize("jit", [False, True])
def test_wrong_rank(jit):
    f = jax.jit(RMS) if jit else RMS
    _raises(lambda: f(X8[0], W64),
            "kernel 'rms_norm': parameter X expects rank 2 (Tile('M', 64, f32)), got an array "
            "of shape (64,)")


def test_wrong_fixed_dim():
    _raises(lambda: RMS(jnp.ones((8, 32)), W64),
            "kernel 'rms_norm': parameter X dim 1 must be 64 (Tile('M', 64, f32)), got shape "
            "(8, 32)")


def test_shape_variable_conflict():
    _raises(lambda: axpy(jnp.ones((4, 64)), jnp.ones(32), 1.0),
            "kernel 'axpy': shape variable N bound to 64 by X (dim 1) but 32 by W (dim 0)")


def test_grid_cannot_cover():
    _raises(lambda: RMS(jnp.ones((6, 64)), W64),
            "kernel 'rms_norm': the grid (1, 1, 1) cannot cover M=6: each block along grid x "
            "handles 4 of M, so M must be a multiple of 4")
    _raises(lambda: ptx_call(RMS, grid=(1,))(X8, W64),
            "kernel 'rms_norm': the grid (1, 1, 1) cannot cover M=8: 1 blocks along grid x "
            "handle 4 each, 4 in all")


def test_aliasing_mismatch():
    _raises(lambda: ptx_call(RMS, input_output_aliases={1: 0})(X8, W64),
            "kernel 'rms_norm': input_output_aliases {1: 0}: input 1 (W: f32[64]) and output 0 "
            "(Y: f32[8, 64]) must have the same shape, dtype and layout")
    _raises(lambda: ptx_call(RMS, input_output_aliases={0: 1})(X8, W64),
            "kernel 'rms_norm': input_output_aliases {0: 1}: there is no output 1 (the kernel "
            "has 1)")
    _raises(lambda: ptx_call(axpy, input_output_aliases={2: 0})(X8, W64, 1.0),
            "kernel 'axpy': input_output_aliases {2: 0}: input 2 (alpha) is a runtime scalar; "
            "only tensors alias outputs")


def test_other_errors():
    _raises(lambda: RMS(X8),
            "kernel 'rms_norm' takes 2 inputs (X, W); got 1")
    _raises(lambda: RMS(X8, W64, foo=1),
            "kernel 'rms_norm': unknown argument 'foo'; valid: template parameters (none), "
            "shape variables (M) and the call options out_shape, grid, interpret, "
            "input_output_aliases, name, debug, independent, covers, backward, save_outputs, "
            "sanitize, max_steps, timeout, timeline, partial_outputs, schedule, seed")
    _raises(lambda: axpy(X8, W64, jnp.ones(2)),
            "kernel 'axpy': parameter alpha is a runtime scalar (f32); got an array of shape "
            "(2,)")
    _raises(lambda: ptx_call(RMS, out_shape=jax.ShapeDtypeStruct((8, 64), jnp.float16))(X8, W64),
            "kernel 'rms_norm': parameter Y expects dtype f32 (Tile('M', 64, f32)), got float16")
    _raises(lambda: ptx_call(RMS, independent=("K",)),
            "kernel 'rms_norm': independent dim 'K' is not a shape variable; shape variables: M")


def test_primitive_checks_operands_directly():
    """The abstract eval checks what reaches the primitive (e.g. a hand-built bind)."""
    from jax_pyptx.runtime.primitive import CallSpec, bind

    spec = CallSpec(kernel=RMS, template=(), env=(("M", 8),))
    _raises(lambda: jax.eval_shape(lambda x, w: bind(spec, x, w), jnp.ones((4, 64)), W64),
            "kernel 'rms_norm': parameter X expects shape [8, 64] (Tile('M', 64, f32)), got "
            "f32[4, 64]")
    out = jax.eval_shape(lambda x, w: bind(spec, x, w), X8, W64)
    assert out[0].shape == (8, 64) and out[0].dtype == jnp.float32


def test_output_only_shape_variable():
    from jax_pyptx import Tile, kernel, ptx, reg
    from jax_pyptx.types import f32, u32, u64

    @kernel(arch="sm_90a", in_specs=(f32,), out_specs=(Tile("K", f32),), block=(32, 1, 1),
            grid=lambda K: ((K + 31) // 32, 1, 1))
    def fill(value, Y):
        i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + reg.from_(ptx.special.tid.x(), u32)
        with ptx.if_(i < Y.shape[0]):
            ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + reg.cvt(i, u64) * 4), value)
        ptx.ret()

    out = ptx_call(fill, out_shape=jax.ShapeDtypeStruct((40,), jnp.float32))(3.0)
    np.testing.assert_array_equal(out, np.full(40, 3.0, np.float32))
    np.testing.assert_array_equal(jax.jit(lambda v: fill(v, K=5))(2.0), np.full(5, 2.0))
    _raises(lambda: fill(1.0),
            "kernel 'fill': shape variable K appears only in outputs; pass out_shape=... or "
            "K=...")


@pytest.mark.parametrize("name", ["rms_norm", "softmax", "layer_norm", "swiglu"])
def test_example_main(name, capsys):
    import importlib

    importlib.import_module(f"examples.hopper.{name}").main()
    assert capsys.readouterr().out.strip().endswith(f"{name} OK")
