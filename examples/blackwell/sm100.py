"""The shared machinery of the Blackwell GEMMs: the tile plan, the warp roles, the TMA /
mbarrier ring, the shared-memory descriptors, the TMEM accumulators and the epilogues.

Every GEMM here computes ``C[M, N] = A[M, K] @ B[K, N]`` with A and B row-major bf16 or f16
and the product accumulated in f32 in Tensor Memory (TMEM), on ``tcgen05.mma.kind::f16``.

**Warps.** A CTA has six warps (192 threads), each with one job:

* warp 0, the **producer**: one elected lane (``elect.sync``) walks the k tiles and fills a
  ring of ``stages`` shared-memory stages with TMA (``cp.async.bulk.tensor.2d``, 128B
  swizzle): wait until the stage is empty, arm its ``full`` mbarrier with the stage's byte
  count (``mbarrier.arrive.expect_tx``), issue A's box and B's boxes;
* warp 1, the **MMA issuer**: the warp allocates the TMEM accumulator
  (``tcgen05.alloc``, then ``relinquish_alloc_permit``) and frees it at the end; one elected
  lane waits on ``full``, issues ``BK / 16`` ``tcgen05.mma`` (K = 16 each) from the stage's
  shared-memory descriptors, and ``tcgen05.commit``s to the stage's ``empty`` mbarrier, which
  the tensor core arrives on once those MMAs have read the stage; after the last k tile it
  commits to ``acc_full``;
* warps 2-5, the **epilogue**: warp ``w`` may reach TMEM lanes ``32 (w % 4) ..`` (the ISA's
  lane-quarter rule), so the four warps cover the 128 lanes = rows of the accumulator. Each
  waits on ``acc_full``, reads its 32 rows ``cols`` columns at a time with
  ``tcgen05.ld.sync.aligned.32x32b.x<cols>`` (lane ``l`` gets row ``32 (w % 4) + l``),
  converts to the output type and writes C: through a 128B-swizzled staging buffer and a TMA
  store (``cp.async.bulk.tensor.2d.global.shared::cta``, which clips at the edges), or, for
  the grouped GEMM whose tiles end at group boundaries, with predicated ``st.global.v4``.

**The ring.** Per stage, A's ``128 x 64`` box (16 KiB: 128 rows of 128 bytes, 128B
swizzle) and ``bn / 64`` boxes of B, each ``64 (k) x 64 (n)`` (8 KiB). ``full[s]`` (count 1:
the producer's arrive + the stage's transaction bytes) and ``empty[s]`` (count 1: the MMA
warp's ``tcgen05.commit``). Producer and consumer each keep a (stage, phase) pair; the
producer's first pass waits on the parity of the phase before the barrier's first (which
counts as complete), so it never blocks on a fresh ring.

**Descriptors.** A is K-major: the canonical 128B-swizzled layout has 8-row groups 1024
bytes apart (SBO = 1024; LBO unused, 16); the K step ``j`` of a stage starts ``32 j`` bytes
into the swizzle row (the swizzle is applied to the absolute address). B is MN-major (B is
``[K, N]`` row-major): a box is 64 k rows of 128 bytes (64 n); 8 k rows are 1024 bytes apart
(SBO = 1024) and the next 64 columns of n a box (LBO = 8 KiB) further; K step ``j`` starts
``16 * 128 * j`` bytes in. The instruction descriptor says bf16/f16 A and B, f32 D, M = 128
(256 for the pair), N = ``bn``, A K-major and B MN-major (``transpose B``).

**TMEM.** The accumulator of a 128 x ``bn`` tile is 128 lanes x ``bn`` 32-bit columns:
row ``r`` of the tile in lane ``r``, column ``n`` in column ``n``. A persistent kernel
double-buffers it: buffer ``b`` starts at column ``b * bn``.
"""
from __future__ import annotations

from jax_pyptx import SpecializationError, ptx, reg, smem
from jax_pyptx.types import b32, f32, u32, u64

BM = 128                # rows of one CTA's share of an MMA: the 128 lanes of TMEM
BK = 64                 # k per stage: one 128-byte swizzle row of bf16 / f16
BOX_N = 64              # columns of one B box (128 bytes of bf16 / f16)
THREADS = 192           # six warps
PRODUCER_WARP, MMA_WARP = 0, 1
EPILOGUE_WARPS = 4      # warps 2..5
MAX_SMEM = 232448       # sm_100: 227 KiB of shared memory per CTA
SW128_SBO = 1024        # 8 rows of a 128-byte swizzle atom
FULL = 0xFFFFFFFF


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


class GemmConfig:
    """The trace-time constants of one GEMM kernel (module docstring).

    ``cta_group=2``: the tile is ``256 x bn`` over a CTA pair; each CTA loads its 128 rows of
    A and ``bn / 2`` columns of B. ``acc_stages=2``: double-buffered TMEM accumulators (a
    persistent kernel). ``epilogue``: ``"tma"`` (staging buffer + TMA store) or ``"direct"``
    (predicated ``st.global``)."""

    def __init__(self, fn, dtype, out_dtype, bn, stages, *, acc_stages=1, cta_group=1,
                 epilogue="tma"):
        from jax_pyptx.dsl.ptx.descriptors import tcgen05_instr_desc

        if getattr(dtype, "name", None) not in ("bf16", "f16"):
            raise ValueError(f"{fn}: dtype must be bf16 or f16, got {dtype!r}")
        if getattr(out_dtype, "name", None) not in ("f32", "bf16", "f16"):
            raise ValueError(f"{fn}: out_dtype must be f32, bf16 or f16, got {out_dtype!r}")
        allowed = (128, 256) if cta_group == 2 else (64, 128, 192, 256)
        if bn not in allowed:
            raise ValueError(f"{fn}: bn must be one of {', '.join(map(str, allowed))} (whole "
                             f"64-column B boxes{' per CTA of the pair' if cta_group == 2 else ''}"
                             f", the MMA's N <= 256), got {bn!r}")
        if not isinstance(stages, int) or isinstance(stages, bool) or stages < 2:
            raise ValueError(f"{fn}: stages must be an int >= 2, got {stages!r}")
        self.fn = fn
        self.dtype, self.out_dtype = dtype, out_dtype
        self.bn, self.stages, self.acc_stages = bn, stages, acc_stages
        self.cta_group, self.epilogue = cta_group, epilogue
        self.es = dtype.nbytes
        self.a_bytes = BM * BK * self.es                   # A's box: 16 KiB
        self.b_cols = bn // cta_group                       # B columns one CTA loads
        self.b_boxes = self.b_cols // BOX_N
        self.b_box_bytes = BK * BOX_N * self.es             # 8 KiB
        self.b_bytes = self.b_boxes * self.b_box_bytes
        self.stage_bytes = self.a_bytes + self.b_bytes
        self.out_cols = 128 // out_dtype.nbytes             # columns of a 128-byte C row
        self.chunks = bn // self.out_cols                   # epilogue chunks per tile
        self.tmem_cols = max(32, _pow2_at_least(bn * acc_stages))
        self.idesc = tcgen05_instr_desc("f16", BM * cta_group, bn, f32, dtype.name,
                                        b_major="MN", cta_group=cta_group)
        self.staging_bytes = EPILOGUE_WARPS * 2 * 32 * 128 if epilogue == "tma" else 0
        barriers = 2 * stages + acc_stages + (acc_stages if acc_stages > 1 else 0)
        self.smem_bytes = stages * self.stage_bytes + self.staging_bytes + 8 * barriers + 4
        if self.tmem_cols > 512:
            raise ValueError(f"{fn}: {acc_stages} accumulators of bn={bn} columns need "
                             f"{bn * acc_stages} TMEM columns; a CTA has 512")
        if self.smem_bytes > MAX_SMEM:
            raise ValueError(f"{fn}: stages={stages} of {self.stage_bytes} bytes (bn={bn}) and "
                             f"{self.staging_bytes} bytes of epilogue staging need "
                             f"{self.smem_bytes} bytes of shared memory; a CTA has at most "
                             f"{MAX_SMEM}; use fewer stages or a smaller bn")

    def __repr__(self):
        return (f"tcgen05 gemm {self.dtype.name}->{self.out_dtype.name} tile "
                f"{BM * self.cta_group}x{self.bn}x{BK}, {self.stages} stages, "
                f"{self.acc_stages} accumulator(s), cta_group::{self.cta_group}")


def check_shapes(name, K, N):
    """TMA needs 16-byte row strides: K and N multiples of 8; K at least 1."""
    if K % 8 or N % 8 or K <= 0:
        raise SpecializationError(
            f"{name}: K and N must be positive multiples of 8 (TMA row strides are multiples "
            f"of 16 bytes), got K={K}, N={N}")


# ----------------------------------------------------------------------------- shared memory
class Shared:
    """The shared-memory buffers of a GEMM kernel (allocated in the trace)."""

    def __init__(self, cfg: GemmConfig):
        self.cfg = cfg
        self.a_ring = smem.alloc(cfg.dtype, (cfg.stages, BM, BK), align=1024, name="a_ring")
        self.b_ring = smem.alloc(cfg.dtype, (cfg.stages, cfg.b_boxes, BK, BOX_N), align=1024,
                                 name="b_ring")
        self.staging = None
        if cfg.epilogue == "tma":
            self.staging = smem.alloc(cfg.out_dtype, (EPILOGUE_WARPS, 2, 32, cfg.out_cols),
                                      align=1024, name="staging")
        self.full = smem.mbarrier(cfg.stages, name="full")
        self.empty = smem.mbarrier(cfg.stages, name="empty")
        self.acc_full = smem.mbarrier(cfg.acc_stages, name="acc_full")
        self.acc_empty = None                   # the epilogue's release: persistent kernels
        if cfg.acc_stages > 1:
            self.acc_empty = smem.mbarrier(cfg.acc_stages, name="acc_empty")
        self.tmem_slot = smem.alloc(u32, (1,), align=4, name="tmem_slot")


def bar_at(bars, index):
    """u32 address of barrier ``index`` (a register) of an mbarrier array."""
    return bars.ptr() + (index << 3)


class Ring:
    """A (stage, phase) cursor over a ring of ``n`` slots (registers): ``advance()`` moves to
    the next slot and flips the phase when it wraps."""

    def __init__(self, n: int):
        self.n = n
        self.stage = reg.scalar(u32, 0)
        self.phase = reg.scalar(u32, 0)

    def advance(self):
        """stage = (stage + 1) % n; phase ^= (wrapped)."""
        if self.n == 1:
            ptx.inst.xor.b32(self.phase, self.phase, 1)
            return
        nxt = self.stage + 1
        wrap = nxt == self.n
        ptx.inst.selp.u32(self.stage, 0, nxt, wrap)
        flip = reg.scalar(u32)
        ptx.inst.selp.u32(flip, 1, 0, wrap)
        ptx.inst.xor.b32(self.phase, self.phase, flip)


def wait(bar_addr, parity):
    """Block on phase ``parity`` of the mbarrier at ``bar_addr`` (``try_wait.parity`` loop)."""
    ptx.mbarrier.wait(bar_addr, parity)


# ----------------------------------------------------------------------------- descriptors
def desc_hi_kmajor() -> int:
    """Constant bits of A's descriptor: K-major 128B swizzle, LBO 16 (unused), SBO 1024."""
    return ptx.tcgen05.smem_desc(0, 16, SW128_SBO, "128B")


def desc_hi_mnmajor(box_bytes: int) -> int:
    """Constant bits of B's descriptor: MN-major 128B swizzle, LBO = one B box of
    ``box_bytes`` (the next 64 columns), SBO 1024 (the next 8 k rows)."""
    return ptx.tcgen05.smem_desc(0, box_bytes, SW128_SBO, "128B")


def desc_of(address, hi: int):
    """b64 descriptor register of the shared address ``address`` (u32 register)."""
    from jax_pyptx.dsl.ptx.descriptors import desc_from_address

    return desc_from_address(address, hi, "sm100.desc_of")


# ----------------------------------------------------------------------------- roles
class Roles:
    """Per-thread predicates of the warp roles (module docstring)."""

    def __init__(self):
        self.tid = reg.from_(ptx.special.tid.x(), u32)
        self.warp = self.tid >> 5
        self.lane = self.tid & 31
        self.is_producer_warp = self.warp == PRODUCER_WARP
        self.is_mma_warp = self.warp == MMA_WARP
        self.is_epilogue = self.warp >= 2
        self.quarter = self.warp & 3                      # TMEM lanes 32*quarter .. +31


def setup(cfg: GemmConfig, sh: Shared, roles: Roles, *, cluster_sync: bool = False):
    """Thread 0 initialises the barriers; the MMA warp allocates TMEM; everyone syncs and
    reads the TMEM address. Returns it (u32 register)."""
    with ptx.if_(roles.tid == 0):
        for s in range(cfg.stages):
            ptx.mbarrier.init(sh.full[s], 1)
            ptx.mbarrier.init(sh.empty[s], 1)
        for b in range(cfg.acc_stages):
            ptx.mbarrier.init(sh.acc_full[b], 1)
            if sh.acc_empty is not None:
                ptx.mbarrier.init(sh.acc_empty[b], 32 * EPILOGUE_WARPS)
        ptx.fence.mbarrier_init()
    with ptx.if_(roles.is_mma_warp):
        ptx.tcgen05.alloc(sh.tmem_slot, cfg.tmem_cols, cta_group=cfg.cta_group)
        ptx.tcgen05.relinquish_alloc_permit(cta_group=cfg.cta_group)
    ptx.tcgen05.fence_before_thread_sync()
    if cluster_sync:
        ptx.cluster.arrive(release=True, aligned=True)
        ptx.cluster.wait(acquire=True, aligned=True)
    else:
        ptx.bar.sync(0)
    ptx.tcgen05.fence_after_thread_sync()
    tmem = reg.scalar(u32)
    ptx.inst.ld.shared.u32(tmem, sh.tmem_slot[0])
    return tmem


def teardown(cfg: GemmConfig, roles: Roles, tmem, *, cluster_sync: bool = False):
    """Every warp is done with TMEM (and, in a cluster, the peer with this CTA's barriers):
    the MMA warp frees the accumulator."""
    ptx.tcgen05.fence_before_thread_sync()
    if cluster_sync:
        ptx.cluster.arrive(release=True, aligned=True)
        ptx.cluster.wait(acquire=True, aligned=True)
    else:
        ptx.bar.sync(0)
    with ptx.if_(roles.is_mma_warp):
        ptx.tcgen05.fence_after_thread_sync()
        ptx.tcgen05.dealloc(tmem, cfg.tmem_cols, cta_group=cfg.cta_group)


class Producer:
    """The TMA side of the ring (one thread). ``a_desc`` / ``b_desc``: the tensor maps;
    ``b_coords(k, n)`` gives a B box's coordinates (innermost first)."""

    def __init__(self, cfg: GemmConfig, sh: Shared, a_desc, b_desc, *, b_coords=None,
                 full_bar=None, expect_bytes=None, arrive_pred=None, tma_cta_group=None):
        self.cfg, self.sh, self.a_desc, self.b_desc = cfg, sh, a_desc, b_desc
        self.ring = Ring(cfg.stages)
        self.b_coords = b_coords or (lambda k, n: (n, k))
        self.full_bar = full_bar            # stage -> .shared::cluster address of the barrier
        self.expect_bytes = cfg.stage_bytes if expect_bytes is None else expect_bytes
        self.arrive_pred = arrive_pred      # which threads arm the barrier (None: this one)
        self.tma_cta_group = tma_cta_group
        self.a_base = sh.a_ring.ptr()
        self.b_base = sh.b_ring.ptr()

    def load_tile(self, m0, n0, ktiles: int):
        """Fill the ring with the ``ktiles`` k tiles of the tile at rows ``m0`` (A) and
        columns ``n0`` (B), both u32 registers."""
        cfg, sh, ring = self.cfg, self.sh, self.ring
        k = reg.scalar(u32, 0)
        for _ in ptx.range_(0, ktiles):
            wait(bar_at(sh.empty, ring.stage), ring.phase ^ 1)      # the stage is free
            full = bar_at(sh.full, ring.stage) if self.full_bar is None else \
                self.full_bar(ring.stage)
            ptx.mbarrier.arrive_expect_tx(full, self.expect_bytes,
                                          remote=self.full_bar is not None,
                                          pred=self.arrive_pred)
            a_dst = self.a_base + ring.stage * cfg.a_bytes
            ptx.cp.async_.bulk.tensor_2d(dst=ptx.addr(a_dst), src=self.a_desc, coord=(k, m0),
                                         mbar=ptx.addr(full), cta_group=self.tma_cta_group)
            b_dst = self.b_base + ring.stage * cfg.b_bytes
            for j in range(cfg.b_boxes):
                coords = self.b_coords(k, n0 + j * BOX_N if j else n0)
                tensor = getattr(ptx.cp.async_.bulk, f"tensor_{len(coords)}d")
                tensor(dst=ptx.addr(b_dst, j * cfg.b_box_bytes), src=self.b_desc,
                       coord=coords, mbar=ptx.addr(full), cta_group=self.tma_cta_group)
            ptx.inst.add.u32(k, k, BK)
            ring.advance()


class MmaIssuer:
    """The tensor-core side of the ring (one thread)."""

    def __init__(self, cfg: GemmConfig, sh: Shared):
        self.cfg, self.sh = cfg, sh
        self.ring = Ring(cfg.stages)
        self.idesc = reg.scalar(b32, cfg.idesc)
        self.a_desc0 = desc_of(sh.a_ring.ptr(), desc_hi_kmajor())
        self.b_desc0 = desc_of(sh.b_ring.ptr(), desc_hi_mnmajor(cfg.b_box_bytes))

    def mma_tile(self, d_tmem, ktiles: int, done_bar, *, multicast=None):
        """Accumulate the ``ktiles`` k tiles into TMEM at ``d_tmem`` (the first MMA
        overwrites), release each stage to the producer and commit ``done_bar`` (the
        accumulator is complete) at the end. ``multicast``: a CTA mask, the commits arrive on
        the barriers at the same offsets in those CTAs (``cta_group::2``)."""
        cfg, sh, ring = self.cfg, self.sh, self.ring
        cg = cfg.cta_group
        accumulate = reg.scalar(u32, 0)
        for _ in ptx.range_(0, ktiles):
            wait(bar_at(sh.full, ring.stage), ring.phase)
            ptx.tcgen05.fence_after_thread_sync()
            a = self.a_desc0 + reg.cvt(ring.stage * (cfg.a_bytes >> 4), u64)
            b = self.b_desc0 + reg.cvt(ring.stage * (cfg.b_bytes >> 4), u64)
            for j in range(BK // 16):
                en = accumulate != 0 if j == 0 else 1
                ptx.tcgen05.mma(d_tmem, ptx.tcgen05.desc_advance(a, 32 * j) if j else a,
                                ptx.tcgen05.desc_advance(b, 16 * 128 * j) if j else b,
                                self.idesc, en, kind="f16", cta_group=cg)
            ptx.tcgen05.commit(bar_at(sh.empty, ring.stage), cta_group=cg, cluster=True,
                               multicast=multicast)
            ptx.inst.mov.u32(accumulate, 1)
            ring.advance()
        ptx.tcgen05.commit(done_bar, cta_group=cg, multicast=multicast, cluster=True)


# ----------------------------------------------------------------------------- epilogues
def load_chunk(cfg: GemmConfig, taddr, c: int):
    """This thread's row of accumulator columns ``c * out_cols ..``: ``out_cols`` f32
    registers (``tcgen05.ld.32x32b``; waits for them)."""
    regs = ptx.tcgen05.ld(taddr + c * cfg.out_cols if c else taddr, "32x32b", cfg.out_cols)
    ptx.tcgen05.wait_ld()
    return regs


def pack_chunk(cfg: GemmConfig, regs) -> list:
    """The 16-byte pieces (lists of four b32) of a row chunk in the output type."""
    if cfg.out_dtype.name == "f32":
        return [[regs[4 * j + i] for i in range(4)] for j in range(cfg.out_cols // 4)]
    t = f"{cfg.out_dtype.name}x2"
    words = [ptx.cvt.pack(regs[2 * i + 1], regs[2 * i], t) for i in range(cfg.out_cols // 2)]
    return [words[4 * j:4 * j + 4] for j in range(len(words) // 4)]


class TmaEpilogue:
    """Epilogue warps: TMEM -> registers -> a 128B-swizzled staging buffer (two per warp,
    alternating) -> TMA store of a ``32 x out_cols`` box (module docstring)."""

    def __init__(self, cfg: GemmConfig, sh: Shared, roles: Roles, c_desc):
        self.cfg, self.roles, self.c_desc = cfg, roles, c_desc
        buf = sh.staging.ptr() + (roles.quarter << 13)           # 2 x 4 KiB per warp
        lane = roles.lane
        self.row_base = buf + (lane << 7)
        self.swz = lane & 7                                       # 128B swizzle of row `lane`
        self.buf0 = buf
        self.leader = lane == 0
        self.which = reg.scalar(u32, 0)                           # byte offset of the buffer

    def store_tile(self, taddr, m0, n0, on_loaded=None):
        """Store the accumulator at ``taddr`` (lane 0 of this warp's quarter added by the
        caller) as the tile at (``m0``, ``n0``). ``on_loaded()`` is traced right after the last
        TMEM load (the accumulator may then be reused)."""
        cfg, roles = self.cfg, self.roles
        row0 = m0 + (roles.quarter << 5)
        for c in range(cfg.chunks):
            regs = load_chunk(cfg, taddr, c)
            if c == cfg.chunks - 1 and on_loaded is not None:
                on_loaded()
            # the TMA store that read this buffer (two stores ago) has finished reading it
            with ptx.if_(self.leader):
                ptx.cp.async_.bulk.wait_group(1, read=True)
            ptx.bar.warp_sync()
            row = self.row_base + self.which
            for j, piece in enumerate(pack_chunk(cfg, regs)):
                ptx.inst.st.shared.v4.b32(ptx.addr(row + ((self.swz ^ j) << 4)), piece)
            ptx.fence.proxy_async_shared_cta()
            ptx.bar.warp_sync()
            with ptx.if_(self.leader):
                ptx.cp.async_.bulk.tensor_2d.store(
                    dst=self.c_desc, coord=(n0 + c * cfg.out_cols if c else n0, row0),
                    src=ptx.addr(self.buf0 + self.which))
                ptx.cp.async_.bulk.commit_group()
            ptx.inst.xor.b32(self.which, self.which, 4096)

    def finish(self):
        """Wait until this warp's stores are done (before the CTA exits)."""
        with ptx.if_(self.leader):
            ptx.cp.async_.bulk.wait_group(0)


class DirectEpilogue:
    """Epilogue warps: TMEM -> registers -> predicated ``st.global.v4`` of this thread's row
    (rows at or past ``row_end`` and columns past N are not written)."""

    def __init__(self, cfg: GemmConfig, roles: Roles, C):
        self.cfg, self.roles, self.C = cfg, roles, C
        self.N = C.shape[1]
        self.c_ptr = C.ptr()

    def store_tile(self, taddr, m0, n0, row_end, on_loaded=None):
        """Store the accumulator at ``taddr`` as the tile at (``m0``, ``n0``), rows below
        ``row_end`` only; ``on_loaded()`` as in ``TmaEpilogue.store_tile``."""
        cfg, roles = self.cfg, self.roles
        row = m0 + (roles.quarter << 5) + roles.lane
        row_ok = row < row_end
        ob = cfg.out_dtype.nbytes
        at = self.c_ptr + (reg.cvt(row, u64) * self.N + reg.cvt(n0, u64)) * ob
        per = 16 // ob                                           # columns per 16-byte piece
        ragged = self.N % cfg.bn != 0
        for c in range(cfg.chunks):
            regs = load_chunk(cfg, taddr, c)
            if c == cfg.chunks - 1 and on_loaded is not None:
                on_loaded()
            for j, piece in enumerate(pack_chunk(cfg, regs)):
                col = c * cfg.out_cols + j * per
                ok = row_ok
                if ragged:
                    ok = row_ok & ((n0 + col if col else n0) < self.N)
                ptx.inst.st.global_.v4.b32(ptx.addr(at, col * ob), piece, pred=ok)


# ----------------------------------------------------------------------------- schedules
def divmod_const(x, n: int):
    """(x / n, x % n) of a u32 register by a trace-time constant (shifts for powers of two;
    ptxas turns the others into a multiply-high)."""
    if n & (n - 1) == 0:
        return x >> (n.bit_length() - 1), x & (n - 1)
    q = reg.scalar(u32)
    ptx.inst.div.u32(q, x, n)
    return q, x - q * n


def static_tiles(m_tiles: int, n_tiles: int, bn: int, bm: int = BM):
    """A persistent CTA's tiles, in a PTX loop: tile ``t = ctaid.x + i * nctaid.x`` while
    ``t < m_tiles * n_tiles``; tile ``t`` is M tile ``t % m_tiles`` of N column
    ``t / m_tiles`` (CTAs running at the same time share B's column panel in L2). Yields
    ``(m0, n0)`` once (the loop body is traced once)."""
    t = reg.from_(ptx.special.ctaid.x(), u32)
    step = reg.from_(ptx.special.nctaid.x(), u32)
    total = m_tiles * n_tiles
    with ptx.while_(lambda: t < total):
        nt, mt = divmod_const(t, m_tiles)
        yield mt * bm, nt * bn
        ptx.inst.add.u32(t, t, step)


def persistent_roles(cfg: GemmConfig, sh: Shared, roles: Roles, tmem, tiles, ktiles: int,
                     load, store):
    """The three roles of a persistent kernel, each walking ``tiles()`` (a fresh iterator of
    this CTA's tiles, a PTX loop yielding a tuple per tile):

    * producer (one lane of warp 0): ``load(tile)`` streams the tile's k tiles into the ring;
    * MMA (one lane of warp 1): accumulator ``i % 2`` per tile, after ``acc_empty``;
    * epilogue (warps 2-5): ``store(tile, taddr, release)`` reads the accumulator at
      ``taddr`` and calls ``release()`` after its last TMEM load.
    """
    with ptx.if_(roles.is_producer_warp):
        with ptx.if_(ptx.warp.elect_one()):
            for tile in tiles():
                load(tile)
    with ptx.if_(roles.is_mma_warp):
        with ptx.if_(ptx.warp.elect_one()):
            mma = MmaIssuer(cfg, sh)
            acc = Ring(cfg.acc_stages)
            for _ in tiles():
                wait(bar_at(sh.acc_empty, acc.stage), acc.phase ^ 1)   # the epilogue drained it
                ptx.tcgen05.fence_after_thread_sync()
                mma.mma_tile(tmem + acc.stage * cfg.bn, ktiles, bar_at(sh.acc_full, acc.stage))
                acc.advance()
    with ptx.if_(roles.is_epilogue):
        acc = Ring(cfg.acc_stages)
        lanes = tmem + (roles.quarter << 21)
        for tile in tiles():
            wait(bar_at(sh.acc_full, acc.stage), acc.phase)
            ptx.tcgen05.fence_after_thread_sync()

            def release(acc=acc):
                ptx.tcgen05.fence_before_thread_sync()
                ptx.mbarrier.arrive(bar_at(sh.acc_empty, acc.stage))
            store(tile, lanes + acc.stage * cfg.bn, release)
            acc.advance()
