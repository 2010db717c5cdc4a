"""``ptx.fence``: memory ordering. ``ptx.fence.fence("acq_rel", "cluster")``,
``ptx.fence.proxy_async("shared::cta")``, ``ptx.fence.mbarrier_init()``,
``ptx.fence.membar("gl")``, and the other fence.proxy / sync_restrict forms."""
from __future__ import annotations

from ...isa.common import SCOPES
from ._wrap import addr as _addr, choice, emit, int_choice


def fence(sem=None, scope="gpu", *, pred=None):
    """``fence{.sc|.acq_rel}.scope`` (sm_70)."""
    s = choice("ptx.fence.fence", "sem", sem, (".sc", ".acq_rel"), none_ok=True)
    sc = choice("ptx.fence.fence", "scope", scope, SCOPES)
    emit(f"fence{s or ''}{sc}", (), pred)


def membar(level="gl", *, pred=None):
    """``membar.cta|gl|sys``."""
    lv = choice("ptx.fence.membar", "level", level, (".cta", ".gl", ".sys"))
    emit(f"membar{lv}", (), pred)


def membar_proxy_alias(*, pred=None):
    """``membar.proxy.alias``."""
    emit("membar.proxy.alias", (), pred)


def proxy_alias(*, pred=None):
    """``fence.proxy.alias``: order generic accesses through aliased virtual addresses."""
    emit("fence.proxy.alias", (), pred)


def proxy_async(space=None, *, pred=None):
    """``fence.proxy.async{.global|.shared::cta|.shared::cluster}``: order generic-proxy
    writes before async-proxy (TMA, wgmma, tcgen05) reads."""
    sp = choice("ptx.fence.proxy_async", "space", space,
                (".global", ".shared::cta", ".shared::cluster"), none_ok=True)
    emit(f"fence.proxy.async{sp or ''}", (), pred)


def proxy_tensormap_release(scope="gpu", *, pred=None):
    """``fence.proxy.tensormap::generic.release.scope``."""
    sc = choice("ptx.fence.proxy_tensormap_release", "scope", scope, SCOPES)
    emit(f"fence.proxy.tensormap::generic.release{sc}", (), pred)


def proxy_tensormap_acquire(address, scope="gpu", size: int = 128, *, pred=None):
    """``fence.proxy.tensormap::generic.acquire.scope [addr], 128``."""
    sc = choice("ptx.fence.proxy_tensormap_acquire", "scope", scope, SCOPES)
    int_choice("ptx.fence.proxy_tensormap_acquire", "size", size, (128,))
    emit(f"fence.proxy.tensormap::generic.acquire{sc}", (_addr(address), size), pred)


def mbarrier_init(*, pred=None):
    """``fence.mbarrier_init.release.cluster``: make mbarrier.init visible cluster-wide."""
    emit("fence.mbarrier_init.release.cluster", (), pred)


def acquire_sync_restrict(*, pred=None):
    """``fence.acquire.sync_restrict::shared::cluster.cluster``."""
    emit("fence.acquire.sync_restrict::shared::cluster.cluster", (), pred)


def release_sync_restrict(*, pred=None):
    """``fence.release.sync_restrict::shared::cta.cluster``."""
    emit("fence.release.sync_restrict::shared::cta.cluster", (), pred)


def proxy_async_generic(sem="acquire", *, pred=None):
    """``fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster`` or
    ``....release.sync_restrict::shared::cta.cluster``."""
    s = choice("ptx.fence.proxy_async_generic", "sem", sem, (".acquire", ".release"))
    where = "shared::cluster" if s == ".acquire" else "shared::cta"
    emit(f"fence.proxy.async::generic{s}.sync_restrict::{where}.cluster", (), pred)


__all__ = ["fence", "membar", "membar_proxy_alias", "proxy_alias", "proxy_async",
           "proxy_tensormap_release", "proxy_tensormap_acquire", "mbarrier_init",
           "acquire_sync_restrict", "release_sync_restrict", "proxy_async_generic"]


def proxy_async_shared_cta(*, pred=None):
    """``fence.proxy.async.shared::cta``: generic-proxy writes to this CTA's shared memory
    become visible to the async proxy (TMA stores, wgmma, tcgen05)."""
    emit("fence.proxy.async.shared::cta", (), pred)


def proxy_async_shared_cluster(*, pred=None):
    """``fence.proxy.async.shared::cluster``."""
    emit("fence.proxy.async.shared::cluster", (), pred)


def proxy_async_global(*, pred=None):
    """``fence.proxy.async.global``."""
    emit("fence.proxy.async.global", (), pred)


def proxy_async_generic_acquire_shared_cluster(*, pred=None):
    """``fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster``."""
    proxy_async_generic("acquire", pred=pred)


def proxy_async_generic_release_shared_cta(*, pred=None):
    """``fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster``."""
    proxy_async_generic("release", pred=pred)


__all__ += ["proxy_async_shared_cta", "proxy_async_shared_cluster", "proxy_async_global",
            "proxy_async_generic_acquire_shared_cluster",
            "proxy_async_generic_release_shared_cta"]
