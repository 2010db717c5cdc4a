"""Tensor parameters inside a trace: global pointers and TMA descriptor slots."""
from __future__ import annotations

from ..errors import PtxValueError, TraceError
from ..ir.nodes import Addr, Param, Sym
from ..specs import TmaDescriptorHandle
from ..types import b8, u64
from . import context
from .context import user_loc
from .values import Register

SWIZZLES = (0, 32, 64, 128)


def tensor_ptr(spec) -> Register:
    tr = context.current(f"{spec.name}.ptr()")
    if spec.trace is not tr:
        raise TraceError(f"tensor {spec.name!r} belongs to kernel {spec.trace.name!r}",
                         loc=user_loc(3))
    if spec._ptr is None:
        loc = user_loc(3)
        raw = Register(tr.new_reg(u64), tr)
        spec._ptr_ld = tr.emit("ld", (".param", ".u64"), (raw.ir, Addr(Sym(spec.name))),
                               loc=loc, prologue=True)
        g = Register(tr.new_reg(u64), tr)
        tr.emit("cvta", (".to", ".global", ".u64"), (g.ir, raw.ir), loc=loc, prologue=True)
        batch = getattr(spec, "_batch", None)
        if batch is not None and any(batch[1]):
            g = _add_batch_offset(tr, g, batch, loc)
        spec._ptr = g
    return spec._ptr


# --- added for the runtime: a runtime scalar passed by device pointer -------------------
def scalar_by_pointer(tr, name: str, t) -> Register:
    """``.param .u64 name`` holds the scalar's device address: load the value once, in the
    prologue; ``ptx.param_value(name)`` returns the same register."""
    raw = Register(tr.new_reg(u64), tr)
    tr.emit("ld", (".param", ".u64"), (raw.ir, Addr(Sym(name))), prologue=True)
    g = Register(tr.new_reg(u64), tr)
    tr.emit("cvta", (".to", ".global", ".u64"), (g.ir, raw.ir), prologue=True)
    v = Register(tr.new_reg(t), tr)
    tr.emit("ld", (".global", t.ptx), (v.ir, Addr(g.ir)), prologue=True)
    tr.param_loads[name] = v
    return v


# --- added for jax_pyptx.runtime.batching (batch on the grid) ----------------------------
def _batch_index(tr, loc) -> Register:
    """``%ctaid.z`` in a register, read once per trace (the linear batch index)."""
    r = getattr(tr, "_batch_z", None)
    if r is None:
        from ..ir.nodes import Reg
        from ..types import u32

        r = Register(tr.new_reg(u32), tr)
        tr.emit("mov", (".u32",), (r.ir, Reg("%ctaid.z", u32)), loc=loc, prologue=True)
        tr._batch_z = r
    return r


def _add_batch_offset(tr, base: Register, batch, loc, item_bytes=None) -> Register:
    """``base + (byte offset of this tensor's batch item)``, emitted in the prologue.

    ``batch = (sizes, mask, item_bytes)``: the linear batch index ``%ctaid.z`` is split into
    one index per level (outermost first); a tensor carries only the levels in ``mask``.
    """
    from ..ir.nodes import Imm
    from ..types import u32

    sizes, mask, nbytes = batch
    nbytes = item_bytes if item_bytes is not None else nbytes
    z = _batch_index(tr, loc)

    def emit(op, mods, *ops):
        tr.emit(op, mods, ops, loc=loc, prologue=True)

    def wide(r32, scale) -> Register:
        w = Register(tr.new_reg(u64), tr)
        if scale < 2 ** 32:
            emit("mul", (".wide", ".u32"), w.ir, r32.ir, Imm(str(scale), u32))
        else:
            emit("cvt", (".u64", ".u32"), w.ir, r32.ir)
            emit("mul", (".lo", ".u64"), w.ir, w.ir, Imm(str(scale), u64))
        return w

    terms = []
    if all(mask):
        terms.append(wide(z, nbytes))
    else:
        stride = nbytes
        inner = 1
        for level in reversed(range(len(sizes))):
            if mask[level]:
                idx = z
                if inner > 1:
                    q = Register(tr.new_reg(u32), tr)
                    emit("div", (".u32",), q.ir, z.ir, Imm(str(inner), u32))
                    idx = q
                if level > 0:
                    r = Register(tr.new_reg(u32), tr)
                    emit("rem", (".u32",), r.ir, idx.ir, Imm(str(sizes[level]), u32))
                    idx = r
                terms.append(wide(idx, stride))
                stride *= sizes[level]
            inner *= sizes[level]
    out = base
    for t in terms:
        nxt = Register(tr.new_reg(u64), tr)
        emit("add", (".u64",), nxt.ir, out.ir, t.ir)
        out = nxt
    return out


def tensor_tma_desc(spec, box=None, swizzle: int = 0, *, element_strides=None, interleave=0,
                    oob_fill=0, l2_promotion=0, by_value: bool = False) -> Register:
    """Declare ``<name>_tma_desc`` and return a u64 register with the descriptor's address.

    ``box`` is outermost first (default: the whole tensor); ``swizzle`` in bytes.
    """
    tr = context.current(f"{spec.name}.tma_desc()")
    loc = user_loc(3)
    if tr.target.sm < 90:
        from ..errors import ArchError

        raise ArchError(f"TMA descriptors need sm_90; kernel {tr.name!r} targets "
                        f"{tr.target.name}", loc=loc)
    box = tuple(spec.shape if box is None else box)
    if len(box) != spec.ndim or any(not isinstance(b, int) or not 0 < b <= 256 for b in box):
        raise PtxValueError(f"{spec.name}.tma_desc: box must be {spec.ndim} ints in 1..256 "
                            f"(outermost first), got {box!r}", loc=loc)
    if swizzle not in SWIZZLES:
        raise PtxValueError(f"{spec.name}.tma_desc: swizzle must be one of {SWIZZLES} bytes, "
                            f"got {swizzle!r}", loc=loc)
    if not 1 <= spec.ndim <= 5:
        raise PtxValueError(f"{spec.name}.tma_desc: TMA supports 1-5 dims, tensor has "
                            f"{spec.ndim}", loc=loc)
    pname = f"{spec.name}_tma_desc"
    if pname in tr.tma_regs:
        return tr.tma_regs[pname]
    handle = TmaDescriptorHandle(
        tensor=spec.name, param=pname, index=spec.index, dtype=spec.dtype, shape=spec.shape,
        box=box, swizzle=swizzle, element_strides=tuple(element_strides or (1,) * spec.ndim),
        interleave=interleave, oob_fill=oob_fill, l2_promotion=l2_promotion,
        mode="by_value" if by_value else "global")
    r = Register(tr.new_reg(u64), tr)
    if by_value:
        tr.extra_params.append(Param(pname, b8, align=64, array=128))
        tr.params.append(tr.extra_params[-1])
        tr.emit("mov", (".u64",), (r.ir, Sym(pname)), loc=loc, prologue=True)
        tr.emit("cvta", (".param", ".u64"), (r.ir, r.ir), loc=loc, prologue=True)
    else:
        tr.extra_params.append(Param(pname, u64))
        tr.params.append(tr.extra_params[-1])
        tr.emit("ld", (".param", ".u64"), (r.ir, Addr(Sym(pname))), loc=loc, prologue=True)
        batch = getattr(spec, "_batch", None)
        if batch is not None and any(batch[1]):
            # batch on the grid (runtime): one 128-byte descriptor per batch item, in order;
            # the runtime broadcasts a TMA tensor to every batch level first
            r = _add_batch_offset(tr, r, (batch[0], (True,) * len(batch[0]), 128), loc)
    tr.tma_regs[pname] = r
    tr.tma.append(handle)
    return r
