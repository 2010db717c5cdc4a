"""LLVM ``undef`` values, memcheck's rule: a register packed from an undefined and a defined half
(or converted from an undefined source) is tracked bit by bit; computing on it is fine, and only
undefined bits that reach memory, an address, a branch or a predicate are reported (naming the
register they came from and the instruction that read it)."""
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
    ("st.global.b16 [%rd1+2], %h2;", "%h2", "bits 0-15"),
    ("st.global.b32 [%rd1+4], %r2;", "%r2", "bits 0-15"),
    ("st.global.b16 [%rd1+2], %r2;", "%r2", "bits 0-15"),
    ("cvt.u64.u16 %rd2, %h2;\n  add.u64 %rd3, %rd1, %rd2;\n  st.global.b16 [%rd3], %h3;", "%rd3", "bits 0-15"),
])
def test_undefined_bits_reaching_memory_or_an_address(sink, reg, what):
    with pytest.raises(UninitializedReadError) as ei:
        run(sink)
    msg = str(ei.value)
    assert f"undefined bits of register {reg} ({what}, from uninitialized register %h0 read by <ptx>:{PACK_LINE}: " \
           f"mov.b32 %r1, {{%h0, %h1}}) reach memory or an address" in msg


def test_undefined_bits_reaching_a_predicate_or_a_branch():
    with pytest.raises(UninitializedReadError, match=r"a predicate \(%p1\) is computed from undefined bits, from "
                                                     r"uninitialized register %h0 read by <ptx>:9: mov.b32 %r1, "
                                                     r"\{%h0, %h1\}"):
        run("cvt.f32.f16 %f1, %h2;\n  setp.gt.f32 %p1, %f1, 0f00000000;")
    run("cvt.f32.f16 %f1, %h3;\n  setp.gt.f32 %p1, %f1, 0f00000000;")        # the defined half: clean


def test_a_fully_uninitialized_register_is_reported_where_its_bits_reach_memory():
    run("add.f16 %h4, %h0, %h1;")              # computed on, never used: clean (memcheck)
    with pytest.raises(UninitializedReadError, match=r"undefined bits of register %h4 \(bits 0-15, from uninitialized "
                                                     r"register %h0 read by <ptx>:\d+: add.f16 %h4, %h0, %h1\) reach "
                                                     r"memory or an address: st.global.b16 \[%rd1\+2\], %h4;"):
        run("add.f16 %h4, %h0, %h1;\n  st.global.b16 [%rd1+2], %h4;")
    # read directly by a sink: reported where read
    with pytest.raises(UninitializedReadError, match=r"read of uninitialized register %h0: st.global.b16"):
        run("st.global.b16 [%rd1+2], %h0;")


# cvt.rn.satfinite.e4m3x2.f32 d, a, b: a -> the upper byte, b -> the lower. LLVM leaves a undef
# when only one fp8 value is wanted, and the store writes only the lower byte.
E4M3 = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .b16 %rs<3>; .reg .b32 %r<4>; .reg .u64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.b32 %r2, 0f3FC00000;
  cvt.rn.satfinite.e4m3x2.f32 %rs1, %r3, %r2;
  SINK
  ret;
}
"""


def test_packed_conversion_of_an_undefined_source_leaves_only_its_element_undefined():
    out = np.zeros(4, np.uint8)
    launch(E4M3.replace("SINK", "st.global.b8 [%rd1], %rs1;"), "k", [out])
    assert out[0] == 0x3C                       # 1.5 in e4m3 (0 0111 100)
    with pytest.raises(UninitializedReadError, match=r"undefined bits of register %rs1 \(bits 8-15, from uninitialized "
                                                     r"register %r3 read by <ptx>:9: cvt.rn.satfinite.e4m3x2.f32 %rs1, "
                                                     r"%r3, %r2\) reach memory or an address: st.global.b16"):
        launch(E4M3.replace("SINK", "st.global.b16 [%rd1], %rs1;"), "k", [out])
    # the defined source in the upper element instead: the lower byte is the undefined one
    with pytest.raises(UninitializedReadError, match=r"\(bits 0-7, from uninitialized register %r3"):
        launch(E4M3.replace("%r3, %r2;", "%r2, %r3;").replace("SINK", "st.global.b8 [%rd1], %rs1;"), "k", [out])
