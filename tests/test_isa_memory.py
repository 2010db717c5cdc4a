"""Memory, atomics, fences, barriers, warp, misc, data and control wrappers: every form of
those families traced (sm_100a, with an sm_90a kernel for the Hopper-only forms) and
assembled by ptxas for the target."""
from jax_pyptx import kernel, ptx, reg, smem
from jax_pyptx.types import (b16, b32, b64, b128, bf16, bf16x2, e4m3, f16, f16x2, f32, f64, s32, s64, u16, u32, u64)

from .isa_util import TextKernel, assemble, forms_used, missing


def memory_body():
    M = ptx.mem
    p = reg.from_(ptx.special.globaltimer(), u64)
    buf = smem.alloc(f32, (256,), name="buf")
    bars = smem.mbarrier(1)
    a = ptx.addr(p)
    v = reg.scalar(f32, 1.0)
    pol = M.createpolicy_fractional("evict_last", "evict_unchanged", 0.5)
    M.createpolicy_fractional("evict_first"); M.createpolicy_range(a, 128, 256)
    M.createpolicy_range(a, 128, 256, "evict_normal", "evict_first"); M.createpolicy_cvt(pol)
    # ld / st, every shape (scalar, .v2, .v4 of <= 32-bit; 256-bit .v8 32-bit / .v4 64-bit),
    # each family with and without a cache policy
    shapes = ((None, f32), (2, b64), (4, u32))
    wide = ((8, b32), (4, f64))
    for vec, t in shapes + wide:
        val = reg.array(t, vec) if vec else reg.scalar(t)
        small = (vec, t) in shapes
        for policy in (None, pol):
            pf = "128B" if policy is None else "256B"
            l2 = None if small else "evict_first"
            if small:
                M.ld(a, t, space="global", cop="cg", vec=vec, policy=policy, prefetch=pf)
                M.st(a, val, space="global", cop="wt", policy=policy)
                M.ld(a, t, space="global", nc=True, cop="ca", vec=vec, policy=policy)
            M.ld(a, t, space="global", l1="evict_last", l2=l2, vec=vec, policy=policy,
                 prefetch=pf)
            M.ld(a, t, space="global", sem="acquire", scope="gpu", vec=vec, policy=policy,
                 l1="evict_first", l2=l2)
            M.ld(a, t, space="global", nc=True, l1="no_allocate", l2=l2, vec=vec,
                 policy=policy)
            M.st(a, val, space="global", l1="evict_unchanged", l2=l2, policy=policy)
            M.st(a, val, space="global", sem="release", scope="sys", policy=policy,
                 l1="evict_normal", l2=l2)
        if small:
            M.ld(a, t, space="global", sem="volatile", vec=vec, prefetch="64B")
            M.ld(buf[0], t, space="shared", sem="volatile", vec=vec)
            M.st(a, val, space="global", sem="volatile")
            M.ld(a, t, space="local", vec=vec); M.st(a, val, space="local", cop="cs")
            M.ld(a, t, space="shared::cluster", sem="relaxed", scope="cluster", vec=vec)
            M.st(a, val, space="shared::cta", sem="release", scope="cta")
    M.ld(a, u32, space="global", sem="relaxed", scope="cluster")
    M.ld(a, u32, space="global", sem="mmio")
    M.ld(a, f16, space="global"); M.st(a, reg.scalar(bf16x2), space="global")   # as .b16/.b32
    M.ld(a, b128, space="global")
    M.ld(buf[0], f32, space="shared"); M.ld(buf[4], f32, space="shared::cta", vec=4)
    M.ld(a, f32, space="global", sem="weak")
    M.ldu(a, f32); M.ldu(a, f64, vec=2); M.ldu(a, u16, vec=4)
    M.st(a, reg.scalar(u32, 0), space="global", sem="mmio")
    M.st(buf[0], reg.array(f32, 4), space="shared")
    M.st(a, reg.scalar(u32, 0), space="global", sem="relaxed", scope="cta")
    M.st_async(buf[0], v, bars[0]); M.st_async(buf[0], reg.array(f32, 2), bars[0])
    M.st_async(buf[0], reg.array(b64, 2), bars[0]); M.st_bulk(buf[0], 128)
    M.prefetch(a, "L1", space="global"); M.prefetch(a, "L2")
    M.prefetch(a, "L2::evict_last", space="global")
    M.prefetch(a, "L2::evict_normal", space="global"); M.prefetchu(a); M.prefetch_tensormap(a)
    M.prefetch_tensormap(a, space="param")
    M.applypriority(a); M.discard(a)
    sp = reg.scalar(u64)
    ptx.inst.stacksave.u64(sp)
    ptx.inst.alloca.u64(reg.scalar(u64), reg.scalar(u64, 64), 16)
    ptx.inst.alloca.u32(reg.scalar(u32), 32)
    ptx.inst.stackrestore.u64(sp)
    M.cvta(p, "shared", to=True); M.cvta(p, "shared"); M.cvta(p, "global", to=True)
    M.cvta(p, "shared::cta"); M.cvta(p, "param", to=True)
    for sp in ("global", "shared", "shared::cta", "shared::cluster", "local", "const", "param"):
        M.isspacep(p, sp)
    # ---------------------------------------------------------------- atomics
    A = ptx.atomic
    u, s, d = reg.scalar(u32, 1), reg.scalar(s64, 1), reg.scalar(b64)
    for policy in (None, pol):
        for op, val in (("and", d), ("or", u), ("xor", d), ("inc", u), ("dec", u),
                        ("add", v), ("min", s), ("max", u)):
            A.atom(op, a, val, space="global", policy=policy)
            A.red(op, a, val, space="global", policy=policy)
        A.atom("exch", a, u, space="global", policy=policy)
        A.atom("add", a, reg.scalar(f16), space="global", policy=policy)
        A.red("add", a, reg.scalar(bf16x2), space="global", policy=policy)
        A.atom("add", a, reg.array(f32, 4), space="global", policy=policy)
        A.red("add", a, reg.array(f32, 2), space="global", policy=policy)
        A.atom("max", a, reg.array(bf16, 8), space="global", policy=policy)
        A.red("min", a, reg.array(f16, 4), space="global", policy=policy)
        A.atom("add", a, reg.array(f16x2, 4), space="global", policy=policy)
        A.red("max", a, reg.array(bf16x2, 2), space="global", policy=policy)
    A.atom("add", a, v, space="global", sem="relaxed", scope="gpu")
    A.atom("cas", a, u, u, space="global")
    A.atom("cas", a, reg.scalar(b16), reg.scalar(b16), space="global", sem="acq_rel",
           scope="cluster")
    A.atom("exch", a, d, space="shared::cta"); A.atom("min", a, s, space="global")
    A.atom("inc", a, u); A.atom("add", a, reg.scalar(f64), space="global")
    A.atom("cas", a, reg.scalar(b128), reg.scalar(b128), space="global")
    A.atom("exch", a, reg.scalar(b128), space="shared::cluster", sem="acquire", scope="cluster")
    A.red("xor", a, u, space="shared", sem="release", scope="cta")
    A.red_async("add", buf[0], u, bars[0]); A.red_async("xor", buf[0], reg.scalar(b32), bars[0])
    A.red_async("min", buf[0], reg.scalar(s32), bars[0]); A.red_async("inc", buf[0], u, bars[0])
    A.red_async("add", buf[0], reg.scalar(u64), bars[0])
    # ---------------------------------------------------------------- fences
    F = ptx.fence
    F.fence("sc", "gpu"); F.fence("acq_rel", "cluster"); F.fence(None, "cta"); F.membar("cta")
    F.membar("gl"); F.membar("sys"); F.membar_proxy_alias(); F.proxy_alias(); F.proxy_async()
    F.proxy_async("shared::cta"); F.proxy_async("global"); F.proxy_async("shared::cluster")
    F.proxy_tensormap_release("gpu"); F.proxy_tensormap_acquire(a, "sys"); F.mbarrier_init()
    F.acquire_sync_restrict(); F.release_sync_restrict()
    F.proxy_async_generic("acquire"); F.proxy_async_generic("release")
    # ---------------------------------------------------------------- barriers
    B = ptx.bar
    q = ptx.cmp.setp("lt", u, 5)
    B.sync(); B.sync(1, 128); B.sync(2, 128, aligned=False); B.sync(3, aligned=True)
    B.arrive(3, 64); B.arrive(3, 64, aligned=True); B.arrive(4, 64, aligned=False)
    B.red_popc(0, q); B.red_popc(0, q, 128); B.red_popc(0, q, 128, aligned=False)
    B.red_popc(1, q, aligned=True)
    B.red_and(0, q); B.red_or(1, q, 128); B.red_and(1, q, 128, aligned=True)
    B.red_or(1, q, aligned=False)
    B.warp_sync()
    # ---------------------------------------------------------------- warp
    W = ptx.warp
    W.shfl_bfly(u, 1); W.shfl_up(v, 1, width=8); W.shfl_down(u, 2)
    W.shfl("idx", u, 0, with_pred=True)
    W.vote("any", q); W.vote("all", q); W.vote("uni", q); W.ballot(q)
    W.match_any(u); W.match_all(p); W.match_all(u, with_pred=False)
    W.redux("add", u); W.redux("and", u); W.redux("max", reg.scalar(s32))
    W.elect(); W.elect_one(); W.activemask(); W.reduce(v, "max")
    W.redux("min", v, abs=True, nan=True); W.redux("max", v)
    # ---------------------------------------------------------------- misc, data, control
    X = ptx.misc
    X.nanosleep(100); X.griddepcontrol_wait(); X.griddepcontrol_launch_dependents()
    X.pmevent(1); X.pmevent(3, mask=True)
    # pack / unpack: halves and quarters of each width (bytes in real .b8 registers: fp8)
    for wide, elem, n in ((b16, e4m3, 2), (b32, b16, 2), (b32, e4m3, 4), (b64, b32, 2),
                          (b64, f16, 4), (b128, b64, 2), (b128, f32, 4)):
        mv = getattr(ptx.inst.mov, wide.name)
        w = reg.scalar(wide)
        mv(w, reg.array(elem, n)); mv(reg.array(elem, n), w)
    with ptx.if_(q):
        X.trap(); X.brkpt()
    with ptx.if_(ptx.cmp.setp("eq", u, 7)):
        ptx.exit()
    skip = ptx.label("uni")
    ptx.bra(skip, uni=True)
    ptx.place(skip)
    ptx.ret()


@kernel(arch="sm_100a", block=(128, 1, 1), cluster=(2, 1, 1))
def mem_sm100():
    memory_body()


@kernel(arch="sm_90a", block=(128, 1, 1))
def misc_sm90():
    ptx.misc.setmaxnreg(232)
    ptx.misc.setmaxnreg(40, inc=False)
    ptx.ret()


# call and brx.idx (the DSL emits neither): every form, from PTX text
calls_sm80 = TextKernel("calls_sm80", "sm_80", """
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 r) g(.param .b32 x)
{
    .reg .b32 %t;
    ld.param.b32 %t, [x];
    st.param.b32 [r], %t;
    ret;
}
.func h()
{
    ret;
}
.visible .entry calls_sm80(.param .u32 n)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u32 %r1, [n];
    {
    .param .b32 p0;
    .param .b32 r0;
    st.param.b32 [p0], %r1;
    call.uni (r0), g, (p0);
    ld.param.b32 %r2, [r0];
    }
    call h;
    call.uni h;
    call h, ();
    call.uni h, ();
    mov.u64 %rd1, g;
    mov.u64 %rd2, h;
    {
    .param .b32 p0;
    .param .b32 r0;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (r0), %rd1, (p0), proto;
    call.uni (r0), %rd1, (p0), proto;
    }
    {
    hproto: .callprototype _ ();
    call %rd2, hproto;
    call.uni %rd2, (), hproto;
    }
    ts: .branchtargets L0, L1;
    brx.idx.uni %r1, ts;
L0:
    brx.idx %r1, ts;
L1:
    ret;
}
""")

FAMILIES = ("memory", "atomic", "sync", "fence", "misc", "warp", "data", "control")


def test_memory_atomic_sync_warp_assemble_for_sm_100a():
    text = assemble(mem_sm100)
    assert "\tld.global.L1::evict_last.L2::cache_hint.L2::256B.f32 \t" in text
    assert "\tld.global.L1::evict_last.L2::evict_first.L2::cache_hint.L2::256B.v4.f64 \t" in text
    assert "\tatom.global.v4.f32.add" not in text and "\tatom.global.add.v4.f32 \t" in text
    assert "\tfence.proxy.async.shared::cta;\n" in text
    assert "\tshfl.sync.bfly.b32 \t" in text


def test_setmaxnreg_text_and_assembles():
    text = assemble(misc_sm90)
    assert "\tsetmaxnreg.inc.sync.aligned.u32 \t232;\n" in text
    assert "\tsetmaxnreg.dec.sync.aligned.u32 \t40;\n" in text


def test_calls_assemble():
    text = assemble(calls_sm80)
    assert "\tcall.uni \t(r0), g, (p0);\n" in text and "\tbrx.idx.uni \t%r1, ts;\n" in text


def test_every_memory_atomic_sync_warp_misc_form_is_exercised():
    from .test_isa_extra import multimem_sm90

    used = forms_used(mem_sm100) | forms_used(misc_sm90) | forms_used(calls_sm80) | \
        forms_used(multimem_sm90)
    for fam in FAMILIES:
        left = missing(used, fam)
        assert left == [], (fam, left)
