"""Warp-level instructions (shfl, vote, redux, match, elect, activemask), barriers with thread
counts, named barriers and bar.red, divergence and reconvergence, and calls."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.interpret import launch
from jax_pyptx.interpret.snippet import run_snippet as R

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"
LANES = np.arange(32)


def shfl(body, a, b=None, n=32):
    ins = {"a": ("u32", a)}
    if b is not None:
        ins["b"] = ("u32", b)
    out = R(body, ins, {"d": "u32", "p": "pred"}, n=n, decls=".reg .pred %p;")
    return out["d"].tolist(), out["p"].tolist()


def test_shfl_modes_full_warp():
    v = (LANES * 10 + 3).tolist()
    d, p = shfl("shfl.sync.up.b32 %d|%p, %a, 3, 0, -1;", v)
    assert d == [v[i - 3] if i >= 3 else v[i] for i in range(32)] and p == [i >= 3 for i in range(32)]
    d, p = shfl("shfl.sync.down.b32 %d|%p, %a, 5, 31, -1;", v)
    assert d == [v[i + 5] if i + 5 < 32 else v[i] for i in range(32)] and p == [i + 5 < 32 for i in range(32)]
    d, p = shfl("shfl.sync.bfly.b32 %d|%p, %a, 6, 31, -1;", v)
    assert d == [v[i ^ 6] for i in range(32)] and all(p)
    d, p = shfl("shfl.sync.idx.b32 %d|%p, %a, %b, 31, -1;", v, (31 - LANES).tolist())
    assert d == v[::-1] and all(p)


def test_shfl_sub_warp_segments():
    v = (LANES + 100).tolist()
    seg = (32 - 8) << 8
    d, p = shfl(f"shfl.sync.down.b32 %d|%p, %a, 2, {seg | 31}, -1;", v)
    assert d == [v[i + 2] if (i % 8) + 2 < 8 else v[i] for i in range(32)]
    d, _ = shfl(f"shfl.sync.idx.b32 %d|%p, %a, 3, {seg | 31}, -1;", v)
    assert d == [v[(i // 8) * 8 + 3] for i in range(32)]
    d, p = shfl(f"shfl.sync.up.b32 %d|%p, %a, 1, {seg}, -1;", v)
    assert d == [v[i - 1] if i % 8 >= 1 else v[i] for i in range(32)]
    d, _ = shfl(f"shfl.sync.bfly.b32 %d|%p, %a, 4, {seg | 31}, -1;", v)
    assert d == [v[i ^ 4] for i in range(32)]


def test_shfl_whole_warps_of_a_part_of_the_block_match_the_per_thread_path():
    """Constant b and c by whole warps (warps 1 and 3 of 4) take the per-warp permutation; the
    same shfl with b in a register takes the per-thread path: both give the ISA's values, and
    warps 0 and 2 keep theirs."""
    n = 128
    tid = np.arange(n)
    v = (tid * 7 + 1).tolist()
    pre = ("shr.u32 %w, %tid_, 5; and.b32 %w, %w, 1; setp.eq.u32 %q, %w, 1; mov.u32 %d, 9; "
           "mov.u32 %bb, {b}; @!%q bra DONE; ")
    cases = [("bfly", 6, 31, lambda i: i ^ 6), ("down", 5, 31, lambda i: i + 5 if i + 5 < 32 else i),
             ("up", 3, 0, lambda i: i - 3 if i >= 3 else i), ("idx", 3, ((32 - 8) << 8) | 31,
                                                              lambda i: (i // 8) * 8 + 3)]
    for mode, b, c, src in cases:
        got = []
        for bop in (str(b), "%bb"):
            body = pre.format(b=b) + f"shfl.sync.{mode}.b32 %d|%p, %a, {bop}, {c}, -1; DONE:"
            out = R(body, {"a": ("u32", v)}, {"d": "u32"}, n=n,
                    decls=".reg .pred %p; .reg .pred %q; .reg .u32 %w; .reg .u32 %bb;")
            got.append(out["d"].tolist())
        want = [v[(i & ~31) + src(i % 32)] if (i >> 5) & 1 else 9 for i in range(n)]
        assert got[0] == want, mode
        assert got[1] == want, mode


def test_vote_and_ballot_with_half_warp_mask():
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<6>;
        mov.u32 %r1, %tid.x;
        and.b32 %r2, %r1, 3;
        setp.eq.u32 %p1, %r2, 0;                 // every 4th lane
        setp.lt.u32 %p2, %r1, 16;
        @!%p2 bra HI;
        vote.sync.ballot.b32 %r3, %p1, 0x0000ffff;
        vote.sync.any.pred %p3, %p1, 0x0000ffff;
        vote.sync.all.pred %p4, %p2, 0x0000ffff;
        vote.sync.uni.pred %p5, %p1, 0x0000ffff;
        bra OUT;
    HI:
        vote.sync.ballot.b32 %r3, %p1, 0xffff0000;
        vote.sync.any.pred %p3, %p2, 0xffff0000;
        vote.sync.all.pred %p4, %p1, 0xffff0000;
        vote.sync.uni.pred %p5, %p2, 0xffff0000;
    OUT:
        selp.u32 %r4, 1, 0, %p3; selp.u32 %r5, 1, 0, %p4; selp.u32 %r6, 1, 0, %p5;
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r1, 16; add.u64 %rd1, %rd1, %rd2;
        st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};
        ret;
    }"""
    y = np.zeros((32, 4), np.uint32)
    launch(prog, "k", [y], block=32)
    assert y[:16, 0].tolist() == [0x1111] * 16 and y[16:, 0].tolist() == [0x11110000] * 16
    assert y[:16, 1].tolist() == [1] * 16 and y[16:, 1].tolist() == [0] * 16
    assert y[:16, 2].tolist() == [1] * 16 and y[16:, 2].tolist() == [0] * 16
    assert y[:16, 3].tolist() == [0] * 16 and y[16:, 3].tolist() == [1] * 16


@pytest.mark.parametrize("op,f", [("add.u32", sum), ("min.s32", min), ("max.s32", max),
                                  ("and.b32", None), ("or.b32", None), ("xor.b32", None)])
def test_redux_per_warp(op, f):
    rng = np.random.default_rng(1)
    a = rng.integers(-1000, 1000, 64).astype(np.int32)
    t = op.split(".")[1]
    got = R(f"redux.sync.{op} %d, %a, -1;", {"a": (t, a)}, {"d": t}, n=64)["d"]
    for w in range(2):
        seg = a[32 * w:32 * w + 32].astype(np.int64)
        if f is not None:
            exp = f(seg.tolist()) if t == "s32" else sum(int(x) & 0xFFFFFFFF for x in seg) & 0xFFFFFFFF
        else:
            u = [int(x) & 0xFFFFFFFF for x in seg]
            exp = u[0]
            for x in u[1:]:
                exp = {"and": exp & x, "or": exp | x, "xor": exp ^ x}[op.split(".")[0]]
        vals = got[32 * w:32 * w + 32].astype(np.int64) & (0xFFFFFFFF if t != "s32" else -1)
        assert (vals == (exp if t != "s32" else exp)).all(), op


def test_match_any_all_and_elect():
    v = (LANES % 3).tolist()
    out = R("match.any.sync.b32 %d, %a, -1; match.all.sync.b32 %e|%p, %a, -1; match.all.sync.b32 %f|%q, 7, -1;"
            "mov.u32 %g, 99; mov.u32 %tid_, %laneid; setp.ge.u32 %r, %tid_, 4;"
            "@%r elect.sync %g|%r, 0xfffffff0;",
            {"a": ("u32", v)}, {"d": "b32", "e": "b32", "f": "b32", "p": "pred", "q": "pred", "g": "u32", "r": "pred"},
            n=32, decls=".reg .b32 %e, %f; .reg .u32 %g; .reg .pred %p, %q, %r;")
    assert out["d"].tolist() == [sum(1 << j for j in range(32) if v[j] == v[i]) for i in range(32)]
    assert out["e"].tolist() == [0] * 32 and not out["p"].any()
    assert out["f"].tolist() == [0xFFFFFFFF] * 32 and out["q"].all()
    assert out["g"].tolist() == [99] * 4 + [4] * 28 and out["r"].tolist() == [i == 4 for i in range(32)]


def test_activemask_in_divergent_code():
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<4>; .reg .u64 %rd<4>; .reg .pred %p1;
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 5;
        @%p1 bra A;
        activemask.b32 %r2;
        bra B;
    A:
        activemask.b32 %r2;
    B:
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r2;
        ret;
    }"""
    y = np.zeros(32, np.uint32)
    launch(prog, "k", [y], block=32)
    assert y.tolist() == [0x1F] * 5 + [0xFFFFFFE0] * 27


# ----------------------------------------------------------------------------- barriers
def test_named_barrier_producer_consumer():
    """Warp 0 produces into shared memory and bar.arrive's; warp 1 bar.sync's on the same named
    barrier with a thread count of 64 and then consumes."""
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p1;
        .shared .align 4 .b8 buf[128];
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 32;
        @!%p1 bra CONSUMER;
        shl.b32 %r2, %r1, 2;
        mul.lo.u32 %r3, %r1, %r1;
        st.shared.u32 [buf+%r2], %r3;
        bar.arrive 3, 64;
        ret;
    CONSUMER:
        bar.sync 3, 64;
        sub.u32 %r4, %r1, 32;
        shl.b32 %r2, %r4, 2;
        mov.u32 %r5, buf;
        add.u32 %r5, %r5, %r2;
        ld.shared.u32 %r3, [%r5];
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r4, 4; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r3;
        ret;
    }""".replace("[buf+%r2]", "[%r5]").replace("shl.b32 %r2, %r1, 2;\n        mul.lo.u32",
                                                    "shl.b32 %r2, %r1, 2;\n        mov.u32 %r5, buf; add.u32 %r5, %r5, %r2;\n        mul.lo.u32")
    y = np.zeros(32, np.uint32)
    launch(prog, "k", [y], block=64)
    assert y.tolist() == (LANES ** 2).tolist()


def test_bar_red_popc_and_or():
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<4>; .reg .u64 %rd<4>; .reg .pred %p<4>;
        mov.u32 %r1, %tid.x;
        and.b32 %r2, %r1, 7;
        setp.eq.u32 %p1, %r2, 0;
        bar.red.popc.u32 %r3, 0, %p1;
        bar.red.and.pred %p2, 1, %p1;
        bar.red.or.pred %p3, 2, !%p1;
        selp.u32 %r2, 1, 0, %p2;
        selp.u32 %r1, 1, 0, %p3;
        mov.u32 %r0, %tid.x;
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r0, 12; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r3; st.global.u32 [%rd1+4], %r2; st.global.u32 [%rd1+8], %r1;
        ret;
    }"""
    y = np.zeros((96, 3), np.uint32)
    launch(prog, "k", [y], block=96)
    assert (y[:, 0] == 12).all() and (y[:, 1] == 0).all() and (y[:, 2] == 1).all()


def test_barrier_with_exited_threads_completes():
    """A barrier.sync with no thread count waits for the non-exited threads (PTX ISA). Its
    .aligned form (bar.sync) would promise that every thread executes it: the sanitizer reports
    that (test_interp_sanitizer_misses)."""
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<4>; .reg .u64 %rd<4>; .reg .pred %p1;
        .shared .align 4 .b8 s[4];
        mov.u32 %r1, %tid.x;
        setp.ge.u32 %p1, %r1, 40;
        @%p1 exit;
        setp.eq.u32 %p1, %r1, 0;
        @%p1 st.shared.u32 [s], 77;
        barrier.sync 0;
        ld.shared.u32 %r2, [s];
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r2;
        ret;
    }"""
    y = np.zeros(64, np.uint32)
    launch(prog, "k", [y], block=64)
    assert y.tolist() == [77] * 40 + [0] * 24


def test_non_aligned_barrier_from_different_pcs():
    """barrier.sync (no .aligned) may be reached by the threads of a warp at different PCs."""
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<4>; .reg .u64 %rd<4>; .reg .pred %p1;
        .shared .align 4 .b8 s[128];
        mov.u32 %r1, %tid.x;
        shl.b32 %r3, %r1, 2;
        mov.u32 %r2, s;
        add.u32 %r2, %r2, %r3;
        st.shared.u32 [%r2], %r1;
        and.b32 %r3, %r1, 1;
        setp.eq.u32 %p1, %r3, 0;
        @%p1 bra EVEN;
        barrier.sync 0;
        bra J;
    EVEN:
        barrier.sync 0;
    J:
        xor.b32 %r3, %r1, 31;
        shl.b32 %r3, %r3, 2;
        mov.u32 %r2, s;
        add.u32 %r2, %r2, %r3;
        ld.shared.u32 %r3, [%r2];
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r3;
        ret;
    }"""
    y = np.zeros(32, np.uint32)
    launch(prog, "k", [y], block=32)
    assert y.tolist() == (LANES ^ 31).tolist()


# ----------------------------------------------------------------------------- divergence
def test_nested_divergence_and_loops_reconverge_for_shfl():
    """Each lane loops tid%5 times inside a branch taken by odd lanes; after the join a full
    warp shuffle must see every lane's final value."""
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<4>;
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, 0;
        and.b32 %r3, %r1, 1;
        setp.eq.u32 %p1, %r3, 0;
        @%p1 bra EVEN;
        rem.u32 %r4, %r1, 5;
        mov.u32 %r5, 0;
    LOOP:
        setp.ge.u32 %p2, %r5, %r4;
        @%p2 bra DONE;
        add.u32 %r2, %r2, %r1;
        add.u32 %r5, %r5, 1;
        bra LOOP;
    DONE:
        bra JOIN;
    EVEN:
        setp.lt.u32 %p3, %r1, 16;
        @%p3 bra SMALL;
        mov.u32 %r2, 1000;
        bra JOIN;
    SMALL:
        mov.u32 %r2, 2000;
    JOIN:
        shfl.sync.idx.b32 %r6, %r2, 31, 31, -1;
        shfl.sync.bfly.b32 %r7, %r2, 1, 31, -1;
        add.u32 %r6, %r6, %r7;
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r6;
        ret;
    }"""
    y = np.zeros(64, np.uint32)
    stats = {}
    launch(prog, "k", [y], block=64, stats=stats)
    t = np.arange(64)
    v = np.where(t % 2 == 1, t * (t % 5), np.where(t < 16, 2000, 1000))
    lane31 = v[(t // 32) * 32 + 31]
    assert y.tolist() == (lane31 + v[t ^ 1]).tolist()


def test_calls_with_params_and_divergent_returns():
    prog = HDR + """
    .func (.param .b32 ret) clampsum(.param .b32 a, .param .b32 b)
    {
        .reg .u32 %x, %y, %z; .reg .pred %p;
        ld.param.u32 %x, [a];
        ld.param.u32 %y, [b];
        add.u32 %z, %x, %y;
        setp.gt.u32 %p, %z, 50;
        @%p bra BIG;
        st.param.u32 [ret], %z;
        ret;
    BIG:
        st.param.u32 [ret], 50;
        ret;
    }
    .func (.reg .u32 r) twice(.reg .u32 v)
    {
        add.u32 r, v, v;
        ret;
    }
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<6>; .reg .u64 %rd<4>;
        mov.u32 %r1, %tid.x;
        {
            .param .b32 p0;
            .param .b32 p1;
            .param .b32 rv;
            st.param.u32 [p0], %r1;
            st.param.u32 [p1], 20;
            call.uni (rv), clampsum, (p0, p1);
            ld.param.u32 %r2, [rv];
        }
        call.uni (%r3), twice, (%r2);
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r3;
        ret;
    }"""
    y = np.zeros(64, np.uint32)
    launch(prog, "k", [y], block=64)
    assert y.tolist() == (2 * np.minimum(np.arange(64) + 20, 50)).tolist()


def test_brx_idx_jump_table_diverges_per_thread():
    prog = HDR + """
    .visible .entry k(.param .u64 y)
    {
        .reg .u32 %r<4>; .reg .u64 %rd<4>;
    TBL:
        .branchtargets L0, L1, L2;
        mov.u32 %r1, %tid.x;
        rem.u32 %r2, %r1, 3;
        brx.idx %r2, TBL;
    L0:
        mov.u32 %r3, 100;
        bra J;
    L1:
        mov.u32 %r3, 200;
        bra J;
    L2:
        mov.u32 %r3, 300;
    J:
        add.u32 %r3, %r3, %r1;
        ld.param.u64 %rd1, [y]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
        st.global.u32 [%rd1], %r3;
        ret;
    }"""
    y = np.zeros(32, np.uint32)
    launch(prog, "k", [y], block=32)
    assert y.tolist() == (100 * (LANES % 3 + 1) + LANES).tolist()


@pytest.mark.parametrize("key", [
    np.repeat([3 * 16 + 1, 16 + 2, 16 + 1, 2], [64, 32, 32, 128]),      # runs (not in key order)
    np.tile([17, 18], 64),                                                # interleaved: a mask each
    np.full(96, 5),
])
def test_barrier_groups_are_the_distinct_keys_in_order_with_their_threads(key):
    from jax_pyptx.interpret.machine.barriers import _barrier_groups
    keys, sels, cnts = _barrier_groups(key)
    want = np.unique(key)
    assert keys == want.tolist()
    for k, sel, c in zip(keys, sels, cnts):
        np.testing.assert_array_equal(np.arange(len(key))[sel], np.flatnonzero(key == k))
        assert c == np.count_nonzero(key == k)
