"""mma.sp / mma.sp::ordered_metadata (sparse A) against NumPy: a structured-sparse A is built
dense, its kept elements packed into the A fragment and their positions into the metadata
registers by the PTX ISA's formulas (written out here, independent of isa.fragments), and D
must equal A_dense @ B + C. Undefined metadata is reported with its lane and bits."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from jax_pyptx import parse
from jax_pyptx.errors import InterpreterError, PtxValueError
from jax_pyptx.interpret import launch
from jax_pyptx.toolchain import ptxas_check

HDR = ".version 8.5\n.target sm_90\n.address_size 64\n"
LANE = np.arange(32)
G, T = LANE >> 2, LANE % 4
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "s4": 4, "u4": 4}
DT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32, "s8": np.int8, "u8": np.uint8,
      "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
CHUNK = {16: 4, 8: 4, 32: 2, 4: 8}        # dense elements per chunk; half of them are kept


def frag(which, K, bits):
    """(rows, cols) [32, n] of the fragment elements (ISA: groupID = lane >> 2, threadID_in_group
    = lane % 4; register r holds per = 32/bits elements, element i = r * per + j). A: the kept
    elements, compressed column; row groupID + 8 * (r % 2), column per * t + j + 4 * per * (r // 2).
    B: row per * t + j + 4 * per * r, column groupID. C/D: row groupID + 8 * (i >= 2), column
    2 * t + i % 2."""
    per = 32 // bits
    g, t = G[:, None], T[:, None]
    if which == "c":
        i = np.arange(4)[None, :]
        return g + 8 * (i // 2), 2 * t + i % 2
    kk = K // 2 if which == "a" else K
    n = 16 * kk // 32 if which == "a" else 8 * kk // 32
    i = np.arange(n)[None, :]
    r, j = i // per, i % per
    if which == "a":
        return g + 8 * (r % 2), per * t + j + 4 * per * (r // 2)
    return per * t + j + 4 * per * r, g + 0 * i


def sparse_a(rng, K, bits, ordered, signed=True):
    """A dense 16 x K structured-sparse A (values small integers, exact in every type), its kept
    elements [16, K/2] and the position of each kept element in its chunk [16, K/2]."""
    chunk = CHUNK[bits]
    keep = chunk // 2
    dense = np.zeros((16, K))
    kept = np.zeros((16, K // 2))
    pos = np.zeros((16, K // 2), np.int64)
    for r in range(16):
        for q in range(K // chunk):
            if bits == 4:                  # two of the four two-wide sub-chunks
                sub = rng.choice(4, 2, replace=False)
                sub = np.sort(sub) if ordered else sub
                p = np.array([2 * sub[0], 2 * sub[0] + 1, 2 * sub[1], 2 * sub[1] + 1])
            else:
                p = rng.choice(chunk, keep, replace=False)
                p = np.sort(p) if ordered else p
            v = rng.integers(1, 4, keep) * (rng.choice([-1, 1], keep) if signed else 1)
            dense[r, q * chunk + p] = v
            kept[r, q * keep:(q + 1) * keep] = v
            pos[r, q * keep:(q + 1) * keep] = p
    return dense, kept, pos


def metadata(pos, K, bits, sel):
    """The 32 metadata registers: chunk q of row r is the 4-bit field at bit 16 * (r >= 8) +
    4 * (q % 4) of lane 4 * (r % 8) + nthreads * sel + q // 4 (nthreads = chunks per row / 4);
    its low 2 bits index the first kept element (pair for 4-bit types), the high 2 bits the
    second; a tf32 field is 0b0100 (position 0 kept) or 0b1110 (position 1)."""
    chunk = CHUNK[bits]
    keep = chunk // 2
    nthr = K // chunk // 4
    e = np.zeros(32, np.uint32)
    for r in range(16):
        for q in range(K // chunk):
            p = pos[r, q * keep:(q + 1) * keep]
            if bits == 32:
                f = 0b0100 if p[0] == 0 else 0b1110
            elif bits == 4:
                f = (p[0] // 2) | (p[2] // 2) << 2
            else:
                f = p[0] | p[1] << 2
            e[4 * (r % 8) + nthr * sel + q // 4] |= np.uint32(f << (16 * (r // 8) + 4 * (q % 4)))
    return e


def pack(vals, t):
    """[32, n] element values of type t -> [32, regs] uint32 (element 0 in the low bits)."""
    bits = BITS[t]
    if t in ("s4", "u4"):
        raw = (vals.astype(np.int64) & 0xF).astype(np.uint32)
    elif t == "tf32":
        return vals.astype(np.float32).view(np.uint32)
    else:
        raw = np.ascontiguousarray(vals.astype(DT[t])).view(np.uint8 if bits == 8 else np.uint16).astype(np.uint32)
    per = 32 // bits
    raw = raw.reshape(32, -1, per)
    return sum(raw[:, :, k] << np.uint32(bits * k) for k in range(per)).astype(np.uint32)


def kernel(opcode, mods, na, nb, nc, sel):
    regs = lambda p, n: "{" + ", ".join(f"%{p}{k}" for k in range(n)) + "}"
    lines = [HDR, ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pe, "
             ".param .u64 pd)", "{", f".reg .b32 %a<{na}>, %b<{nb}>, %c<{nc}>, %d<{nc}>, %e0;",
             ".reg .u32 %t; .reg .u64 %o, %p;", "mov.u32 %t, %tid.x;"]
    for name, n in (("a", na), ("b", nb), ("c", nc), ("e", 1)):
        lines.append(f"ld.param.u64 %p, [p{name}]; mul.wide.u32 %o, %t, {4 * n}; add.u64 %p, %p, %o;")
        lines += [f"ld.global.b32 %{name}{k}, [%p+{4 * k}];" for k in range(n)]
    lines.append(f"{opcode}.sync.aligned.{mods} {regs('d', nc)}, {regs('a', na)}, {regs('b', nb)}, "
                 f"{regs('c', nc)}, %e0, {sel};")
    lines.append(f"ld.param.u64 %p, [pd]; mul.wide.u32 %o, %t, {4 * nc}; add.u64 %p, %p, %o;")
    lines += [f"st.global.b32 [%p+{4 * k}], %d{k};" for k in range(nc)]
    return "\n".join(lines + ["ret;", "}"]) + "\n"


CASES = [  # (opcode, shape, dtype, atype, btype, sel)
    ("mma.sp", "m16n8k16", "f32", "f16", "f16", 2),
    ("mma.sp", "m16n8k16", "f16", "f16", "f16", 0),
    ("mma.sp", "m16n8k32", "f16", "f16", "f16", 1),
    ("mma.sp", "m16n8k32", "f32", "bf16", "bf16", 0),
    ("mma.sp", "m16n8k8", "f32", "tf32", "tf32", 3),
    ("mma.sp", "m16n8k16", "f32", "tf32", "tf32", 1),
    ("mma.sp", "m16n8k32", "s32", "s8", "s8", 1),
    ("mma.sp", "m16n8k64", "s32", "u8", "s8", 0),
    ("mma.sp", "m16n8k64", "s32", "s4", "u4", 1),
    ("mma.sp", "m16n8k64", "f32", "e4m3", "e5m2", 0),
    ("mma.sp::ordered_metadata", "m16n8k16", "f32", "bf16", "bf16", 3),
    ("mma.sp::ordered_metadata", "m16n8k64", "f32", "e4m3", "e4m3", 0),
    ("mma.sp::ordered_metadata", "m16n8k128", "s32", "u4", "u4", 0),
]


def build(opcode, shape, dt, at, bt, sel, seed=0):
    K = int(shape.split("k")[1])
    bits = BITS[at]
    ordered = opcode.endswith("ordered_metadata")
    rng = np.random.default_rng(seed)
    dense, kept, pos = sparse_a(rng, K, bits, ordered, signed=at not in ("u8", "u4"))
    B = rng.integers(-3, 4, (K, 8)).astype(np.float64) if bt not in ("u8", "u4") else \
        rng.integers(0, 7, (K, 8)).astype(np.float64)
    C = rng.integers(-8, 9, (16, 8)).astype(np.float64)
    ar, ac = frag("a", K, bits)
    br, bc = frag("b", K, bits)
    cr, cc = frag("c", K, bits)
    a = pack(kept[ar, ac], at)
    b = pack(B[br, bc], bt)
    e = metadata(pos, K, bits, sel)
    if dt == "f16":
        c = pack(C[cr, cc], "f16")
    else:
        c = C[cr, cc].astype(np.float32 if dt == "f32" else np.int32).view(np.uint32)
    ct = dt
    mods = f"{shape}.row.col.{dt}.{at}.{bt}.{ct}"
    text = kernel(opcode, mods, a.shape[1], b.shape[1], c.shape[1], sel)
    return text, (a, b, c, e), dense @ B + C, (cr, cc)


def run(text, regs, nc):
    a, b, c, e = regs
    d = np.zeros((32, nc), np.uint32)
    launch(text, "k", [a, b, c, e, d], block=32)
    return d


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[4]}-sel{c[5]}")
def test_sparse_mma_matches_dense_product(case):
    text, regs, want, (cr, cc) = build(*case)
    dt = case[2]
    d = run(text, regs, regs[2].shape[1])
    if dt == "f16":
        got = d.astype(np.uint32)
        halves = np.stack([got & 0xFFFF, got >> 16], axis=2).reshape(32, -1).astype(np.uint16).view(np.float16)
        got = halves.astype(np.float64)
    else:
        got = d.view(np.float32 if dt == "f32" else np.int32).astype(np.float64)
    np.testing.assert_array_equal(got, want[cr, cc])


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}-{c[4]}")
def test_ptxas_accepts(case):
    ptxas_check(build(*case)[0], "sm_90a")


def test_metadata_of_other_threads_is_ignored():
    text, (a, b, c, e), want, (cr, cc) = build(*CASES[0])      # selector 2: lanes 4g + 2
    noise = e.copy()
    others = LANE % 4 != 2
    noise[others] = np.uint32(0xFFFFFFFF)                         # undefined if it were read
    d = run(text, (a, b, c, noise), 4)
    np.testing.assert_array_equal(d.view(np.float32), want[cr, cc].astype(np.float32))


def test_undefined_metadata_is_reported():
    text, (a, b, c, e), _, _ = build(*CASES[0])
    bad = e.copy()
    bad[4 * 3 + 2] = (bad[4 * 3 + 2] & ~np.uint32(0xF << 20)) | np.uint32(0b0101 << 20)   # row 11, chunk 1
    with pytest.raises(InterpreterError) as ei:
        run(text, (a, b, c, bad), 4)
    line = next(i + 1 for i, t in enumerate(text.splitlines()) if t.startswith("mma.sp"))
    assert str(ei.value).startswith(
        f"<ptx>:{line}: mma.sp: undefined sparsity metadata 0b0101 for chunk 1 (columns 4..7) of row 11 of A, "
        f"bits 20..23 of lane 14's metadata register (sparsity selector 2): the two indices of a chunk must "
        f"differ: mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")


def test_ordered_metadata_rejects_descending_indices():
    text, (a, b, c, e), _, _ = build(*CASES[10])
    bad = e.copy()
    bad[3] = (bad[3] & ~np.uint32(0xF)) | np.uint32(0b0001)       # row 0, chunk 0: indices 1, 0
    with pytest.raises(InterpreterError) as ei:
        run(text, (a, b, c, bad), 4)
    assert ("undefined sparsity metadata 0b0001 for chunk 0 (columns 0..3) of row 0 of A, bits 0..3 of "
            "lane 3's metadata register (sparsity selector 3): ::ordered_metadata needs the first index "
            "below the second") in str(ei.value)
    # the same field is fine for mma.sp, which takes the indices in any order
    text2 = text.replace("mma.sp::ordered_metadata", "mma.sp")
    d = run(text2, (a, b, c, bad), 4)
    assert np.isfinite(d.view(np.float32)).all()


def test_bad_tf32_field_and_bad_selector():
    text, (a, b, c, e), _, _ = build(*CASES[4])
    bad = e.copy()
    bad[3] = (bad[3] & ~np.uint32(0xF)) | np.uint32(0b1000)
    with pytest.raises(InterpreterError) as ei:
        run(text, (a, b, c, bad), 4)
    assert "a tf32 field must be 0b0100 or 0b1110" in str(ei.value)
    text2, regs, _, _ = build(*CASES[2])                           # m16n8k32 f16: selector 0..1
    bad_sel = text2.replace(", %e0, 1;", ", %e0, 2;")
    with pytest.raises(PtxValueError, match=r"operand 6: immediate 2 is out of range; allowed: 0..1"):
        run(bad_sel, regs, 2)                                        # parse refuses it, as ptxas does
    with pytest.raises(InterpreterError) as ei:                      # and so does the interpreter
        run(parse(bad_sel, check=False), regs, 2)
    assert "sparsity selector 2 of mma.sp m16n8k32 with 16-bit inputs: allowed: 0..1" in str(ei.value)
