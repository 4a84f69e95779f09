"""What reaches the grader from outside the book, read with bounds: a submission as handed in, and what a graded run
hands back (its recorded answers, its errors, its executed notebook). A file is read only if it is a regular file
(never through a link, never a FIFO or a device), up to a size; JSON is parsed only up to a nesting depth; an
answer is decoded only from the forms the recorder writes. Anything else is :class:`Refused`, with a reason that
names what was handed in and never what a link pointed at, and becomes that student's row.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

MB = 1 << 20
NOTEBOOK_BYTES = 32 * MB  # a submitted notebook, and a run's executed notebook (figures' images included)
RECORD_BYTES = 16 * MB  # a run's recorded answers, and its errors
FOLDER_BYTES = 256 * MB  # a student's other files, copied into the run's working folder
MAX_DEPTH = 64  # nesting of JSON arrays and objects (a notebook is about 8 deep; an answer a few more)


class Refused(ValueError):
    """A file or value the grader does not read; the message says why, for the student's row."""


def kind(st: os.stat_result) -> str:
    """What a non-regular file is, in words."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def refusal(path: Path) -> str | None:
    """Why ``path`` (not followed if a link) is not a file the grader reads, or None for a regular file."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if stat.S_ISREG(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        return "a link, not a notebook: submit the file itself"
    return f"{kind(st)}, not a notebook: submit the notebook file itself"


def read_bytes(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them: opened without following a link and
    without blocking (a FIFO is refused, never waited on), its type checked on the open file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        why = refusal(Path(path))
        raise Refused(why or f"cannot be read ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{kind(st)}, not a file")
        if st.st_size > limit:
            raise Refused(f"larger than {limit // MB} MB")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise Refused(f"larger than {limit // MB} MB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def depth(text: str) -> int:
    """The deepest nesting of JSON arrays and objects in ``text`` (brackets inside strings not counted)."""
    deepest = level = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            level += 1
            deepest = max(deepest, level)
        elif ch in "]}":
            level -= 1
    return deepest


def loads(text: str, max_depth: int = MAX_DEPTH):
    """``json.loads`` of ``text`` if it nests at most ``max_depth`` deep; else, or if it is not JSON,
    :class:`Refused`."""
    if depth(text) > max_depth:
        raise Refused(f"nested more than {max_depth} deep")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise Refused(f"not JSON ({type(e).__name__}: {str(e)[:120]})") from None


def read_json(path: Path, limit: int = RECORD_BYTES):
    """The JSON value in the regular file ``path`` (:func:`read_bytes`, :func:`loads`)."""
    return loads(read_bytes(path, limit).decode("utf-8", errors="replace"))


def read_notebook(path: Path, limit: int = NOTEBOOK_BYTES):
    """The notebook in the regular file ``path`` as nbformat 4, read with the bounds above."""
    import nbformat

    text = read_bytes(path, limit).decode("utf-8", errors="replace")
    loads(text)  # the bounds, before nbformat parses it
    try:
        return nbformat.reads(text, as_version=4)
    except Exception as e:  # noqa: BLE001 - whatever nbformat makes of it, it is this file's problem
        raise Refused(f"not a notebook ({type(e).__name__}: {str(e)[:160]})") from None


def jsonl(path: Path, limit: int = RECORD_BYTES) -> list:
    """The JSON values of the lines of ``path`` (a run's recorded answers); a line that is not JSON within the
    bounds is left out. A missing file is no lines."""
    if not os.path.lexists(path):
        return []
    out = []
    for line in read_bytes(path, limit).decode("utf-8", errors="replace").splitlines():
        try:
            out.append(loads(line))
        except Refused:
            continue
    return out


def copy_folder(source: Path, target: Path, limit: int = FOLDER_BYTES, skip=lambda name: False) -> list[str]:
    """Copy the regular files and folders under ``source`` into ``target`` (created), at most ``limit`` bytes in
    all; links, pipes, devices and sockets are not copied and not followed, nor are the names ``skip`` refuses.
    Returns what was left out, in words."""
    left = []
    budget = [limit]

    def walk(src: Path, dst: Path) -> None:
        dst.mkdir(parents=True, exist_ok=True)
        with os.scandir(src) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if skip(entry.name):
                    continue
                rel = Path(entry.path).relative_to(source)
                if entry.is_dir(follow_symlinks=False):
                    walk(Path(entry.path), dst / entry.name)
                elif entry.is_file(follow_symlinks=False):
                    try:
                        data = read_bytes(Path(entry.path), budget[0])
                    except Refused as e:
                        left.append(f"{rel}: {e}")
                        continue
                    budget[0] -= len(data)
                    (dst / entry.name).write_bytes(data)
                else:
                    left.append(f"{rel}: {kind(entry.stat(follow_symlinks=False))}, not copied")

    walk(Path(source), Path(target))
    return left
