"""The bit layouts of the matrix descriptors, once: one encode/decode pair per format.

The DSL's descriptor helpers (both spellings: ``ptx.wgmma.desc`` / ``ptx.tcgen05.instr_desc``
and the upstream ``make_descriptor`` / ``make_instr_desc_f16bf16_f32``) validate their arguments
and encode here; the interpreter decodes here. A format is a table of fields, each a name, its
lowest bit, its width and a unit (the field stores ``value // unit``: byte quantities of the
shared-memory descriptors are stored in 16-byte units), read by ``encode`` and ``decode``:

    >>> from jax_pyptx.isa.descriptors import WGMMA_SMEM, encode, decode
    >>> v = encode(WGMMA_SMEM, start=0x400, lbo=16, sbo=1024, swizzle=1)
    >>> hex(v), decode(WGMMA_SMEM, v)["sbo"]
    ('0x4000004000010040', 1024)

Field positions, from the PTX ISA (sections cited):

* ``WGMMA_SMEM``: wgmma shared-memory matrix descriptor, 64 bits ("Matrix Descriptor Format"):
  start 0-13, LBO 16-29, SBO 32-45 (each ``(bytes & 0x3FFFF) >> 4``), base offset 49-51,
  swizzle 62-63 (0 none, 1 128B, 2 64B, 3 32B).
* ``TCGEN05_SMEM``: tcgen05 shared-memory descriptor, 64 bits ("Shared memory descriptor"):
  start, LBO, SBO as above, version 46-48 (the fixed 0b001), base offset 49-51, leading-dimension
  mode 52 (1: LBO is an absolute address), swizzle 61-63 (0 none, 1 128B with 32B atomicity,
  2 128B, 4 64B, 6 32B).
* ``TCGEN05_IDESC``: tcgen05 instruction descriptor for kind::f16, tf32, f8f6f4, i8, 32 bits
  ("Instruction descriptor", Table 42): sparsity selector 0-1, sparsity 2, saturate 3, D type
  4-5, A type 7-9, B type 10-12, negate A 13, negate B 14, transpose (MN-major) A 15, B 16,
  N >> 3 17-22, M >> 4 24-28, maximum shift (.ws) 30-31.
* ``TCGEN05_IDESC_BLOCK_SCALED``: kind::mxf8f6f4, mxf4, mxf4nvf4 (Tables 43, 44): sparsity 2,
  B scale-factor id 4-5, A type 7-9, B type 10-12, negate A/B 13/14, transpose A/B 15/16,
  N >> 3 17-22, scale type 23 (1 ue8m0), M >> 7 27-28, A scale-factor id 29-30, K=96 31.

The codes of the type and swizzle fields are tables here too (``*_CODES``), so a field's value
means the same to the encoder and the decoder.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Field", "Format", "WGMMA_SMEM", "TCGEN05_SMEM", "TCGEN05_IDESC",
           "TCGEN05_IDESC_BLOCK_SCALED", "FORMATS", "encode", "decode",
           "WGMMA_SWIZZLE_CODES", "TCGEN05_SWIZZLE_CODES", "IDESC_D_TYPE_CODES",
           "IDESC_TYPE_CODES", "MAX_SHIFT_CODES"]


@dataclass(frozen=True)
class Field:
    """``value // unit`` stored in bits ``lo .. lo + width - 1``."""

    name: str
    lo: int
    width: int
    unit: int = 1

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    @property
    def limit(self) -> int:
        """One past the largest value the field holds."""
        return (1 << self.width) * self.unit


@dataclass(frozen=True)
class Format:
    """A descriptor format: its name, its width in bits, its fields (lowest bit first) and
    the fields fixed to one value (``fixed``: name -> value)."""

    name: str
    bits: int
    fields: tuple
    fixed: tuple = ()

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}; fields: "
                       + ", ".join(f.name for f in self.fields))


_ADDR = 16          # shared-memory byte quantities are stored in 16-byte units

WGMMA_SMEM = Format("wgmma shared-memory descriptor", 64, (
    Field("start", 0, 14, _ADDR), Field("lbo", 16, 14, _ADDR), Field("sbo", 32, 14, _ADDR),
    Field("base_offset", 49, 3), Field("swizzle", 62, 2)))

TCGEN05_SMEM = Format("tcgen05 shared-memory descriptor", 64, (
    Field("start", 0, 14, _ADDR), Field("lbo", 16, 14, _ADDR), Field("sbo", 32, 14, _ADDR),
    Field("version", 46, 3), Field("base_offset", 49, 3), Field("lbo_mode", 52, 1),
    Field("swizzle", 61, 3)), fixed=(("version", 1),))

TCGEN05_IDESC = Format("tcgen05 instruction descriptor", 32, (
    Field("sparse_id2", 0, 2), Field("sparse", 2, 1), Field("saturate", 3, 1),
    Field("d_type", 4, 2), Field("a_type", 7, 3), Field("b_type", 10, 3),
    Field("neg_a", 13, 1), Field("neg_b", 14, 1), Field("a_mn", 15, 1), Field("b_mn", 16, 1),
    Field("n", 17, 6, 8), Field("m", 24, 5, 16), Field("max_shift", 30, 2)))

TCGEN05_IDESC_BLOCK_SCALED = Format("tcgen05 block-scaled instruction descriptor", 32, (
    Field("sparse", 2, 1), Field("b_sf_id", 4, 2), Field("a_type", 7, 3),
    Field("b_type", 10, 3), Field("neg_a", 13, 1), Field("neg_b", 14, 1), Field("a_mn", 15, 1),
    Field("b_mn", 16, 1), Field("n", 17, 6, 8), Field("ue8m0", 23, 1), Field("m", 27, 2, 128),
    Field("a_sf_id", 29, 2), Field("k96", 31, 1)))

FORMATS = (WGMMA_SMEM, TCGEN05_SMEM, TCGEN05_IDESC, TCGEN05_IDESC_BLOCK_SCALED)

WGMMA_SWIZZLE_CODES = {0: "none", 1: "128B", 2: "64B", 3: "32B"}
TCGEN05_SWIZZLE_CODES = {0: "none", 1: "128B_base32B", 2: "128B", 4: "64B", 6: "32B"}
IDESC_D_TYPE_CODES = {0: "f16", 1: "f32", 2: "s32"}
# per kind: A/B type code -> type (mxf4*: the B type field is bits 10-11)
IDESC_TYPE_CODES = {
    "f16": {0: "f16", 1: "bf16"}, "tf32": {2: "tf32"},
    "f8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"}, "i8": {0: "u8", 1: "s8"},
    "mxf8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"},
    "mxf4": {1: "e2m1"}, "mxf4nvf4": {1: "e2m1"},
}
MAX_SHIFT_CODES = {0: 0, 1: 8, 2: 16, 3: 32}     # code -> B-reuse shift of tcgen05.mma.ws


def encode(fmt: Format, **values: int) -> int:
    """The descriptor with ``values`` in their fields (missing fields: 0, or their fixed
    value). A value that does not fit its field, or is not a multiple of its unit, raises
    ``ValueError`` naming the field (callers validate first and give the user's words)."""
    fixed = dict(fmt.fixed)
    unknown = set(values) - {f.name for f in fmt.fields}
    if unknown:
        raise ValueError(f"{fmt.name}: no field {sorted(unknown)[0]!r}; fields: "
                         + ", ".join(f.name for f in fmt.fields))
    out = 0
    for f in fmt.fields:
        v = int(values.get(f.name, fixed.get(f.name, 0)))
        if v < 0 or v % f.unit or v >= f.limit:
            unit = f" and a multiple of {f.unit}" if f.unit > 1 else ""
            raise ValueError(f"{fmt.name}: {f.name}={v} does not fit bits {f.lo}-"
                             f"{f.lo + f.width - 1} (0..{f.limit - f.unit}{unit})")
        out |= (v // f.unit) << f.lo
    return out


def decode(fmt: Format, value: int) -> dict:
    """Field name -> value (times its unit) of descriptor ``value``; bits outside every field
    are ignored (reserved)."""
    v = int(value) & ((1 << fmt.bits) - 1)
    return {f.name: ((v >> f.lo) & f.mask) * f.unit for f in fmt.fields}


def address_field(byte_address: int) -> int:
    """``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`` as a byte value for the ``start``,
    ``lbo`` and ``sbo`` fields: the low 18 bits of a shared-memory byte address, 16-aligned."""
    return int(byte_address) & 0x3FFF0
