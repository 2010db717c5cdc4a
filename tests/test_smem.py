"""smem: static and dynamic shared memory, alignment, shapes, stages, mbarrier arrays."""
import pytest

from jax_pyptx import kernel, ptx, reg, smem
from jax_pyptx.errors import PtxValueError, TraceError
from jax_pyptx.types import bf16, f32, u32

from .helpers import assemble, line_of


@kernel(arch="sm_90a", block=(128, 1, 1))
def staged(*, STAGES=2, TILE=64):
    a = smem.alloc(bf16, (STAGES, TILE, 64), align=1024, name="a")
    bars = smem.mbarrier(STAGES, name="bars")
    t = reg.from_(ptx.special.tid.x(), u32)
    for s in ptx.static_range(STAGES):
        ptx.inst.st.shared.b16(a.stage(s)[1][2], reg.scalar("b16", 0))
        ptx.inst.st.shared.u64(bars[s], reg.scalar("u64", 0))
    p = a.stage(STAGES - 1).ptr()
    ptx.inst.st.shared.u32(ptx.addr(p, 4), t)
    ptx.ret()


def test_static_layout_and_addresses():
    t = staged.trace(STAGES=2, TILE=64)
    text = t.ptx
    assert ".shared .align 1024 .b8 a[16384];" in text
    assert ".shared .align 8 .b64 bars[2];" in text
    # stage 1 of a (8192 bytes per stage) element [1, 2]: (64 + 2) * 2 = 132
    assert "st.shared.b16 \t[a+132]," in text and "st.shared.b16 \t[a+8324]," in text
    assert "st.shared.u64 \t[bars+8]," in text
    assert "mov.u32 \t%r1, a+8192;" in text
    assert t.dynamic_smem == 0 and t.static_smem == 16384 + 16
    assert assemble(staged, STAGES=2, TILE=64).smem == 16384 + 16


def test_over_48k_switches_to_dynamic_per_specialization():
    small = staged.trace(STAGES=2, TILE=64)     # 16 KB: static
    big = staged.trace(STAGES=4, TILE=128)      # 64 KB: dynamic
    small2 = staged.trace(STAGES=3, TILE=64)    # 24 KB: static, traced after the big one
    assert big.dynamic_smem == 4 * 128 * 64 * 2 + 32 and big.static_smem == 0
    assert ".extern .shared .align 1024 .b8 dyn_smem[];" in big.ptx
    assert "[dyn_smem+65544]" in big.ptx          # bars[1] at 65536 + 8
    assert "mov.u32 \t%r1, dyn_smem+49152;" in big.ptx
    assert "dyn_smem" not in small.ptx and "dyn_smem" not in small2.ptx
    assert (small.dynamic_smem, small2.dynamic_smem) == (0, 0)
    assert small2.static_smem == 3 * 64 * 64 * 2 + 24
    assert staged.trace(STAGES=2, TILE=64) is small
    assemble(staged, STAGES=4, TILE=128)


def test_extern_smem_option_and_user_dynamic_size():
    @kernel(arch="sm_90a", extern_smem=True, smem=4096)
    def k():
        buf = smem.alloc(f32, (8, 4), name="buf")
        ptx.inst.st.shared.f32(buf[2][1], reg.scalar(f32, 1.0))
        ptx.ret()

    t = k.trace()
    assert "[dyn_smem+36]" in t.ptx and t.dynamic_smem == 4096
    assemble(k)


def test_alignment_and_ordering():
    @kernel(arch="sm_80")
    def k():
        a = smem.alloc(u32, 3, name="a")                 # 12 bytes at 0
        b = smem.alloc(f32, (2, 2), align=128, name="b")  # at 128
        assert (a.offset, b.offset, b.nbytes) == (0, 128, 16)
        ptx.ret()

    k.ptx()


def test_smem_errors():
    @kernel(arch="sm_80")
    def bad_index():
        a = smem.alloc(f32, (4, 4))
        a[4, 0]  # oob
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad_index.ptx()
    assert str(e.value) == (f"{line_of(bad_index.fn, '# oob')}: smem_0: index 4 out of range "
                            f"for dimension 0 of size 4")

    @kernel(arch="sm_80")
    def dup():
        smem.alloc(f32, 4, name="x")
        smem.alloc(f32, 4, name="x")  # dup
        ptx.ret()

    with pytest.raises(TraceError) as e:
        dup.ptx()
    assert str(e.value) == (f"{line_of(dup.fn, '# dup')}: smem.alloc: name 'x' is already "
                            f"used in this kernel")

    @kernel(arch="sm_80")
    def bad_align():
        smem.alloc(f32, 4, align=24)  # align
        ptx.ret()

    with pytest.raises(PtxValueError, match="align must be a power of two, got 24"):
        bad_align.ptx()
