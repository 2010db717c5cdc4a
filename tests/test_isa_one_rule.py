"""One selection rule: ``isa.decode`` (interpreter, transpiler) and the validator choose the
same form for every instruction of the test corpora (``validate.select``), and the rule needs
no target: no instruction of the corpora or of the family tests' kernels fits two forms that
ask for different archs or PTX versions."""
import glob
import os
import re

import pytest

from jax_pyptx import parse
from jax_pyptx.ir.nodes import Block, Instruction
from jax_pyptx.isa import ALIASES, TABLE, check, decode
from jax_pyptx.isa.model import parse_target
from jax_pyptx.isa.validate import fitting, select
from jax_pyptx.text.parser import parse_statements

from . import isa_orders

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "corpus", "**", "*.ptx"), recursive=True) +
               glob.glob(os.path.join(HERE, "corpus_hopper", "**", "*.ptx"), recursive=True))
_VERSION = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.M)
_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)", re.M)


def _walk(stmts):
    for s in stmts:
        if type(s) is Block:
            yield from _walk(s.body)
        elif type(s) is Instruction:
            yield s


def corpus_instructions():
    """``(file, target, version, instruction)`` of every instruction of the corpora."""
    for path in FILES:
        with open(path) as f:
            text = f.read()
        target = parse_target(_TARGET.search(text).group(1))
        version = tuple(int(x) for x in _VERSION.search(text).groups())
        for item in parse(text, path).items:
            for s in _walk(getattr(item, "body", None) or ()):
                yield os.path.relpath(path, HERE), target, version, s


def disagreements():
    """``(file, instruction, validator's form, decode's form)`` where they differ, and the
    number of instructions compared."""
    out, n = [], 0
    for rel, target, version, s in corpus_instructions():
        n += 1
        form = check(s, target, version)
        d = decode(s)
        if d.form is not form:
            out.append((rel, s.full_opcode, form.describe(), d.form.describe()))
        elif dict(d.chosen) != select(s, _forms(s)).chosen.chosen:
            out.append((rel, s.full_opcode, "modifiers", dict(d.chosen)))
    return out, n


def test_decode_and_the_validator_choose_the_same_form_for_every_corpus_instruction():
    bad, n = disagreements()
    assert n > 45_000 and len(FILES) > 120
    assert bad == []


def _forms(s):
    return TABLE.get(s.opcode) or TABLE.get(ALIASES.get(s.opcode, ""), [])


def _ambiguous(instructions):
    out = set()
    for s in instructions:
        fits = fitting(s, _forms(s))
        if len({(c.form.min_sm, c.form.archs, c.form.min_ptx) for c in fits}) > 1:
            out.add((s.full_opcode, tuple(c.form.describe() for c in fits)))
    return sorted(out)


def test_no_corpus_instruction_fits_forms_of_different_requirements():
    assert _ambiguous(s for *_, s in corpus_instructions()) == []


def test_no_family_test_instruction_fits_forms_of_different_requirements():
    from .isa_util import _walk as walk, functions

    ins = [s for k in isa_orders.kernels() for fn in functions(k.module())
           for s in walk(fn.body) if type(s) is Instruction]
    assert len(ins) > 10_000
    assert _ambiguous(ins) == []


@pytest.mark.parametrize("line, operands", [
    ("mov.b64 %rd1, {%r1, %r2};", ("d:type", "v2:b32")),          # pack
    ("mov.b64 {%r1, %r2}, %rd1;", ("v2:b32", "r:type")),          # unpack
    ("mov.b64 %rd1, %rd2;", ("d:type", "s:type")),
    ("mov.b32 %r1, {%rs1, %rs2};", ("d:type", "v2:b16")),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.u32 [%r1], {%r2, %r3}, [%r4];",
     ("m", "v:type", "m")),
])
def test_decode_reads_the_operands(line, operands):
    """The instructions the two rules used to split on (``mov`` pack / unpack, ``st.async``
    vectors): the operands choose the form."""
    assert decode(parse_statements(line)[0]).form.operands == operands


def test_tcgen05_mma_forms_follow_the_operands():
    """The A operand in tensor memory (``[a]``) or a descriptor, with or without the
    disable-output-lane vector."""
    text = ("tcgen05.mma.cta_group::1.kind::tf32 [%r1], [%r2], %rd1, %r3, %p1;",
            "tcgen05.mma.cta_group::1.kind::tf32 [%r1], %rd2, %rd1, %r3, %p1;",
            "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd2, %rd1, %r3, "
            "{%r1, %r1, %r1, %r1}, %p1;")
    got = [decode(parse_statements(t)[0]).form.operands for t in text]
    assert got == [("m", "m", "r:b64", "r:b32", "p", "i?=0..15"),
                   ("m", "r:b64", "r:b64", "r:b32", "p", "i?=0..15"),
                   ("m", "r:b64", "r:b64", "r:b32", "v@lanes:b32", "p", "i?=0..15")]
