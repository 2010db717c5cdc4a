"""Ready-made small kernels for examples: one import instead of a kernel written out again.

An example whose subject is not the kernel itself (counting what a kernel does, estimating
its roofline, calling it from JAX or PyTorch, registering its cubin) needs some kernel to
work on. It takes one from here in a line::

    from jax_pyptx.example_kernels import twice
    k = twice("N")          # Y = 2 * X over N floats

so that each docstring shows only the function it documents. Where a kernel is first
introduced (``jax_pyptx.kernel``, the README, ``docs/guides/first-kernel.md``) it is written
out in full, and this module's source is the same kernel to read.

Each function returns a new ``Kernel`` on every call: an example that configures its kernel
(``jax_pyptx.configure``) or registers it (``to_torch``) changes no other example's.

* ``twice(n=32)``: ``Y = 2 * X`` over ``n`` ``f32`` elements (``Tile(n, f32)`` in, the same
  out), one element per thread, CTAs of 32 threads, ``n // 32`` of them. ``n`` is a length
  (a positive multiple of 32) or the name of a shape variable (``"N"``: the length of the
  array it is called with, again a multiple of 32).

Examples:
    >>> import numpy as np
    >>> from jax_pyptx.example_kernels import twice
    >>> k = twice()                                  # 32 floats: one CTA of 32 threads
    >>> k.interpret(np.arange(32, dtype=np.float32))[:4]
    array([0., 2., 4., 6.], dtype=float32)
    >>> k = twice("N")                               # N floats: N // 32 CTAs
    >>> y = k.interpret(np.full(96, 1.5, np.float32))
    >>> y.shape, float(y.min()), float(y.max())
    ((96,), 3.0, 3.0)
"""
from __future__ import annotations

from .dsl import ptx, reg
from .kernel_def import Kernel, kernel
from .specs import Tile
from .types import f32, u32, u64

__all__ = ["twice"]

_THREADS = 32


def twice(n: int | str = 32) -> Kernel:
    """A new kernel ``twice`` that writes ``Y = 2 * X`` for ``n`` ``f32`` elements.

    Thread ``tid.x`` of CTA ``ctaid.x`` loads element ``ctaid.x * 32 + tid.x`` of ``X``,
    doubles it and stores it into ``Y``; the grid is ``n // 32`` CTAs of 32 threads. ``n`` is
    an int (a fixed length, a positive multiple of 32) or a shape-variable name such as
    ``"N"`` (bound from the input's length, which must be a multiple of 32: the kernel has no
    bounds check). The traced entry is named ``twice``.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> twice(64).interpret(np.ones(64, np.float32))[-3:]
        array([2., 2., 2.], dtype=float32)
        >>> k = twice("N")
        >>> k.name, k.trace(N=128).grid
        ('twice', (4, 1, 1))
        >>> twice() is twice()                           # a new kernel on every call
        False
        >>> twice(48)
        Traceback (most recent call last):
        ...
        ValueError: twice: n must be a positive multiple of 32 or a shape-variable name such as 'N'; got 48
    """
    fixed = isinstance(n, int) and not isinstance(n, bool) and n > 0 and n % _THREADS == 0
    if not (fixed or isinstance(n, str) and n.isidentifier()):
        raise ValueError(f"twice: n must be a positive multiple of {_THREADS} or a "
                         f"shape-variable name such as 'N'; got {n!r}")
    grid = (n // _THREADS, 1, 1) if fixed else (lambda **shape: (shape[n] // _THREADS, 1, 1))

    @kernel(in_specs=(Tile(n, f32),), out_specs=(Tile(n, f32),), block=(_THREADS, 1, 1),
            grid=grid)
    def twice(X, Y):
        i = reg.from_(ptx.special.ctaid.x(), u32) * _THREADS + ptx.special.tid.x()
        off = reg.cvt(i, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ptx.ret()

    return twice
