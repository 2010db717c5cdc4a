"""Interpreter speed: instructions per second (converged and divergent code) and the wall time
of every test kernel at its test shape; with ``--peers``, the comparison with Triton's
interpreter and Pallas ``interpret=True`` (issue 24's table).

    PYTHONPATH=. python3 benchmarks/interpret.py

"instr/s" counts dispatched instructions (one per group of threads at one PC: a converged
CTA or batch of CTAs is one dispatch); "warp-instr/s" counts what a GPU would issue (one per
warp per instruction, i.e. thread-instructions / 32). Wall times: "cold" is the first launch
in the process (parse + decode, and tracing for DSL kernels), "warm" the best of 5 launches.

Peers (``benchmarks/interpret_peers/``):

    python benchmarks/interpret.py --peers --peers-dir DIR [--json PATH] [--reps N]
    python benchmarks/interpret.py --peers --install-peers DIR      # pip install --target DIR triton
    python benchmarks/interpret.py --peers --smoke                   # tiny shapes, one rep

prints, for y = x*2+1 (1M f32), RMSNorm and softmax (4096 x 1024 f32), the bf16 -> f32 GEMM at
512^3 (the Ampere, Hopper and Blackwell library kernels) and attention forward (bf16, 2 heads,
256 queries and keys, head dim 64): our warm time with the sanitizer on and off, our
thread-instructions per second, Triton's interpreter (``TRITON_INTERPRET=1``, in a subprocess
with DIR on its path: Triton never loads into this process) and Pallas ``interpret=True``
(this Python's jax), each result checked against NumPy once, and the ratios ours (sanitizer
on) / Triton, ours / Pallas, ours on / off. Every measuring process runs with BLAS, OpenMP and
XLA pinned to one thread (``interpret_peers.pinning.PINNED_ENV``, set here before numpy loads).
Triton's interpreter needs torch, importable from this Python; the peers are never project
dependencies. A peer that cannot be imported reads "not installed" and the rest still prints.
``--json PATH`` writes every figure. ``--only axpb,gemm`` limits the workloads. Both peers
run the same blocks per program, by default the tilings their GPU kernels would use (1024
elements, one row, 128 x 128 x 64 GEMM tiles, 128 x 128 attention blocks); their interpreters'
times depend strongly on them (a program costs a fixed overhead, and Pallas copies the
output buffer per program), so ``--peer-blocks rows=64,axpb=65536`` shows the other side.
"""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

if __name__ == "__main__" and {"--peers", "--install-peers", "--smoke"} & {a.split("=")[0] for a in sys.argv}:
    from benchmarks.interpret_peers.pinning import pin_threads  # NumPy loads after the pinning

    pin_threads()

import time  # noqa: E402

import numpy as np  # noqa: E402

from jax_pyptx.interpret import launch  # noqa: E402

HDR = ".version 8.0\n.target sm_80\n.address_size 64\n"

CONVERGED = HDR + """
.visible .entry loop(.param .u64 y, .param .u32 iters)
{
    .reg .u32 %r<6>; .reg .f32 %f<4>; .reg .u64 %rd<3>; .reg .pred %p;
    ld.param.u32 %r2, [iters];
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    mov.f32 %f2, 0f3F800000;
    mov.u32 %r3, 0;
L:
    fma.rn.f32 %f2, %f2, 0f3F7FFFFF, %f1;
    mul.f32 %f3, %f2, 0f3F000000;
    add.f32 %f2, %f2, %f3;
    xor.b32 %r4, %r3, %r1;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p, %r3, %r2;
    @%p bra L;
    ld.param.u64 %rd1, [y];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.f32 [%rd1], %f2;
    ret;
}
"""

DIVERGENT = HDR + """
.visible .entry diverge(.param .u64 y, .param .u32 iters)
{
    .reg .u32 %r<8>; .reg .u64 %rd<3>; .reg .pred %p<3>;
    ld.param.u32 %r2, [iters];
    mov.u32 %r1, %tid.x;
    and.b32 %r5, %r1, 31;
    add.u32 %r2, %r2, %r5;            // each lane loops a different number of times
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
L:
    and.b32 %r6, %r3, 1;
    xor.b32 %r6, %r6, %r1;
    and.b32 %r6, %r6, 1;
    setp.eq.u32 %p1, %r6, 0;          // lanes alternate between two paths every iteration
    @%p1 bra A;
    add.u32 %r4, %r4, %r3;
    bra J;
A:
    xor.b32 %r4, %r4, %r3;
J:
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, %r2;
    @%p2 bra L;
    ld.param.u64 %rd1, [y];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r4;
    ret;
}
"""


# warp 0 spins on a flag; the other warps wait at bar.sync (SET: who sets the flag)
SPIN = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 flag, .param .u64 y)
{
    .reg .u32 %r<8>; .reg .u64 %rd<6>; .reg .pred %p<3>;
    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [y];
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra OTHERS;
SPIN:
    ld.volatile.global.u32 %r2, [%rd1];
    setp.eq.u32 %p2, %r2, 0;
    @%p2 bra SPIN;
    bra.uni DONE;
OTHERS:
    SET
DONE:
    bar.sync 0;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r1;
    ret;
}
"""
# the producer warps count to 2000 in registers, then set the flag
PRODUCE = """mov.u32 %r3, 0;
WORK:
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, 2000;
    @%p2 bra WORK;
    setp.eq.u32 %p2, %r1, 32;
    @%p2 st.volatile.global.u32 [%rd1], 1;"""

# a ring of CTAs in each cluster: st.shared::cluster into the right neighbour, cluster barriers
RING = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry ring(.param .u64 y)
{
    .reg .u32 %r<12>; .reg .u64 %rd<4>;
    .shared .align 4 .b32 buf[64];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, %cluster_nctarank;
    add.u32 %r4, %r2, 1;
    rem.u32 %r4, %r4, %r3;
    mov.u32 %r5, buf;
    shl.b32 %r6, %r1, 2;
    add.u32 %r5, %r5, %r6;
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    mapa.shared::cluster.u32 %r7, %r5, %r4;
    mad.lo.u32 %r8, %r2, 1000, %r1;
    st.shared::cluster.u32 [%r7], %r8;
    barrier.cluster.arrive.release.aligned;
    barrier.cluster.wait.acquire.aligned;
    ld.shared.u32 %r9, [%r5];
    barrier.cluster.arrive.aligned;
    barrier.cluster.wait.aligned;
    mov.u32 %r10, %ctaid.x;
    mad.lo.u32 %r10, %r10, 64, %r1;
    ld.param.u64 %rd1, [y];
    mul.wide.u32 %rd2, %r10, 4;
    add.u64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r9;
    ret;
}
"""


def _spin_forever(flag, y):
    from jax_pyptx.errors import DeadlockError
    try:
        launch(SPIN.replace("SET", ""), "k", [flag, y], block=128)
    except DeadlockError:
        return
    raise AssertionError("the spin-forever kernel was not reported")


def rate(ptx, entry, threads, ctas, iters, dtype):
    y = np.zeros(threads * ctas, dtype)
    launch(ptx, entry, [y, np.uint32(4)], grid=ctas, block=threads)       # warm the caches
    best = None
    for _ in range(3):
        st = {}
        t0 = time.perf_counter()
        launch(ptx, entry, [y, np.uint32(iters)], grid=ctas, block=threads, stats=st)
        dt = time.perf_counter() - t0
        if best is None or dt < best[0]:
            best = (dt, st)
    dt, st = best
    return st["instructions"] / dt, st["thread_instructions"] / 32 / dt, dt, st


def timed(fn, reps=5):
    t0 = time.perf_counter()
    fn()
    cold = time.perf_counter() - t0
    warm = min(_t(fn) for _ in range(reps))
    return cold, warm


def _t(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def kernels():
    """(name, shape, callable) for every test kernel at its test shape."""
    import ml_dtypes

    rng = np.random.default_rng(0)
    cu = lambda n: (ROOT / "tests" / "cuda_interp" / f"{n}.ptx").read_text()
    out = []

    n = 1000
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out.append(("cuda vector_add", "n=1000", lambda: launch(cu("vector_add"), "vector_add", [a, b, c, np.int32(n)],
                                                         grid=4, block=256)))
    x = rng.standard_normal(1000).astype(np.float32)
    o1, o2, o3 = np.zeros(4, np.float32), np.zeros(4, np.uint32), np.zeros(32, np.float32)
    out.append(("cuda shfl_reduce", "n=1000, 4x256", lambda: launch(cu("shfl_reduce"), "shfl_reduce",
                                                                   [x, o1, o2, o3, np.int32(1000)], grid=4, block=256)))
    m = rng.standard_normal((70, 45)).astype(np.float32)
    mt = np.zeros((45, 70), np.float32)
    out.append(("cuda transpose", "70x45", lambda: launch(cu("transpose"), "transpose", [m, mt, np.int32(70), np.int32(45)],
                                                         grid=(2, 3), block=(32, 8))))
    A = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((64, 128)).astype(ml_dtypes.bfloat16)
    C = np.zeros((128, 128), np.float32)
    out.append(("cuda mma_gemm tile", "128x128x64 bf16", lambda: launch(
        cu("mma_gemm"), "mma_gemm", [A, B, C, np.int32(64), np.int32(64), np.int32(128), np.int32(128)], block=128)))
    xs = rng.standard_normal(1000).astype(np.float32)
    sc = rng.standard_normal(4).astype(np.float32)
    po = np.zeros(512, np.float32)
    out.append(("cuda cp_async_pipeline", "n=1000, 2x64", lambda: launch(
        cu("cp_async_pipeline"), "cp_async_pipeline", [xs, sc, po, np.int32(1000), np.int32(4)], grid=2, block=64)))
    st = rng.integers(1, 500, 200).astype(np.uint32)
    so = np.zeros(200, np.uint32)
    out.append(("cuda collatz (divergent)", "200 lanes", lambda: launch(cu("misc"), "collatz", [st, so, np.int32(200)],
                                                                       grid=2, block=128)))
    hx = rng.integers(0, 1000, 1000).astype(np.int32)
    hh, ht, hm = np.zeros(16, np.uint32), np.zeros(1, np.float32), np.zeros(1, np.int32)
    out.append(("cuda histogram (atomics)", "n=1000", lambda: launch(cu("misc"), "histogram",
                                                                    [hx, np.int32(1000), hh, ht, hm], grid=3, block=128)))
    rms = (ROOT / "tests" / "cuda_interp" / "rmsnorm_hand.ptx").read_text()
    x4 = rng.standard_normal((4, 64)).astype(np.float32)
    w = rng.standard_normal(64).astype(np.float32)
    y4 = np.zeros_like(x4)
    out.append(("hand PTX rmsnorm", "4x64", lambda: launch(rms, "rmsnorm", [x4, w, y4, np.float32(1e-6)], grid=4, block=32)))

    from examples.demo import saxpy
    from examples.hopper.layer_norm import build_layer_norm
    from examples.hopper.rms_norm import build_rms_norm, build_rms_norm_bwd
    from examples.hopper.softmax import build_softmax
    from examples.hopper.swiglu import build_swiglu
    rmsk, bwd, smk, lnk, swk = (build_rms_norm(4, 64), build_rms_norm_bwd(4, 64), build_softmax(4, 64),
                                build_layer_norm(4, 64), build_swiglu())
    g = rng.standard_normal((16, 256)).astype(np.float32)
    out += [
        ("DSL rms_norm", "4x64", lambda: rmsk.interpret(x4, w)),
        ("DSL rms_norm_bwd", "4x64", lambda: bwd.interpret(x4, w, x4)),
        ("DSL softmax", "4x64", lambda: smk.interpret(x4)),
        ("DSL layer_norm", "4x64", lambda: lnk.interpret(x4, w, w)),
        ("DSL swiglu", "16x256", lambda: swk.interpret(g, g, np.float32(1.0))),
        ("DSL saxpy", "n=1024", lambda: saxpy.interpret(rng.standard_normal(1024).astype(np.float32),
                                                         rng.standard_normal(1024).astype(np.float32))),
    ]
    flag, fy = np.zeros(1, np.uint32), np.zeros(128, np.uint32)
    ry = np.zeros(8 * 64, np.uint32)
    out += [
        ("spin forever: reported", "1 spinner, 3 parked", lambda: _spin_forever(flag, fy)),
        ("spin: producer/consumer", "4 warps, 2000 iters", lambda: launch(
            SPIN.replace("SET", PRODUCE), "k", [np.zeros(1, np.uint32), fy], block=128)),
        ("cluster DSMEM ring", "2 x 4 CTAs x 64", lambda: launch(RING, "ring", [ry], grid=8, block=64, cluster=4)),
    ]
    return out


def mma_kernels():
    """(name, shape, callable, target seconds) of the Hopper / Blackwell targets of DESIGN.md."""
    import ml_dtypes

    from tests.mma_kernels import hopper_gemm, hopper_gemm_args, tcgen05_tile, tcgen05_tile_args

    rng = np.random.default_rng(0)
    out = []
    for name, (M, N, K, bk), target in (("TMA+wgmma 3-stage pipeline", (128, 128, 64, 16), 0.5),
                                        ("TMA+wgmma Hopper GEMM", (256, 256, 256, 64), 10.0)):
        A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
        Bt = rng.standard_normal((N, K)).astype(ml_dtypes.bfloat16)
        C = np.zeros((M, N), np.float32)
        ptx = hopper_gemm(bk, 3)
        args, kw = hopper_gemm_args(A, Bt, C, bk)
        out.append((name, f"{M}x{N}x{K} bf16", lambda ptx=ptx, args=args, kw=kw: launch(ptx, "hopper_gemm", args, **kw),
                    target))
    A = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((256, 64)).astype(ml_dtypes.bfloat16)
    C = np.zeros((128, 256), np.float32)
    ptx = tcgen05_tile(256, 64)
    args, kw = tcgen05_tile_args(A, Bt, C)
    out.append(("TMA+tcgen05 tile", "128x256x64 bf16", lambda: launch(ptx, "tcgen05_tile", args, **kw), 0.5))
    return out


def parse_args(argv=None):
    import argparse

    p = argparse.ArgumentParser(description="interpreter speed; --peers: against Triton's "
                                            "interpreter and Pallas interpret=True")
    p.add_argument("--peers", action="store_true", help="print the peer table (module docstring)")
    p.add_argument("--peers-dir", metavar="DIR", help="a directory holding triton (PYTHONPATH of "
                                                      "the Triton subprocess)")
    p.add_argument("--install-peers", metavar="DIR", help="pip install --target DIR triton (unless "
                                                          "there), then use it; implies --peers")
    p.add_argument("--no-triton", action="store_true", help="skip Triton's interpreter")
    p.add_argument("--json", metavar="PATH", help="write every figure of the peer table to PATH")
    p.add_argument("--reps", type=int, default=0, help="timed runs after the warm-up (default 3; "
                                                       "1 with --smoke)")
    p.add_argument("--smoke", action="store_true", help="the peer table at tiny shapes; implies "
                                                        "--peers")
    p.add_argument("--peer-blocks", metavar="SPEC", help="the peers' blocks per program, e.g. "
                                                       "rows=64,axpb=65536,gemm=128x128x64,"
                                                       "attention=128x128 (default: the GPU tilings)")
    p.add_argument("--only", metavar="KEYS", help="comma-separated workloads: axpb, rms_norm, "
                                                  "softmax, gemm, attention")
    a = p.parse_args(argv)
    if a.peers_dir and a.install_peers:
        p.error("give --peers-dir or --install-peers, not both")
    if a.reps < 0:
        p.error(f"--reps must be >= 1, got {a.reps}")
    a.peers = a.peers or a.smoke or bool(a.install_peers)
    return a


def main(argv=None):
    args = parse_args(argv)
    if args.peers:
        from benchmarks.interpret_peers import table

        return table.main(args)
    if args.json or args.peers_dir or args.only or args.no_triton or args.reps or args.peer_blocks:
        raise SystemExit("--json, --peers-dir, --only, --no-triton, --reps and --peer-blocks go "
                         "with --peers")
    print("interpreter throughput")
    print(f"{'code':<44}{'instr/s':>12}{'warp-instr/s':>15}{'wall':>10}")
    for name, ptx, entry, threads, ctas, iters, dt in [
        ("converged loop, 1 CTA x 256 threads", CONVERGED, "loop", 256, 1, 2000, np.float32),
        ("converged loop, 16 CTAs x 256 (batched)", CONVERGED, "loop", 256, 16, 500, np.float32),
        ("divergent loop, 1 CTA x 256 threads", DIVERGENT, "diverge", 256, 1, 200, np.uint32),
    ]:
        ips, wips, wall, st = rate(ptx, entry, threads, ctas, iters, dt)
        print(f"{name:<44}{ips:>12,.0f}{wips:>15,.0f}{wall * 1e3:>8.1f}ms")
    print()
    print("Hopper / Blackwell targets (sanitizer on)")
    print(f"{'kernel':<30}{'shape':<20}{'cold':>10}{'warm':>10}{'target':>10}{'margin':>9}")
    for name, shape, fn, target in mma_kernels():
        cold, warm = timed(fn)
        print(f"{name:<30}{shape:<20}{cold * 1e3:>8.1f}ms{warm * 1e3:>8.1f}ms{target * 1e3:>8.0f}ms"
              f"{target / warm:>8.1f}x")
    print()
    print("kernels at test shape (sanitizer on)")
    print(f"{'kernel':<28}{'shape':<20}{'cold':>10}{'warm':>10}")
    for name, shape, fn in kernels():
        cold, warm = timed(fn)
        print(f"{name:<28}{shape:<20}{cold * 1e3:>8.1f}ms{warm * 1e3:>8.1f}ms")


if __name__ == "__main__":
    raise SystemExit(main())
