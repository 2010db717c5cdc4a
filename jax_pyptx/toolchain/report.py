"""Parse ``ptxas -v`` output into a resource report."""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceReport:
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0
    smem: int = 0
    cmem: int = 0
    barriers: int = 0
    text: str = ""

    def line(self) -> str:
        return (f"registers={self.registers} spill_stores={self.spill_stores}B "
                f"spill_loads={self.spill_loads}B stack={self.stack_frame}B smem={self.smem}B")


def _int(pat, text, default=0):
    m = re.search(pat, text)
    return int(m.group(1)) if m else default


def parse_report(text: str) -> ResourceReport:
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
