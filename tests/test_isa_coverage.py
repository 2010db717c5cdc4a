"""The committed coverage doc equals the generated table; descriptor bits per the ISA."""
import os

from jax_pyptx.isa.coverage import coverage_table
from jax_pyptx.dsl.ptx import descriptors as D

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_committed_doc_is_generated_output():
    with open(os.path.join(ROOT, "docs", "isa_coverage.md")) as f:
        assert f.read() == coverage_table()


def test_coverage_lists_families_with_arch_and_version():
    t = coverage_table()
    assert "| wgmma | `wgmma.fence.sync.aligned` |  | sm_90a | 8.0 |  |" in t
    for fam in ("arith-int", "memory", "atomic", "warp", "mma", "wgmma", "tma", "mbarrier",
                "cluster", "tcgen05", "cvt", "fence", "sync"):
        assert f"| {fam} | " in t


def test_wgmma_desc_fields():
    # 128B-swizzle K-major tile at 0x400: start 0x40, LBO 16 B -> 1, SBO 1024 B -> 64, mode 1
    assert D.wgmma_desc(0x400, 16, 1024, "128B") == 0x4000004000010040
    assert D.wgmma_desc(0x3FFF0, 0, 0, "none") == 0x3FFF
    assert D.wgmma_desc(0, 0x3FFF0, 0, "none") == 0x3FFF << 16
    assert D.wgmma_desc(0, 0, 0x3FFF0, "none") == 0x3FFF << 32
    assert D.wgmma_desc(0, 0, 0, "none", base_offset=7) == 7 << 49
    assert [D.wgmma_desc(0, 0, 0, s) >> 62 for s in ("none", "128B", "64B", "32B")] == [0, 1, 2, 3]


def test_tcgen05_smem_desc_fields():
    assert D.tcgen05_smem_desc(0, 0, 0, "none") == 1 << 46
    assert [D.tcgen05_smem_desc(0, 0, 0, s) >> 61 for s in
            ("none", "128B_base32B", "128B", "64B", "32B")] == [0, 1, 2, 4, 6]
    assert D.tcgen05_smem_desc(0x400, 16, 1024, "128B") == (2 << 61) | (1 << 46) | (64 << 32) \
        | (1 << 16) | 0x40
    assert D.tcgen05_smem_desc(0, 0, 0, "none", lbo_absolute=True) == (1 << 46) | (1 << 52)


def test_tcgen05_instr_desc_fields():
    # kind::f16, D f32, A/B bf16, K-major, M=128, N=256
    v = D.tcgen05_instr_desc("f16", 128, 256, "f32", "bf16")
    assert v == (1 << 4) | (1 << 7) | (1 << 10) | ((256 >> 3) << 17) | ((128 >> 4) << 24)
    v = D.tcgen05_instr_desc("f8f6f4", 64, 8, "f16", "e2m1", "e3m2", a_major="MN", neg_b=True)
    assert v == (5 << 7) | (4 << 10) | (1 << 14) | (1 << 15) | (1 << 17) | (4 << 24)
    v = D.tcgen05_instr_desc("i8", 128, 16, "s32", "s8", "u8", saturate=True)
    assert v == (1 << 3) | (2 << 4) | (1 << 7) | (2 << 17) | (8 << 24)
    v = D.tcgen05_instr_desc_block_scaled("mxf4nvf4", 128, 128, "e2m1", scale_type="ue4m3",
                                          a_sf_id=2, b_sf_id=1)
    assert v == (1 << 4) | (1 << 7) | (1 << 10) | (16 << 17) | (8 << 24) | (2 << 29)


def test_canonical_strides():
    assert D.canonical_strides("K", "128B", 64, 64, 16) == (64 * 128, 1024)
    assert D.canonical_strides("K", "none", 64, 64, 16) == (128, 1024)
    assert D.canonical_strides("MN", "64B", 64, 64, 16) == (512, 1024)
