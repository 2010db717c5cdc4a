"""Issue 22, byte-array parameters: Triton passes an fp16 / bf16 scalar as ``.param .b8 name[2]``.
``launch`` takes any NumPy scalar or array (or bytes) whose bytes fill such a parameter exactly,
and refuses anything else naming the parameter, its size and what was given. A Python number
is refused: it has no width, so its bytes are ambiguous (1.5 as f16, bf16 or f32?)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError
from jax_pyptx.interpret import launch
from jax_pyptx.toolchain import ptxas_check

# the shape of Triton's scalar parameters: an f16 scalar in a .b8[2], read as .b16
TEXT = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out, .param .align 2 .b8 h[2], .param .align 4 .b8 w[6])
{
    .reg .b16 %h<5>; .reg .b64 %rd1;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.b16 %h1, [h];
    ld.param.b16 %h2, [w];
    ld.param.b16 %h3, [w+2];
    ld.param.b16 %h4, [w+4];
    st.global.b16 [%rd1], %h1;
    st.global.b16 [%rd1+2], %h2;
    st.global.b16 [%rd1+4], %h3;
    st.global.b16 [%rd1+6], %h4;
    ret;
}
"""
W = np.array([1, 2, 3], np.uint16)


def run(h, w=W):
    out = np.zeros(4, np.uint16)
    launch(TEXT, "k", [out, h, w], block=1)
    return [hex(v) for v in out]


def test_the_kernel_is_real_ptx():
    try:
        ptxas_check(TEXT, "sm_90a")
    except Exception as e:          # no ptxas on this machine: nothing to check
        if "not found" not in str(e) and "no ptxas" not in str(e).lower():
            raise


@pytest.mark.parametrize("h, bits", [
    (np.float16(1.5), 0x3E00),
    (np.float16(-2.0), 0xC000),
    (ml_dtypes.bfloat16(2.5), 0x4020),
    (ml_dtypes.bfloat16(-1.0), 0xBF80),
    (np.uint16(0xABCD), 0xABCD),
    (np.int16(-1), 0xFFFF),
    (np.array([0x34, 0x12], np.uint8), 0x1234),              # little-endian bytes
    (np.array(np.float16(0.5)), 0x3800),                     # a 0-d array
    (b"\x00\x3c", 0x3C00),
    (bytearray(b"\x80\x3f"), 0x3F80),
])
def test_numpy_scalars_arrays_and_bytes_fill_a_b8_2(h, bits):
    assert run(h) == [hex(bits), "0x1", "0x2", "0x3"]


def test_a_multi_element_array_and_a_strided_view_give_their_bytes_in_c_order():
    a = np.arange(6, dtype=np.uint16)
    assert run(np.float16(0), a[::2]) == ["0x0", "0x0", "0x2", "0x4"]
    assert run(np.float16(0), np.array([[7], [8], [9]], np.uint16)) == ["0x0", "0x7", "0x8", "0x9"]
    assert run(np.float16(0), memoryview(W.tobytes())) == ["0x0", "0x1", "0x2", "0x3"]


ALLOWED2 = ("a .b8[2] param takes a NumPy scalar or array of exactly 2 bytes (e.g. np.float16(x), "
            "ml_dtypes.bfloat16(x), np.uint16(x)) or bytes of length 2")


@pytest.mark.parametrize("h, message", [
    (np.float32(1.5), "param 'h' takes 2 bytes, got 4 (a float32 scalar); " + ALLOWED2),
    (np.uint8(3), "param 'h' takes 2 bytes, got 1 (a uint8 scalar); " + ALLOWED2),
    (np.zeros(3, np.uint8), "param 'h' takes 2 bytes, got 3 (a uint8 array of shape (3,)); " + ALLOWED2),
    (b"\x00", "param 'h' takes 2 bytes, got 1 (bytes); " + ALLOWED2),
    (1.5, "param 'h' takes 2 bytes, got the Python float 1.5, which has no width of its own; " + ALLOWED2),
    (7, "param 'h' takes 2 bytes, got the Python int 7, which has no width of its own; " + ALLOWED2),
    ([1, 2], "param 'h' takes 2 bytes, got list; " + ALLOWED2),
    (np.array(["ab"]), "param 'h' takes 2 bytes, got NumPy data of dtype <U2, which has no fixed "
                       "byte image; " + ALLOWED2),
])
def test_what_does_not_fill_the_parameter_exactly_is_refused(h, message):
    with pytest.raises(InterpreterError) as e:
        run(h)
    assert str(e.value) == message


def test_other_sizes_name_their_own_examples():
    with pytest.raises(InterpreterError) as e:
        run(np.float16(0), np.zeros(2, np.uint16))
    assert str(e.value) == ("param 'w' takes 6 bytes, got 4 (a uint16 array of shape (2,)); a .b8[6] "
                            "param takes a NumPy scalar or array of exactly 6 bytes (e.g. a uint8 array "
                            "of 6) or bytes of length 6")
