"""The documented pyptx surface, sections 5.12-5.14 and 7 and ``pyptx.spec``: clusters,
fences, setmaxnreg, raw PTX and source directives, intrinsics, GMMA layouts, validation."""
import warnings

import pytest

import pyptx
from pyptx import kernel, ptx, reg, smem
from pyptx.types import b32, u32
from jax_pyptx.errors import NotSupportedError, PtxValueError, TraceError, ValidationError

from .helpers import assemble, line_of
from .pyptx_util import body


def test_cluster_helpers():
    @kernel(arch="sm_90a", block=(128, 1, 1), cluster=(2, 1, 1))
    def k():
        bar = smem.mbarrier(1)
        ptx.cluster.arrive()
        ptx.cluster.wait()
        ptx.cluster.sync(aligned=True)
        ptx.cluster.arrive(release=True)
        leader = ptx.cluster.rank(0)
        remote = ptx.cluster.map_shared_u32(bar, 1)
        assert remote.type is b32
        rank = reg.from_(ptx.cluster.ctarank(), u32)
        ptx.cluster.map_shared_u32(bar[0], rank, pred=leader)
        ptx.cluster.arrive_remote(bar, rank, 2)
        ptx.ret()

    assert body(k) == [
        "barrier.cluster.arrive;", "barrier.cluster.wait;", "barrier.cluster.arrive.aligned;",
        "barrier.cluster.wait.aligned;", "barrier.cluster.arrive.release;",
        "mov.u32 %r0, %cluster_ctarank;", "setp.eq.u32 %p0, %r0, 0;",
        "mov.u32 %r2, 1;", "mapa.shared::cluster.u32 %r1, mbar_0, %r2;",
        "mov.u32 %r3, %cluster_ctarank;",
        "@%p0 mapa.shared::cluster.u32 %r4, mbar_0, %r3;",
        "mapa.shared::cluster.u32 %r5, mbar_0, %r3;",
        "mbarrier.arrive.shared::cluster.b64 _, [%r5], 2;", "ret;"]
    assemble(k)


def test_fences_and_setmaxnreg():
    @kernel(arch="sm_90a", block=(384, 1, 1))
    def k():
        ptx.fence.proxy_async()
        ptx.fence.proxy_async_shared_cta()
        ptx.fence.proxy_async_generic_acquire_shared_cluster()
        ptx.fence.mbarrier_init()
        ptx.setmaxnreg(240)
        ptx.setmaxnreg(40, inc=False)
        ptx.setmaxnreg_inc(232)
        ptx.setmaxnreg_dec(24)
        ptx.ret()

    assert body(k) == [
        "fence.proxy.async;", "fence.proxy.async.shared::cta;",
        "fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster;",
        "fence.mbarrier_init.release.cluster;", "setmaxnreg.inc.sync.aligned.u32 240;",
        "setmaxnreg.dec.sync.aligned.u32 40;", "setmaxnreg.inc.sync.aligned.u32 232;",
        "setmaxnreg.dec.sync.aligned.u32 24;", "ret;"]
    assemble(k)

    @kernel(arch="sm_90a")
    def bad():
        ptx.setmaxnreg(20)  # count
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        bad.ptx()
    assert str(e.value) == (f"{line_of(bad.fn, '# count')}: ptx.misc.setmaxnreg: count=20 is "
                            f"not allowed; allowed: 24..256, multiple of 8")


def test_raw_pragma_loc_file():
    @kernel(arch="sm_80")
    def k():
        r = reg.scalar(u32, 0)
        ptx.file_(1, "kernel.py")
        ptx.loc(1, 40)
        ptx.raw("membar.gl;")
        ptx.raw(f"@%p0 bra skip;\nadd.u32 {r.name}, {r.name}, 1;\nskip:")
        ptx.pragma("nounroll")
        ptx.ret()

    text = k.ptx()
    assert '.address_size 64\n\n.file 1 "kernel.py"\n\n.visible .entry k()' in text
    assert body(k) == ["mov.u32 %r0, 0;", ".loc 1 40 0", "membar.gl;", "@%p0 bra skip;",
                       "add.u32 %r0, %r0, 1;", "skip:", '.pragma "nounroll";', "ret;"]

    @kernel(arch="sm_80")
    def bad():
        ptx.raw("add.u32 %r0 %r0, 1;")  # parse
        ptx.ret()

    with pytest.raises(TraceError) as e:
        bad.ptx()
    assert str(e.value).startswith(f"{line_of(bad.fn, '# parse')}: ptx.raw: ")
    assert str(e.value).endswith("(in 'add.u32 %r0 %r0, 1;')")

    @kernel(arch="sm_80")
    def invalid():
        ptx.raw("add.zz.u32 %r0, %r0, 1;")  # invalid
        ptx.ret()

    with pytest.raises(ValidationError) as e:
        invalid.ptx()
    assert str(e.value).startswith(f"{line_of(invalid.fn, '# invalid')}: add.zz.u32: illegal "
                                   f"modifier .zz for add")


def test_raw_text_assembles_with_declared_predicate():
    @kernel(arch="sm_80")
    def k():
        p = reg.scalar("pred")
        r = reg.scalar(u32, 0)
        ptx.inst.setp.eq.u32(p, r, 0)
        ptx.file_(1, "kernel.py")
        ptx.loc(1, 7, 3)
        ptx.raw(f"@{p.name} bra done;\nadd.u32 {r.name}, {r.name}, 1;\ndone:")
        ptx.ret()

    assemble(k)


def test_intrinsic_nesting_and_argument_text():
    @pyptx.intrinsic
    def inner(x):
        ptx.inst.add.u32(x, x, 1)

    @pyptx.intrinsic
    def outer(x, table):
        inner(x)
        return x

    @kernel(arch="sm_80")
    def k():
        a = reg.scalar(u32, 0)
        assert outer(a, table=list(range(30))) is a
        ptx.ret()

    assert body(k) == ["mov.u32 %r0, 0;",
                       "// BEGIN outer(%r0, table=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11...)",
                       "// BEGIN inner(%r0)", "add.u32 %r0, %r0, 1;", "// END inner",
                       "// END outer", "ret;"]
    assemble(k)


def test_gmma_layout_odd_mn_width_is_a_value_error():
    from pyptx.wgmma_layout import pick_gmma_layout

    with pytest.raises(ValueError, match="MN-major row of 24 x 2-byte elements is 48 bytes"):
        pick_gmma_layout(elem_bytes=2, m_or_n=24, k=16, major="MN")


def test_spec_validation_module():
    from pyptx import spec

    assert spec.validate_instruction("add.u32 %r1, %r2, 1;") == []
    (issue,) = spec.validate_instruction("wgmma.mma_async.sync.aligned.m64n7k16.f32.bf16.bf16 "
                                         "{%f1}, %rd1, %rd2, 1, 1, 1, 0, 0;")
    assert issue.kind == "isa" and ".m64n7k16" in issue.message
    (issue,) = spec.validate_instruction(
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;", "sm_90a")
    assert issue.kind == "arch" and "needs sm_100a" in issue.message
    with pytest.raises(spec.PtxValidationError) as e:
        spec.validate_or_raise("cvt.zz.f32.f16 %f1, %h1;")
    assert str(e.value).splitlines()[0] == "cvt.zz.f32.f16"
    assert str(e.value).splitlines()[1].startswith("    cvt.zz.f32.f16: illegal modifier .zz")
    assert [f.name for f in spec.get_specs("mbarrier.init")][0] == "mbarrier.init"
    assert "wgmma.mma_async" in spec.get_specs()
    with pytest.raises(NotSupportedError, match="add the form to the table"):
        spec.register_overload("foo")


def test_strict_mode_switch():
    from pyptx import spec

    @kernel(arch="sm_80")
    def k():
        r = reg.scalar(u32, 0)
        ptx.inst.add.zz.u32(r, r, 1)
        ptx.ret()

    assert spec.is_strict()
    with pytest.raises(spec.PtxValidationError):
        k.ptx()
    with spec.strict(False):
        assert not spec.is_strict()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            text = k.ptx()
        assert "\tadd.zz.u32 \t%r0, %r0, 1;" in text
        assert [type(x.message) for x in w] == [spec.UnvalidatedInstructionWarning]
    assert spec.is_strict()

