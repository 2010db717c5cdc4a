"""Real compiler PTX that uses TMA, bulk copies and mbarriers (no tensor cores) runs in the
interpreter and matches NumPy: nvcc kernels with host-encoded CUtensorMap params (by value and
in global memory, 128B swizzle, zero and NaN out-of-bounds fill), non-tensor bulk copies, and
Triton's tensor-descriptor kernels with host-built maps and with maps built on the device
(tensormap.replace, cp_fenceproxy, fence.proxy.tensormap)."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

from jax_pyptx.interpret import launch, tensor_map

from .corpus_hopper import cases as C

CORPUS = pathlib.Path(__file__).parent / "corpus"


def host_tensor_map(spec, array):
    """The interpreter's tensor map for a case's ``cuTensorMapEncodeTiled`` arguments."""
    return tensor_map(array, box=spec.box_dims, dtype=spec.data_type, dims=spec.global_dims,
                      strides=spec.global_strides, element_strides=spec.element_strides,
                      interleave=spec.interleave, swizzle=spec.swizzle,
                      l2_promotion=spec.l2_promotion, oob_fill=spec.oob_fill)


@pytest.mark.parametrize("name", ["tma_tile", "tma_tile_gmem"])
def test_hopper_corpus_tma_cases(name):
    case = C.CASE[name] if hasattr(C, "CASE") else next(c for c in C.CASES if c.name == name)
    arrays = C.make_arrays(case)
    args = C.param_values(case, arrays, host_tensor_map)
    launch(case.text(), case.entry, args, grid=case.grid, block=case.block, cluster=case.cluster,
           smem=case.smem)
    for out, want in case.reference(arrays).items():
        np.testing.assert_array_equal(np.asarray(arrays[out]), np.asarray(want, arrays[out].dtype),
                                      err_msg=f"{name}: {out}")


def test_nvcc_tma_load_loop():
    ptx = (CORPUS / "cuda/tma_load_2d.sm90a.ptx").read_text()
    tiles, grid = 3, 2
    X = np.random.default_rng(0).random((64 * grid, 32 * tiles)).astype(np.float32)
    out = np.zeros(grid * 128, np.float32)
    launch(ptx, "_Z8tma_load14CUtensorMap_stPfi", [tensor_map(X, box=(32, 64)), out, np.int32(tiles)],
           grid=grid, block=128)
    want = np.zeros(grid * 128, np.float32)
    for b in range(grid):
        for t in range(tiles):
            want[b * 128:(b + 1) * 128] += X[b * 64:(b + 1) * 64, t * 32:(t + 1) * 32].reshape(-1)[:128]
    np.testing.assert_array_equal(out, want)


def test_nvcc_bulk_copies():
    ptx = (CORPUS / "cuda/bulk_copy.sm90a.ptx").read_text()
    src = np.random.default_rng(1).random(512 * 4).astype(np.float32)
    dst = np.zeros(256 * 4, np.float32)
    done = np.arange(8, dtype=np.uint32)
    launch(ptx, "_Z4bulkPK6float4PS_Pj", [src, dst, done], block=256)
    want = src[:1024].copy()
    want[0::4] += 1
    np.testing.assert_array_equal(dst, want)
    np.testing.assert_array_equal(done[:4], want[:4].view(np.uint32) + np.arange(4, dtype=np.uint32))


SCRATCH = [np.zeros(1024, np.uint8), np.zeros(1024, np.uint8)]


def test_triton_tensor_descriptor_copy_with_host_maps():
    """Triton passes each descriptor as the map plus its shape and strides; its launcher encodes
    the 64x64 fp32 block as 32-column boxes with the 128B swizzle (two loads per block)."""
    ptx = (CORPUS / "triton/tma_copy_sm90.ptx").read_text()
    M, N = 128, 192
    X = np.random.default_rng(2).random((M, N)).astype(np.float32)
    Y = np.zeros_like(X)
    maps = [tensor_map(a, box=(32, 64), swizzle=128) for a in (X, Y)]
    desc = lambda m: [m, np.int32(M), np.int32(N), np.int64(N), np.int64(1)]
    launch(ptx, "tma_copy_2d", desc(maps[0]) + desc(maps[1]) + SCRATCH, grid=(2, 3, 1), block=128,
           smem=65536 + 1024)
    np.testing.assert_array_equal(Y, 2 * X)


def test_triton_device_built_tensor_maps():
    ptx = (CORPUS / "triton/device_desc_sm90.ptx").read_text()
    M, N = 96, 128
    X = np.random.default_rng(3).random((M, N)).astype(np.float32)
    Y = np.zeros_like(X)
    scratch = np.zeros(8 * 256, np.uint8)          # 2 maps of 128 bytes per program
    launch(ptx, "device_desc_add", [X, Y, np.int32(M), np.int32(N), scratch, SCRATCH[1]],
           grid=(3, 2, 1), block=128, smem=65536)
    np.testing.assert_array_equal(Y, X + 1)
