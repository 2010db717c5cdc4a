"""``pyptx.jax_support`` / ``pyptx.torch_support`` on our launcher, and the TMA fields of
``Tile`` at run time (default box, ``tma_box``, the rank-3 stripe form) as the recording
driver table sees them (DESIGN.md, "Working without a GPU", point 5)."""
from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest

import jax
import jax.numpy as jnp

import pyptx
from pyptx.jax_support import (add_scalar_param_to_shim, add_tma_spec_to_shim,
                               call_kernel_via_ffi, compile_ptx_to_cubin, get_cubin_registry,
                               register_launch_config, set_mock_ffi_callback,
                               shim_is_available, shim_load_error, synthesize_tma_descriptor,
                               synthesize_tma_descriptor_3d)
from jax_pyptx import (Layout, NotSupportedError, PtxValueError, SpecializationError, Tile,
                       kernel, ptx, ptx_call, reg)
from jax_pyptx.errors import UninitializedReadError
from jax_pyptx.runtime import ffi_bridge as fb
from jax_pyptx.types import bf16, f32, u32, u64

from .helpers import line_of

if not fb.available():
    pytest.skip("jax_pyptx._ffi is not built (pip install -e .)", allow_module_level=True)

F32_BITS = struct.Struct("<f")
BF16, F32 = 9, 7                     # CUtensorMapDataType


@pytest.fixture
def recording(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JAX_PYPTX_PRECOMPILE", "0")     # PTX loaded as text: params known
    fb.set_recording(True)
    fb.clear_recording()
    yield fb
    fb.clear_recording()
    fb.set_recording(False)


def calls(fn):
    return [c for c in fb.recorded_calls() if c["fn"] == fn]


def bits(x: float) -> int:
    return struct.unpack("<I", F32_BITS.pack(x))[0]


# ----------------------------------------------------------------------------- kernels
@kernel(arch="sm_90a", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),),
        raw_params=[("scale", f32)], block=(64, 1, 1), grid=lambda N: (N // 64, 1, 1))
def scale(X, Y):
    """Y = X * scale (its PTX is the hand-launched text below)."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    off = reg.cvt(i, u64) * 4
    v = reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.mul.f32(v, v, ptx.param_value("scale"))
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


SCALE_PTX = scale.ptx(N=128)
OUT = (Tile("N", f32),)


def touch(tile):
    """A kernel taking ``X.tma_desc()`` the pyptx way (no arguments) and prefetching it."""
    @kernel(arch="sm_90a", in_specs=(tile,), out_specs=(Tile(1, f32),), block=(32, 1, 1))
    def tma_touch(X, Y, *, BM=64):
        d = X.tma_desc()                                   # the Tile says
        ptx.inst.prefetch.tensormap(ptx.addr(d))
        ptx.ret()
    return tma_touch


def encoded_torch(k, x):
    """The one tensor map the PyTorch CUDA launch of ``k`` on tensor ``x`` encodes."""
    fb.clear_recording()
    pyptx.to_torch(k).launch(x)
    (enc,) = calls("cuTensorMapEncodeTiled")
    assert enc["result"] == 0 and enc["global_address"] == x.data_ptr()
    return enc


def encoded_jax(k, x):
    """The one tensor map the JAX launch of ``k`` (the C++ launcher through XLA) encodes."""
    fb.clear_recording()
    jax.block_until_ready(ptx_call(k, interpret=False)(x))
    (enc,) = calls("cuTensorMapEncodeTiled")
    assert enc["result"] == 0
    return enc


# ----------------------------------------------------------------------------- Tile TMA fields
@pytest.mark.parametrize("tile, shape, dims, strides, box, swizzle", [
    # default box: 128 rows x one 128-byte span (no swizzle), clamped
    (Tile("M", "K", f32), (200, 96), (96, 200), (384,), (32, 128), 0),
    (Tile("M", "K", f32), (8, 16), (16, 8), (64,), (16, 8), 0),
    # the layout's swizzle and its span
    (Tile("M", "K", bf16, Layout.TMA_128B), (256, 512), (512, 256), (1024,), (64, 128), 3),
    (Tile("M", "K", bf16, Layout.TMA_64B), (16, 64), (64, 16), (128,), (32, 16), 2),
    (Tile("M", "K", bf16, Layout.TMA_32B), (64, 64), (64, 64), (128,), (16, 64), 1),
    # tma_box: ints, a shape variable, an integer template parameter; clamped
    (Tile("M", "K", bf16, Layout.TMA_128B, tma_box=("BM", 64)), (256, 512), (512, 256),
     (1024,), (64, 64), 3),
    (Tile("M", "K", f32, tma_box=("M", 16)), (8, 64), (64, 8), (256,), (16, 8), 0),
    (Tile("M", "K", f32, tma_box=(300, 8)), (40, 64), (64, 40), (256,), (8, 40), 0),
    # rank-3 stripes: (64, rows, cols/64), strides (cols, 64) elements, box (64, rows, cols/64)
    (Tile("M", "K", bf16, Layout.TMA_128B, tma_box=(64, 128), tma_rank=3), (128, 256),
     (64, 128, 4), (512, 128), (64, 64, 2), 3),
    (Tile("M", "K", bf16, tma_box=(32, 64), tma_rank=3, tma_padding=True), (64, 128),
     (64, 64, 2), (256, 128), (72, 32, 1), 0),
])
def test_tile_tma_fields_reach_the_encoded_tensor_map(recording, tile, shape, dims, strides,
                                                      box, swizzle):
    k = touch(tile)
    want = (dims, strides, box, swizzle, BF16 if tile.dtype is bf16 else F32)
    enc = encoded_jax(k, jnp.zeros(shape, tile.dtype.np_dtype))
    assert (enc["global_dims"], enc["global_strides"], enc["box_dims"], enc["swizzle"],
            enc["data_type"]) == want
    try:
        import torch
    except ImportError:
        return
    x = torch.zeros(shape, dtype=torch.bfloat16 if tile.dtype is bf16 else torch.float32)
    enc = encoded_torch(k, x)
    assert (enc["global_dims"], enc["global_strides"], enc["box_dims"], enc["swizzle"],
            enc["data_type"]) == want
    t, plan, _ = pyptx.to_torch(k).plan(x)
    (spec,) = plan.tma
    assert (spec.global_dims, spec.box, spec.swizzle) == (dims, box, swizzle)
    assert ".param .u64 X_tma_desc\n)" in t.ptx


def test_tile_tma_fields_in_the_cuda_lowering():
    k = touch(Tile("M", "K", bf16, Layout.TMA_128B, tma_box=(64, 128), tma_rank=3))
    x = jnp.zeros((128, 256), jnp.bfloat16)
    lowered = jax.jit(k).trace(x).lower(lowering_platforms=("cuda",)).as_text()
    assert "tma_box = dense<[64, 64, 2]> : tensor<3xi64>" in lowered
    assert "tma_global_dims = dense<[64, 128, 4]> : tensor<3xi64>" in lowered
    assert "tma_global_strides = dense<[512, 128]> : tensor<2xi64>" in lowered


def test_tile_tma_errors_name_the_line():
    # the messages of the DSL's one Tile -> tensor-map derivation (Tile.tma_view), as
    # tests/test_pyptx_kernel_api.py::test_tma_rank3_stripe_view_and_its_errors asserts them
    k = touch(Tile("M", "K", bf16, Layout.TMA_128B, tma_rank=3))
    with pytest.raises(PtxValueError) as e:
        k.ptx(M=64, K=128)
    assert str(e.value) == (
        f"{line_of(k.fn, '# the Tile says')}: X.tma_desc: tma_rank=3 needs tma_box=(rows, cols) "
        f"in its Tile")
    k = touch(Tile("M", "K", f32, tma_box=("R", 8)))
    with pytest.raises(PtxValueError) as e:
        k.ptx(M=64, K=128)
    assert str(e.value) == (
        f"{line_of(k.fn, '# the Tile says')}: X.tma_desc: tma_box names 'R', which is neither a "
        f"shape variable nor an int template parameter of this call")
    with pytest.raises(PtxValueError, match=r"tma_rank=4 is not allowed; allowed: 2, 3"):
        Tile("M", f32, tma_rank=4)


# ----------------------------------------------------------------------------- descriptors
def test_synthesize_tma_descriptor_encodes_through_the_driver_table(recording):
    tmap, host, dev = synthesize_tma_descriptor((256, 512), bf16, Layout.TMA_128B,
                                                placeholder_ptr=0x4000)
    got = fb.decode_recorded_tensor_map(tmap.data)
    assert got == {"global_address": 0x4000, "global_dims": (512, 256),
                   "global_strides": (1024,), "box_dims": (64, 128), "element_strides": (1, 1),
                   "data_type": BF16, "rank": 2, "interleave": 0, "swizzle": 3,
                   "l2_promotion": 0, "oob_fill": 0}
    assert host % 128 == 0 and ctypes.string_at(host, 128) == tmap.data
    # the recording table's device memory is host memory: the blob holds the same bytes
    assert ctypes.string_at(dev, 128) == tmap.data
    (alloc,) = calls("cuMemAlloc")
    assert alloc["bytesize"] == 128 and alloc["dptr"] == dev
    assert calls("cuMemcpyHtoD")[0]["data"] == tmap.data
    # an explicit box, clamped to the tensor; other swizzles
    tmap, _, _ = synthesize_tma_descriptor((256, 32), f32, Layout.ROW, box_shape=(300, 32))
    assert fb.decode_recorded_tensor_map(tmap.data)["box_dims"] == (32, 256)
    tmap, _, _ = synthesize_tma_descriptor((64, 64), "f16", Layout.TMA_32B)
    assert fb.decode_recorded_tensor_map(tmap.data)["box_dims"] == (16, 64)


def test_synthesize_tma_descriptor_3d(recording):
    tmap, _, _ = synthesize_tma_descriptor_3d(128, 256, bf16, 64, 128)
    got = fb.decode_recorded_tensor_map(tmap.data)
    assert (got["global_dims"], got["global_strides"], got["box_dims"], got["swizzle"]) == \
        ((64, 128, 4), (512, 128), (64, 64, 2), 3)
    tmap, _, _ = synthesize_tma_descriptor_3d(64, 128, bf16, 32, 64, swizzle_128b=False,
                                              padding=True)
    got = fb.decode_recorded_tensor_map(tmap.data)
    assert (got["box_dims"], got["swizzle"]) == ((72, 32, 1), 0)
    with pytest.raises(PtxValueError, match="a width that is a multiple of 64, got 100"):
        synthesize_tma_descriptor_3d(64, 100, bf16, 32, 64)


def test_synthesize_errors(recording):
    with pytest.raises(NotImplementedError) as e:
        synthesize_tma_descriptor((4, 8, 16), f32, Layout.ROW)
    assert str(e.value) == ("synthesize_tma_descriptor: rank 3 (shape (4, 8, 16)); only rank 2 "
                            "is supported (rank 3 stripes: synthesize_tma_descriptor_3d)")
    with pytest.raises(NotSupportedError, match="cuTensorMapEncodeTiled failed: "
                                                "CUDA_ERROR_INVALID_VALUE"):
        synthesize_tma_descriptor((64, 64), f32, Layout.TMA_32B, box_shape=(64, 64))


def test_synthesize_without_a_driver_says_how_to_record():
    if fb.extension().driver_status()[0]:
        pytest.skip("a CUDA driver is present")
    with pytest.raises(NotSupportedError) as e:
        synthesize_tma_descriptor((64, 64), f32, Layout.ROW)
    assert "could not open libcuda.so.1" in str(e.value)
    assert str(e.value).endswith("without a GPU, jax_pyptx.runtime.ffi_bridge.set_recording("
                                 "True) routes driver calls to the recording table")


# ----------------------------------------------------------------------------- handles (JAX)
def test_shim_names():
    assert shim_is_available() is True and shim_load_error() is None
    with pytest.raises(NotSupportedError) as e:
        set_mock_ffi_callback(lambda *a: None)
    assert "set_recording(True)" in str(e.value) and "recorded_launches()" in str(e.value)
    with pytest.raises(SpecializationError, match="no compiled kernel has handle 10000"):
        register_launch_config(10000, None, (1, 1, 1), (1, 1, 1))


def _scale_handle(value=2.5):
    h = compile_ptx_to_cubin(SCALE_PTX, "sm_90a")
    register_launch_config(h, None, grid=(2, 1, 1), block=(64, 1, 1))
    add_scalar_param_to_shim(h, value_bits=bits(value), size_bytes=4)
    return h


def test_compile_ptx_to_cubin_and_call_via_ffi_on_the_interpreter():
    h = _scale_handle()
    rec = get_cubin_registry().get(h)
    assert (rec.kernel_name, rec.arch, rec.grid, rec.scalars) == \
        ("scale", "sm_90a", (2, 1, 1), [struct.pack("<f", 2.5)])
    x = jnp.arange(128, dtype=jnp.float32)
    kw = dict(cubin_handle=h, out_specs=OUT, out_shape_env={"N": 128}, grid=(2, 1, 1),
              block=(64, 1, 1))
    np.testing.assert_array_equal(call_kernel_via_ffi(x, **kw), np.arange(128) * 2.5)
    np.testing.assert_array_equal(jax.jit(lambda x: call_kernel_via_ffi(x, **kw))(x),
                                  np.arange(128) * 2.5)


@kernel(arch="sm_90a", in_specs=(Tile("N", f32),), out_specs=(Tile("N", f32),), block=(64, 1, 1),
        grid=lambda N: (N // 64, 1, 1))
def accumulate(X, Y):
    """Y += X: reads its output before writing it (a bug: outputs start uninitialized)."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    off = reg.cvt(i, u64) * 4
    v, w = reg.scalar(f32), reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.ld.global_.f32(w, ptx.addr(Y.ptr() + off))
    ptx.inst.add.f32(v, v, w)
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def test_call_via_ffi_outputs_start_uninitialized():
    # as on the JAX and torch paths: the handle's output buffer is not zeros to accumulate into
    h = compile_ptx_to_cubin(accumulate.ptx(N=128), "sm_90a")
    register_launch_config(h, None, grid=(2, 1, 1), block=(64, 1, 1))
    x = jnp.ones(128, jnp.float32)
    kw = dict(cubin_handle=h, out_specs=OUT, out_shape_env={"N": 128}, grid=(2, 1, 1),
              block=(64, 1, 1))
    with pytest.raises(UninitializedReadError, match=r"ld\.global\.f32 %f1, \[%rd\d+\]"):
        call_kernel_via_ffi(x, **kw)                   # eager: the interpreter's own error
    with pytest.raises(jax.errors.JaxRuntimeError) as e:
        jax.jit(lambda x: call_kernel_via_ffi(x, **kw))(x)
    # under jit, XLA's message carries the short form: no Python stack of the callback
    assert "UninitializedReadError: <ptx>:" in str(e.value) and "pytest" not in str(e.value)


def test_call_via_ffi_on_the_recording_launcher(recording):
    h = _scale_handle(0.75)
    x = jnp.ones(128, jnp.float32)
    jax.block_until_ready(call_kernel_via_ffi(
        x, cubin_handle=h, out_specs=OUT, out_shape_env={"N": 128}, grid=(2, 1, 1),
        block=(64, 1, 1), interpret=False))
    (launch,) = fb.recorded_launches("scale")
    assert (launch["grid"], launch["block"], launch["param_sizes"]) == \
        ((2, 1, 1), (64, 1, 1), (8, 8, 4))
    assert struct.unpack("<f", launch["params"][16:]) == (0.75,)


def test_tma_spec_added_to_a_handle_is_encoded_from_the_live_buffer(recording):
    k = touch(Tile("M", "K", bf16, Layout.TMA_128B))
    h = compile_ptx_to_cubin(k.ptx(M=128, K=64), "sm_90a")
    tmap, host, dev = synthesize_tma_descriptor((128, 64), bf16, Layout.TMA_128B,
                                                box_shape=(64, 64))
    add_tma_spec_to_shim(h, 0, host, dev)
    fb.clear_recording()
    x = jnp.zeros((128, 64), jnp.bfloat16)
    jax.block_until_ready(call_kernel_via_ffi(
        x, cubin_handle=h, out_specs=(Tile(1, f32),), out_shape_env={}, grid=(1, 1, 1),
        block=(32, 1, 1), interpret=False))
    (enc,) = calls("cuTensorMapEncodeTiled")
    assert (enc["global_dims"], enc["box_dims"], enc["swizzle"]) == ((64, 128), (64, 64), 3)
    (launch,) = fb.recorded_launches("tma_touch")
    xp, _, desc = struct.unpack("<QQQ", launch["params"])
    assert enc["global_address"] == xp and desc % 64 == 0
    with pytest.raises(SpecializationError, match="no tensor map was synthesized at host "
                                                  "address 0x10"):
        add_tma_spec_to_shim(h, 0, 0x10)


def test_compile_ptx_to_cubin_errors():
    with pytest.raises(SpecializationError) as e:
        compile_ptx_to_cubin(SCALE_PTX, "sm_90a", kernel_name="nope")
    assert str(e.value) == "compile_ptx_to_cubin: no .entry 'nope' in the PTX (entries: scale)"


def test_call_via_ffi_output_needs_its_shape_variables():
    h = _scale_handle()
    with pytest.raises(SpecializationError) as e:
        call_kernel_via_ffi(jnp.ones(128), cubin_handle=h, out_specs=OUT, out_shape_env={},
                            grid=(2, 1, 1), block=(64, 1, 1))
    assert str(e.value) == "out_specs[0] Tile('N', f32): shape variable N is not in " \
                           "out_shape_env {}"


# ----------------------------------------------------------------------------- torch_support
def test_torch_support_names():
    torch = pytest.importorskip("torch")
    from pyptx import torch_support as ts

    assert ts.is_torch_tensor(torch.ones(1)) and not ts.is_torch_tensor(np.ones(1))
    assert ts.any_torch_tensors((1, torch.ones(1))) and not ts.any_torch_tensors((1, 2))
    assert ts.extract_input_shapes([torch.ones(2, 3, dtype=torch.bfloat16), torch.ones(4),
                                    jnp.ones(2, jnp.int32), 2.0]) == \
        (((2, 3), "bf16"), ((4,), "f32"), ((2,), "s32"), ((), "float"))
    assert ts.get_or_register_torch_op(scale, scale=2.0) is pyptx.to_torch(scale, scale=2.0)
    assert pyptx.differentiable_kernel is ts.differentiable_kernel


def test_call_kernel_via_torch_on_the_interpreter_and_the_launcher(recording):
    torch = pytest.importorskip("torch")
    from pyptx.torch_support import call_kernel_via_torch

    h = _scale_handle(-2.0)
    x = torch.arange(128, dtype=torch.float32)
    kw = dict(cubin_handle=h, out_specs=OUT, out_shape_env={"N": 128}, grid=(2, 1, 1),
              block=(64, 1, 1))
    np.testing.assert_array_equal(call_kernel_via_torch(x, **kw).numpy(), np.arange(128) * -2)
    y = call_kernel_via_torch(x, interpret=False, stream=3, **kw)
    (launch,) = fb.recorded_launches("scale")
    assert launch["stream"] == 3
    assert struct.unpack("<QQf", launch["params"]) == (x.data_ptr(), y.data_ptr(), -2.0)


def test_call_kernel_via_torch_compile_is_one_op():
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounterWithBackend

    from pyptx.torch_support import call_kernel_via_torch_compile

    h = _scale_handle(3.0)
    kw = dict(cubin_handle=h, out_specs=OUT, out_shape_env={"N": 128}, grid=(2, 1, 1),
              block=(64, 1, 1))
    cnt = CompileCounterWithBackend("aot_eager")
    f = torch.compile(lambda x: call_kernel_via_torch_compile(x, **kw) + 1, fullgraph=True,
                      backend=cnt)
    x = torch.arange(128, dtype=torch.float32)
    np.testing.assert_array_equal(f(x).numpy(), np.arange(128) * 3.0 + 1)
    assert cnt.frame_count == 1
