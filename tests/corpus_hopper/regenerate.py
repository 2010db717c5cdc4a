"""Regenerate the Hopper / Blackwell corpus (real compiler PTX) from its sources.

    python tests/corpus_hopper/regenerate.py [--only cuda|triton] [--check]

What it needs (the test suite needs none of it: it reads the committed files):

* ``--only triton``: ``pip install triton==3.9.0`` (no GPU: Triton compiles to PTX for a
  ``GPUTarget``). Each dict of ``triton/kernels.py``'s ``CONFIGS`` gives
  ``triton/<name>.ptx`` and ``triton/<name>.json``, the compiled kernel's metadata that a
  launch needs (warps, dynamic shared memory, global scratch size and alignment, and for each
  host tensor descriptor the swizzle, element type and box that Triton's launcher passes to
  ``cuTensorMapEncodeTiled``). ``cases.py`` is written from these and a test checks they agree.
* ``--only cuda``: nvcc (CUDA 13.0: ``nvcc -ptx``; ``cuda.h`` for ``CUtensorMap``). Every
  ``// corpus: TAG: FLAGS`` line of ``cuda/<stem>.cu`` gives ``cuda/<stem>.<TAG>.ptx``.
* ``versions.json`` records the Triton and nvcc versions that made the files.

Absolute paths in ``.file`` directives are made relative to the repository (``<triton>/...``
for Triton's own sources), so the output does not depend on the machine. ``--check`` compiles
into a temporary directory and lists the files whose content would change, writing nothing
(exit status 1 when any would).

Triton 3.9 writes ``.version 9.4`` for sm_90a / sm_100a (``.version 8.8`` for sm_80 /
sm_89): only a ptxas from CUDA >= 13.1 takes 9.4 (the ``nvidia-cuda-nvcc`` wheel's;
``jax_pyptx.toolchain`` picks the newest ptxas it finds).

Install Triton in a virtual environment of its own (it is no dependency of the project)::

    python3 -m venv /tmp/tritonenv && /tmp/tritonenv/bin/pip install triton==3.9.0 numpy
    /tmp/tritonenv/bin/python tests/corpus_hopper/regenerate.py --only triton

What Triton 3.9 does not compile with no GPU (``GPUTarget``), noted in ``triton/kernels.py``
beside the config that replaced it: ``warp_specialize=True`` on sm_90a with BM=128 and 4 warps
("descriptor block and tensor must have the same number of elements"). The DWARF compile unit
of each Triton file records the kernels' directory as ``.b8`` bytes of ``.debug_info`` (not a
``.file`` path, so not made relative): ``--check`` from a checkout at another path reports
those files as changed although their code is the same.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
_CORPUS_LINE = re.compile(r"^//\s*corpus:\s*([\w.-]+)\s*:(.*)$", re.M)


def _load(path: str):
    name = "corpus_hopper_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _relativize(text: str, extra: dict | None = None) -> str:
    def fix(m):
        path = m.group(2)
        for prefix, repl in (extra or {}).items():
            if path.startswith(prefix):
                path = repl + path[len(prefix):]
        if path.startswith(ROOT + os.sep):
            path = os.path.relpath(path, ROOT)
        return f'{m.group(1)}"{path}"'

    return re.sub(r'(\.file\s+\d+\s+)"([^"]*)"', fix, text)


def _write(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def _nvcc() -> str:
    return shutil.which("nvcc") or "/usr/local/bin/nvcc"


def gen_cuda(out_dir: str) -> list:
    written = []
    cdir = os.path.join(HERE, "cuda")
    for fn in sorted(os.listdir(cdir)):
        if not fn.endswith(".cu"):
            continue
        src = os.path.join(cdir, fn)
        with open(src) as f:
            jobs = _CORPUS_LINE.findall(f.read())
        for tag, flags in jobs:
            out = os.path.join(out_dir, "cuda", f"{fn[:-3]}.{tag}.ptx")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run([_nvcc(), "-ptx", *flags.split(), fn, "-o", out], check=True, cwd=cdir)
            with open(out) as f:
                text = _relativize(f.read())
            written.append(_write(out, text))
    return written


def _divisibility(cfg: dict) -> dict:
    names = list(cfg["signature"])
    want = cfg["divisible"]
    if want == "all":
        want = [n for n, t in cfg["signature"].items() if t.startswith("*") or t in ("i32", "i64")]
    return {(names.index(n),): [["tt.divisibility", 16]] for n in want}


def gen_triton(out_dir: str) -> list:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    tdir = os.path.dirname(triton.__file__)
    mod = _load(os.path.join(HERE, "triton", "kernels.py"))
    written = []
    for cfg in mod.CONFIGS:
        src = ASTSource(cfg["fn"], signature=cfg["signature"], constexprs=cfg["constexprs"],
                        attrs=_divisibility(cfg))
        compiled = triton.compile(src, target=GPUTarget("cuda", cfg["capability"], 32),
                                  options=cfg["options"])
        md = compiled.metadata
        meta = {
            "entry": md.name,
            "num_warps": md.num_warps,
            "num_ctas": md.num_ctas,
            "shared": md.shared,
            "global_scratch_size": md.global_scratch_size,
            "global_scratch_align": md.global_scratch_align,
            "profile_scratch_size": md.profile_scratch_size,
            "tensordesc_meta": [dict(d) for d in (md.tensordesc_meta or [])],
            "signature": cfg["signature"],
            "constexprs": cfg["constexprs"],
        }
        base = os.path.join(out_dir, "triton", cfg["name"])
        written.append(_write(base + ".ptx", _relativize(compiled.asm["ptx"], {tdir: "<triton>"})))
        written.append(_write(base + ".json", json.dumps(meta, indent=1) + "\n"))
    return written


def gen_versions(out_dir: str, kinds) -> list:
    path = os.path.join(HERE, "versions.json")
    old = json.load(open(path)) if os.path.exists(path) else {}
    if "triton" in kinds:
        import triton

        old["triton"] = triton.__version__
    if "cuda" in kinds:
        out = subprocess.run([_nvcc(), "--version"], capture_output=True, text=True).stdout
        old["nvcc"] = re.search(r"release [\d.]+, V([\d.]+)", out).group(1)
    return [_write(os.path.join(out_dir, "versions.json"), json.dumps(old, indent=1, sort_keys=True) + "\n")]


GENERATORS = {"cuda": gen_cuda, "triton": gen_triton}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(GENERATORS), action="append")
    ap.add_argument("--check", action="store_true", help="list changed files, write nothing")
    args = ap.parse_args(argv)
    kinds = args.only or list(GENERATORS)
    target = tempfile.mkdtemp() if args.check else HERE
    paths = [p for kind in kinds for p in GENERATORS[kind](target)] + gen_versions(target, kinds)
    changed = 0
    for path in paths:
        rel = os.path.relpath(path, target)
        if args.check:
            old = os.path.join(HERE, rel)
            if not (os.path.exists(old) and open(old).read() == open(path).read()):
                changed += 1
                print("changed:", rel)
        else:
            print("wrote", rel)
    if args.check:
        shutil.rmtree(target, ignore_errors=True)
        print(f"{changed} file(s) differ")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
