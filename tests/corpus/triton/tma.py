"""Triton kernels that use the Tensor Memory Accelerator: host tensor descriptors passed as
kernel arguments (CUtensorMap params, cp.async.bulk.tensor loads/stores), device-side
descriptors built with tl.make_tensor_descriptor (tensormap instructions), and a warp-
specialized pipelined GEMM on sm_100a (Triton 3.9's warp specializer fails on sm_90 here)."""
import triton
import triton.language as tl


@triton.jit
def tma_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pm * BM, k])
        b = b_desc.load([pn * BN, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def tma_copy_2d(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    tile = in_desc.load([pm * BM, pn * BN])
    out_desc.store([pm * BM, pn * BN], tile * 2)


@triton.jit
def device_desc_add(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    t = xd.load([pm * BM, pn * BN])
    yd.store([pm * BM, pn * BN], t + 1.0)


@triton.jit
def ws_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True, num_stages=3):
        a = a_desc.load([pm * BM, k])
        b = b_desc.load([pn * BN, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.bfloat16))


def _desc(dtype, shape):
    return f"tensordesc<{dtype}[{shape[0]}, {shape[1]}]>"


CONFIGS = [
    ("tma_matmul_sm90", tma_matmul, {"a_desc": _desc("fp16", (128, 64)), "b_desc": _desc("fp16", (128, 64)),
                                     "c_desc": _desc("fp16", (128, 128)), "K": "i32", "BM": "constexpr",
                                     "BN": "constexpr", "BK": "constexpr"}, {"BM": 128, "BN": 128, "BK": 64}, 90,
     {"num_warps": 8, "num_stages": 3}),
    ("tma_matmul_sm100", tma_matmul, {"a_desc": _desc("fp16", (128, 64)), "b_desc": _desc("fp16", (128, 64)),
                                      "c_desc": _desc("fp16", (128, 128)), "K": "i32", "BM": "constexpr",
                                      "BN": "constexpr", "BK": "constexpr"}, {"BM": 128, "BN": 128, "BK": 64}, 100,
     {"num_warps": 4, "num_stages": 3}),
    ("tma_copy_sm90", tma_copy_2d, {"in_desc": _desc("fp32", (64, 64)), "out_desc": _desc("fp32", (64, 64)),
                                    "BM": "constexpr", "BN": "constexpr"}, {"BM": 64, "BN": 64}, 90, {}),
    ("device_desc_sm90", device_desc_add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32",
                                           "BM": "constexpr", "BN": "constexpr"}, {"BM": 32, "BN": 64}, 90, {}),
    ("ws_matmul_sm100", ws_matmul, {"a_desc": _desc("bf16", (128, 64)), "b_desc": _desc("bf16", (128, 64)),
                                    "c_desc": _desc("bf16", (128, 128)), "K": "i32", "BM": "constexpr",
                                    "BN": "constexpr", "BK": "constexpr"}, {"BM": 128, "BN": 128, "BK": 64}, 100,
     {"num_warps": 4}),
]
