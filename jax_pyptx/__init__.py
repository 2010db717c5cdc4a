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


def parse(text: str, source: str = "<ptx>"):
    """Parse PTX text into an IR ``Module`` (raises ``ParseError`` on bad input)."""
    from .text.parser import parse as _parse

    return _parse(text, source=source)


def _call_from_jax(k, *arrays, **kw):
    """``kernel(*arrays)``: the JAX runtime, imported on the first call."""
    from .runtime.call import call_kernel

    return call_kernel(k, *arrays, **kw)


_set_call_handler(_call_from_jax)


# the documented ``pyptx.<name>`` modules that live elsewhere here (``from pyptx import spec``)
_DOCUMENTED_MODULES = {"spec": "dsl.spec", "wgmma_layout": "dsl.wgmma_layout",
                       "codegen": "transpile.pyptx_codegen", "parser": "text.parser",
                       "emitter": "text.printer", "_trace": "dsl.trace_scope"}


def __getattr__(name):
    # heavier layers load on first use, never at import
    if name in ("interpret", "runtime", "transpile", "toolchain", "isa", "ir", "perf"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in _DOCUMENTED_MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{_DOCUMENTED_MODULES[name]}")
    if name == "ptx_call":
        from .runtime.call import ptx_call

        return ptx_call
    if name == "configure":
        from .runtime.options import configure

        return configure
    if name == "to_torch":
        from .runtime.torch_op import to_torch

        return to_torch
    if name == "with_backward":
        from .runtime.autodiff import with_backward

        return with_backward
    raise AttributeError(f"module 'jax_pyptx' has no attribute {name!r}")
