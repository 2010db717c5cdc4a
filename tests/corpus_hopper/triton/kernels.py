"""Triton kernels for the Hopper / Blackwell corpus (sm_80 .. sm_100a), written for this project.

Each is compiled without a GPU by ``tests/corpus_hopper/regenerate.py`` from the ``CONFIGS``
list: ``(name, jit_fn, signature, constexprs, capability, options)``. Shapes are
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

For issue 22 (Triton 3.9 output that hardware runs right must run right in the interpreter)
the same math for sm_80 (mma.sync) and sm_100a (tcgen05 / TMEM), and:

* ``histogram`` (sm_80): ``tl.histogram`` into shared bins, atomics into the output;
* ``scale_f16`` (sm_80): an fp16 scalar param (``.param .b8 name[2]``);
* ``fp8_convert`` (sm_89): fp32 -> e4m3 / e5m2 and back, one element per thread;
* ``matmul_tma_host_bt``: C = A @ B^T from host descriptors (the fp8 matmuls);
* ``matmul_persistent_host`` / ``matmul_persistent_device``: a fixed number of programs walk
  the output tiles, with host descriptors or ``tl.make_tensor_descriptor``;
* ``matmul_ws``: the K loop with ``tl.range(..., warp_specialize=True)``;
* ``matmul_block_scaled`` / ``matmul_block_scaled_tma``: ``tl.dot_scaled`` (mxfp8: e4m3 with
  e8m0 scales per 32; nvfp4: e2m1 with e4m3 scales per 16; mixed e4m3 x e2m1), everything by
  pointer loads (scales to TMEM with ``tcgen05.st``) or through host descriptors with the
  scales pre-arranged for ``tcgen05.cp`` (the fp4 operand of the mixed product then has a
  16U4_ALIGN16B map).
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


# ----------------------------------------------------------------------------- issue 22: sm_80, sm_89,
# and the sm_90a / sm_100a kernels of Triton 3.9's tutorials (our own code, the same math)
@triton.jit
def histogram(x_ptr, out_ptr, NBINS: tl.constexpr, BLOCK: tl.constexpr):
    """Counts of the values of x (all in [0, NBINS)) over BLOCK elements per program, added to
    out with one atomic per bin; ``tl.histogram`` zeroes its shared bins from every warp."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = tl.histogram(tl.load(x_ptr + offs), NBINS)
    tl.atomic_add(out_ptr + tl.arange(0, NBINS), h)



@triton.jit
def scale_f16(x_ptr, out_ptr, alpha, BLOCK: tl.constexpr):
    """out = alpha * x in fp16 with alpha an fp16 scalar (Triton passes it as ``.b8 [2]``)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * alpha)

@triton.jit
def fp8_convert(x_ptr, e4_ptr, e5_ptr, a4_ptr, a5_ptr, d4_ptr, d5_ptr, BLOCK: tl.constexpr):
    """fp32 -> e4m3 / e5m2 (round to nearest even, saturating), and e4m3 / e5m2 -> fp32."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv))
    tl.store(e5_ptr + offs, x.to(tl.float8e5))
    tl.store(d4_ptr + offs, tl.load(a4_ptr + offs).to(tl.float32))
    tl.store(d5_ptr + offs, tl.load(a5_ptr + offs).to(tl.float32))


@triton.jit
def matmul_tma_host_bt(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B^T with B^T stored [N, K] (K-major, as fp8 wgmma needs), all host descriptors."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([pid_n * BN, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def matmul_persistent_host(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                           BK: tl.constexpr, NPROG: tl.constexpr):
    """Persistent C = A @ B^T: NPROG programs walk the (M / BM) x (N / BN) tiles with stride
    NPROG; host descriptors, B^T stored [N, K]."""
    n_tiles_n = tl.cdiv(N, BN)
    n_tiles = tl.cdiv(M, BM) * n_tiles_n
    for tile in range(tl.program_id(0), n_tiles, NPROG):
        off_m = (tile // n_tiles_n) * BM
        off_n = (tile % n_tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([off_n, k]).T, acc)
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_persistent_device(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                             BK: tl.constexpr, NPROG: tl.constexpr):
    """``matmul_persistent_host`` with descriptors made on the device (tl.make_tensor_descriptor)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    n_tiles_n = tl.cdiv(N, BN)
    n_tiles = tl.cdiv(M, BM) * n_tiles_n
    for tile in range(tl.program_id(0), n_tiles, NPROG):
        off_m = (tile // n_tiles_n) * BM
        off_n = (tile % n_tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([off_n, k]).T, acc)
        c_desc.store([off_m, off_n], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_ws(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B^T with the K loop warp-specialized (a TMA producer partition, an MMA consumer)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([pid_n * BN, k]).T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def matmul_block_scaled(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                        A_FMT: tl.constexpr, B_FMT: tl.constexpr, VEC: tl.constexpr,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = (A * SA) @ (B * SB)^T by tl.dot_scaled. A is [M, K] (fp4: [M, K / 2] bytes, the
    first element in the low nibble), B^T is [N, K] likewise; SA [M, K / VEC] and SB
    [N, K / VEC] scale each group of VEC consecutive K elements (e8m0 bytes, or e4m3 for
    nvfp4)."""
    A_DIV: tl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_DIV: tl.constexpr = 2 if B_FMT == "e2m1" else 1
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        ra = k // A_DIV + tl.arange(0, BK // A_DIV)
        rb = k // B_DIV + tl.arange(0, BK // B_DIV)
        rs = k // VEC + tl.arange(0, BK // VEC)
        a = tl.load(a_ptr + rm[:, None] * (K // A_DIV) + ra[None, :])
        b = tl.load(b_ptr + rn[:, None] * (K // B_DIV) + rb[None, :])
        sa = tl.load(sa_ptr + rm[:, None] * (K // VEC) + rs[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // VEC) + rs[None, :])
        acc = tl.dot_scaled(a, sa, A_FMT, b.T, sb, B_FMT, acc, rhs_k_pack=True)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)



@triton.jit
def matmul_block_scaled_tma(a_desc, b_desc, sa_desc, sb_desc, c_ptr, M, N, K, A_FMT: tl.constexpr,
                            B_FMT: tl.constexpr, VEC: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                            BK: tl.constexpr):
    """``matmul_block_scaled`` with every operand through host tensor descriptors, the scales
    laid out as the tcgen05 scale-factor layout wants them so that they go to TMEM by
    ``tcgen05.cp`` (the scheme of Triton's block-scaled tutorial, our own code): the scale of
    row ``m`` and K group ``g`` sits at ``[0, m // 128, g // 4, (m % 32) * 16 + (m // 32 % 4) * 4
    + g % 4]`` of a [1, M / 128, K / VEC / 4, 512] array (the 512 as [2, 256]). An fp4
    operand of the fp8 x fp4 product lands in shared memory padded to a byte per element
    (its map is 16U4_ALIGN16B)."""
    A_DIV: tl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_DIV: tl.constexpr = 2 if B_FMT == "e2m1" else 1
    SK: tl.constexpr = BK // VEC // 4
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k // A_DIV])
        b = b_desc.load([pid_n * BN, k // B_DIV])
        sa = sa_desc.load([0, pid_m * (BM // 128), k // VEC // 4, 0, 0])
        sb = sb_desc.load([0, pid_n * (BN // 128), k // VEC // 4, 0, 0])
        # [.., SK, 32, 4 (row block), 4 (group)] -> rows (row block, 32), groups (SK, 4)
        sa = sa.reshape(BM // 128, SK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BM, BK // VEC)
        sb = sb.reshape(BN // 128, SK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BN, BK // VEC)
        acc = tl.dot_scaled(a, sa, A_FMT, b.T, sb, B_FMT, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _tma_cfg(name, fn, a, b, c, blocks, capability, extra=(), options=None, **kw):
    """A config of a kernel whose A, B^T, C are host descriptors (``blocks``: BM, BN, BK)."""
    bm, bn, bk = blocks
    sig = {"a_desc": _desc(a, (bm, bk)), "b_desc": _desc(b, (bn, bk)), "c_desc": _desc(c, (bm, bn))}
    sig.update({n: "i32" for n in extra})
    sig["K"] = "i32"
    sig.update(BM="constexpr", BN="constexpr", BK="constexpr")
    cx = {"BM": bm, "BN": bn, "BK": bk, **kw}
    sig.update({n: "constexpr" for n in kw})
    return dict(name=name, fn=fn, signature=sig, constexprs=cx, divisible=(), capability=capability,
                options=options or {"num_warps": 4, "num_stages": 2})


def _persistent_device(name, dtype, capability):
    return dict(name=name, fn=matmul_persistent_device,
                signature={"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", "M": "i32",
                           "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr",
                           "NPROG": "constexpr"},
                constexprs={"BM": 64, "BN": 64, "BK": 32, "NPROG": 2}, divisible=_ALL16,
                capability=capability, options={"num_warps": 4, "num_stages": 2})


def _block_scaled(name, a_fmt, b_fmt, scale, vec):
    ty = {"e4m3": "*fp8e4nv", "e2m1": "*u8"}
    return dict(name=name, fn=matmul_block_scaled,
                signature={"a_ptr": ty[a_fmt], "b_ptr": ty[b_fmt], "sa_ptr": scale, "sb_ptr": scale,
                           "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32", "A_FMT": "constexpr",
                           "B_FMT": "constexpr", "VEC": "constexpr", "BM": "constexpr", "BN": "constexpr",
                           "BK": "constexpr"},
                constexprs={"A_FMT": a_fmt, "B_FMT": b_fmt, "VEC": vec, "BM": 128, "BN": 128, "BK": 128},
                divisible=_ALL16, capability=100, options={"num_warps": 4, "num_stages": 1})


def _block_scaled_tma(name, a_fmt, b_fmt, scale, vec):
    elem = {"e4m3": "fp8e4nv", "e2m1": "u8"}
    div = {"e4m3": 1, "e2m1": 2}
    sk = 128 // vec // 4
    return dict(name=name, fn=matmul_block_scaled_tma,
                signature={"a_desc": _desc(elem[a_fmt], (128, 128 // div[a_fmt])),
                           "b_desc": _desc(elem[b_fmt], (128, 128 // div[b_fmt])),
                           "sa_desc": f"tensordesc<{scale}[1, 1, {sk}, 2, 256]>",
                           "sb_desc": f"tensordesc<{scale}[1, 1, {sk}, 2, 256]>", "c_ptr": "*fp32",
                           "M": "i32", "N": "i32", "K": "i32", "A_FMT": "constexpr", "B_FMT": "constexpr",
                           "VEC": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
                constexprs={"A_FMT": a_fmt, "B_FMT": b_fmt, "VEC": vec, "BM": 128, "BN": 128, "BK": 128},
                divisible=("c_ptr", "M", "N", "K"), capability=100, options={"num_warps": 4, "num_stages": 1})

_ATTN_SIG = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "seq": "i32",
             "sm_scale": "fp32", "D": "constexpr", "BM": "constexpr", "BN": "constexpr"}
_ATTN_DIV = ("q_ptr", "k_ptr", "v_ptr", "o_ptr", "seq")
_MM_PERSIST = dict(extra=("M", "N"), NPROG=2)

CONFIGS += [
    # sm_80: mma.sync flash attention, and a histogram
    dict(name="attention_fwd_f16_sm80", fn=attention_fwd, signature=_ATTN_SIG,
         constexprs={"D": 64, "BM": 64, "BN": 64}, divisible=_ATTN_DIV, capability=80,
         options={"num_warps": 4, "num_stages": 2}),
    dict(name="histogram_sm80", fn=histogram, signature={"x_ptr": "*i32", "out_ptr": "*i32",
                                                         "NBINS": "constexpr", "BLOCK": "constexpr"},
         constexprs={"NBINS": 32, "BLOCK": 256}, divisible=_ALL16, capability=80,
         options={"num_warps": 4, "num_stages": 1}),
    dict(name="scale_f16_sm80", fn=scale_f16, signature={"x_ptr": "*fp16", "out_ptr": "*fp16", "alpha": "fp16",
                                                         "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}, divisible=("x_ptr", "out_ptr"), capability=80,
         options={"num_warps": 4, "num_stages": 1}),
    # sm_89: fp8 conversions both ways (cvt.rn.satfinite.e4m3x2.f32, cvt.rn.f16x2.e4m3x2, ...)
    dict(name="fp8_convert_sm89", fn=fp8_convert,
         signature={"x_ptr": "*fp32", "e4_ptr": "*fp8e4nv", "e5_ptr": "*fp8e5", "a4_ptr": "*fp8e4nv",
                    "a5_ptr": "*fp8e5", "d4_ptr": "*fp32", "d5_ptr": "*fp32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 128}, divisible=_ALL16, capability=89,
         options={"num_warps": 4, "num_stages": 1}),
    # sm_90a: persistent (host / device descriptors), warp-specialized, fp8
    _tma_cfg("matmul_persistent_host_f16_sm90", matmul_persistent_host, "fp16", "fp16", "fp16",
             (64, 64, 32), 90, **_MM_PERSIST),
    _persistent_device("matmul_persistent_device_f16_sm90", "fp16", 90),
    # BM=64 with 4 warps: a producer warpgroup and consumers, 12 warps, setmaxnreg (BM=128 with 8
    # warps compiles to a plain pipelined loop; BM=128 with 4 warps fails in Triton 3.9:
    # "descriptor block and tensor must have the same number of elements")
    _tma_cfg("matmul_ws_f16_sm90", matmul_ws, "fp16", "fp16", "fp16", (64, 128, 32), 90,
             options={"num_warps": 4, "num_stages": 3}),
    _tma_cfg("matmul_fp8_sm90", matmul_tma_host_bt, "fp8e4nv", "fp8e4nv", "fp32", (64, 64, 64), 90),
    # sm_100a: tcgen05 / TMEM versions of all of them, and the block-scaled matmuls
    dict(name="matmul_ptr_f16_sm100", fn=matmul_ptr, signature=dict(
        a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp32", **_MM_PTR),
         constexprs={"BM": 128, "BN": 64, "BK": 64}, divisible=_ALL16, capability=100,
         options={"num_warps": 4, "num_stages": 1}),
    dict(name="matmul_tma_host_f16_sm100", fn=matmul_tma_host,
         signature={"a_desc": _desc("fp16", (128, 32)), "b_desc": _desc("fp16", (32, 64)),
                    "c_desc": _desc("fp32", (128, 64)), "K": "i32", "BM": "constexpr", "BN": "constexpr",
                    "BK": "constexpr"},
         constexprs={"BM": 128, "BN": 64, "BK": 32}, divisible=(), capability=100,
         options={"num_warps": 4, "num_stages": 2}),
    dict(name="attention_fwd_f16_sm100", fn=attention_fwd, signature=_ATTN_SIG,
         constexprs={"D": 64, "BM": 128, "BN": 64}, divisible=_ATTN_DIV, capability=100,
         options={"num_warps": 4, "num_stages": 2}),
    _tma_cfg("matmul_persistent_host_f16_sm100", matmul_persistent_host, "fp16", "fp16", "fp16",
             (128, 64, 32), 100, **_MM_PERSIST),
    _persistent_device("matmul_persistent_device_f16_sm100", "fp16", 100),
    _tma_cfg("matmul_ws_f16_sm100", matmul_ws, "fp16", "fp16", "fp16", (128, 128, 32), 100,
             options={"num_warps": 4, "num_stages": 2}),
    _tma_cfg("matmul_fp8_sm100", matmul_tma_host_bt, "fp8e4nv", "fp8e4nv", "fp32", (128, 64, 64), 100),
    _block_scaled("matmul_mxfp8_sm100", "e4m3", "e4m3", "*u8", 32),
    _block_scaled("matmul_nvfp4_sm100", "e2m1", "e2m1", "*fp8e4nv", 16),
    _block_scaled("matmul_mixed_fp8_fp4_sm100", "e4m3", "e2m1", "*u8", 32),
]

CONFIGS += [
    _block_scaled_tma("matmul_mxfp8_tma_sm100", "e4m3", "e4m3", "u8", 32),
    _block_scaled_tma("matmul_nvfp4_tma_sm100", "e2m1", "e2m1", "fp8e4nv", 16),
    _block_scaled_tma("matmul_mixed_fp8_fp4_tma_sm100", "e4m3", "e2m1", "u8", 32),
]
