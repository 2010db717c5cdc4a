"""The kernel commands of ``python -m jax_pyptx``: ``ptx``, ``sass``, ``resources``, ``run`` and
``timeline``, each on ``FILE.py:NAME``.

``NAME`` is a ``@kernel`` of the file, or a function of it that returns one (a builder such as
``build_softmax``; ``--build K=V`` gives its arguments). ``--arg K=V`` gives shape variables,
template parameters and (``run`` / ``timeline``) runtime scalars by name. A value is read as a
Python literal (``128``, ``1e-6``, ``(2, 1)``, ``True``), else as a PTX type name (``bf16``),
else as a string.

* ``ptx``: the traced PTX.
* ``sass``: the SASS (ptxas, then nvdisasm; a clear error where nvdisasm is not found).
* ``resources``: ptxas's resource line (registers, spills, stack, shared memory).
* ``run``: the interpreter (sanitizer on) on random inputs; with a reference in the file
  (``NAME_reference`` or ``reference``, or ``--reference FN``): a NumPy function of the inputs
  returning the output(s), compared within the output dtype's tolerance (exit status 1 on a
  mismatch).
* ``timeline``: the same run, writing a Chrome / Perfetto trace (``-o``, default
  ``NAME.timeline.json``).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import sys
import time
from typing import Any, Callable

from .errors import PtxError
from .kernel_def import Kernel
from .specs import Tile

# relative and absolute tolerance of ``run`` by output dtype (twice the unit roundoff of the
# low-precision types; examples/proof.py uses the same); other dtypes compare exactly
TOLERANCE = {"float64": (1e-12, 1e-12), "float32": (1e-5, 1e-6),
             "bfloat16": (2.0 ** -7, 1e-6), "float16": (2.0 ** -10, 1e-6)}


class CliError(Exception):
    """A usage error: printed as ``jax-pyptx <command>: <message>``, exit status 2."""


# ----------------------------------------------------------------------------- arguments
def parse_value(text: str) -> Any:
    """``--arg`` / ``--build`` values: a Python literal, else a PTX type name, else the text.

    Examples:
        >>> from jax_pyptx.cli import parse_value
        >>> parse_value("128"), parse_value("(2, 1)"), parse_value("bf16").name, parse_value("x")
        (128, (2, 1), 'bf16', 'x')
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    from .types import by_name, is_type_name

    return by_name(text) if is_type_name(text) else text


def parse_assignments(items: list[str] | None, flag: str) -> dict:
    out: dict = {}
    for item in items or ():
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier():
            raise CliError(f"{flag} {item!r}: expected NAME=VALUE (e.g. {flag} N=1024)")
        out[name] = parse_value(value)
    return out


def load_target(target: str, build: dict) -> tuple[Kernel, Any, str]:
    """``FILE.py:NAME`` -> (the kernel, the loaded module, NAME)."""
    file, colon, name = target.rpartition(":")
    if not colon or not file or not name.isidentifier():
        raise CliError(f"{target!r}: expected FILE.py:NAME (a @kernel, or a function returning "
                       f"one), e.g. examples/demo.py:saxpy")
    path = os.path.abspath(file)
    if not os.path.isfile(path):
        raise CliError(f"{file}: no such file")
    mod_name = "_jax_pyptx_cli_" + "".join(c if c.isalnum() else "_" for c in
                                           os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"{file}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    if os.path.dirname(path) not in sys.path:
        sys.path.insert(0, os.path.dirname(path))     # as `python FILE.py` would
    spec.loader.exec_module(module)
    kernels = sorted(n for n, v in vars(module).items() if isinstance(v, Kernel))
    obj = getattr(module, name, None)
    if obj is None:
        raise CliError(f"{file} has no {name!r}; its kernels: {', '.join(kernels) or 'none'}")
    if not isinstance(obj, Kernel):
        if not callable(obj):
            raise CliError(f"{file}:{name} is a {type(obj).__name__}, not a @kernel or a "
                           f"function returning one")
        obj = obj(**build)
        if not isinstance(obj, Kernel):
            raise CliError(f"{file}:{name}(...) returned a {type(obj).__name__}, not a Kernel")
    elif build:
        raise CliError(f"--build is for a function returning a kernel; {name} is a kernel "
                       f"(give its parameters with --arg)")
    return obj, module, name


def _setup(args) -> tuple[Kernel, Any, str, dict]:
    build = parse_assignments(args.build, "--build")
    kw = parse_assignments(args.arg, "--arg")
    k, module, name = load_target(args.target, build)
    return k, module, name, kw


# ----------------------------------------------------------------------------- commands
def _ptx(args) -> int:
    k, _, _, kw = _setup(args)
    sys.stdout.write(k.ptx(**kw))
    return 0


def _sass(args) -> int:
    k, _, _, kw = _setup(args)
    sys.stdout.write(k.sass(**kw))
    return 0


def _resources(args) -> int:
    from .toolchain import find_tool

    k, _, _, kw = _setup(args)
    rep = k.resources(**kw)
    shape = " ".join(f"{n}={v}" for n, v in kw.items())
    print(f"{k.name} {k.arch}{' ' + shape if shape else ''}: ptxas "
          f"{find_tool('ptxas').version_text}: {rep.line()}")
    return 0


def _inputs(k: Kernel, kw: dict, seed: int) -> tuple[list, dict]:
    """Random inputs at the shape variables of ``kw``; runtime scalars given by name."""
    from .perf import random_inputs

    missing = [s for s in k.shape_vars if s not in kw]
    if missing:
        raise CliError(f"kernel {k.name!r}: give every shape variable with --arg (missing: "
                       f"{', '.join(missing)}; e.g. --arg {missing[0]}=1024)")
    names = k.param_names[:len(k.in_specs)]
    scalars = {n: kw.pop(n) for n in list(kw) if n in names}
    inputs = random_inputs(k, {s: kw[s] for s in k.shape_vars}, seed=seed)
    for i, (n, s) in enumerate(zip(names, k.in_specs)):
        if not isinstance(s, Tile) and n in scalars:
            inputs[i] = s.np_dtype.type(scalars[n])
    return inputs, kw


def _reference(module, name: str, explicit: str | None) -> tuple[Callable | None, str]:
    if explicit is not None:
        fn = getattr(module, explicit, None)
        if not callable(fn):
            raise CliError(f"--reference {explicit}: the file has no function {explicit!r}")
        return fn, explicit
    for cand in (f"{name}_reference", "reference"):
        fn = getattr(module, cand, None)
        if callable(fn):
            return fn, cand
    return None, ""


def _describe(a) -> str:
    import numpy as np

    a = np.asarray(a)
    if a.size == 0:
        return f"{a.shape} {a.dtype}, empty"
    f = a.astype(np.float64)
    return (f"{a.shape} {a.dtype}, min {f.min():.4g}, max {f.max():.4g}, "
            f"mean {f.mean():.4g}")


def _compare(out, ref, rtol: float | None, atol: float | None) -> tuple[float, float, str]:
    """(max |err|, max |err| / allowed, the tolerance used)."""
    import numpy as np

    o = np.asarray(out).astype(np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if o.shape != r.shape:
        raise CliError(f"the reference returned shape {r.shape} for an output of shape "
                       f"{o.shape}")
    dr, da = TOLERANCE.get(np.asarray(out).dtype.name, (0.0, 0.0))
    rt, at = dr if rtol is None else rtol, da if atol is None else atol
    err = np.abs(o - r)
    err = np.where(np.isnan(err), np.inf, err)
    allowed = rt * np.abs(r) + at
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(err == 0, 0.0, err / allowed)
    return float(err.max(initial=0)), float(ratio.max(initial=0)), f"rtol {rt:g}, atol {at:g}"


def _execute(args, timeline: str | None) -> int:
    k, module, name, kw = _setup(args)
    ref_fn, ref_name = (None, "") if args.no_reference else _reference(module, name,
                                                                       args.reference)
    inputs, kw = _inputs(k, kw, args.seed)
    t0 = time.perf_counter()
    outs = k.interpret(*inputs, sanitize=not args.no_sanitize, timeline=timeline, **kw)
    dt = time.perf_counter() - t0
    outs = outs if isinstance(outs, tuple) else (outs,)
    shape = " ".join(f"{n}={v}" for n, v in kw.items())
    print(f"{k.name} {k.arch}{' ' + shape if shape else ''}: interpreter {dt:.2f} s, sanitizer "
          f"{'off' if args.no_sanitize else 'on'}")
    out_names = k.param_names[len(k.in_specs):]
    for n, o in zip(out_names, outs):
        print(f"  {n}: {_describe(o)}")
    if timeline is not None:
        print(f"  timeline: {timeline} (open it in ui.perfetto.dev or chrome://tracing)")
    if ref_fn is None:
        if not args.no_reference:
            print(f"  no reference: define {name}_reference(*inputs) or reference(*inputs) in "
                  f"the file, or pass --reference FN")
        return 0
    refs = ref_fn(*inputs)
    refs = tuple(refs) if isinstance(refs, (tuple, list)) else (refs,)
    if len(refs) != len(outs):
        raise CliError(f"reference {ref_name!r} returned {len(refs)} value(s) for "
                       f"{len(outs)} output(s) ({', '.join(out_names)})")
    ok = True
    for n, o, r in zip(out_names, outs, refs):
        if r is None:
            continue
        try:
            err, ratio, tol = _compare(o, r, args.rtol, args.atol)
        except CliError as e:
            raise CliError(f"reference {ref_name!r}, output {n}: {e}") from None
        good = ratio <= 1.0
        ok &= good
        print(f"  {n} vs {ref_name}: max |err| {err:.2e}, max |err| / allowed {ratio:.2f} "
              f"({tol}): {'OK' if good else 'MISMATCH'}")
    return 0 if ok else 1


def _run(args) -> int:
    return _execute(args, None)


def _timeline(args) -> int:
    path = args.output or f"{args.target.rpartition(':')[2]}.timeline.json"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CliError(f"-o {path}: the directory {parent} does not exist")
    return _execute(args, path)


# ----------------------------------------------------------------------------- registration
def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="FILE.py:NAME",
                   help="a @kernel of the file, or a function of it returning one")
    p.add_argument("--arg", action="append", metavar="K=V",
                   help="a shape variable, template parameter or runtime scalar (repeat)")
    p.add_argument("--build", action="append", metavar="K=V",
                   help="an argument of NAME when it is a function returning a kernel (repeat)")


def _run_args(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--reference", metavar="FN",
                   help="the file's NumPy reference (default: NAME_reference, else reference)")
    p.add_argument("--no-reference", action="store_true", help="do not compare")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: by output dtype)")
    p.add_argument("--atol", type=float, help="absolute tolerance (default: by output dtype)")
    p.add_argument("--seed", type=int, default=0, help="random inputs' seed (default 0)")
    p.add_argument("--no-sanitize", action="store_true", help="run without the sanitizer")


def _timeline_args(p: argparse.ArgumentParser) -> None:
    _run_args(p)
    p.add_argument("-o", "--output", metavar="PATH",
                   help="where to write the trace (default: NAME.timeline.json)")


def guarded(command: str, run: Callable[[Any], int]) -> Callable[[Any], int]:
    """``run`` with usage errors and ``PtxError``s printed on one line (exit status 2 / 1)."""
    def go(args) -> int:
        try:
            return run(args)
        except CliError as e:
            print(f"jax-pyptx {command}: {e}", file=sys.stderr)
            return 2
        except PtxError as e:
            print(f"jax-pyptx {command}: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
    return go


COMMANDS = {
    "ptx": ("print the PTX of FILE.py:NAME", _common, guarded("ptx", _ptx)),
    "sass": ("print the SASS (ptxas, then nvdisasm)", _common, guarded("sass", _sass)),
    "resources": ("print ptxas's resource line (registers, spills, stack, shared memory)",
                  _common, guarded("resources", _resources)),
    "run": ("interpret on random inputs; compare with the file's reference where it has one",
            _run_args, guarded("run", _run)),
    "timeline": ("interpret on random inputs and write a Chrome / Perfetto timeline",
                 _timeline_args, guarded("timeline", _timeline)),
}
