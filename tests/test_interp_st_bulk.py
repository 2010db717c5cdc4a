"""st.bulk (PTX 8.6, sm_100): zero-initialising shared memory, with .shared::cta and generic
addresses; each rule the ISA states (initval 0, size a multiple of 8, 8-byte alignment, the
address in shared::cta memory) reported at its PTX line."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx import parse
from jax_pyptx.errors import (
    InterpreterError, MisalignedAccessError, OutOfBoundsError, PtxValueError,
)
from jax_pyptx.interpret import launch
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.6\n.target sm_100a\n.address_size 64\n"

KERNEL = HDR + """
.visible .entry k(.param .u64 out, .param .u64 size, .param .u32 off)
{
    .reg .u32 %r<10>; .reg .u64 %rd<10>; .reg .pred %p<3>;
    .shared .align 16 .b8 buf[256];
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [size];
    ld.param.u32 %r9, [off];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    shl.b32 %r3, %r1, 2;
    add.u32 %r4, %r2, %r3;
    add.u32 %r5, %r1, 1;
    st.shared.u32 [%r4], %r5;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    add.u32 %r6, %r2, %r9;
    @%p1 st.bulk.weak.shared::cta [%r6], %rd2, 0;
    mov.u64 %rd3, buf;
    cvta.shared.u64 %rd4, %rd3;
    @%p1 st.bulk.weak [%rd4+200], 24, 0;
    bar.sync 0;
    ld.shared.u32 %r7, [%r4];
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd6, %rd1, %rd5;
    st.global.u32 [%rd6], %r7;
    ret;
}
"""


def _line(text, needle):
    return next(i + 1 for i, t in enumerate(text.splitlines()) if needle in t)


def run(text=KERNEL, size=64, off=16):
    out = np.zeros(64, np.uint32)
    launch(text, "k", [out, np.uint64(size), np.uint32(off)], block=64)
    return out


def test_ptxas_accepts_the_kernel():
    ptxas_check(KERNEL, "sm_100a")


def test_st_bulk_zeroes_exactly_the_range():
    out = run()
    want = np.arange(1, 65, dtype=np.uint32)
    want[4:20] = 0          # [buf+16, buf+80): words 4..19
    want[50:56] = 0         # [buf+200, buf+224): words 50..55 (generic address)
    np.testing.assert_array_equal(out, want)


def test_st_bulk_size_zero_writes_nothing():
    out = run(size=0)
    want = np.arange(1, 65, dtype=np.uint32)
    want[50:56] = 0
    np.testing.assert_array_equal(out, want)


def test_st_bulk_size_not_a_multiple_of_8():
    with pytest.raises(InterpreterError) as e:
        run(size=12)
    line = _line(KERNEL, "st.bulk.weak.shared::cta")
    assert str(e.value) == (f"<ptx>:{line}: st.bulk: size is 12 bytes; it must be a multiple of 8: "
                            f"@%p1 st.bulk.weak.shared::cta [%r6], %rd2, 0; by thread (0,0,0) of CTA "
                            f"(0,0,0) [instruction #12 of k]")


def test_st_bulk_misaligned_address():
    with pytest.raises(MisalignedAccessError) as e:
        run(off=4)
    line = _line(KERNEL, "st.bulk.weak.shared::cta")
    assert str(e.value).startswith(f"<ptx>:{line}: st.bulk: shared address 0x4 is not 8-byte aligned: ")


def test_st_bulk_past_the_end_of_shared_memory():
    with pytest.raises(OutOfBoundsError) as e:
        run(size=256)
    line = _line(KERNEL, "st.bulk.weak.shared::cta")
    assert str(e.value).startswith(f"<ptx>:{line}: out-of-bounds shared bulk store "
                                   f"@%p1 st.bulk.weak.shared::cta [%r6], %rd2, 0; by thread (0,0,0) of "
                                   f"CTA (0,0,0): shared address 0x10 is 16 bytes past the end")


def test_st_bulk_nonzero_initval_and_non_shared_generic_address():
    bad = KERNEL.replace("[%rd4+200], 24, 0;", "[%rd4+200], 24, 1;")
    with pytest.raises(PtxValueError) as e:       # ptxas refuses it too: refused before running
        run(bad)
    assert str(e.value) == (f"<ptx>:{_line(bad, '24, 1;')}: st.bulk.weak operand 3: "
                            "immediate 1 is out of range; allowed: 0")
    with pytest.raises(InterpreterError) as e:    # the interpreter's own check, on a Module
        run(parse(bad, check=False))
    assert "st.bulk: initval is 1; the ISA allows only 0" in str(e.value)
    glob = KERNEL.replace("@%p1 st.bulk.weak [%rd4+200]", "@%p1 st.bulk.weak [%rd1]")
    ptxas_check(glob, "sm_100a")
    with pytest.raises(InterpreterError) as e:
        run(glob)
    line = _line(glob, "st.bulk.weak [%rd1]")
    assert str(e.value).startswith(f"<ptx>:{line}: st.bulk: generic address 0x7f")
    assert "is not in the shared memory window (st.bulk writes only shared::cta memory)" in str(e.value)
