"""mma.sync for every supported shape and type against NumPy, with fragments built from the
PTX ISA's layout formulas; ldmatrix / stmatrix / movmatrix layouts."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx.errors import MisalignedAccessError, OutOfBoundsError
from jax_pyptx.interpret.state import fp
from jax_pyptx.interpret import launch

HDR = ".version 8.4\n.target sm_90\n.address_size 64\n"   # (8.4: the fp8 mma)
LANE = np.arange(32)
G, T = LANE >> 2, LANE % 4


def layouts(shape, at):
    """(rows, cols) index arrays [32, n] for A, B, C from the ISA's fragment formulas."""
    i = lambda n: np.arange(n)[None, :]
    g, t = G[:, None], T[:, None]
    if shape == "m16n8k16" and at in ("f16", "bf16"):
        A = (g + 8 * ((i(8) // 2) % 2), t * 2 + i(8) % 2 + 8 * (i(8) // 4))
        B = (t * 2 + i(4) % 2 + 8 * (i(4) // 2), g + 0 * i(4))
    elif shape == "m16n8k8" and at in ("f16", "bf16"):
        A = (g + 8 * (i(4) // 2), t * 2 + i(4) % 2)
        B = (t * 2 + i(2), g + 0 * i(2))
    elif shape == "m16n8k8" and at == "tf32":
        A = (g + 8 * (i(4) % 2), t + 4 * (i(4) // 2))
        B = (t + 4 * i(2), g + 0 * i(2))
    elif shape == "m16n8k4" and at == "tf32":
        A = (g + 8 * i(2), t + 0 * i(2))
        B = (t + 0 * i(1), g + 0 * i(1))
    elif shape == "m16n8k32":
        A = (g + 8 * ((i(16) // 4) % 2), t * 4 + i(16) % 4 + 16 * (i(16) // 8))
        B = (t * 4 + i(8) % 4 + 16 * (i(8) // 4), g + 0 * i(8))
    elif shape == "m16n8k16":
        A = (g + 8 * (i(8) // 4), t * 4 + i(8) % 4)
        B = (t * 4 + i(4), g + 0 * i(4))
    elif shape == "m8n8k4" and at == "f64":
        A = (g + 0 * i(1), t + 0 * i(1))
        B = (t + 0 * i(1), g + 0 * i(1))
        return A, B, (g + 0 * i(2), t * 2 + i(2))
    else:
        raise ValueError(shape)
    C = (g + 8 * (i(4) // 2), t * 2 + i(4) % 2)
    return A, B, C


DT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32, "s8": np.int8, "u8": np.uint8,
      "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "f64": np.float64, "f32": np.float32,
      "s32": np.int32}


def pack(vals, dt):
    """[32, n] element values -> [32, nregs] register bit patterns (low elements first)."""
    raw = np.ascontiguousarray(vals.astype(dt)).view(np.uint8 if np.dtype(dt).itemsize == 1 else
                                                    np.dtype(f"u{np.dtype(dt).itemsize}"))
    bits = np.dtype(dt).itemsize * 8
    if bits >= 32:
        return raw.astype(np.uint64 if bits == 64 else np.uint32)
    per = 32 // bits
    raw = raw.astype(np.uint32).reshape(32, -1, per)
    return sum(raw[:, :, k] << (bits * k) for k in range(per)).astype(np.uint32)


def mma_kernel(mods, na, nb, nc, nd, rbits):
    regs = lambda p, n: "{" + ", ".join(f"%{p}{k}" for k in range(n)) + "}"
    rt = "b64" if rbits == 64 else "b32"
    cd_t = ".f64" if rbits == 64 else ".b32"
    lines = [HDR, ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)", "{",
             f".reg .{rt} %a<{na}>; .reg .{rt} %b<{nb}>; .reg {cd_t} %c<{nc}>; .reg {cd_t} %d<{nd}>;",
             ".reg .u32 %t; .reg .u64 %o, %p;", "mov.u32 %t, %tid.x;"]
    for name, n, w in (("a", na, rbits), ("b", nb, rbits), ("c", nc, rbits)):
        lines.append(f"ld.param.u64 %p, [p{name}]; mul.wide.u32 %o, %t, {n * w // 8}; add.u64 %p, %p, %o;")
        for k in range(n):
            lines.append(f"ld.global.{'b64' if w == 64 else 'b32'} %{name}{k}, [%p+{k * w // 8}];")
    lines.append(f"mma.sync.aligned.{mods} {regs('d', nd)}, {regs('a', na)}, {regs('b', nb)}, {regs('c', nc)};")
    lines.append(f"ld.param.u64 %p, [pd]; mul.wide.u32 %o, %t, {nd * rbits // 8}; add.u64 %p, %p, %o;")
    for k in range(nd):
        lines.append(f"st.global.{'b64' if rbits == 64 else 'b32'} [%p+{k * rbits // 8}], %d{k};")
    lines += ["ret;", "}"]
    return "\n".join(lines)


CASES = [
    ("m16n8k16", "f16", "f32"), ("m16n8k16", "bf16", "f32"), ("m16n8k16", "f16", "f16"),
    ("m16n8k8", "f16", "f32"), ("m16n8k8", "bf16", "f32"), ("m16n8k8", "tf32", "f32"), ("m16n8k4", "tf32", "f32"),
    ("m16n8k32", "s8", "s32"), ("m16n8k32", "u8", "s32"), ("m16n8k16", "s8", "s32"),
    ("m16n8k32", "e4m3", "f32"), ("m16n8k32", "e5m2", "f32"), ("m8n8k4", "f64", "f64"),
]


@pytest.mark.parametrize("shape,at,ct", CASES)
def test_mma(shape, at, ct):
    rng = np.random.default_rng(hash((shape, at, ct)) % 2 ** 32)
    M, N = (8, 8) if shape == "m8n8k4" else (16, 8)
    K = int(shape.split("k")[1])
    if at in ("s8", "u8"):
        A = rng.integers(-128 if at == "s8" else 0, 128 if at == "s8" else 256, (M, K))
        B = rng.integers(-128 if at == "s8" else 0, 128 if at == "s8" else 256, (K, N))
        C = rng.integers(-1000, 1000, (M, N))
    else:
        A = rng.standard_normal((M, K)).astype(DT[at]).astype(np.float64)
        B = rng.standard_normal((K, N)).astype(DT[at]).astype(np.float64)
        C = rng.standard_normal((M, N)).astype(DT[ct]).astype(np.float64)
    if at == "tf32":
        # inputs with low mantissa bits set: the tensor core ignores the 13 low bits
        A32 = (rng.standard_normal((M, K)).astype(np.float32).view(np.uint32) | 0x1FFF).view(np.float32)
        A = A32.astype(np.float64)
    (ar, ac), (br, bc), (cr, cc) = layouts(shape, at)
    fa = pack(A[ar, ac], DT[at]) if at != "tf32" else A[ar, ac].astype(np.float32).view(np.uint32)
    fb = pack(B[br, bc], DT[at]) if at != "tf32" else B[br, bc].astype(np.float32).view(np.uint32)
    fc = pack(C[cr, cc], DT[ct])
    rbits = 64 if at == "f64" else 32
    nd = fc.shape[1]
    fd = np.zeros((32, nd), np.uint64 if rbits == 64 else np.uint32)
    mods = f"{shape}.row.col.{ct}.{at}.{at}.{ct}"
    launch(mma_kernel(mods, fa.shape[1], fb.shape[1], fc.shape[1], nd, rbits), "k",
           [np.ascontiguousarray(fa), np.ascontiguousarray(fb), np.ascontiguousarray(fc), fd], block=32)
    # unpack D with the C layout
    if ct == "f16":
        h = np.stack([fd & 0xFFFF, fd >> 16], axis=2).reshape(32, -1).astype(np.uint16).view(np.float16)
        dvals = h.astype(np.float64)
    else:
        dvals = fd.view({"f32": np.float32, "s32": np.int32, "f64": np.float64}[ct]).astype(np.float64)
    D = np.zeros((M, N))
    D[cr, cc] = dvals
    trunc = lambda X: (X.astype(np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32).astype(np.float64)
    ref = (trunc(A) @ trunc(B) + C) if at == "tf32" else A @ B + C
    if at in ("s8", "u8"):
        assert (D == ref).all()
    elif ct == "f16":
        np.testing.assert_array_equal(D, fp.round_to(ref, fp.F16))
    else:
        np.testing.assert_allclose(D, ref, rtol=1e-6, atol=1e-6)


def test_mma_int8_satfinite_and_wrap():
    (ar, ac), (br, bc), (cr, cc) = layouts("m16n8k32", "s8")
    A = np.full((16, 32), 127)
    B = np.full((32, 8), 127)
    C = np.full((16, 8), 2 ** 31 - 1000)
    fa, fb, fc = pack(A[ar, ac], np.int8), pack(B[br, bc], np.int8), pack(C[cr, cc], np.int32)
    for sat in (".satfinite", ""):
        fd = np.zeros((32, 4), np.uint32)
        launch(mma_kernel(f"m16n8k32.row.col{sat}.s32.s8.s8.s32", 4, 2, 4, 4, 32), "k", [fa, fb, fc, fd], block=32)
        exp = 2 ** 31 - 1000 + 32 * 127 * 127
        want = 2 ** 31 - 1 if sat else ((exp + 2 ** 31) % 2 ** 32) - 2 ** 31
        assert (fd.view(np.int32) == want).all()


# ----------------------------------------------------------------------------- ldmatrix / stmatrix
def ld_kernel(nm, trans):
    regs = "{" + ", ".join(f"%r{k}" for k in range(nm)) + "}"
    return HDR + f"""
.visible .entry k(.param .u64 src, .param .u64 dst)
{{
    .reg .u32 %t, %a, %v, %r<4>; .reg .u64 %p, %o, %q;
    .shared .align 16 .b8 sm[512];
    mov.u32 %t, %tid.x;
    // copy 512 bytes of src into shared memory (16 bytes per thread)
    ld.param.u64 %p, [src];
    mul.wide.u32 %o, %t, 16;
    add.u64 %q, %p, %o;
    ld.global.v4.u32 {{%r0, %r1, %r2, %r3}}, [%q];
    mov.u32 %a, sm;
    mul.lo.u32 %v, %t, 16;
    add.u32 %a, %a, %v;
    st.shared.v4.u32 [%a], {{%r0, %r1, %r2, %r3}};
    bar.sync 0;
    // lane l gives the address of row (l % 8) of matrix (l / 8); rows are 64 bytes apart
    and.b32 %v, %t, 7;
    shr.u32 %a, %t, 3;
    mad.lo.u32 %v, %v, 64, 0;
    mad.lo.u32 %v, %a, 16, %v;
    mov.u32 %a, sm;
    add.u32 %a, %a, %v;
    ldmatrix.sync.aligned.m8n8.x{nm}{'.trans' if trans else ''}.shared.b16 {regs}, [%a];
    ld.param.u64 %p, [dst];
    mul.wide.u32 %o, %t, {4 * nm};
    add.u64 %p, %p, %o;
    {' '.join(f'st.global.u32 [%p+{4 * k}], %r{k};' for k in range(nm))}
    ret;
}}"""


@pytest.mark.parametrize("nm", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix(nm, trans):
    src = np.arange(256, dtype=np.uint16)              # 8 rows of 32 b16 (64 bytes) = 4 matrices side by side
    dst = np.zeros((32, nm), np.uint32)
    launch(ld_kernel(nm, trans), "k", [src, dst], block=32)
    full = src.reshape(8, 32)
    for i in range(nm):
        m = full[:, 8 * i:8 * i + 8]
        if trans:
            m = m.T
        lo = m[LANE // 4, 2 * (LANE % 4)].astype(np.uint32)
        hi = m[LANE // 4, 2 * (LANE % 4) + 1].astype(np.uint32)
        assert dst[:, i].tolist() == (lo | (hi << 16)).tolist()


@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_inverts_ldmatrix_and_movmatrix(trans):
    prog = HDR + f"""
.visible .entry k(.param .u64 dst, .param .u64 dst2)
{{
    .reg .u32 %t, %a, %v, %r<4>, %m; .reg .u64 %p, %o;
    .shared .align 16 .b8 sm[512];
    mov.u32 %t, %tid.x;
    mov.u32 %a, sm;
    mul.lo.u32 %v, %t, 16;
    add.u32 %a, %a, %v;
    st.shared.v4.u32 [%a], {{0, 0, 0, 0}};
    bar.sync 0;
    mad.lo.u32 %r0, %t, 0x00020002, 0x00010000;
    add.u32 %r1, %r0, 0x01000100;
    and.b32 %v, %t, 7;
    shr.u32 %a, %t, 3;
    mad.lo.u32 %v, %v, 64, 0;
    mad.lo.u32 %v, %a, 16, %v;
    mov.u32 %a, sm;
    add.u32 %a, %a, %v;
    stmatrix.sync.aligned.m8n8.x2{'.trans' if trans else ''}.shared.b16 [%a], {{%r0, %r1}};
    bar.sync 0;
    mov.u32 %a, sm;
    mul.lo.u32 %v, %t, 16;
    add.u32 %a, %a, %v;
    ld.shared.v4.u32 {{%r0, %r1, %r2, %r3}}, [%a];
    ld.param.u64 %p, [dst];
    mul.wide.u32 %o, %t, 16;
    add.u64 %p, %p, %o;
    st.global.v4.u32 [%p], {{%r0, %r1, %r2, %r3}};
    mad.lo.u32 %r0, %t, 0x00020002, 0x00010000;
    movmatrix.sync.aligned.m8n8.trans.b16 %m, %r0;
    ld.param.u64 %p, [dst2];
    mul.wide.u32 %o, %t, 4;
    add.u64 %p, %p, %o;
    st.global.u32 [%p], %m;
    ret;
}}"""
    dst = np.zeros(256, np.uint16)
    dst2 = np.zeros(32, np.uint32)
    launch(prog, "k", [dst, dst2], block=32)
    full = dst.reshape(8, 32)
    # fragment element (row l//4, col 2*(l%4)+j) of matrix 0 holds 2*l + j; matrix 1 holds that + 0x100
    frag = np.zeros((8, 8), np.int64)
    frag[LANE // 4, 2 * (LANE % 4)] = 2 * LANE
    frag[LANE // 4, 2 * (LANE % 4) + 1] = 2 * LANE + 1
    for i in range(2):
        m = frag + 0x100 * i
        got = full[:, 8 * i:8 * i + 8].astype(np.int64)
        assert (got == (m.T if trans else m)).all()
    t = frag.T
    lo = t[LANE // 4, 2 * (LANE % 4)]
    hi = t[LANE // 4, 2 * (LANE % 4) + 1]
    assert dst2.tolist() == (lo | (hi << 16)).tolist()


# ----------------------------------------------------------------------------- wmma (CUDA C++ API)
def _wmma_ptx():
    import pathlib
    return (pathlib.Path(__file__).parent / "cuda_interp" / "wmma.ptx").read_text()


def test_wmma_f16_gemm_with_elementwise_fragment_ops():
    rng = np.random.default_rng(20)
    M, N, K = 32, 48, 32
    A = rng.standard_normal((M, K)).astype(np.float16)
    Bt = rng.standard_normal((N, K)).astype(np.float16)          # column-major B
    C = np.zeros((M, N), np.float32)
    launch(_wmma_ptx(), "wmma_f16", [A, Bt, C, np.int32(M), np.int32(N), np.int32(K), np.float32(0.5)],
           grid=(N // 16 // 3, M // 16), block=96)
    A64, B64 = A.astype(np.float64), Bt.astype(np.float64).T
    ref = np.zeros((M, N))
    for k in range(0, K, 16):
        ref = (ref + A64[:, k:k + 16] @ B64[k:k + 16]) * 0.5
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-5)


def test_wmma_bf16_tf32_s8():
    rng = np.random.default_rng(21)
    bf = ml_dtypes.bfloat16
    A = rng.standard_normal((16, 16)).astype(bf)
    B = rng.standard_normal((16, 16)).astype(bf)
    Cin = rng.standard_normal((16, 16)).astype(np.float32)
    C = np.zeros((16, 16), np.float32)
    # C is loaded and stored column-major: memory holds the transpose
    launch(_wmma_ptx(), "wmma_bf16", [A, B, np.ascontiguousarray(Cin.T), C], block=32)
    ref = A.astype(np.float64) @ B.astype(np.float64) + Cin
    np.testing.assert_allclose(C.T, ref, rtol=1e-5, atol=1e-5)
    A = rng.standard_normal((16, 8)).astype(np.float32)
    B = rng.standard_normal((8, 16)).astype(np.float32)
    C = np.zeros((16, 16), np.float32)
    launch(_wmma_ptx(), "wmma_tf32", [A, B, C], block=32)
    rna = lambda X: fp.round_to(X.astype(np.float64), fp.TF32, "rna")
    np.testing.assert_allclose(C, rna(A) @ rna(B) + 1.0, rtol=1e-5, atol=1e-5)
    A8 = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    B8 = rng.integers(-128, 128, (16, 16)).astype(np.int8)          # column-major B: B8[n, k]
    C32 = np.zeros((16, 16), np.int32)
    launch(_wmma_ptx(), "wmma_s8", [A8, B8, C32], block=32)
    assert (C32 == A8.astype(np.int64) @ B8.astype(np.int64).T + 7).all()


# ----------------------------------------------------------------------------- fragments kept as matrices
FRAG_CHAIN = """mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {D}, {A}, {B}, {C};
mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {D}, {A}, {B}, {D};
add.f32 %d1, %d1, 0f3F800000;
mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {D}, {A}, {B}, {D};
mov.b32 %a2, %a0;
setp.lt.u32 %q, %l, 16;
@%q mov.b32 %b1, %b0;
mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {D}, {A}, {B}, {D};
setp.ge.u32 %q, %t, 32;
@%q bra SKIP;
mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {D}, {A}, {B}, {D};
SKIP:"""


def test_fragments_between_mmas_follow_every_register_write():
    """Two warps run a chain of mma.sync on one accumulator, A and B loaded once: an ordinary
    add on one D register, an ordinary write of one A register, a predicated write of a B
    register by half the lanes, and a last mma by warp 0 alone (a partial group) all show in
    the results, which match NumPy step by step."""
    rng = np.random.default_rng(50)
    (ar, ac), (br, bc), (cr, cc) = layouts("m16n8k16", "bf16")
    bf = ml_dtypes.bfloat16
    As = [rng.standard_normal((16, 16)).astype(bf).astype(np.float64) for _ in range(2)]
    Bs = [rng.standard_normal((16, 8)).astype(bf).astype(np.float64) for _ in range(2)]
    Cs = [rng.standard_normal((16, 8)).astype(np.float32).astype(np.float64) for _ in range(2)]
    fa = np.concatenate([pack(A[ar, ac], bf) for A in As])
    fb = np.concatenate([pack(B[br, bc], bf) for B in Bs])
    fc = np.concatenate([pack(C[cr, cc], np.float32) for C in Cs])
    fd = np.zeros((64, 4), np.uint32)
    regs = lambda p, n: "{" + ", ".join(f"%{p}{k}" for k in range(n)) + "}"
    body = FRAG_CHAIN.replace("{D}", regs("d", 4)).replace("{A}", regs("a", 4)).replace(
        "{B}", regs("b", 2)).replace("{C}", regs("c", 4))
    ptx = mma_kernel("m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 4, 32)
    mma_line = next(ln for ln in ptx.splitlines() if ln.startswith("mma.sync"))
    ptx = ptx.replace(mma_line, body).replace(".reg .u32 %t;", ".reg .u32 %t, %l; .reg .pred %q;").replace(
        "mov.u32 %t, %tid.x;", "mov.u32 %t, %tid.x; and.b32 %l, %t, 31;")
    launch(ptx, "k", [fa, fb, fc, fd], block=64)
    f32 = lambda X: X.astype(np.float32).astype(np.float64)
    one = np.zeros((16, 8))
    one[cr[:, 1], cc[:, 1]] = 1.0                   # register d1 of every lane
    for w in range(2):
        A, B, C = As[w], Bs[w], Cs[w]
        D = f32(A @ B + C)
        D = f32(A @ B + D)
        D = f32(A @ B + f32(D + one))
        A2, B2 = A.copy(), B.copy()
        A2[ar[:, 4:6], ac[:, 4:6]] = A[ar[:, 0:2], ac[:, 0:2]]          # a2 := a0 (elements 4, 5 := 0, 1)
        low = np.arange(32) < 16
        B2[br[low, 2:4], bc[low, 2:4]] = B[br[low, 0:2], bc[low, 0:2]]  # b1 := b0 in lanes 0..15
        D = f32(A2 @ B2 + D)
        if w == 0:
            D = f32(A2 @ B2 + D)
        got = np.zeros((16, 8))
        got[cr, cc] = fd[32 * w:32 * (w + 1)].view(np.float32)
        np.testing.assert_array_equal(got, D)


@pytest.mark.parametrize("row, err, what", [
    ("mad.lo.u32 %v, %v, 64, 8;", MisalignedAccessError, r"by thread \(0,0,0\) .*: shared address 0x8 is not aligned to 16 bytes"),
    ("mad.lo.u32 %v, %v, 64, 512;", OutOfBoundsError, r"by thread \(0,0,0\) .*: shared address 0x200 is 16 bytes "
                                                      r"past the end of shared memory of this CTA"),
])
def test_ldmatrix_row_address_checked_under_the_sanitizer(row, err, what):
    # lane 0's row address: misaligned, or its 16 bytes past the end of the 512 bytes
    prog = ld_kernel(4, False).replace("mad.lo.u32 %v, %v, 64, 0;", row)
    with pytest.raises(err, match=what):
        launch(prog, "k", [np.arange(256, dtype=np.uint16), np.zeros((32, 4), np.uint32)], block=32)
