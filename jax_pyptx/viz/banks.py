"""Swizzle maps and shared-memory bank conflicts.

Shared memory has 32 banks of 4 bytes; a 16-byte chunk spans four consecutive banks, so the
8 chunks of a 128-byte line cover every bank once ("bank group" g = banks 4g..4g+3). A warp's
request is served in *phases*: accesses of ``width`` bytes per lane take ``width * 32 / 128``
phases of ``128 / width`` lanes each (1 phase for 4-byte accesses, 4 phases of 8 lanes for
16-byte ones). Within a phase, lanes that touch different 4-byte words of the same bank are
serialized (the same word is a broadcast); the phase costs as many *wavefronts* as the most
loaded bank has distinct words. Conflicts = wavefronts - phases.

Examples:
    >>> from jax_pyptx.viz.banks import bank_conflicts, chunk_addresses
    >>> rows = chunk_addresses(range(8), 0)          # ldmatrix: chunk 0 of 8 rows
    >>> lanes = [rows[i % 8] for i in range(32)]
    >>> bank_conflicts(lanes, width=16).conflicts, bank_conflicts(lanes, width=16, mode="128B").conflicts
    (28, 0)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..isa.swizzle import mode_name, swizzle

__all__ = ["SwizzleMap", "swizzle_map", "BankReport", "bank_conflicts", "chunk_addresses"]

BANKS = 32
WORD = 4


@dataclass(frozen=True)
class SwizzleMap:
    """Where each logical 16-byte chunk of ``rows`` rows of ``row_bytes`` bytes lands:
    ``chunk[r, c]`` is the physical chunk index within row ``r`` of logical chunk ``c``;
    ``bank_group[r, c]`` its bank group (banks ``4g .. 4g+3``).

    Examples:
        >>> from jax_pyptx.viz.banks import SwizzleMap, swizzle_map
        >>> m = swizzle_map("64B", rows=4)
        >>> isinstance(m, SwizzleMap), m.chunk.tolist()  # doctest: +NORMALIZE_WHITESPACE
        (True, [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6], [2, 3, 0, 1, 6, 7, 4, 5],
         [3, 2, 1, 0, 7, 6, 5, 4]])
    """

    mode: str | None
    row_bytes: int
    chunk: np.ndarray
    bank_group: np.ndarray

    @property
    def rows(self) -> int:
        """Number of rows mapped.

        Examples:
            >>> from jax_pyptx.viz.banks import swizzle_map
            >>> swizzle_map("128B", rows=16).rows
            16
        """
        return self.chunk.shape[0]


def swizzle_map(mode, rows: int = 8, row_bytes: int = 128) -> SwizzleMap:
    """The chunk permutation of ``mode`` (None, "32B", "64B", "128B", or tcgen05's
    "128B_base32B": the 128B pattern on 32-byte units) over a buffer of ``rows`` rows of
    ``row_bytes`` bytes starting on an atom boundary.

    Examples:
        >>> swizzle_map("128B").chunk[1].tolist()           # row 1: chunks swap pairwise
        [1, 0, 3, 2, 5, 4, 7, 6]
    """
    if row_bytes % 16:
        raise ValueError(f"row_bytes={row_bytes} is not a multiple of 16 (one chunk)")
    m = mode_name(mode)
    r, c = np.meshgrid(np.arange(rows), np.arange(row_bytes // 16), indexing="ij")
    logical = r * row_bytes + c * 16
    phys = swizzle(logical, m)
    return SwizzleMap(m, row_bytes, (phys % row_bytes) // 16, (phys % 128) // 16)


@dataclass(frozen=True)
class BankReport:
    """``wavefronts`` the request costs, ``phases`` it must take, ``conflicts`` the difference;
    ``per_phase``: wavefronts of each phase.

    Examples:
        >>> from jax_pyptx.viz.banks import BankReport, bank_conflicts
        >>> r = bank_conflicts([4 * i for i in range(32)])
        >>> isinstance(r, BankReport), r.wavefronts, r.phases, r.conflicts
        (True, 1, 1, 0)
    """

    wavefronts: int
    phases: int
    per_phase: tuple

    @property
    def conflicts(self) -> int:
        """Wavefronts beyond the minimum: wavefronts - phases (0: conflict-free).

        Examples:
            >>> from jax_pyptx.viz.banks import bank_conflicts
            >>> bank_conflicts([8 * i for i in range(32)]).conflicts     # stride 2 words: 2-way
            1
        """
        return self.wavefronts - self.phases


def bank_conflicts(addresses, width: int = 4, mode=None) -> BankReport:
    """Bank conflicts of one warp-wide shared-memory access: lane i touches ``width`` bytes at
    byte ``addresses[i]`` (logical; swizzled by ``mode`` first). ``width`` is 4, 8 or 16.

    Examples:
        >>> bank_conflicts([32 * 4 * i for i in range(32)]).conflicts      # one column: 31-way
        31
    """
    if width not in (4, 8, 16):
        raise ValueError(f"width={width}: allowed 4, 8, 16 bytes per lane")
    addr = swizzle(np.asarray(addresses, np.int64), mode_name(mode))
    if addr.ndim != 1 or not 1 <= len(addr) <= 32:
        raise ValueError(f"addresses: one per lane (1..32), got shape {addr.shape}")
    if np.any(addr % width):
        raise ValueError(f"addresses must be multiples of width={width}")
    lanes_per_phase = 128 // width
    per = []
    for p in range(0, len(addr), lanes_per_phase):
        words = (addr[p:p + lanes_per_phase, None] + np.arange(0, width, WORD)).ravel() // WORD
        words = np.unique(words)
        per.append(int(np.bincount(words % BANKS, minlength=BANKS).max()))
    return BankReport(sum(per), len(per), tuple(per))


def chunk_addresses(rows, chunk: int, row_bytes: int = 128) -> list:
    """Byte addresses of logical chunk ``chunk`` of each row in ``rows``: the pattern of
    ``ldmatrix`` reading one 8x8 b16 matrix column-block (8 lanes, 16 bytes each).

    Examples:
        >>> from jax_pyptx.viz.banks import chunk_addresses
        >>> chunk_addresses(range(4), 1), chunk_addresses([0, 1], 2, row_bytes=64)
        ([16, 144, 272, 400], [32, 96])
    """
    return [int(r) * row_bytes + 16 * chunk for r in rows]
