"""Warp-level: shfl.sync (up/down/bfly/idx), vote.sync, match.sync, redux.sync, elect.sync,
activemask."""
from __future__ import annotations

from .common import SM100A
from .model import Form, G, R


def _w(name, groups, ops, sm=70, ptx=(6, 0), doc="", archs=()):
    return Form(name, tuple(groups), ops, min_sm=sm, min_ptx=ptx, family="warp", doc=doc,
                archs=archs)


FORMS = [
    _w("shfl.sync", [R("mode", ".up", ".down", ".bfly", ".idx"), R("type", ".b32")],
       ("dp:b32", "s:b32", "s:u32", "s:u32", "s:b32"), sm=30,
       doc="shfl.sync.mode.b32 d[|p], a, b, c, membermask (no _ sink: ptxas 'Result discard "
           "mode is not allowed')"),
    _w("vote.sync", [R("mode", ".all", ".any", ".uni"), R("type", ".pred")],
       ("pd", "p", "s:b32"), sm=30),
    _w("vote.sync", [R("mode", ".ballot"), R("type", ".b32")], ("d:b32", "p", "s:b32"), sm=30),
    _w("match", [R("mode", ".any"), R("sync", ".sync"), R("type", ".b32", ".b64")],
       ("d:b32", "s:type", "s:b32")),
    _w("match", [R("mode", ".all"), R("sync", ".sync"), R("type", ".b32", ".b64")],
       ("dp:b32", "s:type", "s:b32"), doc="match.all.sync.type d[|p], a, membermask"),
    _w("redux.sync", [R("op", ".add", ".min", ".max"), R("type", ".u32", ".s32")],
       ("d:type", "s:type", "s:b32"), sm=80, ptx=(7, 0)),
    _w("redux.sync", [R("op", ".and", ".or", ".xor"), R("type", ".b32")],
       ("d:type", "s:type", "s:b32"), sm=80, ptx=(7, 0)),
    _w("redux.sync", [R("op", ".min", ".max"), G("abs", ".abs"), G("nan", ".NaN"),
                      R("type", ".f32")], ("d:type", "s:type", "s:b32"), sm=100, ptx=(8, 6),
       archs=SM100A, doc="redux.sync.min|max{.abs}{.NaN}.f32"),
    _w("elect.sync", [], ("d|p:b32", "s:b32"), sm=90, ptx=(8, 0),
       doc="elect.sync d|p, membermask (d may be _; a lone d or p is not allowed)"),
    _w("activemask", [R("type", ".b32")], ("d:b32",), sm=30, ptx=(6, 2)),
]
