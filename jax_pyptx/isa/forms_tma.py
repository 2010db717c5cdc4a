"""Tensor Memory Accelerator and bulk copies: cp.async.bulk.tensor 1d-5d loads (tile,
tile::gather4, im2col, im2col::w; multicast, cta_group, cache hint), stores (tile, scatter4,
im2col_no_offs), cp.reduce.async.bulk(.tensor), cp.async.bulk (non-tensor), the bulk prefetches,
and bulk commit/wait groups."""
from __future__ import annotations

from .common import SM100A
from .model import Form, G, R

DIMS = (".1d", ".2d", ".3d", ".4d", ".5d")
B8_6 = {o: (SM100A, (8, 6)) for o in (".cta_group::1", ".cta_group::2", ".tile::gather4",
                                      ".im2col::w", ".im2col::w::128", ".tile::scatter4")}


# the byte count of a non-tensor bulk copy / reduction is a multiple of 16 (PTX ISA
# "cp.async.bulk", "cp.reduce.async.bulk", "cp.async.bulk.prefetch")
SIZE = "s:u32=0../16"

def _gate(*opts):
    """The sm_100a gates of ``opts`` only (a group's gates must name its own options: a gate
    on another group's option would fire for it)."""
    return {o: B8_6[o] for o in opts}
HINT = R("hint", ".L2::cache_hint")
TX = R("completion", ".mbarrier::complete_tx::bytes")
RED_OPS = (".add", ".min", ".max", ".inc", ".dec", ".and", ".or", ".xor")


def _im2col(chosen) -> int:
    return int(chosen["dim"][1]) - 2


def _t(name, groups, ops, doc, ptx=(8, 0), counts=(), sm=90, cpu=""):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="tma", doc=doc,
                counts=counts, cpu=cpu)


FORMS = []
# --------------------------------------------------------------------------- tensor loads
# .tile::gather4 is 2-D only and takes five coordinates (a column, four rows); the im2col modes
# are 3-D to 5-D (PTX ISA "cp.async.bulk.tensor"). The .tile mode may be left implicit. The
# .shared::cta destination (PTX 8.6) takes no multicast. Target ISA Notes: .tile::gather4 and
# .im2col::w need sm_100a into .shared::cluster but only sm_100 into .shared::cta;
# .im2col::w::128 and .cta_group need sm_100a.
G4 = ".tile::gather4"
W128 = {".im2col::w::128": (SM100A, (8, 6))}
LOADS = (  # (mode, dims, .shared::cluster mode group, .shared::cta mode group, extra operands)
    ("tile", DIMS, G("mode", ".tile"), G("mode", ".tile"), ()),
    ("tile::gather4", (".2d",), R("mode", G4, gate=_gate(G4)), R("mode", G4), ()),
    ("im2col", DIMS[2:], R("mode", ".im2col"), R("mode", ".im2col"), ("v@im2col:b16",)),
    ("im2col::w", DIMS[2:], R("mode", ".im2col::w", ".im2col::w::128",
                              gate=_gate(".im2col::w", ".im2col::w::128")),
     R("mode", ".im2col::w", ".im2col::w::128", gate=W128), ("v2:b16",)),   # {wHalo, wOffset}
)
for mode, dims, m_cluster, m_cta, extra in LOADS:
    for dst, mgroup in ((".shared::cluster", m_cluster), (".shared::cta", m_cta)):
        sm = 100 if dst == ".shared::cta" and mode in ("tile::gather4", "im2col::w") else 90
        for multicast in ((False, True) if dst == ".shared::cluster" else (False,)):
            for hint in (False, True):
                groups = [R("dim", *dims), R("dst", dst), R("src", ".global"), mgroup, TX]
                if multicast:
                    groups.append(R("multicast", ".multicast::cluster"))
                groups.append(G("cta_group", ".cta_group::1", ".cta_group::2",
                                gate=_gate(".cta_group::1", ".cta_group::2")))
                if hint:
                    groups.append(HINT)
                coords = "t5:s32" if mode == "tile::gather4" else "t:s32"
                ops = ("m", coords, "m") + extra + (("s:u16",) if multicast else ()) + \
                    (("r:b64",) if hint else ())
                FORMS.append(_t("cp.async.bulk.tensor", groups, ops,
                                f"load ({mode} into {dst[1:]}{', multicast' if multicast else ''}"
                                f"{', cache hint' if hint else ''}): [dst], [tmap, {{coords}}], "
                                f"[mbar]" + (", im2col info" if extra else ""),
                                ptx=(8, 6) if dst == ".shared::cta" else (8, 0), sm=sm,
                                counts=(("im2col", _im2col),)))
# --------------------------------------------------------------------------- tensor stores / reduce
for hint in (False, True):
    h = [HINT] if hint else []
    pol = ("r:b64",) if hint else ()
    for dims, mode in ((DIMS, G("mode", ".tile")), ((".2d",), R("mode", ".tile::scatter4",
                                                                  gate=_gate(".tile::scatter4"))),
                       (DIMS[2:], R("mode", ".im2col_no_offs"))):
        FORMS.append(_t("cp.async.bulk.tensor", [R("dim", *dims), R("dst", ".global"),
                                                 R("src", ".shared::cta"), mode,
                                                 R("completion", ".bulk_group")] + h,
                        ("t5:s32" if mode.options[0] == ".tile::scatter4" else "t:s32", "m")
                        + pol, f"store ({mode.options[0][1:]}): [tmap, {{coords}}], "
                                          f"[src]"))
    for dims, mode in ((DIMS, G("mode", ".tile")), (DIMS[2:], R("mode", ".im2col_no_offs"))):
        FORMS.append(_t("cp.reduce.async.bulk.tensor", [R("dim", *dims), R("dst", ".global"),
                                                        R("src", ".shared::cta"),
                                                        R("op", *RED_OPS), mode,
                                                        R("completion", ".bulk_group")] + h,
                        ("t:s32", "m") + pol,
                        f"reduce ({mode.options[0][1:]}): [tmap, {{coords}}], [src]"))
    FORMS += [
        _t("cp.async.bulk.prefetch.tensor", [R("dim", *DIMS), R("level", ".L2"),
                                             R("src", ".global"), G("mode", ".tile")] + h,
           ("t:s32",) + pol, "prefetch (tile): [tmap, {coords}]", cpu="nop"),
        _t("cp.async.bulk.prefetch.tensor", [R("dim", ".2d"), R("level", ".L2"),
                                             R("src", ".global"),
                                             R("mode", G4, gate=_gate(G4))] + h,
           ("t5:s32",) + pol, "prefetch (tile::gather4): [tmap, {col, row0..row3}]", cpu="nop"),
        _t("cp.async.bulk.prefetch.tensor", [R("dim", *DIMS[2:]), R("level", ".L2"),
                                             R("src", ".global"), R("mode", ".im2col")] + h,
           ("t:s32", "v@im2col:b16") + pol, "prefetch (im2col): [tmap, {coords}], offsets",
           counts=(("im2col", _im2col),), cpu="nop"),
        _t("cp.async.bulk.prefetch.tensor", [R("dim", *DIMS[2:]), R("level", ".L2"),
                                             R("src", ".global"),
                                             R("mode", ".im2col::w", ".im2col::w::128",
                                               gate=_gate(".im2col::w", ".im2col::w::128"))] + h,
           ("t:s32", "v2:b16") + pol, "prefetch (im2col::w): [tmap, {coords}], {wHalo, wOffset}",
           cpu="nop"),
        # ---------------------------------------------------------------- non-tensor bulk
        _t("cp.async.bulk", [R("dst", ".global"), R("src", ".shared::cta"),
                             R("completion", ".bulk_group")] + h, ("m", "m", SIZE) + pol,
           "cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size"),
        _t("cp.async.bulk", [R("dst", ".global"), R("src", ".shared::cta"),
                             R("completion", ".bulk_group")] + h + [R("mask", ".cp_mask")],
           ("m", "m", SIZE) + pol + ("s:b16",), "... .cp_mask [dst], [src], size, byteMask",
           ptx=(8, 6), sm=100),
        _t("cp.async.bulk.prefetch", [R("level", ".L2"), R("src", ".global")] + h,
           ("m", SIZE) + pol, "cp.async.bulk.prefetch.L2.global [src], size", cpu="nop"),
    ]
    for multicast in (False, True):
        dst = R("dst", ".shared::cluster") if multicast else \
            R("dst", ".shared::cluster", ".shared::cta", gate={".shared::cta": (90, (8, 6))})
        FORMS.append(_t("cp.async.bulk", [dst, R("src", ".global"), TX] +
                        ([R("multicast", ".multicast::cluster")] if multicast else []) + h,
                        ("m", "m", SIZE, "m") + (("s:u16",) if multicast else ()) + pol,
                        "global -> shared: [dst], [src], size, [mbar]"))
    # reductions from shared::cta to global
    for ops_types in (((".and", ".or", ".xor"), (".b32", ".b64")), ((".inc", ".dec"), (".u32",)),
                      ((".min", ".max"), (".u32", ".s32", ".u64", ".s64", ".f16", ".bf16")),
                      ((".add",), (".u32", ".s32", ".u64", ".f32", ".f64"))):
        FORMS.append(_t("cp.reduce.async.bulk", [R("dst", ".global"), R("src", ".shared::cta"),
                                                 R("completion", ".bulk_group")] + h +
                        [R("op", *ops_types[0]), R("type", *ops_types[1])],
                        ("m", "m", SIZE) + pol, "shared::cta -> global reduction"))
    FORMS.append(_t("cp.reduce.async.bulk", [R("dst", ".global"), R("src", ".shared::cta"),
                                             R("completion", ".bulk_group")] + h +
                    [R("op", ".add"), R("noftz", ".noftz"),
                     R("type", ".f16", ".bf16")], ("m", "m", SIZE) + pol,
                    "shared::cta -> global f16/bf16 add (.noftz; min/max take no .noftz)"))
FORMS += [
    _t("cp.async.bulk", [R("dst", ".shared::cluster"), R("src", ".shared::cta"), TX],
       ("m", "m", SIZE, "m"), "shared::cta -> shared::cluster: [dst], [src], size, [mbar]"),
] + [
    _t("cp.reduce.async.bulk", [R("dst", ".shared::cluster"), R("src", ".shared::cta"), TX,
                                R("op", *ops), R("type", *types)],
       ("m", "m", SIZE, "m"), "shared::cta -> shared::cluster reduction")
    for ops, types in (((".and", ".or", ".xor"), (".b32",)), ((".inc", ".dec"), (".u32",)),
                       ((".min", ".max"), (".u32", ".s32")), ((".add",), (".u32", ".s32", ".u64")))
] + [
    _t("cp.async.bulk.commit_group", [], (), "cp.async.bulk.commit_group"),
    _t("cp.async.bulk.wait_group", [G("read", ".read")], ("i",),
       "cp.async.bulk.wait_group{.read} N"),
]
