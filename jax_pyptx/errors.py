"""One exception hierarchy for the whole package.

Every message names, where it can, the user's source line (``file:line``), the instruction,
what was given and what is allowed.

Examples:
    >>> from jax_pyptx.errors import PtxError, PtxTypeError
    >>> issubclass(PtxTypeError, TypeError) and issubclass(PtxTypeError, PtxError)
    True
"""
from __future__ import annotations


class PtxError(Exception):
    """Base of every error jax-pyptx raises on purpose.

    Examples:
        >>> from jax_pyptx import PtxError, kernel, ptx, reg
        >>> from jax_pyptx.types import f32
        >>> @kernel
        ... def k():
        ...     r = reg.scalar(f32)
        ...     ptx.inst.add.u32(r, r, 1)
        >>> try:
        ...     k.ptx()
        ... except PtxError as e:
        ...     print(type(e).__name__, e.loc is not None)
        PtxTypeError True
    """

    def __init__(self, message: str, *, loc: "SourceLoc | None" = None):
        self.loc = loc
        self.message = message
        super().__init__(f"{loc}: {message}" if loc is not None else message)


class PtxTypeError(PtxError, TypeError):
    """An operand or operator was given a value of the wrong PTX type.

    Examples:
        >>> from jax_pyptx import PtxTypeError, kernel, ptx, reg
        >>> from jax_pyptx.types import f32
        >>> @kernel
        ... def k():
        ...     r = reg.scalar(f32)
        ...     ptx.inst.add.u32(r, r, 1)   # an f32 register in a .u32 add
        >>> try:
        ...     k.ptx()
        ... except PtxTypeError as e:
        ...     print("has type f32" in str(e), isinstance(e, TypeError))
        True True
    """


class PtxValueError(PtxError, ValueError):
    """A value is out of the range or set that is allowed.

    Examples:
        >>> from jax_pyptx import PtxValueError
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> from jax_pyptx import ptx
        >>> try:
        ...     with trace_scope():
        ...         ptx.setmaxnreg(23)      # not a multiple of 8 in 24..256
        ... except PtxValueError as e:
        ...     print(isinstance(e, ValueError))
        True
    """


class ArchError(PtxError):
    """An instruction or feature needs a newer architecture or PTX ISA version.

    Examples:
        >>> from jax_pyptx import ArchError, kernel, ptx, reg
        >>> from jax_pyptx.types import u32
        >>> @kernel(arch="sm_90a")
        ... def k():
        ...     ptx.tcgen05.alloc(reg.scalar(u32), 32)
        >>> try:
        ...     k.ptx()
        ... except ArchError as e:
        ...     print("needs sm_100a" in str(e))
        True
    """


class ValidationError(PtxError):
    """An instruction does not match any form of the ISA table.

    Examples:
        >>> from jax_pyptx import ValidationError, kernel, ptx, reg
        >>> from jax_pyptx.types import u32
        >>> @kernel
        ... def k():
        ...     r = reg.scalar(u32)
        ...     ptx.inst.add.bogus.u32(r, r, 1)        # no form of add takes .bogus
        >>> try:
        ...     k.ptx()
        ... except ValidationError as e:
        ...     print(type(e).__name__)
        ValidationError
    """


class PtxIndexError(PtxError, IndexError):
    """An index outside a register array, an mbarrier array or a shared buffer.

    Examples:
        >>> from jax_pyptx import reg
        >>> from jax_pyptx.errors import PtxIndexError
        >>> from jax_pyptx.types import f32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> try:
        ...     with trace_scope():
        ...         acc = reg.array(f32, 4)
        ...         acc[4]
        ... except IndexError as e:                          # PtxIndexError is one
        ...     print(type(e).__name__)
        PtxIndexError
    """


class TraceError(PtxError, RuntimeError):
    """Misuse of the tracing DSL (labels, registers outside their trace, control flow); a
    ``RuntimeError``, as the documented surface raises for a call outside a trace.

    Examples:
        >>> from jax_pyptx import TraceError, ptx
        >>> try:
        ...     ptx.ret()                   # outside a @kernel function
        ... except TraceError as e:
        ...     print(type(e).__name__)
        TraceError
    """


class SpecializationError(PtxError, TypeError):
    """Bad template parameters, shape variables or tensor arguments for a kernel.

    Examples:
        >>> from jax_pyptx import SpecializationError, kernel
        >>> try:
        ...     kernel(block=(2048, 1, 1))(lambda: None)
        ... except SpecializationError as e:
        ...     print(e)
        block x is 2048; CUDA allows at most 1024 (limits: x <= 1024, y <= 1024, z <= 64)
    """


class NotSupportedError(PtxError, NotImplementedError):
    """A request that is valid but not supported here (this platform, this path, this dtype).

    The message names what was asked for and the fix: another platform, another path, or the
    piece to write.

    Examples:
        >>> from jax_pyptx import NotSupportedError, kernel, ptx
        >>> @kernel
        ... def k():                  # no in_specs: it has PTX but cannot be called on arrays
        ...     ptx.ret()
        >>> try:
        ...     k()
        ... except NotImplementedError as e:                 # NotSupportedError is one
        ...     print(type(e).__name__, isinstance(e, NotSupportedError))
        NotSupportedError True
    """


class ParseError(PtxError):
    """PTX text could not be parsed; carries line, column and the offending token.

    Examples:
        >>> from jax_pyptx import ParseError, parse
        >>> try:
        ...     parse(".entry k( {")
        ... except ParseError as e:
        ...     print(isinstance(e.line, int))
        True
    """

    def __init__(self, message: str, line: int, column: int, token: str = "", source: str = "<ptx>"):
        self.line, self.column, self.token, self.source = line, column, token, source
        tok = f" at {token!r}" if token else ""
        PtxError.__init__(self, f"{source}:{line}:{column}: {message}{tok}")


class ToolchainError(PtxError):
    """ptxas / nvdisasm missing or failed.

    Examples:
        >>> from jax_pyptx import ToolchainError, kernel, ptx
        >>> from jax_pyptx.toolchain import ptxas_check
        >>> @kernel
        ... def k():
        ...     ptx.ret()
        >>> try:
        ...     ptxas_check(k.ptx().replace("ret;", "bogus;"), "sm_90a")     # needs ptxas
        ... except ToolchainError as e:
        ...     print("ptxas" in str(e))
        True
    """


class InterpreterError(PtxError):
    """The CPU interpreter found a bug in the kernel (sanitizer) or cannot run it.

    Examples:
        >>> from jax_pyptx.errors import InterpreterError, PtxError
        >>> issubclass(InterpreterError, PtxError)
        True
    """


class SanitizerError(InterpreterError):
    """The interpreter's sanitizer found a bug in the kernel.

    Examples:
        >>> from jax_pyptx.errors import InterpreterError, SanitizerError
        >>> issubclass(SanitizerError, InterpreterError)
        True
    """


class SanitizerWarning(UserWarning):
    """The sanitizer found PTX that breaks the letter of the ISA while hardware and ptxas give
    the defined result (a ``tcgen05.ld`` destination read before ``tcgen05.wait::ld``, two warps
    storing the same value to one shared byte with no barrier between): the run goes on with
    the hardware's values. Issued once per PTX instruction and launch; ``launch(...,
    sanitize="strict")`` raises ``error_class`` instead. ``loc`` is the user's source line when
    the instruction has one, ``instruction`` the PTX text.

    Examples:
        >>> import warnings
        >>> from jax_pyptx.errors import SanitizerWarning
        >>> issubclass(SanitizerWarning, UserWarning)
        True
    """

    def __init__(self, message: str, *, error_class=None, loc=None, instruction: str = ""):
        self.error_class = error_class
        self.loc = loc
        self.instruction = instruction
        super().__init__(message)


class OutOfBoundsError(SanitizerError):
    """A global, shared, local, const or param access outside every allocation.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.errors import OutOfBoundsError, SanitizerError
        >>> from jax_pyptx.types import f32, u64
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def shifted(X, Y):
        ...     off = reg.cvt(ptx.special.tid.x(), u64) * 4 + 4      # lane 31 reads X[32]
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ...     ptx.ret()
        >>> try:
        ...     shifted.interpret(np.ones(32, np.float32))
        ... except OutOfBoundsError as e:
        ...     print(isinstance(e, SanitizerError), "4 bytes past the end" in str(e))
        True True
    """


class MisalignedAccessError(SanitizerError):
    """A memory access whose address is not a multiple of its size.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.errors import MisalignedAccessError
        >>> from jax_pyptx.types import f32
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def odd(X, Y):
        ...     v = reg.scalar(f32)
        ...     ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + 2))    # 4-byte load at byte 2
        ...     ptx.ret()
        >>> try:
        ...     odd.interpret(np.ones(32, np.float32))
        ... except MisalignedAccessError as e:
        ...     print("not aligned to 4 bytes" in str(e))
        True
    """


class UninitializedReadError(SanitizerError):
    """A read of a register or of shared memory that no thread has written.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, smem
        >>> from jax_pyptx.errors import UninitializedReadError
        >>> from jax_pyptx.types import f32
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def stale(X, Y):
        ...     buf = smem.alloc(f32, (32,))
        ...     v = smem.load(f32, buf[0])          # nothing stored there yet
        ...     ptx.ret()
        >>> try:
        ...     stale.interpret(np.ones(32, np.float32))
        ... except UninitializedReadError as e:
        ...     print("read before any thread of this CTA wrote it" in str(e))
        True
    """


class DivergenceError(SanitizerError):
    """A warp-synchronous or ``.aligned`` instruction executed by a diverged warp.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.errors import DivergenceError
        >>> from jax_pyptx.types import f32, u32
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def half(X, Y):
        ...     with ptx.if_(reg.from_(ptx.special.tid.x(), u32) < 16):
        ...         ptx.inst.bar.warp.sync(0xFFFFFFFF)   # needs all 32 lanes; 16 took the branch
        ...     ptx.ret()
        >>> try:
        ...     half.interpret(np.ones(32, np.float32))
        ... except DivergenceError as e:
        ...     print("divergent" in str(e))
        True
    """


class RaceError(SanitizerError):
    """Two warps of a CTA access the same shared memory, one of them storing, with no barrier
    between the accesses.

    Examples:
        >>> from jax_pyptx.errors import RaceError, SanitizerError
        >>> issubclass(RaceError, SanitizerError)
        True
    """


class AsyncProxyError(SanitizerError):
    """Shared memory crosses between the generic proxy and the async proxy (TMA, bulk copies,
    wgmma, tcgen05) without the ordering the PTX memory model requires: generic writes read by
    the async proxy without ``fence.proxy.async``, an asynchronous copy's destination read
    before its mbarrier phase completed, or its source overwritten before its bulk group was
    waited on.

    Examples:
        >>> from jax_pyptx.errors import AsyncProxyError, SanitizerError
        >>> issubclass(AsyncProxyError, SanitizerError)
        True
    """


class DeadlockError(SanitizerError):
    """Every warp is parked (barriers, mbarriers, warp syncs) and none can make progress.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx
        >>> from jax_pyptx.errors import DeadlockError
        >>> from jax_pyptx.types import f32
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def spin(X, Y):
        ...     with ptx.loop("forever"):           # bra.uni forever: never leaves
        ...         pass
        ...     ptx.ret()
        >>> try:
        ...     spin.interpret(np.ones(32, np.float32))
        ... except DeadlockError as e:
        ...     print("no progress" in str(e))
        True
    """


class InterpreterLimitError(InterpreterError):
    """The interpreter stopped a kernel at its instruction limit (``max_steps``) or time limit
    (``timeout``); the message lists where every warp is.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx, reg
        >>> from jax_pyptx.errors import InterpreterLimitError
        >>> from jax_pyptx.types import f32
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def slow(X, Y):
        ...     v = reg.scalar(f32, 0.0)
        ...     for i in ptx.range_(0, 1_000_000):
        ...         ptx.inst.st.global_.f32(ptx.addr(Y.ptr()), v)
        ...     ptx.ret()
        >>> try:
        ...     slow.interpret(np.ones(32, np.float32), max_steps=1000)
        ... except InterpreterLimitError as e:
        ...     print(type(e).__name__)
        InterpreterLimitError
    """


class KernelTrapError(InterpreterError):
    """The kernel executed ``trap``/``brkpt`` or a device-side assertion failed.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx import Tile, kernel, ptx
        >>> from jax_pyptx.errors import KernelTrapError
        >>> from jax_pyptx.types import f32
        >>> @kernel(in_specs=(Tile(32, f32),), out_specs=(Tile(32, f32),), block=(32, 1, 1))
        ... def fails(X, Y):
        ...     ptx.inst.trap()
        ...     ptx.ret()
        >>> try:
        ...     fails.interpret(np.ones(32, np.float32))
        ... except KernelTrapError as e:
        ...     print("executed trap" in str(e))
        True
    """


class SourceLoc:
    """A user's source position; printed as ``file:line``.

    Examples:
        >>> from jax_pyptx.errors import PtxError, SourceLoc
        >>> str(PtxError("bad operand", loc=SourceLoc("my_kernels.py", 12)))
        'my_kernels.py:12: bad operand'
    """

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
    ``tcgen05.wait::ld``) is read or written by another instruction; also (a
    ``SanitizerWarning`` unless ``sanitize="strict"``) a ``wgmma.mma_async`` reading registers
    written since the warpgroup's last ``wgmma.fence``, or run with no fence before it.

    Examples:
        >>> from jax_pyptx.errors import AsyncHazardError, SanitizerError
        >>> issubclass(AsyncHazardError, SanitizerError)
        True
    """


class TensorMemoryError(SanitizerError):
    """Tensor Memory (tcgen05) misuse: an access outside the columns the CTA allocated, used
    after ``tcgen05.dealloc``, from a warp that may not reach those lanes, or an allocation still
    held when the kernel exits.

    Examples:
        >>> from jax_pyptx.errors import SanitizerError, TensorMemoryError
        >>> issubclass(TensorMemoryError, SanitizerError)
        True
    """


class ProvenanceError(OutOfBoundsError):
    """An access through a pointer lands outside the buffer the pointer was derived from: an
    address computed from parameter ``X`` that falls inside parameter ``W``'s buffer (both are
    named), or, under ``jax.vmap`` batched on the grid, a CTA of one batch item reaching into
    another item's part of a tensor (each item is its own buffer). A subclass of
    ``OutOfBoundsError``: the access is out of bounds of its own buffer.

    Examples:
        >>> from jax_pyptx.errors import OutOfBoundsError, ProvenanceError
        >>> issubclass(ProvenanceError, OutOfBoundsError)
        True
    """


class UnwrittenOutputError(SanitizerError):
    """A launch ended with elements of an output buffer that no thread wrote (a grid one block
    short): on a GPU they hold whatever the buffer held before. The message names the output,
    the first unwritten element ranges and their count; an output that a kernel writes only
    in part is declared so (``launch(..., partial_outputs=...)``, ``kernel.interpret(...,
    partial_outputs=...)`` or ``Tile(..., partial=True)``).

    Examples:
        >>> from jax_pyptx.errors import SanitizerError, UnwrittenOutputError
        >>> issubclass(UnwrittenOutputError, SanitizerError)
        True
    """


class InputWriteError(SanitizerError):
    """A store (or atomic) into a tensor that is an input of the call and not an aliased
    output: under ``jax.jit`` on a GPU it would write into a buffer XLA owns (and may share
    with other computations).

    Examples:
        >>> from jax_pyptx.errors import InputWriteError, SanitizerError
        >>> issubclass(InputWriteError, SanitizerError)
        True
    """
