"""``ptx.wgmma``: Hopper warpgroup MMA (sm_90a).

``ptx.wgmma.fence()``; ``ptx.wgmma.mma_async(acc, a_desc, b_desc, n=128, dtype=f32,
atype=bf16, scale_d=1)`` emits ``wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {...},
a, b, 1, 1, 1, 0, 0``; ``commit_group()``; ``wait_group(0)``. A from registers: pass a
RegArray of 4 b32 as ``a``. ``mma_async_sp`` adds the sparsity metadata and selector.
Descriptors: :func:`desc` (a Python int), :func:`desc_reg` (register arithmetic from a shared
address), :func:`desc_advance`. Fragments: :func:`accumulator` (row, col) of every
accumulator element of a thread, :func:`acc_regs` the register count.
"""
from __future__ import annotations

from ...errors import PtxValueError
from ...isa.fragments import wgmma_accumulator
from ..context import user_loc
from ..values import RegArray
from ._wrap import build_mods, emit, int_choice, new_array
from .descriptors import (
    WGMMA_SWIZZLE, canonical_strides, desc_advance, desc_from_address, matrix_base_offset,
    wgmma_desc as desc,
)

K_OF = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}


def _tn(t):
    return t.name if hasattr(t, "name") else str(t).lstrip(".")


def fence(*, pred=None):
    """``wgmma.fence.sync.aligned``: order register accesses before the next mma_async."""
    emit("wgmma.fence.sync.aligned", (), pred)


def commit_group(*, pred=None):
    """``wgmma.commit_group.sync.aligned``."""
    emit("wgmma.commit_group.sync.aligned", (), pred)


def wait_group(n: int = 0, *, pred=None):
    """``wgmma.wait_group.sync.aligned N``: wait until at most N groups are pending."""
    int_choice("ptx.wgmma.wait_group", "n", n, range(0, 8))
    emit("wgmma.wait_group.sync.aligned", (n,), pred)


def acc_regs(n: int, dtype="f32") -> int:
    """Accumulator registers per thread of an m64nN wgmma: N/2 (f32, s32) or N/4 (f16)."""
    return n // 4 if _tn(dtype) == "f16" else n // 2


def accumulator(n: int, thread: int, dtype="f32") -> list:
    """(row, col) of each accumulator *element* thread ``thread`` (0..127) of the warpgroup
    holds for m64nN: warp w covers rows 16w..16w+15; element i sits at row
    16w + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) + i%2. With f16 accumulators
    elements 2j and 2j+1 share register j."""
    if not 0 <= thread < 128:
        raise PtxValueError(f"ptx.wgmma.accumulator: thread={thread!r} is not allowed; "
                            f"allowed: 0..127", loc=user_loc())
    return wgmma_accumulator(n, thread)


_MODS: dict = {}     # _mods arguments -> modifiers (options that built before)


def _mods(fn, name, n, dtype, atype, btype, satfinite, k=None):
    try:
        key = (fn, name, n, dtype, atype, btype, bool(satfinite), k)
        got = _MODS.get(key)
    except TypeError:                    # an unhashable option: the checks below say so
        key, got = None, None
    if got is None:
        got = _build(fn, name, n, dtype, atype, btype, satfinite, k)
        if key is not None and len(_MODS) < 4096:
            _MODS[key] = got
    return got


def _build(fn, name, n, dtype, atype, btype, satfinite, k=None):
    at = _tn(atype)
    if at not in K_OF:
        raise PtxValueError(f"{fn}: atype={at!r} is not allowed; allowed: "
                            f"{', '.join(K_OF)}", loc=user_loc())
    kk = k or K_OF[at] * (2 if name.endswith(".sp") else 1)
    kw = {"sync": True, "aligned": True, "shape": f".m64n{n}k{kk}", "dtype": "." + _tn(dtype),
          "atype": "." + at, "btype": "." + _tn(btype or atype),
          "sat": ".satfinite" if satfinite else None}
    if at == "b1":
        kw.update(op=".and", popc=True)
    return build_mods(fn, name, kw)


def mma_async(acc, a, b_desc, *, n=None, dtype="f32", atype="bf16", btype=None, scale_d=1,
              scale_a: int = 1, scale_b: int = 1, trans_a: int = 0, trans_b: int = 0,
              satfinite: bool = False, pred=None):
    """``wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype d, a, b-desc, scale-d
    {, imm-scale-a, imm-scale-b{, imm-trans-a}, imm-trans-b}``. ``acc`` is the accumulator
    RegArray (N/2 f32 / s32 or N/4 b32 for f16); ``a`` a b64 descriptor or 4 b32 registers;
    ``n`` defaults from the accumulator size. Immediates the form does not take (integer
    types: scales and transposes; tf32/fp8: transposes) must stay at their defaults."""
    fn = "ptx.wgmma.mma_async"
    return _mma(fn, "wgmma.mma_async", acc, a, b_desc, (), n, dtype, atype, btype, scale_d,
                scale_a, scale_b, trans_a, trans_b, satfinite, pred)


def mma_async_sp(acc, a, b_desc, meta, selector: int = 0, *, n=None, dtype="f32",
                 atype="bf16", btype=None, scale_d=1, scale_a: int = 1, scale_b: int = 1,
                 trans_a: int = 0, trans_b: int = 0, satfinite: bool = False, pred=None):
    """Sparse ``wgmma.mma_async.sp``: structured-sparse A (K doubled) with metadata register
    ``meta`` and the sparsity selector: the threads of each quad that hold the metadata
    (0 or 1 for f16/bf16/tf32, where a pair of threads does; 0 for the 8-bit types, where
    all four do; ptxas rejects other values)."""
    fn = "ptx.wgmma.mma_async_sp"
    int_choice(fn, "selector", selector, (0, 1) if _tn(atype) in ("f16", "bf16", "tf32")
               else (0,))
    return _mma(fn, "wgmma.mma_async.sp", acc, a, b_desc, (meta, selector), n, dtype, atype,
                btype, scale_d, scale_a, scale_b, trans_a, trans_b, satfinite, pred)


def _mma(fn, name, acc, a, b_desc, sp, n, dtype, atype, btype, scale_d, scale_a, scale_b,
         trans_a, trans_b, satfinite, pred):
    if not isinstance(acc, RegArray):
        raise PtxValueError(f"{fn}: acc must be a RegArray (reg.array(f32, N/2)), got {acc!r}",
                            loc=user_loc())
    if n is None:
        n = len(acc) * (4 if _tn(dtype) == "f16" else 2)
    mods = _mods(fn, name, n, dtype, atype, btype, satfinite)
    at = _tn(atype)
    if not (type(scale_a) is int and scale_a in (1, -1) and type(scale_b) is int and
            scale_b in (1, -1) and type(trans_a) is int and trans_a in (0, 1) and
            type(trans_b) is int and trans_b in (0, 1)):    # else: the first bad one's error
        int_choice(fn, "scale_a", scale_a, (1, -1))
        int_choice(fn, "scale_b", scale_b, (1, -1))
        int_choice(fn, "trans_a", trans_a, (0, 1))
        int_choice(fn, "trans_b", trans_b, (0, 1))
    ops = [acc, a, b_desc, *sp, scale_d]
    a_regs = isinstance(a, (RegArray, list, tuple))
    if at in ("f16", "bf16", "tf32", "e4m3", "e5m2"):
        ops += [scale_a, scale_b]
        if at in ("f16", "bf16"):
            ops += ([] if a_regs else [trans_a]) + [trans_b]
    if at not in ("f16", "bf16") and (trans_a or trans_b):
        raise PtxValueError(f"{fn}: trans_a/trans_b are only allowed for f16/bf16 (atype="
                            f"{at!r})", loc=user_loc())
    if a_regs and trans_a:
        raise PtxValueError(f"{fn}: trans_a is not allowed when A comes from registers",
                            loc=user_loc())
    emit(name + "".join(mods), ops, pred)
    return acc


def desc_reg(address, lbo: int, sbo: int, swizzle: str = "128B", base_offset: int = 0):
    """A b64 register holding the wgmma descriptor of the shared address in ``address`` (a
    u32 register or a shared buffer); the constant fields are folded into one ``or``."""
    high = desc(0, lbo, sbo, swizzle, base_offset)
    return desc_from_address(address, high)


def zero_acc(n: int, dtype="f32"):
    """A fresh accumulator RegArray for m64nN (values undefined; use scale_d=0 first)."""
    return new_array({"f16": "b32", "f32": "f32", "s32": "s32"}[_tn(dtype)], acc_regs(n, dtype))


__all__ = ["fence", "commit_group", "wait_group", "mma_async", "mma_async_sp", "desc",
           "desc_reg", "desc_advance", "canonical_strides", "accumulator", "acc_regs",
           "zero_acc", "WGMMA_SWIZZLE", "matrix_base_offset"]


# --- the documented keyword forms (pyptx surface): see wgmma_kw.py -------------------------
from . import wgmma_kw as _kw  # noqa: E402
from .wgmma_kw import (  # noqa: E402
    MASKED_DESC_B128, SWIZZLE_128B, SWIZZLE_32B, SWIZZLE_64B, SWIZZLE_NONE, auto_descriptor,
    make_descriptor, masked_descriptor,
)

_mma_async_positional = mma_async


def mma_async(*args, **kw):
    """``mma_async(acc, a_desc, b_desc, n=..., dtype=..., atype=...)`` (ours), or the
    documented keyword form ``mma_async(shape="m64n128k16", dtype_d=f32, dtype_a=bf16,
    dtype_b=bf16, d=acc, a=..., b=..., scale_d=...)`` (``wgmma_kw.mma_async``)."""
    if not args and "d" in kw:
        return _kw.mma_async(_mma, K_OF, **kw)
    return _mma_async_positional(*args, **kw)


mma_async.__wrapped__ = _mma_async_positional
__all__ += ["make_descriptor", "auto_descriptor", "masked_descriptor", "SWIZZLE_NONE",
            "SWIZZLE_128B", "SWIZZLE_64B", "SWIZZLE_32B", "MASKED_DESC_B128"]
