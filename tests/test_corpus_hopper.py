"""The Hopper / Blackwell corpus (``tests/corpus_hopper``): real Triton 3.9 and nvcc 13.0 PTX
for wgmma, TMA (host- and device-built tensor maps), mbarriers, clusters with multicast and
DSMEM, tcgen05 (with block-scaled mxfp8 / nvfp4 / fp8 x fp4 products), warp specialization,
and, for issue 22, Triton's sm_80 and sm_89 output, with the launch descriptions and NumPy
references of ``cases.py``.

Checked here without a GPU, Triton or nvcc: every file parses, prints and re-parses to the same
IR; ptxas accepts the original and the printed text for the file's target; every instruction
validates against the ISA table; each file still holds the instructions it is in the corpus
for; each case agrees with its PTX entry (params, block, cluster, target) and, for Triton, with
the compiled kernel's metadata that regenerate.py saved (warps, shared memory, scratch size,
the tensor-map swizzle / element type / box Triton's launcher encodes); every source has its
committed output and every entry a case. The interpreter tests run the cases.
"""
from __future__ import annotations

import ast
import functools
import json
import os
import re

import numpy as np
import pytest

from jax_pyptx import emit, parse
from jax_pyptx.errors import PtxError
from jax_pyptx.ir.nodes import Block, Instruction
from jax_pyptx.isa import TABLE, check
from jax_pyptx.isa.model import parse_target

from .corpus import ptxas, ptxas_check
from .corpus_hopper import cases as C

HERE = C.HERE
FILES = sorted(f"{d}/{f}" for d in ("cuda", "triton") for f in os.listdir(os.path.join(HERE, d))
               if f.endswith(".ptx"))
_VERSION = re.compile(r"^\.version\s+(\d+)\.(\d+)", re.M)
_TARGET = re.compile(r"^\.target\s+(sm_\w+)", re.M)


@functools.lru_cache(maxsize=None)
def read(rel: str) -> str:
    with open(os.path.join(HERE, rel)) as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def module(rel: str):
    return parse(read(rel), rel)


def _walk(stmts):
    for s in stmts:
        if type(s) is Block:
            yield from _walk(s.body)
        elif type(s) is Instruction:
            yield s


def entry(rel: str, name: str):
    return next(f for f in module(rel).functions if f.kind == ".entry" and f.name == name)


def instructions(rel: str, name: str | None = None) -> list:
    fns = [f for f in module(rel).functions if f.body and (name is None or f.name == name)]
    return [s for f in fns for s in _walk(f.body)]


def test_corpus_files():
    assert sorted(["cuda/cluster_multicast.sm90a.ptx", "cuda/tcgen05_gemm.sm100a.ptx",
                   "cuda/tma_tile.sm90a.ptx", "cuda/wgmma_gemm.sm90a.ptx",
                   "triton/attention_fwd_f16_sm90.ptx", "triton/matmul_ptr_bf16_sm90.ptx",
                   "triton/matmul_ptr_pipelined_f16_sm90.ptx",
                   "triton/matmul_tma_device_f16_sm90.ptx", "triton/matmul_tma_host_f16_sm90.ptx",
                   *[f"triton/{n}.ptx" for n in _TRITON39_FILES]]) == FILES


# the Triton 3.9 files added for issue 22 (one case each in cases.TRITON39)
_TRITON39_FILES = [
    "attention_fwd_f16_sm80", "histogram_sm80", "scale_f16_sm80", "fp8_convert_sm89",
    "matmul_persistent_host_f16_sm90", "matmul_persistent_device_f16_sm90", "matmul_ws_f16_sm90",
    "matmul_fp8_sm90", "matmul_ptr_f16_sm100", "matmul_tma_host_f16_sm100", "attention_fwd_f16_sm100",
    "matmul_persistent_host_f16_sm100", "matmul_persistent_device_f16_sm100", "matmul_ws_f16_sm100",
    "matmul_fp8_sm100", "matmul_mxfp8_sm100", "matmul_nvfp4_sm100", "matmul_mixed_fp8_fp4_sm100",
    "matmul_mxfp8_tma_sm100", "matmul_nvfp4_tma_sm100", "matmul_mixed_fp8_fp4_tma_sm100"]


def test_triton39_cases_are_the_new_files():
    assert sorted(c.ptx for c in C.TRITON39) == sorted(f"triton/{n}.ptx" for n in _TRITON39_FILES)


# ----------------------------------------------------------------------------- text
@pytest.mark.parametrize("rel", FILES)
def test_roundtrip(rel):
    m = module(rel)
    printed = emit(m)
    again = parse(printed, rel + ":printed")
    assert again == m
    assert emit(again) == printed


def _judge(text: str, arch: str):
    """ptxas's verdict; where this ptxas is older than the file's PTX ISA (Triton's 9.4 needs
    CUDA >= 13.1: the nvidia-cuda-nvcc wheel), judged at the newest ISA it takes."""
    ok, errors = ptxas_check(text, arch)
    newest = re.search(r"current version is '(\d+\.\d+)'", " ".join(errors))
    if not ok and newest and any("Unsupported .version" in e for e in errors):
        ok, errors = ptxas_check(_VERSION.sub(f".version {newest.group(1)}", text), arch)
    return ok, errors


@pytest.mark.parametrize("rel", FILES)
def test_ptxas_accepts_original_and_printed(rel):
    if ptxas() is None:
        pytest.skip("ptxas not found")
    text = read(rel)
    arch = _TARGET.search(text).group(1)
    assert _judge(text, arch) == (True, ())
    assert _judge(emit(module(rel)), arch) == (True, ())


@pytest.mark.parametrize("rel", FILES)
def test_every_instruction_validates(rel):
    text = read(rel)
    target = parse_target(_TARGET.search(text).group(1))
    version = tuple(int(x) for x in _VERSION.search(text).groups())
    ins = instructions(rel)
    unknown = sorted({s.opcode for s in ins if s.opcode not in TABLE})
    assert unknown == []
    errors = []
    for s in ins:
        try:
            check(s, target, version)
        except PtxError as e:
            errors.append(str(e))
    assert errors == []
    assert len(ins) > (15 if rel in ("triton/scale_f16_sm80.ptx",) else 30)


# what each file is in the corpus for: instruction spellings (opcode + modifiers) it must hold
_TCGEN05 = ["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
            "tcgen05.wait::ld.sync.aligned", "tcgen05.dealloc.cta_group::1.sync.aligned.b32"]
_SCALES_TMA = ["cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes",
               "cp.async.bulk.tensor.5d.shared::cta.global.mbarrier::complete_tx::bytes",
               "tcgen05.cp.cta_group::1.warpx4.32x128b"]
FEATURES = {
    "triton/matmul_ptr_bf16_sm90.ptx": [
        "wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
        "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned",
        "fence.proxy.async.shared::cta"],
    "triton/matmul_ptr_pipelined_f16_sm90.ptx": [
        "cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "wgmma.wait_group.sync.aligned"],
    "triton/matmul_tma_host_f16_sm90.ptx": [
        "mbarrier.init.shared::cta.b64", "mbarrier.arrive.expect_tx.shared::cta.b64",
        "mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.inval.shared::cta.b64",
        "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "elect.sync",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"],
    "triton/matmul_tma_device_f16_sm90.ptx": [
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64",
        "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32",
        "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned",
        "fence.proxy.tensormap::generic.acquire.gpu",
        "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"],
    "triton/attention_fwd_f16_sm90.ptx": [
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "ex2.approx.ftz.f32"],
    # Triton 3.9 for issue 22
    "triton/attention_fwd_f16_sm80.ptx": [
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        "cp.async.cg.shared.global", "ex2.approx.ftz.f32"],
    "triton/histogram_sm80.ptx": ["atom.relaxed.sys.shared.add.u32", "atom.global.gpu.acq_rel.add.u32"],
    "triton/scale_f16_sm80.ptx": ["ld.param.b16", "mul.f16"],
    "triton/fp8_convert_sm89.ptx": [
        "cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.f16x2.e4m3x2",
        "cvt.rn.f16x2.e5m2x2"],
    "triton/matmul_persistent_host_f16_sm90.ptx": [
        "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "cp.async.bulk.wait_group.read",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"],
    "triton/matmul_persistent_device_f16_sm90.ptx": [
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64",
        "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned",
        "fence.proxy.tensormap::generic.acquire.gpu", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"],
    "triton/matmul_ws_f16_sm90.ptx": [
        "setmaxnreg.dec.sync.aligned.u32", "setmaxnreg.inc.sync.aligned.u32",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
        "cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes"],
    "triton/matmul_fp8_sm90.ptx": ["wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"],
    "triton/matmul_ptr_f16_sm100.ptx": _TCGEN05 + ["tcgen05.mma.cta_group::1.kind::f16",
                                                  "tcgen05.ld.sync.aligned.32x32b.x64.b32"],
    "triton/matmul_tma_host_f16_sm100.ptx": _TCGEN05 + [
        "tcgen05.mma.cta_group::1.kind::f16", "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"],
    "triton/attention_fwd_f16_sm100.ptx": _TCGEN05 + [
        "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.st.sync.aligned.32x32b.x32.b32", "ex2.approx.ftz.f32"],
    "triton/matmul_persistent_host_f16_sm100.ptx": _TCGEN05 + [
        "tcgen05.mma.cta_group::1.kind::f16", "cp.async.bulk.wait_group.read"],
    "triton/matmul_persistent_device_f16_sm100.ptx": _TCGEN05 + [
        "tcgen05.ld.sync.aligned.16x32bx2.x32.b32", "tensormap.replace.tile.global_address.shared::cta.b1024.b64",
        "fence.proxy.tensormap::generic.acquire.gpu"],
    "triton/matmul_ws_f16_sm100.ptx": _TCGEN05 + [
        "setmaxnreg.dec.sync.aligned.u32", "setmaxnreg.inc.sync.aligned.u32",
        "tcgen05.ld.sync.aligned.32x32b.x128.b32"],
    "triton/matmul_fp8_sm100.ptx": _TCGEN05 + ["tcgen05.mma.cta_group::1.kind::f8f6f4"],
    "triton/matmul_mxfp8_sm100.ptx": _TCGEN05 + [
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32", "tcgen05.st.sync.aligned.32x32b.x4.b32"],
    "triton/matmul_nvfp4_sm100.ptx": _TCGEN05 + [
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16", "tcgen05.st.sync.aligned.32x32b.x8.b32"],
    "triton/matmul_mixed_fp8_fp4_sm100.ptx": _TCGEN05 + [
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"],
    "triton/matmul_mxfp8_tma_sm100.ptx": _TCGEN05 + _SCALES_TMA + [
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"],
    "triton/matmul_nvfp4_tma_sm100.ptx": _TCGEN05 + _SCALES_TMA + [
        "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16"],
    "triton/matmul_mixed_fp8_fp4_tma_sm100.ptx": _TCGEN05 + _SCALES_TMA + [
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32"],
    "cuda/wgmma_gemm.sm90a.ptx": [
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "fence.proxy.async.shared::cta",
        "wgmma.fence.sync.aligned", "wgmma.wait_group.sync.aligned"],
    "cuda/tma_tile.sm90a.ptx": [
        "prefetch.tensormap", "mbarrier.init.shared::cta.b64",
        "mbarrier.arrive.expect_tx.shared::cta.b64",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.try_wait.parity.shared::cta.b64",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
        "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read", "cvta.param.u64"],
    "cuda/cluster_multicast.sm90a.ptx": [
        "fence.mbarrier_init.release.cluster", "barrier.cluster.arrive.release.aligned",
        "barrier.cluster.wait.acquire.aligned",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster",
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64", "mapa.shared::cluster.u32",
        "st.shared::cluster.f32", "ld.shared::cluster.f32"],
    "cuda/tcgen05_gemm.sm100a.ptx": [
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
        "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned",
        "tcgen05.mma.cta_group::1.kind::f16",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
        "tcgen05.ld.sync.aligned.32x32b.x64.b32", "tcgen05.wait::ld.sync.aligned",
        "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync",
        "tcgen05.dealloc.cta_group::1.sync.aligned.b32"],
}


@pytest.mark.parametrize("rel", FILES)
def test_file_holds_its_features(rel):
    spelled = {s.opcode + "".join(s.modifiers) for s in instructions(rel)}
    assert [f for f in FEATURES[rel] if f not in spelled] == []


# ----------------------------------------------------------------------------- cases
CASE_IDS = [c.name for c in C.CASES]


def _param_kind(p) -> str:
    """The kind of an .entry param: 'map' (a 128-byte by-value blob), 'u64' (a pointer or a
    64-bit scalar) or the scalar type's name."""
    if p.array is not None:
        return "map" if (p.type.name, p.array) == ("b8", 128) and p.align >= 64 else "blob"
    return p.type.name


def _case_kind(p) -> set:
    if isinstance(p, C.TensorMap):
        return {"map"} if p.passing == "param" else {"u64", "b64"}
    if isinstance(p, (C.Array, C.Scratch)):
        return {"u64", "b64"}
    if p.ptx_type == "f16":         # Triton: .param .align 2 .b8 name[2]
        return {"blob"}
    return {p.ptx_type, "b" + p.ptx_type[1:]}


@pytest.mark.parametrize("name", CASE_IDS)
def test_case_matches_its_entry(name):
    case = C.CASE[name]
    text = case.text()
    assert _TARGET.search(text).group(1) == case.arch
    fn = entry(case.ptx, case.entry)
    kinds = [_param_kind(p) for p in fn.params]
    assert len(kinds) == len(case.params)
    assert [k for k, p in zip(kinds, case.params) if k not in _case_kind(p)] == []
    dirs = {d.name: tuple(int(x) for a in d.args for x in a.split(",")) for d in fn.directives}
    if ".reqntid" in dirs:
        assert int(np.prod(dirs[".reqntid"])) == int(np.prod(case.block))
    if ".maxntid" in dirs:
        assert int(np.prod(case.block)) <= int(np.prod(dirs[".maxntid"]))
    assert dirs.get(".reqnctapercluster", (1, 1, 1)) == case.cluster
    assert (".explicitcluster" in dirs) == (case.cluster != (1, 1, 1))
    assert all(g % c == 0 for g, c in zip(case.grid, case.cluster))
    # dynamic shared memory only where the module declares an extern .shared array
    assert (case.smem > 0) == bool(re.search(r"^\.extern \.shared", text, re.M))


@pytest.mark.parametrize("name", CASE_IDS)
def test_case_arrays_and_references(name):
    case = C.CASE[name]
    arrays = C.make_arrays(case)
    again = C.make_arrays(case)
    assert all(np.array_equal(arrays[k].view(np.uint8), again[k].view(np.uint8)) for k in arrays)
    ref = case.reference(arrays)
    assert sorted(ref) == sorted(case.outputs()) == sorted(case.tolerance)
    for out, want in ref.items():
        assert want.shape == arrays[out].shape
        assert np.isfinite(want).all() or name == "tma_tile_gmem"
        assert not np.any(arrays[out])                      # outputs start as zeros
    for p in case.params + case.buffers:
        if isinstance(p, C.Array) and not p.output:
            assert np.std(arrays[p.name].astype(np.float64)) > 0.5
    for p in case.params:
        if isinstance(p, C.TensorMap):
            arr = case.param(p.array)
            assert p.array in {b.name for b in case.buffers}
            if p.data_type == C.TENSOR_MAP_DATA_TYPE["16U4_ALIGN16B"]:
                # packed fp4 bytes: the inner dimension counts fp4 elements (2 per byte), and
                # each lands in shared memory as one byte (16 in 8 bytes + 8 bytes of padding)
                assert arr.dtype == "uint8"
                assert p.global_dims == (2 * arr.shape[1], arr.shape[0])
                assert p.global_strides == (arr.shape[1],)
                assert p.box_dims[0] <= {0: 256, 1: 32, 2: 64, 3: 128}[p.swizzle]
                continue
            esize = {0: 1, 6: 2, 7: 4, 9: 2}[p.data_type]
            assert np.dtype(C._DTYPES[arr.dtype]).itemsize == esize
            # row-major: dims innermost first, byte strides of the outer dimensions
            assert p.global_dims == tuple(reversed(arr.shape))
            assert p.global_strides == tuple(int(np.prod(arr.shape[len(arr.shape) - i:])) * esize
                                             for i in range(1, p.rank))
            assert p.box_dims[0] * esize <= {0: 256, 1: 32, 2: 64, 3: 128}[p.swizzle]
    vals = C.param_values(case, arrays, tensor_map=lambda spec, a: ("map", spec.name, a))
    assert len(vals) == len(case.params)


def test_param_values_need_a_tensor_map_helper_for_maps():
    case = C.CASE["tma_tile"]
    with pytest.raises(ValueError, match="tma_tile: param in_map is a tensor map; pass tensor_map="):
        C.param_values(case, C.make_arrays(case))


def test_swizzle_reference_moves_16_byte_chunks():
    box = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    raw = C._swizzle_128b(box).reshape(16, 8, 4)           # row, 16-byte chunk, 4 floats
    chunks = box.reshape(16, 8, 4)
    for r in range(16):
        for c in range(8):
            assert np.array_equal(raw[r, c ^ (r % 8)], chunks[r, c])
    assert np.array_equal(raw[0], chunks[0]) and not np.array_equal(raw[1], chunks[1])


def test_tma_tile_references_fill_the_edges():
    case = C.CASE["tma_tile"]
    raw = case.reference(C.make_arrays(case))["raw"]
    # box (bx=1, by=2): rows 32..47 (valid 32..39), cols 32..63 (valid 32..47): 8 x 16 values
    assert np.count_nonzero(raw[5]) == 8 * 16
    assert np.count_nonzero(raw[0]) == 16 * 32
    nan = C.CASE["tma_tile_gmem"]
    assert nan.param("in_map").oob_fill == C.TENSOR_MAP_OOB_FILL["NAN_REQUEST_ZERO_FMA"]
    raw = nan.reference(C.make_arrays(nan))["raw"]
    assert [int(np.isnan(r).sum()) for r in raw] == [0, 16 * 16, 0, 16 * 16, 8 * 32, 16 * 32 - 8 * 16]


def _triton_meta(case):
    with open(os.path.join(HERE, case.ptx[:-4] + ".json")) as f:
        return json.load(f)


TRITON = [c.name for c in C.CASES if c.ptx.startswith("triton/")]
_TMA_DTYPE_DEVICE_TO_HOST = {**{i: i for i in range(16)}, 8: 10, 9: 8, 10: 9}    # Triton's driver.py


@pytest.mark.parametrize("name", TRITON)
def test_triton_case_agrees_with_compiled_metadata(name):
    case = C.CASE[name]
    meta = _triton_meta(case)
    assert meta["entry"] == case.entry
    assert case.block == (32 * meta["num_warps"], 1, 1) and meta["num_ctas"] == 1
    assert case.smem == meta["shared"]
    scratch, profile = case.params[-2:]
    nprog = int(np.prod(case.grid))
    assert (scratch.nbytes, scratch.align) == (meta["global_scratch_size"] * nprog,
                                               meta["global_scratch_align"])
    assert profile.nbytes == meta["profile_scratch_size"] == 0
    # the runtime params Triton passes, in order: each tensordesc expands to map, 2 shapes,
    # 2 strides; constexprs vanish
    expected = []
    for arg, ty in meta["signature"].items():
        if ty.startswith("tensordesc"):
            rank = ty.count(",") + 1
            expected += [arg, *(f"{arg}.shape{i}" for i in range(rank)), *(f"{arg}.stride{i}" for i in range(rank))]
        elif ty != "constexpr":
            expected.append(arg[:-4] if arg.endswith("_ptr") else arg)
    assert [p.name for p in case.params[:-2]] == expected
    maps = [p for p in case.params if isinstance(p, C.TensorMap)]
    assert len(maps) == len(meta["tensordesc_meta"])
    for p, d in zip(maps, meta["tensordesc_meta"]):
        assert not d["is_im2col"]
        assert p.data_type == _TMA_DTYPE_DEVICE_TO_HOST[d["elem_type"]]
        assert p.swizzle == d["swizzle"]
        assert p.box_dims == tuple(reversed(d["block_size"]))
        # Triton's launcher: the shape and element strides it appends are the array's; the map
        # has the dimensions innermost first (an fp4-padded map counts the inner one in fp4
        # elements, twice the bytes) and byte strides elem_size x the element strides
        rank = len(d["block_size"])
        shape = [case.param(f"{p.name}.shape{i}").value for i in range(rank)]
        strides = [case.param(f"{p.name}.stride{i}").value for i in range(rank)]
        dims = list(reversed(shape))
        if d["fp4_padded"]:
            dims[0] *= 2
            assert p.data_type == C.TENSOR_MAP_DATA_TYPE["16U4_ALIGN16B"]
        assert p.global_dims == tuple(dims)
        assert strides == [int(np.prod(shape[i + 1:])) for i in range(rank)]      # row-major
        assert p.global_strides == tuple(strides[rank - 2 - j] * d["elem_size"] for j in range(rank - 1))
        assert (p.element_strides, p.interleave, p.l2_promotion, p.oob_fill) == ((1,) * rank, 0, 2, 0)


def test_every_entry_has_a_case():
    have = {(c.ptx, c.entry) for c in C.CASES}
    entries = {(rel, f.name) for rel in FILES for f in module(rel).functions if f.kind == ".entry"}
    assert entries == have


# ----------------------------------------------------------------------------- regeneration
def _triton_config_names() -> list:
    """Names in triton/kernels.py's CONFIGS, read without importing Triton."""
    tree = ast.parse(open(os.path.join(HERE, "triton", "kernels.py")).read())
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = getattr(node.func, "id", None)
        if fn == "dict":
            out += [kw.value.value for kw in node.keywords                  # not the helpers' own
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant)]
        elif fn in ("_tma_cfg", "_persistent_device", "_block_scaled", "_block_scaled_tma"):  # name first
            out.append(node.args[0].value)
    return out


def test_every_source_has_its_committed_output_and_nothing_else():
    made = set()
    for fn in os.listdir(os.path.join(HERE, "cuda")):
        if fn.endswith(".cu"):
            tags = re.findall(r"^//\s*corpus:\s*([\w.-]+)\s*:", open(os.path.join(HERE, "cuda", fn)).read(),
                              re.M)
            assert tags, fn
            made |= {f"cuda/{fn[:-3]}.{t}.ptx" for t in tags}
    names = _triton_config_names()
    assert len(names) == 5 + len(C.TRITON39)
    made |= {f"triton/{n}.ptx" for n in names}
    assert made == set(FILES)
    assert all(os.path.exists(os.path.join(HERE, "triton", n + ".json")) for n in names)


def test_regeneration_is_documented_with_versions():
    from .corpus_hopper import regenerate

    doc = regenerate.__doc__
    assert "python tests/corpus_hopper/regenerate.py" in doc
    assert "pip install triton==3.9.0" in doc and "CUDA 13.0" in doc
    with open(os.path.join(HERE, "versions.json")) as f:
        versions = json.load(f)
    assert versions == {"nvcc": "13.0.88", "triton": "3.9.0"}
    # Triton 3.9 writes .version 9.4 for sm_90a / sm_100a, 8.8 for sm_80 / sm_89
    assert {(_TARGET.search(read(r)).group(1), _VERSION.search(read(r)).groups())
            for r in FILES if r.startswith("triton/")} == {("sm_90a", ("9", "4")), ("sm_100a", ("9", "4")),
                                                           ("sm_80", ("8", "8")), ("sm_89", ("8", "8"))}
    assert all(_VERSION.search(read(r)).groups() == ("9", "0") for r in FILES if r.startswith("cuda/"))
    # no machine-specific paths in .file directives
    assert [r for r in FILES if re.search(r'\.file\s+\d+\s+"/', read(r))] == []
