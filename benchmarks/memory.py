"""Peak memory of tracing a 30k-instruction kernel (target < 150 MB peak RSS; issue 14).

    python benchmarks/memory.py

Runs the trace in a fresh subprocess and reads its peak RSS (``ru_maxrss``), next to the RSS of
the same process after imports only, so the table shows what tracing itself adds.
"""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import resource, sys
sys.path.insert(0, {root!r})
from jax_pyptx import kernel, ptx, reg
from jax_pyptx.types import f32, u32
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
@kernel(arch="sm_90a")
def big(*, N={n}):
    a = reg.scalar(f32, 1.0)
    t = reg.from_(ptx.special.tid.x(), u32)
    for i in ptx.static_range(N // 2):
        a += 1.5
        t ^= i
    ptx.ret()
text = big.ptx()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(base, peak, big.trace().instruction_count, len(text))
"""


def main():
    rows = []
    for n in (10_000, 30_000, 60_000):
        out = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT, n=n)],
                             capture_output=True, text=True, check=True).stdout.split()
        base, peak, count, size = (int(x) for x in out)
        rows.append((count, base / 1024, peak / 1024, (peak - base) / 1024, size / 1e6))
    print(f"{'instructions':>12} {'RSS after import MB':>20} {'peak RSS MB':>12} "
          f"{'tracing adds MB':>16} {'PTX MB':>8}")
    for count, base, peak, add, size in rows:
        print(f"{count:>12} {base:>20.1f} {peak:>12.1f} {add:>16.1f} {size:>8.2f}")
    at30 = [r for r in rows if 29_000 <= r[0] <= 31_000][0]
    print(f"\n30k instructions: peak {at30[2]:.1f} MB (target < 150 MB: ratio {at30[2] / 150:.2f})")


if __name__ == "__main__":
    main()
