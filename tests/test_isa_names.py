"""Instruction names come from the ISA table only: compound names and the parser's known words
are derived from it, every table name splits back to itself, and ``text/`` and ``transpile/``
keep no opcode or modifier string tables of their own (an AST scan, proven to catch the hand
lists they used to keep)."""
from __future__ import annotations

import ast
import os

import pytest

from jax_pyptx import isa, parse
from jax_pyptx.errors import ParseError
from jax_pyptx.isa import ALIASES, COMPOUND_NAMES, INSTRUCTION_WORDS, TABLE, split_opcode
from jax_pyptx.isa.opcodes import table_name

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "jax_pyptx")


# ----------------------------------------------------------------------------- derived names
def test_compound_names_are_the_dotted_table_names_and_the_cta_barrier_spellings():
    assert COMPOUND_NAMES == {n for n in TABLE if "." in n} | set(ALIASES)
    assert ALIASES == {
        "bar.cta.sync": "bar.sync", "bar.cta.arrive": "bar.arrive", "bar.cta.red": "bar.red",
        "barrier.cta.sync": "barrier.sync", "barrier.cta.arrive": "barrier.arrive",
        "barrier.cta.red": "barrier.red",
    }
    assert table_name("barrier.cta.red") == "barrier.red" and table_name("ld") == "ld"


def test_every_table_name_splits_back_to_itself():
    for name in TABLE:
        assert split_opcode(name) == (name, ()), name
        for f in TABLE[name]:
            mods = tuple(g.options[0] for g in f.groups if g.required)
            assert split_opcode(name + "".join(mods)) == (name, mods), f.describe()
    for alias in ALIASES:
        assert split_opcode(alias + ".aligned") == (alias, (".aligned",))


def test_spellings_the_old_hand_list_held_split_as_the_table_names_them():
    assert split_opcode("match.any.sync.b32") == ("match", (".any", ".sync", ".b32"))
    assert split_opcode("cp.async.mbarrier.arrive.noinc.shared.b64") == \
        ("cp.async.mbarrier.arrive", (".noinc", ".shared", ".b64"))


def test_parser_knows_exactly_the_first_words_of_the_table():
    from jax_pyptx.text.parser import KNOWN_INSTRUCTIONS

    assert KNOWN_INSTRUCTIONS is INSTRUCTION_WORDS
    assert INSTRUCTION_WORDS == {n.split(".")[0].split("::")[0] for n in TABLE}
    head = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
    m = parse(head + "barrier.cta.sync.aligned 0;\nret;\n}\n")
    ins = m.functions[0].body[0]
    assert (ins.opcode, ins.modifiers) == ("barrier.cta.sync", (".aligned",))
    with pytest.raises(ParseError) as e:
        parse(head + "vadd.u32.u32.u32 %r1, %r2, %r3;\n}\n")
    assert "unknown instruction 'vadd'" in str(e.value)


def test_an_immediate_takes_the_instruction_type_by_the_isa_rule():
    """The last type modifier types an instruction (``isa.type_of``): the DSL prints an
    immediate by it, and the transpiler writes a Python int only for an immediate that
    re-traces to the same text under it."""
    from jax_pyptx import kernel, ptx, reg
    from jax_pyptx.transpile import transpile
    from jax_pyptx.types import f32, u16

    assert isa.type_of((".rn", ".f16", ".f32")).name == "f32"

    @kernel(arch="sm_90a")
    def k():
        f, h = reg.scalar(f32), reg.scalar(u16)
        ptx.inst.add.rn.f32(f, f, 1)      # an int for an f32 instruction
        ptx.inst.add.u16(h, h, 65535)
        ptx.ret()

    text = k.ptx()
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert "add.rn.f32 %f0, %f0, 0f3F800000;" in lines and "add.u16 %rs0, %rs0, 65535;" in lines
    src = transpile(text)
    assert "ptx.raw_imm('0f3F800000')" in src and ", 65535)" in src


# ----------------------------------------------------------------------------- no own tables
# The declaration grammar (``.global .u32 x;``, ``.ptr .shared``, ``.reg .v4 .f32 v;``): the
# parser must know these state spaces and vector widths for variable declarations, which the
# instruction table does not describe.
DECLARATIONS = {".reg", ".sreg", ".const", ".global", ".local", ".param", ".shared", ".tex",
                ".v2", ".v4", ".v8"}
OPTIONS = {o for forms in TABLE.values() for f in forms for g in f.groups for o in g.options}


def _is_opcode(s: str) -> bool:
    if s in TABLE or s in ALIASES:
        return True
    return "." in s and s.split(".")[0] in INSTRUCTION_WORDS and \
        split_opcode(s)[0] in COMPOUND_NAMES | set(TABLE)


def _strings(node) -> list:
    out = []
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        items = node.elts
    elif isinstance(node, ast.Dict):
        items = [k for k in node.keys if k is not None] + node.values
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "split" and isinstance(node.func.value, ast.Constant) and \
            isinstance(node.func.value.value, str):
        return node.func.value.value.split()
    else:
        return out
    for i in items:
        if isinstance(i, ast.Constant) and isinstance(i.value, str):
            out.append(i.value)
    return out


def own_tables(source: str) -> list:
    """What in ``source`` is an opcode or modifier table of its own: a collection literal
    (anywhere) with two or more opcode strings, or two or more instruction modifiers other
    than the declaration grammar's; a comparison against a dotted instruction name (dispatch by name)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        strs = _strings(node)
        ops = [s for s in strs if _is_opcode(s)]
        mods = [s for s in strs if s in OPTIONS and s not in DECLARATIONS]
        if len(ops) >= 2 or len(mods) >= 2:
            found.append((node.lineno, sorted(set(ops + mods))[:4]))
        if isinstance(node, ast.Compare):
            for c in [node.left] + node.comparators:
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and \
                        "." in c.value and _is_opcode(c.value):
                    found.append((node.lineno, [c.value]))
    return found


OLD_HAND_LISTS = [
    # isa/opcodes.py's compound names
    'COMPOUND_NAMES = frozenset({"cp.async", "cp.async.bulk.tensor", "bar.sync", '
    '"mbarrier.try_wait", "activemask"})',
    # the parser's instruction words
    'KNOWN_INSTRUCTIONS = frozenset("""\nabs activemask add addc bar barrier\n""".split())',
    # the transpiler's opcode -> wrapper map and its modifier tests
    'def f(op, mods, n):\n'
    '    if op == "wgmma.fence" and n == 0:\n        return "ptx.wgmma.fence"\n'
    '    simple = {"tcgen05.wait::ld": "wait_ld", "tcgen05.wait::st": "wait_st"}\n'
    '    if mods[0] in (".sc", ".acq_rel"):\n        return "ptx.fence.fence"\n',
    '_WAITS = ("mbarrier.try_wait", "mbarrier.test_wait")',
]


@pytest.mark.parametrize("src", OLD_HAND_LISTS)
def test_the_scan_catches_the_hand_lists_that_used_to_exist(src):
    assert own_tables(src) != []


@pytest.mark.parametrize("layer", ["text", "transpile"])
def test_text_and_transpile_keep_no_opcode_or_modifier_tables(layer):
    found = {}
    for fn in sorted(os.listdir(os.path.join(PKG, layer))):
        if fn.endswith(".py"):
            with open(os.path.join(PKG, layer, fn)) as f:
                got = own_tables(f.read())
            if got:
                found[fn] = got
    assert found == {}
