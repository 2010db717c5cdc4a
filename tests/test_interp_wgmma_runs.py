"""Runs of ``wgmma.mma_async`` on one accumulator issued as one (``scheduler.wgmma_runs``,
``ops.wgmma_chain``): the k-steps' descriptor arithmetic runs first as one segment, each
``mma_async`` reads and checks its operands in order, and the accumulator's tile is made
pending once; bf16 operands are read at once where nothing can be reported (``_at_once``).
The registers, the values and the diagnostics are those of running them one by one
(``Context.fuse = False``)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError, SanitizerWarning, UninitializedReadError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.launch import get_module, get_program
from jax_pyptx.interpret.ops import wgmma_chain
from jax_pyptx.interpret.ops.wgmma import _MmaAsync
from jax_pyptx.interpret.scheduler import wgmma_runs
from jax_pyptx.interpret.scheduler.context import Context

from .mma_util import a_regs, acc_matrix, place, rand, wgmma_desc, wgmma_kernel
from .test_interp_wgmma_blocks import COMMIT, WAIT, two_warpgroups

B2 = 4096 >> 4            # the second B lies 4 KiB after the first: its descriptor's start + 256


def mma(db, sd, t="f16", a="%da"):
    tail = "0" if a.startswith("{") else "0, 0"         # imm-trans-b (and -a for a descriptor)
    return f"  wgmma.mma_async.sync.aligned.m64n8k16.f32.{t}.{t} {{acc}}, {a}, {db}, {sd}, 1, 1, {tail};\n"


# three k-steps on one accumulator (B1, B2, B2), the later descriptors worked out between them
CHAIN = (mma("%db", "SD0") + f"  add.u64 %rd9, %db, {B2};\n" + mma("%rd9", 1) + "  add.u64 %rd4, %rd9, 0;\n" +
         mma("%rd4", 1) + COMMIT + WAIT)


def image(seed, t="f16"):
    """A (64 x 16) at 0, B1 and B2 (16 x 8) at 8 and 12 KiB, of type ``t``; A and the exact
    products."""
    rng = np.random.default_rng(seed)
    A, B1, B2_ = rand(rng, (64, 16), t), rand(rng, (16, 8), t), rand(rng, (16, 8), t)
    img = np.zeros(16384, np.uint8)
    place(img, 0, A, t, "K", "none", lbo=8 * 128, sbo=128)
    place(img, 8192, B1.T, t, "K", "none", lbo=128, sbo=128)
    place(img, 12288, B2_.T, t, "K", "none", lbo=128, sbo=128)
    a = A.astype(np.float64)
    return img, a @ B1.astype(np.float64), a @ B2_.astype(np.float64), A


def run(ptx, img, block=128, cin=None, areg=None, **kw):
    out = np.zeros(block * 4, np.uint32)
    c = np.zeros(block * 4, np.uint32) if cin is None else cin
    ar = np.zeros((block, 4), np.uint32) if areg is None else areg
    launch(ptx, "k", [img, out, np.uint64(wgmma_desc(0, 1024, 128)), np.uint64(wgmma_desc(8192, 128, 128)),
                      c, ar], block=block, **kw)
    return out


def both(monkeypatch, fn, at_once=None, delivered=None):
    """``fn()`` with runs on, then one by one (the answer, or the error's type and message),
    and the runs issued as one in each (their lengths); ``at_once`` (a list) gets how many of
    them read their operands at once, ``delivered`` how many delivered their tile themselves
    (``_MmaAsync.deliver``: the wait_group right after them retires nothing)."""
    out, chains = [], []
    real, issue = wgmma_runs.run_chain, wgmma_chain._issue
    deliver = _MmaAsync.deliver
    for fuse in (True, False):
        seen, fast, got = [], [], []

        def delivering(*a, got=got):
            got.append(1)
            return deliver(*a)
        monkeypatch.setattr(_MmaAsync, "deliver", delivering)

        def counted(ctx, g, members, memo, wait=None, keep=None, seen=seen):
            seen.append(len(members))
            return real(ctx, g, members, memo, wait, keep)

        def issued(*a, fast=fast):
            fast.append(1)
            return issue(*a)
        monkeypatch.setattr(wgmma_runs, "run_chain", counted)
        monkeypatch.setattr(wgmma_chain, "_issue", issued)
        monkeypatch.setattr(Context, "fuse", fuse)
        try:
            out.append(fn())
        except InterpreterError as e:
            out.append((type(e), str(e)))
        chains.append(seen)
        if at_once is not None:
            at_once.append(len(fast))
        if delivered is not None:
            delivered.append(len(got))
    return out, chains


def f32(x):
    return np.asarray(x, np.float32).astype(np.float64)


def test_a_run_is_planned_from_the_first_mma_to_the_last():
    prog = get_program(get_module(wgmma_kernel(CHAIN.replace("SD0", "0"), 4)), "k")
    (d,) = [d for d in prog.code if d.wrun is not None]
    first = next(c.pc for c in prog.code if c.ins.opcode == "wgmma.mma_async")
    # with the commit_group and the wait_group 0 right after the last mma_async
    assert d.pc == first and d.wrun.span == 7 and len(d.wrun.members) == 3
    assert [w.ins.full_opcode for w in d.wrun.waits] == ["wgmma.commit_group.sync.aligned",
                                                        "wgmma.wait_group.sync.aligned"]
    names = sorted(k.split("::")[-1] for k, _ in d.wrun.seg.finals)      # hoisted, written back
    assert names == ["%rd4", "%rd9"]


@pytest.mark.parametrize("body, runs", [
    # the add overwrites a descriptor the first mma read: the run ends before it
    (mma("%rd9", 0) + "  add.u64 %rd9, %rd9, 0;\n" + mma("%rd9", 1) + mma("%rd9", 1), [(2, 2)]),
    # one pure instruction between: not a segment, so the run ends before it
    (mma("%db", 0) + "  add.u64 %rd9, %db, 0;\n" + mma("%rd9", 1) + mma("%db", 1), [(2, 2)]),
    # a pure instruction writing an accumulator register ends it
    (mma("%db", 0) + mma("%db", 1) + "  mov.f32 %c1, 0f00000000;\n  add.u64 %rd9, %db, 0;\n" +
     mma("%db", 1), [(0, 2)]),
])
def test_a_run_ends_where_moving_an_instruction_first_could_change_it(body, runs):
    prog = get_program(get_module(wgmma_kernel(body.replace("{acc}", "{acc}"), 4)), "k")
    first = next(c.pc for c in prog.code if c.ins.opcode == "wgmma.mma_async")
    got = [(d.pc - first, d.wrun.span) for d in prog.code if d.wrun is not None]
    assert got == runs


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("sanitize", [True, False])
@pytest.mark.parametrize("sd0", [0, 1])
def test_a_run_gives_the_registers_of_one_by_one(monkeypatch, sanitize, sd0, t):
    img, P1, P2, _ = image(50, t)
    rng = np.random.default_rng(51)
    C = rand(rng, (128, 4), "f16").astype(np.float32).view(np.uint32).reshape(-1)
    ptx = wgmma_kernel(CHAIN.replace("SD0", str(sd0)).replace(".f16.f16", f".{t}.{t}"), 4, cin=True)
    fast, delivered = [], []
    (fused, single), chains = both(monkeypatch, lambda: run(ptx, img, cin=C, sanitize=sanitize), fast, delivered)
    assert chains == [[3], []] and fast == [int(t == "bf16"), 0]     # bf16: its operands at once
    assert delivered == fast                    # ... and its wait_group 0 right after: delivered
    np.testing.assert_array_equal(fused, single)
    d = f32(P1 + (acc_matrix(C, 8) if sd0 else 0))          # each k-step rounded to f32
    d = f32(f32(d + P2) + P2)
    np.testing.assert_array_equal(acc_matrix(fused, 8), d)


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_run_after_another_group_in_flight_leaves_its_tile_to_the_wait(monkeypatch, sanitize):
    # the first mma_async's group is committed, not waited: the run chains on its pending tile
    # and makes its own pending; the wait_group retires both
    img, P1, P2, _ = image(58, "bf16")
    body = mma("%db", 0, "bf16") + COMMIT + CHAIN.replace("SD0", "1").replace(".f16.f16", ".bf16.bf16")
    fast, delivered = [], []
    (fused, single), chains = both(monkeypatch, lambda: run(wgmma_kernel(body, 4), img, sanitize=sanitize),
                                   fast, delivered)
    assert chains == [[3], []] and fast == [1, 0] and delivered == [0, 0]
    np.testing.assert_array_equal(fused, single)
    np.testing.assert_array_equal(acc_matrix(fused, 8), f32(f32(f32(f32(P1) + P1) + P2) + P2))


def test_a_register_a_delivered_run_read_may_be_written_after_its_wait(monkeypatch):
    # the run's A registers stop being read in flight at the wait that follows it: writing one
    # after it is no hazard (nor is it one by one), and the run delivered its tile itself
    img, P1, P2, A = image(59, "bf16")
    body = A_REGS.replace("AREGS", "%e0, %e1, %e2, %e3") + "  mov.b32 %a0, 0;\n  mov.b32 %e0, %a0;\n"
    ptx = wgmma_kernel(body, 4, aregs=True, extra_regs="\n  .reg .b32 %e<4>;")
    delivered = []
    (fused, single), chains = both(monkeypatch, lambda: run(ptx, img, areg=a_regs(A, "bf16"), sanitize="strict"),
                                   None, delivered)
    assert chains == [[2], []] and delivered == [1, 0]
    np.testing.assert_array_equal(fused, single)
    np.testing.assert_array_equal(acc_matrix(fused, 8), f32(f32(P1) + P2))


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_scale_d_set_for_one_warpgroup_only(monkeypatch, t):
    # warpgroup 0 adds the second product to the first; warpgroup 1 starts over with it (bf16:
    # the predicate read at once, per warpgroup)
    img, P1, P2, _ = image(52, t)
    body = ("  setp.eq.u32 %p2, %r5, 0;\n" + mma("%db", 0, t) + f"  add.u64 %rd9, %db, {B2};\n"
            "  add.u64 %rd4, %rd9, 0;\n" + mma("%rd4", "%p2", t) + COMMIT + WAIT)
    ptx = two_warpgroups(body)
    fast = []
    (fused, single), chains = both(monkeypatch, lambda: run(ptx, img, block=256), fast)
    assert chains == [[2], []] and fast == [int(t == "bf16"), 0]
    np.testing.assert_array_equal(fused, single)
    np.testing.assert_array_equal(acc_matrix(fused[:512], 8), f32(f32(P1) + P2))
    np.testing.assert_array_equal(acc_matrix(fused[512:], 8), f32(P2))


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_an_error_in_a_later_mma_is_the_one_by_one_error(monkeypatch, t):
    # the third mma's B descriptor differs between the threads of the warpgroup (bf16: the
    # run reads its descriptors at once, finds it and leaves the run to one by one)
    img, _, _, _ = image(53, t)
    body = CHAIN.replace("SD0", "0").replace("  add.u64 %rd4, %rd9, 0;\n",
                                             "  cvt.u64.u32 %rd4, %r1;\n  add.u64 %rd4, %db, %rd4;\n")
    fast = []
    (fused, single), chains = both(monkeypatch, lambda: run(wgmma_kernel(body.replace(".f16.f16", f".{t}.{t}"), 4),
                                                            img), fast)
    assert chains == [[3], []] and fast == [0, 0]
    assert fused == single
    assert fused[0] is InterpreterError and "b-desc differs between threads of a warpgroup (thread 1" in fused[1]


def test_a_scale_d_that_differs_in_a_warpgroup_is_the_one_by_one_error(monkeypatch):
    img, _, _, _ = image(57, "bf16")
    body = ("  setp.lt.u32 %p2, %r1, 64;\n" + mma("%db", 0, "bf16") + f"  add.u64 %rd9, %db, {B2};\n"
            "  add.u64 %rd4, %rd9, 0;\n" + mma("%rd4", "%p2", "bf16") + COMMIT + WAIT)
    fast = []
    (fused, single), chains = both(monkeypatch, lambda: run(wgmma_kernel(body, 4), img), fast)
    assert chains == [[2], []] and fast == [0, 0]
    assert fused == single
    assert fused[0] is InterpreterError and "scale-d differs between threads of a warpgroup (thread 64 has 0x0, thread 0 has 0x1)" in fused[1]


def test_a_missing_fence_warns_once_per_mma_as_one_by_one(monkeypatch):
    img, _, _, _ = image(54)
    ptx = wgmma_kernel(CHAIN.replace("SD0", "0"), 4).replace("  wgmma.fence.sync.aligned;\n", "")

    def warned():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            run(ptx, img)
        return [(type(x.message), str(x.message)) for x in w if issubclass(x.category, SanitizerWarning)]
    (fused, single), chains = both(monkeypatch, warned)
    assert chains == [[3], []]
    assert fused == single and len(fused) == 3
    assert all("no wgmma.fence before this warpgroup's first wgmma.mma_async" in m for _, m in fused)


# A from registers: %a0..%a3 for the first k-step, copies of them in %e0..%e3 for the second
A_REGS = ("  mov.b32 %e0, %a0;\n  mov.b32 %e1, %a1;\n  mov.b32 %e2, %a2;\n  mov.b32 %e3, %a3;\n"
          "  wgmma.fence.sync.aligned;\n" +
          mma("%db", 0, "bf16", "{%a0, %a1, %a2, %a3}") + f"  add.u64 %rd9, %db, {B2};\n  add.u64 %rd4, %rd9, 0;\n" +
          mma("%rd4", 1, "bf16", "{AREGS}") + COMMIT + WAIT)


def test_an_a_register_written_after_the_fence_warns_in_a_run_read_at_once(monkeypatch):
    # %e0..%e3 copied after the fence: the second k-step reads A-fragment registers no fence
    # ordered; the run still reads its operands at once, and warns as one by one
    img, _, _, A = image(56, "bf16")
    body = A_REGS.replace("AREGS", "%e0, %e1, %e2, %e3")
    copies = "  mov.b32 %e0, %a0;\n  mov.b32 %e1, %a1;\n  mov.b32 %e2, %a2;\n  mov.b32 %e3, %a3;\n"
    body = body.replace(copies + "  wgmma.fence.sync.aligned;\n", "  wgmma.fence.sync.aligned;\n" + copies)
    ptx = wgmma_kernel(body, 4, aregs=True, extra_regs="\n  .reg .b32 %e<4>;")

    def warned():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            run(ptx, img, areg=a_regs(A, "bf16"))
        return [str(x.message) for x in w if issubclass(x.category, SanitizerWarning)]
    fast = []
    (fused, single), chains = both(monkeypatch, warned, fast)
    assert chains == [[2], []] and fast == [1, 0]
    assert fused == single and len(fused) == 1
    assert "reads A-fragment register %e0, which `mov.b32 %e0, %a0;`" in fused[0]


@pytest.mark.parametrize("second, at_once", [("%e0, %e1, %e2, %e3", 1), ("%a0, %a1, %a2, %a3", 0)])
def test_a_from_registers(monkeypatch, second, at_once):
    # read at once unless an operation reads the registers an earlier one of the run reads
    img, P1, P2, A = image(55, "bf16")
    ptx = wgmma_kernel(A_REGS.replace("AREGS", second), 4, aregs=True, extra_regs="\n  .reg .b32 %e<4>;")
    fast = []
    (fused, single), chains = both(monkeypatch, lambda: run(ptx, img, areg=a_regs(A, "bf16")), fast)
    assert chains == [[2], []] and fast == [at_once, 0]
    np.testing.assert_array_equal(fused, single)
    np.testing.assert_array_equal(acc_matrix(fused, 8), f32(f32(P1) + P2))


def test_unwritten_shared_memory_is_reported_as_one_by_one(monkeypatch):
    # only the first 12 KiB are copied in: the second k-step's B is never written
    img, _, _, _ = image(56, "bf16")
    ptx = wgmma_kernel(CHAIN.replace("SD0", "0").replace(".f16.f16", ".bf16.bf16"), 4)
    short = ptx.replace("setp.ge.u32 %p0, %r2, 1024;", "setp.ge.u32 %p0, %r2, 768;")
    assert short != ptx
    fast = []
    (fused, single), chains = both(monkeypatch, lambda: run(short, img), fast)
    assert chains == [[3], []] and fast == [0, 0]
    assert fused == single and fused[0] is UninitializedReadError


def test_a_run_too_large_for_the_caches_reads_its_operands_one_step_at_a_time(monkeypatch):
    img, P1, P2, _ = image(57, "bf16")
    ptx = wgmma_kernel(CHAIN.replace("SD0", "0").replace(".f16.f16", ".bf16.bf16"), 4)
    monkeypatch.setattr(wgmma_chain, "AT_ONCE_BYTES", 3 * (64 * 16 + 16 * 8) * 8 - 1)    # (3 k-steps of A and B)
    fast = []
    (fused, single), chains = both(monkeypatch, lambda: run(ptx, img), fast)
    assert chains == [[3], []] and fast == [0, 0]
    np.testing.assert_array_equal(fused, single)
    np.testing.assert_array_equal(acc_matrix(fused, 8), f32(f32(f32(P1) + P2) + P2))


@pytest.mark.parametrize("sd0", [0, 1])
def test_a_run_read_one_step_at_a_time_multiplies_natively(monkeypatch, sd0):
    # f16 operands (read a k-step at a time): each step's product and rounding in the native
    # core, from C in the registers (scale-d) or none, the bits of NumPy's one by one
    from jax_pyptx.interpret.state.arith import ARITH
    if ARITH is None:
        pytest.skip("jax_pyptx.interpret.state._arith not built")
    img, P1, P2, _ = image(58, "f16")
    C = rand(np.random.default_rng(59), (128, 4), "f16").astype(np.float32).view(np.uint32).reshape(-1)
    ptx = wgmma_kernel(CHAIN.replace("SD0", str(sd0)), 4, cin=True)
    steps = []

    class Spy:
        def __getattr__(self, name):
            return getattr(ARITH, name)

        def mma_chain_f32(self, a, *x):
            steps.append(len(a))
            return ARITH.mma_chain_f32(a, *x)
    monkeypatch.setattr(wgmma_chain, "ARITH", Spy())
    got = run(ptx, img, cin=C)
    assert steps == [1, 1, 1]
    monkeypatch.setattr(Context, "fuse", False)             # one by one: NumPy's products
    np.testing.assert_array_equal(got, run(ptx, img, cin=C))
    assert steps == [1, 1, 1]
    d = f32(f32(f32(P1 + (acc_matrix(C, 8) if sd0 else 0)) + P2) + P2)
    np.testing.assert_array_equal(acc_matrix(got, 8), d)


# a run (scale-d 0 first: it reads no C) whose accumulator only the segment after its wait reads
HAND = (CHAIN.replace("SD0", "0").replace(".f16.f16", ".bf16.bf16") +
        "".join(f"  add.f32 %g{i}, %c{i}, 0f3F800000;\n" for i in range(4)))


def handed(body, keep_c0=False):
    """``wgmma_kernel`` of ``body`` storing %g0..%g3 (the segment's results) instead of the
    accumulator, or %c0 in the first one's place (another instruction naming it)."""
    ptx = wgmma_kernel(body, 4, extra_regs="\n  .reg .f32 %g<4>;")
    for i in range(4):
        if not (keep_c0 and i == 0):
            ptx = ptx.replace(f"[%rd5+{4 * i}], %c{i};", f"[%rd5+{4 * i}], %g{i};")
    return ptx


def tiled_answers(monkeypatch):
    """The answers of ``segments.run_tiled`` (the hand-overs tried), as they come."""
    from jax_pyptx.interpret.scheduler import segments
    got, real = [], segments.run_tiled

    def counted(*a):
        got.append(real(*a))
        return got[-1]
    monkeypatch.setattr(segments, "run_tiled", counted)
    return got


@pytest.mark.parametrize("sanitize", [True, False])
def test_a_run_hands_its_tile_to_the_segment_that_alone_reads_it(monkeypatch, sanitize):
    # the segment reads the accumulator from the tile: the registers are never written (no
    # delivery, nor any wait_group retiring), and it gives what one by one gives
    img, P1, P2, _ = image(60, "bf16")
    ptx = handed(HAND)
    (d,) = [d for d in get_program(get_module(ptx), "k").code if d.wrun is not None]
    seg, ti, rest = d.wrun.hand
    ins = seg.blocks[0].inputs      # (the accumulator's registers the block reads: from the tile)
    assert [(int(j), ins[i].split("::")[-1]) for i, j in zip(ti.at, ti.j)] == \
        [(0, "%c0"), (1, "%c1"), (2, "%c2"), (3, "%c3")]
    assert sorted(ti.other + tuple(ti.at.tolist())) == list(range(len(ins)))
    assert {ins[i] for i in ti.other} == rest.intersection(ins)
    assert ti.take({k: k for k in ins}) == tuple(ins[i] for i in ti.other)
    assert seg.pc == d.pc + d.wrun.span and not any("%c" in k for k in rest)
    tiled, delivered = tiled_answers(monkeypatch), []
    (fused, single), chains = both(monkeypatch, lambda: run(ptx, img, sanitize=sanitize), None, delivered)
    assert chains == [[3], []] and tiled == [True] and delivered == [0, 0]
    np.testing.assert_array_equal(fused, single)
    np.testing.assert_array_equal(acc_matrix(fused, 8), f32(f32(f32(f32(P1) + P2) + P2) + 1))


def test_a_tile_the_segment_cannot_take_is_delivered_first(monkeypatch):
    # the segment stands back (here: told to): the run delivers its tile as the wait would
    # have, and the segment runs as usual on the registers
    from jax_pyptx.interpret.scheduler import segments
    monkeypatch.setattr(segments, "run_tiled", lambda *a: False)
    img, P1, P2, _ = image(61, "bf16")
    delivered = []
    (fused, single), chains = both(monkeypatch, lambda: run(handed(HAND), img, sanitize=True), None, delivered)
    assert chains == [[3], []] and delivered == [1, 0]
    np.testing.assert_array_equal(fused, single)
    np.testing.assert_array_equal(acc_matrix(fused, 8), f32(f32(f32(f32(P1) + P2) + P2) + 1))


@pytest.mark.parametrize("body, keep_c0", [
    (HAND, True),                                                   # a store names %c0 too
    (HAND.replace("%db, 0, 1, 1", "%db, 1, 1, 1"), False),          # the first mma reads C
    (HAND.replace(WAIT, WAIT + "  bar.sync 0;\n"), False),          # not right after the wait
    ("  setp.eq.u32 %p3, %r1, 999;\n  @%p3 bra SKIP;\n" + HAND.replace(WAIT, WAIT + "SKIP:\n"), False),
])                                                                  # ... a branch's target
def test_no_hand_over_where_another_instruction_may_read_the_registers(monkeypatch, body, keep_c0):
    img, P1, P2, _ = image(62, "bf16")
    ptx = handed(body, keep_c0)
    (d,) = [d for d in get_program(get_module(ptx), "k").code if d.wrun is not None]
    assert d.wrun.hand is None
    tiled = tiled_answers(monkeypatch)
    (fused, single), _ = both(monkeypatch, lambda: run(ptx, img, sanitize=True))
    assert tiled == []
    np.testing.assert_array_equal(fused, single)


def test_a_hand_over_the_loops_next_yield_would_split_is_delivered(monkeypatch):
    # the loop yields every YIELD_AFTER instructions: where the run fits before the next yield
    # but the run and its segment do not, the tile is delivered and the segment runs after
    # the yield as usual; every setting gives the same registers
    img, P1, P2, _ = image(63, "bf16")
    ptx = handed(HAND)
    want = f32(f32(f32(f32(P1) + P2) + P2) + 1)
    outcomes = set()
    for every in range(8, 48):
        monkeypatch.setattr(Context, "YIELD_AFTER", every)
        tiled, delivered = tiled_answers(monkeypatch), []
        (fused, single), chains = both(monkeypatch, lambda: run(ptx, img, sanitize=True), None, delivered)
        np.testing.assert_array_equal(fused, single)
        np.testing.assert_array_equal(acc_matrix(fused, 8), want)
        outcomes.add((len(chains[0]), tuple(tiled), delivered[0]))
    # run at once and handed over; run at once and delivered (no room); one by one
    assert {(1, (True,), 0), (1, (), 1), (0, (), 0)} <= outcomes
