"""The Ampere kernels beyond the library's generic proofs (``test_kernel_library.py``): the row
plans, the GEMM's edge code and pipeline, builder errors, vmap and sharded jit, the scripts."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

from examples.ampere.gemm import build_gemm, reference as gemm_ref
from examples.ampere.layer_norm import build_layer_norm
from examples.ampere.rms_norm import build_rms_norm, reference as rms_ref
from examples.ampere.rows import plan_rows
from examples.ampere.softmax import build_softmax, reference as softmax_ref
from examples.ampere.swiglu import build_swiglu
from jax_pyptx import SpecializationError
from jax_pyptx.types import bf16, f16, f32

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BF = ml_dtypes.bfloat16
GEMM = build_gemm(bf16)


def _rand(shape, dt, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(dt)


@pytest.mark.parametrize("cols,dtype,want", [
    (64, f32, (4, 16, 1, 16)),            # (vec, threads per row, chunks per thread, rows)
    (64, bf16, (8, 8, 1, 32)),
    (1000, f32, (4, 32, 8, 8)),           # 250 chunks over 32 threads: the last round ragged
    (4096, bf16, (8, 128, 4, 2)),
    (8192, f32, (4, 256, 8, 1)),
    (8192, bf16, (8, 256, 4, 1)),
    (6, f32, (2, 4, 1, 64)),              # 8-byte chunks when 16 bytes do not divide a row
    (50, bf16, (2, 32, 1, 8)),
])
def test_row_plans(cols, dtype, want):
    p = plan_rows("t", cols, dtype)
    assert (p.vec, p.tpr, p.cpt, p.rows) == want
    assert p.vec * p.cpt <= 32 and p.nvec <= p.tpr * p.cpt < p.nvec + p.tpr


@pytest.mark.parametrize("call,msg", [
    (lambda: plan_rows("build_rms_norm", 0, f32),
     "build_rms_norm: cols must be a positive int, got 0"),
    (lambda: plan_rows("build_softmax", 7, bf16),
     "build_softmax: cols=7 must be even for bf16 (two elements per 32-bit register)"),
    (lambda: plan_rows("build_rms_norm", 64, f32, threads_per_row=48),
     "build_rms_norm: threads_per_row must be a power of two in 1..1024, got 48"),
    (lambda: plan_rows("build_layer_norm", 65536, f32),
     "build_layer_norm: cols=65536 (f32) does not fit one row in the registers of a "
     "1024-thread CTA (32768 values)"),
    (lambda: build_rms_norm(64, jax_pyptx_types().u32),
     "build_rms_norm: dtype must be f32, bf16 or f16, got u32"),
    (lambda: build_gemm(f32), "build_gemm: dtype must be bf16 or f16, got f32"),
    (lambda: build_gemm(bf16, bk=16), "build_gemm: bk must be 32 or 64, got 16"),
    (lambda: build_gemm(bf16, bm=96, warps_m=4),
     "build_gemm: the warp tile bm/warps_m x bn/warps_n = 96/4 x 128/4 must be multiples of 16"),
    (lambda: build_gemm(bf16, stages=1), "build_gemm: stages must be an int >= 2, got 1"),
    (lambda: build_swiglu(bf16, threads=100),
     "build_swiglu: threads must be a multiple of 32 in 32..1024, got 100"),
])
def test_builder_errors(call, msg):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value) == msg


def jax_pyptx_types():
    import jax_pyptx.types as t

    return t


def test_gemm_needs_k_and_n_multiples_of_8():
    a, b = _rand((16, 12), BF), _rand((12, 16), BF)
    with pytest.raises(SpecializationError) as e:
        GEMM.interpret(a, b)
    assert "gemm: K and N must be multiples of 8 (16-byte rows of bf16/f16), got K=12, N=16" \
        in str(e.value)


def test_gemm_edge_code_only_where_the_shape_needs_it():
    even = GEMM.ptx(M=256, N=256, K=256)
    ragged = GEMM.ptx(M=200, N=136, K=72)
    cp = r"cp\.async\.cg\.shared\.global\s+\[[^\]]+\], \[[^\]]+\], 16"
    # 2 A + 2 B chunks per stage load; loads in the prologue (2 stages) and the loop body
    assert len(re.findall(cp + ";", even)) == 12
    assert len(re.findall(cp + r", %r\d+;", ragged)) == 12          # src-size: zero fill
    assert "st.global.v2.f32" in even and not re.search(r"@%p\d+\s+st\.global", even)
    assert len(re.findall(r"@%p\d+\s+st\.global\.v2\.f32", ragged)) == 32
    # the pipeline: wait for all but stages-2 groups, then a barrier, every k tile
    assert re.search(r"cp\.async\.wait_group\s+1;\s+bar\.sync\s+0;", even)
    assert even.count("cp.async.commit_group;") == 3
    assert even.count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") == 32
    assert even.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == 4


def test_gemm_zero_fill_reads_nothing_past_the_edges():
    """cp.async src-size 0 past M/N/K: the interpreter's counters see only in-bounds bytes."""
    from jax_pyptx.perf import measure

    M, N, K = 200, 136, 72
    c = measure(GEMM, _rand((M, K), BF), _rand((K, N), BF))
    a, b, out = (c.buffers[i] for i in range(3))
    assert (a.unique_read, b.unique_read, out.unique_written) == (2 * M * K, 2 * K * N, 4 * M * N)
    # each CTA row (2 of them) reads all of B's 136 columns it covers, each CTA column all of
    # A's rows it covers: A once per CTA column, B once per CTA row
    assert a.load == 2 * M * K * 2 and b.load == 2 * K * N * 2
    assert c.flops == {"bf16": 2 * 256 * 256 * 96}      # the padded tiles: 2 x 2 CTAs, 3 k tiles


@pytest.mark.parametrize("dt", [bf16, f16])
def test_gemm_other_tiles(dt):
    """A 64x128x64 tile with 4 warps and 3 stages: 72 KiB of shared memory, past the static
    limit, so the buffers live in dynamic shared memory requested at launch."""
    k = build_gemm(dt, bm=64, bn=128, bk=64, warps_m=2, warps_n=2, stages=3)
    assert k.trace(M=96, N=200, K=136).dynamic_smem == 3 * (64 * 64 + 64 * 128) * 2
    npdt = BF if dt is bf16 else np.float16
    a, b = _rand((96, 136), npdt, 1), _rand((136, 200), npdt, 2)
    c = k.interpret(a, b)
    err = np.abs(c - gemm_ref(a, b))
    bound = 2 * 136 * 2.0 ** -24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert (err <= bound).all()
    rep = k.resources(M=4096, N=4096, K=4096)
    assert (rep.spill_stores, rep.stack_frame, rep.smem) == (0, 0, 0)


def test_vmap_puts_the_batch_on_the_grid():
    k = build_rms_norm(256, bf16)
    x = jnp.asarray(_rand((3, 5, 256), BF))
    w = jnp.asarray(_rand(256, BF, 1))
    out = jax.jit(jax.vmap(k, in_axes=(0, None)))(x, w)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(out[i]), k.interpret(np.asarray(x[i]),
                                                                      np.asarray(w)))
    a = jnp.asarray(_rand((2, 64, 32), BF))
    b = jnp.asarray(_rand((32, 128), BF, 3))
    c = jax.vmap(GEMM, in_axes=(0, None))(a, b)
    np.testing.assert_array_equal(np.asarray(c[1]), GEMM.interpret(np.asarray(a[1]),
                                                                   np.asarray(b)))


@pytest.mark.skipif(jax.device_count() < 8, reason="needs 8 host devices")
def test_sharded_jit_splits_independent_dims_without_all_gather():
    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Explicit,))
    k = build_softmax(128, f32)
    x = _rand((64, 128), np.float32) * 3
    xs = jax.device_put(jnp.asarray(x), NamedSharding(mesh, P("d")))
    hlo = jax.jit(k).lower(xs).compile().as_text()
    assert "all-gather" not in hlo and "f32[8,128]{1,0} custom-call(" in hlo
    out = jax.jit(k)(xs)
    np.testing.assert_allclose(np.asarray(out), softmax_ref(x), rtol=1e-5, atol=1e-6)
    # the GEMM's N is independent too: B's columns split, each device computes its C columns
    a, b = _rand((256, 64), BF), _rand((64, 512), BF, 1)
    bs = jax.device_put(jnp.asarray(b), NamedSharding(mesh, P(None, "d")))
    hlo = jax.jit(GEMM).lower(jnp.asarray(a), bs).compile().as_text()
    assert "all-gather" not in hlo and "f32[256,64]{1,0} custom-call(" in hlo
    c = jax.jit(GEMM)(jnp.asarray(a), bs)
    assert c.sharding.spec == P(None, "d")
    np.testing.assert_array_equal(np.asarray(c), GEMM.interpret(a, b))


def test_layer_norm_ragged_columns_do_not_bias_the_variance():
    """Chunks past the row load as zeros; their (0 - mean) must not enter the variance."""
    k = build_layer_norm(1000, f32)
    x = _rand((3, 1000), np.float32) * 2 + 5           # a large mean makes the bias visible
    w, b = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    y = k.interpret(x, w, b)
    assert np.abs(y - (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True)).max() < 2e-5


def test_softmax_ragged_columns_get_no_probability():
    k = build_softmax(1000, bf16)
    x = _rand((2, 1000), BF)
    y = k.interpret(x).astype(np.float64)
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=2e-2)
    np.testing.assert_allclose(y, softmax_ref(x), rtol=2 ** -7, atol=1e-6)


def test_rms_norm_jax_grad_is_not_defined():
    """The Ampere norms have no backward kernel: grad says so."""
    k = build_rms_norm(64, f32)
    x, w = jnp.ones((4, 64)), jnp.ones(64)
    with pytest.raises(NotImplementedError, match=r"kernel 'rms_norm' has no derivative: .* Reverse mode \(jax.grad, "
                                                  r"jax.vjp\) needs a backward kernel"):
        jax.grad(lambda x: k(x, w).sum())(x)
    np.testing.assert_allclose(np.asarray(k(x, w)), rms_ref(np.ones((4, 64)), np.ones(64)),
                               rtol=1e-5)


@pytest.mark.parametrize("name", ["gemm", "swiglu"])
def test_scripts_run(name):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "ampere", f"{name}.py")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"ptxas \d+\.\d+\.\d+: registers=\d+ spill_stores=0B spill_loads=0B "
                     r"stack=0B smem=\d+B", r.stdout)
    assert r.stdout.count(": ok") == 3 * (2 if name == "gemm" else 3)
    assert r.stdout.endswith("OK\n")
