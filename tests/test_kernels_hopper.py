"""The Hopper kernels of the library (``examples/hopper``): what the generic library proofs
(``tests/test_kernel_library.py``: ptxas, SASS, interpreter cases, jit, lowering, torch) do not
say about their patterns. The CUDA lowering carries each kernel's tensor maps (boxes, swizzle,
ranks) and cluster shape; the SASS has the exact wgmma / TMA forms the plan implies; the
2-CTA cluster halves B's traffic (multicast); the grouped GEMM writes one device-built tensor
map per group it visits; pipeline bugs and overdrawn register budgets are caught by the
interpreter; the C++ launcher (recording driver) would launch the cluster with its tensor maps;
vmap puts the batch on the grid; bad builder arguments are refused."""
from __future__ import annotations

import os
import re

import ml_dtypes
import numpy as np
import pytest

from examples import proof
from examples.hopper import attention, gemm, grouped_gemm
from examples.library import Case, get
from jax_pyptx.types import bf16, f16, f32

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


BF = ml_dtypes.bfloat16


def test_gemm_lowering_carries_tensor_maps_and_cluster():
    k = gemm.build_gemm(bf16, f32)
    attrs, sig = _lowered_attrs(k, ((512, 256), BF), ((256, 384), BF))
    assert attrs["cluster"] == [2, 1, 1] and attrs["grid"] == [4, 3, 1]
    assert attrs["block"] == [384, 1, 1] and attrs["smem_bytes"] == k.trace(
        M=512, N=384, K=256).dynamic_smem == 4 * (16384 + 16384) + 2 * 16384 + 64
    assert attrs["tma_operand"] == [0, 1, 2] and attrs["tma_rank"] == [2, 2, 2]
    assert attrs["tma_dtype"] == [9, 9, 7]                 # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, F32
    assert attrs["tma_swizzle"] == [3, 3, 3]               # CU_TENSOR_MAP_SWIZZLE_128B
    # innermost first: A [M, K] box 128 x 64, B [K, N] box 32 (half of bk) x 64, C box 64 x 32
    assert attrs["tma_global_dims"] == [256, 512, 384, 256, 384, 512]
    assert attrs["tma_box"] == [64, 128, 64, 32, 32, 64]
    assert attrs["tma_global_strides"] == [512, 768, 1536]
    assert attrs["tma_mode"] == [0, 0, 0] and attrs["workspace_bytes"] == 3 * 128
    assert sig.endswith("-> (tensor<512x384xf32>, tensor<384xui8>)")


def test_attention_lowering_carries_3d_tensor_maps():
    k = attention.build_attention(bf16, 128, causal=True)
    attrs, _ = _lowered_attrs(k, *[((4, 1024, 128), BF)] * 3)
    assert attrs["grid"] == [8, 4, 1] and attrs["block"] == [384, 1, 1]
    assert "cluster" not in attrs or attrs["cluster"] == [1, 1, 1]
    assert attrs["tma_operand"] == [0, 1, 2, 3] and attrs["tma_rank"] == [3, 3, 3, 3]
    # (column, row, head): Q box 64 x 128 rows, K / V 64 x 128 keys, O 64 x 64 rows
    assert attrs["tma_box"] == [64, 128, 1, 64, 128, 1, 64, 128, 1, 64, 64, 1]
    assert attrs["tma_global_dims"] == [128, 1024, 4] * 4
    assert attrs["tma_swizzle"] == [3] * 4


def test_grouped_gemm_lowering_carries_template_maps():
    k = grouped_gemm.build_grouped_gemm(bf16, f32, ctas=132)
    attrs, sig = _lowered_attrs(k, ((4096, 512), BF), ((8, 512, 1024), BF), ((8,), np.int32))
    assert attrs["grid"] == [132, 1, 1] and attrs["block"] == [384, 1, 1]
    assert attrs["tma_operand"] == [0, 1, 3] and attrs["tma_rank"] == [2, 3, 2]
    assert attrs["tma_box"] == [64, 128, 64, 64, 1, 32, 64]
    assert attrs["tma_global_dims"] == [512, 4096, 1024, 512, 8, 1024, 4096]
    assert "tensor<4096x1024xf32>, tensor<132x8x384xui8>" in sig


def _sass_ops(k, **shape):
    from jax_pyptx.toolchain import disassemble

    t = k.trace(**shape)
    return proof.mnemonics(disassemble(t.ptx, t.arch))


def test_gemm_sass_has_the_planned_instruction_forms():
    ops = _sass_ops(gemm.build_gemm(bf16, f32), M=4096, N=4096, K=4096)
    # 4 wgmma m64n128k16 per k tile (bk = 64), one loop body
    assert ops["HGMMA.64x128x16.F32.BF16"] == 4
    # A's box, and B's two 64-column boxes multicast to the cluster
    assert ops["UTMALDG.2D"] == 1 and ops["UTMALDG.2D.MULTICAST"] == 2
    # 128 f32 columns in 4 subtiles of 32 (128 bytes)
    assert ops["UTMASTG.2D"] == 4
    assert ops["USETMAXREG.DEALLOC.CTAPOOL"] == 1 and ops["USETMAXREG.TRY_ALLOC.CTAPOOL"] == 1
    assert ops["UCGABAR_ARV"] == 2 and ops["UCGABAR_WAIT"] == 2
    # GPU-wide fences only at the two cluster barriers' releases, none before the consumers'
    # per-k-step remote arrives (a .release.cluster arrive put one there)
    assert ops["MEMBAR.ALL.GPU"] == 2
    assert proof.local_memory(ops) == []
    wide = _sass_ops(gemm.build_gemm(f16, f16, bn=256, cluster=1), M=4096, N=4096, K=4096)
    assert wide["HGMMA.64x256x16.F32"] == 4 and "UTMALDG.2D.MULTICAST" not in wide
    assert wide["UTMALDG.2D"] == 5 and wide["UTMASTG.2D"] == 4        # 256 f16 = 4 x 64


def test_attention_sass_has_both_products():
    ops = _sass_ops(attention.build_attention(bf16, 128, causal=True), H=4, S=1024)
    # per loop body (plain and masked): Q K^T 8 x m64n128k16, P V 8 x m64n128k16
    assert ops["HGMMA.64x128x16.F32.BF16"] == 32
    assert ops["UTMALDG.3D"] == 6 and ops["UTMASTG.3D"] == 2
    assert proof.count_prefix(ops, "MUFU.EX2") >= 2 * (64 + 2)
    assert proof.local_memory(ops) == []


def test_cluster_multicast_halves_b_traffic():
    """Every CTA needs its N tile of B; with the 2-CTA cluster each pair reads it once (each
    CTA half of it, multicast to both): B's requested bytes equal its size, twice that
    without the cluster. A is read once per N tile either way."""
    from jax_pyptx.perf import measure

    e = get("hopper/gemm-bf16")
    shape = {"M": 256, "N": 256, "K": 128}
    for cluster, b_reads in ((2, 1), (1, 2)):
        k = e.kernel(cluster=cluster)
        a, b = proof.make_inputs(e, k, shape)
        c = measure(k, a, b)
        by_name = {bc.name: bc for bc in c.buffers.values()}
        assert by_name["B"].unique_read == b.nbytes
        assert by_name["B"].load == b_reads * b.nbytes
        assert by_name["A"].load == 2 * a.nbytes                 # two N tiles
        assert by_name["C"].store == by_name["C"].unique_written == 256 * 256 * 4
        assert c.flops == {"bf16": 2 * 256 * 256 * 128}       # wgmma: 2 M N K


def test_grouped_gemm_builds_one_tensor_map_per_group_it_visits():
    """The workspace holds, per (CTA, group, role), the map made on the device: the template
    (all of A / C) with its base moved to the group's first row and its rows set to the
    group's; slots of groups a CTA never reached are never written (their bytes stay the
    fresh output's 0xFF)."""
    from jax_pyptx.interpret.state.tensormap import decode

    k = grouped_gemm.build_grouped_gemm(bf16, f32, ctas=2, stages=2)
    rng = np.random.default_rng(3)
    T, K, N = 300, 64, 128
    sizes = np.array([100, 0, 170, 20], np.int32)
    a = rng.standard_normal((T, K)).astype(BF)
    b = rng.standard_normal((4, K, N)).astype(BF)
    c, maps = k.interpret(a, b, sizes)
    np.testing.assert_allclose(c, grouped_gemm.reference(a, b, sizes), rtol=1e-5, atol=1e-4)
    assert np.isnan(c[290:]).all()                  # rows past sum(sizes): not written
    assert maps.shape == (2, 4, 384) and maps.dtype == np.uint8
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # tiles (1 N tile each): g0 -> 0, g2 -> 1, 2, g3 -> 3; CTA c takes tiles c, c + 2
    visits = {0: {0, 2}, 1: {2, 3}}
    for cta in range(2):
        base = {}
        for g in range(4):
            slots = maps[cta, g].reshape(3, 128)
            if g not in visits[cta]:
                assert (slots == 0xFF).all()
                continue
            for role, (cols, row_bytes, box) in enumerate(
                    [(K, 2 * K, (64, 128)), (N, 4 * N, (32, 64)), (N, 4 * N, (32, 64))]):
                f = decode(slots[role].tobytes())
                assert f.rank == 2 and f.dims == (cols, int(sizes[g])) and f.box == box
                assert f.swizzle == 3 and f.strides[1] == row_bytes
                base.setdefault(role, {})[g] = f.address - int(starts[g]) * row_bytes
        for role in base:            # every map of a role points into the same tensor
            assert len(set(base[role].values())) == 1


def test_a_pipeline_bug_deadlocks_in_the_interpreter(monkeypatch):
    """Releasing a stage only in its own CTA (not in the peer that multicasts into it) stalls
    the peer's producer: the interpreter reports the deadlock at the waiting try_wait."""
    from jax_pyptx.errors import DeadlockError
    from examples.hopper import sm90

    real = sm90.release_stage
    monkeypatch.setattr(gemm, "release_stage", lambda e, s, lane, cluster: real(e, s, lane, 1))
    e = get("hopper/gemm-bf16")
    with pytest.raises(DeadlockError) as err:
        proof.run_case(e, Case({"M": 256, "N": 256, "K": 256}, {"stages": 3}))
    msg = str(err.value)
    assert msg.startswith("deadlock: every warp is parked and none can make progress")
    assert "mbarrier.try_wait.parity.shared::cta.b64" in msg and "2 of 4 arrivals pending" in msg


def test_builders_refuse_bad_parameters():
    cases = [
        (lambda: gemm.build_gemm(f32), "build_gemm: dtype must be bf16 or f16, got f32"),
        (lambda: gemm.build_gemm(bf16, bn=96),
         "build_gemm: bn must be 64, 128, 192 or 256, got 96"),
        (lambda: gemm.build_gemm(bf16, bn=256, stages=5),
         "build_gemm: stages=5 of bm=128, bn=256 need 278608 bytes of shared memory; a CTA of "
         "sm_90 has at most 232448 (227 KiB): use fewer stages or a smaller tile"),
        (lambda: gemm.build_gemm(bf16, cluster=4), "build_gemm: cluster must be 1 or 2, got 4"),
        (lambda: gemm.build_gemm(bf16, group_m=3),
         "build_gemm: group_m must be None or a positive int, a multiple of cluster=2, got 3"),
        (lambda: gemm.build_gemm(bf16, cluster=1, group_m=0),
         "build_gemm: group_m must be None or a positive int, a multiple of cluster=1, got 0"),
        (lambda: gemm.build_gemm(bf16, stages=1), "build_gemm: stages must be an int >= 2, got 1"),
        (lambda: attention.build_attention(bf16, 96),
         "build_attention: head_dim must be 64 or 128, got 96"),
        (lambda: grouped_gemm.build_grouped_gemm(bf16, ctas=0),
         "build_grouped_gemm: ctas must be a positive int, got 0"),
    ]
    for build, msg in cases:
        with pytest.raises(ValueError) as e:
            build()
        assert str(e.value) == msg


def test_shapes_the_kernels_cannot_take_are_refused():
    from jax_pyptx import SpecializationError

    with pytest.raises(SpecializationError, match=r"gemm: K and N must be multiples of 8 .*"
                                                  r"got K=100, N=64"):
        gemm.build_gemm(bf16).trace(M=64, N=64, K=100)
    causal = attention.build_attention(bf16, 64, causal=True)
    q, kv = np.zeros((1, 128, 64), BF), np.zeros((1, 256, 64), BF)
    with pytest.raises(SpecializationError) as e:
        causal.bind(q, kv, kv)
    assert str(e.value) == ("kernel 'attention': shape variable S bound to 128 by Q (dim 1) "
                            "but 256 by K (dim 1)")


def test_script_checks_its_entries(monkeypatch, capsys):
    """What ``python examples/hopper/grouped_gemm.py`` runs (``script_main``), on one entry."""
    import examples.library as lib

    only = [get("hopper/grouped_gemm-bf16")]
    monkeypatch.setattr(lib, "entries", lambda families=lib.FAMILIES: only)
    assert lib.script_main("examples.hopper.grouped_gemm", "") == 0
    out = capsys.readouterr().out
    assert re.search(r"hopper/grouped_gemm-bf16: grouped_gemm sm_90a at T=8192 K=4096 G=8 "
                     r"N=4096: ptxas [\d.]+: registers=\d+ spill_stores=0B spill_loads=0B "
                     r"stack=0B", out), out
    assert "SASS: HGMMA x4, UTMALDG x3, UTMASTG x4" in out
    assert out.count(": ok") == 2 and out.endswith("OK\n")


def test_gemm_under_vmap_is_one_launch_with_the_batch_on_z():
    """``jax.vmap`` of the GEMM: the batch goes on the grid's z (clusters stay along x) and
    every batched tensor gets one tensor map per item; a shared B (``in_axes=None``) is
    broadcast. Matches the per-item products."""
    import jax
    import jax.numpy as jnp

    k = gemm.build_gemm(bf16, f32, stages=2)
    rng = np.random.default_rng(5)
    a = jnp.asarray(rng.standard_normal((2, 128, 64)), jnp.bfloat16)
    b = jnp.asarray(rng.standard_normal((2, 64, 128)), jnp.bfloat16)
    af, bf = np.asarray(a, np.float64), np.asarray(b, np.float64)
    c = jax.jit(jax.vmap(k))(a, b)
    np.testing.assert_allclose(np.asarray(c), np.einsum("bmk,bkn->bmn", af, bf), atol=1e-4)
    c = jax.jit(jax.vmap(k, in_axes=(0, None)))(a, b[0])
    np.testing.assert_allclose(np.asarray(c), np.einsum("bmk,kn->bmn", af, bf[0]), atol=1e-4)


def _launch_order(clusters_m, tiles_n, group_m, cluster):
    """The tiles ``sm90.grouped_tile`` gives the CTAs in launch order (x fastest), on ints."""
    from examples.hopper.sm90 import grouped_tile

    return [grouped_tile(x, y, clusters_m, tiles_n, group_m, cluster)
            for y in range(tiles_n) for x in range(clusters_m * cluster)]


@pytest.mark.parametrize("clusters_m, tiles_n, group_m, cluster", [
    (64, 64, 16, 2), (32, 64, 16, 1), (5, 3, 4, 2), (7, 2, 3, 1), (3, 4, 16, 2)])
def test_grouped_order_is_every_tile_once_in_groups_of_m_tiles(clusters_m, tiles_n, group_m, cluster):
    order = _launch_order(clusters_m, tiles_n, group_m, cluster)
    tiles_m = clusters_m * cluster
    assert sorted(order) == [(m, n) for m in range(tiles_m) for n in range(tiles_n)]
    for i in range(0, len(order), cluster):             # a cluster: adjacent M tiles, one N tile
        (m0, n0), (m1, n1) = order[i], order[i + cluster - 1]
        assert m0 % cluster == 0 and (m1, n1) == (m0 + cluster - 1, n0)
    # each group of group_m M tiles runs through every N tile before the next group starts
    assert [m // group_m for m, _ in order] == [i // (group_m * tiles_n) for i in range(len(order))]
    if tiles_m > group_m:                               # not launch order: the first wave's
        assert {m for m, _ in order[:group_m * 2]} == set(range(group_m))    # M tiles repeat


def test_h200_wave_reads_a_sixteenth_of_a_in_grouped_order():
    """At 8192^3 (64 x 64 tiles of 128 x 128, clusters of 2) a wave of 132 CTAs touches all
    64 M tiles of A in launch order and 16 in groups of 16 (with 9 of 64 N tiles of B)."""
    wave = _launch_order(32, 64, 16, 2)[:132]
    assert len({m for m, _ in wave}) == 16 and len({n for _, n in wave}) == 9
    one_group = _launch_order(32, 64, 64, 2)[:132]     # a group of every M tile: launch order
    assert one_group == [(x, y) for y in range(64) for x in range(64)][:132]


def test_gemm_in_grouped_order_computes_every_tile():
    """The kernel computes its tile where ``group_m`` puts it: groups of 4 M tiles (2
    clusters) over 6 M tiles leave a last group of one cluster, with 3 N tiles; every tile of C
    is the product (an unwritten one would read NaN and be reported), launch order too."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((768, 64)).astype(BF)
    b = rng.standard_normal((64, 384)).astype(BF)
    ref = gemm.reference(a, b)
    for group_m in (4, None):
        k = gemm.build_gemm(bf16, f32, stages=2, group_m=group_m)
        assert k.trace(M=768, N=384, K=64).grid == (6, 3, 1)
        np.testing.assert_allclose(k.interpret(a, b), ref, rtol=1e-5, atol=1e-4)
    text = gemm.build_gemm(bf16, f32, group_m=4).ptx(M=768, N=384, K=64)
    assert "%nctaid.x" in text and "%nctaid.y" in text and "min.u32" in text
    assert "%nctaid" not in gemm.build_gemm(bf16, f32, group_m=None).ptx(M=768, N=384, K=64)


def test_grouped_gemm_walks_each_groups_tiles_in_grouped_order():
    """The persistent kernel's tiles of a group follow ``group_m`` (``sm90.grouped_order``):
    groups of 2 M tiles over a group of 5 (the last group of M tiles one tile) and 3 N tiles,
    then a group of 1 M tile; every tile is the product, as in N-fastest order (None)."""
    rng = np.random.default_rng(13)
    T, K, N = 700, 64, 192
    sizes = np.array([600, 90], np.int32)
    a = rng.standard_normal((T, K)).astype(BF)
    b = rng.standard_normal((2, K, N)).astype(BF)
    ref = grouped_gemm.reference(a, b, sizes)
    for group_m in (2, None):
        k = grouped_gemm.build_grouped_gemm(bf16, f32, bn=64, ctas=3, stages=2, group_m=group_m)
        c, _ = k.interpret(a, b, sizes)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="group_m must be None or a positive int"):
        grouped_gemm.build_grouped_gemm(bf16, group_m=0)


def test_roofline_fit_measures_data_dependent_kernels_on_their_own_inputs():
    """A grouped GEMM's work depends on its group sizes: ``perf.fit(..., inputs=)`` draws the
    inputs of every doubled shape from the entry's generator (random normals would make the
    "sizes" tiny), so the FLOPs grow with N exactly and with T (padding of partial tiles
    aside) instead of collapsing."""
    from jax_pyptx.perf import fit

    e = get("hopper/grouped_gemm-bf16")
    k = e.kernel(ctas=4)
    shape = {"T": 512, "K": 64, "G": 2, "N": 128}
    seen = []

    def inputs(env):
        seen.append(dict(env))
        return proof.make_inputs(e, k, env)

    s = fit(k, *proof.make_inputs(e, k, shape), vary=["T", "N"], inputs=inputs)
    # each varied variable doubled and quadrupled, then both doubled (the fit's check)
    assert seen[:4] == [dict(shape, T=1024), dict(shape, T=2048), dict(shape, N=256), dict(shape, N=512)]
    assert seen[4:] == [dict(shape, T=1024, N=256)]
    assert s.exponents["flops:bf16"]["N"] == 1.0 and s.exponents["flops:bf16"]["T"] > 0.5
    assert fit(k, *proof.make_inputs(e, k, shape), vary=["T"]).exponents["flops:bf16"]["T"] < 0


def test_register_budgets_fit_the_pool_the_launch_gives(monkeypatch):
    """``.reqntid 384`` + ``.minnctapersm 1`` make ptxas give the kernel 168 registers per
    thread, the pool 384 x 168 that ``setmaxnreg`` redistributes: 128 x 40 (producer) + 256 x
    232 (consumers) uses all of it. Asking 240 for the consumers overdraws it: their
    ``setmaxnreg.inc`` never returns, which the interpreter reports as a deadlock."""
    from jax_pyptx.errors import DeadlockError
    from jax_pyptx.toolchain import compile_ptx
    from examples.hopper import sm90

    t = gemm.build_gemm(bf16, f32).trace(M=256, N=256, K=128)
    assert "\n.reqntid 384, 1, 1\n" in t.ptx and "\n.minnctapersm 1\n" in t.ptx
    assert compile_ptx(t.ptx, t.arch).report.registers == 168
    assert 128 * sm90.PRODUCER_REGS + 256 * sm90.CONSUMER_REGS[2] == 384 * 168
    assert "setmaxnreg.dec.sync.aligned.u32 \t40;" in t.ptx
    assert "setmaxnreg.inc.sync.aligned.u32 \t232;" in t.ptx
    a, b = (np.ones(s, BF) for s in ((128, 64), (64, 128)))
    k = gemm.build_gemm(bf16, f32, cluster=1)
    np.testing.assert_array_equal(k.interpret(a, b), np.full((128, 128), 64.0, np.float32))
    monkeypatch.setattr(gemm, "CONSUMER_REGS", {1: 256, 2: 240})
    over = gemm.build_gemm(bf16, f32, cluster=1)
    with pytest.raises(DeadlockError) as e:
        over.interpret(a, b)
    assert str(e.value).startswith("deadlock: every warp is parked")
    assert "setmaxnreg.inc.sync.aligned.u32 240;" in str(e.value)


def test_the_cuda_launcher_would_launch_the_gemm_as_planned():
    """``interpret=False`` on the CPU: XLA -> the C++ launcher -> the recording driver table
    (DESIGN.md, point 5). The GEMM is launched as a 2-CTA cluster with its dynamic shared
    memory opted in, after the three tensor maps were encoded over the live buffers (A and C
    by XLA's operand addresses) and stored into the descriptor workspace."""
    import jax
    import jax.numpy as jnp

    from jax_pyptx.runtime import ffi_bridge as fb
    from jax_pyptx.runtime.call import ptx_call

    if not fb.available():
        pytest.skip("jax_pyptx._ffi is not built")
    fb.ensure_registered()
    fb.clear_recording()
    try:
        k = gemm.build_gemm(bf16, f32)
        a, b = jnp.ones((512, 256), jnp.bfloat16), jnp.ones((256, 384), jnp.bfloat16)
        c = jax.jit(lambda a, b: ptx_call(k, interpret=False)(a, b))(a, b)
        jax.block_until_ready(c)
        smem = k.trace(M=512, N=384, K=256).dynamic_smem
        [launch] = fb.recorded_launches("gemm")
        assert (launch["grid"], launch["block"], launch["cluster"], launch["smem"]) == \
            ((4, 3, 1), (384, 1, 1), (2, 1, 1), smem)
        [attr] = [x for x in fb.recorded_calls() if x["fn"] == "cuFuncSetAttribute"]
        assert (attr["name"], attr["attribute"], attr["value"]) == ("gemm", 8, smem)
        enc = [x for x in fb.recorded_calls() if x["fn"] == "cuTensorMapEncodeTiled"]
        assert [(e["data_type"], e["global_dims"], e["global_strides"], e["box_dims"],
                 e["swizzle"]) for e in enc] == [
            (9, (256, 512), (512,), (64, 128), 3), (9, (384, 256), (768,), (64, 32), 3),
            (7, (384, 512), (1536,), (32, 64), 3)]
        assert enc[0]["global_address"] == a.unsafe_buffer_pointer()
        assert enc[1]["global_address"] == b.unsafe_buffer_pointer()
    finally:
        fb.clear_recording()
