"""``pyptx.cache`` (the standalone compiled-kernel cache) and ``pyptx.detect_arch`` /
``arch="auto"`` (one device probe)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import types

import pytest

import pyptx
from pyptx.cache import CacheEntry, CacheKey, CubinCache, get_global_cache, set_global_cache
from jax_pyptx import kernel, ptx
from jax_pyptx.toolchain import device
from jax_pyptx.types import f32

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = CacheKey("mod.gemm", (("BM", 128), ("dtype", "bf16")), (((256, 512), "bf16"),), "sm_90a")


# ----------------------------------------------------------------------------- the key
def test_key_hash_is_the_documented_digest():
    text = ('{"arch": "sm_90a", "fn_id": "mod.gemm", "input_shapes": [[[256, 512], "bf16"]], '
            '"template_kwargs": [["BM", 128], ["dtype", "bf16"]]}')
    assert KEY.hash() == hashlib.sha256(text.encode()).hexdigest()[:32]
    odd = CacheKey("f", (("t", f32),), (), "sm_80")            # default=str for odd values
    text = '{"arch": "sm_80", "fn_id": "f", "input_shapes": [], "template_kwargs": [["t", "f32"]]}'
    assert odd.hash() == hashlib.sha256(text.encode()).hexdigest()[:32]
    assert KEY == CacheKey(*[getattr(KEY, f) for f in ("fn_id", "template_kwargs",
                                                        "input_shapes", "arch")])
    with pytest.raises(AttributeError):
        KEY.arch = "sm_80"                                      # frozen


# ----------------------------------------------------------------------------- memory + disk
def test_put_get_in_memory_and_from_disk(tmp_path):
    cache = CubinCache(tmp_path / "c")
    assert cache.get(KEY) is None and KEY not in cache and len(cache) == 0
    entry = CacheEntry(KEY, ".version 8.5\n", b"\x7fELF-cubin", {"regs": 168, "spills": 0})
    cache.put(entry)
    assert cache.get(KEY) is entry and KEY in cache and len(cache) == 1
    digest = KEY.hash()
    assert sorted(os.listdir(tmp_path / "c")) == sorted(f"{digest}.{e}"
                                                        for e in ("json", "ptx", "cubin"))
    side = json.loads((tmp_path / "c" / f"{digest}.json").read_text())
    assert side["key"] == {"fn_id": "mod.gemm", "template_kwargs": [["BM", 128], ["dtype", "bf16"]],
                           "input_shapes": [[[256, 512], "bf16"]], "arch": "sm_90a"}
    assert side["metadata"] == {"regs": 168, "spills": 0}
    again = CubinCache(tmp_path / "c")                           # a new process, in effect
    got = again.get(KEY)
    assert (got.key, got.ptx_source, got.cubin_bytes, got.metadata) == \
        (KEY, ".version 8.5\n", b"\x7fELF-cubin", {"regs": 168, "spills": 0})
    assert len(again) == 1


def test_entry_without_cubin_and_a_stale_cubin(tmp_path):
    cache = CubinCache(tmp_path)
    cache.put(CacheEntry(KEY, "ptx", b"old cubin"))
    cache.put(CacheEntry(KEY, "ptx v2", None))
    got = CubinCache(tmp_path).get(KEY)
    assert (got.ptx_source, got.cubin_bytes, got.metadata) == ("ptx v2", None, {})


def test_damaged_entries_are_misses(tmp_path):
    digest = KEY.hash()
    CubinCache(tmp_path).put(CacheEntry(KEY, "ptx text", b"cubin bytes"))

    def fresh():
        return CubinCache(tmp_path).get(KEY)

    assert fresh() is not None
    (tmp_path / f"{digest}.ptx").write_text("ptx tex")             # torn
    assert fresh() is None
    (tmp_path / f"{digest}.ptx").write_text("ptx text")
    (tmp_path / f"{digest}.cubin").write_bytes(b"cubin bytez")     # corrupted
    assert fresh() is None
    (tmp_path / f"{digest}.cubin").unlink()                        # missing
    assert fresh() is None
    (tmp_path / f"{digest}.json").write_bytes(b"\xff{not json")
    assert fresh() is None
    other = CacheKey("other", (), (), "sm_80")                     # another key's sidecar
    CubinCache(tmp_path).put(CacheEntry(other, "p"))
    os.replace(tmp_path / f"{other.hash()}.json", tmp_path / f"{digest}.json")
    assert fresh() is None


def test_entries_written_without_stamps_are_read(tmp_path):
    """An entry another writer made (key and metadata only) is read as it is."""
    digest = KEY.hash()
    (tmp_path / f"{digest}.json").write_text(json.dumps({"key": KEY.as_json(),
                                                         "metadata": {"a": 1}}))
    (tmp_path / f"{digest}.ptx").write_text("ptx")
    got = CubinCache(tmp_path).get(KEY)
    assert (got.ptx_source, got.cubin_bytes, got.metadata) == ("ptx", None, {"a": 1})


def test_clear(tmp_path):
    cache = CubinCache(tmp_path)
    cache.put(CacheEntry(KEY, "ptx", b"c"))
    (tmp_path / "notes.json").write_text("{}")
    cache.clear()
    assert len(cache) == 0 and CubinCache(tmp_path).get(KEY) is not None
    cache.clear(disk=True)
    assert os.listdir(tmp_path) == ["notes.json"] and cache.get(KEY) is None


def test_the_cache_never_fails_a_call(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = CubinCache(blocker / "sub")                          # cannot be created
    assert cache.enable_disk is False
    cache.put(CacheEntry(KEY, "ptx"))
    assert cache.get(KEY).ptx_source == "ptx"
    gone = CubinCache(tmp_path / "d")                            # removed under it
    os.rmdir(tmp_path / "d")
    (tmp_path / "d").write_text("not a directory")
    gone.put(CacheEntry(KEY, "ptx"))
    assert gone.get(KEY).ptx_source == "ptx"
    gone.clear(disk=True)
    odd = CubinCache(tmp_path / "odd")                           # metadata JSON cannot hold
    odd.put(CacheEntry(KEY, "ptx", metadata={"t": f32, "s": {1, 2}}))
    assert CubinCache(tmp_path / "odd").get(KEY).metadata == {"t": "f32", "s": "{1, 2}"}
    mem = CubinCache(enable_disk=False)
    mem.put(CacheEntry(KEY, "p"))
    assert "x" not in mem and mem.get(KEY).ptx_source == "p"


def test_concurrent_puts_and_gets(tmp_path):
    cache = CubinCache(tmp_path)
    errors = []

    def work(t):
        try:
            for i in range(40):
                key = CacheKey(f"f{t}", (("i", i),), (), "sm_90a")
                cache.put(CacheEntry(key, f"ptx {t} {i}", bytes([t, i])))
                assert cache.get(key).ptx_source == f"ptx {t} {i}"
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and len(cache) == 240
    fresh = CubinCache(tmp_path)
    assert fresh.get(CacheKey("f5", (("i", 39),), (), "sm_90a")).cubin_bytes == bytes([5, 39])


def test_global_cache(tmp_path):
    before = get_global_cache()
    assert get_global_cache() is before
    mine = CubinCache(tmp_path)
    try:
        set_global_cache(mine)
        assert get_global_cache() is mine
        with pytest.raises(TypeError):
            set_global_cache("nope")
    finally:
        set_global_cache(before)


def test_default_cache_dir_from_the_environment(tmp_path):
    code = "import pyptx.cache as c; print(c.DEFAULT_CACHE_DIR); print(c.CubinCache().cache_dir)"
    env = {**os.environ, "PYTHONPATH": REPO, "PYPTX_CACHE_DIR": str(tmp_path / "pc")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.stdout.split() == [str(tmp_path / "pc")] * 2, r.stderr
    env.pop("PYPTX_CACHE_DIR")
    env["HOME"] = str(tmp_path)
    r = subprocess.run([sys.executable, "-c", code.split(";")[0] + "; print(c.DEFAULT_CACHE_DIR)"],
                       capture_output=True, text=True, env=env)
    assert r.stdout.strip() == str(tmp_path / ".cache" / "pyptx"), r.stderr


# ----------------------------------------------------------------------------- detect_arch
@pytest.fixture
def probes(monkeypatch):
    """Replace the device probes: ``set(name, capability)``; counts calls."""
    calls = {"torch": 0, "cuda-python": 0, "libcuda.so.1": 0}
    answers = {"torch": None, "cuda-python": None, "libcuda.so.1": None}

    def make(name):
        def probe():
            calls[name] += 1
            return answers[name]
        return probe

    monkeypatch.setattr(device, "_PROBES", tuple((n, make(n)) for n in answers))
    monkeypatch.delenv("JAX_PYPTX_ARCH", raising=False)
    device.detect_arch.cache_clear()
    yield types.SimpleNamespace(calls=calls, answers=answers)
    device.detect_arch.cache_clear()


@pytest.mark.parametrize("cap, arch", [((9, 0), "sm_90a"), ((10, 0), "sm_100a"),
                                       ((10, 1), "sm_101a"), ((8, 0), "sm_80"),
                                       ((8, 6), "sm_86"), ((8, 9), "sm_89"),
                                       ((12, 0), "sm_120"), ((10, 3), "sm_103")])
def test_capability_to_arch(cap, arch):
    assert device.arch_of_capability(*cap) == arch


def test_detect_arch_asks_torch_then_cuda_python_then_libcuda_once(probes):
    probes.answers.update({"cuda-python": (8, 6), "libcuda.so.1": (9, 0)})
    assert pyptx.detect_arch() == "sm_86"
    assert pyptx.detect_arch() == "sm_86"                       # cached
    assert probes.calls == {"torch": 1, "cuda-python": 1, "libcuda.so.1": 0}
    device.detect_arch.cache_clear()
    probes.answers["torch"] = (10, 0)
    assert pyptx.detect_arch() == "sm_100a"


def test_detect_arch_without_a_gpu_suggests_an_explicit_arch(probes):
    with pytest.raises(RuntimeError) as e:
        pyptx.detect_arch()
    assert str(e.value) == (
        "detect_arch(): no CUDA device is visible (asked torch, cuda-python and libcuda.so.1); "
        "pass an explicit arch, e.g. @kernel(arch=\"sm_90a\"), or set JAX_PYPTX_ARCH for "
        "arch=\"auto\"")


def test_torch_probe_reads_an_imported_torch(monkeypatch):
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
        is_available=lambda: True, get_device_capability=lambda i: (9, 0)))
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert device._from_torch() == (9, 0)
    fake.cuda.is_available = lambda: False
    assert device._from_torch() is None
    monkeypatch.delitem(sys.modules, "torch")
    assert device._from_torch() is None                           # never imports it


def test_real_probes_agree_on_this_machine():
    device.detect_arch.cache_clear()
    try:
        found = [p() for _, p in device._PROBES]
        if all(f is None for f in found):
            with pytest.raises(RuntimeError):
                device.detect_arch()
        else:
            first = next(f for f in found if f is not None)
            assert device.detect_arch() == device.arch_of_capability(*first)
    finally:
        device.detect_arch.cache_clear()


def test_arch_auto_resolves_when_first_traced_on_the_same_probe(probes, monkeypatch):
    probes.answers["libcuda.so.1"] = (8, 0)

    @kernel(arch="auto")
    def k():
        ptx.ret()

    assert sum(probes.calls.values()) == 0 and k.arch == "auto"   # not at decoration
    assert ".target sm_80\n" in k.ptx() and k.arch == "sm_80"
    assert probes.calls["libcuda.so.1"] == 1
    assert pyptx.detect_arch() == "sm_80" and probes.calls["libcuda.so.1"] == 1
    monkeypatch.setenv("JAX_PYPTX_ARCH", "sm_90a")               # the environment wins

    @kernel(arch="auto")
    def k2():
        ptx.ret()

    assert ".target sm_90a\n" in k2.ptx()


def test_arch_auto_without_a_gpu_traces_for_sm_90a(probes):
    @kernel(arch="auto")
    def k():
        ptx.ret()

    assert ".target sm_90a\n" in k.ptx()
