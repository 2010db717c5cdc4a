"""Triton kernels for the Hopper corpus (sm_90a), written for this project.

Each is compiled without a GPU by ``tests/corpus_hopper/regenerate.py`` from the ``CONFIGS``
list at the bottom: ``(name, jit_fn, signature, constexprs, capability, options)``. Shapes are
small (one or a few tiles) so that the CPU interpreter can run them; ``cases.py`` says how each
is launched and what it must compute.

* ``matmul_ptr``: C = A @ B from plain pointer loads. With ``num_stages=1`` Triton stages the
  operands through shared memory with ordinary stores and issues ``wgmma.mma_async`` from
  shared-memory descriptors; with ``num_stages=3`` it pipelines the loads with
  ``cp.async`` into a ring of shared-memory buffers and overlaps them with async wgmma.
* ``matmul_tma_host``: A, B and C are host tensor descriptors (``CUtensorMap`` params,
  ``cp.async.bulk.tensor`` loads through mbarriers, a TMA store of C).
* ``matmul_tma_device``: descriptors made on the device with ``tl.make_tensor_descriptor``
  (``tensormap.replace`` into the global scratch buffer, ``tensormap.cp_fenceproxy``,
  ``fence.proxy.tensormap``, then ``cp.async.bulk.tensor``).
* ``attention_fwd``: flash attention forward, one (query block, head) per program: wgmma for
  Q K^T from shared memory, P V with P from registers, online softmax in base 2.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_tma_host(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])          # [BM, BK] of A [M, K]
        b = b_desc.load([k, pid_n * BN])          # [BK, BN] of B [K, N] (N-major: wgmma transposes B)
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def matmul_tma_device(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])          # [BM, BK]
        b = b_desc.load([pid_n * BN, k])          # [BN, BK] of B^T stored [N, K] (K-major)
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq, sm_scale, D: tl.constexpr, BM: tl.constexpr,
                  BN: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    base = head * seq * D
    rm = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :])
    m_i = tl.full([BM], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634          # log2(e): exp(x) = exp2(x * log2(e))
    for start_n in range(0, seq, BN):
        rn = start_n + tl.arange(0, BN)
        kt = tl.load(k_ptr + base + rn[None, :] * D + rd[:, None])      # K^T block [D, BN]
        qk = tl.dot(q, kt) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + base + rn[:, None] * D + rd[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], acc.to(o_ptr.dtype.element_ty))


def _desc(dtype, block):
    return f"tensordesc<{dtype}[{block[0]}, {block[1]}]>"


_MM_PTR = {"M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
_ALL16 = "all"     # every pointer and integer parameter is a multiple of 16 (Triton's usual specialization)

# name -> Triton source, signature, constexprs, which params carry tt.divisibility=16, target, options
CONFIGS = [
    # one warpgroup, m64n128k16 wgmma from shared memory; operands staged with ld.global/st.shared
    dict(name="matmul_ptr_bf16_sm90", fn=matmul_ptr,
         signature=dict(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", **_MM_PTR),
         constexprs={"BM": 64, "BN": 128, "BK": 64}, divisible=_ALL16, capability=90,
         options={"num_warps": 4, "num_stages": 1}),
    # two warpgroups, cp.async ring of 3 stages overlapped with async wgmma (wait_group 1)
    dict(name="matmul_ptr_pipelined_f16_sm90", fn=matmul_ptr,
         signature=dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", **_MM_PTR),
         constexprs={"BM": 128, "BN": 128, "BK": 16}, divisible=_ALL16, capability=90,
         options={"num_warps": 8, "num_stages": 3}),
    dict(name="matmul_tma_host_f16_sm90", fn=matmul_tma_host,
         signature={"a_desc": _desc("fp16", (64, 32)), "b_desc": _desc("fp16", (32, 128)),
                    "c_desc": _desc("fp32", (64, 128)), "K": "i32", "BM": "constexpr", "BN": "constexpr",
                    "BK": "constexpr"},
         constexprs={"BM": 64, "BN": 128, "BK": 32}, divisible=(), capability=90,
         options={"num_warps": 4, "num_stages": 2}),
    dict(name="matmul_tma_device_f16_sm90", fn=matmul_tma_device,
         signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                    "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
         constexprs={"BM": 64, "BN": 64, "BK": 32}, divisible=_ALL16, capability=90,
         options={"num_warps": 4, "num_stages": 2}),
    dict(name="attention_fwd_f16_sm90", fn=attention_fwd,
         signature={"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "seq": "i32",
                    "sm_scale": "fp32", "D": "constexpr", "BM": "constexpr", "BN": "constexpr"},
         constexprs={"D": 64, "BM": 64, "BN": 64}, divisible=("q_ptr", "k_ptr", "v_ptr", "o_ptr", "seq"),
         capability=90, options={"num_warps": 4, "num_stages": 2}),
]
