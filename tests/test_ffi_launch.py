"""The C++ FFI handler run end to end on the CPU platform with the recording driver.

A jitted ``jax.ffi.ffi_call`` goes through XLA into ``jax_pyptx._ffi``; the
recording table stands in for libcuda and the test reads back what would have
been launched (DESIGN.md, "Working without a GPU", point 5).
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from jax_pyptx.runtime import ffi_bridge as fb  # noqa: E402
from jax_pyptx.runtime.ffi_plan import (  # noqa: E402
    FFI_TARGET, LaunchPlan, ParamSlot, TmaSpec, plan_to_attrs,
)

if not fb.available():
    pytest.skip("jax_pyptx._ffi is not built (pip install -e .)", allow_module_level=True)

# CUtensorMapDataType values (cuda.h)
U8, F16, F32, BF16 = 0, 6, 7, 9
SWIZZLE_64B, SWIZZLE_128B = 2, 3


def entry(name: str, params: str) -> str:
    return (".version 8.0\n.target sm_90a\n.address_size 64\n\n"
            f".visible .entry {name}(\n{params}\n)\n{{\n  ret;\n}}\n")


@pytest.fixture(autouse=True)
def _recording(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path / "cubins"))
    fb.ensure_registered()
    fb.clear_recording()
    yield
    fb.clear_recording()


def call(plan: LaunchPlan, *inputs, out_shapes=None):
    """jit(ffi_call) of `plan` on CPU; returns (outputs..., workspace if any)."""
    if out_shapes is None:
        out_shapes = [jax.ShapeDtypeStruct(inputs[0].shape, inputs[0].dtype)]
    out_shapes = list(out_shapes)
    if plan.workspace_bytes:
        out_shapes.append(jax.ShapeDtypeStruct((plan.workspace_bytes,), jnp.uint8))
    f = jax.jit(lambda *xs: jax.ffi.ffi_call(FFI_TARGET, out_shapes)(*xs, **plan_to_attrs(plan)))
    outs = f(*inputs)
    jax.block_until_ready(outs)
    return outs


def calls(fn):
    return [c for c in fb.recorded_calls() if c["fn"] == fn]


def words(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 8}Q", data))


# ---------------------------------------------------------------- basic launch --

SCALAR_PTX = entry("axpy", "  .param .u64 .ptr.global.align 16 x,  // input\n"
                           "  .param .u64 y,\n  .param .f32 a,\n  /* flag */ .param .u8 flag,\n"
                           "  .param .u64 n,\n  .param .u16 h")


def test_launch_records_geometry_and_param_bytes_in_order():
    plan = LaunchPlan.from_ptx(
        "axpy", SCALAR_PTX, "sm_90a", grid=(8, 2, 1), block=(128, 1, 1),
        params=(ParamSlot.buffer(0), ParamSlot.buffer(1), ParamSlot.scalar(2.5, np.float32),
                ParamSlot.scalar(7, np.uint8), ParamSlot.scalar(1 << 40, np.uint64),
                ParamSlot.scalar(0xBEEF, np.uint16)))
    x = jnp.arange(256, dtype=jnp.float32)
    (y,) = call(plan, x)
    [launch] = fb.recorded_launches()
    assert launch["name"] == "axpy"
    assert launch["grid"] == (8, 2, 1)
    assert launch["block"] == (128, 1, 1)
    assert launch["cluster"] == (1, 1, 1)
    assert launch["num_attrs"] == 0
    assert launch["smem"] == 0
    assert launch["stream"] == 0
    assert launch["result"] == 0
    assert launch["param_sizes"] == (8, 8, 4, 1, 8, 2)
    p = launch["params"]
    assert len(p) == 31
    assert struct.unpack("<QQfBQH", p) == (
        x.unsafe_buffer_pointer(), y.unsafe_buffer_pointer(), 2.5, 7, 1 << 40, 0xBEEF)


def test_cluster_and_large_dynamic_smem():
    ptx = entry("clustered", "  .param .u64 out")
    plan = LaunchPlan.from_ptx("clustered", ptx, "sm_90a", grid=(4, 2, 1), block=(384, 1, 1),
                               cluster=(2, 1, 1), smem_bytes=200 * 1024,
                               params=(ParamSlot.buffer(1),))
    x = jnp.zeros((4,), jnp.float32)
    (y,) = call(plan, x)
    [launch] = fb.recorded_launches("clustered")
    assert launch["cluster"] == (2, 1, 1)
    assert launch["num_attrs"] == 1
    assert launch["smem"] == 204800
    assert words(launch["params"]) == [y.unsafe_buffer_pointer()]
    [attr] = calls("cuFuncSetAttribute")
    assert (attr["name"], attr["attribute"], attr["value"]) == ("clustered", 8, 204800)


def test_cluster_of_16_opts_in_to_non_portable_cluster_sizes():
    ptx = entry("big_cluster", "  .param .u64 out")
    plan = LaunchPlan.from_ptx("big_cluster", ptx, "sm_90a", grid=(16, 2, 1), block=(128, 1, 1),
                               cluster=(16, 1, 1), params=(ParamSlot.buffer(0),))
    call(plan, jnp.zeros((4,), jnp.float32))
    call(plan, jnp.zeros((4,), jnp.float32))
    assert [(c["name"], c["attribute"], c["value"]) for c in calls("cuFuncSetAttribute")] == \
        [("big_cluster", 14, 1)]
    assert [c["cluster"] for c in fb.recorded_launches()] == [(16, 1, 1), (16, 1, 1)]
    assert [c["result"] for c in fb.recorded_launches()] == [0, 0]


def test_repeated_calls_load_the_module_once_and_set_smem_once():
    ptx = entry("once", "  .param .u64 x")
    plan = LaunchPlan.from_ptx("once", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                               smem_bytes=64 * 1024, params=(ParamSlot.buffer(0),))
    x = jnp.ones((8,), jnp.float32)
    for _ in range(3):
        call(plan, x)
    call(plan, x + 1)  # a new executable, same PTX
    loads = calls("cuModuleLoadDataEx")
    assert len(loads) == 1
    assert loads[0]["image"] == ptx.encode()
    assert loads[0]["num_options"] == 2
    assert [c["name"] for c in calls("cuModuleGetFunction")] == ["once"]
    assert [c["value"] for c in calls("cuFuncSetAttribute")] == [65536]
    assert len(fb.recorded_launches("once")) == 4
    # More smem for the same function: the limit is raised once more.
    bigger = LaunchPlan.from_ptx("once", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                                 smem_bytes=100 * 1024, params=(ParamSlot.buffer(0),))
    call(bigger, x)
    call(bigger, x)
    assert [c["value"] for c in calls("cuFuncSetAttribute")] == [65536, 102400]
    assert len(calls("cuModuleLoadDataEx")) == 1


def test_cached_cubin_is_loaded_before_ptx_jit(tmp_path):
    ptx = entry("cached", "  .param .u64 x")
    plan = LaunchPlan.from_ptx("cached", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                               params=(ParamSlot.buffer(0),))
    cache = tmp_path / "cubins"
    cache.mkdir()
    # The recording driver reads any image as PTX text; a real cache holds ELF.
    image = ptx.replace("ret;", "ret; // cubin").encode()
    (cache / f"{plan.ptx_sha256}-sm_90a-13.0.cubin").write_bytes(image)
    (cache / f"{plan.ptx_sha256}-sm_90-13.0.cubin").write_bytes(b"wrong arch")
    (cache / f"{plan.ptx_sha256}-sm_90a-12.8.cubin").write_bytes(b"older ptxas")
    call(plan, jnp.ones((4,), jnp.float32))
    [load] = [c for c in fb.recorded_calls() if c["fn"].startswith("cuModuleLoad")]
    assert load["fn"] == "cuModuleLoadData"
    assert load["image"] == image
    # A cubin the driver rejects falls back to the PTX JIT.
    fb.clear_recording()
    fb.inject_driver_error("cuModuleLoadData", 209)  # CUDA_ERROR_NO_BINARY_FOR_GPU
    call(plan, jnp.ones((4,), jnp.float32))
    assert [(c["fn"], c["result"]) for c in fb.recorded_calls() if c["fn"].startswith("cuModuleLoad")] \
        == [("cuModuleLoadData", 209), ("cuModuleLoadDataEx", 0)]
    assert len(fb.recorded_launches("cached")) == 1


def test_plan_cubin_path_comes_first_then_the_cache_then_ptx(tmp_path):
    ptx = entry("prebuilt", "  .param .u64 x")
    own = tmp_path / "toolchain-entry.cubin"
    own.write_bytes(ptx.replace("ret;", "ret; // toolchain").encode())
    cache = tmp_path / "cubins"
    cache.mkdir()
    plan = LaunchPlan.from_ptx("prebuilt", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                               params=(ParamSlot.buffer(0),), cubin_path=str(own))
    (cache / f"{plan.ptx_sha256}-sm_90a.cubin").write_bytes(ptx.replace("ret;", "ret; // c").encode())
    call(plan, jnp.ones((4,), jnp.float32))
    [load] = [c for c in fb.recorded_calls() if c["fn"].startswith("cuModuleLoad")]
    assert (load["fn"], load["image"]) == ("cuModuleLoadData", own.read_bytes())
    fb.clear_recording()
    fb.inject_driver_error("cuModuleLoadData", 209)
    fb.inject_driver_error("cuModuleLoadData", 200)
    call(plan, jnp.ones((4,), jnp.float32))
    loads = [c for c in fb.recorded_calls() if c["fn"].startswith("cuModuleLoad")]
    assert [(c["fn"], c["result"]) for c in loads] == \
        [("cuModuleLoadData", 209), ("cuModuleLoadData", 200), ("cuModuleLoadDataEx", 0)]
    assert loads[1]["image"] == (cache / f"{plan.ptx_sha256}-sm_90a.cubin").read_bytes()
    assert loads[2]["image"] == ptx.encode()
    # A JIT failure reports the cubins that were tried too.
    fb.clear_recording()
    missing = LaunchPlan.from_ptx("prebuilt", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                                  params=(ParamSlot.buffer(0),), cubin_path=str(own))
    for code in (209, 200, 218):
        fb.inject_driver_error("cuModuleLoadData" if code != 218 else "cuModuleLoadDataEx", code)
    with pytest.raises(Exception, match=r"cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX \(218\)"
                                        r".*toolchain-entry.cubin was rejected too "
                                        r"\(CUDA_ERROR_NO_BINARY_FOR_GPU\)"):
        call(missing, jnp.ones((4,), jnp.float32))


# ------------------------------------------------------------------- tensor maps --

def test_tma_2d_bf16_by_value_with_128b_swizzle():
    ptx = entry("tma2d", "  .param .align 64 .b8 a_desc[128],\n  .param .u64 out")
    spec = TmaSpec(operand=0, dtype="bf16", global_dims=(128, 64), global_strides=(256,),
                   box=(64, 32), swizzle=SWIZZLE_128B, mode="by_value")
    plan = LaunchPlan.from_ptx("tma2d", ptx, "sm_90a", grid=(2, 2, 1), block=(128, 1, 1),
                               params=(ParamSlot("tma", 0), ParamSlot.buffer(1)), tma=(spec,))
    assert plan.workspace_bytes == 0
    a = jnp.ones((64, 128), jnp.bfloat16)
    (out,) = call(plan, a)
    [enc] = calls("cuTensorMapEncodeTiled")
    assert enc == {
        "fn": "cuTensorMapEncodeTiled", "data_type": BF16, "rank": 2,
        "global_address": a.unsafe_buffer_pointer(), "global_dims": (128, 64),
        "global_strides": (256,), "box_dims": (64, 32), "element_strides": (1, 1),
        "interleave": 0, "swizzle": SWIZZLE_128B, "l2_promotion": 0, "oob_fill": 0, "result": 0}
    [launch] = fb.recorded_launches()
    assert launch["param_sizes"] == (128, 8)
    desc = fb.decode_recorded_tensor_map(launch["params"][:128])
    assert desc["global_address"] == a.unsafe_buffer_pointer()
    assert desc["global_dims"] == (128, 64) and desc["box_dims"] == (64, 32)
    assert (desc["data_type"], desc["swizzle"]) == (BF16, SWIZZLE_128B)
    assert words(launch["params"][128:]) == [out.unsafe_buffer_pointer()]
    assert not calls("cuModuleLoadDataEx")[1:]  # no store kernel needed


def test_tma_3d_f16_global_mode_descriptor_lands_in_workspace():
    ptx = entry("tma3d", "  .param .u64 x,\n  .param .u64 x_tma_desc")
    spec = TmaSpec(operand=0, dtype="f16", global_dims=(64, 32, 4), global_strides=(128, 4096),
                   box=(64, 16, 1), swizzle=SWIZZLE_128B, l2_promotion=2)
    plan = LaunchPlan.from_ptx("tma3d", ptx, "sm_90a", grid=(2, 4, 1), block=(128, 1, 1),
                               params=(ParamSlot.buffer(0), ParamSlot("tma", 0)), tma=(spec,))
    assert plan.workspace_bytes == 128
    x = jnp.ones((4, 32, 64), jnp.float16)
    y, ws = call(plan, x)
    [enc] = calls("cuTensorMapEncodeTiled")
    assert (enc["data_type"], enc["rank"], enc["global_dims"], enc["global_strides"],
            enc["box_dims"], enc["element_strides"], enc["swizzle"], enc["l2_promotion"]) == \
        (F16, 3, (64, 32, 4), (128, 4096), (64, 16, 1), (1, 1, 1), SWIZZLE_128B, 2)
    assert enc["global_address"] == x.unsafe_buffer_pointer()
    # The store kernel ran first, on the same stream, writing into the workspace...
    launches = calls("cuLaunchKernelEx")
    assert [c["name"] for c in launches] == [fb.STORE_KERNEL_NAME, "tma3d"]
    store = launches[0]
    assert store["block"] == (8, 1, 1) and store["grid"] == (1, 1, 1)
    assert struct.unpack("<QI", store["params"][:12]) == (ws.unsafe_buffer_pointer(), 1)
    # ...and the kernel's u64 parameter is the descriptor's workspace address.
    assert words(launches[1]["params"]) == [x.unsafe_buffer_pointer(), ws.unsafe_buffer_pointer()]
    desc = fb.decode_recorded_tensor_map(np.asarray(ws).tobytes())
    assert desc == {"global_address": x.unsafe_buffer_pointer(), "global_dims": (64, 32, 4),
                    "global_strides": (128, 4096), "box_dims": (64, 16, 1),
                    "element_strides": (1, 1, 1), "data_type": F16, "rank": 3, "interleave": 0,
                    "swizzle": SWIZZLE_128B, "l2_promotion": 2, "oob_fill": 0}


def test_tma_5d_f32_interleave_oob_fill_and_element_strides_plus_u8():
    ptx = entry("tma5d", "  .param .u64 a_desc,\n  .param .align 64 .b8 b_desc[128],\n"
                         "  .param .u64 out")
    a_spec = TmaSpec(operand=0, dtype="f32", global_dims=(16, 8, 4, 3, 2),
                     global_strides=(64, 512, 2048, 6144), box=(16, 4, 2, 1, 1),
                     element_strides=(1, 2, 1, 1, 1), interleave=1, oob_fill=1, l2_promotion=3)
    b_spec = TmaSpec(operand=1, dtype="u8", global_dims=(256, 16), global_strides=(256,),
                     box=(64, 16), swizzle=SWIZZLE_64B, mode="by_value")
    plan = LaunchPlan.from_ptx(
        "tma5d", ptx, "sm_90a", grid=(3, 1, 1), block=(256, 1, 1),
        params=(ParamSlot("tma", 0), ParamSlot("tma", 1), ParamSlot.buffer(2)),
        tma=(a_spec, b_spec))
    a = jnp.ones((2, 3, 4, 8, 16), jnp.float32)
    b = jnp.ones((16, 256), jnp.uint8)
    out, ws = call(plan, a, b, out_shapes=[jax.ShapeDtypeStruct((4,), jnp.float32)])
    enc_a, enc_b = calls("cuTensorMapEncodeTiled")
    assert (enc_a["data_type"], enc_a["rank"], enc_a["global_address"]) == \
        (F32, 5, a.unsafe_buffer_pointer())
    assert enc_a["global_dims"] == (16, 8, 4, 3, 2)
    assert enc_a["global_strides"] == (64, 512, 2048, 6144)
    assert enc_a["box_dims"] == (16, 4, 2, 1, 1)
    assert enc_a["element_strides"] == (1, 2, 1, 1, 1)
    assert (enc_a["interleave"], enc_a["swizzle"], enc_a["l2_promotion"], enc_a["oob_fill"]) == \
        (1, 0, 3, 1)
    assert (enc_b["data_type"], enc_b["rank"], enc_b["global_address"]) == \
        (U8, 2, b.unsafe_buffer_pointer())
    assert (enc_b["global_dims"], enc_b["global_strides"], enc_b["box_dims"]) == \
        ((256, 16), (256,), (64, 16))
    assert (enc_b["swizzle"], enc_b["oob_fill"]) == (SWIZZLE_64B, 0)
    [launch] = fb.recorded_launches()
    assert launch["param_sizes"] == (8, 128, 8)
    p = launch["params"]
    assert words(p[:8]) == [ws.unsafe_buffer_pointer()]
    assert fb.decode_recorded_tensor_map(p[8:136])["global_address"] == b.unsafe_buffer_pointer()
    assert words(p[136:]) == [out.unsafe_buffer_pointer()]
    assert fb.decode_recorded_tensor_map(np.asarray(ws).tobytes())["element_strides"] == \
        (1, 2, 1, 1, 1)


def test_batched_descriptors_advance_the_base_and_fill_consecutive_slots():
    ptx = entry("batched", "  .param .u64 q_descs,\n  .param .u64 k_desc")
    q = TmaSpec(operand=0, dtype="f32", global_dims=(16, 16), global_strides=(64,), box=(16, 8),
                batch=3, batch_stride=1024)
    k = TmaSpec(operand=1, dtype="bf16", global_dims=(64, 8), global_strides=(128,), box=(64, 8))
    plan = LaunchPlan.from_ptx("batched", ptx, "sm_90a", grid=(3, 1, 1), block=(128, 1, 1),
                               params=(ParamSlot("tma", 0), ParamSlot("tma", 1)), tma=(q, k))
    assert plan.workspace_bytes == 4 * 128
    qa = jnp.zeros((3, 16, 16), jnp.float32)
    ka = jnp.zeros((8, 64), jnp.bfloat16)
    _, ws = call(plan, qa, ka)
    base = qa.unsafe_buffer_pointer()
    encs = calls("cuTensorMapEncodeTiled")
    assert [e["global_address"] for e in encs] == \
        [base, base + 1024, base + 2048, ka.unsafe_buffer_pointer()]
    raw = np.asarray(ws).tobytes()
    decoded = [fb.decode_recorded_tensor_map(raw[i * 128:(i + 1) * 128]) for i in range(4)]
    assert [d["global_address"] for d in decoded] == \
        [base, base + 1024, base + 2048, ka.unsafe_buffer_pointer()]
    assert [d["data_type"] for d in decoded] == [F32, F32, F32, BF16]
    [launch] = fb.recorded_launches()
    w = ws.unsafe_buffer_pointer()
    assert words(launch["params"]) == [w, w + 3 * 128]


def test_more_descriptors_than_one_store_launch_holds():
    ptx = entry("many", "  .param .u64 descs")
    spec = TmaSpec(operand=0, dtype="f32", global_dims=(16, 16), global_strides=(64,),
                   box=(16, 16), batch=40, batch_stride=1024)
    plan = LaunchPlan.from_ptx("many", ptx, "sm_90a", grid=(40, 1, 1), block=(128, 1, 1),
                               params=(ParamSlot("tma", 0),), tma=(spec,))
    x = jnp.zeros((40, 16, 16), jnp.float32)
    (_, ws) = call(plan, x, out_shapes=[jax.ShapeDtypeStruct((1,), jnp.float32)])
    stores = [c for c in calls("cuLaunchKernelEx") if c["name"] == fb.STORE_KERNEL_NAME]
    w = ws.unsafe_buffer_pointer()
    assert [struct.unpack("<QI", s["params"][:12]) for s in stores] == [(w, 30), (w + 30 * 128, 10)]
    raw = np.asarray(ws).tobytes()
    base = x.unsafe_buffer_pointer()
    assert [fb.decode_recorded_tensor_map(raw[i * 128:(i + 1) * 128])["global_address"]
            for i in range(40)] == [base + 1024 * i for i in range(40)]


# ------------------------------------------------------------------------ errors --

def test_driver_error_raises_naming_the_kernel_and_the_call():
    ptx = entry("faulty_kernel", "  .param .u64 x")
    plan = LaunchPlan.from_ptx("faulty_kernel", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                               params=(ParamSlot.buffer(0),))
    x = jnp.ones((4,), jnp.float32)
    fb.inject_driver_error("cuLaunchKernelEx", 701)
    with pytest.raises(Exception) as info:
        call(plan, x)
    msg = str(info.value)
    assert "jax_pyptx: kernel 'faulty_kernel': cuLaunchKernelEx failed: " \
           "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many resources requested for launch" in msg
    assert "grid 1x1x1, block 32x1x1" in msg
    assert type(info.value).__name__ in ("JaxRuntimeError", "XlaRuntimeError")
    # The error was one-shot: the next call succeeds.
    call(plan, x)
    assert [c["result"] for c in fb.recorded_launches("faulty_kernel")] == [701, 0]


@pytest.mark.parametrize("fn,code,name", [
    ("cuModuleLoadDataEx", 218, "CUDA_ERROR_INVALID_PTX"),
    ("cuModuleGetFunction", 500, "CUDA_ERROR_NOT_FOUND"),
    ("cuTensorMapEncodeTiled", 1, "CUDA_ERROR_INVALID_VALUE"),
])
def test_errors_of_other_driver_calls(fn, code, name):
    ptx = entry("k_" + name.lower(), "  .param .align 64 .b8 d[128]")
    spec = TmaSpec(operand=0, dtype="f32", global_dims=(16,), global_strides=(), box=(16,),
                   mode="by_value")
    plan = LaunchPlan.from_ptx("k_" + name.lower(), ptx, "sm_90a", grid=(1, 1, 1),
                               block=(32, 1, 1), params=(ParamSlot("tma", 0),), tma=(spec,))
    fb.inject_driver_error(fn, code)
    with pytest.raises(Exception, match=f"kernel 'k_{name.lower()}': {fn} failed: {name} \\({code}\\)"):
        call(plan, jnp.ones((16,), jnp.float32))


def test_missing_entry_and_parameter_mismatch_are_reported():
    ptx = entry("real_name", "  .param .u64 x,\n  .param .u32 n")
    wrong_name = LaunchPlan.from_ptx("other_name", ptx, "sm_90a", grid=(1, 1, 1), block=(1, 1, 1),
                                     params=(ParamSlot.buffer(0), ParamSlot.scalar(3, np.uint32)))
    with pytest.raises(Exception, match="kernel 'other_name': cuModuleGetFunction failed: "
                                        "CUDA_ERROR_NOT_FOUND"):
        call(wrong_name, jnp.ones((4,), jnp.float32))
    wrong_size = LaunchPlan.from_ptx("real_name", ptx, "sm_90a", grid=(1, 1, 1), block=(1, 1, 1),
                                     params=(ParamSlot.buffer(0), ParamSlot.scalar(3, np.uint64)))
    with pytest.raises(Exception, match="kernel 'real_name': parameter 1 is 4 bytes in the kernel "
                                        "but the plan passes a 8-byte scalar"):
        call(wrong_size, jnp.ones((4,), jnp.float32))
    too_few = LaunchPlan.from_ptx("real_name", ptx, "sm_90a", grid=(1, 1, 1), block=(1, 1, 1),
                                  params=(ParamSlot.buffer(0),))
    with pytest.raises(Exception, match="declares 2 parameters but the plan passes 1"):
        call(too_few, jnp.ones((4,), jnp.float32))


def test_parameter_sizes_are_asked_for_only_within_the_entry():
    """An index past the last parameter is an API error that compute-sanitizer reports (it did
    on an H200): the launcher asks for exactly the parameters the .entry declares, none for a
    kernel without any."""
    two = entry("two_params", "  .param .u64 x,\n  .param .u32 n")
    plan = LaunchPlan.from_ptx("two_params", two, "sm_90a", grid=(1, 1, 1), block=(1, 1, 1),
                               params=(ParamSlot.buffer(0), ParamSlot.scalar(3, np.uint32)))
    call(plan, jnp.ones((4,), jnp.float32))
    assert [(c["index"], c["result"]) for c in calls("cuFuncGetParamInfo")] == [(0, 0), (1, 0)]
    fb.clear_recording()
    none = LaunchPlan.from_ptx("no_params", entry("no_params", ""), "sm_90a", grid=(1, 1, 1),
                               block=(1, 1, 1), params=())
    call(none, jnp.ones((4,), jnp.float32))
    assert calls("cuFuncGetParamInfo") == []
    assert len(calls("cuLaunchKernelEx")) == 1


def test_tensor_map_outside_its_buffer_is_rejected_before_launch():
    ptx = entry("oob", "  .param .u64 d")
    spec = TmaSpec(operand=0, dtype="f32", global_dims=(16, 16), global_strides=(64,), box=(16, 16))
    plan = LaunchPlan.from_ptx("oob", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                               params=(ParamSlot("tma", 0),), tma=(spec,))
    with pytest.raises(Exception, match=r"kernel 'oob': tma\[0\] spans 1024 bytes but operand 0 "
                                        r"has only 512"):
        call(plan, jnp.ones((8, 16), jnp.float32))
    assert fb.recorded_launches() == []


def test_driver_side_tensor_map_checks_surface():
    # 100 bf16 elements = 200-byte rows: not a multiple of 16 bytes.
    ptx = entry("badstride", "  .param .align 64 .b8 d[128]")
    spec = TmaSpec(operand=0, dtype="bf16", global_dims=(100, 4), global_strides=(200,),
                   box=(64, 4), mode="by_value")
    plan = LaunchPlan.from_ptx("badstride", ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                               params=(ParamSlot("tma", 0),), tma=(spec,))
    with pytest.raises(Exception, match="kernel 'badstride': cuTensorMapEncodeTiled failed: "
                                        r"CUDA_ERROR_INVALID_VALUE \(1\).*tma\[0\] over operand 0"):
        call(plan, jnp.ones((4, 100), jnp.bfloat16))


def test_instantiate_rejects_inconsistent_attributes():
    ptx = entry("bad_attrs", "  .param .u64 x")
    plan = LaunchPlan.from_ptx("bad_attrs", ptx, "sm_90a", grid=(1, 1, 1), block=(1, 1, 1),
                               params=(ParamSlot.buffer(0),))
    attrs = plan_to_attrs(plan)
    attrs["workspace_bytes"] = np.int64(256)
    f = jax.jit(lambda x: jax.ffi.ffi_call(FFI_TARGET, jax.ShapeDtypeStruct((4,), jnp.float32))(
        x, **attrs))
    with pytest.raises(Exception, match="kernel 'bad_attrs': workspace_bytes is 256 but the "
                                        "global-mode tensor maps need 0"):
        jax.block_until_ready(f(jnp.ones((4,), jnp.float32)))


# ----------------------------------------------------------------- CUDA lowering --

def test_cuda_lowering_carries_the_plan_attributes():
    ptx = entry("lowered", "  .param .u64 x")
    plan = LaunchPlan.from_ptx("lowered", ptx, "sm_90a", grid=(5, 1, 1), block=(64, 1, 1),
                               params=(ParamSlot.buffer(0),))
    f = jax.jit(lambda x: jax.ffi.ffi_call(FFI_TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, **plan_to_attrs(plan)))
    text = f.trace(jnp.ones((4,), jnp.float32)).lower(lowering_platforms=("cuda",)).as_text()
    assert "stablehlo.custom_call @jax_pyptx_launch" in text
    assert 'kernel_name = "lowered"' in text
    assert f'ptx_sha256 = "{plan.ptx_sha256}"' in text
    assert "grid = dense<[5, 1, 1]> : tensor<3xi64>" in text
    assert "smem_bytes = 0 : i64" in text
