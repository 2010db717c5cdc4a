"""Issue 23: outputs never written, stores into inputs, reads through the wrong pointer.

Each planted bug is reported with its error class, the PTX line (and the user's line for a
DSL kernel); its fixed twin runs clean; ``sanitize=False`` reports none of them."""
from __future__ import annotations

import re

import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.errors import (
    InputWriteError, InterpreterError, OutOfBoundsError, ProvenanceError, SanitizerError,
    SpecializationError, UnwrittenOutputError,
)
from jax_pyptx.interpret import launch
from jax_pyptx.types import f32, u32, u64

from .helpers import line_of

# y[i] = 2 x[i], i = 32 %ctaid.x + %tid.x
FILL = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry fill(.param .u64 x, .param .u64 y)
{
    .reg .u32 %r<4>; .reg .u64 %rd<8>; .reg .f32 %f<3>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.u32 %r3, %r2, 32, %r1;
    mul.wide.u32 %rd3, %r3, 4;
    add.u64 %rd4, %rd1, %rd3;
    add.u64 %rd5, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.f32 %f2, %f1, %f1;
    st.global.f32 [%rd5], %f2;
    ret;
}
"""
FIX_HINT = ("On a GPU they hold whatever the buffer held before (here a buffer passed to launch comes back "
            "unchanged; a fresh output of kernel.interpret, jax.jit and the PyTorch op reads 0xFF bytes, NaN "
            "in the float types): write every element (is the grid one block short?), or declare "
            "the output written in part: launch(..., partial_outputs=['y']), kernel.interpret(..., "
            "partial_outputs=['y']) or Tile(..., partial=True)")


# ----------------------------------------------------------------------------- outputs never written
def test_a_grid_one_block_short_is_reported():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    with pytest.raises(UnwrittenOutputError) as ei:
        launch(FILL, "fill", [x, y], grid=3, block=32, outputs=[1])
    assert str(ei.value) == (
        "<ptx>:18: kernel 'fill' left 32 of the 128 elements of output 'y' (argument 1, float32[128]) "
        "unwritten: flat elements 96-127, the first y[96]; the last store traced to it: st.global.f32 "
        "[%rd5], %f2; [instruction #10 of fill]. " + FIX_HINT)
    assert isinstance(ei.value, SanitizerError)
    assert y[:96].tolist() == (2 * x[:96]).tolist() and (y[96:] == 0).all()   # written back first


def test_the_fixed_grid_and_declared_partial_outputs_run_clean():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    launch(FILL, "fill", [x, y], grid=4, block=32, outputs=[1])
    assert y.tolist() == (2 * x).tolist()
    for part in ([1], "y", ["y"]):
        y = np.full(128, 7, np.float32)
        launch(FILL, "fill", [x, y], grid=3, block=32, outputs="y", partial_outputs=part)
        assert y[:96].tolist() == (2 * x[:96]).tolist() and (y[96:] == 7).all()
    y = np.zeros(128, np.float32)
    launch(FILL, "fill", [x, y], grid=3, block=32, outputs=[1], sanitize=False)   # no verdict
    launch(FILL, "fill", [x, y], grid=3, block=32)        # not an output: an in-out buffer


def test_unwritten_ranges_are_listed_with_the_first_index():
    """A 5 x 8 output whose last two columns are never written: the first four ranges, the
    count of the rest, and the first element's 2-d index."""
    k = FILL.replace("    ld.global.f32 %f1, [%rd4];",
                     "    .reg .pred %p1;\n    and.b32 %r2, %r1, 7;\n    setp.ge.u32 %p1, %r2, 6;\n"
                     "    @%p1 ret;\n    ld.global.f32 %f1, [%rd4];")
    x = np.arange(40, dtype=np.float32)
    y = np.zeros((5, 8), np.float32)
    with pytest.raises(UnwrittenOutputError) as ei:
        launch(k, "fill", [x, y], block=40, outputs=[1])
    msg = str(ei.value)
    assert msg.startswith("<ptx>:22: kernel 'fill' left 10 of the 40 elements of output 'y' (argument 1, "
                          "float32[5, 8]) unwritten: flat elements 6-7, 14-15, 22-23, 30-31 and 1 more "
                          "ranges, the first y[0, 6]; the last store traced to it: ")


def test_an_output_no_instruction_stored_into():
    """No store reached the output: the report has no line to name but names the output."""
    k = FILL.replace("    st.global.f32 [%rd5], %f2;\n", "")
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    with pytest.raises(UnwrittenOutputError) as ei:
        launch(k, "fill", [x, y], block=32, outputs=["y"])
    assert ei.value.loc is None
    assert str(ei.value) == ("kernel 'fill' left 32 of the 32 elements of output 'y' (argument 1, "
                             "float32[32]) unwritten: flat elements 0-31, the first y[0]. " + FIX_HINT)


def test_partial_outputs_are_checked():
    x, y = np.zeros(32, np.float32), np.zeros(32, np.float32)
    with pytest.raises(InterpreterError, match=r"^partial_outputs names argument 0 \(param 'x'\), which is "
                                               r"not in outputs: only an output can be written in part$"):
        launch(FILL, "fill", [x, y], block=32, outputs=[1], partial_outputs=[0])
    with pytest.raises(InterpreterError, match="^partial_outputs names parameter 'z', but kernel 'fill' has "
                                               "parameters 'x', 'y'$"):
        launch(FILL, "fill", [x, y], block=32, outputs=[1], partial_outputs="z")


@kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def one_block(X, Y):
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)   # Y store
    ptx.ret()


@kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32, partial=True),),
        block=(32, 1, 1), grid=(1, 1, 1))
def one_block_partial(X, Y):
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def test_a_dsl_kernel_names_the_users_store_line():
    x = np.arange(64, dtype=np.float32)
    where = line_of(one_block.fn, "# Y store")
    with pytest.raises(UnwrittenOutputError) as ei:
        one_block.interpret(x)
    assert str(ei.value.loc) == where
    assert str(ei.value).startswith(
        f"{where}: kernel 'one_block' left 32 of the 64 elements of output 'Y' (argument 1, float32[64]) "
        f"unwritten: flat elements 32-63, the first Y[32]; the last store traced to it: st.global.f32 [")
    # the fixed twin: one block per 32 elements
    assert one_block.interpret(x[:32]).tolist() == x[:32].tolist()
    # written in part on purpose: per call, or per spec
    for part in ("Y", 0, ["Y"]):
        assert one_block.interpret(x, partial_outputs=part)[:32].tolist() == x[:32].tolist()
    assert one_block_partial.interpret(x)[:32].tolist() == x[:32].tolist()
    assert one_block.interpret(x, sanitize=False)[:32].tolist() == x[:32].tolist()
    with pytest.raises(SpecializationError, match=r"^kernel 'one_block': partial_outputs takes output names "
                                                  r"\('Y'\) or indices into out_specs \(0 to 0\), got 'X'$"):
        one_block.interpret(x, partial_outputs="X")
    with pytest.raises(SpecializationError, match="partial must be True or False, got 1"):
        Tile("N", f32, partial=1)


def test_unwritten_outputs_on_the_jax_path():
    import jax.numpy as jnp

    x = np.arange(64, dtype=np.float32)
    with pytest.raises(UnwrittenOutputError, match="left 32 of the 64 elements of output 'Y'"):
        one_block(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(one_block_partial(jnp.asarray(x)))[:32], x[:32])
    np.testing.assert_array_equal(np.asarray(one_block(jnp.asarray(x), partial_outputs="Y"))[:32], x[:32])


# ----------------------------------------------------------------------------- stores into inputs
@kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def doubles_in_place(X, Y):
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(X.ptr() + off), v + v)   # into the input
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


@kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def doubles(X, Y):
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v + v)
    ptx.ret()


def test_a_store_into_an_input_is_reported():
    x = np.arange(32, dtype=np.float32)
    where = line_of(doubles_in_place.fn, "# into the input")
    with pytest.raises(InputWriteError) as ei:
        doubles_in_place.interpret(x)
    msg = str(ei.value)
    assert str(ei.value.loc) == where
    assert re.fullmatch(
        re.escape(where) + r": write into an input: global store st\.global\.f32 \[%rd\d+\], %f\d+; by thread "
        r"\(0,0,0\) of CTA \(0,0,0\): address 0x7f0000000000 \(byte 0 of allocation #0 \(param 'X' "
        r"\(float32\[32\]\), 128 bytes at 0x7f0000000000\)\) is in param 'X', an input that is not an aliased "
        r"output: under jax\.jit on a GPU this writes a buffer XLA owns; write an output instead, or alias "
        r"the input to an output \(input_output_aliases\) to update it in place \[instruction #\d+ of "
        r"doubles_in_place\]", msg), msg
    assert doubles.interpret(x).tolist() == (2 * x).tolist()            # the fixed twin
    assert doubles_in_place.interpret(x, sanitize=False).tolist() == x.tolist()
    assert x.tolist() == list(range(32))             # kernel.interpret never writes the caller's array


def test_stores_into_inputs_on_the_jax_path_and_an_alias():
    import jax
    import jax.numpy as jnp

    from jax_pyptx import ptx_call

    x = np.arange(32, dtype=np.float32)
    with pytest.raises(InputWriteError, match="is in param 'X', an input that is not an aliased output"):
        doubles_in_place(jnp.asarray(x))
    with pytest.raises(Exception) as ei:
        jax.block_until_ready(jax.jit(doubles_in_place)(x))
    assert "\nInputWriteError: " in str(ei.value)
    # X aliased to the output: the kernel owns the buffer; its last store is Y's
    aliased = ptx_call(doubles_in_place, input_output_aliases={0: 0})
    np.testing.assert_array_equal(aliased(jnp.asarray(x)), x)
    np.testing.assert_array_equal(jax.jit(doubles)(x), 2 * x)


def test_launch_inputs_cover_stores_and_atomics():
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    with pytest.raises(InputWriteError) as ei:
        launch(FILL, "fill", [y, x], block=32, inputs=["y"])
    assert str(ei.value).startswith("<ptx>:18: write into an input: global store st.global.f32 [%rd5], %f2; "
                                    "by thread (0,0,0) of CTA (0,0,0): address 0x7f0000001100 (byte 0 of "
                                    "allocation #1 (param 'y' (float32[32]), 128 bytes at 0x7f0000001100)) is in "
                                    "param 'y', an input")
    red = FILL.replace("st.global.f32 [%rd5], %f2;", "red.global.add.f32 [%rd5], %f2;")
    with pytest.raises(InputWriteError, match="^<ptx>:18: write into an input: global reduction red"):
        launch(red, "fill", [x, y], block=32, inputs=[0, 1])
    launch(FILL, "fill", [x, y], block=32, inputs=[0], outputs=[1])       # the fixed twin
    assert y.tolist() == (2 * x).tolist()
    launch(FILL, "fill", [x, y], block=32, inputs=[1], sanitize=False)
    with pytest.raises(InterpreterError, match=r"^argument 1 \(param 'y'\) is named in both inputs and "
                                               r"outputs$"):
        launch(FILL, "fill", [x, y], block=32, inputs=[1], outputs=[1])
    with pytest.raises(InterpreterError, match=r"inputs names argument 1 \(param 'y'\), which is int: only an "
                                               r"array \(or a tensor map over one\) passed to a pointer "
                                               r"parameter can be an input$"):
        launch(FILL, "fill", [x, 0], block=32, inputs=[1])


# ----------------------------------------------------------------------------- the wrong pointer
# 0x1100 = 4352: the second allocation starts there when the first holds 128 bytes (a 4096-byte
# guard gap after each, 256-byte alignment)
WRONG = FILL.replace("add.u64 %rd4, %rd1, %rd3;", "add.u64 %rd4, %rd1, %rd3;\n    add.u64 %rd4, %rd4, 4352;")


def test_an_address_from_x_landing_in_w_is_reported():
    x = np.arange(32, dtype=np.float32)
    w = np.ones(32, np.float32)
    with pytest.raises(ProvenanceError) as ei:
        launch(WRONG, "fill", [x, w], block=32)
    assert str(ei.value) == (
        "<ptx>:17: wrong-buffer global load ld.global.f32 %f1, [%rd4]; by thread (0,0,0) of CTA (0,0,0): "
        "address 0x7f0000001100 was computed from the pointer to allocation #0 (param 'x' (float32[32]), "
        "128 bytes at 0x7f0000000000) but lands 4228 bytes past the end of it, inside allocation #1 (param "
        "'y' (float32[32]), 128 bytes at 0x7f0000001100) (byte 0): an access through the wrong pointer, or "
        "an index past the end of its buffer [instruction #9 of fill]")
    assert isinstance(ei.value, OutOfBoundsError)
    launch(FILL, "fill", [x, w], block=32)              # the fixed twin
    assert w.tolist() == (2 * x).tolist()
    launch(WRONG, "fill", [x, np.ones(32, np.float32)], block=32, sanitize=False)   # no verdict


def test_stores_and_generic_addresses_through_the_wrong_pointer():
    """A store through y's pointer into x, with generic addressing (no cvta), through a
    mov / cvta chain."""
    k = FILL.replace("add.u64 %rd5, %rd2, %rd3;", "cvta.to.global.u64 %rd6, %rd2;\n    mov.b64 %rd7, %rd6;\n"
                     "    sub.s64 %rd7, %rd7, 4352;\n    add.u64 %rd5, %rd7, %rd3;").replace(
                         "st.global.f32 [%rd5], %f2;", "st.f32 [%rd5], %f2;")
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    with pytest.raises(ProvenanceError) as ei:
        launch(k, "fill", [x, y], block=32)
    assert str(ei.value).startswith(
        "<ptx>:21: wrong-buffer global store st.f32 [%rd5], %f2; by thread (0,0,0) of CTA (0,0,0): address "
        "0x7f0000000000 was computed from the pointer to allocation #1 (param 'y' (float32[32]), 128 bytes "
        "at 0x7f0000001100) but lands 4352 bytes before the start of it, inside allocation #0 (param 'x'")


def test_pointer_differences_are_not_checked_against_either_buffer():
    """x + (w - x) is w: a mixed provenance is never checked, so it runs clean."""
    k = FILL.replace("add.u64 %rd4, %rd1, %rd3;", "sub.s64 %rd6, %rd2, %rd1;\n    add.u64 %rd7, %rd1, %rd6;\n"
                     "    add.u64 %rd4, %rd7, %rd3;")
    x = np.arange(32, dtype=np.float32)
    y = np.full(32, 3, np.float32)
    launch(k, "fill", [x, y], block=32)                 # y[i] = 2 y[i]
    assert (y == 6).all()


def test_an_overrun_into_the_guard_gap_stays_an_out_of_bounds_error():
    k = FILL.replace("add.u64 %rd4, %rd1, %rd3;", "add.u64 %rd4, %rd1, %rd3;\n    add.u64 %rd4, %rd4, 4;")
    with pytest.raises(OutOfBoundsError) as ei:
        launch(k, "fill", [np.zeros(32, np.float32), np.zeros(32, np.float32)], block=32)
    assert type(ei.value) is OutOfBoundsError
    assert "is 4 bytes past the end of allocation #0 (param 'x'" in str(ei.value)


@kernel(arch="sm_80", in_specs=(Tile(32, f32), Tile(32, f32)), out_specs=(Tile(32, f32),),
        block=(32, 1, 1), grid=(1, 1, 1))
def reads_w_through_x(X, W, Y):
    tid = reg.from_(ptx.special.tid.x(), u32)
    off = reg.cvt(tid, u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off + 4352))   # W's bytes, through X
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def test_a_dsl_kernel_reading_through_the_wrong_pointer():
    where = line_of(reads_w_through_x.fn, "# W's bytes")
    with pytest.raises(ProvenanceError) as ei:
        reads_w_through_x.interpret(np.zeros(32, np.float32), np.ones(32, np.float32))
    assert str(ei.value.loc) == where
    msg = str(ei.value)
    assert msg.startswith(f"{where}: wrong-buffer global load ld.global.f32 %f0, [%rd")
    assert ("was computed from the pointer to allocation #0 (param 'X' (float32[32]), 128 bytes at "
            "0x7f0000000000) but lands 4228 bytes past the end of it, inside allocation #1 (param 'W' "
            "(float32[32]), 128 bytes at 0x7f0000001100) (byte 0)") in msg


# ----------------------------------------------------------------------------- vmap batch items
@kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def next_one(X, Y):
    """Y[i] = X[i + 1]: lane 31 reads one past the end."""
    tid = reg.from_(ptx.special.tid.x(), u32)
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + reg.cvt(tid + 1, u64) * 4))   # one past
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + reg.cvt(tid, u64) * 4), v)
    ptx.ret()


@kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        grid=(1, 1, 1))
def next_one_clamped(X, Y):
    tid = reg.from_(ptx.special.tid.x(), u32)
    v = reg.scalar(f32)
    j = reg.scalar(u32)
    ptx.inst.min.u32(j, tid + 1, 31)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + reg.cvt(j, u64) * 4))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + reg.cvt(tid, u64) * 4), v)
    ptx.ret()


def test_vmap_items_are_their_own_buffers():
    import jax
    import jax.numpy as jnp

    x = np.arange(96, dtype=np.float32).reshape(3, 32)
    where = line_of(next_one.fn, "# one past")
    with pytest.raises(OutOfBoundsError) as ei:          # one item: past the buffer's end
        next_one.interpret(x[0])
    assert type(ei.value) is OutOfBoundsError
    with pytest.raises(ProvenanceError) as ei:           # batched on the grid: item 0 reads item 1
        jax.vmap(next_one)(jnp.asarray(x))
    msg = str(ei.value)
    assert str(ei.value.loc) == where
    assert msg.startswith(f"{where}: wrong-buffer global load ld.global.f32 %f0, [%rd")
    assert re.search(r"by thread \(31,0,0\) of CTA \(0,0,0\): address 0x7f0000000080 is in batch item 1 of "
                     r"allocation #0 \(param 'X' \(float32\[3, 32\]\), 384 bytes at 0x7f0000000000\), 4 bytes "
                     r"past the end of batch item 0; this CTA \(%ctaid\.z = 0\) works on item 0 \(128 bytes at "
                     r"0x7f0000000000\): under jax\.vmap each batch item is its own buffer \[instruction #\d+ "
                     r"of next_one\]$", msg), msg
    with pytest.raises(Exception) as ei:
        jax.block_until_ready(jax.jit(jax.vmap(next_one))(x))
    assert "\nProvenanceError: " in str(ei.value)
    # the fixed twin, batched
    want = x[:, np.minimum(np.arange(32) + 1, 31)]
    np.testing.assert_array_equal(jax.vmap(next_one_clamped)(jnp.asarray(x)), want)
    np.testing.assert_array_equal(jax.jit(jax.vmap(next_one_clamped))(x), want)


def test_batch_items_in_launch():
    """launch(batch_items=): the item of each %ctaid.z; an unbatched launch of the same PTX
    reads on into the next row unreported."""
    k = FILL.replace("mov.u32 %r2, %ctaid.x;", "mov.u32 %r2, %ctaid.z;").replace(
        "add.u64 %rd4, %rd1, %rd3;", "add.u64 %rd4, %rd1, %rd3;\n    add.u64 %rd4, %rd4, 4;")   # y[i] = 2 x[i + 1]
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    with pytest.raises(ProvenanceError, match=r"by thread \(31,0,0\) of CTA \(0,0,0\): address 0x7f0000000080 "
                                              r"is in batch item 1 of allocation #0 \(param 'x'"):
        launch(k, "fill", [x, y], grid=(1, 1, 2), block=32, batch_items={0: [0, 1]})
    x65 = np.arange(65, dtype=np.float32)
    launch(k, "fill", [x65, y], grid=(1, 1, 2), block=32)      # one buffer: row 0 reads on into row 1
    assert y.tolist() == (2 * x65[1:]).tolist()
    y = np.zeros(64, np.float32)
    launch(k, "fill", [x65, y], grid=(1, 1, 2), block=32, batch_items={"y": [0, 1]})   # y is split
    assert y.tolist() == (2 * x65[1:]).tolist()
    with pytest.raises(InterpreterError, match=r"^batch_items\[0\] must give a batch item \(>= 0\) for each of "
                                               r"the 2 values of %ctaid.z, got 3 values$"):
        launch(k, "fill", [x, y], grid=(1, 1, 2), block=32, batch_items={0: [0, 1, 2]})
    with pytest.raises(InterpreterError, match=r"names 3 items, but param 'x' has 256 bytes, not a multiple "
                                               r"of 3$"):
        launch(k, "fill", [x, y], grid=(1, 1, 3), block=32, batch_items={0: [0, 1, 2]})


def test_stores_into_inputs_on_the_torch_cpu_path():
    torch = pytest.importorskip("torch")
    from jax_pyptx.runtime.torch_op import to_torch

    x = torch.arange(32, dtype=torch.float32)
    with pytest.raises(InputWriteError, match="is in param 'X', an input that is not an aliased output"):
        to_torch(doubles_in_place)(x)
    assert to_torch(doubles)(x).tolist() == (2 * x).tolist()
    assert x.tolist() == list(range(32))
