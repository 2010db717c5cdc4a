"""``kernel(*args, **kw)``: which runtime a call goes to (installed by ``jax_pyptx`` as the
kernel's call handler). PyTorch tensors go to the PyTorch runtime (``torch_call``: the
kernel's ``torch.library`` op, so ``torch.compile`` sees one opaque op), anything else to the
JAX runtime (``call``). Neither JAX nor torch is imported here: a call imports the runtime
it needs.

    out = k(x, w)            # x, w: torch tensors (CPU: the interpreter; CUDA: the launcher)
    out = k(xj, wj)          # JAX arrays (eager, jit, vmap, shard_map, grad)
"""
from __future__ import annotations

import sys

from ..errors import NotSupportedError

__all__ = ["call", "is_torch_tensor", "any_torch_tensors"]


def is_torch_tensor(x) -> bool:
    """Whether ``x`` is a ``torch.Tensor`` (False when torch was never imported).

    >>> is_torch_tensor([1.0])
    False
    """
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def any_torch_tensors(args) -> bool:
    """Whether any of ``args`` is a ``torch.Tensor``.

    >>> any_torch_tensors((1, 2.0))
    False
    """
    torch = sys.modules.get("torch")
    return torch is not None and any(isinstance(a, torch.Tensor) for a in args)


def check_callable(k) -> None:
    """A kernel call needs tensor specs: ``NotSupportedError`` (a ``NotImplementedError``)
    naming ``in_specs`` when the kernel has none."""
    if not k.in_specs and not k.out_specs:
        raise NotSupportedError(
            f"kernel {k.name!r} has no in_specs: calling it needs its tensors described "
            f"(@kernel(in_specs=(Tile(...), ...), out_specs=(Tile(...), ...))); without "
            f"them read its PTX (k.ptx()) or launch it by hand (jax_pyptx.interpret.launch)")


def call(k, *args, **kw):
    """Run kernel ``k`` on ``args`` with template parameters, shape variables and raw
    parameter values ``kw``: one output, or a tuple of them."""
    check_callable(k)
    if any_torch_tensors(args):
        from .torch_call import call_torch

        return call_torch(k, *args, **kw)
    from .call import call_kernel

    return call_kernel(k, *args, **kw)
