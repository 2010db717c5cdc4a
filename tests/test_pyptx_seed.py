"""The seed spellings, verbatim: DESIGN.md's essentials block (the README quickstart), the
"upstream-style spellings users will try" and the seed page's TMA call of issue 11. Each
traces, and ptxas accepts what it emits; the seed's TMA call also runs, in ``seed_widen``."""
import textwrap

import ml_dtypes
import numpy as np

from jax_pyptx.toolchain import ptxas_check
from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import b16, bf16, f32, u32

DESIGN_ESSENTIALS = '''
from pyptx import kernel, reg, smem, ptx, Tile, Layout     # alias of jax_pyptx
from pyptx.types import f32, u32, bf16

@kernel(arch="sm_90a")
def tiny():
    tid = reg.from_(ptx.special.tid.x(), u32)
    x = tid + 1
    ptx.inst.mov.u32(tid, x)
    ptx.ret()

print(tiny.ptx())
'''

UPSTREAM_SPELLINGS = '''
from pyptx import kernel, reg, smem, ptx, Tile, Layout
from pyptx.types import bf16, f32, u32

@kernel(arch="sm_90a", block=(128, 1, 1),
        in_specs=(Tile("M", "K", bf16, Layout.ROW), Tile("K", "N", bf16, Layout.ROW)),
        out_specs=(Tile("M", "N", f32, Layout.ROW),),
        grid=lambda M, N, K: (M // 128, N // 256))
def seed(A, B, C):
    src = ptx.special.tid.x()
    dst = reg.from_(src, u32)
    ptx.inst.mov.u32(dst, src)
    sA = smem.alloc(bf16, (2, 64, 64), swizzle="128B")
    bar = smem.mbarrier(2)
    x = reg.from_(ptx.special.ctaid.x(), u32)
    y = reg.from_(ptx.special.ctaid.y(), u32)
    ptx.mbarrier.init(bar[0], 1)
    ptx.cp.async_.bulk.tensor_2d(dst=sA[0], src=A.tma_desc(), coord=(x, y), mbar=bar[0])
    ptx.ret()
'''


def _run(source):
    ns: dict = {}
    exec(compile(textwrap.dedent(source), "<seed>", "exec"), ns)
    return ns


def test_design_essentials_run_verbatim(capsys):
    ns = _run(DESIGN_ESSENTIALS)
    printed = capsys.readouterr().out
    assert printed == ns["tiny"].ptx() + "\n"
    assert "\tmov.u32 \t%r0, %tid.x;\n\tadd.u32 \t%r1, %r0, 1;\n\tmov.u32 \t%r0, %r1;\n" in printed
    ptxas_check(printed, "sm_90a")


def test_upstream_style_spellings_and_the_seed_tma_call():
    k = _run(UPSTREAM_SPELLINGS)["seed"]
    t = k.trace(M=256, N=512, K=64)
    assert t.grid == (2, 2, 1)
    assert ("\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "\t[smem_0], [%rd0, {%r1, %r2}], [mbar_0];") in t.ptx
    assert [p.name for p in t.params] == ["A", "B", "C", "A_tma_desc"]
    ptxas_check(t.ptx, "sm_90a")


# The seed's TMA call, verbatim, in a kernel that runs: two 64x64 boxes of a 128B-swizzled
# tensor map land in the two stages of ``sA`` (``sA[1]`` is stage 1 on jax-pyptx), each on its
# own mbarrier; every thread then reads one row back through ``smem.apply_swizzle``.
@kernel(arch="sm_90a", block=(128, 1, 1),
        in_specs=(Tile("M", "K", bf16, Layout.TMA_128B, tma_box=(64, 64)),),
        out_specs=(Tile("M", "K", f32, Layout.ROW),),
        grid=lambda M, K: (K // 64, M // 128))
def seed_widen(A, C):
    """C = f32(A), one 128x64 tile per CTA."""
    sA = smem.alloc(bf16, (2, 64, 64), swizzle="128B")
    bar = smem.mbarrier(2)
    tid = reg.from_(ptx.special.tid.x(), u32)
    x = reg.from_(ptx.special.ctaid.x(), u32) * 64          # the column: innermost coordinate
    y = reg.from_(ptx.special.ctaid.y(), u32) * 128         # the row
    y1 = y + 64
    with ptx.if_(tid == 0):
        ptx.mbarrier.init(bar[0], 1)
        ptx.mbarrier.init(bar[1], 1)
        ptx.fence.mbarrier_init()
    ptx.bar.sync(0)
    with ptx.if_(tid == 0):
        ptx.mbarrier.arrive_expect_tx(bar[0], 64 * 64 * 2)
        ptx.cp.async_.bulk.tensor_2d(dst=sA[0], src=A.tma_desc(), coord=(x, y), mbar=bar[0])
        ptx.mbarrier.arrive_expect_tx(bar[1], 64 * 64 * 2)
        ptx.cp.async_.bulk.tensor_2d(dst=sA[1], src=A.tma_desc(), coord=(x, y1), mbar=bar[1])
    ptx.mbarrier.wait(bar[0], 0)
    ptx.mbarrier.wait(bar[1], 0)
    (pc,) = ptx.global_ptrs(C)
    K = C.shape[1]
    out = pc + ((y + tid) * K + x) * 4
    base = smem.base(sA.name)
    row = tid << 7                                          # 128 bytes per row of a stage
    h = reg.scalar(b16)
    v = reg.scalar(f32)
    for c in range(64):
        ptx.inst.ld.shared.b16(h, ptx.addr(base + smem.apply_swizzle(row + 2 * c, "128B")))
        ptx.inst.cvt.f32.bf16(v, h)
        ptx.inst.st.global_.f32(ptx.addr(out, 4 * c), v)
    ptx.ret()


def test_the_seed_tma_call_runs_on_the_interpreter():
    t = seed_widen.trace(M=256, K=128)
    assert t.grid == (2, 2, 1)
    assert ("\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "\t[smem_0+8192], [%rd1, {%r2, %r5}], [mbar_0+8];") in t.ptx
    (m,) = t.tma
    assert (m.shape, m.box, m.swizzle) == ((256, 128), (64, 64), 128)
    ptxas_check(t.ptx, "sm_90a")
    a = np.random.default_rng(8).standard_normal((256, 128)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(seed_widen.interpret(a), a.astype(np.float32))
