"""``ptx.special``: special registers. ``ptx.special.tid.x()``, ``ptx.special.laneid()``."""
from __future__ import annotations

from ...types import pred, u32, u64
from ..values import Special


class _Dims:
    __slots__ = ("base", "min_sm")

    def __init__(self, base: str, min_sm: int = 0):
        self.base, self.min_sm = base, min_sm

    def x(self) -> Special:
        return Special(f"%{self.base}.x", u32, self.min_sm)

    def y(self) -> Special:
        return Special(f"%{self.base}.y", u32, self.min_sm)

    def z(self) -> Special:
        return Special(f"%{self.base}.z", u32, self.min_sm)

    def __repr__(self):
        return f"%{self.base}.{{x,y,z}}"


tid = _Dims("tid")
ntid = _Dims("ntid")
ctaid = _Dims("ctaid")
nctaid = _Dims("nctaid")
clusterid = _Dims("clusterid", 90)
nclusterid = _Dims("nclusterid", 90)
cluster_ctaid = _Dims("cluster_ctaid", 90)
cluster_nctaid = _Dims("cluster_nctaid", 90)


def _scalar(name: str, t, min_sm: int = 0, doc: str = ""):
    def get() -> Special:
        return Special(f"%{name}", t, min_sm)
    get.__name__ = name
    get.__doc__ = doc or f"``%{name}`` ({t.name})"
    return get


laneid = _scalar("laneid", u32)
warpid = _scalar("warpid", u32)
nwarpid = _scalar("nwarpid", u32)
smid = _scalar("smid", u32)
nsmid = _scalar("nsmid", u32)
gridid = _scalar("gridid", u64)
cluster_ctarank = _scalar("cluster_ctarank", u32, 90)
cluster_nctarank = _scalar("cluster_nctarank", u32, 90)
is_explicit_cluster = _scalar("is_explicit_cluster", pred, 90)
clock = _scalar("clock", u32)
clock_hi = _scalar("clock_hi", u32)
clock64 = _scalar("clock64", u64)
globaltimer = _scalar("globaltimer", u64)
globaltimer_lo = _scalar("globaltimer_lo", u32)
globaltimer_hi = _scalar("globaltimer_hi", u32)
lanemask_eq = _scalar("lanemask_eq", u32)
lanemask_le = _scalar("lanemask_le", u32)
lanemask_lt = _scalar("lanemask_lt", u32)
lanemask_ge = _scalar("lanemask_ge", u32)
lanemask_gt = _scalar("lanemask_gt", u32)
dynamic_smem_size = _scalar("dynamic_smem_size", u32)
total_smem_size = _scalar("total_smem_size", u32)
aggr_smem_size = _scalar("aggr_smem_size", u32, 90)


def envreg(n: int) -> Special:
    """``%envreg<n>``, n in 0..31."""
    if not isinstance(n, int) or not 0 <= n < 32:
        from ...errors import PtxValueError

        raise PtxValueError(f"envreg index must be 0..31, got {n!r}")
    return Special(f"%envreg{n}", u32)


def pm(n: int, wide: bool = False) -> Special:
    """Performance monitor ``%pm<n>`` (``%pm<n>_64`` with ``wide``)."""
    return Special(f"%pm{n}{'_64' if wide else ''}", u64 if wide else u32)


_WIDE = {"%gridid", "%clock64", "%globaltimer"}
_SM90 = ("%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank",
         "%cluster_nctarank", "%is_explicit_cluster", "%aggr_smem_size")


def sreg(name: str) -> Special:
    """Any special register by name: ``ptx.sreg("%cluster_ctarank")``,
    ``ptx.sreg("%clusterid.x")`` (the ``%`` is optional). 64-bit ones (``%clock64``,
    ``%globaltimer``, ``%gridid``, ``%pm<n>_64``) are u64, the rest u32. No code is emitted;
    arithmetic on it first moves it into a register.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     rank = reg.from_(ptx.sreg("%cluster_ctarank"), u32)
        >>> t.lines()
        ['mov.u32 %r0, %cluster_ctarank;']
    """
    if not isinstance(name, str) or not name.lstrip("%"):
        from ...errors import PtxValueError

        raise PtxValueError(f"ptx.sreg: expected a special register name such as "
                            f"'%cluster_ctarank', got {name!r}")
    n = "%" + name.lstrip("%")
    t = u64 if n in _WIDE or n.endswith("_64") else pred if n == "%is_explicit_cluster" else u32
    min_sm = 90 if n.split(".")[0] in _SM90 else 0
    return Special(n, t, min_sm)


def ctaid_x() -> Special:
    """``%ctaid.x``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     b = reg.from_(ptx.ctaid_x(), u32)
        >>> t.lines()
        ['mov.u32 %r0, %ctaid.x;']
    """
    return ctaid.x()


def ctaid_y() -> Special:
    """``%ctaid.y``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     b = reg.from_(ptx.ctaid_y(), u32)
        >>> t.lines()
        ['mov.u32 %r0, %ctaid.y;']
    """
    return ctaid.y()
