"""Trace one specialization: run a kernel's Python body under a fresh Trace, with the
parameters its ABI declares, and assemble the module (``Traced``)."""
from __future__ import annotations

import contextlib
import gc
import re
import threading
from dataclasses import dataclass, field

from ..errors import ArchError, SpecializationError
from ..ir.nodes import (Addr, Block, Function, Instruction, Module, ParenList, Param, PredPair,
                        RawDirective, Reg, Sym, Vec)
from ..isa.model import parse_target
from ..specs import TensorSpec, Tile
from ..types import PtxType, u64
from ..dsl import context
from ..dsl.ptx.control import check_labels
from ..dsl.smem import STATIC_LIMIT, SmemLayout
from .abi import PLAIN, ParamAbi
from .dims import check_cluster_grid, resolve_grid
from .traced import ParamInfo, Traced

__all__ = ["trace_specialization", "default_version"]


def default_version(target) -> tuple:
    """The ``.version`` a kernel gets when it sets no ``version=``, before instructions that
    need a newer ISA raise it: PTX ISA 8.8 for sm_100/sm_101, 8.7 for sm_12x, 8.5 for the
    rest (the documented defaults; ptxas from CUDA 12.8 on accepts them)."""
    if target.sm in (100, 101):
        return (8, 8)
    if 120 <= target.sm < 130:
        return (8, 7)
    return (8, 5)


_GC_LOCK = threading.Lock()
_gc_pausers = 0              # traces running with the cyclic collector paused
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a kernel traces.

    Tracing allocates many small, long-lived objects (IR nodes, registers) and almost no
    garbage cycles; with the collector on, its full collections rescan the growing trace
    again and again (most of the time of a 6000-instruction trace). Reference counting still
    frees everything; the collector resumes (if it was on) when the last concurrent trace
    ends, and collects whatever cycles a trace left then."""
    global _gc_pausers, _gc_was_enabled
    with _GC_LOCK:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


def kernel_loc(k):
    """The ``SourceLoc`` of kernel ``k``'s ``def`` line (None when it has none)."""
    from ..errors import SourceLoc

    code = getattr(k.fn, "__code__", None)
    return SourceLoc(code.co_filename, code.co_firstlineno) if code is not None else None


def _check_shared(k, arch: str, static: int, dyn: int) -> None:
    """Static + dynamic shared memory against ``arch``'s per-CTA limit (the driver refuses a
    launch past it, so every path does: ``.ptx()``, the interpreter, JAX, PyTorch)."""
    if static + dyn <= 48 * 1024:          # below every architecture's limit
        return
    from ..interpret.launch import shared_limit

    limit, _ = shared_limit(arch)
    if static + dyn > limit:
        raise SpecializationError(
            f"kernel {k.name!r} needs {static + dyn} bytes of shared memory ({static} static + "
            f"{dyn} dynamic, smem={k.smem}); {arch} allows at most {limit} bytes per CTA, so no "
            f"GPU could launch it", loc=kernel_loc(k))


def trace_specialization(k, template: dict, env: dict, abi: ParamAbi = PLAIN) -> Traced:
    """Trace kernel ``k`` (its arch already resolved) for one specialization."""
    with gc_paused():
        return _trace_specialization(k, template, env, abi)


def _trace_specialization(k, template: dict, env: dict, abi: ParamAbi) -> Traced:
    """The five jobs of a trace, in order: the parameters, the body, shared memory, the
    entry's directives, the module; then what a launch needs (``Traced``)."""
    target = parse_target(k.arch)
    tr = _new_trace(k, target, template, env)
    binder = abi.binder(tr)
    ps = _declare_params(k, tr, env, abi, binder)
    _run_body(k, tr, ps.args, binder, template)
    for p in tr.extra_params:
        ps.infos.append(ParamInfo(p.name, "tma", p.type, array=p.array))
    extern = bool(k.extern_smem) or k.smem > STATIC_LIMIT
    fdecls, mdecls, dyn, static = tr.smem.finalize(extern, tr.body)
    dyn = max(dyn, k.smem)
    directives = _entry_directives(k, tr)
    module = _module(k, tr, target, directives, fdecls, mdecls)
    _check_shared(k, target.name, static, dyn)
    grid = abi.launch_grid(resolve_grid(k.grid, k.name, env, template))
    if k.grid is not None:        # (no grid: the call gives one; checked when launched)
        check_cluster_grid(k.name, grid, k.cluster, kernel_loc(k))
    traced = Traced(
        name=k.name, arch=target.name, module=module, grid=grid, block=k.block,
        cluster=k.cluster, dynamic_smem=dyn, static_smem=static, params=tuple(ps.infos),
        inputs=tuple(ps.inputs), outputs=tuple(ps.outputs), scalars=tuple(ps.scalars),
        env=dict(env), template=dict(template), tma=tuple(tr.tma),
        instruction_count=tr.instruction_count + len(tr.prologue),
        abi=abi, reads=_reads(tr, ps, binder.own_loads),
    )
    tr.release()                 # no reference cycles left: a dropped trace is freed at once
    return traced


def _new_trace(k, target, template: dict, env: dict):
    """A fresh Trace for kernel ``k``: its shared-memory layout, shape environment and
    cluster."""
    tr = context.Trace(k.name, target, k.version)
    tr.smem = SmemLayout()
    # TMA boxes name shape variables, or int template parameters (BM=128)
    tr.shape_env = {**{n: v for n, v in template.items()
                       if isinstance(v, int) and not isinstance(v, bool)}, **env}
    if isinstance(k.extern_smem, str):
        tr.smem.extern_name = k.extern_smem
    tr.cluster = tuple(k.cluster)
    return tr


@dataclass
class _Params:
    """The parameters of one trace: the body's arguments, the ``.param`` entries, what a
    launch needs to know of each, and the tensor / scalar specs."""

    args: list = field(default_factory=list)      # the body's positional arguments
    params: list = field(default_factory=list)    # ir Params, in order
    infos: list = field(default_factory=list)     # ParamInfo per param
    inputs: list = field(default_factory=list)    # TensorSpec per input tensor
    outputs: list = field(default_factory=list)   # TensorSpec per output tensor
    scalars: list = field(default_factory=list)   # ParamInfo per runtime scalar


def _declare_params(k, tr, env: dict, abi: ParamAbi, binder) -> _Params:
    """The parameters ``k``'s specs and ABI declare (set on ``tr``), and the body's
    arguments (runtime scalars left None: loaded by :func:`_run_body`)."""
    ps = _Params()
    names = k.param_names
    n_in = len(k.in_specs)
    tensor_index = 0
    for i, (pname, spec) in enumerate(zip(names, k.in_specs + k.out_specs)):
        if isinstance(spec, Tile):
            ts = TensorSpec(pname, spec.resolve(env), spec.dtype, spec.layout, tensor_index, tr,
                            output=i >= n_in, access=binder)
            ts.tile = spec
            tensor_index += 1
            (ps.outputs if i >= n_in else ps.inputs).append(ts)
            ps.params.append(Param(pname, u64))
            ps.infos.append(ParamInfo(pname, "tensor", u64, ts.index))
            ps.args.append(ts)
        else:
            p, kind = abi.scalar_param(pname, spec)
            ps.params.append(p)
            info = ParamInfo(pname, kind, spec)
            ps.infos.append(info)
            ps.scalars.append(info)
            ps.args.append(None)        # loaded by _run_body, once the params exist
    for p in k.raw_params:
        ps.params.append(p)
        ps.infos.append(ParamInfo(p.name, "raw", p.type, array=p.array))
    for p in k.pointer_params:          # no specs: raw pointers (shape and dtype unknown)
        ps.args.append(TensorSpec(p.name, trace=tr, access=binder))
    pnames = [p.name for p in ps.params]
    if len(set(pnames)) != len(pnames):
        raise SpecializationError(f"kernel {k.name!r}: duplicate parameter names {pnames}")
    tr.params = list(ps.params)
    return ps


def _run_body(k, tr, args: list, binder, template: dict) -> None:
    """Run ``k``'s Python body on ``tr`` (the runtime scalars loaded first); the trace is
    closed afterwards, whatever happened."""
    context.push(tr)
    try:
        for i, spec in enumerate(k.in_specs):
            if isinstance(spec, PtxType):
                args[i] = binder.scalar(k.param_names[i], spec)
        k.fn(*args, **template)
        check_labels(tr)
    finally:
        context.pop()
        tr.closed = True


def _entry_directives(k, tr) -> list:
    """The entry's performance directives: ``.reqntid``, the cluster's, then the kernel's
    ``raw_directives`` as written (one it gives replaces the derived one of that name)."""
    directives = []
    given = {d.strip().split(" ", 1)[0].rstrip(";") for d in k.raw_directives}
    if k.reqntid is not None and ".reqntid" not in given:
        directives.append(RawDirective(".reqntid", (", ".join(map(str, k.reqntid)),)))
    if k.cluster != (1, 1, 1):
        if ".explicitcluster" not in given:
            directives.append(RawDirective(".explicitcluster"))
        if ".reqnctapercluster" not in given:
            directives.append(RawDirective(".reqnctapercluster",
                                           (", ".join(map(str, k.cluster)),)))
        if tr.min_ptx < (7, 8):
            tr.min_ptx = (7, 8)
    for d in k.raw_directives:                  # printed as written; a trailing ';' is kept
        text = d.strip()
        name, _, rest = text.rstrip(";").partition(" ")
        directives.append(RawDirective(name, (rest.strip(),) if rest.strip() else (),
                                       terminated=text.endswith(";")))
    return directives


def _module(k, tr, target, directives: list, fdecls: list, mdecls: list) -> Module:
    """The module: the entry (declarations, ``ptx.var``s, prologue, body) after the
    module-level declarations and directives, at the version ``k`` asks for or its
    instructions need."""
    variables = list(tr.variables.values())     # ptx.var
    mdecls = list(tr.module_directives) + mdecls  # ptx.file_
    body = tr.reg_decls() + fdecls + variables + tr.prologue + tr.body
    fn = Function(k.name, ".entry", ".visible", tr.params, [], directives, body)
    version = k.version or max(tr.min_ptx, default_version(target))
    if k.version is not None and k.version < tr.min_ptx:
        raise ArchError(f"kernel {k.name!r}: version={k.version[0]}.{k.version[1]} is below "
                        f"PTX ISA {tr.min_ptx[0]}.{tr.min_ptx[1]}, which target "
                        f"{target.name} and the instructions used need")
    return Module(version, (target.name,), 64, mdecls + [fn])


def _reads(tr, ps: _Params, own_loads):
    """What the kernel reads (special registers, parameters read directly), scanned when
    first asked for: a function for ``Traced.reads``."""
    scalar_names = {i.name for i in ps.scalars}
    tensor_names = {t.name for t in ps.inputs + ps.outputs}
    stmts = tr.prologue + tr.body

    def reads():
        specials, raw = scan_reads(stmts, tensor_names | scalar_names, own_loads)
        return (frozenset(specials), tuple(n for n in raw if n not in scalar_names),
                tuple(n for n in raw if n in scalar_names))

    return reads


_GPR = re.compile(r"^%(p|rs|h|r|rd|rq|f|fd)\d+$")


def scan_reads(stmts, names: set, own_loads: set):
    """(special registers read, parameters in ``names`` read other than by the instructions
    whose id() is in ``own_loads``)."""
    specials, raw = set(), []
    is_special: dict = {}            # register name -> is it a special register (memoised)

    def operand(o, ins):
        c = type(o)
        if c is Reg:
            n = o.name
            sp = is_special.get(n)
            if sp is None:
                sp = is_special[n] = n.startswith("%") and not _GPR.match(n)
            if sp:
                specials.add(n)
        elif c is Addr:
            operand(o.base, ins)
            for e in o.extra:
                operand(e, ins)
        elif c is Sym:
            if o.name in names and id(ins) not in own_loads and o.name not in raw:
                raw.append(o.name)
        elif c in (Vec, ParenList):
            for i in o.items:
                operand(i, ins)
        elif c is PredPair:
            operand(o.first, ins)
            operand(o.second, ins)

    seen_vecs: set = set()           # id() of register-only vectors already scanned

    def walk(body):
        for st in body:
            c = type(st)
            if c is Block:
                walk(st.body)
            elif c is Instruction:
                for o in st.operands:
                    c = type(o)
                    if c is Reg:             # the common case, inline
                        n = o.name
                        sp = is_special.get(n)
                        if sp is None:
                            sp = is_special[n] = n.startswith("%") and not _GPR.match(n)
                        if sp:
                            specials.add(n)
                    elif c is Sym:
                        if o.name in names and id(st) not in own_loads and o.name not in raw:
                            raw.append(o.name)
                    elif c is Vec:
                        # a vector of registers reads the same specials wherever it appears
                        if id(o) not in seen_vecs:
                            if all(type(i) is Reg for i in o.items):
                                seen_vecs.add(id(o))
                            operand(o, st)
                    else:
                        operand(o, st)

    walk(stmts)
    return specials, raw
