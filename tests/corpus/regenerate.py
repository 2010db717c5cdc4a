"""Regenerate the PTX corpus from its sources.

    python tests/corpus/regenerate.py [--only cuda|triton|project] [--check]

* ``cuda/*.cu``: every ``// corpus: TAG: NVCC FLAGS`` line of a source gives one file
  ``cuda/<stem>.<TAG>.ptx`` made by ``nvcc -ptx FLAGS <stem>.cu`` (needs nvcc).
* ``triton/*.py``: each module's ``CONFIGS`` list of
  ``(name, jit_fn, signature, constexprs, capability, options)`` gives ``triton/<name>.ptx``
  compiled by Triton for that capability without a GPU (needs ``pip install triton``).
* ``project/*.py``: each module's ``KERNELS`` list of ``(name, kernel, template_kwargs)``
  gives ``project/<name>.ptx`` from ``kernel.ptx(**template_kwargs)`` (this project's DSL).

Absolute paths that the tools record in ``.file`` directives are rewritten to paths relative
to the repository (and ``<triton>/...`` for Triton's own sources), so the corpus does not
depend on the machine that made it. ``--check`` regenerates into a temporary directory and
reports files whose content changed instead of writing them.

The test suite never runs this script; it reads the committed ``.ptx`` files.
"""
from __future__ import annotations

import argparse
import importlib.util
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
    name = "corpus_" + os.path.splitext(os.path.basename(path))[0]
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


def cuda_jobs():
    for fn in sorted(os.listdir(os.path.join(HERE, "cuda"))):
        if not fn.endswith(".cu"):
            continue
        src = os.path.join(HERE, "cuda", fn)
        with open(src) as f:
            text = f.read()
        for tag, flags in _CORPUS_LINE.findall(text):
            yield src, tag, flags.split()


def gen_cuda(out_dir: str) -> list:
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    written = []
    for src, tag, flags in cuda_jobs():
        stem = os.path.splitext(os.path.basename(src))[0]
        out = os.path.join(out_dir, "cuda", f"{stem}.{tag}.ptx")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run([nvcc, "-ptx", *flags, src, "-o", out], check=True, cwd=os.path.dirname(src))
        with open(out) as f:
            text = _relativize(f.read())
        with open(out, "w") as f:
            f.write(text)
        written.append(out)
    return written


def gen_triton(out_dir: str) -> list:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    tdir = os.path.dirname(triton.__file__)
    written = []
    for fn in sorted(os.listdir(os.path.join(HERE, "triton"))):
        if not fn.endswith(".py"):
            continue
        mod = _load(os.path.join(HERE, "triton", fn))
        for name, jit_fn, sig, constexprs, cap, options in mod.CONFIGS:
            src = ASTSource(jit_fn, signature=sig, constexprs=constexprs)
            compiled = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
            out = os.path.join(out_dir, "triton", f"{name}.ptx")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w") as f:
                f.write(_relativize(compiled.asm["ptx"], {tdir: "<triton>"}))
            written.append(out)
    return written


def gen_project(out_dir: str) -> list:
    sys.path.insert(0, ROOT)
    written = []
    pdir = os.path.join(HERE, "project")
    for fn in sorted(os.listdir(pdir)):
        if not fn.endswith(".py") or fn.startswith("_"):
            continue
        mod = _load(os.path.join(pdir, fn))
        for name, k, kwargs in mod.KERNELS:
            out = os.path.join(out_dir, "project", f"{name}.ptx")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w") as f:
                f.write(k.ptx(**kwargs))
            written.append(out)
    return written


GENERATORS = {"cuda": gen_cuda, "triton": gen_triton, "project": gen_project}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(GENERATORS), action="append")
    ap.add_argument("--check", action="store_true", help="report changed files, write nothing")
    args = ap.parse_args(argv)
    kinds = args.only or list(GENERATORS)
    target = tempfile.mkdtemp() if args.check else HERE
    changed = 0
    for kind in kinds:
        for path in GENERATORS[kind](target):
            rel = os.path.relpath(path, target)
            if args.check:
                old = os.path.join(HERE, rel)
                same = os.path.exists(old) and open(old).read() == open(path).read()
                if not same:
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
