"""What a kernel does, counted by the interpreter at small shapes and scaled to large ones.

``measure(kernel, *arrays, **kw)`` runs one interpreted launch with an ``interpret.Stats``
and returns its ``Counts``: per buffer (kernel parameter) the global bytes requested by loads,
stores and atomics and the distinct bytes read and written; tensor-core FLOPs per input type;
CTAs.

``fit(kernel, *arrays, vary=..., **kw)`` measures at the shape of ``arrays`` and again with
each varied shape variable doubled (fresh random inputs of the specs' dtypes), and fits every
counter of every buffer as a power law ``c * M**a * N**b * ...`` (``a = log2(count(2M) /
count(M))``). ``Scaling.at(env)`` evaluates them at another shape. Per buffer, the counts of
a kernel are monomials when the small shape tiles evenly (a GEMM requests ``2 * M * K * N /
bn`` bytes of bf16 A, and reads ``2 * M * K`` distinct ones), so the scaling is exact there,
and an idealised estimate (no tail padding) for shapes that do not: measure at a shape that
is a whole number of tiles in every varied dim.

Examples:
    >>> import numpy as np
    >>> from jax_pyptx import Tile, kernel, ptx, reg
    >>> from jax_pyptx.types import f32, u32, u64
    >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
    ...         grid=lambda N: (N // 32, 1, 1))
    ... def twice(X, Y):
    ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
    ...     off = reg.cvt(i, u64) * 4
    ...     v = reg.scalar(f32)
    ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
    ...     ptx.ret()
    >>> from jax_pyptx.perf.counts import fit
    >>> s = fit(twice, np.ones(64, np.float32))
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
from ..specialize.host import HostLaunch
from ..specs import Tile

__all__ = ["Counts", "BufferCounts", "Scaling", "measure", "fit", "random_inputs"]

_FIELDS = ("load", "store", "atomic", "unique_read", "unique_written")


@dataclass(frozen=True)
class BufferCounts:
    """Global traffic of one buffer (a kernel parameter): requested ``load`` / ``store`` /
    ``atomic`` bytes and the distinct bytes read and written (``interpret.stats``).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u32, u64
        >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        ...         grid=lambda N: (N // 32, 1, 1))
        ... def twice(X, Y):
        ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
        ...     off = reg.cvt(i, u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> from jax_pyptx.perf.counts import measure
        >>> b = measure(twice, np.ones(64, np.float32)).buffers[1]
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
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u32, u64
        >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        ...         grid=lambda N: (N // 32, 1, 1))
        ... def twice(X, Y):
        ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
        ...     off = reg.cvt(i, u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> from jax_pyptx.perf.counts import Counts, measure
        >>> c = measure(twice, np.ones(64, np.float32))
        >>> isinstance(c, Counts), c.ctas, c.load_bytes, c.store_bytes
        (True, 2, 256.0, 256.0)
    """

    buffers: dict = field(default_factory=dict)
    flops: dict = field(default_factory=dict)
    ctas: float = 0

    @property
    def load_bytes(self) -> float:
        """Bytes requested by global loads.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice, np.ones(64, np.float32)).load_bytes
            256.0
        """
        return float(sum(b.load for b in self.buffers.values()))

    @property
    def store_bytes(self) -> float:
        """Bytes requested by global stores.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice, np.ones(64, np.float32)).store_bytes
            256.0
        """
        return float(sum(b.store for b in self.buffers.values()))

    @property
    def atomic_bytes(self) -> float:
        """Bytes updated by global atomics and reductions.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice, np.ones(64, np.float32)).atomic_bytes
            0.0
        """
        return float(sum(b.atomic for b in self.buffers.values()))

    @property
    def requested_bytes(self) -> float:
        """What the kernel's global accesses ask for (the traffic into the caches).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice, np.ones(64, np.float32)).requested_bytes
            512.0
        """
        return self.load_bytes + self.store_bytes + self.atomic_bytes

    @property
    def unique_bytes(self) -> float:
        """Distinct bytes read plus distinct bytes written: the DRAM traffic if the caches
        kept everything (the compulsory traffic).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice, np.ones(64, np.float32)).unique_bytes
            512.0
        """
        return float(sum(b.unique_read + b.unique_written for b in self.buffers.values()))

    @property
    def tensor_flops(self) -> float:
        """Tensor-core FLOPs of every input type.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import measure
            >>> measure(twice, np.ones(64, np.float32)).tensor_flops
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
        return cls(bufs, st.flops_by_type(), st.ctas)

    def counters(self) -> dict:
        """Every counter by name: ``"<buffer index>:<field>"``, ``"flops:<type>"``,
        ``"ctas"``.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import measure
            >>> c = measure(twice, np.ones(64, np.float32)).counters()
            >>> c['0:load'], c['1:store'], c['ctas']
            (256, 256, 2)
        """
        out = {f"{i}:{f}": getattr(b, f) for i, b in self.buffers.items() for f in _FIELDS}
        out.update({f"flops:{t}": v for t, v in self.flops.items()})
        out["ctas"] = self.ctas
        return out


def random_inputs(kernel, env: dict, like=(), seed: int = 0) -> list:
    """Inputs for ``kernel`` at shape variables ``env``: standard-normal arrays of each Tile
    spec's dtype (small integers for integer types); runtime scalars are taken from ``like``
    (the inputs of another call), else 1.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u32, u64
        >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        ...         grid=lambda N: (N // 32, 1, 1))
        ... def twice(X, Y):
        ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
        ...     off = reg.cvt(i, u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> from jax_pyptx.perf.counts import random_inputs
        >>> [(a.shape, a.dtype) for a in random_inputs(twice, {"N": 128})]
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

    ``arrays`` and ``kw`` are as for ``kernel.interpret``. The sanitizer is off by default
    (counting is about what the kernel moves; run ``kernel.interpret`` to check it).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u32, u64
        >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        ...         grid=lambda N: (N // 32, 1, 1))
        ... def twice(X, Y):
        ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
        ...     off = reg.cvt(i, u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> from jax_pyptx.perf.counts import measure
        >>> c = measure(twice, np.ones(64, np.float32))
        >>> c.ctas, c.load_bytes, c.unique_bytes
        (2, 256.0, 512.0)
    """
    b = kernel.bind(*arrays, **kw)
    t = b.trace()
    tensors = [a for a, s in zip(arrays, kernel.in_specs) if isinstance(s, Tile)]
    scalars = [a for a, s in zip(arrays, kernel.in_specs) if not isinstance(s, Tile)]
    st = Stats()
    HostLaunch(t)(tensors, scalars, b.raw, sanitize=sanitize, stats=st)
    return Counts.from_stats(st)


@dataclass(frozen=True)
class Scaling:
    """Counters as power laws of the shape variables, fitted to interpreter counts.

    ``base_env`` / ``base``: the measured shape and its counts; ``exponents``: counter name
    (``Counts.counters``) -> {shape variable: exponent} for each varied variable.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u32, u64
        >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        ...         grid=lambda N: (N // 32, 1, 1))
        ... def twice(X, Y):
        ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
        ...     off = reg.cvt(i, u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> from jax_pyptx.perf.counts import fit
        >>> s = fit(twice, np.ones(64, np.float32))
        >>> s.base_env, s.exponents['0:load']
        ({'N': 64}, {'N': 1.0})
    """

    base_env: dict
    base: Counts
    exponents: dict

    def _scaled(self, name: str, value: float, env: dict) -> float:
        v = float(value)
        for var, e in self.exponents.get(name, {}).items():
            if var in env:
                v *= (env[var] / self.base_env[var]) ** e
        return v

    def at(self, env: dict) -> Counts:
        """The counts at shape variables ``env`` (variables not given stay at the base).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import fit
            >>> fit(twice, np.ones(64, np.float32)).at({"N": 4096}).load_bytes
            16384.0
        """
        bufs = {i: BufferCounts(b.name, *(self._scaled(f"{i}:{f}", getattr(b, f), env)
                                          for f in _FIELDS))
                for i, b in self.base.buffers.items()}
        flops = {t: self._scaled(f"flops:{t}", v, env) for t, v in self.base.flops.items()}
        return Counts(bufs, flops, self._scaled("ctas", self.base.ctas, env))

    def law(self, name: str) -> str:
        """The fitted law of one counter, e.g. ``"M^1 N^1 K^1"``.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u32, u64
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
            ...         grid=lambda N: (N // 32, 1, 1))
            ... def twice(X, Y):
            ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
            ...     off = reg.cvt(i, u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
            ...     ptx.ret()
            >>> from jax_pyptx.perf.counts import fit
            >>> fit(twice, np.ones(64, np.float32)).law("0:load")      # buffer 0 (X), bytes loaded
            'N^1'
        """
        parts = [f"{v}^{_fmt(e)}" for v, e in self.exponents.get(name, {}).items() if e]
        return " ".join(parts) or "constant"


def _fmt(e: float) -> str:
    return str(int(e)) if float(e).is_integer() else f"{e:.2f}"


def _exponent(c0: float, c1: float) -> float:
    if c0 <= 0 or c1 <= 0:
        return 0.0
    e = math.log2(c1 / c0)
    return float(round(e)) if abs(e - round(e)) < 0.02 else e


def fit(kernel, *arrays, vary=None, inputs=None, **kw) -> Scaling:
    """Measure at the shape of ``arrays`` and with each variable of ``vary`` (default: all
    shape variables) doubled; the power law of every counter of every buffer (module
    docstring). ``inputs``: a function of the shape variables returning the inputs at a
    doubled shape (default: ``random_inputs``), for kernels whose work depends on the data
    (a grouped GEMM's group sizes).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u32, u64
        >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1),
        ...         grid=lambda N: (N // 32, 1, 1))
        ... def twice(X, Y):
        ...     i = reg.from_(ptx.special.ctaid.x(), u32) * 32 + ptx.special.tid.x()
        ...     off = reg.cvt(i, u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> from jax_pyptx.perf.counts import fit
        >>> s = fit(twice, np.ones(64, np.float32), vary=("N",))
        >>> s.at({"N": 1 << 20}).load_bytes
        4194304.0
    """
    b = kernel.bind(*arrays, **kw)
    env = dict(b.env)
    template = {k: v for k, v in kw.items() if k not in kernel.shape_vars}
    base = measure(kernel, *arrays, **kw)
    c0 = base.counters()
    exps: dict = {n: {} for n in c0}
    for var in (kernel.shape_vars if vary is None else vary):
        if var not in env:
            raise SpecializationError(f"kernel {kernel.name!r}: cannot vary {var!r}: shape "
                                      f"variables are {', '.join(kernel.shape_vars)}")
        env2 = dict(env, **{var: 2 * env[var]})
        extra = {k: v for k, v in env2.items() if k not in _input_symbols(kernel)}
        arrays2 = inputs(env2) if inputs is not None else random_inputs(kernel, env2, arrays)
        c1 = measure(kernel, *arrays2, **template, **extra).counters()
        for n in c0:
            exps[n][var] = _exponent(c0[n], c1.get(n, 0))
    return Scaling(env, base, exps)


def _input_symbols(kernel) -> set:
    return {d for s in kernel.in_specs if isinstance(s, Tile) for d in s.symbols}
