"""Where things live, resolved from the package location so that notebooks, papermill, nbval and the
command line agree whatever their working directory; and the one helper that writes files atomically."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ZOO_DIR = ROOT / "zoo"
BOOK_DIR = ROOT / "book"
DATA_DIR = BOOK_DIR / "data"
NOTEBOOKS_DIR = ROOT / "notebooks"
CACHE_DIR = Path(os.environ.get("JTC_CACHE", ROOT / ".cache"))


def file_fingerprint(path) -> str:
    """SHA-256 of a file's contents."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_open(path: Path):
    """Open a temporary file beside ``path`` for writing bytes; on success it is renamed to ``path`` (readers never
    see a half-written file), on any error it is removed. The file gets the mode an ordinary ``open`` would give
    (0666 less the umask), not ``mkstemp``'s private 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path) as f:
        f.write(data)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def replace_dir(tmp: Path, target: Path) -> None:
    """Move the finished folder ``tmp`` to ``target``, replacing what was there; the old one is removed only once
    the new one is in place."""
    import shutil

    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)
