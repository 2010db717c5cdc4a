"""Occupancy: how many CTAs of a kernel fit on one SM, and what limits them.

The rules of the CUDA occupancy calculator for sm_80 .. sm_100: registers are allocated per
warp in units of 256 (``ceil(regs * 32 / 256) * 256``), shared memory per CTA in units of 128
bytes plus the driver's 1 KB reservation, and an SM holds at most 2048 threads and 32 CTAs.

Examples:
    >>> from jax_pyptx.perf.occupancy import occupancy
    >>> occ = occupancy("H100", 128, 64, 0)
    >>> occ.ctas_per_sm, occ.limiter
    (8, 'registers')
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .devices import Device, device as _device

__all__ = ["Occupancy", "occupancy"]


@dataclass(frozen=True)
class Occupancy:
    """CTAs of a kernel resident on one SM, and the resource that caps them.

    Examples:
        >>> from jax_pyptx.perf.occupancy import Occupancy, occupancy
        >>> occ = occupancy("H100", 256, 128, 100 * 1024)
        >>> isinstance(occ, Occupancy), occ.ctas_per_sm, occ.warps_per_sm, occ.limiter
        (True, 2, 16, 'registers')
    """

    ctas_per_sm: int
    warps_per_sm: int
    limiter: str                 # "registers", "shared memory", "threads", "CTAs" or why 0
    max_warps: int = 64

    @property
    def fraction(self) -> float:
        """Resident warps over the SM's maximum.

        Examples:
            >>> from jax_pyptx.perf.occupancy import occupancy
            >>> occupancy("H100", 256, 128, 100 * 1024).fraction
            0.25
        """
        return self.warps_per_sm / self.max_warps

    def __str__(self):
        return f"{self.ctas_per_sm} CTA/SM ({self.warps_per_sm} warps, {self.limiter})"


def occupancy(dev, threads: int, registers: int, smem_bytes: int) -> Occupancy:
    """Resident CTAs per SM of ``dev`` (a ``Device`` or a ``DEVICES`` key) for CTAs of
    ``threads`` threads using ``registers`` registers per thread and ``smem_bytes`` of shared
    memory (static + dynamic).

    Examples:
        >>> occupancy("H100", 256, 128, 48 * 1024).ctas_per_sm
        2
    """
    d: Device = _device(dev)
    for name, v, lo in (("threads", threads, 1), ("registers", registers, 0),
                        ("smem_bytes", smem_bytes, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"occupancy: {name} must be an int >= {lo} ({name} per CTA"
                             f"{' per thread' if name == 'registers' else ''}), got {v!r}")
    max_warps = d.max_threads_per_sm // 32
    warps = -(-threads // 32)
    if threads > 1024 or registers > d.max_regs_per_thread or smem_bytes > d.smem_per_cta:
        why = ("more than 1024 threads" if threads > 1024 else
               f"more than {d.max_regs_per_thread} registers" if registers > d.max_regs_per_thread
               else f"more than {d.smem_per_cta} bytes of shared memory")
        return Occupancy(0, 0, f"does not fit: {why}", max_warps)
    regs_warp = -(-max(registers, 1) * 32 // 256) * 256
    limits = {"registers": (d.regs_per_sm // regs_warp) // warps,
              "threads": d.max_threads_per_sm // (warps * 32),
              "CTAs": d.max_ctas_per_sm}
    smem = -(-smem_bytes // 128) * 128 + d.smem_reserved_per_cta
    limits["shared memory"] = d.smem_per_sm // smem
    limiter = min(limits, key=lambda k: (limits[k], k != "threads"))
    n = limits[limiter]
    return Occupancy(n, n * warps, limiter if n else f"does not fit: {limiter}", max_warps)
