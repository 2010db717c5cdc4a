"""Thread-block clusters: barrier.cluster arrive/wait, mapa and getctarank (distributed shared
memory addresses), clusterlaunchcontrol."""
from __future__ import annotations

from .common import SM100A_120A
from .model import Form, G, R


def _c(name, groups, ops, sm=90, ptx=(7, 8), doc="", archs=()):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="cluster", doc=doc,
                archs=archs)


FORMS = [
    _c("barrier.cluster.arrive", [G("sem", ".release", ".relaxed", gate={".release": (90, (8, 0)),
                                                                         ".relaxed": (90, (8, 0))}),
                                  G("aligned", ".aligned")], ()),
    _c("barrier.cluster.wait", [G("sem", ".acquire", gate={".acquire": (90, (8, 0))}),
                                G("aligned", ".aligned")], ()),
    _c("mapa", [G("space", ".shared::cluster"), R("type", ".u32", ".u64")],
       ("d:type", "s:type", "s:u32"), doc="mapa{.shared::cluster}.type d, a, cta_rank"),
    _c("getctarank", [G("space", ".shared::cluster"), R("type", ".u32", ".u64")],
       ("d:u32", "s:type"), doc="getctarank{.shared::cluster}.type d, a"),
    _c("clusterlaunchcontrol.try_cancel", [R("async", ".async", order="pin"),
                                           R("space", ".shared::cta"),
                                           R("completion", ".mbarrier::complete_tx::bytes"),
                                           G("multicast", ".multicast::cluster::all",
                                             gate={".multicast::cluster::all":
                                                   (SM100A_120A, (8, 6))}),
                                           R("type", ".b128")], ("m", "m"), sm=100, ptx=(8, 6),
       doc="clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
           "{.multicast::cluster::all}.b128 [addr], [mbar]"),
    _c("clusterlaunchcontrol.query_cancel", [R("query", ".is_canceled"), R("type", ".pred"),
                                             R("src", ".b128")], ("pd", "r:b128"), sm=100,
       ptx=(8, 6)),
    _c("clusterlaunchcontrol.query_cancel", [R("query", ".get_first_ctaid::x",
                                               ".get_first_ctaid::y", ".get_first_ctaid::z"),
                                             R("type", ".b32"),
                                             R("src", ".b128")], ("d:b32", "r:b128"), sm=100,
       ptx=(8, 6)),
    _c("clusterlaunchcontrol.query_cancel", [R("query", ".get_first_ctaid"), R("type", ".v4"),
                                             R("elem", ".b32"), R("src", ".b128")],
       ("v4:b32", "r:b128"), sm=100, ptx=(8, 6)),
]
