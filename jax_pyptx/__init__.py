"""jax-pyptx: write NVIDIA PTX kernels in Python, read the PTX, run it on the CPU, call it from JAX.

    from jax_pyptx import kernel, reg, smem, ptx, Tile, Layout
    from pyptx import kernel, reg, smem, ptx, Tile, Layout     # the same objects: pyptx's spelling

``__all__`` is the public surface. The ``pyptx`` alias (``pyptx/``) adds pyptx's own names
(``jax_pyptx.compat``).
"""
from . import types
from .errors import (
    ArchError, InterpreterError, NotSupportedError, ParseError, PtxError, PtxTypeError, PtxValueError,
    SpecializationError, ToolchainError, TraceError, ValidationError,
)
from .dsl import reg, smem
from .dsl import ptx
from .dsl.intrinsic import intrinsic
from .kernel_def import Kernel, kernel
from .kernel_def import set_call_handler as _set_call_handler
from .specs import Layout, TensorSpec, Tile, TmaDescriptorHandle
from .text.printer import emit

__version__ = "0.1.0"

# lazily imported entry points: name -> (module, attribute or None for the module itself)
_LAZY = {
    "interpret": ("jax_pyptx.interpret", None),
    "runtime": ("jax_pyptx.runtime", None),
    "transpile": ("jax_pyptx.transpile", None),
    "toolchain": ("jax_pyptx.toolchain", None),
    "isa": ("jax_pyptx.isa", None),
    "ir": ("jax_pyptx.ir", None),
    "perf": ("jax_pyptx.perf", None),
    "viz": ("jax_pyptx.viz", None),
    "ptx_call": ("jax_pyptx.runtime.call", "ptx_call"),
    "configure": ("jax_pyptx.runtime.options", "configure"),
    "to_torch": ("jax_pyptx.runtime.torch_op", "to_torch"),
    "with_backward": ("jax_pyptx.runtime.autodiff", "with_backward"),
    "differentiable_kernel": ("jax_pyptx.runtime.differentiable", "differentiable_kernel"),
}

# the public surface: everything above and below, the lazily loaded entry points included
# (``from jax_pyptx import *`` therefore loads them: JAX, and torch for ``to_torch`` where it is
# installed). pyptx's
# own names (``pyptx.spec``, ``pyptx.cache``, ...) are on the ``pyptx`` alias only
# (``jax_pyptx.compat``).
__all__ = [
    # authoring
    "kernel", "Kernel", "reg", "smem", "ptx", "intrinsic", "Tile", "Layout", "TensorSpec",
    "TmaDescriptorHandle", "types",
    # text, devices
    "parse", "emit", "detect_arch",
    # errors
    "PtxError", "ArchError", "InterpreterError", "NotSupportedError", "ParseError",
    "PtxTypeError", "PtxValueError", "SpecializationError", "ToolchainError", "TraceError",
    "ValidationError",
    # loaded on first use (``_LAZY``)
    "interpret", "runtime", "transpile", "toolchain", "isa", "ir", "perf", "viz", "ptx_call",
    "configure", "to_torch", "with_backward", "differentiable_kernel",
]


def parse(text: str, source: str = "<ptx>", check: bool = True):
    """Parse PTX text into an IR ``Module``, refusing what ptxas refuses: ``ParseError`` for
    bad text, unknown directives, duplicate labels or definitions; the validator's error
    (``ValidationError``, ``PtxTypeError``, ``PtxValueError``, ``ArchError``) for an
    instruction the module's target and version do not take, naming its line.
    ``check=False`` reads any syntactically valid PTX (``jax_pyptx.text.parser.parse``).

    Examples:
        >>> from jax_pyptx import parse
        >>> m = parse(".version 8.5 .target sm_90a .address_size 64 .visible .entry k() { ret; }")
        >>> [f.name for f in m.functions]
        ['k']
    """
    from .text.parser import parse as _parse

    return _parse(text, source=source, check=check)


def _call_runtime(k, *arrays, **kw):
    """``kernel(*arrays)``: PyTorch tensors go to the PyTorch runtime, anything else to the
    JAX runtime (``jax_pyptx.runtime.call_router``), imported on the first call."""
    from .runtime.call_router import call

    return call(k, *arrays, **kw)


_set_call_handler(_call_runtime)

def detect_arch() -> str:
    """The PTX target of CUDA device 0 (``"sm_90a"`` on an H100), cached; raises a
    ``RuntimeError`` (``NotSupportedError``) suggesting an explicit arch when no GPU is
    visible. ``@kernel(arch="auto")`` uses the same probe when first traced.

    Examples:
        >>> import jax_pyptx
        >>> try:
        ...     arch = jax_pyptx.detect_arch()      # "sm_90a" on an H100
        ... except RuntimeError:
        ...     arch = "sm_90a"                     # no GPU here: name the target yourself
        >>> arch.startswith("sm_")
        True
    """
    from .toolchain.device import detect_arch as _detect

    return _detect()


def __getattr__(name):
    # heavier layers load on first use, never at import
    if name in _LAZY:
        import importlib
        import importlib.util

        if name == "to_torch" and importlib.util.find_spec("torch") is None:
            return _to_torch_without_torch          # ``import *`` works without PyTorch
        module, attr = _LAZY[name]
        got = importlib.import_module(module)
        return got if attr is None else getattr(got, attr)
    raise AttributeError(f"module 'jax_pyptx' has no attribute {name!r}")


def _to_torch_without_torch(kernel, **template):
    """``jax_pyptx.to_torch`` where PyTorch is not installed: says so when called.

    Examples:
        >>> import jax_pyptx
        >>> jax_pyptx._to_torch_without_torch(jax_pyptx.Kernel)
        Traceback (most recent call last):
        ModuleNotFoundError: jax_pyptx.to_torch needs PyTorch, which is not installed: pip install 'jax-pyptx[torch]' (or torch)
    """
    raise ModuleNotFoundError("jax_pyptx.to_torch needs PyTorch, which is not installed: "
                              "pip install 'jax-pyptx[torch]' (or torch)", name="torch")
