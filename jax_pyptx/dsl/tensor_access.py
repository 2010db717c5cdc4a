"""Tensor parameters inside a trace: the prologue loads a parameter ABI is made of.

Each function emits into the trace's prologue and returns the register it loaded; which of
them a kernel's ``X.ptr()`` / ``X.tma_desc()`` / runtime scalars use is decided by the
parameter ABI (``jax_pyptx.specialize.abi``), not here.
"""
from __future__ import annotations

from ..errors import ArchError, PtxValueError, TraceError
from ..ir.nodes import Addr, Imm, Param, Reg, Sym
from ..specs import TmaDescriptorHandle
from ..types import b8, u32, u64
from . import context
from .values import Register

SWIZZLES = (0, 32, 64, 128)

__all__ = ["SWIZZLES", "check_owner", "global_pointer", "scalar_by_pointer", "ctaid_z",
           "add_batch_offset", "declare_tma_desc"]


def check_owner(spec, what: str):
    """The current trace, which must be the one ``spec`` (a TensorSpec) belongs to."""
    tr = context.current(f"{spec.name}.{what}()")
    if spec.trace is not tr:
        raise TraceError(f"tensor {spec.name!r} belongs to kernel {spec.trace.name!r}",
                         loc=context.user_loc(3))
    return tr


def global_pointer(tr, name: str, loc=None):
    """``ld.param.u64`` + ``cvta.to.global``: (the global address register, the ld)."""
    raw = Register(tr.new_reg(u64), tr)
    ld = tr.emit("ld", (".param", ".u64"), (raw.ir, Addr(Sym(name))), loc=loc, prologue=True)
    g = Register(tr.new_reg(u64), tr)
    tr.emit("cvta", (".to", ".global", ".u64"), (g.ir, raw.ir), loc=loc, prologue=True)
    return g, ld


def scalar_by_pointer(tr, name: str, t):
    """``.param .u64 name`` holds the scalar's device address: load the value once, in the
    prologue; ``ptx.param_value(name)`` returns the same register. Returns (value, the
    ``ld.param``)."""
    g, ld = global_pointer(tr, name)
    v = Register(tr.new_reg(t), tr)
    tr.emit("ld", (".global", t.ptx), (v.ir, Addr(g.ir)), prologue=True)
    tr.param_loads[name] = v
    return v, ld


def ctaid_z(tr, loc=None) -> Register:
    """``%ctaid.z`` in a new register (prologue)."""
    r = Register(tr.new_reg(u32), tr)
    tr.emit("mov", (".u32",), (r.ir, Reg("%ctaid.z", u32)), loc=loc, prologue=True)
    return r


def add_batch_offset(tr, base: Register, z: Register, sizes: tuple, mask: tuple,
                     item_bytes: int, loc=None) -> Register:
    """``base + (byte offset of this batch item)``, emitted in the prologue.

    ``z`` is the linear batch index over ``sizes`` (outermost first); the tensor carries only
    the levels in ``mask`` and one of its items is ``item_bytes`` long.
    """
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
        terms.append(wide(z, item_bytes))
    else:
        stride = item_bytes
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


def declare_tma_desc(tr, spec, box=None, swizzle: int | None = None, *, element_strides=None,
                     interleave=0, oob_fill=0, l2_promotion=0, by_value: bool = False,
                     loc=None):
    """Declare ``<name>_tma_desc`` and load the descriptor's address.

    Returns ``(register, handle, cached)``: ``cached`` when the slot already existed (the
    register is then the one returned the first time). ``box`` is outermost first; without
    it, the tensor's ``Tile`` decides (its ``tma_box``, else 128 rows x one swizzle span for
    a 2-d tensor, else the whole tensor). ``swizzle`` in bytes; without it, the Tile's layout
    (``Layout.TMA_128B`` -> 128, ...). A Tile with ``tma_rank=3`` gets the 64-column stripe
    view ``(cols/64, rows, 64)`` (``ptx.tma.load_3d`` coordinates ``{0, row, col/64}``).
    """
    if tr.target.sm < 90:
        raise ArchError(f"TMA descriptors need sm_90; kernel {tr.name!r} targets "
                        f"{tr.target.name}", loc=loc)
    pname = f"{spec.name}_tma_desc"
    if pname in tr.tma_regs:
        return tr.tma_regs[pname], None, True
    tile = getattr(spec, "tile", None)
    env = tr.shape_env
    shape, strides = spec.shape, ()
    if swizzle is None:
        swizzle = tile.tma_swizzle if tile is not None else 0
    if shape is None:                     # a raw pointer parameter: nothing to describe
        box = () if box is None else tuple(box)
    else:
        if box is None and tile is not None:
            # the Tile's tensor map (specs.Tile.tma_view: the one derivation)
            try:
                shape, box, strides = tile.tma_view(spec.shape, env)
            except KeyError as e:
                raise PtxValueError(f"{spec.name}.tma_desc: tma_box names {e.args[0]!r}, "
                                    f"which is neither a shape variable nor an int template "
                                    f"parameter of this call", loc=loc) from None
            except PtxValueError as e:
                raise PtxValueError(f"{spec.name}.tma_desc: {e.message}", loc=loc) from None
        elif box is None:
            box = spec.shape
        box = tuple(box)
        if len(box) != len(shape) or any(not isinstance(b, int) or not 0 < b <= 256
                                         for b in box):
            raise PtxValueError(f"{spec.name}.tma_desc: box must be {len(shape)} ints in "
                                f"1..256 (outermost first), got {box!r}", loc=loc)
        if not 1 <= len(shape) <= 5:
            raise PtxValueError(f"{spec.name}.tma_desc: TMA supports 1-5 dims, tensor has "
                                f"{len(shape)}", loc=loc)
    if swizzle not in SWIZZLES:
        raise PtxValueError(f"{spec.name}.tma_desc: swizzle must be one of {SWIZZLES} bytes, "
                            f"got {swizzle!r}", loc=loc)
    handle = TmaDescriptorHandle(
        tensor=spec.name, param=pname, index=spec.index, dtype=spec.dtype,
        shape=tuple(shape or ()), box=box, swizzle=swizzle,
        element_strides=tuple(element_strides or (1,) * len(box)), interleave=interleave,
        oob_fill=oob_fill, l2_promotion=l2_promotion,
        mode="by_value" if by_value else "global", strides=strides)
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
    tr.tma.append(handle)
    return r, handle, False
