"""Parse ``ptxas -v`` output into a resource report.

Examples:
    >>> from jax_pyptx.toolchain.report import parse_report
    >>> r = parse_report("ptxas info    : Used 40 registers, 8 bytes stack frame")
    >>> r.registers, r.stack_frame
    (40, 8)
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceReport:
    """ptxas's resource usage of one kernel: registers per thread, spill bytes, stack frame,
    shared and constant memory, named barriers, and the report text.

    Examples:
        >>> from jax_pyptx.toolchain.report import ResourceReport
        >>> r = ResourceReport(registers=32, smem=4096)
        >>> r.registers, r.spill_stores
        (32, 0)
    """
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0
    smem: int = 0
    cmem: int = 0
    barriers: int = 0
    text: str = ""

    def line(self) -> str:
        """The report on one line (registers, spills, stack, shared memory).

        Examples:
            >>> from jax_pyptx.toolchain.report import ResourceReport
            >>> ResourceReport(registers=32, smem=4096).line()
            'registers=32 spill_stores=0B spill_loads=0B stack=0B smem=4096B'
        """
        return (f"registers={self.registers} spill_stores={self.spill_stores}B "
                f"spill_loads={self.spill_loads}B stack={self.stack_frame}B smem={self.smem}B")


def _int(pat, text, default=0):
    m = re.search(pat, text)
    return int(m.group(1)) if m else default


def parse_report(text: str) -> ResourceReport:
    """The ``ResourceReport`` in ``ptxas -v`` output ``text`` (fields it does not mention
    are 0).

    Examples:
        >>> from jax_pyptx.toolchain.report import parse_report
        >>> text = "ptxas info    : Used 168 registers, used 1 barriers, 8 bytes spill stores, 4 bytes spill loads"
        >>> r = parse_report(text)
        >>> r.registers, r.barriers, r.spill_stores, r.spill_loads
        (168, 1, 8, 4)
    """
    return ResourceReport(
        registers=_int(r"Used (\d+) registers", text),
        spill_stores=_int(r"(\d+) bytes spill stores", text),
        spill_loads=_int(r"(\d+) bytes spill loads", text),
        stack_frame=_int(r"(\d+) bytes stack frame", text),
        smem=_int(r"(\d+) bytes smem", text),
        cmem=_int(r"(\d+) bytes cmem\[0\]", text),
        barriers=_int(r"used (\d+) barriers", text),
        text=text,
    )
