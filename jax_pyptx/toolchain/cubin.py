"""PTX -> cubin with ptxas, cached on disk by (PTX hash, arch, ptxas version)."""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass

from ..errors import ToolchainError
from .find import find_tool
from .report import ResourceReport, parse_report


@dataclass(frozen=True)
class CompileResult:
    cubin: bytes
    report: ResourceReport
    cached: bool
    path: str


def cache_dir() -> str:
    d = os.environ.get("JAX_PYPTX_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "jax_pyptx")
    os.makedirs(d, exist_ok=True)
    return d


def _atomic_write(path: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _run_ptxas(ptx: str, arch: str, extra=()) -> tuple:
    tool = find_tool("ptxas")
    with tempfile.TemporaryDirectory(prefix="jax_pyptx-") as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run([tool.path, f"-arch={arch}", "-v", *extra, "-o", out, src],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise ToolchainError(_explain(proc.stderr, ptx, tool))
        with open(out, "rb") as f:
            return f.read(), proc.stderr + proc.stdout


def _explain(stderr: str, ptx: str, tool) -> str:
    import re

    lines = ptx.splitlines()
    msg = [f"ptxas {tool.version_text} ({tool.path}) rejected the PTX:"]
    for line in stderr.strip().splitlines():
        msg.append("  " + line)
        m = re.search(r"line (\d+)", line)
        if m and 0 < int(m.group(1)) <= len(lines):
            msg.append(f"    > {lines[int(m.group(1)) - 1].strip()}")
    return "\n".join(msg)


def compile_ptx(ptx: str, arch: str, use_cache: bool = True) -> CompileResult:
    """Compile ``ptx`` for ``arch``; a second process with the same PTX reads the cache.

    Each entry is ``<key>-<arch>.cubin`` plus ``.txt`` (the ptxas report, whose first line is
    the cubin's sha256): an entry whose cubin does not match is rebuilt.
    """
    tool = find_tool("ptxas")
    key = hashlib.sha256(f"{arch}\0{tool.version_text}\0".encode() + ptx.encode()).hexdigest()
    d = cache_dir()
    cub = os.path.join(d, f"{key}-{arch}.cubin")
    rep = os.path.join(d, f"{key}-{arch}.txt")
    if use_cache:
        hit = _read_entry(cub, rep)
        if hit is not None:
            return CompileResult(hit[0], parse_report(hit[1]), True, cub)
    cubin, report = _run_ptxas(ptx, arch)
    if use_cache:
        _atomic_write(cub, cubin)
        _atomic_write(rep, (hashlib.sha256(cubin).hexdigest() + "\n" + report).encode())
    return CompileResult(cubin, parse_report(report), False, cub)


def _read_entry(cub: str, rep: str):
    """(cubin, report) of a valid cache entry, or None (missing or corrupt)."""
    try:
        with open(cub, "rb") as f, open(rep) as g:
            cubin, text = f.read(), g.read()
    except OSError:
        return None
    digest, _, report = text.partition("\n")
    if hashlib.sha256(cubin).hexdigest() != digest:
        return None
    return cubin, report


compile = compile_ptx  # noqa: A001 - the documented name: toolchain.compile(ptx, arch)


def ptxas_check(ptx: str, arch: str) -> ResourceReport:
    """Assemble without caching; raises ToolchainError with ptxas's message on rejection."""
    return parse_report(_run_ptxas(ptx, arch)[1])


def disassemble(ptx: str, arch: str) -> str:
    """SASS text of the PTX (ptxas, then nvdisasm)."""
    res = compile_ptx(ptx, arch)
    tool = find_tool("nvdisasm")
    with tempfile.TemporaryDirectory(prefix="jax_pyptx-") as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as f:
            f.write(res.cubin)
        proc = subprocess.run([tool.path, "-c", path], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ToolchainError(f"nvdisasm failed: {proc.stderr.strip()}")
        return proc.stdout
