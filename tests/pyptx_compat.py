"""The harness of ``test_pyptx_compat_matrix.py``: section 9's table of the pyptx spec, the
registers every case starts with, the case registry, and the ``ptx.inst`` cases (one line
each)."""
from __future__ import annotations

import re
import types as pytypes
from dataclasses import dataclass, field

from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import b16, b32, bf16, f32, pred, s32, u16, u32, u64

# pyptx_api.md section 9, verbatim: files using the names -> names († / ‡ marks dropped)
TABLE = {
    21: "ptx.addr, ptx.global_ptrs, ptx.ret, ptx.special.tid.x, pyptx.kernel, pyptx.ptx, "
        "pyptx.reg, pyptx.types.f32, pyptx.types.u32, reg.scalar, ptx.inst.mov.u32",
    20: "pyptx.Tile, reg.array",
    19: "pyptx.smem",
    18: "ptx.bar.sync",
    17: "ptx.if_, pyptx.types.b32",
    14: "pyptx.types.pred, ptx.inst.st.global_.f32",
    13: "ptx.special.ctaid.x, pyptx.types.bf16, ptx.inst.add.u32, ptx.inst.setp.lt.u32",
    12: "ptx.mbarrier.init, ptx.inst.shl.b32",
    11: "ptx.loop, smem.base, ptx.inst.mul.lo.u32",
    10: "Layout.ROW, pyptx.specs.Layout, ptx.inst.and_.b32",
    9: "ptx.bra, ptx.label, ptx.tcgen05.alloc, ptx.tcgen05.dealloc, ptx.tcgen05.ld, "
       "ptx.tcgen05.relinquish_alloc_permit, pyptx.smem.apply_swizzle, smem.load, "
       "ptx.inst.mov.f32, ptx.inst.shr.u32",
    8: "ptx.tcgen05.commit, ptx.tcgen05.make_instr_desc_f16bf16_f32, ptx.tcgen05.mma, "
       "pyptx.types.b64, ptx.inst.mbarrier.try_wait.parity.shared__cta.b64, ptx.inst.mov.b32",
    7: "ptx.special.ctaid.y, ptx.tcgen05.wait_ld, ptx.inst.add.f32, ptx.inst.mul.f32, "
       "ptx.inst.st.shared.b32",
    6: "ptx.cp.async_.bulk.tensor_2d, ptx.fence.proxy_async_shared_cta, "
       "ptx.mbarrier.arrive_expect_tx, ptx.warp.reduce_sum, ptx.inst.add.s64, "
       "ptx.inst.fma.rn.f32",
    5: "ptx.tcgen05.descriptor, pyptx.types.b16, pyptx.types.u64, smem.alloc, "
       "ptx.inst.cvt.u64.u32, ptx.inst.ex2.approx.f32, ptx.inst.mul.wide.u32, "
       "ptx.inst.rcp.approx.f32",
    4: "Tile.wgmma_a, Tile.wgmma_b, ptx.mbarrier.wait, ptx.warp.reduce_max, "
       "ptx.wgmma.commit_group, ptx.wgmma.fence, ptx.wgmma.mma_async, ptx.wgmma.wait_group, "
       "smem.mbarrier, smem.wgmma_tile, ptx.inst.ld.global_.b32, ptx.inst.ld.global_.f32, "
       "ptx.inst.ld.global_.v4.f32, ptx.inst.max.f32, ptx.inst.st.global_.v4.f32, "
       "ptx.inst.sub.f32",
    3: "Layout.TMA_128B, ptx.mma.sync, ptx.scope, ptx.tcgen05.masked_descriptor, "
       "ptx.inst.cvt.rn.bf16.f32, ptx.inst.st.global_.v4.b32",
    2: "ptx.cluster.sync, ptx.cp.async_.cg, ptx.cp.async_.commit_group, "
       "ptx.cp.async_.wait_group, ptx.mbarrier.arrive, ptx.special.ctaid.z, ptx.sreg, "
       "ptx.wgmma.auto_descriptor, pyptx.Layout, ptx.inst.rsqrt.approx.f32, "
       "ptx.inst.setp.eq.u32, ptx.inst.st.global_.b32, ptx.inst.st.global_.v2.f32, "
       "ptx.inst.st.shared.b16, ptx.inst.sub.u32",
    1: "ptx.cluster.map_shared_u32, ptx.cp.async_.bulk.tensor_2d.shared_cta_global_tile, "
       "ptx.else_, ptx.fence.proxy_async_generic_acquire_shared_cluster, ptx.kloop, "
       "ptx.ldmatrix, ptx.mbarrier.array, ptx.named_barrier, ptx.param, ptx.pipeline, "
       "ptx.setmaxnreg, ptx.stmatrix_x4_trans_f32_bf16, ptx.tcgen05.fence_after_thread_sync, "
       "ptx.tcgen05.fence_before_thread_sync, ptx.tcgen05.shift, ptx.tcgen05.st, "
       "ptx.tcgen05.wait_st, ptx.tma.load_3d, ptx.tma.load_3d_multicast, ptx.tma.store_3d, "
       "ptx.wgmma.masked_descriptor, pyptx.specs.Tile, pyptx.types.s32, ptx.inst.add.s32, "
       "ptx.inst.cp.async_.bulk.commit_group, ptx.inst.cp.async_.bulk.wait_group, "
       "ptx.inst.div.u32, ptx.inst.ld.global_.u32, ptx.inst.ld.shared.b32, "
       "ptx.inst.ld.shared.u32, ptx.inst.mad.lo.s32, ptx.inst.mad.lo.u32, ptx.inst.mov.b16, "
       "ptx.inst.mov.u16, ptx.inst.rem.u32, ptx.inst.selp.b32, ptx.inst.setp.ge.u32, "
       "ptx.inst.setp.ne.u32, ptx.inst.shr.s32, ptx.inst.st.global_.v2.b32, "
       "ptx.inst.st.shared.u32, ptx.inst.wgmma.commit_group.sync.aligned, "
       "ptx.inst.wgmma.fence.sync.aligned, "
       "ptx.inst.wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16, "
       "ptx.inst.wgmma.wait_group.sync.aligned, ptx.inst.xor.b32",
}
NAMES = [n.strip() for row in TABLE.values() for n in row.split(",")]


# ----------------------------------------------------------------------------- the harness
class Env(pytypes.SimpleNamespace):
    """Registers every case starts with (declared, nothing emitted), so the next register
    of each family is: u32/b32/s32 ``%r6``, u64/b64 ``%rd2``, f32 ``%f4``, pred ``%p2``,
    b16/u16 ``%rs2``, bf16 ``%h1``.

    ``r0..r3`` u32 (``%r0..%r3``), ``s0`` s32 (``%r4``), ``w0`` b32 (``%r5``), ``rd0, rd1``
    u64, ``f0..f3`` f32, ``p0, p1`` pred, ``hs`` b16 (``%rs0``), ``us`` u16 (``%rs1``),
    ``h`` bf16 (``%h0``); ``A``, ``B``, ``C`` are the kernel's tensor parameters."""


def _env(A, B, C) -> Env:
    e = Env(A=A, B=B, C=C)
    for i in range(4):
        setattr(e, f"r{i}", reg.scalar(u32))
    e.s0, e.w0 = reg.scalar(s32), reg.scalar(b32)
    e.rd0, e.rd1 = reg.scalar(u64), reg.scalar(u64)
    for i in range(4):
        setattr(e, f"f{i}", reg.scalar(f32))
    e.p0, e.p1 = reg.scalar(pred), reg.scalar(pred)
    e.hs, e.us, e.h = reg.scalar(b16), reg.scalar(u16), reg.scalar(bf16)
    return e


@dataclass
class Case:
    names: tuple[str, ...]
    fn: object                          # fn(env) -> expected body lines (before the final ret)
    arch: str = "sm_90a"
    kw: dict = field(default_factory=dict)
    see: tuple[str, ...] = ()
    check: object = None                # check() for names that are not instructions

    @property
    def id(self) -> str:
        return self.names[0]

    def kernel(self):
        """The case's kernel: the environment, the case, ``ret``."""
        fn, out = self.fn, {}

        def probe(A, B, C):
            out["want"] = fn(_env(A, B, C))
            ptx.ret()

        probe.__name__ = "case_" + re.sub(r"\W", "_", self.id)
        probe.__qualname__ = probe.__name__
        return kernel(arch=self.arch, **self.kw)(probe), out


CASES: list[Case] = []


def case(*names, arch="sm_90a", see=(), **kw):
    def deco(fn):
        CASES.append(Case(names, fn, arch, kw, see if isinstance(see, tuple) else (see,)))
        return fn
    return deco


def check(*names, see=()):
    """A name that is not an instruction: ``fn()`` asserts what the spec says of it."""
    def deco(fn):
        CASES.append(Case(names, None, see=see if isinstance(see, tuple) else (see,),
                          check=fn))
        return fn
    return deco


SPECS = dict(in_specs=(Tile("M", "K", bf16, Layout.TMA_128B, tma_box=(64, 64)),
                       Tile("K", "N", bf16, Layout.TMA_128B, tma_box=(64, 128), tma_rank=3)),
             out_specs=(Tile("M", "N", f32),))
SHAPES = dict(M=128, N=128, K=64)


# ----------------------------------------------------------------------------- ptx.inst.*
# (name, operands as Python over the environment, the line it emits)
INST = [
    ("ptx.inst.mov.u32", "r0, r1", "mov.u32 %r0, %r1;"),
    ("ptx.inst.st.global_.f32", "addr(rd0), f0", "st.global.f32 [%rd0], %f0;"),
    ("ptx.inst.add.u32", "r0, r1, 4", "add.u32 %r0, %r1, 4;"),
    ("ptx.inst.setp.lt.u32", "p0, r0, 32", "setp.lt.u32 %p0, %r0, 32;"),
    ("ptx.inst.shl.b32", "r0, r1, 2", "shl.b32 %r0, %r1, 2;"),
    ("ptx.inst.mul.lo.u32", "r0, r1, r2", "mul.lo.u32 %r0, %r1, %r2;"),
    ("ptx.inst.and_.b32", "w0, r1, 7", "and.b32 %r5, %r1, 7;"),
    # a Python float prints in the operand's type (pyptx: str(), "1.0"); the same value
    ("ptx.inst.mov.f32", "f0, 1.0", "mov.f32 %f0, 0f3F800000;"),
    ("ptx.inst.shr.u32", "r0, r1, 3", "shr.u32 %r0, %r1, 3;"),
    ("ptx.inst.mbarrier.try_wait.parity.shared__cta.b64", "p0, addr(smem.mbarrier(2)[1]), 0",
     "mbarrier.try_wait.parity.shared::cta.b64 %p0, [mbar_0+8], 0;"),
    ("ptx.inst.mov.b32", "w0, r1", "mov.b32 %r5, %r1;"),
    ("ptx.inst.add.f32", "f0, f1, f2", "add.f32 %f0, %f1, %f2;"),
    ("ptx.inst.mul.f32", "f0, f1, 0.5", "mul.f32 %f0, %f1, 0f3F000000;"),
    ("ptx.inst.st.shared.b32", "addr(r0), w0", "st.shared.b32 [%r0], %r5;"),
    ("ptx.inst.add.s64", "rd0, rd0, rd1", "add.s64 %rd0, %rd0, %rd1;"),
    ("ptx.inst.fma.rn.f32", "f0, f1, f2, f0", "fma.rn.f32 %f0, %f1, %f2, %f0;"),
    ("ptx.inst.cvt.u64.u32", "rd0, r0", "cvt.u64.u32 %rd0, %r0;"),
    ("ptx.inst.ex2.approx.f32", "f0, f1", "ex2.approx.f32 %f0, %f1;"),
    ("ptx.inst.mul.wide.u32", "rd0, r0, 4", "mul.wide.u32 %rd0, %r0, 4;"),
    ("ptx.inst.rcp.approx.f32", "f0, f1", "rcp.approx.f32 %f0, %f1;"),
    ("ptx.inst.ld.global_.b32", "w0, addr(rd0)", "ld.global.b32 %r5, [%rd0];"),
    ("ptx.inst.ld.global_.f32", "f0, addr(rd0, 4)", "ld.global.f32 %f0, [%rd0+4];"),
    ("ptx.inst.ld.global_.v4.f32", "[f0, f1, f2, f3], addr(rd0)",
     "ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd0];"),
    ("ptx.inst.max.f32", "f0, f1, f2", "max.f32 %f0, %f1, %f2;"),
    ("ptx.inst.st.global_.v4.f32", "addr(rd0, 16), [f0, f1, f2, f3]",
     "st.global.v4.f32 [%rd0+16], {%f0, %f1, %f2, %f3};"),
    ("ptx.inst.sub.f32", "f0, f1, f2", "sub.f32 %f0, %f1, %f2;"),
    ("ptx.inst.cvt.rn.bf16.f32", "h, f0", "cvt.rn.bf16.f32 %h0, %f0;"),
    ("ptx.inst.st.global_.v4.b32", "addr(rd0), [r0, r1, r2, r3]",
     "st.global.v4.b32 [%rd0], {%r0, %r1, %r2, %r3};"),
    ("ptx.inst.rsqrt.approx.f32", "f0, f1", "rsqrt.approx.f32 %f0, %f1;"),
    ("ptx.inst.setp.eq.u32", "p1, r0, 0", "setp.eq.u32 %p1, %r0, 0;"),
    ("ptx.inst.st.global_.b32", "addr(rd0), w0", "st.global.b32 [%rd0], %r5;"),
    ("ptx.inst.st.global_.v2.f32", "addr(rd0, 8), [f0, f1]",
     "st.global.v2.f32 [%rd0+8], {%f0, %f1};"),
    ("ptx.inst.st.shared.b16", "addr(r0, 2), hs", "st.shared.b16 [%r0+2], %rs0;"),
    ("ptx.inst.sub.u32", "r0, r1, 1", "sub.u32 %r0, %r1, 1;"),
    ("ptx.inst.add.s32", "s0, s0, -1", "add.s32 %r4, %r4, -1;"),
    ("ptx.inst.cp.async_.bulk.commit_group", "", "cp.async.bulk.commit_group;"),
    ("ptx.inst.cp.async_.bulk.wait_group", "0", "cp.async.bulk.wait_group 0;"),
    ("ptx.inst.div.u32", "r0, r1, 3", "div.u32 %r0, %r1, 3;"),
    ("ptx.inst.ld.global_.u32", "r0, addr(rd1)", "ld.global.u32 %r0, [%rd1];"),
    ("ptx.inst.ld.shared.b32", "w0, addr(r0)", "ld.shared.b32 %r5, [%r0];"),
    ("ptx.inst.ld.shared.u32", "r1, addr(r0, 4)", "ld.shared.u32 %r1, [%r0+4];"),
    ("ptx.inst.mad.lo.s32", "s0, s0, 4, s0", "mad.lo.s32 %r4, %r4, 4, %r4;"),
    ("ptx.inst.mad.lo.u32", "r0, r1, r2, r3", "mad.lo.u32 %r0, %r1, %r2, %r3;"),
    ("ptx.inst.mov.b16", "hs, 7", "mov.b16 %rs0, 7;"),
    ("ptx.inst.mov.u16", "us, 65535", "mov.u16 %rs1, 65535;"),
    ("ptx.inst.rem.u32", "r0, r1, r2", "rem.u32 %r0, %r1, %r2;"),
    ("ptx.inst.selp.b32", "w0, r1, 0, p0", "selp.b32 %r5, %r1, 0, %p0;"),
    ("ptx.inst.setp.ge.u32", "p0, r0, r1", "setp.ge.u32 %p0, %r0, %r1;"),
    ("ptx.inst.setp.ne.u32", "p0, r0, 0", "setp.ne.u32 %p0, %r0, 0;"),
    ("ptx.inst.shr.s32", "s0, s0, 1", "shr.s32 %r4, %r4, 1;"),
    ("ptx.inst.st.global_.v2.b32", "addr(rd0), [r0, r1]", "st.global.v2.b32 [%rd0], {%r0, %r1};"),
    ("ptx.inst.st.shared.u32", "addr(r0), r1", "st.shared.u32 [%r0], %r1;"),
    ("ptx.inst.wgmma.commit_group.sync.aligned", "", "wgmma.commit_group.sync.aligned;"),
    ("ptx.inst.wgmma.fence.sync.aligned", "", "wgmma.fence.sync.aligned;"),
    ("ptx.inst.wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
     "reg.array(f32, 128), rd0, rd1, p0, 1, 1, 0, 1",
     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
     + ", ".join(f"%f{i}" for i in range(4, 132)) + "}, %rd0, %rd1, %p0, 1, 1, 0, 1;"),
    ("ptx.inst.wgmma.wait_group.sync.aligned", "1", "wgmma.wait_group.sync.aligned 1;"),
    ("ptx.inst.xor.b32", "w0, r0, r1", "xor.b32 %r5, %r0, %r1;"),
]


def _inst_case(name, operands, line):
    def fn(e):
        call = ptx
        for part in name.split(".")[1:]:
            call = getattr(call, part)
        ns = dict(vars(e), addr=ptx.addr, smem=smem, reg=reg, f32=f32)
        call(*eval(f"({operands},)", ns) if operands else ())
        return [line]
    fn.__name__ = name
    return fn


for _name, _ops, _line in INST:
    case(_name, see="test_pyptx_ptx_core.py::test_inst_spelling_operands_and_return_value")(
        _inst_case(_name, _ops, _line))



def one_module(texts):
    """The entries of several single-kernel modules as one module (the highest .version)."""
    heads, decls, entries = [], [], []
    for t in texts:
        head, _, rest = t.partition("\n.visible .entry ")
        lines = head.splitlines()
        heads.append(next(l for l in lines if l.startswith(".version")))
        decls += [l for l in lines if l.startswith((".extern", ".global", ".shared", ".const"))]
        entries.append(".visible .entry " + rest)
    version = max(heads, key=lambda v: tuple(int(x) for x in v.split()[1].split(".")))
    target = next(l for l in texts[0].splitlines() if l.startswith(".target"))
    return "\n".join([version, target, ".address_size 64", *dict.fromkeys(decls), "",
                      "\n".join(entries)])
