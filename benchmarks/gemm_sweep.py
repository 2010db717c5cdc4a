"""The Hopper GEMM's tile plans on a GPU: TFLOP/s of ``examples.hopper.gemm.build_gemm``, and
of the persistent grouped kernel with one group, at ``M = N = K = 8192`` (bf16 in, f32 or bf16
out) for each plan in ``PLANS``, next to
``jnp.dot`` (cuBLAS), with each plan's shared memory and ptxas's spills. A plan whose product
is off (``REL_ERROR``) is an error row, not a figure.

    python benchmarks/gemm_sweep.py [--size 8192] [--plans NAME ...] [--out f32,bf16]
    python benchmarks/gemm_sweep.py --dry-run [--size 1024]   # ptxas, CUDA lowering and the
                                                              # interpreter at 256^3, no GPU
    python benchmarks/gemm_sweep.py --once NAME [--size 8192] # one call, for ncu to profile

Timing is ``benchmarks/kernels.time_sets`` (one jitted call runs every input set; median over
the timed runs). ``--once`` builds, compiles and runs the plan ``NAME`` one time and exits,
so that ``ncu -k regex:gemm -c 1 python benchmarks/gemm_sweep.py --once NAME`` profiles
exactly our kernel (no cuBLAS kernel runs in that process).
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

class Plan:
    """A tile plan: ``build_gemm``'s (one CTA a tile), or, ``persistent``, the grouped GEMM's
    persistent kernel with one group (``build_grouped_gemm``: 132 CTAs walk the tiles; the
    ring and the epilogue's buffers carry on from tile to tile)."""

    def __init__(self, bn: int, stages: int, cluster: int = 1, persistent: bool = False,
                 group_m: int | None = 16):
        self.bn, self.stages, self.cluster, self.persistent = bn, stages, cluster, persistent
        self.group_m = group_m    # build_gemm's tile order (None: launch order)

    def build(self, out: str, ctas: int = 132):
        from jax_pyptx import types

        dt, odt = types.bf16, getattr(types, out)
        if self.persistent:
            from examples.hopper.grouped_gemm import build_grouped_gemm

            return build_grouped_gemm(dt, odt, bm=128, bn=self.bn, stages=self.stages,
                                      ctas=ctas, group_m=self.group_m)
        from examples.hopper.gemm import build_gemm

        return build_gemm(dt, odt, bm=128, bn=self.bn, stages=self.stages,
                          cluster=self.cluster, group_m=self.group_m)

    def _operands(self, a, b) -> tuple:
        """The kernel's arguments for ``a @ b``: the persistent kernel's are one group's."""
        import numpy as np

        if not self.persistent:
            return a, b
        return a, b[None], np.full((1,), a.shape[0], np.int32)

    def _c(self, out):
        return out[0] if self.persistent else out        # (the workspace of maps dropped)

    def call(self, k):
        """``(a, b) -> C`` of the built kernel ``k`` (JAX or NumPy arrays on the CPU)."""
        return lambda a, b: self._c(k(*self._operands(a, b)))

    def interpret(self, k, a, b):
        """The plan's ``C`` of ``a @ b`` on the CPU interpreter (sanitizer on)."""
        return self._c(k.interpret(*self._operands(a, b)))

    def shape(self, size: int) -> dict:
        if self.persistent:
            return {"T": size, "K": size, "G": 1, "N": size}
        return {"M": size, "N": size, "K": size}


# name -> plan; "default" is the library's hopper/gemm (tiles in groups of 16 M tiles:
# "default-launch-order" is the same plan with every M tile of an N tile after the other)
PLANS = {
    "default": Plan(bn=128, stages=4, cluster=2),
    "default-launch-order": Plan(bn=128, stages=4, cluster=2, group_m=None),
    "bn128-s4-c2-g8": Plan(bn=128, stages=4, cluster=2, group_m=8),
    "bn128-s4-c1": Plan(bn=128, stages=4),
    "bn128-s6-c2": Plan(bn=128, stages=6, cluster=2),
    "bn192-s4-c2": Plan(bn=192, stages=4, cluster=2),
    "bn256-s3-c1": Plan(bn=256, stages=3),
    "bn256-s3-c2": Plan(bn=256, stages=3, cluster=2),
    "bn256-s4-c1": Plan(bn=256, stages=4),
    "bn256-s4-c2": Plan(bn=256, stages=4, cluster=2),
    "persistent-bn128-s4": Plan(bn=128, stages=4, persistent=True),
    "persistent-bn256-s3": Plan(bn=256, stages=3, persistent=True),
    "persistent-bn128-s4-n-fastest": Plan(bn=128, stages=4, persistent=True, group_m=None),
}


def build(name: str, out: str, ctas: int = 132):
    if name not in PLANS:
        raise SystemExit(f"gemm_sweep: unknown plan {name!r}; the plans: {', '.join(PLANS)}")
    return PLANS[name].build(out, ctas)


def resources(name: str, k, size: int) -> str:
    """Shared memory of the plan and ptxas's spills for ``size``^3 (its register count is the
    launch bound's 168 for every plan: ``setmaxnreg`` moves them between warpgroups)."""
    r = k.resources(**PLANS[name].shape(size))
    return (f"{k.config.smem_bytes // 1024} KiB smem, "
            f"{r.spill_stores + r.spill_loads} spill bytes")


REL_ERROR = {"f32": 1e-3, "bf16": 1e-2}   # max |C - ref| / max |ref| a plan may show
CHECK_SIZE = 256                          # the dry run's interpreter check, M = N = K


def relative_error(c, ref) -> float:
    """``max |c - ref| / max |ref|`` in float64."""
    import numpy as np

    c, ref = np.asarray(c, np.float64), np.asarray(ref, np.float64)
    return float(np.abs(c - ref).max() / max(np.abs(ref).max(), 1e-30))


def interpreted_error(name: str, out: str) -> float:
    """The plan ``name`` run by the CPU interpreter (sanitizer on) at ``CHECK_SIZE``^3 against
    NumPy (a persistent plan on 4 CTAs): every plan the GPU times is first checked without
    one."""
    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((CHECK_SIZE, CHECK_SIZE)).astype(ml_dtypes.bfloat16)
            for _ in range(2))
    c = PLANS[name].interpret(build(name, out, ctas=4), a, b)
    return relative_error(c, np.asarray(a, np.float64) @ np.asarray(b, np.float64))


def inputs(size: int, sets: int):
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(jax.random.PRNGKey(0), 2 * sets)
    return [[jax.random.normal(keys[2 * i + j], (size, size), jnp.float32).astype(jnp.bfloat16)
             for j in range(2)] for i in range(sets)]


WIDTHS = (38, 8, 8, 10)        # the columns before the resources: every plan name fits


def _row(*cells) -> None:
    """One row of the table, printed at once (a step that runs out of time keeps the rows it
    printed)."""
    print("  ".join(str(c).ljust(w) for c, w in zip(cells, WIDTHS + (0,))).rstrip(), flush=True)


def sweep(plans, outs, size: int, dry: bool) -> int:
    import jax
    import jax.numpy as jnp

    from kernels import time_sets

    flops = 2 * size ** 3
    print(f"hopper GEMM, {size}^3 bf16 ({'dry run: no timing' if dry else jax.devices()[0]})",
          flush=True)
    _row("plan", "TFLOP/s", "us", "vs jnp.dot", "resources")
    sets = None if dry else inputs(size, 4)
    failed = 0
    for out in outs:
        odt = getattr(jnp, {"f32": "float32", "bf16": "bfloat16"}[out])
        dot = lambda a, b, odt=odt: jnp.dot(a, b, preferred_element_type=odt)
        base = None if dry else time_sets(dot, sets)["seconds"]
        if base is not None:
            _row(f"jnp.dot -> {out}", f"{flops / base / 1e12:.1f}", f"{base * 1e6:.0f}", "1.00", "")
        for name in plans:
            try:
                k = build(name, out)
                fn = PLANS[name].call(k)
                res = resources(name, k, size)
                if dry:
                    abstract = [jax.ShapeDtypeStruct((size, size), jnp.bfloat16)] * 2
                    jax.jit(fn).trace(*abstract).lower(lowering_platforms=("cuda",))
                    err = interpreted_error(name, out)
                    if err > REL_ERROR[out]:
                        raise ValueError(f"the interpreter's {CHECK_SIZE}^3 product is off by "
                                         f"{err:.2e} of its largest value")
                    _row(f"{name} -> {out}", "", "", "", f"{res}; lowered; interpreter {CHECK_SIZE}^3 ok")
                    continue
                a, b = sets[0]
                err = relative_error(jax.jit(fn)(a, b), dot(a, b))
                if err > REL_ERROR[out]:
                    raise ValueError(f"wrong product: off by {err:.2e} of its largest value")
                t = time_sets(fn, sets)["seconds"]
                _row(f"{name} -> {out}", f"{flops / t / 1e12:.1f}", f"{t * 1e6:.0f}", f"{base / t:.2f}", res)
            except Exception as e:      # one plan failing is a row, not a stop
                failed += 1
                _row(f"{name} -> {out}", "", "", "", f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:90]}")
    return 1 if failed else 0


def once(name: str, out: str, size: int) -> int:
    import jax

    fn = PLANS[name].call(build(name, out))
    a, b = inputs(size, 1)[0]
    jax.block_until_ready(jax.jit(fn)(a, b))
    print(f"gemm_sweep --once {name} -> {out}: ran {size}^3")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=None, help="M = N = K (8192; dry run 1024)")
    p.add_argument("--plans", nargs="+", default=list(PLANS), metavar="NAME")
    p.add_argument("--out", default="f32,bf16", help="output dtypes, from f32 and bf16")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--once", metavar="NAME")
    a = p.parse_args(argv)
    outs = a.out.split(",")
    for o in outs:
        if o not in ("f32", "bf16"):
            p.error(f"--out: {o!r} is not f32 or bf16")
    for n in a.plans + ([a.once] if a.once else []):
        if n not in PLANS:
            p.error(f"unknown plan {n!r}; the plans: {', '.join(PLANS)}")
    if a.dry_run:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    size = a.size or (1024 if a.dry_run else 8192)
    if a.once:
        return once(a.once, outs[0], size)
    return sweep(a.plans, outs, size, a.dry_run)


if __name__ == "__main__":
    raise SystemExit(main())
