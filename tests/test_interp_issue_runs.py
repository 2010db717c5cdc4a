"""Runs of issuing instructions (``scheduler.issue_runs``): a producer's mbarrier arrivals and
bulk copies with the register arithmetic between them hoisted as one segment, planned only
where the order cannot show, and giving the memory, values and reports of running every
instruction one by one (``Context.fuse = False``)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import OutOfBoundsError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.launch import get_module, get_program
from jax_pyptx.interpret.scheduler import issue_runs
from jax_pyptx.interpret.scheduler.context import Context
from jax_pyptx.toolchain import ptxas_check

from .test_interp_segments import answers

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"

# Thread 0 of each CTA initializes two mbarriers and fences (three issuers in a row), then
# issues two 512-byte bulk copies of its CTA's 1 KiB of x into ``buf``, each after an
# expect_tx on its own mbarrier, the addresses worked out between them (PRODUCER); every
# thread waits on both and writes word %tid.x and %tid.x + 128 of ``buf`` to y.
KERNEL = HDR + """
.visible .entry k(.param .u64 x, .param .u64 y)
{
  .reg .u32 %r<16>; .reg .u64 %rd<12>; .reg .pred %p<4>; .reg .b64 %st<4>;
  .shared .align 128 .b8 buf[1024];
  .shared .align 8 .b64 bar[2];
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, buf;
  mov.u32 %r4, bar;
  setp.eq.u32 %p1, %r1, 0;
  @!%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [bar], 1;
  mbarrier.init.shared::cta.b64 [bar+8], 1;
  fence.proxy.async.shared::cta;
SYNC:
  bar.sync 0;
  @!%p1 bra WAIT;
  mul.wide.u32 %rd4, %r2, 1024;
  add.u64 %rd5, %rd1, %rd4;
PRODUCER
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], 0;
  @!%p2 bra WAIT;
  add.u32 %r9, %r4, 8;
WAIT2:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r9], 0;
  @!%p3 bra WAIT2;
  shl.b32 %r10, %r1, 2;
  add.u32 %r11, %r3, %r10;
  ld.shared.u32 %r12, [%r11];
  ld.shared.u32 %r13, [%r11+512];
  mad.lo.u32 %r14, %r2, 128, %r1;
  mul.wide.u32 %rd8, %r14, 8;
  add.u64 %rd9, %rd2, %rd8;
  st.global.v2.u32 [%rd9], {%r12, %r13};
  ret;
}
"""

PRODUCER = """
  add.u64 %rd6, %rd5, 512;
  mbarrier.arrive.expect_tx.shared::cta.b64 %st1, [%r4], 512;
  add.u32 %r5, %r3, 512;
  add.u32 %r7, %r4, 8;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd5], 512, [%r4];
  add.u32 %r6, %r7, 0;
  mbarrier.arrive.expect_tx.shared::cta.b64 %st2, [%r6], 512;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd6], 512, [%r6];
"""


X = (np.arange(512, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)     # 2 CTAs' 1 KiB


def _text(producer=PRODUCER):
    return KERNEL.replace("PRODUCER", producer)


def _runs(text):
    """(pc, span, issuers' opcodes, pure instructions hoisted) of each planned run."""
    prog = get_program(get_module(text), "k")
    return [(d.pc, d.irun.span, [prog.code[q].ins.opcode for q in d.irun.issues],
             0 if d.irun.seg is None else len(d.irun.seg.plan[0]))
            for d in prog.code if d.irun is not None]


def _both(monkeypatch, text, x=None, **kw):
    """y (or the error's type and message) with runs on, then one by one."""
    x = X if x is None else x
    out = []
    for fuse in (True, False):
        monkeypatch.setattr(Context, "fuse", fuse)
        y = np.zeros((256, 2), np.uint32)
        try:
            launch(text, "k", [x.astype(np.uint32), y], grid=2, block=128, **kw)
            out.append(y)
        except Exception as e:          # (compared by the callers)
            out.append((type(e), str(e)))
    return out


def test_the_runs_are_planned_from_the_first_issuer_to_the_last():
    text = _text()
    ptxas_check(text, "sm_90a")
    code = get_program(get_module(text), "k").code
    init = next(d.pc for d in code if d.ins.opcode == "mbarrier.init")
    arrive = next(d.pc for d in code if d.ins.opcode == "mbarrier.arrive")
    assert _runs(text) == [
        (0, 7, ["ld", "ld"], 5),                # the two ld.param and the 5 instructions after
        (init, 3, ["mbarrier.init", "mbarrier.init", "fence.proxy"], 0),      # three in a row
        (arrive, 7, ["mbarrier.arrive", "cp.async.bulk", "mbarrier.arrive", "cp.async.bulk"], 3),
    ]


@pytest.mark.parametrize("producer, runs", [
    # an addition overwriting the first copy's shared destination after the copy read it: the
    # run ends at the copy; the arithmetic after it begins the next run (before its issuers
    # anyway)
    (PRODUCER.replace("  add.u32 %r6, %r7, 0;\n", "  add.u32 %r6, %r7, 0;\n  add.u32 %r3, %r3, 0;\n"),
     [(4, ["mbarrier.arrive", "cp.async.bulk"], 2), (4, ["mbarrier.arrive", "cp.async.bulk"], 2)]),
    # an addition reading the first arrival's state token (a register the arrival writes): the
    # arrival and the addition before it alone save nothing; the run begins at the first copy
    (PRODUCER.replace("  add.u32 %r5, %r3, 512;\n", "  add.u32 %r5, %r3, 512;\n  mov.b64 %rd7, %st1;\n"),
     [(4, ["cp.async.bulk", "mbarrier.arrive", "cp.async.bulk"], 1)]),
])
def test_arithmetic_an_issuer_would_see_moved_ends_the_run(monkeypatch, producer, runs):
    text = _text(producer)
    ptxas_check(text, "sm_90a")
    assert [r[1:] for r in _runs(text)[2:]] == runs
    fused, single = _both(monkeypatch, text)
    np.testing.assert_array_equal(fused, WANT)
    np.testing.assert_array_equal(single, WANT)


def test_a_run_begins_no_earlier_than_a_branch_target(monkeypatch):
    # a label right before the arithmetic the arrival follows: the run may begin there, with
    # that one instruction, and not with the addition before the label
    text = _text("  setp.ne.u32 %p3, %r1, 0;\n  @%p3 bra L1;\n  add.u32 %r8, %r2, 1;\nL1:\n" + PRODUCER)
    ptxas_check(text, "sm_90a")
    code = get_program(get_module(text), "k").code
    label = next(d.pc for d in code if d.ins.opcode == "add" and d.ins.operands[0].name == "%rd6")
    assert _runs(text)[2] == (label, 8, ["mbarrier.arrive", "cp.async.bulk", "mbarrier.arrive", "cp.async.bulk"], 4)
    fused, single = _both(monkeypatch, text)
    np.testing.assert_array_equal(fused, WANT)
    np.testing.assert_array_equal(single, WANT)


def test_a_run_gives_the_values_of_one_by_one(monkeypatch):
    seen = answers(monkeypatch, issue_runs, "run")
    fused, single = _both(monkeypatch, _text())
    np.testing.assert_array_equal(fused, WANT)
    np.testing.assert_array_equal(single, WANT)
    assert seen == [3, 0]                   # the batch's three runs at once


def test_pointer_arithmetic_in_a_run_runs_it_one_by_one(monkeypatch):
    # a 64-bit address worked out inside the run carries its provenance (not a plain source)
    seen = answers(monkeypatch, issue_runs, "run")
    text = _text(PRODUCER.replace("  add.u64 %rd6, %rd5, 512;\n", "").replace(
        "  add.u32 %r5, %r3, 512;\n", "  add.u32 %r5, %r3, 512;\n  add.u64 %rd6, %rd5, 512;\n"))
    assert _runs(text)[2][3] == 6             # (the two before the arrival too)
    fused, single = _both(monkeypatch, text)
    np.testing.assert_array_equal(fused, WANT)
    np.testing.assert_array_equal(single, WANT)
    assert seen == [2, 1]                   # the loads and the inits at once; the copies' run stood back


def test_a_copy_out_of_bounds_is_reported_as_one_by_one(monkeypatch):
    # the second copy reads past x's end (its source 512 bytes on from the CTA's last byte)
    text = _text(PRODUCER.replace("add.u64 %rd6, %rd5, 512;", "add.u64 %rd6, %rd5, 1024;"))
    fused, single = _both(monkeypatch, text)
    assert fused == single and fused[0] is OutOfBoundsError
    assert "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r5], [%rd6], 512, [%r6];" in fused[1]


def test_a_run_whose_arithmetic_reads_an_undefined_register_runs_one_by_one(monkeypatch):
    seen = answers(monkeypatch, issue_runs, "run")
    text = _text(PRODUCER.replace("add.u32 %r5, %r3, 512;", "add.u32 %r5, %r15, 512;"))
    fused, single = _both(monkeypatch, text)
    assert fused == single and "from uninitialized register %r15" in fused[1]
    assert seen == [2, 1]                   # the loads and the inits at once; the copies' run stood back


WANT = np.stack([X.reshape(2, 256)[:, :128], X.reshape(2, 256)[:, 128:]], axis=-1).reshape(256, 2)
