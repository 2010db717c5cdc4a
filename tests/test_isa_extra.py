"""The WMMA, texture/surface, tensor-map and multimem families: every form traced through the
table-checked ``ptx.inst`` path and assembled by ptxas for the lowest target that has it (sm_80
for WMMA and textures, sm_90a / sm_100a for tensormap.replace, sm_90 for multimem). The fragment
and coordinate counts here are written from the PTX ISA's tables, independently of the ISA
table they check."""
import itertools

import pytest

from jax_pyptx import kernel, ptx, reg, smem
from jax_pyptx.errors import PtxTypeError
from jax_pyptx.ir.nodes import Addr, Vec
from jax_pyptx.types import b16, b32, f16, f32, f64, s32, u32, u64

from .isa_util import assemble, forms_used, inst, missing

F16S = ("m16n16k16", "m8n32k16", "m32n8k16")
# PTX ISA "Matrix fragments for WMMA": registers per fragment, by type, fragment and shape
FRAGS = {
    "f16": {"a": dict.fromkeys(F16S, 8), "b": dict.fromkeys(F16S, 8), "c": dict.fromkeys(F16S, 4)},
    "f32": {"c": dict.fromkeys(F16S + ("m16n16k8",), 8)},
    "s8": {"a": {"m16n16k16": 2, "m8n32k16": 1, "m32n8k16": 4},
           "b": {"m16n16k16": 2, "m8n32k16": 4, "m32n8k16": 1}},
    "s32": {"c": {**dict.fromkeys(F16S, 8), "m8n8k32": 2, "m8n8k128": 2}},
    "bf16": {"a": {"m16n16k16": 4, "m8n32k16": 2, "m32n8k16": 8},
             "b": {"m16n16k16": 4, "m8n32k16": 8, "m32n8k16": 2}},
    "tf32": {"a": {"m16n16k8": 4}, "b": {"m16n16k8": 4}},
    "f64": {"a": {"m8n8k4": 1}, "b": {"m8n8k4": 1}, "c": {"m8n8k4": 2}},
    "s4": {"a": {"m8n8k32": 1}, "b": {"m8n8k32": 1}},
    "b1": {"a": {"m8n8k128": 1}, "b": {"m8n8k128": 1}},
}
FRAGS["u8"], FRAGS["u4"] = FRAGS["s8"], FRAGS["s4"]
REG = {"f32": f32, "f64": f64, "s32": s32}


def _frag(t, n):
    return reg.array(REG.get(t, b32), n)


def wmma_body(addr, smem_addr, stride):
    spaces = itertools.cycle(("", ".global", ".shared", ".shared::cta"))
    for t, frags in FRAGS.items():
        for frag, shapes in frags.items():
            for (shape, n), layout in zip(shapes.items(), itertools.cycle(("row", "col"))):
                if t in ("s4", "u4", "b1") and frag in "ab":
                    layout = "row" if frag == "a" else "col"
                sp = next(spaces)
                a = smem_addr if sp.startswith(".shared") else addr
                tail = (stride,) if sp != ".shared" else ()
                inst(f"wmma.load.{frag}.sync.aligned.{layout}.{shape}{sp}.{t}",
                     (_frag(t, n), a) + tail)
                if frag == "c":
                    inst(f"wmma.store.d.sync.aligned.{layout}.{shape}{sp}.{t}",
                         (a, _frag(t, n)) + tail)
    # mma: d, a, b, c with each fragment's count for the shape
    for i, (shape, dt, ct) in enumerate(itertools.product(F16S, ("f16", "f32"), ("f16", "f32"))):
        lay = ("row", "col", "row", "col")[i % 4] + "." + ("col", "col", "row", "row")[i % 4]
        n = {"f16": 4, "f32": 8}
        inst(f"wmma.mma.sync.aligned.{lay}.{shape}.{dt}.{ct}",
             (_frag(dt, n[dt]), _frag("f16", 8), _frag("f16", 8), _frag(ct, n[ct])))
    for i, (shape, t) in enumerate(itertools.product(F16S, ("s8", "u8", "bf16"))):
        acc = "f32" if t == "bf16" else "s32"
        sat = ".satfinite" if t != "bf16" and i % 2 else ""
        inst(f"wmma.mma.sync.aligned.col.row.{shape}.{acc}.{t}.{t}.{acc}{sat}",
             (_frag(acc, 8), _frag(t, FRAGS[t]["a"][shape]), _frag(t, FRAGS[t]["b"][shape]),
              _frag(acc, 8)))
    inst("wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32",
         (_frag("f32", 8), _frag("tf32", 4), _frag("tf32", 4), _frag("f32", 8)))
    for rnd in ("", ".rn", ".rz"):
        inst(f"wmma.mma.sync.aligned.row.col.m8n8k4{rnd}.f64.f64.f64.f64",
             (_frag("f64", 2), _frag("f64", 1), _frag("f64", 1), _frag("f64", 2)))
    for t, sat in (("s4", ""), ("u4", ".satfinite")):
        inst(f"wmma.mma.sync.aligned.row.col.m8n8k32.s32.{t}.{t}.s32{sat}",
             (_frag("s32", 2), _frag(t, 1), _frag(t, 1), _frag("s32", 2)))
    for op in ("xor", "and"):
        inst(f"wmma.mma.{op}.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32",
             (_frag("s32", 2), _frag("b1", 1), _frag("b1", 1), _frag("s32", 2)))


# PTX ISA "tex": coordinates per geometry (the array geometries lead with a .u32 index), texel
# offsets and gradients per geometry
COORDS = {"1d": 1, "2d": 2, "3d": 4, "a1d": 2, "a2d": 4, "cube": 4, "acube": 4, "2dms": 4,
          "a2dms": 4}
OFFS = {"1d": 1, "2d": 2, "3d": 4, "a1d": 1, "a2d": 2, "2dms": 2, "a2dms": 2}
GRAD = {"1d": 1, "2d": 2, "3d": 4, "a1d": 1, "a2d": 2, "cube": 4, "acube": 4}


def _coords(handle, geom, ctype, sampler=None):
    t = {"f32": f32, "s32": s32}[ctype]
    items = [reg.scalar(t).ir for _ in range(COORDS[geom])]
    if geom.startswith("a"):
        items[0] = reg.scalar(u32).ir
    return Addr(handle.ir, 0, ((sampler.ir,) if sampler is not None else ()) + (Vec(tuple(items)),))


def _result(dtype):
    if dtype == "f16x2":
        return "v2", reg.array(b32, 2)
    return "v4", reg.array({"f16": f16, "f32": f32}.get(dtype, u32 if dtype == "u32" else s32), 4)


def texture_body(handle, sampler):
    dtypes = itertools.cycle(("f32", "u32", "s32", "f16"))
    cases = (("1d", "s32"), ("2d", "f32"), ("3d", "f32"), ("a2d", "s32"), ("cube", "f32"),
             ("acube", "f32"), ("2dms", "s32"), ("a2dms", "s32"), ("a1d", "f32"), ("3d", "s32"))
    for mip in ("", "base", "level", "grad"):
        for geom, ctype in cases:
            if mip in ("level", "grad") and "ms" in geom:
                continue
            for dtype in (next(dtypes), "f16x2"):
                vec, d = _result(dtype)
                full = f"tex{'.' + mip if mip else ''}.{geom}.{vec}.{dtype}.{ctype}"
                extra = ()
                if mip == "level":
                    extra = (reg.scalar({"f32": f32, "s32": s32}[ctype]),)
                elif mip == "grad":
                    extra = (reg.array(f32, GRAD[geom]), reg.array(f32, GRAD[geom]))
                # an explicit sampler (independent texture mode): ptxas takes it in the default
                # unified mode for the plain geometries only
                smp = sampler if dtype == "f16x2" and geom in ("1d", "2d") else None
                inst(full, (d, _coords(handle, geom, ctype, smp)) + extra)
                if geom in OFFS:
                    inst(full, (d, _coords(handle, geom, ctype)) + extra +
                         (reg.array(s32, OFFS[geom]),))
                if ctype == "f32" and geom != "3d":
                    inst(full, (d, _coords(handle, geom, ctype)) + extra + (reg.scalar(f32),))
                    if geom in OFFS:
                        inst(full, (d, _coords(handle, geom, ctype)) + extra +
                             (reg.array(s32, OFFS[geom]), reg.scalar(f32)))
    for geom, comp, dtype in (("2d", "r", "f32"), ("a2d", "a", "s32")):
        full = f"tld4.{comp}.{geom}.v4.{dtype}.f32"
        d = _result(dtype)[1]
        # (ptxas 13.5 crashes on tld4.a2d with an explicit sampler in unified mode)
        inst(full, (d, _coords(handle, geom, "f32", sampler if geom == "2d" else None)))
        inst(full, (d, _coords(handle, geom, "f32"), reg.array(s32, 2), reg.scalar(f32)))
        inst(full, (d, _coords(handle, geom, "f32"), reg.scalar(f32)))
    a = ptx.addr(handle)
    inst("txq.width.b32", (reg.scalar(b32), a))
    inst("txq.level.height.b32", (reg.scalar(b32), a, reg.scalar(s32)))
    inst("txq.filter_mode.b32", (reg.scalar(b32), a))
    inst("suq.memory_layout.b32", (reg.scalar(b32), a))
    # surfaces: scalar, .v2 and .v4 (at most 128 bits); .b8 data in 16-bit registers
    geoms = itertools.cycle(("1d", "2d", "3d", "a1d", "a2d"))
    for vec, t in (("", "b8"), (".v2", "b64"), (".v4", "b16"), ("", "b32")):
        g = next(geoms)
        n = {"": 0, ".v2": 2, ".v4": 4}[vec]
        rt = {"b8": b16, "b16": b16, "b32": b32, "b64": u64}[t]
        data = reg.array(rt, n) if n else reg.scalar(rt)
        c = _coords_s(handle, g)
        inst(f"suld.b.{g}.cg{vec}.{t}.trap", (data, c))
        inst(f"sust.b.{g}.wt{vec}.{t}.clamp", (c, data))
        pdata = reg.array(b32, n) if n else reg.scalar(b32)
        inst(f"sust.p.{g}{vec}.b32.zero", (c, pdata))
    for op, t, data in (("add", "u64", reg.scalar(u64)), ("min", "s32", reg.scalar(s32)),
                        ("max", "u64", reg.scalar(u64)), ("or", "b32", reg.scalar(b32))):
        inst(f"sured.b.{op}.2d.{t}.trap", (_coords_s(handle, "2d"), data))
    inst("sured.p.and.3d.b32.clamp", (_coords_s(handle, "3d"), reg.scalar(b32)))


def _coords_s(handle, geom):
    return Addr(handle.ir, 0, (Vec(tuple(reg.scalar(s32).ir for _ in range(COORDS[geom]))),))


@kernel(arch="sm_80", block=(32, 1, 1))
def legacy_sm80():
    p = reg.from_(ptx.special.globaltimer(), u64)
    buf = smem.alloc(f32, (2048,), name="frag")
    wmma_body(ptx.addr(p), buf[0], reg.scalar(u32, 64))
    texture_body(p, reg.from_(ptx.special.globaltimer(), u64))
    ptx.ret()


def tensormap_body(sm100: bool):
    p = reg.from_(ptx.special.globaltimer(), u64)
    buf = smem.alloc(b32, (32,), name="tmap", align=128)
    g, s = ptx.addr(p), buf[0]
    inst("tensormap.replace.tile.global_address.shared::cta.b1024.b64", (s, p))
    inst("tensormap.replace.tile.rank.global.b1024.b32", (g, reg.scalar(b32, 1)))
    inst("tensormap.replace.tile.box_dim.b1024.b32", (g, 1, reg.scalar(b32, 64)))
    inst("tensormap.replace.tile.global_stride.shared::cta.b1024.b64", (s, 0, p))
    inst("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32", (s, 3))
    if sm100:
        inst("tensormap.replace.tile.swizzle_atomicity.global.b1024.b32", (g, 0))
    inst("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned",
         (g, s, 128))
    ptx.ret()


@kernel(arch="sm_90a", block=(32, 1, 1))
def tensormap_sm90():
    tensormap_body(False)


@kernel(arch="sm_100a", block=(32, 1, 1))
def tensormap_sm100():
    tensormap_body(True)


# multimem (sm_90): (suffix, operand type, vector length or 0) per operation, as ptxas takes them
MM_LOAD = {"add": (("u32", 0), ("f64", 0), ("f32", 4), ("acc::f32.f16x2", 0),
                   ("acc::f32.v2.bf16", 2), ("acc::f32.v8.f16", 8)),
           "min": (("s64", 0), ("bf16x2", 0), ("f16", 4), ("bf16", 8)),
           "max": (("u64", 0),), "and": (("b32", 0),), "or": (("b64", 0),), "xor": (("b32", 0),)}
MM_RED = {"add": (("s32", 0), ("f16x2", 0), ("f32", 2), ("bf16", 8)),
          "min": (("u32", 0), ("f16x2", 4), ("bf16", 8)), "max": (("s64", 0),),
          "and": (("b64", 0),), "or": (("b32", 0),), "xor": (("b64", 0),)}
MM_STORE = (("u64", 0), ("f16x2", 4), ("bf16", 8))
_MM_REG = {"b32": b32, "u32": u32, "s32": s32, "f32": f32, "f64": f64, "f16x2": b32,
           "bf16x2": b32, "f16": b16, "bf16": b16}


def _mm(t, n):
    base = t.split(".")[-1]
    rt = _MM_REG.get(base, u64)
    return reg.array(rt, n) if n else reg.scalar(rt)


@kernel(arch="sm_90", block=(32, 1, 1))
def multimem_sm90():
    a = ptx.addr(reg.from_(ptx.special.globaltimer(), u64))
    for lead in ("", ".acquire.gpu"):
        for op, cases in MM_LOAD.items():
            for t, n in cases:
                vec = f".v{n}" if n and f"v{n}" not in t else ""
                inst(f"multimem.ld_reduce{lead}.global.{op}{vec}.{t}", (_mm(t, n), a))
    for lead in (".weak", ".release.sys"):
        for t, n in MM_STORE:
            inst(f"multimem.st{lead}{'.v%d' % n if n else ''}.{t}", (a, _mm(t, n)))
    for lead in ("", ".relaxed.cluster"):
        for op, cases in MM_RED.items():
            for t, n in cases:
                inst(f"multimem.red{lead}.global.{op}{'.v%d' % n if n else ''}.{t}",
                     (a, _mm(t, n)))
    ptx.ret()


FAMILIES = ("wmma", "texture", "tensormap")     # multimem: the atomic family (test_isa_memory)
KERNELS = (legacy_sm80, tensormap_sm90, tensormap_sm100, multimem_sm90)


@pytest.mark.parametrize("k", KERNELS, ids=lambda k: k.name)
def test_assembles_for_its_target(k):
    text = assemble(k)
    assert ".version" in text


def test_text_of_each_family():
    text = legacy_sm80.ptx()
    assert "\twmma.load.a.sync.aligned.row.m16n16k16.f16 \t{" in text
    assert "\twmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 \t{" in text
    assert "\ttex.grad.3d.v4." in text and "\tsust.p.2d.v2.b32.zero \t[" in text
    assert "\ttensormap.replace.tile.box_dim.b1024.b32 \t[%rd0], 1, %r" in tensormap_sm90.ptx()
    assert "\tmultimem.ld_reduce.acquire.gpu.global.add.acc::f32.v8.f16 \t{%rs" in \
        multimem_sm90.ptx()


def test_every_wmma_texture_tensormap_form_is_exercised():
    used = set().union(*(forms_used(k) for k in KERNELS))
    for fam in FAMILIES:
        left = missing(used, fam)
        assert left == [], (fam, left)


def test_fragment_and_coordinate_counts_are_checked():
    @kernel(arch="sm_80")
    def short_fragment():
        p = reg.from_(ptx.special.globaltimer(), u64)
        inst("wmma.load.a.sync.aligned.row.m8n32k16.bf16", (reg.array(b32, 4), ptx.addr(p)))
        ptx.ret()

    with pytest.raises(PtxTypeError, match=r"wmma.load.a.sync.aligned.row.m8n32k16.bf16 operand "
                                           r"1: expected a vector of 2 registers, got 4"):
        short_fragment.ptx()

    @kernel(arch="sm_80")
    def float_index():
        p = reg.from_(ptx.special.globaltimer(), u64)
        inst("tex.a2d.v4.f32.f32", (reg.array(f32, 4), _coords(p, "2d", "f32")))
        ptx.ret()

    with pytest.raises(PtxTypeError, match=r"operand 2: expected 4 coordinates in \{\.\.\.\}, "
                                           r"got 2"):
        float_index.ptx()
