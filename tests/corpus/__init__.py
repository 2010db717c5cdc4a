"""The PTX corpus: real PTX from nvcc (``cuda/``), Triton (``triton/``) and this project
(``project/``), each file beside the source that makes it (see ``regenerate.py``).

Helpers for the tests that run over it.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile

CORPUS_DIR = os.path.dirname(os.path.abspath(__file__))
KINDS = ("cuda", "triton", "project")


def corpus_files(kind: str | None = None) -> list:
    """Corpus .ptx paths relative to the corpus dir (``cuda/vector_add.sm80.ptx``), sorted."""
    out = []
    for k in KINDS if kind is None else (kind,):
        d = os.path.join(CORPUS_DIR, k)
        if os.path.isdir(d):
            out += [f"{k}/{f}" for f in sorted(os.listdir(d)) if f.endswith(".ptx")]
    return out


@functools.lru_cache(maxsize=None)
def read(rel: str) -> str:
    with open(os.path.join(CORPUS_DIR, rel)) as f:
        return f.read()


_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)", re.M)


def target_of(text: str) -> str:
    m = _TARGET.search(text)
    return m.group(1) if m else "sm_90a"


@functools.lru_cache(maxsize=None)
def ptxas():
    """The newest ptxas available (``jax_pyptx.toolchain``), or None."""
    try:
        from jax_pyptx.toolchain.find import find_tool

        return find_tool("ptxas")
    except Exception:
        return None


_NOISE = re.compile(r"^ptxas\s+\S+,\s*line\s+\d+;\s*|\bline \d+\b|/\S+\.ptx")


def ptxas_check(text: str, arch: str | None = None) -> tuple:
    """(accepted, normalised error lines) for ``ptxas -c -O0`` on ``text``.

    ``-c`` (relocatable) so ``-rdc`` corpus files with unresolved externs are judged on their
    own; ``-O0`` because acceptance, not code quality, is the question.
    """
    tool = ptxas()
    if tool is None:
        raise RuntimeError("no ptxas")
    arch = arch or target_of(text)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in.ptx")
        with open(src, "w") as f:
            f.write(text)
        r = subprocess.run([tool.path, "-c", "-O0", f"-arch={arch}", src, "-o",
                            os.path.join(d, "out.o")], capture_output=True, text=True,
                           timeout=300)
    errors = tuple(sorted({_NOISE.sub("", ln).strip() for ln in r.stderr.splitlines()
                           if "error" in ln or "fatal" in ln}))
    return r.returncode == 0, errors
