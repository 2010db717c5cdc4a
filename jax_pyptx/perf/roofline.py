"""The roofline estimate of a kernel, from what it does.

``roofline(kernel, *small_inputs, at={"M": 4096, ...})`` counts the kernel's global bytes and
tensor-core FLOPs with the interpreter at the small shape, scales them to ``at``
(``counts.fit``), reads registers and shared memory from ptxas (the kernel traced at ``at``),
works out occupancy, and estimates the time on each device:

* ``t_mem = unique bytes / (HBM bandwidth * min(1, CTAs / SMs))``: the distinct bytes read
  and written (the DRAM traffic if the L2 kept everything a kernel re-reads: a GEMM's A and B
  once, not once per CTA) over the bandwidth; a grid smaller than the GPU cannot pull all of
  it. The requested bytes (every load and store) and their ratio to the unique ones (the
  reuse the caches must provide) are shown beside it;
* ``t_tc = sum over input types of FLOPs / (dense tensor peak * wave efficiency)``, with wave
  efficiency ``CTAs / (waves * SMs * CTAs per SM)`` (a partial last wave leaves tensor cores
  idle);
* ``t_core = max over fp32, fp16, fp64, int and SFU of operations / (peak * min(1, CTAs /
  SMs))``: the arithmetic the threads execute outside the tensor cores (``Counts.core``,
  ``perf.ops``), each pipe at its published rate and the pipes side by side (the
  schedulers' issue limit is not modelled); as for memory, a grid smaller than the GPU
  cannot use every SM. The counts are of PTX instructions: integer
  address arithmetic that ptxas folds into addressing modes is counted too;
* the estimate is ``max(t_mem, t_tc, t_core)`` and the kernel is **memory**-, **tensor**-,
  **cuda-core**- or **sfu**-bound by which term wins. Latency and the L2 are not modelled:
  the figure is the floor the kernel's traffic and arithmetic allow, not a prediction of its
  speed.

Each counter is fitted against three sizes of every varied shape variable as a fixed part
plus a power law (``perf.counts.fit``): a lookup table read once per launch is not scaled
with the shape, and ``Roofline.notes()`` lists such fixed terms. When a measurement the fit
did not use is more than ``UNCERTAIN`` (5%) off the fitted value of a total that sets a
row's time (unique bytes, FLOPs or a pipe's operations whose term is at least half the
estimate), the row says so: the ``bound`` cell reads ``memory (uncertain)`` and
``RooflineRow.uncertain`` is True.

``Roofline.table()`` prints one row per (kernel, device), then the notes.

Examples:
    >>> import numpy as np
    >>> from jax_pyptx.example_kernels import twice
    >>> from jax_pyptx.perf.roofline import roofline
    >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24})
    >>> [(row.device.name, row.bound) for row in r.rows]
    [('H100 SXM5', 'memory'), ('B200', 'memory')]
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .counts import UNCERTAIN, Counts, Scaling, _totals, fit
from .devices import Device, device as _device
from .occupancy import Occupancy, occupancy

__all__ = ["Roofline", "RooflineRow", "roofline", "estimate", "DEFAULT_DEVICES"]

DEFAULT_DEVICES = ("H100", "B200")


@dataclass(frozen=True)
class RooflineRow:
    """The estimate of one kernel at one shape on one device.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf import roofline
        >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
        >>> row = r.rows[0]
        >>> row.kernel, row.shape, row.threads, row.bound
        ('twice', {'N': 16777216}, 32, 'memory')
    """

    kernel: str
    shape: dict
    device: Device
    counts: Counts
    registers: int
    smem: int
    threads: int
    occupancy: Occupancy
    waves: int
    t_mem: float                 # seconds
    t_tc: float                  # seconds
    t_core: float = 0.0          # seconds: CUDA cores and SFU
    fit_error: float = 0.0       # the fit's error on the totals that set the time
    core_bound: str = "cuda-core"   # which of the CUDA-core pipes and the SFU sets t_core

    @property
    def uncertain(self) -> bool:
        """Whether the counts come from a poor fit (``fit_error`` past ``UNCERTAIN``).

        Examples:
            >>> from dataclasses import replace
            >>> from jax_pyptx.perf.counts import BufferCounts, Counts
            >>> from jax_pyptx.perf.roofline import estimate
            >>> c = Counts({0: BufferCounts("X", unique_read=1e9)}, ctas=1000)
            >>> row = estimate("k", {}, c, "H100", threads=128, registers=32, smem=0)
            >>> row.uncertain, replace(row, fit_error=0.3).uncertain
            (False, True)
        """
        return self.fit_error > UNCERTAIN

    @property
    def time(self) -> float:
        """The estimate, seconds: ``max(t_mem, t_tc, t_core)``.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf import roofline
            >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
            >>> row = r.rows[0]
            >>> row.time == max(row.t_mem, row.t_tc, row.t_core)
            True
        """
        return max(self.t_mem, self.t_tc, self.t_core)

    @property
    def bound(self) -> str:
        """``"memory"``, ``"tensor"``, ``"cuda-core"``, ``"sfu"`` (the term that sets the
        time), or ``"does not fit"`` (no CTA fits an SM).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf import roofline
            >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
            >>> row = r.rows[0]
            >>> row.bound
            'memory'
        """
        if self.occupancy.ctas_per_sm == 0:
            return "does not fit"
        if self.t_core > max(self.t_mem, self.t_tc):
            return self.core_bound
        return "tensor" if self.t_tc > self.t_mem else "memory"

    @property
    def intensity(self) -> float:
        """Tensor FLOPs per byte of DRAM traffic (unique bytes).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf import roofline
            >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
            >>> row = r.rows[0]
            >>> row.intensity
            0.0
        """
        c = self.counts
        return c.tensor_flops / c.unique_bytes if c.unique_bytes else 0.0

    @property
    def tbs(self) -> float:
        """DRAM traffic (unique bytes) over the estimated time, TB/s.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf import roofline
            >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
            >>> row = r.rows[0]
            >>> 0 < row.tbs <= row.device.hbm_gbs / 1000
            True
        """
        return self.counts.unique_bytes / self.time / 1e12 if self.time else 0.0

    @property
    def tflops(self) -> float:
        """Tensor FLOPs over the estimated time, TFLOP/s.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf import roofline
            >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
            >>> row = r.rows[0]
            >>> row.tflops
            0.0
        """
        return self.counts.tensor_flops / self.time / 1e12 if self.time else 0.0


_COLUMNS = ("kernel", "shape", "device", "CTAs", "occupancy", "waves", "DRAM MB", "reuse",
            "GFLOP", "FLOP/B", "core GOP", "t_mem us", "t_tc us", "t_core us", "est us",
            "bound", "TB/s", "TFLOP/s")


def _shape_text(shape: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in shape.items())


def _cells(r: RooflineRow) -> tuple:
    c = r.counts
    reuse = c.requested_bytes / c.unique_bytes if c.unique_bytes else 0.0
    return (r.kernel, _shape_text(r.shape), r.device.name, f"{c.ctas:.0f}",
            str(r.occupancy), str(r.waves), f"{c.unique_bytes / 1e6:.1f}", f"{reuse:.1f}x",
            f"{c.tensor_flops / 1e9:.1f}", f"{r.intensity:.1f}",
            f"{sum(c.core.values()) / 1e9:.1f}",
            f"{r.t_mem * 1e6:.1f}", f"{r.t_tc * 1e6:.1f}", f"{r.t_core * 1e6:.1f}",
            f"{r.time * 1e6:.1f}", r.bound + (" (uncertain)" if r.uncertain else ""),
            f"{r.tbs:.2f}", f"{r.tflops:.0f}")


def format_table(rows, markdown: bool = False) -> str:
    """Rows as an aligned text table, or a Markdown table with ``markdown=True``.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf import roofline
        >>> from jax_pyptx.perf.roofline import format_table
        >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
        >>> format_table(r.rows) == r.table()
        True
    """
    body = [_cells(r) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        lines += ["| " + " | ".join(c) + " |" for c in body]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(c[i]) for c in body)) if body else len(h)
              for i, h in enumerate(_COLUMNS)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*_COLUMNS), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*c) for c in body]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Roofline:
    """``roofline(...)``'s result: the fitted ``scaling``, and one ``RooflineRow`` per device.

    Examples:
        >>> from jax_pyptx.perf.roofline import Roofline
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf import roofline
        >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("B200",))
        >>> isinstance(r, Roofline), len(r.rows), r.scaling.law("1:store")
        (True, 1, 'N^1')
    """

    scaling: Scaling
    rows: tuple

    def table(self, markdown: bool = False) -> str:
        """The rows as a text table (a Markdown one with ``markdown=True``).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf import roofline
            >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
            >>> print(r.table(markdown=True).splitlines()[0].startswith("|"))
            True
        """
        notes = self.notes()
        return format_table(self.rows, markdown) + "".join(f"{n}\n" for n in notes)

    def notes(self) -> list:
        """Lines on the fit: the fixed terms (``Scaling.fixed_terms``: bytes the estimate
        does not scale) and, when the fit is poor, how far off its check was.

        Examples:
            >>> from jax_pyptx.perf.counts import BufferCounts, Counts, Scaling
            >>> from jax_pyptx.perf.roofline import Roofline
            >>> s = Scaling({"N": 64}, Counts({0: BufferCounts("T", load=4352)}),
            ...             {"0:load": {"N": 1.0}}, fixed={"0:load": 4096.0})
            >>> Roofline(s, ()).notes()
            ['fixed: T load 4096 bytes (does not grow with N)']
        """
        s = self.scaling
        varied = ", ".join(v for v in s.base_env if any(
            v in e for e in s.exponents.values()))
        out = [f"fixed: {name} {f} {v:.0f} bytes (does not grow with {varied})"
               for name, f, v in s.fixed_terms()]
        for row in self.rows[:1]:
            out += [f"fixed: {name} {f} {v:.0f} bytes (the whole buffer at "
                    f"{_shape_text(row.shape)}; its fitted law would pass it)"
                    for name, f, v in s.capped(row.shape)]
        bad = [r for r in self.rows if r.uncertain]
        if bad:
            shape = " ".join(f"{k}={v}" for k, v in s.check_env.items())
            worst = max(r.fit_error for r in bad)
            out.append(f"uncertain: the fitted counts that set the time are {worst:.0%} off "
                       f"a measurement at {shape}; measure at a shape that tiles evenly, or "
                       f"pass inputs= for data-dependent work")
        return out

    def __str__(self):
        return self.table()


def estimate(name: str, shape: dict, counts: Counts, dev, threads: int, registers: int,
             smem: int, fit_error: float = 0.0) -> RooflineRow:
    """The roofline row of a kernel whose work at ``shape`` is ``counts`` (module doc).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf.counts import measure
        >>> from jax_pyptx.perf.roofline import estimate
        >>> c = measure(twice("N"), np.ones(64, np.float32))
        >>> row = estimate("twice", {"N": 64}, c, "H100", threads=32, registers=16, smem=0)
        >>> row.bound, row.occupancy.limiter
        ('memory', 'CTAs')
    """
    d = _device(dev)
    occ = occupancy(d, threads, registers, smem)
    ctas = max(1.0, float(counts.ctas))
    per_wave = d.sms * max(1, occ.ctas_per_sm)
    waves = int(-(-ctas // per_wave))
    wave_eff = ctas / (waves * per_wave)
    t_mem = counts.unique_bytes / (d.hbm_gbs * 1e9 * min(1.0, ctas / d.sms))
    t_tc = sum(f / (d.peak(t) * 1e12 * wave_eff) for t, f in counts.flops.items() if f)
    pipes = {c: v / (d.core_peak(c) * 1e12 * min(1.0, ctas / d.sms))
             for c, v in counts.core.items() if v}
    top = max(pipes, key=pipes.get, default=None)
    return RooflineRow(name, dict(shape), d, counts, registers, smem, threads, occ, waves,
                       t_mem, t_tc, pipes.get(top, 0.0), fit_error,
                       "sfu" if top == "sfu" else "cuda-core")


def _fit_error(scaling: Scaling, row: RooflineRow) -> float:
    """The fit's error where it matters for ``row``: the largest relative error, at the fit's
    check shape, of a total whose term at the row's shape is at least half the estimate
    (unique bytes for ``t_mem``, each input type's FLOPs for ``t_tc``, each pipe's operations
    for ``t_core``). A total that does not set the time does not make it uncertain."""
    if scaling.check is None or not row.time:
        return 0.0
    got, want = _totals(scaling.at(scaling.check_env)), _totals(scaling.check)
    c, d = row.counts, row.device
    full = min(1.0, max(1.0, float(c.ctas)) / d.sms)
    terms = {"unique bytes": row.t_mem}
    tc = sum(f / d.peak(t) for t, f in c.flops.items() if f)
    terms.update({f"{t} FLOPs": row.t_tc * (f / d.peak(t)) / tc
                  for t, f in c.flops.items() if f})
    terms.update({f"{k} operations": v / (d.core_peak(k) * 1e12 * full)
                  for k, v in c.core.items() if v})
    errs = [abs(got.get(k, 0.0) - want[k]) / want[k] for k, t in terms.items()
            if t >= 0.5 * row.time and want.get(k)]
    return max(errs, default=0.0)


def roofline(kernel, *arrays, at: dict | None = None, devices=DEFAULT_DEVICES, vary=None,
             name: str | None = None, inputs=None, **kw) -> Roofline:
    """Estimate ``kernel``'s time at shape ``at`` on ``devices`` (module docstring).

    ``arrays``: inputs at a small shape that tiles the kernel evenly (as for
    ``kernel.interpret``); ``at``: shape variables of the estimate (default: the small shape);
    ``devices``: ``DEVICES`` keys or ``Device`` objects; ``vary``: the shape variables to
    scale (default: those ``at`` changes); ``name``: the rows' label (default: the kernel's
    name); ``inputs``: a function of the shape variables giving the inputs at the other
    shapes the fit measures (default: random normals; ``perf.fit``); ``kw``: template
    parameters.

        from jax_pyptx.perf import roofline
        print(roofline(gemm, a, b, at={"M": 8192, "N": 8192, "K": 8192}))

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf import roofline
        >>> r = roofline(twice("N"), np.ones(64, np.float32), at={"N": 1 << 24}, devices=("H100",))
        >>> row = r.rows[0]
        >>> row.bound, round(row.counts.requested_bytes / 2**20)
        ('memory', 128)
    """
    from ..toolchain import compile_ptx

    b = kernel.bind(*arrays, **kw)
    at = dict(b.env if at is None else at)
    unknown = [v for v in at if v not in kernel.shape_vars]
    if unknown:
        raise ValueError(f"roofline: {unknown[0]!r} in at= is not a shape variable of kernel "
                         f"{kernel.name!r}; its shape variables: "
                         f"{', '.join(kernel.shape_vars) or 'none'}")
    if vary is None:
        vary = [v for v in kernel.shape_vars if v in at and at[v] != b.env.get(v)]
    scaling = fit(kernel, *arrays, vary=vary, inputs=inputs, **kw)
    counts = scaling.at(at)
    template = {k: v for k, v in kw.items() if k not in kernel.shape_vars}
    t = kernel.trace(**template, **dict(b.env, **at))
    rep = compile_ptx(t.ptx, t.arch).report
    threads = t.block[0] * t.block[1] * t.block[2]
    smem = rep.smem + t.dynamic_smem
    counts = Counts(counts.buffers, counts.flops, t.grid[0] * t.grid[1] * t.grid[2],
                    counts.core)
    label = name or kernel.name
    rows = []
    for d in devices:
        row = estimate(label, at, counts, d, threads, rep.registers, smem)
        rows.append(replace(row, fit_error=_fit_error(scaling, row)))
    rows = tuple(rows)
    return Roofline(scaling, rows)
