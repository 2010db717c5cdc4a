"""Issue 15, parser: every address form ptxas accepts parses, prints back so ptxas accepts it,
and round-trips stably; the forms ptxas refuses are refused with the position.

PTX ISA "Addresses as Operands": ``[reg]``, ``[reg+immOff]``, ``[var]``, ``[var+immOff]``,
``[immAddr]``; ptxas takes any integer constant expression as the offset (LLVM writes
``[%r1+288+128]`` for matrix kernels). The offset is evaluated into the IR's integer.
"""
import pytest

from jax_pyptx import emit, parse
from jax_pyptx.errors import ParseError
from jax_pyptx.ir.nodes import Addr, Sym
from jax_pyptx.toolchain import ptxas_check

# (address as written, base, offset): every one of these ptxas 13.5 accepts
FORMS = [
    ("[%rd1]", "%rd1", 0),
    ("[%rd1+4]", "%rd1", 4),
    ("[%rd1+288+128]", "%rd1", 416),
    ("[%rd1+-4]", "%rd1", -4),
    ("[%rd1+-4+8]", "%rd1", 4),
    ("[%rd1 + 4 - 2]", "%rd1", 2),
    ("[%rd1+4-8]", "%rd1", -4),
    ("[%rd1+(4*8)]", "%rd1", 32),
    ("[%rd1+4*8]", "%rd1", 32),
    ("[%rd1+2*(3+1)]", "%rd1", 8),
    ("[%rd1+0x10]", "%rd1", 16),
    ("[%rd1+077]", "%rd1", 63),
    ("[%rd1+0b101]", "%rd1", 5),
    ("[%rd1+1U]", "%rd1", 1),
    ("[%rd1+(-4)]", "%rd1", -4),
    ("[%rd1+-(4)]", "%rd1", -4),
    ("[%rd1+ +4]", "%rd1", 4),
    ("[%rd1+(1<<4)]", "%rd1", 16),
    ("[%rd1+(8>>1)]", "%rd1", 4),
    ("[%rd1+~3]", "%rd1", -4),
    ("[%rd1+16/4]", "%rd1", 4),
    ("[%rd1+(-7)/2]", "%rd1", -3),
    ("[%rd1+17 % 5]", "%rd1", 2),
    ("[%rd1+(5&3)]", "%rd1", 1),
    ("[%rd1+(5|2)]", "%rd1", 7),
    ("[%rd1+(5^1)]", "%rd1", 4),
    ("[%rd1+!0]", "%rd1", 1),
    ("[%rd1+(2<3)]", "%rd1", 1),
    ("[%rd1+(1?4:8)]", "%rd1", 4),
    ("[%rd1+0]", "%rd1", 0),
    ("[%rd1+9223372036854775807]", "%rd1", 2**63 - 1),
    ("[gsym]", "gsym", 0),
    ("[gsym+4]", "gsym", 4),
    ("[gsym+4+8]", "gsym", 12),
    ("[gsym+(2*8)+4]", "gsym", 20),
    ("[gsym+0x10-4]", "gsym", 12),
]

HEAD = (".version 8.0\n.target sm_90a\n.address_size 64\n\n.global .align 4 .b8 gsym[4096];\n\n"
        ".visible .entry k()\n{\n\t.reg .b32 \t%r<10>;\n\t.reg .b64 \t%rd<10>;\n\n"
        "\tmov.u64 \t%rd1, gsym;\n")


def _module(lines):
    return HEAD + "".join(f"\t{s}\n" for s in lines) + "\tret;\n}\n"


def _addresses(m):
    return [s.operands[1] for s in m.items[1].body if getattr(s, "opcode", "") == "ld"]


def test_every_address_form_ptxas_accepts_parses_prints_and_round_trips():
    text = _module([f"ld.global.u32 %r1, {a};" for a, _, _ in FORMS])
    ptxas_check(text, "sm_90a")               # the forms as written: ptxas takes them all
    m = parse(text)
    got = _addresses(m)
    assert [(a.base.name, a.offset) for a in got] == [(b, o) for _, b, o in FORMS]
    printed = emit(m)
    ptxas_check(printed, "sm_90a")            # and the printer's spelling of them
    assert emit(parse(printed)) == printed    # stable
    assert "\tld.global.u32 \t%r1, [%rd1+416];\n" in printed
    assert "\tld.global.u32 \t%r1, [%rd1+-4];\n" in printed
    assert "\tld.global.u32 \t%r1, [gsym+12];\n" in printed


def test_llvm_matrix_kernel_addresses_with_several_offsets():
    text = _module(["ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+288+128];",
                    "st.global.v4.u32 [%rd1+512+128+16], {%r1, %r2, %r3, %r4};",
                    "mov.u64 %rd2, gsym+4+8;"])
    ptxas_check(text, "sm_90a")
    m = parse(text)
    body = [s for s in m.items[1].body if getattr(s, "opcode", "") in ("ld", "st", "mov")]
    assert body[1].operands[1] == Addr(body[1].operands[1].base, 416)
    assert body[2].operands[0] == Addr(body[2].operands[0].base, 656)
    assert body[3].operands[1] == Sym("gsym", 12)
    printed = emit(m)
    ptxas_check(printed, "sm_90a")
    assert emit(parse(printed)) == printed


@pytest.mark.parametrize("address, column, token", [
    ("[4+%rd1]", 24, "%rd1"),          # ptxas: syntax error near '%rd1'
    ("[gsym+%rd1]", 27, "%rd1"),       # a register offset: not an address
    ("[(%rd1)]", 23, "%rd1"),
    ("[%rd1+(-7)%2]", 31, "%2"),       # ``%2`` is a register name, as ptxas reads it
    ("[%rd1+4/0]", 28, "/"),
])
def test_address_forms_ptxas_refuses_are_refused(address, column, token):
    with pytest.raises(ParseError) as e:
        parse(_module([f"ld.global.u32 %r1, {address};"]))
    assert (e.value.line, e.value.column, e.value.token) == (13, column, token)
