"""Segments (``scheduler.segments``): straight-line register arithmetic run in batches gives
the registers, the diagnostics and the counts of running it one instruction at a time, and
is actually used."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError, UninitializedReadError
from jax_pyptx.interpret import Stats, launch
from jax_pyptx.interpret.launch import get_module, get_program
from jax_pyptx.interpret.scheduler import segments
from jax_pyptx.interpret.scheduler.context import Context
from jax_pyptx.interpret.scheduler.register_blocks import _all_of, _targets_of

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"
NF, NR, NP = 8, 8, 3          # f32, u32 and predicate registers of the random programs
T = 64                        # threads


def answers(monkeypatch, owner, name):
    """Counts of the True and False answers of ``owner.name`` from now on: [True, False]."""
    seen = [0, 0]
    real = getattr(owner, name)

    def counted(*args, **kw):
        ok = real(*args, **kw)
        seen[0 if ok else 1] += 1
        return ok
    monkeypatch.setattr(owner, name, counted)
    return seen


@pytest.fixture
def ran(monkeypatch):
    """Counts of ``segments.run`` answers: [batched, fell back]."""
    return answers(monkeypatch, segments, "run")


def _both(monkeypatch, fn):
    """``fn()`` with segments on, then off."""
    out = []
    for fuse in (True, False):
        monkeypatch.setattr(Context, "fuse", fuse)
        out.append(fn())
    return out


def _both_f32(monkeypatch, text, n):
    """``_both`` of launching kernel ``k`` of ``text`` on n threads with an f32 output y[n]."""
    def go():
        y = np.zeros(n, np.float32)
        launch(text, "k", [y], block=(n, 1, 1))
        return y
    return _both(monkeypatch, go)


# ----------------------------------------------------------------------------- random programs
NG = 4                        # f32 registers never stored: temporaries, or carried between segments
F = [f"%f{i}" for i in range(NF)] + [f"%g{i}" for i in range(NG)]
R = [f"%r{i}" for i in range(NR)]
P = [f"%p{i}" for i in range(NP)]
IMMF = ["0f3F000000", "0fBFC00000", "0f3E38AA3B", "0f7F800000", "0f00000001"]


def _forms(rng):
    """One random pure instruction (a format with ``{f}``, ``{r}``, ``{p}`` holes)."""
    f = lambda: str(rng.choice(F))
    r = lambda: str(rng.choice(R))
    p = lambda: str(rng.choice(P))
    imf = lambda: str(rng.choice(IMMF))
    table = [
        lambda: f"add.f32 {f()}, {f()}, {f()};",
        lambda: f"sub.ftz.f32 {f()}, {f()}, {imf()};",
        lambda: f"mul.f32 {f()}, {f()}, {f()};",
        lambda: f"mul.rz.f32 {f()}, {f()}, {f()};",
        lambda: f"fma.rn.f32 {f()}, {f()}, {imf()}, {f()};",
        lambda: f"fma.rm.f32 {f()}, {f()}, {f()}, {f()};",
        lambda: f"max.f32 {f()}, {f()}, {f()};",
        lambda: f"min.NaN.f32 {f()}, {f()}, {f()};",
        lambda: f"neg.f32 {f()}, {f()};",
        lambda: f"abs.ftz.f32 {f()}, {f()};",
        lambda: f"ex2.approx.ftz.f32 {f()}, {f()};",
        lambda: f"lg2.approx.f32 {f()}, {f()};",
        lambda: f"rcp.rn.f32 {f()}, {f()};",
        lambda: f"sqrt.rn.f32 {f()}, {f()};",
        lambda: f"rsqrt.approx.f32 {f()}, {f()};",
        lambda: f"tanh.approx.f32 {f()}, {f()};",
        lambda: f"sin.approx.f32 {f()}, {f()};",
        lambda: f"copysign.f32 {f()}, {f()}, {f()};",
        lambda: f"mov.f32 {f()}, {f()};",
        lambda: f"mov.f32 {f()}, {imf()};",
        lambda: f"selp.f32 {f()}, {f()}, {f()}, {p()};",
        lambda: f"setp.gt.f32 {p()}, {f()}, {f()};",
        lambda: f"cvt.rzi.f32.f32 {f()}, {f()};",
        lambda: f"cvt.rn.f32.u32 {f()}, {r()};",
        lambda: f"cvt.rzi.sat.u32.f32 {r()}, {f()};",
        lambda: f"cvt.rn.bf16x2.f32 {r()}, {f()}, {f()};",
        lambda: f"add.u32 {r()}, {r()}, {r()};",
        lambda: f"sub.u32 {r()}, {r()}, 7;",
        lambda: f"mul.lo.u32 {r()}, {r()}, {r()};",
        lambda: f"mul.hi.s32 {r()}, {r()}, {r()};",
        lambda: f"mad.lo.u32 {r()}, {r()}, {r()}, {r()};",
        lambda: f"mul24.lo.u32 {r()}, {r()}, {r()};",
        lambda: f"shl.b32 {r()}, {r()}, {rng.integers(0, 40)};",
        lambda: f"shr.u32 {r()}, {r()}, {r()};",
        lambda: f"shr.s32 {r()}, {r()}, 3;",
        lambda: f"and.b32 {r()}, {r()}, {r()};",
        lambda: f"or.b32 {r()}, {r()}, 255;",
        lambda: f"xor.b32 {r()}, {r()}, {r()};",
        lambda: f"not.b32 {r()}, {r()};",
        lambda: f"cnot.b32 {r()}, {r()};",
        lambda: f"min.u32 {r()}, {r()}, {r()};",
        lambda: f"max.s32 {r()}, {r()}, {r()};",
        lambda: f"popc.b32 {r()}, {r()};",
        lambda: f"clz.b32 {r()}, {r()};",
        lambda: f"brev.b32 {r()}, {r()};",
        lambda: f"lop3.b32 {r()}, {r()}, {r()}, {r()}, {rng.integers(0, 256)};",
        lambda: f"prmt.b32 {r()}, {r()}, {r()}, 0x3210;",
        lambda: f"bfe.u32 {r()}, {r()}, 4, 9;",
        lambda: f"bfi.b32 {r()}, {r()}, {r()}, 3, 7;",
        lambda: f"selp.u32 {r()}, {r()}, {r()}, {p()};",
        lambda: f"setp.lt.u32 {p()}, {r()}, {r()};",
        lambda: f"and.pred {p()}, {p()}, {p()};",
        lambda: f"mov.u32 {r()}, {r()};",
    ]
    return table


def random_block(rng, n, shuffles=False):
    """``n`` random pure instructions, some of them in runs of one form (batches); with
    ``shuffles`` (every thread runs them) warp shuffles too (``Decoded.lanes``)."""
    table = _forms(rng)
    if shuffles:
        table += [lambda: f"shfl.sync.bfly.b32 {rng.choice(F)}, {rng.choice(F)}, {rng.integers(0, 32)}, 31, "
                          "0xffffffff;",
                  lambda: f"shfl.sync.bfly.b32 {rng.choice(R)}, {rng.choice(R)}, {rng.integers(0, 32)}, 31, "
                          "0xffffffff;"]
    out = []
    while len(out) < n:
        make = table[rng.integers(len(table))]
        out.extend(make() for _ in range(int(rng.choice([1, 1, 2, 4, 8]))))
    return out[:n]


def random_kernel(rng, n=120, diverge=True, loop=False):
    """A kernel loading NF f32 and NR u32 registers per thread, running ``n`` random pure
    instructions (the first part only on threads 0-19 when ``diverge``; the second part, warp
    shuffles among them, three
    times over in a loop when ``loop``: registers carried from one iteration to the next) and
    storing them."""
    lines = [HDR, ".visible .entry k(.param .u64 x, .param .u64 y)", "{",
             f"    .reg .f32 %f<{NF}>; .reg .u32 %r<{NR}>; .reg .pred %p<{NP}>; .reg .pred %q;",
             f"    .reg .u32 %t, %i; .reg .u64 %a, %b, %o; .reg .f32 %g<{NG}>;",
             "    ld.param.u64 %a, [x]; ld.param.u64 %b, [y];",
             "    mov.u32 %t, %tid.x;",
             f"    mul.wide.u32 %o, %t, {4 * (NF + NR)};",
             "    add.u64 %a, %a, %o; add.u64 %b, %b, %o;"]
    for i in range(NF):
        lines.append(f"    ld.global.f32 %f{i}, [%a+{4 * i}];")
    for i in range(NR):
        lines.append(f"    ld.global.u32 %r{i}, [%a+{4 * (NF + i)}];")
    for i in range(NP):
        lines.append(f"    setp.lt.u32 %p{i}, %r{i}, %r{i + 1};")
    for i in range(NG):
        lines.append(f"    add.f32 %g{i}, %f{i}, %f{i + 1};")
    half = n // 2 if diverge else 0
    if diverge:
        lines += ["    setp.ge.u32 %q, %t, 20;", "    @%q bra SKIP;"]
    lines += ["    " + s for s in random_block(rng, half)]
    if diverge:
        lines.append("SKIP:")
    if loop:
        lines += ["    mov.u32 %i, 0;", "AGAIN:"]
    lines += ["    " + s for s in random_block(rng, n - half, shuffles=True)]
    if loop:
        lines += ["    add.u32 %i, %i, 1;", "    setp.lt.u32 %q, %i, 3;", "    @%q bra AGAIN;"]
    for i in range(NF):
        lines.append(f"    st.global.f32 [%b+{4 * i}], %f{i};")
    for i in range(NR):
        lines.append(f"    st.global.u32 [%b+{4 * (NF + i)}], %r{i};")
    lines += ["    ret;", "}"]
    return "\n".join(lines)


def _inputs(rng):
    x = np.empty((T, NF + NR), np.uint32)
    fv = (rng.standard_normal((T, NF)) * 10.0 ** rng.integers(-3, 4, (T, NF))).astype(np.float32)
    fv[rng.random((T, NF)) < 0.05] = np.float32(np.nan)
    fv[rng.random((T, NF)) < 0.05] = np.float32(-0.0)
    x[:, :NF] = fv.view(np.uint32)
    x[:, NF:] = rng.integers(0, 2 ** 32, (T, NR), dtype=np.uint64).astype(np.uint32)
    x[:, NF:][rng.random((T, NR)) < 0.2] = rng.integers(0, 40, dtype=np.uint32)
    return x


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_give_the_same_bits_batched_as_one_by_one(monkeypatch, ran, seed):
    rng = np.random.default_rng(seed)
    text = random_kernel(rng, diverge=seed % 3 != 0, loop=seed % 2 == 1)
    x = _inputs(rng)

    sanitize = seed % 4 != 1

    def go():
        y = np.zeros_like(x)
        launch(text, "k", [x, y], block=(T, 1, 1), sanitize=sanitize)
        return y
    fused, plain = _both(monkeypatch, go)
    assert ran[0] > 0         # (the pointer arithmetic at the top falls back: provenance tags)
    np.testing.assert_array_equal(fused, plain)
    prog = get_program(get_module(text), "k")
    assert any(len(st.dsts) > 1 for d in prog.code if d.seg is not None for st in d.seg.steps)


def test_the_plan_batches_independent_instructions_of_one_form():
    text = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .f32 %f<12>; .reg .u64 %b;
    ld.param.u64 %b, [y];
    ld.global.f32 %f0, [%b];
    ld.global.f32 %f1, [%b+4];
    fma.rn.f32 %f2, %f0, 0f3E38AA3B, %f1;
    ex2.approx.ftz.f32 %f3, %f2;
    fma.rn.f32 %f4, %f1, 0f3E38AA3B, %f0;
    ex2.approx.ftz.f32 %f5, %f4;
    fma.rn.f32 %f6, %f0, 0f3E38AA3B, %f1;
    ex2.approx.ftz.f32 %f7, %f6;
    add.f32 %f8, %f3, %f5;
    add.f32 %f9, %f8, %f7;
    st.global.f32 [%b], %f9;
    ret;
}
"""
    prog = get_program(get_module(text), "k")
    segs = [d.seg for d in prog.code if d.seg is not None]
    assert len(segs) == 1
    seg = segs[0]
    assert seg.span == 8
    assert [len(s.dsts) for s in seg.steps] == [3, 3, 1, 1]
    assert set(seg.ext) == {"%f0", "%f1"}
    # the temporaries %f2-%f8 are named only inside the segment: only %f9 is written back
    assert [k for k, _ in seg.finals] == ["%f9"]
    assert seg.finals[0][1].ins.operands[0].name == "%f9"


def test_a_write_after_read_in_one_batch_reads_the_old_value(monkeypatch, ran):
    # %f1 = %f0 + 1 and %f0 = %f2 + 1 share a form and a level: one batch, which must read
    # %f0 before it writes it; the mul (another form) that overwrites %f2 must come after
    text = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .f32 %f<4>; .reg .u64 %b;
    ld.param.u64 %b, [y];
    ld.global.f32 %f0, [%b];
    ld.global.f32 %f2, [%b+8];
    add.f32 %f1, %f0, 0f3F800000;
    add.f32 %f0, %f2, 0f3F800000;
    mul.f32 %f2, %f1, %f1;
    add.f32 %f3, %f2, %f0;
    st.global.f32 [%b], %f0;
    st.global.f32 [%b+4], %f1;
    st.global.f32 [%b+8], %f2;
    st.global.f32 [%b+12], %f3;
    ret;
}
"""

    def go():
        y = np.array([2.0, 0.0, 5.0, 0.0], np.float32)
        launch(text, "k", [y])
        return y
    fused, plain = _both(monkeypatch, go)
    assert ran[0] == 1
    np.testing.assert_array_equal(fused, [6.0, 3.0, 9.0, 15.0])
    np.testing.assert_array_equal(plain, fused)


UNINIT = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .f32 %f<8>; .reg .u32 %t; .reg .pred %p; .reg .u64 %b;
    ld.param.u64 %b, [y];
    mov.u32 %t, %tid.x;
    setp.lt.u32 %p, %t, 16;
    mov.f32 %f0, 0f3F800000;
    @%p mov.f32 %f5, 0f40000000;
    add.f32 %f1, %f0, %f0;
    add.f32 %f2, %f0, %f1;
    mul.f32 %f3, %f2, %f5;
    add.f32 %f4, %f3, %f0;
    st.global.f32 [%b], %f4;
    ret;
}
"""


def test_a_source_not_written_on_every_thread_is_reported_at_its_instruction(monkeypatch, ran):
    def go():
        with pytest.raises(InterpreterError) as e:
            launch(UNINIT, "k", [np.zeros(32, np.float32)], block=(32, 1, 1))
        return str(e.value)
    fused, plain = _both(monkeypatch, go)
    # the prologue's segment (%tid.x, setp, mov) ran; the one after the guarded mov saw the
    # undefined %f5 and stood back
    assert ran == [1, 1]
    assert fused == plain
    assert "mul.f32 %f3, %f2, %f5" in fused and "%f5" in fused


def test_counts_and_the_op_census_are_unchanged(monkeypatch, ran):
    rng = np.random.default_rng(5)
    text = random_kernel(rng, diverge=True)
    x = _inputs(rng)

    def go():
        st, census = {}, Stats(count_ops=True)
        launch(text, "k", [x, np.zeros_like(x)], block=(T, 1, 1), stats=st)
        launch(text, "k", [x, np.zeros_like(x)], block=(T, 1, 1), stats=census)
        st.pop("seconds")
        return st, census.instructions, census.thread_instructions, census.thread_ops
    fused, plain = _both(monkeypatch, go)
    assert ran[0] > 0
    assert fused == plain


# y[%tid.x] at %b, %f0 = %tid.x as f32: the start of the kernels of threads that part ways
PARTING = HDR + """.visible .entry k(.param .u64 y)
{
    .reg .f32 %f<8>; .reg .u32 %t; .reg .pred %p; .reg .u64 %b, %o;
    ld.param.u64 %b, [y];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %o, %t, 4;
    add.u64 %b, %b, %o;
    cvt.rn.f32.u32 %f0, %t;
"""


def test_divergent_threads_run_their_segments_and_rejoin(monkeypatch, ran):
    # threads 0-15 jump to MID; the others run the straight line before it as a segment of
    # their own (a branch target ends a segment), then all run the one from MID together
    text = PARTING + """    mov.f32 %f1, %f0;
    mov.f32 %f2, %f0;
    setp.lt.u32 %p, %t, 16;
    @%p bra MID;
    add.f32 %f1, %f0, 0f3F800000;
    add.f32 %f2, %f0, 0f40000000;
    mul.f32 %f1, %f1, %f2;
MID:
    add.f32 %f3, %f1, %f2;
    mul.f32 %f4, %f3, %f3;
    add.f32 %f5, %f4, %f0;
    st.global.f32 [%b], %f5;
    ret;
}
"""
    fused, plain = _both_f32(monkeypatch, text, 32)
    t = np.arange(32, dtype=np.float32)
    f1 = np.where(t < 16, t, (t + 1) * (t + 2))
    f2 = np.where(t < 16, t, t + 2)
    np.testing.assert_array_equal(fused, (f1 + f2) * (f1 + f2) + t)
    np.testing.assert_array_equal(plain, fused)
    assert ran[0] >= 1


def test_a_segment_is_not_used_where_another_group_waits_inside_it():
    seg = segments.Segment(10, 5, (), (), (), ())
    assert seg.crosses({3, 12}, 10)
    assert not seg.crosses({10, 15, 40}, 10)      # at its start or just past its end: fine
    assert not seg.crosses(set(), 10)


def test_a_handler_that_raises_in_a_batch_leaves_the_segment_to_run_one_by_one(ran):
    text = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .f32 %f<6>; .reg .u64 %b;
    ld.param.u64 %b, [y];
    ld.global.f32 %f0, [%b];
    add.f32 %f1, %f0, 0f3F800000;
    add.f32 %f2, %f0, 0f40000000;
    mul.f32 %f3, %f1, %f2;
    st.global.f32 [%b], %f3;
    ret;
}
"""
    prog = get_program(get_module(text), "k")
    seg = next(d.seg for d in prog.code if d.seg is not None)

    def wants_slots(ctx, g):
        return g.idx                    # what a handler needing slot indices would ask
    seg.steps[0].fn = wants_slots
    seg.blocks = None                   # the NumPy batches, not a native block
    y = np.array([3.0], np.float32)
    launch(get_module(text), "k", [y])
    assert ran == [0, 1]
    assert y[0] == np.float32(4.0 * 5.0)


def _stores_f6(body):
    """A kernel of straight-line code from ``%f0`` = %tid.x to ``%f6``, stored at y[%tid.x]
    (%rd1: y, a pointer whose provenance the sanitizer tracks; %rd3: the address)."""
    return HDR + f"""
.visible .entry k(.param .u64 y)
{{
    .reg .f32 %f<12>; .reg .u32 %t; .reg .u64 %rd<4>;
    ld.param.u64 %rd1, [y];
    mov.u32 %t, %tid.x;
    cvt.rn.f32.u32 %f0, %t;
    add.f32 %f1, %f0, 0f3F800000;
    mul.f32 %f2, %f1, %f1;
{body}    st.global.f32 [%rd3], %f6;
    ret;
}}
"""


def test_a_segment_stopped_by_a_pointer_runs_the_rest_in_pieces(monkeypatch, ran):
    # sanitized, %rd1 holds a pointer (its provenance is tracked): the address arithmetic runs
    # one by one, the f32 arithmetic around it as two segments, in program order
    text = _stores_f6("""    add.f32 %f3, %f2, %f0;
    mul.wide.u32 %rd2, %t, 4;
    add.u64 %rd3, %rd1, %rd2;
    mul.f32 %f4, %f3, 0f3F000000;
    add.f32 %f5, %f4, %f1;
    mul.f32 %f6, %f5, %f5;
""")
    prog = get_program(get_module(text), "k")
    (seg,) = [d.seg for d in prog.code if d.seg is not None]
    assert seg.span == 10                       # from the mov of %tid.x (the batch fixes its values)
    fused, plain = _both_f32(monkeypatch, text, 64)
    t = np.arange(64, dtype=np.float32)
    f1 = t + 1
    f5 = (f1 * f1 + t) * np.float32(0.5) + f1
    np.testing.assert_array_equal(fused, f5 * f5)
    np.testing.assert_array_equal(fused, plain)
    assert ran == [1, 0]
    (pieces,) = seg.pieces.values()             # %rd1's provenance stopped it
    assert [p.span if type(p) is not int else prog.code[p].text for p in pieces] == \
        [6, "add.u64 %rd3, %rd1, %rd2;", 3]     # (the mul.wide reads %t only)


def test_an_uninitialized_source_in_a_piece_is_reported_as_one_by_one(monkeypatch, ran):
    # %f9 is never written: the instruction reading it runs one by one, after the run before
    # it; its undefined bits reach the store, which reports them
    text = _stores_f6("""    add.f32 %f3, %f2, %f9;
    mul.f32 %f4, %f1, 0f3F000000;
    add.f32 %f5, %f4, %f1;
    mul.f32 %f6, %f5, %f3;
    mul.wide.u32 %rd2, %t, 4;
    add.u64 %rd3, %rd1, %rd2;
""")
    errors = []
    for fuse in (True, False):
        monkeypatch.setattr(Context, "fuse", fuse)
        with pytest.raises(InterpreterError) as e:
            launch(text, "k", [np.zeros(64, np.float32)], block=(64, 1, 1))
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1] and errors[0][0] is UninitializedReadError and "%f9" in errors[0][1]
    assert ran == [1, 0]                        # in pieces: the add reading %f9 one by one


# ----------------------------------------------------------------------------- block write-back
SPLIT_WRITES = PARTING + """    setp.lt.u32 %p, %t, 32;
    @%p bra LOW;
    add.f32 %f1, %f0, 0f3F800000;
    mul.f32 %f2, %f1, %f1;
    add.f32 %f3, %f2, %f0;
    bra JOIN;
LOW:
    mul.f32 %f1, %f0, 0f40000000;
    add.f32 %f2, %f1, %f1;
    mul.f32 %f3, %f2, %f0;
JOIN:
    READ
    ret;
}
"""


@pytest.fixture
def blocks(monkeypatch):
    """Counts of ``Context.write_blocks`` answers: [written at once, left to write], every
    native block's results written at once (however few)."""
    monkeypatch.setattr(segments, "WRITE_AT_ONCE", 1)
    return answers(monkeypatch, Context, "write_blocks")


def test_registers_written_in_part_by_two_native_segments_are_written_everywhere(monkeypatch, ran,
                                                                                  blocks):
    # threads 32-63 write %f1-%f3 first (their partial-write masks made), threads 0-31 then
    # write them again (the masks gain their slots), each half as one native block written
    # back at once: every thread reads them written
    text = SPLIT_WRITES.replace("READ", "st.global.f32 [%b], %f3;")
    fused, plain = _both_f32(monkeypatch, text, 64)
    t = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(fused, np.where(t < 32, 4 * t * t, (t + 1) * (t + 1) + t))
    np.testing.assert_array_equal(plain, fused)
    assert ran[0] == 2 and blocks == [2, 0]        # (the prologue stays one by one: %b is a pointer)


def test_a_register_one_native_segment_wrote_in_part_is_unwritten_elsewhere(monkeypatch, ran, blocks):
    # %f4 is written by threads 32-63 only (the first segment): threads 0-31 read it unwritten
    text = SPLIT_WRITES.replace("add.f32 %f3, %f2, %f0;", "add.f32 %f3, %f2, %f0;\n    mov.f32 %f4, %f3;")
    text = text.replace("READ", "st.global.f32 [%b], %f4;")
    errors = []
    for fuse in (True, False):
        monkeypatch.setattr(Context, "fuse", fuse)
        with pytest.raises(UninitializedReadError) as e:
            launch(text, "k", [np.zeros(64, np.float32)], block=(64, 1, 1))
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "%f4" in errors[0]
    assert blocks[0] == 2


def _three_ways(monkeypatch, ran, seg, go):
    """``go()`` with segment ``seg`` run as a native block, one instruction at a time, and as
    NumPy batches: the same answers, the segment run both batched ways; the first answer."""
    fused, plain = _both(monkeypatch, go)
    monkeypatch.setattr(Context, "fuse", True)
    seg.blocks = None                   # the NumPy batches, not a native block
    batches = go()
    assert ran[0] >= 2
    np.testing.assert_array_equal(fused, plain)
    np.testing.assert_array_equal(batches, plain)
    return fused


def test_a_variables_address_is_a_constant_of_the_segment(monkeypatch, ran):
    # mov of a shared and of a global variable's address: immediates the program fixes, so the
    # movs join the arithmetic around them in one segment; two of one form and level but of
    # different variables are told apart (each its own value)
    text = HDR + """
.global .align 8 .b8 gv[64];
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<6>; .reg .u64 %b, %g, %o;
    .shared .align 16 .b8 sa[48];
    .shared .align 16 .b8 sb[32];
    ld.param.u64 %b, [y];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, sa;
    mov.u32 %r2, sb+16;
    shl.b32 %r3, %r0, 2;
    add.u32 %r4, %r1, %r3;
    add.u32 %r5, %r2, %r3;
    mov.u64 %g, gv;
    cvt.u64.u32 %o, %r4;
    add.u64 %g, %g, %o;
    mul.wide.u32 %o, %r0, 16;
    add.u64 %b, %b, %o;
    st.global.v2.u32 [%b], {%r4, %r5};
    st.global.u64 [%b+8], %g;
    ret;
}
"""
    mod = get_module(text)
    seg = get_program(mod, "k").code[1].seg
    assert seg is not None and seg.span == 11                 # the movs of sa, sb+16 and gv among them

    def go():
        y = np.zeros((32, 4), np.uint32)
        launch(mod, "k", [y], block=32)
        return y
    fused = _three_ways(monkeypatch, ran, seg, go)
    t = np.arange(32, dtype=np.uint32) * 4
    assert (fused[:, 1] - fused[:, 0]).tolist() == [48 + 16] * 32            # sb+16 lies 64 bytes past sa
    assert (fused[:, 0] - fused[0, 0]).tolist() == t.tolist()
    g = fused[:, 2].astype(np.uint64) | (fused[:, 3].astype(np.uint64) << np.uint64(32))
    assert (g - g[0]).tolist() == t.tolist() and int(g[0]) != int(fused[0, 0])


def test_special_registers_the_batch_fixes_are_sources_of_the_segment(monkeypatch, ran):
    # %tid, %ntid, %ctaid, %laneid, %warpid and a lane mask read as registers by one segment
    # (natively, then as NumPy batches): each thread's values, as one by one; %clock is a
    # timer, not a constant of the batch, and stays out of it
    text = HDR + """
.visible .entry k(.param .u64 y)
{
    .reg .u32 %r<12>; .reg .u64 %b, %o;
    ld.param.u64 %b, [y];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, %tid.y;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %nctaid.x;
    mad.lo.u32 %r5, %r1, %r2, %r0;
    mov.u32 %r6, %laneid;
    mov.u32 %r7, %warpid;
    xor.b32 %r8, %r6, %lanemask_lt;
    mul.lo.u32 %r9, %r3, 64;
    add.u32 %r10, %r9, %r5;
    mov.u32 %r11, %clock;
    mul.wide.u32 %o, %r10, 16;
    add.u64 %b, %b, %o;
    st.global.v4.u32 [%b], {%r5, %r7, %r8, %r4};
    ret;
}
"""
    mod = get_module(text)
    code = get_program(mod, "k").code
    seg = code[1].seg
    assert seg is not None and seg.span == 11 and code[12].seg is None       # (%clock at pc 12)
    assert set(seg.specials) == {"%tid.x", "%tid.y", "%ntid.x", "%ctaid.x", "%nctaid.x", "%laneid",
                                 "%warpid", "%lanemask_lt"}

    def go():
        y = np.zeros((3 * 64, 4), np.uint32)
        launch(mod, "k", [y], grid=3, block=(16, 4, 1))
        return y
    fused = _three_ways(monkeypatch, ran, seg, go)
    t = np.tile(np.arange(64, dtype=np.uint32), 3)
    lane = t % 32
    np.testing.assert_array_equal(fused, np.stack([t, t // 32, lane ^ ((1 << lane) - 1), np.full(192, 3)], 1))


def test_a_blocks_old_arrays_are_taken_only_where_all_have_its_dtype_and_shape():
    # write_blocks / write_rows take a block's old register arrays (None: not written yet) only
    # where every one has the rows' dtype (an equal dtype that is another object too) and,
    # where asked, the batch's shape; else the registers are written one by one
    u32 = np.dtype(np.uint32)
    olds = [np.zeros(8, np.uint32), None, np.zeros(8, np.dtype(np.uint32, metadata={"m": 1}))]
    assert olds[2].dtype is not u32
    assert _all_of(olds, u32, (8,)) and _all_of(olds, u32, None) and _all_of([None, None], u32, (8,))
    assert not _all_of(olds + [np.zeros(8, np.float32)], u32, None)
    assert not _all_of(olds + [np.zeros(4, np.uint32)], u32, (8,))
    assert _all_of(olds + [np.zeros(4, np.uint32)], u32, None)
    # write_blocks' one pass: None where one is not of the dtype and (N,), else each array a
    # block write goes into: the old one where nothing else holds it, a copy where something
    # does (a second name, a view, read-only), zeros for one not written yet
    regs = {"a": np.zeros(8, np.uint32), "b": np.zeros(8, np.uint32), "c": np.zeros(8, np.uint32),
            "d": np.zeros(16, np.uint32)[::2], "e": np.zeros(8, np.uint32)}
    held = regs["b"]
    regs["c"].flags.writeable = False
    keys = ["a", "b", "c", "d", "e", "f"]
    new = _targets_of(list(map(regs.get, keys)), 8, u32)
    assert new[0] is regs["a"] and new[4] is regs["e"]
    assert all(new[i] is not regs[k] and np.array_equal(new[i], regs[k]) and new[i].flags.writeable
               for i, k in enumerate("bcd"))
    assert new[5].dtype == u32 and new[5].shape == (8,) and not new[5].any() and held is regs["b"]
    regs["e"] = np.zeros(8, np.float32)
    assert _targets_of(list(map(regs.get, keys)), 8, u32) is None
    regs["e"] = np.zeros(4, np.uint32)
    assert _targets_of(list(map(regs.get, keys)), 8, u32) is None
