"""The documented pyptx surface, sections 5.7-5.8: CTA and named barriers, mbarriers (and
hand-laid mbarrier arrays), cp.async, bulk tensor copies (keyword, ``.store``,
``.shared_cta_global_tile``, the positional ``bulk.tensor`` object) and ``ptx.tma``."""
import pytest

from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import b64, bf16, f32, pred, u16, u32, u64
from jax_pyptx.errors import NotSupportedError, PtxIndexError, PtxValueError

from .helpers import assemble, line_of
from .pyptx_util import body


def test_barriers():
    @kernel(arch="sm_90a", block=(256, 1, 1))
    def k():
        ptx.bar.sync()
        ptx.bar.sync(1, 128)
        r = reg.scalar(u32, 2)
        nb = ptx.named_barrier(r, count=128)
        assert (nb.barrier_id, nb.count) == (r, 128)
        nb.sync()
        ptx.named_barrier(3, count=64).arrive()
        ptx.ret()

    assert body(k) == ["bar.sync 0;", "bar.sync 1, 128;", "mov.u32 %r0, 2;",
                       "bar.sync %r0, 128;", "bar.arrive 3, 64;", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a")
    def bad():
        ptx.named_barrier(16)  # id
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# id')}: ptx.named_barrier: barrier_id=16 is "
                            f"not allowed; allowed: 0..15 or a register")


def test_mbarrier_wrappers():
    @kernel(arch="sm_90a", block=(128, 1, 1))
    def k():
        bar = smem.mbarrier(2)
        ptx.mbarrier.init(bar[0], 1)
        st = ptx.mbarrier.arrive(bar[0])
        tx = ptx.mbarrier.arrive_expect_tx(bar[1], 4096)
        ptx.mbarrier.expect_tx(bar[1], 1024)
        ph = reg.scalar(u32, 0)
        p = ptx.mbarrier.try_wait(bar[0], ph)
        q = ptx.mbarrier.try_wait(bar[0], st)              # a b64 state: the state form
        ptx.mbarrier.try_wait(bar[0], st, parity=False)
        ptx.mbarrier.wait(bar[1], ph, pred=p)
        ptx.mbarrier.inval(bar[1])
        assert (st.type, tx.type, p.type, q.type) == (b64, b64, pred, pred)
        ptx.ret()

    assert body(k) == [
        "mbarrier.init.shared::cta.b64 [mbar_0], 1;",
        "mbarrier.arrive.shared.b64 %rd0, [mbar_0];",
        "mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [mbar_0+8], 4096;",
        "mbarrier.expect_tx.shared.b64 [mbar_0+8], 1024;", "mov.u32 %r0, 0;",
        "mbarrier.try_wait.parity.shared::cta.b64 %p0, [mbar_0], %r0;",
        "mbarrier.try_wait.shared::cta.b64 %p1, [mbar_0], %rd0;",
        "mbarrier.try_wait.shared::cta.b64 %p2, [mbar_0], %rd0;",
        "$L_mbar_wait_0:", "@%p0 mbarrier.try_wait.parity.shared::cta.b64 %p3, [mbar_0+8], %r0;",
        "@!%p3 bra $L_mbar_wait_0;", "mbarrier.inval.shared.b64 [mbar_0+8];", "ret;"]
    assemble(k)


def test_mbarrier_array():
    @kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1), smem=1024)
    def k():
        base = smem.base()
        full = ptx.mbarrier.array(base, 64, 3)
        full.init_all(2)
        s1 = full[1]
        assert (s1.byte_offset, len(full)) == (72, 3)
        s1.arrive_expect_tx(128)
        s1.arrive()
        s1.wait(0)
        assert ptx.mbarrier.array(base, 0, 1)[0].addr_reg() is base
        assert s1.addr_reg() is s1.addr_reg()
        stage = reg.scalar(u32, 2)
        full.at(stage).wait(1)
        full[2].arrive_remote(1)
        sym = ptx.mbarrier.array(smem.alloc(b64, 4), 8, 2)
        sym[1].addr_reg()
        sym.init_all(1)
        ptx.ret()

    assert body(k) == [
        "mov.u32 %r0, dyn_smem;",
        "mbarrier.init.shared::cta.b64 [%r0+64], 2;",
        "mbarrier.init.shared::cta.b64 [%r0+72], 2;",
        "mbarrier.init.shared::cta.b64 [%r0+80], 2;",
        "mbarrier.arrive.expect_tx.shared::cta.b64 %rd0, [%r0+72], 128;",
        "mbarrier.arrive.shared.b64 %rd1, [%r0+72];",
        "$L_mbar_wait_0:", "mbarrier.try_wait.parity.shared::cta.b64 %p0, [%r0+72], 0;",
        "@!%p0 bra $L_mbar_wait_0;",
        "add.u32 %r1, %r0, 72;", "mov.u32 %r2, 2;", "shl.b32 %r3, %r2, 3;",
        "add.u32 %r3, %r3, 64;", "add.u32 %r4, %r3, %r0;",
        "$L_mbar_wait_1:", "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r4], 1;",
        "@!%p1 bra $L_mbar_wait_1;",
        "add.u32 %r5, %r0, 80;", "mov.u32 %r7, 1;",
        "mapa.shared::cluster.u32 %r6, %r5, %r7;",
        "mbarrier.arrive.shared::cluster.b64 _, [%r6], 1;",
        "mov.u32 %r8, dyn_smem;", "add.s32 %r8, %r8, 16;",
        "mbarrier.init.shared::cta.b64 [dyn_smem+8], 1;",
        "mbarrier.init.shared::cta.b64 [dyn_smem+16], 1;", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a")
    def oob():
        ptx.mbarrier.array(smem.alloc(b64, 2), 0, 2)[2]  # oob
        ptx.ret()

    with pytest.raises(PtxIndexError) as e:
        oob.ptx()
    assert str(e.value) == (f"{line_of(oob.fn, '# oob')}: Mbarrier index 2 out of range for "
                            f"mbarrier.array(smem_0+0, 2)")


def test_mbarrier_array_address_operand_and_arrive_remote_all():
    @kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1), smem=1024)
    def k():
        bars = ptx.mbarrier.array(smem.base(), 0, 2)
        ptx.inst.mbarrier.init.shared__cta.b64(bars[1].address_operand(), 1)
        bars.arrive_remote_all(1, 2)        # each barrier, in CTA 1 of the cluster
        ptx.ret()

    assert body(k) == [
        "mov.u32 %r0, dyn_smem;", "mbarrier.init.shared::cta.b64 [%r0+8], 1;",
        "mov.u32 %r2, 1;", "mapa.shared::cluster.u32 %r1, %r0, %r2;",
        "mbarrier.arrive.shared::cluster.b64 _, [%r1], 2;",
        "add.u32 %r3, %r0, 8;", "mov.u32 %r5, 1;", "mapa.shared::cluster.u32 %r4, %r3, %r5;",
        "mbarrier.arrive.shared::cluster.b64 _, [%r4], 2;", "ret;"]
    assemble(k)


def test_cp_async():
    @kernel(arch="sm_80")
    def k():
        s = smem.alloc(f32, 16)
        g = reg.scalar(u64, 0)
        ptx.cp.async_.cg(ptx.addr(s), ptx.addr(g), 16)
        ptx.cp.async_.ca(ptx.addr(s, 16), ptx.addr(g, 16), 8)
        ptx.cp.async_.commit_group()
        ptx.cp.async_.wait_group(1)
        ptx.cp.async_.wait_all()
        ptx.ret()

    assert body(k)[1:] == ["cp.async.cg.shared.global [smem_0], [%rd0], 16;",
                           "cp.async.ca.shared.global [smem_0+16], [%rd0+16], 8;",
                           "cp.async.commit_group;", "cp.async.wait_group 1;",
                           "cp.async.wait_all;", "ret;"]
    assemble(k)


def test_bulk_tensor_keyword_forms():
    @kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1),
            in_specs=(Tile(8, 64, bf16), Tile(4, 8, 64, bf16)))
    def k(A, B):
        s = smem.alloc(bf16, (2, 8, 64), swizzle="128B")
        bar = smem.mbarrier(1)
        x = reg.scalar(u32, 0)
        mask = reg.scalar(u16, 3)
        a, b = A.tma_desc(), B.tma_desc()
        ptx.cp.async_.bulk.tensor_2d(dst=s[0], src=a, coord=(x, 0), mbar=bar[0])
        ptx.cp.async_.bulk.tensor_3d(dst=s[1], src=b, coord=(0, x, 1), mbar=bar[0],
                                     multicast_mask=mask)
        ptx.cp.async_.bulk.tensor_2d.store(dst=a, src=s[1], coord=(x, x))
        ptx.cp.async_.bulk.commit_group()
        ptx.cp.async_.bulk.wait_group(0, read=True)
        ptx.cp.async_bulk.wait_group(0)
        ptx.ret()

    assert body(k)[4:] == [
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[smem_0], [%rd0, {%r0, 0}], [mbar_0];",
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [smem_0+1024], [%rd1, {0, %r0, 1}], [mbar_0], %rs0;",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd0, {%r0, %r0}], "
        "[smem_0+1024];",
        "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group.read 0;",
        "cp.async.bulk.wait_group 0;", "ret;"]
    assemble(k)


def test_bulk_tensor_blackwell_forms_and_positional_object():
    @kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1),
            in_specs=(Tile(8, 64, bf16), Tile(2, 4, 8, 64, bf16)))
    def k(A, B):
        s = smem.alloc(bf16, (2, 8, 64), swizzle="128B")
        bar = smem.mbarrier(1)
        x = reg.scalar(u32, 0)
        a, b = A.tma_desc(), B.tma_desc()
        ptx.cp.async_.bulk.tensor_2d.shared_cta_global_tile(dst=s[0], src=a, coord=(x, 0),
                                                            mbar=bar[0], cta_group=2)
        ptx.cp.async_.bulk.tensor_2d(dst=s[0], src=a, coord=(x, 0), mbar=bar[0], cta_group=2)
        T = ptx.cp.async_.bulk.tensor
        T.tile_2d(s[1], a, (x, 8), mbar=bar[0])
        T.store_2d(a, s[1], (x, 8))
        T.gather4_2d(s[0], a, (0, x, x, x, x), mbar=bar[0])
        T.im2col_4d(s[0], b, (0, 0, x, 0), (reg.scalar(u16, 0), reg.scalar(u16, 0)),
                    mbar=bar[0])
        ptx.ret()

    assert body(k)[3:] == [
        "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"
        ".cta_group::2 [smem_0], [%rd0, {%r0, 0}], [mbar_0];",
        "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [smem_0], [%rd0, {%r0, 0}], [mbar_0];",
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[smem_0+1024], [%rd0, {%r0, 8}], [mbar_0];",
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd0, {%r0, 8}], "
        "[smem_0+1024];",
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.tile::gather4"
        " [smem_0], [%rd0, {0, %r0, %r0, %r0, %r0}], [mbar_0];",
        "mov.u16 %rs0, 0;", "mov.u16 %rs1, 0;",
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.im2col "
        "[smem_0], [%rd1, {0, 0, %r0, 0}], [mbar_0], {%rs0, %rs1};", "ret;"]
    assemble(k)


@pytest.mark.parametrize("call,msg", [
    (lambda s, d, b: ptx.cp.async_.bulk.tensor_2d(dst=s, src=d, coord=(0,), mbar=b),
     "ptx.cp.async_.bulk.tensor_2d: coords must have 2 entries for a 2d tensor, got 1"),
    (lambda s, d, b: ptx.cp.async_.bulk.tensor_2d(dst=s, src=d, coord=(0, 0), mbar=b,
                                                  cta_group=3),
     "ptx.cp.async_.bulk.tensor_2d: cta_group=3 is not allowed; allowed: 1, 2"),
    (lambda s, d, b: ptx.cp.async_.bulk.tensor_2d.store(dst=d, coord=(0, 0)),
     "ptx.cp.async_.bulk.tensor_2d.store: needs dst (the tensor map), src (shared memory) and "
     "coord"),
])
def test_bulk_tensor_errors(call, msg):
    @kernel(arch="sm_90a", in_specs=(Tile(8, 64, bf16),))
    def k(A):
        call(smem.alloc(bf16, (8, 64)), A.tma_desc(), smem.mbarrier(1)[0])  # the call
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value).startswith(__file__) and str(e.value).endswith(f": {msg}")


def test_tma_rank3_helpers():
    @kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1),
            in_specs=(Tile(128, 256, bf16, Layout.TMA_128B, tma_box=(64, 128), tma_rank=3),))
    def k(A):
        s = smem.alloc(bf16, (2, 64, 64), swizzle="128B")
        bar = smem.mbarrier(1)
        d = A.tma_desc()
        row = reg.scalar(u32, 64)
        col = reg.scalar(u32, 128)
        ptx.tma.load_3d(s[0], d, row=row, col=col, mbar=bar[0])
        ptx.tma.load_3d(s[1], d, row=0, col=192, mbar=bar[0])
        ptx.tma.load_3d(s[1], d, coords=(0, row, 1), mbar=bar[0])
        mask = reg.scalar(u16, 3)
        ptx.tma.load_3d_multicast(s[0], d, row=row, col=64, mbar=bar[0], mask=mask, issuer=0)
        ptx.tma.store_3d(d, s[0], row=row, col=col)
        ptx.ret()

    assert body(k)[3:] == [
        "shr.u32 %r2, %r1, 6;",
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[smem_0], [%rd0, {0, %r0, %r2}], [mbar_0];",
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[smem_0+8192], [%rd0, {0, 0, 3}], [mbar_0];",
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        "[smem_0+8192], [%rd0, {0, %r0, 1}], [mbar_0];",
        "mov.u16 %rs0, 3;", "mov.u32 %r3, %cluster_ctarank;", "setp.eq.u32 %p0, %r3, 0;",
        "@%p0 cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [smem_0], [%rd0, {0, %r0, 1}], [mbar_0], %rs0;",
        "shr.u32 %r4, %r1, 6;",
        "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd0, {0, %r0, %r4}], "
        "[smem_0];", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a", in_specs=(Tile(128, 256, bf16),))
    def both(A):
        s = smem.alloc(bf16, (64, 64))
        p = reg.scalar(pred)
        ptx.tma.load_3d_multicast(s, A.tma_desc(), row=0, col=0, mbar=smem.mbarrier(1)[0],  # x
                                  mask=3, issuer=0, pred=p)
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        both.ptx()
    assert str(e.value) == (f"{line_of(both.fn, '# x')}: ptx.tma.load_3d_multicast: give "
                            f"issuer= or pred=, not both")

    @kernel(arch="sm_90a", in_specs=(Tile(128, 256, bf16),))
    def no_col(A):
        ptx.tma.load_3d(smem.alloc(bf16, 64), A.tma_desc(), row=0, mbar=smem.mbarrier(1)[0])  # c
        ptx.ret()

    with pytest.raises(TypeError, match="ptx.tma.load_3d: give row= and col= .or coords=."):
        no_col.ptx()


def test_cluster_arrive_multicast_is_refused_with_the_reason():
    @kernel(arch="sm_100a", cluster=(2, 1, 1))
    def k():
        ptx.cluster.arrive_multicast(smem.mbarrier(1)[0], 3)  # multicast
        ptx.ret()

    with pytest.raises(NotSupportedError) as e:
        k.ptx()
    assert "ptxas has no mbarrier.arrive.shared::cluster.multicast::cluster form" in str(e.value)

