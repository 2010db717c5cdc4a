"""The workloads of the peer comparison (issue 24's table), in NumPy only: names, shapes,
inputs, float64 references, tolerances, and the timing rule. Every side (ours, Pallas, and
the Triton subprocess, which must not import jax_pyptx) reads this module, so the three
compute the same math on inputs drawn the same way.

Inputs are float32 arrays; a bf16 workload's inputs are float32 values that bf16 holds
exactly (``to_bf16_values``), so each side converts them to its own bf16 type losslessly.
"""
from __future__ import annotations

import gc
import math
import time

import numpy as np

from .pinning import PINNED_ENV, pin_threads  # noqa: F401 (re-exported)

# key -> (label, full shape, smoke shape). Shape variables: n (elements), M / cols (rows and
# row length), M / N / K (GEMM), H / S / L / D (heads, query rows, key rows, head dim).
WORKLOADS = {
    "axpb": ("y = x*2+1, f32", {"n": 1 << 20}, {"n": 4096}),
    "rms_norm": ("RMSNorm f32", {"M": 4096, "cols": 1024}, {"M": 8, "cols": 64}),
    "softmax": ("softmax f32", {"M": 4096, "cols": 1024}, {"M": 8, "cols": 64}),
    "gemm": ("GEMM bf16->f32", {"M": 512, "N": 512, "K": 512}, {"M": 128, "N": 128, "K": 64}),
    "attention": ("attention fwd bf16", {"H": 2, "S": 256, "L": 256, "D": 64},
                  {"H": 1, "S": 128, "L": 128, "D": 64}),
}


# the peers' blocks per program (elements; rows; BM x BN x BK; queries x keys): by default the
# tilings their GPU kernels would use, the same for Triton and Pallas. Both interpreters'
# times depend strongly on them (per-program overhead): ``--peer-blocks`` overrides them.
PEER_BLOCKS = {"axpb": 1024, "rows": 1, "gemm": (128, 128, 64), "attention": (128, 128)}
_BLOCK_DIMS = {"axpb": ("n",), "rows": ("M",), "gemm": ("M", "N", "K"), "attention": ("S", "L")}


def parse_blocks(text: str) -> dict:
    """``PEER_BLOCKS`` updated by ``"rows=64,axpb=65536,gemm=128x128x64,attention=128x128"``."""
    out = dict(PEER_BLOCKS)
    for item in filter(None, (t.strip() for t in text.split(","))):
        name, _, val = item.partition("=")
        if name not in PEER_BLOCKS:
            raise ValueError(f"--peer-blocks: unknown block {name!r} in {item!r}; known: "
                             f"{', '.join(PEER_BLOCKS)}")
        want = len(_BLOCK_DIMS[name])
        try:
            nums = tuple(int(v) for v in val.split("x"))
        except ValueError:
            nums = ()
        if len(nums) != want or min(nums) < 1:
            form = "x".join(["N"] * want)
            raise ValueError(f"--peer-blocks: {name} takes {want} positive integer(s) as {form}, "
                             f"got {val!r}")
        out[name] = nums[0] if want == 1 else nums
    return out


def blocks_for(key: str, shape: dict, blocks: dict | None = None) -> tuple:
    """The workload's peer blocks at ``shape`` (each shrunk to its dimension); each must
    divide its dimension."""
    name = "rows" if key in ("rms_norm", "softmax") else key
    b = (blocks or PEER_BLOCKS)[name]
    b = b if isinstance(b, (tuple, list)) else (b,)
    dims = _BLOCK_DIMS[name]
    out = tuple(min(v, shape[d]) for v, d in zip(b, dims))
    for v, d in zip(out, dims):
        if shape[d] % v:
            raise ValueError(f"peer block {v} does not divide {d}={shape[d]} of {key}")
    return out


def shape_of(key: str, smoke: bool = False) -> dict:
    """The workload's shape (the smoke shape when ``smoke``)."""
    return dict(WORKLOADS[key][2 if smoke else 1])


def shape_text(shape: dict) -> str:
    """``M=512 N=512 K=512``."""
    return " ".join(f"{k}={v}" for k, v in shape.items())


def to_bf16_values(a) -> np.ndarray:
    """float32 values rounded to the nearest bf16 (ties to even), still float32."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    r = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return r.view(np.float32)


def inputs(key: str, shape: dict, seed: int = 0) -> list:
    """The workload's inputs (float32 arrays; bf16 values for the bf16 workloads)."""
    rng = np.random.default_rng(seed)
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)
    if key == "axpb":
        return [normal(shape["n"])]
    if key == "rms_norm":
        return [normal(shape["M"], shape["cols"]), normal(shape["cols"])]
    if key == "softmax":
        return [normal(shape["M"], shape["cols"])]
    if key == "gemm":
        return [to_bf16_values(normal(shape["M"], shape["K"])),
                to_bf16_values(normal(shape["K"], shape["N"]))]
    if key == "attention":
        H, S, L, D = shape["H"], shape["S"], shape["L"], shape["D"]
        return [to_bf16_values(normal(H, S, D)), to_bf16_values(normal(H, L, D)),
                to_bf16_values(normal(H, L, D))]
    raise KeyError(f"unknown workload {key!r}; known: {', '.join(WORKLOADS)}")


def reference(key: str, ins: list) -> np.ndarray:
    """The workload's result in float64."""
    x = [np.asarray(a, np.float64) for a in ins]
    if key == "axpb":
        return x[0] * 2.0 + 1.0
    if key == "rms_norm":
        return x[0] / np.sqrt(np.mean(x[0] * x[0], axis=-1, keepdims=True) + 1e-6) * x[1]
    if key == "softmax":
        e = np.exp(x[0] - x[0].max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if key == "gemm":
        return x[0] @ x[1]
    if key == "attention":
        q, k, v = x
        s = np.einsum("hsd,hld->hsl", q, k) / math.sqrt(q.shape[-1])
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        return np.einsum("hsl,hld->hsd", p, v)
    raise KeyError(f"unknown workload {key!r}")


# (rtol, atol) against the float64 reference: f32 row kernels use approximate rsqrt / ex2;
# the GEMM accumulates 512 products in f32; attention's output and probabilities are bf16
TOLERANCE = {"axpb": (1e-6, 1e-6), "rms_norm": (1e-4, 1e-5), "softmax": (1e-4, 1e-7),
             "gemm": (1e-4, 1e-3), "attention": (2e-2, 2e-2)}


def check(key: str, out, ins: list, who: str) -> float:
    """Assert ``out`` matches the reference (``TOLERANCE``); returns max |out - ref|."""
    ref = reference(key, ins)
    o = np.asarray(out, np.float64).reshape(ref.shape)
    rtol, atol = TOLERANCE[key]
    err = np.abs(o - ref)
    bad = ~(err <= atol + rtol * np.abs(ref))
    if bad.any():
        i = np.unravel_index(int(np.argmax(np.where(bad, err, -1.0))), ref.shape)
        raise AssertionError(f"{who} {key}: {int(bad.sum())} of {ref.size} elements differ from "
                             f"NumPy (worst at {i}: {o[i]!r} vs {ref[i]!r}, rtol {rtol}, "
                             f"atol {atol})")
    return float(err.max()) if err.size else 0.0


def best_of_each(fns, reps: int, warmups: int = 2) -> list:
    """Seconds: the best of ``reps`` calls of each of ``fns``, their calls interleaved (one of
    each per round) after ``warmups`` rounds. Interleaving keeps a slow patch of the machine,
    or the allocator's first runs of a process (page faults until it settles), from landing
    on one of them only: their ratio is what is compared. Each call is timed as every side's
    is (``timed``)."""
    for _ in range(warmups):
        for fn in fns:
            fn()
    best = [math.inf] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], timed(fn))
    return best


def best_of(fn, reps: int, warmup: bool = True) -> float:
    """Seconds: the best of ``reps`` calls of ``fn`` (``timed``), after one warm-up call unless
    ``warmup`` is False (the caller's checked call was the warm-up)."""
    if warmup:
        fn()
    best = math.inf
    for _ in range(reps):
        best = min(best, timed(fn))
    return best


def timed(fn) -> float:
    """Seconds of one call of ``fn`` with the garbage collector off for its duration, as
    ``timeit`` times (ours and both peers alike): a collection that an earlier call's garbage
    triggers does not land in it, and nothing runs just before it that would leave its
    caches cold (a full ``gc.collect()`` walks the whole heap)."""
    was = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        if was:
            gc.enable()
