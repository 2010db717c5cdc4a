"""``ptx.mem``: loads, stores and memory-system control, one instruction per call.

``v = ptx.mem.ld(ptx.addr(p), f32, space="global", cop="cg")``;
``ptx.mem.st(buf[0], v, space="shared")``; ``ptx.mem.ld(a, f32, vec=4)`` returns a RegArray.
Options (all the ISA's ld/st groups): ``space`` (global, shared, shared::cta, shared::cluster,
local, const, param...), ``sem`` (weak, volatile, relaxed, acquire, release, mmio) with
``scope`` (cta, cluster, gpu, sys), ``cop`` (ca/cg/cs/lu/cv, wb/cg/cs/wt), ``l1``
(evict_normal/unchanged/first/last, no_allocate), ``l2`` (evict_first/last), ``policy`` (a
b64 cache-policy register: adds ``.L2::cache_hint``), ``prefetch`` (64B/128B/256B), ``nc``.
"""
from __future__ import annotations

from ...types import f32, pred as pred_t, u32, u64
from ..values import Immediate, RegArray
from ._wrap import addr as _addr, reg_addr, build_mods, choice, dtype, emit, int_choice, new, new_array, \
    operand_type, vec

SEMS = (".weak", ".volatile", ".relaxed", ".acquire", ".release", ".mmio")


# ld/st/ldu have no .f16/.bf16 types: half-precision values move as bits
_AS_BITS = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}


def _kw(fn, *, space, sem, scope, cop, l1, l2, policy, prefetch, vec_n, t, nc):
    kw = {"space": space, "cop": cop, "type": "." + _AS_BITS.get(t.name, t.name),
          "l1": None if l1 is None else ".L1::" + str(l1).replace("L1::", "").lstrip("."),
          "l2": None if l2 is None else ".L2::" + str(l2).replace("L2::", "").lstrip("."),
          "prefetch": None if prefetch is None else ".L2::" + str(prefetch).replace("L2::", ""),
          "hint": policy is not None, "nc": nc, "scope": scope}
    if vec_n:
        kw["vec"] = f".v{int_choice(fn, 'vec', vec_n, (2, 4, 8))}"
    if sem is not None:
        s = choice(fn, "sem", sem, SEMS)
        if s == ".weak":
            kw["weak"] = True
        elif s == ".mmio":
            kw.update(mmio=True, sem=".relaxed", scope=".sys")
        else:
            kw["sem"] = s
    return kw


def ld(address, type, *, space=None, sem=None, scope=None, cop=None, l1=None, l2=None,
       policy=None, prefetch=None, vec=None, nc: bool = False, out=None, pred=None):
    """``ld{.sem}{.scope}{.space}{.cop|.L1::*}{.L2::*}{.L2::cache_hint}{.L2::NB}{.vN}.type``;
    returns the loaded register (a RegArray of ``vec`` registers)."""
    t = dtype(type)
    kw = _kw("ptx.mem.ld", space=space, sem=sem, scope=scope, cop=cop, l1=l1, l2=l2,
             policy=policy, prefetch=prefetch, vec_n=vec, t=t, nc=nc)
    mods = build_mods("ptx.mem.ld", "ld", kw)
    if out is None:
        out = new_array(t, vec) if vec else new(t)
    ops = (out, _addr(address, "ptx.mem.ld")) + ((policy,) if policy is not None else ())
    emit("ld" + "".join(mods), ops, pred)
    return out


def st(address, value, type=None, *, space=None, sem=None, scope=None, cop=None, l1=None,
       l2=None, policy=None, pred=None):
    """``st{.sem}{.scope}{.space}{.cop|.L1::*}{.L2::*}{.L2::cache_hint}{.vN}.type [a], b``; a
    RegArray value is a vector store."""
    t = dtype(type or operand_type(value))
    n = len(value) if isinstance(value, (RegArray, list, tuple)) else 0
    kw = _kw("ptx.mem.st", space=space, sem=sem, scope=scope, cop=cop, l1=l1, l2=l2,
             policy=policy, prefetch=None, vec_n=n, t=t, nc=False)
    kw.pop("prefetch")
    mods = build_mods("ptx.mem.st", "st", kw)
    ops = (_addr(address, "ptx.mem.st"), value) + ((policy,) if policy is not None else ())
    emit("st" + "".join(mods), ops, pred)


def ldu(address, type, *, vec=None, out=None, pred=None):
    """``ldu.global{.vN}.type``: a load through the uniform cache."""
    t = dtype(type)
    mods = build_mods("ptx.mem.ldu", "ldu", {"space": ".global",
                                             "type": "." + _AS_BITS.get(t.name, t.name),
                                             "vec": f".v{vec}" if vec else None})
    out = out or (new_array(t, vec) if vec else new(t))
    emit("ldu" + "".join(mods), (out, _addr(address, "ptx.mem.ldu")), pred)
    return out


def st_async(address, value, mbar, type=None, *, pred=None):
    """``st.async.shared::cluster.mbarrier::complete_tx::bytes{.vN}.type [a], b, [mbar]``:
    a remote store into a peer CTA's shared memory that completes bytes on its mbarrier."""
    t = dtype(type or operand_type(value))
    n = len(value) if isinstance(value, (RegArray, list, tuple)) else 0
    mods = build_mods("ptx.mem.st_async", "st.async", {
        "space": ".shared::cluster", "completion": ".mbarrier::complete_tx::bytes",
        "vec": f".v{n}" if n else None, "type": "." + t.name})
    emit("st.async" + "".join(mods), (_addr(address), value, _addr(mbar)), pred)


def st_bulk(address, size, *, pred=None):
    """``st.bulk.weak.shared::cta [a], size, 0``: zero-initialize ``size`` bytes (sm_100)."""
    if isinstance(size, int):
        from ..reg import scalar

        size = scalar(u64, size)
    emit("st.bulk.weak.shared::cta", (reg_addr(address, "ptx.mem.st_bulk"), size, 0), pred)


def prefetch(address, level="L2", *, space=None, pred=None):
    """``prefetch{.global|.local}.L1|.L2 [a]`` or ``prefetch.global.L2::evict_last|normal``."""
    lv = "." + str(level).lstrip(".")
    mods = build_mods("ptx.mem.prefetch", "prefetch", {"space": space, "level": lv})
    emit("prefetch" + "".join(mods), (_addr(address),), pred)


def prefetch_tensormap(address, *, space=None, pred=None):
    """``prefetch{.const|.param}.tensormap [a]``: bring a TMA descriptor into the cache."""
    mods = build_mods("ptx.mem.prefetch_tensormap", "prefetch",
                      {"space": space, "tensormap": True})
    emit("prefetch" + "".join(mods), (_addr(address),), pred)


def prefetchu(address, *, pred=None):
    """``prefetchu.L1 [a]``."""
    emit("prefetchu.L1", (_addr(address),), pred)


def applypriority(address, size: int = 128, *, pred=None):
    """``applypriority.global.L2::evict_normal [a], 128``."""
    int_choice("ptx.mem.applypriority", "size", size, (128,))
    emit("applypriority.global.L2::evict_normal", (_addr(address), size), pred)


def discard(address, size: int = 128, *, pred=None):
    """``discard.global.L2 [a], 128``."""
    int_choice("ptx.mem.discard", "size", size, (128,))
    emit("discard.global.L2", (_addr(address), size), pred)


_PRIMARY = (".L2::evict_last", ".L2::evict_normal", ".L2::evict_first", ".L2::evict_unchanged")


def _prio(fn, param, v, allowed):
    return choice(fn, param, ".L2::" + str(v).replace("L2::", "").lstrip("."), allowed)


def createpolicy_fractional(primary="evict_last", secondary=None, fraction=None, *, out=None):
    """``createpolicy.fractional.L2::primary{.L2::secondary}.b64 policy{, fraction}``."""
    fn = "ptx.mem.createpolicy_fractional"
    p = _prio(fn, "primary", primary, _PRIMARY)
    s = None if secondary is None else _prio(fn, "secondary", secondary,
                                             (".L2::evict_first", ".L2::evict_unchanged"))
    out = out or new("b64")
    ops = (out,) + ((Immediate(float(fraction), f32),) if fraction is not None else ())
    emit(f"createpolicy.fractional{p}{s or ''}.b64", ops)
    return out


def createpolicy_range(address, primary_size, total_size, primary="evict_last", secondary=None,
                       *, out=None):
    """``createpolicy.range.global.L2::primary{.L2::secondary}.b64 policy, [a], psize, tsize``."""
    fn = "ptx.mem.createpolicy_range"
    p = _prio(fn, "primary", primary, _PRIMARY)
    s = None if secondary is None else _prio(fn, "secondary", secondary,
                                             (".L2::evict_first", ".L2::evict_unchanged"))
    out = out or new("b64")
    emit(f"createpolicy.range.global{p}{s or ''}.b64", (out, _addr(address), primary_size,
                                                        total_size))
    return out


def createpolicy_cvt(access_property, *, out=None):
    """``createpolicy.cvt.L2.b64 policy, access-property``."""
    out = out or new("b64")
    emit("createpolicy.cvt.L2.b64", (out, access_property))
    return out


def cvta(x, space, *, to: bool = False, wide: bool = True, out=None, pred=None):
    """``cvta{.to}.space.u64|u32 d, a``: generic <-> state-space address."""
    t = ".u64" if wide else ".u32"
    mods = build_mods("ptx.mem.cvta", "cvta", {"to": to, "space": space, "type": t})
    out = out or new(u64 if wide else u32)
    emit("cvta" + "".join(mods), (out, x), pred)
    return out


def isspacep(x, space, *, out=None, pred=None):
    """``isspacep.space p, a``: is generic address ``a`` in ``space``."""
    mods = build_mods("ptx.mem.isspacep", "isspacep", {"space": space})
    out = out or new(pred_t)
    emit("isspacep" + "".join(mods), (out, x), pred)
    return out


__all__ = ["ld", "st", "ldu", "st_async", "st_bulk", "prefetch", "prefetch_tensormap",
           "prefetchu", "applypriority", "discard", "createpolicy_fractional",
           "createpolicy_range", "createpolicy_cvt", "cvta", "isspacep", "vec"]
