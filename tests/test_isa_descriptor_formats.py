"""The descriptor formats (jax_pyptx.isa.descriptors): every field round-trips, the DSL's
encoders (both spellings) and the interpreter's decoders agree with the one table."""
from __future__ import annotations

import random

import pytest

from jax_pyptx.isa import descriptors as D
from jax_pyptx.dsl.ptx import descriptors as dsl_desc
from jax_pyptx.dsl.ptx import tcgen05_kw, wgmma_kw
from jax_pyptx.interpret.ops import smem_matrix as SM
from jax_pyptx.interpret.ops.tcgen05_mma import decode_idesc


@pytest.mark.parametrize("fmt", D.FORMATS, ids=lambda f: f.name)
def test_every_field_round_trips_alone_and_together(fmt):
    rng = random.Random(0)
    used = 0
    for f in fmt.fields:
        assert used & (f.mask << f.lo) == 0, f"{fmt.name}: {f.name} overlaps another field"
        used |= f.mask << f.lo
        assert f.lo + f.width <= fmt.bits
        for v in (0, f.unit, f.limit - f.unit, rng.randrange(f.limit // f.unit) * f.unit):
            vals = {**dict(fmt.fixed), f.name: v}
            word = D.encode(fmt, **vals)
            assert word >> f.lo & f.mask == v // f.unit
            assert D.decode(fmt, word)[f.name] == v
            others = {k: x for k, x in D.decode(fmt, word).items() if k != f.name}
            assert others == {g.name: dict(fmt.fixed).get(g.name, 0) for g in fmt.fields if g.name != f.name}
    for _ in range(200):
        vals = {f.name: rng.randrange(f.limit // f.unit) * f.unit for f in fmt.fields}
        assert D.decode(fmt, D.encode(fmt, **vals)) == vals


@pytest.mark.parametrize("fmt", D.FORMATS, ids=lambda f: f.name)
def test_a_value_that_does_not_fit_names_its_field(fmt):
    f = max(fmt.fields, key=lambda f: f.unit)
    with pytest.raises(ValueError, match=rf"{fmt.name}: {f.name}={f.limit} does not fit bits "
                                         rf"{f.lo}-{f.lo + f.width - 1}"):
        D.encode(fmt, **{f.name: f.limit})
    if f.unit > 1:
        with pytest.raises(ValueError, match=f"a multiple of {f.unit}"):
            D.encode(fmt, **{f.name: f.unit + 1})
    with pytest.raises(ValueError, match=f"{fmt.name}: no field 'nope'"):
        D.encode(fmt, nope=1)


def test_the_wgmma_encoders_and_the_interpreter_read_one_format():
    rng = random.Random(1)
    for _ in range(300):
        start, lbo, sbo = (rng.randrange(1 << 14) << 4 for _ in range(3))
        sw = rng.choice(list(D.WGMMA_SWIZZLE_CODES.values()))
        base = 0 if sw == "none" else rng.randrange(8)
        v = dsl_desc.wgmma_desc(start, lbo, sbo, sw, base)
        assert D.decode(D.WGMMA_SMEM, v) == {"start": start, "lbo": lbo, "sbo": sbo,
                                             "base_offset": base,
                                             "swizzle": dsl_desc.WGMMA_SWIZZLE[sw]}
        d = SM.decode_wgmma(v)
        assert (d.start, d.lbo, d.sbo, d.base, d.swizzle) == (start, lbo, sbo, base, sw)
        # the upstream spelling's constant fields agree
        code = dsl_desc.WGMMA_SWIZZLE[sw]
        assert wgmma_kw.descriptor_bits(lbo, sbo, code, base) == v & ~0x3FFF


def test_the_tcgen05_smem_encoders_and_the_interpreter_read_one_format():
    rng = random.Random(2)
    for _ in range(300):
        start, lbo, sbo = (rng.randrange(1 << 14) << 4 for _ in range(3))
        sw = rng.choice(list(D.TCGEN05_SWIZZLE_CODES.values()))
        base = 0 if sw == "none" else rng.randrange(8)
        v = dsl_desc.tcgen05_smem_desc(start, lbo, sbo, sw, base)
        fields = D.decode(D.TCGEN05_SMEM, v)
        assert fields == {"start": start, "lbo": lbo, "sbo": sbo, "version": 1,
                          "base_offset": base, "lbo_mode": 0,
                          "swizzle": dsl_desc.TCGEN05_SWIZZLE[sw]}
        d = SM.decode_tcgen05(v)
        assert (d.start, d.lbo, d.sbo, d.base, d.swizzle, d.lbo_mode) == (start, lbo, sbo, base, sw, 0)
        upstream = tcgen05_kw.descriptor_bits(stride_bytes=sbo, leading_bytes=lbo,
                                              swizzle=sw.upper(), base_offset=base)
        assert upstream == v & ~0x3FFF
    assert D.decode(D.TCGEN05_SMEM, tcgen05_kw.BLACKWELL_MASKED_DESC_B128) == {
        "start": 0, "lbo": 16, "sbo": 1024, "version": 1, "base_offset": 0, "lbo_mode": 0,
        "swizzle": 2}


@pytest.mark.parametrize("kind,atype,dtype", [("f16", "bf16", "f32"), ("f16", "f16", "f16"),
                                              ("tf32", "tf32", "f32"), ("f8f6f4", "e4m3", "f32"),
                                              ("f8f6f4", "e2m1", "f16"), ("i8", "s8", "s32")])
def test_the_tcgen05_instruction_descriptor_reads_back(kind, atype, dtype):
    for m, n, a_major, b_major in ((128, 256, "K", "K"), (64, 8, "MN", "K"), (128, 16, "K", "MN")):
        v = dsl_desc.tcgen05_instr_desc(kind, m, n, dtype, atype, a_major=a_major, b_major=b_major)
        f = D.decode(D.TCGEN05_IDESC, v)
        assert (f["m"], f["n"], f["a_mn"], f["b_mn"]) == (m, n, a_major == "MN", b_major == "MN")
        assert D.IDESC_D_TYPE_CODES[f["d_type"]] == dtype
        assert D.IDESC_TYPE_CODES[kind][f["a_type"]] == atype
        d = decode_idesc(v, kind, False, 1)
        assert (d.m, d.n, d.dtype, d.atype, d.btype, d.ta, d.tb) == (
            m, n, dtype, atype, atype, int(a_major == "MN"), int(b_major == "MN"))


def test_the_upstream_instruction_descriptor_is_the_same_format():
    v = tcgen05_kw.make_instr_desc_f16bf16_f32()
    assert v == 138413200
    assert v == dsl_desc.tcgen05_instr_desc("f16", 128, 256, "f32", "bf16")
    f = D.decode(D.TCGEN05_IDESC, tcgen05_kw.make_instr_desc_f16bf16_f32(
        m=64, n=64, ab_dtype="f16", a_major="MN", scale_b=-1, max_shift=2))
    assert (f["m"], f["n"], f["a_type"], f["a_mn"], f["neg_b"], f["max_shift"]) == (64, 64, 0, 1, 1, 2)


def test_the_block_scaled_descriptor_reads_back():
    v = dsl_desc.tcgen05_instr_desc_block_scaled("mxf8f6f4", 128, 128, "e4m3", "e5m2",
                                                 a_sf_id=1, b_sf_id=3, b_major="MN")
    f = D.decode(D.TCGEN05_IDESC_BLOCK_SCALED, v)
    assert (f["m"], f["n"], f["a_sf_id"], f["b_sf_id"], f["ue8m0"], f["b_mn"]) == (128, 128, 1, 3, 1, 1)
    d = decode_idesc(v, "mxf8f6f4", False, 1)
    assert (d.m, d.n, d.atype, d.btype, d.sfa_id, d.sfb_id, d.ue8m0, d.tb) == (
        128, 128, "e4m3", "e5m2", 1, 3, 1, 1)
    v = dsl_desc.tcgen05_instr_desc_block_scaled("mxf4nvf4", 256, 256, "e2m1", scale_type="ue4m3",
                                                 k96=True, cta_group=2)
    f = D.decode(D.TCGEN05_IDESC_BLOCK_SCALED, v)
    assert (f["m"], f["k96"], f["ue8m0"]) == (256, 1, 0)
    assert decode_idesc(v, "mxf4nvf4", False, 2).k == 96
