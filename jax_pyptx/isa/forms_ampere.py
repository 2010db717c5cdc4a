"""Ampere-era tensor-core and async-copy instructions: mma.sync (f16, bf16, tf32, f64, int8,
int4, b1, fp8), mma.sp{::ordered_metadata} (sparse A), ldmatrix, stmatrix, movmatrix, cp.async
(ca/cg, zero fill, ignore-src, cache hints), its commit/wait groups and
cp.async.mbarrier.arrive."""
from __future__ import annotations

from .common import SHARED, SM100A
from .model import Form, G, R


def _m(groups, ops, sm, ptx, doc=""):
    return Form("mma.sync", (R("aligned", ".aligned"),) + tuple(groups), ops, min_sm=sm,
                min_ptx=ptx, family="mma", doc=doc)


def _v(n, t="b32"):
    return f"v{n}:{t}"


FORMS = []
# --------------------------------------------------------------------------- f16 multiplicands
# (shape, a regs, b regs, accumulator regs for f16 / f32, sm, ptx)
for shape, na, nb, sm, ptx in ((".m8n8k4", 2, 2, 70, (6, 4)), (".m16n8k8", 2, 1, 75, (6, 5)),
                               (".m16n8k16", 4, 2, 80, (7, 0))):
    layouts = ([R("alayout", ".row", ".col"), R("blayout", ".row", ".col")] if shape == ".m8n8k4"
               else [R("alayout", ".row"), R("blayout", ".col")])
    # D and C of one type; m8n8k4 also takes an f16 C into an f32 D (ptxas: ".dtype must be
    # '.f32' when .ctype is '.f32'", and the same-type rule for m16n8k8/k16)
    combos = ((".f16", ".f16"), (".f32", ".f32")) + (((".f32", ".f16"),) if shape == ".m8n8k4"
                                                     else ())
    for dt, ct in combos:
        nd = {".f16": 4 if shape == ".m8n8k4" else 2, ".f32": 8 if shape == ".m8n8k4" else 4}
        dspec = _v(nd[dt], "b32" if dt == ".f16" else "f32")
        cspec = _v(nd[ct], "b32" if ct == ".f16" else "f32")
        FORMS.append(_m([R("shape", shape), *layouts, R("dtype", dt), R("atype", ".f16"),
                         R("btype", ".f16"), R("ctype", ct)],
                        (dspec, _v(na), _v(nb), cspec), sm, ptx,
                        doc=f"mma.sync.aligned{shape}.row.col{dt}.f16.f16{ct}"))
# --------------------------------------------------------------------------- bf16 / tf32
for shape, na, nb in ((".m16n8k8", 2, 1), (".m16n8k16", 4, 2)):
    FORMS.append(_m([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                     R("dtype", ".f32"), R("atype", ".bf16"), R("btype", ".bf16"),
                     R("ctype", ".f32")], (_v(4, "f32"), _v(na), _v(nb), _v(4, "f32")),
                    80, (7, 0)))
for shape, na, nb in ((".m16n8k4", 2, 1), (".m16n8k8", 4, 2)):
    FORMS.append(_m([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                     R("dtype", ".f32"), R("atype", ".tf32"), R("btype", ".tf32"),
                     R("ctype", ".f32")], (_v(4, "f32"), _v(na), _v(nb), _v(4, "f32")),
                    80, (7, 0)))
# --------------------------------------------------------------------------- f64
for shape, na, nb, nd, sm, ptx in ((".m8n8k4", 1, 1, 2, 80, (7, 0)),
                                   (".m16n8k4", 2, 1, 4, 90, (7, 8)),
                                   (".m16n8k8", 4, 2, 4, 90, (7, 8)),
                                   (".m16n8k16", 8, 4, 4, 90, (7, 8))):
    FORMS.append(_m([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                     R("dtype", ".f64"), R("atype", ".f64"), R("btype", ".f64"),
                     R("ctype", ".f64")],
                    (_v(nd, "f64"), _v(na, "f64"), _v(nb, "f64"), _v(nd, "f64")), sm, ptx))
# --------------------------------------------------------------------------- integer
for shape, types, na, nb, nd, sm, ptx in (
        (".m8n8k16", (".u8", ".s8"), 1, 1, 2, 75, (6, 5)),
        (".m16n8k16", (".u8", ".s8"), 2, 1, 4, 80, (7, 0)),
        (".m16n8k32", (".u8", ".s8"), 4, 2, 4, 80, (7, 0)),
        (".m8n8k32", (".u4", ".s4"), 1, 1, 2, 75, (6, 5)),
        (".m16n8k32", (".u4", ".s4"), 2, 1, 4, 80, (7, 0)),
        (".m16n8k64", (".u4", ".s4"), 4, 2, 4, 80, (7, 0))):
    FORMS.append(_m([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                     G("sat", ".satfinite"), R("dtype", ".s32"), R("atype", *types),
                     R("btype", *types), R("ctype", ".s32")],
                    (_v(nd, "s32"), _v(na), _v(nb), _v(nd, "s32")), sm, ptx))
# .b1: all three shapes from PTX ISA 7.0 (mma "PTX ISA Notes"), m8n8k128 on sm_75
for shape, na, nb, nd, sm, ptx in ((".m8n8k128", 1, 1, 2, 75, (7, 0)),
                                   (".m16n8k128", 2, 1, 4, 80, (7, 0)),
                                   (".m16n8k256", 4, 2, 4, 80, (7, 0))):
    FORMS.append(_m([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                     R("dtype", ".s32"), R("atype", ".b1"), R("btype", ".b1"), R("ctype", ".s32"),
                     R("bitop", ".xor", ".and", gate={".and": (80, (7, 1))}, order="bop"),
                     R("popc", ".popc", order="bop")],
                    (_v(nd, "s32"), _v(na), _v(nb), _v(nd, "s32")), sm, ptx,
                    doc=f"mma.sync.aligned{shape}.row.col.s32.b1.b1.s32.and|xor.popc"))
# --------------------------------------------------------------------------- fp8
F8 = (".e4m3", ".e5m2")
for shape, na, nb, ptx in ((".m16n8k32", 4, 2, (8, 4)), (".m16n8k16", 2, 1, (8, 7))):
    FORMS.append(_m([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                     R("dtype", ".f32"), R("atype", *F8), R("btype", *F8), R("ctype", ".f32")],
                    (_v(4, "f32"), _v(na), _v(nb), _v(4, "f32")), 89, ptx))
    FORMS.append(_m([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                     R("dtype", ".f16"), R("atype", *F8), R("btype", *F8), R("ctype", ".f16")],
                    (_v(2), _v(na), _v(nb), _v(2)), 89, (8, 7)))


# --------------------------------------------------------------------------- sparse mma
SEL4, SEL2, SEL1 = "i=0..3", "i=0..1", "i=0"
# mma.sp{::ordered_metadata}.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype
# d, a, b, c, e (metadata), f (sparsity selector); A holds half of its dense K. ::ordered_metadata:
# PTX ISA 8.5. (shape, a/b regs) per multiplicand type; fp8 on sm_89 from PTX ISA 8.4.
for name, ptx_min in (("mma.sp", (7, 1)), ("mma.sp::ordered_metadata", (8, 5))):
    def _sp(groups, ops, sm=80, ptx=ptx_min, doc="", name=name):
        return Form(name, (R("sync", ".sync"), R("aligned", ".aligned")) + tuple(groups), ops,
                    min_sm=sm, min_ptx=max(ptx, ptx_min), family="mma",
                    doc=doc or f"{name}.sync.aligned.shape.row.col.dtype.atype.btype.ctype "
                               f"d, a, b, c, e, f")
    # the sparsity selector f: which threads of a group supply the metadata (PTX ISA "sparse
    # mma"; ptxas 13.5 agrees): 0..3 for the smaller K of a 16-bit or tf32 type, 0..1 for the
    # larger and for the smaller K of an integer type, 0 for the larger integer K and fp8
    for shape, n, sel in ((".m16n8k16", 2, SEL4), (".m16n8k32", 4, SEL2)):
        for dt, ct in ((".f16", ".f16"), (".f32", ".f32")):
            acc = _v(2) if dt == ".f16" else _v(4, "f32")
            FORMS.append(_sp([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                              R("dtype", dt), R("atype", ".f16"), R("btype", ".f16"),
                              R("ctype", ct)], (acc, _v(n), _v(n), acc, "r:b32", sel)))
        FORMS.append(_sp([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                          R("dtype", ".f32"), R("atype", ".bf16"), R("btype", ".bf16"),
                          R("ctype", ".f32")],
                         (_v(4, "f32"), _v(n), _v(n), _v(4, "f32"), "r:b32", sel)))
    for shape, n, sel in ((".m16n8k8", 2, SEL4), (".m16n8k16", 4, SEL2)):
        FORMS.append(_sp([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                          R("dtype", ".f32"), R("atype", ".tf32"), R("btype", ".tf32"),
                          R("ctype", ".f32")],
                         (_v(4, "f32"), _v(n), _v(n), _v(4, "f32"), "r:b32", sel)))
    for shapes, types in (((".m16n8k32", 2, SEL2), (".m16n8k64", 4, SEL1)), (".u8", ".s8")), \
            (((".m16n8k64", 2, SEL2), (".m16n8k128", 4, SEL1)), (".u4", ".s4")):
        for shape, n, sel in shapes:
            FORMS.append(_sp([R("shape", shape), R("alayout", ".row"), R("blayout", ".col"),
                              G("sat", ".satfinite"), R("dtype", ".s32"), R("atype", *types),
                              R("btype", *types), R("ctype", ".s32")],
                             (_v(4, "s32"), _v(n), _v(n), _v(4, "s32"), "r:b32", sel)))
    FORMS.append(_sp([R("shape", ".m16n8k64"), R("alayout", ".row"), R("blayout", ".col"),
                      R("dtype", ".f32"), R("atype", *F8), R("btype", *F8), R("ctype", ".f32")],
                     (_v(4, "f32"), _v(4), _v(4), _v(4, "f32"), "r:b32", SEL1), sm=89,
                     ptx=(8, 4)))


# --------------------------------------------------------------------------- ldmatrix / stmatrix
def _nregs(per_x):
    def rule(chosen):
        return {".x1": 1, ".x2": 2, ".x4": 4}[chosen["num"]] * per_x
    return rule


_X1 = _nregs(1)
_X2 = _nregs(2)
SS = G("space", *SHARED, gate={".shared::cta": (20, (7, 8))})
FORMS += [
    Form("ldmatrix.sync", (R("aligned", ".aligned"), R("shape", ".m8n8"),
                           R("num", ".x1", ".x2", ".x4"), G("trans", ".trans"), SS,
                           R("type", ".b16")), ("v@regs:b32", "m"), min_sm=75, min_ptx=(6, 5),
         family="mma", counts=(("regs", _X1),),
         doc="ldmatrix.sync.aligned.m8n8.x1|x2|x4{.trans}{.shared}.b16 r, [p]"),
    # m16n16: .b8, or .b8x16 with its source format (ptxas: .b8x16 needs exactly one)
    Form("ldmatrix.sync", (R("aligned", ".aligned"), R("shape", ".m16n16"),
                           R("num", ".x1", ".x2"), R("trans", ".trans"), SS, R("type", ".b8")),
         ("v@regs:b32", "m"), min_sm=100, archs=SM100A, min_ptx=(8, 6), family="mma",
         counts=(("regs", _X2),), doc="ldmatrix.sync.aligned.m16n16.num.trans.b8"),
    Form("ldmatrix.sync", (R("aligned", ".aligned"), R("shape", ".m16n16"),
                           R("num", ".x1", ".x2"), R("trans", ".trans"), SS, R("type", ".b8x16"),
                           R("src", ".b6x16_p32", ".b4x16_p64")),
         ("v@regs:b32", "m"), min_sm=100, archs=SM100A, min_ptx=(8, 6), family="mma",
         counts=(("regs", _X2),), doc="ldmatrix.sync.aligned.m16n16.num.trans.b8x16.src_fmt "
                                      "(fp6/fp4 unpacked to 8 bits)"),
    Form("ldmatrix.sync", (R("aligned", ".aligned"), R("shape", ".m8n16"),
                           R("num", ".x1", ".x2", ".x4"), SS, R("type", ".b8x16"),
                           R("src", ".b6x16_p32", ".b4x16_p64")),
         ("v@regs:b32", "m"), min_sm=100, archs=SM100A, min_ptx=(8, 6), family="mma",
         counts=(("regs", _X1),)),
    Form("stmatrix.sync", (R("aligned", ".aligned"), R("shape", ".m8n8"),
                           R("num", ".x1", ".x2", ".x4"), G("trans", ".trans"), SS,
                           R("type", ".b16")), ("m", "v@regs:b32"), min_sm=90, min_ptx=(7, 8),
         family="mma", counts=(("regs", _X1),)),
    Form("stmatrix.sync", (R("aligned", ".aligned"), R("shape", ".m16n8"),
                           R("num", ".x1", ".x2", ".x4"), R("trans", ".trans"), SS,
                           R("type", ".b8")), ("m", "v@regs:b32"), min_sm=100, archs=SM100A,
         min_ptx=(8, 6), family="mma", counts=(("regs", _X1),)),
    Form("movmatrix.sync", (R("aligned", ".aligned"), R("shape", ".m8n8"), R("trans", ".trans"),
                            R("type", ".b16")), ("d:b32", "r:b32"), min_sm=75, min_ptx=(7, 8),
         family="mma"),
]

# --------------------------------------------------------------------------- cp.async
_CA = (R("cop", ".ca", ".cg"), R("dst", *SHARED, gate={".shared::cta": (80, (7, 8))}),
       R("src", ".global"))
# cp-size: 4, 8 or 16 bytes with .ca; 16 with .cg (PTX ISA "cp.async")
CP_SIZE = "i=cop{.ca:4|8|16;.cg:16}"
# .level::prefetch_size: PTX ISA 7.4 (cp.async "PTX ISA Notes"; ptxas: "cache prefetching")
_PF = G("prefetch", ".L2::64B", ".L2::128B", ".L2::256B",
        gate={o: (80, (7, 4)) for o in (".L2::64B", ".L2::128B", ".L2::256B")})
for hint in (False, True):
    h = (R("hint", ".L2::cache_hint"),) if hint else ()
    pol = ("r:b64",) if hint else ()
    FORMS += [
        Form("cp.async", _CA + h + (_PF,), ("m", "m", CP_SIZE) + pol, min_sm=80,
             min_ptx=(7, 4) if hint else (7, 0), family="async-copy",
             doc="cp.async.ca|cg.shared.global [dst], [src], cp-size"),
        Form("cp.async", _CA + h + (_PF,), ("m", "m", CP_SIZE, "s:u32") + pol, min_sm=80,
             min_ptx=(7, 4) if hint else (7, 0), family="async-copy",
             doc="... cp-size, src-size (bytes past src-size are zero-filled)"),
        Form("cp.async", _CA + h + (_PF,), ("m", "m", CP_SIZE, "p") + pol, min_sm=80,
             min_ptx=(7, 5) if not hint else (7, 5), family="async-copy",
             doc="... cp-size, ignore-src (predicate: fill with zeros)"),
    ]
FORMS += [
    Form("cp.async.commit_group", (), (), min_sm=80, min_ptx=(7, 0), family="async-copy"),
    Form("cp.async.wait_group", (), ("i",), min_sm=80, min_ptx=(7, 0), family="async-copy"),
    Form("cp.async.wait_all", (), (), min_sm=80, min_ptx=(7, 0), family="async-copy"),
    Form("cp.async.mbarrier.arrive", (G("noinc", ".noinc"),
                                      G("space", *SHARED, gate={".shared::cta": (80, (7, 8))}),
                                      R("type", ".b64")), ("m",), min_sm=80, min_ptx=(7, 0),
         family="async-copy", doc="cp.async.mbarrier.arrive{.noinc}{.shared}.b64 [mbar]"),
]
