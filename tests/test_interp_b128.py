""".b128 registers (PTX 8.3): ld / st .b128 (16-byte aligned) and mov.b128 copy, pack and
unpack ({2 x .b64}, {4 x .b32}; element 0 is the low bits), checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import MisalignedAccessError
from jax_pyptx.interpret import launch
from jax_pyptx.toolchain import ptxas_check

KERNEL = """.version 8.6
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 src, .param .u64 dst, .param .u64 off)
{
    .reg .u32 %r<8>; .reg .u64 %rd<12>; .reg .b128 %q<4>;
    .shared .align 16 .b8 buf[512];
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u64 %rd9, [off];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.u64 %rd4, %rd1, %rd3;
    add.u64 %rd4, %rd4, %rd9;
    ld.global.b128 %q1, [%rd4];
    mov.u32 %r2, buf;
    mul.lo.u32 %r3, %r1, 16;
    add.u32 %r2, %r2, %r3;
    st.shared.b128 [%r2], %q1;
    ld.shared.b128 %q2, [%r2];
    mov.b128 {%r4, %r5, %r6, %r7}, %q2;
    mov.b128 %q3, {%r7, %r6, %r5, %r4};
    mov.b128 {%rd5, %rd6}, %q3;
    mov.b128 %q1, {%rd6, %rd5};
    mov.b128 %q2, %q1;
    add.u64 %rd7, %rd2, %rd3;
    st.global.b128 [%rd7], %q2;
    ret;
}
"""


def test_ptxas_accepts_the_kernel():
    ptxas_check(KERNEL, "sm_90a")


def run(off=0):
    src = np.arange(4 * 16 + 4, dtype=np.uint32) * 0x01010101
    dst = np.zeros((16, 4), np.uint32)
    launch(KERNEL, "k", [src, dst, np.uint64(off)], block=16)
    return src, dst


def test_b128_load_store_pack_unpack():
    src, dst = run()
    words = src[:64].reshape(16, 4)
    # {w0..w3} reversed to {w3, w2, w1, w0}, then its two 64-bit halves swapped: {w1, w0, w3, w2}
    np.testing.assert_array_equal(dst, words[:, [1, 0, 3, 2]])


def test_b128_load_must_be_16_byte_aligned():
    with pytest.raises(MisalignedAccessError) as e:
        run(off=8)
    assert "misaligned global load ld.global.b128 %q1, [%rd4]; by thread (0,0,0) of CTA (0,0,0): address " \
           in str(e.value)
    assert "is not aligned to 16 bytes" in str(e.value)
