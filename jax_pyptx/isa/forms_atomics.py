"""atom and red: every operation and type, memory orders and scopes, cache hints, the f16/bf16
(packed and vector) adds, 128-bit cas/exch; red.async (cluster shared memory)."""
from __future__ import annotations

from .common import SCOPES
from .model import Form, G, R

SPACES = (".global", ".shared", ".shared::cta", ".shared::cluster")
SPACE_GATE = {".shared::cta": (20, (7, 8)), ".shared::cluster": (90, (7, 8))}
SCOPE_GATE = {".cluster": (90, (7, 8))}
SEM_GATE = {s: (70, (6, 0)) for s in (".relaxed", ".acquire", ".release", ".acq_rel")}

# op -> (types, min_sm, min_ptx); 64-bit / float types gated
INT_OPS = {
    ".and": (".b32", ".b64"), ".or": (".b32", ".b64"), ".xor": (".b32", ".b64"),
    ".exch": (".b32", ".b64"), ".inc": (".u32",), ".dec": (".u32",),
    ".add": (".u32", ".s32", ".u64", ".f32", ".f64"),
    ".min": (".u32", ".s32", ".u64", ".s64"), ".max": (".u32", ".s32", ".u64", ".s64"),
}
TYPE_GATE = {".f64": (60, (5, 0)), ".s64": (32, (3, 1))}


def _lead(red, sems, hint=False):
    """sem, scope, space; ``.L2::cache_hint`` takes .global only (ptxas: "cannot be applied
    to '.shared' space")."""
    return [G("sem", *sems, gate={k: v for k, v in SEM_GATE.items() if k in sems}),
            G("scope", *SCOPES, gate={".cta": (70, (6, 0)), ".gpu": (70, (6, 0)),
                                      ".sys": (70, (6, 0)), **SCOPE_GATE}),
            G("space", ".global") if hint else G("space", *SPACES, gate=SPACE_GATE)]


def _atom(name, groups, ops, **kw):
    """A form of atom / red; ptxas takes its modifiers in any order (Triton's
    ``atom.global.gpu.acq_rel.add``, nvcc's ``atom.global.cta.add``, CUDA's
    ``atom.add.release.gpu``), as the table does (:mod:`.orders`)."""
    return Form(name, tuple(groups), ops, **kw)


def _forms(name, red):
    sems = (".relaxed", ".release") if red else (".relaxed", ".acquire", ".release", ".acq_rel")
    lead = _lead(red, sems)
    d = () if red else ("d:type",)
    out = []
    for op, types in INT_OPS.items():
        if red and op == ".exch":
            continue   # red has no .exch (PTX ISA "red": .and .or .xor .add .inc .dec .min .max)
        for hint in (False, True):
            groups = _lead(red, sems, hint) + [R("op", op)] + \
                ([R("hint", ".L2::cache_hint")] if hint else []) + \
                [R("type", *types, gate={k: v for k, v in TYPE_GATE.items() if k in types})]
            ops = d + ("m", "s:type") + (("r:b64",) if hint else ())
            out.append(_atom(name, tuple(groups), ops, min_sm=80 if hint else 20,
                            min_ptx=(7, 4) if hint else (1, 1), family="atomic",
                            doc=f"{name}{{.sem}}{{.scope}}{{.space}}{op}.type"))
    # half-precision adds (.noftz), scalar and packed
    for hint in (False, True):
        out.append(_atom(name, tuple(_lead(red, sems, hint) + [R("op", ".add"),
                                                               R("noftz", ".noftz")] +
                                    ([R("hint", ".L2::cache_hint")] if hint else []) +
                                    [R("type", ".f16", ".f16x2", ".bf16", ".bf16x2",
                                       gate={".f16": (70, (6, 3)), ".bf16": (90, (7, 8)),
                                             ".bf16x2": (90, (7, 8))})]),
                        d + ("m", "s:type") + (("r:b64",) if hint else ()),
                        min_sm=80 if hint else 60, min_ptx=(7, 4) if hint else (6, 2),
                        family="atomic", doc=f"{name}...add.noftz.f16|f16x2|bf16|bf16x2"))
    # .b128 with .sys scope: PTX 8.4 (ptxas: "'.b128 with .sys' requires PTX ISA 8.4")
    b128 = [lead[0], G("scope", *SCOPES, gate={**SCOPE_GATE, ".sys": (90, (8, 4))}), lead[2]]
    if not red:
        out += [
            _atom(name, tuple(lead + [R("op", ".cas"), R("type", ".b32", ".b64", ".b16",
                                                         gate={".b16": (70, (6, 3))})]),
                 ("d:type", "m", "s:type", "s:type"), family="atomic",
                 doc="atom...cas.type d, [a], b, c"),
            _atom(name, tuple(b128 + [R("op", ".cas"), R("type", ".b128")]),
                 ("d:type", "m", "s:type", "s:type"), min_sm=90, min_ptx=(8, 3), family="atomic"),
            _atom(name, tuple(b128 + [R("op", ".exch"), R("type", ".b128")]),
                 ("d:type", "m", "s:type"), min_sm=90, min_ptx=(8, 3), family="atomic"),
        ]
    # vector forms (global only)
    vlead = lead[:2] + [G("space", ".global")]
    dv = () if red else ("v:type",)
    for hint in (False, True):
        h = [R("hint", ".L2::cache_hint")] if hint else []
        pol = ("r:b64",) if hint else ()
        out += [
            _atom(name, tuple(vlead + [R("op", ".add")] + h + [R("vec", ".v2", ".v4"),
                                                              R("type", ".f32")]),
                 dv + ("m", "v:type") + pol, min_sm=90, min_ptx=(8, 1), family="atomic",
                 doc=f"{name}.global.add.v2|v4.f32"),
            _atom(name, tuple(vlead + [R("op", ".add", ".min", ".max"), R("noftz", ".noftz")] + h +
                             [R("vec", ".v2", ".v4", ".v8"), R("type", ".f16", ".bf16")]),
                 dv + ("m", "v:type") + pol, min_sm=90, min_ptx=(8, 1), family="atomic",
                 doc=f"{name}.global.op.noftz.v2|v4|v8.f16|bf16"),
            _atom(name, tuple(vlead + [R("op", ".add", ".min", ".max"), R("noftz", ".noftz")] + h +
                             [R("vec", ".v2", ".v4"), R("type", ".f16x2", ".bf16x2")]),
                 dv + ("m", "v:type") + pol, min_sm=90, min_ptx=(8, 1), family="atomic",
                 doc=f"{name}.global.op.noftz.v2|v4.f16x2|bf16x2"),
        ]
    return out


FORMS = _forms("atom", red=False) + _forms("red", red=True) + [
    Form("red.async", (R("sem", ".relaxed"), R("scope", ".cluster"), G("space", ".shared::cluster"),
                       R("completion", ".mbarrier::complete_tx::bytes"), R("op", *ops),
                       R("type", *types)),
         ("m", "s:type", "m"), min_sm=90, min_ptx=(8, 1), family="atomic",
         doc="red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type")
    # op / type pairs of PTX ISA "red.async" (ptxas: "Incorrect type '.s32' for operation '.inc'")
    for ops, types in (((".inc", ".dec"), (".u32",)), ((".min", ".max"), (".u32", ".s32")),
                       ((".add",), (".u32", ".s32", ".u64")), ((".and", ".or", ".xor"), (".b32",)))
]
