"""Logic and bit manipulation (and/or/xor/not/cnot, shifts, lop3, prmt, bfe, bfi, bfind, popc,
clz, brev, shf, fns, bmsk, szext) and comparison/selection (setp, set, selp, slct)."""
from __future__ import annotations

from .common import BITS, BOOL, CMP_F, CMP_I, INT, S, U
from .model import Form, G, R


def _b(name, groups, ops, sm=20, ptx=(1, 0), doc=""):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="logic", doc=doc)


INT_RESULT = {t: (53, (6, 5)) for t in (".u16", ".s16", ".u32", ".s32")}


def _c(name, groups, ops, sm=20, ptx=(1, 0), doc=""):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="compare", doc=doc)


F16 = (".f16", ".f16x2")
BF16 = (".bf16", ".bf16x2")
CLAMP = (".clamp", ".wrap")

FORMS = [
    _b("and", [R("type", ".pred", *BITS)], ("d:type", "s:type", "s:type")),
    _b("or", [R("type", ".pred", *BITS)], ("d:type", "s:type", "s:type")),
    _b("xor", [R("type", ".pred", *BITS)], ("d:type", "s:type", "s:type")),
    _b("not", [R("type", ".pred", *BITS)], ("d:type", "s:type")),
    _b("cnot", [R("type", *BITS)], ("d:type", "s:type")),
    _b("shl", [R("type", *BITS)], ("d:type", "s:type", "s:u32")),
    _b("shr", [R("type", *BITS, *U, *S)], ("d:type", "s:type", "s:u32")),
    _b("lop3", [R("type", ".b32")], ("d:type", "s:type", "s:type", "s:type", "i=0..255"), sm=50,
       ptx=(4, 3), doc="lop3.b32 d, a, b, c, immLut"),
    _b("lop3", [R("bool", ".or", ".and"), R("type", ".b32")],
       ("d|p:type", "s:type", "s:type", "s:type", "i=0..255", "p"), sm=50, ptx=(8, 2),
       doc="lop3.BoolOp.b32 d|p, a, b, c, immLut, q"),
    _b("prmt", [R("type", ".b32"), G("mode", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16")],
       ("d:type", "s:type", "s:type", "s:type")),
    _b("bfe", [R("type", ".u32", ".u64", ".s32", ".s64")], ("d:type", "s:type", "s:u32", "s:u32")),
    _b("bfi", [R("type", ".b32", ".b64")], ("d:type", "s:type", "s:type", "s:u32", "s:u32")),
    _b("bfind", [G("shiftamt", ".shiftamt"), R("type", ".u32", ".u64", ".s32", ".s64")],
       ("d:u32", "s:type")),
    _b("popc", [R("type", ".b32", ".b64")], ("d:u32", "s:type")),
    _b("clz", [R("type", ".b32", ".b64")], ("d:u32", "s:type")),
    _b("brev", [R("type", ".b32", ".b64")], ("d:type", "s:type")),
    _b("shf", [R("dir", ".l", ".r", order="pin"), R("mode", *CLAMP), R("type", ".b32")],
       ("d:type", "s:type", "s:type", "s:u32"), sm=32, ptx=(3, 1)),
    _b("fns", [R("type", ".b32")], ("d:type", "s:type", "s:u32", "s:s32"), sm=30, ptx=(6, 0)),
    _b("bmsk", [R("mode", *CLAMP), R("type", ".b32")], ("d:type", "s:u32", "s:u32"), sm=70,
       ptx=(7, 6)),
    _b("szext", [R("mode", *CLAMP), R("type", ".u32", ".s32")], ("d:type", "s:type", "s:u32"),
       sm=70, ptx=(7, 6)),
    # ---------------------------------------------------------------- comparisons
    _c("setp", [R("cmp", *CMP_I), R("type", *INT, *BITS)], ("pq", "s:type", "s:type")),
    _c("setp", [R("cmp", *CMP_I), R("bool", *BOOL), R("type", *INT, *BITS)],
       ("pq", "s:type", "s:type", "p")),
    _c("setp", [R("cmp", *CMP_F), G("ftz", ".ftz"), R("type", ".f32", ".f64")],
       ("pq", "s:type", "s:type")),
    _c("setp", [R("cmp", *CMP_F), R("bool", *BOOL), G("ftz", ".ftz"), R("type", ".f32", ".f64")],
       ("pq", "s:type", "s:type", "p")),
    _c("setp", [R("cmp", *CMP_F), G("ftz", ".ftz"), R("type", ".f16")],
       ("pq", "s:type", "s:type"), sm=53, ptx=(4, 2)),
    _c("setp", [R("cmp", *CMP_F), R("bool", *BOOL), G("ftz", ".ftz"), R("type", ".f16")],
       ("pq", "s:type", "s:type", "p"), sm=53, ptx=(4, 2)),
    _c("setp", [R("cmp", *CMP_F), G("ftz", ".ftz"), R("type", ".f16x2")],
       ("pq", "s:type", "s:type"), sm=53, ptx=(4, 2), doc="setp.cmp.f16x2 p|q, a, b"),
    _c("setp", [R("cmp", *CMP_F), R("bool", *BOOL), G("ftz", ".ftz"), R("type", ".f16x2")],
       ("pq", "s:type", "s:type", "p"), sm=53, ptx=(4, 2)),
    _c("setp", [R("cmp", *CMP_F), R("type", *BF16)], ("pq", "s:type", "s:type"), sm=90,
       ptx=(7, 8)),
    _c("setp", [R("cmp", *CMP_F), R("bool", *BOOL), R("type", *BF16)],
       ("pq", "s:type", "s:type", "p"), sm=90, ptx=(7, 8)),
    _c("set", [R("cmp", *CMP_I), R("dtype", ".u32", ".s32", ".f32"), R("stype", *INT, *BITS)],
       ("d:dtype", "s:stype", "s:stype")),
    _c("set", [R("cmp", *CMP_I), R("bool", *BOOL), R("dtype", ".u32", ".s32", ".f32"),
               R("stype", *INT, *BITS)], ("d:dtype", "s:stype", "s:stype", "p")),
    _c("set", [R("cmp", *CMP_F), G("ftz", ".ftz"), R("dtype", ".u32", ".s32", ".f32"),
               R("stype", ".f32")], ("d:dtype", "s:stype", "s:stype")),
    _c("set", [R("cmp", *CMP_F), R("bool", *BOOL), G("ftz", ".ftz"),
               R("dtype", ".u32", ".s32", ".f32"), R("stype", ".f32")],
       ("d:dtype", "s:stype", "s:stype", "p")),
    _c("set", [R("cmp", *CMP_F), R("dtype", ".u32", ".s32", ".f32"), R("stype", ".f64")],
       ("d:dtype", "s:stype", "s:stype")),
    _c("set", [R("cmp", *CMP_F), R("bool", *BOOL), R("dtype", ".u32", ".s32", ".f32"),
               R("stype", ".f64")], ("d:dtype", "s:stype", "s:stype", "p")),
    # integer results of a half-precision set: PTX ISA 6.5 (ptxas: "half precision floating
    # point set instruction with integer result requires PTX ISA .version 6.5")
    _c("set", [R("cmp", *CMP_F), G("ftz", ".ftz"),
               R("dtype", ".u16", ".s16", ".u32", ".s32", ".f16", gate=INT_RESULT),
               R("stype", ".f16")], ("d:dtype", "s:stype", "s:stype"), sm=53, ptx=(4, 2)),
    _c("set", [R("cmp", *CMP_F), G("ftz", ".ftz"),
               R("dtype", ".u32", ".s32", ".f16x2",
                 gate={t: INT_RESULT[t] for t in (".u32", ".s32")}),
               R("stype", ".f16x2")],
       ("d:dtype", "s:stype", "s:stype"), sm=53, ptx=(4, 2)),
    _c("set", [R("cmp", *CMP_F), R("dtype", ".u16", ".s16", ".u32", ".s32", ".bf16"),
               R("stype", ".bf16")], ("d:dtype", "s:stype", "s:stype"), sm=90, ptx=(7, 8)),
    _c("selp", [R("type", *BITS, *INT, ".f32", ".f64")], ("d:type", "s:type", "s:type", "p")),
    _c("slct", [R("dtype", *BITS, *INT, ".f32", ".f64"), R("ctype", ".s32")],
       ("d:dtype", "s:dtype", "s:dtype", "s:ctype")),
    _c("slct", [G("ftz", ".ftz"), R("dtype", *BITS, *INT, ".f32", ".f64"), R("ctype", ".f32")],
       ("d:dtype", "s:dtype", "s:dtype", "s:ctype")),
]
