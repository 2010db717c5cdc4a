"""cvt in every rounding, saturation, relu and packing form; cvt.pack; cvta and isspacep live in
forms_memory."""
from __future__ import annotations

from .common import RND, RNDI, SM100A
from .model import Form, G, R

CVT_NUM = (".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64", ".f16", ".f32",
           ".f64")
F8X2 = (".e4m3x2", ".e5m2x2")
F6X2 = (".e2m3x2", ".e3m2x2")
F8X4 = (".e4m3x4", ".e5m2x4")


def _c(groups, ops, sm=20, ptx=(1, 0), doc="", archs=(), relaxed=False):
    return Form("cvt", tuple(groups), ops, min_sm=sm, min_ptx=ptx, archs=archs, family="cvt",
                doc=doc, relaxed=relaxed)


# PTX ISA "cvt", PTX ISA Notes / Target ISA Notes: .relu and the .f16x2/.bf16/.bf16x2/.tf32
# destinations: PTX 7.0, sm_80; cvt.f32.bf16: PTX 7.1, sm_80 (its .ftz: 7.8, sm_90); the other
# conversions to or from .bf16: PTX 7.8, sm_90; cvt.satfinite.{f16, bf16, f16x2, bf16x2,
# tf32}.f32: PTX 8.1.
SATF = {".satfinite": (20, (8, 1))}
RELU = {".relu": (80, (7, 0))}
BF16_FROM = (".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64", ".f16", ".f64",
             ".bf16")
FORMS = []
for rnd in (G("irnd", *RNDI), G("frnd", *RND)):
    FORMS += [
        _c([rnd, G("ftz", ".ftz"), G("sat", ".sat"), R("dtype", *CVT_NUM),
            R("atype", *CVT_NUM)], ("d:dtype", "s:atype"), relaxed=True,
           doc=f"cvt{{.{rnd.name}}}{{.ftz}}{{.sat}}.dtype.atype"),
        # ptxas rejects .ftz and .sat on every one of these ("Illegal modifier")
        _c([rnd, R("dtype", ".bf16"), R("atype", *BF16_FROM)], ("d:dtype", "s:atype"), sm=90,
           ptx=(7, 8), relaxed=True, doc=f"cvt{{.{rnd.name}}}.bf16.atype (not from .f32)"),
        _c([rnd, R("dtype", *BF16_FROM[:-1]), R("atype", ".bf16")], ("d:dtype", "s:atype"),
           sm=90, ptx=(7, 8), relaxed=True, doc=f"cvt{{.{rnd.name}}}.dtype.bf16 (not to .f32)"),
    ]
FORMS += [
    _c([G("ftz", ".ftz", gate={".ftz": (90, (7, 8))}), R("dtype", ".f32"), R("atype", ".bf16")],
       ("d:f32", "s:bf16"), sm=80, ptx=(7, 1), doc="cvt{.ftz}.f32.bf16"),
    # narrowing f32 -> f16/bf16 with relu / satfinite
    _c([R("rnd", ".rn", ".rz"), R("relu", ".relu"), R("dtype", ".f16"), R("atype", ".f32")],
       ("d:b16", "s:f32"), sm=80, ptx=(7, 0)),
    _c([R("rnd", ".rn", ".rz"), G("relu", ".relu", gate=RELU), R("sat", ".satfinite"),
        R("dtype", ".f16"), R("atype", ".f32")], ("d:b16", "s:f32"), ptx=(8, 1)),
    _c([R("rnd", ".rn", ".rz"), G("relu", ".relu"), G("sat", ".satfinite", gate=SATF),
        R("dtype", ".bf16"), R("atype", ".f32")], ("d:b16", "s:f32"), sm=80, ptx=(7, 0),
       doc="cvt.frnd2{.relu}{.satfinite}.bf16.f32 (.satfinite: PTX ISA 8.1)"),
    _c([R("rnd", ".rn", ".rz"), G("relu", ".relu"), G("sat", ".satfinite", gate=SATF),
        R("dtype", ".f16x2", ".bf16x2"), R("atype", ".f32")], ("d:b32", "s:f32", "s:f32"),
       sm=80, ptx=(7, 0), doc="cvt.frnd2{.relu}{.satfinite}.f16x2.f32 d, a, b (pack; d.hi = a)"),
    _c([R("rnd", ".rs"), G("relu", ".relu"), R("sat", ".satfinite"),
        R("dtype", ".f16x2", ".bf16x2"), R("atype", ".f32")],
       ("d:b32", "s:f32", "s:f32", "r:b32"), archs=SM100A, sm=100, ptx=(8, 7),
       doc="stochastic rounding with random bits rbits"),
    # tf32
    _c([R("rnd", ".rna"), G("sat", ".satfinite", gate=SATF), R("dtype", ".tf32"),
        R("atype", ".f32")], ("d:b32", "s:f32"), sm=80, ptx=(7, 0)),
    _c([R("rnd", ".rn", ".rz"), G("relu", ".relu"),
        G("sat", ".satfinite", gate={".satfinite": (100, (8, 6))}), R("dtype", ".tf32"),
        R("atype", ".f32")], ("d:b32", "s:f32"), sm=90, ptx=(7, 8)),
    # fp8
    _c([R("rnd", ".rn"), R("sat", ".satfinite"), G("relu", ".relu"), R("dtype", *F8X2),
        R("atype", ".f32")], ("d:b16", "s:f32", "s:f32"), sm=89, ptx=(7, 8),
       doc="cvt.rn.satfinite{.relu}.f8x2type.f32 d, a, b"),
    _c([R("rnd", ".rn"), R("sat", ".satfinite"), G("relu", ".relu"), R("dtype", *F8X2),
        R("atype", ".f16x2")], ("d:b16", "r:b32"), sm=89, ptx=(7, 8)),
    _c([R("rnd", ".rn"), G("relu", ".relu"), R("dtype", ".f16x2"), R("atype", *F8X2)],
       ("d:b32", "r:b16"), sm=89, ptx=(7, 8)),
    _c([R("rnd", ".rs"), G("relu", ".relu"), R("sat", ".satfinite"), R("dtype", *F8X4),
        R("atype", ".f32")], ("d:b32", "v4:f32", "r:b32"), archs=SM100A, sm=100, ptx=(8, 7)),
    # fp6 / fp4
    _c([R("rnd", ".rn"), R("sat", ".satfinite"), G("relu", ".relu"), R("dtype", *F6X2),
        R("atype", ".f32")], ("d:b16", "s:f32", "s:f32"), archs=SM100A, sm=100, ptx=(8, 6)),
    _c([R("rnd", ".rn"), G("relu", ".relu"), R("dtype", ".f16x2"), R("atype", *F6X2)],
       ("d:b32", "r:b16"), archs=SM100A, sm=100, ptx=(8, 6)),
    _c([R("rnd", ".rn"), R("sat", ".satfinite"), G("relu", ".relu"), R("dtype", ".e2m1x2"),
        R("atype", ".f32")], ("d:b8", "r:f32", "r:f32"), archs=SM100A, sm=100, ptx=(8, 6),
       doc="cvt.rn.satfinite{.relu}.e2m1x2.f32 d, a, b (d is .b8)"),
    _c([R("rnd", ".rn"), G("relu", ".relu"), R("dtype", ".f16x2"), R("atype", ".e2m1x2")],
       ("d:b32", "r:b8"), archs=SM100A, sm=100, ptx=(8, 6)),
    # ue8m0 scale factors
    _c([R("rnd", ".rz", ".rp"), G("sat", ".satfinite"), R("dtype", ".ue8m0x2"),
        R("atype", ".f32")], ("d:b16", "s:f32", "s:f32"), archs=SM100A, sm=100, ptx=(8, 6)),
    _c([R("rnd", ".rz", ".rp"), G("sat", ".satfinite"), R("dtype", ".ue8m0x2"),
        R("atype", ".bf16x2")], ("d:b16", "r:b32"), archs=SM100A, sm=100, ptx=(8, 6)),
    _c([R("rnd", ".rn"), R("dtype", ".bf16x2"), R("atype", ".ue8m0x2")], ("d:b32", "r:b16"),
       archs=SM100A, sm=100, ptx=(8, 6)),
    # integer pack
    Form("cvt.pack", (R("sat", ".sat"), R("dtype", ".u8", ".s8"),
                      R("atype", ".s32"), R("ctype", ".b32")),
         ("d:b32", "s:s32", "s:s32", "s:b32"), min_sm=72, min_ptx=(6, 5), family="cvt",
         doc="cvt.pack.sat.convertType.s32.b32 d, a, b, c"),
    Form("cvt.pack", (R("sat", ".sat"), R("dtype", ".u4", ".s4", ".u2", ".s2"),
                      R("atype", ".s32"), R("ctype", ".b32")),
         ("d:b32", "s:s32", "s:s32", "s:b32"), min_sm=72, min_ptx=(6, 5), family="cvt"),
    Form("cvt.pack", (R("sat", ".sat"), R("dtype", ".u16", ".s16"), R("atype", ".s32")),
         ("d:b32", "s:s32", "s:s32"), min_sm=72, min_ptx=(6, 5), family="cvt",
         doc="cvt.pack.sat.convertType.s32 d, a, b"),
]
