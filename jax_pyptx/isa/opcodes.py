"""Instruction names and how a dotted PTX opcode splits into name + modifiers.

An instruction's *name* is the part of its opcode that identifies the instruction in the PTX
ISA (``ld``, ``cp.async.bulk.tensor``, ``wgmma.mma_async``, ``mbarrier.try_wait``); the rest
are modifiers (``.global``, ``.v4``, ``.f32``). The parser and the DSL both split with
``split_opcode`` so text and traced kernels give identical IR.
"""
from __future__ import annotations

# Multi-part instruction names (longest match wins). Single-word names need no entry.
COMPOUND_NAMES = frozenset({
    # memory / async copies
    "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
    "cp.async.mbarrier.arrive", "cp.async.bulk", "cp.async.bulk.tensor",
    "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "cp.async.bulk.prefetch",
    "cp.async.bulk.prefetch.tensor", "cp.reduce.async.bulk", "cp.reduce.async.bulk.tensor",
    "cp.async.mbarrier", "st.async", "red.async", "st.bulk", "multimem.ld_reduce", "multimem.st",
    "multimem.red", "tensormap.replace", "tensormap.cp_fenceproxy",
    # barriers
    "bar.sync", "bar.arrive", "bar.red", "bar.warp.sync", "barrier.sync", "barrier.arrive",
    "barrier.red", "bar.cta.sync", "bar.cta.arrive", "bar.cta.red", "barrier.cta.sync",
    "barrier.cta.arrive", "barrier.cta.red", "barrier.cluster.arrive", "barrier.cluster.wait", "fence.proxy",
    # mbarrier
    "mbarrier.init", "mbarrier.inval", "mbarrier.arrive", "mbarrier.arrive_drop",
    "mbarrier.expect_tx", "mbarrier.complete_tx", "mbarrier.test_wait", "mbarrier.try_wait",
    "mbarrier.pending_count",
    # warp-level
    "shfl.sync", "vote.sync", "match.sync", "redux.sync", "elect.sync", "activemask",
    # tensor cores
    "mma.sync", "mma.sp", "mma.sp::ordered_metadata", "ldmatrix.sync", "stmatrix.sync",
    "wmma.load", "wmma.store", "wmma.mma", "movmatrix.sync",
    "wgmma.mma_async", "wgmma.mma_async.sp", "wgmma.fence", "wgmma.commit_group",
    "wgmma.wait_group",
    "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.mma",
    "tcgen05.mma.sp", "tcgen05.mma.ws", "tcgen05.mma.ws.sp", "tcgen05.ld", "tcgen05.st",
    "tcgen05.cp", "tcgen05.shift", "tcgen05.commit", "tcgen05.wait::ld", "tcgen05.wait::st",
    "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync",
    # misc
    "griddepcontrol.launch_dependents", "griddepcontrol.wait", "setmaxnreg",
    "clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.query_cancel",
    "cvt.pack", "prefetchu", "applypriority", "discard", "createpolicy", "getctarank",
})

_MAX_PARTS = max(n.count(".") for n in COMPOUND_NAMES) + 1


def split_opcode(full: str) -> tuple[str, tuple[str, ...]]:
    """``"ld.global.v4.f32"`` -> ``("ld", (".global", ".v4", ".f32"))``.

    The longest dotted prefix that is a known compound name is the instruction name.
    """
    parts = full.split(".")
    for n in range(min(len(parts), _MAX_PARTS), 1, -1):
        name = ".".join(parts[:n])
        if name in COMPOUND_NAMES:
            return name, tuple("." + p for p in parts[n:])
    return parts[0], tuple("." + p for p in parts[1:])
