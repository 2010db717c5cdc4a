"""How to launch each kernel of the Hopper / Blackwell corpus, and what it must compute.

Plain data and NumPy only: importable with no Triton, nvcc or GPU. One :class:`Case` per
``.entry`` to run; ``CASES`` lists them and ``CASE[name]`` finds one. A case gives

* ``ptx`` (path relative to this directory), ``entry``, ``arch``;
* ``grid``, ``block``, ``cluster`` (3-tuples) and ``smem``, the *dynamic* shared memory in
  bytes (Triton kernels declare ``.extern .shared global_smem[]`` and need the compiled
  kernel's ``shared``; nvcc kernels here use static shared memory only);
* ``params``: one entry per ``.param`` of the entry, in order:

  - :class:`Array`: a global pointer param; ``init`` says how to fill it (outputs start as
    zeros). ``make_arrays(case)`` builds them all, deterministically.
  - :class:`Scalar`: a by-value scalar with its PTX type (``u32``, ``u64``, ``f32``; ``f16``:
    Triton declares an fp16 scalar as ``.param .align 2 .b8 name[2]`` and the launch passes
    a NumPy ``float16``).
  - :class:`Scratch`: a global buffer the kernel may use (Triton's two trailing params). Zeroed,
    ``nbytes`` long and ``align``-aligned; ``nbytes == 0`` means unused (Triton passes null).
  - :class:`TensorMap`: a ``.param .align 64 .b8 [128]`` CUtensorMap built on the host,
    described by the arguments of ``cuTensorMapEncodeTiled`` (every per-dimension tuple
    innermost dimension first, strides in bytes for dimensions 1.., enum fields as the integer
    values of ``cuda.h``; ``TENSOR_MAP_*`` below name them). ``array`` names the
    :class:`Array` whose buffer is the map's ``globalAddress``: one of ``buffers``, the arrays
    the kernel reaches only through tensor maps (they are not params). ``passing="global"``:
    the param is instead a ``.u64`` pointer to the 128-byte map, which the host copied into
    global memory (64-byte aligned) before the launch.

* ``reference(arrays) -> {output name: expected}`` from the inputs of ``make_arrays``;
* ``tolerance``: ``{output name: (rtol, atol)}`` for ``np.testing.assert_allclose`` on values
  converted to float64; ``(0, 0)`` is exact.

``param_values(case, arrays, tensor_map)`` gives the launch's positional arguments: the arrays,
NumPy scalars of the param types, zeroed scratch buffers and, for each :class:`TensorMap`,
whatever ``tensor_map(spec, array)`` returns (the interpreter's helper for host tensor maps:
the by-value map, or for ``passing="global"`` a global buffer holding it).

Tolerances follow the hardware's precision: fp16 / bf16 products are exact in fp32 and the
tensor cores accumulate in fp32 (K <= 64 here: differences of order 1e-6 relative, allowed
1e-4 plus 2e-4 absolute for N(0, 1) data); an fp16 output adds its rounding (2^-11
relative: 2e-3); attention adds ``ex2.approx`` (2^-22 relative) and the rounding of P to fp16
before the P V product (measured 3e-4 absolute at these shapes against the exact softmax;
allowed 2e-3).

fp8 and fp4 values decode exactly (ml_dtypes' ``float8_e4m3fn``, ``float8_e5m2``,
``float4_e2m1fn``, ``float8_e8m0fnu``: see :func:`decode`), and their products with each other
and with power-of-two (e8m0) or e4m3 scales are exact in fp32; the tensor cores add them in
fp32. Over K <= 256 that leaves fp32 rounding of the sums (|c| up to 5e3 for the block-scaled
products: allowed 1e-5 relative plus 1e-3 absolute; 1e-4 absolute for plain fp8 with
|c| < 60). Conversions (fp32 -> fp8 with ``cvt.rn.satfinite``, fp8 -> fp32, an fp16 product)
round once and are compared exactly.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Callable

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# cuTensorMapEncodeTiled enums (cuda.h, CUDA 13.0): name -> value
TENSOR_MAP_DATA_TYPE = {"UINT8": 0, "UINT16": 1, "UINT32": 2, "INT32": 3, "UINT64": 4, "INT64": 5,
                        "FLOAT16": 6, "FLOAT32": 7, "FLOAT64": 8, "BFLOAT16": 9, "FLOAT32_FTZ": 10,
                        "TFLOAT32": 11, "TFLOAT32_FTZ": 12, "16U4_ALIGN8B": 13, "16U4_ALIGN16B": 14,
                        "16U6_ALIGN16B": 15}
TENSOR_MAP_INTERLEAVE = {"NONE": 0, "16B": 1, "32B": 2}
TENSOR_MAP_SWIZZLE = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3, "128B_ATOM_32B": 4,
                      "128B_ATOM_32B_FLIP_8B": 5, "128B_ATOM_64B": 6}
TENSOR_MAP_L2_PROMOTION = {"NONE": 0, "L2_64B": 1, "L2_128B": 2, "L2_256B": 3}
TENSOR_MAP_OOB_FILL = {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}


@dataclasses.dataclass(frozen=True)
class Array:
    """A global-memory pointer param: a ``shape`` array of NumPy ``dtype`` (``"bfloat16"``,
    ``"float8_e4m3fn"``, ``"float8_e5m2"`` are ml_dtypes'). ``init``: ``("normal", seed,
    scale)`` or ``("randint", seed, lo, hi)`` (integers in [lo, hi): bin indices, packed fp4
    bytes, e8m0 / e4m3 scale codes) for inputs, ``("zeros",)`` for outputs. ``output``: the
    kernel writes it and ``reference`` says what it must hold."""

    name: str
    shape: tuple
    dtype: str
    init: tuple = ("zeros",)
    output: bool = False


@dataclasses.dataclass(frozen=True)
class Scalar:
    """A by-value scalar param of PTX type ``ptx_type`` holding ``value``."""

    name: str
    ptx_type: str
    value: float


@dataclasses.dataclass(frozen=True)
class Scratch:
    """A zeroed global buffer of ``nbytes`` bytes aligned to ``align`` (0 bytes: unused)."""

    name: str
    nbytes: int
    align: int = 1


@dataclasses.dataclass(frozen=True)
class TensorMap:
    """A host-encoded CUtensorMap passed by value (``.param .align 64 .b8 name[128]``): the
    arguments of ``cuTensorMapEncodeTiled`` with ``array`` (an :class:`Array` param's name)
    as ``globalAddress``. Tuples are innermost dimension first; ``global_strides`` are the
    byte strides of dimensions 1 .. rank-1. ``passing``: ``"param"`` (by value) or
    ``"global"`` (the param is a ``.u64`` pointer to the map in global memory)."""

    name: str
    array: str
    data_type: int
    global_dims: tuple
    global_strides: tuple
    box_dims: tuple
    element_strides: tuple
    interleave: int = TENSOR_MAP_INTERLEAVE["NONE"]
    swizzle: int = TENSOR_MAP_SWIZZLE["NONE"]
    l2_promotion: int = TENSOR_MAP_L2_PROMOTION["NONE"]
    oob_fill: int = TENSOR_MAP_OOB_FILL["NONE"]
    passing: str = "param"

    @property
    def rank(self) -> int:
        return len(self.global_dims)


@dataclasses.dataclass(frozen=True)
class Case:
    """One kernel launch of the corpus and the outputs it must produce (see the module doc)."""

    name: str
    ptx: str
    entry: str
    arch: str
    grid: tuple
    block: tuple
    params: tuple
    reference: Callable
    tolerance: dict
    buffers: tuple = ()
    cluster: tuple = (1, 1, 1)
    smem: int = 0
    source: str = ""
    notes: str = ""

    def path(self) -> str:
        return os.path.join(HERE, self.ptx)

    def text(self) -> str:
        with open(self.path()) as f:
            return f.read()

    def param(self, name: str):
        """The param or buffer called ``name``."""
        return next(p for p in self.params + self.buffers if p.name == name)

    def outputs(self) -> list:
        """Names of the arrays the kernel writes (params and buffers)."""
        return [p.name for p in self.params + self.buffers if isinstance(p, Array) and p.output]


_DTYPES = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float32": np.float32, "int32": np.int32,
           "uint8": np.uint8, "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}
_SCALARS = {"u32": np.uint32, "s32": np.int32, "u64": np.uint64, "s64": np.int64, "f32": np.float32,
            "f16": np.float16}


def make_array(p: Array) -> np.ndarray:
    """The initial contents of ``p``: deterministic for a given ``init``."""
    dtype = _DTYPES[p.dtype]
    kind = p.init[0]
    if kind == "zeros":
        return np.zeros(p.shape, dtype)
    if kind == "normal":
        _, seed, scale = p.init
        return (np.random.default_rng(seed).standard_normal(p.shape) * scale).astype(dtype)
    if kind == "randint":           # integers in [lo, hi) (for bytes: codes of packed formats)
        _, seed, lo, hi = p.init
        return np.random.default_rng(seed).integers(lo, hi, p.shape).astype(dtype)
    raise ValueError(f"{p.name}: unknown init {p.init!r}")


def make_arrays(case: Case) -> dict:
    """``{name: array}`` for every :class:`Array` of ``case`` (params and buffers), freshly
    initialised."""
    return {p.name: make_array(p) for p in case.params + case.buffers if isinstance(p, Array)}


def param_values(case: Case, arrays: dict, tensor_map: Callable | None = None) -> list:
    """The launch's positional arguments, in ``.param`` order (see the module doc)."""
    out = []
    for p in case.params:
        if isinstance(p, Array):
            out.append(arrays[p.name])
        elif isinstance(p, Scalar):
            out.append(_SCALARS[p.ptx_type](p.value))
        elif isinstance(p, Scratch):
            out.append(np.zeros(max(p.nbytes, 1), np.uint8))
        else:
            if tensor_map is None:
                raise ValueError(f"{case.name}: param {p.name} is a tensor map; pass tensor_map=")
            out.append(tensor_map(p, arrays[p.array]))
    return out


def _f64(x):
    return np.asarray(x, np.float64)


def _mm(a, b):
    return _f64(a) @ _f64(b)


def _dt(name):
    return TENSOR_MAP_DATA_TYPE[name]


def _triton_scratch(nbytes=0, align=1):
    return (Scratch("global_scratch", nbytes, align), Scratch("profile_scratch", 0, 1))


def _triton_desc(name, array, shape, dtype, esize, box_rows_cols, swizzle):
    """A Triton host tensor descriptor param of a row-major 2-D ``shape`` array: the map, then
    the shape (2 x i32) and the strides in elements (2 x i64) that Triton's launcher appends."""
    rows, cols = shape
    return (TensorMap(name, array, _dt(dtype), (cols, rows), (cols * esize,),
                      (box_rows_cols[1], box_rows_cols[0]), (1, 1),
                      swizzle=TENSOR_MAP_SWIZZLE[swizzle],
                      l2_promotion=TENSOR_MAP_L2_PROMOTION["L2_128B"]),
            Scalar(name + ".shape0", "u32", rows), Scalar(name + ".shape1", "u32", cols),
            Scalar(name + ".stride0", "u64", cols), Scalar(name + ".stride1", "u64", 1))


_MM32 = (1e-4, 2e-4)        # fp32 output of a K <= 64 bf16/fp16 product
_MM16 = (2e-3, 2e-3)        # the same, rounded to fp16


# ----------------------------------------------------------------------------- Triton (sm_90a)
def _attention(a):
    q, k, v = _f64(a["q"]), _f64(a["k"]), _f64(a["v"])
    s = np.einsum("hmd,hnd->hmn", q, k) * 0.125
    p = np.exp(s - s.max(-1, keepdims=True))
    return {"o": np.einsum("hmn,hnd->hmd", p / p.sum(-1, keepdims=True), v)}


CASES = [
    Case("matmul_ptr_bf16_sm90", "triton/matmul_ptr_bf16_sm90.ptx", "matmul_ptr", "sm_90a",
         grid=(2, 1, 1), block=(128, 1, 1), smem=32768, source="triton/kernels.py:matmul_ptr",
         params=(Array("a", (128, 64), "bfloat16", ("normal", 1, 1.0)),
                 Array("b", (64, 128), "bfloat16", ("normal", 2, 1.0)),
                 Array("c", (128, 128), "float32", output=True),
                 Scalar("M", "u32", 128), Scalar("N", "u32", 128), Scalar("K", "u32", 64),
                 Scalar("stride_am", "u32", 64), Scalar("stride_bk", "u32", 128),
                 Scalar("stride_cm", "u32", 128), *_triton_scratch()),
         reference=lambda a: {"c": _mm(a["a"], a["b"])}, tolerance={"c": _MM32},
         notes="BM=64 BN=128 BK=64, one warpgroup, num_stages=1: ld.global -> st.shared, "
               "wgmma m64n128k16 from shared-memory descriptors"),
    Case("matmul_ptr_pipelined_f16_sm90", "triton/matmul_ptr_pipelined_f16_sm90.ptx", "matmul_ptr",
         "sm_90a", grid=(1, 1, 1), block=(256, 1, 1), smem=32768,
         source="triton/kernels.py:matmul_ptr",
         params=(Array("a", (128, 64), "float16", ("normal", 3, 1.0)),
                 Array("b", (64, 128), "float16", ("normal", 4, 1.0)),
                 Array("c", (128, 128), "float16", output=True),
                 Scalar("M", "u32", 128), Scalar("N", "u32", 128), Scalar("K", "u32", 64),
                 Scalar("stride_am", "u32", 64), Scalar("stride_bk", "u32", 128),
                 Scalar("stride_cm", "u32", 128), *_triton_scratch()),
         reference=lambda a: {"c": _mm(a["a"], a["b"])}, tolerance={"c": _MM16},
         notes="BM=BN=128 BK=16, two warpgroups, num_stages=3: cp.async ring of 3 stages, "
               "async wgmma with wait_group 1 over 4 K steps"),
    Case("matmul_tma_host_f16_sm90", "triton/matmul_tma_host_f16_sm90.ptx", "matmul_tma_host",
         "sm_90a", grid=(2, 1, 1), block=(128, 1, 1), smem=32768,
         source="triton/kernels.py:matmul_tma_host",
         params=(*_triton_desc("a_desc", "a", (128, 64), "FLOAT16", 2, (64, 32), "64B"),
                 *_triton_desc("b_desc", "b", (64, 128), "FLOAT16", 2, (32, 64), "128B"),
                 *_triton_desc("c_desc", "c", (128, 128), "FLOAT32", 4, (64, 32), "128B"),
                 Scalar("K", "u32", 64), *_triton_scratch()),
         buffers=(Array("a", (128, 64), "float16", ("normal", 5, 1.0)),
                  Array("b", (64, 128), "float16", ("normal", 6, 1.0)),
                  Array("c", (128, 128), "float32", output=True)),
         reference=lambda a: {"c": _mm(a["a"], a["b"])}, tolerance={"c": _MM32},
         notes="BM=64 BN=128 BK=32; TMA loads of A (64B swizzle) and of B in two 64-column "
               "boxes (128B swizzle, N-major: wgmma transposes B) through mbarriers; C "
               "stored by TMA in 32-column boxes"),
    Case("matmul_tma_device_f16_sm90", "triton/matmul_tma_device_f16_sm90.ptx", "matmul_tma_device",
         "sm_90a", grid=(2, 2, 1), block=(128, 1, 1), smem=16400,
         source="triton/kernels.py:matmul_tma_device",
         params=(Array("a", (128, 64), "float16", ("normal", 7, 1.0)),
                 Array("b", (128, 64), "float16", ("normal", 8, 1.0)),
                 Array("c", (128, 128), "float16", output=True),
                 Scalar("M", "u32", 128), Scalar("N", "u32", 128), Scalar("K", "u32", 64),
                 *_triton_scratch(384 * 4, 128)),
         reference=lambda a: {"c": _mm(a["a"], _f64(a["b"]).T)}, tolerance={"c": _MM16},
         notes="BM=BN=64 BK=32; three tensor maps built on the device per program "
               "(tensormap.replace in shared memory, tensormap.cp_fenceproxy into the global "
               "scratch at 384 bytes per program, fence.proxy.tensormap), then TMA; b is B^T "
               "stored [N, K]"),
    Case("attention_fwd_f16_sm90", "triton/attention_fwd_f16_sm90.ptx", "attention_fwd", "sm_90a",
         grid=(2, 2, 1), block=(128, 1, 1), smem=40960, source="triton/kernels.py:attention_fwd",
         params=(Array("q", (2, 128, 64), "float16", ("normal", 9, 1.0)),
                 Array("k", (2, 128, 64), "float16", ("normal", 10, 1.0)),
                 Array("v", (2, 128, 64), "float16", ("normal", 11, 1.0)),
                 Array("o", (2, 128, 64), "float16", output=True),
                 Scalar("seq", "u32", 128), Scalar("sm_scale", "f32", 0.125), *_triton_scratch()),
         reference=_attention, tolerance={"o": (2e-3, 2e-3)},
         notes="2 heads, seq 128, d 64, BM=BN=64: program (m block, head); wgmma for Q K^T and "
               "P V, online softmax with ex2.approx.ftz"),
]


# ----------------------------------------------------------------------------- nvcc
def _swizzle_128b(tile: np.ndarray) -> np.ndarray:
    """The shared-memory image of a box with 128-byte rows under CU_TENSOR_MAP_SWIZZLE_128B:
    byte offset o goes to o ^ (((o >> 7) & 7) << 4) (16-byte chunk c of row r to c ^ (r % 8))."""
    raw = tile.reshape(-1).view(np.uint8)
    off = np.arange(raw.size)
    out = np.empty_like(raw)
    out[off ^ (((off >> 7) & 7) << 4)] = raw
    return out.view(tile.dtype)


def _tma_tile(a, fill=0.0):
    x = a["x"]
    raw = np.zeros((6, 16 * 32), np.float32)
    for by in range(3):
        for bx in range(2):
            box = np.full((16, 32), fill, np.float32)        # OOB_FILL_NONE: zeros; NAN_...: NaN
            part = x[16 * by:16 * by + 16, 32 * bx:32 * bx + 32]
            box[:part.shape[0], :part.shape[1]] = part
            raw[by * 2 + bx] = _swizzle_128b(box)
    return {"y": 2 * _f64(x) + 1, "raw": raw}


def _cluster(a):
    blocks = _f64(a["x"]).reshape(2, 32, 32)                 # per cluster
    tile = np.stack([blocks[s // 2] for s in range(4)])      # slot 2 c + r
    peer = np.stack([blocks[s // 2] * ((s % 2 ^ 1) + 2) for s in range(4)])
    return {"tile_out": tile, "peer_out": peer}


_AB64 = (Array("a", (64, 64), "bfloat16", ("normal", 12, 1.0)),
         Array("b", (64, 64), "bfloat16", ("normal", 13, 1.0)),
         Array("c", (64, 64), "float32", output=True))

CASES += [
    Case("wgmma_ss_sw128", "cuda/wgmma_gemm.sm90a.ptx", "wgmma_ss_sw128", "sm_90a",
         grid=(1, 1, 1), block=(128, 1, 1), params=_AB64, source="cuda/wgmma_gemm.cu",
         reference=lambda a: {"c": _mm(a["a"], _f64(a["b"]).T)}, tolerance={"c": _MM32},
         notes="A and B (both K-major, [64, 64] bf16) staged with 128B swizzle; 4 x "
               "wgmma m64n64k16 from descriptors"),
    Case("wgmma_rs_sw128", "cuda/wgmma_gemm.sm90a.ptx", "wgmma_rs_sw128", "sm_90a",
         grid=(1, 1, 1), block=(128, 1, 1), params=_AB64, source="cuda/wgmma_gemm.cu",
         reference=lambda a: {"c": _mm(a["a"], _f64(a["b"]).T)}, tolerance={"c": _MM32},
         notes="A fragments from registers (loaded from global), B from a 128B-swizzled "
               "descriptor"),
    Case("tma_tile", "cuda/tma_tile.sm90a.ptx", "tma_tile", "sm_90a",
         grid=(2, 3, 1), block=(128, 1, 1), source="cuda/tma_tile.cu",
         params=(TensorMap("in_map", "x", _dt("FLOAT32"), (48, 40), (192,), (32, 16), (1, 1),
                           swizzle=TENSOR_MAP_SWIZZLE["128B"],
                           l2_promotion=TENSOR_MAP_L2_PROMOTION["L2_128B"]),
                 TensorMap("out_map", "y", _dt("FLOAT32"), (48, 40), (192,), (32, 16), (1, 1),
                           swizzle=TENSOR_MAP_SWIZZLE["128B"]),
                 Array("raw", (6, 512), "float32", output=True)),
         buffers=(Array("x", (40, 48), "float32", ("normal", 14, 1.0)),
                  Array("y", (40, 48), "float32", output=True)),
         reference=_tma_tile, tolerance={"y": (0, 0), "raw": (0, 0)},
         notes="2-D TMA load (expect_tx 2048, try_wait.parity) and store (bulk_group, "
               "wait_group.read) of 32x16 fp32 boxes with 128B swizzle; the edge boxes stick "
               "out of the [40, 48] tensor: zero fill on load, clipped on store. raw[t] is box "
               "t = by * 2 + bx as it lay in shared memory"),
    Case("tma_tile_gmem", "cuda/tma_tile.sm90a.ptx", "tma_tile_gmem", "sm_90a",
         grid=(2, 3, 1), block=(128, 1, 1), source="cuda/tma_tile.cu",
         params=(TensorMap("in_map", "x", _dt("FLOAT32"), (48, 40), (192,), (32, 16), (1, 1),
                           swizzle=TENSOR_MAP_SWIZZLE["128B"],
                           oob_fill=TENSOR_MAP_OOB_FILL["NAN_REQUEST_ZERO_FMA"], passing="global"),
                 TensorMap("out_map", "y", _dt("FLOAT32"), (48, 40), (192,), (32, 16), (1, 1),
                           swizzle=TENSOR_MAP_SWIZZLE["128B"], passing="global"),
                 Array("raw", (6, 512), "float32", output=True)),
         buffers=(Array("x", (40, 48), "float32", ("normal", 18, 1.0)),
                  Array("y", (40, 48), "float32", output=True)),
         reference=lambda a: _tma_tile(a, np.nan), tolerance={"y": (0, 0), "raw": (0, 0)},
         notes="tma_tile with both maps in global memory (u64 params) and NaN out-of-bounds "
               "fill on the load: raw holds NaN outside the tensor (compare with equal_nan)"),
    Case("cluster_multicast", "cuda/cluster_multicast.sm90a.ptx", "cluster_multicast", "sm_90a",
         grid=(4, 1, 1), block=(128, 1, 1), cluster=(2, 1, 1), source="cuda/cluster_multicast.cu",
         params=(TensorMap("map", "x", _dt("FLOAT32"), (32, 64), (128,), (32, 16), (1, 1)),
                 Array("tile_out", (4, 32, 32), "float32", output=True),
                 Array("peer_out", (4, 32, 32), "float32", output=True)),
         buffers=(Array("x", (64, 32), "float32", ("normal", 15, 1.0)),),
         reference=_cluster, tolerance={"tile_out": (0, 0), "peer_out": (0, 0)},
         notes="2 clusters of 2 CTAs; each CTA multicasts half of its cluster's 32x32 block to "
               "both CTAs (ctaMask 0b11), then DSMEM: st.shared::cluster into the peer, "
               "ld.shared::cluster from it, barrier.cluster between"),
    Case("tcgen05_gemm", "cuda/tcgen05_gemm.sm100a.ptx", "tcgen05_gemm", "sm_100a",
         grid=(1, 1, 1), block=(128, 1, 1), source="cuda/tcgen05_gemm.cu",
         params=(Array("a", (128, 64), "bfloat16", ("normal", 16, 1.0)),
                 Array("b", (64, 64), "bfloat16", ("normal", 17, 1.0)),
                 Array("c", (128, 64), "float32", output=True)),
         reference=lambda a: {"c": _mm(a["a"], _f64(a["b"]).T)}, tolerance={"c": _MM32},
         notes="tcgen05.alloc 64 columns, 4 x tcgen05.mma kind::f16 M=128 N=64 K=16 from 128B-"
               "swizzled smem descriptors, commit to an mbarrier, tcgen05.ld 32x32b.x64, "
               "dealloc"),
]


# ----------------------------------------------------------------------------- Triton 3.9: issue 22
# sm_80 (mma.sync), sm_89 (fp8 conversions), and the sm_90a / sm_100a kernels of Triton's
# tutorials (persistent, warp-specialized, fp8, block-scaled), all from triton/kernels.py.
def _fp8_convert(a):
    x = np.asarray(a["x"], np.float32)
    # cvt.rn.satfinite: round to nearest even, finite results clamped to +-MAX_NORM (448 for
    # e4m3, 57344 for e5m2); clamping first and then rounding gives the same bits
    return {"e4": np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn),
            "e5": np.clip(x, -57344, 57344).astype(ml_dtypes.float8_e5m2),
            "d4": _f64(a["a4"]), "d5": _f64(a["a5"])}


def decode(x: np.ndarray, fmt: str) -> np.ndarray:
    """The float64 values of ``x`` (a byte array) in format ``fmt``: ``e4m3`` / ``e5m2`` one
    byte per element, ``e2m1`` two per byte (the first element in the low nibble, so
    ``[..., n]`` bytes give ``[..., 2 n]`` values), ``e8m0`` (the scale 2^(b - 127)) one per
    byte."""
    raw = np.ascontiguousarray(x).view(np.uint8)
    if fmt == "e2m1":
        codes = np.stack([raw & 0xF, raw >> 4], axis=-1).reshape(*raw.shape[:-1], -1)
        return codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    kind = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
            "e8m0": ml_dtypes.float8_e8m0fnu}[fmt]
    return raw.view(kind).astype(np.float64)


def _block_scaled(a_fmt, b_fmt, scale_fmt, vec):
    """C = (A * SA) @ (B^T * SB)^T, the PTX ISA's block scaling: every group of ``vec``
    consecutive K elements of a row of A (of B^T) is multiplied by one scale."""
    def ref(a):
        sa = np.repeat(decode(a["sa"], scale_fmt), vec, axis=1)
        sb = np.repeat(decode(a["sb"], scale_fmt), vec, axis=1)
        return {"c": (decode(a["a"], a_fmt) * sa) @ (decode(a["b"], b_fmt) * sb).T}
    return ref


def _triton_desc_fp4_padded(name, array, shape, box_rows_cols, swizzle):
    """Triton's host descriptor of a packed fp4 operand ``shape`` bytes [rows, cols] that an
    fp8 x fp4 MMA reads padded (``fp4_padded``): Triton's launcher encodes it as
    16U4_ALIGN16B with the inner dimension counted in fp4 elements (2 x cols), the byte
    strides unchanged; the shape and strides it appends are the byte array's."""
    rows, cols = shape
    return (TensorMap(name, array, _dt("16U4_ALIGN16B"), (2 * cols, rows), (cols,),
                      (box_rows_cols[1], box_rows_cols[0]), (1, 1), swizzle=TENSOR_MAP_SWIZZLE[swizzle],
                      l2_promotion=TENSOR_MAP_L2_PROMOTION["L2_128B"]),
            Scalar(name + ".shape0", "u32", rows), Scalar(name + ".shape1", "u32", cols),
            Scalar(name + ".stride0", "u64", cols), Scalar(name + ".stride1", "u64", 1))


def _triton_desc_nd(name, array, shape, dtype, esize, block, swizzle="NONE"):
    """A Triton host tensor descriptor of any rank over a row-major ``shape`` array: the map,
    then the shape (rank x i32) and the strides in elements (rank x i64) Triton appends."""
    rank = len(shape)
    strides = [int(np.prod(shape[i + 1:])) for i in range(rank)]
    return (TensorMap(name, array, _dt(dtype), tuple(reversed(shape)),
                      tuple(strides[rank - 2 - j] * esize for j in range(rank - 1)), tuple(reversed(block)),
                      (1,) * rank, swizzle=TENSOR_MAP_SWIZZLE[swizzle],
                      l2_promotion=TENSOR_MAP_L2_PROMOTION["L2_128B"]),
            *(Scalar(f"{name}.shape{i}", "u32", d) for i, d in enumerate(shape)),
            *(Scalar(f"{name}.stride{i}", "u64", st) for i, st in enumerate(strides)))


def unshuffle_scales(s5: np.ndarray) -> np.ndarray:
    """[1, M / 128, G / 4, 2, 256] scales as ``matmul_block_scaled_tma`` reads them (the
    scale of row m, group g at ``[0, m // 128, g // 4, (m % 32) * 16 + (m // 32 % 4) * 4 +
    g % 4]``) -> [M, G]."""
    _, mb, gb, _, _ = s5.shape
    return s5.reshape(mb, gb, 32, 4, 4).transpose(0, 3, 2, 1, 4).reshape(mb * 128, gb * 4)


def _bs_tma_case(name, a_fmt, b_fmt, scale_fmt, vec, smem, seed, notes, k=256):
    """A ``matmul_block_scaled_tma`` case: M = N = 128, K = 256 in two BK = 128 steps."""
    def operand(arr, fmt, s):
        if fmt == "e2m1":
            return Array(arr, (128, k // 2), "uint8", ("randint", s, 0, 256))
        return Array(arr, (128, k), "float8_e4m3fn", ("normal", s, 1.0))

    def desc(dname, arr, fmt):
        if fmt == "e2m1" and a_fmt != b_fmt:                      # fp8 x fp4: padded in smem
            return _triton_desc_fp4_padded(dname, arr, (128, k // 2), (128, 128), "128B")
        cols = k // 2 if fmt == "e2m1" else k
        return _triton_desc(dname, arr, (128, cols), "UINT8", 1, (128, cols // 2),
                            "64B" if fmt == "e2m1" else "128B")

    sk = 128 // vec // 4
    s5 = (1, 1, k // vec // 4, 2, 256)
    init = ("randint", 0, 124, 131) if scale_fmt == "e8m0" else ("randint", 0, 0x30, 0x48)
    ref = _block_scaled(a_fmt, b_fmt, scale_fmt, vec)
    return Case(name, f"triton/{name}.ptx", "matmul_block_scaled_tma", "sm_100a", grid=(1, 1, 1),
                block=(128, 1, 1), smem=smem, source="triton/kernels.py:matmul_block_scaled_tma",
                params=(*desc("a_desc", "a", a_fmt), *desc("b_desc", "b", b_fmt),
                        *_triton_desc_nd("sa_desc", "sa", s5, "UINT8", 1, (1, 1, sk, 2, 256)),
                        *_triton_desc_nd("sb_desc", "sb", s5, "UINT8", 1, (1, 1, sk, 2, 256)),
                        Array("c", (128, 128), "float32", output=True), *_mnk(128, 128, k),
                        *_triton_scratch()),
                buffers=(operand("a", a_fmt, seed), operand("b", b_fmt, seed + 1),
                         Array("sa", s5, "uint8", (init[0], seed + 2, *init[2:])),
                         Array("sb", s5, "uint8", (init[0], seed + 3, *init[2:]))),
                reference=lambda a: ref({**a, "sa": unshuffle_scales(a["sa"]), "sb": unshuffle_scales(a["sb"])}),
                tolerance={"c": _BS}, notes=notes)


def _qkv(seed):
    return tuple(Array(n, (2, 128, 64), "float16", ("normal", seed + i, 1.0)) for i, n in enumerate("qkv"))


def _abt(m, n, k, dtype, seed, out="float16"):
    """A [m, k], B^T [n, k] (K-major) and the output C [m, n]."""
    return (Array("a", (m, k), dtype, ("normal", seed, 1.0)), Array("b", (n, k), dtype, ("normal", seed + 1, 1.0)),
            Array("c", (m, n), out, output=True))


def _mnk(m, n, k):
    return Scalar("M", "u32", m), Scalar("N", "u32", n), Scalar("K", "u32", k)


_ABT = lambda a: {"c": _mm(a["a"], _f64(a["b"]).T)}          # noqa: E731
_MM8 = (1e-5, 1e-4)     # fp8 x fp8 products are exact in fp32; fp32 sums over K = 128
_BS = (1e-5, 1e-3)      # block-scaled: element x scale products exact; fp32 sums (|c| < 5e3)
_E8M0 = ("randint", 0, 124, 131)            # scale codes 2^-3 .. 2^3
_E4M3_SCALE = ("randint", 0, 0x30, 0x48)    # positive e4m3 scales 0.5 .. 3.75


def _bs_arrays(a_fmt, b_fmt, scale_dtype, vec, seed, k=256):
    def operand(name, fmt, s):
        if fmt == "e2m1":
            return Array(name, (128, k // 2), "uint8", ("randint", s, 0, 256))
        return Array(name, (128, k), "float8_e4m3fn", ("normal", s, 1.0))
    scale = _E8M0 if scale_dtype == "e8m0" else _E4M3_SCALE
    return (operand("a", a_fmt, seed), operand("b", b_fmt, seed + 1),
            Array("sa", (128, k // vec), "uint8", (scale[0], seed + 2, *scale[2:])),
            Array("sb", (128, k // vec), "uint8", (scale[0], seed + 3, *scale[2:])),
            Array("c", (128, 128), "float32", output=True))


TRITON39 = [
    Case("attention_fwd_f16_sm80", "triton/attention_fwd_f16_sm80.ptx", "attention_fwd", "sm_80",
         grid=(2, 2, 1), block=(128, 1, 1), smem=24576, source="triton/kernels.py:attention_fwd",
         params=(*_qkv(20), Array("o", (2, 128, 64), "float16", output=True),
                 Scalar("seq", "u32", 128), Scalar("sm_scale", "f32", 0.125), *_triton_scratch()),
         reference=_attention, tolerance={"o": (2e-3, 2e-3)},
         notes="attention_fwd_f16_sm90 for sm_80: mma.sync m16n8k16, cp.async, ldmatrix"),
    Case("histogram_sm80", "triton/histogram_sm80.ptx", "histogram", "sm_80",
         grid=(2, 1, 1), block=(128, 1, 1), smem=128, source="triton/kernels.py:histogram",
         params=(Array("x", (512,), "int32", ("randint", 23, 0, 32)), Array("out", (32,), "int32", output=True),
                 *_triton_scratch()),
         reference=lambda a: {"out": np.bincount(a["x"], minlength=32)}, tolerance={"out": (0, 0)},
         notes="32 bins in shared memory, zeroed by every warp, atom.shared.add per element, then "
               "one atom.global.add per bin per program"),
    Case("scale_f16_sm80", "triton/scale_f16_sm80.ptx", "scale_f16", "sm_80",
         grid=(2, 1, 1), block=(128, 1, 1), source="triton/kernels.py:scale_f16",
         params=(Array("x", (512,), "float16", ("normal", 27, 1.0)), Array("out", (512,), "float16", output=True),
                 Scalar("alpha", "f16", 0.3), *_triton_scratch()),
         # the product of two fp16 values is exact in fp32: one rounding to fp16, as mul.f16
         reference=lambda a: {"out": (a["x"].astype(np.float32) * np.float32(np.float16(0.3))).astype(np.float16)},
         tolerance={"out": (0, 0)},
         notes="an fp16 scalar param: .param .align 2 .b8 scale_f16_param_2[2], ld.param.b16, "
               "mul.f16"),
    Case("fp8_convert_sm89", "triton/fp8_convert_sm89.ptx", "fp8_convert", "sm_89",
         grid=(2, 1, 1), block=(128, 1, 1), source="triton/kernels.py:fp8_convert",
         params=(Array("x", (256,), "float32", ("normal", 24, 200.0)),
                 Array("e4", (256,), "float8_e4m3fn", output=True), Array("e5", (256,), "float8_e5m2", output=True),
                 Array("a4", (256,), "float8_e4m3fn", ("normal", 25, 8.0)),
                 Array("a5", (256,), "float8_e5m2", ("normal", 26, 8.0)),
                 Array("d4", (256,), "float32", output=True), Array("d5", (256,), "float32", output=True),
                 *_triton_scratch()),
         reference=_fp8_convert, tolerance={n: (0, 0) for n in ("e4", "e5", "d4", "d5")},
         notes="one element per thread: cvt.rn.satfinite.e4m3x2.f32 / e5m2x2 with the second "
               "source undefined (LLVM undef), st.global.b8 of the defined byte; x = 200 N(0, 1) "
               "saturates some e4m3 values at 448"),
    # ---- sm_90a
    Case("matmul_persistent_host_f16_sm90", "triton/matmul_persistent_host_f16_sm90.ptx",
         "matmul_persistent_host", "sm_90a", grid=(2, 1, 1), block=(128, 1, 1), smem=24592,
         source="triton/kernels.py:matmul_persistent_host",
         params=(*_triton_desc("a_desc", "a", (128, 64), "FLOAT16", 2, (64, 32), "64B"),
                 *_triton_desc("b_desc", "b", (128, 64), "FLOAT16", 2, (64, 32), "64B"),
                 *_triton_desc("c_desc", "c", (128, 128), "FLOAT16", 2, (64, 64), "128B"),
                 *_mnk(128, 128, 64), *_triton_scratch()),
         buffers=_abt(128, 128, 64, "float16", 30), reference=_ABT, tolerance={"c": _MM16},
         notes="2 programs over 4 tiles of 64x64 (2 each), BK=32; TMA loads and stores"),
    Case("matmul_persistent_device_f16_sm90", "triton/matmul_persistent_device_f16_sm90.ptx",
         "matmul_persistent_device", "sm_90a", grid=(2, 1, 1), block=(128, 1, 1), smem=24592,
         source="triton/kernels.py:matmul_persistent_device",
         params=(*_abt(128, 128, 64, "float16", 32), *_mnk(128, 128, 64), *_triton_scratch(2 * 384, 128)),
         reference=_ABT, tolerance={"c": _MM16},
         notes="matmul_persistent_host with tensor maps made on the device (tensormap.replace, "
               "cp_fenceproxy into 384 scratch bytes per program)"),
    Case("matmul_ws_f16_sm90", "triton/matmul_ws_f16_sm90.ptx", "matmul_ws", "sm_90a",
         grid=(2, 1, 1), block=(384, 1, 1), smem=69792, source="triton/kernels.py:matmul_ws",
         params=(*_triton_desc("a_desc", "a", (128, 64), "FLOAT16", 2, (64, 32), "64B"),
                 *_triton_desc("b_desc", "b", (128, 64), "FLOAT16", 2, (128, 32), "64B"),
                 *_triton_desc("c_desc", "c", (128, 128), "FLOAT16", 2, (64, 64), "128B"),
                 Scalar("K", "u32", 64), *_triton_scratch()),
         buffers=_abt(128, 128, 64, "float16", 34), reference=_ABT, tolerance={"c": _MM16},
         notes="warp_specialize=True on the K loop, BM=64 BN=128 BK=32, num_warps=4: 12 warps "
               "(the default warpgroup, a TMA producer and an MMA consumer), setmaxnreg "
               "dec/inc per partition"),
    Case("matmul_fp8_sm90", "triton/matmul_fp8_sm90.ptx", "matmul_tma_host_bt", "sm_90a",
         grid=(2, 1, 1), block=(128, 1, 1), smem=16400, source="triton/kernels.py:matmul_tma_host_bt",
         params=(*_triton_desc("a_desc", "a", (128, 128), "UINT8", 1, (64, 64), "64B"),
                 *_triton_desc("b_desc", "b", (64, 128), "UINT8", 1, (64, 64), "64B"),
                 *_triton_desc("c_desc", "c", (128, 64), "FLOAT32", 4, (64, 32), "128B"),
                 Scalar("K", "u32", 128), *_triton_scratch()),
         buffers=_abt(128, 64, 128, "float8_e4m3fn", 36, out="float32"), reference=_ABT,
         tolerance={"c": _MM8}, notes="e4m3 x e4m3 wgmma m64n64k32 from TMA (fp8 maps are UINT8)"),
    # ---- sm_100a
    Case("matmul_ptr_f16_sm100", "triton/matmul_ptr_f16_sm100.ptx", "matmul_ptr", "sm_100a",
         grid=(1, 2, 1), block=(128, 1, 1), smem=24584, source="triton/kernels.py:matmul_ptr",
         params=(Array("a", (128, 128), "float16", ("normal", 40, 1.0)),
                 Array("b", (128, 128), "float16", ("normal", 41, 1.0)),
                 Array("c", (128, 128), "float32", output=True), *_mnk(128, 128, 128),
                 Scalar("stride_am", "u32", 128), Scalar("stride_bk", "u32", 128),
                 Scalar("stride_cm", "u32", 128), *_triton_scratch()),
         reference=lambda a: {"c": _mm(a["a"], a["b"])}, tolerance={"c": (1e-4, 4e-4)},
         notes="BM=128 BN=64 BK=64: tcgen05.mma kind::f16 into TMEM, tcgen05.ld 32x32b.x64 "
               "(K = 128: fp32 sums of 128 exact products)"),
    Case("matmul_tma_host_f16_sm100", "triton/matmul_tma_host_f16_sm100.ptx", "matmul_tma_host",
         "sm_100a", grid=(1, 2, 1), block=(128, 1, 1), smem=32768, source="triton/kernels.py:matmul_tma_host",
         params=(*_triton_desc("a_desc", "a", (128, 64), "FLOAT16", 2, (128, 32), "64B"),
                 *_triton_desc("b_desc", "b", (64, 128), "FLOAT16", 2, (32, 64), "128B"),
                 *_triton_desc("c_desc", "c", (128, 128), "FLOAT32", 4, (128, 32), "128B"),
                 Scalar("K", "u32", 64), *_triton_scratch()),
         buffers=(Array("a", (128, 64), "float16", ("normal", 42, 1.0)),
                  Array("b", (64, 128), "float16", ("normal", 43, 1.0)),
                  Array("c", (128, 128), "float32", output=True)),
         reference=lambda a: {"c": _mm(a["a"], a["b"])}, tolerance={"c": _MM32},
         notes="BM=128 BN=64 BK=32, B N-major; TMA loads, tcgen05.mma, TMA store of C"),
    Case("attention_fwd_f16_sm100", "triton/attention_fwd_f16_sm100.ptx", "attention_fwd", "sm_100a",
         grid=(1, 2, 1), block=(128, 1, 1), smem=49184, source="triton/kernels.py:attention_fwd",
         params=(*_qkv(44), Array("o", (2, 128, 64), "float16", output=True),
                 Scalar("seq", "u32", 128), Scalar("sm_scale", "f32", 0.125), *_triton_scratch()),
         reference=_attention, tolerance={"o": (2e-3, 2e-3)},
         notes="BM=128 BN=64: S and O in TMEM, P stored back to TMEM (tcgen05.st) for P V"),
    Case("matmul_persistent_host_f16_sm100", "triton/matmul_persistent_host_f16_sm100.ptx",
         "matmul_persistent_host", "sm_100a", grid=(2, 1, 1), block=(128, 1, 1), smem=40992,
         source="triton/kernels.py:matmul_persistent_host",
         params=(*_triton_desc("a_desc", "a", (256, 64), "FLOAT16", 2, (128, 32), "64B"),
                 *_triton_desc("b_desc", "b", (128, 64), "FLOAT16", 2, (64, 32), "64B"),
                 *_triton_desc("c_desc", "c", (256, 128), "FLOAT16", 2, (128, 64), "128B"),
                 *_mnk(256, 128, 64), *_triton_scratch()),
         buffers=_abt(256, 128, 64, "float16", 46), reference=_ABT, tolerance={"c": _MM16},
         notes="2 programs over 4 tiles of 128x64 (2 each), BK=32"),
    Case("matmul_persistent_device_f16_sm100", "triton/matmul_persistent_device_f16_sm100.ptx",
         "matmul_persistent_device", "sm_100a", grid=(2, 1, 1), block=(128, 1, 1), smem=24608,
         source="triton/kernels.py:matmul_persistent_device",
         params=(*_abt(128, 128, 64, "float16", 48), *_mnk(128, 128, 64), *_triton_scratch(2 * 384, 128)),
         reference=_ABT, tolerance={"c": _MM16},
         notes="BM=BN=64 (tcgen05.ld 16x32bx2), device-made tensor maps, 2 tiles per program"),
    Case("matmul_ws_f16_sm100", "triton/matmul_ws_f16_sm100.ptx", "matmul_ws", "sm_100a",
         grid=(1, 1, 1), block=(256, 1, 1), smem=32956, source="triton/kernels.py:matmul_ws",
         params=(*_triton_desc("a_desc", "a", (128, 64), "FLOAT16", 2, (128, 32), "64B"),
                 *_triton_desc("b_desc", "b", (128, 64), "FLOAT16", 2, (128, 32), "64B"),
                 *_triton_desc("c_desc", "c", (128, 128), "FLOAT16", 2, (128, 64), "128B"),
                 Scalar("K", "u32", 64), *_triton_scratch()),
         buffers=_abt(128, 128, 64, "float16", 50), reference=_ABT, tolerance={"c": _MM16},
         notes="warp_specialize=True: 4 default warps + 1-warp load and MMA partitions "
               "(setmaxnreg), 8 warps in all"),
    Case("matmul_fp8_sm100", "triton/matmul_fp8_sm100.ptx", "matmul_tma_host_bt", "sm_100a",
         grid=(1, 2, 1), block=(128, 1, 1), smem=32768, source="triton/kernels.py:matmul_tma_host_bt",
         params=(*_triton_desc("a_desc", "a", (128, 128), "UINT8", 1, (128, 64), "64B"),
                 *_triton_desc("b_desc", "b", (128, 128), "UINT8", 1, (64, 64), "64B"),
                 *_triton_desc("c_desc", "c", (128, 128), "FLOAT32", 4, (128, 32), "128B"),
                 Scalar("K", "u32", 128), *_triton_scratch()),
         buffers=_abt(128, 128, 128, "float8_e4m3fn", 52, out="float32"), reference=_ABT,
         tolerance={"c": _MM8}, notes="e4m3 x e4m3: tcgen05.mma kind::f8f6f4"),
    Case("matmul_mxfp8_sm100", "triton/matmul_mxfp8_sm100.ptx", "matmul_block_scaled", "sm_100a",
         grid=(1, 1, 1), block=(128, 1, 1), smem=33280, source="triton/kernels.py:matmul_block_scaled",
         params=(*_bs_arrays("e4m3", "e4m3", "e8m0", 32, 54), *_mnk(128, 128, 256), *_triton_scratch()),
         reference=_block_scaled("e4m3", "e4m3", "e8m0", 32), tolerance={"c": _BS},
         notes="mxfp8: e4m3 x e4m3 with e8m0 scales per 32 K elements; scales to TMEM with "
               "tcgen05.st, tcgen05.mma kind::mxf8f6f4.block_scale.block32; K = 256 in two steps"),
    Case("matmul_nvfp4_sm100", "triton/matmul_nvfp4_sm100.ptx", "matmul_block_scaled", "sm_100a",
         grid=(1, 1, 1), block=(128, 1, 1), smem=17408, source="triton/kernels.py:matmul_block_scaled",
         params=(*_bs_arrays("e2m1", "e2m1", "e4m3", 16, 56), *_mnk(128, 128, 256), *_triton_scratch()),
         reference=_block_scaled("e2m1", "e2m1", "e4m3", 16), tolerance={"c": _BS},
         notes="nvfp4: packed e2m1 x e2m1 with e4m3 scales per 16 K elements: kind::mxf4nvf4."
               "block_scale.block16"),
    Case("matmul_mixed_fp8_fp4_sm100", "triton/matmul_mixed_fp8_fp4_sm100.ptx", "matmul_block_scaled",
         "sm_100a", grid=(1, 1, 1), block=(128, 1, 1), smem=33280,
         source="triton/kernels.py:matmul_block_scaled",
         params=(*_bs_arrays("e4m3", "e2m1", "e8m0", 32, 58), *_mnk(128, 128, 256), *_triton_scratch()),
         reference=_block_scaled("e4m3", "e2m1", "e8m0", 32), tolerance={"c": _BS},
         notes="e4m3 x e2m1 with e8m0 scales: kind::mxf8f6f4.block_scale.block32 (fp4 unpacked "
               "to a byte per element in shared memory by the threads)"),
    _bs_tma_case("matmul_mxfp8_tma_sm100", "e4m3", "e4m3", "e8m0", 32, 33800, 60,
                 "mxfp8 through TMA: operands 128B-swizzled, scales by 5-D maps "
                 "(cp.async.bulk.tensor.5d) and tcgen05.cp .warpx4.32x128b to TMEM"),
    _bs_tma_case("matmul_nvfp4_tma_sm100", "e2m1", "e2m1", "e4m3", 16, 18440, 66,
                 "nvfp4 through TMA: packed fp4 operands as UINT8 maps (64B swizzle), e4m3 "
                 "scales by 5-D maps and tcgen05.cp"),
    _bs_tma_case("matmul_mixed_fp8_fp4_tma_sm100", "e4m3", "e2m1", "e8m0", 32, 33800, 72,
                 "e4m3 x e2m1 through TMA: B's map is 16U4_ALIGN16B (each 8 bytes of packed fp4 "
                 "land in 16 bytes of shared memory), scales by 5-D maps and tcgen05.cp"),
]
CASES += TRITON39

CASE = {c.name: c for c in CASES}
