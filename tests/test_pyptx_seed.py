"""The seed spellings, verbatim: DESIGN.md's essentials block (the README quickstart), the
"upstream-style spellings users will try" and the seed page's TMA call of issue 11. Each
traces, and ptxas accepts what it emits."""
import textwrap

from jax_pyptx.toolchain import ptxas_check

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
    assert ("\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            "\t[smem0], [%rd0, {%r1, %r2}], [mbar1];") in t.ptx
    assert [p.name for p in t.params] == ["A", "B", "C", "A_tma_desc"]
    ptxas_check(t.ptx, "sm_90a")
