"""The documented keyword forms of the warp matrix loads and stores: ``ptx.ldmatrix``,
``ptx.stmatrix`` and ``ptx.stmatrix_x4_trans_f32_bf16`` (an epilogue helper that converts an
f32 accumulator fragment to bf16 and stores it transposed with ``stmatrix``)::

    ptx.ldmatrix(dst=a, src=ptx.addr(sa), layout="x4")         # ldmatrix.sync.aligned.m8n8.x4.shared.b16
    ptx.stmatrix(smem=ptx.addr(sc), regs=packs, layout="x4.trans")
"""
from __future__ import annotations

from ...errors import PtxTypeError, PtxValueError
from ...types import b16, b32, u32
from ..context import user_loc
from ..values import Register, RegArray, Special, materialize
from ._wrap import addr as _addr, emit, new

# no __all__: these are not family wrappers the transpiler picks (it writes ptx.inst)


def _regs(fn, name, x):
    if isinstance(x, RegArray):
        return x
    if isinstance(x, (list, tuple)) and x and all(isinstance(r, Register) for r in x):
        return RegArray(list(x), x[0].type)
    raise PtxTypeError(f"{fn}: {name} must be a RegArray or a list of registers, got {x!r}",
                       loc=user_loc(3))


def _layout(fn, layout, trans):
    parts = [p for p in str(layout).lstrip(".").split(".") if p]
    if "trans" in parts:
        parts.remove("trans")
        trans = True
    nums = [p for p in parts if p in ("x1", "x2", "x4")]
    shapes = [p for p in parts if p not in ("x1", "x2", "x4")]
    if len(nums) != 1 or len(shapes) > 1:
        raise PtxValueError(f"{fn}: layout={layout!r} is not allowed; expected 'x1', 'x2' or "
                            f"'x4', optionally after a shape ('m8n8.x4') and before 'trans'",
                            loc=user_loc(3))
    return (shapes[0] if shapes else "m8n8"), nums[0], trans


def ldmatrix(*, dst, src, layout="x4", trans: bool = False, pred=None):
    """``ldmatrix.sync.aligned.<shape>.<xN>[.trans].shared.b16 {dst}, [src];`` (shape
    ``m8n8`` unless ``layout`` names one, e.g. ``"m8n8.x4"``); returns ``dst``.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import b32, u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     frag, a = reg.array(b32, 4), reg.scalar(u32)
        ...     _ = ptx.ldmatrix(dst=frag, src=a, layout="x4")
        >>> t.lines()
        ['ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [%r4];']
    """
    fn = "ptx.ldmatrix"
    shape, num, trans = _layout(fn, layout, trans)
    regs = _regs(fn, "dst", dst)
    emit(f"ldmatrix.sync.aligned.{shape}.{num}{'.trans' if trans else ''}.shared.b16",
         (regs, _addr(src, fn, "src")), pred)
    return dst


def stmatrix(*, smem, regs, layout="x4", trans: bool = False, shape="m8n8", pred=None):
    """``stmatrix.sync.aligned.<shape>.<xN>[.trans].shared::cta.b16 [smem], {regs};``
    (``layout="x4.trans"`` implies ``trans``).

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import b32, u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     frag, a = reg.array(b32, 4), reg.scalar(u32)
        ...     _ = ptx.stmatrix(smem=a, regs=frag, layout="x4")
        >>> t.lines()
        ['stmatrix.sync.aligned.m8n8.x4.shared::cta.b16 [%r4], {%r0, %r1, %r2, %r3};']
    """
    fn = "ptx.stmatrix"
    lshape, num, trans = _layout(fn, layout, trans)
    if lshape != "m8n8":
        shape = lshape
    r = _regs(fn, "regs", regs)
    emit(f"stmatrix.sync.aligned.{str(shape).lstrip('.')}.{num}{'.trans' if trans else ''}"
         f".shared::cta.b16", (_addr(smem, fn, "smem"), r), pred)


def stmatrix_x4_trans_f32_bf16(*, frag, smem_base, lane, row_stride: int, tmp_bf16=None,
                               tmp_pack=None) -> None:
    """Store an f32 fragment (a multiple of 8 registers) as bf16, transposed, with one
    ``stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16`` per 8 registers.

    The thread's element offset ``o = 16*(lane>>5) + row_stride*(lane32&7) +
    8*row_stride*(lane32>>4) + (lane32&8)`` (``lane32 = lane & 31``) gives the byte base
    ``smem_base + 2*o``; group ``g`` stores at ``base + 32*g*row_stride``. Each group
    converts its 8 values (``cvt.rn.bf16.f32``) into ``tmp_bf16`` (8 b16) and packs pairs into
    ``tmp_pack`` (4 b32; ``mov.b32 p, {lo, hi};``); both default to fresh registers.

    Examples:
        >>> from jax_pyptx import ptx, reg
        >>> from jax_pyptx.types import f32, u32
        >>> from jax_pyptx.dsl.trace_scope import trace_scope
        >>> with trace_scope() as t:
        ...     frag, base, lane = reg.array(f32, 8), reg.scalar(u32), reg.scalar(u32)
        ...     ptx.stmatrix_x4_trans_f32_bf16(frag=frag, smem_base=base, lane=lane, row_stride=64)
        >>> sum(line.startswith("stmatrix") for line in t.lines())
        1
    """
    fn = "ptx.stmatrix_x4_trans_f32_bf16"
    f = _regs(fn, "frag", frag)
    if len(f) % 8:
        raise PtxValueError(f"{fn}: frag has {len(f)} registers; a multiple of 8 is needed",
                            loc=user_loc())
    if not isinstance(row_stride, int) or isinstance(row_stride, bool) or row_stride <= 0:
        raise PtxValueError(f"{fn}: row_stride={row_stride!r} must be a positive int (elements)",
                            loc=user_loc())
    h = [new(b16) for _ in range(8)] if tmp_bf16 is None else list(tmp_bf16)
    pk = [new(b32) for _ in range(4)] if tmp_pack is None else list(tmp_pack)
    if len(h) != 8 or len(pk) != 4:
        raise PtxValueError(f"{fn}: tmp_bf16 must have 8 registers and tmp_pack 4; got "
                            f"{len(h)} and {len(pk)}", loc=user_loc())
    if isinstance(lane, Special):
        lane = materialize(lane)
    if isinstance(smem_base, Special):
        smem_base = materialize(smem_base)
    lane32 = lane & 31
    warp = lane >> 5
    o = new(u32)
    emit("mad.lo.s32", (o, warp, 16, 0))
    emit("mad.lo.s32", (o, lane32 & 7, row_stride, o))
    emit("mad.lo.s32", (o, lane32 >> 4, row_stride * 8, o))
    emit("add.s32", (o, o, lane32 & 8))
    base = smem_base + (o << 1)
    for g in range(len(f) // 8):
        for k in range(8):
            emit("cvt.rn.bf16.f32", (h[k], f[8 * g + k]))
        for k in range(4):
            emit("mov.b32", (pk[k], RegArray([h[2 * k], h[2 * k + 1]], b16)))
        a = new(u32)
        emit("add.u32", (a, base, g * row_stride * 32))
        emit("stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16",
             (_addr(a, fn, "smem"), RegArray(pk, b32)))
