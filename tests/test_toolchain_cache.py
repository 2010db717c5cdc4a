"""The disk cache is an optimisation that may never make a call fail (issue 15).

Each test reproduces an attack: a report file with non-UTF-8 bytes, an uncreatable or
read-only cache directory, a truncated or altered cubin, the file mode under a umask, SASS
rerun on every call, and a ptxas error that named a temporary file instead of the user's line.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
import warnings

import pytest

from jax_pyptx import kernel, ptx, reg
from jax_pyptx.errors import ToolchainError
from jax_pyptx.toolchain import cache, compile, disassemble, publish_cubin, read_cubin
from jax_pyptx.toolchain import cubin as cubin_mod
from jax_pyptx.toolchain.find import find_tool
from jax_pyptx.types import u32

from .test_kernel_trace import tiny

ARCH = "sm_90a"


@pytest.fixture
def cache_at(monkeypatch):
    """Point the cache at a directory; forget which directories were probed or warned."""
    def use(path):
        monkeypatch.setenv("JAX_PYPTX_CACHE_DIR", str(path))
        monkeypatch.setattr(cache, "_usable", {})
        monkeypatch.setattr(cache, "_warned", set())
        monkeypatch.setattr(cache, "_fallback", [])
        return path
    return use


def entry_files(d, suffix):
    return sorted(p for p in d.iterdir() if p.name.endswith(suffix))


# ----------------------------------------------------------------------------- corrupt
def test_non_utf8_report_is_a_miss_for_compile_sass_and_resources(tmp_path, cache_at):
    cache_at(tmp_path)
    first = compile(tiny.ptx(), ARCH)
    [rep] = entry_files(tmp_path, ".txt")
    rep.write_bytes(b"\xff\xfe\x80 not utf-8\n\xc3\x28")
    second = compile(tiny.ptx(), ARCH)            # rebuilt, not UnicodeDecodeError
    assert not second.cached and second.cubin == first.cubin
    assert compile(tiny.ptx(), ARCH).cached       # and the entry is good again
    rep.write_bytes(b"\xff\xfe\x80")
    assert tiny.resources().registers == first.report.registers
    rep.write_bytes(b"\xff\xfe\x80")
    assert "EXIT" in tiny.sass()


def test_non_utf8_sass_entry_is_a_miss(tmp_path, cache_at):
    cache_at(tmp_path)
    sass = disassemble(tiny.ptx(), ARCH)
    [entry] = entry_files(tmp_path, ".sass")
    entry.write_bytes(b"\xff\xfe garbage")
    assert disassemble(tiny.ptx(), ARCH) == sass
    assert entry.read_bytes().decode().partition("\n")[2] == sass


def test_truncated_cached_cubin_is_rebuilt(tmp_path, cache_at):
    cache_at(tmp_path)
    first = compile(tiny.ptx(), ARCH)
    [cub] = entry_files(tmp_path, ".cubin")
    cub.write_bytes(first.cubin[:100])
    again = compile(tiny.ptx(), ARCH)
    assert not again.cached and again.cubin == first.cubin
    assert cub.read_bytes() == first.cubin
    # the report's first line records the size and digest of what was written
    recorded = entry_files(tmp_path, ".txt")[0].read_text().partition("\n")[0]
    assert recorded == f"{hashlib.sha256(first.cubin).hexdigest()} {len(first.cubin)}"


def test_published_cubin_is_verified_and_rebuilt(tmp_path, cache_at):
    cache_at(tmp_path)
    image = compile(tiny.ptx(), ARCH).cubin
    path = str(tmp_path / f"{'ab' * 32}-{ARCH}.cubin")
    assert publish_cubin(path, image) == path
    assert read_cubin(path) == image
    assert open(path + ".sha256").read() == \
        f"{hashlib.sha256(image).hexdigest()} {len(image)}\n"
    with open(path, "r+b") as f:         # truncated to 100 bytes
        f.truncate(100)
    assert read_cubin(path) is None
    assert publish_cubin(path, image) == path and read_cubin(path) == image
    with open(path, "r+b") as f:         # same size, one byte changed
        f.seek(len(image) - 1)
        f.write(bytes([image[-1] ^ 1]))
    assert read_cubin(path) is None
    os.unlink(path + ".sha256")          # no stamp: nothing vouches for it
    assert read_cubin(path) is None
    assert publish_cubin(path, image) == path and read_cubin(path) == image


# ----------------------------------------------------------------------------- unwritable
def _warning_texts(record):
    return [str(w.message) for w in record if "jax_pyptx: the cache directory" in str(w.message)]


def test_uncreatable_cache_dir_falls_back_with_one_warning(tmp_path, cache_at):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    bad = cache_at(blocker / "cache")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = compile(tiny.ptx(), ARCH)
        assert res.cubin[:4] == b"\x7fELF"
        again = compile(tiny.ptx(), ARCH)
        sass = tiny.sass()
    assert again.cached and "EXIT" in sass
    tmp = cache._fallback[0]
    assert os.path.dirname(res.path) == tmp and os.path.basename(tmp).startswith("jax_pyptx-cache-")
    assert _warning_texts(rec) == [
        f"jax_pyptx: the cache directory {str(bad)!r} is not writable (NotADirectoryError: "
        f"Not a directory); using the private temporary cache {tmp!r} for this process "
        f"(set JAX_PYPTX_CACHE_DIR to a writable directory)"]


def test_read_only_cache_dir_falls_back(tmp_path, cache_at, monkeypatch):
    ro = cache_at(tmp_path / "ro")
    ro.mkdir()
    real_open = os.open

    def deny(path, flags, mode=0o777, **kw):     # what chmod 0555 does for a non-root user
        if str(path).startswith(str(ro)) and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(cache.os, "open", deny)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = compile(tiny.ptx(), ARCH)
        assert "EXIT" in disassemble(tiny.ptx(), ARCH)
    assert res.cubin[:4] == b"\x7fELF" and list(ro.iterdir()) == []
    assert _warning_texts(rec) == [
        f"jax_pyptx: the cache directory {str(ro)!r} is not writable (PermissionError: "
        f"Permission denied); using the private temporary cache {cache._fallback[0]!r} for "
        f"this process (set JAX_PYPTX_CACHE_DIR to a writable directory)"]


def test_directory_turning_read_only_after_the_probe_falls_back(tmp_path, cache_at,
                                                                 monkeypatch):
    d = cache_at(tmp_path / "later")
    assert cache.cache_dir() == str(d)            # probed while writable
    real_open = os.open

    def deny(path, flags, mode=0o777, **kw):
        if str(path).startswith(str(d)) and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(cache.os, "open", deny)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = compile(tiny.ptx(), ARCH)
    assert os.path.dirname(res.path) == cache._fallback[0] and len(_warning_texts(rec)) == 1
    assert compile(tiny.ptx(), ARCH).cached       # the private cache serves the rest


def test_cuda_lowering_with_an_unwritable_cache_dir(tmp_path, cache_at):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from examples.hopper.rms_norm import build_rms_norm

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    cache_at(blocker / "cache")
    k = build_rms_norm(4, 64)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        text = jax.jit(k).trace(jnp.ones((8, 64)), jnp.ones(64)).lower(
            lowering_platforms=("cuda",)).as_text()
    assert "custom_call" in text and len(_warning_texts(rec)) == 1


# ----------------------------------------------------------------------------- modes
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_cache_files_follow_the_umask(tmp_path, cache_at, umask, mode):
    cache_at(tmp_path)
    old = os.umask(umask)
    try:
        disassemble(tiny.ptx(), ARCH)
        publish_cubin(str(tmp_path / f"{'cd' * 32}-{ARCH}.cubin"), b"\x7fELF" + bytes(60))
    finally:
        os.umask(old)
    files = sorted(tmp_path.iterdir())
    assert sorted(p.suffix for p in files) == [".cubin", ".cubin", ".sass", ".sha256", ".txt"]
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {oct(mode)}


# ----------------------------------------------------------------------------- sass
def test_sass_is_memoised_on_disk(tmp_path, cache_at, monkeypatch):
    cache_at(tmp_path)
    nvdisasm = find_tool("nvdisasm").path
    calls = []
    real = subprocess.run

    def counting(cmd, *a, **kw):
        if cmd[0] == nvdisasm:
            calls.append(cmd)
        return real(cmd, *a, **kw)

    monkeypatch.setattr(cubin_mod.subprocess, "run", counting)
    first = tiny.sass()
    assert [tiny.sass() for _ in range(3)] == [first] * 3
    assert len(calls) == 1
    # a changed entry (same length, different bytes) is a miss: nvdisasm runs again
    [entry] = entry_files(tmp_path, ".sass")
    data = bytearray(entry.read_bytes())
    data[-2] = ord("X") if data[-2] != ord("X") else ord("Y")
    entry.write_bytes(bytes(data))
    assert tiny.sass() == first and len(calls) == 2


# ----------------------------------------------------------------------------- ptxas lines
@kernel(arch=ARCH)
def undefined_symbol():
    tid = reg.from_(ptx.special.tid.x(), u32)
    ptx.inst.add.u32(tid, tid, 1)
    p = reg.scalar("u64", 0)
    ptx.inst.mov.u64(p, ptx.sym("no_such_symbol"))      # ptxas: Unknown symbol
    ptx.ret()


def _bad_line() -> int:
    """The line of this file that emits the instruction ptxas rejects."""
    with open(__file__) as f:
        return next(i for i, s in enumerate(f, 1) if 'ptx.sym("no_such_symbol"))' in s)


def test_ptxas_error_names_the_users_line_and_the_ptx_line(tmp_path, cache_at):
    cache_at(tmp_path)
    text = undefined_symbol.ptx()
    n = next(i for i, s in enumerate(text.splitlines(), 1) if "no_such_symbol" in s)
    with pytest.raises(ToolchainError) as e:
        compile(text, ARCH, module=undefined_symbol.module())
    where = f"{__file__}:{_bad_line()}"
    msg = str(e.value)
    assert str(e.value.loc) == where
    assert msg.startswith(f"{where}: ptxas ")
    assert f"  {where}: PTX line {n}: error   : Unknown symbol 'no_such_symbol'" in msg
    assert "    > mov.u64 \t%rd0, no_such_symbol;" in msg
    assert "k.ptx" not in msg                     # no temporary file names
    # without the module the PTX line is still shown
    with pytest.raises(ToolchainError) as e2:
        cubin_mod.ptxas_check(text, ARCH)
    assert e2.value.loc is None
    assert f"  PTX line {n}: error   : Unknown symbol 'no_such_symbol'" in str(e2.value)
    assert "    > mov.u64 \t%rd0, no_such_symbol;" in str(e2.value)


@pytest.mark.parametrize("method", ["sass", "compile", "resources"])
def test_kernel_methods_name_the_users_line_on_a_ptxas_error(tmp_path, cache_at, method):
    cache_at(tmp_path)
    text = undefined_symbol.ptx()
    n = next(i for i, s in enumerate(text.splitlines(), 1) if "no_such_symbol" in s)
    with pytest.raises(ToolchainError) as e:
        getattr(undefined_symbol, method)()
    where = f"{__file__}:{_bad_line()}"
    assert str(e.value.loc) == where
    assert f"  {where}: PTX line {n}: error   : Unknown symbol 'no_such_symbol'" in str(e.value)
    assert "    > mov.u64 \t%rd0, no_such_symbol;" in str(e.value)
