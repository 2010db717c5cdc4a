"""Block and grid synchronization: bar / barrier (sync, arrive, red), bar.warp.sync, membar and
fence in every form, nanosleep, griddepcontrol, setmaxnreg, trap, brkpt, pmevent."""
from __future__ import annotations

from .common import SCOPES
from .model import Form, G, R

CTA_GATE = {".cta": (20, (7, 8))}
# barrier ids are 0..15; a thread count is a multiple of the warp size (PTX ISA "bar, barrier";
# .arrive needs a non-zero count)
BAR = "s:u32=0..15"
COUNT = "s:u32=0../32"


def _s(name, groups, ops, sm=20, ptx=(2, 0), fam="sync", doc="", archs=(), cpu=""):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family=fam, doc=doc,
                archs=archs, cpu=cpu)


FORMS = [
    # bar.* (always aligned) and barrier.* (aligned optional)
    _s("bar.sync", [], (BAR, "s:u32?=0../32"), ptx=(1, 0), doc="bar.sync a{, b}"),
    _s("bar.arrive", [], (BAR, "s:u32=32../32"), doc="bar.arrive a, b"),
    _s("bar.red", [R("op", ".popc"), R("type", ".u32")], ("d:u32", BAR, "p"),
       doc="bar.red.popc.u32 d, a, {!}c"),
    _s("bar.red", [R("op", ".popc"), R("type", ".u32")], ("d:u32", BAR, COUNT, "p"),
       doc="bar.red.popc.u32 d, a, b, {!}c"),
    _s("bar.red", [R("op", ".and", ".or"), R("type", ".pred")], ("pd", BAR, "p")),
    _s("bar.red", [R("op", ".and", ".or"), R("type", ".pred")], ("pd", BAR, COUNT, "p")),
    _s("barrier.sync", [G("aligned", ".aligned")], (BAR, "s:u32?=0../32"), sm=70, ptx=(6, 0)),
    _s("barrier.arrive", [G("aligned", ".aligned")], (BAR, "s:u32=32../32"), sm=70,
       ptx=(6, 0)),
    _s("barrier.red", [R("op", ".popc"), G("aligned", ".aligned"), R("type", ".u32")],
       ("d:u32", BAR, "p"), sm=70, ptx=(6, 0)),
    _s("barrier.red", [R("op", ".popc"), G("aligned", ".aligned"), R("type", ".u32")],
       ("d:u32", BAR, COUNT, "p"), sm=70, ptx=(6, 0)),
    _s("barrier.red", [R("op", ".and", ".or"), G("aligned", ".aligned"), R("type", ".pred")],
       ("pd", BAR, "p"), sm=70, ptx=(6, 0)),
    _s("barrier.red", [R("op", ".and", ".or"), G("aligned", ".aligned"), R("type", ".pred")],
       ("pd", BAR, COUNT, "p"), sm=70, ptx=(6, 0)),
    _s("bar.warp.sync", [], ("s:b32",), sm=70, ptx=(6, 0), doc="bar.warp.sync membermask"),
    # ---------------------------------------------------------------- memory ordering
    _s("membar", [R("level", ".cta", ".gl", ".sys", gate={".cta": (20, (1, 4)),
                                                          ".sys": (20, (1, 4))})], (),
       ptx=(1, 4), fam="fence", cpu="nop"),
    _s("membar", [R("proxy", ".proxy", order="pin"), R("kind", ".alias")], (), sm=70,
       ptx=(7, 5), fam="fence", cpu="nop", doc="membar.proxy.alias"),
    _s("fence", [G("sem", ".sc", ".acq_rel"), R("scope", *SCOPES, gate={".cluster": (90, (7, 8))})],
       (), sm=70, ptx=(6, 0), fam="fence", doc="fence{.sc|.acq_rel}.scope", cpu="nop"),
    _s("fence", [R("sem", ".acquire"), R("restrict", ".sync_restrict::shared::cluster"),
                 R("scope", ".cluster")], (), sm=90, ptx=(8, 6), fam="fence", cpu="nop"),
    _s("fence", [R("sem", ".release"), R("restrict", ".sync_restrict::shared::cta"),
                 R("scope", ".cluster")], (), sm=90, ptx=(8, 6), fam="fence", cpu="nop"),
    _s("fence", [R("op", ".mbarrier_init"), R("sem", ".release"), R("scope", ".cluster")], (),
       sm=90, ptx=(8, 0), fam="fence", doc="fence.mbarrier_init.release.cluster",
       cpu="nop"),
    _s("fence.proxy", [R("kind", ".alias")], (), sm=70, ptx=(7, 5), fam="fence", cpu="nop"),
    # the async and tensormap proxy fences run: the interpreter's async-proxy sanitizer tracks them
    _s("fence.proxy", [R("kind", ".async"), G("space", ".global", ".shared::cta",
                                               ".shared::cluster")], (), sm=90, ptx=(8, 0),
       fam="fence", doc="fence.proxy.async{.global|.shared::cta|.shared::cluster}"),
    _s("fence.proxy", [R("kind", ".tensormap::generic"), R("sem", ".release"),
                       R("scope", *SCOPES)], (), sm=90, ptx=(8, 3), fam="fence"),
    _s("fence.proxy", [R("kind", ".tensormap::generic"), R("sem", ".acquire"),
                       R("scope", *SCOPES)], ("m", "i=128"), sm=90, ptx=(8, 3), fam="fence",
       doc="fence.proxy.tensormap::generic.acquire.scope [addr], 128"),
    _s("fence.proxy", [R("kind", ".async::generic"), R("sem", ".acquire"),
                       R("restrict", ".sync_restrict::shared::cluster"), R("scope", ".cluster")],
       (), sm=90, ptx=(8, 6), fam="fence", cpu="nop"),
    _s("fence.proxy", [R("kind", ".async::generic"), R("sem", ".release"),
                       R("restrict", ".sync_restrict::shared::cta"), R("scope", ".cluster")],
       (), sm=90, ptx=(8, 6), fam="fence"),
    # ---------------------------------------------------------------- scheduling / misc
    _s("nanosleep", [R("type", ".u32")], ("s:u32",), sm=70, ptx=(6, 3), fam="misc", cpu="nop"),
    _s("griddepcontrol.launch_dependents", [], (), sm=90, ptx=(7, 8), fam="misc", cpu="nop"),
    _s("griddepcontrol.wait", [], (), sm=90, ptx=(7, 8), fam="misc", cpu="nop"),
    _s("setmaxnreg", [R("action", ".inc", ".dec", order="pin"), R("sync", ".sync"),
                      R("aligned", ".aligned"), R("type", ".u32")], ("i=24..256/8",), sm=90, ptx=(8, 0), fam="misc",
       archs=("sm_90a", "sm_100a", "sm_101a", "sm_103a", "sm_110a", "sm_120a", "sm_121a"),
       doc="setmaxnreg.inc|dec.sync.aligned.u32 imm-reg-count (24..256, multiple of 8)"),
    _s("trap", [], (), ptx=(1, 0), fam="misc"),
    _s("brkpt", [], (), sm=11, ptx=(1, 0), fam="misc"),
    _s("pmevent", [], ("i=0..15",), ptx=(1, 4), fam="misc", cpu="nop"),
    _s("pmevent", [R("mask", ".mask")], ("i=0..65535",), ptx=(3, 0), fam="misc", cpu="nop"),
]
