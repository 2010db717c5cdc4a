"""``ptx.cluster``: thread-block clusters and distributed shared memory (sm_90).

``ptx.cluster.arrive(relaxed=True)``, ``ptx.cluster.wait()``, ``ptx.cluster.sync()`` (arrive +
wait: two instructions); ``ptx.cluster.mapa(addr, rank)`` (the same shared variable in CTA
``rank``), ``ptx.cluster.getctarank(addr)``, ``ptx.cluster.map_shared(buf, rank)`` (mapa of a
shared buffer's address: a u32 ``.shared::cluster`` address); the ``%cluster_*`` registers:
``ctarank()``, ``nctarank()``, ``ctaid()``, ``nctaid()``, ``clusterid()``, ``nclusterid()``,
``is_explicit()``. ``try_cancel`` / ``query_cancel``: cluster launch control (sm_100)."""
from __future__ import annotations

from ...types import b32, pred as pred_t, u32, u64
from ..values import Register
from . import special
from ._wrap import addr as _addr, emit, new, new_array


def arrive(*, relaxed: bool = False, release: bool = False, aligned: bool = False, pred=None):
    """``barrier.cluster.arrive{.release|.relaxed}{.aligned}`` (``aligned=True``: every
    thread of the warp executes it together)."""
    sem = ".relaxed" if relaxed else (".release" if release else "")
    emit(f"barrier.cluster.arrive{sem}{'.aligned' if aligned else ''}", (), pred)


def wait(*, acquire: bool = False, aligned: bool = False, pred=None):
    """``barrier.cluster.wait{.acquire}{.aligned}``."""
    emit(f"barrier.cluster.wait{'.acquire' if acquire else ''}{'.aligned' if aligned else ''}",
         (), pred)


def sync(*, aligned: bool = False):
    """``barrier.cluster.arrive`` then ``barrier.cluster.wait`` (``.aligned`` both with
    ``aligned=True``)."""
    arrive(aligned=aligned)
    wait(aligned=aligned)


def mapa(address, rank, *, out=None, pred=None):
    """``mapa.shared::cluster.u32|u64 d, a, rank``: the address of the corresponding variable
    in CTA ``rank`` of the cluster (a register address keeps its width)."""
    t = address.type if isinstance(address, Register) else u32
    out = out or new(u64 if t.bits == 64 else u32)
    emit(f"mapa.shared::cluster.u{32 if t.bits == 32 else 64}", (out, address, rank), pred)
    return out


def map_shared(buf, rank, *, pred=None):
    """The ``.shared::cluster`` address (u32) of shared buffer ``buf`` in CTA ``rank``:
    ``mov.u32 r, buf`` + ``mapa.shared::cluster.u32 d, r, rank``."""
    return mapa(buf.ptr(), rank, pred=pred)


def getctarank(address, *, out=None, pred=None):
    """``getctarank.shared::cluster.u32|u64 d, a``: the CTA rank owning a cluster address."""
    t = address.type if isinstance(address, Register) else u32
    out = out or new(u32)
    emit(f"getctarank.shared::cluster.u{32 if t.bits == 32 else 64}", (out, address), pred)
    return out


def try_cancel(result_addr, mbar, *, multicast: bool = False, pred=None):
    """``clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
    {.multicast::cluster::all}.b128 [addr], [mbar]`` (sm_100)."""
    mc = ".multicast::cluster::all" if multicast else ""
    emit(f"clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{mc}"
         f".b128", (_addr(result_addr), _addr(mbar)), pred)


def query_cancel(handle, what="is_canceled", *, pred=None):
    """``clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, handle`` or
    ``.get_first_ctaid{::x,::y,::z}.b32.b128`` / ``.get_first_ctaid.v4.b32.b128``."""
    if what == "is_canceled":
        out = new(pred_t)
        emit("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128", (out, handle), pred)
    elif what == "get_first_ctaid":
        out = new_array(b32, 4)
        emit("clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128", (out, handle), pred)
    else:
        from ._wrap import choice

        dim = choice("ptx.cluster.query_cancel", "what", what,
                     (".get_first_ctaid::x", ".get_first_ctaid::y", ".get_first_ctaid::z"))
        out = new(b32)
        emit(f"clusterlaunchcontrol.query_cancel{dim}.b32.b128", (out, handle), pred)
    return out


ctarank = special.cluster_ctarank
nctarank = special.cluster_nctarank
ctaid = special.cluster_ctaid
nctaid = special.cluster_nctaid
clusterid = special.clusterid
nclusterid = special.nclusterid
is_explicit = special.is_explicit_cluster



def rank(cta_rank: int):
    """A predicate: is this CTA rank ``cta_rank`` of its cluster (``mov.u32 r,
    %cluster_ctarank; setp.eq.u32 p, r, cta_rank;``)."""
    r = new(u32)
    emit("mov.u32", (r, special.cluster_ctarank()))
    p = new(pred_t)
    emit("setp.eq.u32", (p, r, cta_rank))
    return p


def _cta(cta_id):
    if isinstance(cta_id, int) and not isinstance(cta_id, bool):
        c = new(u32)
        emit("mov.u32", (c, cta_id))
        return c
    return cta_id


def _bar_operand(bar_addr):
    """A barrier address as mapa's source: a register, or the symbol of a shared buffer."""
    from ...ir.nodes import Sym

    if isinstance(bar_addr, Register):
        return bar_addr
    a = _addr(bar_addr, "ptx.cluster", "bar_addr")
    if type(a.base) is Sym:
        return Sym(a.base.name, a.base.offset + a.offset)
    if a.offset:
        r = new(u32)
        emit("add.u32", (r, a.base, a.offset))
        return r
    return a.base


def map_shared_u32(bar_addr, cta_id, *, pred=None):
    """The ``.shared::cluster`` address (b32) of ``bar_addr`` in CTA ``cta_id``:
    ``mapa.shared::cluster.u32 m, bar, cta;`` (an int ``cta_id`` is moved to a register)."""
    m = new(b32)
    c = _cta(cta_id)
    emit("mapa.shared::cluster.u32", (m, _bar_operand(bar_addr), c), pred)
    return m


def arrive_remote(bar_addr, cta_id, count=1, *, pred=None):
    """Arrive on the mbarrier at ``bar_addr`` in CTA ``cta_id`` of the cluster:
    ``mapa.shared::cluster.u32 r, bar, cta; mbarrier.arrive.shared::cluster.b64 _, [r],
    count;``."""
    from ...ir.nodes import Addr, Sink
    from ..values import as_operand

    r = map_shared_u32(bar_addr, cta_id, pred=pred)
    emit("mbarrier.arrive.shared::cluster.b64", (Sink(), Addr(as_operand(r), 0), count), pred)


def arrive_multicast(bar_addr, mask, count=1, *, pred=None):
    """Not available: ``mbarrier.arrive.shared::cluster.multicast::cluster`` is not a form
    ptxas accepts (13.x: "Illegal modifier '.multicast::cluster' for instruction
    'mbarrier.arrive'"); arrive on each CTA of the mask with :func:`arrive_remote`."""
    from ...errors import NotSupportedError
    from ..context import user_loc

    raise NotSupportedError(
        "ptx.cluster.arrive_multicast: ptxas has no mbarrier.arrive.shared::cluster"
        ".multicast::cluster form (\"Illegal modifier '.multicast::cluster'\"); call "
        "ptx.cluster.arrive_remote(bar, cta) for each CTA of the mask", loc=user_loc())


__all__ = ["arrive", "wait", "sync", "mapa", "map_shared", "getctarank", "try_cancel",
           "query_cancel", "ctarank", "nctarank", "ctaid", "nctaid", "clusterid", "nclusterid",
           "is_explicit", "rank", "map_shared_u32", "arrive_remote", "arrive_multicast"]
