"""A kernel of our own DSL that TMA-loads a tile through an mbarrier, works on it in shared
memory and TMA-stores it back runs on the interpreter through the Tile-spec path: the tensor
maps come from ``X.tma_desc(...)`` exactly as the CUDA launch plan derives them
(``specialize.tma``), via ``kernel.interpret`` and via ``jax.jit`` on the CPU (interpret mode).
The planted bugs (no proxy fence before the TMA store, a read before the mbarrier wait) are
reported with the user's line."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from jax_pyptx import Tile, kernel, ptx, reg, smem
from jax_pyptx.errors import AsyncProxyError
from jax_pyptx.types import f32, u32

from .helpers import assemble, line_of


def _body(X, Y, fence=True, wait=True, by_value=False):
    tile = smem.alloc(f32, (16, 32))
    bar = smem.mbarrier(1)
    dx = X.tma_desc(box=(16, 32), swizzle=128, by_value=by_value)
    dy = Y.tma_desc(box=(16, 32), swizzle=128, by_value=by_value)
    tid = reg.from_(ptx.special.tid.x(), u32)
    col = reg.from_(ptx.special.ctaid.x(), u32) * 32
    row = reg.from_(ptx.special.ctaid.y(), u32) * 16
    with ptx.if_(tid == 0):
        ptx.mbarrier.init(bar[0], 1)
        ptx.fence.mbarrier_init()
    ptx.bar.sync(0)
    with ptx.if_(tid == 0):
        ptx.mbarrier.arrive_expect_tx(bar[0], 16 * 32 * 4)
        ptx.cp.async_.bulk.tensor_2d(tile, dx, (col, row), bar[0])     # TMA LOAD
    if wait:
        ptx.mbarrier.wait(bar[0], 0)
    # each thread scales 4 consecutive floats (the 128B swizzle permutes 16-byte chunks, so an
    # elementwise update does not care where each element landed)
    base = reg.scalar(u32)
    ptx.inst.mov.u32(base, tile)
    addr = base + tid * 16
    v = reg.array(f32, 4)
    ptx.inst.ld.shared.v4.f32(v, ptx.addr(addr))          # READ TILE
    w = [v[k] * 2.0 + 1.0 for k in range(4)]
    ptx.inst.st.shared.v4.f32(ptx.addr(addr), w)
    if fence:
        ptx.fence.proxy_async("shared::cta")
    ptx.bar.sync(0)
    with ptx.if_(tid == 0):
        ptx.cp.async_.bulk.tensor_2d.store(dy, (col, row), tile)   # TMA STORE
        ptx.cp.async_.bulk.commit_group()
        ptx.cp.async_.bulk.wait_group(0)
    ptx.ret()


SPECS = dict(arch="sm_90a", in_specs=(Tile("M", "N", f32),), out_specs=(Tile("M", "N", f32),),
             block=(128, 1, 1), grid=lambda M, N: (N // 32, M // 16, 1))


@kernel(**SPECS)
def tma_roundtrip(X, Y):
    """TMA load -> mbarrier wait -> y = 2x + 1 in shared memory -> fence -> TMA store."""
    _body(X, Y)


@kernel(**SPECS)
def tma_roundtrip_by_value(X, Y):
    """The same with the tensor maps passed by value (``.param .align 64 .b8 [128]``)."""
    _body(X, Y, by_value=True)


@kernel(**SPECS)
def tma_roundtrip_no_fence(X, Y):
    _body(X, Y, fence=False)


@kernel(**SPECS)
def tma_roundtrip_no_wait(X, Y):
    _body(X, Y, wait=False)


def _x(m=48, n=64, seed=0):
    return np.random.default_rng(seed).standard_normal((m, n)).astype(np.float32)


def test_ptxas_accepts_the_tma_kernel():
    r = assemble(tma_roundtrip, M=48, N=64)
    assert r.spill_stores == 0 and r.spill_loads == 0


def test_kernel_interpret_builds_tensor_maps_from_the_tile_specs():
    x = _x()
    y = tma_roundtrip.interpret(x)
    np.testing.assert_array_equal(y, 2 * x + 1)


def test_a_launch_again_keeps_its_tensor_maps_fields(monkeypatch):
    # each call copies its inputs into fresh buffers at new addresses: the maps' fields (what
    # the buffer's shape, strides and dtype give) are made once, each call's map points at its
    # own buffer and reads its own input
    from jax_pyptx.interpret import tensor_map
    from jax_pyptx.specialize import host
    made = []

    def counted(arr, *a, **kw):
        made.append(arr.shape)
        return tensor_map(arr, *a, **kw)
    monkeypatch.setattr("jax_pyptx.interpret.tensor_map", counted)
    hl = host.HostLaunch(tma_roundtrip.trace(M=48, N=64))
    for seed in (5, 6, 7):
        x = _x(seed=seed)
        (y,) = hl([x])
        np.testing.assert_array_equal(y, 2 * x + 1)
    assert made == [(48, 64), (48, 64)]          # X's map and Y's, the first call only
    # a buffer of another layout gets its own fields, and the next C-order one its own again
    (ts,) = [k for k in hl._maps if k.operand == 0]
    hl.tensor_maps(ts, [np.asfortranarray(_x(seed=8))])
    hl.tensor_maps(ts, [_x(seed=9)])
    assert len(made) == 4
    assert host._host_launch(tma_roundtrip.trace(M=48, N=64)) is host._host_launch(
        tma_roundtrip.trace(M=48, N=64))


def test_tensor_maps_by_value():
    x = _x(16, 64, seed=4)
    assert ".param .align 64 .b8 X_tma_desc[128]" in tma_roundtrip_by_value.ptx(M=16, N=64)
    np.testing.assert_array_equal(tma_roundtrip_by_value.interpret(x), 2 * x + 1)


def test_jax_jit_on_the_cpu_runs_it_in_interpret_mode():
    x = _x(32, 96, seed=1)
    y = jax.jit(tma_roundtrip)(x)
    np.testing.assert_array_equal(np.asarray(y), 2 * x + 1)


def test_vmap_batches_the_tensor_maps_on_the_grid():
    x = np.stack([_x(16, 32, seed=s) for s in range(3)])
    y = jax.jit(jax.vmap(tma_roundtrip))(x)
    np.testing.assert_array_equal(np.asarray(y), 2 * x + 1)


def test_missing_proxy_fence_is_reported_at_the_users_line():
    with pytest.raises(AsyncProxyError) as e:
        tma_roundtrip_no_fence.interpret(_x())
    msg = str(e.value)
    assert msg.startswith(line_of(_body, "# TMA STORE") + ": the TMA store reads shared address 0x0")
    assert "but the generic proxy wrote it (st.shared, cp.async, stmatrix, ...) with no " \
           "fence.proxy.async since" in msg
    assert ": cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r2, %r4}], [smem_0];" in msg


def test_reading_the_tma_destination_before_the_wait_is_reported():
    with pytest.raises(AsyncProxyError) as e:
        tma_roundtrip_no_wait.interpret(_x())
    msg = str(e.value)
    assert msg.startswith(line_of(_body, "# READ TILE") + ": the load reads shared address 0x")
    assert ("that `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            f"[smem_0], [%rd0, {{%r2, %r4}}], [mbar_0];` ({line_of(_body, '# TMA LOAD')} ") in msg
    assert "its mbarrier at shared 0x800 (phase 0: 0 of 1 arrivals pending, tx-count 2048)" in msg
    assert "has not completed the phase that tracks it; wait on it (mbarrier.try_wait) before " \
           "touching the bytes" in msg


def test_pytorch_cpu_op_uses_the_same_tensor_maps():
    torch = pytest.importorskip("torch")
    from jax_pyptx.runtime.torch_op import to_torch

    x = torch.from_numpy(_x(16, 32, seed=5))
    assert torch.equal(to_torch(tma_roundtrip)(x), 2 * x + 1)
