"""Smaller Hopper instructions in the interpreter: elect.sync (leader = lowest active lane of
the membermask), setmaxnreg (warpgroup agreement, per-CTA register pool, budget deadlocks),
stmatrix in every shape / count / .trans (fragments from isa.fragments), griddepcontrol."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from jax_pyptx import parse
from jax_pyptx.errors import DeadlockError, DivergenceError, InterpreterError, PtxValueError
from jax_pyptx.interpret import launch
from jax_pyptx.isa.fragments import stmatrix_fragment
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def entry(body, params=".param .u64 y", decls="", directives="", target="sm_90a"):
    return HDR.replace("sm_90a", target) + f""".visible .entry k({params}){directives}
{{
    .reg .u32 %r<40>; .reg .u64 %rd<8>; .reg .pred %p<6>;
    {decls}
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %laneid;
{body}
    ret;
}}"""


def store_words(regs):
    return """
    mov.u32 %r38, %ctaid.x; mov.u32 %r39, %ntid.x;
    mad.lo.u32 %r38, %r38, %r39, %r1;
    ld.param.u64 %rd6, [y];
""" + f"    mul.wide.u32 %rd7, %r38, {4 * len(regs)};\n    add.u64 %rd6, %rd6, %rd7;\n" + \
        "".join(f"    st.global.u32 [%rd6+{4 * i}], {r};\n" for i, r in enumerate(regs))


# ----------------------------------------------------------------------------- elect.sync
ELECT = """
    mov.u32 %r3, 99;
    setp.ge.u32 %p1, %r2, SKIP;               // lanes below SKIP are elsewhere (exited / other path)
    @!%p1 bra OUT;
    elect.sync %r3|%p2, MASK;
    selp.u32 %r4, 1, 0, %p2;
OUT:
"""


@pytest.mark.parametrize("mask,skip,leader", [
    (0xFFFFFFFF, 0, 0), (0xFFFFFFF0, 4, 4), (0xFFFF0000, 16, 16), (0xFFFFFF00, 8, 8), (0xAAAAAAA8, 3, 3)])
def test_elect_leader_is_the_lowest_active_lane_of_the_mask(mask, skip, leader):
    """Lanes below ``skip`` go around the elect; the mask names the lanes that execute it (the
    last case: mask bits 3, 5, 7, ... with lanes 3.. active: the lowest set bit, 3)."""
    body = ELECT.replace("MASK", hex(mask)).replace("SKIP", str(skip))
    if mask == 0xAAAAAAA8:
        # only the lanes of the mask execute it (odd lanes >= 3)
        body = body.replace("setp.ge.u32 %p1, %r2, 3;", "and.b32 %r5, %r2, 1;\n    setp.ge.u32 %p1, %r2, 3;\n"
                            "    setp.eq.and.u32 %p1, %r5, 1, %p1;")
    prog = entry("    mov.u32 %r4, 7;\n" + body + store_words(["%r3", "%r4"]))
    y = np.zeros((32, 2), np.uint32)
    launch(prog, "k", [y], block=32)
    in_mask = [bool(mask >> i & 1) and i >= skip and (mask != 0xAAAAAAA8 or i % 2) for i in range(32)]
    assert y[:, 0].tolist() == [leader if m else 99 for m in in_mask]
    assert y[:, 1].tolist() == [int(i == leader) if m else 7 for i, m in enumerate(in_mask)]
    ptxas_check(prog, "sm_90a")


def test_elect_after_lanes_exited_and_with_a_sink():
    prog = entry("""
    setp.lt.u32 %p1, %r2, 5;
    @%p1 exit;                                // lanes 0-4 exit: 5 is the lowest non-exited lane
    elect.sync _|%p2, 0xffffffff;
    selp.u32 %r4, 1, 0, %p2;
""" + store_words(["%r4"]))
    y = np.full(64, 9, np.uint32)
    launch(prog, "k", [y], block=64)
    assert y.tolist() == [9] * 5 + [1] + [0] * 26 + [9] * 5 + [1] + [0] * 26


def test_elect_membermask_must_hold_the_executing_thread():
    prog = entry(ELECT.replace("MASK", "0x0000ffff").replace("SKIP", "0") + store_words(["%r3"]))
    with pytest.raises(DivergenceError, match=r"thread is not in the instruction's membermask 0x0000ffff: "
                                              r"elect.sync %r3\|%p2, 0x0000ffff; by thread \(16,0,0\)"):
        launch(prog, "k", [np.zeros(32, np.uint32)], block=32)


# ----------------------------------------------------------------------------- setmaxnreg
# 3 warpgroups: warpgroup 0 produces (dec), 1 and 2 consume (inc), as warp-specialized kernels do
SPECIALIZED = """
    mov.u32 %r4, 0;
    shr.u32 %r3, %r1, 7;                      // warpgroup
    setp.eq.u32 %p1, %r3, 0;
    @%p1 bra PRODUCER;
    CONSUMER_WAIT
    setmaxnreg.inc.sync.aligned.u32 INC;
    mov.u32 %r4, INC;
    bra.uni DONE;
PRODUCER:
    setmaxnreg.dec.sync.aligned.u32 DEC;
    mov.u32 %r4, DEC;
DONE:
"""


def test_setmaxnreg_producer_releases_and_consumers_grow():
    """384 threads with .maxntid 384: 168 registers each at launch (65536 / 384, in 8s); the
    producer warpgroup releases 128 x 128, the consumers take exactly that to reach 232."""
    prog = entry(SPECIALIZED.replace("CONSUMER_WAIT", "").replace("INC", "232").replace("DEC", "40")
                 + store_words(["%r4"]), directives=" .maxntid 384, 1, 1")
    y = np.zeros(384, np.uint32)
    launch(prog, "k", [y], block=384)
    assert y.tolist() == [40] * 128 + [232] * 256
    ptxas_check(prog, "sm_90a")
    # the consumers reach setmaxnreg.inc before the producer released anything: they wait
    slow = SPECIALIZED.replace("@%p1 bra PRODUCER;", "@!%p1 bra CONSUMER;\n    bra.uni PRODUCER;\nCONSUMER:")
    prog = entry(slow.replace("CONSUMER_WAIT", "").replace("INC", "232").replace("DEC", "40")
                 + store_words(["%r4"]), directives=" .maxntid 384, 1, 1")
    launch(prog, "k", [y], block=384)
    assert y.tolist() == [40] * 128 + [232] * 256


def test_setmaxnreg_over_budget_is_a_deadlock_naming_the_pool():
    prog = entry(SPECIALIZED.replace("CONSUMER_WAIT", "").replace("INC", "240").replace("DEC", "40")
                 + store_words(["%r4"]), directives=" .maxntid 384, 1, 1")
    with pytest.raises(DeadlockError) as ei:
        launch(prog, "k", [np.zeros(384, np.uint32)], block=384)
    msg = str(ei.value)
    assert msg.startswith("deadlock: every warp is parked and none can make progress")
    # seven consumer warps got their 72 x 32 registers from the 16384 the producer released;
    # the eighth waits for 2304 with 256 left
    assert ("  CTA (0,0,0) warp 11 lanes 0-31: at <ptx>:16 (instruction #6 of k) `setmaxnreg.inc.sync.aligned.u32 "
            "240;` waits for 2304 registers from its CTA's pool to grow to 240 per thread (256 free; per-thread "
            "counts warp 0: 40, warp 1: 40, warp 2: 40, warp 3: 40, warp 4: 240, warp 5: 240, warp 6: 240, warp 7: "
            "240, warp 8: 240, warp 9: 240, warp 10: 240, warp 11: 168; ") in msg
    assert "168 x 384 threads were allocated at launch of the 65536-register file): no warp releases enough" in msg


def test_setmaxnreg_rules():
    base = SPECIALIZED.replace("CONSUMER_WAIT", "").replace("DEC", "40") + store_words(["%r4"])
    # .inc below the current count
    with pytest.raises(InterpreterError, match=r"setmaxnreg.inc to 160 but warp 4 of CTA \(0,0,0\) holds 168 registers "
                                               r"per thread \(.inc must not lower the count"):
        launch(entry(base.replace("INC", "160"), directives=" .maxntid 384, 1, 1"), "k",
               [np.zeros(384, np.uint32)], block=384)
    # warps of one warpgroup at their own setmaxnreg, each with its own count: the hardware
    # accounts registers per warp (Triton's 1-warp partitions), so it runs, and each warp holds
    # what it asked for
    split = base.replace("INC", "232").replace("    setmaxnreg.inc.sync.aligned.u32 232;\n    mov.u32 %r4, 232;",
                                               "    shr.u32 %r5, %r1, 5;\n    setp.eq.u32 %p2, %r5, 5;\n"
                                               "    @%p2 bra ODD;\n    setmaxnreg.inc.sync.aligned.u32 232;\n"
                                               "    mov.u32 %r4, 232;\n    bra.uni SAME;\nODD:\n"
                                               "    setmaxnreg.inc.sync.aligned.u32 200;\n    mov.u32 %r4, 200;\nSAME:")
    y = np.zeros(384, np.uint32)
    launch(entry(split, directives=" .maxntid 384, 1, 1"), "k", [y], block=384)
    assert y.tolist() == [40] * 128 + [232] * 32 + [200] * 32 + [232] * 192
    # a warp of the warpgroup skips it and exits: each warp's registers are its own
    skip = entry("""
    shr.u32 %r3, %r1, 5;
    setp.eq.u32 %p1, %r3, 3;
    @%p1 bra OUT;
    setmaxnreg.dec.sync.aligned.u32 96;
OUT:
""", directives=" .maxnreg 128")
    launch(skip, "k", [None], block=128)
    launch(skip.replace("@%p1 bra OUT;", ""), "k", [None], block=128)
    # what the hardware does not forgive stays an error: a count out of range, and .dec raising it
    with pytest.raises(PtxValueError, match=r"setmaxnreg.dec.sync.aligned.u32 operand 1: immediate 100 is out of "
                                            r"range; allowed: 24..256, a multiple of 8"):
        launch(skip.replace("96;", "100;"), "k", [None], block=128)       # parse refuses it, as ptxas
    with pytest.raises(InterpreterError, match=r"setmaxnreg count 100 is not allowed: 24..256 in steps of 8"):
        launch(parse(skip.replace("96;", "100;"), check=False), "k", [None], block=128, sanitize=False)
    with pytest.raises(InterpreterError, match=r"setmaxnreg.dec to 136 but warp 0 of CTA \(0,0,0\) holds 128 "
                                               r"registers per thread"):
        launch(skip.replace("96;", "136;"), "k", [None], block=128)
    launch(skip.replace("96;", "136;"), "k", [None], block=128, sanitize=False)   # no verdict when off
    # .aligned: every thread of the warp executes it
    half = base.replace("INC", "232").replace("    setmaxnreg.dec.sync.aligned.u32 40;",
                                              "    setp.lt.u32 %p4, %r2, 16;\n    @%p4 setmaxnreg.dec.sync.aligned.u32 40;")
    with pytest.raises(DivergenceError, match="lanes 16-31 are predicated off"):
        launch(entry(half, directives=" .maxntid 384, 1, 1"), "k", [np.zeros(384, np.uint32)], block=384)


def test_setmaxnreg_start_allocation_over_the_register_file():
    prog = entry("    setmaxnreg.dec.sync.aligned.u32 96;\n", directives=" .maxnreg 200")
    with pytest.raises(InterpreterError, match=r"the kernel starts every warp with 200 registers per thread: 12 warps "
                                               r"need 76800, more than the 65536 of the register file"):
        launch(prog, "k", [None], block=384)
    launch(prog, "k", [None], block=256)       # 8 warps x 32 x 200 = 51200 fit


def test_setmaxnreg_warps_of_a_warpgroup_run_their_own_sequence_and_maxnreg_sets_the_start():
    body = """
    shr.u32 %r3, %r1, 5;
    setmaxnreg.dec.sync.aligned.u32 96;
    SYNC
    setmaxnreg.inc.sync.aligned.u32 128;
    mov.u32 %r4, 128;
""" + store_words(["%r4"])
    y = np.zeros(128, np.uint32)
    launch(entry(body.replace("SYNC", "bar.sync 0;"), directives=" .maxnreg 128"), "k", [y], block=128)
    assert y.tolist() == [128] * 128
    # warp 0 executes an extra setmaxnreg that warps 1-3 skip, with no barrier between two of its
    # own (Triton's idle partition warp): the same count, so the hardware runs it
    ahead = body.replace("SYNC", "setp.ne.u32 %p1, %r3, 0;\n    @%p1 bra LATE;\n"
                                 "    setmaxnreg.inc.sync.aligned.u32 128;\nLATE:\n    bar.sync 0;")
    y[:] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        launch(entry(ahead, directives=" .maxnreg 128"), "k", [y], block=128, sanitize="strict")
    assert y.tolist() == [128] * 128
    # the pool is still accounted: warp 0 growing past what the others released waits forever
    greedy = body.replace("SYNC", "setp.ne.u32 %p1, %r3, 0;\n    @%p1 bra LATE;\n"
                                  "    setmaxnreg.inc.sync.aligned.u32 256;\nLATE:\n    bar.sync 0;")
    with pytest.raises(DeadlockError, match=r"waits for 5120 registers from its CTA's pool to grow to 256 per thread"):
        launch(entry(greedy, directives=" .maxnreg 128"), "k", [y], block=128)


# ----------------------------------------------------------------------------- stmatrix
def _stm_kernel(shape, num, trans, btype):
    """Every lane's registers hold distinct values; lane 8m + r gives the address of row r of
    matrix m; the shared buffer is copied out."""
    rows = 16 if shape == "m16n8" else 8
    rowbytes = 16
    regs = ", ".join(f"%r{10 + i}" for i in range(num))
    fill = "".join(f"    mad.lo.u32 %r{10 + i}, %r2, 0x01010101, {0x40302010 + i * 0x04040404};\n"
                   if btype == "b8" else f"    mad.lo.u32 %r{10 + i}, %r2, 0x00020002, {0x00010000 + i * 0x100};\n"
                   for i in range(num))
    nrow = num * 8
    return entry(f"""
    mov.u32 %r3, buf;
    setp.lt.u32 %p1, %r2, {nrow};
    @!%p1 bra NOADDR;
    mul.lo.u32 %r4, %r2, {rowbytes};          // row address r of matrix m: buf + (8m + r) * 16
    add.u32 %r3, %r3, %r4;
NOADDR:
{fill}    stmatrix.sync.aligned.{shape}.x{num}{'.trans' if trans else ''}.shared.{btype} [%r3], {{{regs}}};
    bar.warp.sync -1;
    mov.u32 %r5, buf;
    shl.b32 %r6, %r2, 4;
    add.u32 %r5, %r5, %r6;
    setp.lt.u32 %p2, %r2, {nrow};
    mov.u32 %r20, 0; mov.u32 %r21, 0; mov.u32 %r22, 0; mov.u32 %r23, 0;
    @%p2 ld.shared.v4.u32 {{%r20, %r21, %r22, %r23}}, [%r5];
""" + store_words(["%r20", "%r21", "%r22", "%r23"]), decls=".shared .align 16 .b8 buf[512];",
                 target="sm_100a" if btype == "b8" else "sm_90a"), rows


def _stm_reference(shape, num, trans, btype):
    """Expected bytes of the 32 row addresses (16 bytes each) from the fragment table."""
    out = np.zeros((32, 16), np.uint8)
    frag = stmatrix_fragment(shape)
    for m in range(num):
        if shape == "m16n8":
            mat = np.zeros((16, 8), np.uint8)
            for lane in range(32):
                v = (lane * 0x01010101 + 0x40302010 + m * 0x04040404) & 0xFFFFFFFF
                for e, (r, c) in enumerate(frag[lane]):
                    mat[r, c] = (v >> (8 * e)) & 0xFF
            for c in range(8):                          # .trans: address c holds column c
                out[8 * m + c] = mat[:, c]
        else:
            mat = np.zeros((8, 8), np.uint16)
            for lane in range(32):
                v = (lane * 0x00020002 + 0x00010000 + m * 0x100) & 0xFFFFFFFF
                (r0, c0), (r1, c1) = frag[lane]
                mat[r0, c0], mat[r1, c1] = v & 0xFFFF, v >> 16
            if trans:
                mat = np.ascontiguousarray(mat.T)
            for r in range(8):
                out[8 * m + r] = mat[r].view(np.uint8)
    return out


@pytest.mark.parametrize("shape,trans,btype", [("m8n8", False, "b16"), ("m8n8", True, "b16"),
                                               ("m16n8", True, "b8")])
@pytest.mark.parametrize("num", [1, 2, 4])
def test_stmatrix_every_shape_count_and_transpose(shape, trans, btype, num):
    prog, _ = _stm_kernel(shape, num, trans, btype)
    y = np.zeros((32, 4), np.uint32)
    launch(prog, "k", [y], block=32)
    want = _stm_reference(shape, num, trans, btype)
    got = y.view(np.uint8).reshape(32, 16)
    assert got[:8 * num].tolist() == want[:8 * num].tolist()
    ptxas_check(prog, "sm_100a" if btype == "b8" else "sm_90a")


def test_stmatrix_m16n8_fragment_by_hand():
    """The 16x8 .b8 layout spelled out: lane 5 (groupID 1, threadID_in_group 1) holds rows 1
    and 9, columns 2 and 3; lane 31 rows 7 and 15, columns 6 and 7."""
    f = stmatrix_fragment("m16n8")
    assert f[5] == ((1, 2), (1, 3), (9, 2), (9, 3))
    assert f[31] == ((7, 6), (7, 7), (15, 6), (15, 7))
    assert sorted(rc for lane in f for rc in lane) == [(r, c) for r in range(16) for c in range(8)]


# ----------------------------------------------------------------------------- griddepcontrol
def test_griddepcontrol_is_a_no_op_in_a_single_launch():
    prog = entry("""
    griddepcontrol.wait;                      // no prerequisite grid: returns at once
    add.u32 %r3, %r1, 1;
    griddepcontrol.launch_dependents;         // no dependent grid
""" + store_words(["%r3"]))
    y = np.zeros(64, np.uint32)
    launch(prog, "k", [y], block=64)
    assert y.tolist() == list(range(1, 65))
    ptxas_check(prog, "sm_90a")
