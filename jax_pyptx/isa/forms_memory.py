"""ld / st in every state space, vector width, cache operator, eviction priority and memory
order; ldu, st.async, st.bulk, prefetch/prefetchu, applypriority, discard, createpolicy, cvta
and isspacep."""
from __future__ import annotations

from .common import SCOPES
from .model import Form, G, R

LD_TYPES = (".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64", ".s8",
            ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64")
TYPE_GATE = {".b128": (70, (8, 3))}
SPACE_GATE = {".shared::cta": (20, (7, 8)), ".shared::cluster": (90, (7, 8)),
              ".param::entry": (20, (8, 3)), ".param::func": (20, (8, 3))}
LD_SPACES = (".const", ".global", ".local", ".param", ".param::entry", ".param::func", ".shared",
             ".shared::cta", ".shared::cluster")
ST_SPACES = (".global", ".local", ".param", ".param::func", ".shared", ".shared::cta",
             ".shared::cluster")
L1 = (".L1::evict_normal", ".L1::evict_unchanged", ".L1::evict_first", ".L1::evict_last",
      ".L1::no_allocate")
L2 = (".L2::evict_first", ".L2::evict_last")  # 256-bit accesses only (v8.b32 / v4.b64)
PREFETCH = (".L2::64B", ".L2::128B", ".L2::256B")
PREFETCH_GATE = {".L2::64B": (75, (7, 4)), ".L2::128B": (75, (7, 4)), ".L2::256B": (80, (7, 4))}
VEC_GATE = {".v8": (100, (8, 8))}


def _space(opts):
    return G("space", *opts, gate={k: v for k, v in SPACE_GATE.items() if k in opts})


def _cache_groups(kind, store):
    if kind == "cop":
        return [G("cop", *((".wb", ".cg", ".cs", ".wt") if store else
                           (".ca", ".cg", ".cs", ".lu", ".cv")))]
    return [G("l1", *L1), G("l2", *L2)]


def _mem_forms(name, lead, space_opts, tails, store, sm=20, ptx=(1, 0), doc="", vec8=True,
               hint=True, prefetch=True, fam="memory"):
    """Scalar and vector forms, each with and without ``.L2::cache_hint`` + policy operand."""
    out = []
    vecs = (".v2", ".v4", ".v8") if vec8 else (".v2", ".v4")
    for vector in (False, True):
        for with_hint in ((False, True) if hint else (False,)):
            groups = list(lead) + ([_space(space_opts)] if space_opts else []) + list(tails)
            if with_hint:
                groups.append(R("hint", ".L2::cache_hint"))
            if prefetch and not store:
                groups.append(G("prefetch", *PREFETCH, gate=PREFETCH_GATE))
            if vector:
                groups.append(R("vec", *vecs, gate=VEC_GATE))
            groups.append(R("type", *LD_TYPES, gate=TYPE_GATE))
            data = "v:type" if vector else ("s:type" if store else "d:type")
            ops = ("m", data) if store else (data, "m")
            if with_hint:
                ops += ("r:b64",)
            out.append(Form(name, tuple(groups), ops, min_sm=max(sm, 80 if with_hint else 0),
                            min_ptx=max(ptx, (7, 4)) if with_hint else ptx, family=fam,
                            relaxed=True, doc=doc + (" + cache-policy" if with_hint else "")))
    return out


_EVICT_GATE = {**{o: (70, (7, 4)) for o in L1}, **{o: (100, (8, 8)) for o in L2}}

FORMS = []
for store, name, spaces in ((False, "ld", LD_SPACES), (True, "st", ST_SPACES)):
    order = ".release" if store else ".acquire"
    FORMS += _mem_forms(name, [G("weak", ".weak")], spaces, _cache_groups("cop", store), store,
                        doc=f"{name}{{.weak}}{{.ss}}{{.cop}}{{.vec}}.type")
    FORMS += [
        f for f in _mem_forms(name, [G("weak", ".weak")], spaces, [
            G("l1", *L1, gate=_EVICT_GATE), G("l2", *L2, gate=_EVICT_GATE)], store,
            doc=f"{name}{{.weak}}{{.ss}}{{.L1::evict_*}}{{.L2::evict_*}}{{.vec}}.type")
    ]
    FORMS += _mem_forms(name, [R("sem", ".volatile")], spaces, [], store, hint=False,
                        doc=f"{name}.volatile{{.ss}}{{.vec}}.type")
    FORMS += _mem_forms(name, [R("sem", ".relaxed", order), R("scope", *SCOPES,
                                                                gate={".cluster": (90, (7, 8))})],
                        spaces, [G("l1", *L1, gate=_EVICT_GATE), G("l2", *L2, gate=_EVICT_GATE)],
                        store, sm=70, ptx=(6, 0),
                        doc=f"{name}.relaxed|{order[1:]}.scope{{.ss}}{{...}}{{.vec}}.type")
    FORMS.append(Form(name, (R("mmio", ".mmio"), R("sem", ".relaxed"), R("scope", ".sys"),
                             G("space", ".global"), R("type", *LD_TYPES)),
                      ("m", "s:type") if store else ("d:type", "m"), min_sm=70, min_ptx=(8, 2),
                      family="memory", relaxed=True, doc=f"{name}.mmio.relaxed.sys"))
# non-coherent global loads
FORMS += _mem_forms("ld", [R("space", ".global"), G("cop", ".ca", ".cg", ".cs"), R("nc", ".nc")],
                    None, [], False, sm=32, ptx=(3, 1), doc="ld.global{.cop}.nc{.vec}.type")
FORMS += _mem_forms("ld", [R("space", ".global"), R("nc", ".nc")], None,
                    [G("l1", *L1, gate=_EVICT_GATE), G("l2", *L2, gate=_EVICT_GATE)], False,
                    sm=32, ptx=(3, 1), doc="ld.global.nc{.L1::evict_*}{.L2::evict_*}{.vec}.type")
FORMS += [
    Form("ldu", (G("space", ".global"), R("type", *LD_TYPES)), ("d:type", "m"), family="memory",
         relaxed=True),
    Form("ldu", (G("space", ".global"), R("vec", ".v2", ".v4"), R("type", *LD_TYPES)),
         ("v:type", "m"), family="memory", relaxed=True),
    Form("st.async", (G("weak", ".weak"), G("space", ".shared::cluster"),
                      G("completion", ".mbarrier::complete_tx::bytes"), G("vec", ".v2", ".v4"),
                      R("type", ".b32", ".b64", ".u32", ".u64", ".s32", ".s64", ".f32", ".f64")),
         ("m", "s:type", "m"), min_sm=90, min_ptx=(8, 1), family="memory",
         doc="st.async{.weak}{.shared::cluster}{.mbarrier::complete_tx::bytes}.type [a], b, [mbar]"),
    Form("st.async", (G("weak", ".weak"), G("space", ".shared::cluster"),
                      G("completion", ".mbarrier::complete_tx::bytes"), R("vec", ".v2", ".v4"),
                      R("type", ".b32", ".b64", ".u32", ".u64", ".s32", ".s64", ".f32", ".f64")),
         ("m", "v:type", "m"), min_sm=90, min_ptx=(8, 1), family="memory"),
    Form("st.bulk", (G("weak", ".weak"), G("space", ".shared::cta")), ("m", "r:b64", "i"),
         min_sm=100, min_ptx=(8, 6), family="memory", doc="st.bulk [a], size, initval (0)"),
    # ---------------------------------------------------------------- prefetch and L2 control
    Form("prefetch", (G("space", ".global", ".local"), R("level", ".L1", ".L2")), ("m",),
         min_ptx=(2, 0), family="memory"),
    Form("prefetch", (R("space", ".global"), R("level", ".L2::evict_last", ".L2::evict_normal")),
         ("m",), min_sm=80, min_ptx=(7, 4), family="memory"),
    Form("prefetch", (G("space", ".const", ".param"), R("tensormap", ".tensormap")), ("m",),
         min_sm=90, min_ptx=(8, 0), family="memory", doc="prefetch{.const|.param}.tensormap [a]"),
    Form("prefetchu", (R("level", ".L1"),), ("m",), min_ptx=(2, 0), family="memory"),
    Form("applypriority", (G("space", ".global"), R("level", ".L2::evict_normal")),
         ("m", "i"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="applypriority.global.L2::evict_normal [a], 128"),
    Form("discard", (G("space", ".global"), R("level", ".L2")), ("m", "i"), min_sm=80,
         min_ptx=(7, 4), family="memory", doc="discard.global.L2 [a], 128"),
    Form("createpolicy", (R("mode", ".range"), G("space", ".global"),
                          R("primary", ".L2::evict_last", ".L2::evict_normal", ".L2::evict_first",
                            ".L2::evict_unchanged"),
                          G("secondary", ".L2::evict_first", ".L2::evict_unchanged"),
                          R("type", ".b64")),
         ("d:b64", "m", "s:u32", "s:u32"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="createpolicy.range.global.primary{.secondary}.b64 policy, [a], primary, total"),
    Form("createpolicy", (R("mode", ".fractional"),
                          R("primary", ".L2::evict_last", ".L2::evict_normal", ".L2::evict_first",
                            ".L2::evict_unchanged"),
                          G("secondary", ".L2::evict_first", ".L2::evict_unchanged"),
                          R("type", ".b64")),
         ("d:b64", "s:f32?"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="createpolicy.fractional.primary{.secondary}.b64 policy{, fraction}"),
    Form("createpolicy", (R("mode", ".cvt"), R("level", ".L2"), R("type", ".b64")),
         ("d:b64", "s:b64"), min_sm=80, min_ptx=(7, 4), family="memory",
         doc="createpolicy.cvt.L2.b64 policy, access-property"),
    # ---------------------------------------------------------------- address spaces
    Form("cvta", (G("to", ".to"), R("space", ".global", ".shared", ".shared::cta",
                                    ".shared::cluster", ".local", ".const", ".param",
                                    ".param::entry",
                                    gate={**SPACE_GATE, ".param": (70, (7, 7))}),
                  R("type", ".u32", ".u64")),
         ("d:type", "s:type"), family="memory"),
    Form("isspacep", (R("space", ".global", ".shared", ".shared::cta", ".shared::cluster",
                           ".local", ".const", ".param", ".param::entry",
                           gate={**SPACE_GATE, ".const": (20, (3, 1)), ".param": (70, (7, 7))}),),
         ("pd", "s:u64"), min_ptx=(2, 0), family="memory"),
]
