"""``pyptx.jax_support.call_kernel_via_ffi`` binds the ``pyptx_call`` primitive: a
hand-assembled launch of PTX text gets the primitive's rules (vmap, sharded ``jit``, the CUDA
lowering) like any kernel call."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import jax

from pyptx.jax_support import (add_scalar_param_to_shim, call_kernel_via_ffi,
                               compile_ptx_to_cubin, register_launch_config)
from jax_pyptx import SpecializationError, Tile, kernel, ptx, reg
from jax_pyptx.types import f32, u32, u64


@kernel(arch="sm_90a", in_specs=(Tile("N", f32), Tile("N", f32)), out_specs=(Tile("N", f32),),
        raw_params=[("scale", f32)], block=(64, 1, 1), grid=lambda N: (N // 64, 1, 1))
def axpy(X, B, Y):
    """Y = X * scale + B: its PTX is launched by hand below."""
    i = reg.from_(ptx.special.ctaid.x(), u32) * 64 + reg.from_(ptx.special.tid.x(), u32)
    off = reg.cvt(i, u64) * 4
    v, b = reg.scalar(f32), reg.scalar(f32)
    ptx.inst.ld.global_.f32(v, ptx.addr(X.ptr() + off))
    ptx.inst.ld.global_.f32(b, ptx.addr(B.ptr() + off))
    ptx.inst.fma.rn.f32(v, v, ptx.param_value("scale"), b)
    ptx.inst.st.global_.f32(ptx.addr(Y.ptr() + off), v)
    ptx.ret()


def _handle(scale: float) -> int:
    h = compile_ptx_to_cubin(axpy.ptx(N=128), "sm_90a")
    register_launch_config(h, None, grid=(2, 1, 1), block=(64, 1, 1))
    add_scalar_param_to_shim(h, value_bits=struct.unpack("<I", struct.pack("<f", scale))[0],
                             size_bytes=4)
    return h


def _call(h, **extra):
    def f(x, b):
        return call_kernel_via_ffi(x, b, cubin_handle=h, out_specs=(Tile("N", f32),),
                                   out_shape_env={"N": 128}, grid=(2, 1, 1), block=(64, 1, 1),
                                   **extra)
    return f


def _ref(x, scale, b):
    """fma.rn.f32: the exact x * scale + b, rounded once (a product of two f32 is exact in f64)."""
    return (x.astype(np.float64) * scale + b).astype(np.float32)


def _data(*lead):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((*lead, 128)).astype(np.float32)
    b = rng.standard_normal((*lead, 128)).astype(np.float32)
    return x, b


def test_the_call_is_the_primitive():
    f = _call(_handle(1.5))
    x, b = _data()
    jaxpr = str(jax.make_jaxpr(f)(x, b))
    assert "pyptx_call[" in jaxpr and "callback" not in jaxpr
    np.testing.assert_array_equal(f(x, b), _ref(x, 1.5, b))


def test_vmap_of_call_kernel_via_ffi():
    f = _call(_handle(-2.0))
    x, b = _data(3)
    got = jax.vmap(f)(x, b)
    np.testing.assert_array_equal(got, _ref(x, -2.0, b))
    # a batch axis that is not leading, and an operand shared by every item
    xt = np.ascontiguousarray(x.T)                              # (128, 3): batch on axis 1
    got = jax.jit(jax.vmap(f, in_axes=(1, None)))(xt, b[0])
    np.testing.assert_array_equal(got, _ref(x, -2.0, b[0]))
    # nested vmaps: one launch per item (the PTX reads its own buffer parameters)
    x2, b2 = _data(2, 3)
    got = jax.vmap(jax.vmap(f))(x2, b2)
    assert got.shape == (2, 3, 128)
    np.testing.assert_array_equal(got, _ref(x2, -2.0, b2))
    assert "pyptx_call[" in str(jax.make_jaxpr(jax.vmap(f))(x, b))


def test_sharded_jit_of_call_kernel_via_ffi():
    if len(jax.devices()) < 2:
        pytest.skip("needs several (CPU) devices")
    from jax.sharding import NamedSharding, PartitionSpec as P

    # operands sharded over two devices: the primitive's sharding rule runs the launch on
    # the whole arrays (no dim is declared independent) and every device gets the result
    mesh = jax.make_mesh((2,), ("d",))
    f = _call(_handle(0.5))
    x, b = _data()
    xs, bs = (jax.device_put(a, NamedSharding(mesh, P("d"))) for a in (x, b))
    got = jax.jit(f)(xs, bs)
    np.testing.assert_array_equal(got, _ref(x, 0.5, b))


def test_cuda_lowering_is_the_launchers_custom_call():
    f = _call(_handle(3.0))
    x, b = _data()
    text = jax.jit(f).trace(x, b).lower(lowering_platforms=("cuda",)).as_text()
    assert "jax_pyptx_launch" in text and "callback" not in text


def test_entry_parameters_must_match_the_launch():
    h = compile_ptx_to_cubin(axpy.ptx(N=128), "sm_90a")       # no scalar added: 3 of 4 params
    x, b = _data()
    with pytest.raises(SpecializationError, match=r"kernel 'axpy': its \.entry has 4 "
                                                  r"parameters, but the launch passes 3: 2 "
                                                  r"inputs and 1 outputs, 0 scalars"):
        _call(h)(x, b)
