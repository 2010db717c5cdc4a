"""Tensor-map edits in memory: tensormap.replace (one field of a 1024-bit tensor map in global
or shared::cta memory) and tensormap.cp_fenceproxy (copy a tensor map from shared::cta to
global memory and fence it for the tensormap proxy). PTX ISA 8.3.

ptxas (13.5) checks: tensormap.replace needs an arch-specific target (sm_90a, sm_100a, ...;
"not supported on .target 'sm_90'"); ``.global_address`` and ``.global_stride`` are .b64, the
other fields .b32 ("Illegal modifier '.rank' ... with type '.b64'"); ``ord`` and the new values
of the enumerated fields (elemtype, swizzle_mode, ...) are immediates ("Integer constant
expression expected"); ``.swizzle_atomicity`` is PTX ISA 8.6 and sm_100a or later.
tensormap.cp_fenceproxy runs on any sm_90 target, its size is the immediate 128.
"""
from __future__ import annotations

from .common import SCOPES, SM100A_120A, SM90A
from .model import Form, G, R

ARCHS = SM90A + SM100A_120A
SS = G("space", ".global", ".shared::cta")
MODE = R("mode", ".tile")
B1024 = R("size", ".b1024")
# the enumerated fields' values (ptxas 13.5 on sm_100a: elemtype 0..15, 0..12 before sm_100;
# the rest as the ISA's tensor-map tables) and the dimension ordinal of field2 (0..4)
FIELD3 = ("i=field{.elemtype:0..15;.interleave_layout:0..2;.swizzle_mode:0..3;.fill_mode:0..1;"
          ".swizzle_atomicity:0..3}")


def _tm(field, type_, ops, doc):
    return Form("tensormap.replace", (MODE, field, SS, B1024, R("type", type_)), ops,
                min_sm=90, archs=ARCHS, min_ptx=(8, 3), family="tensormap", doc=doc)


FORMS = [
    _tm(R("field", ".global_address"), ".b64", ("m", "s:type"),
        "tensormap.replace.tile.global_address{.ss}.b1024.b64 [addr], new_val"),
    _tm(R("field", ".rank"), ".b32", ("m", "s:type"),
        "tensormap.replace.tile.rank{.ss}.b1024.b32 [addr], new_val"),
    _tm(R("field", ".box_dim", ".global_dim", ".element_stride"), ".b32", ("m", "i=0..4", "s:type"),
        "tensormap.replace.tile.field2{.ss}.b1024.b32 [addr], ord, new_val"),
    _tm(R("field", ".global_stride"), ".b64", ("m", "i=0..4", "s:type"),
        "tensormap.replace.tile.global_stride{.ss}.b1024.b64 [addr], ord, new_val"),
    _tm(R("field", ".elemtype", ".interleave_layout", ".swizzle_mode", ".fill_mode",
          ".swizzle_atomicity", gate={".swizzle_atomicity": (SM100A_120A, (8, 6))}),
        ".b32", ("m", FIELD3), "tensormap.replace.tile.field3{.ss}.b1024.b32 [addr], imm"),
    Form("tensormap.cp_fenceproxy", (R("dst", ".global"), R("src", ".shared::cta"),
                                     R("proxy", ".tensormap::generic"), R("sem", ".release"),
                                     R("scope", *SCOPES), R("sync", ".sync"),
                                     R("aligned", ".aligned")),
         ("m", "m", "i=128"), min_sm=90, min_ptx=(8, 3), family="tensormap",
         doc="tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope"
             ".sync.aligned [dst], [src], 128"),
]
