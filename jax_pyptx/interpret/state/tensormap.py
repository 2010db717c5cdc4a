"""Tensor maps (TMA descriptors): the interpreter's 128-byte encoding, its fields, the shared
memory swizzle, and ``tensor_map``, the host helper ``launch`` takes for descriptor params.

A ``CUtensorMap`` is opaque (its bytes are the driver's business), so the interpreter defines
its own 128-byte encoding. It is what ``tensor_map(...)`` writes for ``launch`` and what
``tensormap.replace`` edits on the device; ``cp.async.bulk.tensor`` decodes it. Little-endian:

====== ===== ===================================================================================
offset bytes field
====== ===== ===================================================================================
0      8     global_address (u64)
8      20    global_dim[0..4] (u32 each; innermost dimension first)
28     4     reserved
32     32    global_stride[0..3] (u64 bytes each: the strides of dimensions 1..4; dimension 0's
             stride is the element size)
64     10    box_dim[0..4] (u16 each; tile mode)
74     5     element_stride[0..4] (u8 each; the traversal strides)
79     1     rank - 1 (what ``tensormap.replace.tile.rank`` writes)
80     1     elemtype, numbered as ``tensormap.replace.tile.elemtype`` numbers it: 0 .u8, 1 .u16,
             2 .u32, 3 .s32, 4 .u64, 5 .s64, 6 .f16, 7 .f32, 8 .f32.ftz, 9 .f64, 10 .bf16,
             11 .tf32, 12 .tf32.ftz, 13 .b4x16, 14 .b4x16_p64, 15 .b6x16_p32
81     1     interleave_layout: 0 none, 1 16B, 2 32B
82     1     swizzle_mode: 0 none, 1 32B, 2 64B, 3 128B
83     1     swizzle_atomicity (128B swizzle): 0 16B, 1 32B, 2 32B with the 8B flip, 3 64B
84     1     fill_mode: 0 zeros, 1 NaN (OOB_FILL_NAN_REQUEST_ZERO_FMA; floating-point types)
85     1     l2_promotion: 0 none, 1 64B, 2 128B, 3 256B (accepted; the interpreter has no L2)
86     1     mode: 0 tiled, 1 im2col
87     1     reserved
88     12    im2col pixel-box lower corner (s32 each; spatial dimensions 1..3)
100    12    im2col pixel-box upper corner (s32 each)
112    2     im2col channels per pixel (u16)
114    2     im2col pixels per column (u16)
116    12    reserved (zero)
====== ===== ===================================================================================

All zeros is the state ``tensormap.replace`` starts from in code that builds a map on the device
(Triton zero-fills 128 bytes of shared memory first); fields nobody set are then zero and a TMA
that uses such a map reports which field is invalid.

Packed sub-byte types (elemtypes 13..15; ``CUtensorMapDataType`` 13..15 of CUDA 12.8+ ``cuda.h``
and its ``cuTensorMapEncodeTiled`` notes; PTX ISA "Tensors", "Sub-byte Types"): the fp4 / fp6
operands of the block-scaled ``tcgen05.mma`` kinds. Global memory holds the elements packed with
no gaps; the dimensions, coordinates and box sizes count elements (4- or 6-bit values), the
strides bytes. A copy moves each group of 16 consecutive elements of a box row as one unit of
shared memory (16 elements are 8 bytes at 4 bits, 12 at 6):

=============  ==============  ====  ===============  ======================================
elemtype       driver type     bits  shared per 16    what a load puts in shared memory
=============  ==============  ====  ===============  ======================================
13 .b4x16      16U4_ALIGN8B    4     8 bytes          the 8 packed bytes, no gap
14 .b4x16_p64  16U4_ALIGN16B   4     16 bytes         the 8 packed bytes, then an 8-byte gap
15 .b6x16_p32  16U6_ALIGN16B   6     16 bytes         the 12 packed bytes, then a 4-byte gap
=============  ==============  ====  ===============  ======================================

Within a group, element ``i`` takes bits ``[i * bits, (i + 1) * bits)`` counting from the low bit
of its first byte (the documentation does not spell the order out; it is the one the
interpreter's tcgen05 operand decoder reads, and only matters where a box starts or the tensor
ends inside a group).

The driver's extra rules, checked by ``problems``: ``global_dim[0]`` a multiple of 2 (13) or 128
(14, 15); for 14 and 15 a 32-byte aligned address and strides, ``box_dim[0]`` (im2col: channels
per pixel) exactly 128, and only the swizzles none, 128B and 128B with 32B atoms (14: loads only;
15: loads and stores, plus 128B with 64B atoms for stores); 15 has no interleave; no NaN fill
(they are not floating-point types). The inner box row must be a multiple of 16 bytes counted at
the element size (``box_dim[0] * bits / 8``, as the driver computes it). The interpreter also
refuses interleaved maps of 13 and 14 (not modelled), and reductions into any packed type (the
ISA's reduction types do not include them). How the engine moves them is in ``ops.tma_boxes``.

Swizzle (``swizzle``): the TMA writes element bytes at shared address ``a`` to ``swizzle(a)``,
a function of the address bits (PTX ISA "Tensor-map swizzling"; DESIGN.md "Facts";
``isa.swizzle``): 32B mode XORs bit 4 with bit 7, 64B bits [4:5] with [7:8], 128B bits [4:6]
with [7:9] (16-byte chunks within a 1024-byte atom). The 128B modes with larger atoms (sm_100) swap 32-byte chunks (bits
[5:6] with [7:8]) or 64-byte chunks (bit 6 with bit 7); the "32B + 8B flip" atomicity also swaps
the 8-byte halves of each 16-byte chunk on alternate 128-byte rows (bit 3 with bit 7).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ...errors import InterpreterError
from ...isa.swizzle import swizzle as _isa_swizzle

SIZE = 128

# elemtype code (tensormap.replace numbering) -> (name, bits per element, is float)
ELEMTYPES = {
    0: ("u8", 8, False), 1: ("u16", 16, False), 2: ("u32", 32, False), 3: ("s32", 32, False),
    4: ("u64", 64, False), 5: ("s64", 64, False), 6: ("f16", 16, True), 7: ("f32", 32, True),
    8: ("f32.ftz", 32, True), 9: ("f64", 64, True), 10: ("bf16", 16, True), 11: ("tf32", 32, True),
    12: ("tf32.ftz", 32, True), 13: ("b4x16", 4, False), 14: ("b4x16_p64", 4, False),
    15: ("b6x16_p32", 6, False),
}
# the packed sub-byte types (see "Packed sub-byte types" in the module doc): elemtype code ->
# (bits per element, shared-memory bytes per group of 16 elements, CUtensorMapDataType name)
PACKED = {13: (4, 8, "16U4_ALIGN8B"), 14: (4, 16, "16U4_ALIGN16B"), 15: (6, 16, "16U6_ALIGN16B")}
# (swizzle_mode, swizzle_atomicity) pairs the driver allows with a packed type, and for what
PACKED_SWIZZLES = {
    14: {(0, 0): "load", (3, 0): "load", (3, 1): "load"},
    15: {(0, 0): "load and store", (3, 0): "load and store", (3, 1): "load and store", (3, 3): "store"},
}
# CUtensorMapDataType value -> elemtype code
CU_DATA_TYPE = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 9, 9: 10, 10: 8, 11: 11, 12: 12,
                13: 13, 14: 14, 15: 15}
# PTX type name (and aliases a tensor map is described with) -> elemtype code
TYPE_NAMES = {"u8": 0, "s8": 0, "b8": 0, "e4m3": 0, "e5m2": 0, "e8m0": 0, "u16": 1, "s16": 1,
              "b16": 1, "u32": 2, "b32": 2, "s32": 3, "u64": 4, "b64": 4, "s64": 5, "f16": 6,
              "f32": 7, "f32_ftz": 8, "f32.ftz": 8, "f64": 9, "bf16": 10, "tf32": 11,
              "tf32_ftz": 12, "tf32.ftz": 12, "b4x16": 13, "16U4_ALIGN8B": 13, "b4x16_p64": 14,
              "16U4_ALIGN16B": 14, "b6x16_p32": 15, "16U6_ALIGN16B": 15}
# CUtensorMapSwizzle value -> (swizzle_mode, swizzle_atomicity)
CU_SWIZZLE = {0: (0, 0), 1: (1, 0), 2: (2, 0), 3: (3, 0), 4: (3, 1), 5: (3, 2), 6: (3, 3)}
SWIZZLE_NAMES = {"none": 0, "32B": 1, "64B": 2, "128B": 3, "128B_atom_32B": 4,
                 "128B_atom_32B_flip_8B": 5, "128B_atom_64B": 6}
SWIZZLE_SPAN = {0: 0, 1: 32, 2: 64, 3: 128}
NAN_BITS = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}    # canonical NaNs (OOB NaN fill)

_LAYOUT = struct.Struct("<Q5I4x4Q5H5B9B3i3i2H12x")
assert _LAYOUT.size == SIZE


@dataclass(frozen=True)
class TensorMapFields:
    """The decoded fields of a tensor map (per-dimension tuples innermost first, ``rank``
    entries each; ``strides[0]`` is the element size in bytes, 0 for the packed sub-byte types,
    whose size is ``elem_bits``)."""

    address: int
    rank: int
    elemtype: int
    dims: tuple
    strides: tuple
    box: tuple
    element_strides: tuple
    interleave: int = 0
    swizzle: int = 0
    atomicity: int = 0
    fill: int = 0
    l2_promotion: int = 0
    mode: int = 0
    lower: tuple = ()
    upper: tuple = ()
    channels: int = 0
    pixels: int = 0

    @property
    def elem_bits(self) -> int:
        return ELEMTYPES[self.elemtype][1] if self.elemtype in ELEMTYPES else 0

    @property
    def elem_size(self) -> int:
        """Bytes per element; 0 for the packed sub-byte types (``elem_bits`` 4 or 6)."""
        b = self.elem_bits
        return b // 8 if b % 8 == 0 else 0

    @property
    def packed(self) -> bool:
        """A packed sub-byte type (elemtype 13..15)."""
        return self.elemtype in PACKED

    @property
    def is_float(self) -> bool:
        return self.elemtype in ELEMTYPES and ELEMTYPES[self.elemtype][2]

    @property
    def type_name(self) -> str:
        return ELEMTYPES[self.elemtype][0] if self.elemtype in ELEMTYPES else f"#{self.elemtype}"


# ----------------------------------------------------------------------------- raw fields
def pack(raw: dict) -> bytes:
    """128 bytes from raw field values (see the module doc; missing fields are zero)."""
    def arr(name, n):
        v = list(raw.get(name, ()))
        return v + [0] * (n - len(v))
    return _LAYOUT.pack(raw.get("address", 0), *arr("dims", 5), *arr("strides", 4), *arr("box", 5),
                        *arr("estr", 5), raw.get("rank_m1", 0), raw.get("elemtype", 0),
                        raw.get("interleave", 0), raw.get("swizzle", 0), raw.get("atomicity", 0),
                        raw.get("fill", 0), raw.get("l2", 0), raw.get("mode", 0), 0,
                        *arr("lower", 3), *arr("upper", 3), raw.get("channels", 0), raw.get("pixels", 0))


def unpack(b: bytes) -> dict:
    v = _LAYOUT.unpack(bytes(b))
    return dict(address=v[0], dims=v[1:6], strides=v[6:10], box=v[10:15], estr=v[15:20],
                rank_m1=v[20], elemtype=v[21], interleave=v[22], swizzle=v[23], atomicity=v[24],
                fill=v[25], l2=v[26], mode=v[27], lower=v[29:32], upper=v[32:35], channels=v[35],
                pixels=v[36])


# byte offset, struct format of each field tensormap.replace writes (per ordinal for arrays)
FIELD_AT = {
    ".global_address": (0, "<Q"), ".global_dim": (8, "<I"), ".global_stride": (32, "<Q"),
    ".box_dim": (64, "<H"), ".element_stride": (74, "<B"), ".rank": (79, "<B"),
    ".elemtype": (80, "<B"), ".interleave_layout": (81, "<B"), ".swizzle_mode": (82, "<B"),
    ".swizzle_atomicity": (83, "<B"), ".fill_mode": (84, "<B"),
}
ORDINALS = {".global_dim": 5, ".global_stride": 4, ".box_dim": 5, ".element_stride": 5}
# the values each field takes (tensormap.replace; PTX ISA table of valid new_val)
FIELD_RANGE = {".rank": (0, 4), ".elemtype": (0, 15), ".interleave_layout": (0, 2),
               ".swizzle_mode": (0, 3), ".swizzle_atomicity": (0, 3), ".fill_mode": (0, 1),
               ".box_dim": (1, 256), ".element_stride": (1, 8), ".global_dim": (1, (1 << 32) - 1)}

_CACHE: dict = {}           # a tensor map's bytes -> [its fields, their problems (None: not asked)]


def decode(b: bytes) -> TensorMapFields:
    """The fields of a 128-byte tensor map (memoised on the bytes)."""
    return _entry(b)[0]


def decode_checked(b: bytes) -> tuple:
    """(the fields of a 128-byte tensor map, their ``problems``), both found once per content."""
    e = _entry(b)
    if e[1] is None:
        e[1] = problems(e[0])
    return e[0], e[1]


def _entry(b: bytes) -> list:
    b = bytes(b)
    got = _CACHE.get(b)
    if got is not None:
        return got
    r = unpack(b)
    rank = r["rank_m1"] + 1
    bits = ELEMTYPES.get(r["elemtype"], ("", 0))[1]
    es = bits // 8 if bits % 8 == 0 else 0
    f = TensorMapFields(
        address=r["address"], rank=rank, elemtype=r["elemtype"], dims=tuple(r["dims"][:rank]),
        strides=(es,) + tuple(r["strides"][:max(rank - 1, 0)]), box=tuple(r["box"][:rank]),
        element_strides=tuple(r["estr"][:rank]), interleave=r["interleave"], swizzle=r["swizzle"],
        atomicity=r["atomicity"], fill=r["fill"], l2_promotion=r["l2"], mode=r["mode"],
        lower=tuple(r["lower"][:max(rank - 2, 0)]), upper=tuple(r["upper"][:max(rank - 2, 0)]),
        channels=r["channels"], pixels=r["pixels"])
    if len(_CACHE) > 4096:
        _CACHE.clear()
    got = _CACHE[b] = [f, None]
    return got


def encode(f: TensorMapFields) -> bytes:
    """The 128 bytes of ``f``."""
    return pack(dict(address=f.address, dims=f.dims, strides=f.strides[1:], box=f.box,
                     estr=f.element_strides, rank_m1=f.rank - 1, elemtype=f.elemtype,
                     interleave=f.interleave, swizzle=f.swizzle, atomicity=f.atomicity, fill=f.fill,
                     l2=f.l2_promotion, mode=f.mode, lower=f.lower, upper=f.upper,
                     channels=f.channels, pixels=f.pixels))


def problems(f: TensorMapFields) -> list:
    """What makes ``f`` unusable by a TMA (empty when it is valid). The checks are those of
    ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``, with the extra rules of the packed
    sub-byte types (module doc)."""
    out = []
    r = f.rank
    if not 1 <= r <= 5:
        return [f"rank {r} (1..5)"]
    if f.elemtype not in ELEMTYPES:
        out.append(f"elemtype {f.elemtype} (0..15)")
    if f.mode not in (0, 1):
        out.append(f"mode {f.mode} (0 tiled, 1 im2col)")
    if f.mode == 1 and r < 3:
        out.append(f"an im2col map has rank 3..5, not {r}")
    if f.interleave > 2:
        out.append(f"interleave_layout {f.interleave} (0..2)")
    if f.interleave and r < 3:
        out.append("an interleaved map has rank >= 3")
    if f.swizzle > 3:
        out.append(f"swizzle_mode {f.swizzle} (0..3)")
    if f.atomicity > 3 or (f.atomicity and f.swizzle != 3):
        out.append(f"swizzle_atomicity {f.atomicity} with swizzle_mode {f.swizzle} (the larger "
                   f"atomicities go with the 128B swizzle)")
    if f.interleave == 2 and f.swizzle != 1:
        out.append("the 32B interleave needs the 32B swizzle")
    if f.fill not in (0, 1):
        out.append(f"fill_mode {f.fill} (0..1)")
    if f.fill == 1 and f.elemtype in ELEMTYPES and not f.is_float:
        out.append(f"NaN fill for the non-floating-point elemtype {f.type_name}")
    wide = f.elemtype in (14, 15)                   # the 16-byte aligned packed types
    align = alignment(f)
    why = " (16-byte aligned packed type)" if wide and f.interleave != 2 else ""
    if f.address % align:
        out.append(f"global_address {f.address:#x} is not {align}-byte aligned{why}")
    for i, d in enumerate(f.dims):
        if not 1 <= d < 1 << 32:
            out.append(f"global_dim[{i}] = {d} (1..2^32-1)")
    for i, s in enumerate(f.strides[1:], 1):
        if s % align or s >= 1 << 40:
            out.append(f"global_stride[{i - 1}] = {s} (a multiple of {align} below 2^40){why}")
    for i, e in enumerate(f.element_strides):
        if not 1 <= e <= 8:
            out.append(f"element_stride[{i}] = {e} (1..8)")
    if f.packed:
        out += _packed_problems(f)
    bits = f.elem_bits
    if f.mode == 0:
        for i, b in enumerate(f.box):
            if not 1 <= b <= 256:
                out.append(f"box_dim[{i}] = {b} (1..256)")
        inner_bits = f.box[0] * bits if f.box else 0
    else:
        if not 1 <= f.channels <= 256:
            out.append(f"channels per pixel {f.channels} (1..256)")
        if not 1 <= f.pixels <= 1024:
            out.append(f"pixels per column {f.pixels} (1..1024)")
        inner_bits = f.channels * bits
    inner = inner_bits / 8
    shown = f"{inner:g}"
    if bits and f.interleave == 0 and inner_bits % 128:
        out.append(f"the inner box dimension is {shown} bytes (a multiple of 16)")
    span = SWIZZLE_SPAN.get(f.swizzle, 0)
    if span and f.interleave == 0 and inner > span:
        out.append(f"the inner box dimension is {shown} bytes, more than the {span}-byte swizzle span")
    return out


def alignment(f: TensorMapFields) -> int:
    """The alignment the driver requires of the global address and the byte strides: 32 with the
    32B interleave or a 16-byte aligned packed type (``16U4_ALIGN16B``, ``16U6_ALIGN16B``), else
    16."""
    return 32 if f.interleave == 2 or f.elemtype in (14, 15) else 16


def _packed_problems(f: TensorMapFields) -> list:
    """The driver's rules for the packed sub-byte types (cuda.h, cuTensorMapEncodeTiled /
    ``Im2col``), and what the interpreter does not model."""
    out = []
    name = f"{f.type_name} ({PACKED[f.elemtype][2]})"
    if f.elemtype == 13:
        if f.dims and f.dims[0] % 2:
            out.append(f"global_dim[0] = {f.dims[0]}: {name} needs a multiple of 2")
    else:
        if f.dims and f.dims[0] % 128:
            out.append(f"global_dim[0] = {f.dims[0]}: {name} needs a multiple of 128")
        if f.mode == 0 and f.box and f.box[0] != 128:
            out.append(f"box_dim[0] = {f.box[0]}: {name} needs 128")
        if f.mode == 1 and f.channels != 128:
            out.append(f"channels per pixel {f.channels}: {name} needs 128")
        ok = PACKED_SWIZZLES[f.elemtype]
        if (f.swizzle, f.atomicity) not in ok:
            names = {(0, 0): "none", (3, 0): "128B", (3, 1): "128B_atom_32B", (3, 3): "128B_atom_64B"}
            allowed = ", ".join(f"{names[k]} ({v})" for k, v in ok.items())
            out.append(f"swizzle {_swizzle_name(f.swizzle, f.atomicity)} with {name} (allowed: {allowed})")
    if f.interleave:
        out.append(f"interleave_layout {f.interleave} with {name}: " +
                   ("the driver requires none" if f.elemtype == 15 else
                    "interleaved packed sub-byte tensors are not modelled by the interpreter"))
    return out


def _swizzle_name(mode: int, atomicity: int) -> str:
    for name, cu in SWIZZLE_NAMES.items():
        if CU_SWIZZLE.get(cu) == (mode, atomicity):
            return name
    return f"mode {mode} atomicity {atomicity}"


def describe(f: TensorMapFields, address: bool = True) -> str:
    """``f32 rank 2 at 0x7f0000000000, dims (64, 16), ...`` for messages."""
    at = f" at {f.address:#x}" if address else ""
    shape = (f"box {f.box}" if f.mode == 0 else
             f"im2col corners {f.lower} / {f.upper}, {f.channels} channels x {f.pixels} pixels")
    strides = (f"{f.elem_bits}-bit elements, byte strides {f.strides[1:]}" if f.packed else
               f"byte strides {f.strides}")
    return (f"{f.type_name} rank {f.rank}{at}, dims {f.dims}, {strides}, {shape}, "
            f"element strides {f.element_strides}")


# ----------------------------------------------------------------------------- swizzle
def swizzle(addr, mode: int, atomicity: int = 0):
    """Shared byte addresses (an int array) after the tensor map's swizzle ``mode`` (0..3) and
    ``atomicity`` (0..3): the 16-byte-chunk modes are ``isa.swizzle``'s; the larger atoms of the
    128B mode swap 32-byte chunks (``isa.swizzle``'s "128B_base32B", bits [5:6] ^= [7:8], the
    layout tcgen05's descriptor swizzle code 1 reads; atomicity 2 also bit 3 ^= bit 7) or
    64-byte chunks (bit 6 ^= bit 7)."""
    a = np.asarray(addr, np.int64)
    if mode == 0:
        return a
    if mode != 3 or atomicity == 0:
        return _isa_swizzle(a, {1: "32B", 2: "64B", 3: "128B"}[mode])
    if atomicity in (1, 2):
        b = _isa_swizzle(a, "128B_base32B")
        return b ^ ((a >> 4) & 0x08) if atomicity == 2 else b
    return a ^ ((a >> 1) & 0x40)


# ----------------------------------------------------------------------------- the host helper
class TensorMap:
    """A host-encoded tensor map for ``jax_pyptx.interpret.launch`` (made by ``tensor_map``).

    Pass it for a ``.param .align 64 .b8 name[128]`` parameter (the map by value, as a
    ``__grid_constant__ CUtensorMap``) or for a ``.u64`` parameter (the map in global memory;
    the kernel gets its address). A list of them for a ``.u64`` parameter lays them out
    consecutively (one per batch item). ``launch`` gives ``array`` its device address (the same
    allocation when the array, or an array sharing its memory, is also a pointer argument) and
    writes stores back into it.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.interpret.state.tensormap import TensorMap, tensor_map
        >>> tm = tensor_map(np.zeros((64, 32), np.float32), box=(32, 16))
        >>> isinstance(tm, TensorMap), tm.offset
        (True, 0)
    """

    __slots__ = ("array", "offset", "fields")

    def __init__(self, array, offset, fields):
        self.array, self.offset, self.fields = array, offset, fields

    def encode(self, base_address: int) -> bytes:
        """The 128 bytes of this map when ``array`` lives at ``base_address``.

        Examples:
            >>> import numpy as np
            >>> from jax_pyptx.interpret import tensor_map
            >>> blob = tensor_map(np.zeros((64, 32), np.float32), box=(32, 16)).encode(0x7F0000000000)
            >>> len(blob)
            128
        """
        key = (self.fields, int(base_address) + self.offset)
        got = _ENCODED.get(key)
        if got is not None:
            return got
        from dataclasses import replace
        f = replace(self.fields, address=key[1])
        align = alignment(f)
        if f.address % align:
            raise InterpreterError(f"tensor_map: the tensor's device address {f.address:#x} is not "
                                   f"{align}-byte aligned (a view starting inside an element row?)")
        if len(_ENCODED) >= 256:
            _ENCODED.clear()
        got = _ENCODED[key] = encode(f)
        return got

    def __repr__(self):
        return f"TensorMap({describe(self.fields, False)})"


#: ``TensorMap.encode``'s answers by (fields, address): a launch's maps are encoded again each
#: launch at the same addresses
_ENCODED: dict = {}


def _enum(name, value, names, allowed):
    if isinstance(value, str):
        if value not in names:
            raise InterpreterError(f"tensor_map: {name}={value!r}; allowed: {', '.join(names)}")
        return names[value]
    if isinstance(value, (int, np.integer)) and int(value) in allowed:
        return int(value)
    raise InterpreterError(f"tensor_map: {name}={value!r}; allowed: {sorted(allowed)} or one of "
                           f"{', '.join(map(repr, names))}")


def _dtype_code(dtype, array):
    if dtype is None:
        from ...types import from_numpy
        try:
            dtype = from_numpy(array.dtype).name
        except Exception:
            raise InterpreterError(f"tensor_map: no tensor-map element type for arrays of "
                                   f"{array.dtype}; pass dtype= (e.g. 'u8')") from None
    if hasattr(dtype, "name") and not isinstance(dtype, str) and not isinstance(dtype, np.dtype):
        dtype = dtype.name                      # a PtxType
    if isinstance(dtype, str):
        if dtype not in TYPE_NAMES:
            raise InterpreterError(f"tensor_map: dtype={dtype!r} has no tensor-map element type; "
                                   f"allowed: {', '.join(sorted(TYPE_NAMES))}")
        return TYPE_NAMES[dtype]
    if isinstance(dtype, (int, np.integer)) and int(dtype) in CU_DATA_TYPE:
        return CU_DATA_TYPE[int(dtype)]        # a CUtensorMapDataType value
    raise InterpreterError(f"tensor_map: dtype={dtype!r}: give a PTX type name ('bf16') or a "
                           f"CUtensorMapDataType value (0..15)")


def tensor_map(array, box=None, *, dtype=None, dims=None, strides=None, element_strides=None,
               interleave=0, swizzle=0, l2_promotion=0, oob_fill=0, im2col=None,
               offset: int = 0) -> TensorMap:
    """A tensor map over ``array`` for ``jax_pyptx.interpret.launch``, with the fields
    ``cuTensorMapEncodeTiled`` (or, with ``im2col``, ``cuTensorMapEncodeIm2col``) takes.

    Every per-dimension tuple is innermost dimension first, as the driver takes them:

    * ``box``: the box size in elements per dimension (tiled mode);
    * ``dtype``: a PTX type name (``"bf16"``, ``"f32"``, ``"u8"``...), a packed sub-byte type
      (``"b4x16"`` / ``"16U4_ALIGN8B"``, ``"b4x16_p64"`` / ``"16U4_ALIGN16B"``, ``"b6x16_p32"`` /
      ``"16U6_ALIGN16B"``; ``array`` then holds the packed bytes, e.g. as ``uint8``) or a
      CUtensorMapDataType value; default: from ``array.dtype``;
    * ``dims`` / ``strides``: the global dimensions in elements (4- or 6-bit values for the
      packed types), and the byte strides of dimensions 1..rank-1 (default: ``array``'s shape
      and strides, reversed; the last axis of a packed array holds its bytes);
    * ``element_strides``: traversal strides (default all 1);
    * ``interleave``: 0 none, 1 16B, 2 32B; ``swizzle``: a CUtensorMapSwizzle value (0 none,
      1 32B, 2 64B, 3 128B, 4 128B with 32B atoms, 5 the same with the 8B flip, 6 128B with
      64B atoms), or 32 / 64 / 128 bytes, or a name (``"128B"``); ``l2_promotion``: 0..3;
      ``oob_fill``: 0 / ``"zero"`` or 1 / ``"nan"`` (floating-point types);
    * ``im2col``: ``dict(lower=, upper=, channels=, pixels=)`` (the pixel-box corners of the
      spatial dimensions, channels per pixel, pixels per column) for an im2col map;
    * ``offset``: a byte offset into ``array`` where the tensor starts.

    Example::

        A = np.zeros((128, 64), np.float16)
        tm = jax_pyptx.interpret.tensor_map(A, box=(64, 64), swizzle=128)
        jax_pyptx.interpret.launch(ptx, "kernel", [tm, out], block=128)

    Invalid combinations raise ``InterpreterError`` naming the field, as the driver would fail.

    Examples:
        >>> import numpy as np
        >>> from jax_pyptx.interpret import tensor_map
        >>> A = np.zeros((128, 64), np.float16)
        >>> tm = tensor_map(A, box=(64, 64), swizzle=128)
        >>> tm.array is A, len(tm.encode(0x10000))
        (True, 128)
    """
    if not isinstance(array, np.ndarray):
        raise InterpreterError(f"tensor_map: array must be a NumPy array, got {type(array).__name__}")
    code = _dtype_code(dtype, array)
    bits = ELEMTYPES[code][1]
    es = bits // 8 if bits % 8 == 0 else 0          # 0: a packed sub-byte type
    if dims is None:
        if not array.flags.c_contiguous:
            raise InterpreterError("tensor_map: a non-contiguous array needs dims= and strides=")
        row_bits = (array.shape[-1] if array.ndim else 1) * array.dtype.itemsize * 8
        if row_bits % bits:
            raise InterpreterError(f"tensor_map: the array's rows ({row_bits // 8} bytes) do not hold a "
                                   f"whole number of {bits}-bit {ELEMTYPES[code][0]} elements; pass dims=")
        shape = array.shape if array.dtype.itemsize * 8 == bits else \
            array.shape[:-1] + (row_bits // bits,)
        dims = tuple(reversed(shape)) or (1,)
    dims = tuple(int(d) for d in dims)
    rank = len(dims)
    if strides is None:
        if dims[0] * bits % 8:
            raise InterpreterError(f"tensor_map: {dims[0]} {bits}-bit elements are not a whole number of "
                                   f"bytes; pass strides=")
        acc, st = dims[0] * bits // 8, []
        for d in dims[1:]:
            st.append(acc)
            acc *= d
        strides = tuple(st)
    strides = tuple(int(s) for s in strides)
    if len(strides) != rank - 1:
        raise InterpreterError(f"tensor_map: rank {rank} needs {rank - 1} strides (bytes, dimensions "
                               f"1..{rank - 1}), got {strides}")
    estr = tuple(int(e) for e in (element_strides or (1,) * rank))
    if isinstance(swizzle, (int, np.integer)) and int(swizzle) in (32, 64, 128):
        swizzle = {32: 1, 64: 2, 128: 3}[int(swizzle)]
    sw = _enum("swizzle", swizzle, SWIZZLE_NAMES, set(CU_SWIZZLE))
    mode_sw, atom = CU_SWIZZLE[sw]
    fill = _enum("oob_fill", oob_fill, {"zero": 0, "none": 0, "nan": 1}, {0, 1})
    il = _enum("interleave", interleave, {"none": 0, "16B": 1, "32B": 2}, {0, 1, 2})
    l2 = _enum("l2_promotion", l2_promotion, {"none": 0, "64B": 1, "128B": 2, "256B": 3}, {0, 1, 2, 3})
    kw = {}
    if im2col is not None:
        try:
            lower, upper = tuple(im2col["lower"]), tuple(im2col["upper"])
            kw = dict(mode=1, lower=lower, upper=upper, channels=int(im2col["channels"]),
                      pixels=int(im2col["pixels"]), box=(0,) * rank)
        except (KeyError, TypeError):
            raise InterpreterError("tensor_map: im2col= is dict(lower=(..), upper=(..), channels=, "
                                   "pixels=)") from None
        if len(lower) != rank - 2 or len(upper) != rank - 2:
            raise InterpreterError(f"tensor_map: an im2col map of rank {rank} has {rank - 2} lower and "
                                   f"upper corner entries, got {lower} and {upper}")
        lim = {3: 1 << 15, 4: 1 << 7, 5: 1 << 4}.get(rank, 0)
        for c in lower + upper:
            if not -lim <= c < lim:
                raise InterpreterError(f"tensor_map: im2col corner {c} out of range for rank {rank} "
                                       f"({-lim}..{lim - 1})")
    else:
        if box is None or len(tuple(box)) != rank:
            raise InterpreterError(f"tensor_map: box= needs {rank} sizes (innermost first), got {box!r}")
        kw = dict(box=tuple(int(b) for b in box))
    if len(estr) != rank:
        raise InterpreterError(f"tensor_map: element_strides needs {rank} entries, got {estr}")
    f = TensorMapFields(address=0, rank=rank, elemtype=code, dims=dims, strides=(es,) + strides,
                        element_strides=estr, interleave=il, swizzle=mode_sw, atomicity=atom,
                        fill=fill, l2_promotion=l2, **kw)
    bad = [p for p in problems(f) if "global_address" not in p]
    if bad:
        raise InterpreterError(f"tensor_map: invalid tensor map ({describe(f, False)}): " + "; ".join(bad))
    if int(offset) % alignment(f):
        raise InterpreterError(f"tensor_map: the tensor's start (offset {offset} into the array) is not "
                               f"{alignment(f)}-byte aligned")
    span = int(offset) + sum((d - 1) * s for d, s in zip(dims[1:], strides)) + -(-dims[0] * bits // 8)
    if span > array.nbytes:
        raise InterpreterError(f"tensor_map: the tensor ({describe(f, False)}) spans {span} bytes from "
                               f"offset {offset}, but the array has {array.nbytes}")
    return TensorMap(array, int(offset), f)
