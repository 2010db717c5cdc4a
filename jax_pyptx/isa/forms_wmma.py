"""Warp-level matrix multiply (the Volta-era WMMA API, still emitted by nvcc for
``nvcuda::wmma``): wmma.load (a, b, c fragments), wmma.store (d) and wmma.mma for f16, bf16,
tf32, f64, s8/u8 and the sub-byte s4/u4 and b1 types.

Fragments are register vectors whose length depends on the fragment, the shape and the type
(PTX ISA "Matrix fragments for WMMA"); the count rules below give them. f16, bf16, tf32 and
integer fragments are .b32 registers (packed), f32 and f64 fragments are registers of their
type. The multiplicands of wmma.mma have one type for A and B (ptxas: "Unexpected instruction
types" for .s8 with .u8), and only the integer forms take ``.satfinite``.
"""
from __future__ import annotations

from .model import Form, G, R

F16_SHAPES = (".m16n16k16", ".m8n32k16", ".m32n8k16")
SHAPE_GATE = {".m8n32k16": (70, (6, 1)), ".m32n8k16": (70, (6, 1))}
SPACE = G("space", ".global", ".shared", ".shared::cta", gate={".shared::cta": (70, (7, 8))})
SYNC = (R("sync", ".sync"), R("aligned", ".aligned"))

# (fragment, type) -> {shape: registers}
_REGS = {
    (".a", ".f16"): dict.fromkeys(F16_SHAPES, 8), (".b", ".f16"): dict.fromkeys(F16_SHAPES, 8),
    (".c", ".f16"): dict.fromkeys(F16_SHAPES, 4), (".c", ".f32"): dict.fromkeys(F16_SHAPES, 8),
    (".a", ".s8"): {".m16n16k16": 2, ".m8n32k16": 1, ".m32n8k16": 4},
    (".b", ".s8"): {".m16n16k16": 2, ".m8n32k16": 4, ".m32n8k16": 1},
    (".a", ".bf16"): {".m16n16k16": 4, ".m8n32k16": 2, ".m32n8k16": 8},
    (".b", ".bf16"): {".m16n16k16": 4, ".m8n32k16": 8, ".m32n8k16": 2},
    (".c", ".s32"): {**dict.fromkeys(F16_SHAPES, 8), ".m8n8k32": 2, ".m8n8k128": 2},
    (".a", ".tf32"): {".m16n16k8": 4}, (".b", ".tf32"): {".m16n16k8": 4},
    (".a", ".f64"): {".m8n8k4": 1}, (".b", ".f64"): {".m8n8k4": 1}, (".c", ".f64"): {".m8n8k4": 2},
    (".a", ".s4"): {".m8n8k32": 1}, (".b", ".s4"): {".m8n8k32": 1},
    (".a", ".b1"): {".m8n8k128": 1}, (".b", ".b1"): {".m8n8k128": 1},
}
_REGS[(".c", ".f32")][".m16n16k8"] = 8
_SAME = {".u8": ".s8", ".u4": ".s4"}


def regs(frag: str, shape: str, t: str) -> int:
    return _REGS[(frag, _SAME.get(t, t))][shape]


def _frag(chosen) -> int:
    frag = {".d": ".c"}.get(chosen["frag"], chosen["frag"])
    return regs(frag, chosen["shape"], chosen["type"])


def _elem(t: str) -> str:
    return t[1:] if t in (".f32", ".f64", ".s32") else "b32"


def _w(name, groups, ops, sm, ptx, doc="", counts=()):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="wmma", doc=doc,
                counts=counts)


FORMS = []
# --------------------------------------------------------------------------- load / store
# (fragments, shapes, types, layouts, sm, ptx); a and b of the sub-byte types take one layout
LOADS = (
    ((".a", ".b"), F16_SHAPES, (".f16",), (".row", ".col"), 70, (6, 0)),
    ((".c",), F16_SHAPES, (".f16",), (".row", ".col"), 70, (6, 0)),
    ((".c",), F16_SHAPES, (".f32",), (".row", ".col"), 70, (6, 0)),
    ((".a", ".b"), F16_SHAPES, (".s8", ".u8"), (".row", ".col"), 72, (6, 3)),
    ((".c",), F16_SHAPES, (".s32",), (".row", ".col"), 72, (6, 3)),
    ((".a", ".b"), F16_SHAPES, (".bf16",), (".row", ".col"), 80, (7, 0)),
    ((".a", ".b"), (".m16n16k8",), (".tf32",), (".row", ".col"), 80, (7, 0)),
    ((".c",), (".m16n16k8",), (".f32",), (".row", ".col"), 80, (7, 0)),
    ((".a", ".b"), (".m8n8k4",), (".f64",), (".row", ".col"), 80, (7, 0)),
    ((".c",), (".m8n8k4",), (".f64",), (".row", ".col"), 80, (7, 0)),
    ((".a",), (".m8n8k32",), (".s4", ".u4"), (".row",), 75, (6, 3)),
    ((".b",), (".m8n8k32",), (".s4", ".u4"), (".col",), 75, (6, 3)),
    ((".a",), (".m8n8k128",), (".b1",), (".row",), 75, (6, 3)),
    ((".b",), (".m8n8k128",), (".b1",), (".col",), 75, (6, 3)),
    ((".c",), (".m8n8k32", ".m8n8k128"), (".s32",), (".row", ".col"), 75, (6, 3)),
)
for frags, shapes, types, layouts, sm, ptx in LOADS:
    shape = R("shape", *shapes, gate={s: g for s, g in SHAPE_GATE.items() if s in shapes})
    elem = _elem(types[0])
    FORMS.append(_w("wmma.load", [R("frag", *frags, order="pin"), *SYNC, R("layout", *layouts),
                                  shape, SPACE,
                                  R("type", *types)], (f"v@frag:{elem}", "m", "s:u32?"), sm, ptx,
                    doc="wmma.load.frag.sync.aligned.layout.shape{.ss}.type r, [p]{, stride}",
                    counts=(("frag", _frag),)))
    if frags == (".c",):
        FORMS.append(_w("wmma.store", [R("frag", ".d", order="pin"), *SYNC,
                                       R("layout", *layouts), shape,
                                       SPACE, R("type", *types)],
                        ("m", f"v@frag:{elem}", "s:u32?"), sm, ptx,
                        doc="wmma.store.d.sync.aligned.layout.shape{.ss}.type [p], r{, stride}",
                        counts=(("frag", _frag),)))


# --------------------------------------------------------------------------- mma
def _mma_rule(role):
    def rule(chosen):
        t = chosen.get({"a": "atype", "b": "btype", "c": "ctype", "d": "dtype"}[role])
        return regs(".c" if role in "cd" else "." + role, chosen["shape"], t)
    return rule


COUNTS = tuple((r, _mma_rule(r)) for r in "abcd")
LAYOUTS = (R("alayout", ".row", ".col"), R("blayout", ".row", ".col"))
ROW_COL = (R("alayout", ".row"), R("blayout", ".col"))
F16_SHAPE = R("shape", *F16_SHAPES, gate=SHAPE_GATE)
for dt in (".f16", ".f32"):
    for ct in (".f16", ".f32"):
        FORMS.append(_w("wmma.mma", [*SYNC, *LAYOUTS, F16_SHAPE, R("dtype", dt), R("ctype", ct)],
                        (f"v@d:{_elem(dt)}", "v8:b32", "v8:b32", f"v@c:{_elem(ct)}"), 70, (6, 0),
                        doc="wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype d, a, b, c "
                            "(f16 multiplicands)", counts=COUNTS))
for t in (".s8", ".u8"):
    FORMS.append(_w("wmma.mma", [*SYNC, *LAYOUTS, F16_SHAPE, R("dtype", ".s32"), R("atype", t),
                                 R("btype", t), R("ctype", ".s32"), G("sat", ".satfinite")],
                    ("v@d:s32", "v@a:b32", "v@b:b32", "v@c:s32"), 72, (6, 3),
                    doc="wmma.mma...shape.s32.atype.btype.s32{.satfinite} (s8 or u8)",
                    counts=COUNTS))
FORMS += [
    _w("wmma.mma", [*SYNC, *LAYOUTS, F16_SHAPE, R("dtype", ".f32"), R("atype", ".bf16"),
                    R("btype", ".bf16"), R("ctype", ".f32")],
       ("v8:f32", "v@a:b32", "v@b:b32", "v8:f32"), 80, (7, 0), counts=COUNTS),
    _w("wmma.mma", [*SYNC, *LAYOUTS, R("shape", ".m16n16k8"), R("dtype", ".f32"),
                    R("atype", ".tf32"), R("btype", ".tf32"), R("ctype", ".f32")],
       ("v8:f32", "v4:b32", "v4:b32", "v8:f32"), 80, (7, 0)),
    _w("wmma.mma", [*SYNC, *LAYOUTS, R("shape", ".m8n8k4"), G("rnd", ".rn", ".rz", ".rm", ".rp"),
                    R("dtype", ".f64"), R("atype", ".f64"), R("btype", ".f64"),
                    R("ctype", ".f64")], ("v2:f64", "v1:f64", "v1:f64", "v2:f64"), 80, (7, 0),
       doc="wmma.mma.sync.aligned.alayout.blayout.m8n8k4{.rnd}.f64.f64.f64.f64"),
] + [
    _w("wmma.mma", [*SYNC, *ROW_COL, R("shape", ".m8n8k32"), R("dtype", ".s32"), R("atype", t),
                    R("btype", t), R("ctype", ".s32"), G("sat", ".satfinite")],
       ("v2:s32", "v1:b32", "v1:b32", "v2:s32"), 75, (6, 3),
       doc="wmma.mma.sync.aligned.row.col.m8n8k32.s32.atype.btype.s32{.satfinite} (s4 or u4)")
    for t in (".s4", ".u4")
] + [
    _w("wmma.mma", [R("op", ".xor", ".and", gate={".and": (80, (7, 1))}, order="bop"),
                    R("popc", ".popc", order="bop"),
                    *SYNC, *ROW_COL, R("shape", ".m8n8k128"), R("dtype", ".s32"),
                    R("atype", ".b1"), R("btype", ".b1"), R("ctype", ".s32")],
       ("v2:s32", "v1:b32", "v1:b32", "v2:s32"), 75, (6, 3),
       doc="wmma.mma.xor|and.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32"),
]
