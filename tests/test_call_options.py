"""Call options in one place (issue 27): ``CallOptions``, which entry point takes which, their
checks, and the one merge of a call's options over ``configure()``."""
from __future__ import annotations

import numpy as np
import pytest

import jax.numpy as jnp

from jax_pyptx import SpecializationError, Tile, configure, kernel, ptx, ptx_call, reg
from jax_pyptx.errors import (InputWriteError, InterpreterError, PtxValueError,
                              UnwrittenOutputError)
from jax_pyptx.specialize.options import CallOptions, merge_options, option_names
from jax_pyptx.types import f32, u32, u64


@kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=lambda N: (N // 32, 1, 1))
def scale(X, Y, *, k=2.0):
    i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
    off = reg.cvt(i, u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * float(k))
    ptx.ret()


@kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
def clobber(X, Y):
    """Writes its input: an InputWriteError under the sanitizer."""
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(X.ptr() + off), v)
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


X = np.arange(64, dtype=np.float32)
X32 = np.ones(32, np.float32)


def test_each_entry_point_takes_its_options_from_the_one_table():
    assert option_names("interpret") == ("sanitize", "max_steps", "timeout", "timeline",
                                         "partial_outputs", "schedule", "seed")
    assert option_names("configure") == ("grid", "interpret", "independent", "covers",
                                          "backward", "save_outputs", "max_steps", "timeout",
                                          "timeline", "schedule", "seed")
    assert set(option_names("call")) == {f for f in CallOptions.__dataclass_fields__}


def test_a_call_option_wins_over_configure_and_none_is_not_given():
    configured = {"max_steps": 10, "timeout": 5.0, "schedule": "random", "seed": 3}
    o = merge_options(configured, {"max_steps": 20, "timeout": None})
    assert (o.max_steps, o.timeout, o.schedule, o.seed) == (20, 5.0, "random", 3)
    # schedule and seed go together: giving one replaces both configured
    o = merge_options(configured, {"schedule": "late"})
    assert (o.schedule, o.seed) == ("late", None)
    assert merge_options({}, {}) == CallOptions()
    # the launch does not depend on the backward: any callable, not part of the hash
    unhashable = type("Bwd", (), {"__eq__": lambda s, o: s is o, "__call__": lambda s, *a: a})()
    assert hash(CallOptions(backward=unhashable)) == hash(CallOptions())


def test_options_are_checked_and_normalized_once():
    f = ptx_call(scale, input_output_aliases={0: 0}, covers={"N": ("x", 32)}, debug=1)
    assert f.__name__ == "scale"
    with pytest.raises(SpecializationError) as e:
        ptx_call(scale, covers={"M": ("x", 32)})
    assert str(e.value) == "kernel 'scale': covers names 'M', not a shape variable (N)"
    with pytest.raises(PtxValueError) as e:            # at ptx_call, not at the first call
        ptx_call(scale, sanitize="yes")
    assert str(e.value).startswith("sanitize='yes' is not a sanitizer mode: use True")
    with pytest.raises(SpecializationError) as e:
        scale.interpret(X, partial_outputs=("Z",))
    assert str(e.value) == ("kernel 'scale': partial_outputs takes output names ('Y') or "
                            "indices into out_specs (0 to 0), got 'Z'")


def test_the_options_a_call_is_made_with_reach_the_interpreter():
    # schedule and seed are call options too: the interpreter's error names them
    for run in (lambda: clobber.interpret(X32, schedule="random", seed=4),
                lambda: clobber(jnp.asarray(X32), interpret=True, schedule="random", seed=4)):
        with pytest.raises(InputWriteError, match=r"\[under schedule='random', seed=4: replay "
                                                  r"with these arguments\]"):
            run()
    with pytest.raises(PtxValueError) as e:
        clobber(jnp.asarray(X32), interpret=True, seed=4)
    assert str(e.value) == "seed=4 is only used with schedule='random' (schedule='eager')"
    # sanitize=False on the call: no check, the kernel's values
    np.testing.assert_array_equal(np.asarray(clobber(jnp.asarray(X32), interpret=True,
                                                     sanitize=False)), X32)


def test_configure_checks_when_attached_and_the_call_overrides(tmp_path):
    k = kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
               grid=lambda N: (N // 32, 1, 1))(scale.fn)
    with pytest.raises(InterpreterError) as e:
        configure(k, timeline=str(tmp_path / "missing" / "t.json"))
    assert "its directory" in str(e.value) and "does not exist" in str(e.value)
    configure(k, max_steps=1, interpret=True)
    with pytest.raises(InterpreterError, match="max_steps"):
        k(jnp.asarray(X))                       # the configured limit stops it
    out = k(jnp.asarray(X), max_steps=10_000)   # the call's own limit wins
    np.testing.assert_array_equal(np.asarray(out), 2 * X)


@kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(16, 1, 1))
def half(X, Y):
    """Writes the first 16 elements of Y only."""
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def test_partial_outputs_by_index_0_on_every_path():
    want = np.concatenate([X32[:16], np.full(16, np.nan, np.float32)])   # unwritten: NaN
    for run in (lambda **kw: half.interpret(X32, **kw),
                lambda **kw: np.asarray(half(jnp.asarray(X32), interpret=True, **kw))):
        with pytest.raises(UnwrittenOutputError):
            run()
        np.testing.assert_array_equal(run(partial_outputs=0), want)
        np.testing.assert_array_equal(run(partial_outputs="Y"), want)
