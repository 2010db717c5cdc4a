"""The proofs of a library kernel without a GPU (DESIGN.md, "Working without a GPU"), as
functions the tests, the scripts and the doc generator share.

* ``resources(entry)``: ptxas (the newest found) at the entry's representative shape;
  ``resource_problems(report)`` lists spills and stack frames (a library kernel has none).
* ``sass_mnemonics(entry)``: the SASS opcodes nvdisasm shows (instructions predicated on
  ``@!PT``, ptxas's never-executed padding, left out), ``missing_sass`` the pattern's ones
  that are absent, ``local_memory`` any ``LDL``/``STL`` (local memory: spills or stack
  arrays).
* ``run_case(entry, case)``: the interpreter against the NumPy reference, within the
  hardware's precision (``TOLERANCE``, or the entry's own bound).
* ``counts_roofline(entry, devices)``: the roofline at the representative shape from the
  interpreter's counts at ``entry.count_shape``.

SASS names, found once with nvdisasm 13.5 (the sm_80 kernels here; sm_90a / sm_100a from
the corpus under ``tests/corpus``):

=====================================  ==========================================
PTX                                    SASS
=====================================  ==========================================
``mma.sync`` (f16/bf16 m16n8k16)       ``HMMA.16816.F32`` / ``HMMA.16816.F32.BF16``
``ldmatrix`` (.x4 / .x4.trans)         ``LDSM.16.M88.4`` / ``LDSM.16.MT88.4``
``cp.async.cg`` (16 bytes)             ``LDGSTS.E.BYPASS.128``
``cp.async.commit_group`` / wait       ``LDGDEPBAR`` / ``DEPBAR.LE``
``ld.global.v4`` / ``st.global.v4``    ``LDG.E.128`` / ``STG.E.128``
``shfl.sync.bfly``                     ``SHFL.BFLY``
``ex2.approx`` / ``rsqrt.approx``      ``MUFU.EX2`` / ``MUFU.RSQ``
``wgmma.mma_async`` (sm_90a)           ``HGMMA``
``cp.async.bulk.tensor`` load / store  ``UTMALDG`` / ``UTMASTG`` (reduce: ``UTMAREDG``)
``tcgen05.mma`` kind::f16 / f8f6f4     ``UTCHMMA`` / ``UTCQMMA`` (kind::i8: ``UTCIMMA``)
``tcgen05.ld`` / ``.st`` / ``.cp``     ``LDTM`` / ``STTM`` / ``UTCCP``
``tcgen05.commit`` / ``.alloc``        ``UTCBAR`` / ``UTCATOMSWS``
local memory (spills, stack)           ``LDL``, ``STL``
=====================================  ==========================================
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

__all__ = ["SASS", "TOLERANCE", "CaseResult", "resources", "resource_problems", "sass_mnemonics",
           "missing_sass", "local_memory", "count_prefix", "make_inputs", "run_case",
           "counts_roofline", "shape_text", "ptxas_info", "runs_on"]

# the table above as data: what an entry's ``sass`` lists for a pattern
SASS = {"mma.sync": "HMMA", "ldmatrix": "LDSM", "cp.async": "LDGSTS",
        "cp.async.wait_group": "DEPBAR", "ld.global.v4": "LDG.E.128", "st.global.v4": "STG.E.128",
        "shfl.sync.bfly": "SHFL.BFLY", "ex2.approx": "MUFU.EX2", "rsqrt.approx": "MUFU.RSQ",
        "rcp.approx": "MUFU.RCP", "wgmma": "HGMMA", "tma.load": "UTMALDG", "tma.store": "UTMASTG",
        "tcgen05.mma.f16": "UTCHMMA", "tcgen05.mma.f8f6f4": "UTCQMMA",
        "tcgen05.mma.i8": "UTCIMMA", "tcgen05.ld": "LDTM", "tcgen05.st": "STTM",
        "tcgen05.cp": "UTCCP", "tcgen05.commit": "UTCBAR", "tcgen05.alloc": "UTCATOMSWS",
        "local.load": "LDL", "local.store": "STL"}

# relative and absolute tolerance by output dtype: twice the unit roundoff of the output type
# (the final rounding is half an ulp, up to 2**-8 relative for bf16 and 2**-11 for f16),
# which also covers the f32 arithmetic and the approximate instructions (ex2/rsqrt/rcp.approx:
# about 2**-22 relative) before it
TOLERANCE = {"float32": (1e-5, 1e-6), "bfloat16": (2.0 ** -7, 1e-6),
             "float16": (2.0 ** -10, 1e-6)}

_SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)", re.M)


def runs_on(arch: str, compute_capability) -> bool:
    """Whether a kernel built for ``arch`` runs on a GPU of ``compute_capability`` ("9.0"):
    ``sm_XYa`` targets (wgmma, tcgen05) only on that architecture, ``sm_XY`` on it and later
    ones; an unknown capability runs everything."""
    if not compute_capability:
        return True
    major, minor = (int(x) for x in str(compute_capability).split(".")[:2])
    dev, sm = 10 * major + minor, int(arch[3:].rstrip("af"))
    return dev == sm if arch.endswith("a") else dev >= sm


def shape_text(shape: dict) -> str:
    """``M=8192 N=8192``."""
    return " ".join(f"{k}={v}" for k, v in shape.items())


def ptxas_info() -> str:
    """``"<version>"`` of the ptxas the toolchain uses."""
    from jax_pyptx.toolchain import find_tool

    return find_tool("ptxas").version_text


def _trace(entry, shape=None, build=None):
    k = entry.kernel(**(build or {}))
    return k, k.trace(**(shape or entry.shape))


def resources(entry):
    """(ptxas ResourceReport, ptxas version) at the entry's representative shape."""
    from jax_pyptx.toolchain import compile_ptx

    k, t = _trace(entry)
    return compile_ptx(t.ptx, t.arch).report, ptxas_info()


def resource_problems(rep) -> list:
    """What keeps a report from a library kernel's standard: spill bytes, a stack frame."""
    out = []
    if rep.spill_stores or rep.spill_loads:
        out.append(f"{rep.spill_stores} bytes spill stores, {rep.spill_loads} bytes spill "
                   f"loads")
    if rep.stack_frame:
        out.append(f"{rep.stack_frame} bytes stack frame")
    return out


def sass_mnemonics(entry) -> Counter:
    """SASS opcode -> count at the representative shape (``@!PT`` padding left out)."""
    from jax_pyptx.toolchain import disassemble

    k, t = _trace(entry)
    return mnemonics(disassemble(t.ptx, t.arch))


def mnemonics(sass: str) -> Counter:
    """Opcode counts of nvdisasm output, leaving out instructions predicated on ``@!PT``."""
    return Counter(m.group(2) for m in _SASS_LINE.finditer(sass)
                   if (m.group(1) or "").strip() != "@!PT")


def count_prefix(ops: Counter, prefix: str) -> int:
    """Instructions whose opcode is ``prefix`` or starts with ``prefix + "."``."""
    return sum(n for op, n in ops.items() if op == prefix or op.startswith(prefix + "."))


def missing_sass(entry, ops: Counter | None = None) -> list:
    """The entry's ``sass`` prefixes with no instruction in ``ops`` (its SASS by default)."""
    ops = sass_mnemonics(entry) if ops is None else ops
    return [p for p in entry.sass if not count_prefix(ops, p)]


def local_memory(ops: Counter) -> list:
    """Local-memory instructions (``LDL``, ``STL``) in the SASS."""
    return sorted(op for op in ops if op.split(".")[0] in ("LDL", "STL"))


# ----------------------------------------------------------------------------- interpreter
def make_inputs(entry, kernel, shape: dict, seed: int = 0) -> list:
    """The entry's inputs at ``shape`` (its ``inputs`` hook, else random normals)."""
    rng = np.random.default_rng(seed)
    if entry.inputs is not None:
        return list(entry.inputs(kernel, shape, rng))
    from jax_pyptx.perf import random_inputs

    return random_inputs(kernel, shape, seed=seed)


@dataclass(frozen=True)
class CaseResult:
    """One interpreter check: the largest error, the largest ratio of an error to what is
    allowed at its element (``ok`` when <= 1), seconds in the interpreter."""

    max_err: float
    excess: float
    seconds: float

    @property
    def ok(self) -> bool:
        """Every element within what is allowed."""
        return self.excess <= 1.0


def compare(out, ref, allowed) -> tuple:
    """(max |out - ref|, max |out - ref| / allowed) in float64. A NaN in ``ref`` marks an
    element the kernel does not write (a partial output's rest: on a GPU it holds whatever was
    there), not compared; a NaN in ``out`` elsewhere counts as a mismatch."""
    o = np.asarray(out).astype(np.float64)
    r = np.asarray(ref, np.float64)
    if o.shape != r.shape:
        raise AssertionError(f"output shape {o.shape} != reference shape {r.shape}")
    known = ~np.isnan(r)
    err = np.abs(o - np.where(known, r, 0.0))
    err = np.where(known, np.where(np.isnan(err), np.inf, err), 0.0)
    allowed = np.broadcast_to(np.asarray(allowed, np.float64), err.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(known, err / allowed, 0.0)
    return float(err.max(initial=0)), float(ratio.max(initial=0))


def allowed_error(entry, inputs, out, ref):
    """The absolute error allowed per element: the entry's ``tolerance``, else ``TOLERANCE``."""
    if entry.tolerance is not None:
        return entry.tolerance(inputs, ref)
    rtol, atol = TOLERANCE[np.asarray(out).dtype.name]
    return rtol * np.abs(np.asarray(ref, np.float64)) + atol


def run_case(entry, case, seed: int = 0, **interpret_kw) -> CaseResult:
    """Run ``case`` on the interpreter (sanitizer on; ``interpret_kw``: more options of
    ``kernel.interpret``, e.g. ``schedule=``) and compare with the reference."""
    k = entry.kernel(**case.build)
    inputs = make_inputs(entry, k, case.shape, seed)
    t0 = time.perf_counter()
    outs = k.interpret(*inputs, **interpret_kw)
    dt = time.perf_counter() - t0
    refs = entry.reference(*inputs)
    if not isinstance(outs, tuple):
        outs, refs = (outs,), (refs,)
    worst = (0.0, 0.0)
    for o, r in zip(outs, refs):
        if r is None:                      # an output with no reference (a workspace)
            continue
        m = compare(o, r, allowed_error(entry, inputs, o, r))
        worst = (max(worst[0], m[0]), max(worst[1], m[1]))
    return CaseResult(worst[0], worst[1], dt)


# ----------------------------------------------------------------------------- roofline
_ROOF: dict = {}


def counts_roofline(entry, devices=("H100", "B200"), at=None):
    """``jax_pyptx.perf.roofline`` of the entry: counted at ``count_shape`` (memoised per
    process), estimated at ``at`` (default: the representative shape)."""
    from jax_pyptx.perf import roofline

    at = dict(entry.shape if at is None else at)
    key = (entry.name, tuple(sorted(at.items())), tuple(map(str, devices)))
    r = _ROOF.get(key)
    if r is None:
        k = entry.kernel()
        small = entry.count_shape or entry.cases[0].shape
        inputs = make_inputs(entry, k, small)
        r = _ROOF[key] = roofline(k, *inputs, at=at, devices=devices, name=entry.name,
                                  inputs=lambda env: make_inputs(entry, k, env))
    return r
