"""Where things live, resolved from the package location so that notebooks, papermill, nbval and the
command line agree whatever their working directory; and the one helper that writes files atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZOO_DIR = ROOT / "zoo"
BOOK_DIR = ROOT / "book"
DATA_DIR = BOOK_DIR / "data"
NOTEBOOKS_DIR = ROOT / "notebooks"
CACHE_DIR = Path(os.environ.get("JTC_CACHE", ROOT / ".cache"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, then rename: readers never see a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
