"""Triton's interpreter (``TRITON_INTERPRET=1``) side of the peer comparison, run in its own
process so Triton never loads into ours:

    TRITON_INTERPRET=1 PYTHONPATH=<peers dir>:<repo> python -m benchmarks.interpret_peers.triton_peer \
        --reps 3 [--smoke] [--only gemm,attention] [--blocks JSON]

prints one JSON object per workload (``{"workload", "shape", "seconds", "max_err"}``), or
``{"missing": "torch" | "triton", "error": ...}`` when one cannot be imported. Imports only ``spec`` (NumPy),
torch and triton; never jax_pyptx.

Blocks (``spec.PEER_BLOCKS`` by default, the tilings a GPU kernel would use; ``--blocks``: a
JSON object overriding them): ``y = x*2+1`` 1024 elements per program; RMSNorm and softmax
one row per program (a ``[rows, row length]`` block); GEMM 128 x 128 output tiles stepping K
by 64 with ``tl.dot`` into an f32 accumulator; attention one program per head and 128 query
rows, looping over 128-key blocks with an online softmax (f32), P rounded to bf16 for
``P V``.

bf16 tiles are converted to f32 after ``tl.load`` and the products use ``input_precision=
"ieee"``: Triton's interpreter does no arithmetic on bf16 (it keeps the bits as uint16, and a
bf16 ``tl.dot`` multiplies the bit patterns; its debugging guide says to cast to float32).
Products of bf16 values are exact in f32, so the math is that of a bf16 ``tl.dot`` with f32
accumulation.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

if __package__ in (None, ""):          # run as a file
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    __package__ = "benchmarks.interpret_peers"

from . import spec


def _kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def axpb(X, Y, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(Y + i, tl.load(X + i, mask=m) * 2.0 + 1.0, mask=m)

    @triton.jit
    def rms_norm(X, W, Y, cols, eps, R: tl.constexpr, BLOCK: tl.constexpr):
        rows = tl.program_id(0) * R + tl.arange(0, R)
        c = tl.arange(0, BLOCK)
        m = c[None, :] < cols
        at = rows[:, None] * cols + c[None, :]
        x = tl.load(X + at, mask=m, other=0.0)
        r = tl.rsqrt(tl.sum(x * x, axis=1) / cols + eps)
        w = tl.load(W + c, mask=c < cols)
        tl.store(Y + at, x * r[:, None] * w[None, :], mask=m)

    @triton.jit
    def softmax(X, Y, cols, R: tl.constexpr, BLOCK: tl.constexpr):
        rows = tl.program_id(0) * R + tl.arange(0, R)
        c = tl.arange(0, BLOCK)
        m = c[None, :] < cols
        at = rows[:, None] * cols + c[None, :]
        x = tl.load(X + at, mask=m, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=1)[:, None])
        tl.store(Y + at, e / tl.sum(e, axis=1)[:, None], mask=m)

    @triton.jit
    def gemm(A, B, C, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(A + rm[:, None] * K + (k0 + rk)[None, :]).to(tl.float32)
            b = tl.load(B + (k0 + rk)[:, None] * N + rn[None, :]).to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision="ieee")
        tl.store(C + rm[:, None] * N + rn[None, :], acc)

    @triton.jit
    def attention(Q, Kt, V, O, S, L, scale, D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
        h = tl.program_id(1)
        rq = tl.program_id(0) * BQ + tl.arange(0, BQ)
        rd = tl.arange(0, D)
        q = tl.load(Q + h * S * D + rq[:, None] * D + rd[None, :]).to(tl.float32)
        m = tl.full((BQ,), -float("inf"), tl.float32)
        l = tl.zeros((BQ,), tl.float32)
        acc = tl.zeros((BQ, D), tl.float32)
        for j in range(0, L, BK):
            rk = j + tl.arange(0, BK)
            k = tl.load(Kt + h * L * D + rk[:, None] * D + rd[None, :]).to(tl.float32)
            v = tl.load(V + h * L * D + rk[:, None] * D + rd[None, :]).to(tl.float32)
            s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
            m_new = tl.maximum(m, tl.max(s, axis=1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m - m_new)
            l = l * alpha + tl.sum(p, axis=1)
            pb = p.to(tl.bfloat16).to(tl.float32)          # P rounded to bf16, as on the GPU
            acc = acc * alpha[:, None] + tl.dot(pb, v, input_precision="ieee")
            m = m_new
        tl.store(O + h * S * D + rq[:, None] * D + rd[None, :], (acc / l[:, None]).to(tl.bfloat16))

    return {"axpb": axpb, "rms_norm": rms_norm, "softmax": softmax, "gemm": gemm,
            "attention": attention}


def build(key: str, shape: dict, K=None, blocks: dict | None = None):
    """A no-argument launch of the workload, a function returning its output (NumPy), and
    the inputs (``blocks``: the peers' blocks, default ``spec.PEER_BLOCKS``)."""
    import torch

    K = K or _kernels()
    ins = spec.inputs(key, shape)
    bl = spec.blocks_for(key, shape, blocks)
    if key == "axpb":
        x = torch.from_numpy(ins[0])
        y = torch.empty_like(x)
        n, (b,) = x.numel(), bl
        run = lambda: K["axpb"][(n // b,)](x, y, n, BLOCK=b)
    elif key in ("rms_norm", "softmax"):
        M, cols, (r,) = shape["M"], shape["cols"], bl
        x = torch.from_numpy(ins[0])
        y = torch.empty_like(x)
        b = 1 << (cols - 1).bit_length()
        if key == "rms_norm":
            w = torch.from_numpy(ins[1])
            run = lambda: K["rms_norm"][(M // r,)](x, w, y, cols, 1e-6, R=r, BLOCK=b)
        else:
            run = lambda: K["softmax"][(M // r,)](x, y, cols, R=r, BLOCK=b)
    elif key == "gemm":
        M, N, Kd = shape["M"], shape["N"], shape["K"]
        bm, bn, bk = bl
        a, bb = (torch.from_numpy(t).to(torch.bfloat16) for t in ins)
        y = torch.empty((M, N), dtype=torch.float32)
        run = lambda: K["gemm"][(M // bm, N // bn)](a, bb, y, M, N, Kd, BM=bm, BN=bn, BK=bk)
    elif key == "attention":
        H, S, L, D = shape["H"], shape["S"], shape["L"], shape["D"]
        bq, bk = bl
        q, k, v = (torch.from_numpy(t).to(torch.bfloat16) for t in ins)
        y = torch.empty((H, S, D), dtype=torch.bfloat16)
        run = lambda: K["attention"][(S // bq, H)](q, k, v, y, S, L, 1.0 / math.sqrt(D),
                                                   D=D, BQ=bq, BK=bk)
    else:
        raise KeyError(f"unknown workload {key!r}")
    return run, lambda: y.float().numpy(), ins


def measure(key: str, shape: dict, reps: int, K=None, blocks: dict | None = None) -> dict:
    """Warm seconds (best of ``reps`` after the first, checked launch) and max |err|."""
    run, result, ins = build(key, shape, K, blocks)
    run()
    err = spec.check(key, result(), ins, "Triton interpreter")
    t = spec.best_of(run, reps, warmup=False)
    return {"workload": key, "shape": shape, "seconds": t, "max_err": err}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--only", default=",".join(spec.WORKLOADS))
    p.add_argument("--blocks", default=None, help="JSON: the peers' blocks (spec.PEER_BLOCKS)")
    a = p.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print(json.dumps({"missing": "torch", "error": f"Triton's interpreter needs torch, which "
                          f"{sys.executable} cannot import ({e}); install torch into this Python"}))
        return 0
    try:
        import triton
    except ImportError as e:
        print(json.dumps({"missing": "triton", "error": f"triton is not importable ({e}); "
                                                        f"--install-peers DIR installs it"}))
        return 0
    if os.environ.get("TRITON_INTERPRET") != "1":
        print(json.dumps({"error": "TRITON_INTERPRET=1 is not set"}))
        return 0
    torch.set_num_threads(1)
    K = _kernels()
    blocks = json.loads(a.blocks) if a.blocks else None
    for key in a.only.split(","):
        r = measure(key, spec.shape_of(key, a.smoke), a.reps, K, blocks)
        r["triton"] = triton.__version__
        print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
