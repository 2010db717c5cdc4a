"""@kernel: the documented first kernel, module shape, parameters, specialization."""
import subprocess
import sys
import textwrap

import pytest

import jax_pyptx
from jax_pyptx import Layout, Tile, kernel, ptx, reg
from jax_pyptx.errors import SpecializationError
from jax_pyptx.types import bf16, f32, u32

from .helpers import assemble


@kernel(arch="sm_90a")
def tiny():
    tid = reg.from_(ptx.special.tid.x(), u32)
    x = tid + 1
    ptx.inst.mov.u32(tid, x)
    ptx.ret()


TINY_BODY = """\
.visible .entry tiny()
{
	.reg .b32 	%r<2>;

	mov.u32 	%r0, %tid.x;
	add.u32 	%r1, %r0, 1;
	mov.u32 	%r0, %r1;
	ret;
}
"""


def test_tiny_module_text_and_ptxas():
    text = tiny.ptx()
    assert ".version 8.5\n.target sm_90a\n.address_size 64\n" in text
    assert text.endswith(TINY_BODY)
    rep = assemble(tiny)
    assert rep.spill_stores == 0 and rep.stack_frame == 0


def test_pyptx_alias_is_same_modules():
    import pyptx
    import pyptx.types
    from pyptx import kernel as k2
    from pyptx.types import f32 as f32_alias

    # an alias: every name of pyptx's __all__, and every other jax_pyptx name, is the same object
    assert all(getattr(pyptx, n) is getattr(jax_pyptx, n) for n in pyptx.__all__)
    assert pyptx.types is jax_pyptx.types and pyptx.Kernel is jax_pyptx.Kernel
    assert pyptx.parse is jax_pyptx.parse
    assert f32_alias is f32 and k2 is kernel
    assert pyptx.types.__spec__.name == "jax_pyptx.types"


def test_ir_is_structured():
    fn = tiny.module().function("tiny")
    add = [s for s in fn.body if getattr(s, "opcode", None) == "add"][0]
    assert add.modifiers == (".u32",)
    assert [o.name for o in add.operands[:2]] == ["%r1", "%r0"]
    assert add.operands[2].text == "1"
    assert add.loc.file == __file__


def test_kernel_properties_and_template_params():
    @kernel(arch="sm_80", in_specs=(Tile("M", "K", bf16, Layout.ROW),),
            out_specs=(Tile("M", f32),), grid=lambda M: (M // 64,), block=(64, 2),
            cluster=(1, 1, 1), smem=1024)
    def k(A, Out, *, BLOCK=64, scale=1.0):
        ptx.ret()

    assert k.template_params == {"BLOCK": 64, "scale": 1.0}
    assert k.in_specs == (Tile("M", "K", bf16),)
    assert k.out_specs == (Tile("M", f32),)
    assert k.block == (64, 2, 1) and k.cluster == (1, 1, 1) and k.smem == 1024
    assert k.arch == "sm_80" and k.shape_vars == ("M", "K")
    t = k.trace(M=256, K=32)
    assert t.grid == (4, 1, 1) and t.dynamic_smem == 1024
    assert [p.name for p in t.params] == ["A", "Out"]
    assert t.inputs[0].shape == (256, 32) and t.outputs[0].shape == (256,)
    assert ".param .u64 A,\n\t.param .u64 Out\n)" in k.ptx(M=256, K=32)


def test_specialization_errors_list_valid_names():
    @kernel(in_specs=(Tile("M", f32),), out_specs=(Tile("M", f32),))
    def k(X, Y, *, n=1):
        ptx.ret()

    with pytest.raises(SpecializationError) as e:
        k.ptx(M=4, bogus=1)
    assert str(e.value) == ("kernel 'k': unknown argument 'bogus'; valid: template parameters "
                            "(n) and shape variables (M)")
    with pytest.raises(SpecializationError) as e:
        k.ptx(n=2)
    assert str(e.value) == ("kernel 'k': missing shape variable M; pass them by keyword "
                            "(.ptx(M=...)) or call the kernel with arrays")


def test_conflicting_shape_bindings():
    import numpy as np

    @kernel(in_specs=(Tile("M", "N", f32), Tile("N", f32)), out_specs=(Tile("M", f32),))
    def k(X, W, Y):
        ptx.ret()

    assert k.bind_shapes(np.zeros((3, 5), np.float32), np.zeros(5, np.float32)) == {
        "M": 3, "N": 5}
    with pytest.raises(SpecializationError) as e:
        k.bind_shapes(np.zeros((3, 5), np.float32), np.zeros(4, np.float32))
    assert str(e.value) == ("kernel 'k': shape variable N bound to 5 by X (dim 1) but 4 by W "
                            "(dim 0)")
    with pytest.raises(SpecializationError) as e:
        k.bind_shapes(np.zeros((3,), np.float32), np.zeros(4, np.float32))
    assert str(e.value) == ("kernel 'k': parameter X expects rank 2 (Tile('M', 'N', f32)), "
                            "got an array of shape (3,)")
    with pytest.raises(SpecializationError) as e:
        k.bind_shapes(np.zeros((3, 5), np.float64), np.zeros(5, np.float32))
    assert str(e.value) == ("kernel 'k': parameter X expects dtype f32 (Tile('M', 'N', f32)), "
                            "got float64")


def test_bad_kernel_options():
    with pytest.raises(SpecializationError) as e:
        kernel(lambda: None, archh="sm_90a")
    assert ("unknown option 'archh' (did you mean 'arch'?); options: arch, version, in_specs"
            in str(e.value))
    with pytest.raises(jax_pyptx.ArchError) as e:
        kernel(arch="sm_91x")(lambda: None)
    assert str(e.value).startswith("unknown arch 'sm_91x'; allowed: sm_80, sm_86")
    with pytest.raises(SpecializationError) as e:
        @kernel(in_specs=(Tile("N", f32),))
        def two(X, Y):
            pass
    assert str(e.value) == ("kernel 'two' has 2 positional parameters (X, Y) but 1 in_specs + "
                            "0 out_specs; give one spec per tensor parameter")
    with pytest.raises(SpecializationError, match="block .* has 2048 threads; at most 1024"):
        kernel(block=(1024, 2))(lambda: None)


def test_grid_callable_missing_variable():
    @kernel(in_specs=(Tile("M", f32),), out_specs=(Tile("M", f32),), grid=lambda M, Q: (M,))
    def k(X, Y):
        ptx.ret()

    with pytest.raises(SpecializationError) as e:
        k.trace(M=4)
    assert str(e.value) == ("kernel 'k': grid callable needs Q; available: shape variables (M) "
                            "and template parameters (none)")


def test_directives_cluster_reqntid_raw():
    @kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1), reqntid=True,
            raw_directives=[".maxnreg 128", '.pragma "nounroll";'],
            raw_params=[("n", u32), ("blob", "b8", 16, 8)])
    def k():
        n = ptx.param_value("n")
        m = n + 1
        ptx.inst.mov.u32(n, m)
        ptx.ret()

    text = k.ptx()
    assert ("\t.param .u32 n,\n\t.param .align 8 .b8 blob[16]\n)\n.reqntid 128, 1, 1\n"
            ".explicitcluster\n.reqnctapercluster 2, 1, 1\n.maxnreg 128\n.pragma \"nounroll\";\n{") in text
    assert "ld.param.u32 \t%r0, [n];" in text
    assemble(k)


def test_scalar_in_spec_is_a_runtime_param():
    @kernel(in_specs=(Tile("N", f32), f32), out_specs=(Tile("N", f32),))
    def k(X, alpha, Y):
        assert alpha.type is f32
        ptx.ret()

    text = k.ptx(N=8)
    assert ".param .u64 X,\n\t.param .f32 alpha,\n\t.param .u64 Y\n" in text
    assert "ld.param.f32 \t%f0, [alpha];" in text


def test_arch_auto_resolves_at_first_trace(monkeypatch):
    @kernel(arch="auto")
    def k():
        ptx.ret()

    assert k.arch == "auto"
    monkeypatch.setenv("JAX_PYPTX_ARCH", "sm_80")
    assert ".target sm_80\n" in k.ptx()
    assert k.arch == "sm_80"


DETERMINISM = textwrap.dedent('''
    import sys
    sys.path.insert(0, {root!r})
    from jax_pyptx import kernel, reg, ptx, smem, Tile
    from jax_pyptx.types import f32, u32
    if {warm}:
        @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),))
        def other(X, Y, *, k=3):
            a = reg.scalar(f32, 1.0)
            for i in ptx.range_(0, 5):
                a += 2.0
            ptx.ret()
        other.ptx(N=16)
    @kernel(in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(32, 1, 1))
    def k(X, Y, *, m=2):
        s = smem.alloc(f32, (32,), name="s")
        t = reg.from_(ptx.special.tid.x(), u32)
        with ptx.if_(t < m):
            ptx.inst.st.shared.u32(s[1], t)
        ptx.ret()
    sys.stdout.write(k.ptx(N=64, m=3))
''')


def test_deterministic_across_processes():
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = [subprocess.run([sys.executable, "-c", DETERMINISM.format(root=root, warm=w)],
                           capture_output=True, text=True, check=True).stdout
            for w in (False, True)]
    assert outs[0] == outs[1] and ".entry k(" in outs[0]
