"""multimem: loads with reduction, stores and reductions on a multimem (NVLink multicast)
address, sm_90 and PTX ISA 8.1:

    multimem.ld_reduce{.ldsem}{.scope}{.global}.op{.acc::f32}{.vec}.type d, [a]
    multimem.ld_reduce.weak{.global}.op{.acc::f32}{.vec}.type        d, [a]
    multimem.st{.stsem}{.scope}{.global}{.vec}.type                  [a], b
    multimem.st.weak{.global}{.vec}.type                             [a], b
    multimem.red{.redsem}{.scope}{.global}.op{.vec}.type             [a], b

The operation / type / vector combinations are the ones ptxas (13.5) takes for sm_90: integer
operations on scalars only (.add: u32 s32 u64; .min/.max: u32 s32 u64 s64; .and/.or/.xor: b32
b64); float .add on .f32 (scalar, .v2, .v4), .f64 (scalar), .f16x2/.bf16x2 (scalar, .v2, .v4)
and .f16/.bf16 (.v2, .v4, .v8); float .min/.max on the half types only (vectors only for
multimem.red); ``.acc::f32`` (PTX ISA 8.2) on the half-type .add of ld_reduce. Not in the
table: the fp8 types of sm_100a. Family "atomic" (the ISA lists multimem with atom and red).
"""
from __future__ import annotations

from .common import SCOPES
from .model import Form, G, R

INT = {".add": (".u32", ".s32", ".u64"), ".min": (".u32", ".s32", ".u64", ".s64"),
       ".max": (".u32", ".s32", ".u64", ".s64"), ".and": (".b32", ".b64"),
       ".or": (".b32", ".b64"), ".xor": (".b32", ".b64")}
HALF2 = (".f16x2", ".bf16x2")
HALF = (".f16", ".bf16")
# (vector options or None, float types) for .add, and for .min/.max
ADD = ((None, (".f32", ".f64") + HALF2), ((".v2", ".v4"), (".f32",) + HALF2 + HALF),
       ((".v8",), HALF))
MINMAX = ((None, HALF2), ((".v2", ".v4"), HALF2 + HALF), ((".v8",), HALF))
RED_MINMAX = MINMAX[1:]      # multimem.red: vectors only ("Incorrect type '.f16x2' for '.min'")
STORE = ((None, (".b32", ".b64", ".u32", ".s32", ".u64", ".s64", ".f32", ".f64") + HALF2),
         ((".v2", ".v4"), (".f32",) + HALF2 + HALF), ((".v8",), HALF))
SPACE = G("space", ".global")
SCOPE = G("scope", *SCOPES)


def _m(name, groups, ops, doc):
    return Form(name, tuple(groups), ops, min_sm=90, min_ptx=(8, 1), family="atomic",
                doc=doc)


def _leads(sems, weak=True):
    """No memory order (or .weak), or an order with its scope (ptxas: "Modifier '.relaxed'
    requires scope", "Modifier '.cta' requires order")."""
    plain = [G("sem", ".weak"), SPACE] if weak else [SPACE]
    return (plain, [R("sem", *sems), R("scope", *SCOPES), SPACE])


FORMS = []
for lead in _leads((".relaxed", ".acquire")):
    for op, types in INT.items():
        FORMS.append(_m("multimem.ld_reduce", lead + [R("op", op), R("type", *types)],
                        ("d:type", "m"), f"multimem.ld_reduce{{.sem}}{{.scope}}.global{op}.type"))
    for ops, shapes in (((".add",), ADD), ((".min", ".max"), MINMAX)):
        for vecs, types in shapes:
            acc = [G("acc", ".acc::f32", gate={".acc::f32": (90, (8, 2))})] \
                if ops == (".add",) and set(types) & set(HALF + HALF2) else []
            if acc and ".f32" in types:       # .acc::f32 only on the half types
                FORMS.append(_m("multimem.ld_reduce",
                                lead + [R("op", *ops)] + ([R("vec", *vecs)] if vecs else []) +
                                [R("type", ".f32", *((".f64",) if not vecs else ()))],
                                ("v:type" if vecs else "d:type", "m"),
                                "multimem.ld_reduce...add{.vec}.f32|f64"))
                types = tuple(t for t in types if t not in (".f32", ".f64"))
            FORMS.append(_m("multimem.ld_reduce",
                            lead + [R("op", *ops)] + acc + ([R("vec", *vecs)] if vecs else []) +
                            [R("type", *types)], ("v:type" if vecs else "d:type", "m"),
                            "multimem.ld_reduce{.sem}{.scope}.global.op{.acc::f32}{.vec}.type"))
for lead in _leads((".relaxed", ".release")):
    for vecs, types in STORE:
        FORMS.append(_m("multimem.st", lead + ([R("vec", *vecs)] if vecs else []) +
                        [R("type", *types)], ("m", "v:type" if vecs else "s:type"),
                        "multimem.st{.sem}{.scope}.global{.vec}.type [a], b"))
for lead in _leads((".relaxed", ".release"), weak=False):
    for op, types in INT.items():
        FORMS.append(_m("multimem.red", lead + [R("op", op), R("type", *types)], ("m", "s:type"),
                        f"multimem.red{{.sem}}{{.scope}}.global{op}.type [a], b"))
    for ops, shapes in (((".add",), ADD), ((".min", ".max"), RED_MINMAX)):
        for vecs, types in shapes:
            FORMS.append(_m("multimem.red", lead + [R("op", *ops)] +
                            ([R("vec", *vecs)] if vecs else []) + [R("type", *types)],
                            ("m", "v:type" if vecs else "s:type"),
                            "multimem.red{.sem}{.scope}.global.op{.vec}.type [a], b"))
