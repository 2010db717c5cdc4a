"""Warp shuffles inside segments (``Decoded.lanes``, ``scheduler.segments``): a
``shfl.sync.bfly.b32`` with the lane mask, the clamp 31 and the full membermask immediates is
a permutation of whole warps, batched with the arithmetic around it (natively: ``bfly32``);
a group that is not whole warps runs it one by one, and each shuffle still orders its warps'
shared accesses for the race checker."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError, RaceError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.launch import get_module, get_program
from jax_pyptx.interpret.scheduler import native, segments
from jax_pyptx.interpret.scheduler.context import Context

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"

# a row maximum over each warp: five butterfly steps, each a shuffle and a max
REDUCE = "".join(f"    shfl.sync.bfly.b32 %f2, %f1, {b}, 31, 0xffffffff;\n    max.f32 %f1, %f1, %f2;\n"
                 for b in (16, 8, 4, 2, 1))


def kernel(body, head=""):
    return HDR + f"""
.visible .entry k(.param .u64 x, .param .u64 y)
{{
    .reg .f32 %f<8>; .reg .u32 %t; .reg .u64 %a, %b, %o; .reg .pred %p;
    ld.param.u64 %a, [x]; ld.param.u64 %b, [y];
    mov.u32 %t, %tid.x;
    mul.wide.u32 %o, %t, 4;
    add.u64 %a, %a, %o; add.u64 %b, %b, %o;
{head}    ld.global.f32 %f0, [%a];
    add.f32 %f1, %f0, 0f3F800000;
{body}    st.global.f32 [%b], %f1;
    ret;
}}
"""


@pytest.fixture
def ran(monkeypatch):
    """Counts of ``segments.run`` answers for segments holding a shuffle: [batched, fell back]."""
    seen = [0, 0]
    real = segments.run

    def counted(ctx, seg, g, **kw):
        ok = real(ctx, seg, g, **kw)
        if seg.shuffles:
            seen[0 if ok else 1] += 1
        return ok
    monkeypatch.setattr(segments, "run", counted)
    return seen


def both(monkeypatch, text, x, block):
    out = []
    for fuse in (True, False):
        monkeypatch.setattr(Context, "fuse", fuse)
        y = np.zeros_like(x)
        launch(text, "k", [x, y], block=block)
        out.append(y)
    return out


def test_a_row_reduction_is_one_segment_with_its_shuffles(monkeypatch, ran):
    text = kernel(REDUCE)
    prog = get_program(get_module(text), "k")
    (seg,) = [d.seg for d in prog.code if d.seg is not None and d.seg.shuffles]
    assert seg.span == 11 and seg.shuffles == 5              # the add, then 5 x (shfl, max)
    assert seg.blocks is not None and len(seg.blocks) == 1   # one native block, bfly32 in it
    x = np.random.default_rng(1).standard_normal(128).astype(np.float32)
    fused, plain = both(monkeypatch, text, x, 128)
    np.testing.assert_array_equal(fused, np.repeat((x + 1).reshape(4, 32).max(axis=1), 32))
    np.testing.assert_array_equal(fused, plain)
    assert ran == [1, 0]


def test_through_numpy_too(monkeypatch, ran):
    # the native block declines: its batches run through NumPy, the shuffles as permutations
    monkeypatch.setattr(native.Block, "run", lambda self, *a, **k: False)
    x = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    fused, plain = both(monkeypatch, kernel(REDUCE), x, 64)
    np.testing.assert_array_equal(fused, np.repeat((x + 1).reshape(2, 32).max(axis=1), 32))
    np.testing.assert_array_equal(fused, plain)
    assert ran == [1, 0]


def test_a_group_that_is_not_whole_warps_runs_it_one_by_one(monkeypatch, ran):
    # threads 48-63 exit first: warp 1 is half there, and lanes 0-15 swap with their neighbours
    text = kernel("    shfl.sync.bfly.b32 %f2, %f1, 1, 31, 0xffffffff;\n    add.f32 %f1, %f1, %f2;\n"
                  "    mul.f32 %f1, %f1, 0f40000000;\n", head="    setp.ge.u32 %p, %t, 48;\n    @%p ret;\n")
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    fused, plain = both(monkeypatch, text, x, 64)
    v = (x[:48] + 1).reshape(-1, 2)
    want = np.float32(2) * (v + v[:, ::-1]).reshape(-1)
    np.testing.assert_array_equal(fused[:48], want)
    np.testing.assert_array_equal(fused, plain)
    assert ran == [0, 1]


def test_planning_keeps_other_shuffles_out():
    # a predicate destination, a lane mask from a register, another clamp or membermask, the
    # other modes, a guard: one by one
    for line in ("shfl.sync.bfly.b32 %f2|%p, %f1, 1, 31, 0xffffffff;",
                 "shfl.sync.bfly.b32 %f2, %f1, %t, 31, 0xffffffff;",
                 "shfl.sync.bfly.b32 %f2, %f1, 1, 15, 0xffffffff;",
                 "shfl.sync.bfly.b32 %f2, %f1, 1, 31, 0x0000ffff;",
                 "shfl.sync.down.b32 %f2, %f1, 1, 31, 0xffffffff;",
                 "@%p shfl.sync.bfly.b32 %f2, %f1, 1, 31, 0xffffffff;"):
        body = f"    {line}\n    add.f32 %f1, %f1, %f2;\n    mul.f32 %f1, %f1, %f2;\n"
        prog = get_program(get_module(kernel(body)), "k")
        d = next(d for d in prog.code if d.ins.opcode == "shfl.sync")
        assert (d.lanes is None) != line.startswith("@"), line
        assert not any(s.seg is not None and s.seg.shuffles for s in prog.code), line


# lane 0 stores a word, lane 1 loads it: ordered only where a warp-synchronizing instruction
# (the shuffle, here inside a segment) lies between them
RACE = """
.visible .entry k(.param .u64 x, .param .u64 y)
{
    .reg .f32 %f<8>; .reg .u32 %t, %s, %v; .reg .u64 %b, %o; .reg .pred %p, %q;
    .shared .align 4 .b8 buf[64];
    ld.param.u64 %b, [y];
    mov.u32 %t, %tid.x;
    mov.u32 %s, buf;
    setp.eq.u32 %p, %t, 0;
    @%p st.shared.u32 [%s], %t;
    cvt.rn.f32.u32 %f1, %t;
BODY    setp.eq.u32 %q, %t, 1;
    @%q ld.shared.u32 %v, [%s];
    @%q cvt.rn.f32.u32 %f3, %v;
    @%q add.f32 %f1, %f1, %f3;
    mul.wide.u32 %o, %t, 4;
    add.u64 %b, %b, %o;
    st.global.f32 [%b], %f1;
    ret;
}
"""


@pytest.mark.parametrize("fuse", [True, False])
def test_a_shuffle_in_a_segment_orders_the_lanes_shared_accesses(monkeypatch, ran, fuse):
    monkeypatch.setattr(Context, "fuse", fuse)
    synced = HDR + RACE.replace("BODY", "    add.f32 %f1, %f1, 0f3F800000;\n"
                                "    shfl.sync.bfly.b32 %f2, %f1, 1, 31, 0xffffffff;\n"
                                "    add.f32 %f1, %f1, %f2;\n")
    y = np.zeros(32, np.float32)
    launch(synced, "k", [np.zeros(1, np.float32), y], block=32)
    t = np.arange(32, dtype=np.float32) + 1
    want = t + t.reshape(-1, 2)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(y, want)
    assert ran[0] == (1 if fuse else 0)
    plain = HDR + RACE.replace("BODY", "    add.f32 %f1, %f1, 0f3F800000;\n    add.f32 %f1, %f1, %f1;\n"
                               "    mul.f32 %f1, %f1, %f1;\n")
    with pytest.raises(RaceError):
        launch(plain, "k", [np.zeros(1, np.float32), np.zeros(32, np.float32)], block=32)


def test_a_group_of_32_threads_across_two_warps_runs_it_one_by_one(monkeypatch, ran):
    # threads 16-47: as many threads as a warp, but halves of two; lane 16 reads lane 0, which
    # exited: its bits are undefined, which the store reports, as one by one does
    text = kernel("    shfl.sync.bfly.b32 %f2, %f1, 16, 31, 0xffffffff;\n    add.f32 %f1, %f1, %f2;\n"
                  "    mul.f32 %f1, %f1, 0f40000000;\n",
                  head="    setp.lt.u32 %p, %t, 16;\n    @%p ret;\n    setp.ge.u32 %p, %t, 48;\n    @%p ret;\n")
    x = np.random.default_rng(5).standard_normal(64).astype(np.float32)
    errors = []
    for fuse in (True, False):
        monkeypatch.setattr(Context, "fuse", fuse)
        with pytest.raises(InterpreterError) as e:
            launch(text, "k", [x, np.zeros_like(x)], block=64)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1] and "undefined" in errors[0][1]
    assert ran == [0, 1]
