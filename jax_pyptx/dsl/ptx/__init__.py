"""``ptx``: one PTX instruction per call, plus structured control flow.

``ptx.inst.<op>.<mods>(...)`` emits any instruction; ``ptx.special.*`` reads special
registers; typed wrappers per instruction family live in submodules (``ptx.wgmma``,
``ptx.mbarrier``, ``ptx.cp``, ``ptx.tcgen05``, ...).

Examples:
    >>> from jax_pyptx import ptx, reg
    >>> from jax_pyptx.types import u32
    >>> from jax_pyptx.dsl.trace_scope import trace_scope
    >>> with trace_scope() as t:
    ...     r = reg.scalar(u32, 7)
    ...     _ = ptx.inst.add.u32(r, r, ptx.special.tid.x())
    ...     with ptx.if_(r > 32):
    ...         _ = ptx.inst.mov.u32(r, 0)
    >>> t.lines()  # doctest: +NORMALIZE_WHITESPACE
    ['mov.u32 %r0, 7;', 'add.u32 %r0, %r0, %tid.x;', 'setp.gt.u32 %p0, %r0, 32;',
     '@!%p0 bra $L_else_0;', 'mov.u32 %r0, 0;', '$L_else_0:']
"""
from . import special  # noqa: F401
from .control import (  # noqa: F401
    LabelRef, bra, break_, continue_, elif_, else_, if_, label, loop, place, predicated, range_,
    scope, static_range, while_,
)
from .generic import addr, exit, inst, not_, raw_imm, ret, sym  # noqa: F401
from .params import global_ptrs, param, param_value  # noqa: F401
from .special import ctaid_x, ctaid_y, sreg  # noqa: F401
from . import atomic, bar, bits, cmp, cvt, fence, math, mem, misc, warp  # noqa: F401
from . import cluster, cp, descriptors, mbarrier, mma, tcgen05, wgmma  # noqa: F401
from . import tma  # noqa: F401
from .bar import named_barrier  # noqa: F401
from .directives import file_, loc, pragma, raw  # noqa: F401
from .loops import expr, kloop, pipe, pipeline  # noqa: F401
from .matrix_kw import ldmatrix, stmatrix, stmatrix_x4_trans_f32_bf16  # noqa: F401
from .scalar_ops import (  # noqa: F401
    add, and_, cvta, elect_sync, ld, mad, mov, mul, or_, selp, setmaxnreg, setmaxnreg_dec,
    setmaxnreg_inc, setp, shl, shr, st, sub, var, xor_,
)
