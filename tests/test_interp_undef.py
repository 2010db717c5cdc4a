"""LLVM ``undef`` halves: a register packed from an undefined and a defined half is tracked
byte by byte; computing on it is fine, and only undefined bits that reach memory, an address, a
branch or a predicate are reported (with the pack that left them undefined)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import UninitializedReadError
from jax_pyptx.interpret import launch

K = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b16 %h<6>; .reg .b32 %r<4>; .reg .u64 %rd<4>; .reg .f32 %f1; .reg .pred %p1;
  ld.param.u64 %rd1, [out];
  mov.b16 %h1, 0x3c00;
  mov.b32 %r1, {%h0, %h1};
  add.f16x2 %r2, %r1, %r1;
  mov.b32 {%h2, %h3}, %r2;
  st.global.b16 [%rd1], %h3;
  SINK
  ret;
}
"""
PACK_LINE = 9


def run(sink):
    out = np.zeros(4, np.uint16)
    launch(K.replace("SINK", sink), "k", [out])
    return out


def test_computing_on_a_half_undefined_register_and_storing_the_defined_half_is_clean():
    out = run("")
    assert out[0] == 0x4000          # 1.0 + 1.0 in the defined (high) half
    run("mov.b32 %r3, {%h2, %h3};\n  mov.b32 {%h4, %h5}, %r3;\n  st.global.b16 [%rd1+2], %h5;")
    run("cvt.u32.u16 %r3, %h3;\n  st.global.b32 [%rd1+4], %r3;")
    # a 16-bit store of a register whose high half is undefined uses only the defined low bytes
    run("mov.b32 %r3, {%h1, %h0};\n  st.global.b16 [%rd1+2], %r3;")


@pytest.mark.parametrize("sink,reg,what", [
    ("st.global.b16 [%rd1+2], %h2;", "%h2", "bytes 0-1"),
    ("st.global.b32 [%rd1+4], %r2;", "%r2", "bytes 0-1"),
    ("st.global.b16 [%rd1+2], %r2;", "%r2", "bytes 0-1"),
    ("cvt.u64.u16 %rd2, %h2;\n  add.u64 %rd3, %rd1, %rd2;\n  st.global.b16 [%rd3], %h3;", "%rd3", "bytes 0-1"),
])
def test_undefined_bits_reaching_memory_or_an_address(sink, reg, what):
    with pytest.raises(UninitializedReadError) as ei:
        run(sink)
    msg = str(ei.value)
    assert f"undefined bits of register {reg} ({what}, left undefined by <ptx>:{PACK_LINE}: mov.b32 %r1, " \
           f"{{%h0, %h1}}) reach memory or an address" in msg


def test_undefined_bits_reaching_a_predicate_or_a_branch():
    with pytest.raises(UninitializedReadError, match=r"a predicate \(%p1\) is computed from undefined bits, left "
                                                     r"undefined by <ptx>:9: mov.b32 %r1, \{%h0, %h1\}"):
        run("cvt.f32.f16 %f1, %h2;\n  setp.gt.f32 %p1, %f1, 0f00000000;")
    run("cvt.f32.f16 %f1, %h3;\n  setp.gt.f32 %p1, %f1, 0f00000000;")        # the defined half: clean


def test_a_fully_uninitialized_register_is_still_reported_where_read():
    with pytest.raises(UninitializedReadError, match="read of uninitialized register %h0"):
        run("add.f16 %h4, %h0, %h1;")
