"""Hopper (TMA, mbarrier, clusters) and Blackwell (tcgen05, the sm_100a TMA forms, cluster
launch control): every form of those families, and every option of every TMA, mbarrier and
tcgen05 form, traced and assembled by ptxas for the lowest target that has it (tcgen05 once per
.cta_group: ptxas rejects a function that mixes ::1 and ::2); misuse raises with the user's
file:line."""
import itertools

import pytest

from jax_pyptx import kernel, ptx, reg, smem
from jax_pyptx.errors import PtxTypeError, PtxValueError
from jax_pyptx.types import (b16, b32, b64, b128, bf16, f16, f32, f64, pred, s32, s64, u16,
                             u32, u64)

from jax_pyptx.ir.nodes import Sink

from .helpers import line_of
from .isa_util import assemble, forms_used, inst, missing


RED_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _ins(full, *ops):
    """One table-validated instruction from its full opcode (the ``ptx.inst`` path)."""
    return inst(full, ops)


def _tma(sa, tmap, bar, full: int):
    """Every TMA / bulk-copy form and option: ``full`` (the .cta_group, 1 or 2) adds the
    sm_100a ones (cta_group, gather4, scatter4, im2col::w, shared::cta destinations,
    cp_mask)."""
    C = ptx.cp
    x = reg.scalar(s32, 0)
    mask, pol = reg.scalar(u16, 3), ptx.mem.createpolicy_fractional("evict_first")
    off = [reg.scalar(u16, 0)] * 3
    cgs = (None, full) if full else (None,)
    for dim in range(1, 6):
        t = getattr(C.async_.bulk, f"tensor_{dim}d")
        xs = [x] * dim
        for mc, policy in ((None, None), (mask, None), (None, pol), (mask, pol)):
            dsts = ("shared::cluster", "shared::cta") if full and mc is None else \
                ("shared::cluster",)
            for i, (dst, cg) in enumerate((d, c) for d in dsts for c in cgs):
                kw = dict(multicast=mc, policy=policy, dst_space=dst, cta_group=cg)
                t(sa, tmap, xs, bar, **kw)
                if dim >= 3:
                    t(sa, tmap, xs, bar, mode="im2col", im2col=off[:dim - 2], **kw)
                    if full:
                        t(sa, tmap, xs, bar, mode=("im2col::w", "im2col::w::128")[i % 2],
                          im2col=off[:2], **kw)
                if full and dim == 2:
                    t(sa, tmap, [x] * 5, bar, mode="tile::gather4", **kw)
        for policy in (None, pol):
            t.store(tmap, xs, sa, policy=policy)
            t.prefetch(tmap, xs, policy=policy)
            for op in RED_OPS:
                t.reduce(op, tmap, xs, sa, policy=policy)
                if dim >= 3:
                    t.reduce(op, tmap, xs, sa, mode="im2col_no_offs", policy=policy)
            if dim >= 3:
                t.store(tmap, xs, sa, mode="im2col_no_offs", policy=policy)
                t.prefetch(tmap, xs, mode="im2col", im2col=off[:dim - 2], policy=policy)
                if full:
                    for m in ("im2col::w", "im2col::w::128"):
                        t.prefetch(tmap, xs, mode=m, im2col=off[:2], policy=policy)
            if full and dim == 2:
                t.store(tmap, [x] * 5, sa, mode="tile::scatter4", policy=policy)
                t.prefetch(tmap, [x] * 5, mode="tile::gather4", policy=policy)
    g = ptx.addr(tmap)
    for policy in (None, pol):
        for dst in ("shared::cluster", "shared::cta") if full else ("shared::cluster",):
            C.async_.bulk(sa, g, 1024, bar, policy=policy, dst_space=dst)
        C.async_.bulk(sa, g, 1024, bar, multicast=mask, policy=policy)
        C.async_.bulk.s2g(g, sa, 1024, policy=policy)
        C.async_.bulk.prefetch(g, 1024, policy=policy)
        if full:
            C.async_.bulk.s2g(g, sa, 1024, policy=policy, byte_mask=reg.scalar(b16, 0xFF))
        for ops, types in ((("and", "or", "xor"), (b32, b64)), (("inc", "dec"), (u32,)),
                           (("min", "max"), (u32, s32, u64, s64, f16, bf16)),
                           (("add",), (u32, s32, u64, f32, f64, f16, bf16))):
            for op, ty in itertools.product(ops, types):
                C.reduce.async_.bulk(op, g, sa, 1024, type=ty, policy=policy)
    C.async_.bulk.s2s(sa, sa, 1024, bar)
    for ops, types in ((("and", "or", "xor"), (b32,)), (("inc", "dec"), (u32,)),
                       (("min", "max"), (u32, s32)), (("add",), (u32, s32, u64))):
        for op, ty in itertools.product(ops, types):
            C.reduce.async_.bulk(op, sa, sa, 1024, bar, type=ty)
    C.reduce.async_.bulk.tensor_2d("max", tmap, [x, x], sa)
    C.async_.bulk.commit_group()
    C.async_.bulk.wait_group(0, read=True)
    C.async_.bulk.wait_group(1)


def _mbarrier(bars):
    B = ptx.mbarrier
    b0, b1 = bars[0], bars[1]
    B.init(b0, 1)
    ptx.fence.mbarrier_init()
    st = B.arrive(b0)
    B.arrive(b1, sem="release", scope="cluster")
    B.arrive(b1, 1, remote=True, sem="release", scope="cluster")
    B.arrive_expect_tx(b0, 8192)
    B.arrive_expect_tx(b1, 64, remote=True, sem="relaxed", scope="cta")
    B.arrive_nocomplete(b1, 1)
    B.arrive_drop(b1)
    B.arrive_drop(b1, 1, remote=True, sem="release", scope="cta")
    B.arrive_drop(b1, expect_tx=64)
    B.arrive_drop(b1, expect_tx=64, remote=True)
    B.arrive_drop_nocomplete(b1, 1)
    B.expect_tx(b1, 64)
    B.expect_tx(b1, 64, sem="relaxed", scope="cluster", remote=True)
    B.complete_tx(b1, 64)
    B.complete_tx(b1, 64, sem="relaxed", scope="cta")
    B.test_wait(b0, st)
    B.test_wait(b0, st, sem="acquire", scope="cluster")
    B.test_wait_parity(b0, 0)
    B.test_wait_parity(b0, 1, sem="relaxed", scope="cta")
    B.try_wait(b1, st, suspend_hint=1000)
    B.try_wait(b1, st, sem="acquire", scope="cta")
    B.try_wait_parity(b1, 0, suspend_hint=1000, sem="relaxed", scope="cluster")
    B.wait(b0, 0)
    B.pending_count(st)
    B.inval(b0)
    _mbarrier_options(b0, st)


def _mbarrier_options(bar, st):
    """Every option of every mbarrier form (the ``ptx.inst`` spelling, table-validated):
    ``.shared`` and ``.shared::cta``, each memory order with each scope."""
    inst = ptx.inst
    orders = {"arrive": (".release", ".relaxed"), "wait": (".acquire", ".relaxed")}
    for i, sp in enumerate((".shared", ".shared::cta")):
        getattr(inst.mbarrier.init, sp[1:].replace("::", "__")).b64(bar, 1)
        getattr(inst.mbarrier.inval, sp[1:].replace("::", "__")).b64(bar)
        for sem, scope in ((s, c) for s in ("",) + orders["arrive"] for c in (".cta", ".cluster")):
            sem_scope = f"{sem}{scope}" if sem else ""
            for name in ("mbarrier.arrive", "mbarrier.arrive_drop"):
                _ins(f"{name}{sem_scope}{sp}.b64", st, bar)
                _ins(f"{name}.expect_tx{sem_scope}{sp}.b64", st, bar, 64)
                _ins(f"{name}{sem_scope}.shared::cluster.b64", Sink(), bar)
                _ins(f"{name}.expect_tx{sem_scope}.shared::cluster.b64", Sink(), bar, 64)
            for name in ("mbarrier.expect_tx", "mbarrier.complete_tx"):
                for space in (sp, ".shared::cluster"):
                    _ins(f"{name}{'.relaxed' + scope if sem else ''}{space}.b64", bar, 64)
        for name in ("mbarrier.arrive", "mbarrier.arrive_drop"):
            _ins(f"{name}.noComplete{('', '.release.cta')[i]}{sp}.b64", st, bar, 1)
        for sem, scope in ((s, c) for s in ("",) + orders["wait"] for c in (".cta", ".cluster")):
            sem_scope = f"{sem}{scope}" if sem else ""
            p = reg.scalar(pred)
            for name in ("mbarrier.test_wait", "mbarrier.try_wait"):
                _ins(f"{name}{sem_scope}{sp}.b64", p, bar, st)
                _ins(f"{name}.parity{sem_scope}{sp}.b64", p, bar, 1)


@kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1))
def hopper():
    sa = smem.alloc(bf16, (64, 64), align=1024, name="sa")
    tmap = reg.from_(ptx.special.globaltimer(), u64)
    bar = smem.mbarrier(2, name="bars")
    _tma(sa, tmap, bar[0], full=0)
    _mbarrier(bar)
    # clusters
    ptx.cluster.arrive(relaxed=True)
    ptx.cluster.arrive(release=True, aligned=False)
    ptx.cluster.wait()
    ptx.cluster.wait(acquire=True, aligned=False)
    ptx.cluster.sync()
    rank = reg.from_(ptx.cluster.ctarank(), u32)
    remote = ptx.cluster.map_shared(sa, rank)
    ptx.cluster.getctarank(remote)
    wide = ptx.cluster.mapa(tmap, rank)
    ptx.cluster.getctarank(wide)
    ptx.mem.st(ptx.addr(remote), reg.scalar(f32, 1.0), space="shared::cluster")
    ptx.ret()


def _tcgen05(cg: int, bar):
    """Every tcgen05 form with ``.cta_group::cg`` (ptxas rejects a function that mixes
    ::1 and ::2); the weight-stationary .ws forms exist for ::1 only."""
    slot = smem.alloc(u32, (1,), name="tslot")
    T = ptx.tcgen05
    T.alloc(slot[0], 128, cta_group=cg)
    taddr = ptx.mem.ld(slot[0], u32, space="shared")
    tm = ptx.addr(taddr)
    sa = smem.alloc(bf16, (128, 64), align=1024, name="ta")
    da = T.smem_desc_reg(sa, 16, 1024, "128B")
    idesc = reg.scalar(u32, T.instr_desc("f16", 128, 256, f32, bf16, cta_group=cg))
    en = ptx.cmp.setp("ne", taddr, 0)
    lanes = reg.array(b32, 4 * cg, 0)
    coll = ("a::fill", "a::use", "a::lastuse", "a::discard")
    ws_coll = [f"b{i}::{op}" for i in range(4) for op in ("fill", "use", "lastuse", "discard")]
    for kind in ("f16", "tf32", "f8f6f4", "i8"):
        scale = 3 if kind in ("f16", "tf32") else None
        for a in (da, tm):
            for meta in (None, tm):
                for i, c in enumerate(coll * 2):  # every collector usage, ashift for [a-tmem]
                    T.mma(taddr, a, da, idesc, en, kind=kind, cta_group=cg, sparse_meta=meta,
                          ashift=a is tm and i % 4 >= 2, collector=c,  # with lastuse/discard
                          disable_output_lane=lanes if i >= 4 else None,
                          scale_input_d=scale if i % 2 else None)
                if cg == 1:
                    for i, c in enumerate([None] + ws_coll):
                        T.mma_ws(taddr, a, da, idesc, en, kind=kind, sparse_meta=meta,
                                 collector=c, zero_column_mask=da if i % 2 else None)
    for kind, svs in (("mxf8f6f4", (None, "1X", "block32")), ("mxf4", (None, "2X", "block32")),
                      ("mxf4nvf4", ("2X", "4X", "block16", "block32"))):
        for j, sv in enumerate(svs):
            for a in (da, tm):
                for meta in (None, tm):
                    T.mma_block_scaled(taddr, a, da, idesc, tm, tm, en, kind=kind, scale_vec=sv,
                                       sparse_meta=meta, cta_group=cg,
                                       collector=coll[(j + len(kind)) % 4])
    for shape, (per, top) in T.SHAPES.items():
        num = 1
        kw = {"half_splitoff": 0} if shape == "16x32bx2" else {}
        while num <= top:
            if per * num <= 128:
                r = T.ld(taddr, shape, num, **kw)
                T.st(taddr, r, shape, **kw)
                T.ld(taddr, shape, num, pack16=True, **kw)
                T.st(taddr, r, shape, unpack16=True, **kw)
            num *= 2
    T.wait_ld()
    T.wait_st()
    for fmt in (None, "b6x16_p32", "b4x16_p64"):
        for shape in ("128x256b", "4x256b", "128x128b"):
            T.cp(taddr, da, shape, src_fmt=fmt, cta_group=cg)
        for mc in ("warpx2::02_13", "warpx2::01_23"):
            T.cp(taddr, da, "64x128b", multicast=mc, src_fmt=fmt, cta_group=cg)
        T.cp(taddr, da, "32x128b", multicast="warpx4", src_fmt=fmt, cta_group=cg)
    T.shift(taddr, cta_group=cg)
    T.commit(bar, cta_group=cg)
    T.commit(bar, cluster=True, cta_group=cg)
    T.commit(bar, multicast=reg.scalar(u16, 3), cta_group=cg)
    T.fence_before_thread_sync()
    T.fence_after_thread_sync()
    T.dealloc(taddr, 128, cta_group=cg)
    T.relinquish_alloc_permit(cta_group=cg)
    return sa


@kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1))
def blackwell():
    bar = smem.mbarrier(2, name="tbar")
    sa = _tcgen05(1, bar[0])
    # the sm_100a TMA forms, cluster launch control
    tmap = reg.from_(ptx.special.globaltimer(), u64)
    _tma(sa, tmap, bar[1], full=1)
    res = smem.alloc(b64, (2,), align=16, name="cancel")
    ptx.cluster.try_cancel(res[0], bar[0])
    ptx.cluster.try_cancel(res[0], bar[0], multicast=True)
    h = reg.scalar(b128)
    ptx.inst.ld.shared.b128(h, res[0])
    ptx.cluster.query_cancel(h)
    ptx.cluster.query_cancel(h, "get_first_ctaid")
    for d in ("x", "y", "z"):
        ptx.cluster.query_cancel(h, f"get_first_ctaid::{d}")
    ptx.ret()


@kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1))
def blackwell_pair():
    bar = smem.mbarrier(2, name="tbar")
    sa = _tcgen05(2, bar[0])
    _tma(sa, reg.from_(ptx.special.globaltimer(), u64), bar[1], full=2)
    ptx.ret()


@pytest.mark.parametrize("k", [hopper, blackwell, blackwell_pair], ids=lambda k: k.name)
def test_assembles_for_its_target(k):
    assemble(k)


def test_tma_text():
    text = hopper.ptx()
    assert ("\tcp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
            ".multicast::cluster.L2::cache_hint \t[sa], [%rd" in text)
    text = blackwell_pair.ptx()
    assert ("\tcp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx"
            "::bytes.cta_group::2 \t[ta], [%rd" in text)


FAMILIES = ("tma", "mbarrier", "cluster", "tcgen05")


def test_every_tma_mbarrier_cluster_tcgen05_form_is_exercised():
    used = forms_used(hopper) | forms_used(blackwell) | forms_used(blackwell_pair)
    for fam in FAMILIES:
        left = missing(used, fam)
        assert left == [], (fam, left)


def test_tcgen05_ld_st_every_shape_and_count():
    left = [m for m in missing(forms_used(blackwell), "tcgen05")
            if m.startswith(("tcgen05.ld", "tcgen05.st"))]
    assert left == []


def test_wgmma_accumulator_count_error():
    @kernel(arch="sm_90a")
    def k():
        acc = reg.array(f32, 3)
        d = reg.scalar(b64, 0)
        ptx.wgmma.mma_async(acc, d, d, n=16, atype=bf16)  # three regs
        ptx.ret()

    with pytest.raises(PtxTypeError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# three regs')}: "
                            f"wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 operand 1: "
                            f"expected a vector of 8 registers, got 3")


def test_wgmma_shape_not_legal_for_dtype():
    @kernel(arch="sm_90a")
    def k():
        acc = reg.array(s32, 20)
        d = reg.scalar(b64, 0)
        ptx.wgmma.mma_async(acc, d, d, dtype=s32, atype="s8")  # n=40 int8
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value).startswith(
        f"{line_of(k.fn, '# n=40 int8')}: ptx.wgmma.mma_async: no form of wgmma.mma_async "
        f"takes sync=True, aligned=True, shape='.m64n40k32'")


def test_bad_option_names_parameter():
    # on sm_100a: on a Hopper target the arch is named first (issue 15,
    # test_inst_checks.test_typed_wrappers_name_the_arch_before_their_argument_checks)
    @kernel(arch="sm_100a")
    def k():
        ptx.tcgen05.ld(reg.scalar(u32), "32x32b", 3)  # num
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# num')}: ptx.tcgen05.ld: num=3 is not allowed; "
                            f"allowed: 1, 2, 4, 8, 16, 32, 64, 128")


def test_tcgen05_above_arch():
    from jax_pyptx.errors import ArchError

    @kernel(arch="sm_90a")
    def k():
        ptx.tcgen05.fence_after_thread_sync()  # blackwell
        ptx.ret()

    with pytest.raises(ArchError) as e:
        k.ptx()
    assert str(e.value) == (f"{line_of(k.fn, '# blackwell')}: tcgen05.fence::after_thread_sync "
                            f"needs sm_100a or sm_101a or sm_103a or sm_110a (PTX ISA 8.6); "
                            f"kernel 'k' targets sm_90a")
