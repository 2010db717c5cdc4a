"""``pyptx.torch_support``: the documented PyTorch helpers, on our runtime.

    from pyptx.torch_support import call_kernel_via_torch, differentiable_kernel

Calling a kernel on tensors needs none of these: ``k(x, w)`` goes through the kernel's
``torch.library`` op (``jax_pyptx.runtime.torch_call``; CPU tensors on the interpreter, CUDA
tensors through the launcher; ``torch.compile`` sees one opaque op). ``call_kernel_via_torch``
and ``call_kernel_via_torch_compile`` launch a handle of
``pyptx.jax_support.compile_ptx_to_cubin`` on tensors; ``differentiable_kernel`` is the
package's own (``jax_pyptx.differentiable_kernel``, :mod:`jax_pyptx.runtime.differentiable`).

Importing this module does not import torch (``is_torch_tensor`` is False until it is).

Examples:
    >>> import torch
    >>> from jax_pyptx.example_kernels import twice
    >>> from pyptx.torch_support import differentiable_kernel
    >>> op = differentiable_kernel(twice(), lambda x, g: g * 2.0)
    >>> x = torch.ones(32, requires_grad=True)
    >>> op(x).sum().backward()
    >>> x.grad[:3]
    tensor([2., 2., 2.])
"""
from __future__ import annotations

import numpy as np

from ..runtime.differentiable import differentiable_kernel
from ..runtime.call_router import any_torch_tensors, is_torch_tensor

__all__ = ["is_torch_tensor", "any_torch_tensors", "extract_input_shapes",
           "get_or_register_torch_op", "call_kernel_via_torch", "call_kernel_via_torch_compile",
           "differentiable_kernel"]


def extract_input_shapes(inputs) -> tuple:
    """``((shape, dtype name), ...)`` of tensors / arrays (numbers: ``((), type name)``),
    the ``input_shapes`` of a ``pyptx.cache.CacheKey``; dtypes by PTX name where there is one.

    Examples:
        >>> extract_input_shapes([np.zeros((2, 3), np.float32), 1.5])
        (((2, 3), 'f32'), ((), 'float'))
    """
    from ..runtime.callspec import dtype_name

    out = []
    for a in inputs:
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            name = str(a.dtype).removeprefix("torch.")
            try:
                name = dtype_name(np.dtype(name))
            except TypeError:
                pass
            out.append((tuple(int(d) for d in a.shape), name))
        else:
            out.append(((), type(a).__name__))
    return tuple(out)


def get_or_register_torch_op(kernel, **kw):
    """The ``torch.library`` op of ``kernel`` for template parameters / fixed shape
    variables / raw parameter values ``kw`` (``jax_pyptx.to_torch``): registered once,
    callable on tensors.

    Examples:
        >>> import torch
        >>> from jax_pyptx.example_kernels import twice
        >>> k = twice()                                  # Y = 2 * X over 32 floats
        >>> from pyptx.torch_support import get_or_register_torch_op
        >>> op = get_or_register_torch_op(k)
        >>> op is get_or_register_torch_op(k), op(torch.ones(32))[:2]
        (True, tensor([2., 2.]))
    """
    from ..runtime.torch_op import to_torch

    return to_torch(kernel, **kw)


# ----------------------------------------------------------------------------- handles
def call_kernel_via_torch(*inputs, cubin_handle, out_specs, out_shape_env, grid, block,
                          cluster=(1, 1, 1), smem_bytes: int = 0, interpret=None, stream=None):
    """Launch the kernel of ``cubin_handle`` (``compile_ptx_to_cubin``) on tensors: one
    output tensor for a single out spec, else a tuple. CPU tensors run on the interpreter
    (``interpret=False``: the launcher, e.g. with the recording driver table); CUDA tensors
    through the launcher on ``torch.cuda.current_stream()`` (or ``stream``).

    Examples:
        >>> import torch
        >>> from pyptx import Tile
        >>> from pyptx.types import f32
        >>> from jax_pyptx.example_kernels import twice
        >>> from pyptx.jax_support import compile_ptx_to_cubin
        >>> from pyptx.torch_support import call_kernel_via_torch
        >>> h = compile_ptx_to_cubin(twice().ptx(), "sm_90a")
        >>> call_kernel_via_torch(torch.ones(32), cubin_handle=h, out_specs=(Tile(32, f32),),
        ...                       out_shape_env={}, grid=(1, 1, 1), block=(32, 1, 1))[:3]
        tensor([2., 2., 2.])
    """
    from .torch_handles import launch_handle

    res = launch_handle(inputs, cubin_handle, out_specs, out_shape_env, grid, block, cluster,
                        smem_bytes, interpret, stream)
    return res[0] if len(res) == 1 else tuple(res)


def call_kernel_via_torch_compile(*inputs, cubin_handle, out_specs, out_shape_env, grid,
                                  block, cluster=(1, 1, 1), smem_bytes: int = 0):
    """:func:`call_kernel_via_torch` through a ``torch.library`` op (one per launch
    description, with a fake impl), so ``torch.compile`` traces it as one opaque op.

    Examples:
        >>> import torch
        >>> from pyptx import Tile
        >>> from pyptx.types import f32
        >>> from jax_pyptx.example_kernels import twice
        >>> from pyptx.jax_support import compile_ptx_to_cubin
        >>> from pyptx.torch_support import call_kernel_via_torch_compile
        >>> h = compile_ptx_to_cubin(twice().ptx(), "sm_90a")
        >>> call_kernel_via_torch_compile(torch.ones(32), cubin_handle=h, out_specs=(Tile(32, f32),),
        ...                               out_shape_env={}, grid=(1, 1, 1), block=(32, 1, 1))[:3]
        tensor([2., 2., 2.])
    """
    from .torch_handles import call_handle_op

    return call_handle_op(inputs, cubin_handle, out_specs, out_shape_env, grid, block,
                          cluster, smem_bytes)
