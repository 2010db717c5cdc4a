"""Memory: loads and stores in every state space and width, generic addressing and cvta,
module variables with initializers, params (pointers, scalars, by-value byte arrays), local
memory, atomics with sequential semantics, cp.async, the launch API and its argument checks,
special registers of multi-dimensional launches, and batched CTAs."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError, UninitializedReadError
from jax_pyptx.interpret import launch

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body, params="", decls="", extra=""):
    return HDR + extra + f"\n.visible .entry k({params})\n{{\n{decls}\n{body}\n}}\n"


TID = ".reg .u32 %tid; .reg .u64 %off, %p0, %p1, %p2, %p3;"


def test_loads_extend_and_stores_truncate():
    x = np.array([0x80, 0x7F, 0xFF, 0x01], np.uint8)
    out = np.zeros((4, 4), np.int32)
    prog = kernel("""
        mov.u32 %tid, %tid.x;
        ld.param.u64 %p0, [x]; ld.param.u64 %p1, [y];
        cvt.u64.u32 %off, %tid;
        add.u64 %p2, %p0, %off;
        ld.global.s8 %r1, [%p2];
        ld.global.u8 %r2, [%p2];
        ld.global.u8 %rs, [%p2];
        cvt.u32.u16 %r3, %rs;
        mul.wide.u32 %off, %tid, 16;
        add.u64 %p3, %p1, %off;
        st.global.v2.u32 [%p3], {%r1, %r2};
        st.global.u32 [%p3+8], %r3;
        ret;""", ".param .u64 x, .param .u64 y", TID + ".reg .u32 %r<4>; .reg .u16 %rs;")
    launch(prog, "k", [x, out], block=4)
    assert out[:, 0].tolist() == [-128, 127, -1, 1]
    assert out[:, 1].tolist() == [0x80, 0x7F, 0xFF, 1]
    assert out[:, 2].tolist() == [0x80, 0x7F, 0xFF, 1]
    y = np.zeros(4, np.uint8)
    prog2 = kernel("""
        mov.u32 %tid, %tid.x; ld.param.u64 %p0, [y]; cvt.u64.u32 %off, %tid; add.u64 %p0, %p0, %off;
        add.u32 %r1, %tid, 0x1FE;
        st.global.u8 [%p0], %r1;
        ret;""", ".param .u64 y", TID + ".reg .u32 %r1;")
    launch(prog2, "k", [y], block=4)
    assert y.tolist() == [0xFE, 0xFF, 0, 1]


def test_vector_and_64bit_accesses():
    x = np.arange(16, dtype=np.float32)
    d = np.array([1.5, -2.5], np.float64)
    out = np.zeros(8, np.float32)
    dout = np.zeros(2, np.float64)
    prog = kernel("""
        ld.param.u64 %p0, [x]; ld.param.u64 %p1, [y]; ld.param.u64 %p2, [dx]; ld.param.u64 %p3, [dy];
        ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%p0+16];
        st.global.v4.f32 [%p1], {%f3, %f2, %f1, %f0};
        ld.global.v2.b64 {%b0, %b1}, [%p2];
        st.global.v2.b64 [%p3], {%b1, %b0};
        ld.global.v2.f32 {%f0, %f1}, [%p0+56];
        st.global.v2.f32 [%p1+16], {%f1, %f0};
        ret;""", ".param .u64 x, .param .u64 y, .param .u64 dx, .param .u64 dy",
                  TID + ".reg .f32 %f<4>; .reg .b64 %b<2>;")
    launch(prog, "k", [x, out, d, dout], block=1)
    assert out.tolist() == [7, 6, 5, 4, 15, 14, 0, 0]
    assert dout.tolist() == [-2.5, 1.5]


def test_generic_addressing_cvta_and_isspacep():
    y = np.zeros((32, 4), np.uint32)
    prog = kernel("""
        mov.u32 %tid, %tid.x;
        mov.u64 %p0, buf;
        cvta.shared.u64 %p1, %p0;                  // generic address of buf
        mul.wide.u32 %off, %tid, 4;
        add.u64 %p2, %p1, %off;
        st.u32 [%p2], %tid;                        // generic store into shared memory
        bar.sync 0;
        xor.b32 %r1, %tid, 1;
        mul.wide.u32 %off, %r1, 4;
        add.u64 %p3, %p0, %off;
        cvt.u32.u64 %r2, %p3;
        ld.shared.u32 %r3, [%r2];                  // shared-window address in a 32-bit register
        isspacep.shared %q1, %p2;
        isspacep.global %q2, %p2;
        selp.u32 %r4, 1, 0, %q1;
        selp.u32 %r5, 1, 0, %q2;
        mov.u64 %p0, loc;
        cvta.local.u64 %p1, %p0;
        st.u32 [%p1], %tid;                        // generic store into local memory
        ld.local.u32 %r6, [loc];
        cvta.to.shared.u64 %p3, %p2;
        cvt.u32.u64 %r7, %p3;
        ld.param.u64 %p0, [y];
        mul.wide.u32 %off, %tid, 16;
        add.u64 %p0, %p0, %off;
        st.global.v4.u32 [%p0], {%r3, %r4, %r6, %r7};
        ret;""", ".param .u64 y",
                  TID + ".reg .u32 %r<8>; .reg .pred %q<3>; .shared .align 4 .b8 buf[128]; .local .align 4 .b8 loc[4];")
    launch(prog, "k", [y], block=32)
    t = np.arange(32)
    assert y[:, 0].tolist() == (t ^ 1).tolist()
    assert y[:, 1].tolist() == [1] * 32
    assert y[:, 2].tolist() == t.tolist()
    assert y[:, 3].tolist() == (4 * t).tolist()


def test_module_variables_and_const_initializers():
    extra = """
.global .align 4 .u32 counter = 5;
.global .align 4 .b32 table[4] = {10, 20, 30, 40};
.const .align 4 .f32 coef[2] = {0f3F800000, 0f40000000};
"""
    y = np.zeros(4, np.float32)
    prog = kernel("""
        mov.u32 %tid, %tid.x;
        mul.wide.u32 %off, %tid, 4;
        mov.u64 %p0, table;
        add.u64 %p0, %p0, %off;
        ld.global.u32 %r1, [%p0];
        ld.global.u32 %r2, [counter];
        add.u32 %r1, %r1, %r2;
        cvt.rn.f32.u32 %f1, %r1;
        and.b32 %r3, %tid, 1;
        mul.wide.u32 %off, %r3, 4;
        mov.u64 %p1, coef;
        add.u64 %p1, %p1, %off;
        ld.const.f32 %f2, [%p1];
        mul.f32 %f1, %f1, %f2;
        ld.param.u64 %p2, [y];
        mul.wide.u32 %off, %tid, 4;
        add.u64 %p2, %p2, %off;
        st.global.f32 [%p2], %f1;
        ret;""", ".param .u64 y", TID + ".reg .u32 %r<4>; .reg .f32 %f<3>;", extra)
    launch(prog, "k", [y], block=4)
    assert y.tolist() == [15.0, 50.0, 35.0, 90.0]


def test_params_scalars_bytes_and_conversions():
    y = np.zeros(4, np.float64)
    prog = kernel("""
        ld.param.u64 %p0, [y];
        ld.param.f32 %f1, [a];
        ld.param.u32 %r1, [b];
        ld.param.u8 %rs1, [s+3];
        ld.param.f64 %d1, [s+8];
        cvt.f64.f32 %d2, %f1;
        cvt.rn.f64.u32 %d3, %r1;
        cvt.rn.f64.u16 %d4, %rs1;
        st.global.v2.f64 [%p0], {%d2, %d3};
        st.global.v2.f64 [%p0+16], {%d4, %d1};
        ret;""", ".param .u64 y, .param .f32 a, .param .u32 b, .param .align 8 .b8 s[16]",
                  TID + ".reg .f32 %f1; .reg .u32 %r1; .reg .u16 %rs1; .reg .f64 %d<5>;")
    blob = bytes([0, 0, 0, 9, 0, 0, 0, 0]) + np.float64(6.25).tobytes()
    launch(prog, "k", [y, 1.5, 2 ** 32 - 1, blob], block=1)
    assert y.tolist() == [1.5, 2.0 ** 32 - 1, 9.0, 6.25]
    with pytest.raises(InterpreterError) as e:         # issue 26: -1 is not a .u32
        launch(prog, "k", [y, 1.5, -1, blob], block=1)
    assert str(e.value) == ("param 'b' (.u32) got -1 (int): out of range; a .u32 takes an "
                            "integer in [0, 4294967295]")
    with pytest.raises(InterpreterError, match=r"param 's' takes 16 bytes, got 3"):
        launch(prog, "k", [y, 1.5, 1, b"abc"], block=1)
    with pytest.raises(InterpreterError, match=r"takes 4 arguments \(y \(.u64\), a \(.f32\), b \(.u32\), s \(.b8\[16\]\)\), got 2"):
        launch(prog, "k", [y, 1.5], block=1)
    with pytest.raises(InterpreterError, match="an array can only be passed to a 64-bit pointer param"):
        launch(prog, "k", [y, y, 1, blob], block=1)
    with pytest.raises(InterpreterError, match="not an integer"):
        launch(prog, "k", [y, 1.5, 2.5, blob], block=1)


def test_non_contiguous_arrays_are_copied_back_and_readonly_inputs_work():
    base = np.zeros((4, 8), np.float32)
    view = base[:, ::2]
    src = np.arange(16, dtype=np.float32)
    src.flags.writeable = False
    prog = kernel("""
        mov.u32 %tid, %tid.x; mul.wide.u32 %off, %tid, 4;
        ld.param.u64 %p0, [x]; add.u64 %p0, %p0, %off; ld.global.f32 %f1, [%p0];
        ld.param.u64 %p1, [y]; add.u64 %p1, %p1, %off; st.global.f32 [%p1], %f1;
        ret;""", ".param .u64 x, .param .u64 y", TID + ".reg .f32 %f1;")
    launch(prog, "k", [src, view], block=16)
    assert view.tolist() == src.reshape(4, 4).tolist()
    assert base[:, 1::2].sum() == 0


def test_local_memory_is_per_thread():
    y = np.zeros(64, np.uint32)
    prog = kernel("""
        mov.u32 %tid, %tid.x;
        mov.u32 %r1, 0;
    L:
        mul.wide.u32 %off, %r1, 4;
        mov.u64 %p0, arr;
        add.u64 %p0, %p0, %off;
        mad.lo.u32 %r2, %tid, 100, %r1;
        st.local.u32 [%p0], %r2;
        add.u32 %r1, %r1, 1;
        setp.lt.u32 %q, %r1, 8;
        @%q bra L;
        and.b32 %r3, %tid, 7;
        mul.wide.u32 %off, %r3, 4;
        mov.u64 %p0, arr;
        add.u64 %p0, %p0, %off;
        ld.local.u32 %r4, [%p0];
        ld.param.u64 %p1, [y]; mul.wide.u32 %off, %tid, 4; add.u64 %p1, %p1, %off;
        st.global.u32 [%p1], %r4;
        ret;""", ".param .u64 y", TID + ".reg .u32 %r<5>; .reg .pred %q; .local .align 4 .b8 arr[32];")
    launch(prog, "k", [y], block=64)
    t = np.arange(64)
    assert y.tolist() == (t * 100 + (t & 7)).tolist()


# ----------------------------------------------------------------------------- atomics
ATOM = """
    mov.u32 %tid, %tid.x;
    ld.param.u64 %p0, [c];
    ld.param.u64 %p1, [y];
    mul.wide.u32 %off, %tid, 4;
    add.u64 %p1, %p1, %off;
    and.b32 %r1, %tid, 3;
    mul.wide.u32 %off, %r1, 4;
    add.u64 %p2, %p0, %off;
    OP
    st.global.u32 [%p1], %r2;
    ret;"""


@pytest.mark.parametrize("op,init,check", [
    ("atom.global.add.u32 %r2, [%p2], 1;", [0, 10, 20, 30],
     lambda c, y: c.tolist() == [8, 18, 28, 38] and sorted(y[0::4].tolist()) == list(range(8))),
    ("atom.global.exch.b32 %r2, [%p2], %tid;", [100, 101, 102, 103],
     lambda c, y: sorted(y[0::4].tolist() + [int(c[0])]) == sorted([100] + list(range(0, 32, 4)))),
    ("atom.global.max.s32 %r2, [%p2], %tid;", [-5, 50, 0, 0],
     lambda c, y: c.tolist() == [28, 50, 30, 31]),
    ("atom.global.min.u32 %r2, [%p2], %tid;", [7, 0, 9, 9],
     lambda c, y: c.tolist() == [0, 0, 2, 3]),
    ("atom.global.inc.u32 %r2, [%p2], 5;", [0, 0, 0, 0],
     lambda c, y: c.tolist() == [2, 2, 2, 2] and sorted(y[0::4].tolist()) == [0, 0, 1, 1, 2, 3, 4, 5]),
    ("atom.global.dec.u32 %r2, [%p2], 5;", [0, 0, 0, 0],
     lambda c, y: c.tolist() == [4, 4, 4, 4] and y[0::4].tolist() == [0, 5, 4, 3, 2, 1, 0, 5]),
    ("atom.global.cas.b32 %r2, [%p2], 0, %tid;", [0, 1, 0, 0],
     lambda c, y: c.tolist() == [4, 1, 2, 3] and y[0::4].tolist() == [0, 0] + [4] * 6),
    ("atom.global.or.b32 %r2, [%p2], %tid;", [0, 0, 0, 0],
     lambda c, y: c.tolist() == [28, 29, 30, 31]),
    ("red.global.add.u32 [%p2], %tid; mov.u32 %r2, 0;", [0, 0, 0, 0],
     lambda c, y: c.tolist() == [sum(range(i, 32, 4)) for i in range(4)]),
])
def test_atomics_sequential_semantics(op, init, check):
    c = np.array(init, np.int64).astype(np.uint32)
    y = np.zeros(32, np.uint32)
    launch(kernel(ATOM.replace("OP", op), ".param .u64 c, .param .u64 y", TID + ".reg .u32 %r<3>;"), "k", [c, y],
           block=32)
    if "max.s32" in op:
        c = c.view(np.int32)
    assert check(c, y), (c, y)


def test_atomic_cas_spinlock_loop_makes_progress():
    """Each thread increments a counter under a CAS lock: a loop that needs the scheduler to
    let the lock holder run."""
    c = np.zeros(2, np.uint32)
    prog = kernel("""
        ld.param.u64 %p0, [c];
    SPIN:
        atom.global.cas.b32 %r1, [%p0], 0, 1;
        setp.ne.u32 %q, %r1, 0;
        @%q bra SPIN;
        ld.volatile.global.u32 %r2, [%p0+4];
        add.u32 %r2, %r2, 1;
        st.volatile.global.u32 [%p0+4], %r2;
        atom.global.exch.b32 %r3, [%p0], 0;
        ret;""", ".param .u64 c", TID + ".reg .u32 %r<4>; .reg .pred %q;")
    launch(prog, "k", [c], block=64)
    assert c.tolist() == [0, 64]


def test_float_atomics_shared_and_global():
    y = np.zeros(2, np.float32)
    prog = kernel("""
        mov.u32 %tid, %tid.x;
        setp.eq.u32 %q, %tid, 0;
        @%q st.shared.f32 [acc], 0f00000000;
        bar.sync 0;
        cvt.rn.f32.u32 %f1, %tid;
        atom.shared.add.f32 %f2, [acc], %f1;
        ld.param.u64 %p0, [y];
        red.global.add.f32 [%p0+4], %f1;
        bar.sync 0;
        ld.shared.f32 %f3, [acc];
        @%q st.global.f32 [%p0], %f3;
        ret;""", ".param .u64 y", TID + ".reg .f32 %f<4>; .reg .pred %q; .shared .align 4 .f32 acc;")
    launch(prog, "k", [y], block=128)
    assert y.tolist() == [sum(range(128))] * 2


def test_atomic_on_uninitialized_shared_is_reported():
    prog = kernel("""
        atom.shared.add.u32 %r1, [acc], 1;
        ret;""", "", TID + ".reg .u32 %r1; .shared .align 4 .u32 acc;")
    with pytest.raises(UninitializedReadError, match="updated atomically before any thread"):
        launch(prog, "k", [], block=32)


# ----------------------------------------------------------------------------- cp.async
CP = """
    mov.u32 %tid, %tid.x;
    ld.param.u64 %p0, [x];
    mul.wide.u32 %off, %tid, 16;
    add.u64 %p1, %p0, %off;
    mov.u32 %r1, buf;
    mul.lo.u32 %r2, %tid, 16;
    add.u32 %r1, %r1, %r2;
    cp.async.cg.shared.global [%r1], [%p1], 16, %r5;
    cp.async.commit_group;
    WAIT
    bar.sync 0;
    ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%r1];
    ld.param.u64 %p2, [y];
    add.u64 %p2, %p2, %off;
    st.global.v4.u32 [%p2], {%r6, %r7, %r8, %r9};
    ret;"""


def test_cp_async_zero_fill_and_missing_wait():
    x = np.arange(32, dtype=np.uint32) + 1
    y = np.zeros(32, np.uint32)
    decls = TID + ".reg .u32 %r<10>; .shared .align 16 .b8 buf[128];"
    body = CP.replace("WAIT", "cp.async.wait_group 0;").replace("%r5;", "%r5;").replace(
        "mov.u32 %r1, buf;", "mov.u32 %r1, buf; mul.lo.u32 %r5, %tid, 4;")
    launch(kernel(body, ".param .u64 x, .param .u64 y", decls), "k", [x, y], block=8)
    exp = np.zeros((8, 4), np.uint32)
    for t in range(8):
        exp[t, :t * 4 // 4] = x.reshape(8, 4)[t, :t]      # src-size = 4*t bytes, rest zero-filled
    assert y.reshape(8, 4).tolist() == exp.tolist()
    bad = CP.replace("WAIT", "").replace("mov.u32 %r1, buf;", "mov.u32 %r1, buf; mov.u32 %r5, 16;")
    with pytest.raises(UninitializedReadError, match="still pending: missing cp.async.wait_group"):
        launch(kernel(bad, ".param .u64 x, .param .u64 y", decls), "k", [x, y], block=8)


# ----------------------------------------------------------------------------- launch shape
def test_special_registers_of_3d_launch():
    prog = kernel("""
        mov.u32 %r0, %tid.x; mov.u32 %r1, %tid.y; mov.u32 %r2, %tid.z;
        mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ctaid.y; mov.u32 %r5, %ctaid.z;
        mov.u32 %r6, %ntid.y; mov.u32 %r7, %nctaid.z;
        // linear thread and block index
        mad.lo.u32 %r8, %r2, 3, %r1; mad.lo.u32 %r8, %r8, 4, %r0;
        mad.lo.u32 %r9, %r5, 3, %r4; mad.lo.u32 %r9, %r9, 2, %r3;
        mad.lo.u32 %r10, %r9, 24, %r8;
        mul.wide.u32 %off, %r10, 16;
        ld.param.u64 %p0, [y]; add.u64 %p0, %p0, %off;
        mov.u32 %r11, %laneid; mov.u32 %r12, %warpid;
        mad.lo.u32 %r13, %r12, 100, %r11;
        mov.u32 %r14, %lanemask_lt;
        st.global.v4.u32 [%p0], {%r10, %r13, %r14, %r7};
        ret;""", ".param .u64 y", TID + ".reg .u32 %r<15>;")
    res = np.zeros((12 * 24, 4), np.uint32)
    launch(prog, "k", [res], grid=(2, 3, 2), block=(4, 3, 2))
    assert res[:, 0].tolist() == list(range(12 * 24))
    lin = np.arange(12 * 24) % 24
    assert res[:, 1].tolist() == ((lin // 32) * 100 + lin % 32).tolist()
    assert res[:, 2].tolist() == ((1 << (lin % 32)) - 1).tolist()
    assert (res[:, 3] == 2).all()


def test_many_ctas_run_in_batches():
    n = 600 * 64
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    prog = kernel("""
        mov.u32 %r0, %tid.x; mov.u32 %r1, %ctaid.x;
        mad.lo.u32 %r2, %r1, 64, %r0;
        mul.wide.u32 %off, %r2, 4;
        ld.param.u64 %p0, [x]; add.u64 %p0, %p0, %off; ld.global.f32 %f1, [%p0];
        shl.b32 %r3, %r0, 2; mov.u32 %r4, s; add.u32 %r4, %r4, %r3;
        st.shared.f32 [%r4], %f1;
        bar.sync 0;
        mul.f32 %f1, %f1, 0f40000000;
        ld.param.u64 %p1, [y]; add.u64 %p1, %p1, %off; st.global.f32 [%p1], %f1;
        ret;""", ".param .u64 x, .param .u64 y", TID + ".reg .u32 %r<5>; .reg .f32 %f1; .shared .align 4 .f32 s[64];")
    stats = {}
    launch(prog, "k", [x, y], grid=600, block=64, stats=stats)
    np.testing.assert_array_equal(y, 2 * x)
    assert stats["batches"] > 1 and stats["ctas"] == 600


def test_block_not_a_multiple_of_warp_size():
    y = np.zeros(50, np.uint32)
    prog = kernel("""
        mov.u32 %tid, %tid.x;
        shfl.sync.bfly.b32 %r1, %tid, 1, 31, -1;
        vote.sync.ballot.b32 %r2, 1, -1;
        add.u32 %r1, %r1, %r2;
        mul.wide.u32 %off, %tid, 4;
        ld.param.u64 %p0, [y]; add.u64 %p0, %p0, %off;
        st.global.u32 [%p0], %r1;
        ret;""", ".param .u64 y", TID + ".reg .u32 %r<3>;")
    launch(prog, "k", [y], block=50)
    t = np.arange(50)
    ball = np.where(t < 32, 0xFFFFFFFF, (1 << 18) - 1)
    assert y.tolist() == (((t ^ 1) + ball) & 0xFFFFFFFF).tolist()


def test_launch_argument_checks():
    prog = kernel("ret;", "", "")
    with pytest.raises(InterpreterError, match="at most 1024 threads"):
        launch(prog, "k", [], block=(32, 33))
    with pytest.raises(InterpreterError, match="no function 'nope' in the module"):
        launch(prog, "nope", [])
    with pytest.raises(InterpreterError, match="grid .* is not a multiple of the cluster shape"):
        launch(prog, "k", [], grid=3, cluster=2)
    big = kernel("ret;", "", ".shared .align 4 .b8 big[300000]; st.shared.u32 [big], 0;")
    with pytest.raises(InterpreterError, match="needs 300000 bytes of shared memory"):
        launch(big.replace("ret;\n}", "st.shared.u32 [big], 0;\nret;\n}"), "k", [])
