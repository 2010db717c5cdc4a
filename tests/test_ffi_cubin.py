"""The C++ launcher never trusts a cubin file (issue 15): it reads a file with its size,
checks the toolchain's stamp (``<path>.sha256``: SHA-256 and size) where there is one, and
checks that an ELF image's header, tables and sections lie inside the bytes read, before the
driver (which sizes an ELF image from its header) is given the pointer. A rejected file is
skipped: the next cubin, then the PTX JIT, is used."""
from __future__ import annotations

import hashlib
import struct

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from jax_pyptx.runtime import ffi_bridge as fb  # noqa: E402
from jax_pyptx.runtime.ffi_plan import LaunchPlan, ParamSlot  # noqa: E402

from .test_ffi_launch import call, entry  # noqa: E402

if not fb.available():
    pytest.skip("jax_pyptx._ffi is not built (pip install -e .)", allow_module_level=True)


@pytest.fixture(autouse=True)
def _recording(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(tmp_path / "cubins"))
    (tmp_path / "cubins").mkdir()
    fb.ensure_registered()
    fb.clear_recording()
    yield
    fb.clear_recording()


def real_cubin() -> bytes:
    from jax_pyptx.toolchain import compile

    return compile(entry("k", "  .param .u64 x"), "sm_90a").cubin


def loads():
    return [(c["fn"], c["image"]) for c in fb.recorded_calls() if c["fn"].startswith("cuModuleLoad")]


def plan_named(name):
    ptx = entry(name, "  .param .u64 x")
    return ptx, LaunchPlan.from_ptx(name, ptx, "sm_90a", grid=(1, 1, 1), block=(32, 1, 1),
                                    params=(ParamSlot.buffer(0),))


def crafted(image: bytes) -> bytes:
    b = bytearray(image)
    b[0x28:0x30] = struct.pack("<Q", 1 << 62)     # section headers "at" 4 EiB
    return bytes(b)


@pytest.mark.parametrize("attack", ["truncated", "crafted_header", "huge_section"])
def test_bad_elf_in_the_cache_is_skipped_for_the_ptx_jit(tmp_path, attack):
    image = real_cubin()
    if attack == "truncated":
        bad = image[:100]
    elif attack == "crafted_header":
        bad = crafted(image)
    else:                                          # section 1's size past the file's end
        shoff = struct.unpack_from("<Q", image, 0x28)[0]
        b = bytearray(image)
        struct.pack_into("<Q", b, shoff + 64 + 32, 1 << 40)
        bad = bytes(b)
    ptx, plan = plan_named(f"elf_{attack}")
    (tmp_path / "cubins" / f"{plan.ptx_sha256}-sm_90a.cubin").write_bytes(bad)
    call(plan, jnp.ones((4,), jnp.float32))
    assert loads() == [("cuModuleLoadDataEx", ptx.encode())]
    assert len(fb.recorded_launches(f"elf_{attack}")) == 1


def test_a_good_elf_is_handed_over_whole(tmp_path):
    image = real_cubin()
    ptx, plan = plan_named("elf_good")
    (tmp_path / "cubins" / f"{plan.ptx_sha256}-sm_90a.cubin").write_bytes(image)
    call(plan, jnp.ones((4,), jnp.float32))
    assert loads() == [("cuModuleLoadData", image)]


def test_stamp_mismatch_skips_the_file_and_is_reported(tmp_path):
    ptx, plan = plan_named("stamped")
    path = tmp_path / "cubins" / f"{plan.ptx_sha256}-sm_90a.cubin"
    image = ptx.replace("ret;", "ret; // cubin").encode()
    path.write_bytes(image)
    stamp = tmp_path / "cubins" / f"{plan.ptx_sha256}-sm_90a.cubin.sha256"
    stamp.write_text(f"{hashlib.sha256(image).hexdigest()} {len(image)}\n")
    call(plan, jnp.ones((4,), jnp.float32))
    assert loads() == [("cuModuleLoadData", image)]          # a matching stamp: used
    # Same bytes, another size recorded / another digest recorded: skipped, PTX JIT instead.
    for text in (f"{hashlib.sha256(image).hexdigest()} {len(image) + 1}\n",
                 f"{hashlib.sha256(b'other').hexdigest()} {len(image)}\n"):
        ptx2, plan2 = plan_named(f"stamped{len(text)}{text[:4]}")
        p2 = tmp_path / "cubins" / f"{plan2.ptx_sha256}-sm_90a.cubin"
        image2 = ptx2.replace("ret;", "ret; // cubin").encode()
        p2.write_bytes(image2)
        (tmp_path / "cubins" / (p2.name + ".sha256")).write_text(text)
        fb.clear_recording()
        call(plan2, jnp.ones((4,), jnp.float32))
        assert loads() == [("cuModuleLoadDataEx", ptx2.encode())]


def test_skipped_cubin_is_named_when_the_jit_fails_too(tmp_path):
    image = real_cubin()
    ptx, plan = plan_named("elf_note")
    path = tmp_path / "cubins" / f"{plan.ptx_sha256}-sm_90a.cubin"
    path.write_bytes(image[:100])
    fb.inject_driver_error("cuModuleLoadDataEx", 218)
    with pytest.raises(Exception, match=r"cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX \(218\)"
                                        r".*the cubin .*-sm_90a\.cubin was skipped \(the ELF header "
                                        r"places its tables past the end of the 100-byte file "
                                        r"\(truncated or corrupt\)\)"):
        call(plan, jnp.ones((4,), jnp.float32))
