"""Warp-level MMA (mma.sync, ldmatrix, stmatrix, movmatrix), cp.async and Hopper wgmma: every
form of the mma, async-copy and wgmma families traced and assembled by ptxas for the lowest
target that has it (sm_80 for the Ampere forms, sm_90a for the Hopper ones, sm_100a for the
Blackwell 8-bit ldmatrix/stmatrix)."""
import re

from jax_pyptx import kernel, ptx, reg, smem
from jax_pyptx.types import b32, bf16, f16, f32, f64, s32, u32, u64


from .isa_util import assemble, forms_used, inst, missing

# (shape, A regs, B regs) of mma.sync, per family of multiplicand types (PTX ISA "Matrix shape")
F16_SHAPES = (("m8n8k4", 2, 2), ("m16n8k8", 2, 1), ("m16n8k16", 4, 2))
INT8_SHAPES = (("m8n8k16", 1, 1), ("m16n8k16", 2, 1), ("m16n8k32", 4, 2))
INT4_SHAPES = (("m8n8k32", 1, 1), ("m16n8k32", 2, 1), ("m16n8k64", 4, 2))
B1_SHAPES = (("m8n8k128", 1, 1), ("m16n8k128", 2, 1), ("m16n8k256", 4, 2))
F64_SHAPES = (("m8n8k4", 1, 1, 80), ("m16n8k4", 2, 1, 90), ("m16n8k8", 4, 2, 90),
              ("m16n8k16", 8, 4, 90))


def _acc(t, shape, n16, n8=None):
    """Accumulator of ``t`` for ``shape``: m8n8k4 holds 8 f32 / 4 f16x2, m8n8 int 2, else 4/2."""
    if shape == "m8n8k4":
        return reg.array(t, n8 or (8 if t is f32 else 4))
    return reg.array(t, n16)


# mma.sp: A holds half of K (PTX ISA "Matrix fragments for mma.sp"): (shape, A and B regs)
SPARSE = {"f16": (("m16n8k16", 2), ("m16n8k32", 4)), "bf16": (("m16n8k16", 2), ("m16n8k32", 4)),
          "tf32": (("m16n8k8", 2), ("m16n8k16", 4)), "s8": (("m16n8k32", 2), ("m16n8k64", 4)),
          "u4": (("m16n8k64", 2), ("m16n8k128", 4)), "e4m3": (("m16n8k64", 4),)}


def _sparse(sm: int):
    """Every mma.sp{::ordered_metadata} form: d, a, b, c, metadata, selector 0."""
    e = reg.scalar(b32, 0)
    for name in ("mma.sp", "mma.sp::ordered_metadata"):
        for t, shapes in SPARSE.items():
            if t == "e4m3" and sm < 90:
                continue
            for i, (shape, n) in enumerate(shapes):
                accs = (("f16", "f16"), ("f32", "f32")) if t == "f16" else \
                    (("s32", "s32"),) if t in ("s8", "u4") else (("f32", "f32"),)
                for dt, ct in accs:
                    acc = reg.array(b32, 2) if dt == "f16" else \
                        reg.array(s32 if dt == "s32" else f32, 4)
                    sat = ".satfinite" if dt == "s32" and i else ""
                    bt = {"e4m3": "e5m2", "s8": "s8", "u4": "u4"}.get(t, t)
                    inst(f"{name}.sync.aligned.{shape}.row.col{sat}.{dt}.{t}.{bt}.{ct}",
                         (acc, reg.array(b32, n), reg.array(b32, n), acc, e, 0))


def mma_body(sm: int):
    M = ptx.mma
    for shape, na, nb in F16_SHAPES:
        a, b = reg.array(b32, na), reg.array(b32, nb)
        for dt, ct in ((f16, f16), (f32, f32)) + (((f32, f16),) if shape == "m8n8k4" else ()):
            if True:
                d = _acc(f32 if dt is f32 else b32, shape, 4 if dt is f32 else 2)
                c = _acc(f32 if ct is f32 else b32, shape, 4 if ct is f32 else 2)
                lay = ("col", "row") if shape == "m8n8k4" else ("row", "col")
                M.sync(d, a, b, c, shape=shape, dtype=dt, ctype=ct, atype=f16,
                       alayout=lay[0], blayout=lay[1])
    for shape, na, nb in (("m16n8k8", 2, 1), ("m16n8k16", 4, 2)):
        d = reg.array(f32, 4)
        M.sync(d, reg.array(b32, na), reg.array(b32, nb), d, shape=shape, atype=bf16)
    for shape, na, nb in (("m16n8k4", 2, 1), ("m16n8k8", 4, 2)):
        d = reg.array(f32, 4)
        M.sync(d, reg.array(b32, na), reg.array(b32, nb), d, shape=shape, atype="tf32")
    for shape, na, nb, need in F64_SHAPES:
        if sm >= need:
            d = reg.array(f64, 2 if shape == "m8n8k4" else 4)
            M.sync(d, reg.array(f64, na), reg.array(f64, nb), d, shape=shape, atype=f64)
    for shapes, types in ((INT8_SHAPES, ("s8", "u8")), (INT4_SHAPES, ("s4", "u4"))):
        for i, (shape, na, nb) in enumerate(shapes):
            d = reg.array(s32, 2 if shape.startswith("m8n8") else 4)
            M.sync(d, reg.array(b32, na), reg.array(b32, nb), d, shape=shape, dtype=s32,
                   atype=types[i % 2], btype=types[(i + 1) % 2], satfinite=bool(i % 2))
    for shape, na, nb in B1_SHAPES:
        d = reg.array(s32, 2 if shape.startswith("m8n8") else 4)
        for op in ("xor", "and"):
            M.sync(d, reg.array(b32, na), reg.array(b32, nb), d, shape=shape, dtype=s32,
                   atype="b1", bitop=op)
    if sm >= 90:   # fp8 (sm_89): m16n8k32 from PTX ISA 8.4, m16n8k16 and f16 accumulators 8.7
        for shape, na, nb in (("m16n8k32", 4, 2), ("m16n8k16", 2, 1)):
            d32, d16 = reg.array(f32, 4), reg.array(b32, 2)
            M.sync(d32, reg.array(b32, na), reg.array(b32, nb), d32, shape=shape,
                   atype="e4m3", btype="e5m2")
            M.sync(d16, reg.array(b32, na), reg.array(b32, nb), d16, shape=shape,
                   dtype=f16, ctype=f16, atype="e5m2", btype="e4m3")
    _sparse(sm)
    buf = smem.alloc(f16, (1024,), name="tile")
    for n in (1, 2, 4):
        M.ldmatrix(buf[0], num=n)
        M.ldmatrix(buf[0], num=n, trans=True, space="shared::cta")
        if sm >= 90:
            M.stmatrix(buf[0], reg.array(b32, n))
            M.stmatrix(buf[0], reg.array(b32, n), trans=True)
        if sm >= 100:
            M.stmatrix(buf[0], reg.array(b32, n), shape="m16n8", type="b8", trans=True)
            M.ldmatrix(buf[0], num=n, shape="m8n16", type="b8x16", src_fmt="b6x16_p32")
            M.ldmatrix(buf[0], num=n, shape="m8n16", type="b8x16", src_fmt="b4x16_p64")
    if sm >= 100:
        for n in (1, 2):
            M.ldmatrix(buf[0], num=n, shape="m16n16", type="b8", trans=True)
            M.ldmatrix(buf[0], num=n, shape="m16n16", type="b8x16", trans=True,
                       src_fmt="b6x16_p32")
    M.movmatrix(reg.scalar(b32, 0))
    # ---------------------------------------------------------------- cp.async (Ampere)
    g = reg.from_(ptx.special.globaltimer(), u64)
    src = ptx.addr(g)
    # a policy from createpolicy: ptxas 13.5 crashes (C7907) on sm_90a when the policy
    # operand of cp.async is the constant 0
    pol = ptx.mem.createpolicy_fractional("evict_last")
    n = reg.scalar(u32, 2)
    skip = ptx.cmp.setp("eq", n, 0)
    for policy in (None, pol):
        ptx.cp.async_(buf[0], src, 16, policy=policy)
        ptx.cp.async_(buf[0], src, 4, cop="ca", src_size=n, policy=policy)
        ptx.cp.async_(buf[0], src, 16, ignore_src=skip, policy=policy, prefetch="128B")
    ptx.cp.async_(buf[0], src, 8, prefetch="64B")
    ptx.cp.async_.commit_group()
    ptx.cp.async_.wait_group(1)
    ptx.cp.async_.wait_all()
    bar = smem.mbarrier(1)
    ptx.mbarrier.init(bar[0], 32)
    ptx.cp.async_.mbarrier_arrive(bar[0], noinc=True)
    ptx.cp.async_.mbarrier_arrive(bar[0])
    ptx.ret()


@kernel(arch="sm_80", block=(32, 1, 1))
def mma_sm80():
    mma_body(80)


@kernel(arch="sm_90a", block=(32, 1, 1))
def mma_sm90():
    mma_body(90)


@kernel(arch="sm_100a", block=(32, 1, 1))
def mma_sm100():
    mma_body(100)


# ----------------------------------------------------------------------------- wgmma
N_ALL = tuple(range(8, 257, 8))
N_INT = (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256)
# (dtype, atype, btype, N values)
WGMMA_COMBOS = (
    (f16, f16, f16, N_ALL), (f32, f16, f16, N_ALL), (f32, bf16, bf16, N_ALL),
    (f32, "tf32", "tf32", N_ALL),
    (f16, "e4m3", "e5m2", N_ALL), (f32, "e5m2", "e4m3", N_ALL), (f32, "e4m3", "e4m3", N_ALL),
    (f16, "e5m2", "e5m2", N_ALL), (f16, "e4m3", "e4m3", N_ALL), (f32, "e4m3", "e5m2", N_ALL),
    (s32, "s8", "s8", N_INT), (s32, "u8", "u8", N_INT), (s32, "s8", "u8", N_INT),
    (s32, "u8", "s8", N_INT), (s32, "b1", "b1", N_INT),
)


def _acc_regs(dt, n):
    return reg.array({"f16": b32, "f32": f32, "s32": s32}[dt.name], n // 4 if dt is f16 else n // 2)


@kernel(arch="sm_90a", block=(128, 1, 1))
def wgmma_sm90():
    W = ptx.wgmma
    sa = smem.alloc(bf16, (64, 64), align=1024, name="sa")
    da = W.desc_reg(sa, 16, 1024, "128B")
    db = W.desc_advance(da, 32)
    areg = reg.array(b32, 4)
    meta = reg.scalar(b32, 0)
    acc = {dt.name: _acc_regs(dt, 256) for dt in (f16, f32, s32)}
    W.fence()
    for i, (dt, at, bt, ns) in enumerate(WGMMA_COMBOS):
        fp = at not in ("s8", "u8", "b1")
        for j, n in enumerate(ns):       # every N, dense and sparse, with both A sources
            d = acc[dt.name][:n // 4 if dt is f16 else n // 2]
            for a in (da, areg):
                kw = dict(dtype=dt, atype=at, btype=bt)
                if at in (f16, bf16):
                    kw.update(trans_b=j % 2, trans_a=(j // 2) % 2 if a is da else 0)
                if fp:
                    kw.update(scale_a=(-1, 1)[j % 2], scale_b=1)
                else:
                    kw.update(satfinite=at != "b1" and bool(j % 2))
                W.mma_async(d, a, db, scale_d=j % 2, **kw)
                if at != "b1":
                    sel = j % 2 if at in (f16, bf16, "tf32") else 0
                    W.mma_async_sp(d, a, db, meta, sel, **kw)
    W.commit_group()
    W.wait_group(0)
    ptx.ret()


def test_mma_sync_and_cp_async_assemble_for_sm_80():
    text = assemble(mma_sm80)
    assert "\tmma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32 \t{%f" in text
    assert "\tcp.async.ca.shared.global.L2::cache_hint \t[tile], [%rd" in text


def test_mma_sync_assembles_for_sm_90a_and_sm_100a():
    assemble(mma_sm90)
    text = assemble(mma_sm100)
    assert "\tldmatrix.sync.aligned.m16n16.x2.trans.shared.b8x16.b6x16_p32 \t{" in text
    assert "\tmma.sync.aligned.m16n8k16.row.col.f16.e5m2.e4m3.f16 \t{" in text


def test_wgmma_every_shape_and_type_assembles():
    text = assemble(wgmma_sm90)
    for n in N_ALL:
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k16.f16.f16.f16 \t" in text
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 \t" in text
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k32.f16.e4m3.e5m2 \t" in text
    for n in N_INT:
        assert f"\twgmma.mma_async.sync.aligned.m64n{n}k256.s32.b1.b1.and.popc \t" in text
        assert re.search(rf"\twgmma\.mma_async\.sync\.aligned\.m64n{n}k32(\.satfinite)?"
                         rf"\.s32\.u8\.s8 \t", text)
    for n in N_INT:
        assert re.search(rf"\twgmma\.mma_async\.sp\.sync\.aligned\.m64n{n}k64(\.satfinite)?"
                         rf"\.s32\.s8\.u8 \t", text)


FAMILIES = ("mma", "async-copy", "wgmma")


def test_every_mma_async_copy_wgmma_form_is_exercised():
    used = forms_used(mma_sm80) | forms_used(mma_sm90) | forms_used(mma_sm100)
    for fam in ("mma", "async-copy"):
        left = missing(used, fam)
        assert left == [], (fam, left)
    left = missing(forms_used(wgmma_sm90), "wgmma")
    assert left == [], left
