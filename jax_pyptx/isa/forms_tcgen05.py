"""Blackwell tensor cores and Tensor Memory (tcgen05): alloc / dealloc /
relinquish_alloc_permit, mma (kind::f16, tf32, f8f6f4, i8 and the block-scaled mxf8f6f4, mxf4,
mxf4nvf4; cta_group::1 and ::2; A from a shared-memory descriptor or from TMEM; .ws, .sp,
collector usage, .ashift), ld / st in every shape and count, cp, shift, commit (with multicast),
wait::ld / wait::st, fence::before/after_thread_sync."""
from __future__ import annotations

from .common import SM100A
from .fragments import TCGEN05_LD_SHAPES, tcgen05_ld_regs
from .model import Form, G, R

CTA = R("cta_group", ".cta_group::1", ".cta_group::2")
SYNC = (R("sync", ".sync"), R("aligned", ".aligned"))
KINDS = (".kind::f16", ".kind::tf32", ".kind::f8f6f4", ".kind::i8")
BS_KINDS = (".kind::mxf8f6f4", ".kind::mxf4", ".kind::mxf4nvf4")
SCALE_VEC = G("scale_vec", ".scale_vec::1X", ".scale_vec::2X", ".scale_vec::4X", ".block16",
              ".block32", gate={".block16": (SM100A, (8, 8)), ".block32": (SM100A, (8, 8))})
COLLECTOR = (".collector::a::fill", ".collector::a::use", ".collector::a::lastuse",
             ".collector::a::discard")
WS_COLLECTOR = tuple(f".collector::b{i}::{op}" for i in range(4)
                     for op in ("fill", "use", "lastuse", "discard"))
SHAPES = {"." + s: v for s, v in TCGEN05_LD_SHAPES.items()}     # .shape -> (regs per .num, max)
# columns of Tensor Memory: a power of 2 from 32 to 512 (PTX ISA "tcgen05.alloc")
NCOLS = "s:u32=32|64|128|256|512"
NUMS = (".x1", ".x2", ".x4", ".x8", ".x16", ".x32", ".x64", ".x128")


def _regs(chosen) -> int:
    return tcgen05_ld_regs(chosen["shape"], int(chosen["num"][2:]))


def _lanes(chosen) -> int:
    return 4 if chosen["cta_group"] == ".cta_group::1" else 8


def _t(name, groups, ops, doc="", ptx=(8, 6), counts=(), cpu=""):
    return Form(name, tuple(groups), ops, min_sm=100, archs=SM100A, min_ptx=ptx,
                family="tcgen05", doc=doc, counts=counts, cpu=cpu)


FORMS = [
    _t("tcgen05.alloc", [CTA, *SYNC, G("space", ".shared::cta"), R("type", ".b32")],
       ("m", NCOLS), "tcgen05.alloc.cta_group.sync.aligned.shared::cta.b32 [dst], nCols"),
    _t("tcgen05.dealloc", [CTA, *SYNC, R("type", ".b32")], ("r:b32", NCOLS),
       "tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols"),
    _t("tcgen05.relinquish_alloc_permit", [CTA, *SYNC], ()),
    _t("tcgen05.fence::before_thread_sync", [], (), cpu="nop"),
    _t("tcgen05.fence::after_thread_sync", [], (), cpu="nop"),
    _t("tcgen05.wait::ld", list(SYNC), ()),
    _t("tcgen05.wait::st", list(SYNC), ()),
    _t("tcgen05.shift", [CTA, R("dir", ".down")], ("m",), "tcgen05.shift.cta_group.down [taddr]"),
    _t("tcgen05.commit", [CTA, R("completion", ".mbarrier::arrive::one"),
                          G("space", ".shared::cluster"), R("type", ".b64")], ("m",),
       "tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}.b64 [mbar]"),
    _t("tcgen05.commit", [CTA, R("completion", ".mbarrier::arrive::one"),
                          G("space", ".shared::cluster"), R("multicast", ".multicast::cluster"),
                          R("type", ".b64")], ("m", "s:u16"),
       "... .multicast::cluster.b64 [mbar], ctaMask"),
    _t("tcgen05.cp", [CTA, R("shape", ".128x256b", ".4x256b", ".128x128b"),
                      G("dst_fmt", ".b8x16"), G("src_fmt", ".b6x16_p32", ".b4x16_p64")],
       ("m", "r:b64"), "tcgen05.cp.cta_group.shape{.b8x16.src_fmt} [taddr], s-desc"),
    _t("tcgen05.cp", [CTA, R("shape", ".64x128b"), R("multicast", ".warpx2::02_13",
                                                     ".warpx2::01_23"),
                      G("dst_fmt", ".b8x16"), G("src_fmt", ".b6x16_p32", ".b4x16_p64")],
       ("m", "r:b64")),
    _t("tcgen05.cp", [CTA, R("shape", ".32x128b"), R("multicast", ".warpx4"),
                      G("dst_fmt", ".b8x16"), G("src_fmt", ".b6x16_p32", ".b4x16_p64")],
       ("m", "r:b64")),
]
# --------------------------------------------------------------------------- ld / st
for shape, (per, top) in SHAPES.items():
    nums = NUMS[:NUMS.index(f".x{top}") + 1]
    half = ("i",) if shape == ".16x32bx2" else ()
    FORMS += [
        _t("tcgen05.ld", [*SYNC, R("shape", shape), R("num", *nums), G("pack", ".pack::16b"),
                          R("type", ".b32")], ("v@regs:b32", "m") + half,
           f"tcgen05.ld.sync.aligned{shape}.num{{.pack::16b}}.b32 r, [taddr]"
           + (", immHalfSplitoff" if half else ""), counts=(("regs", _regs),)),
        _t("tcgen05.st", [*SYNC, R("shape", shape), R("num", *nums), G("unpack", ".unpack::16b"),
                          R("type", ".b32")], ("m",) + half + ("v@regs:b32",),
           f"tcgen05.st.sync.aligned{shape}.num{{.unpack::16b}}.b32 [taddr], r",
           counts=(("regs", _regs),)),
    ]
# --------------------------------------------------------------------------- mma
LANES = (("lanes", _lanes),)
for sparse in (False, True):
    name = "tcgen05.mma.sp" if sparse else "tcgen05.mma"
    meta = ("m",) if sparse else ()
    for a_desc in (True, False):
        a = "r:b64" if a_desc else "m"
        src = "a-desc" if a_desc else "[a-tmem]"
        extra = [] if a_desc else [G("ashift", ".ashift")]
        # the optional scale-input-d immediate exists for kind::f16 and kind::tf32 only
        for kinds, scale in ((KINDS[:2], ("i?=0..15",)), (KINDS[2:], ())):
            for lanes in (False, True):
                FORMS.append(_t(name, [CTA, R("kind", *kinds), *extra, G("collector", *COLLECTOR)],
                                ("m", a, "r:b64") + meta + ("r:b32",) +
                                (("v@lanes:b32",) if lanes else ()) + ("p",) + scale,
                                f"{name}.cta_group{kinds[0] if len(kinds) == 1 else '.kind'}"
                                f" [d-tmem], {src}, b-desc, idesc"
                                f"{', disable-output-lane' if lanes else ''}, enable-input-d"
                                + (" {, scale-input-d}" if scale else ""), counts=LANES))
        FORMS.append(_t(name, [CTA, R("kind", *BS_KINDS,
                                      gate={".kind::mxf4nvf4": (SM100A, (8, 7))}),
                               R("block_scale", ".block_scale"),
                               SCALE_VEC, G("collector", *COLLECTOR)],
                        ("m", a, "r:b64") + meta + ("r:b32", "m", "m", "p"),
                        f"{name}.cta_group.kind.block_scale{{.scale_vec}} [d-tmem], {src}, b-desc,"
                        f" idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d"))
    # weight-stationary
    wname = "tcgen05.mma.ws.sp" if sparse else "tcgen05.mma.ws"
    for a_desc in (True, False):
        a = "r:b64" if a_desc else "m"
        FORMS.append(_t(wname, [R("cta_group", ".cta_group::1"), R("kind", *KINDS),
                                G("collector", *WS_COLLECTOR)],
                        ("m", a, "r:b64") + meta + ("r:b32", "p", "r:b64?"),
                        f"{wname}.cta_group::1.kind{{.collector::bN::op}} [d-tmem], "
                        f"{'a-desc' if a_desc else '[a-tmem]'}, b-desc, idesc, enable-input-d"
                        f"{{, zero-column-mask-desc}}"))
