"""A content-addressed on-disk cache for arrays (hidden states, fitted maps, metrics).

The key is a dict of everything the result depends on (model identity, data, seed, code version); its SHA-256
names the file. Files are written to a temporary name and renamed, and carry a checksum of their contents and the
name they were computed for: a damaged or half-written file, or one copied under another entry's name, is detected
on load, deleted and recomputed. A folder where an entry's file belongs is refused with what to remove.

Processes that share the cache (the test workers, two pages executed side by side) compute each entry once: the
first to miss takes an advisory lock on it (:func:`computing`), the others wait for it and then load its result.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np

from jtc_utils.core.infra import costs
from jtc_utils.core.infra.paths import CACHE_DIR, atomic_open, file_fingerprint

CODE_VERSION = 1  # bump when a cached computation changes meaning


def key_hash(key: dict) -> str:
    return hashlib.sha256(json.dumps({"v": CODE_VERSION, **key}, sort_keys=True, default=str).encode()).hexdigest()


def _digest(arrays: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def path_for(kind: str, key: dict) -> Path:
    return CACHE_DIR / kind / f"{key_hash(key)}.npz"


def load(path: Path) -> dict | None:
    """The arrays stored at ``path``, or None if missing or damaged (a damaged file is removed)."""
    if path.is_dir():
        raise ValueError(
            f"{path} is a folder where a cache entry's file belongs: remove it (rm -r {path}) and run again"
        )
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k not in ("__sha256__", "__entry__")}
            stored = str(z["__sha256__"])
            entry = str(z["__entry__"]) if "__entry__" in z.files else path.stem  # entries written before it: by name
        if stored == _digest(arrays) and entry == path.stem:
            return arrays
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        pass
    path.unlink(missing_ok=True)
    return None


def save(path: Path, arrays: dict) -> None:
    with atomic_open(path) as f:
        np.savez(f, __sha256__=np.array(_digest(arrays)), __entry__=np.array(Path(path).stem), **arrays)


# how long a process waits for another that computes the same entry before it computes the entry itself (a lock
# holder that dies releases its lock at once, so this bounds only a live computation that is slower than this)
LOCK_WAIT_S = 3600.0


@contextlib.contextmanager
def computing(path: Path, wait_s: float | None = None):
    """Hold an exclusive advisory lock on the entry ``path`` while the block computes it: a second process that
    misses the same entry waits here, then finds it on disk. Locks live in ``CACHE_DIR/.locks`` (empty files) and
    are released when the block ends or the process dies. Where the platform has no ``fcntl`` (Windows), or the
    wait exceeds ``wait_s`` (default :data:`LOCK_WAIT_S`), the block runs unlocked: the entry is then possibly
    computed twice, never damaged (every write is atomic)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    lock = CACHE_DIR / ".locks" / (Path(path).parent.name + "-" + Path(path).name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + (LOCK_WAIT_S if wait_s is None else wait_s)
    with open(lock, "a") as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    warnings.warn(f"waited past the limit for another process computing {path}; computing it here")
                    yield
                    return
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached(kind: str, key: dict, compute) -> dict:
    """Return ``compute()`` (a dict of arrays), from the cache when the same key was computed before (by this
    process or another: see :func:`computing`)."""
    path = path_for(kind, key)
    hit = load(path)
    if hit is not None:
        return hit
    with computing(path):
        hit = load(path)  # computed by another process while this one waited
        if hit is not None:
            return hit
        with costs.step(kind):
            arrays = {k: np.asarray(v) for k, v in compute().items()}
        save(path, arrays)
    return arrays


__all__ = ["cached", "computing", "key_hash", "path_for", "load", "save", "file_fingerprint"]
