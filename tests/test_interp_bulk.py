"""Non-tensor bulk copies, tensor-map edits on the device and the async-proxy sanitizer rules:
cp.async.bulk global -> shared (mbarrier) / shared -> global (bulk_group, .cp_mask) / shared ->
shared::cluster, cp.reduce.async.bulk, commit/wait groups, tensormap.replace (every field),
tensormap.cp_fenceproxy and fence.proxy.tensormap; each sanitizer rule with a planted bug
reported at its PTX line, and the fixed kernel running clean."""
from __future__ import annotations

import re

import numpy as np
import pytest

from jax_pyptx.errors import AsyncProxyError, DeadlockError, InterpreterError
from jax_pyptx.interpret import launch, tensor_map
from jax_pyptx.interpret.sanitizer import async_proxy as AP
from jax_pyptx.interpret.state import tensormap as TM
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.6\n.target sm_100a\n.address_size 64\n"


def ptxas_ok(text):
    try:
        ptxas_check(text, "sm_100a")
    except Exception as e:
        if "not found" in str(e) or "no ptxas" in str(e).lower():
            return
        raise


BULK = HDR + """
.visible .entry k(.param .u64 src, .param .u64 dst, .param .u64 red)
{
    .reg .u32 %r<20>; .reg .u64 %rd<8>; .reg .pred %p<4>; .reg .b64 %st; .reg .f32 %f<3>;
    .shared .align 128 .b8 buf[1024];
    .shared .align 128 .b8 buf2[1024];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u64 %rd3, [red];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    mov.u32 %r4, buf2;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 1024;
    @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 512, [%r2];
    @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3+512], [%rd1+512], 512, [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    // every thread adds 1.0 to one float
    shl.b32 %r5, %r1, 2;
    add.u32 %r6, %r3, %r5;
    ld.shared.f32 %f1, [%r6];
    add.f32 %f1, %f1, 0f3F800000;
    st.shared.f32 [%r6], %f1;
    FENCE
    bar.sync 0;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r3], 1024;
    @%p1 cp.async.bulk.global.shared::cta.bulk_group.cp_mask [%rd2+1024], [%r3], 32, 0x00ff;
    @%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd3], [%r3], 16;
    @%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [%rd3+16], [%r3+16], 16;
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group.read 0;
    OVERWRITE
    ret;
}
"""


def run_bulk(fence="fence.proxy.async.shared::cta;", overwrite=""):
    text = BULK.replace("FENCE", fence).replace("OVERWRITE", overwrite)
    ptxas_ok(text)
    src = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    dst = np.full(256 + 8, 7.0, np.float32)
    red = np.array([1, 2, 3, 4, 0, -1, 100, -100], np.int32)
    launch(text, "k", [src, dst, red], block=256)
    return src, dst, red


def test_bulk_copies_and_reductions():
    src, dst, red = run_bulk()
    want = src + 1
    np.testing.assert_array_equal(dst[:256], want)
    # .cp_mask 0x00ff: of each 16-byte chunk only bytes 0..7 are copied
    got = dst[256:].view(np.uint8).reshape(2, 16)
    np.testing.assert_array_equal(got[:, :8], want[:8].view(np.uint8).reshape(2, 16)[:, :8])
    np.testing.assert_array_equal(got[:, 8:].view(np.float32), np.full((2, 2), 7.0, np.float32))
    bits = want.view(np.uint32)
    np.testing.assert_array_equal(red[:4].view(np.uint32), np.array([1, 2, 3, 4], np.uint32) + bits[:4])
    np.testing.assert_array_equal(red[4:], np.minimum([0, -1, 100, -100], bits[4:8].view(np.int32)))


def test_unfenced_generic_writes_read_by_a_bulk_store():
    with pytest.raises(AsyncProxyError) as e:
        run_bulk(fence="")
    msg = str(e.value)
    line = next(i + 1 for i, t in enumerate(BULK.replace("FENCE", "").splitlines())
                if "cp.async.bulk.global.shared::cta.bulk_group [%rd2]" in t)
    assert msg.startswith(f"<ptx>:{line}: the bulk store reads shared address 0x0 'buf' (+0) through "
                          f"the async proxy, but the generic proxy wrote it")
    # a fence.proxy.async without a state space covers shared memory too
    run_bulk(fence="fence.proxy.async;")
    with pytest.raises(AsyncProxyError):                           # .global does not
        run_bulk(fence="fence.proxy.async.global;")


def test_bulk_store_source_overwritten_before_its_group_retired():
    # wait_group.read 0 retired the group: after a barrier (thread 0 waited) overwriting is fine
    run_bulk(overwrite="bar.sync 0;\n    st.shared.u32 [%r6], %r1;")
    text = BULK.replace("FENCE", "fence.proxy.async.shared::cta;").replace(
        "    @%p1 cp.async.bulk.wait_group.read 0;\n", "").replace(
        "OVERWRITE", "@%p1 st.shared.u32 [%r6+512], %r1;")
    ptxas_ok(text)
    src = np.zeros(256, np.float32)
    with pytest.raises(AsyncProxyError) as e:
        launch(text, "k", [src, np.zeros(264, np.float32), np.zeros(8, np.int32)], block=256)
    assert ("the store overwrites shared address 0x200 'buf' (+512) that "
            "`@%p1 cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r3], 1024;`") in str(e.value)
    assert "retire its bulk async-group first (cp.async.bulk.commit_group, then " \
           "cp.async.bulk.wait_group.read)" in str(e.value)


_TWO_CTAS = HDR + """
.visible .entry k(.param .u64 dst)
{
    .reg .u32 %r<8>;
    .reg .u64 %rd<2>;
    .reg .pred %p<6>;
    .shared .align 128 .b8 buf[1024];
    ld.param.u64 %rd1, [dst];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, buf;
    shl.b32 %r4, %r1, 2;
    add.u32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p2, %r2, 0;
    and.pred %p3, %p1, %p2;
    setp.eq.u32 %p4, %r2, 1;
    and.pred %p5, %p1, %p4;
    @%p3 cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r3], 1024;
    @%p3 cp.async.bulk.commit_group;
    @WHO st.shared.u32 [%r3+512], %r2;
    @%p3 cp.async.bulk.wait_group 0;
    ret;
}
"""


def test_a_bulk_read_in_one_cta_is_no_hazard_to_another_ctas_bytes():
    # CTA 0's bulk store reads its buffer until its group retires: CTA 1 overwriting its own
    # buffer at the same offsets is fine (the reads are counted per CTA-local chunk, a filter),
    # CTA 0 overwriting its own is reported
    text = _TWO_CTAS.replace("WHO", "%p5")
    ptxas_ok(text)
    dst = np.zeros(256, np.uint32)
    launch(text, "k", [dst], grid=2, block=256)
    np.testing.assert_array_equal(dst, np.arange(256))
    with pytest.raises(AsyncProxyError) as e:
        launch(_TWO_CTAS.replace("WHO", "%p3"), "k", [np.zeros(256, np.uint32)], grid=2, block=256)
    assert "the store overwrites shared address 0x200 'buf' (+512) of CTA (0,0,0) that " \
           "`@%p3 cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r3], 1024;`" in str(e.value)


def test_expect_tx_that_never_balances_deadlocks_with_the_counts():
    text = BULK.replace("FENCE", "").replace("OVERWRITE", "").replace(
        "[%r2], 1024;\n    @%p1 cp.async.bulk.shared", "[%r2], 1040;\n    @%p1 cp.async.bulk.shared")
    with pytest.raises(DeadlockError) as e:
        launch(text, "k", [np.zeros(256, np.float32), np.zeros(264, np.float32), np.zeros(8, np.int32)],
               block=256)
    msg = str(e.value)
    assert "waits on mbarrier at shared 0x800 for phase parity 0 to complete (current phase 0, 0 of 1 " \
           "arrivals pending, tx-count 16): 16 bytes expected by expect_tx never completed" in msg


SHARED_COPY = HDR + """
.visible .entry k(.param .u64 out)
{
    .reg .u32 %r<12>; .reg .u64 %rd<4>; .reg .pred %p<3>; .reg .b64 %st;
    .shared .align 128 .b32 a[64];
    .shared .align 128 .b32 b[64];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, a;
    mov.u32 %r4, b;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
    shl.b32 %r5, %r1, 2;
    add.u32 %r6, %r3, %r5;
    mul.lo.u32 %r7, %r1, 3;
    st.shared.u32 [%r6], %r7;
    add.u32 %r8, %r4, %r5;
    st.shared.u32 [%r8], %r1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 512;
    @%p1 cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r4], [%r3], 256, [%r2];
    @%p1 cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%r4], [%r3], 256, [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r9, [%r8];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r9;
    ret;
}
"""


def test_shared_to_cluster_copy_and_reduction():
    ptxas_ok(SHARED_COPY)
    out = np.zeros(64, np.uint32)
    launch(SHARED_COPY, "k", [out], block=64)
    t = np.arange(64)
    np.testing.assert_array_equal(out, 3 * t + 3 * t)       # copy a into b, then b += a


# ----------------------------------------------------------------------------- tensormap.replace
REPLACE = HDR + """
.visible .entry k(.param .u64 x, .param .u64 scratch, .param .u64 out)
{
    .reg .u32 %r<16>; .reg .u64 %rd<10>; .reg .pred %p<4>; .reg .b64 %st;
    .shared .align 128 .b8 tmap[128];
    .shared .align 1024 .b8 buf[4096];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [scratch];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, tmap;
    mov.u32 %r3, buf;
    mov.u32 %r4, bar;
    setp.lt.u32 %p1, %r1, 32;
    shl.b32 %r5, %r1, 2;
    add.u32 %r6, %r2, %r5;
    @%p1 st.shared.u32 [%r6], 0;
    bar.warp.sync -1;
    setp.eq.u32 %p2, %r1, 0;
    @%p2 tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r2], %rd1;
    @%p2 tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r2], 1;
    @%p2 tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r2], 0, 32;
    @%p2 tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r2], 1, 8;
    @%p2 tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r2], 0, 40;
    @%p2 tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%r2], 1, 20;
    @%p2 tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%r2], 0, 160;
    @%p2 tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%r2], 0, 1;
    @%p2 tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%r2], 1, 2;
    @%p2 tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%r2], 7;
    @%p2 tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%r2], 0;
    @%p2 tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%r2], 3;
    @%p2 tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%r2], 1;
    @%p2 tensormap.replace.tile.swizzle_atomicity.shared::cta.b1024.b32 [%r2], 0;
    @%p1 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd2], [%r2], 128;
    @%p2 fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;
    @%p2 mbarrier.init.shared::cta.b64 [%r4], 1;
    bar.sync 0;
    @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r4], 512;
    @%p2 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd2, {36, 18}], [%r4];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r4], 0;
    @!%p3 bra WAIT;
    add.u32 %r7, %r3, %r5;
    ld.shared.u32 %r8, [%r7];
    mul.wide.u32 %rd4, %r1, 4;
    add.u64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r8;
    ret;
}
"""


def test_tensormap_replace_every_field_then_copy_fence_and_load():
    ptxas_ok(REPLACE)
    X = np.arange(20 * 40, dtype=np.float32).reshape(20, 40)
    scratch = np.zeros(256, np.uint8)
    out = np.zeros(128, np.float32)
    launch(REPLACE, "k", [X, scratch, out], block=128)
    f = TM.decode(scratch[:128].tobytes())
    assert (f.rank, f.dims, f.strides, f.box, f.element_strides, f.elemtype, f.swizzle, f.fill) == \
        (2, (40, 20), (4, 160), (32, 8), (1, 2), 7, 3, 1)
    # box at column 36, row 18, rows stepping by 2: rows 18, 20(OOB), 22, 24 (OOB, NaN fill);
    # columns 36..39 in bounds, 40..67 OOB; 128B swizzle of 128-byte rows
    got = out.view(np.uint32)
    for r, row in enumerate((18, 20, 22, 24)):
        for c in range(32):
            a = 128 * r + 4 * c
            v = got[(a ^ (((a >> 7) & 7) << 4)) // 4]
            if row < 20 and 36 + c < 40:
                assert v == X[row, 36 + c].view(np.uint32)
            else:
                assert v == 0x7FFFFFFF


def test_tensormap_replace_checks_its_values():
    bad = REPLACE.replace("box_dim.shared::cta.b1024.b32 [%r2], 0, 32;", "box_dim.shared::cta.b1024.b32 [%r2], 0, 300;")
    with pytest.raises(InterpreterError, match=r"tensormap.replace.tile.box_dim: new value 300 is outside 1..256"):
        launch(bad, "k", [np.zeros((20, 40), np.float32), np.zeros(256, np.uint8), np.zeros(128, np.float32)],
               block=128)
    unset = REPLACE.replace("    @%p2 tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%r2], 1, 8;\n", "")
    with pytest.raises(InterpreterError) as e:
        launch(unset, "k", [np.zeros((20, 40), np.float32), np.zeros(256, np.uint8), np.zeros(128, np.float32)],
               block=128)
    assert re.search(r": the tensor map at 0x[0-9a-f]+ is not valid: box_dim\[1\] = 0 \(1..256\) \(built with "
                     r"tensor_map\(\) / by tensormap.replace\?\): @%p2 cp.async.bulk.tensor.2d", str(e.value))


GLOBAL_EDIT = HDR + """
.visible .entry k(.param .u64 tm, .param .u64 out)
{
    .reg .u32 %r<16>; .reg .u64 %rd<10>; .reg .pred %p<4>; .reg .b64 %st;
    .shared .align 1024 .b8 buf[1024];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd2, [tm];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, buf;
    mov.u32 %r4, bar;
    setp.eq.u32 %p2, %r1, 0;
    @%p2 tensormap.replace.tile.box_dim.global.b1024.b32 [%rd2], 1, 2;
    FENCE
    @%p2 mbarrier.init.shared::cta.b64 [%r4], 1;
    bar.sync 0;
    @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r4], 64;
    @%p2 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd2, {0, 1}], [%r4];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [%r4], 0;
    @!%p3 bra WAIT;
    shl.b32 %r5, %r1, 2;
    add.u32 %r7, %r3, %r5;
    ld.shared.u32 %r8, [%r7];
    mul.wide.u32 %rd4, %r1, 4;
    add.u64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r8;
    ret;
}
"""


def test_tensor_map_edited_in_global_memory_needs_the_tensormap_fence():
    X = np.arange(64, dtype=np.float32).reshape(8, 8)
    fenced = GLOBAL_EDIT.replace("FENCE", "@%p2 fence.proxy.tensormap::generic.release.gpu;\n"
                                          "    @%p2 fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;")
    ptxas_ok(fenced)
    out = np.zeros(16, np.float32)
    launch(fenced, "k", [tensor_map(X, box=(8, 4)), out], block=16)
    np.testing.assert_array_equal(out, X[1:3].reshape(-1))           # box now 8 x 2
    with pytest.raises(AsyncProxyError) as e:
        launch(GLOBAL_EDIT.replace("FENCE", ""), "k", [tensor_map(X, box=(8, 4)), out], block=16)
    msg = str(e.value)
    assert "the tensor map at global 0x" in msg
    text = GLOBAL_EDIT.replace("FENCE", "")
    line = 1 + next(i for i, t in enumerate(text.splitlines()) if "tensormap.replace" in t)
    tma_line = 1 + next(i for i, t in enumerate(text.splitlines()) if "cp.async.bulk.tensor" in t)
    assert msg.startswith(f"<ptx>:{tma_line}: the tensor map at global 0x")
    assert ("was modified by `@%p2 tensormap.replace.tile.box_dim.global.b1024.b32 [%rd2], 1, 2;` "
            f"(<ptx>:{line} (instruction #6 of k)) and is used with no tensormap proxy fence since") in msg


def test_check_async_read_for_wgmma_and_tcgen05():
    """The function the wgmma / tcgen05 handlers call for their shared-memory operands."""
    from jax_pyptx.interpret.launch import LaunchMemory, LaunchState, get_module, get_program
    from jax_pyptx.interpret.scheduler.context import Context
    text = HDR + ".visible .entry k()\n{\n .shared .align 16 .b8 s[256];\n .reg .u32 %r1;\n mov.u32 %r1, s;\n ret;\n}\n"
    prog = get_program(get_module(text), "k")
    ctx = Context(prog, LaunchState((1, 1, 1), (32, 1, 1), (1, 1, 1), 0, LaunchMemory(prog), 1000), [0])
    from jax_pyptx.interpret.machine.group import Group
    g = Group(np.arange(32), 0, ctx.N)
    ctx.shared.store(np.zeros(32, np.int64), (np.arange(32) * 4).astype(np.uint64),
                     np.ones((32, 1), np.uint32))
    with pytest.raises(AsyncProxyError, match="wgmma.mma_async operand A reads shared address 0x40 's' "
                                              r"\(\+64\) through the async proxy"):
        AP.check_async_read(ctx, 0, 64, 16, "wgmma.mma_async operand A", g)
    AP.check_async_read(ctx, 0, 128, 64, "wgmma.mma_async operand B", g)     # never written: clean
    AP.fence_async(ctx, [0])
    AP.check_async_read(ctx, 0, np.array([0, 64]), 64, "wgmma.mma_async operand A", g)


RED = HDR + """
.visible .entry k(.param .u64 a, .param .u64 b)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .b32 %v<4>;
    .shared .align 128 .b8 buf[64];
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    mov.u32 %r3, buf;
    mov.u32 %v0, 5;
    mov.u32 %v1, 0;
    mov.u32 %v2, 9;
    mov.u32 %v3, 3;
    st.shared.v4.u32 [%r3], {%v0, %v1, %v2, %v3};
    mov.b32 %v0, 0x3C003800;          // f16 pair (0.5, 1.0)
    mov.b32 %v1, 0x7BFF0001;          // (smallest subnormal, 65504)
    st.shared.v2.b32 [%r3+16], {%v0, %v1};
    mov.u32 %v0, 0;
    st.shared.v2.b32 [%r3+24], {%v0, %v0};
    fence.proxy.async.shared::cta;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.u32 [%rd1], [%r3], 16;
    cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%rd2], [%r3+16], 16;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    ret;
}
"""


def test_bulk_reductions_inc_and_f16_add():
    ptxas_ok(RED)
    a = np.array([4, 7, 9, 0], np.uint32)          # inc: old >= b ? 0 : old + 1
    b = np.array([1.0, 0.25, 2.0 ** -24, 32.0, 0, 0, 0, 0], np.float16)
    launch(RED, "k", [a, b], block=1)
    np.testing.assert_array_equal(a, [5, 0, 0, 1])
    # 1 + 0.5, 0.25 + 1, 2^-24 + 2^-24 (subnormals kept: .noftz), 32 + 65504 -> inf (RN overflow)
    np.testing.assert_array_equal(b, np.array([1.5, 1.25, 2.0 ** -23, np.inf, 0, 0, 0, 0], np.float16))


OVERWRITTEN = HDR + """
.visible .entry k(.param .u64 src, .param .u64 dst)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p<3>; .reg .b64 %st;
    .shared .align 128 .b8 buf[1024];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    st.shared.v4.u32 [%r3+AT], {%r2, %r2, %r2, %r2};
    mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%r2], 512;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 512, [%r2];
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r3], 512;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group.read 0;
    ret;
}
"""


def test_generic_writes_a_copy_overwrites_need_no_proxy_fence():
    # the async write of the copy replaces the unfenced generic bytes: the bulk store reads
    # the copy's bytes, clean; an unfenced byte the copy does not cover is still reported
    src = np.arange(128, dtype=np.uint32)
    for at in (0, 496):
        text = OVERWRITTEN.replace("AT", str(at))
        ptxas_ok(text)
        dst = np.zeros(128, np.uint32)
        launch(text, "k", [src, dst], block=1)
        np.testing.assert_array_equal(dst, src)
    text = OVERWRITTEN.replace("AT", "512").replace("], 512;\n    cp.async.bulk.commit", "], 528;\n"
                                                      "    cp.async.bulk.commit")
    with pytest.raises(AsyncProxyError, match=r"the bulk store reads shared address 0x200 'buf' \(\+512\) "
                                              r"through the async proxy, but the generic proxy wrote it"):
        launch(text, "k", [src, np.zeros(130, np.uint32)], block=1)


def test_tensor_map_read_past_its_allocation_is_reported_as_the_gather_reports_it(monkeypatch):
    """``read_tensormap`` reads the 128 bytes on Python ints (``FlatSpace.read_row``); an access
    that fails a check goes to the gather, which reports it: the same message as with the gather
    alone."""
    from jax_pyptx.errors import OutOfBoundsError
    from jax_pyptx.interpret.state import memory as M

    X = np.arange(64, dtype=np.float32).reshape(8, 8)
    past = GLOBAL_EDIT.replace("FENCE", "").replace(
        "    @%p2 tensormap.replace.tile.box_dim.global.b1024.b32 [%rd2], 1, 2;\n",
        "    add.u64 %rd2, %rd2, 64;\n")
    msgs = []
    for row in (M.FlatSpace.read_row, lambda *a: None):
        monkeypatch.setattr(M.FlatSpace, "read_row", row)
        with pytest.raises(OutOfBoundsError) as e:
            launch(past, "k", [tensor_map(X, box=(8, 4)), np.zeros(16, np.float32)], block=16)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert "cp.async.bulk.tensor.2d" in msgs[0] and "64 bytes past the end of" in msgs[0]
