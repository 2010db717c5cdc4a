"""tcgen05 in the interpreter: Tensor Memory allocation, tcgen05.ld / st in every shape and
count (which lane and column each thread's register holds), pack / unpack, cp, shift, commit,
and tcgen05.mma for every kind against NumPy (A from shared memory and from TMEM, M = 64 / 128,
.ws, cta_group::2 pairs, block-scaled kinds, transposes, negation, scale-input-d, lane masks)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from jax_pyptx import parse
from jax_pyptx.errors import (
    AsyncHazardError, InterpreterError, PtxValueError, SanitizerWarning, TensorMemoryError,
    UninitializedReadError,
)
from jax_pyptx.interpret import launch

from .mma_util import (
    HDR100, codes, idesc, idesc_bs, place, rand, run_tc, tc_kernel, tcgen05_desc,
)

ZERO_ALL = "\n".join(f"  mov.b32 %d{i}, 0;" for i in range(128)) + \
    "\n  tcgen05.st.sync.aligned.32x32b.x128.b32 [%r7], {" + ", ".join(f"%d{i}" for i in range(128)) + "};"


def test_alloc_writes_lane0_and_column_to_shared_memory():
    ptx = HDR100 + """
.visible .entry k(.param .u64 out)
{
  .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p1;
  .shared .align 4 .b32 slot[3];
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @!%p1 bra J;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 64;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot+4], 128;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot+8], 32;
  ld.shared.b32 %r2, [slot];
  ld.shared.b32 %r3, [slot+4];
  ld.shared.b32 %r4, [slot+8];
  ld.param.u64 %rd1, [out];
  st.global.v4.b32 [%rd1], {%r2, %r3, %r4, %r2};
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 128;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r4, 32;
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
J:
  ret;
}
"""
    out = np.zeros(4, np.uint32)
    launch(ptx, "k", [out], block=64)
    a, b, c = (int(x) for x in out[:3])
    # lane 0 in bits 31-16; columns: power-of-two blocks, aligned to their size, disjoint
    assert a >> 16 == 0 and b >> 16 == 0 and c >> 16 == 0
    spans = sorted([(a, 64), (b, 128), (c, 32)])
    assert all(s % n == 0 for s, n in spans)
    assert all(s1 + n1 <= s2 for (s1, n1), (s2, _) in zip(spans, spans[1:]))


@pytest.mark.parametrize("ncols", [16, 48, 1024])
def test_alloc_column_count_must_be_a_power_of_two_from_32_to_512(ncols):
    text = tc_kernel(ncols=ncols)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "tcgen05.alloc" in t)
    with pytest.raises(PtxValueError) as e:       # ptxas refuses it: refused before running
        run_tc(text)
    assert str(e.value) == (f"<ptx>:{line}: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 "
                            f"operand 2: immediate {ncols} is out of range; allowed: 32, 64, 128, 256 or 512")
    with pytest.raises(InterpreterError, match=f"tcgen05.alloc of {ncols} columns: the count must be a power of 2 "
                                               f"from 32 to 512"):
        run_tc(parse(text, check=False))          # the interpreter's own check, on a Module


def test_alloc_that_can_never_complete():
    ptx = tc_kernel(pre="  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tslot], 64;",
                    ncols=512)
    with pytest.raises(TensorMemoryError, match="tcgen05.alloc of 64 columns can never complete: this CTA holds "
                                                "512 at column 0 of its 512 columns"):
        run_tc(ptx)


def test_tmem_not_deallocated_at_exit():
    ptx = tc_kernel(pre=ZERO_ALL, dealloc=False)
    line = next(i for i, t in enumerate(ptx.splitlines(), 1) if "tcgen05.alloc" in t)
    with pytest.raises(TensorMemoryError) as ei:
        run_tc(ptx)
    assert str(ei.value) == (
        f"<ptx>:{line}: Tensor Memory not deallocated at exit: 512 columns at column 0 of CTA (0,0,0), "
        f"allocated by <ptx>:{line}: @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tslot], 512; "
        f"every tcgen05.alloc needs a tcgen05.dealloc before the kernel exits")
    run_tc(tc_kernel(pre=ZERO_ALL))       # the fixed kernel runs clean


def test_tmem_used_after_dealloc():
    ptx = tc_kernel(pre=ZERO_ALL, ncols=256, dump=32).replace(
        "END:\n  ret;", "END:\n  bar.sync 0;\n  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r7], {%d0};\n  ret;")
    lines = ptx.splitlines()
    st = max(i for i, t in enumerate(lines, 1) if "tcgen05.st.sync.aligned.32x32b.x1.b32 [%r7]" in t)
    free = next(i for i, t in enumerate(lines, 1) if "tcgen05.dealloc" in t)
    alloc = next(i for i, t in enumerate(lines, 1) if "tcgen05.alloc" in t)
    with pytest.raises(TensorMemoryError) as ei:
        run_tc(ptx, dump=32)
    assert str(ei.value).startswith(
        f"<ptx>:{st}: tcgen05.st.32x32b.x1 uses TMEM column 0 after it was deallocated by <ptx>:{free}: "
        f"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %t, 256 (allocated by <ptx>:{alloc}: @%p1 "
        f"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tslot], 256): "
        f"tcgen05.st.sync.aligned.32x32b.x1.b32 [%r7], {{%d0}}; by thread (0,0,0) of CTA (0,0,0)")
    run_tc(tc_kernel(pre=ZERO_ALL, ncols=256, dump=32), dump=32)      # without the late store: clean


def test_access_outside_the_allocation():
    ptx = tc_kernel(pre=ZERO_ALL.replace("x128", "x64").replace(
        ", ".join(f"%d{i}" for i in range(128)), ", ".join(f"%d{i}" for i in range(64))) +
        "\n  add.u32 %r10, %r7, 32;\n  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r10], {%d0};", ncols=32, dump=32)
    with pytest.raises(TensorMemoryError, match="uses TMEM column 32, which this CTA has not allocated"):
        run_tc(ptx, dump=32)


def test_row_by_row_ld_and_st_report_the_cell():
    # .32x32b unpacked moves each lane's row of columns as one slice; an unwritten or
    # unallocated cell is still reported by its lane and column
    pre = ("  mov.b32 %d0, 7;\n  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r7], {%d0};\n"
           "  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%d1, %d2}, [%r7];\n  tcgen05.wait::ld.sync.aligned;")
    with pytest.raises(UninitializedReadError, match=r"tcgen05.ld.32x32b.x2 reads TMEM lane 0 column 1, which no "):
        run_tc(tc_kernel(pre=pre, dump=32, zero=False), dump=32)
    st = "  add.u32 %r10, %r7, 31;\n  tcgen05.st.sync.aligned.32x32b.x2.b32 [%r10], {%d0, %d0};"
    with pytest.raises(TensorMemoryError, match="uses TMEM column 32, which this CTA has not allocated"):
        run_tc(tc_kernel(pre=st, ncols=32, dump=32), dump=32)


def test_warp_may_only_reach_its_lane_quarter():
    ptx = tc_kernel(pre="  tcgen05.st.sync.aligned.32x32b.x1.b32 [%t], {%r1};", dump=32)
    with pytest.raises(TensorMemoryError, match=r"tcgen05.st.32x32b.x1 of warp 1 addresses TMEM lanes 0..31; a warp w "
                                                r"may only reach lanes 32\*\(w%4\)..32\*\(w%4\)\+31 = 32..63"):
        run_tc(ptx, dump=32)


def test_reading_tcgen05_ld_registers_before_wait_ld():
    # Triton's sm_100a code reads tcgen05.ld results before the tcgen05.wait::ld LLVM scheduled
    # later; the hardware's scoreboard gives the loaded values: a warning, and the loaded value
    pre = ZERO_ALL + "\n  mov.b32 %d1, 99;\n  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%d0, %d1}, [%r7];\n" \
                     "  add.u32 %r11, %d1, 1;\n  tcgen05.wait::ld.sync.aligned;\n  st.global.u32 [%aux], %r11;"
    ptx = tc_kernel(pre=pre, dump=32)
    msg = (r"reads register %d1 before tcgen05.wait::ld retires the tcgen05.ld \(<ptx>:\d+: "
           r"tcgen05.ld.sync.aligned.32x32b.x2.b32 \{%d0, %d1\}, \[%r7\];\) that writes it \(the ISA requires "
           r"the wait; the hardware's scoreboard gives the loaded value, so the run goes on with it\)")
    for sanitize in (True, False):
        aux = np.full(16, 7, np.uint32)
        if sanitize:
            with pytest.warns(SanitizerWarning, match=msg) as rec:
                run_tc(ptx, dump=32, aux=aux)
            assert len(rec) == 1 and rec[0].message.error_class is AsyncHazardError      # once per instruction
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                run_tc(ptx, dump=32, aux=aux, sanitize=False)
        assert aux[0] == 1                         # the loaded 0, not the stale 99
    with pytest.raises(AsyncHazardError, match=msg + r".*sanitize='strict'"):
        run_tc(ptx, dump=32, sanitize="strict")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_tc(tc_kernel(pre=pre.replace("  add.u32 %r11, %d1, 1;\n", "").replace("%r11", "%d1"), dump=32),
               sanitize="strict")


def test_writing_tcgen05_ld_registers_before_wait_ld_warns():
    pre = ZERO_ALL + "\n  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%d0, %d1}, [%r7];\n  mov.b32 %d1, 5;\n" \
                     "  tcgen05.wait::ld.sync.aligned;\n  st.global.u32 [%aux], %d1;"
    aux = np.zeros(16, np.uint32)
    with pytest.warns(SanitizerWarning, match=r"writes register %d1 before tcgen05.wait::ld retires"):
        run_tc(tc_kernel(pre=pre, dump=32), dump=32, aux=aux)
    assert aux[0] == 5                             # in program order, as the scoreboard orders it



def test_tcgen05_ld_registers_are_tracked_one_by_one():
    # the registers of one tcgen05.ld share their bookkeeping until one is touched: touching %d1
    # early leaves %d0 tracked (a second warning), and reads after the wait are clean
    pre = ZERO_ALL + "\n  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%d0, %d1}, [%r7];\n" \
                     "  add.u32 %r11, %d1, 1;\n  add.u32 %r12, %d0, 2;\n  add.u32 %r13, %d1, 3;\n" \
                     "  tcgen05.wait::ld.sync.aligned;\n  add.u32 %r11, %r11, %r12;\n" \
                     "  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%d0, %d1}, [%r7];\n  tcgen05.wait::ld.sync.aligned;\n" \
                     "  add.u32 %r11, %r11, %d0;\n  st.global.u32 [%aux], %r11;"
    aux = np.full(16, 7, np.uint32)
    with pytest.warns(SanitizerWarning) as rec:
        run_tc(tc_kernel(pre=pre, dump=32), dump=32, aux=aux)
    msgs = [str(r.message) for r in rec]
    assert len(msgs) == 2 and "reads register %d1 before" in msgs[0] and "reads register %d0 before" in msgs[1]
    assert aux[0] == 3

# ----------------------------------------------------------------------------- ld / st shapes
def st_expect(shape, num, base_off=0, split=0):
    """TMEM (128 lanes x 256 cols) after every thread stores tid*1000 + register with
    tcgen05.st.<shape>.x<num> at lane 32*warp + base_off, column 0 (ISA fragments)."""
    T = np.zeros((128, 256), np.int64)
    per = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}[shape]
    for t in range(128):
        w, l = divmod(t, 32)
        base = 32 * w + base_off
        for j in range(per * num):
            rep, r = divmod(j, per)
            if shape == "32x32b":
                lane, col = base + l, rep
            elif shape == "16x64b":
                lane, col = base + l // 4 + 8 * (l % 2), 2 * rep + (l // 2) % 2
            elif shape == "16x128b":
                lane, col = base + l // 4 + 8 * r, 4 * rep + l % 4
            elif shape == "16x256b":
                lane, col = base + l // 4 + 8 * (r // 2), 8 * rep + 2 * (l % 4) + r % 2
            else:
                lane, col = base + l % 16, rep + (l // 16) * split
            T[lane, col] = t * 1000 + j
    return T


SHAPES = [("32x32b", 1), ("32x32b", 4), ("32x32b", 128), ("16x64b", 1), ("16x64b", 8), ("16x64b", 128),
          ("16x128b", 1), ("16x128b", 16), ("16x128b", 64), ("16x256b", 1), ("16x256b", 4), ("16x256b", 32),
          ("16x32bx2", 1), ("16x32bx2", 16), ("16x32bx2", 64)]


def _regs(n):
    return "{" + ", ".join(f"%d{i}" for i in range(n)) + "}"


@pytest.mark.parametrize("shape,num,base_off", [(s, n, b) for s, n in SHAPES for b in (0, 16)
                                                 if b == 0 or s != "32x32b"])     # 16-lane shapes: two halves
def test_st_every_shape(shape, num, base_off):
    per = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}[shape]
    R = per * num
    split = 128 if shape == "16x32bx2" else 0
    sets = "\n".join(f"  mad.lo.u32 %d{j}, %r1, 1000, {j};" for j in range(R))
    half = f", {split}" if split else ""
    pre = (ZERO_ALL + "\n  add.u32 %r10, %r7, 128;\n  tcgen05.st.sync.aligned.32x32b.x128.b32 [%r10], "
           + _regs(128) + ";\n" + sets +
           f"\n  add.u32 %r10, %r7, {base_off << 16};\n  tcgen05.st.sync.aligned.{shape}.x{num}.b32 [%r10]{half}, "
           f"{_regs(R)};")
    out = run_tc(tc_kernel(pre=pre, dump=256), dump=256)
    np.testing.assert_array_equal(out.astype(np.int64), st_expect(shape, num, base_off, split))


@pytest.mark.parametrize("shape,num", [s for s in SHAPES if s[1] <= 32])
def test_ld_every_shape(shape, num):
    """TMEM filled with lane*1000 + column; each thread's registers after tcgen05.ld.<shape>
    are the cells the ISA fragment assigns it."""
    per = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}[shape]
    R = per * num
    split = 64 if shape == "16x32bx2" else 0
    fill = "\n".join(f"  mad.lo.u32 %d{j}, %r11, 1000, {j};" for j in range(128))
    half = f", {split}" if split else ""
    stores = "\n".join(f"  st.global.b32 [%rd9+{4 * j}], %d{j};" for j in range(R))
    pre = ("  and.b32 %r11, %r1, 127;\n" + fill + "\n  tcgen05.st.sync.aligned.32x32b.x128.b32 [%r7], " + _regs(128) +
           ";\n" + "\n".join(f"  add.u32 %d{j}, %d{j}, 128;" for j in range(128)) +
           "\n  add.u32 %r10, %r7, 128;\n  tcgen05.st.sync.aligned.32x32b.x128.b32 [%r10], " + _regs(128) +
           ";\n  tcgen05.wait::st.sync.aligned;\n"
           f"  tcgen05.ld.sync.aligned.{shape}.x{num}.b32 {_regs(R)}, [%r7]{half};\n  tcgen05.wait::ld.sync.aligned;\n"
           f"  mul.wide.u32 %rd9, %r1, {4 * R};\n  add.u64 %rd9, %rd9, %aux;\n" + stores)
    aux = np.zeros((128, R), np.uint32)
    run_tc(tc_kernel(pre=pre, dump=32), aux=aux, dump=32)
    T = st_expect(shape, num, 0, split)       # where register j of thread t lives
    want = np.zeros((128, R), np.int64)
    for lane in range(128):
        for col in range(256):
            v = T[lane, col]
            if v:
                want[v // 1000, v % 1000] = lane * 1000 + col
    want[0, 0] = 0 * 1000 + 0                 # thread 0 register 0: lane 0, column 0
    np.testing.assert_array_equal(aux.astype(np.int64), want)


def test_pack_and_unpack_16b():
    """.unpack::16b splits each register into the low halves of two adjacent columns;
    .pack::16b joins them back."""
    sets = "\n".join(f"  mad.lo.u32 %d{j}, %r1, 65536, {j};" for j in range(4))
    stores = "\n".join(f"  st.global.b32 [%rd9+{4 * j}], %d{j + 4};" for j in range(4))
    pre = (ZERO_ALL + "\n" + sets + "\n  tcgen05.st.sync.aligned.32x32b.x4.unpack::16b.b32 [%r7], {%d0, %d1, %d2, %d3};\n"
           "  tcgen05.wait::st.sync.aligned;\n"
           "  tcgen05.ld.sync.aligned.32x32b.x4.pack::16b.b32 {%d4, %d5, %d6, %d7}, [%r7];\n"
           "  tcgen05.wait::ld.sync.aligned;\n  mul.wide.u32 %rd9, %r1, 16;\n  add.u64 %rd9, %rd9, %aux;\n" + stores)
    aux = np.zeros((128, 4), np.uint32)
    out = run_tc(tc_kernel(pre=pre, dump=16), aux=aux, dump=16)
    t = np.arange(128)[:, None]
    reg = (t * 65536 + np.arange(4)) & 0xFFFFFFFF
    np.testing.assert_array_equal(out[:, 0:8:2], reg & 0xFFFF)
    np.testing.assert_array_equal(out[:, 1:8:2], reg >> 16)
    np.testing.assert_array_equal(aux, reg)


# ----------------------------------------------------------------------------- mma
def mma_image(A, B, at, bt, mode="none", ta=0, tb=0):
    """A (M x K) at 0 and B^T (N x K) at 16384 in the canonical layouts; tcgen05 descriptors."""
    img = np.zeros(32768, np.uint8)
    descs = []
    for start, X, t, tr in ((0, A, at, ta), (16384, B.T, bt, tb)):
        mn = X.shape[0]
        if not tr:
            if mode == "none":
                lbo, sbo = (mn // 8) * 128, 128
            else:
                lbo, sbo = 16, 8 * {"32B": 32, "64B": 64, "128B": 128}[mode]
            place(img, start, X, t, "K", mode, lbo, sbo)
        elif mode == "none":
            lbo, sbo = (mn // 8) * 128, 128
            place(img, start, X, t, "MN", mode, lbo, sbo)
        else:
            w = {"32B": 32, "64B": 64, "128B": 128}[mode]
            lbo, sbo = 8 * w * X.shape[1] // 8, 8 * w
            place(img, start, X, t, "MN", mode, lbo, sbo)
        descs.append(tcgen05_desc(start, lbo, sbo, mode))
    return img, descs[0], descs[1]


def ref(A, B, at):
    if at in ("s8", "u8"):
        return A.astype(np.int64) @ B.astype(np.int64)
    if at == "tf32":
        A = (np.asarray(A, np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
        B = (np.asarray(B, np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
    return A.astype(np.float64) @ B.astype(np.float64)


def d_matrix(out, m, n, dt="f32", ws=False):
    """D (m x n) from the TMEM dump per the data-path layouts (M=128: lane i = row i; M=64
    non-.ws: rows 16s..16s+15 in lanes 32s..)."""
    v = out.view(np.float32) if dt == "f32" else (out.view(np.int32) if dt == "s32"
                                                    else (out & 0xFFFF).astype(np.uint16).view(np.float16))
    if m == 128:
        return v[:, :n].astype(np.float64)
    if m == 64 and not ws:
        rows = [32 * (r // 16) + r % 16 for r in range(64)]
        return v[rows, :n].astype(np.float64)
    if m == 64:
        return np.concatenate([v[:64, :n // 2], v[64:128, :n // 2]], axis=1).astype(np.float64)
    return np.concatenate([v[32 * q:32 * q + 32, :n // 4] for q in range(4)], axis=1).astype(np.float64)


MMA = "  tcgen05.mma.cta_group::1.kind::{kind} [%t], %x, %y, %z, {en};"
KIND_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32}


@pytest.mark.parametrize("kind,dt,at,bt", [
    ("f16", "f32", "f16", "f16"), ("f16", "f16", "f16", "f16"), ("f16", "f32", "bf16", "bf16"),
    ("tf32", "f32", "tf32", "tf32"), ("f8f6f4", "f32", "e4m3", "e5m2"), ("f8f6f4", "f16", "e5m2", "e4m3"),
    ("f8f6f4", "f32", "e2m1", "e4m3"), ("i8", "s32", "s8", "s8"), ("i8", "s32", "u8", "s8")])
@pytest.mark.parametrize("m", [64, 128])
def test_mma_every_kind(kind, dt, at, bt, m):
    rng = np.random.default_rng(20)
    n, k = 32, KIND_K[kind]
    A, B = rand(rng, (m, k), at), rand(rng, (k, n), bt)
    if at == "e2m1":      # f8f6f4 4-bit elements: 16 per 16-byte chunk, then 8 bytes of padding
        img = np.zeros(32768, np.uint8)
        c = codes(A, "e2m1")
        for r in range(m):
            for j in range(k):
                byte = (r // 8) * 128 + (r % 8) * 16 + (j // 16) * (m // 8) * 128 + (j % 16) // 2
                img[byte] |= np.uint8(int(c[r, j]) << (4 * (j % 2)))
        place(img, 16384, B.T, bt, "K", "none", (n // 8) * 128, 128)
        da, db = tcgen05_desc(0, (m // 8) * 128, 128), tcgen05_desc(16384, (n // 8) * 128, 128)
    else:
        img, da, db = mma_image(A, B, at, bt)
    out = run_tc(tc_kernel(issue=MMA.format(kind=kind, en=0)), img, da, db, idesc(kind, m, n, dt, at, bt))
    got = d_matrix(out, m, n, dt)
    want = ref(A, B, at)
    if dt == "s32":
        np.testing.assert_array_equal(got, want)
    elif dt == "f16":
        np.testing.assert_allclose(got, want.astype(np.float16), rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("mode", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_mma_swizzles_and_transposes(mode, ta, tb):
    rng = np.random.default_rng(21)
    n = 64
    A, B = rand(rng, (128, 16), "bf16"), rand(rng, (16, n), "bf16")
    img, da, db = mma_image(A, B, "bf16", "bf16", mode, ta, tb)
    out = run_tc(tc_kernel(issue=MMA.format(kind="f16", en=0)), img, da, db,
                 idesc("f16", 128, n, "f32", "bf16", "bf16", ta=ta, tb=tb))
    np.testing.assert_allclose(d_matrix(out, 128, n), ref(A, B, "bf16"), rtol=1e-6, atol=1e-5)


def test_mma_128b_base32b_swizzle():
    """Swizzle code 1: 32-byte units permuted (address bits 5-6 XOR bits 7-8)."""
    rng = np.random.default_rng(22)
    A, B = rand(rng, (128, 8), "tf32"), rand(rng, (8, 32), "tf32")
    img = np.zeros(32768, np.uint8)
    for start, X in ((0, A), (16384, B.T)):
        c = codes(X, "tf32")
        for r in range(X.shape[0]):
            for j in range(8):
                a = start + (r // 8) * 1024 + (r % 8) * 128 + 4 * j
                a ^= ((a >> 7) & 3) << 5
                img[a:a + 4] = np.frombuffer(c[r, j].tobytes(), np.uint8)
    out = run_tc(tc_kernel(issue=MMA.format(kind="tf32", en=0)), img,
                 tcgen05_desc(0, 16, 1024, "128B_base32B"), tcgen05_desc(16384, 16, 1024, "128B_base32B"),
                 idesc("tf32", 128, 32, "f32", "tf32", "tf32"))
    np.testing.assert_allclose(d_matrix(out, 128, 32), ref(A, B, "tf32"), rtol=1e-6, atol=1e-5)


def test_mma_accumulate_negate_and_scale_input_d():
    rng = np.random.default_rng(23)
    n = 16
    A, B = rand(rng, (128, 16), "f16"), rand(rng, (16, n), "f16")
    img, da, db = mma_image(A, B, "f16", "f16")
    P = ref(A, B, "f16")
    issue = (MMA.format(kind="f16", en=0) + "\n" + MMA.format(kind="f16", en=1).replace("%z", "%r12") +
             "\n  tcgen05.mma.cta_group::1.kind::f16 [%t], %x, %y, %z, 1, 2;")
    pre = f"  mov.u32 %r12, {idesc('f16', 128, n, 'f32', 'f16', 'f16', neg_a=1)};"
    out = run_tc(tc_kernel(issue=issue, pre=pre), img, da, db, idesc("f16", 128, n, "f32", "f16", "f16"))
    # D = P; D = -P + D = 0; D = P + D * 2^-2
    np.testing.assert_allclose(d_matrix(out, 128, n), P, rtol=1e-6, atol=1e-5)
    issue = MMA.format(kind="f16", en=0) + "\n  tcgen05.mma.cta_group::1.kind::f16 [%t], %x, %y, %z, 1, 2;"
    out = run_tc(tc_kernel(issue=issue), img, da, db, idesc("f16", 128, n, "f32", "f16", "f16", neg_b=1))
    np.testing.assert_allclose(d_matrix(out, 128, n), -1.25 * P, rtol=1e-6, atol=1e-5)


def test_mma_disable_output_lane_mask():
    rng = np.random.default_rng(24)
    A, B = rand(rng, (128, 16), "f16"), rand(rng, (16, 16), "f16")
    img, da, db = mma_image(A, B, "f16", "f16")
    mask = [0x0000FFFF, 0, 0x80000001, 0xFFFFFFFF]
    pre = "\n".join(f"  mov.b32 %r{12 + i}, {m};" for i, m in enumerate(mask))
    issue = ("  tcgen05.mma.cta_group::1.kind::f16 [%t], %x, %y, %z, {%r12, %r13, %r14, %r15}, 0;")
    out = run_tc(tc_kernel(issue=issue, pre=ZERO_ALL + "\n" + pre), img, da, db,
                 idesc("f16", 128, 16, "f32", "f16", "f16"))
    got = d_matrix(out, 128, 16)
    off = np.array([(mask[lane // 32] >> (lane % 32)) & 1 for lane in range(128)], bool)
    np.testing.assert_array_equal(got[off], 0)
    np.testing.assert_allclose(got[~off], ref(A, B, "f16")[~off], rtol=1e-6, atol=1e-5)


def test_mma_a_from_tensor_memory():
    """A (128 x 16 f16) stored to TMEM columns 256.. (row m in lane m, two f16 per 32-bit
    column), tcgen05.mma [d], [a-tmem], b-desc."""
    rng = np.random.default_rng(25)
    n = 32
    A, B = rand(rng, (128, 16), "f16"), rand(rng, (16, n), "f16")
    img, _, db = mma_image(A, B, "f16", "f16")
    words = codes(A, "f16").astype(np.uint32)
    words = (words[:, 0::2] | (words[:, 1::2] << 16)).astype(np.uint32)        # (128, 8)
    aux = np.ascontiguousarray(words)
    pre = ("  mul.wide.u32 %rd9, %r1, 32;\n  add.u64 %rd9, %rd9, %aux;\n" +
           "\n".join(f"  ld.global.b32 %d{j}, [%rd9+{4 * j}];" for j in range(8)) +
           "\n  add.u32 %r10, %r7, 256;\n  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r10], " + _regs(8) + ";")
    issue = "  add.u32 %r11, %t, 256;\n  tcgen05.mma.cta_group::1.kind::f16 [%t], [%r11], %y, %z, 0;"
    out = run_tc(tc_kernel(issue=issue, pre=pre), img, 0, db, idesc("f16", 128, n, "f32", "f16", "f16"), aux=aux)
    np.testing.assert_allclose(d_matrix(out, 128, n), ref(A, B, "f16"), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("m", [32, 64, 128])
def test_mma_ws_layouts(m):
    rng = np.random.default_rng(26)
    n = 64
    A, B = rand(rng, (m, 16), "bf16"), rand(rng, (16, n), "bf16")
    img, da, db = mma_image(A, B, "bf16", "bf16")
    issue = "  tcgen05.mma.ws.cta_group::1.kind::f16 [%t], %x, %y, %z, 0;"
    out = run_tc(tc_kernel(issue=issue, pre=ZERO_ALL), img, da, db, idesc("f16", m, n, "f32", "bf16", "bf16"))
    np.testing.assert_allclose(d_matrix(out, m, n, ws=True), ref(A, B, "bf16"), rtol=1e-6, atol=1e-5)


def test_mma_m64_at_lane_16():
    rng = np.random.default_rng(27)
    A, B = rand(rng, (64, 16), "f16"), rand(rng, (16, 16), "f16")
    img, da, db = mma_image(A, B, "f16", "f16")
    issue = "  add.u32 %r11, %t, 1048576;\n  tcgen05.mma.cta_group::1.kind::f16 [%r11], %x, %y, %z, 0;"
    out = run_tc(tc_kernel(issue=issue, pre=ZERO_ALL), img, da, db, idesc("f16", 64, 16, "f32", "f16", "f16"))
    v = out.view(np.float32)
    rows = [32 * (r // 16) + 16 + r % 16 for r in range(64)]
    np.testing.assert_allclose(v[rows, :16], ref(A, B, "f16"), rtol=1e-6, atol=1e-5)


def test_mma_idesc_errors():
    img = np.zeros(32768, np.uint8)
    with pytest.raises(InterpreterError, match=r"instruction descriptor 0x[0-9a-f]+: D type .s32 is not allowed for "
                                               r".kind::f16 \(allowed: f16, f32\)"):
        run_tc(tc_kernel(issue=MMA.format(kind="f16", en=0)), img, tcgen05_desc(0, 128, 128),
               tcgen05_desc(16384, 128, 128), idesc("f16", 128, 8, "s32", "f16", "f16"))
    with pytest.raises(InterpreterError, match="M=96 is not allowed"):
        run_tc(tc_kernel(issue=MMA.format(kind="f16", en=0)), img, tcgen05_desc(0, 128, 128),
               tcgen05_desc(16384, 128, 128), idesc("f16", 96, 8, "f32", "f16", "f16"))


def test_mma_descriptor_version_bits():
    img = np.zeros(32768, np.uint8)
    with pytest.raises(InterpreterError, match="bits 46-48 must hold the fixed value 0b001"):
        run_tc(tc_kernel(issue=MMA.format(kind="f16", en=0)), img, tcgen05_desc(0, 128, 128) & ~(1 << 46),
               tcgen05_desc(16384, 128, 128), idesc("f16", 128, 8, "f32", "f16", "f16"))


# ----------------------------------------------------------------------------- block scaling
@pytest.mark.parametrize("kind,at,bt,nsf,sv", [
    ("mxf8f6f4", "e4m3", "e5m2", 1, ""), ("mxf4", "e2m1", "e2m1", 2, ".scale_vec::2X"),
    ("mxf4nvf4", "e2m1", "e2m1", 4, ".scale_vec::4X")])
def test_block_scaled_mma(kind, at, bt, nsf, sv):
    rng = np.random.default_rng(28)
    n = 64
    k = 32 if kind == "mxf8f6f4" else 64
    A, B = rand(rng, (128, k), at), rand(rng, (k, n), bt)
    img = np.zeros(32768, np.uint8)
    if kind == "mxf8f6f4":
        place(img, 0, A, at, "K", "none", 16 * 128, 128)
        place(img, 16384, B.T, bt, "K", "none", (n // 8) * 128, 128)
    else:                 # packed 4-bit: 32 elements per 16 bytes
        place(img, 0, A, "e2m1", "K", "none", 16 * 128, 128)
        place(img, 16384, B.T, "e2m1", "K", "none", (n // 8) * 128, 128)
    sa = rng.integers(120, 134, (128, nsf))        # ue8m0 exponents
    sb = rng.integers(120, 134, (nsf, n))
    # TMEM: scale A at columns 256.., row m in lane m, column 256 + m//32, byte j (ID 0);
    # scale B at columns 272.., column n in lane n%32 of every quarter, column 272 + n//32
    wa = np.zeros((128, 4), np.uint32)
    wb = np.zeros((128, 2), np.uint32)
    for m in range(128):
        for j in range(nsf):
            wa[m, m // 32] |= np.uint32(sa[m, j] << (8 * j))
    for nn in range(n):
        for j in range(nsf):
            for q in range(4):
                wb[32 * q + nn % 32, nn // 32] |= np.uint32(sb[j, nn] << (8 * j))
    aux = np.concatenate([wa, wb], axis=1)        # (128, 6)
    pre = ("  mul.wide.u32 %rd9, %r1, 24;\n  add.u64 %rd9, %rd9, %aux;\n" +
           "\n".join(f"  ld.global.b32 %d{j}, [%rd9+{4 * j}];" for j in range(6)) +
           "\n  add.u32 %r10, %r7, 256;\n  tcgen05.st.sync.aligned.32x32b.x4.b32 [%r10], {%d0, %d1, %d2, %d3};"
           "\n  add.u32 %r10, %r7, 272;\n  tcgen05.st.sync.aligned.32x32b.x2.b32 [%r10], {%d4, %d5};")
    issue = (f"  add.u32 %r11, %t, 256;\n  add.u32 %r12, %t, 272;\n"
             f"  tcgen05.mma.cta_group::1.kind::{kind}.block_scale{sv} [%t], %x, %y, %z, [%r11], [%r12], 0;")
    z = idesc_bs(128, n, at, bt, fp4=kind != "mxf8f6f4")
    out = run_tc(tc_kernel(issue=issue, pre=ZERO_ALL + "\n" + pre), img, tcgen05_desc(0, 16 * 128, 128),
                 tcgen05_desc(16384, (n // 8) * 128, 128), z, aux=np.ascontiguousarray(aux))
    blk = k // nsf
    SA = np.repeat(np.ldexp(1.0, sa - 127), blk, axis=1)
    SB = np.repeat(np.ldexp(1.0, sb - 127), blk, axis=0)
    want = (A.astype(np.float64) * SA) @ (B.astype(np.float64) * SB)
    np.testing.assert_allclose(d_matrix(out, 128, n), want, rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------- cp / shift
@pytest.mark.parametrize("shape,mc", [("128x256b", ""), ("4x256b", ""), ("128x128b", ""),
                                      ("64x128b", ".warpx2::02_13"), ("64x128b", ".warpx2::01_23"),
                                      ("32x128b", ".warpx4")])
def test_cp_shapes(shape, mc):
    lanes, bits = (int(x) for x in shape.replace("b", "").split("x"))
    nbytes = bits // 8
    rng = np.random.default_rng(29)
    data = rng.integers(0, 2 ** 32, (lanes, nbytes // 4), dtype=np.uint64).astype(np.uint32)
    img = np.zeros(32768, np.uint8)
    # the source: lanes x nbytes, K-major canonical layout (rows 16 bytes apart in core matrices)
    place(img, 0, data.view(np.uint8).reshape(lanes, nbytes).astype(np.uint8), "u8", "K", "none",
          lbo=max(lanes // 8, 1) * 128, sbo=128)
    issue = f"  tcgen05.cp.cta_group::1.{shape}{mc} [%t], %x;"
    out = run_tc(tc_kernel(issue=issue, pre=ZERO_ALL), img, tcgen05_desc(0, max(lanes // 8, 1) * 128, 128))
    want = np.zeros((128, 128), np.uint32)
    w = nbytes // 4
    if mc == ".warpx4":
        for q in range(4):
            want[32 * q:32 * q + 32, :w] = data
    elif mc == ".warpx2::02_13":
        for q in range(4):
            want[32 * q:32 * q + 32, :w] = data[32 * (q % 2):32 * (q % 2) + 32]
    elif mc == ".warpx2::01_23":
        for q in range(4):
            want[32 * q:32 * q + 32, :w] = data[32 * (q // 2):32 * (q // 2) + 32]
    else:
        want[:lanes, :w] = data
    np.testing.assert_array_equal(out, want)


def test_shift_down_moves_31_rows_of_256_bits():
    fill = "\n".join(f"  mad.lo.u32 %d{j}, %r11, 1000, {j};" for j in range(16))
    pre = ("  and.b32 %r11, %r1, 127;\n" + fill + "\n  tcgen05.st.sync.aligned.32x32b.x16.b32 [%r7], " + _regs(16) + ";")
    out = run_tc(tc_kernel(issue="  add.u32 %r11, %t, 2097152;\n  tcgen05.shift.cta_group::1.down [%r11];", pre=pre,
                           dump=16), dump=16)
    want = np.arange(128)[:, None] * 1000 + np.arange(16)
    want[33:64, :8] = want[32:63, :8]
    np.testing.assert_array_equal(out, want)


# ----------------------------------------------------------------------------- cta_group::2
def pair_kernel(issue, dump=128):
    """tc_kernel for a cluster of 2 with .cta_group::2: each CTA copies its own image
    (img + ctaid*32768), a cluster barrier makes both ready, CTA rank 0's thread 0 issues and
    commits with .multicast::cluster to both CTAs' mbarriers; each CTA dumps its own TMEM."""
    ptx = tc_kernel(issue=issue, dump=dump).replace(".cta_group::1", ".cta_group::2")
    ptx = ptx.replace("  ld.param.u64 %rd1, [img];\n",
                      "  ld.param.u64 %rd1, [img];\n  mov.u32 %r13, %ctaid.x;\n  mul.wide.u32 %rd10, %r13, 32768;\n"
                      "  add.u64 %rd1, %rd1, %rd10;\n")
    ptx = ptx.replace("  setp.eq.u32 %p2, %r1, 0;\n",
                      "  setp.eq.u32 %p2, %r1, 0;\n  mov.u32 %r14, %cluster_ctarank;\n  setp.eq.u32 %p4, %r14, 0;\n"
                      "  and.pred %p5, %p2, %p4;\n")
    ptx = ptx.replace("  bar.sync 0;\n  tcgen05.fence::after_thread_sync;\n  ld.shared.b32 %t, [tslot];",
                      "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
                      "  tcgen05.fence::after_thread_sync;\n  ld.shared.b32 %t, [tslot];")
    ptx = ptx.replace("  @!%p2 bra WAIT;", "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
                                            "  @!%p5 bra WAIT;")
    ptx = ptx.replace("  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [bar];",
                      "  mov.u16 %h1, 3;\n  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster"
                      ".multicast::cluster.b64 [bar], %h1;")
    ptx = ptx.replace("  ld.param.u64 %rd1, [out];\n", "  ld.param.u64 %rd1, [out];\n"
                      f"  mul.wide.u32 %rd10, %r13, {128 * dump * 4};\n  add.u64 %rd1, %rd1, %rd10;\n")
    ptx = ptx.replace("  .reg .pred %p<8>;", "  .reg .pred %p<8>; .reg .b16 %h1;")
    ptx = ptx.replace("END:\n  ret;", "END:\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n  ret;")
    return ptx


@pytest.mark.parametrize("m", [128, 256])
def test_mma_cta_group_2_pair(m):
    """M=256: each CTA holds 128 rows of A and half of B's N columns and receives its 128
    rows of D (all N columns, lane = row); M=128: 64 rows each, D in the "2x2" layout."""
    rng = np.random.default_rng(30)
    n = 64
    A, B = rand(rng, (m, 16), "bf16"), rand(rng, (16, n), "bf16")
    rows = m // 2
    imgs = []
    for c in range(2):
        img = np.zeros(32768, np.uint8)
        place(img, 0, A[c * rows:(c + 1) * rows], "bf16", "K", "none", (rows // 8) * 128, 128)
        place(img, 16384, B.T[c * n // 2:(c + 1) * n // 2], "bf16", "K", "none", (n // 16) * 128, 128)
        imgs.append(img)
    issue = "  tcgen05.mma.cta_group::2.kind::f16 [%t], %x, %y, %z, 0;"
    out = np.zeros((2, 128, 128), np.uint32)
    launch(pair_kernel(issue), "k", [np.concatenate(imgs), out, np.uint64(tcgen05_desc(0, (rows // 8) * 128, 128)),
                                     np.uint64(tcgen05_desc(16384, (n // 16) * 128, 128)),
                                     np.uint32(idesc("f16", m, n, "f32", "bf16", "bf16")), np.zeros(4, np.uint32)],
           grid=2, block=128, cluster=(2, 1, 1))
    D = ref(A, B, "bf16")
    for c in range(2):
        v = out[c].view(np.float32).astype(np.float64)
        if m == 256:
            got = v[:, :n]
        else:
            got = np.concatenate([v[:64, :n // 2], v[64:, :n // 2]], axis=1)
        np.testing.assert_allclose(got, D[c * rows:(c + 1) * rows], rtol=1e-6, atol=1e-5)


def test_pair_instruction_outside_a_cluster_of_two():
    issue = "  tcgen05.mma.cta_group::2.kind::f16 [%t], %x, %y, %z, 0;"
    ptx = tc_kernel(issue=issue)
    with pytest.raises(InterpreterError, match=r"<ptx>:\d+: a .cta_group::2 operation needs clusters of at least 2 "
                                               r"CTAs \(the pair is ranks 2k, 2k\+1\); the cluster has 1: tcgen05.mma"):
        run_tc(ptx, np.zeros(32768, np.uint8), tcgen05_desc(0, 128, 128), tcgen05_desc(16384, 128, 128),
               idesc("f16", 128, 16, "f32", "f16", "f16"))


def test_mma_descriptor_base_offset_and_strides():
    """A 64B-swizzled A whose pattern starts 256 bytes past a 512-byte boundary, at 768 (base
    offset (768 >> 7) & 7 = 6), and a no-swizzle B with gaps (LBO 4096, SBO 256)."""
    rng = np.random.default_rng(31)
    A, B = rand(rng, (128, 16), "f16"), rand(rng, (16, 32), "f16")
    img = np.zeros(32768, np.uint8)
    place(img, 512 + 256, A, "f16", "K", "64B", lbo=16, sbo=512, base=6)
    place(img, 16384, B.T, "f16", "K", "none", lbo=4096, sbo=256)
    issue = MMA.format(kind="f16", en=0)
    z = idesc("f16", 128, 32, "f32", "f16", "f16")
    db = tcgen05_desc(16384, 4096, 256)
    out = run_tc(tc_kernel(issue=issue), img, tcgen05_desc(768, 16, 512, "64B", base=6), db, z)
    np.testing.assert_allclose(d_matrix(out, 128, 32), ref(A, B, "f16"), rtol=1e-6, atol=1e-5)
    out = run_tc(tc_kernel(issue=issue), img, tcgen05_desc(768, 16, 512, "64B", base=0), db, z)
    assert not np.allclose(d_matrix(out, 128, 32), ref(A, B, "f16"))


def test_mma_reading_unfenced_generic_writes():
    from jax_pyptx.errors import AsyncProxyError
    rng = np.random.default_rng(32)
    A, B = rand(rng, (128, 16), "f16"), rand(rng, (16, 16), "f16")
    img, da, db = mma_image(A, B, "f16", "f16")
    ptx = tc_kernel(issue=MMA.format(kind="f16", en=0))
    with pytest.raises(AsyncProxyError, match=r"tcgen05.mma.cta_group::1.kind::f16 \(matrix B\) reads shared address "
                                              r"0x4000 'sm' \(\+16384\) through the async proxy, but the generic "
                                              r"proxy wrote it"):
        run_tc(ptx.replace("  fence.proxy.async.shared::cta;\n", ""), img, da, db,
               idesc("f16", 128, 16, "f32", "f16", "f16"))
    out = run_tc(ptx, img, da, db, idesc("f16", 128, 16, "f32", "f16", "f16"))
    np.testing.assert_allclose(d_matrix(out, 128, 16), ref(A, B, "f16"), rtol=1e-6, atol=1e-5)


def test_block_scaled_ue4m3_scales():
    """.kind::mxf4nvf4 with .ue4m3 scale factors (idesc bit 23 = 0), 4 per row (block 16)."""
    import ml_dtypes
    rng = np.random.default_rng(33)
    n, k = 32, 64
    A, B = rand(rng, (128, k), "e2m1"), rand(rng, (k, n), "e2m1")
    img = np.zeros(32768, np.uint8)
    place(img, 0, A, "e2m1", "K", "none", 16 * 128, 128)
    place(img, 16384, B.T, "e2m1", "K", "none", (n // 8) * 128, 128)
    vals = np.array([0.5, 0.75, 1.0, 1.5, 2.0, 3.0], np.float32)
    sa = rng.choice(vals, (128, 4))
    sb = rng.choice(vals, (4, n))
    ca = sa.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint32)
    cb = sb.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).astype(np.uint32)
    wa = np.zeros((128, 4), np.uint32)
    wb = np.zeros((128, 1), np.uint32)
    for m in range(128):
        for j in range(4):
            wa[m, m // 32] |= ca[m, j] << (8 * j)
    for nn in range(n):
        for j in range(4):
            for q in range(4):
                wb[32 * q + nn % 32, nn // 32] |= cb[j, nn] << (8 * j)
    aux = np.ascontiguousarray(np.concatenate([wa, wb], axis=1))
    pre = ("  mul.wide.u32 %rd9, %r1, 20;\n  add.u64 %rd9, %rd9, %aux;\n" +
           "\n".join(f"  ld.global.b32 %d{j}, [%rd9+{4 * j}];" for j in range(5)) +
           "\n  add.u32 %r10, %r7, 256;\n  tcgen05.st.sync.aligned.32x32b.x4.b32 [%r10], {%d0, %d1, %d2, %d3};"
           "\n  add.u32 %r10, %r7, 272;\n  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r10], {%d4};")
    issue = ("  add.u32 %r11, %t, 256;\n  add.u32 %r12, %t, 272;\n"
             "  tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%t], %x, %y, %z, [%r11], [%r12], 0;")
    z = idesc_bs(128, n, "e2m1", "e2m1", ue8m0=0, fp4=True)
    out = run_tc(tc_kernel(issue=issue, pre=pre), img, tcgen05_desc(0, 16 * 128, 128),
                 tcgen05_desc(16384, (n // 8) * 128, 128), z, aux=aux)
    want = (A.astype(np.float64) * np.repeat(sa, 16, axis=1)) @ (B.astype(np.float64) * np.repeat(sb, 16, axis=0))
    np.testing.assert_allclose(d_matrix(out, 128, n), want, rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------- one issuing thread per CTA
def _per_cta(ptx, dump):
    """Each CTA dumps its TMEM to its own rows of params.out (CTA c: rows 128c..)."""
    return ptx.replace("  add.u64 %rd5, %rd1, %rd2;",
                       f"  add.u64 %rd5, %rd1, %rd2;\n  mov.u32 %r13, %ctaid.x;\n"
                       f"  mul.wide.u32 %rd9, %r13, {128 * dump * 4};\n  add.u64 %rd5, %rd5, %rd9;")


# CTA c's B descriptor starts STEP * 16 bytes further per CTA rank
PER_CTA_B = ("  mov.u32 %r12, %ctaid.x;\n  mul.wide.u32 %rd10, %r12, STEP;\n  add.u64 %y, %y, %rd10;")


def test_mma_issued_by_one_thread_of_each_cta_together():
    """Three CTAs' issuing threads run tcgen05.mma together (one operation per CTA, each on its
    own B, two accumulating steps): every CTA's D is its own 2 * A @ B_c."""
    rng = np.random.default_rng(40)
    n = 32
    A = rand(rng, (128, 16), "bf16")
    Bs = [rand(rng, (16, n), "bf16") for _ in range(3)]
    img, da, db = mma_image(A, Bs[0], "bf16", "bf16")
    for c in (1, 2):
        place(img, 16384 + 4096 * c, Bs[c].T, "bf16", "K", "none", (n // 8) * 128, 128)
    issue = MMA.format(kind="f16", en=0) + "\n" + MMA.format(kind="f16", en=1)
    ptx = _per_cta(tc_kernel(issue=issue, pre=PER_CTA_B.replace("STEP", str(4096 >> 4))), 128)
    out = np.zeros((3 * 128, 128), np.uint32)
    launch(ptx, "k", [img, out, np.uint64(da), np.uint64(db), np.uint32(idesc("f16", 128, n, "f32", "bf16", "bf16")),
                      np.zeros(16, np.uint32)], grid=3, block=128)
    for c in range(3):
        np.testing.assert_allclose(d_matrix(out[128 * c:128 * (c + 1)], 128, n), 2 * ref(A, Bs[c], "bf16"),
                                   rtol=1e-6, atol=1e-5)


def test_mma_of_several_ctas_reports_the_cta_whose_operand_is_bad():
    """Issued together by CTAs 0 and 1, the operation of CTA 1 reads B past shared memory: the
    report names CTA 1's thread (CTA 0's operation is fine)."""
    rng = np.random.default_rng(41)
    A, B = rand(rng, (128, 16), "f16"), rand(rng, (16, 16), "f16")
    img, da, db = mma_image(A, B, "f16", "f16")
    ptx = _per_cta(tc_kernel(issue=MMA.format(kind="f16", en=0), pre=PER_CTA_B.replace("STEP", str(0x10000 >> 4))),
                   128)
    out = np.zeros((2 * 128, 128), np.uint32)
    with pytest.raises(InterpreterError, match=r"\(matrix B\): the matrix \(Desc\(start=0x14000, .* reaches shared "
                                               r"address 0x141fe, past the \d+ bytes of shared memory of this CTA"):
        launch(ptx, "k", [img, out, np.uint64(da), np.uint64(db), np.uint32(idesc("f16", 128, 16, "f32", "f16", "f16")),
                          np.zeros(16, np.uint32)], grid=2, block=128)
