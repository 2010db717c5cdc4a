"""Core forms the DSL's operators and control flow emit: data movement, integer and float
arithmetic, comparisons, branches. The instruction families add the rest of the ISA."""
from __future__ import annotations

from .model import Form, G, R

U = (".u16", ".u32", ".u64")
S = (".s16", ".s32", ".s64")
INT = U + S
BITS = (".b16", ".b32", ".b64")
F = (".f32", ".f64")
RND = (".rn", ".rz", ".rm", ".rp")
RNDI = (".rni", ".rzi", ".rmi", ".rpi")
CMP_I = (".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs")
CMP_F = (".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".equ", ".neu", ".ltu", ".leu", ".gtu",
         ".geu", ".num", ".nan")
BOOL = (".and", ".or", ".xor")
ALL_SCALAR = (".pred", ".b8", ".b16", ".b32", ".b64", ".u8", ".u16", ".u32", ".u64", ".s8",
              ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64")
CVT_TYPES = (".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64", ".bf16", ".f16",
             ".f32", ".f64")

FORMS = [
    # ---------------------------------------------------------------- data movement
    Form("mov", (R("type", ".pred", ".b16", ".b32", ".b64", ".u16", ".u32", ".u64", ".s16",
                   ".s32", ".s64", ".f16", ".bf16", ".f32", ".f64", ".b128"),),
         ("d:type", "s:type"), family="data", doc="mov.type d, a"),
    Form("mov", (R("type", ".b32", ".b64", ".b128"),), ("d:type", "v"), family="data",
         doc="mov.b64 d, {a, b} (pack)"),
    Form("mov", (R("type", ".b32", ".b64", ".b128"),), ("v", "r:type"), family="data",
         doc="mov.b64 {a, b}, d (unpack)"),
    Form("cvta", (G("to", ".to"), R("space", ".global", ".shared", ".shared::cta",
                                    ".shared::cluster", ".local", ".const", ".param"),
                  R("type", ".u32", ".u64")),
         ("d:type", "s:type"), family="data"),
    Form("cvt", (G("frnd", *RND), G("irnd", *RNDI), G("ftz", ".ftz"), G("sat", ".sat"),
                 R("dtype", *CVT_TYPES), R("atype", *CVT_TYPES)),
         ("d:dtype", "s:atype"), family="cvt", relaxed=True),
    # ---------------------------------------------------------------- integer arithmetic
    Form("add", (R("type", *INT),), ("d:type", "s:type", "s:type"), family="int"),
    Form("add", (R("sat", ".sat"), R("type", ".s32")), ("d:type", "s:type", "s:type"),
         family="int"),
    Form("sub", (R("type", *INT),), ("d:type", "s:type", "s:type"), family="int"),
    Form("sub", (R("sat", ".sat"), R("type", ".s32")), ("d:type", "s:type", "s:type"),
         family="int"),
    Form("mul", (R("mode", ".lo", ".hi"), R("type", *INT)), ("d:type", "s:type", "s:type"),
         family="int"),
    Form("mul", (R("mode", ".wide"), R("type", ".u16", ".u32", ".s16", ".s32")),
         ("d", "s:type", "s:type"), family="int", doc="d is twice as wide"),
    Form("mad", (R("mode", ".lo", ".hi"), R("type", *INT)),
         ("d:type", "s:type", "s:type", "s:type"), family="int"),
    Form("mad", (R("mode", ".wide"), R("type", ".u16", ".u32", ".s16", ".s32")),
         ("d", "s:type", "s:type", "s"), family="int"),
    Form("div", (R("type", *INT),), ("d:type", "s:type", "s:type"), family="int"),
    Form("rem", (R("type", *INT),), ("d:type", "s:type", "s:type"), family="int"),
    Form("neg", (R("type", *S),), ("d:type", "s:type"), family="int"),
    Form("abs", (R("type", *S),), ("d:type", "s:type"), family="int"),
    Form("min", (R("type", *INT),), ("d:type", "s:type", "s:type"), family="int"),
    Form("max", (R("type", *INT),), ("d:type", "s:type", "s:type"), family="int"),
    # ---------------------------------------------------------------- logic and shifts
    Form("and", (R("type", ".pred", *BITS),), ("d:type", "s:type", "s:type"), family="logic"),
    Form("or", (R("type", ".pred", *BITS),), ("d:type", "s:type", "s:type"), family="logic"),
    Form("xor", (R("type", ".pred", *BITS),), ("d:type", "s:type", "s:type"), family="logic"),
    Form("not", (R("type", ".pred", *BITS),), ("d:type", "s:type"), family="logic"),
    Form("shl", (R("type", *BITS),), ("d:type", "s:type", "s:u32"), family="logic"),
    Form("shr", (R("type", *BITS, *U, *S),), ("d:type", "s:type", "s:u32"), family="logic"),
    # ---------------------------------------------------------------- floating point
    Form("add", (G("rnd", *RND), G("ftz", ".ftz"), G("sat", ".sat"), R("type", ".f32")),
         ("d:type", "s:type", "s:type"), family="float"),
    Form("add", (G("rnd", *RND), R("type", ".f64")), ("d:type", "s:type", "s:type"),
         family="float"),
    Form("sub", (G("rnd", *RND), G("ftz", ".ftz"), G("sat", ".sat"), R("type", ".f32")),
         ("d:type", "s:type", "s:type"), family="float"),
    Form("sub", (G("rnd", *RND), R("type", ".f64")), ("d:type", "s:type", "s:type"),
         family="float"),
    Form("mul", (G("rnd", *RND), G("ftz", ".ftz"), G("sat", ".sat"), R("type", ".f32")),
         ("d:type", "s:type", "s:type"), family="float"),
    Form("mul", (G("rnd", *RND), R("type", ".f64")), ("d:type", "s:type", "s:type"),
         family="float"),
    Form("fma", (R("rnd", *RND), G("ftz", ".ftz"), G("sat", ".sat"), R("type", ".f32")),
         ("d:type", "s:type", "s:type", "s:type"), family="float"),
    Form("fma", (R("rnd", *RND), R("type", ".f64")), ("d:type", "s:type", "s:type", "s:type"),
         family="float"),
    Form("div", (R("mode", ".approx", ".full"), G("ftz", ".ftz"), R("type", ".f32")),
         ("d:type", "s:type", "s:type"), family="float"),
    Form("div", (R("rnd", *RND), G("ftz", ".ftz"), R("type", ".f32")),
         ("d:type", "s:type", "s:type"), family="float"),
    Form("div", (R("rnd", *RND), R("type", ".f64")), ("d:type", "s:type", "s:type"),
         family="float"),
    Form("neg", (G("ftz", ".ftz"), R("type", *F)), ("d:type", "s:type"), family="float"),
    Form("abs", (G("ftz", ".ftz"), R("type", *F)), ("d:type", "s:type"), family="float"),
    Form("min", (G("ftz", ".ftz"), G("nan", ".NaN"), R("type", *F)),
         ("d:type", "s:type", "s:type"), family="float"),
    Form("max", (G("ftz", ".ftz"), G("nan", ".NaN"), R("type", *F)),
         ("d:type", "s:type", "s:type"), family="float"),
    Form("rsqrt", (R("mode", ".approx"), G("ftz", ".ftz"), R("type", *F)), ("d:type", "s:type"),
         family="float"),
    Form("sqrt", (R("mode", ".approx", *RND), G("ftz", ".ftz"), R("type", ".f32")),
         ("d:type", "s:type"), family="float"),
    Form("rcp", (R("mode", ".approx", *RND), G("ftz", ".ftz"), R("type", ".f32")),
         ("d:type", "s:type"), family="float"),
    Form("ex2", (R("mode", ".approx"), G("ftz", ".ftz"), R("type", ".f32")), ("d:type", "s:type"),
         family="float"),
    # ---------------------------------------------------------------- comparison / select
    Form("setp", (R("cmp", *CMP_I), R("type", *INT, *BITS)),
         ("pd", "s:type", "s:type"), family="compare"),
    Form("setp", (R("cmp", *CMP_I), R("bool", *BOOL), R("type", *INT, *BITS)),
         ("pd", "s:type", "s:type", "p"), family="compare"),
    Form("setp", (R("cmp", *CMP_F), G("ftz", ".ftz"), R("type", *F)),
         ("pd", "s:type", "s:type"), family="compare"),
    Form("setp", (R("cmp", *CMP_F), R("bool", *BOOL), G("ftz", ".ftz"), R("type", *F)),
         ("pd", "s:type", "s:type", "p"), family="compare"),
    Form("selp", (R("type", *BITS, *INT, *F),), ("d:type", "s:type", "s:type", "p"),
         family="compare"),
    # ---------------------------------------------------------------- memory
    Form("ld", (G("weak", ".weak", ".volatile"),
                G("space", ".global", ".shared", ".shared::cta", ".shared::cluster", ".local",
                  ".const", ".param", ".param::entry", ".param::func"),
                G("vec", ".v2", ".v4"), R("type", *ALL_SCALAR[1:])),
         ("d:type", "m"), family="memory", relaxed=True),
    Form("ld", (G("weak", ".weak", ".volatile"),
                G("space", ".global", ".shared", ".shared::cta", ".shared::cluster", ".local",
                  ".const", ".param"),
                R("vec", ".v2", ".v4"), R("type", *ALL_SCALAR[1:])),
         ("v:type", "m"), family="memory", relaxed=True),
    Form("st", (G("weak", ".weak", ".volatile"),
                G("space", ".global", ".shared", ".shared::cta", ".shared::cluster", ".local",
                  ".param", ".param::func"),
                G("vec", ".v2", ".v4"), R("type", *ALL_SCALAR[1:])),
         ("m", "s:type"), family="memory", relaxed=True),
    Form("st", (G("weak", ".weak", ".volatile"),
                G("space", ".global", ".shared", ".shared::cta", ".shared::cluster", ".local",
                  ".param"),
                R("vec", ".v2", ".v4"), R("type", *ALL_SCALAR[1:])),
         ("m", "v:type"), family="memory", relaxed=True),
    # ---------------------------------------------------------------- control
    Form("bra", (G("uni", ".uni"),), ("l",), family="control"),
    Form("ret", (G("uni", ".uni"),), (), family="control"),
    Form("exit", (), (), family="control"),
    Form("bar.sync", (), ("s:u32", "s:u32?"), family="sync"),
    Form("bar.sync", (R("aligned", ".aligned"),), ("s:u32", "s:u32?"), family="sync"),
    # ---------------------------------------------------------------- Hopper (gating anchor)
    Form("wgmma.fence", (R("sync", ".sync"), R("aligned", ".aligned")), (), archs=("sm_90a",),
         min_sm=90, min_ptx=(8, 0), family="wgmma"),
]
