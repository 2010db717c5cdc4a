"""Immediates print by the operand's kind in the ISA table, and every form of the table takes
integer immediates through ``ptx.inst`` as ptxas does.

Issue 15: immediates were typed by the instruction's type suffix, so
``wgmma...f32.bf16.bf16(acc, a, b, p, 1, 1, 0, 0)`` printed its scale and transpose flags as
bf16 bit patterns (``0x3F80``), which ptxas rejects. Here every form of the table is emitted
once through ``ptx.inst`` (its attribute chain spelled as a user writes it) with a Python int in
every operand that may be an immediate (``i`` operands, ``s`` sources, wgmma / tcgen05
predicate flags), each int inside the range the table records, and ptxas must accept every
line. The forms are batched into one kernel per target (a few ptxas runs in all).
"""
import keyword
import re
from functools import reduce

import pytest

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.ir.nodes import Addr, PredPair, Sink, Vec
from jax_pyptx.isa import TABLE
from jax_pyptx.isa.model import ChosenRange, parse_target
from jax_pyptx.isa.validate import effective, no_immediates, specs_of
from jax_pyptx.types import b32, by_name, e4m3, is_type_name, pred, u32, u64

from .isa_util import coord_count, ptxas_errors
from .test_isa_options import _reg_type, _type, instances

# forms whose operands the generic builder cannot make (labels, call lists, free-form)
TARGETS = ("sm_90a", "sm_100a", "sm_120a", "sm_80")


def _in_range(spec, chosen, default=1):
    """An int the operand's recorded range allows (``default`` when it records none)."""
    r = spec.range
    if isinstance(r, ChosenRange):
        r = r.pick(chosen)
    if r is None:
        return default
    if r.values:
        return r.values[-1]
    return r.lo if r.lo else (r.step if r.hi is None or r.step <= r.hi else 0)


class _IR:
    """An IR operand passed through ``ptx.inst`` as is (``d|p`` pairs, the sink ``_``)."""

    def __init__(self, node):
        self.node = node

    def __ptx_operand__(self):
        return self.node


def _imm_operands(form, chosen, address):
    """Operands for one instance: a Python int wherever the form takes an immediate."""
    ops = []
    for sp in specs_of(form):
        t = _type(sp.type, chosen)
        if sp.kind in ("l", "x", "a"):
            return None
        if sp.kind in ("d", "s", "r", "dp") and sp.type is None:
            base = _type("type", chosen)
            t = by_name(f"b{base.bits * 2}") if chosen.get("mode") == ".wide" else b32
        if sp.optional:
            break
        if sp.kind == "i" or (sp.kind == "s" and not (t is not None and no_immediates(t))):
            ops.append(_in_range(sp, chosen))
        elif sp.kind == "p" and form.name.startswith(("wgmma.mma_async", "tcgen05.mma")):
            ops.append(1)
        elif sp.kind in ("d", "r", "s", "dp"):   # (a .f16 / packed source: a register)
            if t is not None and t.name == "b8":   # packed fp4 pairs: a real .b8 register
                ops.append(reg.scalar(e4m3))
            else:
                ops.append(reg.scalar(_reg_type(t) if t is not None else b32))
        elif sp.kind == "_":
            ops.append(_IR(Sink()))
        elif sp.kind == "d|p":
            ops.append(_IR(PredPair(reg.scalar(_reg_type(t)).ir, reg.scalar(pred).ir)))
        elif sp.kind in ("p", "pd", "pq"):
            ops.append(reg.scalar(pred))
        elif sp.kind == "m":
            ops.append(ptx.addr(address))
        elif sp.kind in ("t", "tx"):
            n = coord_count(sp, chosen, form)
            items = [reg.scalar(_reg_type(t)).ir for _ in range(n)]
            if sp.kind == "tx" and chosen.get("geom", "").startswith(".a"):
                items[0] = reg.scalar(u32).ir
            ops.append(Addr(address.ir, 0, (Vec(tuple(items)),)))
        elif sp.kind == "v":
            n = sp.count or (form.count_rule(sp.rule)(chosen) if sp.rule else 0)
            if not n:
                vec = chosen.get(form.vec_group, "")
                n = int(vec[2:]) if vec[2:].isdigit() else 2
            rt = e4m3 if form.name == "mov" and t is not None and t.bits == 8 else _reg_type(t)
            ops.append(reg.array(rt, n))
    return ops


def _attr(part: str) -> str:
    """A modifier as a user spells it in the ``ptx.inst`` chain (``.shared::cta`` ->
    ``shared__cta``, ``.global`` -> ``global_``, ``.2d`` -> ``_2d``)."""
    a = part.replace("::", "__")
    if a[0].isdigit():
        a = "_" + a
    if keyword.iskeyword(a) or a in ("async",):
        a += "_"
    return a


def _is_float(mod) -> bool:
    return mod is not None and is_type_name(mod) and by_name(mod).kind in ("float", "packed")


def _cvt_rounding(form, chosen):
    """cvt between integer and float types needs a rounding modifier (the ISA's rule, not
    in the table): the form's own rounding group, or a float source for an integer-rounding
    form."""
    groups = {g.name: g for g in form.groups}
    d, a = chosen.get("dtype"), chosen.get("atype")
    if ".bf16" in (d, a):
        # bf16 <-> 8-bit integers need .b8 registers, which the DSL keeps integers out of:
        # take the 16-bit integer option
        for g in ("dtype", "atype"):
            if chosen.get(g) in (".u8", ".s8"):
                chosen = {**chosen, g: chosen[g][:2] + "16"}
        d, a = chosen.get("dtype"), chosen.get("atype")
    if d is None or a is None or _is_float(d) == _is_float(a):
        return chosen
    if "frnd" in groups and _is_float(d):
        return {**chosen, "frnd": ".rn"}
    if "irnd" in groups and _is_float(a):
        return {**chosen, "irnd": ".rni"}
    # a form whose rounding group cannot round this way: a float type on the other side
    side = "atype" if "irnd" in groups else "dtype"
    floats = [o for o in groups[side].options if _is_float(o)]
    return {**chosen, side: floats[0]} if floats else chosen


def _instance(form):
    """(chosen modifiers, modifiers, the first target that runs them)."""
    chosen = instances(form)[0]
    if form.family == "cvt":
        chosen = _cvt_rounding(form, chosen)
    mods = tuple(chosen[g.name] for g in form.groups if g.name in chosen)
    eff = effective(form, mods)
    return chosen, mods, next((a for a in TARGETS if parse_target(a).supports(eff)), None)


def _sweep(arch):
    address = reg.from_(ptx.special.globaltimer(), u64)
    tmem = reg.scalar(u32, 0)         # Tensor Memory addresses are 32-bit
    for f in (f for forms in TABLE.values() for f in forms):
        chosen, mods, target = _instance(f)
        if target != arch:
            continue
        ops = _imm_operands(f, chosen, tmem if f.family == "tcgen05" else address)
        if ops is None:
            continue
        parts = (f.name + "".join(mods)).replace("::", "__").split(".")
        chain = reduce(getattr, [_attr(p.replace("__", "::")) for p in parts], ptx.inst)
        chain(*ops)
    ptx.ret()


def _kernel(arch):
    @kernel(arch=arch, block=(128, 1, 1), cluster=(2, 1, 1) if arch != "sm_80" else (1, 1, 1))
    def imm_sweep():
        _sweep(arch)
    return imm_sweep


KERNELS = {arch: _kernel(arch) for arch in TARGETS}


@pytest.mark.parametrize("arch", TARGETS)
def test_every_form_takes_integer_immediates_through_ptx_inst(arch):
    k = KERNELS[arch]
    text = k.ptx()
    version = tuple(map(int, re.search(r"^\.version (\d+)\.(\d+)$", text, re.M).groups()))
    errs = ptxas_errors(text, arch, version)
    lines = text.split("\n")
    bad = [f"{lines[n - 1].strip()}: {m[0]}" if n else m[0] for n, m in sorted(errs.items())]
    assert bad == [], "\n".join(bad)
