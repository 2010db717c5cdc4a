"""Building blocks of the Hopper (sm_90a) tensor-core kernels: the mbarrier stage ring, the
wgmma operand descriptors of 128B-swizzled TMA tiles, and the swizzled, TMA-stored epilogue.

Shared by ``gemm.py``, ``grouped_gemm.py`` and ``attention.py``; each function emits PTX into
the kernel being traced.

128B swizzle (PTX ISA, "Tensor-map swizzle modes" and "Matrix Descriptor Format"): TMA writes
a box whose rows are 128 bytes so that, inside every 1024-byte atom (8 rows), the 16-byte chunk
``c`` of row ``r`` lands at chunk ``c ^ (r % 8)``: byte-address bits [4:6] XOR bits [7:9].
wgmma reads the same layout through a descriptor whose swizzle field says 128B:

* a **K-major** operand (A[M, K] row-major, or B stored [N, K]): rows of 64 bf16/f16 along K,
  8-row groups 1024 bytes apart (SBO = 1024; LBO unused, 16 by convention); the k16 slice
  ``kk`` of a 64-wide K tile starts ``32 * kk`` bytes into the row;
* an **MN-major** operand (B[K, N] row-major, wgmma ``trans-b = 1``): TMA boxes of
  ``rows x 64`` columns, K rows 128 bytes apart, 8-row K groups 1024 bytes apart (SBO = 1024),
  the next 64 columns one box further (LBO = box bytes); the k16 slice ``kk`` starts
  ``16 * 128 * kk`` bytes in.
"""
from __future__ import annotations

from jax_pyptx import ptx, reg
from jax_pyptx.types import b64, u32

__all__ = ["LAUNCH_BOUNDS", "MAX_SMEM", "check_smem", "SW128", "StageRing", "barrier_at",
           "kmajor_desc", "mnmajor_desc", "advance_desc", "EpilogueStore", "release_stage",
           "PRODUCER_REGS", "CONSUMER_REGS", "grouped_order", "grouped_tile"]

MAX_SMEM = 232448    # 227 KiB: the most dynamic shared memory a CTA of sm_90 may request
SW128 = 128          # TMA swizzle (bytes) every operand tile of these kernels uses
ATOM = 1024          # bytes of one 128B-swizzle atom: 8 rows of 128 bytes

# setmaxnreg moves registers between the warpgroups of a CTA, out of the pool the CTA got at
# launch: its threads x the kernel's register count. ``.minnctapersm 1`` (with the kernel's
# ``.reqntid``: CUDA's __launch_bounds__(threads, 1)) makes ptxas give the kernel the largest
# count one CTA per SM allows (13.5: 168 for 384 threads, 240 for 256), so the pool is the
# register file. The producer warpgroup, which only issues TMA, drops to 40 per thread; the
# consumers take the rest: 128 x 40 + 256 x 232 = 384 x 168 = 64512 (two consumers); with one,
# 128 x 40 + 128 x 256 <= 256 x 240.
LAUNCH_BOUNDS = (".minnctapersm 1",)
PRODUCER_REGS = 40
CONSUMER_REGS = {1: 256, 2: 232}


class StageRing:
    """The position in a ring of ``stages`` shared-memory stages: ``stage`` (0 .. stages-1)
    and ``phase``, the parity of the mbarrier phase the next use of ``stage`` waits for. It
    flips each time ``stage`` wraps around (a stage's barrier completes once per round).

    A consumer waits on ``full[stage]`` with parity ``phase``; the producer waits on
    ``empty[stage]`` with parity ``phase ^ 1``, which a fresh barrier (in phase 0) passes at
    once: the ring starts with every stage free."""

    def __init__(self, stages: int, stage=0, phase=0):
        self.stages = stages
        self.stage = reg.scalar(u32, stage)
        self.phase = reg.scalar(u32, phase)

    def advance(self):
        """``stage += 1``; on wrapping to 0, ``phase ^= 1`` (in place: loop-carried)."""
        nxt = self.stage + 1
        wrap = nxt == self.stages
        ptx.inst.selp.u32(self.stage, 0, nxt, wrap)
        flipped = self.phase ^ 1
        ptx.inst.selp.u32(self.phase, flipped, self.phase, wrap)


def barrier_at(base, stage):
    """The shared address of mbarrier ``stage`` of an array starting at ``base`` (u32)."""
    return base + (stage << 3)


def kmajor_desc(address):
    """wgmma descriptor (b64 register) of a K-major 128B-swizzled tile at shared ``address``
    (u32 register or buffer): SBO = 1024, LBO = 16 (unused), swizzle 128B."""
    return ptx.wgmma.desc_reg(address, 16, ATOM, "128B")


def mnmajor_desc(address, box_bytes: int):
    """wgmma descriptor of an MN-major 128B-swizzled tile made of TMA boxes of ``rows x 64``
    elements (``box_bytes`` each): LBO = box_bytes (the next 64 columns), SBO = 1024 (the
    next 8 K rows)."""
    return ptx.wgmma.desc_reg(address, box_bytes, ATOM, "128B")


def advance_desc(desc, byte_offset):
    """``desc`` moved ``byte_offset`` bytes (an int, multiple of 16, or a u32 register
    holding a byte offset that is a multiple of 16): the start-address field is in 16-byte
    units, so this adds ``byte_offset >> 4``."""
    if isinstance(byte_offset, int):
        return desc if byte_offset == 0 else ptx.wgmma.desc_advance(desc, byte_offset)
    wide = reg.cvt(byte_offset >> 4, b64)
    out = reg.scalar(b64)
    ptx.inst.add.s64(out, desc, wide)
    return out


def release_stage(empty_base, stage, lane_in_group, cluster: int):
    """A consumer warpgroup frees ``stage``: one arrival on ``empty[stage]`` of every CTA in
    the cluster (their producers multicast into this CTA's stage too). Thread ``r`` of the
    warpgroup signals CTA rank ``r`` (``mapa`` + a remote ``mbarrier.arrive.shared::cluster``);
    without a cluster, thread 0 arrives locally.

    The arrive keeps its default semantics: the stage's readers, the warpgroup's wgmmas, are
    finished (``wgmma.wait_group``), so a release has nothing to order. Spelled
    ``.release.cluster``, ptxas precedes it with ``MEMBAR.ALL.GPU`` on every k step."""
    bar = barrier_at(empty_base, stage)
    if cluster == 1:
        with ptx.if_(lane_in_group == 0):
            ptx.mbarrier.arrive(bar)
        return
    with ptx.if_(lane_in_group < cluster):
        peer = ptx.cluster.mapa(bar, lane_in_group)
        ptx.mbarrier.arrive(peer, remote=True)


def grouped_order(pid, tiles_m, tiles_n, group_m: int):
    """The (M tile, N tile) of the ``pid``-th tile of a ``tiles_m x tiles_n`` grid in *grouped*
    order: ``group_m`` M tiles down one N tile, then the next N tile, and only after every N
    tile the next ``group_m`` M tiles; the last group is what is left. Tiles that run at once
    (a wave of CTAs) then share a few M tiles of A and a few N tiles of B, which stay in L2
    while they run; in launch order (every M tile of an N tile, then the next N tile) a wave
    of an 8192^3 GEMM reads all of A from memory. Python ints, or u32 registers: one function
    gives the kernels' order and the tests'."""
    span = tiles_n * group_m                        # tiles of one full group
    group = pid // span
    first = group * group_m
    rest = tiles_m - first
    size = min(rest, group_m) if isinstance(rest, int) else rest.min(group_m)
    r = pid % span
    return first + r % size, r // size


def grouped_tile(x, y, clusters_m, tiles_n, group_m: int, cluster: int):
    """``grouped_order`` of the CTA at grid position ``(x, y)`` of a grid of ``clusters_m *
    cluster`` x ``tiles_n`` CTAs in launch order (x fastest), clusters of ``cluster`` CTAs (a
    power of two) along x: the clusters are ordered, ``group_m`` M tiles (a multiple of
    ``cluster``) a group, and the CTAs of a cluster keep adjacent M tiles of one N tile."""
    shift = cluster.bit_length() - 1
    pid = (x >> shift if shift else x) + y * clusters_m     # the cluster's place in launch order
    cm, tn = grouped_order(pid, clusters_m, tiles_n, group_m // cluster)
    return (cm * cluster + (x & (cluster - 1)) if shift else cm), tn


class EpilogueStore:
    """The TMA-store epilogue of one consumer warpgroup: its m64 x ``n`` f32 accumulator
    (wgmma fragment) goes out in subtiles of 64 rows x 128 bytes (32 f32 / 64 bf16 columns),
    through two 8 KiB shared buffers in the 128B-swizzle layout the C tensor map uses.

    ``persistent``: ``store`` runs once per tile in a loop, so its first subtiles also wait
    for the stores of the previous tile.

    Per subtile: (after the store two subtiles back has finished reading its buffer) every
    thread converts and writes its fragment into the buffer, ``fence.proxy.async`` makes the
    writes visible to the TMA unit, a named barrier of the warpgroup's 128 threads, and thread
    0 issues ``cp.async.bulk.tensor.2d.global.shared::cta`` and commits the bulk group.

    Fragment (PTX ISA "wgmma register fragments", m64nN f32 D): thread ``t`` (warp ``w`` of
    the warpgroup, lane ``l``) holds element ``i`` at row ``16w + l/4 + 8*((i/2)%2)``, column
    ``8*(i/4) + 2*(l%4) + i%2``; its rows are ``l/4`` mod 8, so its swizzle XOR is ``l >> 2``.
    """

    def __init__(self, out_dtype, buffers, bar_id: int, c_map, warp, lane, lane_in_group,
                 *, persistent: bool = False):
        self.dt = out_dtype
        self.cols = 128 // out_dtype.nbytes          # columns of one subtile
        self.buffers = buffers                       # u32 address of 2 x 8 KiB, 1024-aligned
        self.bar_id, self.c_map = bar_id, c_map
        self.lane_in_group = lane_in_group
        rowbase = buffers + ((warp << 4) + (lane >> 2)) * 128
        x = lane >> 2
        if out_dtype.bits == 32:
            # column byte 32*g + 8*(l%4) + 4*e: chunk 2g + (l%4)/2, byte 8*(l%2) in it
            x = x ^ ((lane & 3) >> 1)
            base = rowbase + ((lane & 1) << 3)
            self.chunk_addr = [base + (((2 * g) ^ x) << 4) for g in range(4)]
        else:
            # column byte 16*g + 4*(l%4) (a packed pair): chunk g, byte 4*(l%4) in it
            base = rowbase + ((lane & 3) << 2)
            self.chunk_addr = [base + ((g ^ x) << 4) for g in range(8)]
        # stores that may still be reading the buffers: a persistent kernel's next tile
        # starts while the last tile's stores are in flight
        self.issued = 2 if persistent else 0

    def store(self, acc, n: int, row0, col0, outer=(), scale=None):
        """Store columns ``0 .. n`` of ``acc`` (m64nN f32) at C[row0 :, col0 :] (registers;
        TMA clips rows and columns outside C). ``outer``: coordinates of the dimensions
        outside the rows (a 3-D tensor map: ``(col, row, *outer)``). ``scale``: two f32
        registers multiplying the thread's rows ``l/4`` and ``l/4 + 8`` on the way out."""
        groups = self.cols // 8                      # accumulator column groups per subtile
        leader = self.lane_in_group == 0
        for j in range(n // self.cols):
            buf = j % 2
            if self.issued >= 2:
                with ptx.if_(leader):                # the store 2 subtiles back read its buffer
                    ptx.cp.async_.bulk.wait_group(1, read=True)
                ptx.bar.sync(self.bar_id, 128)
            for gl in range(groups):
                g = j * groups + gl
                for h in range(2):
                    lo, hi = acc[4 * g + 2 * h], acc[4 * g + 2 * h + 1]
                    if scale is not None:
                        lo, hi = lo * scale[h], hi * scale[h]
                    at = ptx.addr(self.chunk_addr[gl], buf * 8192 + h * 1024)
                    if self.dt.bits == 32:
                        ptx.inst.st.shared.v2.f32(at, [lo, hi])
                    else:
                        packed = ptx.cvt.pack(hi, lo, self.dt.name + "x2")
                        ptx.inst.st.shared.b32(at, packed)
            ptx.fence.proxy_async_shared_cta()
            ptx.bar.sync(self.bar_id, 128)
            with ptx.if_(leader):
                tensor = getattr(ptx.cp.async_.bulk, f"tensor_{2 + len(outer)}d")
                col = col0 + j * self.cols if j else col0
                tensor.store(self.c_map, (col, row0, *outer),
                             ptx.addr(self.buffers, buf * 8192))
                ptx.cp.async_.bulk.commit_group()
            self.issued += 1

    def drain(self):
        """Wait until the TMA unit has read every buffer (before the CTA exits)."""
        with ptx.if_(self.lane_in_group == 0):
            ptx.cp.async_.bulk.wait_group(0, read=True)


def check_smem(fn: str, nbytes: int, what: str):
    """``ValueError`` from builder ``fn`` when a plan needs more shared memory than a CTA can
    have; ``what`` names the parameters that set it."""
    if nbytes > MAX_SMEM:
        raise ValueError(f"{fn}: {what} need {nbytes} bytes of shared memory; a CTA of sm_90 "
                         f"has at most {MAX_SMEM} (227 KiB): use fewer stages or a smaller "
                         f"tile")
