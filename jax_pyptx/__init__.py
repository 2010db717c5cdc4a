"""jax-pyptx: write NVIDIA PTX kernels in Python, read the PTX, run it on the CPU, call it from JAX.

    from pyptx import kernel, reg, smem, ptx, Tile, Layout     # alias of jax_pyptx
"""
from . import types  # noqa: F401
from .errors import (  # noqa: F401
    ArchError, InterpreterError, NotSupportedError, ParseError, PtxError, PtxTypeError, PtxValueError,
    SpecializationError, ToolchainError, TraceError, ValidationError,
)
from .dsl import reg, smem  # noqa: F401
from .dsl import ptx  # noqa: F401
from .dsl.intrinsic import intrinsic  # noqa: F401
from .kernel import Kernel, kernel  # noqa: F401
from .kernel import set_call_handler as _set_call_handler
from .specs import Layout, TensorSpec, Tile, TmaDescriptorHandle  # noqa: F401
from .text.printer import emit  # noqa: F401

__version__ = "0.1.0"
# the documented ``from pyptx import *`` names (the runtime helpers add theirs)
__all__ = ["kernel", "reg", "smem", "ptx", "intrinsic", "Tile", "Layout"]


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
    JAX runtime (``jax_pyptx.runtime.dispatch``), imported on the first call."""
    from .runtime.dispatch import call

    return call(k, *arrays, **kw)


_set_call_handler(_call_runtime)

# lazily imported attributes: name -> (module, attribute or None for the module itself)
_LAZY = {
    "interpret": ("jax_pyptx.interpret", None),
    "runtime": ("jax_pyptx.runtime", None),
    "transpile": ("jax_pyptx.transpile", None),
    "toolchain": ("jax_pyptx.toolchain", None),
    "isa": ("jax_pyptx.isa", None),
    "ir": ("jax_pyptx.ir", None),
    "perf": ("jax_pyptx.perf", None),
    "cache": ("jax_pyptx.toolchain.cubin_cache", None),
    "jax_support": ("jax_pyptx.runtime.jax_support", None),
    "torch_support": ("jax_pyptx.runtime.torch_support", None),
    "ptx_call": ("jax_pyptx.runtime.call", "ptx_call"),
    "configure": ("jax_pyptx.runtime.options", "configure"),
    "to_torch": ("jax_pyptx.runtime.torch_op", "to_torch"),
    "with_backward": ("jax_pyptx.runtime.autodiff", "with_backward"),
    "differentiable_kernel": ("jax_pyptx.runtime.torch_support", "differentiable_kernel"),
}


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


# the documented ``pyptx.<name>`` modules that live elsewhere here (``from pyptx import spec``)
_DOCUMENTED_MODULES = {"spec": "dsl.spec", "wgmma_layout": "dsl.wgmma_layout",
                       "codegen": "transpile.pyptx_codegen", "parser": "text.parser",
                       "emitter": "text.printer", "_trace": "dsl.trace_scope"}


def __getattr__(name):
    # heavier layers load on first use, never at import
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        got = importlib.import_module(module)
        return got if attr is None else getattr(got, attr)
    if name in _DOCUMENTED_MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{_DOCUMENTED_MODULES[name]}")
    raise AttributeError(f"module 'jax_pyptx' has no attribute {name!r}")
