"""wgmma.mma_async.sp (sparse A) against NumPy: a structured-sparse 64 x K A, its kept half in
shared memory (a descriptor) or in the A registers, the metadata of rows 16w..16w+15 in warp w's
registers in the layout of mma.sp .m16n8kK (written out by hand in test_interp_mma_sp), and
D = A_dense @ B. Undefined metadata is reported naming the warpgroup thread."""
from __future__ import annotations

import numpy as np
import pytest

from jax_pyptx.errors import InterpreterError
from jax_pyptx.toolchain import ptxas_check
from .mma_util import BITS, a_regs, acc_matrix, rand, run_wgmma, wgmma_kernel
from .test_interp_mma_sp import metadata, sparse_a
from .test_interp_wgmma import kmajor_image

K_SP = {"f16": 32, "bf16": 32, "tf32": 16, "e4m3": 64, "e5m2": 64, "s8": 64, "u8": 64}
TAIL = {"f16": ", 1, 1, 0, 0", "bf16": ", 1, 1, 0, 0", "tf32": ", 1, 1", "e4m3": ", 1, 1", "e5m2": ", 1, 1"}


def build(dt, at, bt, sel, regs=False, n=16, seed=0):
    """(ptx, img, da, db, cin with the metadata, areg, dense A @ B)."""
    K = K_SP[at]
    rng = np.random.default_rng(seed)
    dense = np.zeros((64, K))
    kept = np.zeros((64, K // 2))
    meta = np.zeros(128, np.uint32)
    for w in range(4):       # warp w: rows 16w..16w+15, its lanes' metadata registers
        d16, k16, pos = sparse_a(rng, K, BITS[at], False, signed=at != "u8")
        dense[16 * w:16 * w + 16], kept[16 * w:16 * w + 16] = d16, k16
        meta[32 * w:32 * w + 32] = metadata(pos, K, BITS[at], sel)
    B = rand(rng, (K, n), bt).astype(np.float64)
    if bt == "tf32":         # the tensor core drops the low 13 bits of a tf32 input
        B = (B.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if bt in ("s8", "u8"):
        B = np.clip(B, -3, 3) if bt == "s8" else np.clip(B, 0, 3)
    img, da, db = kmajor_image(kept.astype(np.float32), B.astype(np.float32), at, bt)
    nacc = n // 2
    a = "{%a0, %a1, %a2, %a3}" if regs else "%da"
    tail = TAIL.get(at, "")
    if regs and tail:
        tail = tail[:-3] if at in ("f16", "bf16") else tail
    sat = ".satfinite" if at in ("s8", "u8") else ""
    body = (f"  ld.global.b32 %e, [%rd7];\n"
            f"  wgmma.mma_async.sp.sync.aligned.m64n{n}k{K}{sat}.{dt}.{at}.{bt} {{acc}}, {a}, %db, %e, {sel}, "
            f"0{tail};\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;")
    ptx = wgmma_kernel(body, nacc, dt, aregs=regs, extra_regs=" .reg .b32 %e;")
    cin = np.zeros((128, nacc), np.uint32)
    cin[:, 0] = meta
    areg = a_regs(kept.astype(np.float32), at) if regs else None
    return ptx, img, da, db, cin, areg, dense @ B


CASES = [("f32", "f16", "f16", 1, False), ("f32", "bf16", "bf16", 0, True), ("f32", "tf32", "tf32", 1, False),
         ("f32", "e4m3", "e5m2", 0, False), ("s32", "s8", "u8", 0, True)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[1]}-{c[2]}-sel{c[3]}-{'regs' if c[4] else 'desc'}")
def test_sparse_wgmma_matches_dense_product(case):
    dt, at, bt, sel, regs = case
    ptx, img, da, db, cin, areg, want = build(*case)
    ptxas_check(ptx, "sm_90a")
    out = run_wgmma(ptx, img, 8, da, db, cin=cin, areg=areg)
    if dt == "s32":
        np.testing.assert_array_equal(acc_matrix(out, 16, dt), want)
    else:                    # exact products, one rounding to f32
        np.testing.assert_allclose(acc_matrix(out, 16, dt), want, rtol=1e-6, atol=1e-6)


def test_undefined_metadata_names_the_warpgroup_thread():
    ptx, img, da, db, cin, areg, _ = build("f32", "f16", "f16", 1)
    t = 32 * 2 + 4 * 5 + 2 + 1          # warp 2, group 5, the second thread of pair 1
    cin[t, 0] = (cin[t, 0] & ~np.uint32(0xF)) | np.uint32(0b1111)
    with pytest.raises(InterpreterError) as e:
        run_wgmma(ptx, img, 8, da, db, cin=cin)
    assert ("wgmma.mma_async.sp: undefined sparsity metadata 0b1111 for chunk 4 (columns 16..19) of row 37 "
            "of A, bits 0..3 of warpgroup thread 87's metadata register (sparsity selector 1): the two "
            "indices of a chunk must differ") in str(e.value)
