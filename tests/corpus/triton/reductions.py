"""Triton row-wise kernels: fused softmax, layernorm forward, argmax/sum/max reductions,
cumulative sum (scan), histogram with atomics, a 2-D transpose through shared memory."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def layernorm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n
    var_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)
        d = tl.where(cols < n, x - mean, 0.0)
        var_acc += d * d
    rstd = 1 / tl.sqrt(tl.sum(var_acc, axis=0) / n + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < n
        w = tl.load(w_ptr + cols, mask=m)
        b = tl.load(b_ptr + cols, mask=m)
        x = tl.load(x_ptr + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(y_ptr + cols, ((x - mean) * rstd * w + b).to(tl.float16), mask=m)


@triton.jit
def argmax_kernel(x_ptr, idx_ptr, max_ptr, sum_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-1e30)
    tl.store(idx_ptr + row, tl.argmax(x, axis=0))
    tl.store(max_ptr + row, tl.max(x, axis=0))
    tl.store(sum_ptr + row, tl.sum(tl.where(cols < n_cols, x, 0.0), axis=0))


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, lock_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + (x % BINS), 1, mask=mask)
    tl.atomic_max(hist_ptr + BINS, tl.max(x, axis=0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y_ptr + rn[None, :] * M + rm[:, None], tile, mask=mask)


CONFIGS = [
    ("softmax_sm90", softmax_kernel, {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32", "out_stride": "i32",
                                      "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 90, {"num_warps": 4}),
    ("softmax_sm80", softmax_kernel, {"out_ptr": "*fp16", "in_ptr": "*fp16", "in_stride": "i32", "out_stride": "i32",
                                      "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": 4096}, 80, {"num_warps": 16}),
    ("layernorm_sm90", layernorm_fwd, {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp32", "b_ptr": "*fp32",
                                       "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "stride": "i32", "n": "i32",
                                       "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 512}, 90, {}),
    ("layernorm_sm100", layernorm_fwd, {"x_ptr": "*fp16", "y_ptr": "*fp16", "w_ptr": "*fp32", "b_ptr": "*fp32",
                                        "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "stride": "i32", "n": "i32",
                                        "eps": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 100, {"num_warps": 8}),
    ("argmax_sm90", argmax_kernel, {"x_ptr": "*fp32", "idx_ptr": "*i32", "max_ptr": "*fp32", "sum_ptr": "*fp32",
                                    "n_cols": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}, 90, {}),
    ("cumsum_sm90", cumsum_kernel, {"x_ptr": "*i32", "y_ptr": "*i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}, 90, {}),
    ("histogram_sm90", histogram_kernel, {"x_ptr": "*i32", "hist_ptr": "*i32", "lock_ptr": "*i32", "n": "i32",
                                          "BINS": "constexpr", "BLOCK": "constexpr"}, {"BINS": 64, "BLOCK": 512}, 90, {}),
    ("transpose_sm80", transpose_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32",
                                          "BM": "constexpr", "BN": "constexpr"}, {"BM": 64, "BN": 64}, 80, {}),
]
