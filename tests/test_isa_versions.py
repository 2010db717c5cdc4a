"""The ISA table's minimum PTX versions and architectures, checked against ptxas.

Parser-free: the family kernels' PTX text (every form of every family, see the other
``test_isa_*`` files) is re-targeted and its ``.version`` line replaced, and ptxas's per-line
errors are read back. For every instruction line of a target the table supports:

- at the table's minimum PTX version (the form's, raised by gated options) ptxas accepts it;
- one ISA version below, ptxas rejects that line (when the target itself exists there);

and every line the table rejects for a target (minimum arch, ``a``-only features) is rejected
by ptxas for it. One ptxas run per (kernel, target, version), run in parallel.

The newest ptxas is in places more lenient than the ISA text: it accepts an instruction at an
older ``.version`` than the ISA's "PTX ISA Notes" give. The ISA text wins there (the table keeps
the documented version, so emitted modules carry the version the ISA promises); each such case
is listed in ``LENIENT`` with the ISA's words.
"""
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from jax_pyptx.errors import ArchError, PtxTypeError
from jax_pyptx.ir.nodes import Reg
from jax_pyptx.isa import check
from jax_pyptx.isa.model import parse_target, target_min_ptx

from . import test_isa_arith as A, test_isa_hopper_blackwell as H, test_isa_memory as M
from . import test_isa_mma as W, test_isa_options as O, test_isa_extra as X
from .isa_util import VERSIONS, instruction_lines, prev_version, ptxas_errors

# (kernel, targets it is re-targeted to)
PROBES = (
    (O.sweep_sm100, ("sm_75", "sm_80", "sm_90", "sm_90a", "sm_100", "sm_100a")),
    (O.sweep_sm90, ("sm_90a",)),
    (A.arith_sm100, ("sm_75", "sm_80", "sm_90", "sm_100a")),
    (M.mem_sm100, ("sm_75", "sm_80", "sm_90", "sm_90a", "sm_100a")),
    (M.misc_sm90, ("sm_90", "sm_90a")),
    (W.mma_sm100, ("sm_75", "sm_80", "sm_90", "sm_100", "sm_100a")),
    (W.wgmma_sm90, ("sm_90", "sm_90a")),
    (H.hopper, ("sm_80", "sm_90", "sm_90a")),
    (H.blackwell, ("sm_90a", "sm_100", "sm_100a")),
    (H.blackwell_pair, ("sm_100a",)),
    (M.calls_sm80, ("sm_75", "sm_80", "sm_90a")),
    (X.legacy_sm80, ("sm_75", "sm_80", "sm_90", "sm_100a")),
    (X.tensormap_sm90, ("sm_90", "sm_90a", "sm_100a")),
    (X.tensormap_sm100, ("sm_90a", "sm_100a", "sm_120a")),
    (X.multimem_sm90, ("sm_80", "sm_90", "sm_100a")),
)

# ptxas 13.5 accepts these one version below the ISA's minimum; the ISA text wins.
# (instruction, modifier) -> what the ISA says
LENIENT = {
    ("mbarrier.test_wait", ".parity"):
        "mbarrier \"PTX ISA Notes\": test_wait.parity introduced in PTX ISA version 7.1 "
        "(cuda::ptx, generated from the ISA, tags it \"PTX ISA 71, SM_80\"); ptxas takes 7.0",
    ("cp.async", ".shared::cta"):
        "cp.async \"PTX ISA Notes\": the ::cta sub-qualifier of .shared from PTX ISA 7.8 "
        "(as for every .shared::cta); ptxas takes 7.7",
}


def _key(ins):
    return ins.opcode + "".join(ins.modifiers)


def _lenient(ins):
    return any(ins.opcode == name and mod in ins.modifiers for name, mod in LENIENT)


_DSL_REG = re.compile(r"^%[a-z]+\d+$")


def _plan(k, arch):
    """Per instruction line: the table's (form or None when unsupported) for ``arch``. Moves
    from special registers are left out: their arch needs are not the table's (``%cluster_*``
    is sm_90)."""
    target = parse_target(arch)
    rows = []
    for line, ins in instruction_lines(k):
        if ins.opcode == "mov" and any(type(o) is Reg and not _DSL_REG.match(o.name)
                                       for o in ins.operands):
            continue
        try:
            form = check(ins, target)
        except (ArchError, PtxTypeError):   # PtxTypeError: see the report on validate.py
            form = None
        rows.append((line, ins, form))
    return rows


def probe(k, arch, pool):
    """Mismatches between the table and ptxas for kernel ``k`` re-targeted to ``arch``."""
    rows = _plan(k, arch)
    t_min = target_min_ptx(parse_target(arch))
    top = max([t_min] + [f.min_ptx for _, _, f in rows if f is not None])
    want = {top}
    for _, _, f in rows:
        if f is not None:
            want.add(max(f.min_ptx, t_min))
            if f.min_ptx > t_min:
                want.add(prev_version(f.min_ptx))
    text = k.ptx()
    versions = sorted(want)
    errs = dict(zip(versions, pool.map(lambda v: ptxas_errors(text, arch, v), versions)))
    out = []
    if 0 in errs[top]:
        return [f"{k.name}@{arch}: ptxas fatal: {errs[top][0]}"]
    for line, ins, form in rows:
        where = f"{k.name}@{arch} line {line} {_key(ins)}"
        if form is None:
            if line not in errs[top]:
                out.append(f"{where}: the table rejects it for {arch}, ptxas accepts it")
            continue
        at = max(form.min_ptx, t_min)
        if line in errs[top] or line in errs[at]:
            out.append(f"{where}: rejected at the table's PTX {at}: "
                       f"{(errs[top].get(line) or errs[at][line])[0]}")
            continue
        if form.min_ptx > t_min:
            below = prev_version(form.min_ptx)
            if line not in errs[below] and not _lenient(ins):
                out.append(f"{where}: accepted at PTX {below}, below the table's "
                           f"{form.min_ptx}")
    return out


def _run(k, archs):
    with ThreadPoolExecutor(8) as pool:
        return [m for arch in archs for m in probe(k, arch, pool)]


@pytest.mark.parametrize("k,archs", PROBES, ids=lambda p: getattr(p, "name", None))
def test_min_version_and_arch_agree_with_ptxas(k, archs):
    left = _run(k, archs)
    assert left == [], "\n".join(left)


def test_versions_list_is_the_isa_history():
    assert VERSIONS[0] == (6, 0) and VERSIONS[-1] == (9, 1)
    assert prev_version((7, 0)) == (6, 5) and prev_version((8, 0)) == (7, 8)
