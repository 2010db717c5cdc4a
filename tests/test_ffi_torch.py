"""The PyTorch entry point of the launcher: raw pointers and a stream, no XLA.

Driven through the recording table (``set_recording(True)``), with NumPy arrays
standing in for device memory (the recording driver's "device" is host memory).
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from jax_pyptx.runtime import ffi_bridge as fb
from jax_pyptx.runtime.ffi_plan import LaunchPlan, ParamSlot, TmaSpec

if not fb.available():
    pytest.skip("jax_pyptx._ffi is not built (pip install -e .)", allow_module_level=True)

PTX = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry torch_kernel(
  .param .u64 a_desc,
  .param .align 64 .b8 b_desc[128],
  .param .u64 out,
  .param .s32 n
)
{
  ret;
}
"""


@pytest.fixture(autouse=True)
def _recording(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path))
    fb.set_recording(True)
    fb.clear_recording()
    yield
    fb.clear_recording()
    fb.set_recording(False)


def aligned(nbytes: int, align: int = 128) -> np.ndarray:
    raw = np.zeros(nbytes + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes]


def make_plan() -> LaunchPlan:
    a = TmaSpec(operand=0, dtype="f16", global_dims=(64, 64), global_strides=(128,), box=(64, 64),
                swizzle=3)
    b = TmaSpec(operand=1, dtype="f32", global_dims=(32, 8, 2), global_strides=(128, 1024),
                box=(32, 8, 1), mode="by_value")
    return LaunchPlan.from_ptx(
        "torch_kernel", PTX, "sm_90a", grid=(4, 1, 1), block=(128, 1, 1), cluster=(2, 1, 1),
        smem_bytes=96 * 1024,
        params=(ParamSlot("tma", 0), ParamSlot("tma", 1), ParamSlot.buffer(2),
                ParamSlot.scalar(-5, np.int32)),
        tma=(a, b))


def test_torch_launch_with_raw_pointers_and_stream():
    plan = make_plan()
    a = aligned(64 * 64 * 2)
    b = aligned(2 * 8 * 32 * 4)
    out = aligned(64)
    ws = aligned(plan.workspace_bytes)
    ptrs = [a.ctypes.data, b.ctypes.data, out.ctypes.data, ws.ctypes.data]
    fb.torch_launch(plan, ptrs, stream=0x5EED)
    fb.torch_launch(plan, ptrs, stream=0x5EED)
    launches = fb.recorded_launches("torch_kernel")
    assert len(launches) == 2
    for launch in launches:
        assert (launch["grid"], launch["block"], launch["cluster"], launch["smem"]) == \
            ((4, 1, 1), (128, 1, 1), (2, 1, 1), 98304)
        assert launch["stream"] == 0x5EED
        assert launch["param_sizes"] == (8, 128, 8, 4)
        p = launch["params"]
        assert struct.unpack("<Q", p[:8]) == (ws.ctypes.data,)
        assert fb.decode_recorded_tensor_map(p[8:136])["global_address"] == b.ctypes.data
        assert struct.unpack("<Qi", p[136:]) == (out.ctypes.data, -5)
    stores = [c for c in fb.recorded_calls()
              if c["fn"] == "cuLaunchKernelEx" and c["name"] == fb.STORE_KERNEL_NAME]
    assert [s["stream"] for s in stores] == [0x5EED, 0x5EED]
    desc = fb.decode_recorded_tensor_map(ws.tobytes())
    assert desc == {"global_address": a.ctypes.data, "global_dims": (64, 64),
                    "global_strides": (128,), "box_dims": (64, 64), "element_strides": (1, 1),
                    "data_type": 6, "rank": 2, "interleave": 0, "swizzle": 3,
                    "l2_promotion": 0, "oob_fill": 0}
    # Loaded once (user module + the built-in store kernel), smem opt-in once.
    loads = [c for c in fb.recorded_calls() if c["fn"] == "cuModuleLoadDataEx"]
    assert [ld["image"] == PTX.encode() for ld in loads] == [True, False]
    assert [c["value"] for c in fb.recorded_calls() if c["fn"] == "cuFuncSetAttribute"] == [98304]


def test_torch_launch_checks_sizes_and_pointer_count():
    plan = make_plan()
    a, b, out, ws = aligned(8192), aligned(2048), aligned(64), aligned(128)
    ptrs = [a.ctypes.data, b.ctypes.data, out.ctypes.data, ws.ctypes.data]
    with pytest.raises(RuntimeError, match=r"kernel 'torch_kernel': tma\[1\] spans 2048 bytes but "
                                           r"operand 1 has only 1024"):
        fb.torch_launch(plan, ptrs, 0, sizes=[8192, 1024, 64, 128])
    with pytest.raises(RuntimeError, match="the plan needs 4 buffers .the last one the descriptor "
                                           "workspace. but the call has 3"):
        fb.torch_launch(plan, ptrs[:3], 0)
    with pytest.raises(RuntimeError, match="the workspace buffer has 64 bytes"):
        fb.torch_launch(plan, ptrs, 0, sizes=[8192, 2048, 64, 64])
    assert fb.recorded_launches() == []


def test_torch_launch_driver_error_names_the_kernel():
    plan = make_plan()
    bufs = [aligned(8192), aligned(2048), aligned(64), aligned(128)]
    fb.inject_driver_error("cuLaunchKernelEx", 719)
    # the first launch is the store kernel's
    with pytest.raises(RuntimeError, match="kernel 'torch_kernel': cuLaunchKernelEx failed: "
                                           r"CUDA_ERROR_LAUNCH_FAILED \(719\).*storing tensor maps"):
        fb.torch_launch(plan, [x.ctypes.data for x in bufs], 0)


def test_unaligned_workspace_is_rejected():
    plan = make_plan()
    bufs = [aligned(8192), aligned(2048), aligned(64), aligned(256)]
    ptrs = [x.ctypes.data for x in bufs]
    ptrs[3] += 32
    with pytest.raises(RuntimeError, match="workspace is not 64-byte aligned"):
        fb.torch_launch(plan, ptrs, 0)


def test_concurrent_launches_each_get_their_own_descriptors():
    plan = make_plan()
    n_threads, per_thread = 8, 25
    results: dict[int, list[tuple[int, int]]] = {}

    def worker(t: int):
        seen = []
        for i in range(per_thread):
            a, b, out, ws = aligned(8192), aligned(2048), aligned(64), aligned(128)
            fb.torch_launch(plan, [a.ctypes.data, b.ctypes.data, out.ctypes.data, ws.ctypes.data],
                            stream=0x1000 + t)
            seen.append((fb.decode_recorded_tensor_map(ws.tobytes())["global_address"], a.ctypes.data))
        results[t] = seen

    import threading
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in range(n_threads):
        assert [got for got, _ in results[t]] == [want for _, want in results[t]]
    launches = fb.recorded_launches("torch_kernel")
    assert len(launches) == n_threads * per_thread
    assert sorted({c["stream"] for c in launches}) == [0x1000 + t for t in range(n_threads)]
    loads = [c for c in fb.recorded_calls() if c["fn"] == "cuModuleLoadDataEx"]
    assert len(loads) == 2  # the kernel's module and the store kernel's, once each
