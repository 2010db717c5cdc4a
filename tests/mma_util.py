"""Test helpers for the wgmma / tcgen05 interpreter tests: kernels that copy a shared-memory
image from global memory and run matrix instructions on it, and independent NumPy writers of
the PTX ISA's operand layouts (written from the ISA's prose, not from the interpreter's code)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from jax_pyptx.interpret import launch

HDR90 = ".version 8.4\n.target sm_90a\n.address_size 64\n"
HDR100 = ".version 8.7\n.target sm_100a\n.address_size 64\n"

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32, "f32": np.float32,
      "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "s8": np.int8, "u8": np.uint8,
      "e2m1": ml_dtypes.float4_e2m1fn}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1, "e2m1": 4}


def rand(rng, shape, t):
    """Random values exactly representable in ``t``."""
    if t in ("s8",):
        return rng.integers(-128, 128, shape).astype(np.int8)
    if t == "u8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if t == "b1":
        return rng.integers(0, 2, shape).astype(np.uint8)
    if t == "e2m1":
        return rng.choice([-6, -4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4, 6], shape).astype(np.float32)
    if t in ("e4m3", "e5m2"):
        return rng.uniform(-4, 4, shape).astype(NP[t]).astype(np.float32)
    return rng.standard_normal(shape).astype(NP[t]).astype(np.float32)


def codes(vals, t):
    """Element bit codes (uint) of values of type ``t``."""
    if t == "tf32":
        return np.asarray(vals, np.float32).view(np.uint32)
    if t in ("s8", "u8"):
        return np.asarray(vals).astype(NP[t]).view(np.uint8)
    if t == "b1":
        return np.asarray(vals, np.uint8)
    if t == "e2m1":
        return np.asarray(vals, np.float32).astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF
    a = np.asarray(vals, np.float32).astype(NP[t])
    return a.view({2: np.uint16, 1: np.uint8}[a.dtype.itemsize])


def swz(addr, mode, base=0):
    """The swizzle of a byte address (the ISA's "byte-address bits [4:6] XOR bits [7:9]" for
    128B, [4:5]/[7:8] for 64B, [4]/[7] for 32B; a pattern that starts at a non-aligned address
    names its row with the base offset)."""
    n = {"none": 0, "32B": 1, "64B": 2, "128B": 3}[mode]
    if not n:
        return addr
    row = ((addr >> 7) - base) & 7
    return addr ^ ((row & ((1 << n) - 1)) << 4)


def place(img, start, M, t, major, mode, lbo, sbo, base=0):
    """Write matrix ``M`` (mn x k values of type t) into the byte image ``img`` at ``start`` in
    the canonical layout: K-major: core matrices of 8 rows x 16 bytes (rows 16 bytes apart
    without swizzling, a whole swizzle width apart with it); MN-major: 16 bytes of MN per K row.
    LBO / SBO as the ISA's "Strides" section defines them."""
    bits = BITS[t]
    c = codes(M, t)
    mn, k = M.shape
    width = {"none": 16, "32B": 32, "64B": 64, "128B": 128}[mode]
    per16 = 128 // bits
    for r in range(mn):
        for col in range(k):
            if major == "K":
                chunk, within = divmod(col, per16)
                if mode == "none":
                    byte = start + (r // 8) * sbo + (r % 8) * 16 + chunk * lbo
                else:
                    byte = start + (r // 8) * sbo + (r % 8) * width + chunk * 16
            else:
                chunk, within = divmod(r, per16)
                if mode == "none":
                    byte = start + chunk * sbo + (col // 8) * lbo + (col % 8) * 16
                else:
                    atom, cc = divmod(chunk, width // 16)
                    byte = start + atom * lbo + (col // 8) * sbo + (col % 8) * width + cc * 16
            bitpos = within * bits
            byte = swz(byte + bitpos // 8, mode, base)
            if bits >= 8:
                nb = bits // 8
                img[byte:byte + nb] = np.frombuffer(int(c[r, col]).to_bytes(nb, "little"), np.uint8)
            else:
                sh = bitpos % 8
                img[byte] = (int(img[byte]) & ~(((1 << bits) - 1) << sh) & 0xFF) | (int(c[r, col]) << sh)
    return img


def wgmma_desc(start, lbo, sbo, mode="none", base=0):
    """The ISA's wgmma matrix descriptor (Matrix Descriptor Format)."""
    code = {"none": 0, "128B": 1, "64B": 2, "32B": 3}[mode]
    return ((start & 0x3FFFF) >> 4) | ((lbo & 0x3FFFF) >> 4) << 16 | ((sbo & 0x3FFFF) >> 4) << 32 | \
        base << 49 | code << 62


def tcgen05_desc(start, lbo, sbo, mode="none", base=0):
    code = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}[mode]
    return ((start & 0x3FFFF) >> 4) | ((lbo & 0x3FFFF) >> 4) << 16 | ((sbo & 0x3FFFF) >> 4) << 32 | \
        1 << 46 | base << 49 | code << 61


def acc_matrix(out, n, dt="f32"):
    """The 64 x N matrix from per-thread accumulator registers (128 threads, PTX ISA "Register
    Fragments", matrix D: row 16w + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) + i%2)."""
    out = np.asarray(out).reshape(128, -1)
    if dt == "f16":
        vals = out.astype(np.uint32)
        el = np.stack([vals & 0xFFFF, vals >> 16], axis=2).reshape(128, -1).astype(np.uint16).view(np.float16)
    elif dt == "s32":
        el = out.view(np.int32)
    else:
        el = out.view(np.float32)
    D = np.zeros((64, n), np.float64)
    for t in range(128):
        w, lane = divmod(t, 32)
        for i in range(n // 2):
            D[16 * w + lane // 4 + 8 * ((i // 2) % 2), 8 * (i // 4) + 2 * (lane % 4) + i % 2] = el[t, i]
    return D


def a_regs(A, t):
    """Per thread (128) the four b32 A registers of wgmma's A fragment (the mma.m16n8kK A
    layout per warp, warp w holding rows 16w..16w+15): element order low bits first."""
    bits = BITS[t]
    per = 32 // bits
    c = codes(A, t).astype(np.uint64)
    k = A.shape[1]
    out = np.zeros((128, 4), np.uint32)
    for th in range(128):
        w, lane = divmod(th, 32)
        g, tig = lane // 4, lane % 4
        for r in range(4):
            v = 0
            for j in range(per):
                row = 16 * w + g + 8 * (r % 2)
                col = tig * per + j + (k // 2) * (r // 2)
                v |= int(c[row, col]) << (bits * j)
            out[th, r] = v
    return out


def wgmma_kernel(body, nacc, acc_type="f32", nbytes=16384, cin=False, aregs=False, extra_regs=""):
    """PTX of a one-warpgroup kernel: copy ``nbytes`` of params.img into shared ``sm`` (at
    shared address 0), %da / %db = the descriptors from params plus (sm >> 4), optional
    initial accumulators from params.cin and A registers %a0..%a3 from params.areg, then
    ``body`` (the wgmma lines; {acc} is the accumulator vector), and store the accumulators."""
    acc = "{" + ", ".join(f"%c{i}" for i in range(nacc)) + "}"
    rt = {"f32": ".f32", "f16": ".b32", "s32": ".s32"}[acc_type]
    load_c = "\n".join(f"  ld.global.b32 %c{i}, [%rd7+{4 * i}];" for i in range(nacc)) if cin else ""
    load_a = "\n".join(f"  ld.global.b32 %a{i}, [%rd8+{4 * i}];" for i in range(4)) if aregs else ""
    st = "\n".join(f"  st.global.b32 [%rd5+{4 * i}], %c{i};" for i in range(nacc))
    return HDR90 + f"""
.visible .entry k(.param .u64 img, .param .u64 out, .param .u64 da, .param .u64 db, .param .u64 cin,
                  .param .u64 areg)
{{
  .reg .u32 %r<10>; .reg .u64 %rd<10>; .reg {rt} %c<{nacc}>; .reg .b32 %a<4>; .reg .b64 %da, %db;
  .reg .pred %p<4>; .reg .b32 %v<4>;{extra_regs}
  .shared .align 1024 .b8 sm[{nbytes}];
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [img];
  mov.u32 %r2, %r1;
COPY:
  setp.ge.u32 %p0, %r2, {nbytes // 16};
  @%p0 bra DONE;
  mul.wide.u32 %rd2, %r2, 16;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.v4.b32 {{%v0, %v1, %v2, %v3}}, [%rd3];
  mov.u32 %r3, sm;
  cvt.u32.u64 %r4, %rd2;
  add.u32 %r4, %r4, %r3;
  st.shared.v4.b32 [%r4], {{%v0, %v1, %v2, %v3}};
  add.u32 %r2, %r2, 128;
  bra COPY;
DONE:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  ld.param.u64 %da, [da];
  ld.param.u64 %db, [db];
  mov.u32 %r3, sm;
  cvt.u64.u32 %rd6, %r3;
  shr.u64 %rd6, %rd6, 4;
  add.u64 %da, %da, %rd6;
  add.u64 %db, %db, %rd6;
  ld.param.u64 %rd7, [cin];
  ld.param.u64 %rd8, [areg];
  mul.wide.u32 %rd2, %r1, {4 * nacc};
  add.u64 %rd7, %rd7, %rd2;
  mul.wide.u32 %rd2, %r1, 16;
  add.u64 %rd8, %rd8, %rd2;
{load_c}
{load_a}
  wgmma.fence.sync.aligned;
{body.replace("{acc}", acc)}
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, {4 * nacc};
  add.u64 %rd5, %rd1, %rd2;
{st}
  ret;
}}
"""


def run_wgmma(ptx, img, nacc, da=0, db=0, cin=None, areg=None, **kw):
    out = np.zeros(128 * nacc, np.uint32)
    cin = np.zeros(128 * nacc, np.uint32) if cin is None else np.ascontiguousarray(cin, np.uint32)
    areg = np.zeros((128, 4), np.uint32) if areg is None else areg
    launch(ptx, "k", [img, out, np.uint64(da), np.uint64(db), cin, areg], block=128, **kw)
    return out


def tc_kernel(issue="", pre="", ncols=512, dump=128, nbytes=32768, cluster=False, extra_regs="", dealloc=True,
              zero=True):
    """PTX of a 128-thread sm_100a kernel: copy ``nbytes`` of params.img into shared ``sm``;
    warp 0 allocates ``ncols`` TMEM columns (address in %t); every thread runs ``pre``; thread
    0 runs ``issue`` and commits to an mbarrier that every thread waits on; then warp w dumps
    TMEM lanes 32w..32w+31, columns 0..dump-1 (tcgen05.ld.32x32b) to params.out[lane, col];
    warp 0 deallocates. Params: img, out, u64 x, u64 y, u32 z, u64 aux (user values). With
    ``zero`` every thread first zeroes its lane's columns 0..min(dump, ncols)-1."""
    chunks = []
    for c0 in range(0, dump, 128):
        m = min(128, dump - c0)
        regs = ", ".join(f"%d{i}" for i in range(m))
        chunks.append(f"  add.u32 %r8, %r7, {c0};\n  tcgen05.ld.sync.aligned.32x32b.x{m}.b32 {{{regs}}}, [%r8];\n"
                      f"  tcgen05.wait::ld.sync.aligned;\n"
                      + "\n".join(f"  st.global.b32 [%rd5+{4 * (c0 + i)}], %d{i};" for i in range(m)))
    dumps = "\n".join(chunks)
    zeros = ""
    if zero:
        zc = min(dump, ncols)
        zeros = "\n".join(f"  mov.b32 %d{i}, 0;" for i in range(min(zc, 128)))
        for c0 in range(0, zc, 128):
            m = min(128, zc - c0)
            zeros += (f"\n  add.u32 %r8, %r7, {c0};\n  tcgen05.st.sync.aligned.32x32b.x{m}.b32 [%r8], {{"
                      + ", ".join(f"%d{i}" for i in range(m)) + "};")
    return HDR100 + f"""
.visible .entry k(.param .u64 img, .param .u64 out, .param .u64 x, .param .u64 y, .param .u32 z, .param .u64 aux)
{{
  .reg .u32 %r<16>; .reg .u64 %rd<12>; .reg .b32 %d<128>; .reg .b64 %x, %y, %aux; .reg .b32 %z, %t;
  .reg .pred %p<8>; .reg .b32 %v<4>;{extra_regs}
  .shared .align 1024 .b8 sm[{nbytes}];
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 tslot;
  mov.u32 %r1, %tid.x;
  shr.u32 %r9, %r1, 5;
  setp.eq.u32 %p1, %r9, 0;
  setp.eq.u32 %p2, %r1, 0;
  @%p1 tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tslot], {ncols};
  @%p2 mbarrier.init.shared::cta.b64 [bar], 1;
  ld.param.u64 %rd1, [img];
  mov.u32 %r2, %r1;
COPY:
  setp.ge.u32 %p0, %r2, {nbytes // 16};
  @%p0 bra DONE;
  mul.wide.u32 %rd2, %r2, 16;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.v4.b32 {{%v0, %v1, %v2, %v3}}, [%rd3];
  mov.u32 %r3, sm;
  cvt.u32.u64 %r4, %rd2;
  add.u32 %r4, %r4, %r3;
  st.shared.v4.b32 [%r4], {{%v0, %v1, %v2, %v3}};
  add.u32 %r2, %r2, 128;
  bra COPY;
DONE:
  fence.proxy.async.shared::cta;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  ld.shared.b32 %t, [tslot];
  ld.param.u64 %x, [x];
  ld.param.u64 %y, [y];
  ld.param.u32 %z, [z];
  ld.param.u64 %aux, [aux];
  shl.b32 %r7, %r9, 21;
  add.u32 %r7, %r7, %t;
{zeros}
{pre}
  tcgen05.wait::st.sync.aligned;
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  tcgen05.fence::after_thread_sync;
  @!%p2 bra WAIT;
{issue}
  tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
  @!%p3 bra WAIT;
  tcgen05.fence::after_thread_sync;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, {4 * dump};
  add.u64 %rd5, %rd1, %rd2;
{dumps}
  tcgen05.fence::before_thread_sync;
  bar.sync 0;
  @!%p1 bra END;
  {"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %t, " + str(ncols) + ";" if dealloc else ""}
END:
  ret;
}}
"""


def run_tc(ptx, img=None, x=0, y=0, z=0, aux=None, dump=128, **kw):
    out = np.zeros((128, dump), np.uint32)
    img = np.zeros(32768, np.uint8) if img is None else img
    aux = np.zeros(16, np.uint32) if aux is None else aux
    launch(ptx, "k", [img, out, np.uint64(x), np.uint64(y), np.uint32(z), aux], block=128, **kw)
    return out


def idesc(kind, m, n, dt, at, bt, neg_a=0, neg_b=0, ta=0, tb=0, sat=0):
    """The ISA's instruction descriptor, Table 42 (kind f16 / tf32 / f8f6f4 / i8)."""
    codes_ = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5,
              "u8": 0, "s8": 1}
    return (sat << 3 | {"f16": 0, "f32": 1, "s32": 2}[dt] << 4 | codes_[at] << 7 | codes_[bt] << 10 |
            neg_a << 13 | neg_b << 14 | ta << 15 | tb << 16 | (n >> 3) << 17 | (m >> 4) << 24)


def idesc_bs(m, n, at, bt, sfa_id=0, sfb_id=0, ue8m0=1, fp4=False):
    """Tables 43/44: block-scaled kinds (D f32; M >> 7 at bits 27-28)."""
    c = {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 1 if fp4 else 5}
    return (sfb_id << 4 | c[at] << 7 | c[bt] << 10 | (n >> 3) << 17 | ue8m0 << 23 | (m >> 7) << 27 |
            sfa_id << 29)
