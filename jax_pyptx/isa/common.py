"""Option sets shared by the family tables (PTX ISA spellings)."""
from __future__ import annotations

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
SCOPES = (".cta", ".cluster", ".gpu", ".sys")
CLUSTER_GATE = {".cluster": (90, (7, 8))}
SHARED = (".shared", ".shared::cta")
SHARED_ANY = (".shared", ".shared::cta", ".shared::cluster")
SM90A = ("sm_90a",)
SM100A = ("sm_100a", "sm_101a", "sm_103a", "sm_110a")
SM100A_120A = SM100A + ("sm_120a", "sm_121a")


def shapes(m: int, k: int, ns) -> tuple:
    """``.m64nNkK`` options."""
    return tuple(f".m{m}n{n}k{k}" for n in ns)


def n_of(shape: str) -> int:
    return int(shape[shape.index("n") + 1:shape.index("k")])
