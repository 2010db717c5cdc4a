"""Our side of the peer comparison: each workload of ``spec`` as a jax_pyptx kernel run by
``Kernel.interpret`` (sanitizer on and off), with its thread-instruction count
(``Kernel.interpret(..., stats=)``).

The row, GEMM and attention kernels are the library's (``examples.library``): built with the
workload's ``cols`` / ``head_dim`` as the library's cases do. ``y = x*2+1`` is the small
kernel below (one element per thread, 256 threads per CTA).
"""
from __future__ import annotations

import numpy as np

from . import spec

# (row label, workload, library entry or None for AXPB)
ROWS = (("y = x*2+1", "axpb", None),
        ("RMSNorm", "rms_norm", "ampere/rms_norm-f32"),
        ("softmax", "softmax", "ampere/softmax-f32"),
        ("GEMM, Ampere kernel", "gemm", "ampere/gemm-bf16"),
        ("GEMM, Hopper kernel", "gemm", "hopper/gemm-bf16"),
        ("GEMM, Blackwell kernel", "gemm", "blackwell/gemm-bf16"),
        ("attention", "attention", "hopper/attention-bf16"))

_AXPB = None


def axpb_kernel():
    """``Y = X * 2 + 1`` over ``N`` f32 elements, one per thread (``fma.rn.f32``)."""
    global _AXPB
    if _AXPB is None:
        from jax_pyptx import Tile, kernel, ptx, reg
        from jax_pyptx.types import f32, u32, u64

        @kernel(arch="sm_80", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),),
                block=(256, 1, 1), grid=lambda N: ((N + 255) // 256, 1, 1))
        def axpb(X, Y):
            i = reg.from_(ptx.special.ctaid.x(), u32) * 256 + ptx.special.tid.x()
            with ptx.if_(i < X.shape[0]):
                off = reg.cvt(i, u64) * 4
                x, y = reg.scalar(f32), reg.scalar(f32)
                ptx.inst.ld.global_.f32(x, ptx.addr(X.ptr() + off))
                ptx.inst.fma.rn.f32(y, x, 2.0, 1.0)
                ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), y)
            ptx.ret()

        _AXPB = axpb
    return _AXPB


def build(key: str, entry: str | None, shape: dict):
    """``(kernel, inputs)``: the built kernel and the workload's inputs in its dtypes."""
    import ml_dtypes

    ins = spec.inputs(key, shape)
    if entry is None:
        return axpb_kernel(), ins
    from examples.library import get

    e = get(entry)
    kw = dict(e.params)
    if key in ("rms_norm", "softmax"):
        kw["cols"] = shape["cols"]
    elif key == "attention":
        kw["head_dim"] = shape["D"]
        ins = [a.astype(ml_dtypes.bfloat16) for a in ins]
    else:
        ins = [a.astype(ml_dtypes.bfloat16) for a in ins]
    return e.builder(**kw), ins


def measure(label: str, key: str, entry: str | None, shape: dict, reps: int) -> dict:
    """Warm seconds with the sanitizer on and off (best of ``reps`` each, interleaved after
    two warm-up rounds: ``spec.best_of_each``), the thread instructions of one launch, and max
    |err| of the checked result."""
    k, ins = build(key, entry, shape)
    out = k.interpret(*ins)
    err = spec.check(key, out, [np.asarray(a, np.float32) for a in ins], f"ours ({label})")
    st: dict = {}
    k.interpret(*ins, stats=st)
    on, off = spec.best_of_each((lambda: k.interpret(*ins, sanitize=True),
                                 lambda: k.interpret(*ins, sanitize=False)), reps)
    return {"row": label, "workload": key, "kernel": entry or "benchmarks axpb",
            "shape": shape, "san_on_s": on, "san_off_s": off,
            "thread_instructions": int(st["thread_instructions"]),
            "instructions": int(st["instructions"]), "max_err": err}
