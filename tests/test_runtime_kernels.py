"""Small kernels shared by the runtime tests (and ptxas accepts each of them)."""
from __future__ import annotations

import pytest

from jax_pyptx import Layout, Tile, kernel, ptx, reg
from jax_pyptx.specialize import ParamAbi
from jax_pyptx.types import f32, u32, u64

from .helpers import assemble


@kernel(arch="sm_90a", in_specs=(Tile("M", "N", f32), Tile("N", f32), f32),
        out_specs=(Tile("M", "N", f32),), block=(32, 1, 1),
        grid=lambda M, N: (M, (N + 31) // 32, 1))
def axpy(X, W, alpha, Y):
    """Y = alpha * X + W (W broadcast over rows); one block per (row, 32 columns)."""
    tid = reg.from_(ptx.special.tid.x(), u32)
    row = reg.from_(ptx.special.ctaid.x(), u32)
    col = reg.from_(ptx.special.ctaid.y(), u32) * 32 + tid
    n = X.shape[1]
    with ptx.if_(col < n):
        off = reg.cvt(row * n + col, u64) * 4
        woff = reg.cvt(col, u64) * 4
        v, w = reg.scalar(f32), reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.ld.global_.f32(w, ptx.addr(W.ptr() + woff))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v * alpha + w)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("N", f32), Tile("N", f32)), out_specs=(Tile("N", f32),),
        block=(64, 1, 1), grid=lambda N: ((N + 63) // 64, 1, 1))
def accumulate(X0, D, Y):
    """Y += D, reading Y's initial contents (X0 when aliased with input_output_aliases={0: 0})."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(i < D.shape[0]):
        off = reg.cvt(i, u64) * 4
        y, d = reg.scalar(f32), reg.scalar(f32)
        ptx.inst.ld.global_.f32(y, ptx.addr(Y.ptr() + off))
        ptx.inst.ld.global_.f32(d, ptx.addr(D.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), y + d)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("M", f32),), out_specs=(Tile("M", f32),),
        block=(32, 1, 1), grid=lambda M: (1, 1, M))
def z_rows(X, Y):
    """Y[i] = X[i] + i, one block per element along the grid's z (cannot batch on the grid)."""
    z = reg.from_(ptx.special.ctaid.z(), u32)
    tid = reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(tid == 0):
        off = reg.cvt(z, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        zf = reg.cvt(z, f32)
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v + zf)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("M", f32),), out_specs=(Tile("M", f32),),
        block=(64, 1, 1), grid=lambda M: ((M + 63) // 64, 1, 1))
def z_guard(X, Y):
    """Y = X + 1, written only by blocks with %ctaid.z == 0 (batching on z would skip items)."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    z = reg.from_(ptx.special.ctaid.z(), u32)
    with ptx.if_(i < X.shape[0]):
        with ptx.if_(z == 0):
            off = reg.cvt(i, u64) * 4
            v = reg.scalar(f32)
            ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
            ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v + 1.0)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("M", "N", f32, Layout.COL),),
        out_specs=(Tile("N", "M", f32),), block=(64, 1, 1),
        grid=lambda M, N: ((M * N + 63) // 64, 1, 1))
def col_copy(X, Y):
    """Copies memory: a column-major X (M, N) is, byte for byte, the row-major (N, M) X.T."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    with ptx.if_(i < X.shape[0] * X.shape[1]):
        off = reg.cvt(i, u64) * 4
        v = reg.scalar(f32)
        ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
        ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


@kernel(arch="sm_90a", in_specs=(Tile("M", 64, f32),), out_specs=(Tile("M", 64, f32),),
        block=(128, 1, 1), grid=lambda M: (M // 8, 1, 1))
def tma_touch(X, Y):
    """Takes X's TMA descriptor (global mode) and prefetches it; copies nothing useful."""
    d = X.tma_desc(box=(8, 64), swizzle=128)
    ptx.inst.prefetch.tensormap(ptx.addr(d))
    ptx.ret()


@pytest.mark.parametrize("k, kw", [(axpy, dict(M=4, N=64)), (accumulate, dict(N=100)),
                                   (z_rows, dict(M=5)), (z_guard, dict(M=70)), (col_copy, dict(M=3, N=5)),
                                   (tma_touch, dict(M=16))])
def test_ptxas_accepts(k, kw):
    r = assemble(k, **kw)
    assert r.spill_stores == 0 and r.spill_loads == 0


def test_ptxas_accepts_batched_trace():
    t = axpy.trace_for(ParamAbi.make((3, 5), ((True, True), (True, False), (True, True))), M=4,
                       N=64)
    from jax_pyptx.toolchain import ptxas_check

    assert ptxas_check(t.ptx, "sm_90a").spill_stores == 0
    assert t.grid == (4, 2, 15)
