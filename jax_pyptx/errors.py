"""One exception hierarchy for the whole package.

Every message names, where it can, the user's source line (``file:line``), the instruction,
what was given and what is allowed.
"""
from __future__ import annotations


class PtxError(Exception):
    """Base of every error jax-pyptx raises on purpose."""

    def __init__(self, message: str, *, loc: "SourceLoc | None" = None):
        self.loc = loc
        self.message = message
        super().__init__(f"{loc}: {message}" if loc is not None else message)


class PtxTypeError(PtxError, TypeError):
    """An operand or operator was given a value of the wrong PTX type."""


class PtxValueError(PtxError, ValueError):
    """A value is out of the range or set that is allowed."""


class ArchError(PtxError):
    """An instruction or feature needs a newer architecture or PTX ISA version."""


class ValidationError(PtxError):
    """An instruction does not match any form of the ISA table."""


class PtxIndexError(PtxError, IndexError):
    """An index outside a register array, an mbarrier array or a shared buffer."""


class TraceError(PtxError, RuntimeError):
    """Misuse of the tracing DSL (labels, registers outside their trace, control flow); a
    ``RuntimeError``, as the documented surface raises for a call outside a trace."""


class SpecializationError(PtxError, TypeError):
    """Bad template parameters, shape variables or tensor arguments for a kernel."""


class NotSupportedError(PtxError, NotImplementedError):
    """A request that is valid but not supported here (this platform, this path, this dtype).

    The message names what was asked for and the fix: another platform, another path, or the
    piece to write."""


class ParseError(PtxError):
    """PTX text could not be parsed; carries line, column and the offending token."""

    def __init__(self, message: str, line: int, column: int, token: str = "", source: str = "<ptx>"):
        self.line, self.column, self.token, self.source = line, column, token, source
        tok = f" at {token!r}" if token else ""
        PtxError.__init__(self, f"{source}:{line}:{column}: {message}{tok}")


class ToolchainError(PtxError):
    """ptxas / nvdisasm missing or failed."""


class InterpreterError(PtxError):
    """The CPU interpreter found a bug in the kernel (sanitizer) or cannot run it."""


class SanitizerError(InterpreterError):
    """The interpreter's sanitizer found a bug in the kernel."""


class OutOfBoundsError(SanitizerError):
    """A global, shared, local, const or param access outside every allocation."""


class MisalignedAccessError(SanitizerError):
    """A memory access whose address is not a multiple of its size."""


class UninitializedReadError(SanitizerError):
    """A read of a register or of shared memory that no thread has written."""


class DivergenceError(SanitizerError):
    """A warp-synchronous or ``.aligned`` instruction executed by a diverged warp."""


class RaceError(SanitizerError):
    """Two warps of a CTA access the same shared memory, one of them storing, with no barrier
    between the accesses."""


class AsyncProxyError(SanitizerError):
    """Shared memory crosses between the generic proxy and the async proxy (TMA, bulk copies,
    wgmma, tcgen05) without the ordering the PTX memory model requires: generic writes read by
    the async proxy without ``fence.proxy.async``, an asynchronous copy's destination read
    before its mbarrier phase completed, or its source overwritten before its bulk group was
    waited on."""


class DeadlockError(SanitizerError):
    """Every warp is parked (barriers, mbarriers, warp syncs) and none can make progress."""


class InterpreterLimitError(InterpreterError):
    """The interpreter stopped a kernel at its instruction limit (``max_steps``) or time limit
    (``timeout``); the message lists where every warp is."""


class KernelTrapError(InterpreterError):
    """The kernel executed ``trap``/``brkpt`` or a device-side assertion failed."""


class SourceLoc:
    """A user's source position; printed as ``file:line``."""

    __slots__ = ("file", "line")

    def __init__(self, file: str, line: int):
        self.file, self.line = file, line

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, SourceLoc) and (self.file, self.line) == (other.file, other.line)

    def __hash__(self):
        return hash((self.file, self.line))


class AsyncHazardError(SanitizerError):
    """A register an asynchronous operation owns (a ``wgmma.mma_async`` accumulator before the
    ``wgmma.wait_group`` that retires it, a ``tcgen05.ld`` destination before
    ``tcgen05.wait::ld``) is read or written by another instruction."""


class TensorMemoryError(SanitizerError):
    """Tensor Memory (tcgen05) misuse: an access outside the columns the CTA allocated, used
    after ``tcgen05.dealloc``, from a warp that may not reach those lanes, or an allocation still
    held when the kernel exits."""
