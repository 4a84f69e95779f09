"""Grade a class (``make grade SUBMISSIONS=folder``): one folder per student, each notebook named as the book's page.

    python -m jtc_utils.book.classroom.grade SUBMISSIONS [--out grades] [--timeout 1200] [--cell-timeout 120]
        [--reference DIR] [--reference-timeout 14400] [--memory-gb 16] [--disk-gb 4] [--no-sandbox]

The references come first, from the book's own pages with its solutions (:func:`reference_numbers`); each
submission's answer cells go into the student edition of the page (:mod:`jtc_utils.book.classroom.grading_run`),
which runs in a sandbox of its own (:mod:`jtc_utils.book.classroom.sandbox`); each recorded answer is judged in this
process with the book's check. Written: ``grades.csv``, ``grades.html`` and ``feedback/<student>/<page>.ipynb``. The
README's "Teaching from the book" says what a submission can and cannot reach.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jtc_utils.book.build import runner
from jtc_utils.book.classroom import grading_run, intake, sandbox
from jtc_utils.book.classroom.folder import (
    KEPT,
    REFERENCES,
    book_identity,
    class_as_handed_in,
    handed_in,
    keep_rows,
    kept_path,
    kept_rows,
    prepare_out,
    safe_name,
)
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


class ReferenceFailed(ValueError):
    """The book's own page, run with its solutions, did not finish: grading stops rather than judge with less."""


REFERENCE_TIMEOUT = 4 * 3600  # the book's page with its solutions, on a cold cache: section 6 takes about half an hour


def reference_numbers(
    page: str, reference_nb, out: Path, timeout: int, cell_timeout: int, reference: Path = NOTEBOOKS_DIR
) -> dict:
    """The numbers each check of ``page`` compares with, from a run of the book's page with the book's solutions
    in it and no submission, made in the grader's own folder: ``{label: {figure or data name: value, SOLUTION: the
    book's answer}}``. A figure that run does not compute is read from ``book/data`` here, before any submission
    runs, so that judging reads nothing a submission could have written. A run that is stopped (``timeout``) or
    whose cells fail raises :class:`ReferenceFailed`: the checks would otherwise lack the book's answers."""
    private = Path(tempfile.mkdtemp(prefix=f".grade-reference-{page}-", dir=out))
    try:
        where = grading_run.folders(private)
        where["work"].mkdir(parents=True)
        nb, labels = graded_notebook(
            reference_nb,
            solutions(page, reference),
            setup_source(where["results"], where["work"], [], [], guard=False),
            with_data=True,
        )
        run = grading_run.run(nb, private, where["work"], timeout, cell_timeout)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    if run["killed"] or run["failed"]:
        why = run["killed"] or "; ".join(f"cell {i}: {e}" for i, e in sorted(run["failed"].items()))[:500]
        raise ReferenceFailed(
            f"the book's page {page} with its own solutions did not finish ({why}), so its checks would lack the "
            f"book's answers: nothing was graded. Give it more time (--reference-timeout, now {timeout} s) or mend "
            "the page (make book)"
        )
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


@dataclass(frozen=True)
class Job:
    """What every graded run of one grading shares: where it writes (``out``), the book's sources
    (``reference``), the limits, the folders hidden from a run, the sandbox, threads per run and the stop event."""

    out: Path
    reference: Path = NOTEBOOKS_DIR
    timeout: int = 1200
    cell_timeout: int = 120
    hidden: tuple = ()
    box: Box | None = None
    threads: int | None = None
    stop: object = None


def grade_one(student: str, path: Path, numbers: dict, job: Job) -> list[Row]:
    """Grade one submitted notebook against its page's :func:`reference_numbers`; every failure becomes rows, never
    an exception. ``path`` is read only if it is a regular file, with bounds (:mod:`intake`)."""
    page = path.stem
    refused = intake.refusal(path)
    if refused:
        return [Row(student, path.name, "", "error", refused)]
    if path.suffix != ".ipynb":
        return [Row(student, path.name, "", "error", "not a notebook (a submission is a .ipynb file)")]
    try:
        submission = intake.read_notebook(path)
    except intake.Refused as e:  # any unreadable file is that submission's problem only
        return [Row(student, page, "", "error", f"not a notebook: {e}")]
    try:
        reference_nb = reference_page(page, job.reference)
    except ValueError as e:
        return [Row(student, page, "", "error", str(e))]
    private = Path(tempfile.mkdtemp(prefix=f".grade-{safe_name(student)}-{page}-", dir=job.out))
    try:
        return _grade_in(student, page, path, submission, reference_nb, numbers, private, job)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _grade_in(student, page, path, submission, reference_nb, numbers, private, job: Job) -> list[Row]:
    where = grading_run.folders(private)
    workdir = where["work"]
    left = intake.copy_folder(
        path.parent, workdir, job.box.disk_bytes // 2 if job.box else intake.FOLDER_BYTES, _not_copied
    )
    nb, labels = graded_notebook(
        reference_nb,
        submission,
        setup_source(where["results"], workdir, [where["run"], Path("/tmp")], [*job.hidden, private]),
    )
    answer_index = {c.metadata["exercise"]: i for i, c in enumerate(nb.cells) if c.metadata.get("grading") == "answer"}
    run = grading_run.run(
        nb, private, workdir, job.timeout, job.cell_timeout, job.box, list(job.hidden), job.threads, job.stop
    )
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
            try:
                answer = decode(recorded[label].get("answer"))
            except ValueError as e:
                rows.append(Row(student, page, label, "error", f"the recorded answer cannot be read: {e}"))
                continue
            # the numbers the check compares with: the reference run's (never the submission's kernel's)
            ok, message = _judge(label, answer, numbers.get(label))
            if ok is None:
                rows.append(Row(student, page, label, "error", message))
            else:
                if label not in answers and not ok:
                    message = "no answer cell for this exercise in the submission"
                rows.append(Row(student, page, label, "✓" if ok else "✗", message))
    if killed and not rows:
        rows.append(Row(student, page, "", "error", killed))
    left = [what for what in left if os.sep in what.split(":")[0]]  # the folder's own files have rows of their own
    if left:
        rows.append(Row(student, page, "", "error", "not copied into the run: " + "; ".join(left)[:500]))
    feedback = job.out / "feedback" / safe_name(student) / f"{page}.ipynb"
    if run["executed"] is not None:
        paths = {
            str(workdir): ".",
            str(private): "<grading>",
            str(job.out): "<grades>",
            str(ROOT): "<book>",
            str(path.parent.parent): "<submissions>",
            os.path.realpath(workdir): ".",
            os.path.realpath(ROOT): "<book>",
            sys.prefix: "<python>",
            sys.base_prefix: "<python>",
            str(Path.home()): "~",
        }
        try:
            executed = intake.read_notebook(run["executed"])
        except intake.Refused:  # the run's own file, which a submission can spoil: then no feedback, never a crash
            return rows
        feedback.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(feedback, feedback_notebook(executed, rows, paths))
    return rows


def _not_copied(name: str) -> bool:
    """What of a student's folder stays out of the run's working copy: notebooks (the graded one goes in through
    its answer cells) and hidden files."""
    return name.endswith(".ipynb") or name.startswith(".")


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


def _references(pages: list[str], job: Job, book: str, show: bool) -> dict:
    """Every page's reference numbers (:func:`reference_numbers`), kept in the grades folder under the book they
    came from, so that a resumed grading does not run them again."""
    from tqdm.auto import tqdm

    numbers = {}
    for page in tqdm(pages, desc="references", unit="page", disable=not show):
        kept = job.out / REFERENCES / f"{page}.json"
        if kept.is_file():
            try:
                got = intake.read_json(kept, 256 * intake.MB)
                if got.get("book") == book:
                    numbers[page] = {k: decode(v) for k, v in got["numbers"].items()}
                    continue
            except (intake.Refused, ValueError, KeyError, AttributeError):
                pass
        try:
            nb = reference_page(page, job.reference)
        except ValueError:
            numbers[page] = {}  # not a page of the book: grade_one says so
            continue
        numbers[page] = reference_numbers(page, nb, job.out, job.timeout, job.cell_timeout, job.reference)
        atomic_write_text(kept, json.dumps({"book": book, "numbers": {k: encode(v) for k, v in numbers[page].items()}}))
    return numbers


def grade(
    submissions: Path,
    out: Path,
    reference: Path = NOTEBOOKS_DIR,
    timeout: int = 1200,
    cell_timeout: int = 120,
    progress: bool | None = None,
    box: Box | None = None,
    jobs: int = 1,
    reference_timeout: int = REFERENCE_TIMEOUT,
) -> list[Row]:
    """Grade every student's notebooks under ``submissions`` (one folder per student) into ``out``: the references
    of every page handed in first (each within ``reference_timeout``; one that does not finish stops grading,
    :class:`ReferenceFailed`), then each submission in ``box`` (default: :func:`choose_box`), ``jobs`` students at a
    time (each run then single-threaded). Each student's rows are kept as the student finishes, so that the same
    command after an interruption grades only the rest."""
    submissions, out, reference = Path(submissions).resolve(), Path(out).resolve(), Path(reference).resolve()
    if not submissions.is_dir():
        raise ValueError(f"{submissions} is not a folder: give the folder that holds one folder per student")
    for inside, what in ((BOOK_DIR, "the book"), (ROOT / "zoo", "the zoo"), (submissions, "the submissions")):
        if out == inside.resolve() or out.is_relative_to(inside.resolve()):
            raise ValueError(f"the grades folder {out} is inside {what}: choose a folder elsewhere (--out)")
    rows, by_student = class_as_handed_in(submissions)
    if not by_student and not rows:
        raise ValueError(f"{submissions} is empty: put each student's notebooks in a folder named for the student")
    box = box or choose_box()
    prepare_out(out)
    show = show_progress() if progress is None else progress
    book = book_identity(reference)
    pages = sorted({f.stem for files in by_student.values() for f in files if f.suffix == ".ipynb"})
    ref_job = Job(out, reference, reference_timeout, cell_timeout)
    numbers = _references(pages, ref_job, book, show)  # every page's, before any submission runs
    job = Job(out, reference, timeout, cell_timeout, (*SOLUTIONS, reference, submissions, out), box)
    rows += _grade_students(by_student, numbers, job, book, jobs, show)
    graded = {safe_name(s) for s in by_student}
    if (out / "feedback").is_dir():  # nothing of an earlier class or of a page no longer handed in
        for folder in (out / "feedback").iterdir():
            if folder.name not in graded:
                shutil.rmtree(folder, ignore_errors=True)
            else:
                pages_of = {r.page for r in rows if safe_name(r.student) == folder.name}
                for f in folder.iterdir():
                    if f.stem not in pages_of:
                        f.unlink(missing_ok=True)
    kept_now = {kept_path(out, s).name for s in by_student}
    for f in (out / KEPT).glob("*.json") if (out / KEPT).is_dir() else ():
        if f.name not in kept_now:
            f.unlink(missing_ok=True)
    rows.sort(key=lambda r: (r.student == LOOSE, r.student))  # by student (stable: each student's in order)
    write_tables(rows, out, box)
    return rows


def _grade_students(by_student: dict[str, list[Path]], numbers, job: Job, book: str, jobs: int, show: bool):
    """Every student's notebooks, ``jobs`` students at a time, a progress bar each; rows in the students' order.
    A student whose files were graded before against the same book keeps those rows; each other student's rows
    are kept as soon as the student is done. Ctrl-C stops every run in flight (each within a second) before it
    goes on."""
    import queue
    import threading
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    from tqdm.auto import tqdm

    stop, slots = threading.Event(), queue.Queue()
    for i in range(max(1, jobs)):
        slots.put(i)
    job = replace(job, threads=1 if jobs > 1 else None, stop=stop)

    def one(student: str, mine: list[Path]) -> list[Row]:
        files = handed_in(mine)
        kept = kept_rows(job.out, student, files, book)
        if kept is not None:
            return kept
        slot = slots.get()
        try:
            rows = []
            with tqdm(
                total=len(mine), desc=student, unit="notebook", position=slot, leave=True, disable=not show or not mine
            ) as bar:
                for path in mine:
                    if stop.is_set():
                        return rows
                    rows.extend(grade_one(student, path, numbers.get(path.stem, {}), job))
                    bar.update()
            if not stop.is_set():
                keep_rows(job.out, student, files, book, rows)
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
    ap.add_argument(
        "--reference-timeout",
        type=int,
        default=REFERENCE_TIMEOUT,
        help=f"seconds for the book's own run of a page, with its solutions (default {REFERENCE_TIMEOUT}); one that "
        "does not finish stops grading",
    )
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
            f"interrupted: grades.csv and grades.html were not written; the students graded so far are kept in "
            f"{args.out}: run the same command again to grade the rest (make grade SUBMISSIONS={args.submissions})"
        ):
            rows = grade(
                args.submissions,
                args.out,
                args.reference,
                args.timeout,
                args.cell_timeout,
                box=box,
                jobs=args.jobs,
                reference_timeout=args.reference_timeout,
            )
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    if not box.isolated:
        print("warning: the submissions ran without a sandbox (--no-sandbox); the grades say so")
    for student, (passed, n) in totals(rows).items():
        why = next((r.message for r in rows if r.student == student), "") if n == 0 else ""
        print(f"{student}: {passed} of {n}" + (f"  ({why})" if why else ""))
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
