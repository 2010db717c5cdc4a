"""Determinism: the same kernel gives byte-identical PTX, whatever was traced before and
whatever the hash seed. Tracing memoises opcode chains, validation verdicts (keyed by operand
kinds and types), register vectors and immediates; none of that may change the text."""
import hashlib
import os
import subprocess
import sys

from jax_pyptx import Kernel, kernel, ptx, reg, smem
from jax_pyptx.types import b32, b64, bf16, f32, pred, u32

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@kernel(arch="sm_90a", block=(128, 1, 1))
def mixed():
    """Operators, immediates of every kind, branches, loops, wrappers, vectors."""
    t = reg.from_(ptx.special.tid.x(), u32)
    a, b = reg.scalar(f32, 1.0), reg.scalar(f32, 2.0)
    acc = reg.scalar(u32, 0)
    p = reg.scalar(pred)
    addr = reg.scalar(b64, 0)
    for i in range(40):
        a += 1.5 * (i % 3)
        acc ^= i
        acc = acc + t * 3
        with ptx.if_(t < i):
            ptx.inst.fma.rn.f32(a, a, b, 0.25 * i)
        with ptx.else_():
            ptx.add(f32, b, b, a)
        ptx.setp("lt", u32, p, acc, i + 7)
        ptx.inst.ld.global_.f32(b, ptx.addr(addr, 4 * (i % 5)))
    for j in ptx.range_(0, 4, 1, type=u32):
        acc += j
    sa = smem.alloc(bf16, (64, 64), align=1024, name="sa")
    da = ptx.wgmma.desc_reg(sa, 16, 1024, "128B")
    d = reg.array(f32, 64)
    for k in range(3):
        ptx.wgmma.mma_async(d, da, da, dtype="f32", atype="bf16", scale_d=k % 2)
        ptx.wgmma.mma_async(d[:32], da, da, dtype="f32", atype="bf16")
    regs = reg.array(b32, 4)
    ptx.inst.st.global_.v4.b32(ptx.addr(addr), regs)
    ptx.ret()


def _fresh(k: Kernel) -> Kernel:
    return Kernel(k.fn, arch=k.arch, in_specs=k.in_specs, out_specs=k.out_specs, grid=k.grid,
                  block=k.block, cluster=k.cluster, smem=k.smem, raw_params=k.raw_params,
                  extern_smem=k.extern_smem, reqntid=k.reqntid,
                  raw_directives=k.raw_directives)


LIBRARY = ("hopper/gemm-bf16", "hopper/attention-causal-bf16", "blackwell/gemm-bf16",
           "ampere/layer_norm-bf16")


def _library_texts(names) -> dict:
    from examples.library import get

    return {n: get(n).kernel().ptx(**get(n).shape) for n in names}


def test_fresh_kernel_objects_give_identical_text():
    first = mixed.ptx()
    again = _fresh(mixed).ptx()
    assert again == first
    assert "wgmma.mma_async" in first and "fma.rn.f32" in first and "$L_else_39" in first
    for name, text in _library_texts(LIBRARY).items():
        from examples.library import get

        e = get(name)
        assert _fresh(e.kernel()).ptx(**e.shape) == text, name


CHILD = r"""
import hashlib, sys
sys.path.insert(0, {root!r})
from examples.library import get
from tests.test_trace_determinism import mixed
names = {names!r}
out = {{}}
for n in names:                      # this order: the memos fill differently per process
    if n == "mixed":
        out[n] = mixed.ptx()
    else:
        out[n] = get(n).kernel().ptx(**get(n).shape)
for n in sorted(out):
    print(n, hashlib.sha256(out[n].encode()).hexdigest())
"""


def _child(seed: str, names) -> list:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT, names=list(names))],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split("\n")


def test_two_processes_with_different_hash_seeds_give_identical_text():
    names = ("mixed",) + LIBRARY
    one = _child("1", names)
    two = _child("4242", tuple(reversed(names)))    # other seed, other tracing order
    assert one == two
    here = {n: hashlib.sha256(t.encode()).hexdigest() for n, t in _library_texts(LIBRARY).items()}
    here["mixed"] = hashlib.sha256(mixed.ptx().encode()).hexdigest()
    assert one == [f"{n} {here[n]}" for n in sorted(here)] + [""]


def test_memoised_verdicts_still_reject_what_differs_only_by_value():
    """The validation memo keys registers by type, not name, and immediates by their text
    (register operators: by kind, where no form ranges the value). An instruction accepted
    before does not let a same-shaped one with an out-of-range immediate through."""
    import pytest

    from jax_pyptx.errors import PtxValueError

    @kernel(arch="sm_90a")
    def ranged():
        a, b, c, d = (reg.scalar(b32, 0) for _ in range(4))
        ptx.inst.lop3.b32(d, a, b, c, 0x96)
        ptx.inst.lop3.b32(d, a, b, c, 0x96)       # memoised
        ptx.inst.bar.sync(1)
        ptx.inst.bar.sync(15)
        ptx.inst.bar.sync(16)                     # same kinds as above, out of range
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        ranged.ptx()
    assert "bar.sync operand 1: immediate 16 is out of range; allowed: 0..15" in str(e.value)
    assert "test_trace_determinism.py" in str(e.value)

    @kernel(arch="sm_90a")
    def lut():
        a, b, c, d = (reg.scalar(b32, 0) for _ in range(4))
        ptx.inst.lop3.b32(d, a, b, c, 0x96)
        ptx.inst.lop3.b32(d, a, b, c, 256)
        ptx.ret()

    with pytest.raises(PtxValueError) as e:
        lut.ptx()
    assert "lop3.b32 operand 5: immediate 256 is out of range; allowed: 0..255" in str(e.value)
