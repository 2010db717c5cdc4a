"""``ptx.tcgen05``: Blackwell tensor cores and Tensor Memory (sm_100a).

``ptx.tcgen05.alloc(slot, 128)`` / ``dealloc(taddr, 128)`` / ``relinquish_alloc_permit()``;
``mma(d_tmem, a_desc, b_desc, idesc, kind="f16", enable_input_d=p)`` (A from TMEM: pass an
address ``[a_tmem]``; ``cta_group=2``; ``disable_output_lane=regs``; ``scale_input_d=k``;
``collector="a::fill"``, ``ashift=True``); ``mma_block_scaled(..., scale_a, scale_b,
kind="mxf8f6f4", scale_vec="2X")``; ``mma_ws``; ``mma_sp``; ``ld(taddr, "32x32b", 16)`` /
``st(taddr, regs, "32x32b")``; ``cp``, ``shift``, ``commit(mbar, multicast=mask)``,
``wait_ld()``, ``wait_st()``, ``fence_before_thread_sync()``, ``fence_after_thread_sync()``.
Descriptors: :func:`instr_desc`, :func:`instr_desc_block_scaled`, :func:`smem_desc` (ints),
:func:`smem_desc_reg` (register arithmetic)."""
from __future__ import annotations

from ...errors import PtxValueError
from ...ir.nodes import Addr
from ...isa.fragments import TCGEN05_LD_SHAPES
from ..context import user_loc
from ..values import Register, RegArray, as_operand
from ._wrap import addr as _addr, build_mods, choice, emit, int_choice, new_array
from .descriptors import (  # noqa: F401
    TCGEN05_SWIZZLE, canonical_strides, desc_advance, desc_from_address,
    tcgen05_instr_desc as instr_desc, tcgen05_instr_desc_block_scaled as instr_desc_block_scaled,
    tcgen05_smem_desc as smem_desc,
)

SHAPES = TCGEN05_LD_SHAPES          # shape -> (registers per .num, largest .num), from the ISA


def _cta(fn, cta_group):
    return f".cta_group::{int_choice(fn, 'cta_group', cta_group, (1, 2))}"


def _taddr(x, fn, param="taddr"):
    if isinstance(x, Register):
        if x.type.bits != 32 or x.type.kind == "float":
            from ...errors import PtxTypeError

            raise PtxTypeError(f"{fn}: {param} {x.name} is {x.type.name}; a tensor-memory "
                               f"address is a 32-bit register (ptxas rejects a 64-bit one)",
                               loc=user_loc(3))
        return Addr(as_operand(x), 0)
    return _addr(x, fn, param)


def alloc(dst, ncols: int, *, cta_group: int = 1, pred=None):
    """``tcgen05.alloc.cta_group.sync.aligned.shared::cta.b32 [dst], nCols``: allocate ``ncols``
    (32..512, power of two) TMEM columns; the address is written to shared memory at dst."""
    fn = "ptx.tcgen05.alloc"
    if isinstance(ncols, int):
        int_choice(fn, "ncols", ncols, (32, 64, 128, 256, 512))
    emit(f"tcgen05.alloc{_cta(fn, cta_group)}.sync.aligned.shared::cta.b32",
         (_addr(dst, fn, "dst"), ncols), pred)


def dealloc(taddr, ncols: int, *, cta_group: int = 1, pred=None):
    """``tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols``."""
    fn = "ptx.tcgen05.dealloc"
    if isinstance(ncols, int):
        int_choice(fn, "ncols", ncols, (32, 64, 128, 256, 512))
    emit(f"tcgen05.dealloc{_cta(fn, cta_group)}.sync.aligned.b32", (taddr, ncols), pred)


def relinquish_alloc_permit(*, cta_group: int = 1, pred=None):
    """``tcgen05.relinquish_alloc_permit.cta_group.sync.aligned``."""
    emit(f"tcgen05.relinquish_alloc_permit{_cta('ptx.tcgen05.relinquish_alloc_permit', cta_group)}"
         f".sync.aligned", (), pred)


def mma(d_tmem, a, b_desc, idesc, enable_input_d=0, *, kind="f16", cta_group: int = 1,
        disable_output_lane=None, scale_input_d=None, collector=None, ashift: bool = False,
        sparse_meta=None, pred=None):
    """``tcgen05.mma{.sp}.cta_group.kind{.ashift}{.collector::a::op} [d], a-desc|[a-tmem],
    b-desc{, [sp-meta]}, idesc{, disable-output-lane}, enable-input-d{, scale-input-d}``.
    ``enable_input_d`` (a predicate, or 1/0) accumulates into D; the default 0 overwrites it
    (D = A*B), as the documented keyword form's default ``scale_d=None`` does."""
    fn = "ptx.tcgen05.mma"
    name = "tcgen05.mma.sp" if sparse_meta is not None else "tcgen05.mma"
    k = choice(fn, "kind", kind, (".f16", ".tf32", ".f8f6f4", ".i8"))
    kw = {"cta_group": _cta(fn, cta_group), "kind": ".kind::" + k[1:],
          "ashift": ashift, "collector": collector and ".collector::" + collector.replace(
              "collector::", "")}
    mods = build_mods(fn, name, kw)
    ops = [_taddr(d_tmem, fn, "d_tmem"), a, b_desc]
    if sparse_meta is not None:
        ops.append(_taddr(sparse_meta, fn, "sparse_meta"))
    ops.append(idesc)
    if disable_output_lane is not None:
        ops.append(disable_output_lane)
    ops.append(enable_input_d)
    if scale_input_d is not None:
        int_choice(fn, "scale_input_d", scale_input_d, range(16))
        ops.append(scale_input_d)
    emit(name + "".join(mods), ops, pred)


def mma_block_scaled(d_tmem, a, b_desc, idesc, scale_a, scale_b, enable_input_d=1, *,
                     kind="mxf8f6f4", scale_vec=None, cta_group: int = 1, collector=None,
                     sparse_meta=None, pred=None):
    """``tcgen05.mma{.sp}.cta_group.kind.block_scale{.scale_vec::NX}{.collector::a::op} [d],
    a, b-desc{, [sp-meta]}, idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d``."""
    fn = "ptx.tcgen05.mma_block_scaled"
    name = "tcgen05.mma.sp" if sparse_meta is not None else "tcgen05.mma"
    k = choice(fn, "kind", kind, (".mxf8f6f4", ".mxf4", ".mxf4nvf4"))
    sv = None
    if scale_vec is not None:
        sv = choice(fn, "scale_vec", scale_vec, (".1X", ".2X", ".4X", ".block16", ".block32"))
        sv = sv if sv.startswith(".block") else ".scale_vec::" + sv[1:]
    kw = {"cta_group": _cta(fn, cta_group), "kind": ".kind::" + k[1:], "block_scale": True,
          "scale_vec": sv, "collector": collector and ".collector::" + collector.replace(
              "collector::", "")}
    mods = build_mods(fn, name, kw)
    ops = [_taddr(d_tmem, fn, "d_tmem"), a, b_desc]
    if sparse_meta is not None:
        ops.append(_taddr(sparse_meta, fn, "sparse_meta"))
    ops += [idesc, _taddr(scale_a, fn, "scale_a"), _taddr(scale_b, fn, "scale_b"),
            enable_input_d]
    emit(name + "".join(mods), ops, pred)


def mma_ws(d_tmem, a, b_desc, idesc, enable_input_d=1, *, kind="f16", collector=None,
           zero_column_mask=None, sparse_meta=None, pred=None):
    """``tcgen05.mma.ws{.sp}.cta_group::1.kind{.collector::bN::op} [d], a, b-desc{, [meta]},
    idesc, enable-input-d{, zero-column-mask-desc}`` (weight-stationary)."""
    fn = "ptx.tcgen05.mma_ws"
    name = "tcgen05.mma.ws.sp" if sparse_meta is not None else "tcgen05.mma.ws"
    k = choice(fn, "kind", kind, (".f16", ".tf32", ".f8f6f4", ".i8"))
    kw = {"cta_group": ".cta_group::1", "kind": ".kind::" + k[1:],
          "collector": collector and ".collector::" + collector.replace("collector::", "")}
    mods = build_mods(fn, name, kw)
    ops = [_taddr(d_tmem, fn, "d_tmem"), a, b_desc]
    if sparse_meta is not None:
        ops.append(_taddr(sparse_meta, fn, "sparse_meta"))
    ops += [idesc, enable_input_d] + ([zero_column_mask] if zero_column_mask is not None else [])
    emit(name + "".join(mods), ops, pred)


def _shape(fn, shape, num):
    if shape not in SHAPES:
        raise PtxValueError(f"{fn}: shape={shape!r} is not allowed; allowed: "
                            f"{', '.join(SHAPES)}", loc=user_loc())
    per, top = SHAPES[shape]
    allowed = _ALLOWED_NUMS.get(top)
    if allowed is None:
        allowed = _ALLOWED_NUMS[top] = tuple(2 ** i for i in range(8) if 2 ** i <= top)
    int_choice(fn, "num", num, allowed)
    return per * num


_ALLOWED_NUMS: dict = {}     # largest .num of a shape -> the allowed .num values


def ld(taddr, shape="32x32b", num: int = 1, *, pack16: bool = False, half_splitoff=None,
       out=None, pred=None):
    """``tcgen05.ld.sync.aligned.shape.xN{.pack::16b}.b32 r, [taddr]{, immHalfSplitoff}``;
    returns the registers (N, 2N or 4N of them by shape)."""
    fn = "ptx.tcgen05.ld"
    n = _shape(fn, shape, num)
    if (shape == "16x32bx2") != (half_splitoff is not None):
        raise PtxValueError(f"{fn}: half_splitoff is required for shape 16x32bx2 and only "
                            f"for it", loc=user_loc())
    out = out or new_array("b32", n)
    emit(f"tcgen05.ld.sync.aligned.{shape}.x{num}{'.pack::16b' if pack16 else ''}.b32",
         [out, _taddr(taddr, fn)] + ([half_splitoff] if half_splitoff is not None else []), pred)
    return out


def st(taddr, regs, shape="32x32b", *, unpack16: bool = False, half_splitoff=None, pred=None):
    """``tcgen05.st.sync.aligned.shape.xN{.unpack::16b}.b32 [taddr]{, immHalfSplitoff}, r``
    (N from ``len(regs)``)."""
    fn = "ptx.tcgen05.st"
    per = SHAPES.get(shape, (1, 0))[0]
    num = len(regs) // per
    _shape(fn, shape, num)
    emit(f"tcgen05.st.sync.aligned.{shape}.x{num}{'.unpack::16b' if unpack16 else ''}.b32",
         [_taddr(taddr, fn)] + ([half_splitoff] if half_splitoff is not None else []) + [regs],
         pred)


def cp(taddr, s_desc, shape="128x256b", *, cta_group: int = 1, multicast=None, src_fmt=None,
       size=None, src_is_addr=None, pred=None):
    """``tcgen05.cp.cta_group.shape{.multicast}{.b8x16.src_fmt} [taddr], s-desc``: shared
    memory -> TMEM (shapes 128x256b, 4x256b, 128x128b, 64x128b with warpx2::02_13|01_23,
    32x128b with warpx4; src_fmt b6x16_p32 / b4x16_p64 decompress fp6/fp4). ``size=`` is the
    documented name of ``shape``, and may carry the multicast (``"64x128b.warpx2::02_13"``,
    ``"32x128b.warpx4"``); ``src_is_addr=True`` brackets ``s_desc`` (an address)."""
    fn = "ptx.tcgen05.cp"
    if size is not None:
        shape = size
    shape = str(shape).lstrip(".")
    if "." in shape:                 # "64x128b.warpx2::02_13", "32x128b.warpx4": the
        shape, mc = shape.split(".", 1)     # documented spelling of shape + multicast
        if multicast is not None and multicast.lstrip(".") != mc:
            raise PtxValueError(f"{fn}: shape {shape}.{mc} and multicast={multicast!r} "
                                f"disagree", loc=user_loc())
        multicast = mc
    if src_is_addr:
        s_desc = _addr(s_desc, fn, "src")
    kw = {"cta_group": _cta(fn, cta_group), "shape": "." + shape,
          "multicast": multicast and "." + multicast.lstrip("."),
          "dst_fmt": src_fmt is not None and ".b8x16",
          "src_fmt": src_fmt and "." + src_fmt.lstrip(".")}
    mods = build_mods(fn, "tcgen05.cp", kw)
    emit("tcgen05.cp" + "".join(mods), (_taddr(taddr, fn), s_desc), pred)


def shift(taddr, *, cta_group: int = 1, pred=None):
    """``tcgen05.shift.cta_group.down [taddr]``: shift TMEM rows down by one."""
    fn = "ptx.tcgen05.shift"
    emit(f"tcgen05.shift{_cta(fn, cta_group)}.down", (_taddr(taddr, fn),), pred)


def commit(mbar, *, cta_group: int = 1, multicast=None, cluster: bool = False, pred=None):
    """``tcgen05.commit.cta_group.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}
    .b64 [mbar]{, ctaMask}``: arrive on mbar when prior tcgen05 ops complete."""
    fn = "ptx.tcgen05.commit"
    space = ".shared::cluster" if (cluster or multicast is not None) else ""
    mc = ".multicast::cluster" if multicast is not None else ""
    emit(f"tcgen05.commit{_cta(fn, cta_group)}.mbarrier::arrive::one{space}{mc}.b64",
         [_addr(mbar, fn, "mbar")] + ([multicast] if multicast is not None else []), pred)


def wait_ld(*, pred=None):
    """``tcgen05.wait::ld.sync.aligned``."""
    emit("tcgen05.wait::ld.sync.aligned", (), pred)


def wait_st(*, pred=None):
    """``tcgen05.wait::st.sync.aligned``."""
    emit("tcgen05.wait::st.sync.aligned", (), pred)


def fence_before_thread_sync(*, pred=None):
    """``tcgen05.fence::before_thread_sync``."""
    emit("tcgen05.fence::before_thread_sync", (), pred)


def fence_after_thread_sync(*, pred=None):
    """``tcgen05.fence::after_thread_sync``."""
    emit("tcgen05.fence::after_thread_sync", (), pred)


def smem_desc_reg(address, lbo: int, sbo: int, swizzle: str = "128B", base_offset: int = 0):
    """A b64 register with the tcgen05 shared-memory descriptor of ``address`` (register or
    shared buffer): constant fields folded into one ``or``."""
    return desc_from_address(address, smem_desc(0, lbo, sbo, swizzle, base_offset),
                             "ptx.tcgen05.smem_desc_reg")


__all__ = ["alloc", "dealloc", "relinquish_alloc_permit", "mma", "mma_block_scaled", "mma_ws",
           "ld", "st", "cp", "shift", "commit", "wait_ld", "wait_st", "fence_before_thread_sync",
           "fence_after_thread_sync", "instr_desc", "instr_desc_block_scaled", "smem_desc",
           "smem_desc_reg", "canonical_strides", "desc_advance", "SHAPES", "RegArray"]


# --- the documented keyword forms (pyptx surface): see tcgen05_kw.py -----------------------
import sys  # noqa: E402

from . import tcgen05_kw as _kw  # noqa: E402
from .tcgen05_kw import (  # noqa: E402
    BLACKWELL_MASKED_DESC_B128, descriptor, make_instr_desc_f16bf16_f32, masked_descriptor,
)

_ld_positional, _st_positional, _commit_positional, _mma_positional = ld, st, commit, mma
_MMA_DOCUMENTED = {"scale_d", "sparse", "collector_a", "a_is_tmem", "sparse_metadata",
                   "pred_operand", "scale_c"}


def ld(*args, **kw):
    """``ld(taddr, shape, num)`` (ours, returns new registers) or the documented
    ``ld(dst_regs, taddr, shape=, count=, dtype="b32", pack=False)``."""
    if args and isinstance(args[0], (RegArray, list, tuple)):
        return _kw.ld(sys.modules[__name__], *args, **kw)
    return _ld_positional(*args, **kw)


def st(*args, **kw):
    """``st(taddr, regs, shape)`` (ours: x-count from ``len(regs)``) or the documented
    ``st(taddr, src_regs, shape=, count=, dtype="b32", unpack=False)``."""
    if {"count", "dtype", "unpack"} & kw.keys():
        return _kw.st(sys.modules[__name__], *args, **kw)
    return _st_positional(*args, **kw)


def commit(*args, **kw):
    """``commit(mbar, multicast=mask_register, cluster=False)`` (ours: the generic address
    form unless ``cluster=True``) or the documented ``commit(mbar, multicast=False,
    multicast_mask=None, space="cluster")`` (``tcgen05_kw.commit``), which a call with
    neither ``cluster=`` nor a register ``multicast=`` is: ``commit(bar)`` prints
    ``.shared::cluster``."""
    if "cluster" in kw or not isinstance(kw.get("multicast", False), bool):
        return _commit_positional(*args, **kw)
    return _kw.commit(sys.modules[__name__], *args, **kw)


def mma(*args, **kw):
    """``mma(d, a, b, idesc, enable_input_d=1, ...)`` (ours: accumulates by default) or the
    documented keyword form with ``scale_d=`` / ``pred_operand=`` / ``collector_a=`` /
    ``a_is_tmem=`` / ``sparse_metadata=`` / ``scale_c=`` (``tcgen05_kw.mma``)."""
    if _MMA_DOCUMENTED & kw.keys():
        return _kw.mma(sys.modules[__name__], *args, **kw)
    return _mma_positional(*args, **kw)


__all__ += ["make_instr_desc_f16bf16_f32", "descriptor", "masked_descriptor",
            "BLACKWELL_MASKED_DESC_B128"]
