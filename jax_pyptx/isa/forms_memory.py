"""ld / st in every state space, vector width, cache operator, eviction priority and memory
order; ldu, st.async, st.bulk, prefetch/prefetchu, applypriority, discard, createpolicy, cvta
and isspacep.

The ld/st forms follow the PTX ISA's syntax and its restrictions (confirmed by ptxas):

- types: .b8-.b128, .u8-.u64, .s8-.s64, .f32, .f64 (no .f16/.bf16: load those as .b16/.b32);
  .b128 (sm_70, PTX 8.3) is never a vector element;
- vectors: .v2 of any type, .v4 of 8/16/32-bit types; 256-bit accesses (.v8 of 32-bit, .v4 of
  64-bit types: sm_100, PTX 8.8) only to .global (or a generic address), and only they take
  ``.L2::evict_first/last``;
- ``.L2::cache_hint``, ``.L2::64B/128B/256B`` and the ``.L1::*`` eviction priorities: .global
  (or generic) only;
- .relaxed/.acquire/.release and .volatile: .global and .shared (``.volatile.local``: PTX 9.1).
"""
from __future__ import annotations

from .common import SCOPES
from .model import Form, G, R

T8_32 = (".b8", ".b16", ".b32", ".u8", ".u16", ".u32", ".s8", ".s16", ".s32", ".f32")
T64 = (".b64", ".u64", ".s64", ".f64")
T32 = (".b32", ".u32", ".s32", ".f32")
LD_TYPES = T8_32 + T64 + (".b128",)
TYPE_GATE = {".b128": (70, (8, 3))}
SPACE_GATE = {".shared::cta": (20, (7, 8)), ".shared::cluster": (90, (7, 8)),
              ".param::entry": (20, (8, 3)), ".param::func": (20, (8, 3))}
LD_SPACES = (".const", ".global", ".local", ".param", ".param::entry", ".param::func", ".shared",
             ".shared::cta", ".shared::cluster")
ST_SPACES = (".global", ".local", ".param", ".param::func", ".shared", ".shared::cta",
             ".shared::cluster")
ORDERED = (".global", ".shared", ".shared::cta", ".shared::cluster")
L1 = (".L1::evict_normal", ".L1::evict_unchanged", ".L1::evict_first", ".L1::evict_last",
      ".L1::no_allocate")
L2 = (".L2::evict_first", ".L2::evict_last")
PREFETCH = (".L2::64B", ".L2::128B", ".L2::256B")
PREFETCH_GATE = {".L2::64B": (75, (7, 4)), ".L2::128B": (75, (7, 4)), ".L2::256B": (80, (7, 4))}
L1_GATE = {o: (70, (7, 4)) for o in L1}
SCOPE = R("scope", *SCOPES, gate={".cluster": (90, (7, 8))})
GLOBAL = G("space", ".global")
# (vector group or None, types, min sm, min PTX): scalar, 128-bit-or-less vectors, 256-bit
SHAPES = ((None, LD_TYPES, 0, (1, 0)), (R("vec", ".v2"), T8_32 + T64, 0, (1, 0)),
          (R("vec", ".v4"), T8_32, 0, (1, 0)))
WIDE = ((R("vec", ".v8"), T32, 100, (8, 8)), (R("vec", ".v4"), T64, 100, (8, 8)))


def _only(gate, *drop):
    return {k: v for k, v in gate.items() if k not in drop}


def _space(opts):
    return G("space", *opts, gate={k: v for k, v in SPACE_GATE.items() if k in opts})


def _forms(name, lead, space, tails, store, sm=20, ptx=(1, 0), doc="", hint=True,
           prefetch=False, shapes=SHAPES, fam="memory"):
    """One form per vector shape, each with and without ``.L2::cache_hint`` + policy
    (``hint="only"``: with it only)."""
    out = []
    for vec, types, vsm, vptx in shapes:
        for with_hint in {True: (False, True), False: (False,), "only": (True,)}[hint]:
            groups = list(lead) + ([space] if space is not None else []) + list(tails)
            if with_hint:
                groups.append(R("hint", ".L2::cache_hint"))
            if prefetch and not store:
                groups.append(G("prefetch", *PREFETCH, gate=PREFETCH_GATE))
            if vec is not None:
                groups.append(vec)
            groups.append(R("type", *types, gate={k: v for k, v in TYPE_GATE.items()
                                                  if k in types}))
            # the scalar may be written {x} (one-element vector; ptxas takes it, Triton emits it)
            data = "v:type" if vec is not None else ("s1:type" if store else "d1:type")
            ops = ("m", data) if store else (data, "m")
            if with_hint:
                ops += ("r:b64",)
            out.append(Form(name, tuple(groups), ops,
                            min_sm=max(sm, vsm, 80 if with_hint else 0),
                            min_ptx=max(ptx, vptx, (7, 4) if with_hint else (1, 0)), family=fam,
                            relaxed=True, doc=doc + (" + cache-policy" if with_hint else "")))
    return out


FORMS = []
for store, name, spaces in ((False, "ld", LD_SPACES), (True, "st", ST_SPACES)):
    order = ".release" if store else ".acquire"
    cop = G("cop", *((".wb", ".cg", ".cs", ".wt") if store else (".ca", ".cg", ".cs", ".lu",
                                                                 ".cv")))
    weak = G("weak", ".weak")
    sem = [R("sem", ".relaxed", order), SCOPE]
    vol_spaces = ORDERED + (".local",)
    FORMS += _forms(name, [weak], _space(spaces), [cop], store, hint=False,
                    doc=f"{name}{{.weak}}{{.ss}}{{.cop}}{{.vec}}.type")
    FORMS += _forms(name, [weak], GLOBAL, [cop], store, prefetch=True,
                    hint="only" if store else True,   # without: the form above
                    doc=f"{name}{{.weak}}{{.global}}{{.cop}}{{.L2::cache_hint}}{{.L2::NB}}.type")
    FORMS += _forms(name, [weak], GLOBAL, [R("l1", *L1, gate=L1_GATE)], store, prefetch=True,
                    doc=f"{name}{{.weak}}{{.global}}.L1::evict_*{{.L2::cache_hint}}.type")
    FORMS += _forms(name, [weak], GLOBAL, [G("l1", *L1), G("l2", *L2)], store, prefetch=True,
                    shapes=WIDE, doc=f"{name}{{.weak}}{{.global}}{{.L1::*}}{{.L2::evict_*}} "
                                     f"(256-bit)")
    FORMS += _forms(name, [R("sem", ".volatile")],
                    G("space", *vol_spaces, gate={".local": (20, (9, 1)),
                                                  ".shared::cta": (20, (7, 8)),
                                                  ".shared::cluster": (90, (7, 8))}),
                    [], store, hint=False, doc=f"{name}.volatile{{.ss}}{{.vec}}.type")
    if not store:
        FORMS += _forms(name, [R("sem", ".volatile")], GLOBAL, [], store, hint=False,
                        prefetch=True, doc="ld.volatile{.global}.L2::NB{.vec}.type")
    FORMS += _forms(name, sem, _space(ORDERED), [], store, sm=70, ptx=(6, 0), hint=False,
                    doc=f"{name}.relaxed|{order[1:]}.scope{{.ss}}{{.vec}}.type")
    FORMS += _forms(name, sem, GLOBAL, [G("l1", *L1, gate=L1_GATE)], store, sm=70, ptx=(6, 0),
                    prefetch=True, doc=f"{name}.relaxed|{order[1:]}.scope{{.global}}"
                                       f"{{.L1::*}}{{.L2::cache_hint}}{{.L2::NB}}.type")
    FORMS += _forms(name, sem, GLOBAL, [G("l1", *L1), G("l2", *L2)], store, sm=70,
                    ptx=(6, 0), prefetch=True, shapes=WIDE,
                    doc=f"{name}.relaxed|{order[1:]}.scope{{.global}}... (256-bit)")
    FORMS.append(Form(name, (R("mmio", ".mmio"), R("sem", ".relaxed"), R("scope", ".sys"),
                             G("space", ".global"), R("type", *T8_32, *T64)),
                      ("m", "s1:type") if store else ("d1:type", "m"), min_sm=70, min_ptx=(8, 2),
                      family="memory", relaxed=True, doc=f"{name}.mmio.relaxed.sys"))
# non-coherent global loads
NC = [R("space", ".global"), G("cop", ".ca", ".cg", ".cs"), R("nc", ".nc")]
FORMS += _forms("ld", NC, None, [], False, sm=32, ptx=(3, 1), prefetch=True,
                doc="ld.global{.cop}.nc{.L2::cache_hint}{.L2::NB}{.vec}.type")
FORMS += _forms("ld", [R("space", ".global"), R("nc", ".nc")], None,
                [R("l1", *L1, gate=L1_GATE)], False, sm=32, ptx=(3, 1), prefetch=True,
                doc="ld.global.nc.L1::evict_*{.L2::cache_hint}{.L2::NB}{.vec}.type")
FORMS += _forms("ld", [R("space", ".global"), R("nc", ".nc")], None,
                [G("l1", *L1), G("l2", *L2)], False, sm=32, ptx=(3, 1), prefetch=True,
                shapes=WIDE, doc="ld.global.nc{.L1::*}{.L2::evict_*} (256-bit)")
FORMS += [
    Form("ldu", (G("space", ".global"), R("type", *LD_TYPES, gate=TYPE_GATE)), ("d1:type", "m"),
         family="memory", relaxed=True),
    Form("ldu", (G("space", ".global"), R("vec", ".v2"), R("type", *T8_32, *T64)),
         ("v:type", "m"), family="memory", relaxed=True),
    Form("ldu", (G("space", ".global"), R("vec", ".v4"), R("type", *T8_32)),
         ("v:type", "m"), family="memory", relaxed=True, doc="ldu.global.v4 (at most 128 bits)"),
    # the space needs the completion mechanism (ptxas: ".shared::cluster requires modifier
    # .completion_mechanism")
    Form("st.async", (G("weak", ".weak"), R("space", ".shared::cluster"),
                      R("completion", ".mbarrier::complete_tx::bytes"), G("vec", ".v2", ".v4"),
                      R("type", ".b32", ".b64", ".u32", ".u64", ".s32", ".s64", ".f32", ".f64")),
         ("m", "s1:type", "m"), min_sm=90, min_ptx=(8, 1), family="memory",
         doc="st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes.type [a], b, [mbar]"),
    Form("st.async", (G("weak", ".weak"), R("space", ".shared::cluster"),
                      R("completion", ".mbarrier::complete_tx::bytes"), R("vec", ".v2", ".v4"),
                      R("type", ".b32", ".b64", ".u32", ".u64", ".s32", ".s64", ".f32", ".f64")),
         ("m", "v:type", "m"), min_sm=90, min_ptx=(8, 1), family="memory"),
    Form("st.bulk", (G("weak", ".weak"), G("space", ".shared::cta")), ("m", "s:b64=0../8", "i=0"),
         min_sm=100, min_ptx=(8, 6), family="memory", doc="st.bulk [a], size, initval (0)"),
    # ---------------------------------------------------------------- prefetch and L2 control
    Form("prefetch", (G("space", ".global", ".local"), R("level", ".L1", ".L2")), ("m",),
         min_ptx=(2, 0), family="memory", cpu="nop"),
    Form("prefetch", (R("space", ".global"), R("level", ".L2::evict_last", ".L2::evict_normal")),
         ("m",), min_sm=80, min_ptx=(7, 4), family="memory", cpu="nop"),
    Form("prefetch", (G("space", ".const", ".param"), R("tensormap", ".tensormap")), ("m",),
         min_sm=90, min_ptx=(8, 0), family="memory", doc="prefetch{.const|.param}.tensormap [a]",
         cpu="nop"),
    Form("prefetchu", (R("level", ".L1"),), ("m",), min_ptx=(2, 0), family="memory", cpu="nop"),
    Form("applypriority", (G("space", ".global"), R("level", ".L2::evict_normal")),
         ("m", "i=128"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="applypriority.global.L2::evict_normal [a], 128", cpu="nop"),
    Form("discard", (G("space", ".global"), R("level", ".L2")), ("m", "i=128"), min_sm=80,
         min_ptx=(7, 4), family="memory", doc="discard.global.L2 [a], 128", cpu="nop"),
    Form("createpolicy", (R("mode", ".range", order="pin"), G("space", ".global"),
                          R("primary", ".L2::evict_last", ".L2::evict_normal", ".L2::evict_first",
                            ".L2::evict_unchanged"),
                          G("secondary", ".L2::evict_first", ".L2::evict_unchanged"),
                          R("type", ".b64")),
         ("d:b64", "m", "s:u32", "s:u32"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="createpolicy.range.global.primary{.secondary}.b64 policy, [a], primary, total"),
    Form("createpolicy", (R("mode", ".fractional", order="pin"),
                          R("primary", ".L2::evict_last", ".L2::evict_normal", ".L2::evict_first",
                            ".L2::evict_unchanged"),
                          G("secondary", ".L2::evict_first", ".L2::evict_unchanged"),
                          R("type", ".b64")),
         ("d:b64", "s:f32?"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="createpolicy.fractional.primary{.secondary}.b64 policy{, fraction}"),
    Form("createpolicy", (R("mode", ".cvt", order="pin"), R("level", ".L2"), R("type", ".b64")),
         ("d:b64", "s:b64"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="createpolicy.cvt.L2.b64 policy, access-property"),
    # ---------------------------------------------------------------- stack
    Form("alloca", (R("type", ".u32", ".u64"),), ("d:type", "s:type", "i?"), min_sm=52,
         min_ptx=(7, 3), family="memory", doc="alloca.type ptr, size{, immAlign} (no state "
                                               "space: ptxas 'No state space qualifier expected')"),
    Form("stacksave", (R("type", ".u32", ".u64"),), ("d:type",), min_sm=52, min_ptx=(7, 3),
         family="memory"),
    Form("stackrestore", (R("type", ".u32", ".u64"),), ("r:type",), min_sm=52, min_ptx=(7, 3),
         family="memory"),
    # ---------------------------------------------------------------- address spaces
    Form("cvta", (G("to", ".to", order="pin"), R("space", ".global", ".shared", ".shared::cta",
                                    ".shared::cluster", ".local", ".const", ".param",
                                    ".param::entry",
                                    gate={**_only(SPACE_GATE, ".param::func"),
                                          ".param": (70, (7, 7))}),
                  R("type", ".u64")),
         ("d:type", "s:type"), family="memory",
         doc="cvta{.to}.space.u64 (.u32 generic addresses need .address_size 32, which ptxas "
             "rejects from sm_90)"),
    Form("isspacep", (R("space", ".global", ".shared", ".shared::cta", ".shared::cluster",
                           ".local", ".const", ".param", ".param::entry",
                           gate={**_only(SPACE_GATE, ".param::func"), ".const": (20, (3, 1)),
                                 ".param": (70, (7, 7))}),),
         ("pd", "s:u64"), min_ptx=(2, 0), family="memory"),
]
