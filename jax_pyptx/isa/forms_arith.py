"""Integer and floating-point arithmetic: add, sub, mul, mad, fma, div, rem, abs, neg, min,
max, the extended-precision and 24-bit forms, dot products, and the transcendental
approximations (rcp, sqrt, rsqrt, ex2, lg2, sin, cos, tanh), packed f16x2/bf16x2 and f32x2."""
from __future__ import annotations

from .common import INT, RND, S, U
from .model import Form, G, R

F16 = (".f16", ".f16x2")
BF16 = (".bf16", ".bf16x2")
PAIR = (".u16x2", ".s16x2")
D3 = ("d:type", "s:type", "s:type")
D4 = ("d:type", "s:type", "s:type", "s:type")
D2 = ("d:type", "s:type")


def _f(name, groups, ops, sm=20, ptx=(1, 0), fam="float", doc=""):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="arith-" + fam, doc=doc)


def _i(name, groups, ops, sm=20, ptx=(1, 0), doc=""):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="arith-int", doc=doc)


FORMS = []

# ----------------------------------------------------------------------------- integer
FORMS.append(_i("add", [R("type", *PAIR)], ("d:b32", "r:b32", "r:b32"), sm=90, ptx=(8, 0),
                doc="add.u16x2 / .s16x2 (SIMD)"))
for op in ("add", "sub"):
    FORMS += [
        _i(op, [R("type", *INT)], D3, doc=f"{op}.type d, a, b"),
        _i(op, [R("sat", ".sat"), R("type", ".s32")], D3, doc=f"{op}.sat.s32 d, a, b"),
        _i(op, [R("cc", ".cc"), R("type", ".u32", ".s32", ".u64", ".s64",
                                  gate={".u64": (20, (4, 3)), ".s64": (20, (4, 3))})],
           D3, doc=f"{op}.cc.type d, a, b (carry-out)"),
    ]
    FORMS.append(_i(op + "c", [G("cc", ".cc"), R("type", ".u32", ".s32", ".u64", ".s64",
                                                   gate={".u64": (20, (4, 3)),
                                                         ".s64": (20, (4, 3))})],
                    D3, ptx=(1, 2), doc=f"{op}c{{.cc}}.type d, a, b (carry-in)"))
FORMS += [
    _i("mul", [R("mode", ".lo", ".hi", order="pin"), R("type", *INT)], D3),
    _i("mul", [R("mode", ".wide", order="pin"), R("type", ".u16", ".u32", ".s16", ".s32")],
       ("d", "s:type", "s:type"), doc="d is twice as wide"),
    _i("mad", [R("mode", ".lo", ".hi", order="pin"), R("type", *INT)], D4),
    _i("mad", [R("mode", ".wide", order="pin"), R("type", ".u16", ".u32", ".s16", ".s32")],
       ("d", "s:type", "s:type", "s"), doc="d and c are twice as wide"),
    _i("mad", [R("mode", ".hi", order="pin"), R("sat", ".sat"), R("type", ".s32")], D4),
    _i("mad", [R("mode", ".lo", ".hi", order="pin"), R("cc", ".cc"),
               R("type", ".u32", ".s32", ".u64", ".s64")],
       D4, ptx=(3, 0)),
    _i("madc", [R("mode", ".lo", ".hi", order="pin"), G("cc", ".cc"),
                R("type", ".u32", ".s32", ".u64", ".s64")], D4, ptx=(3, 0)),
    _i("mul24", [R("mode", ".lo", ".hi", order="pin"), R("type", ".u32", ".s32")], D3),
    _i("mad24", [R("mode", ".lo", ".hi", order="pin"), R("type", ".u32", ".s32")], D4),
    _i("mad24", [R("mode", ".hi", order="pin"), R("sat", ".sat"), R("type", ".s32")], D4),
    _i("sad", [R("type", *INT)], D4),
    _i("div", [R("type", *INT)], D3),
    _i("rem", [R("type", *INT)], D3),
    _i("abs", [R("type", *S)], D2),
    _i("neg", [R("type", *S)], D2),
    _i("dp4a", [R("atype", ".u32", ".s32"), R("btype", ".u32", ".s32")],
       ("d", "s:atype", "s:btype", "s"), sm=61, ptx=(5, 0), doc="dp4a.atype.btype d, a, b, c"),
    _i("dp2a", [R("mode", ".lo", ".hi", order="pin"), R("atype", ".u32", ".s32"),
                R("btype", ".u32", ".s32")],
       ("d", "s:atype", "s:btype", "s"), sm=61, ptx=(5, 0)),
]
for op in ("min", "max"):
    FORMS += [
        _i(op, [R("type", *INT)], D3),
        _i(op, [R("type", *PAIR)], ("d:b32", "r:b32", "r:b32"), sm=90, ptx=(8, 0)),
        _i(op, [R("relu", ".relu"), R("type", ".s32", ".s16x2")], D3, sm=90, ptx=(8, 0)),
    ]

# ----------------------------------------------------------------------------- f32 / f64
for op in ("add", "sub", "mul"):
    FORMS += [
        _f(op, [G("rnd", *RND), G("ftz", ".ftz"), G("sat", ".sat"), R("type", ".f32")], D3),
        _f(op, [G("rnd", *RND), R("type", ".f64")], D3, sm=13),
        _f(op, [G("rnd", *RND), G("ftz", ".ftz"), R("type", ".f32x2")],
           ("d:b64", "r:b64", "r:b64"), sm=100, ptx=(8, 6), doc=f"{op}.f32x2 (packed pair)"),
        _f(op, [G("rnd", ".rn"), G("ftz", ".ftz"), G("sat", ".sat"), R("type", *F16)], D3,
           sm=53, ptx=(4, 2), fam="half"),
        _f(op, [G("rnd", ".rn"), R("type", *BF16)], D3, sm=90, ptx=(7, 8), fam="half"),
    ]
for op in ("add", "sub"):
    FORMS.append(_f(op, [G("rnd", *RND), G("sat", ".sat"), R("type", ".f32"),
                         R("atype", ".f16", ".bf16")], ("d:type", "s:atype", "s:type"),
                    sm=100, ptx=(8, 6), doc=f"{op}.f32.atype d, a, c (mixed precision)"))
FORMS += [
    _f("fma", [R("rnd", *RND), G("ftz", ".ftz"), G("sat", ".sat"), R("type", ".f32")], D4),
    _f("fma", [R("rnd", *RND), R("type", ".f64")], D4, sm=13),
    _f("fma", [R("rnd", *RND), G("ftz", ".ftz"), R("type", ".f32x2")],   # no .sat (ptxas)
       ("d:b64", "r:b64", "r:b64", "r:b64"), sm=100, ptx=(8, 6)),
    _f("fma", [R("rnd", ".rn"), G("ftz", ".ftz"), G("sat", ".sat"), R("type", *F16)], D4,
       sm=53, ptx=(4, 2), fam="half"),
    _f("fma", [R("rnd", ".rn"), G("ftz", ".ftz"), R("relu", ".relu"), R("type", *F16)], D4,
       sm=80, ptx=(7, 0), fam="half"),
    _f("fma", [R("rnd", ".rn"), G("relu", ".relu"), R("type", *BF16)], D4, sm=80, ptx=(7, 0),
       fam="half"),
    _f("fma", [R("rnd", ".rn"), R("oob", ".oob"), G("relu", ".relu"), R("type", *F16, *BF16)],
       D4, sm=90, ptx=(8, 1), fam="half"),
    _f("fma", [R("rnd", *RND), G("sat", ".sat"), R("type", ".f32"), R("atype", ".f16", ".bf16")],
       ("d:type", "s:atype", "s:atype", "s:type"), sm=100, ptx=(8, 6),
       doc="fma.rnd.f32.abtype d, a, b, c (mixed precision)"),
    _f("mad", [R("rnd", *RND), G("ftz", ".ftz"), G("sat", ".sat"), R("type", ".f32")], D4),
    _f("mad", [R("rnd", *RND), R("type", ".f64")], D4, sm=13),
    _f("div", [R("mode", ".approx", ".full", order="pin"), G("ftz", ".ftz"), R("type", ".f32")],
       D3),
    _f("div", [R("rnd", *RND), G("ftz", ".ftz"), R("type", ".f32")], D3),
    _f("div", [R("rnd", *RND), R("type", ".f64")], D3, sm=13),
    _f("abs", [G("ftz", ".ftz"), R("type", ".f32")], D2),
    _f("abs", [R("type", ".f64")], D2, sm=13),
    _f("abs", [G("ftz", ".ftz"), R("type", *F16)], D2, sm=53, ptx=(6, 5), fam="half"),
    _f("abs", [R("type", *BF16)], D2, sm=80, ptx=(7, 0), fam="half"),
    _f("neg", [G("ftz", ".ftz"), R("type", ".f32")], D2),
    _f("neg", [R("type", ".f64")], D2, sm=13),
    _f("neg", [G("ftz", ".ftz"), R("type", *F16)], D2, sm=53, ptx=(6, 0), fam="half"),
    _f("neg", [R("type", *BF16)], D2, sm=80, ptx=(7, 0), fam="half"),
    _f("copysign", [R("type", ".f32", ".f64")], D3, ptx=(2, 0)),
    _f("testp", [R("op", ".finite", ".infinite", ".number", ".notanumber", ".normal",
                   ".subnormal"), R("type", ".f32", ".f64")], ("pd", "s:type"), ptx=(2, 0)),
]
for op in ("min", "max"):
    FORMS += [
        _f(op, [G("ftz", ".ftz"), G("nan", ".NaN", gate={".NaN": (80, (7, 0))}),
                R("type", ".f32")], D3),
        # .xorsign and .abs go together (ptxas: "'.xorsign' requires modifier '.abs'")
        _f(op, [G("ftz", ".ftz"), G("nan", ".NaN"), R("xorsign", ".xorsign"), R("abs", ".abs"),
                R("type", ".f32")], D3, sm=86, ptx=(7, 2)),
        _f(op, [G("ftz", ".ftz"), G("nan", ".NaN"), G("abs", ".abs"), R("type", ".f32")], D4,
           sm=100, ptx=(8, 8), doc=f"{op}.f32 d, a, b, c (three inputs)"),
        _f(op, [R("type", ".f64")], D3, sm=13),
        _f(op, [G("ftz", ".ftz"), G("nan", ".NaN"), R("type", *F16)], D3, sm=80, ptx=(7, 0),
           fam="half"),
        _f(op, [G("nan", ".NaN"), R("type", *BF16)], D3, sm=80, ptx=(7, 0), fam="half"),
        _f(op, [G("ftz", ".ftz"), G("nan", ".NaN"), R("xorsign", ".xorsign"), R("abs", ".abs"),
                R("type", *F16)],
           D3, sm=86, ptx=(7, 2), fam="half"),
        _f(op, [G("nan", ".NaN"), R("xorsign", ".xorsign"), R("abs", ".abs"),
                R("type", *BF16)], D3, sm=86,
           ptx=(7, 2), fam="half"),
    ]

# ----------------------------------------------------------------------------- special functions
FORMS += [
    _f("rcp", [R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("rcp", [R("rnd", *RND), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("rcp", [R("rnd", *RND), R("type", ".f64")], D2, sm=13, fam="sfu"),
    _f("rcp", [R("mode", ".approx"), R("ftz", ".ftz"), R("type", ".f64")], D2, ptx=(2, 1),
       fam="sfu"),
    _f("sqrt", [R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("sqrt", [R("rnd", *RND), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("sqrt", [R("rnd", *RND), R("type", ".f64")], D2, sm=13, fam="sfu"),
    _f("rsqrt", [R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("rsqrt", [R("mode", ".approx"), R("type", ".f64")], D2, sm=13, fam="sfu"),
    _f("rsqrt", [R("mode", ".approx"), R("ftz", ".ftz"), R("type", ".f64")], D2, ptx=(4, 0),
       fam="sfu"),
    _f("ex2", [R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("ex2", [R("mode", ".approx"), R("type", *F16)], D2, sm=75, ptx=(7, 0), fam="sfu"),
    _f("ex2", [R("mode", ".approx"), R("ftz", ".ftz"), R("type", *BF16)], D2, sm=90, ptx=(7, 8),
       fam="sfu"),
    _f("lg2", [R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("sin", [R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("cos", [R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")], D2, fam="sfu"),
    _f("tanh", [R("mode", ".approx"), R("type", ".f32", *F16)], D2, sm=75, ptx=(7, 0), fam="sfu"),
    _f("tanh", [R("mode", ".approx"), R("type", *BF16)], D2, sm=90, ptx=(7, 8), fam="sfu"),
]

__all__ = ["FORMS", "U"]
