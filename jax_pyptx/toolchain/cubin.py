"""PTX -> cubin with ptxas, cached on disk by (PTX hash, arch, ptxas version); SASS memoised
the same way by (cubin digest, nvdisasm version).

Cache entries (see ``cache.py`` for the directory, atomic writes and fallbacks):

- ``<key>-<arch>.cubin`` and ``<key>-<arch>.txt``: the ``.txt`` holds ``<sha256> <size>`` of
  the cubin on its first line, then ptxas's report;
- ``<cubin sha256>-nvdisasm<version>.sass``: ``<sha256> <size>`` of the SASS text, then it;
- published cubins (``publish_cubin``, read by the C++ launcher): ``<path>`` and its stamp
  ``<path>.sha256``.

Every read is verified against the recorded size and digest; anything else is a miss.

Examples:
    >>> from jax_pyptx.toolchain.cubin import compile_ptx
    >>> from jax_pyptx import kernel, ptx
    >>> @kernel
    ... def k():
    ...     ptx.ret()
    >>> res = compile_ptx(k.ptx(), "sm_90a")         # needs ptxas
    >>> res.cubin[1:4], res.report.registers >= 0
    (b'ELF', True)
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass

from ..errors import ToolchainError
from . import cache
from .cache import atomic_write as _atomic_write  # noqa: F401 - kept for older callers
from .cache import cache_dir  # noqa: F401 - part of the toolchain's API
from .find import find_tool
from .report import ResourceReport, parse_report


@dataclass(frozen=True)
class CompileResult:
    """What ``compile_ptx`` returns: the cubin bytes, ptxas's ``ResourceReport``, whether it
    came from the disk cache, and the cache file's path.

    Examples:
        >>> from jax_pyptx.toolchain.cubin import CompileResult, compile_ptx
        >>> from jax_pyptx import kernel, ptx
        >>> @kernel
        ... def k():
        ...     ptx.ret()
        >>> res = compile_ptx(k.ptx(), "sm_90a")         # needs ptxas
        >>> isinstance(res, CompileResult), compile_ptx(k.ptx(), "sm_90a").cached
        (True, True)
    """
    cubin: bytes
    report: ResourceReport
    cached: bool
    path: str


def _run_ptxas(ptx: str, arch: str, extra=(), module=None) -> tuple:
    tool = find_tool("ptxas")
    with tempfile.TemporaryDirectory(prefix="jax_pyptx-") as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run([tool.path, f"-arch={arch}", "-v", *extra, "-o", out, src],
                              capture_output=True, text=True, errors="replace")
        if proc.returncode != 0:
            from .ptxas_errors import explain

            msg, loc = explain(proc.stderr, ptx, tool, module)
            raise ToolchainError(msg, loc=loc)
        with open(out, "rb") as f:
            return f.read(), proc.stderr + proc.stdout


def compile_ptx(ptx: str, arch: str, use_cache: bool = True, module=None) -> CompileResult:
    """Compile ``ptx`` for ``arch``; a second process with the same PTX reads the cache.

    ``module`` (optional) is the IR module ``ptx`` was printed from: a ptxas error then names
    the user's Python line of the rejected instruction.

    Examples:
        >>> from jax_pyptx.toolchain.cubin import compile_ptx
        >>> from jax_pyptx import kernel, ptx
        >>> @kernel
        ... def k():
        ...     ptx.ret()
        >>> compile_ptx(k.ptx(), "sm_90a").cubin[:4] == bytes([0x7F]) + b"ELF"   # needs ptxas
        True
    """
    tool = find_tool("ptxas")
    key = hashlib.sha256(f"{arch}\0{tool.version_text}\0".encode() + ptx.encode()).hexdigest()
    name = f"{key}-{arch}"
    if use_cache:
        d = cache.cache_dir()
        hit = _read_entry(os.path.join(d, name + ".cubin"), os.path.join(d, name + ".txt"))
        if hit is not None:
            return CompileResult(hit[0], parse_report(hit[1]), True,
                                 os.path.join(d, name + ".cubin"))
    cubin, report = _run_ptxas(ptx, arch, (), module)
    path = os.path.join(cache.cache_dir(), name + ".cubin")
    if use_cache:
        where = cache.store(path, cubin)
        if where:
            path = where
            cache.store(path[:-len(".cubin")] + ".txt",
                        (cache.stamp(cubin) + "\n" + report).encode())
    return CompileResult(cubin, parse_report(report), False, path)


def _read_entry(cub: str, rep: str):
    """(cubin, report) of a valid cache entry, or None (missing, unreadable or corrupt)."""
    text = cache.read_text(rep)
    if text is None:
        return None
    recorded, _, report = text.partition("\n")
    cubin = cache.read_bytes(cub)
    if cubin is None or not cache.matches(cubin, recorded):
        return None
    return cubin, report


compile = compile_ptx


def ptxas_check(ptx: str, arch: str, module=None) -> ResourceReport:
    """Assemble without caching; raises ToolchainError with ptxas's message on rejection.

    Examples:
        >>> from jax_pyptx.errors import ToolchainError
        >>> from jax_pyptx.toolchain.cubin import ptxas_check
        >>> from jax_pyptx import kernel, ptx
        >>> @kernel
        ... def k():
        ...     ptx.ret()
        >>> ptxas_check(k.ptx(), "sm_90a").spill_stores  # needs ptxas
        0
        >>> try:
        ...     ptxas_check(k.ptx().replace("ret;", "bogus;"), "sm_90a")   # needs ptxas
        ... except ToolchainError as e:
        ...     print("ptxas" in str(e))
        True
    """
    return parse_report(_run_ptxas(ptx, arch, module=module)[1])


def disassemble(ptx: str, arch: str, module=None) -> str:
    """SASS text of the PTX (ptxas, then nvdisasm), memoised on disk.

    Examples:
        >>> from jax_pyptx.toolchain.cubin import disassemble
        >>> from jax_pyptx import kernel, ptx
        >>> @kernel
        ... def k():
        ...     ptx.ret()
        >>> "EXIT" in disassemble(k.ptx(), "sm_90a")     # needs nvdisasm
        True
    """
    res = compile_ptx(ptx, arch, module=module)
    tool = find_tool("nvdisasm")
    digest = hashlib.sha256(res.cubin).hexdigest()
    path = os.path.join(cache.cache_dir(), f"{digest}-nvdisasm{tool.version_text}.sass")
    text = cache.read_text(path)
    if text is not None:
        recorded, _, sass = text.partition("\n")
        if cache.matches(sass.encode(), recorded):
            return sass
    with tempfile.TemporaryDirectory(prefix="jax_pyptx-") as d:
        cub = os.path.join(d, "k.cubin")
        with open(cub, "wb") as f:
            f.write(res.cubin)
        proc = subprocess.run([tool.path, "-c", cub], capture_output=True, text=True,
                              errors="replace")
    if proc.returncode != 0:
        raise ToolchainError(f"nvdisasm {tool.version_text} ({tool.path}) failed on the "
                             f"cubin of the kernel: {proc.stderr.strip()}")
    sass = proc.stdout
    cache.store(path, (cache.stamp(sass.encode()) + "\n" + sass).encode())
    return sass


# ----------------------------------------------------------------------------- published
def publish_cubin(path: str, cubin: bytes) -> str:
    """Publish ``cubin`` at ``path`` (with its stamp ``<path>.sha256`` for the C++ launcher),
    unless a verified copy with the same bytes is already there. Returns the path written or
    found, or "" when the cache could not take it (the launcher then JITs the PTX).

    Examples:
        >>> import os, tempfile
        >>> from jax_pyptx.toolchain.cubin import publish_cubin, read_cubin
        >>> path = os.path.join(tempfile.mkdtemp(), "k.cubin")
        >>> publish_cubin(path, b"not really a cubin") == path
        True
        >>> read_cubin(path)
        b'not really a cubin'
    """
    if cache.read_stamped(path) == cubin:
        return path
    return cache.write_stamped(path, cubin)


def read_cubin(path: str) -> bytes | None:
    """A published cubin's bytes when they match their stamp; else None (rebuild it).

    Examples:
        >>> import os, tempfile
        >>> from jax_pyptx.toolchain.cubin import publish_cubin, read_cubin
        >>> path = os.path.join(tempfile.mkdtemp(), "k.cubin")
        >>> read_cubin(path) is None                     # nothing published yet
        True
        >>> _ = publish_cubin(path, b"bytes")
        >>> with open(path, "wb") as f:                  # altered after publishing
        ...     _ = f.write(b"other")
        >>> read_cubin(path) is None
        True
    """
    return cache.read_stamped(path)
