"""The launch-plan contract (pure Python: no extension, no jax needed)."""
from __future__ import annotations

import hashlib
import struct
import subprocess
import sys

import numpy as np
import pytest

from jax_pyptx.runtime.ffi_plan import (
    FFI_TARGET, TENSORMAP_DTYPES, LaunchPlan, ParamSlot, TmaSpec, plan_to_attrs, ptx_sha256,
    tma_workspace_offsets,
)

PTX = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 x)\n{ ret; }\n"


def test_target_name_and_sha():
    assert FFI_TARGET == "jax_pyptx_launch"
    assert ptx_sha256(PTX) == hashlib.sha256(PTX.encode()).hexdigest()


def test_attrs_schema_exact_types_and_values():
    g = TmaSpec(operand=0, dtype="bf16", global_dims=(128, 64), global_strides=(256,),
                box=(64, 32), swizzle=3, batch=2, batch_stride=16384)
    v = TmaSpec(operand=1, dtype="e4m3", global_dims=(64, 8, 4), global_strides=(64, 512),
                box=(64, 8, 1), element_strides=(1, 1, 2), interleave=0, l2_promotion=1,
                mode="by_value")
    plan = LaunchPlan.from_ptx(
        "k", PTX, "sm_90a", grid=(4, 2, 1), block=(128, 1, 1), cluster=(2, 1, 1),
        smem_bytes=1000,
        params=(ParamSlot.buffer(2), ParamSlot.scalar(3, np.int32), ParamSlot("tma", 0),
                ParamSlot("tma", 1), ParamSlot.scalar(1.0, np.float16)),
        tma=(g, v))
    a = plan_to_attrs(plan)
    assert sorted(a) == sorted([
        "abi_version", "kernel_name", "ptx", "ptx_sha256", "arch", "cubin_path", "grid", "block", "cluster",
        "smem_bytes", "workspace_bytes", "param_kind", "param_index", "param_size", "param_data",
        "tma_operand", "tma_dtype", "tma_rank", "tma_interleave", "tma_swizzle",
        "tma_l2_promotion", "tma_oob_fill", "tma_mode", "tma_batch", "tma_batch_stride",
        "tma_global_dims", "tma_global_strides", "tma_box", "tma_element_strides"])
    for k in ("abi_version", "smem_bytes", "workspace_bytes"):
        assert type(a[k]) is np.int64, k
    for k in ("kernel_name", "ptx", "ptx_sha256", "arch", "cubin_path"):
        assert type(a[k]) is str, k
    for k, val in a.items():
        if isinstance(val, np.ndarray):
            assert val.dtype == (np.uint8 if k == "param_data" else np.int64), k
            assert val.ndim == 1, k
    assert int(a["workspace_bytes"]) == plan.workspace_bytes == 256
    assert a["grid"].tolist() == [4, 2, 1] and a["cluster"].tolist() == [2, 1, 1]
    assert a["param_kind"].tolist() == [0, 1, 2, 2, 1]
    assert a["param_index"].tolist() == [2, 0, 0, 1, 4]
    assert a["param_size"].tolist() == [8, 4, 8, 128, 2]
    assert a["param_data"].tobytes() == struct_bytes("<ie", 3, 1.0)
    assert a["tma_dtype"].tolist() == [9, 0]
    assert a["tma_rank"].tolist() == [2, 3]
    assert a["tma_mode"].tolist() == [0, 1]
    assert a["tma_batch"].tolist() == [2, 1] and a["tma_batch_stride"].tolist() == [16384, 0]
    assert a["tma_global_dims"].tolist() == [128, 64, 64, 8, 4]
    assert a["tma_global_strides"].tolist() == [256, 64, 512]
    assert a["tma_box"].tolist() == [64, 32, 64, 8, 1]
    assert a["tma_element_strides"].tolist() == [1, 1, 1, 1, 2]
    assert a["tma_l2_promotion"].tolist() == [0, 1] and a["tma_swizzle"].tolist() == [3, 0]
    assert tma_workspace_offsets(plan) == (0, None)
    assert plan.num_operands == 3


def struct_bytes(fmt, *vals):
    return struct.pack(fmt, *vals)


def test_empty_plan_attrs():
    plan = LaunchPlan.from_ptx("k", PTX, "sm_80", grid=(1, 1, 1), block=(32, 1, 1))
    a = plan_to_attrs(plan)
    assert a["param_kind"].shape == (0,) and a["tma_global_dims"].shape == (0,)
    assert a["param_data"].shape == (0,) and a["param_data"].dtype == np.uint8
    assert plan.workspace_bytes == 0 and plan.num_operands == 0


def test_dtype_table_matches_cuda_enum():
    expect = {"u8": 0, "u16": 1, "u32": 2, "s32": 3, "u64": 4, "s64": 5, "f16": 6, "f32": 7,
              "f64": 8, "bf16": 9, "tf32": 11, "e4m3": 0, "e5m2": 0}
    assert {k: TENSORMAP_DTYPES[k][0] for k in expect} == expect
    assert TmaSpec(0, 7, (4,), (), (4,)).data_type == 7


@pytest.mark.parametrize("kwargs,msg", [
    (dict(global_dims=(4, 4), global_strides=(), box=(4, 4)), "needs 1 global_strides"),
    (dict(global_dims=(4,) * 6, global_strides=(16,) * 5, box=(4,) * 6), "rank must be 1..5"),
    (dict(global_dims=(4,), global_strides=(), box=(4, 4)), "need 1 entries"),
    (dict(global_dims=(4,), global_strides=(), box=(4,), dtype="f8"), "unknown dtype"),
    (dict(global_dims=(4,), global_strides=(), box=(4,), mode="shared"), "mode must be"),
    (dict(global_dims=(4,), global_strides=(), box=(4,), mode="by_value", batch=2),
     "cannot be batched"),
    (dict(global_dims=(4,), global_strides=(), box=(4,), swizzle=7), "swizzle must be 0..6"),
])
def test_tma_spec_validation(kwargs, msg):
    kwargs.setdefault("dtype", "f32")
    with pytest.raises(ValueError, match=msg):
        TmaSpec(operand=0, **kwargs)


def test_plan_validation():
    with pytest.raises(ValueError, match="not a multiple of cluster"):
        LaunchPlan.from_ptx("k", PTX, "sm_90a", grid=(3, 1, 1), block=(1, 1, 1), cluster=(2, 1, 1))
    with pytest.raises(ValueError, match="names tma"):
        LaunchPlan.from_ptx("k", PTX, "sm_90a", grid=(1, 1, 1), block=(1, 1, 1),
                            params=(ParamSlot("tma", 0),))
    with pytest.raises(ValueError, match="1, 2, 4 or 8 bytes"):
        ParamSlot("scalar", data=b"abc")
    with pytest.raises(ValueError, match="64-hex-digit"):
        LaunchPlan("k", PTX, "abc", "sm_90a", (1, 1, 1), (1, 1, 1))


def test_plans_are_hashable_values():
    mk = lambda: LaunchPlan.from_ptx("k", PTX, "sm_90a", grid=[1, 1, 1], block=[32, 1, 1],
                                     params=[ParamSlot.buffer(0)])
    assert mk() == mk() and hash(mk()) == hash(mk())
    assert mk().grid == (1, 1, 1)


def test_importing_the_package_does_not_load_the_extension():
    code = ("import sys, jax_pyptx, jax_pyptx.runtime.ffi_plan, jax_pyptx.runtime.ffi_bridge; "
            "assert 'jax_pyptx._ffi' not in sys.modules, 'extension imported eagerly'")
    subprocess.run([sys.executable, "-c", code], check=True)
