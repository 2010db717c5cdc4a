"""Issue 26, "errors that don't help": each mistake gets an error saying what was given, what
is allowed and (where there is one) the user's line."""
from __future__ import annotations

import io
import os
import signal
import sys
import threading

import numpy as np
import pytest

import jax
import jax.numpy as jnp

from jax_pyptx import SpecializationError, Tile, kernel, ptx, reg, smem
from jax_pyptx.errors import (DeadlockError, InterpreterError, NotSupportedError,
                              PtxIndexError)
from jax_pyptx.interpret import launch
from jax_pyptx.types import f32, u32, u64

HERE = os.path.abspath(__file__)
X4 = np.ones(4, np.float32)


def _line_of(marker: str) -> int:
    with open(HERE) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line)


@kernel(in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),), block=(4, 1, 1))
def copy4(X, Y, *, scale=1.0):
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * float(scale))
    ptx.ret()


# ----------------------------------------------------------------------------- timeline=
def test_timeline_into_a_missing_directory_is_refused_before_the_run(tmp_path):
    bad = str(tmp_path / "no" / "run.json")
    msg = (f"timeline={bad!r}: its directory {str(tmp_path / 'no')!r} does not exist; pass a "
           f"file path in an existing directory (create it first: os.makedirs)")
    for run in (lambda: copy4.interpret(X4, timeline=bad),
                lambda: copy4(jnp.asarray(X4), interpret=True, timeline=bad)):
        with pytest.raises(InterpreterError) as e:
            run()
        assert str(e.value) == msg
    from jax_pyptx import configure

    with pytest.raises(InterpreterError) as e:
        configure(copy4, timeline=bad)
    assert str(e.value) == msg
    with pytest.raises(InterpreterError, match="is a directory"):
        copy4.interpret(X4, timeline=str(tmp_path))
    good = tmp_path / "run.json"
    copy4.interpret(X4, timeline=str(good))
    assert good.stat().st_size > 0


# ----------------------------------------------------------------------------- Ctrl-C
@pytest.fixture
def sigint():
    """SIGINT at Python's default handler for the test (a suite started as a background job of
    a non-interactive shell inherits it ignored, and then no Ctrl-C can reach a launch), the
    process's own disposition restored after."""
    before = signal.getsignal(signal.SIGINT)
    if before is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_in_an_eager_call_is_a_keyboard_interrupt(monkeypatch, sigint):
    import jax_pyptx.specialize.host as host

    def interrupted(self, *a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(host.HostLaunch, "__call__", interrupted)
    msg = "interrupted (Ctrl-C) while the interpreter ran kernel 'copy4'"
    for run in (lambda: copy4(jnp.asarray(X4), interpret=True),
                lambda: jax.jit(lambda x: copy4(x, interpret=True))(X4)):
        with pytest.raises(KeyboardInterrupt) as e:
            run()
        assert str(e.value) == msg
    with pytest.raises(KeyboardInterrupt):               # no XLA between (as torch)
        copy4.interpret(X4)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@kernel(in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),), block=(4, 1, 1))
def spin(X, Y):
    """``X[0]`` trips of a loop: 1e9 runs for ages in the interpreter."""
    trips = reg.scalar(f32)
    ptx.inst.ld.global_.f32(trips, ptx.addr(X.ptr()))
    n = reg.cvt(trips, u32, rnd="rzi")
    acc = reg.scalar(f32, 0.0)
    for _ in ptx.range_(0, n, 1):
        acc.set(acc + 1.0)
    off = reg.cvt(ptx.special.tid.x(), u64) * 4
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), acc)
    ptx.ret()


_spin_jit = jax.jit(lambda x: spin(x, interpret=True))


@pytest.mark.parametrize("how", ["jit", "jit, compiled before", "eager", "two calls under jit"])
def test_a_real_ctrl_c_during_a_long_launch_is_a_keyboard_interrupt(how, monkeypatch, sigint):
    """A SIGINT (as Ctrl-C sends) 0.2 s into a launch that would run for hours stops it, and
    the call raises KeyboardInterrupt at the caller's line, not XLA's JaxRuntimeError."""
    import jax_pyptx.runtime.lowering_host as lh

    timers = []

    def launch_then_ctrl_c(spec, *arrays):
        if not timers:
            timers.append(threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)))
            timers[0].start()
        return real_launch(spec, *arrays)

    short, forever = np.full(4, 3, np.float32), np.full(4, 1e9, np.float32)
    if how == "jit, compiled before":          # the second call takes JAX's C++ fast path
        np.testing.assert_array_equal(np.asarray(_spin_jit(short)), short)
    fn = {"jit": jax.jit(lambda x: spin(x, interpret=True)),
          "jit, compiled before": _spin_jit,
          "eager": lambda x: spin(x, interpret=True),
          "two calls under jit": jax.jit(lambda x: spin(spin(x, interpret=True) * 1e9,
                                                       interpret=True))}[how]
    real_launch = lh.host_launch
    monkeypatch.setattr(lh, "host_launch", launch_then_ctrl_c)
    reached = []
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            fn(forever)
            reached.append(True)           # the zero outputs are never seen
    finally:
        timers[0].join()
    monkeypatch.undo()
    assert str(e.value) == "interrupted (Ctrl-C) while the interpreter ran kernel 'spin'"
    assert not reached
    assert sys.getprofile() is None
    # nothing is left armed: the next call runs to its end
    np.testing.assert_array_equal(np.asarray(_spin_jit(short)), short)


# ----------------------------------------------------------------------------- tma_box clamp
@kernel(arch="sm_90a", in_specs=(Tile(16, 32, f32, tma_box=(32, 32)),),
        out_specs=(Tile(4, f32),), block=(32, 1, 1))
def full_box(X, Y):
    """Waits for the bytes of the 32x32 box it asked for; the 16-row tensor gives half."""
    buf = smem.alloc(f32, (32 * 32,))
    bar = smem.mbarrier(1)
    desc = X.tma_desc()
    tid = reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(tid == 0):
        ptx.mbarrier.init(bar[0], 1)
        ptx.fence.mbarrier_init()
    ptx.bar.sync(0)
    with ptx.if_(tid == 0):
        ptx.mbarrier.arrive_expect_tx(bar[0], 32 * 32 * 4)
        ptx.cp.async_.bulk.tensor_2d(buf, desc, (0, 0), bar[0])
    ptx.mbarrier.wait(bar[0], 0)
    ptx.ret()


def test_a_clamped_tma_box_is_named_in_the_deadlock_report():
    with pytest.raises(DeadlockError) as e:
        full_box.interpret(np.ones((16, 32), np.float32), timeout=60.0)
    assert str(e.value).endswith(
        "; TMA descriptor 'X_tma_desc': tma_box=(32, 32) was clamped to (16, 32) by the "
        "tensor's shape (16, 32), so each load brings 2048 bytes, not 4096: an mbarrier "
        "expecting 4096 (expect_tx) never completes; expect the clamped box's bytes or pass a "
        "tensor at least as large as the box")


# ----------------------------------------------------------------------------- specs
def test_in_specs_without_the_trailing_comma():
    def k(X, Y):
        ptx.ret()

    with pytest.raises(SpecializationError) as e:
        kernel(in_specs=(Tile(4, f32)), out_specs=(Tile(4, f32),))(k)
    assert str(e.value) == (
        f"{HERE}:{k.__code__.co_firstlineno}: kernel 'k': in_specs must be a tuple of specs, "
        f"one per parameter; got a single Tile, Tile(4, f32) (a one-element tuple needs a "
        f"trailing comma: in_specs=(Tile(4, f32),))")


def test_shape_index_past_the_rank():
    @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),))
    def rank1(X, Y):
        cols = X.shape[1]                                  # marker: rank-1 shape
        del cols
        ptx.ret()

    with pytest.raises(PtxIndexError) as e:
        rank1.ptx(N=8)
    assert isinstance(e.value, IndexError)
    assert str(e.value) == (f"{HERE}:{_line_of('marker: rank-1 shape')}: X.shape[1]: X has "
                            f"rank 1 (shape (8,)); its dims are index 0 .. 0 (or -1 .. -1)")


PTR_PTX = """
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 Y)
{
 .reg .b64 %rd<1>; .reg .b32 %r<1>;
 ld.param.u64 %rd0, [Y]; mov.u32 %r0, 1;
 st.global.u32 [%rd0], %r0;
 ret;
}"""


def test_a_float_for_a_pointer_is_refused():
    for bad, shown in [(3.0, "3.0 (float)"), (np.float32(3.5), "np.float32(3.5) (float32)")]:
        with pytest.raises(InterpreterError) as e:
            launch(PTR_PTX, "k", [bad])
        assert str(e.value) == (f"param 'Y' (.u64) got {shown}: a 64-bit integer parameter "
                                f"takes a pointer (a NumPy array, whose address it gets; None "
                                f"for a null pointer) or an integer, never a float")


# ----------------------------------------------------------------------------- options
def test_misspelled_options_name_the_valid_ones():
    with pytest.raises(SpecializationError) as e:
        copy4.interpret(X4, sanitise=False)
    assert str(e.value) == (
        "kernel 'copy4': unknown argument 'sanitise' (did you mean 'sanitize'?); valid: "
        "template parameters (scale), shape variables (none) and the interpret options "
        "sanitize, max_steps, timeout, timeline, partial_outputs, schedule, seed")
    with pytest.raises(SpecializationError) as e:
        copy4(jnp.asarray(X4), sanitise=False)
    assert str(e.value).startswith(
        "kernel 'copy4': unknown argument 'sanitise' (did you mean 'sanitize'?); valid: "
        "template parameters (scale), shape variables (none) and the call options out_shape, ")
    assert "sanitize" in str(e.value).split("call options")[1]
    with pytest.raises(SpecializationError) as e:
        kernel(blok=(32, 1, 1))
    assert str(e.value).startswith("kernel(): unknown option 'blok' (did you mean 'block'?); "
                                   "options: arch, version, in_specs")
    from jax_pyptx import configure

    with pytest.raises(SpecializationError) as e:
        configure(copy4, interpet=True)
    assert str(e.value).startswith("configure(): unknown option 'interpet' (did you mean "
                                   "'interpret'?); options: ")


def test_jvp_of_a_kernel_says_what_forward_mode_needs():
    with pytest.raises(NotSupportedError) as e:
        jax.jvp(lambda x: copy4(x, interpret=True), (jnp.asarray(X4),), (jnp.asarray(X4),))
    msg = str(e.value)
    assert msg.startswith("kernel 'copy4' has no derivative: ")
    assert ("Forward mode (jax.jvp, jax.jacfwd) needs a JVP, which a backward kernel does not "
            "give: wrap the call in jax.custom_jvp") in msg


def test_occupancy_and_plot_swizzle_arguments():
    from jax_pyptx.perf import occupancy
    from jax_pyptx.viz import plot_swizzle

    for args, msg in [((0, 32, 0), "occupancy: threads must be an int >= 1 (threads per CTA), "
                                   "got 0"),
                      ((32, -1, 0), "occupancy: registers must be an int >= 0 (registers per "
                                    "CTA per thread), got -1"),
                      ((32, 32, 1.5), "occupancy: smem_bytes must be an int >= 0 (smem_bytes "
                                      "per CTA), got 1.5")]:
        with pytest.raises(ValueError) as e:
            occupancy("H100", *args)
        assert str(e.value) == msg
    pytest.importorskip("matplotlib")
    fig = plot_swizzle("128B")
    assert fig.axes[0].get_title() == ("swizzle 128B: logical chunk c at its physical place "
                                       "(banks)")
    with pytest.raises(ValueError, match="swizzle mode '129B' is not one of None, 'none', "
                                         "'32B', '64B', '128B'"):
        plot_swizzle("129B")
    with pytest.raises(TypeError) as e:
        plot_swizzle(3.5)
    assert str(e.value) == ("plot_swizzle takes a swizzle_map(...) or a swizzle mode ('128B', "
                            "'64B', '32B', None), got float 3.5")


def test_transpile_into_a_missing_directory(tmp_path, monkeypatch, capsys):
    from jax_pyptx.__main__ import main

    src = tmp_path / "k.ptx"
    src.write_text(PTR_PTX)
    out = tmp_path / "missing" / "k.py"
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    rc = main(["transpile", str(src), "-o", str(out)])
    assert rc == 2 and not out.exists()
    assert capsys.readouterr().err == (
        f"jax-pyptx transpile: -o {out}: its directory {str(tmp_path / 'missing')!r} does not "
        f"exist; give a file path in an existing directory\n")
    assert main(["transpile", str(src), "-o", str(tmp_path / "k.py")]) == 0
    assert "@kernel" in (tmp_path / "k.py").read_text()


# ----------------------------------------------------------------------------- clusters
def test_a_cluster_that_does_not_divide_the_grid():
    @kernel(arch="sm_90a", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
            grid=(3, 1, 1), cluster=(2, 1, 1))
    def clustered(X, Y):
        ptx.ret()

    with pytest.raises(SpecializationError) as e:
        clustered.ptx()
    assert str(e.value) == (
        f"{HERE}:{clustered.fn.__code__.co_firstlineno}: kernel 'clustered': grid (3, 1, 1) "
        f"is not a whole number of clusters (2, 1, 1) (x: 3 is not a multiple of 2); launch "
        f"a grid that is a multiple of the cluster along every axis, e.g. (4, 1, 1)")

    @kernel(arch="sm_90a", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
            cluster=(2, 1, 1))
    def no_grid(X, Y):
        ptx.ret()

    from jax_pyptx import ptx_call

    with pytest.raises(SpecializationError) as e:
        ptx_call(no_grid, grid=(3, 1, 1), interpret=True)(jnp.asarray(X4))
    assert str(e.value).startswith("kernel 'no_grid': grid (3, 1, 1) is not a whole number of "
                                   "clusters (2, 1, 1)")


# ----------------------------------------------------------------------------- limits
BIG_REGS = """
.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 Y)
{
 .reg .u32 %r<100000000>; .reg .b64 %rd<1>;
 ld.param.u64 %rd0, [Y]; cvta.to.global.u64 %rd0, %rd0;
 mov.u32 %r99999999, %tid.x; add.u32 %r7, %r99999999, 5;
 { .reg .u32 %r<100000000>; mov.u32 %r3, 2; st.global.u32 [%rd0+4], %r3; }
 st.global.u32 [%rd0], %r7;
 ret;
}"""


def test_a_huge_register_declaration_costs_nothing_until_used():
    from jax_pyptx.interpret.launch import get_program

    y = np.zeros(2, np.uint32)
    launch(BIG_REGS, "k", [y])
    assert y.tolist() == [5, 2]
    prog = get_program(launch.__globals__["get_module"](BIG_REGS), "k")
    assert len(prog.regs) < 16                    # the registers named, not 200 million
    with pytest.raises(InterpreterError) as e:
        launch(BIG_REGS.replace("%r99999999", "%r100000000"), "k", [y])
    assert "register %r100000000 is not declared" in str(e.value)


def test_local_memory_past_the_per_thread_limit_is_refused():
    text = BIG_REGS.replace(".reg .b64 %rd<1>;", ".reg .b64 %rd<1>; .local .align 4 .b8 "
                            "big[4294967296];", 1)
    with pytest.raises(InterpreterError) as e:
        launch(text, "k", [np.zeros(2, np.uint32)])
    assert str(e.value) == (
        ".local variable 'big' of 4294967296 bytes takes the local memory of function 'k' to "
        "4294967296 bytes per thread; CUDA allows at most 524288 bytes (512 KB) of local "
        "memory per thread on every target: keep large arrays in global or shared memory")


def test_shared_memory_past_the_architectures_limit_is_refused_everywhere():
    @kernel(arch="sm_90a", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
            smem=10 ** 9)
    def greedy(X, Y):
        ptx.ret()

    msg = (f"{HERE}:{greedy.fn.__code__.co_firstlineno}: kernel 'greedy' needs 1000000000 "
           f"bytes of shared memory (0 static + 1000000000 dynamic, smem=1000000000); sm_90a "
           f"allows at most 232448 bytes per CTA, so no GPU could launch it")
    for run in (greedy.ptx, lambda: greedy.interpret(X4),
                lambda: greedy(jnp.asarray(X4), interpret=True)):
        with pytest.raises(SpecializationError) as e:
            run()
        assert str(e.value) == msg

    @kernel(arch="sm_80", in_specs=(Tile(4, f32),), out_specs=(Tile(4, f32),),
            smem=200 * 1024)
    def ampere(X, Y):
        ptx.ret()

    with pytest.raises(SpecializationError, match="sm_80 allows at most 166912 bytes per CTA"):
        ampere.ptx()
    # launch: the dynamic size counts even when no .extern .shared declares it (a size that
    # fits first: the program keeps that launch shape's answer, and a new size is checked)
    y = np.zeros(1, np.uint32)
    launch(PTR_PTX, "k", [y], smem=1024)
    assert y[0] == 1
    with pytest.raises(InterpreterError) as e:
        launch(PTR_PTX, "k", [np.zeros(1, np.uint32)], smem=300 * 1024)
    assert str(e.value) == ("kernel 'k' needs 307200 bytes of shared memory (0 static + 307200 "
                            "dynamic); sm_90a allows at most 232448 bytes per CTA, so no GPU "
                            "could launch it")


_SHARDED_CTRL_C = r'''
import os, signal, sys, threading
signal.signal(signal.SIGINT, signal.default_int_handler)   # (inherited ignored in a background job)
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import numpy as np, jax
from jax.sharding import NamedSharding, PartitionSpec as P
sys.path.insert(0, sys.argv[1])
from test_papercuts_errors import spin
mesh = jax.make_mesh((2,), ("d",))
sh = NamedSharding(mesh, P("d"))
f = jax.jit(jax.shard_map(lambda x: spin(x, interpret=True), mesh=mesh, in_specs=P("d"),
                          out_specs=P("d")))
print(np.asarray(f(jax.device_put(np.full(8, 3, np.float32), sh))).tolist(), flush=True)
threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    np.asarray(f(jax.device_put(np.full(8, 1e9, np.float32), sh)))
    print("no interrupt")
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
'''


def test_ctrl_c_during_a_sharded_launch_then_exit_is_clean(tmp_path):
    """On two devices the launches run on XLA's threads, which Python never interrupts: Ctrl-C
    raises KeyboardInterrupt in the main thread's wait while they go on; at exit they are
    stopped and waited for, so the process ends normally (no fatal error in finalization)."""
    import subprocess

    script = tmp_path / "sharded_ctrl_c.py"
    script.write_text(_SHARDED_CTRL_C)
    r = subprocess.run([sys.executable, str(script), os.path.dirname(HERE)], capture_output=True,
                       text=True, timeout=300)
    assert r.stdout.splitlines() == ["[3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]",
                                     "KeyboardInterrupt"], r.stderr[-3000:]
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Fatal Python error" not in r.stderr
