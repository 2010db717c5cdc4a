"""Hopper warpgroup MMA: wgmma.mma_async for every shape and dtype combination (A from a
shared-memory descriptor or from registers), the sparse wgmma.mma_async.sp forms, and
wgmma.fence / commit_group / wait_group. Shapes are generated: N = 8..256 step 8 (integer and
b1: the ISA's subset)."""
from __future__ import annotations

from .common import SM90A, n_of, shapes
from .model import Form, G, R

N_ALL = tuple(range(8, 257, 8))
N_INT = (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256)


def _acc(chosen) -> int:
    """Accumulator registers per thread: M*N/128 elements, two f16 per register."""
    n = n_of(chosen["shape"])
    return n // 4 if chosen["dtype"] == ".f16" else n // 2


def _w(name, groups, ops, doc, ptx=(8, 0), cpu=""):
    return Form(name, tuple(groups), ops, min_sm=90, archs=SM90A, min_ptx=ptx, family="wgmma",
                doc=doc, counts=(("acc", _acc),), cpu=cpu)


SYNC = (R("sync", ".sync"), R("aligned", ".aligned"))
# imm-scale-a/b negate (-1) or keep (1) an input; imm-trans-a/b transpose it (1) or not (0)
SCALE = "i=-1|1"
TRANS = "i=0|1"
# (label, k, N list, dtypes, atypes, btypes, fp-scale/negate operands, transpose allowed)
COMBOS = (
    ("f16", 16, N_ALL, (".f16", ".f32"), (".f16",), (".f16",), True, True),
    ("bf16", 16, N_ALL, (".f32",), (".bf16",), (".bf16",), True, True),
    ("tf32", 8, N_ALL, (".f32",), (".tf32",), (".tf32",), True, False),
    ("fp8", 32, N_ALL, (".f16", ".f32"), (".e4m3", ".e5m2"), (".e4m3", ".e5m2"), True, False),
    ("int8", 32, N_INT, (".s32",), (".s8",), (".s8",), False, False),
    ("int8", 32, N_INT, (".s32",), (".u8",), (".u8",), False, False),
    ("int8-mixed", 32, N_INT, (".s32",), (".s8",), (".u8",), False, False),
    ("int8-mixed", 32, N_INT, (".s32",), (".u8",), (".s8",), False, False),
)

FORMS = [
    _w("wgmma.fence", SYNC, (), "wgmma.fence.sync.aligned"),
    _w("wgmma.commit_group", SYNC, (), "wgmma.commit_group.sync.aligned"),
    _w("wgmma.wait_group", SYNC, ("i",), "wgmma.wait_group.sync.aligned N"),
]


def _dense_and_sparse():
    out = []
    for sparse in (False, True):
        name = "wgmma.mma_async.sp" if sparse else "wgmma.mma_async"
        ptx = (8, 2) if sparse else (8, 0)
        for label, k, ns, dts, ats, bts, fp, trans in COMBOS:
            # the sparsity selector: 0 or 1 for 16-bit and tf32 inputs, 0 for 8-bit ones
            meta = ("r:b32", "i=0|1" if label in ("f16", "bf16", "tf32") else "i=0") \
                if sparse else ()
            kk = k * 2 if sparse else k
            for dt in dts:
                acc = "v@acc:" + {".f16": "b32", ".f32": "f32", ".s32": "s32"}[dt]
                groups = list(SYNC) + [R("shape", *shapes(64, kk, ns))]
                if label.startswith("int8"):
                    groups.append(G("sat", ".satfinite"))
                groups += [R("dtype", dt), R("atype", *ats), R("btype", *bts)]
                scale = (SCALE, SCALE) if fp else ()
                for a_desc in (True, False):
                    a = "r:b64" if a_desc else "v4:b32"
                    tr = ((TRANS, TRANS) if a_desc else (TRANS,)) if trans else ()
                    ops = (acc, a, "r:b64") + meta + ("p",) + scale + tr
                    src = "a-desc" if a_desc else "a (registers)"
                    out.append(_w(name, groups, ops,
                                  f"{label}: {name}.sync.aligned.m64nNk{kk}{dt}.atype.btype "
                                  f"d, {src}, b-desc, ...",
                                  ptx=max(ptx, (8, 4)) if label == "int8-mixed" else ptx))
        # b1 (dense only)
        if not sparse:
            for a_desc in (True, False):
                out.append(_w(name, list(SYNC) + [R("shape", *shapes(64, 256, N_INT)),
                                                  R("dtype", ".s32"), R("atype", ".b1"),
                                                  R("btype", ".b1"), R("op", ".and", order="bop"),
                                                  R("popc", ".popc", order="bop")],
                              ("v@acc:s32", "r:b64" if a_desc else "v4:b32", "r:b64", "p"),
                              "b1: wgmma.mma_async.sync.aligned.m64nNk256.s32.b1.b1.and.popc",
                              ptx=(8, 0)))
    return out


FORMS += _dense_and_sparse()
