"""A content-addressed on-disk cache for arrays (hidden states, fitted maps, metrics).

The key is a dict of everything the result depends on (model identity, data, seed, code version); its SHA-256
names the file. Files are written to a temporary name and renamed, and carry a checksum of their contents: a
damaged or half-written file is detected on load, deleted and recomputed.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np

from .paths import CACHE_DIR, atomic_open, file_fingerprint

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
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k != "__sha256__"}
            stored = str(z["__sha256__"])
        if stored == _digest(arrays):
            return arrays
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        pass
    path.unlink(missing_ok=True)
    return None


def save(path: Path, arrays: dict) -> None:
    with atomic_open(path) as f:
        np.savez(f, __sha256__=np.array(_digest(arrays)), **arrays)


def cached(kind: str, key: dict, compute) -> dict:
    """Return ``compute()`` (a dict of arrays), from the cache when the same key was computed before."""
    path = path_for(kind, key)
    hit = load(path)
    if hit is not None:
        return hit
    arrays = {k: np.asarray(v) for k, v in compute().items()}
    save(path, arrays)
    return arrays


__all__ = ["cached", "key_hash", "path_for", "load", "save", "file_fingerprint"]
