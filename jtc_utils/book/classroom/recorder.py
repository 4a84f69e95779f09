"""What runs inside a graded notebook's kernel (:mod:`jtc_utils.book.classroom.grade`): the recorder that writes each
answer, as plain JSON and nothing else, to a file opened before the submission's code runs, and the audit hook that
makes an honest mistake (a write outside the working copy, a read of the solutions, a process started) a clear error.
The hook is no boundary: the sandbox is (:mod:`jtc_utils.book.classroom.sandbox`)."""

from __future__ import annotations

import json
import os
import sys

from jtc_utils.core.infra.paths import BOOK_DIR, CACHE_DIR, ROOT


def encode(value):
    """``value`` as plain JSON (numbers, strings, lists, dicts, arrays as lists), so that the grader never unpickles
    what a submission made. Raises TypeError for anything else."""
    import numbers

    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars, torch tensors
        return encode(value.tolist())
    if isinstance(value, (list, tuple)):
        return {"__tuple__": [encode(v) for v in value]} if isinstance(value, tuple) else [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode(v) for v in sorted(value, key=repr)]}
    if hasattr(value, "to_dict") and callable(value.to_dict):  # pandas
        return encode(value.to_dict())
    if isinstance(value, dict):
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(
        f"an answer of type {type(value).__name__} cannot be graded: give a number, a string, a list, "
        "a tuple, a set or a dict of those"
    )


def decode(value):
    """The inverse of :func:`encode` (lists stay lists), for the forms it writes only: anything else (a value a run
    could have written in their place) is a ValueError, never a crash. Members of a set and keys of a dict are made
    hashable as :func:`encode` found them (lists as tuples, sets as frozen sets)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict) and len(value) == 1:
        ((tag, inner),) = value.items()
        if tag in ("__tuple__", "__set__", "__dict__") and isinstance(inner, list):
            if tag == "__tuple__":
                return tuple(decode(v) for v in inner)
            if tag == "__set__":
                return {_hashable(decode(v)) for v in inner}
            if all(isinstance(kv, list) and len(kv) == 2 for kv in inner):
                return {_hashable(decode(k)): decode(v) for k, v in inner}
    raise ValueError(f"not an answer the recorder writes ({type(value).__name__})")


def _hashable(key):
    if isinstance(key, (list, tuple)):
        return tuple(_hashable(k) for k in key)
    if isinstance(key, (set, frozenset)):
        return frozenset(_hashable(k) for k in key)
    if isinstance(key, dict):
        raise ValueError("a dict cannot be a member of a set or a key of a dict")
    return key


class Recorder:
    """What the graded notebook's first cell installs in the kernel: records each exercise's answer on a file
    opened before the submission's code runs, and (for a submission) guards the file system (see the module's
    text)."""

    def __init__(self, results: str, workdir: str, writable: list[str], unreadable: list[str]):
        self._out = open(results, "a", encoding="utf-8")  # noqa: SIM115 -- kept open for the kernel's life
        self.workdir = os.path.realpath(workdir)
        self.project, self.cache = os.path.realpath(ROOT), os.path.realpath(CACHE_DIR)
        self.book = os.path.realpath(BOOK_DIR)
        self.writable = [os.path.realpath(p) for p in writable] + [self.workdir]
        self.unreadable = [os.path.realpath(p) for p in unreadable]
        self.results = os.path.realpath(results)

    def snapshot(self) -> None:
        """Record the numbers of every figure the page has computed so far (``$JTC_DATA_OUT``), before any of the
        submission's code runs: the checks compare the answers with these, as a student's own run does."""
        figures = {}
        folder = os.environ.get("JTC_DATA_OUT")
        if folder and os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.endswith(".json"):
                    with open(os.path.join(folder, name), encoding="utf-8") as f:
                        figures[name[:-5]] = json.load(f)["data"]
        self._out.write(json.dumps({"figures": figures}) + "\n")
        self._out.flush()

    def record(self, label: str, answer, data=None) -> None:
        try:
            line = {"exercise": label, "answer": encode(answer), "data": encode(data) if data is not None else None}
        except TypeError as e:
            line = {"exercise": label, "error": str(e)}
        self._out.write(json.dumps(line) + "\n")
        self._out.flush()
        print(f"{label}: answer recorded for grading")

    # the audit hook ------------------------------------------------------------------------------------------
    def _inside(self, path: str, roots) -> bool:
        return any(path == r or path.startswith(r + os.sep) for r in roots)

    def _may_change(self, path: str) -> bool:
        if self._inside(path, [self.workdir]):
            return True
        if self._inside(path, [self.project]) and not self._inside(path, [self.cache]):
            return False  # the book, the zoo, the sources: also where the project lies under a writable folder
        return self._inside(path, self.writable) and not self._inside(path, self.unreadable)

    def _refuse(self, what: str, path: str):
        raise PermissionError(f"grading: {what} is not allowed while a submission is graded ({path})")

    def hook(self, event: str, args) -> None:
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int):
                return
            path = os.path.realpath(os.fsdecode(path))
            writes = (mode is not None and any(c in str(mode) for c in "wax+")) or (
                mode is None
                and isinstance(flags, int)
                and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC)
            )
            if path == self.results:
                self._refuse("opening the grader's record", path)
            if writes and not (self._may_change(path) or path.startswith("/dev/")):
                self._refuse("writing outside the submission's folder", path)
            if self._inside(path, self.unreadable) and not self._inside(path, [self.workdir]):
                self._refuse("reading the book's solutions, the grades or other submissions", path)
            if path.endswith(".ipynb") and self._inside(path, [self.book]):
                self._refuse("reading the book's executed pages", path)
        elif event in (
            "os.remove",
            "os.rmdir",
            "os.mkdir",
            "os.rename",
            "os.truncate",
            "os.chmod",
            "os.symlink",
            "os.link",
            "shutil.rmtree",
            "os.utime",
            "os.chown",
        ):
            for p in args[:2] if event in ("os.rename", "os.symlink", "os.link") else args[:1]:
                if isinstance(p, (str, bytes, os.PathLike)):
                    p = os.path.realpath(os.fsdecode(p))
                    if not self._may_change(p):
                        self._refuse("changing files outside the submission's folder", p)
        elif event in (
            "subprocess.Popen",
            "os.system",
            "os.exec",
            "os.posix_spawn",
            "os.spawn",
            "os.fork",
            "os.forkpty",
            "pty.spawn",
        ):
            self._refuse("starting a process", event)


def install(results: str, workdir: str, writable: list[str], unreadable: list[str], guard: bool = True) -> Recorder:
    """Called by the graded notebook's first cell: the recorder, with its audit hook installed for good (``guard``;
    the reference run, which runs only the book's code, has none)."""
    rec = Recorder(results, workdir, writable, unreadable)
    if guard:
        sys.addaudithook(rec.hook)
    return rec
