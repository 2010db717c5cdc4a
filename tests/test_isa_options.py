"""Every option of every group of every form, assembled by ptxas.

The family kernels (``test_isa_*``) exercise every form through the typed wrappers; here the
table itself is swept: for each form, one instruction with the required groups at their first
(ungated) option, then one per option of every group with that option swapped in, operands
built from the form's operand specs. Each sweep kernel must assemble with no error line: an
option ptxas rejects in every spelling is a table error. wgmma, tcgen05, TMA and mbarrier are
swept option by option by their family kernels; cvt's .dtype/.atype pairs follow the ISA's
rounding rules, which the table does not encode, and are swept by ``test_isa_arith``.
"""
import pytest

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.ir.nodes import Addr, PredPair, Sink, Vec
from jax_pyptx.isa import TABLE
from jax_pyptx.isa.model import parse_target
from jax_pyptx.isa.validate import effective, match_modifiers, specs_of
from jax_pyptx.types import b16, b32, by_name, e4m3, is_type_name, pred, s16, u16, u32, u64

from . import (test_isa_arith, test_isa_hopper_blackwell, test_isa_memory, test_isa_mma,
               test_isa_extra)
from .isa_util import _walk, assemble, coord_count, functions, inst, ptxas_errors

BY_KERNEL = {"wgmma", "tcgen05", "tma", "mbarrier", "cvt"}
# operands the generic builder cannot make: a .param::func address needs a .func parameter
SKIP_OPTIONS = {".param::func"}
IMM = {"applypriority": 128, "discard": 128, "fence.proxy": 128, "st.bulk": 0, "mma.sp": 0,
       "mma.sp::ordered_metadata": 0, "tensormap.cp_fenceproxy": 128,
       "cp.async": 16, "cp.async.wait_group": 0, "pmevent": 1, "setmaxnreg": 232}


def _type(spec_type, chosen):
    if spec_type is None:
        return None
    name = chosen.get(spec_type, spec_type).lstrip(".")
    return by_name(name) if is_type_name(name) else None


def _reg_type(t):
    """A register type for instruction type ``t`` (8-bit integers in 16-bit registers)."""
    if t is None:
        return b32
    if t.bits == 8 and t.kind != "packed":
        return {"unsigned": u16, "signed": s16}.get(t.kind, t if t.name == "b8" else b16)
    if t.kind == "packed" and t.bits == 16:
        return b16
    return t


def _operands(form, chosen, address):
    ops = []
    for i, sp in enumerate(specs_of(form)):
        t = _type(sp.type, chosen)
        if sp.kind in ("l", "x", "a"):
            return None
        if sp.kind in ("d", "s", "r", "dp") and sp.type is None:   # .wide results, dp4a's d, c
            base = _type("type", chosen)
            t = by_name(f"b{base.bits * 2}") if chosen.get("mode") == ".wide" else b32
        if sp.optional:
            break
        if sp.kind in ("d", "s", "r", "dp"):
            ops.append(reg.scalar(_reg_type(t) if t is not None else b32))
        elif sp.kind == "i":
            ops.append(IMM.get(form.name, 1))
        elif sp.kind == "_":
            ops.append(Sink())
        elif sp.kind == "d|p":      # a register and a predicate (a lone one is not allowed)
            ops.append(PredPair(reg.scalar(_reg_type(t)).ir, reg.scalar(pred).ir))
        elif sp.kind in ("p", "pd", "pq"):
            ops.append(reg.scalar(pred))
        elif sp.kind == "m":
            ops.append(ptx.addr(address))
        elif sp.kind in ("t", "tx"):      # [a, {coords}]: a 64-bit handle and the coordinates
            n = coord_count(sp, chosen, form)
            items = [reg.scalar(_reg_type(t)).ir for _ in range(n)]
            if sp.kind == "tx" and chosen.get("geom", "").startswith(".a"):
                items[0] = reg.scalar(u32).ir          # the array index
            ops.append(Addr(address.ir, 0, (Vec(tuple(items)),)))
        elif sp.kind == "v":
            n = sp.count or (form.count_rule(sp.rule)(chosen) if sp.rule else 0)
            if not n:
                vec = chosen.get(form.vec_group, "")
                n = int(vec[2:]) if vec[2:].isdigit() else 2
            if form.name == "mov" and t is not None and t.bits == 8:
                t = e4m3          # pack / unpack of bytes: real .b8 registers (fp8 values)
            else:
                t = _reg_type(t)
            ops.append(reg.array(t, n))
    return ops


def instances(form):
    """Modifier choices: the base (required groups at their first ungated option), then one
    per option of every group."""
    base = {}
    for g in form.groups:
        if g.required:
            gated = {o for o, *_ in g.gates}
            base[g.name] = ([o for o in g.options if o not in gated] or list(g.options))[0]
    out = [dict(base)]
    for g in form.groups:
        for o in g.options:
            if o not in SKIP_OPTIONS:
                out.append({**base, g.name: o})
    return out


def swept_forms():
    seen = set()
    for forms in TABLE.values():
        for f in forms:
            if id(f) not in seen and f.family not in BY_KERNEL:
                seen.add(id(f))
                yield f


def _sweep(arch):
    target = parse_target(arch)
    address = reg.from_(ptx.special.globaltimer(), u64)
    for f in swept_forms():
        for chosen in instances(f):
            mods = tuple(chosen[g.name] for g in f.groups if g.name in chosen)
            if not target.supports(effective(f, mods)):
                continue
            ops = _operands(f, chosen, address)
            if ops is not None:
                inst(f.name + "".join(mods), ops)
    ptx.ret()


@kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1))
def sweep_sm100():
    _sweep("sm_100a")


@kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1))
def sweep_sm90():
    _sweep("sm_90a")


@pytest.mark.parametrize("k", [sweep_sm100, sweep_sm90], ids=lambda k: k.name)
def test_every_option_assembles(k):
    import re

    text = k.ptx()
    version = tuple(map(int, re.search(r"^\.version (\d+)\.(\d+)$", text, re.M).groups()))
    errs = ptxas_errors(text, k.arch, version)
    lines = text.split("\n")
    bad = [f"{lines[n - 1].strip()}: {m[0]}" if n else m[0] for n, m in sorted(errs.items())]
    assert bad == [], "\n".join(bad)
    assemble(k)


def _options_used(kernels):
    """(form, group, option) of every instruction of the kernels, credited to every form
    whose groups take its modifiers and whose operand count fits (overlapping forms, e.g. a
    .global-only form and the all-spaces one, both see ``ld.global.cg.b32``)."""
    from jax_pyptx.ir.nodes import Instruction
    from jax_pyptx.isa import check

    seen = set()
    for k in kernels:
        target = parse_target(k.arch)
        for s in (s for fn in functions(k.module()) for s in _walk(fn.body)):
            if type(s) is not Instruction or check(s, target) is None:
                continue
            for base in TABLE[s.opcode]:
                specs = specs_of(base)
                chosen = match_modifiers(base, s.modifiers)
                if chosen is not None and sum(not x.optional for x in specs) <= \
                        len(s.operands) <= len(specs):
                    seen |= {(id(base), g, o) for g, o in chosen.items()}
    return seen


def test_every_option_of_every_form_is_exercised():
    kernels = [sweep_sm100, sweep_sm90, test_isa_arith.arith_sm100, test_isa_arith.arith_sm90,
               test_isa_memory.mem_sm100, test_isa_memory.misc_sm90, test_isa_mma.mma_sm80,
               test_isa_mma.mma_sm90, test_isa_mma.mma_sm100, test_isa_mma.wgmma_sm90,
               test_isa_hopper_blackwell.hopper, test_isa_hopper_blackwell.blackwell,
               test_isa_hopper_blackwell.blackwell_pair, test_isa_memory.calls_sm80,
               *test_isa_extra.KERNELS]
    seen = _options_used(kernels)
    left = sorted({(f.family, f.name, g.name, o) for forms in TABLE.values() for f in forms
                   for g in f.groups for o in g.options
                   if (id(f), g.name, o) not in seen and o not in SKIP_OPTIONS
                   and f.family != "cvt"})
    assert left == [], left
