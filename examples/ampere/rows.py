"""Row kernels on Ampere: the shared pattern of RMSNorm, LayerNorm and softmax.

A row of ``cols`` elements is split into 16-byte *chunks* (4 f32 or 8 bf16/f16 elements:
``ld.global.v4``). ``tpr`` threads (a power of two) share a row, thread ``t`` holding chunks
``t, t + tpr, t + 2*tpr, ...`` (``cpt`` of them): every warp-wide load is one contiguous,
coalesced stretch of the row. The row stays in registers, as f32, between the statistics
pass and the output pass, so global memory is read once and written once.

Reductions over a row: ``shfl.sync.bfly`` within each warp (within segments of ``tpr`` lanes
when ``tpr < 32``: several rows share a warp), then, when a row spans several warps, each
warp's lane 0 writes its partial to shared memory, one ``bar.sync``, and every thread sums the
partials in the same order (so all threads of the row get bit-identical results).

A CTA holds ``rows`` rows (``rows * tpr`` threads, 256 by default); the row count ``M`` is a
shape variable and needs no multiple of anything: threads of rows past ``M`` load nothing
(predicated loads of zeros) and store nothing. Columns that do not fill the last round of
chunks (``cols / vec`` not a multiple of ``tpr``) are predicated off the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from jax_pyptx import ptx, reg, smem
from jax_pyptx.types import b32, f32, u32, u64

FULL_MASK = 0xFFFFFFFF
MAX_VALUES = 32              # f32 values of a row one thread keeps in registers (default plan)


@dataclass(frozen=True)
class RowPlan:
    """How a row kernel lays ``cols`` columns of ``dtype`` over threads (see module doc)."""

    cols: int
    dtype: object            # jax_pyptx.types f32 / bf16 / f16
    vec: int                 # elements per chunk (one vector load)
    tpr: int                 # threads per row (power of two)
    cpt: int                 # chunks per thread
    rows: int                # rows per CTA

    @property
    def nvec(self) -> int:
        """Chunks per row."""
        return self.cols // self.vec

    @property
    def ragged(self) -> bool:
        """Whether the last round of chunks is partly past the row's end."""
        return self.nvec % self.tpr != 0

    @property
    def threads(self) -> int:
        """Threads per CTA."""
        return self.rows * self.tpr

    @property
    def warps_per_row(self) -> int:
        """Warps a row spans (1 when several rows share a warp)."""
        return max(1, self.tpr // 32)

    def grid(self, M: int) -> tuple:
        """The launch grid for ``M`` rows."""
        return (-(-M // self.rows), 1, 1)


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def plan_rows(fn: str, cols: int, dtype, threads_per_row=None, rows_per_cta=None) -> RowPlan:
    """The default plan: 16-byte chunks (narrower when ``cols`` needs it), at most
    ``MAX_VALUES`` values per thread, 256 threads per CTA."""
    if not isinstance(cols, int) or isinstance(cols, bool) or cols <= 0:
        raise ValueError(f"{fn}: cols must be a positive int, got {cols!r}")
    if dtype.name not in ("f32", "bf16", "f16"):
        raise ValueError(f"{fn}: dtype must be f32, bf16 or f16, got {dtype.name}")
    esize = dtype.nbytes
    vec = 16 // esize
    while cols % vec:
        vec //= 2
    if esize == 2 and vec == 1:
        raise ValueError(f"{fn}: cols={cols} must be even for {dtype.name} (two elements per "
                         f"32-bit register)")
    nvec = cols // vec
    if threads_per_row is None:
        need = -(-nvec // max(1, MAX_VALUES // vec))
        tpr = min(_pow2_at_least(nvec), max(32, _pow2_at_least(need)))
        if tpr > 1024:
            raise ValueError(f"{fn}: cols={cols} ({dtype.name}) does not fit one row in the "
                             f"registers of a 1024-thread CTA ({1024 * MAX_VALUES} values)")
    else:
        tpr = threads_per_row
        if not isinstance(tpr, int) or tpr <= 0 or tpr & (tpr - 1) or tpr > 1024:
            raise ValueError(f"{fn}: threads_per_row must be a power of two in 1..1024, got "
                             f"{threads_per_row!r}")
    cpt = -(-nvec // tpr)
    rows = rows_per_cta if rows_per_cta is not None else max(1, 256 // tpr)
    if not isinstance(rows, int) or rows <= 0 or rows * tpr > 1024:
        raise ValueError(f"{fn}: rows_per_cta={rows_per_cta!r} with {tpr} threads per row "
                         f"must give 1..1024 threads per CTA")
    return RowPlan(cols, dtype, vec, tpr, cpt, rows)


# ----------------------------------------------------------------------------- per thread
class RowThread:
    """The registers that place one thread: its row, its index within the row, predicates."""

    def __init__(self, plan: RowPlan, M: int):
        self.plan = plan
        tid = reg.from_(ptx.special.tid.x(), u32)
        cta = reg.from_(ptx.special.ctaid.x(), u32)
        lg = plan.tpr.bit_length() - 1
        self.row_in_cta = tid >> lg
        self.t = tid & (plan.tpr - 1)                  # thread within its row
        self.warp_in_row = self.t >> 5
        self.lane = tid & 31
        self.row = cta * plan.rows + self.row_in_cta
        # M is known when the kernel is traced: no predicate when the CTAs tile it exactly
        self.row_ok = self.row < M if M % plan.rows else None
        # chunk j of this thread: index t + j*tpr; only the last round may run past the row.
        # chunk_ok[j] = (predicate for a row chunk, predicate for a vector chunk); None: always
        self.chunk_ok = []
        for j in range(plan.cpt):
            c_ok = None
            if plan.ragged and (j + 1) * plan.tpr > plan.nvec:
                c_ok = self.t < plan.nvec - j * plan.tpr
            self.chunk_ok.append((_and(self.row_ok, c_ok), c_ok))
        self.byte_in_row = reg.cvt(self.t, u64) * (plan.vec * plan.dtype.nbytes)

    def row_address(self, tensor):
        """u64 address of this thread's first chunk of its row of ``tensor`` [M, cols]."""
        p = self.plan
        return tensor.ptr() + reg.cvt(self.row, u64) * (p.cols * p.dtype.nbytes) + \
            self.byte_in_row

    def vector_address(self, tensor):
        """u64 address of this thread's first chunk of a length-``cols`` vector."""
        return tensor.ptr() + self.byte_in_row

    def chunk_offset(self, j: int) -> int:
        """Bytes from this thread's first chunk to its ``j``-th."""
        p = self.plan
        return j * p.tpr * p.vec * p.dtype.nbytes


def _and(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _zeros(n: int, t=f32):
    return [reg.scalar(t, 0.0 if t is f32 else 0) for _ in range(n)]


def load_chunks(th: RowThread, addr, *, row: bool = True) -> list:
    """This thread's ``cpt * vec`` elements at ``addr`` as f32 registers, chunk by chunk
    (zeros where the chunk is predicated off). ``row=False``: a vector shared by all rows,
    predicated on the columns only."""
    p = th.plan
    out = []
    for j in range(p.cpt):
        ok_row, ok_col = th.chunk_ok[j]
        guard = ok_row if row else ok_col
        a = ptx.addr(addr, th.chunk_offset(j))
        if p.dtype is f32:
            vals = _zeros(p.vec) if guard is not None else [reg.scalar(f32) for _ in range(p.vec)]
            _ld(p.vec, "f32", vals, a, guard)
            out += vals
            continue
        words = _zeros(p.vec // 2, b32) if guard is not None else \
            [reg.scalar(b32) for _ in range(p.vec // 2)]
        _ld(p.vec // 2, "b32", words, a, guard)
        for w in words:
            out += unpack2(w, p.dtype)
    return out


def _ld(n, t, dst, a, guard):
    op = getattr(ptx.inst.ld.global_, f"v{n}") if n > 1 else ptx.inst.ld.global_
    getattr(op, t)(dst if n > 1 else dst[0], a, pred=guard)


def _st(n, t, a, src, guard):
    op = getattr(ptx.inst.st.global_, f"v{n}") if n > 1 else ptx.inst.st.global_
    getattr(op, t)(a, src if n > 1 else src[0], pred=guard)


def store_chunks(th: RowThread, addr, vals: list) -> None:
    """Store f32 ``vals`` (``cpt * vec`` of them) as this thread's chunks of its row,
    converted to the plan's dtype (round to nearest even)."""
    p = th.plan
    for j in range(p.cpt):
        guard = th.chunk_ok[j][0]
        a = ptx.addr(addr, th.chunk_offset(j))
        chunk = vals[j * p.vec:(j + 1) * p.vec]
        if p.dtype is f32:
            _st(p.vec, "f32", a, chunk, guard)
        else:
            words = [pack2(chunk[2 * i], chunk[2 * i + 1], p.dtype) for i in range(p.vec // 2)]
            _st(p.vec // 2, "b32", a, words, guard)


def unpack2(w, dtype) -> list:
    """A 32-bit register holding two bf16/f16 -> two f32 registers (low element first)."""
    if dtype.name == "bf16":                       # bf16 is the high half of an f32
        lo, hi = reg.scalar(b32), reg.scalar(b32)
        ptx.inst.shl.b32(lo, w, 16)
        ptx.inst.and_.b32(hi, w, 0xFFFF0000)
        return [reg.from_(lo, f32), reg.from_(hi, f32)]
    h0, h1 = reg.scalar("b16"), reg.scalar("b16")
    ptx.inst.mov.b32([h0, h1], w)
    out = []
    for h in (h0, h1):
        f = reg.scalar(f32)
        ptx.inst.cvt.f32.f16(f, h)
        out.append(f)
    return out


def pack2(lo, hi, dtype):
    """Two f32 -> one 32-bit register of two bf16/f16 (``cvt.rn.bf16x2.f32``)."""
    return ptx.cvt.pack(hi, lo, f"{dtype.name}x2")


# ----------------------------------------------------------------------------- reductions
class RowReducer:
    """All-reduce f32 values over the threads of a row (module doc). Each call uses its own
    shared-memory slot, so consecutive reductions need no barrier between them."""

    def __init__(self, plan: RowPlan, th: RowThread, slots: int):
        self.plan, self.th, self.used = plan, th, 0
        self.buf = None
        if plan.warps_per_row > 1:
            self.buf = smem.alloc(f32, (slots, plan.rows, plan.warps_per_row), name="partials")
            self.row_base = self.buf.ptr() + th.row_in_cta * (plan.warps_per_row * 4)

    def __call__(self, v, op: str):
        """``op``: "add" or "max"."""
        p = self.plan
        width = min(p.tpr, 32)
        delta = width // 2
        while delta >= 1:
            other = reg.scalar(f32)
            ptx.inst.shfl.sync.bfly.b32(other, v, delta, 31, FULL_MASK)
            v = _combine(v, other, op)
            delta //= 2
        if self.buf is None:
            return v
        slot = self.used
        self.used += 1
        base = self.row_base
        off = slot * p.rows * p.warps_per_row * 4
        with ptx.if_(self.th.lane == 0):
            a = base + (self.th.warp_in_row << 2)
            ptx.inst.st.shared.f32(ptx.addr(a, off), v)
        ptx.bar.sync(0)
        total = None
        for w in range(p.warps_per_row):
            x = reg.scalar(f32)
            ptx.inst.ld.shared.f32(x, ptx.addr(base, off + 4 * w))
            total = x if total is None else _combine(total, x, op)
        return total


def _combine(a, b, op):
    if op == "add":
        return a + b
    m = reg.scalar(f32)
    ptx.inst.max.f32(m, a, b)
    return m


def tree_sum(vals):
    """Sum of f32 registers as a balanced tree (shorter dependency chains than a fold)."""
    vals = list(vals)
    while len(vals) > 1:
        nxt = [vals[i] + vals[i + 1] for i in range(0, len(vals) - 1, 2)]
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return vals[0]


def tree_max(vals):
    """Max of f32 registers as a balanced tree of ``max.f32``."""
    vals = list(vals)
    while len(vals) > 1:
        nxt = [_combine(vals[i], vals[i + 1], "max") for i in range(0, len(vals) - 1, 2)]
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return vals[0]
