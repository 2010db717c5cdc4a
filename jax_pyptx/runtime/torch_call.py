"""``kernel(*tensors, **kw)`` with PyTorch tensors: the kernel's ``torch.library`` op.

    out = k(x, w)                          # CPU tensors: the interpreter; CUDA: the launcher
    f = torch.compile(lambda x, w: k(x, w) * 2, fullgraph=True)   # one opaque op in the graph

The keywords are split by name: shape variables (positive ints), template parameters, raw
parameter values; the op is the one ``to_torch(k, **kw)`` registers for them (one op per
kernel and keywords; shape variables bound from the tensors vary freely). Under
``torch.compile`` the op's name is looked up once per (kernel, keywords) while tracing
(``torch._dynamo.assume_constant_result``) and the graph holds the op itself.
"""
from __future__ import annotations

import torch

from ..errors import SpecializationError
from ..specialize.binding import check_inputs
from ..types import PtxType
from .torch_op import family, scalar_number_dtype

__all__ = ["call_torch", "op_name", "unknown_keywords_error"]


def unknown_keywords_error(kernel):
    """The error for keywords that are no template parameter, shape variable or raw
    parameter of ``kernel`` (pyptx's wording)."""
    def make(names):
        listed = ", ".join(repr(n) for n in names)
        return SpecializationError(
            f"kernel {kernel.name!r}: no template parameter or shape variable named {listed}. "
            f"Template params: {', '.join(kernel.template_params) or 'none'}. "
            f"Shape vars: {', '.join(kernel.shape_vars) or 'none'}. "
            f"Raw params: {', '.join(p.name for p in kernel.raw_params) or 'none'}.")
    return make


_eager_ops: dict = {}          # (kernel, keyword items) -> the op's overload (eager calls)
_MAX_EAGER_OPS = 4096


@torch._dynamo.assume_constant_result
def op_name(kernel, kw_items: tuple) -> str:
    """The name (in the ``jax_pyptx`` namespace) of ``kernel``'s op for keywords
    ``kw_items``, registered on first use. A constant while ``torch.compile`` traces."""
    return family(kernel, dict(kw_items), unknown_keywords_error(kernel)).name


def call_torch(kernel, *args, **kw):
    """Run ``kernel`` on torch tensors (runtime scalars as numbers or 0-d tensors): its
    outputs, one tensor or a tuple."""
    check_inputs(kernel, len(args))
    items = tuple(kw.items())
    op = None
    if not torch.compiler.is_compiling():       # eager: the op of a previous call
        try:
            op = _eager_ops.get((kernel, items))
        except TypeError:                        # unhashable keyword values
            items = None
    if op is None:
        op = getattr(torch.ops.jax_pyptx, op_name(kernel, tuple(kw.items()))).default
        if items is not None and not torch.compiler.is_compiling():
            if len(_eager_ops) >= _MAX_EAGER_OPS:
                _eager_ops.clear()
            _eager_ops[(kernel, items)] = op
    ops = []
    for a, s in zip(args, kernel.in_specs):
        if isinstance(s, PtxType) and not isinstance(a, torch.Tensor):
            a = torch.tensor(a, dtype=scalar_number_dtype(s))
        ops.append(a)
    return op(*ops)
