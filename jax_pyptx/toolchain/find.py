"""Locate CUDA tools and read their versions.

Examples:
    >>> from jax_pyptx.toolchain.find import find_tool
    >>> tool = find_tool("ptxas")                    # needs ptxas
    >>> tool.version >= (12, 0)
    True
"""
from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import sysconfig
from dataclasses import dataclass

from ..errors import ToolchainError


@dataclass(frozen=True)
class Tool:
    """A CUDA tool found on this machine: its name, path and version tuple.

    Examples:
        >>> from jax_pyptx.toolchain.find import Tool
        >>> t = Tool("ptxas", "/usr/local/cuda/bin/ptxas", (12, 8, 93))
        >>> t.version_text
        '12.8.93'
    """
    name: str
    path: str
    version: tuple     # (13, 0, 88)

    @property
    def version_text(self) -> str:
        """The version as text, ``"12.8.93"``.

        Examples:
            >>> from jax_pyptx.toolchain.find import Tool
            >>> Tool("nvdisasm", "/opt/cuda/bin/nvdisasm", (12, 4)).version_text
            '12.4'
        """
        return ".".join(map(str, self.version))


def _candidates(name: str) -> list:
    found = []
    w = shutil.which(name)
    if w:
        found.append(w)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            found.append(os.path.join(os.environ[var], "bin", name))
    found.append(f"/usr/local/cuda/bin/{name}")
    roots = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    try:
        import site

        roots.update(site.getsitepackages())
    except AttributeError:  # pragma: no cover - virtualenv without getsitepackages
        pass
    for root in sorted(roots):
        found += sorted(glob.glob(os.path.join(root, "nvidia", "*", "bin", name)))
        found += sorted(glob.glob(os.path.join(root, "nvidia", "*", "*", "bin", name)))
    out, seen = [], set()
    for p in found:
        rp = os.path.realpath(p)
        if rp not in seen and os.path.isfile(rp) and os.access(rp, os.X_OK):
            seen.add(rp)
            out.append(p)
    return out


_VER = re.compile(r"V(\d+)\.(\d+)\.(\d+)")


def _version(path: str) -> tuple | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = _VER.search(out.stdout + out.stderr)
    return tuple(int(x) for x in m.groups()) if m else None


@functools.lru_cache(maxsize=None)
def find_tool(name: str) -> Tool:
    """The newest ``name`` (ptxas, nvdisasm) found; raises ToolchainError if none.

    Examples:
        >>> from jax_pyptx.toolchain.find import find_tool
        >>> find_tool("nvdisasm").name                   # needs nvdisasm
        'nvdisasm'
    """
    best = None
    for path in _candidates(name):
        v = _version(path)
        if v is not None and (best is None or v > best.version):
            best = Tool(name, path, v)
    if best is None:
        pkg = {"ptxas": "nvidia-cuda-nvcc", "nvdisasm": "nvidia-cuda-nvdisasm"}.get(name, name)
        raise ToolchainError(f"{name} not found on PATH, CUDA_HOME or in site-packages; "
                             f"install it with `pip install {pkg}`")
    return best


def toolchain_info() -> dict:
    """Which tools were picked: ``{name: (path, version text)}``; a tool that was not found
    has ``(None, the reason)``.

    Examples:
        >>> from jax_pyptx.toolchain.find import toolchain_info
        >>> info = toolchain_info()
        >>> sorted(info)
        ['nvdisasm', 'ptxas']
        >>> path, version = info["ptxas"]
        >>> path.endswith("ptxas"), version.count(".") >= 1      # needs ptxas
        (True, True)
    """
    info = {}
    for name in ("ptxas", "nvdisasm"):
        try:
            t = find_tool(name)
            info[name] = (t.path, t.version_text)
        except ToolchainError as e:
            info[name] = (None, str(e))
    return info
