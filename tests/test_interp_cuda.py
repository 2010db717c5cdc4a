"""PTX that nvcc compiles from the CUDA kernels in tests/cuda_interp/ runs in the interpreter and
matches NumPy. The .ptx files are committed (``nvcc -ptx -arch=sm_80``) so no nvcc is needed;
where nvcc is installed, one test checks they are up to date with their sources."""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx.interpret.state import fp
from jax_pyptx.interpret import launch

HERE = pathlib.Path(__file__).parent / "cuda_interp"
SOURCES = ["vector_add", "shfl_reduce", "transpose", "mma_gemm", "cp_async_pipeline", "misc", "wmma"]


def ptx(name):
    return (HERE / f"{name}.ptx").read_text()


def run(name, entry, args, **kw):
    stats = {}
    launch(ptx(name), entry, args, stats=stats, **kw)
    return stats


# ----------------------------------------------------------------------------- acceptance kernels
@pytest.mark.parametrize("n", [1000, 1024, 1])
def test_vector_add(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.full(n, -7.0, np.float32)
    grid = -(-n // 256)
    run("vector_add", "vector_add", [a, b, c, np.int32(n)], grid=grid, block=256)
    np.testing.assert_array_equal(c, a + b)


def test_shfl_reduction():
    rng = np.random.default_rng(0)
    n, B = 1000, 256
    G = -(-n // B)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(G, np.float32)
    flags = np.zeros(G, np.uint32)
    maxes = np.zeros(G * 8, np.float32)
    run("shfl_reduce", "shfl_reduce", [x, out, flags, maxes, np.int32(n)], grid=G, block=B)
    xp = np.zeros(G * B, np.float32)
    xp[:n] = x
    np.testing.assert_allclose(out, xp.reshape(G, B).sum(1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    expect_flags = [sum(1 << lane for lane in range(32) if xp[b * B + lane] > 0) for b in range(G)]
    assert flags.tolist() == expect_flags
    np.testing.assert_array_equal(maxes, xp.reshape(G * 8, 32).max(1))


@pytest.mark.parametrize("rows,cols", [(64, 64), (70, 45), (1, 33)])
def test_smem_transpose(rows, cols):
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    o = np.zeros((cols, rows), np.float32)
    run("transpose", "transpose", [a, o, np.int32(rows), np.int32(cols)],
        grid=(-(-cols // 32), -(-rows // 32)), block=(32, 8))
    np.testing.assert_array_equal(o, a.T)


@pytest.mark.parametrize("K", [32, 64])
def test_mma_gemm_tile(K):
    rng = np.random.default_rng(K)
    M = N = 128
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    C = np.zeros((M, N), np.float32)
    run("mma_gemm", "mma_gemm", [A, B, C, np.int32(K), np.int32(K), np.int32(N), np.int32(N)],
        grid=(1, 1), block=128)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4)


def test_mma_gemm_two_tiles_and_strides():
    """A 256 x 128 output over a 2 x 1 grid, with lda/ldb/ldc larger than the tile."""
    rng = np.random.default_rng(3)
    M, N, K = 256, 128, 32
    A = rng.standard_normal((M, K + 8)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N + 16)).astype(ml_dtypes.bfloat16)
    C = np.zeros((M, N + 4), np.float32)
    run("mma_gemm", "mma_gemm", [A, B, C, np.int32(K), np.int32(K + 8), np.int32(N + 16), np.int32(N + 4)],
        grid=(1, 2), block=128)
    ref = A[:, :K].astype(np.float64) @ B[:, :N].astype(np.float64)
    np.testing.assert_allclose(C[:, :N], ref, rtol=1e-5, atol=1e-4)
    assert (C[:, N:] == 0).all()


@pytest.mark.parametrize("n", [1000, 1024, 256])
def test_cp_async_pipeline(n):
    rng = np.random.default_rng(n)
    nt = -(-n // 256)
    x = rng.standard_normal(n).astype(np.float32)
    sc = rng.standard_normal(nt).astype(np.float32)
    out = np.zeros(2 * 256, np.float32)
    run("cp_async_pipeline", "cp_async_pipeline", [x, sc, out, np.int32(n), np.int32(nt)], grid=2, block=64)
    xp = np.zeros(nt * 256, np.float32)
    xp[:n] = x
    acc = np.zeros(256, np.float32)
    for t in range(nt):                         # same f32 operation order as the kernel
        acc = (acc + sc[t] * xp[t * 256:(t + 1) * 256]).astype(np.float32)
    np.testing.assert_allclose(out[:256], acc, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out[:256], out[256:])


# ----------------------------------------------------------------------------- misc.cu
def test_histogram_atomics():
    rng = np.random.default_rng(1)
    n = 1000
    x = rng.integers(0, 1000, n).astype(np.int32)
    hist = np.zeros(16, np.uint32)
    total = np.zeros(1, np.float32)
    mx = np.zeros(1, np.int32)
    run("misc", "histogram", [x, np.int32(n), hist, total, mx], grid=3, block=128)
    np.testing.assert_array_equal(hist, np.bincount(x & 15, minlength=16))
    assert total[0] == (x & 7).sum()
    assert mx[0] == x.max()


def test_local_memory_and_call():
    rng = np.random.default_rng(2)
    n = 300
    xf = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(0, 100, n).astype(np.int32)
    y = np.zeros(n, np.float32)
    run("misc", "local_and_call", [xf, idx, y, np.int32(n)], grid=2, block=256)
    ref = np.zeros(n, np.float32)
    for i in range(n):
        c = np.array([xf[(i + k) % n] * np.float32(k + 1) for k in range(8)], np.float32)
        r = np.float32(0)
        for j in range(idx[i] & 7, -1, -1):
            r = np.float32(np.float32(r * np.float32(0.5)) + c[j])
        ref[i] = r + c[idx[i] & 7]
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-6)


def test_printf(capsys):
    run("misc", "say_hello", [np.int32(2)], grid=2, block=4)
    out = capsys.readouterr().out.splitlines()
    assert out == ["hello from thread 0 of block 0: 0.000000", "hello from thread 1 of block 0: 0.500000",
                   "hello from thread 0 of block 1: 0.000000", "hello from thread 1 of block 1: 0.500000"]


def test_half_math():
    rng = np.random.default_rng(4)
    n = 100
    a = rng.standard_normal(2 * n).astype(np.float16)
    b = rng.standard_normal(2 * n).astype(np.float16)
    c = np.zeros(2 * n, np.float16)
    f = (rng.standard_normal(n) * 100).astype(np.float32)
    bf = np.zeros(n, ml_dtypes.bfloat16)
    h = np.zeros(n, np.float16)
    run("misc", "half_math", [a, b, c, f, bf, h, np.int32(n)], block=128)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    s = (a64 + b64).astype(np.float16).astype(np.float64)
    np.testing.assert_array_equal(c, fp.round_to(a64 * b64 + s, fp.F16, "rn").astype(np.float16))
    np.testing.assert_array_equal(bf, f.astype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(h, fp.round_to(f.astype(np.float64), fp.F16, "rz").astype(np.float16))


def test_int_math():
    rng = np.random.default_rng(5)
    n = 64
    ua = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    ub = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    ua[:4] = [0, 0xFFFFFFFF, 1, 0x80000000]
    out = np.zeros(10 * n, np.uint32)
    out64 = np.zeros(2 * n, np.uint64)
    run("misc", "int_math", [ua, ub, out, out64, np.int32(n)], block=64)
    o = out.reshape(n, 10)
    for i in range(n):
        x, y = int(ua[i]), int(ub[i]) | 1
        sx = x - (1 << 32) if x >> 31 else x
        sy = y - (1 << 32) if y >> 31 else y
        b8 = x.to_bytes(4, "little") + y.to_bytes(4, "little")
        perm = sum(b8[(0x5140 >> (4 * k)) & 7] << (8 * k) for k in range(4))
        exp = [bin(x).count("1"), 32 - x.bit_length(), int(f"{x:032b}"[::-1], 2), perm,
               ((((y << 32) | x) << (y & 31)) >> 32) & 0xFFFFFFFF, (x * y) >> 32, x // y, x % y,
               (sx >> (y & 31)) & 0xFFFFFFFF, (abs(sx - sy) + 7) & 0xFFFFFFFF]
        assert [int(v) for v in o[i]] == exp, i
        X = (x << 32) | y
        assert [int(v) for v in out64[2 * i:2 * i + 2]] == [(X * (X + 12345)) >> 64, X // (y | 0x10000)]


def test_double_math():
    rng = np.random.default_rng(6)
    n = 100
    d = rng.standard_normal(n) * 4
    od = np.zeros(4 * n)
    run("misc", "double_math", [d, od, np.int32(n)], block=128)
    od = od.reshape(n, 4)
    from fractions import Fraction
    exact_fma = np.array([float(Fraction(v) * Fraction(v) + 1) for v in d])
    np.testing.assert_array_equal(od[:, 0], exact_fma)
    np.testing.assert_array_equal(od[:, 1], np.sqrt(np.abs(d)))
    np.testing.assert_array_equal(od[:, 2], 1 / (d + 3))
    np.testing.assert_allclose(od[:, 3], np.exp(d), rtol=4e-16)


def test_fast_math_within_documented_error():
    rng = np.random.default_rng(7)
    n = 200
    fa = (rng.standard_normal(n) * 3).astype(np.float32)
    of = np.zeros(6 * n, np.float32)
    run("misc", "fast_math", [fa, of, np.int32(n)], block=256)
    of = of.reshape(n, 6).astype(np.float64)
    x = fa.astype(np.float64)
    np.testing.assert_allclose(of[:, 0], np.exp(x), rtol=2 ** -20)      # ex2.approx + mul rounding
    np.testing.assert_allclose(of[:, 1], np.sin(x), atol=2 ** -20.9)
    np.testing.assert_allclose(of[:, 2], np.log(np.abs(x) + 1), atol=2 ** -21)
    np.testing.assert_allclose(of[:, 3], 1 / np.sqrt(np.abs(x) + 1), rtol=2 ** -22.9)
    np.testing.assert_allclose(of[:, 4], x / 3, rtol=2 ** -22)
    np.testing.assert_allclose(of[:, 5], np.exp(x), rtol=2 ** -22)


def test_divergent_loop_collatz():
    rng = np.random.default_rng(8)
    st = rng.integers(1, 500, 200).astype(np.uint32)
    steps = np.zeros(200, np.uint32)
    run("misc", "collatz", [st, steps, np.int32(200)], grid=2, block=128)

    def cz(v):
        s = 0
        while v != 1:
            v = 3 * v + 1 if v & 1 else v >> 1
            s += 1
        return s
    assert steps.tolist() == [cz(int(v)) for v in st]


def test_warp_votes_match_redux():
    rng = np.random.default_rng(9)
    xv = rng.integers(-2, 10, 32).astype(np.int32)
    ov = np.zeros(6 * 32, np.uint32)
    run("misc", "warp_votes", [xv, ov], block=32)
    ov = ov.reshape(32, 6)
    assert (ov[:, 0] == int((xv > 0).all())).all()
    assert (ov[:, 1] == int((xv > 5).any())).all()
    for t in range(32):
        assert ov[t, 2] == sum(1 << lane for lane in range(32) if (xv[lane] & 3) == (xv[t] & 3))
    assert (ov[:, 3] == xv.astype(np.uint32).sum(dtype=np.uint32)).all()
    assert (ov[:, 4] == xv.astype(np.uint32).max()).all()
    assert (ov[:, 5] == 0xFFFFFFFF).all()


def test_dynamic_shared_memory():
    xs = np.arange(150, dtype=np.float32)
    ys = np.zeros_like(xs)
    run("misc", "dyn_smem_reverse", [xs, ys, np.int32(50)], grid=3, block=64, smem=200)
    np.testing.assert_array_equal(ys.reshape(3, 50), xs.reshape(3, 50)[:, ::-1])


# ----------------------------------------------------------------------------- committed PTX is current
def _body(text):
    return [ln for ln in text.splitlines() if not ln.startswith("//")]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("name", SOURCES)
def test_committed_ptx_matches_source(name, tmp_path):
    committed = ptx(name)
    m = re.search(r"Cuda compilation tools, release ([\d.]+), V([\d.]+)", committed)
    ver = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    if m is None or m.group(2) not in ver:
        pytest.skip("committed PTX comes from another nvcc version")
    out = tmp_path / f"{name}.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_80", str(HERE / f"{name}.cu"), "-o", str(out)], check=True,
                   capture_output=True)
    assert _body(out.read_text()) == _body(committed)
