"""``@kernel``: the decorator, specialization (template params + shape variables) and the
trace cache.

A kernel's positional parameters are tensors (``in_specs`` then ``out_specs``; a spec that is
a PTX type instead of a ``Tile`` is a runtime scalar), its keyword-only parameters are template
parameters baked into the trace. ``.ptx(**kw)`` / ``.module(**kw)`` / ``.sass(**kw)`` take
template parameters and shape variables by name.
"""
from __future__ import annotations

import hashlib
import inspect
import math
import threading
from dataclasses import dataclass
from functools import cached_property

from .errors import SpecializationError
from .ir.nodes import Module, Param
from .isa.model import parse_target
from .specs import Tile
from .text.printer import emit
from .types import PtxType, by_name

_KERNEL_OPTIONS = ("arch", "version", "in_specs", "out_specs", "grid", "block", "cluster",
                   "smem", "raw_params", "extern_smem", "reqntid", "raw_directives")


@dataclass(frozen=True)
class ParamInfo:
    """One ``.param`` of the entry, in order: kind is tensor / scalar / tma / raw."""

    name: str
    kind: str
    type: PtxType
    index: int = -1              # tensor: position among tensors (inputs then outputs)
    array: int | None = None     # byte-array params


@dataclass
class Traced:
    """One traced specialization: the module and everything a launch needs."""

    name: str
    arch: str
    module: Module
    grid: tuple
    block: tuple
    cluster: tuple
    dynamic_smem: int
    static_smem: int
    params: tuple
    inputs: tuple                # TensorSpec-like records (name, shape, dtype, layout)
    outputs: tuple
    scalars: tuple               # ParamInfo of runtime scalars, in call order
    env: dict
    template: dict
    tma: tuple = ()
    instruction_count: int = 0
    # --- added for jax_pyptx.runtime.batching (batch on the grid) ---
    # special registers the kernel reads (e.g. "%ctaid.z"), tensor params read other than
    # through ``X.ptr()`` / ``X.tma_desc()``, and the batch this trace was made for (None, or
    # ``(sizes, masks)``: see ``Kernel._trace_batched``)
    specials: frozenset = frozenset()
    raw_tensor_params: tuple = ()
    raw_scalar_params: tuple = ()    # runtime scalars read other than as the kernel argument
    batch: object = None

    @cached_property
    def ptx(self) -> str:
        return emit(self.module)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.ptx.encode()).hexdigest()


def _dim3(v, what: str) -> tuple:
    if isinstance(v, int):
        v = (v,)
    try:
        t = tuple(int(x) for x in v)
    except TypeError:
        raise SpecializationError(f"{what} must be an int or a tuple of up to 3 ints, got {v!r}")
    if not 1 <= len(t) <= 3 or any(x <= 0 for x in t):
        raise SpecializationError(f"{what} must be 1 to 3 positive ints, got {v!r}")
    return t + (1,) * (3 - len(t))


def _version(v):
    if v is None:
        return None
    if isinstance(v, str):
        major, _, minor = v.partition(".")
        return (int(major), int(minor or 0))
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return (int(v[0]), int(v[1]))
    if isinstance(v, float):
        return _version(f"{v:.1f}")
    raise SpecializationError(f"version must be like '8.3' or (8, 3), got {v!r}")


def resolve_arch(arch: str) -> str:
    """``"auto"``: $JAX_PYPTX_ARCH, else the current CUDA device, else sm_90a."""
    if arch != "auto":
        return arch
    import os

    env = os.environ.get("JAX_PYPTX_ARCH")
    if env:
        return env
    from .toolchain.device import current_arch

    return current_arch() or "sm_90a"


class Kernel:
    """A ``@kernel`` function; trace with ``.ptx()``, run with ``.interpret()`` or call it."""

    def __init__(self, fn, *, arch="sm_90a", version=None, in_specs=None, out_specs=None,
                 grid=None, block=(1, 1, 1), cluster=(1, 1, 1), smem=0, raw_params=None,
                 extern_smem=False, reqntid=None, raw_directives=None):
        self.fn = fn
        self.name = fn.__name__
        if arch != "auto":
            parse_target(arch)
        self._arch = arch
        self.version = _version(version)
        sig = inspect.signature(fn)
        self._positional = [p.name for p in sig.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._template = {p.name: p.default for p in sig.parameters.values()
                          if p.kind is p.KEYWORD_ONLY}
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
            raise SpecializationError(f"kernel {self.name!r}: *args/**kwargs are not allowed; "
                                      f"positional params are tensors, keyword-only params "
                                      f"are template parameters")
        if in_specs is None and out_specs is None:
            ann = [sig.parameters[n].annotation for n in self._positional]
            in_specs = tuple(a for a in ann if isinstance(a, (Tile, PtxType)))
            if len(in_specs) != len(self._positional):
                in_specs = None
        self.in_specs = tuple(in_specs or ())
        self.out_specs = tuple(out_specs or ())
        for i, s in enumerate(self.in_specs + self.out_specs):
            if not isinstance(s, (Tile, PtxType)) or (isinstance(s, PtxType) and
                                                      i >= len(self.in_specs)):
                raise SpecializationError(
                    f"kernel {self.name!r}: spec {i} is {s!r}; in_specs entries are Tile(...) "
                    f"or a PTX type (runtime scalar), out_specs entries are Tile(...)")
        n_specs = len(self.in_specs) + len(self.out_specs)
        if n_specs != len(self._positional):
            raise SpecializationError(
                f"kernel {self.name!r} has {len(self._positional)} positional parameters "
                f"({', '.join(self._positional) or 'none'}) but {len(self.in_specs)} in_specs "
                f"+ {len(self.out_specs)} out_specs; give one spec per tensor parameter")
        self.grid = grid
        self.block = _dim3(block, "block")
        if math.prod(self.block) > 1024:
            raise SpecializationError(f"block {self.block} has {math.prod(self.block)} threads;"
                                      f" at most 1024")
        self.cluster = _dim3(cluster, "cluster")
        if not isinstance(smem, int) or smem < 0:
            raise SpecializationError(f"smem must be a non-negative int (bytes), got {smem!r}")
        self.smem = smem
        self.raw_params = tuple(_raw_param(p) for p in (raw_params or ()))
        self.extern_smem = bool(extern_smem)
        self.reqntid = None if reqntid in (None, False) else (
            self.block if reqntid is True else _dim3(reqntid, "reqntid"))
        self.raw_directives = tuple(raw_directives or ())
        self._symbols = []
        for s in self.in_specs + self.out_specs:
            if isinstance(s, Tile):
                for d in s.symbols:
                    if d not in self._symbols:
                        self._symbols.append(d)
        clash = set(self._symbols) & set(self._template)
        if clash:
            raise SpecializationError(f"kernel {self.name!r}: {sorted(clash)} is both a shape "
                                      f"variable and a template parameter")
        self._cache: dict = {}
        self._lock = threading.Lock()
        self._resolved_arch = None

    # ------------------------------------------------------------------ properties
    @property
    def arch(self) -> str:
        """The target; ``"auto"`` resolves when the kernel is first traced."""
        return self._resolved_arch or self._arch

    @property
    def template_params(self) -> dict:
        return dict(self._template)

    @property
    def shape_vars(self) -> tuple:
        return tuple(self._symbols)

    def __repr__(self):
        return f"<jax_pyptx.Kernel {self.name} arch={self.arch}>"

    # ------------------------------------------------------------------ specialization
    def _specialize(self, kw: dict):
        unknown = [k for k in kw if k not in self._template and k not in self._symbols]
        if unknown:
            raise SpecializationError(
                f"kernel {self.name!r}: unknown argument {unknown[0]!r}; valid: template "
                f"parameters ({', '.join(self._template) or 'none'}) and shape variables "
                f"({', '.join(self._symbols) or 'none'})")
        template = {}
        for k, d in self._template.items():
            if k in kw:
                template[k] = kw[k]
            elif d is inspect.Parameter.empty:
                raise SpecializationError(f"kernel {self.name!r}: template parameter {k!r} "
                                          f"has no default; pass {k}=...")
            else:
                template[k] = d
        missing = [s for s in self._symbols if s not in kw]
        if missing:
            raise SpecializationError(
                f"kernel {self.name!r}: missing shape variable{'s' if len(missing) > 1 else ''}"
                f" {', '.join(missing)}; pass them by keyword (.ptx({missing[0]}=...)) or call "
                f"the kernel with arrays")
        env = {}
        for s in self._symbols:
            v = kw[s]
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise SpecializationError(f"kernel {self.name!r}: shape variable {s} must be a "
                                          f"positive int, got {v!r}")
            env[s] = v
        try:
            key = (tuple(sorted(template.items())), tuple(env.items()))
            hash(key)
        except TypeError:
            raise SpecializationError(f"kernel {self.name!r}: template parameter values must "
                                      f"be hashable, got {template!r}") from None
        return key, template, env

    def bind_shapes(self, *arrays) -> dict:
        """Shape variables from arrays (inputs, optionally followed by outputs)."""
        specs = self.in_specs + self.out_specs
        if not len(self.in_specs) <= len(arrays) <= len(specs):
            raise SpecializationError(
                f"kernel {self.name!r} takes {len(self.in_specs)} inputs "
                f"({', '.join(self._positional[:len(self.in_specs)])}); got {len(arrays)} "
                f"arrays")
        env, where = {}, {}
        for i, (spec, a) in enumerate(zip(specs, arrays)):
            pname = self._positional[i]
            if isinstance(spec, PtxType):
                continue
            shape = tuple(getattr(a, "shape", ()))
            if len(shape) != len(spec.dims):
                raise SpecializationError(
                    f"kernel {self.name!r}: parameter {pname} expects rank {len(spec.dims)} "
                    f"({spec!r}), got an array of shape {shape}")
            dt = getattr(a, "dtype", None)
            if spec.dtype.np_dtype is not None and dt is not None and \
                    str(dt) != str(spec.dtype.np_dtype):
                raise SpecializationError(
                    f"kernel {self.name!r}: parameter {pname} expects dtype {spec.dtype.name} "
                    f"({spec!r}), got {dt}")
            for axis, (d, n) in enumerate(zip(spec.dims, shape)):
                if isinstance(d, int):
                    if d != n:
                        raise SpecializationError(
                            f"kernel {self.name!r}: parameter {pname} dim {axis} must be {d} "
                            f"({spec!r}), got shape {shape}")
                elif d in env and env[d] != n:
                    raise SpecializationError(
                        f"kernel {self.name!r}: shape variable {d} bound to {env[d]} by "
                        f"{where[d]} but {n} by {pname} (dim {axis})")
                else:
                    env.setdefault(d, n)
                    where.setdefault(d, f"{pname} (dim {axis})")
        return env

    # ------------------------------------------------------------------ tracing
    def trace(self, **kw) -> Traced:
        """The traced specialization for ``kw`` (cached)."""
        key, template, env = self._specialize(kw)
        got = self._cache.get(key)
        if got is not None:
            return got
        with self._lock:
            got = self._cache.get(key)
            if got is None:
                if self._resolved_arch is None:
                    self._resolved_arch = resolve_arch(self._arch)
                    parse_target(self._resolved_arch)
                from .dsl.trace_kernel import trace_kernel

                got = trace_kernel(self, template, env)
                self._cache[key] = got
        return got

    # --- added for jax_pyptx.runtime.batching (batch on the grid) ---
    def _trace_batched(self, batch, scalar_ptrs=(), **kw) -> Traced:
        """The specialization for ``kw`` launched once for a whole batch (internal).

        ``batch = (sizes, masks)``: ``sizes`` are the leading batch dims (outermost first);
        ``masks`` has one tuple of bools per tensor (inputs then outputs), one per batch
        level, saying whether that tensor carries that batch dim. The batch index is
        ``%ctaid.z`` (the grid's z is the batch); every ``X.ptr()`` / ``X.tma_desc()`` is
        offset to the tensor's batch item. The kernel body is traced unchanged.
        ``scalar_ptrs``: names of runtime scalars passed by device pointer (CUDA runtime).
        """
        sizes, masks = batch
        sizes = tuple(int(s) for s in sizes)
        masks = tuple(tuple(bool(b) for b in m) for m in masks)
        scalar_ptrs = tuple(scalar_ptrs)
        if not sizes and not scalar_ptrs:
            return self.trace(**kw)
        key, template, env = self._specialize(kw)
        key = key + (("__batch__", sizes, masks, scalar_ptrs),)
        got = self._cache.get(key)
        if got is not None:
            return got
        self.trace(**kw)                 # resolves the arch (the runtime checks that the
        with self._lock:                 # kernel can be batched: grid z free, ...)
            got = self._cache.get(key)
            if got is None:
                from .dsl.trace_kernel import trace_kernel

                got = trace_kernel(self, template, env,
                                   batch=(sizes, masks) if sizes else None,
                                   scalar_ptrs=scalar_ptrs)
                self._cache[key] = got
        return got

    def ptx(self, **kw) -> str:
        """The PTX text of a specialization."""
        return self.trace(**kw).ptx

    def module(self, **kw) -> Module:
        return self.trace(**kw).module

    def sass(self, **kw) -> str:
        """SASS disassembly (ptxas + nvdisasm)."""
        from .toolchain import disassemble

        t = self.trace(**kw)
        return disassemble(t.ptx, t.arch)

    def compile(self, **kw) -> bytes:
        """The cubin (ptxas, disk-cached)."""
        from .toolchain import compile_ptx

        t = self.trace(**kw)
        return compile_ptx(t.ptx, t.arch).cubin

    def resources(self, **kw):
        """ptxas's resource report (registers, spills, shared memory, stack)."""
        from .toolchain import compile_ptx

        t = self.trace(**kw)
        return compile_ptx(t.ptx, t.arch).report

    # ------------------------------------------------------------------ running
    def interpret(self, *arrays, sanitize: bool = True, **kw):
        """Run on the CPU interpreter; returns the outputs (one array or a tuple)."""
        from .dsl.run_interpret import interpret_kernel

        return interpret_kernel(self, arrays, kw, sanitize=sanitize)

    def __call__(self, *arrays, **kw):
        """Call from JAX (eager or under jit/vmap/shard_map); returns the outputs."""
        from .runtime.call import call_kernel

        return call_kernel(self, *arrays, **kw)


def _raw_param(p) -> Param:
    """raw_params entries: ("n", u32) | ("desc", b8, 128) | ("desc", b8, 128, 64) | Param."""
    if isinstance(p, Param):
        return p
    if not isinstance(p, (tuple, list)) or not 2 <= len(p) <= 4:
        raise SpecializationError(f"raw_params entry {p!r}: expected (name, type), "
                                  f"(name, type, array_len) or (name, type, array_len, align)")
    name, t = p[0], p[1]
    t = t if isinstance(t, PtxType) else by_name(t)
    array = p[2] if len(p) > 2 else None
    align = p[3] if len(p) > 3 else 0
    return Param(name, t, align=align, array=array)


def kernel(fn=None, **options):
    """Decorator: ``@kernel`` or ``@kernel(arch="sm_90a", block=(128, 1, 1), ...)``."""
    unknown = [k for k in options if k not in _KERNEL_OPTIONS]
    if unknown:
        raise SpecializationError(f"kernel(): unknown option {unknown[0]!r}; options: "
                                  f"{', '.join(_KERNEL_OPTIONS)}")
    if fn is None:
        return lambda f: Kernel(f, **options)
    if not callable(fn):
        raise SpecializationError(f"@kernel decorates a function, got {fn!r}")
    return Kernel(fn, **options)


__all__ = ["kernel", "Kernel", "Traced", "ParamInfo", "resolve_arch"]
