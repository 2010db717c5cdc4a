"""alloca / stacksave / stackrestore: a per-thread stack in local memory (stack.py), its
pointers used by ld.local / st.local and (after cvta.local) generic loads, the frees at
stackrestore and at a function's return, and each error (overflow, access below the stack
pointer, a bad stackrestore value) reported at its PTX line."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError, OutOfBoundsError
from jax_pyptx.interpret import launch
from jax_pyptx.interpret.state.stack import STACK_BYTES
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.6\n.target sm_90a\n.address_size 64\n"

KERNEL = HDR + """
.func (.reg .u64 %ret) inner(.reg .u64 %n)
{
    .reg .u64 %q<4>;
    alloca.u64 %q1, %n;
    st.local.u64 [%q1], %n;
    ld.local.u64 %q2, [%q1];
    add.u64 %ret, %q2, %q1;
    ret;
}

.visible .entry k(.param .u64 out, .param .u64 size)
{
    .reg .u32 %r<10>; .reg .u64 %rd<20>; .reg .pred %p<3>;
    .local .align 4 .b8 pad[12];
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [size];
    mov.u32 %r1, %tid.x;
    cvt.u64.u32 %rd3, %r1;
    alloca.u64 %rd4, %rd2, 16;
    st.local.u64 [%rd4], %rd3;
    st.local.u64 [%rd4+32], %rd2;
    stacksave.u64 %rd5;
    alloca.u64 %rd6, 8;
    stackrestore.u64 %rd5;
    alloca.u64 %rd7, 4;
    mov.u64 %rd15, 24;
    call (%rd8), inner, (%rd15);
    stacksave.u64 %rd9;
    cvta.local.u64 %rd10, %rd4;
    ld.u64 %rd11, [%rd10];
    ld.local.u64 %rd12, [%rd4+32];
    add.u64 %rd11, %rd11, %rd12;
    mul.wide.u32 %rd13, %r1, 64;
    add.u64 %rd14, %rd1, %rd13;
    st.global.v2.u64 [%rd14], {%rd4, %rd5};
    st.global.v2.u64 [%rd14+16], {%rd6, %rd7};
    st.global.v2.u64 [%rd14+32], {%rd8, %rd9};
    st.global.u64 [%rd14+48], %rd11;
    ret;
}
"""


def _line(text, needle):
    return next(i + 1 for i, t in enumerate(text.splitlines()) if needle in t)


def run(text=KERNEL, size=40, threads=4):
    out = np.zeros((threads, 8), np.uint64)
    launch(text, "k", [out, np.uint64(size)], block=threads)
    return out


def test_ptxas_accepts_the_kernel():
    ptxas_check(KERNEL, "sm_90a")


def test_alloca_stacksave_stackrestore_and_return():
    out = run()
    # .local pad[12] -> the stack is local [16, 16 + 1024); every thread's pointer starts at 1040
    assert STACK_BYTES == 1024
    want = [992,        # alloca 40 bytes aligned to 16: 1040 - 40 = 1000, down to 992
            992,        # stacksave
            984,        # alloca 8 (default alignment 8)
            984,        # after stackrestore to 992: alloca 4 -> 988, down to 8 -> 984
            960 + 24,   # inner: alloca 24 at 984 -> 960; returns its value 24 + the pointer 960
            984]        # the return freed inner's alloca: the pointer is back at 984
    for t in range(4):
        np.testing.assert_array_equal(out[t, :6], want)
        assert out[t, 6] == t + 40          # st.local / generic ld through the alloca pointer


def test_alloca_stack_overflow():
    with pytest.raises(InterpreterError) as e:
        run(size=1100)
    line = _line(KERNEL, "alloca.u64 %rd4, %rd2, 16;")
    assert str(e.value) == (f"<ptx>:{line}: alloca: stack overflow: 1100 bytes aligned to 16 do not fit in "
                            f"the 1024 bytes left of this thread's 1024-byte stack (local [0x10, 0x410)): "
                            f"alloca.u64 %rd4, %rd2, 16; by thread (0,0,0) of CTA (0,0,0) "
                            f"[instruction #4 of k]")
    assert run(size=960)[0, 0] == 80        # 1040 - 960: the stack's lowest 64 bytes stay free


def test_access_below_the_stack_pointer_after_stackrestore():
    bad = KERNEL.replace("    alloca.u64 %rd7, 4;\n", "    st.local.u32 [%rd6], %r1;\n    alloca.u64 %rd7, 4;\n")
    ptxas_check(bad, "sm_90a")
    with pytest.raises(OutOfBoundsError) as e:
        run(bad)
    line = _line(bad, "st.local.u32 [%rd6], %r1;")
    assert str(e.value).startswith(
        f"<ptx>:{line}: out-of-bounds local store st.local.u32 [%rd6], %r1; by thread (0,0,0) of CTA "
        f"(0,0,0): local address 0x3d8 is in this thread's alloca stack [0x10, 0x410) below its stack "
        f"pointer 0x3e0: memory not allocated by alloca, or freed by stackrestore or a return")


def test_stackrestore_of_a_value_outside_the_stack():
    bad = KERNEL.replace("stackrestore.u64 %rd5;", "stackrestore.u64 %rd3;")
    ptxas_check(bad, "sm_90a")
    with pytest.raises(InterpreterError) as e:
        run(bad)
    line = _line(bad, "stackrestore.u64 %rd3;")
    assert str(e.value).startswith(
        f"<ptx>:{line}: stackrestore: 0x0 is not a stack pointer of this thread's stack (local "
        f"[0x10, 0x410]); restore a value stacksave returned: stackrestore.u64 %rd3;")


def test_alloca_u32_and_bad_alignment():
    text = HDR + """
.visible .entry k(.param .u64 out)
{
    .reg .u32 %r<8>; .reg .u64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    add.u32 %r2, %r1, 1;
    shl.b32 %r2, %r2, 3;
    alloca.u32 %r3, %r2, 64;
    st.local.u32 [%r3], %r1;
    ld.local.u32 %r4, [%r3];
    mul.wide.u32 %rd2, %r1, 8;
    add.u64 %rd3, %rd1, %rd2;
    st.global.v2.u32 [%rd3], {%r3, %r4};
    ret;
}
"""
    ptxas_check(text, "sm_90a")
    out = np.zeros((3, 2), np.uint32)
    launch(text, "k", [out], block=3)
    # no .local variables: the stack is [0, 1024); 1024 - 8(t+1), down to a multiple of 64
    np.testing.assert_array_equal(out[:, 0], [960, 960, 960])
    np.testing.assert_array_equal(out[:, 1], [0, 1, 2])
    bad = text.replace("alloca.u32 %r3, %r2, 64;", "alloca.u32 %r3, %r2, 48;")
    with pytest.raises(InterpreterError) as e:
        launch(bad, "k", [out], block=3)
    assert "alloca: immAlign is 48; it must be a power of 2 no larger than 2^23" in str(e.value)
