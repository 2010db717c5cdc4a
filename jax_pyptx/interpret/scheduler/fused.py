"""The scheduler's planned runs (``Context._run``): where the instruction at hand starts a
segment (``segments``), a run of shared stores (``store_runs``), of ``wgmma.mma_async``
(``wgmma_runs``) or of issuers (``issue_runs``), the run goes at once when the loop allows it
(no yield and no other group's PC inside it) and the run does not stand back."""
from __future__ import annotations

from . import issue_runs, segments, store_runs, wgmma_runs


class FusedMixin:
    """``Context``'s dispatch of planned runs: each answers the instructions it ran (0: none,
    they run one at a time)."""

    def _fused(self, d, g, n, pc, marks):
        """The instruction count of the planned run at ``d`` (a segment, a run of shared stores
        or of wgmma.mma_async) run for ``g`` at once, or 0 where it runs one instruction at a
        time."""
        if d.wrun is not None:
            return self._wgmmas(d.wrun, g, n, pc, marks)
        if d.srun is not None:
            return self._stores(d.srun, g, n, pc, marks)
        if d.irun is not None:
            return self._issues(d.irun, g, n, pc, marks)
        return self._batched(d.seg, g, n, pc, marks)

    def _issues(self, irun, g, n, pc, marks):
        """The instruction count of the run of issuers ``irun`` at ``pc`` run for ``g`` with its
        arithmetic hoisted (``issue_runs``), or 0 where it runs one instruction at a time: as
        for a segment (``_batched``), or ``issue_runs.run`` stood back."""
        if (self.fuse and n + irun.span < self.YIELD_AFTER and not (marks and irun.crosses(marks, pc))
                and issue_runs.run(self, irun, g)):
            return irun.span
        return 0

    def _wgmmas(self, wrun, g, n, pc, marks):
        """The instruction count of the run of ``wgmma.mma_async`` ``wrun`` at ``pc`` issued for
        ``g`` as one (``wgmma_runs``), or 0 where it runs one instruction at a time: as for a
        segment (``_batched``), or ``wgmma_runs.run`` stood back."""
        if self.fuse and n + wrun.span < self.YIELD_AFTER and not (marks and wrun.crosses(marks, pc)):
            return wgmma_runs.run(self, wrun, g, self.YIELD_AFTER - n, marks)
        return 0

    def _batched(self, seg, g, n, pc, marks):
        """The instruction count of segment ``seg`` run at ``pc`` for ``g`` in batches
        (``segments``), or 0 where it runs one instruction at a time: batching is off, the
        loop's next yield (``YIELD_AFTER``, ``n`` instructions run) falls inside it, a group
        waits inside it (``marks``), or ``segments.run`` stood back."""
        if (self.fuse and n + seg.span < self.YIELD_AFTER and not (marks and seg.crosses(marks, pc))
                and segments.run(self, seg, g)):
            return seg.span
        return 0

    def _stores(self, srun, g, n, pc, marks):
        """The instruction count of the run of shared stores ``srun`` at ``pc`` run for ``g``
        with their bookkeeping made once (``store_runs``), or 0 where it runs one instruction at
        a time: unsanitized (nothing to make once), batching off, statistics kept, or as for a
        segment (``_batched``)."""
        if (self.sanitize and self.fuse and self.stats is None and n + srun.span < self.YIELD_AFTER
                and not (marks and srun.crosses(marks, pc)) and store_runs.run(self, srun, g)):
            return srun.span
        return 0
