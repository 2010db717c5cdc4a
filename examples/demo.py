"""The main demo: trace a kernel, print its PTX and ptxas's resource line.

    python examples/demo.py
"""
from jax_pyptx import Tile, kernel, ptx, reg
from jax_pyptx.types import f32, u32, u64


@kernel(arch="sm_90a", in_specs=(Tile("N", f32), Tile("N", f32)), out_specs=(Tile("N", f32),),
        block=(128, 1, 1), grid=lambda N: ((N + 127) // 128, 1, 1))
def saxpy(X, Y, Out, *, alpha=2.0):
    """Out = alpha * X + Y, one element per thread."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 128 + ptx.special.tid.x()
    with ptx.if_(i < X.shape[0]):
        off = reg.cvt(i, u64) * 4
        x, y = reg.scalar(f32), reg.scalar(f32)
        ptx.inst.ld.global_.f32(x, ptx.addr(X.ptr() + off))
        ptx.inst.ld.global_.f32(y, ptx.addr(Y.ptr() + off))
        out = reg.scalar(f32)
        ptx.inst.fma.rn.f32(out, x, alpha, y)
        ptx.inst.st.global_.f32(ptx.addr(Out.ptr() + off), out)
    ptx.ret()


def main():
    import numpy as np

    from jax_pyptx.toolchain import compile_ptx, toolchain_info

    text = saxpy.ptx(N=1024)
    print(text)
    res = compile_ptx(text, saxpy.arch)
    path, version = toolchain_info()["ptxas"]
    print(f"ptxas {version}: {saxpy.name} {saxpy.arch}: {res.report.line()}")
    x = np.arange(256, dtype=np.float32)
    y = np.ones(256, dtype=np.float32)
    try:
        out = saxpy.interpret(x, y)
        ok = np.allclose(out, 2.0 * x + y)
        print(f"interpreter: saxpy on 256 elements matches NumPy: {ok}")
    except ImportError:
        pass


if __name__ == "__main__":
    main()
