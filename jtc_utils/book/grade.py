"""Grade a class: execute every submitted notebook of the student edition headlessly and judge its answers with the
book's own checks (``make grade SUBMISSIONS=folder``). Usage::

    python -m jtc_utils.book.grade SUBMISSIONS [--out grades] [--timeout 1200] [--cell-timeout 120] [--reference DIR]

``SUBMISSIONS`` holds one folder per student with that student's notebooks, named as the book's pages
(``alice/sec5_early_exit.ipynb``). For each notebook the grader

1. rebuilds the page from the book's source (``--reference``, default ``notebooks/``) as the student edition
   (:func:`jtc_utils.book.student.strip`) and puts in it only the submission's **answer cells**, found by the exercise
   label in their metadata. Every other cell is the book's: a submission's edited, added or deleted cells (its check
   cells included) change nothing. Write everything an answer needs in its answer cell;
2. replaces each check cell by a cell that records ``answer``, and only ``answer``, as plain JSON, and executes the
   notebook in its own process with a time limit for the whole notebook and a shorter one for each answer cell, in
   a working copy of the student's folder;
3. judges each recorded answer with :func:`jtc_utils.book.exercises.check` **in the grader's process**, never trusting
   anything the submission printed or bound, against the numbers a student's own run compares with, taken from a
   **reference run** of the page that the grader makes once per page with no submission in it (every answer
   ``None``): the numbers the page passes to each check there, else the figures that run computed before its first
   answer cell, else the book's ``book/data``. Nothing compared with comes from the student's kernel: an answer cell
   that rebinds the page's variables (``check = ...``) changes only its own answer.

One failing, hanging or crashing submission is recorded as such (✓, ✗ or error, with the check's message or the
error) and never stops the others. Written to ``--out``: ``grades.csv`` (UTF-8 with a byte-order mark, so that a
spreadsheet shows ✓ and ✗) and ``grades.html`` (student, page, exercise, result, message; totals per student), and
``feedback/<student>/<page>.ipynb``: the student's executed notebook with the grader's cells removed, each check cell
replaced by the verdict and its hint, and no path of the grading machine. A student folder with no notebook is
reported as such; a loose file beside the student folders is reported and graded for nobody.

While a submission runs, an audit hook (:func:`sys.addaudithook`, which cannot be removed) refuses writes outside its
working copy and the project's cache, reads of the book's solutions (``notebooks/``, the executed pages, the tests),
of other submissions and of the grades, and starting processes. It stops accidents and casual tampering; it is not a
sandbox (code can reach the C library through ``ctypes``): grade untrusted code in a container.
"""

from __future__ import annotations

import argparse
import ast
import csv
import html
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from jtc_utils.book import exercises, papers
from jtc_utils.core.paths import BOOK_DIR, CACHE_DIR, NOTEBOOKS_DIR, ROOT, atomic_write_text
from jtc_utils.core.progress import show_progress
from jtc_utils.evidence.exercises import EXERCISE_CHECKS

from . import runner
from . import student as edition

papers.register()  # every paper's figures, claims and exercise checks, from the one list of the papers

RESULTS = ("✓", "✗", "error")
LOOSE = "(no student)"  # the student column of a file found beside the student folders
KERNEL_NAME = "__jtc_grade__"  # the recorder's name in the submission's kernel
SOLUTIONS = (NOTEBOOKS_DIR, ROOT / "tests", ROOT / ".git", BOOK_DIR / "_build")  # never readable while grading


@dataclass
class Row:
    student: str
    page: str
    exercise: str
    result: str  # one of RESULTS
    message: str


# --- inside the submission's kernel ----------------------------------------------------------------------------

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
    raise TypeError(f"an answer of type {type(value).__name__} cannot be graded: give a number, a string, a list, "
                    "a tuple, a set or a dict of those")


def decode(value):
    """The inverse of :func:`encode` (lists stay lists)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "__tuple__" in value:
            return tuple(decode(v) for v in value["__tuple__"])
        if "__set__" in value:
            return set(decode(v) for v in value["__set__"])
        if "__dict__" in value:
            return {_hashable(decode(k)): decode(v) for k, v in value["__dict__"]}
    return value


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


class Recorder:
    """What the graded notebook's first cell installs in the kernel: records each exercise's answer on a file
    opened before the submission's code runs, and guards the file system (see the module's text)."""

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
                mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT
                                                                     | os.O_APPEND | os.O_TRUNC))
            if path == self.results:
                self._refuse("opening the grader's record", path)
            if writes and not (self._may_change(path) or path.startswith("/dev/")):
                self._refuse("writing outside the submission's folder", path)
            if self._inside(path, self.unreadable) and not self._inside(path, [self.workdir]):
                self._refuse("reading the book's solutions, the grades or other submissions", path)
            if path.endswith(".ipynb") and self._inside(path, [self.book]):
                self._refuse("reading the book's executed pages", path)
        elif event in ("os.remove", "os.rmdir", "os.mkdir", "os.rename", "os.truncate", "os.chmod", "os.symlink",
                       "os.link", "shutil.rmtree", "os.utime", "os.chown"):
            for p in args[:2] if event in ("os.rename", "os.symlink", "os.link") else args[:1]:
                if isinstance(p, (str, bytes, os.PathLike)):
                    p = os.path.realpath(os.fsdecode(p))
                    if not self._may_change(p):
                        self._refuse("changing files outside the submission's folder", p)
        elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                       "os.forkpty", "pty.spawn"):
            self._refuse("starting a process", event)


def install(results: str, workdir: str, writable: list[str], unreadable: list[str]) -> Recorder:
    """Called by the graded notebook's first cell: the recorder, with its audit hook installed for good."""
    rec = Recorder(results, workdir, writable, unreadable)
    sys.addaudithook(rec.hook)
    return rec


# --- the graded notebook ------------------------------------------------------------------------------------

def check_call(source: str):
    """The ``exercises.check(label, answer, ...)`` call of a check cell: (label, its source segment, the source of
    its ``data=`` argument or None); None when the cell has none."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "exercises" and node.args
            and isinstance(node.args[0], ast.Constant)):
            data = next((ast.get_source_segment(source, k.value) for k in node.keywords if k.arg == "data"), None)
            if data is None and len(node.args) > 2:
                data = ast.get_source_segment(source, node.args[2])
            return node.args[0].value, ast.get_source_segment(source, node), data
    return None


def reference_page(page: str, reference: Path = NOTEBOOKS_DIR):
    """The student edition of ``page`` from the book's source in ``reference``."""
    import jupytext

    source = Path(reference) / f"{page}.py"
    if not source.is_file():
        pages = sorted(p.stem for p in Path(reference).glob("*.py"))
        raise ValueError(f"{page!r} is not a page of the book (pages: {', '.join(pages)}): name each submitted "
                         "notebook as its page")
    return edition.strip(jupytext.read(source))


def answer_cells(nb) -> dict[str, str]:
    """A submission's answer cells by exercise label (the student edition's ``exercise`` metadata)."""
    out = {}
    for cell in nb.cells:
        label = cell.get("metadata", {}).get("exercise")
        if cell.get("cell_type") == "code" and label and "answer" in cell.metadata.get("tags", []):
            out.setdefault(label, cell.source)
    return out


def graded_notebook(reference, submission, setup: str, with_data: bool = False):
    """The notebook to execute: ``reference`` (the student edition) with the submission's answer cells, each check
    cell replaced by a cell that records the answer (``with_data``: and the numbers the page passes to the check,
    for the reference run only), and ``setup`` first. Returns it and the exercises in order."""
    import copy

    import nbformat

    answers = answer_cells(submission)
    nb = copy.deepcopy(reference)
    cells, labels, snapped = [nbformat.v4.new_code_cell(setup, metadata={"tags": ["grading"]})], [], False
    for cell in nb.cells:
        label = cell.metadata.get("exercise")
        if cell.cell_type == "code" and label and "answer" in cell.metadata.get("tags", []):
            if not snapped:  # the figures computed so far, before the submission's first line runs
                cells.append(nbformat.v4.new_code_cell(f"{KERNEL_NAME}.snapshot()", metadata={"tags": ["grading"]}))
                snapped = True
            cells.append(nbformat.v4.new_code_cell("answer = None", metadata={"tags": ["grading"]}))
            cell.source = answers.get(label, "")
            cell.metadata["grading"] = "answer"
        elif cell.cell_type == "code" and label and "check" in cell.metadata.get("tags", []):
            found = check_call(cell.source)
            if found is None:
                raise ValueError(f"the book's check cell of {label!r} has no exercises.check call")
            _, call, data = found
            cell.source = cell.source.replace(
                call, f"{KERNEL_NAME}.record({label!r}, answer" + (f", data={data})" if data and with_data else ")"), 1)
            cell.metadata["grading"] = "record"
            labels.append(label)
        cells.append(cell)
    nb.cells = cells
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    nb.nbformat, nb.nbformat_minor = 4, max(nb.get("nbformat_minor", 5), 5)
    nbformat.validate(nb)
    return nb, labels


def setup_source(results: Path, workdir: Path, unreadable: list[Path]) -> str:
    writable = [CACHE_DIR, Path(tempfile.gettempdir())]
    return (f"from jtc_utils.book import grade as _grade\n"
            f"{KERNEL_NAME} = _grade.install({str(results)!r}, {str(workdir)!r}, {[str(p) for p in writable]!r}, "
            f"{[str(p) for p in unreadable]!r})\n"
            f"del _grade")


# --- executing one submission (a process of its own) ----------------------------------------------------------

def _execute(notebook: Path, executed: Path, errors: Path, cell_timeout: int, workdir: Path) -> None:
    """Run in the child process: execute ``notebook`` with nbclient, errors allowed; the error of every cell that
    raised or ran past its time (answer cells: ``cell_timeout``) goes to ``errors``."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    failed = {}

    def on_error(cell, cell_index, execute_reply):
        c = execute_reply["content"]
        failed[cell_index] = f"{c.get('ename', 'Error')}: {c.get('evalue', '')}".strip()
        atomic_write_text(errors, json.dumps(failed))

    client = NotebookClient(
        nb, kernel_name="python3", allow_errors=True, interrupt_on_timeout=True, timeout=None,
        timeout_func=lambda cell: cell_timeout if cell.metadata.get("grading") == "answer" else None,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"the answer cell ran past its {cell_timeout} s"},
        on_cell_error=on_error, resources={"metadata": {"path": str(workdir)}})
    try:
        client.execute()
    finally:
        atomic_write_text(executed, nbformat.writes(nb))


def _child_env(workdir: Path) -> dict:
    env = dict(os.environ)
    env.update({"HOME": str(workdir), "IPYTHONDIR": str(workdir / ".ipython"), "MPLCONFIGDIR": str(CACHE_DIR / "grading-mpl"),
                "JTC_DATA_OUT": str(workdir / "data"), "JTC_PROGRESS": "0", "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONWARNINGS": "ignore"})
    return env


def _run(nb, private: Path, workdir: Path, timeout: int, cell_timeout: int) -> dict:
    """Execute the graded notebook ``nb`` in a process of its own (its kernel in ``workdir``); what it recorded:
    ``recorded`` (by exercise), ``figures`` (the snapshot before the first answer cell), ``failed`` (cell index:
    error), ``killed`` (why the whole run was stopped, or None) and ``executed`` (the executed notebook's path)."""
    import nbformat

    results, errors = private / "results.jsonl", private / "errors.json"
    notebook, executed = private / "graded.ipynb", private / "executed.ipynb"
    atomic_write_text(notebook, nbformat.writes(nb))
    killed = None
    proc = subprocess.Popen([sys.executable, "-m", "jtc_utils.book.grade", "--_execute", str(notebook), str(executed),
                             str(errors), str(cell_timeout), str(workdir)],
                            cwd=workdir, env=_child_env(workdir), start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        log, _ = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            killed = f"the notebook could not be executed ({log.decode(errors='replace').strip().splitlines()[-1:]})"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the kernel exits with its parent (ipykernel's parent poller)
        proc.communicate()
        killed = f"the notebook ran past its time limit ({timeout} s) and was stopped"
    except BaseException:  # Ctrl-C: the submission's process group goes with the grader
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    failed = {int(k): v for k, v in json.loads(errors.read_text()).items()} if errors.exists() else {}
    recorded, figures = {}, None
    if results.exists():
        for line in results.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
                if "figures" in rec and figures is None:  # the first snapshot, taken before any answer ran
                    figures = rec["figures"]
                else:
                    recorded.setdefault(rec["exercise"], rec)
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return {"recorded": recorded, "figures": figures or {}, "failed": failed, "killed": killed,
            "executed": executed if executed.exists() else None}


def reference_numbers(page: str, reference_nb, out: Path, timeout: int, cell_timeout: int,
                      unreadable: list[Path]) -> dict:
    """The numbers each check of ``page`` compares with, from a run of the page with no submission in it (every
    answer None), made in the grader's own folder: ``{label: {figure or data name: value}}``. A check whose
    numbers that run could not produce gets only the book's (``book/data``), never a student's."""
    import nbformat

    private = Path(tempfile.mkdtemp(prefix=f".grade-reference-{page}-", dir=out))
    try:
        workdir = private / "work"
        workdir.mkdir()
        nb, labels = graded_notebook(reference_nb, nbformat.v4.new_notebook(),
                                     setup_source(private / "results.jsonl", workdir, unreadable + [private]),
                                     with_data=True)
        run = _run(nb, private, workdir, timeout, cell_timeout)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    numbers = {}
    for label in labels:
        data = {f: run["figures"][f] for f in EXERCISE_CHECKS.get(label, ((),))[0] if f in run["figures"]}
        rec = run["recorded"].get(label, {})
        data.update(decode(rec["data"]) if rec.get("data") is not None else {})
        numbers[label] = data
    return numbers


def feedback_notebook(executed, rows: list["Row"], paths: dict[str, str]):
    """What a student gets back: their executed notebook without the grader's cells, each check cell replaced by
    its verdict (✓, ✗ or error) and the check's hint, and every path of the grading machine in ``paths`` (path:
    what to write instead) replaced in the outputs."""
    import nbformat

    verdict = {r.exercise: r for r in rows}
    cells = []
    for cell in executed.cells:
        role = cell.metadata.get("grading")
        if "grading" in cell.metadata.get("tags", []):
            continue  # the recorder's set-up, its snapshot, "answer = None"
        if role == "record":
            label = cell.metadata.get("exercise", "")
            r = verdict.get(label)
            text = (f"**{label}: {r.result}**" + (f" — {r.message}" if r.message else "")) if r else \
                f"**{label}: not graded**"
            cells.append(nbformat.v4.new_markdown_cell(text, metadata={"exercise": label, "grading": "verdict"}))
            continue
        cell.metadata.pop("grading", None)
        cells.append(cell)
    executed.cells = cells
    text = nbformat.writes(executed)
    for path, instead in sorted(paths.items(), key=lambda kv: -len(kv[0])):  # the longest first: nested paths
        text = text.replace(path, instead)
    return text


def grade_one(student: str, path: Path, out: Path, reference: Path, timeout: int, cell_timeout: int,
              unreadable: list[Path], numbers=None) -> list[Row]:
    """Grade one submitted notebook; every failure becomes rows, never an exception. ``numbers``: the page's
    :func:`reference_numbers` (made here when not given)."""
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
    if numbers is None:
        numbers = reference_numbers(page, reference_nb, out, timeout, cell_timeout, unreadable)

    private = Path(tempfile.mkdtemp(prefix=f".grade-{student}-{page}-", dir=out))
    try:
        return _grade_in(student, page, path, submission, reference_nb, numbers, private, out, timeout, cell_timeout,
                         unreadable)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _grade_in(student, page, path, submission, reference_nb, numbers, private, out, timeout, cell_timeout,
              unreadable) -> list[Row]:
    import nbformat

    workdir = private / "work"
    shutil.copytree(path.parent, workdir, ignore=shutil.ignore_patterns("*.ipynb", ".*"))
    nb, labels = graded_notebook(reference_nb, submission,
                                 setup_source(private / "results.jsonl", workdir, unreadable + [private]))
    answer_index = {c.metadata["exercise"]: i for i, c in enumerate(nb.cells) if c.metadata.get("grading") == "answer"}
    run = _run(nb, private, workdir, timeout, cell_timeout)
    failed, recorded, killed = run["failed"], run["recorded"], run["killed"]
    answers = answer_cells(submission)
    rows = []
    for label in labels:
        if label in answer_index and answer_index[label] in failed:
            rows.append(Row(student, page, label, "error", failed[answer_index[label]]))
        elif label not in recorded:
            rows.append(Row(student, page, label, "error",
                            killed or "the notebook stopped before this exercise's check (an earlier cell failed)"))
        elif "error" in recorded[label]:
            rows.append(Row(student, page, label, "error", recorded[label]["error"]))
        else:
            # the numbers the check compares with: the reference run's (never the submission's kernel's)
            ok, message = _judge(exercises, label, decode(recorded[label]["answer"]), numbers.get(label) or None)
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
        paths = {str(workdir): ".", str(private): "<grading>", str(out): "<grades>", str(ROOT): "<book>",
                 os.path.realpath(workdir): ".", os.path.realpath(ROOT): "<book>", sys.prefix: "<python>",
                 sys.base_prefix: "<python>", str(Path.home()): "~"}
        atomic_write_text(feedback, feedback_notebook(nbformat.read(run["executed"], as_version=4), rows, paths))
    return rows


def _judge(exercises, label: str, answer, data) -> tuple:
    """The book's check of one answer in this process: (passed, its message), or (None, why) if it could not run."""
    import contextlib
    import io

    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            ok = exercises.check(label, answer, data=data)
    except Exception as e:  # a check that cannot judge this answer (e.g. the page's numbers are missing)
        return None, f"the check could not run: {type(e).__name__}: {e}"
    return bool(ok), buf.getvalue().strip()


# --- the class --------------------------------------------------------------------------------------------------

def grade(submissions: Path, out: Path, reference: Path = NOTEBOOKS_DIR, timeout: int = 1200,
          cell_timeout: int = 120, progress: bool | None = None) -> list[Row]:
    """Grade every student's notebooks under ``submissions`` (one folder per student) into ``out``."""
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
    out.mkdir(parents=True, exist_ok=True)
    unreadable = [*SOLUTIONS, reference, submissions, out]
    work = [(s.name, f) for s in students for f in sorted(s.iterdir()) if f.is_file() and not f.name.startswith(".")]
    # a loose file is graded for nobody (it is no student), an empty folder is a student with nothing handed in
    rows = [Row(LOOSE, name, "", "error", "a file beside the student folders, graded for nobody: put it in its "
                "student's folder (submissions/<student>/<page>.ipynb)") for name in stray]
    rows += [Row(s.name, "", "", "error", "no notebook in this student's folder") for s in students
             if not any(st == s.name for st, _ in work)]
    numbers = {}  # page -> the reference run's numbers, made once per page
    for student, path in tqdm(work, desc="grading", unit="notebook",
                              disable=not (show_progress() if progress is None else progress)):
        if path.suffix == ".ipynb" and path.stem not in numbers:
            try:
                numbers[path.stem] = reference_numbers(path.stem, reference_page(path.stem, reference), out, timeout,
                                                       cell_timeout, unreadable)
            except ValueError:
                numbers[path.stem] = None  # not a page of the book: grade_one says so
        rows.extend(grade_one(student, path, out, reference, timeout, cell_timeout, unreadable,
                              numbers.get(path.stem)))
    write_tables(rows, out)
    return rows


def totals(rows: list[Row]) -> dict[str, tuple[int, int]]:
    """Per student: exercises passed, exercises graded (loose files are nobody's)."""
    out: dict[str, list[int]] = {}
    for r in rows:
        if r.student == LOOSE:
            continue
        t = out.setdefault(r.student, [0, 0])
        t[0] += r.result == "✓"
        t[1] += bool(r.exercise)
    return {k: tuple(v) for k, v in out.items()}


def write_tables(rows: list[Row], out: Path) -> None:
    """``grades.csv`` (one row per exercise) and ``grades.html`` (totals, then every row), written atomically."""
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["student", "page", "exercise", "result", "message"])
    for r in rows:
        w.writerow([r.student, r.page, r.exercise, r.result, r.message])
    atomic_write_text(out / "grades.csv", "\ufeff" + buf.getvalue())  # a BOM: spreadsheets then read UTF-8
    colour = {"✓": "#d9f2d9", "✗": "#f9dcdc", "error": "#fbe8c8"}
    tot = "".join(f"<tr><td>{html.escape(s)}</td><td>{p}</td><td>{n}</td></tr>" for s, (p, n) in totals(rows).items())
    body = "".join(
        f"<tr style='background:{colour[r.result]}'>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in asdict(r).values())
        + "</tr>" for r in rows)
    atomic_write_text(out / "grades.html", (
        "<!doctype html><meta charset='utf-8'><title>Grades</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:3px 8px;text-align:left}</style><h1>Grades</h1>"
        f"<h2>Totals</h2><table><tr><th>student</th><th>passed</th><th>exercises</th></tr>{tot}</table>"
        "<h2>Every exercise</h2><table><tr><th>student</th><th>page</th><th>exercise</th><th>result</th>"
        f"<th>message</th></tr>{body}</table>\n"))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_execute"]:  # the child process of grade_one
        nb, executed, errors, cell_timeout, workdir = argv[1:]
        _execute(Path(nb), Path(executed), Path(errors), int(cell_timeout), Path(workdir))
        return
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.book.grade", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("submissions", type=Path, help="one folder per student, each with that student's notebooks")
    ap.add_argument("--out", type=Path, default=Path("grades"), help="where the grades go (default: grades/)")
    ap.add_argument("--reference", type=Path, default=NOTEBOOKS_DIR, help="the book's page sources (py:percent)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds for a whole notebook (default 1200)")
    ap.add_argument("--cell-timeout", type=int, default=120, help="seconds for one answer cell (default 120)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        with runner.exit_on_interrupt(f"interrupted: grades.csv and grades.html were not written; run the same "
                                      f"command again to grade the class (make grade SUBMISSIONS={args.submissions})"):
            rows = grade(args.submissions, args.out, args.reference, args.timeout, args.cell_timeout)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    for student, (passed, n) in totals(rows).items():
        print(f"{student}: {passed} of {n}" + ("  (no notebook in the folder)" if n == 0 else ""))
    loose = [r.page for r in rows if r.student == LOOSE]
    if loose:
        print(f"not graded: {len(loose)} loose file(s) beside the student folders ({', '.join(loose)}); put each in "
              f"its student's folder")
    print(f"grades of {len(totals(rows))} students in {args.out}/grades.csv and grades.html "
          f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
