"""The Tensor Memory Accelerator's data movement: which tensor elements a box covers (tiled,
``tile::gather4`` and im2col modes), where they land in shared memory (dense, innermost
dimension fastest, then swizzled), out-of-bound fill, and the copies themselves (load into shared
memory, store and reduce into global memory). Whole boxes move as NumPy gathers and scatters.

Tiled mode (PTX ISA "Tensor Access Modes"): the box starts at the instruction's coordinates
(signed, innermost first) and covers ``ceil(box_dim[i] / element_stride[i])`` elements along
dimension ``i``, ``element_stride[i]`` apart (dimension 0 ignores its element stride unless the
map is interleaved). Elements outside ``[0, global_dim[i])`` are out of bounds: a load fills them
with zeros (or NaN with the NaN fill), a store or reduction skips them and does not read their
shared-memory bytes either (``store_units``): a GEMM epilogue that keeps 72-element rows (64
values and 8 of padding it never writes) and stores them with a 72-wide box over a 64-wide
tensor stores clean, while an unwritten byte of an element inside the tensor is still an
uninitialized read.

im2col mode: dimension 0 is the channel, dimensions 1..rank-2 are spatial (W, H, D), dimension
rank-1 the batch (N). The map's pixel box spans, along spatial dimension ``s``, the positions
``lower[s] .. global_dim[s] - 1 + upper[s]`` stepping by ``element_stride[s]``. A load gathers
``pixels`` consecutive pixels of that box in traversal order (W fastest, then H, D, then the
next image N), starting at the position the instruction's spatial and batch coordinates name;
each pixel is read at its position plus the instruction's im2col offsets (the filter tap), with
``channels`` channels from the channel coordinate. Shared memory holds ``pixels x channels``
elements. ``.im2col_no_offs`` stores traverse the same way with zero offsets.

Packed sub-byte types (``tensormap`` module doc; ``PackedBox``): the box's elements are the same
as for any type (positions in elements), found at bit offsets of global memory (4 or 6 bits
each, element ``i`` of a byte from its low bits, the order the tcgen05 operand decoder reads).
In shared memory each box row (``box_dim[0]`` elements; im2col: ``channels``; gather4:
``box_dim[0]``) is cut into groups of 16 elements, and group ``g`` of row ``r`` is the unit at
byte ``(r * ceil(row / 16) + g) * unit`` of the box (``unit``: 8 bytes for ``.b4x16``, 16 for
``.b4x16_p64`` and ``.b6x16_p32``), its elements packed from the unit's first bit. The swizzle
then moves bytes as for any type. A load writes every byte of the box's shared footprint:
out-of-bound elements as zero bits, and the gap after the packed bytes of each 16-byte unit as
zero bytes (the documentation calls it empty space and gives it no value; the interpreter makes
it zero and defined, so that an operand read of whole 16-byte units sees written bytes). The
footprint is ``rows * ceil(row / 16) * unit`` bytes (a box of 128 x 128 fp4 elements as
``.b4x16_p64`` is 16384 bytes, as ``.b4x16`` 8192), but the mbarrier's ``complete_tx`` counts
the packed bytes the copy moves, ``elements * bits / 8`` (8192 for that box either way):
Triton's block-scaled fp8 x fp4 matmul, run on B200s, announces ``expect_tx`` 8192 for a
128 x 128 ``16U4_ALIGN16B`` box it lands in a 16384-byte buffer (``tx_bytes``). A store reads only the shared bytes that
hold an in-bound element's bits (never a gap) and writes those bits into global memory,
leaving the other bits of each global byte as they were.
"""
from __future__ import annotations

import numpy as np

from ...errors import InterpreterError
from ..state import memory as M
from ..state import tensormap as TM

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Box:
    """The elements a TMA operation covers: byte offsets from the tensor's global address and
    which are in bounds (``valid``; None when all are). The units it moves to or from shared
    memory are its ``n`` elements of ``esz`` bytes. ``grid``: ``(first offset, shape,
    strides)`` of the offsets as an affine nest (outermost first) when the box is a tile (its
    global addresses are a strided slice, ``gather_global``), else None. A tile's ``offs`` are
    made on first use (``rel``, the plan's offsets, plus its first offset): a box that moves as
    a slice never needs them."""

    __slots__ = ("_offs", "_rel", "valid", "n", "esz", "grid")

    def __init__(self, offs, valid, esz, grid=None, rel=None):
        self._offs, self._rel, self.valid, self.esz, self.grid = offs, rel, valid, esz, grid
        self.n = len(offs if offs is not None else rel)

    @property
    def offs(self):
        if self._offs is None:
            self._offs = self.grid[0] + self._rel
        return self._offs

    @property
    def nbytes(self) -> int:
        return self.n * self.esz

    @property
    def tx_bytes(self) -> int:
        """The bytes an mbarrier's complete_tx counts for the copy."""
        return self.n * self.esz


class PackedBox:
    """A box of a packed sub-byte type (module doc): its ``count`` elements at global *bit*
    offsets ``bitoffs`` from the tensor's address (``valid`` as for ``Box``), rows of ``inner``
    elements. As ``Box``, it moves ``n`` units of ``esz`` bytes to or from shared memory: here
    the ``n`` bytes of its shared footprint; ``sbits`` is each element's first bit in it."""

    __slots__ = ("bitoffs", "valid", "count", "bits", "inner", "unit", "row_bytes", "n", "esz", "sbits")

    def __init__(self, bitoffs, valid, bits: int, inner: int, unit: int):
        self.bitoffs, self.valid, self.bits, self.inner, self.unit = bitoffs, valid, bits, inner, unit
        self.count = len(bitoffs)
        self.row_bytes = -(-inner // 16) * unit
        rows = self.count // inner if inner else 0
        self.n, self.esz = rows * self.row_bytes, 1
        k = np.arange(self.count, dtype=np.int64)
        i = k % inner
        self.sbits = ((k // inner) * self.row_bytes + (i // 16) * unit) * 8 + (i % 16) * bits

    @property
    def nbytes(self) -> int:
        return self.n

    @property
    def tx_bytes(self) -> int:
        """The bytes an mbarrier's complete_tx counts: the packed elements (module doc)."""
        return -(-self.count * self.bits // 8)


def _dim_stride(f, i):
    return 1 if (i == 0 and f.interleave == 0) else f.element_strides[i]


class _TilePlan:
    """What a tiled map's boxes share: ``counts`` and ``steps`` per dimension, ``strides`` (its
    global strides, ints), ``rel`` (the relative byte offsets of a box in shared order),
    ``shape`` and ``nstrides`` (those offsets as a nest: the dimensions of more than one
    element, outermost first) and ``lims`` (a box starting at ``c`` is in bounds when ``0 <=
    c[i] < lims[i]`` along every dimension)."""

    __slots__ = ("counts", "steps", "strides", "rel", "shape", "nstrides", "lims")

    def __init__(self, f):
        self.steps = [_dim_stride(f, i) for i in range(f.rank)]
        self.counts = [-(-f.box[i] // self.steps[i]) for i in range(f.rank)]
        self.strides = [int(s) for s in f.strides]
        self.rel = _grid([self.steps[i] * np.arange(self.counts[i], dtype=np.int64) for i in range(f.rank)],
                         f.strides)
        dims = [(self.counts[i], self.steps[i] * self.strides[i]) for i in reversed(range(f.rank))
                if self.counts[i] > 1]
        self.shape, self.nstrides = [c for c, _ in dims], [s for _, s in dims]
        self.lims = [int(f.dims[i]) - (self.counts[i] - 1) * self.steps[i] for i in range(f.rank)]


_TILES: dict = {}


def tile_plan(f) -> _TilePlan:
    """The ``_TilePlan`` of a tiled map, keyed by what it depends on (not the tensor's address:
    a new launch's tensors have new addresses)."""
    key = (f.rank, f.box, f.element_strides, f.strides, f.interleave, f.dims)
    got = _TILES.get(key)
    if got is None:
        if len(_TILES) > 1024:
            _TILES.clear()
        got = _TILES[key] = _TilePlan(f)
    return got


def _grid(idx, strides):
    r = len(idx)
    offs = np.zeros(tuple(len(v) for v in reversed(idx)), np.int64)
    for i, v in enumerate(idx):
        sh = [1] * r
        sh[r - 1 - i] = len(v)
        offs = offs + v.reshape(sh) * int(strides[i])
    return offs.reshape(-1)


def tile_box(f: TM.TensorMapFields, coords) -> Box:
    """The elements of a tiled-mode box at ``coords`` (innermost first, ints), in shared order."""
    p = tile_plan(f)
    c = coords
    start = sum(map(int.__mul__, c, p.strides))
    if all(map(inside, c, p.lims)):
        if not p.shape:
            return Box(start + p.rel, None, f.elem_size)
        return Box(None, None, f.elem_size, (start, p.shape, p.nstrides), p.rel)
    r = f.rank
    counts, steps = p.counts, p.steps
    valid = np.ones(tuple(reversed(counts)), bool)
    for i in range(r):
        v = c[i] + steps[i] * np.arange(counts[i], dtype=np.int64)
        sh = [1] * r
        sh[r - 1 - i] = counts[i]
        valid = valid & ((v >= 0) & (v < int(f.dims[i]))).reshape(sh)
    return Box(start + p.rel, valid.reshape(-1), f.elem_size)


def inside(c: int, lim: int) -> bool:
    return 0 <= c < lim


def gather4_box(f, coords) -> Box:
    """``.tile::gather4``: ``box_dim[0]`` elements from column ``coords[0]`` of each of the four
    rows ``coords[1..4]`` of a 2-D map."""
    if f.rank != 2:
        raise InterpreterError(f".tile::gather4 needs a 2-D tensor map, this one has rank {f.rank}")
    cols = int(coords[0]) + np.arange(f.box[0], dtype=np.int64)
    rows = np.asarray([int(c) for c in coords[1:5]], np.int64)
    offs = rows[:, None] * int(f.strides[1]) + cols[None, :] * int(f.strides[0])
    valid = ((rows >= 0) & (rows < f.dims[1]))[:, None] & ((cols >= 0) & (cols < f.dims[0]))[None, :]
    return Box(offs.reshape(-1), valid.reshape(-1), f.elem_size)


def im2col_box(f, coords, offsets) -> Box:
    """An im2col box (see the module doc): ``pixels x channels`` elements."""
    r = f.rank
    ns = r - 2
    offsets = [int(o) for o in offsets] if offsets is not None else [0] * ns
    if len(offsets) != ns:
        raise InterpreterError(f"an im2col copy of a rank-{r} tensor takes {ns} im2col offsets, got "
                               f"{len(offsets)}")
    lo = [int(f.lower[s]) for s in range(ns)]
    step = [int(f.element_strides[s + 1]) for s in range(ns)]
    hi = [int(f.dims[s + 1]) - 1 + int(f.upper[s]) for s in range(ns)]
    m = [max((hi[s] - lo[s]) // step[s] + 1, 0) for s in range(ns)]
    if 0 in m:
        raise InterpreterError(f"the im2col pixel box of this tensor map is empty (corners {f.lower}, "
                               f"{f.upper}, dims {f.dims})")
    # linear position of the first pixel in the traversal (W fastest, then H, D, N)
    lin = int(coords[r - 1])
    for s in reversed(range(ns)):
        lin = lin * m[s] + (int(coords[s + 1]) - lo[s]) // step[s]
    j = lin + np.arange(f.pixels, dtype=np.int64)
    pos = []
    rest = j
    for s in range(ns):
        t = rest % m[s]
        rest = rest // m[s]
        pos.append(lo[s] + t * step[s] + offsets[s])
    n_img = rest
    ch = int(coords[0]) + np.arange(f.channels, dtype=np.int64)
    poff = n_img * int(f.strides[r - 1])
    pval = (n_img >= 0) & (n_img < f.dims[r - 1])
    for s in range(ns):
        poff = poff + pos[s] * int(f.strides[s + 1])
        pval = pval & (pos[s] >= 0) & (pos[s] < f.dims[s + 1])
    offs = poff[:, None] + ch[None, :] * int(f.strides[0])
    valid = pval[:, None] & ((ch >= 0) & (ch < f.dims[0]))[None, :]
    return Box(offs.reshape(-1), valid.reshape(-1), f.elem_size)


_BITF: dict = {}


def make_box(f, mode: str, coords, offsets=None):
    """The ``Box`` (a ``PackedBox`` for a packed sub-byte type) of a copy in ``mode`` ("tile",
    "gather4", "im2col") at ``coords``."""
    if not f.packed:
        return _make_box(f, mode, coords, offsets)
    bitf = _BITF.get(f)
    if bitf is None:
        from dataclasses import replace
        bits = f.elem_bits          # the same box, its offsets counted in bits
        bitf = replace(f, strides=(bits,) + tuple(8 * int(s) for s in f.strides[1:]))
        if len(_BITF) > 256:
            _BITF.clear()
        _BITF[f] = bitf
    b = _make_box(bitf, mode, coords, offsets)
    inner = f.channels if mode == "im2col" else f.box[0]
    return PackedBox(b.offs, b.valid, f.elem_bits, inner, TM.PACKED[f.elemtype][1])


def _make_box(f, mode: str, coords, offsets=None) -> Box:
    if mode == "tile":
        if f.mode != 0:
            raise InterpreterError("a tiled-mode copy uses an im2col tensor map")
        return tile_box(f, coords)
    if mode == "gather4":
        return gather4_box(f, coords)
    if f.mode != 1:
        raise InterpreterError(f"an {mode} copy uses a tiled tensor map (its pixel box, channels "
                               f"and pixels are not set)")
    return im2col_box(f, coords, offsets)


def smem_slots(f, dst_off: int, n: int, esz: int, shared_size: int):
    """Swizzled shared byte offsets of ``n`` elements stored densely from ``dst_off``."""
    lin = int(dst_off) + esz * np.arange(n, dtype=np.int64)
    phys = TM.swizzle(lin, f.swizzle, f.atomicity)
    hi = int(phys.max()) + esz if n else 0
    if hi > shared_size:
        raise M.MemoryFault("out-of-bounds", 0, int(dst_off),
                            f"the box ({n * esz} bytes from shared address {int(dst_off):#x}) ends "
                            f"{hi - shared_size} bytes past the end of this CTA's shared memory "
                            f"({shared_size} bytes)", "shared")
    return phys


def fill_value(f) -> int:
    """The bits an out-of-bound element loads as."""
    if f.fill == 1 and f.is_float:
        es = f.elem_size
        if f.elemtype == 10:
            return 0x7FFF
        return TM.NAN_BITS[es]
    return 0


def gather_global(ctx, f, box):
    """The box's element bits from global memory (out-of-bound ones filled); for a
    ``PackedBox``, the bytes of its shared footprint (module doc)."""
    if isinstance(box, PackedBox):
        return _gather_packed(ctx, f, box)
    dt = np.dtype(_UINT[box.esz])
    v = box.valid
    try:
        if v is None:
            if box.grid is not None:        # a slice, when its checks pass on ints
                rel, shape, strides = box.grid
                got = ctx.mem.gspace.load_nest(int(f.address) + rel, shape, strides, dt)
                if got is not None:
                    return got
            addrs = np.uint64(f.address) + box.offs.astype(np.uint64)
            return ctx.mem.gspace.load(addrs, dt, 1, span=_tile_span(f, box, addrs))[:, 0]
        out = np.full(box.n, fill_value(f), dt)
        if v.any():
            out[v] = ctx.mem.gspace.load(np.uint64(f.address) + box.offs[v].astype(np.uint64), dt, 1)[:, 0]
        return out
    except M.MemoryFault as e:
        e.detail += f" (an element of the tensor map {TM.describe(f)})"
        e.lane = 0
        raise


def _tile_span(f, box, addrs):
    """A ``Span`` of the global addresses ``addrs`` of an in-bound tile ``box`` carrying their
    nest (its dimensions and strides: not searched for), or None."""
    if box.grid is None:
        return None
    rel, shape, strides = box.grid
    first = int(f.address) + rel
    last = first + sum((n - 1) * s for n, s in zip(shape, strides))
    return M.Span(addrs, known=(first, shape, strides, last)) if 0 <= rel and last < 1 << 64 else None


def scatter_global(ctx, f, box, vals, op=None, ptype=None):
    """Write (or, with ``op``, reduce) the in-bound elements of the box into global memory;
    ``vals``: the box's units read from shared memory (only those ``store_units`` names need
    hold the data)."""
    if isinstance(box, PackedBox):
        return _scatter_packed(ctx, f, box, vals)
    v = box.valid
    if v is not None and not v.any():
        return
    if v is None and op is None and box.grid is not None:     # a slice, when its checks pass on ints
        rel, shape, strides = box.grid
        if ctx.mem.gspace.store_nest(int(f.address) + rel, shape, strides, vals):
            return
    offs = box.offs if v is None else box.offs[v]
    addrs = np.uint64(f.address) + offs.astype(np.uint64)
    new = vals if v is None else vals[v]
    span = _tile_span(f, box, addrs) if v is None else None
    try:
        if op is not None:
            old = ctx.mem.gspace.load(addrs, new.dtype, 1, span=span)[:, 0]
            new = reduce_bits(op, ptype, old, new)
        ctx.mem.gspace.store(addrs, new[:, None], span=span)
    except M.MemoryFault as e:
        e.detail += f" (an element of the tensor map {TM.describe(f)})"
        e.lane = 0
        raise


def store_units(box):
    """The units of ``box`` (indices into its shared order) a store reads: the in-bound
    elements of a ``Box`` (None: all of them), the shared bytes holding an in-bound element's
    bits of a ``PackedBox``. The TMA drops what falls outside the tensor, so what shared memory
    holds there (padding nobody wrote) is never read."""
    v = box.valid
    if not isinstance(box, PackedBox):
        return None if v is None or v.all() else np.flatnonzero(v)
    pos = box.sbits if v is None else box.sbits[v]
    first = pos >> 3
    over = (pos & 7) + box.bits > 8                 # a 6-bit field running into the next byte
    return np.unique(np.concatenate([first, first[over] + 1]))


def direction_problem(f, what: str):
    """Why a tensor map of a packed sub-byte type cannot be used for ``what`` ("load", "store",
    or a reduction's name), or None (the driver's per-direction swizzle rules; the ISA's
    reduction types)."""
    if not f.packed:
        return None
    name = f"{f.type_name} ({TM.PACKED[f.elemtype][2]})"
    if what not in ("load", "store"):
        return (f"a .{what} reduction into the packed sub-byte type {name}: tensor reductions take "
                f"whole-byte element types only")
    ok = TM.PACKED_SWIZZLES.get(f.elemtype)
    if ok is not None and what not in ok.get((f.swizzle, f.atomicity), ""):
        sw = TM._swizzle_name(f.swizzle, f.atomicity)
        uses = ", ".join(f"{TM._swizzle_name(*k)} ({u})" for k, u in ok.items())
        return f"a TMA {what} with a {name} map swizzled {sw}; the driver allows: {uses}"
    return None


def _fields(data, at, nxt, sh, bits: int):
    """The ``bits``-wide fields of byte array ``data`` starting at bit ``sh`` of byte ``at``,
    running into byte ``nxt`` where they do not fit."""
    sh = sh.astype(np.uint16)
    v = data[at].astype(np.uint16) >> sh
    over = sh + bits > 8
    if over.any():
        hi = np.zeros(len(at), np.uint16)
        hi[over] = data[nxt[over]]
        v = v | (hi << (np.uint16(8) - sh))
    return (v & np.uint16((1 << bits) - 1)).astype(np.uint8)


def _put_fields(data, at, nxt, sh, codes, bits: int):
    """OR the ``bits``-wide ``codes`` into byte array ``data`` (as ``_fields`` places them)."""
    c = codes.astype(np.uint16) << sh.astype(np.uint16)
    np.bitwise_or.at(data, at, (c & 0xFF).astype(np.uint8))
    over = (c >> 8) != 0
    if over.any():
        np.bitwise_or.at(data, nxt[over], (c[over] >> 8).astype(np.uint8))


def _dense(bitpos):
    """(byte, next byte, bit shift) of fields at ``bitpos`` of a dense byte array."""
    at = bitpos >> 3
    return at, at + 1, bitpos & 7


def _sparse(bitpos, bits: int):
    """The distinct bytes fields at ``bitpos`` (from the tensor's address) touch, sorted, and
    (index of the first, index of the next, bit shift) of each field in that list."""
    first = bitpos >> 3
    sh = bitpos & 7
    over = sh + bits > 8
    touched = np.unique(np.concatenate([first, first[over] + 1]))
    at = np.searchsorted(touched, first)
    return touched, at, np.minimum(at + 1, len(touched) - 1), sh


def _gather_packed(ctx, f, box: PackedBox):
    out = np.zeros(box.n, np.uint8)
    v = box.valid
    pos = box.bitoffs if v is None else box.bitoffs[v]
    if not len(pos):
        return out
    touched, at, nxt, sh = _sparse(pos, box.bits)
    try:
        raw = ctx.mem.gspace.load(np.uint64(f.address) + touched.astype(np.uint64), np.uint8, 1)[:, 0]
    except M.MemoryFault as e:
        e.detail += f" (an element of the tensor map {TM.describe(f)})"
        e.lane = 0
        raise
    codes = _fields(raw, at, nxt, sh, box.bits)
    _put_fields(out, *_dense(box.sbits if v is None else box.sbits[v]), codes, box.bits)
    return out


def _scatter_packed(ctx, f, box: PackedBox, image):
    v = box.valid
    pos = box.bitoffs if v is None else box.bitoffs[v]
    if not len(pos):
        return
    codes = _fields(np.asarray(image, np.uint8), *_dense(box.sbits if v is None else box.sbits[v]),
                    box.bits)
    touched, at, nxt, sh = _sparse(pos, box.bits)
    new = np.zeros(len(touched), np.uint8)
    mask = np.zeros(len(touched), np.uint8)
    _put_fields(new, at, nxt, sh, codes, box.bits)
    _put_fields(mask, at, nxt, sh, np.full(len(pos), (1 << box.bits) - 1, np.uint8), box.bits)
    addrs = np.uint64(f.address) + touched.astype(np.uint64)
    try:
        old = ctx.mem.gspace.load(addrs, np.uint8, 1)[:, 0]
        ctx.mem.gspace.store(addrs, ((old & ~mask) | new)[:, None])
    except M.MemoryFault as e:
        e.detail += f" (an element of the tensor map {TM.describe(f)})"
        e.lane = 0
        raise


# ----------------------------------------------------------------------------- reductions
REDUCE_TYPES = {0: "u8", 1: "u16", 2: "u32", 3: "s32", 4: "u64", 5: "s64", 6: "f16", 7: "f32",
                8: "f32.ftz", 9: "f64", 10: "bf16", 11: "f32", 12: "f32.ftz"}


def reduce_bits(op: str, tname: str, old, new):
    """``op`` (add, min, max, inc, dec, and, or, xor) of element bits ``old`` and ``new`` of
    type ``tname``, as the bulk reductions compute it; returns the new bits."""
    ud = old.dtype
    if op in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](old, new)
    if tname[0] in "us":
        sd = np.dtype(("i" if tname[0] == "s" else "u") + str(ud.itemsize))
        a, b = old.view(sd), new.view(sd)
        if op == "add":
            r = a + b
        elif op == "min":
            r = np.minimum(a, b)
        elif op == "max":
            r = np.maximum(a, b)
        elif op == "inc":
            r = np.where(a >= b, sd.type(0), a + sd.type(1))
        elif op == "dec":
            r = np.where((a == 0) | (a > b), b, a - sd.type(1))
        else:
            raise InterpreterError(f"no .{op} reduction on .{tname}")
        return r.astype(sd).view(ud)
    if tname in ("f32", "f32.ftz", "f64"):
        fd = np.float32 if tname != "f64" else np.float64
        a, b = old.view(fd), new.view(fd)
        if tname == "f32.ftz":
            from ..state.fp import ftz32
            a, b = ftz32(a), ftz32(b)
        if op == "add":
            r = (a + b).astype(fd)
        elif op in ("min", "max"):
            r = (np.fmin if op == "min" else np.fmax)(a, b).astype(fd)
        else:
            raise InterpreterError(f"no .{op} reduction on .{tname}")
        if tname == "f32.ftz":
            from ..state.fp import ftz32
            r = ftz32(r)
        return r.view(ud)
    # f16 / bf16: exact arithmetic, one rounding
    from ...types import bf16, f16
    from .floating import Lanes, _narrow_result
    L = Lanes(f16 if tname == "f16" else bf16)
    a, b = L.dec(old.view(np.uint16)), L.dec(new.view(np.uint16))
    if op == "add":
        r = a + b
    elif op in ("min", "max"):
        r = (np.fmin if op == "min" else np.fmax)(a, b)
    else:
        raise InterpreterError(f"no .{op} reduction on .{tname}")
    out = _narrow_result(L, r, "rn")
    return np.asarray(out).view(np.uint16).view(ud)
