"""The documented pyptx surface, sections 1-2: module map, text conventions, the kernel
decorator and Kernel object, the .param list, shared-memory modes, Layout, Tile, TensorSpec
and TMA descriptor handles."""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import pyptx
from pyptx import Layout, Tile, kernel, ptx, reg, smem
from pyptx.types import bf16, f16, f32, u32, u64
from jax_pyptx.errors import PtxValueError, SpecializationError, TraceError

from .helpers import assemble, line_of
from .pyptx_util import body, header

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------- 1.1 module map
def test_every_documented_module_imports():
    names = {"kernel": "jax_pyptx.kernel_def", "reg": "jax_pyptx.dsl.reg",
             "smem": "jax_pyptx.dsl.smem", "ptx": "jax_pyptx.dsl.ptx",
             "specs": "jax_pyptx.compat.specs", "types": "jax_pyptx.types",
             "wgmma_layout": "jax_pyptx.dsl.wgmma_layout", "spec": "jax_pyptx.compat.spec",
             "ir": "jax_pyptx.ir", "parser": "jax_pyptx.text.parser",
             "emitter": "jax_pyptx.text.printer", "codegen": "jax_pyptx.compat.codegen",
             "_trace": "jax_pyptx.dsl.trace_scope"}
    for short, real in names.items():
        m = importlib.import_module("pyptx." + short)
        assert m is sys.modules[real], short
    from pyptx.kernel import Kernel, TensorSpec, TmaDescriptorHandle, kernel as deco  # noqa
    import pyptx.kernel as m

    assert m is pyptx.kernel is deco and callable(m)       # the decorator, not the module
    from pyptx.specs import Dim, Layout as L2, Tile as T2, unify_envs  # noqa: F401
    from pyptx.wgmma_layout import GmmaLayout, LayoutType, Major, layout_for_a, layout_for_b, \
        pick_gmma_layout  # noqa: F401
    from pyptx.spec import (PtxValidationError, UnvalidatedInstructionWarning,  # noqa: F401
                            ValidationError, ValidationIssue, get_specs, is_strict,
                            register_overload, set_strict, strict, validate_instruction,
                            validate_or_raise)
    from pyptx.parser import parse
    from pyptx.emitter import emit
    from pyptx.codegen import ptx_to_python  # noqa: F401
    from pyptx._trace import trace_scope  # noqa: F401

    assert ValidationError is ValidationIssue and (L2, T2) == (Layout, Tile)
    from pyptx import codegen, emitter, spec, wgmma_layout  # noqa: F401  (attribute form)
    assert spec.set_strict is set_strict and wgmma_layout.Major is Major
    text = ".version 8.5\n.target sm_80\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n"
    assert emit(parse(text), header=False) == text
    assert pyptx.__all__ == ["kernel", "reg", "smem", "ptx", "intrinsic", "Tile", "Layout"]
    assert callable(pyptx.intrinsic) and pyptx.reg is reg and pyptx.Tile is Tile

    @pyptx.kernel
    def after_the_imports():
        ptx.ret()

    assert body(after_the_imports) == ["ret;"]


def test_codegen_module_and_command_line(tmp_path):
    from pyptx.codegen import ptx_to_python

    src = ".version 8.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
    py = ptx_to_python(src)
    assert "@kernel(arch='sm_80', version=(8, 5))\ndef matmul_kernel():" in py
    assert "def k():" in ptx_to_python(src, kernel_name=None)
    f = tmp_path / "k.ptx"
    f.write_text(src)
    out = subprocess.run([sys.executable, "-m", "pyptx.codegen", str(f), "--sugar", "--name",
                          "gemm"], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert "def gemm():" in out.stdout
    ns: dict = {}
    exec(compile(out.stdout, "gemm.py", "exec"), ns)
    assert ns["gemm"].ptx().endswith("\n.visible .entry gemm()\n{\n\tret;\n}\n")


def test_trace_scope_opens_a_bare_trace():
    from pyptx._trace import trace_scope

    with trace_scope(ptx_version=(8, 5)) as t:
        r = reg.scalar(u32, 1)
        ptx.inst.add.u32(r, r, 2)
        smem.alloc(f32, 4)
    assert t.lines() == ["mov.u32 %r0, 1;", "add.u32 %r0, %r0, 2;"]
    with pytest.raises(TraceError) as e:
        reg.scalar(u32)  # outside again
    assert isinstance(e.value, RuntimeError)


def test_calls_outside_a_trace_are_runtime_errors():
    with pytest.raises(RuntimeError) as e:
        smem.alloc(f32, 4)  # no trace
    assert str(e.value).startswith(f"{line_of(test_calls_outside_a_trace_are_runtime_errors, '# no trace')}"
                                   f": smem.alloc must run inside a @kernel function")
    # pure-value helpers work anywhere
    assert ptx.special.tid.x().ir.name == "%tid.x" and ptx.sreg("%clusterid.x").type is u32
    assert ptx.tcgen05.make_instr_desc_f16bf16_f32() == 138413200
    assert ptx.addr("K").base.name == "K"


# ----------------------------------------------------------------------------- 1.3 text
@pytest.mark.parametrize("arch,version", [("sm_80", "8.5"), ("sm_90a", "8.5"),
                                          ("sm_100a", "8.8"), ("sm_120", "8.7"),
                                          ("sm_120a", "8.7")])
def test_default_version_per_target(arch, version):
    @kernel(arch=arch)
    def k():
        ptx.ret()

    assert k.ptx().split("\n\n")[1].startswith(f".version {version}\n.target {arch}\n"
                                             f".address_size 64")
    assert header(k).endswith(".visible .entry k()\n")
    assemble(k)


def test_version_is_raised_by_what_the_kernel_uses_and_set_by_version():
    @kernel(arch="sm_90a")
    def newer():
        ptx.fence.proxy_async_generic_acquire_shared_cluster()    # PTX ISA 8.6
        ptx.ret()

    @kernel(arch="sm_90a", version=(8, 0))
    def pinned():
        ptx.ret()

    assert ".version 8.6\n" in newer.ptx() and ".version 8.0\n" in pinned.ptx()
    assemble(newer)
    assemble(pinned)


# ----------------------------------------------------------------------------- 2.1/2.2 kernel
def test_kernel_object_surface():
    def gemm(A, B, C, *, BM=128, BK):
        """Doc of gemm."""
        ptx.ret()

    from pyptx.kernel import Kernel

    k = Kernel(gemm, arch="sm_90a", in_specs=(
        Tile("M", "K", bf16), Tile("K", "N", bf16)), out_specs=(Tile("M", "N", f32),),
        grid=lambda **env: env["M"] // 128, block=(128, 1, 1), smem=1024)
    assert (k.__name__, k.__doc__, k.__wrapped__) == ("gemm", "Doc of gemm.", gemm)
    assert repr(k) == "Kernel(gemm, arch='sm_90a')"
    assert (k.in_specs, k.out_specs) == ((Tile("M", "K", bf16), Tile("K", "N", bf16)),
                                         (Tile("M", "N", f32),))
    assert (k.block, k.cluster, k.smem, k.arch) == ((128, 1, 1), (1, 1, 1), 1024, "sm_90a")
    assert list(k.template_params) == ["BM", "BK"]
    t = k.trace(M=512, K=64, N=64, BK=32)
    assert t.grid == (4, 1, 1) and t.dynamic_smem == 1024
    assert k.module(M=512, K=64, N=64, BK=32) is k.module(M=512, K=64, N=64, BK=32)


def test_grid_forms():
    def make(grid):
        @kernel(in_specs=(Tile("M", f32),), out_specs=(Tile("M", f32),), grid=grid)
        def k(X, Y):
            ptx.ret()
        return k.trace(M=256).grid

    assert make(None) == (1, 1, 1)
    assert make((2, 3, 4)) == (2, 3, 4)
    assert make(lambda M: M // 64) == (4, 1, 1)
    assert make(lambda M: (M // 64, 2)) == (4, 2, 1)
    assert make(lambda **env: (env["M"], 1, 1)) == (256, 1, 1)


def test_unhashable_template_values_specialize_by_value():
    @kernel(arch="sm_80")
    def k(*, offsets=(0,)):
        r = reg.scalar(u32, 0)
        for o in offsets:
            r += o
        ptx.ret()

    assert body(k, offsets=[1, 2]) == ["mov.u32 %r0, 0;", "add.u32 %r0, %r0, 1;",
                                       "add.u32 %r0, %r0, 2;", "ret;"]
    assert k.trace(offsets=[1, 2]) is k.trace(offsets=[1, 2])
    assert k.trace(offsets=[1, 3]) is not k.trace(offsets=[1, 2])


# ----------------------------------------------------------------------------- 2.3 params
def test_raw_params_type_strings():
    @kernel(arch="sm_90a", raw_params=[("u32", "M"), ("u64.ptr.global.palign16", "A"),
                                       ("u64.ptr.global", "B"), ("b8.align64.array128", "desc"),
                                       ("f32", "alpha")])
    def k():
        m = ptx.param(u32, "M")
        d = ptx.param(u64, "desc")
        a = ptx.param("f32", "alpha")
        ptx.inst.add.u32(m, m, 1)
        ptx.inst.add.f32(a, a, 1.0)
        ptx.cvta.param(d)
        ptx.ret()

    assert header(k).endswith(
        ".visible .entry k(\n\t.param .u32 M,\n\t.param .u64 .ptr .global .align 16 A,\n"
        "\t.param .u64 .ptr .global .align 1 B,\n\t.param .align 64 .b8 desc[128],\n"
        "\t.param .f32 alpha\n)\n")
    assert body(k)[:3] == ["ld.param.u32 %r0, [M];", "mov.u64 %rd0, desc;",
                           "ld.param.f32 %f0, [alpha];"]
    assemble(k)


@pytest.mark.parametrize("entry,msg", [
    (("u64.ptr", "A"), "raw_params type 'u64.ptr': .ptr needs a state space (global, shared, "
                       "const, local)"),
    (("u32.palign4", "A"), "raw_params type 'u32.palign4': unknown part 'palign4'; the form is "
                           "base[.ptr.<space>[.palignN]][.alignN][.arrayN], e.g. "
                           "'u64.ptr.global.palign16' or 'b8.align64.array128'"),
])
def test_raw_param_type_string_errors(entry, msg):
    with pytest.raises(SpecializationError) as e:
        kernel(raw_params=[entry])(lambda: None)
    assert str(e.value) == msg


def test_positional_parameters_without_specs_are_raw_pointers():
    @kernel(arch="sm_80", block=(4, 1, 1), raw_params=[("u32", "n")])
    def k(X, Y):
        px, py = ptx.global_ptrs(X, Y)
        assert repr(X) == "TensorSpec('X')" and X.shape is None
        tid = reg.from_(ptx.special.tid.x(), u32)
        off = reg.scalar(u64)
        ptx.inst.mul.wide.u32(off, tid, 4)
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(px + off))
        ptx.inst.st.global_.f32(ptx.addr(py + off), v + 1.0)
        raw = reg.scalar(u64)
        ptx.inst.ld.param.u64(raw, ptx.addr(X))           # [X]: the parameter itself
        ptx.ret()

    assert header(k).endswith("(\n\t.param .u64 X,\n\t.param .u64 Y,\n\t.param .u32 n\n)\n")
    assert body(k)[-2:] == ["ld.param.u64 %rd7, [X];", "ret;"]
    assemble(k)
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    from jax_pyptx.interpret import launch

    launch(k.ptx(), "k", [x, y, np.uint32(4)], block=(4, 1, 1))
    np.testing.assert_array_equal(y, x + 1)
    y2 = np.zeros(4, np.float32)
    assert k.interpret(X=x, Y=y2, n=np.uint32(4)) == ()        # raw pointers, by name
    np.testing.assert_array_equal(y2, x + 1)


def test_param_order_specs_raw_then_tma_slots():
    @kernel(arch="sm_90a", in_specs=(Tile("M", "K", bf16), Tile("K", "N", bf16),
                                     Tile("T", u32)), out_specs=(Tile("M", "N", bf16),),
            raw_params=[("u32", "M"), ("u32", "N"), ("u32", "K")])
    def gemm(A, B, hilbert_schedule, C):
        A.tma_desc()
        B.tma_desc()
        C.tma_desc()
        ptx.ret()

    params = header(gemm, M=128, N=128, K=64, T=4)
    names = [line.split()[-1].rstrip(",") for line in params.splitlines()
             if line.startswith("\t.param")]
    assert names == ["A", "B", "hilbert_schedule", "C", "M", "N", "K", "A_tma_desc",
                     "B_tma_desc", "C_tma_desc"]


def test_raw_directives_as_name_value_pairs():
    @kernel(arch="sm_90a", block=(384, 1, 1), cluster=(2, 1, 1),
            raw_directives=[("maxntid", (384, 1, 1)), ("explicitcluster", ()),
                            ("reqnctapercluster", (2, 1, 1))])
    def k():
        ptx.ret()

    assert header(k).endswith("k()\n.maxntid 384, 1, 1\n.explicitcluster\n"
                              ".reqnctapercluster 2, 1, 1\n")
    assemble(k)


# ----------------------------------------------------------------------------- 2.4 smem modes
def test_extern_smem_names_the_window_and_smem_base_uses_it():
    @kernel(arch="sm_90a", extern_smem="global_smem", smem=8192)
    def k():
        base = smem.base()
        v = smem.load(u32, ptx.addr(base, 64))
        smem.store(u32, base, v)
        ptx.ret()

    assert ".address_size 64\n\n.extern .shared .align 128 .b8 global_smem[];\n\n" in k.ptx()
    assert body(k) == ["mov.u32 %r0, global_smem;", "ld.shared.u32 %r1, [%r0+64];",
                       "st.shared.u32 [%r0], %r1;", "ret;"]
    assert k.trace().dynamic_smem == 8192
    assemble(k)


def test_smem_above_48k_makes_allocations_dynamic():
    @kernel(arch="sm_90a", smem=100 * 1024)
    def k():
        a = smem.alloc(f32, (16,))
        ptx.inst.st.shared.f32(a[3], reg.scalar(f32, 0.0))
        ptx.ret()

    t = k.trace()
    assert ".extern .shared .align 128 .b8 dyn_smem[];" in t.ptx and "[dyn_smem+12]" in t.ptx
    assert (t.dynamic_smem, t.static_smem) == (100 * 1024, 0)
    assemble(k)


# ----------------------------------------------------------------------------- 2.5/2.6 Tile
def test_layout_members():
    assert [(m.name, m.value, m.swizzle_bytes) for m in Layout] == [
        ("ROW", "row", 0), ("COL", "col", 0), ("TMA_128B", "tma_128b", 128),
        ("TMA_64B", "tma_64b", 64), ("TMA_32B", "tma_32b", 32),
        ("INTERLEAVED", "interleaved", 0)]


def test_tile_classification_and_dataclass_behaviour():
    from dataclasses import FrozenInstanceError, fields

    t = Tile("M", 16, bf16, Layout.ROW)
    assert repr(t) == ("Tile(shape=('M', 16), dtype=bf16, layout=<Layout.ROW: 'row'>, "
                       "tma_box=None, tma_rank=2, tma_padding=False)")
    assert [f.name for f in fields(Tile)] == ["shape", "dtype", "layout", "tma_box", "tma_rank",
                                              "tma_padding"]
    assert Tile(4, dtype=f32, layout=Layout.COL) == Tile(f32, 4, Layout.COL)
    assert hash(t) == hash(Tile("M", 16, bf16)) and len({t, Tile("M", 16, bf16)}) == 1
    assert (t.rank, t.symbolic_dims, t.resolve_shape({"M": 8})) == (2, ("M",), (8, 16))
    with pytest.raises(FrozenInstanceError):
        t.shape = (1,)
    with pytest.raises(KeyError):
        t.resolve_shape({})
    assert t.extract_env((32, 16)) == {"M": 32}
    assert t.matches((32, 16), "bf16") and not t.matches((32, 8), "bf16")
    assert not t.matches((32, 16), "float32") and t.matches((32, 16), bf16)
    from pyptx.specs import unify_envs

    assert unify_envs([{"M": 4}, {"M": 4, "N": 2}]) == {"M": 4, "N": 2}
    with pytest.raises(ValueError, match="shape variable M bound to 4 and 5"):
        unify_envs([{"M": 4}, {"M": 5}])


@pytest.mark.parametrize("args,kw,exc,msg", [
    (("M", f32, bf16), {}, ValueError, "Tile('M', f32, bf16): two dtypes, f32 and bf16; a Tile "
                                       "has one dtype"),
    (("M", 1.5, f32), {}, TypeError, "Tile('M', 1.5, f32): 1.5 (float) is neither a dimension "
                                     "(int or symbol name), a dtype such as f32, nor a Layout"),
    (("M", 4), {}, ValueError, "Tile requires a dtype (e.g. Tile('M', f32)); got Tile('M', 4)"),
    ((f32,), {}, ValueError, "Tile(f32): a Tile needs at least one dimension"),
])
def test_tile_errors(args, kw, exc, msg):
    with pytest.raises(exc) as e:
        Tile(*args, **kw)
    assert str(e.value) == msg


def test_tile_extract_env_errors():
    t = Tile("M", 16, f32)
    with pytest.raises(ValueError, match=r"Tile\('M', 16, f32\): expects rank 2, got shape "
                                         r"\(4,\)"):
        t.extract_env((4,))
    with pytest.raises(ValueError, match=r"dim 1 must be 16, got shape \(4, 8\)"):
        t.extract_env((4, 8))


@pytest.mark.parametrize("make,layout,box", [
    (lambda: Tile.wgmma_a(64, 16, bf16), Layout.TMA_32B, None),
    (lambda: Tile.wgmma_a(64, 64, bf16, tile_k=16), Layout.TMA_32B, (64, 16)),
    (lambda: Tile.wgmma_a(64, 64, bf16), Layout.TMA_128B, None),
    (lambda: Tile.wgmma_a("M", "K", bf16, tile_m=64, tile_k=64), Layout.TMA_128B, (64, 64)),
    (lambda: Tile.wgmma_b(64, 128, bf16, tile_n=64), Layout.TMA_128B, (64, 64)),
    (lambda: Tile.wgmma_b(16, 8, bf16), Layout.ROW, None),
    (lambda: Tile.wgmma_b(16, 16, bf16), Layout.TMA_32B, None),
    (lambda: Tile.wgmma_a("M", "K", bf16), Layout.ROW, None),
])
def test_tile_wgmma_operands(make, layout, box):
    t = make()
    assert (t.layout, t.tma_box) == (layout, box)


def test_tile_wgmma_a_error():
    with pytest.raises(ValueError) as e:
        Tile.wgmma_a(64, 12, bf16)
    assert str(e.value) == ("pyptx: wgmma_a(12, bf16) has row width 24 bytes, which is not one "
                            "of the canonical GMMA widths {16, 32, 64, 128}.")


# ----------------------------------------------------------------------------- 2.7 TensorSpec
def test_tensor_spec_and_handle_outside_a_trace():
    from pyptx.kernel import TensorSpec, TmaDescriptorHandle

    a = TensorSpec("A", shape=(1, 2), dtype=bf16)
    assert repr(a) == "TensorSpec('A', shape=(1, 2), dtype=bf16)"
    assert repr(TensorSpec("B")) == "TensorSpec('B')"
    h = a.tma_desc()
    assert isinstance(h, TmaDescriptorHandle) and h.tensor is a
    assert (h.name, repr(h)) == ("A_tma_desc", "TmaDescriptorHandle('A_tma_desc')")


def test_tma_desc_slot_register_and_box_defaults():
    @kernel(arch="sm_90a", in_specs=(Tile("M", "K", bf16, Layout.TMA_128B, tma_box=("BM", 64)),
                                     Tile(256, 256, f32), Tile(300, 40, f16)),
            out_specs=(Tile(128, 256, bf16, Layout.TMA_64B),))
    def k(A, B, C, D, *, BM=128):
        a = A.tma_desc()
        assert A.tma_desc() is a            # one slot, one register
        B.tma_desc()
        C.tma_desc()
        D.tma_desc()
        ptx.inst.prefetch.tensormap(ptx.addr(a))
        ptx.inst.mov.b64(reg.scalar(u64), A)          # a tensor as an operand: its name
        ptx.ret()

    t = k.trace(M=512, K=128, BM=64)
    got = [(h.param, h.shape, h.box, h.swizzle) for h in t.tma]
    assert got == [("A_tma_desc", (512, 128), (64, 64), 128),
                   ("B_tma_desc", (256, 256), (128, 32), 0),    # 128 rows x 128 bytes
                   ("C_tma_desc", (300, 40), (128, 40), 0),     # clamped to the tensor
                   ("D_tma_desc", (128, 256), (128, 32), 64)]   # one 64-byte span of bf16
    lines = body(k, M=512, K=128, BM=64)
    assert lines[:4] == [f"ld.param.u64 %rd{i}, [{n}_tma_desc];" for i, n in enumerate("ABCD")]
    assert "mov.b64 %rd4, A;" in lines
    assemble(k, M=512, K=128, BM=64)


def test_tma_rank3_stripe_view_and_its_errors():
    @kernel(arch="sm_90a", in_specs=(Tile(128, 256, bf16, Layout.TMA_128B, tma_box=(64, 128),
                                          tma_rank=3, tma_padding=True),))
    def k(A):
        A.tma_desc()
        ptx.ret()

    (h,) = k.trace().tma
    assert (h.shape, h.strides, h.box, h.swizzle) == ((4, 128, 64), (128, 512, 2), (2, 64, 72),
                                                      128)

    @kernel(arch="sm_90a", in_specs=(Tile(128, 256, bf16, tma_rank=3),))
    def no_box(A):
        A.tma_desc()  # no box
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        no_box.ptx()
    assert str(e.value) == (f"{line_of(no_box.fn, '# no box')}: A.tma_desc: tma_rank=3 needs "
                            f"tma_box=(rows, cols) in its Tile")

    @kernel(arch="sm_90a", in_specs=(Tile("M", 128, bf16, tma_box=("BM", 64)),))
    def unbound(A):
        A.tma_desc()  # BM
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        unbound.ptx(M=128)
    assert str(e.value) == (f"{line_of(unbound.fn, '# BM')}: A.tma_desc: tma_box names 'BM', "
                            f"which is neither a shape variable nor an int template parameter "
                            f"of this call")
