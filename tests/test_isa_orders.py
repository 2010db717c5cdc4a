"""Modifier orders: the table takes the orders ptxas takes, and only those (``isa.orders``).

ptxas reads most modifiers in any order; the table's rule (ordered classes, pinned groups)
is checked against ptxas over every form's examples from the family tests' kernels
(``tests/isa_orders.py``): every adjacent exchange, and random orders the rule takes. The DSL
writes the ISA's order; PTX written in another order comes out as written.
"""
import pytest

from jax_pyptx import emit, kernel, parse, ptx, reg
from jax_pyptx.errors import ToolchainError, ValidationError
from jax_pyptx.isa import check, decode
from jax_pyptx.isa.model import parse_target
from jax_pyptx.isa.orders import PIN, _Rule, assignment, order_class
from jax_pyptx.types import b16, u32, u64

from . import isa_orders as O
from .isa_util import ptxas_errors


def _has_ptxas() -> bool:
    try:
        from jax_pyptx.toolchain import find_tool

        find_tool("ptxas")
        return True
    except ToolchainError:
        return False


needs_ptxas = pytest.mark.skipif(not _has_ptxas(), reason="ptxas not found")

# the issue's two lines, and their ISA spellings
ISSUE = (
    ("tcgen05.commit.cta_group::2.mbarrier::arrive::one.multicast::cluster.shared::cluster.b64 "
     "\t[%rd1], %rs1;",
     "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 "
     "\t[%rd1], %rs1;"),
    ("tcgen05.cp.cta_group::2.warpx4.32x128b \t[%r1], %rd1;",
     "tcgen05.cp.cta_group::2.32x128b.warpx4 \t[%r1], %rd1;"),
)


def _module(lines, arch="sm_100a", version="8.7"):
    body = "\n".join("\t" + line for line in lines)
    return (f".version {version}\n.target {arch}\n.address_size 64\n\n.visible .entry k()\n{{\n"
            "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .b16 %rs<4>;\n"
            f"{body}\n\tret;\n}}\n")


def _instructions(text):
    return [s for s in parse(text, check=False).items[-1].body if hasattr(s, "opcode")]


def test_the_issue_orders_decode_validate_and_print_as_written():
    target = parse_target("sm_100a")
    for written, isa in ISSUE:
        text = _module([written, isa])
        a, b = _instructions(text)[:2]
        assert a.modifiers != b.modifiers
        da, db = decode(a), decode(b)
        assert da.form is db.form and dict(da.chosen) == dict(db.chosen)
        assert check(a, target, (8, 7)) is check(b, target, (8, 7)) is da.form
        assert "\t" + written + "\n" in emit(parse(text))     # printed as written


@needs_ptxas
def test_the_issue_orders_assemble():
    for written, isa in ISSUE:
        assert ptxas_errors(_module([written, isa]), "sm_100a", (8, 7)) == {}


def test_dsl_writes_the_order_it_is_given():
    @kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1))
    def k():
        bar = reg.from_(ptx.special.globaltimer(), u64)
        mask = reg.scalar(b16, 3)
        ptx.inst.tcgen05.commit.cta_group__2.mbarrier__arrive__one.multicast__cluster\
            .shared__cluster.b64(ptx.addr(bar), mask)
        ptx.inst.tcgen05.commit.cta_group__2.mbarrier__arrive__one.shared__cluster\
            .multicast__cluster.b64(ptx.addr(bar), mask)
        ptx.inst.atom.u32.global_.add(reg.scalar(u32, 0), ptx.addr(bar), reg.scalar(u32, 1))
        ptx.ret()

    text = k.ptx()
    assert ("\ttcgen05.commit.cta_group::2.mbarrier::arrive::one.multicast::cluster"
            ".shared::cluster.b64 \t[%rd") in text
    assert ("\ttcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster"
            ".multicast::cluster.b64 \t[%rd") in text
    assert "\tatom.u32.global.add \t%r" in text


def test_ordered_classes_and_pins():
    """Exchanging two types is another instruction; pinned words keep their place."""
    target = parse_target("sm_90a")
    a, b, c = _instructions(_module(["cvt.rn.f32.s32 %r1, %r2;", "cvt.f32.rn.s32 %r1, %r2;",
                                     "cvt.rn.s32.f32 %r1, %r2;"], "sm_90a"))[:3]
    assert dict(decode(a).chosen) == dict(decode(b).chosen) == \
        {"frnd": ".rn", "dtype": ".f32", "atype": ".s32"}
    assert decode(c).get("dtype") == ".s32" and decode(c).get("atype") == ".f32"
    ld = _instructions(_module(["ld.v2.global.u32 {%r1, %r2}, [%rd1];"], "sm_90a"))[0]
    with pytest.raises(ValidationError, match=r"ld\.v2\.global\.u32: modifiers out of order; "
                                              r"write ld\.global\.v2\.u32"):
        check(ld, target)
    mul = _instructions(_module(["mul.u32.lo %r1, %r2, %r3;"], "sm_90a"))[0]
    with pytest.raises(ValidationError, match=r"write mul\.lo\.u32"):
        check(mul, target)


def _pinned(form, names, i) -> bool:
    """Whether the exchange at ``i`` moves a pinned group (its rule, vector types included)."""
    rule = _Rule(form)
    idx = [g.name for g in form.groups]
    full = (1 << len(form.groups)) - 1
    return any(rule.keep[idx.index(n)] | (1 << idx.index(n)) == full and
               order_class(form.groups[idx.index(n)]) in (PIN, "type")
               for n in (names[i], names[i + 1]))


@needs_ptxas
def test_every_adjacent_exchange_agrees_with_ptxas():
    """The table takes no exchange ptxas refuses; where it refuses one ptxas takes, a pinned
    group moved: a ``.vN`` or its type (ptxas's rule there depends on the type's width and the
    other modifiers: ``ld.global.b8.v2`` passes, ``ld.global.b64.v2`` warns), or a word the
    table pins as part of the name that ptxas reads so only sometimes (``wmma.load.sync.a``
    for some shapes)."""
    probes = O.swap_probes()
    verdicts = O.ptxas_verdicts(probes)
    assert len(probes) > 6000 and len(verdicts) > 5000
    forms = {(k.name, line): f for k, line, _, f in O.examples()}
    over, under = [], []
    for k, line, s, mods in probes:
        if (k.name, line, mods) not in verdicts:
            continue
        ptxas_ok = verdicts[(k.name, line, mods)] is None
        table_ok = O.table_accepts(s, mods, parse_target(k.arch), O._version(k.ptx()))
        text = s.opcode + "".join(mods)
        if table_ok and not ptxas_ok:
            over.append((text, verdicts[(k.name, line, mods)]))
        elif ptxas_ok and not table_ok:
            form = forms[(k.name, line)]
            i = next(j for j in range(len(mods)) if mods[j] != s.modifiers[j])
            if not _pinned(form, assignment(form, s.modifiers), i):
                under.append(text)
    assert over == []
    assert under == []


@needs_ptxas
def test_orders_the_table_takes_assemble():
    probes = O.order_probes(2)
    assert len(probes) > 3000
    for k, line, s, mods in probes:
        assert O.table_accepts(s, mods, parse_target(k.arch), O._version(k.ptx())), \
            s.opcode + "".join(mods)
    verdicts = O.ptxas_verdicts(probes)
    bad = sorted({s.opcode + "".join(m) + ": " + verdicts[(k.name, line, m)]
                  for k, line, s, m in probes if verdicts.get((k.name, line, m))})
    assert bad == []
