"""Printer properties over the whole corpus.

* ``parse(print(parse(x))) == parse(x)`` and printing is a fixed point.
* ptxas accepts the printed text whenever it accepts the original. Where the available
  ptxas is older than the file's PTX ISA (Triton 3.9 writes ``.version 9.4``; CUDA 13.0's
  ptxas takes 9.0, the ``nvidia-cuda-nvcc`` wheel's 13.5 takes it), both texts are judged
  again with ``.version`` lowered to the newest ISA that ptxas takes; otherwise the printed
  text must be rejected for the same reasons as the original.
* The printer works from the IR: an edit to the IR shows up in the text.
"""
from __future__ import annotations

import concurrent.futures as cf
import functools
import re

import pytest

from jax_pyptx import emit, parse
from jax_pyptx.ir.nodes import Function, Imm, Instruction, Reg

from .corpus import corpus_files, ptxas, ptxas_check, read

FILES = corpus_files()
_VERSION = re.compile(r"^\.version\s+\d+\.\d+", re.M)


def test_corpus_is_big_enough():
    kinds = {f.split("/")[0] for f in FILES}
    assert len(FILES) >= 100, len(FILES)
    assert {"cuda", "triton"} <= kinds


@pytest.mark.parametrize("rel", FILES)
def test_roundtrip(rel):
    text = read(rel)
    m = parse(text, rel)
    printed = emit(m)
    m2 = parse(printed, rel + ":printed")
    assert m2 == m
    assert emit(m2) == printed


@pytest.fixture(scope="module")
def ptxas_results():
    """ptxas on every original and its printed form, two at a time (the machine's cores)."""
    if ptxas() is None:
        pytest.skip("ptxas not found")

    def job(rel):
        text = read(rel)
        printed = emit(parse(text, rel))
        orig, prt = ptxas_check(text), ptxas_check(printed)
        if not orig[0] and any("Unsupported .version" in e for e in orig[1]):
            # an older ptxas than the file's PTX ISA (Triton's 9.4 vs CUDA 13.0's 9.0): judge
            # both texts again at the newest ISA this ptxas takes
            newest = re.search(r"current version is '(\d+\.\d+)'", " ".join(orig[1]))
            if newest:
                down = functools.partial(_VERSION.sub, f".version {newest.group(1)}")
                orig, prt = ptxas_check(down(text)), ptxas_check(down(printed))
        return rel, orig, prt

    with cf.ThreadPoolExecutor(max_workers=4) as ex:
        return {rel: (a, b) for rel, a, b in ex.map(job, FILES)}


@pytest.mark.parametrize("rel", FILES)
def test_ptxas_accepts_printed(rel, ptxas_results):
    (ok_orig, err_orig), (ok_printed, err_printed) = ptxas_results[rel]
    if ok_orig:
        assert ok_printed, f"ptxas rejects the printed text of {rel}: {err_printed}"
    else:
        # the original is rejected by this ptxas (a newer .version, say): same verdict
        assert not ok_printed and err_printed == err_orig


def test_most_originals_accepted(ptxas_results):
    """The corpus is real, accepted PTX (all of it with a ptxas new enough for Triton)."""
    accepted = [rel for rel, ((ok, _), _) in ptxas_results.items() if ok]
    nv = [rel for rel in FILES if rel.startswith("cuda/")]
    assert all(ptxas_results[rel][0][0] for rel in nv), [
        (rel, ptxas_results[rel][0][1]) for rel in nv if not ptxas_results[rel][0][0]]
    assert len(accepted) >= len(nv)


def test_printer_prints_the_ir_not_the_source():
    text = read("cuda/vector_add.sm80.ptx")
    m = parse(text)
    f = m.functions[0]
    assert isinstance(f, Function)
    ins = next(s for s in f.body if isinstance(s, Instruction) and s.opcode == "add"
               and ".f32" in s.modifiers)
    ins.modifiers = (".rn",) + ins.modifiers
    old_name, f.name = f.name, "renamed_kernel"
    f.body.insert(len(f.body) - 1, Instruction("mov", (".u32",), (Reg("%r1"), Imm("0x7"))))
    out = emit(m)
    assert "add.rn.f32" in out
    assert ".entry renamed_kernel(" in out and ".entry " + old_name not in out
    assert "mov.u32 \t%r1, 0x7;\n\tret;" in out
    # comments of the source are not kept: the text comes from the IR
    assert "NVIDIA" not in out


def test_printing_is_deterministic():
    text = read("triton/matmul_f16_sm90.ptx")
    assert emit(parse(text)) == emit(parse(text))


def _corpus_opcodes() -> set:
    from jax_pyptx.ir.nodes import Block

    ops = set()

    def walk(stmts):
        for s in stmts:
            if isinstance(s, Block):
                walk(s.body)
            elif isinstance(s, Instruction):
                ops.add(s.opcode)

    for rel in FILES:
        for f in parse(read(rel), rel).functions:
            walk(f.body or [])
    return ops


def test_corpus_covers_every_isa_family():
    """Every instruction family of the ISA table appears in the corpus, and most of the
    table's instruction names do."""
    from jax_pyptx.isa import TABLE

    ops = _corpus_opcodes()
    families: dict = {}
    for name, forms in TABLE.items():
        for form in forms:
            families.setdefault(form.family, set()).add(name)
    missing = {fam for fam, names in families.items() if not names & ops}
    assert not missing, f"families with no instruction in the corpus: {sorted(missing)}"
    known = set(TABLE)
    assert len(known & ops) >= 0.8 * len(known), sorted(known - ops)
