"""Texture and surface instructions: tex (plain and the .base/.level/.grad mipmap forms), tld4,
txq, suld.b, sust.b, sust.p, sured and suq. Texture and surface handles are 64-bit registers
(unified mode) or .texref/.samplerref/.surfref symbols.

Coordinate vectors (``[tex, {c...}]``, the ``t`` / ``tx`` operand kinds) have the length the
geometry needs (PTX ISA "tex"): .1d one, .2d two, .3d four (the fourth ignored), the array
geometries a .u32 array index and the coordinates (.a1d two, .a2d four), .cube/.acube four,
the multi-sample .2dms/.a2dms four (sample, x, y, and the array index or padding). ptxas is more
lenient (it pads .1d/.2d vectors); the table keeps the ISA's shapes. Further restrictions, as
ptxas states them: .cube/.acube take .f32 coordinates ("Floating-point coordinates required")
and no offsets, .2dms/.a2dms take .s32 coordinates and no .level/.grad ("Multi-sample
geometry"), .v4 results for .u32/.s32/.f16/.f32 and .v2 for .f16x2, a .level lod of the
coordinate type, .grad gradients of the geometry's spatial dimensions. The optional trailing
operands are the texel offsets ``e`` (.s32 vector) and the depth-compare value ``f``.

The explicit sampler ``[tex, sampler, {c...}]`` belongs to the independent texturing mode
(``.texmode_independent``); in the default unified mode ptxas takes it only with the plain
geometries (``Illegal modifier '.cube'``), a module-level condition the table does not model.

Not in the table: the ``d|p`` predicate output of tex/tld4 (PTX ISA 7.1), and tld4 with .cube
and .acube, which ptxas 13.5 rejects ("Illegal modifier '.cube' for instruction 'tld4'").
"""
from __future__ import annotations

from .model import Form, G, R

COORDS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 2, ".a2d": 4, ".cube": 4, ".acube": 4,
          ".2dms": 4, ".a2dms": 4}
OFFSETS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 1, ".a2d": 2, ".2dms": 2, ".a2dms": 2}
GRADS = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 1, ".a2d": 2, ".cube": 4, ".acube": 4}
PLAIN = (".1d", ".2d", ".3d", ".a1d", ".a2d")
CUBE = (".cube", ".acube")
MS = (".2dms", ".a2dms")
GEOM_GATE = {".a1d": (20, (2, 3)), ".a2d": (20, (2, 3)), ".cube": (20, (2, 3)),
             ".acube": (20, (3, 0)), ".2dms": (30, (3, 2)), ".a2dms": (30, (3, 2))}
CLAMP = R("clamp", ".trap", ".clamp", ".zero")


def _by(table):
    def rule(chosen):
        return table[chosen["geom"]]
    return rule


COUNTS = (("coords", _by(COORDS)), ("offs", _by(OFFSETS)), ("grad", _by(GRADS)))


def _geom(geoms):
    return R("geom", *geoms, gate={g: v for g, v in GEOM_GATE.items() if g in geoms})


def _f(name, groups, ops, sm=20, ptx=(1, 0), doc="", relaxed=False):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="texture", doc=doc,
                counts=COUNTS, relaxed=relaxed)


FORMS = []
# --------------------------------------------------------------------------- tex
RESULTS = ((R("vec", ".v4"), R("dtype", ".u32", ".s32", ".f32", ".f16",
                               gate={".f16": (53, (4, 2))})),
           (R("vec", ".v2"), R("dtype", ".f16x2", gate={".f16x2": (53, (4, 2))})))
# (mip group or None, its operands, geometries by coordinate type, min sm, min ptx)
MIPS = ((None, (), 20, (1, 0)), (".base", (), 30, (3, 1)), (".level", ("s:ctype",), 30, (3, 1)),
        (".grad", ("v@grad:f32", "v@grad:f32"), 30, (3, 1)))
# (geometries, coordinate types, trailing optional operands): texel offsets ``e`` where the
# geometry has them, the depth-compare value ``f`` with .f32 coordinates except for .3d (ptxas:
# "Illegal modifier '.3d'", "Arguments mismatch" with .s32 coordinates)
E, F = "v@offs:s32?", "r:f32?"
TAILS = (((".1d", ".2d", ".a1d", ".a2d"), (".f32",), ((E, F), ("r:f32",))),
         ((".3d",), (".f32",), ((E,),)), (PLAIN, (".s32",), ((E,),)),
         (CUBE, (".f32",), ((F,),)), (MS, (".s32",), ((E,),)))
for mip, mops, sm, ptx in MIPS:
    mgroup = [R("mip", mip, order="pin")] if mip else []
    for geoms, ctypes, tails in TAILS:
        if mip in (".level", ".grad") and geoms == MS:
            continue            # no mipmaps for multi-sample textures
        for vec, dtype in RESULTS:
            groups = mgroup + [_geom(geoms), vec, dtype, R("ctype", *ctypes)]
            head = ("v:dtype", "tx@coords:ctype") + mops
            doc = (f"tex{mip or ''}.geom{vec.options[0]}.dtype.ctype d, [a, {{b,}} c]"
                   f"{', lod' if mip == '.level' else ''}"
                   f"{', dPdx, dPdy' if mip == '.grad' else ''}")
            for tail in tails:
                FORMS.append(_f("tex", groups, head + tail, sm, ptx, doc + "".join(
                    {E: "{, e}", F: "{, f}", "r:f32": ", f"}[t] for t in tail)))
# --------------------------------------------------------------------------- tld4
for geoms in ((".2d",), (".a2d",)):
    groups = [R("comp", ".r", ".g", ".b", ".a"), _geom(geoms), R("vec", ".v4"),
              R("dtype", ".u32", ".s32", ".f32"), R("ctype", ".f32")]
    sm, ptx = (20, (2, 2)) if geoms == (".2d",) else (30, (4, 3))
    FORMS += [_f("tld4", groups, ("v:dtype", "tx@coords:ctype", "v@offs:s32?", "r:f32?"), sm, ptx,
                 "tld4.comp.geom.v4.dtype.f32 d, [a, {b,} c]{, e}{, f}"),
              _f("tld4", groups, ("v:dtype", "tx@coords:ctype", "r:f32"), sm, ptx,
                 "tld4.comp.geom.v4.dtype.f32 d, [a, {b,} c], f (no offsets)")]
# --------------------------------------------------------------------------- txq / suq
FORMS += [
    _f("txq", [R("query", ".width", ".height", ".depth", ".channel_data_type", ".channel_order",
                 ".normalized_coords", ".array_size", ".num_mipmap_levels", ".num_samples",
                 gate={".array_size": (20, (4, 3)), ".num_mipmap_levels": (20, (4, 3)),
                       ".num_samples": (20, (4, 3))}),
               R("type", ".b32")], ("d:b32", "m"), ptx=(1, 5), doc="txq.tquery.b32 d, [a]"),
    _f("txq", [R("level", ".level", order="pin"), R("query", ".width", ".height", ".depth"),
               R("type", ".b32")], ("d:b32", "m", "s:s32"), ptx=(4, 3),
       doc="txq.level.tlquery.b32 d, [a], lod"),
    _f("txq", [R("query", ".force_unnormalized_coords", ".filter_mode", ".addr_mode_0",
                 ".addr_mode_1", ".addr_mode_2"), R("type", ".b32")], ("d:b32", "m"),
       ptx=(1, 5), doc="txq.squery.b32 d, [a] (sampler attributes)"),
    _f("suq", [R("query", ".width", ".height", ".depth", ".channel_data_type", ".channel_order",
                 ".array_size", ".memory_layout",
                 gate={".array_size": (20, (4, 3)), ".memory_layout": (20, (4, 3))}),
               R("type", ".b32")], ("d:b32", "m"), ptx=(1, 5), doc="suq.query.b32 d, [a]"),
]
# --------------------------------------------------------------------------- surfaces
SGEOM = R("geom", ".1d", ".2d", ".3d", ".a1d", ".a2d",
          gate={".a1d": (20, (3, 0)), ".a2d": (20, (3, 0))})
B_TYPES = (".b8", ".b16", ".b32", ".b64")
# (vector group or None, types): at most 128 bits ("Vector type too large")
SHAPES = ((None, B_TYPES), (R("vec", ".v2"), B_TYPES), (R("vec", ".v4"), B_TYPES[:3]))
for vec, types in SHAPES:
    v = [vec] if vec else []
    data = "v:type" if vec else "d:type"
    FORMS += [
        _f("suld", [R("mode", ".b", order="pin"), SGEOM, G("cop", ".ca", ".cg", ".cs", ".cv"), *v,
                    R("type", *types), CLAMP], (data, "t@coords:s32"), ptx=(1, 5), relaxed=True,
           doc="suld.b.geom{.cop}{.vec}.dtype.clamp d, [a, {coords}] (.b8 data in wider "
               "registers, as for ld)"),
        _f("sust", [R("mode", ".b", order="pin"), SGEOM, G("cop", ".wb", ".cg", ".cs", ".wt"), *v,
                    R("type", *types), CLAMP],
           ("t@coords:s32", "v:type" if vec else "r:type"), ptx=(1, 5), relaxed=True,
           doc="sust.b.geom{.cop}{.vec}.ctype.clamp [a, {coords}], c"),
    ]
    FORMS.append(_f("sust", [R("mode", ".p", order="pin"), SGEOM, *v, R("type", ".b32"), CLAMP],
                    ("t@coords:s32", "v:type" if vec else "r:type"), ptx=(2, 0),
                    doc="sust.p.geom{.vec}.b32.clamp [a, {coords}], c (formatted)"))
RGEOM = R("geom", ".1d", ".2d", ".3d")
# ptxas: "64-bit min/max operation on sured.b requires PTX ISA .version 8.1"
for ops, types in (((".add",), (".u32", ".s32", ".u64")),
                   ((".min", ".max"), (".u32", ".s32", ".u64", ".s64")),
                   ((".and", ".or"), (".b32",))):
    gate = {t: (20, (8, 1)) for t in (".u64", ".s64")} if ops[0] == ".min" else None
    FORMS.append(_f("sured", [R("mode", ".b", order="pin"), R("op", *ops), RGEOM,
                              R("type", *types, gate=gate), CLAMP],
                    ("t@coords:s32", "r:type"), ptx=(2, 0),
                    doc="sured.b.op.geom.ctype.clamp [a, {coords}], c"))
FORMS.append(_f("sured", [R("mode", ".p", order="pin"),
                          R("op", ".add", ".min", ".max", ".and", ".or"), RGEOM,
                          R("type", ".b32"), CLAMP], ("t@coords:s32", "r:type"), ptx=(2, 0),
                doc="sured.p.op.geom.b32.clamp [a, {coords}], c"))
