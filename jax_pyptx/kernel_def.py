"""``@kernel``: the decorator, specialization (template params + shape variables) and the
trace cache.

A kernel's positional parameters are tensors (``in_specs`` then ``out_specs``; a spec that is
a PTX type instead of a ``Tile`` is a runtime scalar), its keyword-only parameters are template
parameters baked into the trace. ``.ptx(**kw)`` / ``.module(**kw)`` / ``.sass(**kw)`` take
template parameters and shape variables by name.

The package exports ``kernel`` and ``Kernel``; this module is also pyptx's ``pyptx.kernel``
(``from pyptx.kernel import Kernel, TensorSpec, TmaDescriptorHandle, kernel``).

Examples:
    >>> import jax_pyptx
    >>> from jax_pyptx.kernel_def import Kernel, kernel
    >>> kernel is jax_pyptx.kernel and Kernel is jax_pyptx.Kernel
    True
"""
from __future__ import annotations

import functools
import inspect
import math
import threading
from typing import Any, Callable, Never, Sequence, Union, overload

from .errors import SpecializationError
from .ir.nodes import Module, Param
from .isa.model import parse_target
from .specialize import PLAIN, ParamAbi
from .specialize import binding as _binding
from .specialize.dims import dim3, parse_version
from .specialize.keys import exact_items, exact_key
from .specialize.trace import trace_specialization
from .specialize.traced import Traced
from .specs import TensorSpec, Tile, TmaDescriptorHandle
from .types import PtxType, by_name, u64

# The types of ``kernel()``'s options (what an IDE or a type checker shows).
Dim3 = Union[int, Sequence[int]]
"""``block`` / ``cluster`` / ``reqntid``: an int or 1 to 3 positive ints."""
GridOption = Union[Dim3, Callable[..., Dim3]]
"""``grid``: a dim3, or a function of the shape variables and template parameters."""
SpecOption = Union[Tile, PtxType]
"""An ``in_specs`` entry: a ``Tile`` (a tensor) or a PTX type (a runtime scalar)."""
RawParamOption = Union[Param, Sequence[Any]]
"""A ``raw_params`` entry: ``("u32", "n")``, ``("n", u32)``, ``("desc", b8, 128)``, a Param."""
DirectiveOption = Union[str, Sequence[Any]]
"""A ``raw_directives`` entry: ``".maxnreg 128"`` or ``("maxntid", (384, 1, 1))``."""
VersionOption = Union[str, float, Sequence[int], None]
"""``version``: ``"8.3"``, ``8.3``, ``(8, 3)`` or None (what the instructions need)."""

_KERNEL_OPTIONS = ("arch", "version", "in_specs", "out_specs", "grid", "block", "cluster",
                   "smem", "raw_params", "extern_smem", "reqntid", "raw_directives")

# How ``Kernel.__call__`` reaches a runtime: a function ``(kernel, *arrays, **kw)`` that the
# package installs (``jax_pyptx/__init__``: the JAX runtime, imported on the first call).
_call_handler = None


def set_call_handler(fn) -> None:
    """Install what ``kernel(*arrays)`` calls: ``fn(kernel, *arrays, **keywords)``
    (``jax_pyptx`` installs its router to the JAX and PyTorch runtimes on import).

    Examples:
        >>> import numpy as np
        >>> import jax_pyptx.kernel_def as kd
        >>> from jax_pyptx.example_kernels import twice
        >>> previous = kd._call_handler
        >>> kd.set_call_handler(lambda k, *arrays, **kw: f"{k.name}: {len(arrays)} array")
        >>> twice()(np.ones(32, np.float32))
        'twice: 1 array'
        >>> kd.set_call_handler(previous)
    """
    global _call_handler
    _call_handler = fn


def resolve_arch(arch: str) -> str:
    """``arch`` itself, or for ``"auto"``: $JAX_PYPTX_ARCH, else the current CUDA device, else
    sm_90a (one probe with ``detect_arch``: ``jax_pyptx.toolchain.device.resolve_arch``).

    Examples:
        >>> from jax_pyptx.kernel_def import resolve_arch
        >>> resolve_arch("sm_100a")
        'sm_100a'
    """
    if arch != "auto":
        return arch
    from .toolchain.device import resolve_arch as _resolve

    return _resolve(arch)


class Kernel:
    """A ``@kernel`` function; trace with ``.ptx()``, run with ``.interpret()`` or call it.

    Examples:
        >>> from jax_pyptx import Kernel, kernel, ptx
        >>> @kernel(arch="sm_90a")
        ... def noop():
        ...     ptx.ret()
        >>> isinstance(noop, Kernel), noop.name
        (True, 'noop')
        >>> [line.strip() for line in noop.ptx().splitlines()[-4:]]
        ['.visible .entry noop()', '{', 'ret;', '}']
    """

    def __init__(self, fn, *, arch="sm_90a", version=None, in_specs=None, out_specs=None,
                 grid=None, block=(1, 1, 1), cluster=(1, 1, 1), smem=0, raw_params=None,
                 extern_smem=False, reqntid=None, raw_directives=None):
        self.fn = fn
        self.name = fn.__name__
        if arch != "auto":
            parse_target(arch)
        self._arch = arch
        self.version = parse_version(version)
        sig = inspect.signature(fn)
        self._names = tuple(p.name for p in sig.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        self._template = {p.name: p.default for p in sig.parameters.values()
                          if p.kind is p.KEYWORD_ONLY}
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
            raise SpecializationError(f"kernel {self.name!r}: *args/**kwargs are not allowed; "
                                      f"positional params are tensors, keyword-only params "
                                      f"are template parameters")
        self.in_specs, self.out_specs = self._specs(sig, in_specs, out_specs)
        # no specs at all: positional parameters are raw pointers (``.param .u64 NAME``,
        # before the raw_params); the body gets a bare TensorSpec(name) for each
        self.pointer_params = () if self.in_specs or self.out_specs else tuple(
            Param(n, u64) for n in self._names)
        self._check_specs()
        self._geometry(grid, block, cluster, smem, reqntid)
        self.raw_params = self.pointer_params + tuple(raw_param(p) for p in (raw_params or ()))
        if isinstance(extern_smem, str) and not extern_smem.isidentifier():
            raise SpecializationError(f"kernel {self.name!r}: extern_smem={extern_smem!r} is "
                                      f"not a symbol name")
        self.extern_smem = extern_smem if isinstance(extern_smem, str) else bool(extern_smem)
        self.raw_directives = tuple(_raw_directive(d) for d in (raw_directives or ()))
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
        self._fast: dict = {}       # (abi, keyword items as passed) -> Traced
        self._lock = threading.Lock()
        self._resolved_arch = None
        functools.update_wrapper(self, fn, updated=())

    def _specs(self, sig, in_specs, out_specs) -> tuple:
        """``(in_specs, out_specs)`` as tuples: as given, else from the parameters'
        annotations when every positional parameter has a spec there."""
        for what, specs in (("in_specs", in_specs), ("out_specs", out_specs)):
            if isinstance(specs, (Tile, PtxType)) or (
                    specs is not None and not isinstance(specs, (tuple, list))):
                one = str(specs) if isinstance(specs, Tile) else repr(specs)
                raise SpecializationError(
                    f"kernel {self.name!r}: {what} must be a tuple of specs, one per "
                    f"parameter; got a single {type(specs).__name__}, {one}"
                    + (f" (a one-element tuple needs a trailing comma: {what}=({one},))"
                       if isinstance(specs, (Tile, PtxType)) else ""),
                    loc=_def_loc(self.fn))
        if in_specs is None and out_specs is None:
            ann = [sig.parameters[n].annotation for n in self._names]
            in_specs = tuple(a for a in ann if isinstance(a, (Tile, PtxType)))
            if len(in_specs) != len(self._names):
                in_specs = None
        return tuple(in_specs or ()), tuple(out_specs or ())

    def _check_specs(self) -> None:
        """Each spec a Tile (or, for an input, a PTX type), one per positional parameter."""
        for i, s in enumerate(self.in_specs + self.out_specs):
            if not isinstance(s, (Tile, PtxType)) or (isinstance(s, PtxType) and
                                                      i >= len(self.in_specs)):
                raise SpecializationError(
                    f"kernel {self.name!r}: spec {i} is {s!r}; in_specs entries are Tile(...) "
                    f"or a PTX type (runtime scalar), out_specs entries are Tile(...)")
        n_specs = len(self.in_specs) + len(self.out_specs)
        if n_specs != len(self._names) and not self.pointer_params:
            raise SpecializationError(
                f"kernel {self.name!r} has {len(self._names)} positional parameters "
                f"({', '.join(self._names) or 'none'}) but {len(self.in_specs)} in_specs "
                f"+ {len(self.out_specs)} out_specs; give one spec per tensor parameter")

    def _geometry(self, grid, block, cluster, smem, reqntid) -> None:
        """The launch geometry, checked: grid, block (at most 1024 threads), cluster,
        dynamic shared memory and ``.reqntid``."""
        self.grid = grid
        self.block = dim3(block, "block")
        if math.prod(self.block) > 1024:
            raise SpecializationError(f"block {self.block} has {math.prod(self.block)} threads;"
                                      f" at most 1024")
        self.cluster = dim3(cluster, "cluster")
        if not isinstance(smem, int) or smem < 0:
            raise SpecializationError(f"smem must be a non-negative int (bytes), got {smem!r}")
        self.smem = smem
        self.reqntid = None if reqntid in (None, False) else (
            self.block if reqntid is True else dim3(reqntid, "reqntid"))

    # ------------------------------------------------------------------ properties
    @property
    def arch(self) -> str:
        """The target; ``"auto"`` resolves when the kernel is first traced.

        Examples:
            >>> from jax_pyptx import kernel, ptx
            >>> @kernel(arch="sm_100a")
            ... def k():
            ...     ptx.ret()
            >>> k.arch
            'sm_100a'
        """
        return self._resolved_arch or self._arch

    @property
    def template_params(self) -> dict:
        """The keyword-only parameters of the kernel function and their defaults.

        Examples:
            >>> from jax_pyptx import kernel, ptx
            >>> @kernel
            ... def k(*, unroll=4, scale=1.0):
            ...     ptx.ret()
            >>> k.template_params
            {'unroll': 4, 'scale': 1.0}
        """
        return dict(self._template)

    @property
    def shape_vars(self) -> tuple:
        """The shape variables (symbolic ``Tile`` dims) of the specs, in order of appearance.

        Examples:
            >>> from jax_pyptx import Tile, kernel, ptx
            >>> from jax_pyptx.types import f32
            >>> @kernel(in_specs=(Tile("M", "K", f32),), out_specs=(Tile("M", f32),))
            ... def k(X, Y):
            ...     ptx.ret()
            >>> k.shape_vars
            ('M', 'K')
        """
        return tuple(self._symbols)

    @property
    def param_names(self) -> tuple:
        """Names of the positional (tensor and runtime scalar) parameters, in order.

        Examples:
            >>> from jax_pyptx import Tile, kernel, ptx
            >>> from jax_pyptx.types import f32
            >>> @kernel(in_specs=(Tile("N", f32), f32), out_specs=(Tile("N", f32),))
            ... def axpy(X, alpha, Y):
            ...     ptx.ret()
            >>> axpy.param_names
            ('X', 'alpha', 'Y')
        """
        return self._names

    def __repr__(self):
        return f"Kernel({self.name}, arch={self.arch!r})"

    # ------------------------------------------------------------------ specialization
    def _specialize(self, kw: dict):
        raw = tuple(p.name for p in self.raw_params)
        _binding.unknown_argument(self, kw, allowed=raw)   # raw values matter to calls only
        template = _binding.template_values(self, kw)
        missing = [s for s in self._symbols if s not in kw]
        if missing:
            raise SpecializationError(
                f"kernel {self.name!r}: missing shape variable{'s' if len(missing) > 1 else ''}"
                f" {', '.join(missing)}; pass them by keyword (.ptx({missing[0]}=...)) or call "
                f"the kernel with arrays")
        env = {s: _binding.shape_value(self, s, kw[s]) for s in self._symbols}
        # keyed by type and exact value: 1, 1.0 and True, or 0.0 and -0.0, trace apart
        key = (exact_items(template), tuple(env.items()))
        return key, template, env

    def bind(self, *arrays, **kw) -> _binding.Binding:
        """Bind a call: ``arrays`` (the inputs, optionally followed by the outputs or
        anything with their ``.shape`` / ``.dtype``) against the specs, and ``kw`` (template
        parameters, shape variables, raw parameter values). Checks rank, dtype and fixed
        dims (errors name the parameter, its spec and what was passed) and binds the shape
        variables. Every runtime binds through here.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx
            >>> from jax_pyptx.types import f32
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),))
            ... def k(X, Y):
            ...     ptx.ret()
            >>> b = k.bind(np.zeros(8, np.float32))
            >>> b.env
            {'N': 8}
        """
        return _binding.bind(self, arrays, kw)

    def bind_shapes(self, *arrays) -> dict:
        """Shape variables from arrays (inputs, optionally followed by outputs).

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx
            >>> from jax_pyptx.types import f32
            >>> @kernel(in_specs=(Tile("M", "K", f32),), out_specs=(Tile("M", f32),))
            ... def k(X, Y):
            ...     ptx.ret()
            >>> k.bind_shapes(np.zeros((4, 8), np.float32))
            {'M': 4, 'K': 8}
        """
        return _binding.shapes_env(self, arrays)

    # ------------------------------------------------------------------ tracing
    def trace(self, **kw) -> Traced:
        """The traced specialization for ``kw`` (cached).

        Examples:
            >>> from jax_pyptx import Tile, kernel, ptx
            >>> from jax_pyptx.types import f32
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),))
            ... def k(X, Y):
            ...     ptx.ret()
            >>> t = k.trace(N=1024)
            >>> t is k.trace(N=1024), t.arch
            (True, 'sm_90a')
        """
        return self.trace_for(PLAIN, **kw)

    def trace_for(self, abi: ParamAbi | None, **kw) -> Traced:
        """The traced specialization for ``kw`` with parameter ABI ``abi`` (cached by
        template parameters, shape variables and ABI; None is the plain ABI).

        Examples:
            >>> from jax_pyptx import kernel, ptx
            >>> @kernel
            ... def k():
            ...     ptx.ret()
            >>> k.trace_for(None) is k.trace()
            True
        """
        # warm path: the same keywords as a previous call (by type and exact value)
        fast = (abi, tuple((n, exact_key(v)) for n, v in kw.items()))
        got = self._fast.get(fast)
        if got is not None:
            return got
        key, template, env = self._specialize(kw)
        key = (key, abi or PLAIN)
        got = self._cache.get(key)
        if got is not None:
            self._fast[fast] = got
            return got
        with self._lock:
            got = self._cache.get(key)
            if got is None:
                if self._resolved_arch is None:
                    self._resolved_arch = resolve_arch(self._arch)
                    parse_target(self._resolved_arch)
                got = trace_specialization(self, template, env, abi or PLAIN)
                self._cache[key] = got
            self._fast[fast] = got
        return got

    def ptx(self, **kw) -> str:
        """The PTX text of a specialization.

        Examples:
            >>> from jax_pyptx import Tile, kernel, ptx
            >>> from jax_pyptx.types import f32
            >>> @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),))
            ... def k(X, Y):
            ...     ptx.ret()
            >>> text = k.ptx(N=256)
            >>> ".visible .entry k(" in text, text.count("ret;")
            (True, 1)
        """
        return self.trace(**kw).ptx

    def module(self, **kw) -> Module:
        """The IR ``Module`` of a specialization (what ``ptx(**kw)`` prints).

        Examples:
            >>> from jax_pyptx import kernel, ptx
            >>> @kernel
            ... def k():
            ...     ptx.ret()
            >>> m = k.module()
            >>> [f.name for f in m.functions]
            ['k']
        """
        return self.trace(**kw).module

    def sass(self, **kw) -> str:
        """SASS disassembly (ptxas + nvdisasm).

        Examples:
            >>> from jax_pyptx import kernel, ptx
            >>> from jax_pyptx.toolchain import find_tool
            >>> @kernel
            ... def k():
            ...     ptx.ret()
            >>> "EXIT" in k.sass()                # needs nvdisasm (and ptxas; no GPU)
            True
        """
        from .toolchain import disassemble

        t = self.trace(**kw)
        return disassemble(t.ptx, t.arch, module=t.module)   # ptxas errors: user's line

    def compile(self, **kw) -> bytes:
        """The cubin (ptxas, disk-cached).

        Examples:
            >>> from jax_pyptx import kernel, ptx
            >>> @kernel
            ... def k():
            ...     ptx.ret()
            >>> k.compile()[1:4]                  # needs ptxas (no GPU)
            b'ELF'
        """
        from .toolchain import compile_ptx

        t = self.trace(**kw)
        return compile_ptx(t.ptx, t.arch, module=t.module).cubin

    def resources(self, **kw):
        """ptxas's resource report (registers, spills, shared memory, stack).

        Examples:
            >>> from jax_pyptx import kernel, ptx
            >>> @kernel
            ... def k():
            ...     ptx.ret()
            >>> report = k.resources()            # needs ptxas (no GPU)
            >>> report.spill_stores, report.stack_frame   # needs ptxas
            (0, 0)
        """
        from .toolchain import compile_ptx

        t = self.trace(**kw)
        return compile_ptx(t.ptx, t.arch, module=t.module).report

    # ------------------------------------------------------------------ running
    def interpret(self, *arrays, stats: dict | None = None, **kw):
        """Run on the CPU interpreter; returns the outputs (one array or a tuple).

        ``arrays``: the inputs (NumPy arrays in their logical layout, numbers for runtime
        scalars); ``kw``: template parameters, shape variables, raw parameter values and the
        interpret options (``jax_pyptx.specialize.options.CallOptions``): ``sanitize``
        (True, ``"strict"`` or False); ``max_steps`` (instructions per batch of CTAs) and
        ``timeout`` (seconds, default 300, ``math.inf`` for none) stop a kernel that runs too
        long (``InterpreterLimitError``); ``timeline`` (a file path) writes a Chrome /
        Perfetto trace of the run there (``docs/guides/interpreter.md``, "Timeline"; see
        ``jax_pyptx.interpret.launch``). Under the sanitizer, output elements the kernel
        never wrote are an ``UnwrittenOutputError``; ``partial_outputs`` (output names, or
        indices into ``out_specs``) names outputs it means to write only in part (or say
        ``Tile(..., partial=True)`` in the spec). A store into an input is an
        ``InputWriteError``. ``schedule`` (``"eager"``, ``"late"``, ``"random"``) and
        ``seed`` choose when asynchronous work completes. ``stats`` (a dict, or an
        ``interpret.Stats``) receives the launch's counts, as ``jax_pyptx.interpret.launch``'s:
        ``stats["instructions"]`` (dispatches) and ``stats["thread_instructions"]`` (one per
        thread per instruction).
        An empty input (a shape variable bound to 0) gives empty outputs without running anything
        (``jax_pyptx.specialize.empty``).

        >>> y = my_kernel.interpret(x, timeout=30.0)      # doctest: +SKIP

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx import Tile, kernel, ptx, reg
            >>> from jax_pyptx.types import f32, u64
            >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
            ... def neg(X, Y):
            ...     off = reg.cvt(ptx.special.tid.x(), u64) * 4
            ...     v = reg.scalar(f32)
            ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ...     ptx.inst.neg.f32(v, v)
            ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
            ...     ptx.ret()
            >>> neg.interpret(np.ones(32, np.float32))[:3]
            array([-1., -1., -1.], dtype=float32)
        """
        from .specialize.host import run_on_host    # NumPy and the interpreter: on first use

        outs = run_on_host(self, arrays, kw, stats=stats)
        return outs[0] if len(outs) == 1 else outs

    def _output_indices(self, sel) -> tuple:
        """Indices into ``out_specs`` of ``sel`` (output names or indices), checked."""
        if isinstance(sel, (str, int)):
            sel = (sel,)
        names = self._names[len(self.in_specs):len(self.in_specs) + len(self.out_specs)]
        out = []
        for o in sel:
            if isinstance(o, str) and o in names:
                out.append(names.index(o))
            elif isinstance(o, int) and not isinstance(o, bool) and 0 <= o < len(names):
                out.append(o)
            else:
                raise SpecializationError(
                    f"kernel {self.name!r}: partial_outputs takes output names "
                    f"({', '.join(map(repr, names)) or 'none'}) or indices into out_specs "
                    f"(0 to {len(names) - 1}), got {o!r}")
        return tuple(out)

    def __call__(self, *arrays, **kw):
        """Run the kernel: its outputs, one array or a tuple.

        ``arrays``: the inputs, JAX arrays (eager, or under jit / vmap / shard_map / grad)
        or PyTorch tensors (CPU: the interpreter; CUDA: the GPU; ``torch.compile`` sees one
        op); runtime scalars as numbers. ``kw``: shape variables, template parameters and
        raw parameter values, by name. A kernel with no ``in_specs`` / ``out_specs`` cannot
        be called (``NotSupportedError``). The runtime is the handler the package installs
        (``jax_pyptx.runtime.call_router``)."""
        if _call_handler is None:
            raise SpecializationError(f"kernel {self.name!r}: no runtime is installed to call "
                                      f"it (import jax_pyptx)")
        return _call_handler(self, *arrays, **kw)


def _def_loc(fn):
    """The ``SourceLoc`` of ``fn``'s ``def`` line (None for a callable without code)."""
    from .errors import SourceLoc

    code = getattr(fn, "__code__", None)
    return SourceLoc(code.co_filename, code.co_firstlineno) if code is not None else None


def raw_param(p) -> Param:
    """raw_params entries: the documented ``(type_string, name)`` (``("u32", "M")``,
    ``("u64.ptr.global.palign16", "A")``, ``("b8.align64.array128", "desc")``), or ours:
    ("n", u32) | ("desc", b8, 128) | ("desc", b8, 128, 64) | Param.

    Examples:
        >>> raw_param(("u32", "M")).name
        'M'
    """
    if isinstance(p, Param):
        return p
    if not isinstance(p, (tuple, list)) or not 2 <= len(p) <= 4:
        raise SpecializationError(f"raw_params entry {p!r}: expected (type_string, name), "
                                  f"(name, type), (name, type, array_len) or (name, type, "
                                  f"array_len, align)")
    if len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], str) and \
            _type_string(p[0]) is not None:
        return _type_string(p[0], p[1])
    name, t = p[0], p[1]
    t = t if isinstance(t, PtxType) else by_name(t)
    array = p[2] if len(p) > 2 else None
    align = p[3] if len(p) > 3 else 0
    return Param(name, t, align=align, array=array)


def _type_string(text: str, name: str | None = None):
    """``base[.ptr.<space>[.palignN]][.alignN][.arrayN]`` -> Param (None if ``text`` is no
    such string; with ``name`` None only the check is made)."""
    import re

    from .types import is_type_name

    parts = text.lstrip(".").split(".")
    if not parts or not is_type_name(parts[0]):
        return None
    t, rest = by_name(parts[0]), parts[1:]
    ptr_space, ptr_align, align, array = "", 0, 0, None
    i = 0
    if rest[:1] == ["ptr"]:
        if len(rest) < 2 or rest[1] not in ("global", "shared", "const", "local"):
            raise SpecializationError(f"raw_params type {text!r}: .ptr needs a state space "
                                      f"(global, shared, const, local)")
        ptr_space, ptr_align, i = "." + rest[1], 1, 2
    for part in rest[i:]:
        m = re.fullmatch(r"(palign|align|array)(\d+)", part)
        if m is None or (m.group(1) == "palign" and not ptr_space):
            raise SpecializationError(
                f"raw_params type {text!r}: unknown part {part!r}; the form is "
                f"base[.ptr.<space>[.palignN]][.alignN][.arrayN], e.g. 'u64.ptr.global.palign16'"
                f" or 'b8.align64.array128'")
        v = int(m.group(2))
        if m.group(1) == "palign":
            ptr_align = v
        elif m.group(1) == "align":
            align = v
        else:
            array = v
    if name is None:
        return True
    return Param(name, t, align=align, array=array, ptr_space=ptr_space, ptr_align=ptr_align)


def _raw_directive(d):
    """raw_directives entries: a line of text (``".maxnreg 128"``) or the documented
    ``(name, values)`` (``("maxntid", (384, 1, 1))`` -> ``.maxntid 384, 1, 1``)."""
    if isinstance(d, str):
        return d
    if isinstance(d, (tuple, list)) and len(d) == 2 and isinstance(d[0], str):
        name, values = d
        if isinstance(values, (int, str)):
            values = (values,)
        return "." + name.lstrip(".") + (" " + ", ".join(str(v) for v in values)
                                         if values else "")
    raise SpecializationError(f"raw_directives entry {d!r}: expected a directive line "
                              f"('.maxnreg 128') or (name, values) (('maxntid', (128, 1, 1)))")


@overload
def kernel(fn: Callable[..., Any], *, arch: str = "sm_90a", version: VersionOption = None,
           in_specs: Sequence[SpecOption] | None = None,
           out_specs: Sequence[Tile] | None = None, grid: GridOption | None = None,
           block: Dim3 = (1, 1, 1), cluster: Dim3 = (1, 1, 1), smem: int = 0,
           raw_params: Sequence[RawParamOption] | None = None, extern_smem: bool | str = False,
           reqntid: bool | Dim3 | None = None,
           raw_directives: Sequence[DirectiveOption] | None = None) -> Kernel: ...


@overload
def kernel(fn: None = None, *, arch: str = "sm_90a", version: VersionOption = None,
           in_specs: Sequence[SpecOption] | None = None,
           out_specs: Sequence[Tile] | None = None, grid: GridOption | None = None,
           block: Dim3 = (1, 1, 1), cluster: Dim3 = (1, 1, 1), smem: int = 0,
           raw_params: Sequence[RawParamOption] | None = None, extern_smem: bool | str = False,
           reqntid: bool | Dim3 | None = None,
           raw_directives: Sequence[DirectiveOption] | None = None,
           ) -> Callable[[Callable[..., Any]], Kernel]: ...


def kernel(fn: Callable[..., Any] | None = None, *, arch: str = "sm_90a",
           version: VersionOption = None, in_specs: Sequence[SpecOption] | None = None,
           out_specs: Sequence[Tile] | None = None, grid: GridOption | None = None,
           block: Dim3 = (1, 1, 1), cluster: Dim3 = (1, 1, 1), smem: int = 0,
           raw_params: Sequence[RawParamOption] | None = None, extern_smem: bool | str = False,
           reqntid: bool | Dim3 | None = None,
           raw_directives: Sequence[DirectiveOption] | None = None,
           **unknown: Never) -> Kernel | Callable[[Callable[..., Any]], Kernel]:
    """Decorator: ``@kernel`` or ``@kernel(arch="sm_90a", block=(128, 1, 1), ...)``.

    The function's positional parameters are its tensors (and runtime scalars), its
    keyword-only parameters template parameters baked into each trace. Options (an unknown
    one is a ``SpecializationError`` listing them):

    - ``arch``: the target, ``"sm_80"``, ``"sm_90a"`` (default), ``"sm_100a"``, ... or
      ``"auto"`` (``$JAX_PYPTX_ARCH``, else the current GPU, else sm_90a; resolved when first
      traced); ``version``: the PTX ISA version ``(major, minor)`` (default: what the
      instructions need);
    - ``in_specs`` / ``out_specs``: one ``Tile`` per input / output tensor (an input may be a
      PTX type: a runtime scalar); without specs the parameters are raw ``.u64`` pointers;
    - ``grid`` (a tuple, or a function of the shape variables and template parameters),
      ``block`` (at most 1024 threads), ``cluster``: launch geometry;
    - ``smem``: bytes of dynamic shared memory; ``extern_smem``: one ``.extern .shared
      .align 128 .b8 NAME[];`` window (``True``: ``dyn_smem``, or a name such as ``"smem"``)
      instead of static allocations; the body may name it (``reg.from_("smem", u32)``,
      ``ptx.inst.mov.u32(r, "smem")``, ``smem.base()``);
    - ``raw_params``: extra ``.param`` entries (``("n", u32)``, ``("u32", "n")``, ...);
      ``reqntid``: emit ``.reqntid`` (``True``: the block); ``raw_directives``: extra entry
      directives (``".maxnreg 128"`` or ``("maxntid", (384, 1, 1))``).

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.types import f32, u64
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def twice(X, Y):
        ...     off = reg.cvt(ptx.special.tid.x(), u64) * 4
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * 2.0)
        ...     ptx.ret()
        >>> twice.interpret(np.arange(32, dtype=np.float32))[:4]
        array([0., 2., 4., 6.], dtype=float32)
    """
    if unknown:
        name = next(iter(unknown))
        raise SpecializationError(
            f"kernel(): unknown option {name!r}"
            f"{_binding.did_you_mean(name, _KERNEL_OPTIONS)}; options: "
            f"{', '.join(_KERNEL_OPTIONS)}")
    options = dict(arch=arch, version=version, in_specs=in_specs, out_specs=out_specs, grid=grid,
                   block=block, cluster=cluster, smem=smem, raw_params=raw_params,
                   extern_smem=extern_smem, reqntid=reqntid, raw_directives=raw_directives)
    if fn is None:
        return lambda f: Kernel(f, **options)
    if not callable(fn):
        raise SpecializationError(f"@kernel decorates a function, got {fn!r}")
    return Kernel(fn, **options)


__all__ = ["kernel", "Kernel", "resolve_arch", "set_call_handler", "TensorSpec",
           "TmaDescriptorHandle"]
