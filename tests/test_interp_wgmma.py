"""wgmma.mma_async in the interpreter against NumPy: every input type, A from a descriptor and
from registers, every swizzle mode with K-major and MN-major operands, the descriptor fields
(LBO, SBO, base offset, swizzle code), scale-d / imm-scale / transposes, and the asynchrony of
commit_group / wait_group (accumulators defined only when their group is retired)."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import AsyncHazardError, DivergenceError, InterpreterError, UninitializedReadError
from .mma_util import (
    a_regs, acc_matrix, codes, place, rand, run_wgmma, wgmma_desc, wgmma_kernel,
)

K_OF = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}


def mma_line(n, dt, at, bt, a="%da", scale_d="1", tail=None):
    k = K_OF[at]
    sat = ""
    if tail is None:
        tail = {"f16": ", 1, 1, 0, 0", "bf16": ", 1, 1, 0, 0", "tf32": ", 1, 1", "e4m3": ", 1, 1",
                "e5m2": ", 1, 1"}.get(at, "")
        if a != "%da" and at in ("f16", "bf16"):
            tail = ", 1, 1, 0"
    op = ".and.popc" if at == "b1" else ""
    return (f"  wgmma.mma_async.sync.aligned.m64n{n}k{k}{sat}.{dt}.{at}.{bt}{op} {{acc}}, {a}, %db, "
            f"{scale_d}{tail};\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;")


def nacc(n, dt):
    return n // 4 if dt == "f16" else n // 2


def kmajor_image(A, B, at, bt, mode="none"):
    """A (64 x K) at 0 and B^T (N x K) at 8192, K-major, canonical strides for ``mode``."""
    img = np.zeros(16384, np.uint8)
    if mode == "none":
        place(img, 0, A, at, "K", "none", lbo=8 * 128, sbo=128)
        place(img, 8192, B.T, bt, "K", "none", lbo=(B.shape[1] // 8) * 128, sbo=128)
        return img, wgmma_desc(0, 1024, 128), wgmma_desc(8192, (B.shape[1] // 8) * 128, 128)
    w = {"32B": 32, "64B": 64, "128B": 128}[mode]
    place(img, 0, A, at, "K", mode, lbo=16, sbo=8 * w)
    place(img, 8192, B.T, bt, "K", mode, lbo=16, sbo=8 * w)
    return img, wgmma_desc(0, 16, 8 * w, mode), wgmma_desc(8192, 16, 8 * w, mode)


def ref_mma(A, B, at):
    if at in ("s8", "u8", "b1"):
        return A.astype(np.int64) @ B.astype(np.int64)
    if at == "tf32":
        A = (np.asarray(A, np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
        B = (np.asarray(B, np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
    return A.astype(np.float64) @ B.astype(np.float64)


TYPES = [("f32", "f16", "f16"), ("f16", "f16", "f16"), ("f32", "bf16", "bf16"), ("f32", "tf32", "tf32"),
         ("f32", "e4m3", "e4m3"), ("f32", "e4m3", "e5m2"), ("f16", "e5m2", "e4m3"), ("f32", "e5m2", "e5m2"),
         ("s32", "s8", "s8"), ("s32", "u8", "u8"), ("s32", "s8", "u8"), ("s32", "u8", "s8"),
         ("s32", "b1", "b1")]


@pytest.mark.parametrize("dt,at,bt", TYPES)
def test_every_type_from_descriptors(dt, at, bt):
    rng = np.random.default_rng(1)
    n = 16
    k = K_OF[at]
    A, B = rand(rng, (64, k), at), rand(rng, (k, n), bt)
    if at == "tf32":      # low 13 bits set: the tensor core drops them
        A = (A.view(np.uint32) | 0x1FFF).view(np.float32)
    img, da, db = kmajor_image(A, B, at, bt)
    na = nacc(n, dt)
    out = run_wgmma(wgmma_kernel(mma_line(n, dt, at, bt, scale_d="0"), na, dt), img, na, da, db)
    got = acc_matrix(out, n, dt)
    ref = ref_mma(A, B, at)
    if dt == "s32":
        np.testing.assert_array_equal(got, ref)
    elif dt == "f16":
        np.testing.assert_allclose(got, ref.astype(np.float16), rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("dt,at,bt", [("f32", "f16", "f16"), ("f32", "bf16", "bf16"), ("f32", "tf32", "tf32"),
                                      ("f32", "e4m3", "e5m2"), ("s32", "s8", "u8"), ("s32", "b1", "b1")])
def test_a_from_registers(dt, at, bt):
    rng = np.random.default_rng(2)
    n = 24
    k = K_OF[at]
    A, B = rand(rng, (64, k), at), rand(rng, (k, n), bt)
    img, _, db = kmajor_image(A, B, at, bt)
    na = nacc(n, dt)
    ptx = wgmma_kernel(mma_line(n, dt, at, bt, a="{%a0, %a1, %a2, %a3}", scale_d="0"), na, dt, aregs=True)
    out = run_wgmma(ptx, img, na, 0, db, areg=a_regs(A, at))
    got = acc_matrix(out, n, dt)
    ref = ref_mma(A, B, at)
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-5)


def test_accumulates_into_c_and_scale_d_predicate():
    rng = np.random.default_rng(3)
    n = 32
    A, B = rand(rng, (64, 16), "bf16"), rand(rng, (16, n), "bf16")
    C = rng.standard_normal((64, n)).astype(np.float32)
    img, da, db = kmajor_image(A, B, "bf16", "bf16")
    # per-thread C registers in the ISA's fragment order
    cin = np.zeros((128, n // 2), np.float32)
    for t in range(128):
        w, lane = divmod(t, 32)
        for i in range(n // 2):
            cin[t, i] = C[16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2]
    body = ("  setp.ne.u32 %p1, %r1, 999;\n" + mma_line(n, "f32", "bf16", "bf16", scale_d="%p1"))
    out = run_wgmma(wgmma_kernel(body, n // 2, cin=True), img, n // 2, da, db, cin=cin.view(np.uint32))
    np.testing.assert_allclose(acc_matrix(out, n), ref_mma(A, B, "bf16") + C, rtol=1e-6, atol=1e-5)
    # a false predicate: D = A*B, C ignored
    body = ("  setp.eq.u32 %p1, %r1, 999;\n" + mma_line(n, "f32", "bf16", "bf16", scale_d="%p1"))
    out = run_wgmma(wgmma_kernel(body, n // 2, cin=True), img, n // 2, da, db, cin=cin.view(np.uint32))
    np.testing.assert_allclose(acc_matrix(out, n), ref_mma(A, B, "bf16"), rtol=1e-6, atol=1e-5)


def test_scale_d_false_does_not_read_uninitialized_accumulators():
    rng = np.random.default_rng(4)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    out = run_wgmma(wgmma_kernel(mma_line(8, "f32", "f16", "f16", scale_d="0"), 4), img, 4, da, db)
    np.testing.assert_allclose(acc_matrix(out, 8), ref_mma(A, B, "f16"), rtol=1e-6)
    with pytest.raises(UninitializedReadError, match="read of uninitialized register %c0"):
        run_wgmma(wgmma_kernel(mma_line(8, "f32", "f16", "f16", scale_d="1"), 4), img, 4, da, db)


@pytest.mark.parametrize("sa,sb", [(-1, 1), (1, -1), (-1, -1)])
def test_imm_scale_negates(sa, sb):
    rng = np.random.default_rng(5)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    line = mma_line(8, "f32", "f16", "f16", scale_d="0", tail=f", {sa}, {sb}, 0, 0")
    out = run_wgmma(wgmma_kernel(line, 4), img, 4, da, db)
    np.testing.assert_allclose(acc_matrix(out, 8), sa * sb * ref_mma(A, B, "f16"), rtol=1e-6)


@pytest.mark.parametrize("mode", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("at", ["bf16", "e4m3", "tf32"])
def test_k_major_every_swizzle(mode, at):
    rng = np.random.default_rng(6)
    n = 64
    k = K_OF[at]
    A, B = rand(rng, (64, k), at), rand(rng, (k, n), at)
    img, da, db = kmajor_image(A, B, at, at, mode)
    out = run_wgmma(wgmma_kernel(mma_line(n, "f32", at, at, scale_d="0"), n // 2), img, n // 2, da, db)
    np.testing.assert_allclose(acc_matrix(out, n), ref_mma(A, B, at), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("mode", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("trans", [(1, 0), (0, 1), (1, 1)])
def test_mn_major_transposes_every_swizzle(mode, trans):
    """imm-trans-a / imm-trans-b = 1: A M-major, B N-major (f16/bf16 only)."""
    rng = np.random.default_rng(7)
    n = 64
    A, B = rand(rng, (64, 16), "bf16"), rand(rng, (16, n), "bf16")
    img = np.zeros(16384, np.uint8)
    w = {"none": 16, "32B": 32, "64B": 64, "128B": 128}[mode]
    descs = []
    for (start, M, mn, t) in ((0, A, 64, trans[0]), (8192, B.T, n, trans[1])):
        if not t:
            lbo, sbo = ((mn // 8) * 128, 128) if mode == "none" else (16, 8 * w)
            place(img, start, M, "bf16", "K", mode, lbo, sbo)
        elif mode == "none":        # 16 bytes of MN per K row; next 8 K rows LBO on, next MN chunk SBO on
            lbo, sbo = (mn // 8) * 128, 128
            place(img, start, M, "bf16", "MN", mode, lbo, sbo)
        else:                       # w bytes of MN per K row; next MN atom LBO on, next 8 K rows SBO on
            lbo, sbo = 8 * w * 2, 8 * w
            place(img, start, M, "bf16", "MN", mode, lbo, sbo)
        descs.append(wgmma_desc(start, lbo, sbo, mode))
    line = mma_line(n, "f32", "bf16", "bf16", scale_d="0", tail=f", 1, 1, {trans[0]}, {trans[1]}")
    out = run_wgmma(wgmma_kernel(line, n // 2), img, n // 2, *descs)
    np.testing.assert_allclose(acc_matrix(out, n), ref_mma(A, B, "bf16"), rtol=1e-6, atol=1e-5)


def test_leading_and_stride_byte_offsets():
    """Non-packed layouts: K-major without swizzling, the second 16-byte K chunk LBO=3072 bytes
    on and the next 8 rows SBO=256 on (gaps between core matrices)."""
    rng = np.random.default_rng(8)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 16), "f16")
    img = np.zeros(16384, np.uint8)
    place(img, 0, A, "f16", "K", "none", lbo=3072, sbo=256)
    place(img, 6144, B.T, "f16", "K", "none", lbo=512, sbo=160)
    line = mma_line(16, "f32", "f16", "f16", scale_d="0")
    out = run_wgmma(wgmma_kernel(line, 8), img, 8, wgmma_desc(0, 3072, 256), wgmma_desc(6144, 512, 160))
    np.testing.assert_allclose(acc_matrix(out, 16), ref_mma(A, B, "f16"), rtol=1e-6)
    # the same image read with the canonical strides gives another (wrong) product
    out = run_wgmma(wgmma_kernel(line, 8), img, 8, wgmma_desc(0, 1024, 128), wgmma_desc(6144, 512, 160))
    assert not np.allclose(acc_matrix(out, 16), ref_mma(A, B, "f16"))


def test_base_offset_names_the_pattern_row():
    """A 128B-swizzled operand whose pattern starts 384 bytes past a 1024-byte boundary:
    base offset = (384 >> 7) & 7 = 3."""
    rng = np.random.default_rng(9)
    A, B = rand(rng, (64, 16), "bf16"), rand(rng, (16, 8), "bf16")
    img = np.zeros(16384, np.uint8)
    start = 1024 + 384
    place(img, start, A, "bf16", "K", "128B", lbo=16, sbo=1024, base=3)
    place(img, 12288, B.T, "bf16", "K", "none", lbo=128, sbo=128)
    line = mma_line(8, "f32", "bf16", "bf16", scale_d="0")
    out = run_wgmma(wgmma_kernel(line, 4), img, 4, wgmma_desc(start, 16, 1024, "128B", base=3),
                    wgmma_desc(12288, 128, 128))
    np.testing.assert_allclose(acc_matrix(out, 8), ref_mma(A, B, "bf16"), rtol=1e-6)
    out = run_wgmma(wgmma_kernel(line, 4), img, 4, wgmma_desc(start, 16, 1024, "128B", base=0),
                    wgmma_desc(12288, 128, 128))
    assert not np.allclose(acc_matrix(out, 8), ref_mma(A, B, "bf16"))


def test_swizzle_code_is_read_from_bits_62_63():
    """The same 64B-swizzled image read with every swizzle code: only code 2 (64B) is right."""
    rng = np.random.default_rng(10)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img = np.zeros(16384, np.uint8)
    place(img, 0, A, "f16", "K", "64B", lbo=16, sbo=512)
    place(img, 8192, B.T, "f16", "K", "none", lbo=128, sbo=128)
    line = mma_line(8, "f32", "f16", "f16", scale_d="0")
    ok = []
    for code in range(4):
        da = wgmma_desc(0, 16, 512) | code << 62
        out = run_wgmma(wgmma_kernel(line, 4), img, 4, da, wgmma_desc(8192, 128, 128))
        ok.append(np.allclose(acc_matrix(out, 8), ref_mma(A, B, "f16")))
    assert ok == [False, False, True, False]


def test_gemm_k_loop_advancing_descriptors_in_a_128b_atom():
    """The TMA + wgmma convention: a 64 x 64 bf16 tile stored with 128-byte rows and 128B
    swizzling; K steps of 16 advance the descriptor start by 32 bytes inside the atom."""
    rng = np.random.default_rng(11)
    n = 128
    A, B = rand(rng, (64, 64), "bf16"), rand(rng, (64, n), "bf16")
    img = np.zeros(32768, np.uint8)
    # TMA-style: row r of a K-major 128-byte-wide tile at r*128, 16-byte chunks XOR r%8
    for M, start in ((A, 0), (B.T, 8192)):
        c = codes(M, "bf16")
        for r in range(M.shape[0]):
            for kk in range(64):
                a = start + r * 128 + 2 * kk
                a ^= ((a >> 7) & 7) << 4
                img[a:a + 2] = np.frombuffer(c[r, kk].tobytes(), np.uint8)
    body = "\n".join(
        f"  add.u64 %rd9, %da, {2 * j};\n  add.u64 %rd3, %db, {2 * j};\n"
        f"  wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{acc}}, %rd9, %rd3, {int(j > 0)}, 1, 1, 0, 0;"
        for j in range(4)) + "\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;"
    out = run_wgmma(wgmma_kernel(body, n // 2, nbytes=32768), img, n // 2,
                    wgmma_desc(0, 16, 1024, "128B"), wgmma_desc(8192, 16, 1024, "128B"))
    np.testing.assert_allclose(acc_matrix(out, n), ref_mma(A, B, "bf16"), rtol=1e-5, atol=1e-4)


def test_integer_satfinite_and_wrap():
    A = np.full((64, 32), 127, np.int8)
    B = np.full((32, 8), 127, np.int8)
    img, da, db = kmajor_image(A, B, "s8", "s8")
    cin = np.full(128 * 4, 2 ** 31 - 100, np.int64).astype(np.int32).view(np.uint32)
    for sat, want in (("", np.int64(2 ** 31 - 100 + 32 * 127 * 127 - 2 ** 32)), (".satfinite", 2 ** 31 - 1)):
        line = (f"  wgmma.mma_async.sync.aligned.m64n8k32{sat}.s32.s8.s8 {{acc}}, %da, %db, 1;\n"
                "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;")
        out = run_wgmma(wgmma_kernel(line, 4, "s32", cin=True), img, 4, da, db, cin=cin)
        np.testing.assert_array_equal(acc_matrix(out, 8, "s32"), np.full((64, 8), want))


def test_b1_and_popc():
    rng = np.random.default_rng(12)
    A, B = rand(rng, (64, 256), "b1"), rand(rng, (256, 16), "b1")
    img, da, db = kmajor_image(A, B, "b1", "b1")
    out = run_wgmma(wgmma_kernel(mma_line(16, "s32", "b1", "b1", scale_d="0"), 8, "s32"), img, 8, da, db)
    np.testing.assert_array_equal(acc_matrix(out, 16, "s32"), (A.astype(int) & 1) @ (B.astype(int) & 1))


# ----------------------------------------------------------------------------- asynchrony
CHAIN = """  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {acc}, %da, %db, 0, 1, 1, 0, 0;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {acc}, %da, %db, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;"""


def test_back_to_back_mma_chain_on_the_pending_accumulator():
    rng = np.random.default_rng(13)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    out = run_wgmma(wgmma_kernel(CHAIN, 4), img, 4, da, db)
    np.testing.assert_allclose(acc_matrix(out, 8), 2 * ref_mma(A, B, "f16"), rtol=1e-6)


READ_EARLY = """  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {acc}, %da, %db, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  add.f32 %c1, %c0, %c0;
  wgmma.wait_group.sync.aligned 0;"""


def test_reading_an_accumulator_before_wait_group_is_reported():
    rng = np.random.default_rng(14)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    ptx = wgmma_kernel(READ_EARLY, 4)
    line = ptx.splitlines().index("  add.f32 %c1, %c0, %c0;") + 1
    mma_line_no = line - 2
    with pytest.raises(AsyncHazardError) as ei:
        run_wgmma(ptx, img, 4, da, db)
    msg = str(ei.value)
    assert msg.startswith(f"<ptx>:{line}: this instruction reads register %c0 while the asynchronous "
                          f"wgmma.mma_async (<ptx>:{mma_line_no}: wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16")
    assert "wgmma.wait_group must retire it first: add.f32 %c1, %c0, %c0; by thread (0,0,0) of CTA (0,0,0)" in msg
    # the fixed kernel (the add after the wait) runs clean
    fixed = wgmma_kernel(READ_EARLY.replace("  add.f32 %c1, %c0, %c0;\n", "") + "\n  add.f32 %c1, %c0, %c0;", 4)
    out = run_wgmma(fixed, img, 4, da, db)
    D = ref_mma(A, B, "f16")
    got = out.reshape(128, 4).view(np.float32)
    np.testing.assert_allclose(got[0, 1], 2 * D[0, 0], rtol=1e-6)


def test_writing_an_accumulator_before_wait_group_is_reported():
    rng = np.random.default_rng(15)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    body = READ_EARLY.replace("add.f32 %c1, %c0, %c0;", "mov.f32 %c3, 0f00000000;")
    with pytest.raises(AsyncHazardError, match="this instruction writes register %c3 while the asynchronous "
                                               "wgmma.mma_async"):
        run_wgmma(wgmma_kernel(body, 4), img, 4, da, db)


def test_writing_an_a_register_of_an_inflight_mma_is_reported():
    rng = np.random.default_rng(16)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, _, db = kmajor_image(A, B, "f16", "f16")
    body = ("  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {acc}, {%a0, %a1, %a2, %a3}, %db, 0, 1, 1, 0;\n"
            "  wgmma.commit_group.sync.aligned;\n  mov.b32 %a2, 0;\n  wgmma.wait_group.sync.aligned 0;")
    with pytest.raises(AsyncHazardError, match="writes register %a2 while the asynchronous wgmma.mma_async .*"
                                               "that reads it is in flight"):
        run_wgmma(wgmma_kernel(body, 4, aregs=True), img, 4, 0, db, areg=a_regs(A, "f16"))


TWO_GROUPS = """  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {acc}, %da, %db, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%e0, %e1, %e2, %e3}, %da, %db, 0, -1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 1;
  add.f32 %c0, %c0, %c1;
  READ2
  wgmma.wait_group.sync.aligned 0;
  add.f32 %c1, %e0, 0f00000000;"""


def test_wait_group_n_retires_all_but_the_newest_n_groups():
    rng = np.random.default_rng(17)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    extra = "\n  .reg .f32 %e<4>;"
    ok = wgmma_kernel(TWO_GROUPS.replace("READ2", ""), 4, extra_regs=extra)
    out = run_wgmma(ok, img, 4, da, db).reshape(128, 4).view(np.float32)
    D = ref_mma(A, B, "f16")
    np.testing.assert_allclose(out[0, 0], D[0, 0] + D[0, 1], rtol=1e-6)       # group 1 retired
    np.testing.assert_allclose(out[0, 1], -D[0, 0], rtol=1e-6)                # group 2 after wait 0
    bad = wgmma_kernel(TWO_GROUPS.replace("READ2", "mov.f32 %c2, %e1;"), 4, extra_regs=extra)
    with pytest.raises(AsyncHazardError, match="reads register %e1 while the asynchronous wgmma.mma_async"):
        run_wgmma(bad, img, 4, da, db)


def test_descriptor_must_be_uniform_over_the_warpgroup():
    rng = np.random.default_rng(18)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    body = "  setp.eq.u32 %p1, %r1, 77;\n  @%p1 add.u64 %db, %db, 2;\n" + mma_line(8, "f32", "f16", "f16", scale_d="0")
    with pytest.raises(InterpreterError, match=r"b-desc differs between threads of a warpgroup \(thread 77"):
        run_wgmma(wgmma_kernel(body, 4), img, 4, da, db)


def test_warps_of_a_warpgroup_meet_at_mma_async():
    """Warp 2 takes a detour before the mma: the interpreter parks the others until it arrives;
    a warp whose lanes are predicated off the instruction is a divergence error."""
    rng = np.random.default_rng(19)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    detour = ("  shr.u32 %r5, %r1, 5;\n  setp.ne.u32 %p2, %r5, 2;\n  @%p2 bra GO;\n"
              "  mov.u32 %r6, 0;\nLOOP:\n  add.u32 %r6, %r6, 1;\n  setp.lt.u32 %p3, %r6, 50;\n  @%p3 bra LOOP;\nGO:\n")
    out = run_wgmma(wgmma_kernel(detour + mma_line(8, "f32", "f16", "f16", scale_d="0"), 4), img, 4, da, db)
    np.testing.assert_allclose(acc_matrix(out, 8), ref_mma(A, B, "f16"), rtol=1e-6)
    pred = "  setp.ne.u32 %p1, %r1, 40;\n" + mma_line(8, "f32", "f16", "f16", scale_d="0").replace(
        "  wgmma.mma_async", "  @%p1 wgmma.mma_async", 1)
    with pytest.raises(DivergenceError, match="needs every thread of its warpgroup"):
        run_wgmma(wgmma_kernel(pred, 4), img, 4, da, db)


def test_operand_past_shared_memory_is_an_error():
    img = np.zeros(16384, np.uint8)
    line = mma_line(8, "f32", "f16", "f16", scale_d="0")
    with pytest.raises(InterpreterError, match=r"\(matrix A\): the matrix .* reaches shared address 0x4.*past the "
                                               r"16384 bytes"):
        run_wgmma(wgmma_kernel(line, 4), img, 4, wgmma_desc(15360, 1024, 128), wgmma_desc(8192, 128, 128))


def test_uninitialized_shared_memory_read_by_wgmma():
    ptx = wgmma_kernel(mma_line(8, "f32", "f16", "f16", scale_d="0"), 4, nbytes=16384).replace(
        "setp.ge.u32 %p0, %r2, 1024;", "setp.ge.u32 %p0, %r2, 512;")
    with pytest.raises(UninitializedReadError, match=r"\(matrix B\) reads shared address 0x2000 .*that no thread or "
                                                     r"copy of this CTA wrote"):
        run_wgmma(ptx, np.zeros(16384, np.uint8), 4, wgmma_desc(0, 1024, 128), wgmma_desc(8192, 128, 128))


def test_generic_writes_read_by_wgmma_without_a_proxy_fence():
    """st.shared writes the operands; without fence.proxy.async the async proxy may see stale
    data: reported at the mma with the address; the fenced kernel runs clean."""
    from jax_pyptx.errors import AsyncProxyError
    rng = np.random.default_rng(20)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    ptx = wgmma_kernel(mma_line(8, "f32", "f16", "f16", scale_d="0"), 4)
    bad = ptx.replace("  fence.proxy.async.shared::cta;\n", "")
    line = bad.splitlines().index("  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%c0, %c1, %c2, %c3}, "
                                  "%da, %db, 0, 1, 1, 0, 0;") + 1
    with pytest.raises(AsyncProxyError) as ei:
        run_wgmma(bad, img, 4, da, db)
    assert str(ei.value).startswith(
        f"<ptx>:{line}: wgmma.mma_async.m64n8k16.f32.f16.f16 (matrix B) reads shared address 0x2000 'sm' (+8192) "
        f"through the async proxy, but the generic proxy wrote it")
    out = run_wgmma(ptx, img, 4, da, db)
    np.testing.assert_allclose(acc_matrix(out, 8), ref_mma(A, B, "f16"), rtol=1e-6)


def test_a_launch_after_the_first_reads_by_the_remembered_plan_and_checks_again():
    """The second launch of a kernel reads its operands where the first worked out they lie
    (the instruction's plans), and the sanitizer still looks at shared memory's state then:
    a missing proxy fence is reported by every launch, and a fenced kernel gives the same
    values every time."""
    from jax_pyptx.errors import AsyncProxyError
    from jax_pyptx.interpret.launch import get_module, get_program
    rng = np.random.default_rng(21)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    ptx = wgmma_kernel(mma_line(8, "f32", "f16", "f16", scale_d="0"), 4)
    bad = ptx.replace("  fence.proxy.async.shared::cta;\n", "")
    for _ in range(2):
        with pytest.raises(AsyncProxyError, match=r"\(matrix B\) reads shared address 0x2000 .*through the "
                                                   r"async proxy, but the generic proxy wrote it"):
            run_wgmma(bad, img, 4, da, db)
    first = run_wgmma(ptx, img, 4, da, db)
    mma = next(d.fn.__self__ for d in get_program(get_module(ptx), "k").code
               if d.ins.opcode == "wgmma.mma_async")
    n = len(mma.plans)                  # A's and B's (and those of other tests of this kernel)
    assert n >= 2
    np.testing.assert_array_equal(run_wgmma(ptx, img, 4, da, db), first)
    assert len(mma.plans) == n                                      # no new one: reused


# ----------------------------------------------------------------------------- the pending tile
@pytest.mark.parametrize("dt,at", [("f32", "f16"), ("f16", "f16"), ("s32", "s8")])
def test_chain_of_three_on_the_pending_tile_every_accumulator_type(dt, at):
    """Three mma_async in flight on one accumulator (the second and third chain on the pending
    tile, with no register between them), then an ordinary instruction reads it after the
    wait: the registers hold 3 * A @ B in the accumulator layout."""
    rng = np.random.default_rng(30)
    k = K_OF[at]
    A, B = rand(rng, (64, k), at), rand(rng, (k, 16), at)
    img, da, db = kmajor_image(A, B, at, at)
    tail = "" if at == "s8" else ", 1, 1, 0, 0"
    mma = f"  wgmma.mma_async.sync.aligned.m64n16k{k}.{dt}.{at}.{at} {{acc}}, %da, %db, SD{tail};\n"
    body = (mma.replace("SD", "0") + "  wgmma.commit_group.sync.aligned;\n" + mma.replace("SD", "1") +
            "  wgmma.commit_group.sync.aligned;\n" + mma.replace("SD", "1") +
            "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 1;\n"
            "  wgmma.wait_group.sync.aligned 0;")
    n = nacc(16, dt)
    out = run_wgmma(wgmma_kernel(body, n, acc_type=dt), img, n, da, db)
    want = 3 * ref_mma(A, B, at)
    got = acc_matrix(out, 16, dt)
    if dt == "s32":
        np.testing.assert_array_equal(got, want)
    elif dt == "f16":
        np.testing.assert_allclose(got, want, rtol=4e-3, atol=4e-3)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)


OVERLAP = """  wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {acc}, %da, %db, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%c0, %c1, %c2, %c3}, %da, %db, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;"""


def test_a_narrower_mma_on_part_of_a_pending_accumulator():
    """An m64n8 mma_async chains on the first four registers of an m64n16 accumulator still in
    flight (registers of one tile, now written apart): the first 8 columns hold 2 * A @ B[:, :8],
    the rest A @ B[:, 8:]."""
    rng = np.random.default_rng(31)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 16), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    out = run_wgmma(wgmma_kernel(OVERLAP, 8), img, 8, da, db)
    D = ref_mma(A, B, "f16")
    got = acc_matrix(out, 16)
    np.testing.assert_allclose(got[:, 8:], D[:, 8:], rtol=1e-6)
    # the m64n8 accumulator's registers c0..c3 hold columns 0..7 in the n8 layout
    got8 = acc_matrix(out.reshape(128, 8)[:, :4].reshape(-1), 8)
    np.testing.assert_allclose(got8, D[:, :8] + D[:, :8], rtol=1e-6)


def test_reading_one_register_of_a_pending_tile_names_it():
    """An ordinary read of one register of a chained (tile) accumulator before the wait is
    reported for that register, as for any pending register."""
    rng = np.random.default_rng(32)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 8), "f16")
    img, da, db = kmajor_image(A, B, "f16", "f16")
    body = CHAIN.replace("  wgmma.wait_group.sync.aligned 0;", "  mov.f32 %c0, %c2;\n  wgmma.wait_group.sync.aligned 0;")
    with pytest.raises(AsyncHazardError, match="this instruction reads register %c2 while the asynchronous "
                                               "wgmma.mma_async"):
        run_wgmma(wgmma_kernel(body, 4), img, 4, da, db)
