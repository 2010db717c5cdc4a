"""The Blackwell kernels of the library (``examples/blackwell``): what the generic library
proofs (``tests/test_kernel_library.py``: ptxas, SASS, interpreter cases, jit, lowering,
torch) do not say about their patterns. The CUDA lowering carries each GEMM's tensor maps and
cluster shape; the 2-SM GEMM reads B once per pair; a persistent CTA reuses both TMEM
accumulators; a ``.cta_group::2`` TMA completes on the peer CTA's mbarrier (and only with
``.cta_group::2``); pipeline bugs are caught by the interpreter; the norms are the Ampere row
kernels' code; the suite's data-path layouts are the ISA's; vmap puts a batch on the grid;
bad builder arguments and shapes are refused."""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from examples import proof
from examples.blackwell import (
    gemm, gemm_2sm, grouped_gemm, persistent_gemm, rms_norm, sm100, softmax, tcgen05_suite,
)
from examples.library import Case, get
from jax_pyptx.types import bf16, f16, f32

BF = ml_dtypes.bfloat16


def _lowered_attrs(k, *shapes_dtypes):
    import jax

    specs = [jax.ShapeDtypeStruct(s, d) for s, d in shapes_dtypes]
    text = jax.jit(k).trace(*specs).lower(lowering_platforms=("cuda",)).as_text()
    m = re.search(r"stablehlo\.custom_call @jax_pyptx_launch\((.*?)\) \{(.*?)\} : (.*)", text)
    assert m, text[:2000]
    attrs = {}
    for name, body, n in re.findall(r"\b(\w+) = dense<(\[[^\]]*\]|-?\d+)> : tensor<(\d+)xi64>",
                                    m.group(2)):
        vals = [int(v) for v in body.strip("[]").split(",")]
        attrs[name] = vals * int(n) if len(vals) == 1 else vals
    for name, v in re.findall(r"\b(\w+) = (-?\d+) : i64", m.group(2)):
        attrs[name] = int(v)
    return attrs, m.group(3)


# ----------------------------------------------------------------------------- lowering
def test_gemm_2sm_lowering_carries_tensor_maps_and_the_pair_cluster():
    k = gemm_2sm.build_gemm_2sm(bf16, bf16)
    attrs, sig = _lowered_attrs(k, ((512, 256), BF), ((256, 384), BF))
    t = k.trace(M=512, N=384, K=256)
    assert attrs["cluster"] == [2, 1, 1] and attrs["grid"] == [4, 2, 1]
    assert attrs["block"] == [192, 1, 1]
    # 4 stages of (A 16 KiB + half of B 16 KiB), 2 x 4 x 4 KiB staging, 9 barriers, the slot
    assert attrs["smem_bytes"] == t.dynamic_smem == 4 * 32768 + 32768 + 9 * 8 + 8
    assert attrs["tma_operand"] == [0, 1, 2] and attrs["tma_rank"] == [2, 2, 2]
    assert attrs["tma_dtype"] == [9, 9, 9]                # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    assert attrs["tma_swizzle"] == [3, 3, 3]              # CU_TENSOR_MAP_SWIZZLE_128B
    # innermost first: A [M, K] box 128 x 64; B [K, N] box 64 x 64; C box 32 rows x 64 bf16
    assert attrs["tma_global_dims"] == [256, 512, 384, 256, 384, 512]
    assert attrs["tma_box"] == [64, 128, 64, 64, 64, 32]
    assert attrs["tma_global_strides"] == [512, 768, 768]
    assert attrs["tma_mode"] == [0, 0, 0] and attrs["workspace_bytes"] == 3 * 128
    assert sig.endswith("-> (tensor<512x384xbf16>, tensor<384xui8>)")
    text = k.ptx(M=512, N=384, K=256)
    assert ".explicitcluster\n.reqnctapercluster 2, 1, 1\n" in text


def test_persistent_and_grouped_lowerings():
    k = persistent_gemm.build_persistent_gemm(bf16, f32, ctas=148)
    attrs, _ = _lowered_attrs(k, ((512, 256), BF), ((256, 384), BF))
    assert attrs["grid"] == [8, 1, 1]                     # 8 tiles < 148 SMs
    assert attrs["cluster"] == [1, 1, 1] and attrs["tma_dtype"] == [9, 9, 7]
    assert attrs["smem_bytes"] == 4 * 49152 + 32768 + 12 * 8 + 16 <= sm100.MAX_SMEM
    assert k.trace(M=8192, N=8192, K=64).grid == (148, 1, 1)

    g = grouped_gemm.build_grouped_gemm(bf16, f32, ctas=4)
    attrs, sig = _lowered_attrs(g, ((512, 128), BF), ((4, 128, 256), BF), ((4,), np.int32))
    assert attrs["grid"] == [4, 1, 1] and attrs["tma_operand"] == [0, 1]
    assert attrs["tma_rank"] == [2, 3]                    # A; B as [G, K, N]
    assert attrs["tma_box"] == [64, 128, 64, 64, 1]
    assert attrs["tma_global_dims"] == [128, 512, 256, 128, 4]
    assert attrs["tma_global_strides"] == [256, 512, 65536]
    assert sig.startswith("(tensor<512x128xbf16>, tensor<4x128x256xbf16>, tensor<4xi32>)")


# ----------------------------------------------------------------------------- traffic
def test_the_pair_reads_b_once_per_256_rows():
    """The 2-SM GEMM splits B's columns over the pair: B's requested bytes equal its size;
    the 1-SM GEMM's two M tiles read it twice. A is read once either way (one N tile)."""
    from jax_pyptx.perf import measure

    shape = {"M": 256, "N": 256, "K": 128}
    for e, k, b_reads in ((get("blackwell/gemm_2sm-bf16"), None, 1),
                          (get("blackwell/gemm-bf16"), None, 2)):
        k = e.kernel()
        a, b = proof.make_inputs(e, k, shape)
        c = measure(k, a, b)
        by_name = {bc.name: bc for bc in c.buffers.values()}
        assert by_name["B"].load == b_reads * b.nbytes
        assert by_name["A"].load == a.nbytes
        assert by_name["C"].store == by_name["C"].unique_written == 256 * 256 * 4
        assert c.flops == {"bf16": 2 * 256 * 256 * 128}     # tcgen05.mma: 2 M N K


def test_one_persistent_cta_walks_every_tile_through_both_accumulators():
    e = get("blackwell/persistent_gemm-bf16")
    r = proof.run_case(e, Case({"M": 512, "N": 256, "K": 64}, {"ctas": 1, "bn": 64}))
    assert r.ok and r.max_err < 1e-4                     # 16 tiles, 8 uses of each buffer


def test_grouped_gemm_table_edge_cases():
    """Empty groups, a group larger than the rows left (clamped at T), and the zero tail."""
    k = grouped_gemm.build_grouped_gemm(bf16, f32, ctas=2, bn=64, stages=2)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((160, 64)).astype(BF)
    b = rng.standard_normal((3, 64, 64)).astype(BF)
    for sizes in ([0, 100, 0], [40, 300, 5], [0, 0, 0]):
        s = np.array(sizes, np.int32)
        c = k.interpret(a, b, s)
        np.testing.assert_allclose(c, grouped_gemm.reference(a, b, s), rtol=1e-5, atol=1e-4)
    assert not c.any()                                   # no group: all rows are the tail


# ----------------------------------------------------------------------------- interpreter
def _peer_tma_kernel(cta_group):
    from jax_pyptx import Layout, Tile, kernel, ptx, reg, smem
    from jax_pyptx.types import b32, u32, u64

    @kernel(arch="sm_100a", in_specs=(Tile(64, 64, bf16, Layout.TMA_128B, tma_box=(64, 64)),),
            out_specs=(Tile(64, 64, bf16),), block=(32, 1, 1), grid=(2, 1, 1),
            cluster=(2, 1, 1))
    def peer_tma(X, Y):
        """Rank 1 loads X into its shared memory; the copy completes on rank 0's mbarrier;
        rank 0 waits for it, a cluster barrier passes that on, and rank 1 copies its tile to
        Y."""
        buf = smem.alloc(bf16, (64, 64), align=1024, name="buf")
        bar = smem.mbarrier(1, name="bar")
        tid = reg.from_(ptx.special.tid.x(), u32)
        rank = reg.from_(ptx.cluster.ctarank(), u32)
        desc = X.tma_desc()
        with ptx.if_(tid == 0):
            ptx.mbarrier.init(bar[0], 1)
            ptx.fence.mbarrier_init()
        ptx.cluster.sync(aligned=True)
        with ptx.if_((rank == 0) & (tid == 0)):
            ptx.mbarrier.arrive_expect_tx(bar[0], 64 * 64 * 2)
        with ptx.if_((rank == 1) & (tid == 0)):
            leader = ptx.cluster.mapa(bar.ptr(), 0)
            ptx.cp.async_.bulk.tensor_2d(dst=ptx.addr(buf.ptr()), src=desc, coord=(0, 0),
                                         mbar=ptx.addr(leader), cta_group=cta_group)
        with ptx.if_(rank == 0):
            ptx.mbarrier.wait(bar[0], 0)
        ptx.cluster.arrive(release=True, aligned=True)
        ptx.cluster.wait(acquire=True, aligned=True)
        with ptx.if_(rank == 1):
            src, out = buf.ptr(), Y.ptr()
            for i in range(64 * 64 * 2 // 32 // 16):       # 16 bytes per thread per step
                off = (tid << 4) + i * 512
                v = reg.array(b32, 4)
                ptx.inst.ld.shared.v4.b32(list(v), ptx.addr(src + off))
                ptx.inst.st.global_.v4.b32(ptx.addr(out + reg.cvt(off, u64)), list(v))
        ptx.ret()
    return peer_tma


def test_cta_group_2_tma_completes_on_the_peer_mbarrier():
    from jax_pyptx.interpret.state.tensormap import tensor_map  # noqa: F401  (maps are built for us)

    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64).astype(BF)
    y = _peer_tma_kernel(2).interpret(x)
    # rank 1's buffer holds the 128B-swizzled box: chunk c of row r at chunk c ^ (r % 8)
    rows = np.arange(64)[:, None]
    chunk = (np.arange(64)[None, :] // 8) ^ (rows % 8)
    want = x[rows, chunk * 8 + np.arange(64)[None, :] % 8]
    np.testing.assert_array_equal(y.view(np.uint16), want.view(np.uint16))


def test_a_tma_naming_another_ctas_mbarrier_needs_cta_group_2():
    from jax_pyptx.errors import InterpreterError

    x = np.zeros((64, 64), BF)
    with pytest.raises(InterpreterError) as e:
        _peer_tma_kernel(None).interpret(x)
    assert ("the mbarrier of a cp.async.bulk.tensor load must be in the shared memory of the "
            "destination's CTA (.cta_group::2 also allows the peer CTA of the pair); the "
            "destination is in cluster rank 1, the mbarrier in rank 0") in str(e.value)


def test_a_miscounted_stage_deadlocks_in_the_interpreter(monkeypatch):
    """A producer that arms ``full`` with twice the stage's bytes: the MMA warp waits for
    bytes that never come, and the interpreter names the barrier and the last copy."""
    from jax_pyptx.errors import DeadlockError

    real = sm100.Producer.__init__

    def doubled(self, cfg, *a, **kw):
        real(self, cfg, *a, **kw)
        self.expect_bytes = 2 * cfg.stage_bytes
    monkeypatch.setattr(sm100.Producer, "__init__", doubled)
    e = get("blackwell/gemm-bf16")
    with pytest.raises(DeadlockError) as err:
        proof.run_case(e, Case({"M": 128, "N": 128, "K": 64}, {"bn": 128, "stages": 3}))
    msg = str(err.value)
    assert msg.startswith("deadlock: every warp is parked and none can make progress")
    assert "32768 bytes expected by expect_tx never completed" in msg
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" \
        in msg


# ----------------------------------------------------------------------------- norms, suite
def test_the_norms_are_the_ampere_row_kernels_for_sm_100a():
    from examples.ampere import rms_norm as ampere_rms, softmax as ampere_softmax

    for bw, am in ((rms_norm.build_rms_norm(1000, bf16), ampere_rms.build_rms_norm(1000, bf16)),
                   (softmax.build_softmax(64, f16), ampere_softmax.build_softmax(64, f16))):
        assert bw.arch == "sm_100a" and am.arch == "sm_80"
        bw_text, am_text = bw.ptx(M=37), am.ptx(M=37)
        body = slice(bw_text.index(".visible"), None)
        assert bw_text[body] == am_text[am_text.index(".visible"):]
        assert ".target sm_100a" in bw_text and ".target sm_80" in am_text


def test_suite_layouts_are_the_isas():
    """A few cells of the ``tcgen05.ld`` data-path figures, and the layout is a bijection
    onto a warp's 32 lanes x 32 columns for every shape."""
    lane, col = tcgen05_suite.layout("16x256b", 4)
    assert (lane[5, 2], col[5, 2]) == (1 + 8, 2)           # g = 1, t = 1, r = 2: row g+8
    assert (lane[5, 7], col[5, 7]) == (1 + 8, 8 + 3)       # repetition 1, r = 3
    lane, col = tcgen05_suite.layout("16x128b", 8)
    assert (lane[6, 1], col[6, 1]) == (1 + 8, 2)
    lane, col = tcgen05_suite.layout("16x64b", 16)
    assert (lane[3, 0], col[3, 0]) == (8, 1)
    for shape in tcgen05_suite.SHAPES:
        rows, cols = tcgen05_suite._gather(shape)
        cells = set(zip(rows.ravel().tolist(), cols.ravel().tolist()))
        assert len(cells) == 128 * 32


# ----------------------------------------------------------------------------- runtime
def test_gemm_under_vmap_puts_the_batch_on_the_grid():
    import jax
    import jax.numpy as jnp

    k = gemm.build_gemm(bf16, f32, bn=128, stages=2)
    rng = np.random.default_rng(5)
    a = jnp.asarray(rng.standard_normal((2, 128, 64)), jnp.bfloat16)
    b = jnp.asarray(rng.standard_normal((2, 64, 128)), jnp.bfloat16)
    af, bf = np.asarray(a, np.float64), np.asarray(b, np.float64)
    c = jax.jit(jax.vmap(k))(a, b)
    np.testing.assert_allclose(np.asarray(c), np.einsum("bmk,bkn->bmn", af, bf), atol=1e-4)
    c = jax.jit(jax.vmap(k, in_axes=(0, None)))(a, b[0])
    np.testing.assert_allclose(np.asarray(c), np.einsum("bmk,kn->bmn", af, bf[0]), atol=1e-4)


def test_builders_refuse_bad_parameters():
    cases = [
        (lambda: gemm.build_gemm(f32), "build_gemm: dtype must be bf16 or f16, got f32"),
        (lambda: gemm.build_gemm(bf16, "f8"),
         "build_gemm: out_dtype must be f32, bf16 or f16, got 'f8'"),
        (lambda: gemm.build_gemm(bf16, bn=96),
         "build_gemm: bn must be one of 64, 128, 192, 256 (whole 64-column B boxes, the "
         "MMA's N <= 256), got 96"),
        (lambda: gemm.build_gemm(bf16, stages=1), "build_gemm: stages must be an int >= 2, got 1"),
        (lambda: gemm.build_gemm(bf16, stages=5),
         "build_gemm: stages=5 of 49152 bytes (bn=256) and 32768 bytes of epilogue staging need "
         "278620 bytes of shared memory; a CTA has at most 232448; use fewer stages or a "
         "smaller bn"),
        (lambda: gemm_2sm.build_gemm_2sm(bf16, bn=64),
         "build_gemm_2sm: bn must be one of 128, 256 (whole 64-column B boxes per CTA of the "
         "pair, the MMA's N <= 256), got 64"),
        (lambda: persistent_gemm.build_persistent_gemm(bf16, ctas=0),
         "build_persistent_gemm: ctas must be a positive int, got 0"),
        (lambda: grouped_gemm.build_grouped_gemm(bf16, ctas=-1),
         "build_grouped_gemm: ctas must be a positive int, got -1"),
        (lambda: tcgen05_suite.build_alloc(48),
         "build_alloc: ncols must be 32, 64, 128, 256 or 512, got 48"),
        (lambda: tcgen05_suite.build_mma(n=40),
         "build_mma: n must be a multiple of 16 in 16..256, got 40"),
    ]
    for build, msg in cases:
        with pytest.raises(ValueError) as e:
            build()
        assert str(e.value) == msg


def test_shapes_the_gemms_cannot_take_are_refused():
    from jax_pyptx import SpecializationError

    with pytest.raises(SpecializationError, match=r"gemm: K and N must be positive multiples "
                                                  r"of 8 .* got K=100, N=64"):
        gemm.build_gemm(bf16).trace(M=64, N=64, K=100)
    with pytest.raises(SpecializationError, match=r"grouped_gemm: K and N must be positive "
                                                  r"multiples of 8 .* got K=64, N=20"):
        grouped_gemm.build_grouped_gemm(bf16, ctas=2).trace(T=64, K=64, G=2, N=20)


def test_script_checks_its_entries(monkeypatch, capsys):
    """What ``python examples/blackwell/gemm_2sm.py`` runs (``script_main``), on one entry."""
    import examples.library as lib

    only = [get("blackwell/gemm_2sm-bf16")]
    monkeypatch.setattr(lib, "entries", lambda families=lib.FAMILIES: only)
    assert lib.script_main("examples.blackwell.gemm_2sm", "") == 0
    out = capsys.readouterr().out
    assert re.search(r"blackwell/gemm_2sm-bf16: gemm_2sm sm_100a at M=8192 N=8192 K=8192: "
                     r"ptxas [\d.]+: registers=\d+ spill_stores=0B spill_loads=0B stack=0B",
                     out), out
    assert "UTCHMMA.2CTA x4, UTCBAR.2CTA.MULTICAST x2, UTMALDG.2D.2CTA x" in out
    assert out.count(": ok") == 2 and out.endswith("OK\n")


def test_the_cuda_launcher_would_launch_the_pair_as_planned():
    """``interpret=False`` on the CPU: XLA -> the C++ launcher -> the recording driver table
    (DESIGN.md, point 5). The 2-SM GEMM is launched as clusters of 2 with its dynamic shared
    memory opted in, after its three tensor maps were encoded over the live buffers."""
    import jax
    import jax.numpy as jnp

    from jax_pyptx.runtime import ffi_bridge as fb
    from jax_pyptx.runtime.call import ptx_call

    if not fb.available():
        pytest.skip("jax_pyptx._ffi is not built")
    fb.ensure_registered()
    fb.clear_recording()
    try:
        k = gemm_2sm.build_gemm_2sm(bf16, f32)
        a, b = jnp.ones((512, 256), jnp.bfloat16), jnp.ones((256, 384), jnp.bfloat16)
        c = jax.jit(lambda a, b: ptx_call(k, interpret=False)(a, b))(a, b)
        jax.block_until_ready(c)
        smem = k.trace(M=512, N=384, K=256).dynamic_smem
        [launch] = fb.recorded_launches("gemm_2sm")
        assert (launch["grid"], launch["block"], launch["cluster"], launch["smem"]) == \
            ((4, 2, 1), (192, 1, 1), (2, 1, 1), smem)
        [attr] = [x for x in fb.recorded_calls() if x["fn"] == "cuFuncSetAttribute"]
        assert (attr["name"], attr["attribute"], attr["value"]) == ("gemm_2sm", 8, smem)
        enc = [x for x in fb.recorded_calls() if x["fn"] == "cuTensorMapEncodeTiled"]
        assert [(e["data_type"], e["global_dims"], e["global_strides"], e["box_dims"],
                 e["swizzle"]) for e in enc] == [
            (9, (256, 512), (512,), (64, 128), 3), (9, (384, 256), (768,), (64, 64), 3),
            (7, (384, 512), (1536,), (32, 32), 3)]
        assert enc[0]["global_address"] == a.unsafe_buffer_pointer()
        assert enc[1]["global_address"] == b.unsafe_buffer_pointer()
    finally:
        fb.clear_recording()


def test_gpu_checks_run_only_the_kernels_a_gpu_can_run():
    """``proof.runs_on``: ``sm_100a`` kernels (tcgen05) need a Blackwell (10.0), ``sm_90a``
    a Hopper; plain targets run on later GPUs too (``tests/test_kernels_gpu.py`` and
    ``benchmarks/kernels.py`` skip the rest)."""
    assert [proof.runs_on(get(n).kernel().arch, cc) for n, cc in (
        ("blackwell/gemm-bf16", "10.0"), ("blackwell/gemm-bf16", "9.0"),
        ("blackwell/rms_norm-f32", "9.0"), ("hopper/gemm-bf16", "10.0"),
        ("ampere/gemm-bf16", "10.0"), ("ampere/gemm-bf16", "7.5"))] == \
        [True, False, False, False, True, False]
    assert proof.runs_on("sm_100a", None)
