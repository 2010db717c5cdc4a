"""Issue 15, sanitizer misses: each planted bug is reported with the PTX line (and the user's
line for a kernel of our DSL), and the fixed kernel runs clean.

* write-write races on shared memory between warps (the same value from two warps is a
  SanitizerWarning, a RaceError under sanitize="strict"; lanes of one warp and atomics are no
  race);
* a warp that exits without reaching an ``.aligned`` barrier the other warps wait at;
* a kernel reading an output buffer before writing it (outputs start uninitialized, as on a
  GPU; input-output aliases keep their contents)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.errors import (DivergenceError, InterpreterError, RaceError, SanitizerWarning,
                              UninitializedReadError)
from jax_pyptx.interpret import launch
from jax_pyptx.types import u32, u64

from .helpers import line_of

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"

# ----------------------------------------------------------------------------- write-write
# warp 0 and warp 1 each store their lane's value to tile[lane]: BRANCH decides whether they do
# it in one instruction or in two, BETWEEN whether a barrier separates them
WW = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<9>; .reg .u64 %rd<4>; .reg .pred %p<3>;
    .shared .align 4 .b8 tile[128];
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 31;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, tile;
    add.u32 %r4, %r4, %r3;
    shr.u32 %r5, %r1, 5;
    VALUE
    setp.eq.u32 %p1, %r5, 0;
    @%p1 bra W0;
    BETWEEN
    st.shared.u32 [%r4], %r6;
    bra JOIN;
W0:
    st.shared.u32 [%r4], %r6;
    BETWEEN0
JOIN:
    bar.sync 0;
    ld.shared.u32 %r7, [%r4];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
    ret;
}
"""
_LANE_PLUS_WARP = "add.u32 %r6, %r2, %r5;"


def _ww(value=_LANE_PLUS_WARP, between="", between0=""):
    return WW.replace("VALUE", value).replace("BETWEEN0", between0).replace("BETWEEN", between)


def test_write_write_race_between_warps_is_reported():
    y = np.zeros(64, np.uint32)
    with pytest.raises(RaceError) as ei:
        launch(_ww(), "k", [y], block=64)
    msg = str(ei.value)
    assert msg == (
        "<ptx>:23: race on shared store st.shared.u32 [%r4], %r6; by thread (0,0,0) of CTA (0,0,0): "
        "it stores to shared address 0x0 ('tile' (+0)) that warp 1 of this CTA also stored since "
        "the last barrier, a different value, with no barrier between them: which one the byte "
        "keeps is undefined (a bar.sync (__syncthreads) is missing between the two stores, or let "
        "one warp write it) [instruction #12 of k]")
    # ordered by a barrier (warp 1 waits for warp 0's store, then overwrites it): clean
    launch(_ww(between="barrier.sync 0;", between0="barrier.sync 0;"), "k", [y], block=64)
    assert y.tolist() == [i % 32 + 1 for i in range(64)]


SAME_VALUE = ("race on shared store st.shared.u32 [%r4], %r6; by {who}: it stores to shared address 0x0 "
              "('tile' (+0)) the value that warp 1 of this CTA also stored since the last barrier: a data "
              "race by the PTX memory model, but every order leaves the same bytes (a bar.sync "
              "(__syncthreads) is missing between the two stores, or let one warp write it) "
              "[instruction #12 of k]")


def test_same_value_from_two_warps_warns_and_strict_raises():
    # hardware leaves the same bytes in every order (Triton zeroes shared words from every
    # warp): a SanitizerWarning, once for the instruction, and the run goes on
    y = np.zeros(64, np.uint32)
    with pytest.warns(SanitizerWarning) as rec:
        launch(_ww(value="mov.u32 %r6, %r2;"), "k", [y], block=64)
    assert len(rec) == 1
    w = rec[0].message
    assert str(w) == "<ptx>:23: " + SAME_VALUE.format(who="warp 0 of CTA (0,0,0)") + \
        " [RaceError under sanitize='strict']"
    assert w.error_class is RaceError and w.instruction == "st.shared.u32 [%r4], %r6;"
    assert (rec[0].filename, rec[0].lineno) == ("<ptx>", 23)
    assert y.tolist() == [i % 32 for i in range(64)]
    with pytest.raises(RaceError) as ei:
        launch(_ww(value="mov.u32 %r6, %r2;"), "k", [y], block=64, sanitize="strict")
    assert str(ei.value) == "<ptx>:23: " + SAME_VALUE.format(who="thread (0,0,0) of CTA (0,0,0)")
    # only warp 0 writes: clean, even strict
    launch(_ww(value="mov.u32 %r6, %r2;").replace("@%p1 bra W0;", "@%p1 bra W0;\n    bra JOIN;"), "k",
           [np.zeros(32, np.uint32)], block=32, sanitize="strict")


def test_two_warps_in_one_store_instruction_race():
    """Both warps execute the same st.shared together (the interpreter runs them as one group):
    still two warps writing one byte."""
    one = HDR + """
    .visible .entry k()
    {
        .reg .u32 %r<4>;
        .shared .align 4 .b8 tile[128];
        mov.u32 %r1, %tid.x;
        and.b32 %r2, %r1, 31;
        shl.b32 %r2, %r2, 2;
        mov.u32 %r3, tile;
        add.u32 %r3, %r3, %r2;
        st.shared.u32 [%r3], 7;
        ret;
    }"""
    with pytest.raises(RaceError) as ei:
        launch(one, "k", [], block=64, sanitize="strict")
    assert str(ei.value) == (
        "<ptx>:14: race on shared store st.shared.u32 [%r3], 7; by thread (0,0,0) of CTA (0,0,0): "
        "it stores to shared address 0x0 ('tile' (+0)) the value that warp 1 of this CTA also stored "
        "in this same instruction: a data race by the PTX memory model, but every order leaves the "
        "same bytes (let one warp write it) [instruction #5 of k]")
    with pytest.warns(SanitizerWarning, match=r"the value that warp 1 of this CTA also stored in this same"):
        launch(one, "k", [], block=64)                  # the same 7 from both warps: a warning
    with pytest.raises(RaceError) as ei:                # different values: an error
        launch(one.replace("st.shared.u32 [%r3], 7;", "st.shared.u32 [%r3], %r1;"), "k", [], block=64)
    assert str(ei.value) == (
        "<ptx>:14: race on shared store st.shared.u32 [%r3], %r1; by thread (0,0,0) of CTA (0,0,0): "
        "it stores to shared address 0x0 ('tile' (+0)) that warp 1 of this CTA also stored in this "
        "same instruction, a different value, with no barrier between them: which one the byte keeps "
        "is undefined (let one warp write it) [instruction #5 of k]")
    # one warp, every lane storing to the same word in one instruction: no race between warps
    launch(one.replace("and.b32 %r2, %r1, 31;", "mov.u32 %r2, 0;"), "k", [], block=32)
    # atomics of both warps to one word are not races (thread 0 zeroes it, then a barrier)
    atom = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<3>; .reg .u64 %rd1; .reg .pred %p1;
        .shared .align 4 .b32 cnt;
        mov.u32 %r1, %tid.x;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 st.shared.u32 [cnt], 0;
        bar.sync 0;
        atom.shared.add.u32 %r2, [cnt], 1;
        red.shared.add.u32 [cnt], 1;
        bar.sync 0;
        ld.shared.u32 %r2, [cnt];
        ld.param.u64 %rd1, [y];
        @%p1 st.global.u32 [%rd1], %r2;
        ret;
    }"""
    y = np.zeros(1, np.uint32)
    launch(atom, "k", [y], block=64)
    assert y[0] == 128
    # the same with plain stores of both warps to cnt races
    with pytest.raises(RaceError, match="that warp 1 of this CTA also stored in this same instruction"):
        launch(atom.replace("atom.shared.add.u32 %r2, [cnt], 1;", "st.shared.u32 [cnt], %r1;"), "k", [y],
               block=64)


@kernel(in_specs=(Tile(64, u32),), out_specs=(Tile(64, u32),), block=(64, 1, 1), grid=(1, 1, 1))
def ww_dsl(X, Y):
    s = smem.alloc(u32, (32,))
    t = reg.from_(ptx.special.tid.x(), u32)
    lane = t & 31
    v = reg.scalar(u32)
    ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr() + reg.cvt(t, u64) * 4))
    ptx.inst.st.shared.u32(ptx.addr(s.ptr() + lane * 4), v)          # STORE (both warps)
    ptx.bar.sync(0)
    ptx.inst.ld.shared.u32(v, ptx.addr(s.ptr() + lane * 4))
    ptx.inst.st.global_.u32(ptx.addr(Y.ptr() + reg.cvt(t, u64) * 4), v)
    ptx.ret()


@kernel(in_specs=(Tile(64, u32),), out_specs=(Tile(64, u32),), block=(64, 1, 1), grid=(1, 1, 1))
def ww_dsl_fixed(X, Y):
    s = smem.alloc(u32, (32,))
    t = reg.from_(ptx.special.tid.x(), u32)
    lane = t & 31
    v = reg.scalar(u32)
    ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr() + reg.cvt(t, u64) * 4))
    with ptx.if_(t < 32):
        ptx.inst.st.shared.u32(ptx.addr(s.ptr() + lane * 4), v)
    ptx.bar.sync(0)
    ptx.inst.ld.shared.u32(v, ptx.addr(s.ptr() + lane * 4))
    ptx.inst.st.global_.u32(ptx.addr(Y.ptr() + reg.cvt(t, u64) * 4), v)
    ptx.ret()


def test_write_write_race_names_the_users_line():
    x = np.arange(64, dtype=np.uint32) * 3
    with pytest.raises(RaceError) as ei:
        ww_dsl.interpret(x)
    msg = str(ei.value)
    assert msg.startswith(line_of(ww_dsl.fn, "# STORE") + ": race on shared store st.shared.u32 [")
    assert "that warp 1 of this CTA also stored in this same instruction" in msg
    np.testing.assert_array_equal(ww_dsl_fixed.interpret(x), np.tile(x[:32], 2))


# ----------------------------------------------------------------------------- exit vs .aligned barrier
EXIT = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p1;
    .shared .align 4 .b32 s[64];
    ld.param.u64 %rd1, [y];
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, LIMIT;
    EARLY
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.u32 %r4, %r3, %r2;
    st.shared.u32 [%r4], %r1;
    BAR
    xor.b32 %r5, %r2, 4;
    add.u32 %r5, %r3, %r5;
    ld.shared.u32 %r5, [%r5];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
DONE:
    ret;
}
"""


def _exit(limit=32, early="@%p1 bra DONE;", bar="bar.sync 0;"):
    return EXIT.replace("LIMIT", str(limit)).replace("EARLY", early).replace("BAR", bar)


def test_warp_exiting_while_others_wait_at_an_aligned_barrier():
    y = np.zeros(64, np.uint32)
    with pytest.raises(DivergenceError) as ei:
        launch(_exit(), "k", [y], block=64)
    assert str(ei.value) == (
        "<ptx>:17: threads exited without reaching an .aligned barrier that other threads of CTA (0,0,0) "
        "wait at: barrier 0 has no thread count, so every thread of the CTA must execute this instruction, "
        "but warp 1 lanes 0-31 exited at <ptx>:25 (instruction #15 of k) `ret;`, while warp 0 lanes 0-31 "
        "waits at it (on a GPU this hangs or lets the waiting warps through early: let every thread reach "
        "the barrier before exiting, or give the barrier the thread count of the warps that reach it): "
        "bar.sync 0; by thread (0,0,0) of CTA (0,0,0) [instruction #8 of k]")


def test_warp_that_exited_before_others_reach_an_aligned_barrier():
    """The exit runs first (it is earlier in the code): the arrival is reported. Partial warps
    count too: lanes 16-31 of warp 1 skip the barrier."""
    y = np.zeros(64, np.uint32)
    with pytest.raises(DivergenceError) as ei:
        launch(_exit(limit=48, early="@%p1 ret;", bar="barrier.sync.aligned 0;"), "k", [y], block=64)
    msg = str(ei.value)
    assert msg.startswith("<ptx>:17: threads exited without reaching an .aligned barrier that other threads "
                          "of CTA (0,0,0) wait at: barrier 0 has no thread count")
    assert ("but warp 1 lanes 16-31 exited at <ptx>:12 (instruction #3 of k) `@%p1 ret;`, while warp 0 "
            "lanes 0-31, warp 1 lanes 0-15 wait at it") in msg
    assert msg.endswith(": barrier.sync.aligned 0; by thread (0,0,0) of CTA (0,0,0) [instruction #8 of k]")
    # bar.red is .aligned too
    red = _exit(bar="bar.red.popc.u32 %r5, 0, %p1;")
    with pytest.raises(DivergenceError, match=r"^<ptx>:17: threads exited without reaching an .aligned barrier"):
        launch(red, "k", [y], block=64)


def test_exits_the_isa_allows_run_clean():
    want = np.arange(64) ^ 1
    # every thread reaches the barrier, then exits
    y = np.zeros(64, np.uint32)
    launch(_exit(limit=64), "k", [y], block=64)
    assert y.tolist() == want.tolist()
    # a non-.aligned barrier.sync waits for the non-exited threads only (exit releases it)
    y = np.zeros(64, np.uint32)
    launch(_exit(bar="barrier.sync 0;"), "k", [y], block=64)
    assert y[:32].tolist() == want[:32].tolist() and not y[32:].any()
    # a thread count names the warps that take part
    y = np.zeros(64, np.uint32)
    launch(_exit(bar="bar.sync 0, 32;"), "k", [y], block=64)
    assert y[:32].tolist() == want[:32].tolist() and not y[32:].any()
    # the sanitizer off: no report
    launch(_exit(), "k", [y], block=64, sanitize=False)


@kernel(in_specs=(Tile(64, u32),), out_specs=(Tile(64, u32),), block=(64, 1, 1), grid=(1, 1, 1))
def early_exit(X, Y):
    s = smem.alloc(u32, (64,))
    t = reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(t >= 32):
        ptx.ret()                                                    # EXIT
    v = reg.scalar(u32)
    ptx.inst.ld.global_.u32(v, ptx.addr(X.ptr() + reg.cvt(t, u64) * 4))
    ptx.inst.st.shared.u32(ptx.addr(s.ptr() + t * 4), v)
    ptx.bar.sync(0)                                                  # BARRIER
    ptx.inst.ld.shared.u32(v, ptx.addr(s.ptr() + (t ^ 1) * 4))
    ptx.inst.st.global_.u32(ptx.addr(Y.ptr() + reg.cvt(t, u64) * 4), v)
    ptx.ret()


def test_exit_before_an_aligned_barrier_names_the_users_lines():
    with pytest.raises(DivergenceError) as ei:
        early_exit.interpret(np.arange(64, dtype=np.uint32))
    msg = str(ei.value)
    assert msg.startswith(line_of(early_exit.fn, "# BARRIER") + ": threads exited without reaching an "
                          ".aligned barrier that other threads of CTA (0,0,0) wait at")
    assert f"but warp 1 lanes 0-31 exited at {line_of(early_exit.fn, '# EXIT')} (instruction #" in msg


# ----------------------------------------------------------------------------- outputs start uninitialized
ACC = HDR + """
.visible .entry acc(.param .u64 x, .param .u64 y)
{
    .reg .u32 %r1; .reg .u64 %rd<6>; .reg .f32 %f<3>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd1, %rd3;
    add.u64 %rd5, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    INIT
    ld.global.f32 %f2, [%rd5];
    add.f32 %f2, %f2, %f1;
    st.global.f32 [%rd5], %f2;
    ret;
}
"""


def test_reading_an_output_before_writing_it_is_reported():
    x = np.arange(32, dtype=np.float32)
    y = np.full(32, 5, np.float32)
    with pytest.raises(UninitializedReadError) as ei:
        launch(ACC.replace("INIT", ""), "acc", [x, y], block=32, outputs=[1])
    msg = str(ei.value)
    assert msg.startswith("<ptx>:16: uninitialized global load ld.global.f32 %f2, [%rd5]; by thread (0,0,0) of "
                          "CTA (0,0,0): global address 0x")
    assert ("(byte 0 of allocation #1 (param 'y' (float32[32], an output), 128 bytes at 0x") in msg
    assert msg.endswith(") is read before any thread wrote it: an output starts uninitialized, as on a GPU; "
                        "write it before reading it, or make the buffer an input-output alias to keep its "
                        "contents [instruction #7 of acc]")
    assert (y == 5).all()            # nothing was stored
    # by parameter name too
    with pytest.raises(UninitializedReadError, match="param 'y' "):
        launch(ACC.replace("INIT", ""), "acc", [x, y], block=32, outputs="y")
    # not an output (an in-out buffer): its contents are values
    launch(ACC.replace("INIT", ""), "acc", [x, y], block=32)
    assert y.tolist() == (x + 5).tolist()
    # the fixed kernel writes the output first
    y = np.full(32, 5, np.float32)
    launch(ACC.replace("INIT", "st.global.f32 [%rd5], 0f3F800000;"), "acc", [x, y], block=32, outputs=[1])
    assert y.tolist() == (x + 1).tolist()
    # an output the kernel writes only partly (declared so): the rest comes back as it was
    y = np.full(64, 5, np.float32)
    launch(ACC.replace("INIT", "st.global.f32 [%rd5], 0f3F800000;"), "acc", [x, y], block=32, outputs=[1],
           partial_outputs=[1])
    assert y[:32].tolist() == (x + 1).tolist() and (y[32:] == 5).all()
    # with the sanitizer off, outputs= changes nothing
    y = np.full(32, 5, np.float32)
    launch(ACC.replace("INIT", ""), "acc", [x, y], block=32, outputs=[1], sanitize=False)
    assert y.tolist() == (x + 5).tolist()


def test_atomics_on_an_uninitialized_output_are_reported():
    red = ACC.replace("INIT", "").replace("ld.global.f32 %f2, [%rd5];\n    add.f32 %f2, %f2, %f1;\n"
                                          "    st.global.f32 [%rd5], %f2;", "red.global.add.f32 [%rd2], %f1;")
    x = np.arange(32, dtype=np.float32)
    with pytest.raises(UninitializedReadError) as ei:
        launch(red, "acc", [x, np.zeros(1, np.float32)], block=32, outputs=[1])
    assert str(ei.value).startswith("<ptx>:16: uninitialized global reduction red.global.add.f32 [%rd2], %f1; "
                                    "by thread (0,0,0) of CTA (0,0,0): global address 0x")
    assert "is updated atomically before any thread wrote it: an output starts uninitialized" in str(ei.value)
    y = np.zeros(1, np.float32)
    launch(red, "acc", [x, y], block=32)          # zeroed by the caller: an in-out buffer
    assert y[0] == x.sum()


def test_outputs_argument_is_checked():
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    k = ACC.replace("INIT", "")
    with pytest.raises(InterpreterError) as ei:
        launch(k, "acc", [x, y], block=32, outputs=[2])
    assert str(ei.value) == "outputs takes argument indices (0 to 1) or parameter names of kernel 'acc', got 2"
    with pytest.raises(InterpreterError) as ei:
        launch(k, "acc", [x, y], block=32, outputs=["out"])
    assert str(ei.value) == "outputs names parameter 'out', but kernel 'acc' has parameters 'x', 'y'"
    scalar = HDR + ".visible .entry s(.param .u32 n)\n{\n ret;\n}"
    with pytest.raises(InterpreterError) as ei:
        launch(scalar, "s", [np.uint32(3)], outputs=[0])
    assert str(ei.value) == ("outputs names argument 0 (param 'n'), which is uint32: only an array (or a tensor "
                             "map over one) passed to a pointer parameter can be an output")


def _accumulate_inputs():
    return np.arange(100, dtype=np.float32), np.full(100, 0.5, np.float32)


def _accumulate_head():
    from .test_runtime_kernels import accumulate

    return (f"{line_of(accumulate.fn, 'ptx.inst.ld.global_.f32(y,')}: uninitialized global load ld.global.f32 "
            f"%f0, [%rd4]; by thread (0,0,0) of CTA (0,0,0): global address 0x")


def test_a_kernel_reading_its_output_is_reported_on_every_jax_path():
    """accumulate does Y += D; Y is an output (no alias): it starts uninitialized."""
    import jax
    import jax.numpy as jnp

    from jax_pyptx import ptx_call

    from .test_runtime_kernels import accumulate

    x0, d = _accumulate_inputs()
    head = _accumulate_head()
    for call in (lambda: accumulate.interpret(x0, d),
                 lambda: accumulate(jnp.asarray(x0), jnp.asarray(d)),
                 lambda: accumulate(jnp.asarray(x0), jnp.asarray(d), interpret=True)):
        with pytest.raises(UninitializedReadError) as ei:
            call()
        msg = str(ei.value)
        assert msg.startswith(head), msg
        assert "(param 'Y' (float32[100], an output), 400 bytes at 0x" in msg
    with pytest.raises(Exception) as ei:
        jax.block_until_ready(jax.jit(accumulate)(x0, d))
    assert type(ei.value).__name__ == "JaxRuntimeError"
    assert "\nUninitializedReadError: " + head in str(ei.value)
    # an input-output alias keeps the input's contents: clean, eager and under jit
    aliased = ptx_call(accumulate, input_output_aliases={0: 0})
    np.testing.assert_array_equal(aliased(jnp.asarray(x0), jnp.asarray(d)), x0 + d)
    np.testing.assert_array_equal(jax.jit(aliased)(x0, d), x0 + d)


def test_a_kernel_reading_its_output_is_reported_on_the_torch_cpu_path():
    torch = pytest.importorskip("torch")
    from jax_pyptx.runtime.torch_op import to_torch

    from .test_runtime_kernels import accumulate

    x0, d = _accumulate_inputs()
    with pytest.raises(UninitializedReadError) as ei:
        to_torch(accumulate)(torch.from_numpy(x0), torch.from_numpy(d))
    assert str(ei.value).startswith(_accumulate_head())


TMA_TILE = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry tile(.param .align 64 .b8 tm[128], .param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<6>; .reg .pred %p<3>; .reg .f32 %f1;
    .shared .align 128 .f32 buf[128];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, tm;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 512;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd1, {8, 4}], [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    ld.shared.f32 %f1, [%r5];
    ld.param.u64 %rd2, [out];
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;
    ret;
}
"""


def test_a_tensor_map_argument_can_name_an_output():
    """outputs=[i] of a tensor map argument makes the array it describes an output: the TMA
    load of it is reported; the plain output written by the kernel runs clean."""
    from jax_pyptx.interpret import tensor_map

    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.zeros(128, np.float32)
    launch(TMA_TILE, "tile", [tensor_map(x, box=(16, 8)), out], block=128, outputs=[1])
    np.testing.assert_array_equal(out.reshape(8, 16), x[4:12, 8:24])
    with pytest.raises(UninitializedReadError) as ei:
        launch(TMA_TILE, "tile", [tensor_map(x, box=(16, 8)), out], block=128, outputs=["tm"])
    msg = str(ei.value)
    assert msg.startswith("<ptx>:19: uninitialized global TMA load @%p1 cp.async.bulk.tensor.2d.shared::cluster."
                          "global.tile.mbarrier::complete_tx::bytes [%r3], [%rd1, {8, 4}], [%r2]; by thread (0,0,0) "
                          "of CTA (0,0,0): global address 0x")
    assert "(byte 544 of allocation #1 (tensor of param 'tm' (float32[16, 32]), 2048 bytes at 0x" in msg
