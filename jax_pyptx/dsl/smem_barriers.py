"""Barrier ``i`` of an ``smem.mbarrier`` array (:class:`MbarrierRef`), the operand the
``ptx.mbarrier.*`` family and TMA completion take. Re-exported by :mod:`jax_pyptx.dsl.smem`
(which allocates the array; this module does not import it).

Examples:
    >>> from jax_pyptx import smem
    >>> from jax_pyptx.dsl.smem_barriers import MbarrierRef
    >>> from jax_pyptx.dsl.trace_scope import trace_scope
    >>> with trace_scope():
    ...     bar = smem.mbarrier(3, name="full")
    ...     print(isinstance(bar[2], MbarrierRef), bar[2].byte_offset)
    True 16
"""
from __future__ import annotations

from ..ir.nodes import Addr, Sym


class MbarrierRef:
    """``bar[i]`` of an ``smem.mbarrier`` array: barrier ``i``. Wherever an address goes it is
    ``[name+8*i]``; ``.array``, ``.idx``, ``.name`` (the array's symbol) and ``.byte_offset``
    (where it sits in the kernel's shared memory) serve manual address arithmetic.

    Examples:
        >>> from jax_pyptx import ptx, smem
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     bar = smem.mbarrier(2)
        ...     ptx.mbarrier.init(bar[1], 1)
        ...     print(bar[1], bar[1].name, bar[1].byte_offset - bar[0].byte_offset)
        MbarrierRef(mbar_0[1]) mbar_0 8
        >>> t.lines()[-1]
        'mbarrier.init.shared::cta.b64 [mbar_0+8], 1;'
    """

    __slots__ = ("array", "idx")

    def __init__(self, array, idx: int):        # array: the smem.SharedBuffer of barriers
        self.array, self.idx = array, idx

    @property
    def name(self) -> str:
        """The symbol of the mbarrier array.

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     print(smem.mbarrier(4, name="full")[3].name)
            full
        """
        return self.array.name

    @property
    def byte_offset(self) -> int:
        """Where the barrier sits in the kernel's shared memory, in bytes.

        Examples:
            >>> from jax_pyptx import smem
            >>> from jax_pyptx.types import f32
            >>> from jax_pyptx.dsl.trace_scope import trace_scope
            >>> with trace_scope():
            ...     _ = smem.alloc(f32, 32)
            ...     print(smem.mbarrier(4)[3].byte_offset)
            152
        """
        return self.array.byte_offset + 8 * self.idx

    def __ptx_operand__(self) -> Addr:
        return Addr(Sym(self.array.name), self.array.view_offset + 8 * self.idx)

    def __repr__(self):
        return f"MbarrierRef({self.array.name}[{self.idx}])"


__all__ = ["MbarrierRef"]
