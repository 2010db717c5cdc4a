"""One Tile -> tensor-map derivation (``specs.Tile.tma_view``, then ``specialize.tma``): the
CUDA launch plan and the interpreter's host launch build the same map from ``X.tma_desc()``,
so the rank-3 "64-column stripe" form, ``tma_padding``, a symbolic ``tma_box`` and the default
box behave the same in the CUDA lowering (its encode arguments) and in ``kernel.interpret``,
where the loaded box is checked element by element against NumPy."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from jax_pyptx import Layout, Tile, kernel, ptx, reg, smem
from jax_pyptx.runtime import ffi_bridge as fb
from jax_pyptx.types import b16, bf16, u32, u64

from .helpers import assemble

ROWS, COLS = 64, 256          # the tensor
ROW0, COL0 = 16, 64           # where the box is loaded from
BM, BN = 32, 128              # the box: rows, columns (two 64-column stripes)


def dump_box(tile: Tile, n: int, load):
    """A kernel that TMA-loads one box of X (``load(buf, desc, bar)``) into shared memory
    and copies the ``n`` bf16 elements of shared memory, as they lie, to Y."""
    swz = "128B" if tile.tma_swizzle == 128 else None

    @kernel(arch="sm_90a", in_specs=(tile,), out_specs=(Tile(n, bf16),), block=(128, 1, 1),
            grid=(1, 1, 1))
    def dump(X, Y, *, BM=BM):
        buf = smem.alloc(bf16, (n,), swizzle=swz)
        bar = smem.mbarrier(1)
        desc = X.tma_desc()                    # the Tile says
        tid = reg.from_(ptx.special.tid.x(), u32)
        with ptx.if_(tid == 0):
            ptx.mbarrier.init(bar[0], 1)
            ptx.fence.mbarrier_init()
        ptx.bar.sync(0)
        with ptx.if_(tid == 0):
            ptx.mbarrier.arrive_expect_tx(bar[0], n * 2)
            load(buf, desc, bar[0])
        ptx.mbarrier.wait(bar[0], 0)
        base = reg.scalar(u32)
        ptx.inst.mov.u32(base, buf)
        y = Y.ptr()
        v = reg.scalar(b16)
        for j in range(n // 128):
            i = tid + j * 128
            ptx.inst.ld.shared.b16(v, ptx.addr(base + i * 2))
            ptx.inst.st.global_.b16(ptx.addr(y + reg.cvt(i, u64) * 2), v)
        ptx.ret()

    return dump


def stripes_load(buf, desc, bar):
    ptx.tma.load_3d(buf, desc, row=ROW0, col=COL0, mbar=bar)


def tile_load(buf, desc, bar):
    ptx.cp.async_.bulk.tensor_2d(dst=buf, src=desc, coord=(COL0, ROW0), mbar=bar)


def x_bits(seed=0):
    """A (ROWS, COLS) bf16 tensor of distinct bit patterns, and those bits."""
    bits = (np.arange(ROWS * COLS, dtype=np.uint16) * 7 + 3 + seed).reshape(ROWS, COLS)
    bits |= 0x3C00                       # finite, nonzero bf16 values
    return bits.view(bf16.np_dtype), bits


def swizzle_128b(logical: np.ndarray) -> np.ndarray:
    """Shared memory as a 128B-swizzled TMA load lays out the bytes ``logical`` (C order):
    byte-address bits [4:6] XOR bits [7:9]."""
    flat = logical.reshape(-1).view(np.uint8)
    off = np.arange(flat.size)
    phys = np.empty_like(flat)
    phys[off ^ (((off >> 7) & 7) << 4)] = flat
    return phys.view(logical.dtype)


def cuda_attrs(k, x):
    text = jax.jit(k).trace(x).lower(lowering_platforms=("cuda",)).as_text()
    return {name: text.split(f"{name} = dense<")[1].split(">")[0]
            for name in ("tma_global_dims", "tma_global_strides", "tma_box", "tma_swizzle")}


@pytest.mark.parametrize("padding", [False, True])
def test_stripe_form_on_the_interpreter_and_in_the_cuda_plan(padding):
    # symbolic tma_box (the template parameter BM); 128B swizzle without padding, none with
    # it (a 72-element row is wider than the swizzle span)
    layout = Layout.ROW if padding else Layout.TMA_128B
    tile = Tile("M", "K", bf16, layout, tma_box=("BM", BN), tma_rank=3, tma_padding=padding)
    inner = 72 if padding else 64
    n = (BN // 64) * BM * inner
    k = dump_box(tile, n, stripes_load)
    x, bits = x_bits()
    got = k.interpret(x).view(np.uint16)
    # the box in shared memory: [stripe][row][column of the stripe], 72-wide rows zero-filled
    # past the stripe's 64 columns (out of bounds of its innermost dim)
    want = np.zeros((BN // 64, BM, inner), np.uint16)
    for s in range(BN // 64):
        c = COL0 + 64 * s
        want[s, :, :64] = bits[ROW0:ROW0 + BM, c:c + 64]
    if not padding:
        want = swizzle_128b(want)
    np.testing.assert_array_equal(got, want.reshape(-1))
    # the CUDA plan's map is the one the interpreter used
    attrs = cuda_attrs(k, x)
    assert attrs == {"tma_global_dims": f"[64, {ROWS}, {COLS // 64}]",
                     "tma_global_strides": f"[{COLS * 2}, 128]",
                     "tma_box": f"[{inner}, {BM}, {BN // 64}]",
                     "tma_swizzle": "0" if padding else "3"}
    r = assemble(k, M=ROWS, K=COLS)
    assert r.spill_stores == 0 and r.spill_loads == 0


def test_default_box_on_the_interpreter_and_in_the_cuda_plan():
    # no tma_box: 128 rows (clamped to the 64 of the tensor) x one 128-byte span (64 bf16)
    tile = Tile("M", "K", bf16, Layout.TMA_128B)
    n = 64 * 64
    k = dump_box(tile, n, lambda buf, d, bar: ptx.cp.async_.bulk.tensor_2d(
        dst=buf, src=d, coord=(COL0, 0), mbar=bar))
    x, bits = x_bits(seed=5)
    got = k.interpret(x).view(np.uint16)
    np.testing.assert_array_equal(got, swizzle_128b(bits[:64, COL0:COL0 + 64].copy()))
    # (MLIR prints an all-equal dense attribute as one value)
    assert cuda_attrs(k, x) == {"tma_global_dims": f"[{COLS}, {ROWS}]",
                                "tma_global_strides": f"{COLS * 2}",
                                "tma_box": "64", "tma_swizzle": "3"}


def test_symbolic_tma_box_clamped_to_the_tensor():
    # tma_box rows 300 > 64 rows of the tensor: clamped, as the default box is
    tile = Tile("M", "K", bf16, tma_box=(300, "BM"))
    n = ROWS * BM
    k = dump_box(tile, n, lambda buf, d, bar: ptx.cp.async_.bulk.tensor_2d(
        dst=buf, src=d, coord=(COL0, 0), mbar=bar))
    x, bits = x_bits(seed=9)
    got = k.interpret(x).view(np.uint16)
    np.testing.assert_array_equal(got, bits[:, COL0:COL0 + BM].reshape(-1))
    assert cuda_attrs(k, x)["tma_box"] == f"[{BM}, {ROWS}]"


def test_the_recording_launcher_encodes_the_interpreters_map(tmp_path, monkeypatch):
    if not fb.available():
        pytest.skip("jax_pyptx._ffi is not built")
    from jax_pyptx import ptx_call

    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JAX_PYPTX_PRECOMPILE", "0")
    tile = Tile("M", "K", bf16, tma_box=("BM", BN), tma_rank=3, tma_padding=True)
    k = dump_box(tile, (BN // 64) * BM * 72, stripes_load)
    x, _ = x_bits()
    fb.set_recording(True)
    fb.clear_recording()
    try:
        jax.block_until_ready(ptx_call(k, interpret=False)(x))
        (enc,) = [c for c in fb.recorded_calls() if c["fn"] == "cuTensorMapEncodeTiled"]
    finally:
        fb.clear_recording()
        fb.set_recording(False)
    assert (enc["global_dims"], enc["global_strides"], enc["box_dims"], enc["swizzle"]) == \
        ((64, ROWS, COLS // 64), (COLS * 2, 128), (72, BM, BN // 64), 0)


def test_a_synthesized_stripe_map_runs_on_the_interpreter(tmp_path, monkeypatch):
    # pyptx.jax_support's hand-assembled launch: the map synthesize_tma_descriptor_3d encodes
    # (the same derivation, through a Tile) becomes the interpreter's map over the live buffer
    if not fb.available():
        pytest.skip("jax_pyptx._ffi is not built")
    import jax.numpy as jnp

    from pyptx.jax_support import (add_tma_spec_to_shim, call_kernel_via_ffi,
                                   compile_ptx_to_cubin, register_launch_config,
                                   synthesize_tma_descriptor_3d)

    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JAX_PYPTX_PRECOMPILE", "0")
    tile = Tile("M", "K", bf16, tma_box=(BM, BN), tma_rank=3, tma_padding=True)
    n = (BN // 64) * BM * 72
    k = dump_box(tile, n, stripes_load)
    h = compile_ptx_to_cubin(k.ptx(M=ROWS, K=COLS), "sm_90a")
    register_launch_config(h, None, grid=(1, 1, 1), block=(128, 1, 1))
    fb.set_recording(True)              # no libcuda here: the recording table encodes it
    try:
        tmap, host, dev = synthesize_tma_descriptor_3d(ROWS, COLS, bf16, BM, BN,
                                                       swizzle_128b=False, padding=True)
    finally:
        fb.set_recording(False)
    g = tmap.geometry
    assert (g.global_dims, g.global_strides, g.box, g.swizzle) == \
        ((64, ROWS, COLS // 64), (COLS * 2, 128), (72, BM, BN // 64), 0)
    add_tma_spec_to_shim(h, 0, host, dev)
    x, bits = x_bits(seed=2)
    got = call_kernel_via_ffi(jnp.asarray(x), cubin_handle=h, out_specs=(Tile(n, bf16),),
                              out_shape_env={}, grid=(1, 1, 1), block=(128, 1, 1),
                              interpret=True)
    want = np.zeros((BN // 64, BM, 72), np.uint16)
    for s in range(BN // 64):
        c = COL0 + 64 * s
        want[s, :, :64] = bits[ROW0:ROW0 + BM, c:c + 64]
    np.testing.assert_array_equal(np.asarray(got).view(np.uint16), want.reshape(-1))
