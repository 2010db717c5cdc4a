"""What a kernel does, counted by the interpreter at small shapes and scaled to large ones.

``measure(kernel, *arrays, **kw)`` runs one interpreted launch with an ``interpret.Stats``
and returns its ``Counts``: per buffer (kernel parameter) the global bytes requested by loads,
stores and atomics and the distinct bytes read and written; tensor-core FLOPs per input type;
CTAs.

``fit(kernel, *arrays, vary=..., **kw)`` measures at the shape of ``arrays`` and again with
each varied shape variable doubled and quadrupled (fresh random inputs of the specs' dtypes),
and fits every counter of every buffer as a fixed part plus a power law, ``f + c * M**a *
N**b * ...``: three sizes per variable tell a 4 KB lookup table read once per launch (the
fixed part, ``Scaling.fixed_terms``) from bytes that grow with the shape. One more
measurement that the fit did not use checks it (``Scaling.error``; past ``UNCERTAIN`` the
estimate is "uncertain"). ``Scaling.at(env)`` evaluates the laws at another shape. Per
buffer, the counts of a kernel are such laws when the small shape tiles evenly (a GEMM
requests ``2 * M * K * N / bn`` bytes of bf16 A, and reads ``2 * M * K`` distinct ones), so
the scaling is exact there, and an idealised estimate (no tail padding) for shapes that do
not: measure at a shape that is a whole number of tiles in every varied dim.

Besides bytes and tensor-core FLOPs, ``Counts.core`` holds the CUDA-core work (fp32, fp16,
fp64 and integer operations) and the special-function-unit operations the threads executed
(``perf.ops``).

Examples:
    >>> import numpy as np
    >>> from jax_pyptx.example_kernels import twice
    >>> from jax_pyptx.perf.counts import fit
    >>> s = fit(twice("N"), np.ones(64, np.float32))
    >>> s.law("0:load"), s.at({"N": 1024}).buffers[0].load
    ('N^1', 4096.0)
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import SpecializationError
from ..interpret.stats import Stats
from ..specialize.host import run_on_host
from ..specs import Tile
from .ops import core_ops

__all__ = ["Counts", "BufferCounts", "Scaling", "measure", "fit", "random_inputs", "UNCERTAIN"]

_FIELDS = ("load", "store", "atomic", "unique_read", "unique_written")


@dataclass(frozen=True)
class BufferCounts:
    """Global traffic of one buffer (a kernel parameter): requested ``load`` / ``store`` /
    ``atomic`` bytes and the distinct bytes read and written (``interpret.stats``).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf.counts import measure
        >>> b = measure(twice("N"), np.ones(64, np.float32)).buffers[1]
        >>> b.name, b.load, b.store, b.unique_written
        ('Y', 0, 256, 256)
    """

    name: str
    load: float = 0
    store: float = 0
    atomic: float = 0
    unique_read: float = 0
    unique_written: float = 0


@dataclass(frozen=True)
class Counts:
    """Global-memory traffic and tensor-core FLOPs of one launch (measured or scaled).

    ``buffers``: allocation index -> ``BufferCounts``; ``flops``: MMA input type -> FLOPs;
    ``ctas``: CTAs launched.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf.counts import Counts, measure
        >>> c = measure(twice("N"), np.ones(64, np.float32))
        >>> isinstance(c, Counts), c.ctas, c.load_bytes, c.store_bytes
        (True, 2, 256.0, 256.0)
    """

    buffers: dict = field(default_factory=dict)
    flops: dict = field(default_factory=dict)
    ctas: float = 0
    core: dict = field(default_factory=dict)    # CUDA-core / SFU class -> operations (perf.ops)

    @property
    def load_bytes(self) -> float:
        """Bytes requested by global loads.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice("N"), np.ones(64, np.float32)).load_bytes
            256.0
        """
        return float(sum(b.load for b in self.buffers.values()))

    @property
    def store_bytes(self) -> float:
        """Bytes requested by global stores.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice("N"), np.ones(64, np.float32)).store_bytes
            256.0
        """
        return float(sum(b.store for b in self.buffers.values()))

    @property
    def atomic_bytes(self) -> float:
        """Bytes updated by global atomics and reductions.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice("N"), np.ones(64, np.float32)).atomic_bytes
            0.0
        """
        return float(sum(b.atomic for b in self.buffers.values()))

    @property
    def requested_bytes(self) -> float:
        """What the kernel's global accesses ask for (the traffic into the caches).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice("N"), np.ones(64, np.float32)).requested_bytes
            512.0
        """
        return self.load_bytes + self.store_bytes + self.atomic_bytes

    @property
    def unique_bytes(self) -> float:
        """Distinct bytes read plus distinct bytes written: the DRAM traffic if the caches
        kept everything (the compulsory traffic).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice("N"), np.ones(64, np.float32)).unique_bytes
            512.0
        """
        return float(sum(b.unique_read + b.unique_written for b in self.buffers.values()))

    @property
    def tensor_flops(self) -> float:
        """Tensor-core FLOPs of every input type.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice("N"), np.ones(64, np.float32)).tensor_flops
            0.0
        """
        return float(sum(self.flops.values()))

    @classmethod
    def from_stats(cls, st: Stats) -> "Counts":
        """The counts of an ``interpret.Stats`` (buffers keyed by allocation index).

        Examples:
            >>> from jax_pyptx.interpret.stats import Stats
            >>> from jax_pyptx.perf.counts import Counts
            >>> st = Stats()
            >>> st.add_flops("wgmma.mma_async", "bf16", 2 * 64 * 64 * 16)
            >>> Counts.from_stats(st).tensor_flops
            131072.0
        """
        bufs = {}
        for name, b in st.buffers.items():
            m = re.match(r"param '([^']+)'", name)
            bufs[b.index] = BufferCounts(m.group(1) if m else name, b.load, b.store,
                                         b.atomic, b.unique_read, b.unique_written)
        return cls(bufs, st.flops_by_type(), st.ctas, core_ops(st.thread_ops))

    def counters(self) -> dict:
        """Every counter by name: ``"<buffer index>:<field>"``, ``"flops:<type>"``,
        ``"ctas"``.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import measure
            >>> c = measure(twice("N"), np.ones(64, np.float32)).counters()
            >>> c['0:load'], c['1:store'], c['ctas']
            (256, 256, 2)
        """
        out = {f"{i}:{f}": getattr(b, f) for i, b in self.buffers.items() for f in _FIELDS}
        out.update({f"flops:{t}": v for t, v in self.flops.items()})
        out.update({f"core:{c}": v for c, v in self.core.items()})
        out["ctas"] = self.ctas
        return out


def random_inputs(kernel, env: dict, like=(), seed: int = 0) -> list:
    """Inputs for ``kernel`` at shape variables ``env``: standard-normal arrays of each Tile
    spec's dtype (small integers for integer types); runtime scalars are taken from ``like``
    (the inputs of another call), else 1.

    Examples:
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf.counts import random_inputs
        >>> [(a.shape, a.dtype) for a in random_inputs(twice("N"), {"N": 128})]
        [((128,), dtype('float32'))]
    """
    rng = np.random.default_rng(seed)
    out = []
    for i, spec in enumerate(kernel.in_specs):
        if not isinstance(spec, Tile):
            out.append(like[i] if i < len(like) else spec.np_dtype.type(1))
            continue
        shape = spec.resolve(env)
        dt = spec.dtype.np_dtype
        if dt is None:
            raise SpecializationError(f"kernel {kernel.name!r}: no NumPy dtype for input {i} "
                                      f"({spec!r}); pass the inputs yourself")
        if dt.kind in "iu":
            a = rng.integers(0, 8, shape).astype(dt)
        elif dt.kind == "b":
            a = rng.integers(0, 2, shape).astype(dt)
        else:
            a = rng.standard_normal(shape).astype(np.float32).astype(dt)
        out.append(a)
    return out


def measure(kernel, *arrays, sanitize: bool = False, **kw) -> Counts:
    """Run ``kernel`` once on the interpreter with counting on; its ``Counts``.

    ``arrays`` and ``kw`` are as for ``kernel.interpret`` (the same host run,
    ``specialize.host.run_on_host``). The sanitizer is off by default (counting is about what
    the kernel moves; run ``kernel.interpret`` to check it).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf.counts import measure
        >>> c = measure(twice("N"), np.ones(64, np.float32))
        >>> c.ctas, c.load_bytes, c.unique_bytes
        (2, 256.0, 512.0)
    """
    st = Stats(count_ops=True)
    run_on_host(kernel, arrays, dict(kw, sanitize=sanitize), stats=st)
    return Counts.from_stats(st)


UNCERTAIN = 0.05      # a fit whose check measurement is off by more is "uncertain"


@dataclass(frozen=True)
class Scaling:
    """Counters as laws of the shape variables, fitted to interpreter counts.

    Each counter is ``fixed + (base - fixed) * prod((v / base_v) ** exponent_v)``: a part
    that grows as a power of each varied shape variable, and a ``fixed`` part that does not
    (a lookup table read once whatever the size). ``base_env`` / ``base``: the measured shape
    and its counts; ``exponents``: counter name (``Counts.counters``) -> {shape variable:
    exponent}; ``fixed``: counter name -> its fixed part (counters with none are left out);
    ``error``: the largest relative error of the fitted totals (unique and requested bytes,
    FLOPs and CUDA-core operations per type) against a measurement the fit did not use
    (``check``, at ``check_env``); past ``UNCERTAIN`` the fit is poor (``uncertain``; the
    roofline judges its rows by the error of the estimated time instead, a total that does
    not set the time mattering less); ``poor``: the counters whose measurements no such law
    explains.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf.counts import fit
        >>> s = fit(twice("N"), np.ones(64, np.float32))
        >>> s.base_env, s.exponents['0:load'], s.fixed, s.error
        ({'N': 64}, {'N': 1.0}, {}, 0.0)
    """

    base_env: dict
    base: Counts
    exponents: dict
    fixed: dict = field(default_factory=dict)
    error: float = 0.0
    check_env: dict = field(default_factory=dict)
    poor: tuple = ()
    sizes: tuple = ()       # (buffer index, dims, bits per element) of the kernel's tensors
    check: Counts | None = None    # what was measured at ``check_env``

    def size(self, i: int, env: dict):
        """Bytes of buffer ``i`` at shape variables ``env`` (None when unknown): the most
        distinct bytes a launch can read or write in it.

        Examples:
            >>> from jax_pyptx.perf.counts import Counts, Scaling
            >>> s = Scaling({"N": 64}, Counts(), {}, sizes=((0, ("N", 4), 32),))
            >>> s.size(0, {"N": 1024}), s.size(1, {"N": 1024})
            (16384.0, None)
        """
        for j, dims, bits in self.sizes:
            if j == i:
                n = 1
                for d in dims:
                    n *= d if isinstance(d, int) else env.get(d, self.base_env.get(d, 0))
                return n * bits / 8
        return None

    def capped(self, env: dict) -> list:
        """``(buffer name, field, bytes)`` of the distinct-byte counters whose law would pass
        the buffer's size at ``env`` (a table indexed by ``i % size``: fitted at a small
        shape it looks as if it grew): ``at`` gives them the buffer's size.

        Examples:
            >>> from jax_pyptx.perf.counts import BufferCounts, Counts, Scaling
            >>> s = Scaling({"N": 64}, Counts({1: BufferCounts("T", unique_read=256)}),
            ...             {"1:unique_read": {"N": 1.0}}, sizes=((1, (1024,), 32),))
            >>> s.capped({"N": 1 << 20}), s.at({"N": 1 << 20}).buffers[1].unique_read
            ([('T', 'unique_read', 4096.0)], 4096.0)
        """
        out = []
        for i, b in self.base.buffers.items():
            size = self.size(i, env)
            for f in ("unique_read", "unique_written"):
                if size is not None and self._scaled(f"{i}:{f}", getattr(b, f), env) > size:
                    out.append((b.name, f, size))
        return out

    @property
    def uncertain(self) -> bool:
        """Whether the fit is poor: its check measurement is off by more than
        ``UNCERTAIN``.

        Examples:
            >>> from jax_pyptx.perf.counts import Counts, Scaling
            >>> Scaling({"N": 64}, Counts(), {}, error=0.2).uncertain
            True
        """
        return self.error > UNCERTAIN

    def _scaled(self, name: str, value: float, env: dict) -> float:
        fixed = self.fixed.get(name, 0.0)
        v = float(value) - fixed
        for var, e in self.exponents.get(name, {}).items():
            if var in env:
                v *= (env[var] / self.base_env[var]) ** e
        return fixed + v

    def at(self, env: dict) -> Counts:
        """The counts at shape variables ``env`` (variables not given stay at the base).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import fit
            >>> fit(twice("N"), np.ones(64, np.float32)).at({"N": 4096}).load_bytes
            16384.0
        """
        bufs = {}
        for i, b in self.base.buffers.items():
            vals = [self._scaled(f"{i}:{f}", getattr(b, f), env) for f in _FIELDS]
            size = self.size(i, env)
            if size is not None:             # never more distinct bytes than the buffer has
                vals[3], vals[4] = min(vals[3], size), min(vals[4], size)
            bufs[i] = BufferCounts(b.name, *vals)
        flops = {t: self._scaled(f"flops:{t}", v, env) for t, v in self.base.flops.items()}
        core = {c: self._scaled(f"core:{c}", v, env) for c, v in self.base.core.items()}
        return Counts(bufs, flops, self._scaled("ctas", self.base.ctas, env), core)

    def law(self, name: str) -> str:
        """The fitted law of one counter, e.g. ``"M^1 N^1 K^1"``, ``"4096 + N^1"`` (a fixed
        part and one that grows) or ``"constant"``.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.example_kernels import twice
            >>> from jax_pyptx.perf.counts import fit
            >>> fit(twice("N"), np.ones(64, np.float32)).law("0:load")      # buffer 0 (X), bytes loaded
            'N^1'
        """
        parts = [f"{v}^{_fmt(e)}" for v, e in self.exponents.get(name, {}).items() if e]
        if not parts:
            return "constant"
        fixed = self.fixed.get(name)
        return (f"{fixed:g} + " if fixed else "") + " ".join(parts)

    def fixed_terms(self) -> list:
        """``(buffer name, field, fixed bytes)`` of every buffer counter with a fixed part
        beside one that grows (a table read once per launch, whatever the size): the terms
        an estimate at a large shape does not scale.

        Examples:
            >>> from jax_pyptx.perf.counts import BufferCounts, Counts, Scaling
            >>> s = Scaling({"N": 64}, Counts({0: BufferCounts("T", load=4352)}),
            ...             {"0:load": {"N": 1.0}}, fixed={"0:load": 4096.0})
            >>> s.fixed_terms(), s.at({"N": 128}).buffers[0].load
            ([('T', 'load', 4096.0)], 4608.0)
        """
        out = []
        for i, b in self.base.buffers.items():
            for f in _FIELDS:
                name = f"{i}:{f}"
                if self.fixed.get(name) and any(self.exponents.get(name, {}).values()):
                    out.append((b.name, f, self.fixed[name]))
        return out


def _fmt(e: float) -> str:
    return str(int(e)) if float(e).is_integer() else f"{e:.2f}"


def _snap(e: float) -> float:
    return float(round(e)) if abs(e - round(e)) < 0.02 else e


def _law(c0: float, c1: float, c2: float):
    """``(exponent, fixed part, explained)`` of one counter measured at ``x``, ``2x``, ``4x``
    of one variable: ``c = fixed + a * x**e``."""
    d1, d2 = c1 - c0, c2 - c1
    tol = 1e-9 * max(abs(c0), abs(c1), abs(c2), 1.0)
    if abs(d1) <= tol and abs(d2) <= tol:
        return 0.0, None, True                 # does not depend on this variable
    if d1 > tol and d2 > tol:
        e = _snap(math.log2(d2 / d1))
        g = 2.0 ** e - 1.0
        if g > 1e-6:
            grow = d1 / g                       # the growing part at x
            fixed = c0 - grow
            if abs(fixed) <= 1e-6 * max(abs(c0), 1.0):
                fixed = 0.0
            if fixed >= 0:
                return e, fixed, True
            # a negative fixed part explains nothing: the plain power law through x, 2x
    if c0 > 0 and c1 > 0:                       # shrinking, or not a power law: c0 -> c1
        return _snap(math.log2(c1 / c0)), 0.0, False
    return 0.0, 0.0, False


def _totals(c: Counts) -> dict:
    out = {"unique bytes": c.unique_bytes, "requested bytes": c.requested_bytes}
    out.update({f"{t} FLOPs": v for t, v in c.flops.items()})
    out.update({f"{k} operations": v for k, v in c.core.items()})
    return out


def fit(kernel, *arrays, vary=None, inputs=None, **kw) -> Scaling:
    """Measure at the shape of ``arrays``, then with each variable of ``vary`` (default: all
    shape variables) doubled and quadrupled, and fit every counter of every buffer as a fixed
    part plus a power law (``Scaling``); one more measurement (every varied variable doubled
    together, or the only one octupled) checks the fit (``Scaling.error``). ``inputs``: a
    function of the shape variables returning the inputs at another shape (default:
    ``random_inputs``), for kernels whose work depends on the data (a grouped GEMM's group
    sizes).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.example_kernels import twice
        >>> from jax_pyptx.perf.counts import fit
        >>> s = fit(twice("N"), np.ones(64, np.float32), vary=("N",))
        >>> s.at({"N": 1 << 20}).load_bytes, s.uncertain
        (4194304.0, False)
    """
    b = kernel.bind(*arrays, **kw)
    env = dict(b.env)
    template = {k: v for k, v in kw.items() if k not in kernel.shape_vars}
    base = measure(kernel, *arrays, **kw)
    c0 = base.counters()
    vary = list(kernel.shape_vars if vary is None else vary)

    def at(env2):
        extra = {k: v for k, v in env2.items() if k not in _input_symbols(kernel)}
        arrays2 = inputs(env2) if inputs is not None else random_inputs(kernel, env2, arrays)
        return measure(kernel, *arrays2, **template, **extra)

    exps: dict = {n: {} for n in c0}
    fixed_by: dict = {n: [] for n in c0}
    poor = set()
    for var in vary:
        if var not in env:
            raise SpecializationError(f"kernel {kernel.name!r}: cannot vary {var!r}: shape "
                                      f"variables are {', '.join(kernel.shape_vars)}")
        c1 = at(dict(env, **{var: 2 * env[var]})).counters()
        c2 = at(dict(env, **{var: 4 * env[var]})).counters()
        for n in c0:
            e, fx, ok = _law(c0[n], c1.get(n, 0), c2.get(n, 0))
            exps[n][var] = e
            if fx is not None and e:
                fixed_by[n].append(fx)
            if not ok:
                poor.add(n)
    fixed = {}
    for n, fs in fixed_by.items():
        if fs:
            f = min(fs)
            if max(fs) - f > 0.01 * max(abs(c0[n]), 1.0):
                poor.add(n)                    # the variables disagree on the fixed part
            if f:
                fixed[n] = f
    s = Scaling(env, base, exps, fixed, sizes=_sizes(kernel, base))
    if not vary:
        return s
    check = {v: 2 * env[v] for v in vary} if len(vary) > 1 else {vary[0]: 8 * env[vary[0]]}
    check_env = dict(env, **check)
    measured = at(check_env)
    got, want = _totals(s.at(check_env)), _totals(measured)
    error = max((abs(got.get(k, 0.0) - v) / v for k, v in want.items() if v), default=0.0)
    return Scaling(env, base, exps, fixed, float(error), check_env,
                   tuple(sorted(n for n in poor if n in c0)), s.sizes, measured)


def _sizes(kernel, counts: Counts) -> tuple:
    """(buffer index, dims, bits per element) of each buffer that is a Tile parameter."""
    specs = dict(zip(kernel.param_names, kernel.in_specs + kernel.out_specs))
    out = []
    for i, b in counts.buffers.items():
        spec = specs.get(b.name)
        if isinstance(spec, Tile):
            out.append((i, tuple(spec.dims), spec.dtype.bits))
    return tuple(out)


def _input_symbols(kernel) -> set:
    return {d for s in kernel.in_specs if isinstance(s, Tile) for d in s.symbols}
