"""``kernel.interpret(*arrays, **kw)``: trace, allocate outputs, run the CPU interpreter."""
from __future__ import annotations

import numpy as np

from ..errors import SpecializationError


def interpret_kernel(k, arrays, kw, sanitize: bool = True):
    from ..interpret import launch

    n_in = len(k.in_specs)
    if len(arrays) != n_in:
        raise SpecializationError(
            f"kernel {k.name!r}.interpret takes {n_in} input arrays "
            f"({', '.join(k._positional[:n_in])}); got {len(arrays)}")
    tensors = [a for a, s in zip(arrays, k.in_specs) if not _is_scalar(s)]
    raw_names = {p.name for p in k.raw_params}
    raw_kw = {n: v for n, v in kw.items() if n in raw_names}
    kw = {n: v for n, v in kw.items() if n not in raw_names}
    env = k.bind_shapes(*arrays)
    for s in k._symbols:
        if s in kw and s in env and kw[s] != env[s]:
            raise SpecializationError(f"kernel {k.name!r}: shape variable {s}={kw[s]} "
                                      f"conflicts with {env[s]} from the arrays")
    t = k.trace(**{**env, **kw})
    ins = [np.array(a, copy=True) for a in tensors]
    outs = [np.zeros(o.shape, dtype=o.dtype.np_dtype) for o in t.outputs]
    tensor_arrays = ins + outs
    by_name = {}
    for info in t.params:
        if info.kind == "tensor":
            by_name[info.name] = tensor_arrays[info.index]
    scalar_vals = [a for a, s in zip(arrays, k.in_specs) if _is_scalar(s)]
    for info, v in zip(t.scalars, scalar_vals):
        by_name[info.name] = np.asarray(v, dtype=info.type.np_dtype)[()]
    args = []
    for info in t.params:
        if info.name in by_name:
            args.append(by_name[info.name])
        elif info.kind == "raw" and info.name in raw_kw:
            args.append(raw_kw[info.name])
        else:
            raise SpecializationError(
                f"kernel {k.name!r}: the interpreter has no value for parameter {info.name!r} "
                f"({info.kind})")
    launch(t.module, t.name, args, grid=t.grid, block=t.block, cluster=t.cluster,
           smem=t.dynamic_smem, sanitize=sanitize)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _is_scalar(spec) -> bool:
    from ..types import PtxType

    return isinstance(spec, PtxType)
