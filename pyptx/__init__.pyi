# Static view of ``pyptx`` for type checkers and IDEs: ``pyptx`` is an alias whose attributes
# are jax_pyptx's (pyptx/__init__.py), plus pyptx's own modules (jax_pyptx.compat.MODULES).
from typing import Any

from jax_pyptx import (
    ArchError as ArchError,
    InterpreterError as InterpreterError,
    Kernel as Kernel,
    Layout as Layout,
    NotSupportedError as NotSupportedError,
    ParseError as ParseError,
    PtxError as PtxError,
    PtxTypeError as PtxTypeError,
    PtxValueError as PtxValueError,
    SpecializationError as SpecializationError,
    TensorSpec as TensorSpec,
    Tile as Tile,
    TmaDescriptorHandle as TmaDescriptorHandle,
    ToolchainError as ToolchainError,
    TraceError as TraceError,
    ValidationError as ValidationError,
    __version__ as __version__,
    detect_arch as detect_arch,
    emit as emit,
    intrinsic as intrinsic,
    kernel as kernel,
    parse as parse,
    ptx as ptx,
    reg as reg,
    smem as smem,
    types as types,
)

__all__ = ["kernel", "reg", "smem", "ptx", "intrinsic", "Tile", "Layout"]

def __getattr__(name: str) -> Any: ...
