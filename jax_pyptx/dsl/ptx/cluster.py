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


def arrive(*, relaxed: bool = False, release: bool = False, aligned: bool = True, pred=None):
    """``barrier.cluster.arrive{.release|.relaxed}{.aligned}``."""
    sem = ".relaxed" if relaxed else (".release" if release else "")
    emit(f"barrier.cluster.arrive{sem}{'.aligned' if aligned else ''}", (), pred)


def wait(*, acquire: bool = False, aligned: bool = True, pred=None):
    """``barrier.cluster.wait{.acquire}{.aligned}``."""
    emit(f"barrier.cluster.wait{'.acquire' if acquire else ''}{'.aligned' if aligned else ''}",
         (), pred)


def sync(*, aligned: bool = True):
    """``barrier.cluster.arrive.aligned`` then ``barrier.cluster.wait.aligned``."""
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

__all__ = ["arrive", "wait", "sync", "mapa", "map_shared", "getctarank", "try_cancel",
           "query_cancel", "ctarank", "nctarank", "ctaid", "nctaid", "clusterid", "nclusterid",
           "is_explicit"]
