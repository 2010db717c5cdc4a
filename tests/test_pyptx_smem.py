"""The documented pyptx surface, section 4: ``smem`` allocations, stage views, 2-d element
access, mbarrier arrays, the shared window, swizzles."""
import numpy as np
import pytest

from pyptx import Tile, kernel, ptx, reg, smem
from pyptx.types import b64, bf16, f32, u16, u32
from jax_pyptx.errors import PtxIndexError, PtxTypeError

from .helpers import assemble, line_of
from .pyptx_util import body, decls


def test_alloc_names_alignment_and_views():
    @kernel(arch="sm_90a")
    def k():
        a = smem.alloc(bf16, (2, 64, 64), "128B")
        b = smem.alloc(f32, 16)
        bars = smem.mbarrier(2)
        assert isinstance(a, smem.SharedAlloc) and smem.SharedSlice is smem.SharedAlloc
        assert repr(a) == "SharedAlloc('smem_0', bf16, (2, 64, 64))"
        assert (a.swizzle, a.align, a.byte_offset, b.align, b.byte_offset) == (
            "128B", 1024, 0, 128, 16384)
        s1 = a[1]
        assert (s1.name, s1.stage, s1.alloc.shape, s1.shape, s1.byte_offset) == (
            "smem_0", 1, (2, 64, 64), (64, 64), 8192)
        assert bars.byte_offset == 16448 and bars.count == 2
        b1 = bars[1]
        assert isinstance(b1, smem.MbarrierRef) and repr(b1) == "MbarrierRef(mbar_0[1])"
        assert (b1.name, b1.idx, b1.array is bars, b1.byte_offset) == ("mbar_0", 1, True, 16456)
        assert ptx.addr(b1) == ptx.addr(bars[1])
        ptx.inst.st.shared.b64(bars[1], reg.scalar(b64, 0))
        ptx.inst.st.shared.f32(b[3], reg.scalar(f32, 0.0))
        ptx.cp.async_.bulk.tensor_2d(dst=s1, src=reg.scalar("u64", 0), coord=(0, 0),
                                     mbar=bars[0])
        ptx.ret()

    assert decls(k)[-3:] == [".shared .align 1024 .b8 smem_0[16384];",
                             ".shared .align 128 .b8 smem_1[64];",
                             ".shared .align 8 .b64 mbar_0[2];"]
    lines = body(k)
    assert "st.shared.b64 [mbar_0+8], %rd0;" in lines and "st.shared.f32 [smem_1+12], %f0;" in lines
    assert ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[smem_0+8192], [%rd1, {0, 0}], [mbar_0];") in lines
    assemble(k)


def test_mbarrier_index_error():
    @kernel(arch="sm_90a")
    def k():
        bar = smem.mbarrier(2)
        ptx.mbarrier.init(bar[2], 1)  # oob
        ptx.ret()

    with pytest.raises(PtxIndexError) as e:
        k.ptx()
    assert isinstance(e.value, IndexError)
    assert str(e.value) == f"{line_of(k.fn, '# oob')}: Mbarrier index 2 out of range for mbar_0[2]"


def test_2d_element_access_with_register_indices():
    @kernel(arch="sm_80", block=(8, 1, 1))
    def k():
        s = smem.alloc(u32, (8, 4), name="s")
        h = smem.alloc(u16, (2, 3), name="h")
        t = reg.from_(ptx.special.tid.x(), u32)
        s[t, 1] = t
        v = s[t, 1]
        s[0, t] = v
        w = s[2, t]
        h[1, t] = reg.scalar(u16, 7)
        del w
        ptx.ret()

    assert body(k) == [
        "mov.u32 %r0, %tid.x;",
        "mul.lo.u32 %r2, %r0, 4;", "add.u32 %r1, %r2, 1;", "shl.b32 %r3, %r1, 2;",
        "mov.b32 %r4, s;", "add.u32 %r4, %r4, %r3;", "st.shared.u32 [%r4], %r0;",
        "mul.lo.u32 %r6, %r0, 4;", "add.u32 %r5, %r6, 1;", "shl.b32 %r7, %r5, 2;",
        "mov.b32 %r8, s;", "add.u32 %r8, %r8, %r7;", "ld.shared.u32 %r9, [%r8];",
        "mov.u32 %r10, %r0;", "shl.b32 %r11, %r10, 2;", "mov.b32 %r12, s;",
        "add.u32 %r12, %r12, %r11;", "st.shared.u32 [%r12], %r9;",
        "add.u32 %r13, %r0, 8;", "shl.b32 %r14, %r13, 2;", "mov.b32 %r15, s;",
        "add.u32 %r15, %r15, %r14;", "ld.shared.u32 %r16, [%r15];",
        "mov.u16 %rs0, 7;", "add.u32 %r17, %r0, 3;", "shl.b32 %r18, %r17, 1;",
        "mov.b32 %r19, h;", "add.u32 %r19, %r19, %r18;", "st.shared.u16 [%r19], %rs0;", "ret;"]
    assemble(k)


def test_2d_element_access_runs_on_the_interpreter():
    @kernel(arch="sm_80", block=(4, 1, 1), out_specs=(Tile(4, 3, u32),))
    def transpose_rows(Y):
        (py,) = ptx.global_ptrs(Y)
        s = smem.alloc(u32, (3, 4))
        t = reg.from_(ptx.special.tid.x(), u32)
        for j in range(3):
            s[j, t] = t * 10 + j            # row j, column t
        ptx.bar.sync(0)
        for j in range(3):
            v = s[j, t]
            ptx.inst.st.global_.u32(ptx.addr(py + reg.cvt(t * 3 + j, "u64") * 4), v)
        ptx.ret()

    want = np.array([[10 * t + j for j in range(3)] for t in range(4)], np.uint32)
    np.testing.assert_array_equal(transpose_rows.interpret(), want)


def test_2d_access_errors():
    @kernel(arch="sm_80")
    def bad_value():
        s = smem.alloc(u32, (2, 2))
        s[reg.scalar(u32, 0), 0] = 5  # not a register
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        bad_value.ptx()
    assert str(e.value) == (f"{line_of(bad_value.fn, '# not a register')}: smem_0[row, col] = "
                            f"...: the value must be a register, got 5")

    @kernel(arch="sm_80")
    def not_tuple():
        s = smem.alloc(u32, (2, 2))
        s[0] = reg.scalar(u32, 0)  # one index
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        not_tuple.ptx()
    assert str(e.value) == (f"{line_of(not_tuple.fn, '# one index')}: smem_0[0] = ...: stores "
                            f"take a (row, col) index of a 2-d buffer")


def test_base_load_store_swizzle_and_layout_helpers():
    from pyptx.wgmma_layout import layout_for_b

    @kernel(arch="sm_90a", smem=4096)
    def k():
        base = smem.base()
        t = smem.alloc_with_layout(bf16, (16, 64), swizzle="128B", name="tile",
                                   gmma_layout=layout_for_b(dtype=bf16, k=16, n=64),
                                   gmma_major="MN")
        mn = smem.wgmma_tile(bf16, (16, 64), major="mn")
        named = smem.base(mn.name)
        assert (t.gmma_major, mn.gmma_major, mn.swizzle) == ("MN", "MN", "128B")
        off = reg.scalar(u32, 48)
        sw = smem.apply_swizzle(off, "128b")
        v = smem.load(bf16, ptx.addr(base, 0))
        smem.store(bf16, ptx.addr(named, 2), v)
        del sw
        ptx.ret()

    assert body(k) == [
        "mov.u32 %r0, dyn_smem;", "mov.u32 %r1, dyn_smem+2048;", "mov.u32 %r2, 48;",
        "and.b32 %r3, %r2, 896;", "shr.u32 %r3, %r3, 3;", "xor.b32 %r4, %r2, %r3;",
        "ld.shared.b16 %h0, [%r0];", "st.shared.b16 [%r1+2], %h0;", "ret;"]
    assemble(k)
