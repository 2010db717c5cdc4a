"""The kernel library's registry: one entry per kernel, read by the proofs (tests), the
generated ``docs/kernels.md``, the scripts and ``benchmarks/kernels.py``.

A family package (``examples/ampere``, ``examples/hopper``, ``examples/blackwell``) lists its
kernels in ``<family>/library.py`` as ``LIBRARY = [LibraryKernel(...), ...]``; ``entries()``
gathers every family that has one. Adding a kernel to the library is adding one entry:

    LibraryKernel(
        name="ampere/gemm-bf16", module="examples.ampere.gemm", builder=build_gemm,
        params={"dtype": bf16}, reference=reference, page="ampere_gemm.md",
        cases=(Case({"M": 256, "N": 256, "K": 64}), Case({"M": 200, "N": 136, "K": 72})),
        shape={"M": 8192, "N": 8192, "K": 8192}, count_shape={"M": 128, "N": 128, "K": 64},
        sass=("HMMA", "LDSM", "LDGSTS"), rate="flops", baseline=lambda a, b: a @ b)

and the tests (``tests/test_kernel_library.py``) prove it: ptxas accepts it for its target
with no spills and no stack, its SASS has the ``sass`` mnemonics and no local-memory traffic,
the interpreter matches ``reference`` at every case, ``jax.jit`` runs it on the CPU, and its
CUDA lowering carries its PTX hash and launch shape. ``python -m examples.kernels_doc``
regenerates ``docs/kernels.md`` (a test checks it is current).
"""
from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Case", "LibraryKernel", "entries", "get", "FAMILIES", "script_main"]

FAMILIES = ("ampere", "hopper", "blackwell")


@dataclass(frozen=True)
class Case:
    """One interpreter check: shape variables, and builder arguments overriding the entry's
    ``params`` (a row kernel's ``cols`` is a builder argument, not a shape variable)."""

    shape: dict
    build: dict = field(default_factory=dict)
    note: str = ""

    @property
    def label(self) -> str:
        """``M=37 cols=64``: the shape variables, then the builder overrides."""
        parts = [f"{k}={v}" for k, v in self.shape.items()]
        parts += [f"{k}={getattr(v, 'name', v)}" for k, v in self.build.items()]
        return " ".join(parts)


@dataclass(frozen=True)
class LibraryKernel:
    """A kernel of the library (module docstring).

    Fields:
        name: ``"<family>/<kernel>-<variant>"``, unique.
        module: the example module (``python -m <module>`` checks it).
        builder, params: ``builder(**params)`` returns the configured ``Kernel``.
        reference: NumPy function of the inputs returning the output(s), in float64.
        cases: interpreter checks (``Case``): several tiles, ragged edges where the kernel
            supports them, each ``Case.build`` override a variant of the plan.
        shape: the representative (benchmark) shape: ptxas resources, SASS, roofline, docs.
        sass: SASS mnemonic prefixes the pattern depends on (``"HMMA"``, ``"LDGSTS"``, ...).
        page: the explaining page under ``docs/examples/``.
        count_shape: a small shape that tiles the kernel evenly, where the interpreter counts
            bytes and FLOPs for the roofline (default: the first case's shape).
        inputs: ``(kernel, shape, rng) -> inputs``; default random normals of the specs.
        tolerance: ``(inputs, ref) -> absolute tolerance`` (array or float); default
            ``rtol * |ref| + atol`` with rtol/atol by the output dtype (``TOLERANCE``).
        baseline: a JAX function of the inputs computing the same thing (benchmark).
        rate: ``"bytes"`` (report GB/s) or ``"flops"`` (TFLOP/s).
        work: ``(shape) -> FLOPs (or bytes)`` of one call on ``inputs``'s data at that
            shape, for a kernel whose work depends on the data (a grouped GEMM's group
            sizes): the roofline's power laws, fitted at small shapes, cannot know it. The
            GPU benchmark's rates use it. Default: the roofline's count.
    """

    name: str
    module: str
    builder: Callable
    params: dict
    reference: Callable
    cases: tuple
    shape: dict
    sass: tuple
    page: str
    count_shape: dict | None = None
    inputs: Callable | None = None
    tolerance: Callable | None = None
    baseline: Callable | None = None
    rate: str = "bytes"
    work: Callable | None = None

    def kernel(self, **overrides):
        """The built kernel for ``params`` updated by ``overrides`` (memoised)."""
        kw = dict(self.params, **overrides)
        key = (self.name, tuple(sorted((k, _key(v)) for k, v in kw.items())))
        k = _BUILT.get(key)
        if k is None:
            k = _BUILT[key] = self.builder(**kw)
        return k

    @property
    def family(self) -> str:
        """``ampere``, ``hopper`` or ``blackwell`` (the name's prefix)."""
        return self.name.split("/", 1)[0]


_BUILT: dict = {}


def grouped_rows(shape) -> int:
    """The rows the grouped GEMMs' input hooks give their groups, ``sum(group_sizes)``: all
    but the last eighth of ``T``, however they split it."""
    return shape["T"] - shape["T"] // 8


def grouped_flops(shape) -> int:
    """A grouped GEMM's ``work`` at ``shape``: ``2 sum(group_sizes) K N`` (the rows past the
    groups are not computed)."""
    return 2 * grouped_rows(shape) * shape["K"] * shape["N"]


def _key(v):
    return getattr(v, "name", v)


def entries(families=FAMILIES) -> list:
    """Every registered kernel, family by family (a family without ``library.py`` has none)."""
    out = []
    for fam in families:
        try:
            mod = importlib.import_module(f"examples.{fam}.library")
        except ModuleNotFoundError as e:
            if e.name in (f"examples.{fam}.library", f"examples.{fam}"):
                continue
            raise
        out.extend(mod.LIBRARY)
    names = [e.name for e in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"kernel library: duplicate entry names {dup}")
    return out


def get(name: str) -> LibraryKernel:
    """The entry called ``name``."""
    for e in entries():
        if e.name == name:
            return e
    raise KeyError(f"no library kernel {name!r}; known: {', '.join(e.name for e in entries())}")


# ----------------------------------------------------------------------------- scripts
def _module_of(file: str) -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rel = os.path.relpath(os.path.abspath(file), root)
    return rel[:-3].replace(os.sep, ".")


def script_main(module: str, file: str) -> int:
    """What ``python examples/<family>/<kernel>.py`` does for each library entry of the file:
    trace it at its representative shape, print ptxas's resource line (and fail on spills or
    a stack frame), check its SASS mnemonics, run the interpreter at every case against the
    reference. Returns the exit status (1 on any failure)."""
    from . import proof

    if module == "__main__":
        module = _module_of(file)
    mine = [e for e in entries() if e.module == module]
    if not mine:
        print(f"{module}: no library entry names this module", file=sys.stderr)
        return 1
    ok = True
    for e in mine:
        k = e.kernel()
        rep, info = proof.resources(e)
        print(f"{e.name}: {k.name} {k.arch} at {proof.shape_text(e.shape)}: ptxas "
              f"{info}: {rep.line()}")
        for problem in proof.resource_problems(rep):
            ok = False
            print(f"  FAIL {problem}")
        ops = proof.sass_mnemonics(e)
        missing = proof.missing_sass(e, ops)
        local = proof.local_memory(ops)
        print(f"  SASS: {', '.join(f'{p} x{proof.count_prefix(ops, p)}' for p in e.sass)}"
              + (f"; missing {missing}" if missing else "") + (f"; LOCAL {local}" if local
                                                               else ""))
        ok &= not missing and not local
        for case in e.cases:
            r = proof.run_case(e, case)
            status = "ok" if r.ok else "MISMATCH"
            print(f"  interpreter {case.label}: max |err| {r.max_err:.2e}, max |err| / "
                  f"allowed {r.excess:.2f}, {r.seconds:.2f} s: {status}")
            ok &= r.ok
    print("OK" if ok else "FAILED")
    return 0 if ok else 1
