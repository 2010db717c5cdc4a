"""Run a kernel's Python body under a fresh Trace and assemble the module."""
from __future__ import annotations

import math
import re

from ..errors import SpecializationError
from ..ir.nodes import Function, Module, Param, RawDirective
from ..isa.model import parse_target
from ..specs import TensorSpec, Tile
from ..types import PtxType, u64
from . import context
from .ptx.control import check_labels
from .smem import SmemLayout


def _grid(k, env, template) -> tuple:
    from ..kernel import _dim3

    g = k.grid
    if g is None:
        return (1, 1, 1)
    if callable(g):
        import inspect

        avail = {**env, **template}
        names = list(inspect.signature(g).parameters)
        missing = [n for n in names if n not in avail]
        if missing:
            raise SpecializationError(
                f"kernel {k.name!r}: grid callable needs {', '.join(missing)}; available: "
                f"shape variables ({', '.join(env) or 'none'}) and template parameters "
                f"({', '.join(template) or 'none'})")
        g = g(**{n: avail[n] for n in names})
    return _dim3(g, f"kernel {k.name!r}: grid")


def trace_kernel(k, template: dict, env: dict, batch=None, scalar_ptrs=()):
    """Trace ``k`` for one specialization. ``batch`` (internal, for the JAX runtime's
    batch-on-grid rule; see ``Kernel._trace_batched``): ``(sizes, masks)``. ``scalar_ptrs``
    (internal, for the CUDA runtime): runtime scalars passed by device pointer instead of by
    value (``.param .u64``, loaded once in the prologue), so a traced value needs no launch
    attribute."""
    from ..kernel import ParamInfo, Traced

    target = parse_target(k.arch)
    tr = context.Trace(k.name, target, k.version)
    tr.smem = SmemLayout()
    args, params, infos, inputs, outputs, scalars = [], [], [], [], [], []
    n_in = len(k.in_specs)
    tensor_index = 0
    for i, (pname, spec) in enumerate(zip(k._positional, k.in_specs + k.out_specs)):
        if isinstance(spec, Tile):
            ts = TensorSpec(pname, spec.resolve(env), spec.dtype, spec.layout, tensor_index, tr,
                            output=i >= n_in)
            if batch is not None:   # added for batch-on-grid: per-item byte offsets
                ts._batch = (batch[0], batch[1][tensor_index], ts.nbytes)
            tensor_index += 1
            (outputs if i >= n_in else inputs).append(ts)
            params.append(Param(pname, u64))
            infos.append(ParamInfo(pname, "tensor", u64, ts.index))
            args.append(ts)
        elif pname in scalar_ptrs:   # added for the runtime: scalar by device pointer
            params.append(Param(pname, u64))
            info = ParamInfo(pname, "scalar_ptr", spec)
            infos.append(info)
            scalars.append(info)
            args.append(None)
        else:
            params.append(Param(pname, spec))
            info = ParamInfo(pname, "scalar", spec)
            infos.append(info)
            scalars.append(info)
            args.append(None)           # loaded below, once the params exist
    for p in k.raw_params:
        params.append(p)
        infos.append(ParamInfo(p.name, "raw", p.type, array=p.array))
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise SpecializationError(f"kernel {k.name!r}: duplicate parameter names {names}")
    tr.params = list(params)
    context.push(tr)
    try:
        from .ptx.params import param_value

        own_loads = []
        for i, spec in enumerate(k.in_specs):
            if isinstance(spec, PtxType):
                if k._positional[i] in scalar_ptrs:
                    from .tensor_access import scalar_by_pointer

                    args[i] = scalar_by_pointer(tr, k._positional[i], spec)
                else:
                    args[i] = param_value(k._positional[i])
                own_loads.append(tr.prologue[-1] if k._positional[i] not in scalar_ptrs
                                 else tr.prologue[-3])
        k.fn(*args, **template)
        check_labels(tr)
    finally:
        context.pop()
        tr.closed = True
    for p in tr.extra_params:
        infos.append(ParamInfo(p.name, "tma", p.type, array=p.array))
    fdecls, mdecls, dyn, static = tr.smem.finalize(k.extern_smem, tr.body)
    dyn = max(dyn, k.smem)
    directives = []
    if k.reqntid is not None:
        directives.append(RawDirective(".reqntid", (", ".join(map(str, k.reqntid)),)))
    if k.cluster != (1, 1, 1):
        directives.append(RawDirective(".explicitcluster"))
        directives.append(RawDirective(".reqnctapercluster",
                                       (", ".join(map(str, k.cluster)),)))
        if tr.min_ptx < (7, 8):
            tr.min_ptx = (7, 8)
    for d in k.raw_directives:                  # printed as written; a trailing ';' is kept
        text = d.strip()
        name, _, rest = text.rstrip(";").partition(" ")
        directives.append(RawDirective(name, (rest.strip(),) if rest.strip() else (),
                                       terminated=text.endswith(";")))
    body = tr.reg_decls() + fdecls + tr.prologue + tr.body
    fn = Function(k.name, ".entry", ".visible", tr.params, [], directives, body)
    version = k.version or tr.min_ptx
    if k.version is not None and k.version < tr.min_ptx:
        from ..errors import ArchError

        raise ArchError(f"kernel {k.name!r}: version={k.version[0]}.{k.version[1]} is below "
                        f"PTX ISA {tr.min_ptx[0]}.{tr.min_ptx[1]}, which target "
                        f"{target.name} and the instructions used need")
    module = Module(version, (target.name,), 64, mdecls + [fn])
    grid = _grid(k, env, template)
    if batch is not None and math.prod(batch[0]) > 1:   # added for batch-on-grid
        grid = (grid[0], grid[1], grid[2] * math.prod(batch[0]))
    specials, raw_tensor = _scan_reads(tr.prologue + tr.body, inputs + outputs,
                                       [i.name for i in scalars], own_loads)
    return Traced(
        name=k.name, arch=target.name, module=module, grid=grid, block=k.block,
        cluster=k.cluster, dynamic_smem=dyn, static_smem=static, params=tuple(infos),
        inputs=tuple(inputs), outputs=tuple(outputs), scalars=tuple(scalars), env=dict(env),
        template=dict(template), tma=tuple(tr.tma),
        instruction_count=tr.instruction_count + len(tr.prologue),
        specials=frozenset(specials),
        raw_tensor_params=tuple(n for n in raw_tensor if n not in {i.name for i in scalars}),
        raw_scalar_params=tuple(n for n in raw_tensor if n in {i.name for i in scalars}),
        batch=None if batch is None else (tuple(batch[0]), tuple(batch[1])),
    )


# --- added for jax_pyptx.runtime.batching: what the kernel reads -------------------------
_GPR = re.compile(r"^%(p|rs|h|r|rd|rq|f|fd)\d+$")


def _scan_reads(stmts, tensors, scalar_names=(), scalar_loads=()):
    """(special registers read, tensor / scalar params read other than through ``X.ptr()``
    and the trace's own scalar load)."""
    from ..ir.nodes import Addr, Block, Instruction, ParenList, PredPair, Reg, Sym, Vec

    names = {t.name for t in tensors} | set(scalar_names)
    own = {id(getattr(t, "_ptr_ld", None)) for t in tensors} | {id(i) for i in scalar_loads}
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
            if o.name in names and id(ins) not in own and o.name not in raw:
                raw.append(o.name)
        elif c in (Vec, ParenList):
            for i in o.items:
                operand(i, ins)
        elif c is PredPair:
            operand(o.first, ins)
            operand(o.second, ins)

    def walk(body):
        for st in body:
            c = type(st)
            if c is Block:
                walk(st.body)
            elif c is Instruction:
                for o in st.operands:
                    operand(o, st)

    walk(stmts)
    return specials, raw
