"""``pyptx.cache``: a standalone cache of compiled kernels (PTX, cubin and metadata) by key.

The documented pyptx cache API, over the toolchain's cache helpers (atomic writes, verified
reads). Kernel launches do not need it (they use the toolchain's own cache, keyed by the PTX
text: ``jax_pyptx.toolchain.compile_ptx``); it is for code that manages compiled artifacts
itself.

    from pyptx.cache import CacheEntry, CacheKey, CubinCache

    cache = CubinCache("/tmp/my-cache")
    key = CacheKey("my_module.gemm", (("BM", 128),), (((256, 256), "bf16"),), "sm_90a")
    cache.put(CacheEntry(key, ptx_text, cubin_bytes, {"regs": 168}))
    entry = cache.get(key)          # memory first, then <dir>/<key.hash()>.json/.ptx/.cubin

On disk an entry is ``<digest>.ptx``, ``<digest>.cubin`` (when there is one) and, written
last, ``<digest>.json``: ``{"key": {...}, "metadata": {...}, "files": {...}}`` where
``files`` holds the size and SHA-256 of the other two, checked on read. The cache never makes
a call fail: a directory that cannot be created or written leaves the cache in memory only,
and an entry that is missing, unreadable, torn or for another key is a miss.

Examples:
    >>> import tempfile
    >>> from pyptx.cache import CacheEntry, CacheKey, CubinCache
    >>> cache = CubinCache(tempfile.mkdtemp())
    >>> key = CacheKey("my_module.gemm", (("BM", 128),), (((256, 256), "bf16"),), "sm_90a")
    >>> cache.put(CacheEntry(key, ".version 8.5 ..."))
    >>> CubinCache(cache.cache_dir).get(key).ptx_source        # a second cache reads it from disk
    '.version 8.5 ...'
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..toolchain.cache import atomic_write, matches, read_bytes, stamp

__all__ = ["DEFAULT_CACHE_DIR", "CacheKey", "CacheEntry", "CubinCache", "get_global_cache",
           "set_global_cache"]


def _default_dir() -> Path:
    env = os.environ.get("PYPTX_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "pyptx"


#: ``$PYPTX_CACHE_DIR`` when set (at import), else ``~/.cache/pyptx``.
DEFAULT_CACHE_DIR = _default_dir()

_DIGEST_FILE = re.compile(r"^[0-9a-f]{32}\.(json|ptx|cubin)$")


@dataclass(frozen=True)
class CacheKey:
    """What identifies a compiled kernel: function id, template kwargs, input shapes, arch.

    ``template_kwargs``: ``((name, value), ...)``; ``input_shapes``: ``((shape, dtype
    name), ...)``.

    Examples:
        >>> len(CacheKey("f", (("BM", 64),), (((128, 64), "f32"),), "sm_90a").hash())
        32
    """

    fn_id: str
    template_kwargs: tuple
    input_shapes: tuple
    arch: str

    def as_json(self) -> dict:
        """The key as the JSON object that :meth:`hash` digests.

        Examples:
            >>> from pyptx.cache import CacheKey
            >>> CacheKey("f", (("BM", 64),), (((128, 64), "f32"),), "sm_90a").as_json()  # doctest: +NORMALIZE_WHITESPACE
            {'fn_id': 'f', 'template_kwargs': [['BM', 64]], 'input_shapes': [[[128, 64],
             'f32']], 'arch': 'sm_90a'}
        """
        return {"fn_id": self.fn_id,
                "template_kwargs": [[k, v] for k, v in self.template_kwargs],
                "input_shapes": [[list(shape), dtype] for shape, dtype in self.input_shapes],
                "arch": self.arch}

    def hash(self) -> str:
        """First 32 hex digits of the SHA-256 of the key's sorted-key JSON (``default=str``
        for values JSON cannot hold).

        Examples:
            >>> from pyptx.cache import CacheKey
            >>> a = CacheKey("f", (("BM", 64),), (), "sm_90a")
            >>> a.hash() == CacheKey("f", (("BM", 64),), (), "sm_90a").hash() != CacheKey("f", (), (), "sm_90a").hash()
            True
        """
        text = json.dumps(self.as_json(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass
class CacheEntry:
    """One cached kernel: its key, PTX text, cubin (None when not compiled) and metadata.

    Examples:
        >>> CacheEntry(CacheKey("f", (), (), "sm_80"), ".version 8.5 ...").cubin_bytes is None
        True
    """

    key: CacheKey
    ptx_source: str
    cubin_bytes: bytes | None = None
    metadata: dict = field(default_factory=dict)


def _canonical(obj):
    """``obj`` after a JSON round trip (what a disk read gives back)."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


class CubinCache:
    """Entries in memory and, with ``enable_disk``, under ``cache_dir`` (default
    :data:`DEFAULT_CACHE_DIR`, created if needed). Thread-safe.

    Examples:
        >>> cache = CubinCache(enable_disk=False)
        >>> key = CacheKey("f", (), (), "sm_90a")
        >>> cache.put(CacheEntry(key, "ptx")); key in cache, len(cache)
        (True, 1)
    """

    def __init__(self, cache_dir=None, enable_disk: bool = True):
        self.cache_dir = Path(cache_dir) if cache_dir is not None else DEFAULT_CACHE_DIR
        self.enable_disk = bool(enable_disk)
        self._memory: dict = {}
        self._lock = threading.RLock()
        if self.enable_disk:
            try:
                self.cache_dir.mkdir(parents=True, exist_ok=True)
            except OSError:
                self.enable_disk = False       # memory only: the cache never fails a call

    def __repr__(self):
        where = str(self.cache_dir) if self.enable_disk else "memory only"
        return f"CubinCache({where!r}, {len(self)} entries)"

    def _path(self, digest: str, ext: str) -> Path:
        return self.cache_dir / f"{digest}.{ext}"

    # ------------------------------------------------------------------ reads
    def get(self, key: CacheKey) -> CacheEntry | None:
        """The entry for ``key`` (memory, then disk), or None.

        Examples:
            >>> from pyptx.cache import CacheEntry, CacheKey, CubinCache
            >>> cache = CubinCache(enable_disk=False)
            >>> key = CacheKey("f", (), (), "sm_90a")
            >>> cache.get(key) is None
            True
            >>> cache.put(CacheEntry(key, "ptx text"))
            >>> cache.get(key).ptx_source
            'ptx text'
        """
        with self._lock:
            got = self._memory.get(key)
            if got is not None or not self.enable_disk:
                return got
            got = self._read(key)
            if got is not None:
                self._memory[key] = got
            return got

    def _read(self, key: CacheKey) -> CacheEntry | None:
        digest = key.hash()
        raw = read_bytes(str(self._path(digest, "json")))
        if raw is None:
            return None
        try:
            side = json.loads(raw.decode("utf-8"))
            if not isinstance(side, dict) or side.get("key") != _canonical(key.as_json()):
                return None
            metadata = side.get("metadata", {})
            files = side.get("files")
            ptx = read_bytes(str(self._path(digest, "ptx")))
            if ptx is None:
                return None
            cubin = read_bytes(str(self._path(digest, "cubin")))
            if isinstance(files, dict):        # written here: check what was recorded
                if not matches(ptx, str(files.get("ptx", ""))):
                    return None
                if files.get("cubin") is None:
                    cubin = None
                elif cubin is None or not matches(cubin, str(files["cubin"])):
                    return None
            return CacheEntry(key, ptx.decode("utf-8"), cubin,
                              metadata if isinstance(metadata, dict) else {})
        except (ValueError, UnicodeDecodeError, TypeError, AttributeError):
            return None

    def __contains__(self, key) -> bool:
        return isinstance(key, CacheKey) and self.get(key) is not None

    def __len__(self) -> int:
        """Entries held in memory (read or put by this object)."""
        with self._lock:
            return len(self._memory)

    # ------------------------------------------------------------------ writes
    def put(self, entry: CacheEntry) -> None:
        """Keep ``entry`` in memory and write it to disk (OS errors are ignored).

        Examples:
            >>> from pyptx.cache import CacheEntry, CacheKey, CubinCache
            >>> cache = CubinCache(enable_disk=False)
            >>> cache.put(CacheEntry(CacheKey("f", (), (), "sm_90a"), "ptx text", b"cubin"))
            >>> len(cache)
            1
        """
        with self._lock:
            self._memory[entry.key] = entry
            if not self.enable_disk:
                return
            digest = entry.key.hash()
            ptx = entry.ptx_source.encode("utf-8")
            cubin = None if entry.cubin_bytes is None else bytes(entry.cubin_bytes)
            side = {"key": entry.key.as_json(), "metadata": dict(entry.metadata or {}),
                    "files": {"ptx": stamp(ptx),
                              "cubin": None if cubin is None else stamp(cubin)}}
            try:
                text = json.dumps(side, sort_keys=True, default=str).encode("utf-8")
                atomic_write(str(self._path(digest, "ptx")), ptx)
                if cubin is not None:
                    atomic_write(str(self._path(digest, "cubin")), cubin)
                atomic_write(str(self._path(digest, "json")), text)   # the commit point
            except (OSError, ValueError, TypeError):
                pass

    def clear(self, *, disk: bool = False) -> None:
        """Forget every entry; with ``disk``, also delete this cache's ``<digest>.json /
        .ptx / .cubin`` files (other files in the directory are left alone).

        Examples:
            >>> import os, tempfile
            >>> from pyptx.cache import CacheEntry, CacheKey, CubinCache
            >>> cache = CubinCache(tempfile.mkdtemp())
            >>> cache.put(CacheEntry(CacheKey("f", (), (), "sm_90a"), "ptx text"))
            >>> cache.clear(disk=True)
            >>> len(cache), os.listdir(cache.cache_dir)
            (0, [])
        """
        with self._lock:
            self._memory.clear()
            if not (disk and self.enable_disk):
                return
            try:
                names = os.listdir(self.cache_dir)
            except OSError:
                return
            for name in names:
                if _DIGEST_FILE.match(name):
                    try:
                        os.unlink(self.cache_dir / name)
                    except OSError:
                        pass


_global: list = []
_global_lock = threading.Lock()


def get_global_cache() -> CubinCache:
    """The process-wide :class:`CubinCache` (created on first use, in
    :data:`DEFAULT_CACHE_DIR`).

    Examples:
        >>> from pyptx.cache import CubinCache, get_global_cache
        >>> isinstance(get_global_cache(), CubinCache), get_global_cache() is get_global_cache()
        (True, True)
    """
    with _global_lock:
        if not _global:
            _global.append(CubinCache())
        return _global[0]


def set_global_cache(cache: CubinCache) -> None:
    """Replace the process-wide cache (``get_global_cache()`` returns ``cache``).

    Examples:
        >>> from pyptx.cache import CubinCache, get_global_cache, set_global_cache
        >>> old = get_global_cache()
        >>> mine = CubinCache(enable_disk=False)
        >>> set_global_cache(mine)
        >>> get_global_cache() is mine
        True
        >>> set_global_cache(old)
    """
    if not isinstance(cache, CubinCache):
        raise TypeError(f"set_global_cache() takes a CubinCache, got {cache!r}")
    with _global_lock:
        _global[:] = [cache]
