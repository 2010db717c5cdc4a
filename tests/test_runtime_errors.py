"""Issue 15, interpreter errors through JAX and ``interpret.launch`` arguments.

An interpreter error inside ``jax.jit`` reaches the user as XLA's ``JaxRuntimeError``; its
message is short and leads with the error class, the user's line and the PTX instruction, and
nothing is logged on stderr. An eager call raises the interpreter's own exception. A read-only
array given to ``interpret.launch`` is never silently left unwritten."""
import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.errors import OutOfBoundsError
from jax_pyptx.interpret import launch
from jax_pyptx.types import f32, u64

from .helpers import line_of


@kernel(arch="sm_80", in_specs=(Tile(8, f32),), out_specs=(Tile(8, f32),), block=(8, 1, 1))
def oob(X, Y):
    p = reg.from_(X.ptr(), u64)
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(p, 4096))  # out of bounds
    ptx.ret()


WHERE = line_of(oob.fn, "# out of bounds")
FIRST = (f"OutOfBoundsError: {WHERE}: out-of-bounds global load ld.global.f32 %f0, "
         f"[%rd2+4096]; by thread (0,0,0) of CTA (0,0,0)")


def _jit_error(fn, capfd, caplog):
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(Exception) as e:
            jax.block_until_ready(fn())
    assert type(e.value).__name__ == "JaxRuntimeError"
    out, err = capfd.readouterr()
    assert err == ""                                    # nothing logged on stderr
    assert [r for r in caplog.records if r.exc_info] == []
    return str(e.value)


def test_an_error_under_jit_is_short_and_leads_with_class_line_and_ptx(capfd, caplog):
    msg = _jit_error(lambda: jax.jit(oob)(jnp.ones(8)), capfd, caplog)
    file, line = WHERE.rsplit(":", 1)
    lines = msg.splitlines()
    assert lines[:3] == [
        "INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):",
        f'  File "{file}", line {line}, in oob',
        lines[2]]
    assert lines[2].startswith(FIRST)
    assert len(lines) == 3


def test_an_error_under_shard_map_is_short_too(capfd, caplog):
    from jax.sharding import Mesh, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
    f = jax.jit(jax.shard_map(oob, mesh=mesh, in_specs=P(), out_specs=P()))
    msg = _jit_error(lambda: f(jnp.ones(8)), capfd, caplog)
    assert msg.splitlines()[2].startswith(FIRST)


def test_an_eager_call_raises_the_interpreters_own_error():
    with pytest.raises(OutOfBoundsError) as e:
        jax.block_until_ready(oob(jnp.ones(8)))
    assert str(e.value).startswith(FIRST.split(": ", 1)[1])
    assert e.value.loc is not None and str(e.value.loc) == WHERE


def test_other_callbacks_errors_are_still_logged(caplog):
    def boom(x):
        raise ValueError("not ours")

    with caplog.at_level(logging.ERROR):
        with pytest.raises(Exception):
            jax.block_until_ready(jax.jit(lambda x: jax.pure_callback(
                boom, jax.ShapeDtypeStruct((), jnp.float32), x))(1.0))
    assert any("pure_callback failed" in r.getMessage() for r in caplog.records)


# ----------------------------------------------------------------------------- launch
DOUBLE = """.version 8.0
.target sm_80
.address_size 64
.visible .entry dbl(.param .u64 pin, .param .u64 pout)
{
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<5>;
\t.reg .f32 %f<3>;
\tld.param.u64 %rd0, [pin];
\tld.param.u64 %rd1, [pout];
\tmov.u32 %r0, %tid.x;
\tmul.wide.u32 %rd2, %r0, 4;
\tadd.s64 %rd3, %rd0, %rd2;
\tld.global.f32 %f0, [%rd3];
\tadd.f32 %f1, %f0, %f0;
\tadd.s64 %rd4, %rd1, %rd2;
\tst.global.f32 [%rd4], %f1;
\tret;
}
"""


def test_launch_reads_a_read_only_input():
    x = np.arange(8, dtype=np.float32)
    x.flags.writeable = False
    out = np.zeros(8, np.float32)
    launch(DOUBLE, "dbl", [x, out], block=(8, 1, 1))
    np.testing.assert_array_equal(out, 2 * np.arange(8, dtype=np.float32))


def test_launch_refuses_to_drop_the_results_of_a_read_only_output():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    out.flags.writeable = False
    with pytest.raises(OutOfBoundsError) as e:
        launch(DOUBLE, "dbl", [x, out], block=(8, 1, 1))
    assert str(e.value) == (
        "<ptx>:17: write to read-only memory in global store st.global.f32 [%rd4], %f1; by "
        "thread (0,0,0) of CTA (0,0,0): address 0x7f0000001100 is in read-only allocation #1 "
        "(param 'pout' (float32[8]), a read-only array: pass a writable array to receive the "
        "results, 32 bytes at 0x7f0000001100) [instruction #8 of dbl]")
