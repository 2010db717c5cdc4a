"""Triton GEMMs: the tutorial matmul (mma.sync on sm_80, wgmma on sm_90a, tcgen05 on
sm_100a), fp8 and int8 variants, a matmul with fused bias + activation, a persistent
matmul, and a flash-attention forward pass."""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    gsize = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % gsize)
    pid_n = (pid % group) // gsize
    offs_m = (pid_m * BM + tl.arange(0, BM)) % M
    offs_n = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def int8_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def matmul_bias_relu(a_ptr, b_ptr, bias_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    acc += tl.load(bias_ptr + rn)[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.bfloat16))


@triton.jit
def persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, NUM_SMS: tl.constexpr,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    start = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    for tile in tl.range(start, tiles_m * tiles_n, NUM_SMS, flatten=True):
        pm = tile // tiles_n
        pn = tile % tiles_n
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=rm[:, None] < M, other=0.0)
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq, sm_scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * seq * D
    rm = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32) + 1.0
    acc = tl.zeros([BM, D], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, seq, BN):
        rn = start_n + tl.arange(0, BN)
        k = tl.load(k_ptr + base + rn[None, :] * D + rd[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], acc.to(tl.float16))


def _mm_sig(a, b, c):
    return {"a_ptr": a, "b_ptr": b, "c_ptr": c, "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
            "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr", "stride_cm": "i32",
            "stride_cn": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "GROUP_M": "constexpr"}


_MM = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "GROUP_M": 8}
_ATT = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "seq": "i32", "sm_scale": "fp32",
        "D": "constexpr", "BM": "constexpr", "BN": "constexpr"}
_PM = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
       "NUM_SMS": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
CONFIGS = [
    ("matmul_f16_sm90", matmul_kernel, _mm_sig("*fp16", "*fp16", "*fp16"), dict(_MM, BM=128, BN=128, BK=64), 90,
     {"num_warps": 8, "num_stages": 3}),
    ("matmul_bf16_sm90", matmul_kernel, _mm_sig("*bf16", "*bf16", "*fp32"), dict(_MM, BM=64, BN=128, BK=64), 90,
     {"num_warps": 4, "num_stages": 4}),
    ("matmul_f16_sm80", matmul_kernel, _mm_sig("*fp16", "*fp16", "*fp16"), dict(_MM, BM=128, BN=64, BK=32), 80,
     {"num_warps": 4, "num_stages": 3}),
    ("matmul_tf32_sm80", matmul_kernel, _mm_sig("*fp32", "*fp32", "*fp32"), dict(_MM, BM=64, BN=64, BK=32), 80,
     {"num_warps": 4, "num_stages": 2}),
    ("matmul_f16_sm100", matmul_kernel, _mm_sig("*fp16", "*fp16", "*fp16"), dict(_MM, BM=128, BN=128, BK=64), 100,
     {"num_warps": 4, "num_stages": 3}),
    ("matmul_fp8_sm90", matmul_kernel, _mm_sig("*fp8e4nv", "*fp8e4nv", "*fp16"), dict(_MM, BM=128, BN=64, BK=128), 90,
     {"num_warps": 4, "num_stages": 3}),
    ("matmul_fp8_sm100", matmul_kernel, _mm_sig("*fp8e4nv", "*fp8e4nv", "*bf16"), dict(_MM, BM=128, BN=128, BK=128), 100,
     {"num_warps": 4, "num_stages": 2}),
    ("int8_matmul_sm90", int8_matmul, {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "K": "i32", "BM": "constexpr",
                                       "BN": "constexpr", "BK": "constexpr"}, {"BM": 64, "BN": 64, "BK": 64}, 90, {}),
    ("int8_matmul_sm80", int8_matmul, {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "K": "i32", "BM": "constexpr",
                                       "BN": "constexpr", "BK": "constexpr"}, {"BM": 64, "BN": 64, "BK": 64}, 80, {}),
    ("matmul_bias_relu_sm90", matmul_bias_relu, {"a_ptr": "*bf16", "b_ptr": "*bf16", "bias_ptr": "*fp32", "c_ptr": "*bf16",
                                                 "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
     {"BM": 64, "BN": 128, "BK": 32}, 90, {"num_stages": 2}),
    ("persistent_matmul_sm90", persistent_matmul, _PM, {"NUM_SMS": 132, "BM": 128, "BN": 128, "BK": 64}, 90,
     {"num_warps": 8, "num_stages": 3}),
    ("persistent_matmul_sm100", persistent_matmul, _PM, {"NUM_SMS": 148, "BM": 128, "BN": 128, "BK": 64}, 100,
     {"num_warps": 4, "num_stages": 3}),
    ("attention_fwd_sm90", attention_fwd, _ATT, {"D": 64, "BM": 128, "BN": 64}, 90, {"num_warps": 8, "num_stages": 2}),
    ("attention_fwd_sm80", attention_fwd, _ATT, {"D": 64, "BM": 64, "BN": 64}, 80, {"num_warps": 4, "num_stages": 2}),
    ("attention_fwd_sm100", attention_fwd, _ATT, {"D": 64, "BM": 128, "BN": 64}, 100, {"num_warps": 4, "num_stages": 2}),
]
