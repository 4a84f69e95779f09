"""The grades folder and what it keeps (:mod:`jtc_utils.book.classroom.grade`): the class as handed in, read without
following a link; each student's rows as the student finishes, under a digest of what was handed in and of the book,
so that an interrupted grading resumes; the folder made or refused, and cleared of what a killed grader left.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from jtc_utils.book.classroom import intake
from jtc_utils.book.classroom.report import LOOSE, Row
from jtc_utils.core.infra.paths import BOOK_DIR, ROOT, atomic_write_text


def safe_name(name: str) -> str:
    """A folder name for a student: the name itself where it is plain (letters, digits, '-', '_', '.', not
    starting with '.'), else those characters kept and the rest replaced, with a digest of the name."""
    plain = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)[:40]
    if plain == name and not name.startswith("."):
        return name
    return f"{plain.lstrip('.')}-{hashlib.sha256(name.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"


MARKER = ".grading.json"  # in a grades folder: written by this grader (what it graded), so a regrade may replace it
KEPT = ".graded"  # in a grades folder: each student's rows as they finish, so an interrupted class resumes
REFERENCES = ".references"  # in a grades folder: each page's reference numbers, under the book they came from


def class_as_handed_in(submissions: Path) -> tuple[list[Row], dict[str, list[Path]]]:
    """The class as handed in: each entry of ``submissions`` read without following a link. A student is a real
    folder (a link or any other kind of entry is a row of its own); a student's notebooks are the entries of that
    folder that are not hidden (a link, a pipe or a device among them is that student's row, never read). Returns
    the rows already decided and the files to grade, by student, in a total order."""
    rows, work = [], {}
    for entry in sorted(os.scandir(submissions), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            try:
                with os.scandir(entry.path) as inside:
                    mine = sorted((Path(e.path) for e in inside if not e.name.startswith(".")), key=lambda p: p.name)
            except OSError as e:
                rows.append(Row(entry.name, "", "", "error", f"the student's folder cannot be read ({e.strerror})"))
                continue
            mine = [p for p in mine if not (p.is_dir() and not p.is_symlink())]  # a student's data folders
            if not mine:
                rows.append(Row(entry.name, "", "", "error", "no notebook in this student's folder"))
            work[entry.name] = mine
        elif entry.is_symlink():
            rows.append(
                Row(entry.name, "", "", "error", "a link, not a student's folder: put the notebooks in a folder")
            )
        else:
            why = intake.refusal(Path(entry.path))
            rows.append(
                Row(
                    LOOSE,
                    entry.name,
                    "",
                    "error",
                    "a file beside the student folders, graded for nobody: put it in its "
                    "student's folder (submissions/<student>/<page>.ipynb)"
                    if why is None
                    else f"beside the student folders, graded for nobody: {why}",
                )
            )
    return rows, work


def handed_in(paths: list[Path]) -> dict[str, str]:
    """What a student handed in, to know a resumed grading's earlier rows still apply: each regular file's
    digest, and for anything else what it is (never followed)."""
    out = {}
    for p in paths:
        why = intake.refusal(p)
        if why:
            out[p.name] = why
            continue
        try:
            out[p.name] = hashlib.sha256(intake.read_bytes(p, intake.NOTEBOOK_BYTES)).hexdigest()
        except intake.Refused as e:
            out[p.name] = str(e)
    return out


def book_identity(reference: Path) -> str:
    """The book a grading's references come from: the page sources, the package and the figures' numbers."""
    h = hashlib.sha256()
    for folder, pattern in ((Path(reference), "*.py"), (ROOT / "jtc_utils", "**/*.py"), (BOOK_DIR / "data", "*.json")):
        for f in sorted(folder.glob(pattern)):
            h.update(f"{f.relative_to(folder)}\0".encode() + f.read_bytes())
    return h.hexdigest()


def prepare_out(out: Path) -> None:
    """Make ``out`` a grades folder: a new or empty folder, or one this grader wrote (:data:`MARKER`), which is
    then graded again in place (each student's kept rows reused where the submission is unchanged; everything
    else written anew and nothing of another class left). A folder with other files is refused. What a grader
    killed outright left is cleared: its working copies and any process still running in them."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"the grades folder {out} is a file: choose a folder (--out)")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ValueError(
            f"the grades folder {out} holds files this grader did not write: choose a new or empty folder (--out)"
        )
    out.mkdir(parents=True, exist_ok=True)
    left = [p for p in out.iterdir() if p.name.startswith(".grade-")]
    if left:
        stop_runs_in(left)
        for p in left:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
    atomic_write_text(out / MARKER, json.dumps({"written by": "jtc_utils.book.classroom.grade"}) + "\n")


def stop_runs_in(folders: list[Path]) -> None:
    """Kill every process whose working folder or command line lies in ``folders`` (the runs of a grader that was
    killed outright, where the system left them running)."""
    import signal

    roots = [str(p.resolve()) for p in folders]
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if any(r in cmd or cwd == r or cwd.startswith(r + os.sep) for r in roots):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


def kept_path(out: Path, student: str) -> Path:
    return out / KEPT / f"{hashlib.sha256(student.encode('utf-8', 'surrogateescape')).hexdigest()[:24]}.json"


def kept_rows(out: Path, student: str, handed_in: dict, book: str) -> list[Row] | None:
    """The rows kept for ``student`` by an earlier run of this grading, if the same files were graded against the
    same book; else None."""
    f = kept_path(out, student)
    if not f.is_file():
        return None
    try:
        got = intake.read_json(f)
        if got.get("student") != student or got.get("handed in") != handed_in or got.get("book") != book:
            return None
        return [Row(**r) for r in got["rows"]]
    except (intake.Refused, TypeError, KeyError, AttributeError):
        return None


def keep_rows(out: Path, student: str, handed_in: dict, book: str, rows: list[Row]) -> None:
    from dataclasses import asdict

    record = {"student": student, "handed in": handed_in, "book": book, "rows": [asdict(r) for r in rows]}
    atomic_write_text(kept_path(out, student), json.dumps(record, ensure_ascii=False))
