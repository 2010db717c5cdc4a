"""The on-disk cache: where it lives, atomic writes, and verified reads.

The cache is an optimisation: it may never make a call fail. A directory that cannot be
created or written is replaced by a private temporary one (with one warning); an entry that
cannot be read, does not decode, or whose bytes do not match the size and SHA-256 recorded
when it was written, is a miss and gets rebuilt. Files are created through the process umask
(``0o666 & ~umask``), so a cache shared by a team works.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import tempfile
import threading
import warnings

_lock = threading.Lock()
_usable: dict = {}          # configured directory -> the directory actually used
_fallback: list = []        # [private temporary directory] once created
_warned: set = set()        # configured directories already warned about


def configured_dir() -> str:
    """``$JAX_PYPTX_CACHE_DIR``, else ``~/.cache/jax_pyptx``."""
    return os.environ.get("JAX_PYPTX_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "jax_pyptx")


def cache_dir() -> str:
    """The cache directory, created if needed; a private temporary one if it is unusable."""
    d = configured_dir()
    got = _usable.get(d)
    if got is not None:
        return got
    with _lock:
        got = _usable.get(d)
        if got is None:
            try:
                os.makedirs(d, exist_ok=True)
                _probe(d)
                got = d
            except OSError as e:
                got = _fall_back(d, e)
            _usable[d] = got
    return got


def _probe(d: str) -> None:
    """Raise OSError unless a file can be created (and removed) in ``d``."""
    path = os.path.join(d, f".probe-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    os.close(fd)
    os.unlink(path)


def _fall_back(configured: str, err: OSError) -> str:
    """The private temporary cache, warning once per configured directory. Caller holds _lock
    (or is the only writer)."""
    if not _fallback:
        _fallback.append(tempfile.mkdtemp(prefix="jax_pyptx-cache-"))
    tmp = _fallback[0]
    if configured != tmp and configured not in _warned:
        _warned.add(configured)
        reason = f"{type(err).__name__}: {err.strerror or err}"
        warnings.warn(f"jax_pyptx: the cache directory {configured!r} is not writable "
                      f"({reason}); using the private temporary cache {tmp!r} for this "
                      f"process (set JAX_PYPTX_CACHE_DIR to a writable directory)",
                      RuntimeWarning, stacklevel=3)
    return tmp


def write_failed(path: str, err: OSError) -> str:
    """A write into the cache failed: switch this process to the private cache and return the
    same file name there (the caller retries once)."""
    d = configured_dir()
    with _lock:
        tmp = _fall_back(d, err)
        _usable[d] = tmp
    return os.path.join(tmp, os.path.basename(path))


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file + rename), mode ``0o666 & ~umask``."""
    tmp = os.path.join(os.path.dirname(path) or ".",
                       f".tmp-{os.getpid()}-{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def store(path: str, data: bytes) -> str:
    """``atomic_write`` into the cache; on OSError once more in the private cache. Returns
    where the file went, or "" when even that failed (the caller goes on uncached)."""
    try:
        atomic_write(path, data)
        return path
    except OSError as e:
        alt = write_failed(path, e)
        if alt == path:
            return ""
        try:
            atomic_write(alt, data)
            return alt
        except OSError:
            return ""


# ----------------------------------------------------------------------------- stamps
def stamp(data: bytes) -> str:
    """``<sha256 hex> <size>``: what a verified read compares against."""
    return f"{hashlib.sha256(data).hexdigest()} {len(data)}"


def matches(data: bytes, recorded: str) -> bool:
    """Whether ``data`` has the size and digest of ``recorded`` (a ``stamp``)."""
    parts = recorded.split()
    if len(parts) != 2 or not parts[1].isdigit() or int(parts[1]) != len(data):
        return False
    return hashlib.sha256(data).hexdigest() == parts[0]


def read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (OSError, ValueError):
        return None


def read_text(path: str) -> str | None:
    """The file as UTF-8 text, or None when it is missing, unreadable or not UTF-8."""
    data = read_bytes(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def sidecar(path: str) -> str:
    """Where the stamp of a published file lives (``<path>.sha256``)."""
    return path + ".sha256"


def write_stamped(path: str, data: bytes) -> str:
    """Write ``data`` and its stamp (``<path>.sha256``); returns the path used ("" if none)."""
    where = store(path, data)
    if where:
        try:
            atomic_write(sidecar(where), (stamp(data) + "\n").encode())
        except OSError:
            return ""
    return where


def read_stamped(path: str) -> bytes | None:
    """The bytes of ``path`` when its stamp exists and matches; else None."""
    rec = read_text(sidecar(path))
    data = read_bytes(path) if rec is not None else None
    if data is None or not matches(data, rec.strip()):
        return None
    return data
