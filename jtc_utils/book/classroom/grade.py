"""Grade a class (``make grade SUBMISSIONS=folder``): one folder per student, each notebook named as the book's page.

    python -m jtc_utils.book.classroom.grade SUBMISSIONS [--out grades] [--timeout 1200] [--cell-timeout 120]
        [--reference DIR] [--memory-gb 16] [--disk-gb 4] [--no-sandbox]

The references come first, from the book's own pages with its solutions (:func:`reference_numbers`); each
submission's answer cells go into the student edition of the page (:mod:`jtc_utils.book.classroom.grading_run`),
which runs in a sandbox of its own (:mod:`jtc_utils.book.classroom.sandbox`); each recorded answer is judged in this
process with the book's check. Written: ``grades.csv``, ``grades.html`` and ``feedback/<student>/<page>.ipynb``. The
README's "Teaching from the book" says what a submission can and cannot reach.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from jtc_utils.book.build import runner
from jtc_utils.book.classroom import grading_run, sandbox
from jtc_utils.book.classroom.report import LOOSE, Row, feedback_notebook, totals, write_tables
from jtc_utils.book.classroom.grading_run import (
    UNSANDBOXED,
    Box,
    GB,
    answer_cells,
    graded_notebook,
    reference_page,
    setup_source,
    solutions,
)
from jtc_utils.book.display import exercises
from jtc_utils.core.infra.paths import BOOK_DIR, NOTEBOOKS_DIR, ROOT, atomic_write_text
from jtc_utils.core.infra.progress import show_progress
from jtc_utils.evidence import figdata
from jtc_utils.evidence.exercises import SOLUTION
from jtc_utils.evidence.registry import get as registered
from jtc_utils.book.classroom.recorder import decode, encode  # noqa: F401 -- the answers' form, part of the grader's contract

SOLUTIONS = (NOTEBOOKS_DIR, ROOT / "tests", ROOT / ".git", BOOK_DIR / "_build")  # never readable while grading


def reference_numbers(
    page: str, reference_nb, out: Path, timeout: int, cell_timeout: int, reference: Path = NOTEBOOKS_DIR
) -> dict:
    """The numbers each check of ``page`` compares with, from a run of the book's page with the book's solutions
    in it and no submission, made in the grader's own folder: ``{label: {figure or data name: value, SOLUTION: the
    book's answer}}``. A figure that run does not compute is read from ``book/data`` here, before any submission
    runs, so that judging reads nothing a submission could have written."""
    private = Path(tempfile.mkdtemp(prefix=f".grade-reference-{page}-", dir=out))
    try:
        workdir = private / "work"
        workdir.mkdir()
        nb, labels = graded_notebook(
            reference_nb,
            solutions(page, reference),
            setup_source(private / "results.jsonl", workdir, [], [], guard=False),
            with_data=True,
        )
        run = grading_run.run(nb, private, workdir, timeout, cell_timeout)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    numbers = {}
    for label in labels:
        figs = registered().exercise_checks.get(label, ((),))[0]
        data = {f: run["figures"][f] for f in figs if f in run["figures"]}
        rec = run["recorded"].get(label, {})
        data.update(decode(rec["data"]) if rec.get("data") is not None else {})
        data.update({f: figdata.load(f)["data"] for f in figs if f not in data and figdata.exists(f)})
        if rec.get("answer") is not None:
            data[SOLUTION] = decode(rec["answer"])
        numbers[label] = data
    return numbers


def grade_one(
    student: str,
    path: Path,
    out: Path,
    reference: Path,
    timeout: int,
    cell_timeout: int,
    hidden: list[Path],
    numbers: dict,
    box: Box,
    threads: int | None = None,
    stop=None,
) -> list[Row]:
    """Grade one submitted notebook against its page's :func:`reference_numbers`; every failure becomes rows, never
    an exception."""
    import nbformat

    page = path.stem
    if path.suffix != ".ipynb":
        return [Row(student, path.name, "", "error", "not a notebook (a submission is a .ipynb file)")]
    try:
        submission = nbformat.read(path, as_version=4)
    except Exception as e:  # any unreadable file is that submission's problem only
        return [Row(student, page, "", "error", f"not a notebook: {type(e).__name__}: {str(e)[:200]}")]
    try:
        reference_nb = reference_page(page, reference)
    except ValueError as e:
        return [Row(student, page, "", "error", str(e))]
    private = Path(tempfile.mkdtemp(prefix=f".grade-{student}-{page}-", dir=out))
    try:
        return _grade_in(
            student,
            page,
            path,
            submission,
            reference_nb,
            numbers,
            private,
            out,
            timeout,
            cell_timeout,
            hidden,
            box,
            threads,
            stop,
        )
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _grade_in(
    student,
    page,
    path,
    submission,
    reference_nb,
    numbers,
    private,
    out,
    timeout,
    cell_timeout,
    hidden,
    box,
    threads,
    stop,
) -> list[Row]:
    import nbformat

    workdir = private / "work"
    shutil.copytree(path.parent, workdir, ignore=shutil.ignore_patterns("*.ipynb", ".*"), symlinks=True)
    nb, labels = graded_notebook(
        reference_nb,
        submission,
        setup_source(private / "results.jsonl", workdir, [private / "cache", Path("/tmp")], [*hidden, private]),
    )
    answer_index = {c.metadata["exercise"]: i for i, c in enumerate(nb.cells) if c.metadata.get("grading") == "answer"}
    run = grading_run.run(nb, private, workdir, timeout, cell_timeout, box, hidden, threads, stop)
    failed, recorded, killed = run["failed"], run["recorded"], run["killed"]
    answers = answer_cells(submission)
    rows = []
    for label in labels:
        if label in answer_index and answer_index[label] in failed:
            rows.append(Row(student, page, label, "error", failed[answer_index[label]]))
        elif label not in recorded:
            rows.append(
                Row(
                    student,
                    page,
                    label,
                    "error",
                    killed or "the notebook stopped before this exercise's check (an earlier cell failed)",
                )
            )
        elif "error" in recorded[label]:
            rows.append(Row(student, page, label, "error", str(recorded[label]["error"])[:500]))
        else:
            # the numbers the check compares with: the reference run's (never the submission's kernel's)
            ok, message = _judge(label, decode(recorded[label].get("answer")), numbers.get(label))
            if ok is None:
                rows.append(Row(student, page, label, "error", message))
            else:
                if label not in answers and not ok:
                    message = "no answer cell for this exercise in the submission"
                rows.append(Row(student, page, label, "✓" if ok else "✗", message))
    if killed and not rows:
        rows.append(Row(student, page, "", "error", killed))
    feedback = out / "feedback" / student / f"{page}.ipynb"
    feedback.parent.mkdir(parents=True, exist_ok=True)
    if run["executed"] is not None:
        paths = {
            str(workdir): ".",
            str(private): "<grading>",
            str(out): "<grades>",
            str(ROOT): "<book>",
            str(path.parent.parent): "<submissions>",
            os.path.realpath(workdir): ".",
            os.path.realpath(ROOT): "<book>",
            sys.prefix: "<python>",
            sys.base_prefix: "<python>",
            str(Path.home()): "~",
        }
        try:
            executed = nbformat.read(run["executed"], as_version=4)
        except Exception:  # the run's own file, which a submission can spoil: then no feedback, never a crash
            return rows
        atomic_write_text(feedback, feedback_notebook(executed, rows, paths))
    return rows


def _judge(label: str, answer, data: dict | None) -> tuple:
    """The book's check of one answer in this process, against the reference run's numbers alone (every figure
    the check reads is among them, so that it reads nothing from disk): (passed, its message), or (None, why) if
    it could not run."""
    import contextlib
    import io

    checks = registered().exercise_checks
    figs = checks[label][0] if label in checks else ()
    missing = [f for f in figs if f not in (data or {})]
    if label not in checks or missing:
        return None, (
            f"the reference run did not compute the numbers of {', '.join(missing)}: the teacher's book "
            "cannot grade this exercise"
            if missing
            else f"no check for exercise {label!r}"
        )
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            ok = exercises.check(label, answer, data=data)
    except Exception as e:  # a check that cannot judge this answer
        return None, f"the check could not run: {type(e).__name__}: {e}"
    return bool(ok), buf.getvalue().strip()


# --- the class --------------------------------------------------------------------------------------------------


def choose_box(isolate: bool = True, memory_gb: float = 16, disk_gb: float = 4) -> Box:
    """How submissions will run: in the sandbox where the machine has one; without one, ``isolate`` False accepts
    the risk (the grades say so), else ValueError with what to install."""
    name = sandbox.available()
    if name is None and isolate:
        raise ValueError(sandbox.INSTALL)
    return Box(name if isolate else UNSANDBOXED, int(memory_gb * GB), int(disk_gb * GB))


def grade(
    submissions: Path,
    out: Path,
    reference: Path = NOTEBOOKS_DIR,
    timeout: int = 1200,
    cell_timeout: int = 120,
    progress: bool | None = None,
    box: Box | None = None,
    jobs: int = 1,
) -> list[Row]:
    """Grade every student's notebooks under ``submissions`` (one folder per student) into ``out``: the references
    of every page handed in first, then each submission in ``box`` (default: :func:`choose_box`), ``jobs``
    students at a time (each run then single-threaded)."""
    from tqdm.auto import tqdm

    submissions, out, reference = Path(submissions).resolve(), Path(out).resolve(), Path(reference).resolve()
    if not submissions.is_dir():
        raise ValueError(f"{submissions} is not a folder: give the folder that holds one folder per student")
    for inside, what in ((BOOK_DIR, "the book"), (ROOT / "zoo", "the zoo"), (submissions, "the submissions")):
        if out == inside.resolve() or out.is_relative_to(inside.resolve()):
            raise ValueError(f"the grades folder {out} is inside {what}: choose a folder elsewhere (--out)")
    students = sorted(p for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    stray = sorted(p.name for p in submissions.iterdir() if p.is_file() and not p.name.startswith("."))
    if not students and not stray:
        raise ValueError(f"{submissions} is empty: put each student's notebooks in a folder named for the student")
    box = box or choose_box()
    out.mkdir(parents=True, exist_ok=True)
    hidden = [*SOLUTIONS, reference, submissions, out]
    work = [(s.name, f) for s in students for f in sorted(s.iterdir()) if f.is_file() and not f.name.startswith(".")]
    # a loose file is graded for nobody (it is no student), an empty folder is a student with nothing handed in
    rows = [
        Row(
            LOOSE,
            name,
            "",
            "error",
            "a file beside the student folders, graded for nobody: put it in its "
            "student's folder (submissions/<student>/<page>.ipynb)",
        )
        for name in stray
    ]
    rows += [
        Row(s.name, "", "", "error", "no notebook in this student's folder")
        for s in students
        if not any(st == s.name for st, _ in work)
    ]
    show = show_progress() if progress is None else progress
    numbers = {}  # page -> the reference run's numbers: every page's, before any submission runs
    pages = sorted({f.stem for _, f in work if f.suffix == ".ipynb"})
    for page in tqdm(pages, desc="references", unit="page", disable=not show):
        try:
            numbers[page] = reference_numbers(
                page, reference_page(page, reference), out, timeout, cell_timeout, reference
            )
        except ValueError:
            numbers[page] = {}  # not a page of the book: grade_one says so
    by_student = {s.name: [f for st, f in work if st == s.name] for s in students}
    rows += _grade_students(by_student, out, reference, timeout, cell_timeout, hidden, numbers, box, jobs, show)
    write_tables(rows, out, box)
    return rows


def _grade_students(
    by_student: dict[str, list[Path]],
    out,
    reference,
    timeout,
    cell_timeout,
    hidden,
    numbers,
    box,
    jobs: int,
    show: bool,
) -> list[Row]:
    """Every student's notebooks, ``jobs`` students at a time, a progress bar each; rows in the students' order.
    Ctrl-C stops every run in flight (each within a second) before it goes on."""
    import queue
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from tqdm.auto import tqdm

    stop, slots = threading.Event(), queue.Queue()
    for i in range(max(1, jobs)):
        slots.put(i)

    def one(student: str, mine: list[Path]) -> list[Row]:
        slot = slots.get()
        try:
            rows = []
            with tqdm(
                total=len(mine), desc=student, unit="notebook", position=slot, leave=True, disable=not show or not mine
            ) as bar:
                for path in mine:
                    if stop.is_set():
                        break
                    rows.extend(
                        grade_one(
                            student,
                            path,
                            out,
                            reference,
                            timeout,
                            cell_timeout,
                            hidden,
                            numbers.get(path.stem, {}),
                            box,
                            threads=1 if jobs > 1 else None,
                            stop=stop,
                        )
                    )
                    bar.update()
            return rows
        finally:
            slots.put(slot)

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = [pool.submit(one, student, mine) for student, mine in by_student.items()]
        return [r for f in futures for r in f.result()]
    except BaseException:
        stop.set()  # the runs in flight kill their sandboxes; the ones not started do not start
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(
        prog="python -m jtc_utils.book.classroom.grade",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("submissions", type=Path, help="one folder per student, each with that student's notebooks")
    ap.add_argument("--out", type=Path, default=Path("grades"), help="where the grades go (default: grades/)")
    ap.add_argument("--reference", type=Path, default=NOTEBOOKS_DIR, help="the book's page sources (py:percent)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds for a whole notebook (default 1200)")
    ap.add_argument("--cell-timeout", type=int, default=120, help="seconds for one answer cell (default 120)")
    ap.add_argument("--memory-gb", type=float, default=16, help="address space of a submission's run (default 16)")
    ap.add_argument("--disk-gb", type=float, default=4, help="what a submission's run may write (default 4)")
    ap.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="students graded at a time, each run single-threaded (default: 2, or 1 on one core)",
    )
    ap.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run the submissions unisolated where no sandbox is installed (the grades say so)",
    )
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        box = choose_box(not args.no_sandbox, args.memory_gb, args.disk_gb)
        with runner.exit_on_interrupt(
            f"interrupted: grades.csv and grades.html were not written; run the same "
            f"command again to grade the class (make grade SUBMISSIONS={args.submissions})"
        ):
            rows = grade(
                args.submissions, args.out, args.reference, args.timeout, args.cell_timeout, box=box, jobs=args.jobs
            )
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    if not box.isolated:
        print("warning: the submissions ran without a sandbox (--no-sandbox); the grades say so")
    for student, (passed, n) in totals(rows).items():
        print(f"{student}: {passed} of {n}" + ("  (no notebook in the folder)" if n == 0 else ""))
    loose = [r.page for r in rows if r.student == LOOSE]
    if loose:
        print(
            f"not graded: {len(loose)} loose file(s) beside the student folders ({', '.join(loose)}); put each in "
            f"its student's folder"
        )
    print(
        f"grades of {len(totals(rows))} students in {args.out}/grades.csv and grades.html "
        f"({time.perf_counter() - t0:.0f} s)"
    )


if __name__ == "__main__":
    main()
