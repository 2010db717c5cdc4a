"""The interpreter timeline (``launch(..., timeline=path)``): the Chrome / Perfetto trace JSON,
event by event on a small kernel (warp tracks, a bar.sync wait, metadata), TMA copies in flight
from their issuing instruction to their mbarrier's complete-tx, the Hopper GEMM of the library
with TMA loads of later k tiles in flight while wgmma of earlier ones are, the other async
kinds (cp.async, tcgen05.mma, bulk groups), the runtime paths, bad values and atomic writes."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from jax_pyptx.errors import DeadlockError, InterpreterError
from jax_pyptx.interpret import launch, tensor_map

HDR = ".version 8.0\n.target sm_90a\n.address_size 64\n"

# warp 1 works in a loop placed after the barrier, then comes back to it: warp 0 waits
BARRIER = HDR + """.visible .entry k(.param .u64 out)
{
    .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    setp.ge.u32 %p, %r1, 32;
    @%p bra WORK;
SYNC:
    bar.sync 0;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
WORK:
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p, %r2, 3;
    @%p bra WORK;
    bra SYNC;
}
"""


def _load(path):
    with open(path) as f:
        doc = json.load(f)
    for e in doc["traceEvents"]:
        assert {"name", "ph", "pid", "tid"} <= set(e), e
        if e["ph"] == "X":
            assert isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] > 0, e
            assert "cat" in e and "args" in e
        else:
            assert e["ph"] == "M" and "args" in e, e
    return doc


def _slices(doc, cat=None):
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and (cat is None or e["cat"] == cat)]


def test_small_kernel_event_by_event(tmp_path):
    path = tmp_path / "run.json"
    y = np.zeros(64, np.uint32)
    launch(BARRIER, "k", [y], block=64, timeline=path)
    assert list(y) == [0] * 32 + [3] * 32
    doc = _load(path)
    assert doc["displayTimeUnit"] == "ms"
    assert doc["otherData"]["clock"] == "1 unit = one warp instruction issued by the scheduler"
    assert doc["otherData"]["warp_instructions"] == 30
    meta = [(e["name"], e["pid"], e["tid"], e["args"]) for e in doc["traceEvents"] if e["ph"] == "M"]
    assert meta == [
        ("process_name", 0, 0, {"name": "CTA (0,0,0)"}), ("process_sort_index", 0, 0, {"sort_index": 0}),
        ("thread_name", 0, 0, {"name": "warp 0"}), ("thread_sort_index", 0, 0, {"sort_index": 0}),
        ("thread_name", 0, 1, {"name": "warp 1"}), ("thread_sort_index", 0, 1, {"sort_index": 1})]
    got = sorted((e["tid"], e["ts"], e["dur"], e["name"], e["cat"], e["args"]["instructions"],
                  e["args"]["ptx_line"], e["args"]["ptx"]) for e in _slices(doc))
    assert got == [
        # both warps run the first block together: 4 instructions x 2 warps = 8 units
        (0, 0, 8, "k", "instructions", 4, 7, "mov.u32 %r1, %tid.x;"),
        # warp 0 reaches the barrier at 8 and waits until warp 1 arrives (19) and the released
        # warp 1 has run its epilogue (20..25): it runs again at 25
        (0, 8, 17, "wait bar.sync", "wait", 1, 12, "bar.sync 0;"),
        (0, 25, 5, "SYNC+1", "instructions", 5, 13, "ld.param.u64 %rd1, [out];"),
        (1, 0, 8, "k", "instructions", 4, 7, "mov.u32 %r1, %tid.x;"),
        # three loop iterations of 3 instructions, then the branch back to the barrier
        (1, 9, 9, "WORK", "instructions", 9, 19, "add.u32 %r2, %r2, 1;"),
        (1, 18, 1, "WORK+3", "instructions", 1, 22, "bra SYNC;"),
        (1, 19, 1, "wait bar.sync", "wait", 1, 12, "bar.sync 0;"),
        (1, 20, 5, "SYNC+1", "instructions", 5, 13, "ld.param.u64 %rd1, [out];"),
    ]
    # a warp's slices never overlap
    for tid in (0, 1):
        s = sorted((e["ts"], e["ts"] + e["dur"]) for e in _slices(doc) if e["tid"] == tid)
        assert all(a[1] <= b[0] for a, b in zip(s, s[1:]))


TILE = HDR + """.visible .entry tile(.param .align 64 .b8 tm[128], .param .u64 out)
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
    mov.u32 %r6, 0;
DELAY:
    add.u32 %r6, %r6, 1;
    setp.lt.u32 %p2, %r6, 5;
    @%p2 bra DELAY;
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


def test_tma_copy_slice_runs_from_its_issue_to_its_mbarrier_completion(tmp_path):
    path = str(tmp_path / "tma.json")
    X = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.zeros(128, np.float32)
    launch(TILE, "tile", [tensor_map(X, box=(16, 8)), out], block=128, timeline=path)
    assert np.array_equal(out.reshape(8, 16), X[4:12, 8:24])
    doc = _load(path)
    (tma,) = _slices(doc, "TMA")
    # four warps run in step: 4 units per instruction. The block after the barrier starts
    # with expect_tx; the copy is its next instruction
    after = [e for e in _slices(doc) if e["tid"] == 0 and e["name"] == "tile+8"]
    assert len(after) == 1 and after[0]["args"]["ptx"].startswith("@%p1 mbarrier.arrive.expect_tx")
    assert tma["ts"] == after[0]["ts"] + 4
    # it completes at the try_wait that applies its complete-tx (the end of that instruction)
    waits = [e for e in _slices(doc, "wait") if e["tid"] == 0 and "try_wait" in e["name"]]
    assert len(waits) == 1 and waits[0]["args"]["ptx_line"] == 25
    assert tma["ts"] + tma["dur"] == waits[0]["ts"] + 4
    assert tma["name"] == "cp.async.bulk.tensor.2d"
    assert tma["args"] == {"issued": 1, "bytes": 512, "mbarrier": "0x200", "completion": 0,
                           "ptx_line": 18, "ptx": tma["args"]["ptx"]}
    assert tma["args"]["ptx"].startswith("@%p1 cp.async.bulk.tensor.2d.shared::cluster.global")
    names = {(e["tid"], e["args"]["name"]) for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert names == {(0, "warp 0"), (1, "warp 1"), (2, "warp 2"), (3, "warp 3"), (1000, "TMA #0")}


def _gemm(tmp_path, shape, **build):
    from examples import proof
    from examples.library import get

    e = get("hopper/gemm-bf16")
    k = e.kernel(**build)
    a, b = proof.make_inputs(e, k, shape)
    path = str(tmp_path / "gemm.json")
    c = k.interpret(a, b, timeline=path)
    np.testing.assert_allclose(c, e.reference(a, b), rtol=1e-2, atol=1e-2)
    return k, (a, b), _load(path)


def test_hopper_gemm_overlaps_tma_of_later_stages_with_wgmma_of_earlier_ones(tmp_path):
    """8 k tiles on a 4-stage ring, one CTA: the producer warp's TMA loads (one slice per
    stage fill: A and B tiles on the stage's full barrier) and the two consumer warpgroups'
    wgmma (one slice per commit group = k iteration, issue to the wait_group retiring it)."""
    _, _, doc = _gemm(tmp_path, {"M": 128, "N": 128, "K": 512}, cluster=1)
    tma = sorted(_slices(doc, "TMA"), key=lambda e: e["ts"])
    wg = _slices(doc, "wgmma")
    assert len(tma) == 8                       # k tile j: the j-th fill, in issue order
    assert {e["args"]["issued"] for e in tma} == {3}
    assert len({e["args"]["mbarrier"] for e in tma}) == 4            # the 4 stages' barriers
    assert sorted(e["args"]["group"] for e in wg) == sorted(list(range(8)) * 2)
    assert all(e["name"].startswith("wgmma.mma_async") for e in wg)
    overlaps = [(j, w["args"]["group"]) for j, t in enumerate(tma) for w in wg
                if t["ts"] < w["ts"] + w["dur"] and w["ts"] < t["ts"] + t["dur"]
                and j > w["args"]["group"]]
    assert overlaps, "no TMA load of a later k tile is in flight while a wgmma is"
    # the k tile j + 1 (or later) loads while the wgmma of k tile j computes
    assert any(j >= i + 1 for j, i in overlaps)
    # TMA slices sit on TMA tracks, wgmma slices on wgmma tracks of the CTA's process
    tracks = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert all(tracks[e["tid"]].startswith("TMA #") for e in tma)
    assert all(tracks[e["tid"]].startswith("wgmma #") for e in wg)
    # the waits of the ring: the consumers' full-barrier try_wait loops, the epilogue barrier
    kinds = {e["name"] for e in _slices(doc, "wait")}
    assert "wait mbarrier.try_wait.parity.shared::cta.b64" in kinds and "wait bar.sync" in kinds
    # no track has overlapping slices (a warp runs one thing at a time; an async operation
    # takes a free track of its kind)
    tracks = {}
    for e in _slices(doc):
        tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for s in tracks.values():
        s.sort()
        assert all(a[1] <= b[0] for a, b in zip(s, s[1:]))
    # DSL kernel: every slice names the user's source line and the PTX line
    for e in _slices(doc):
        assert e["args"]["src"].split(":")[0].endswith(("gemm.py", "sm90.py")), e
        assert isinstance(e["args"]["ptx_line"], int)


def test_cluster_gemm_has_a_process_per_cta_and_cluster_barrier_waits(tmp_path):
    _, _, doc = _gemm(tmp_path, {"M": 128, "N": 128, "K": 512})          # 2-CTA clusters
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert procs == {0: "CTA (0,0,0)", 1: "CTA (1,0,0)"}
    assert doc["otherData"]["cluster"] == [2, 1, 1]
    for pid in (0, 1):
        waits = {e["name"] for e in _slices(doc, "wait") if e["pid"] == pid}
        assert "wait barrier.cluster.wait.acquire" in waits
        assert len([e for e in _slices(doc, "TMA") if e["pid"] == pid]) == 8


def test_ptx_lines_of_a_dsl_kernel_point_at_its_ptx_text(tmp_path):
    k, (a, b), doc = _gemm(tmp_path, {"M": 64, "N": 64, "K": 64}, bm=64, bn=64)
    text = k.bind(a, b).trace().ptx.splitlines()          # the PTX the kernel compiles
    for e in _slices(doc):
        line = text[e["args"]["ptx_line"] - 1]
        assert " ".join(line.split()) == " ".join(e["args"]["ptx"].split()), e


def test_timeline_changes_nothing_but_writes_the_trace(tmp_path):
    """Traced and untraced runs schedule identically: same results, same instruction counts."""
    from examples import proof
    from examples.library import get

    e = get("hopper/gemm-bf16")
    k = e.kernel(cluster=1)
    a, b = proof.make_inputs(e, k, {"M": 128, "N": 128, "K": 256})
    from jax_pyptx.specialize.host import HostLaunch
    from jax_pyptx.specialize.options import CallOptions

    t = k.bind(a, b).trace()
    counts, outs = [], []
    for tl in (None, str(tmp_path / "t.json")):
        st = {}
        outs.append(HostLaunch(t)([a, b], options=CallOptions(timeline=tl), stats=st)[0])
        counts.append(st["instructions"])
    assert counts[0] == counts[1]
    np.testing.assert_array_equal(outs[0], outs[1])
    assert sorted(os.listdir(tmp_path)) == ["t.json"]


OTHER_KINDS = [("ampere/gemm-bf16", "cp.async", "cp.async.cg"),
                ("blackwell/gemm-bf16", "tcgen05.mma", "tcgen05.mma")]


@pytest.mark.parametrize("name,kind,op", OTHER_KINDS)
def test_cp_async_and_tcgen05_mma_in_flight(tmp_path, name, kind, op):
    from examples import proof
    from examples.library import get

    e = get(name)
    case = e.cases[0]
    k = e.kernel(**case.build)
    ins = proof.make_inputs(e, k, case.shape)
    path = str(tmp_path / "x.json")
    k.interpret(*ins, timeline=path)
    doc = _load(path)
    ops = _slices(doc, kind)
    assert ops and all(x["name"] == op for x in ops)
    assert all("completed" not in x["args"] for x in ops)      # each retired by its wait / commit
    if kind == "cp.async":
        # one slice per warp and commit group: 16 bytes per thread and cp.async
        assert all(x["args"]["bytes"] == 16 * 32 * x["args"]["issued"] for x in ops)
    else:
        assert _slices(doc, "TMA") and _slices(doc, "bulk group")


def test_a_deadlock_still_writes_the_trace_up_to_it(tmp_path):
    bad = BARRIER.replace("    bra SYNC;\n", "    bar.sync 1;\n    ret;\n")   # a different barrier
    path = tmp_path / "dead.json"
    with pytest.raises(DeadlockError):
        launch(bad, "k", [np.zeros(64, np.uint32)], block=64, timeline=path)
    doc = _load(path)
    assert doc["otherData"]["error"].startswith("DeadlockError: deadlock")
    assert [e["name"] for e in _slices(doc) if e["tid"] == 0] == ["k", "wait bar.sync"]
    assert [e["name"] for e in _slices(doc) if e["tid"] == 1] == ["k", "WORK", "wait bar.sync"]
    # both warps wait until the deadlock is found (the end of the run)
    end = doc["otherData"]["warp_instructions"]
    assert [e["ts"] + e["dur"] for e in _slices(doc, "wait")] == [end, end]


@pytest.mark.parametrize("bad", [3, b"run.json", "", ["a.json"]])
def test_a_bad_timeline_value_is_refused(bad):
    with pytest.raises(InterpreterError) as e:
        launch(BARRIER, "k", [np.zeros(64, np.uint32)], block=64, timeline=bad)
    assert str(e.value) == (f"timeline must be a file path (str or os.PathLike) for the trace "
                            f"JSON, or None; got {bad!r} ({type(bad).__name__})")


def test_the_file_is_replaced_atomically(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    path.write_text("old")

    def broken(*a, **kw):
        raise RuntimeError("disk full")
    monkeypatch.setattr(json, "dump", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        launch(BARRIER, "k", [np.zeros(64, np.uint32)], block=64, timeline=path)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["run.json"]             # no temporary file left
    monkeypatch.undo()
    y = np.zeros(64, np.uint32)
    with pytest.raises(InterpreterError, match="does not exist"):   # issue 26: before the run
        launch(BARRIER, "k", [y], block=64, timeline=tmp_path / "missing" / "run.json")
    assert not y.any()


def test_runtime_paths_take_the_timeline(tmp_path):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from jax_pyptx import Tile, kernel, ptx, reg
    from jax_pyptx.runtime.call import configure
    from jax_pyptx.types import f32, u32, u64

    @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(64, 1, 1),
            grid=lambda N: ((N + 63) // 64, 1, 1))
    def square(X, Y):
        i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + ptx.special.tid.x()
        with ptx.if_(i < X.shape[0]):
            off = reg.cvt(i, u64) * 4
            v = reg.scalar(f32)
            ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * v)
        ptx.ret()

    x = np.arange(100, dtype=np.float32)
    eager, jitted, conf = (tmp_path / n for n in ("eager.json", "jit.json", "conf.json"))
    np.testing.assert_array_equal(square(jnp.asarray(x), interpret=True, timeline=eager), x * x)
    f = jax.jit(lambda v: square(v, interpret=True, timeline=str(jitted)))
    np.testing.assert_array_equal(f(jnp.asarray(x)), x * x)
    configure(square, timeline=conf)
    np.testing.assert_array_equal(square(jnp.asarray(x), interpret=True), x * x)
    for p in (eager, jitted, conf):
        doc = _load(p)
        assert {e["pid"] for e in _slices(doc)} == {0, 1}          # 2 CTAs
        assert all(e["args"]["src"].startswith(__file__) for e in _slices(doc))
    with pytest.raises(InterpreterError, match=r"timeline must be a file path .* got 7 \(int\)"):
        square(jnp.asarray(x), interpret=True, timeline=7)
    with pytest.raises(InterpreterError, match=r"timeline must be a file path"):
        configure(square, timeline=7)


def test_torch_cpu_calls_take_the_configured_timeline(tmp_path):
    torch = pytest.importorskip("torch")
    from examples.hopper.rms_norm import build_rms_norm, reference
    from jax_pyptx.runtime.options import configure

    k = configure(build_rms_norm(4, 64), timeline=tmp_path / "rms.json")
    x, w = torch.randn(8, 64), torch.randn(64)
    np.testing.assert_allclose(k(x, w).numpy(), reference(x.numpy(), w.numpy()), rtol=1e-4, atol=1e-4)
    doc = _load(tmp_path / "rms.json")
    assert doc["otherData"]["kernel"] == "rms_norm" and _slices(doc, "instructions")


# odd lanes branch forward and back, so the even lanes reach the shfl.sync first and wait
# there for them; then warp 1 exits and warp 0 runs on alone
PARK_EXIT = HDR + """.visible .entry k(.param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<4>;
    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    mov.u32 %r2, %r1;
    and.b32 %r3, %r1, 1;
    setp.eq.u32 %p1, %r3, 1;
    @%p1 bra ODD;
SH:
    shfl.sync.bfly.b32 %r4, %r2, 1, 31, -1;
    st.global.u32 [%rd3], %r4;
    setp.ge.u32 %p3, %r1, 32;
    @%p3 exit;
    add.u32 %r5, %r4, 7;
    st.global.u32 [%rd3], %r5;
    ret;
ODD:
    add.u32 %r2, %r1, 100;
    bra SH;
}
"""


def test_a_waiting_instruction_and_a_partial_exit_on_the_clock(tmp_path):
    """What waits does not issue: the even lanes' shfl.sync counts once, when it runs with the
    odd lanes; after warp 1 exits, warp 0 runs on alone at one unit per instruction."""
    y = np.zeros(64, np.uint32)
    launch(PARK_EXIT, "k", [y], block=64, timeline=tmp_path / "t.json")
    lane = np.arange(64)
    partner = np.where(lane % 2, lane - 1, lane + 1 + 100)
    np.testing.assert_array_equal(y, np.where(lane < 32, partner + 7, partner))
    doc = _load(tmp_path / "t.json")
    assert doc["otherData"]["warp_instructions"] == 31
    got = sorted((e["tid"], e["ts"], e["dur"], e["name"], e["args"]["instructions"]) for e in _slices(doc))
    assert got == [
        # 8 instructions x 2 warps; the even lanes' shfl.sync waiting at 16 is not one of them
        (0, 0, 16, "k", 8), (0, 16, 4, "ODD", 2),
        # the whole warp's shfl.sync, st, setp, exit: 4 x 2 warps; then warp 0 alone: 3 x 1
        (0, 20, 8, "SH", 4), (0, 28, 3, "SH+4", 3),
        (1, 0, 16, "k", 8), (1, 16, 4, "ODD", 2), (1, 20, 8, "SH", 4)]


@pytest.mark.parametrize("schedule", ["eager", "random"])
@pytest.mark.parametrize("kernel", ["BARRIER", "PARK_EXIT", "CP_MBAR"])
def test_a_timeline_schedules_as_a_launch_without_one(tmp_path, kernel, schedule):
    """The same scheduling loop runs with and without a timeline: the same instructions in
    the same order (the counts, and the values of a schedule that draws at random)."""
    ptx, args, block = {"BARRIER": (BARRIER, [np.zeros(64, np.uint32)], 64),
                        "PARK_EXIT": (PARK_EXIT, [np.zeros(64, np.uint32)], 64),
                        "CP_MBAR": (CP_MBAR, [np.arange(32, dtype=np.uint32) * 7,
                                              np.zeros(32, np.uint32)], 32)}[kernel]
    runs = []
    for tl in (None, tmp_path / "t.json"):
        got = [a.copy() for a in args]
        st = {}
        kw = {"seed": 5} if schedule == "random" else {}
        launch(ptx, "k", got, block=block, stats=st, timeline=tl, schedule=schedule, **kw)
        runs.append(((st["instructions"], st["thread_instructions"]), got))
    assert runs[0][0] == runs[1][0] and runs[0][0][0] > 10
    for a, b in zip(runs[0][1], runs[1][1]):
        np.testing.assert_array_equal(a, b)
    assert sorted(os.listdir(tmp_path)) == ["t.json"]


CP_MBAR = HDR + """.visible .entry k(.param .u64 src, .param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<8>; .reg .pred %p<3>;
    .shared .align 8 .b64 bar;
    .shared .align 16 .b32 buf[32];
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 32;
    bar.sync 0;
    mov.u32 %r3, buf;
    mad.lo.u32 %r4, %r1, 4, %r3;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd1, %rd3;
    cp.async.ca.shared.global [%r4], [%rd4], 4;
    cp.async.mbarrier.arrive.noinc.shared.b64 [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r7, [%r4];
    add.u64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r7;
    ret;
}
"""


def test_cp_async_completes_at_its_mbarrier_arrive(tmp_path):
    src = np.arange(32, dtype=np.uint32) * 7
    out = np.zeros(32, np.uint32)
    launch(CP_MBAR, "k", [src, out], block=32, timeline=tmp_path / "cp.json")
    assert np.array_equal(out, src)
    doc = _load(tmp_path / "cp.json")
    (cp,) = _slices(doc, "cp.async")
    # issued by the instruction at ts (one warp: 1 unit), retired by the next one
    assert cp["dur"] == 2 and cp["name"] == "cp.async.ca"
    assert cp["args"] == {"issued": 1, "bytes": 128, "group": 0, "ptx_line": 20,
                          "ptx": "cp.async.ca.shared.global [%r4], [%rd4], 4;"}
