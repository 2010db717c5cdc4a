# Static view of ``pyptx`` for type checkers and IDEs: at run time the package *is* jax_pyptx
# (pyptx/__init__.py), so its names are jax_pyptx's.
from typing import Any

from jax_pyptx import *  # noqa: F403
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

def __getattr__(name: str) -> Any: ...
