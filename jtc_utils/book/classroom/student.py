"""The student edition (``make student``): every page of the book as a notebook with its solutions removed.

Each solution cell becomes an open answer cell (``answer = None``); the check cell after it stays, locked, so a
student reads ✓ or ✗ (:mod:`jtc_utils.book.display.exercises`). Both carry the exercise's label in their metadata,
by which the grader takes a submission's answers. The real model's cells run on :data:`STUDENT_SIZES`. Usage::

    python -m jtc_utils.book.classroom.student [--out student]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from jtc_utils.core.infra import paths
from jtc_utils.core.data import profiles
from jtc_utils.core.infra.paths import NOTEBOOKS_DIR, ROOT, atomic_write_text
from jtc_utils.core.infra.progress import show_progress

from jtc_utils.book.build import runner, scheduling, staleness

# the real model's training and validation sentences in the student edition: the tests' subset (the book's pages
# run on 9,000 and 3,000; executing them at that size costs minutes per page on two cores)
STUDENT_SIZES = profiles.REAL_SUBSET
CHECK_CALL = re.compile(r"""exercises\.check\(\s*["']([^"']+)["']""")
_REAL_PARAMS = (re.compile(r"^real_n_train = None\b.*$", re.M), re.compile(r"^real_n_val = None\b.*$", re.M))
ANSWER = "# Your answer: write the code the exercise asks for, and leave the result in `answer`.\nanswer = None"
_FENCES = (
    re.compile(r"```\{solution-start\}[^\n]*\n(?::[^\n]*\n)*```[ \t]*\n?"),
    re.compile(r"```\{solution-end\}[^\n]*\n```[ \t]*\n?"),
    re.compile(r"````\{solution\}.*?\n````[ \t]*\n?", re.S),
)


# sphinx-exercise's directives read as plain headings in Jupyter
_EXERCISES = (
    (re.compile(r"```\{exercise-start\}[^\n]*\n:label: (\S+)\n```[ \t]*\n"), r"**Exercise `\1`.** "),
    (re.compile(r"```\{exercise-end\}[^\n]*\n```[ \t]*\n?"), ""),
    (
        re.compile(r"```\{exercise\}[^\n]*\n:label: (\S+)\n(.*?)\n```[ \t]*\n?", re.S),
        r"**Exercise `\1`.** "
        r"\2\n",
    ),
)
# the rest of the book's MyST, as Jupyter's Markdown shows it: an admonition as a quoted block under its title (its
# options dropped), a glued value as the name of the variable that holds it (a glued table as where it comes from), a
# citation by its key (the book's references page lists them), a link to a figure's anchor in the built book as the
# figure's name and id
_ADMONITION = re.compile(r"```\{admonition\}[ \t]*([^\n]*)\n((?::[^\n]*\n)*)(.*?)\n```[ \t]*(\n|$)", re.S)
_MYST = (
    (re.compile(r"\{glue:text\}`([^`]+)`"), r"`\1` (the parameters cell)"),
    (re.compile(r"```\{glue\} (\w+)\n```"), r"*(the built book shows the table `\1` here, from the page's last cell)*"),
    (re.compile(r"\{cite:p\}`([^`]+)`"), r"[\1]"),
    (re.compile(r"""<a href="#figure-([\w-]+)">([^<]*)</a>"""), r"\2 (`\1`)"),
)


def jupyter_markdown(text: str) -> str:
    """A markdown cell of the book with its MyST written as plain Markdown that Jupyter renders (see above)."""
    text = _ADMONITION.sub(
        lambda m: (
            "> **"
            + m.group(1).strip()
            + "**\n>\n"
            + "\n".join("> " + line if line else ">" for line in m.group(3).splitlines())
            + m.group(4)
        ),
        text,
    )
    for pattern, plain in _MYST:
        text = pattern.sub(plain, text)
    return text


def strip(nb):
    """``nb`` (a notebook read by jupytext) without its solutions: a new notebook, ``nb`` is left as it is."""
    import copy

    out = copy.deepcopy(nb)
    cells = []
    for i, cell in enumerate(out.cells):
        tags = list(cell.metadata.get("tags", []))
        if "solution" in tags:
            cell.source = ANSWER
            cell.metadata["tags"] = [t for t in tags if t != "solution"] + ["answer"]
            after = next((c for c in out.cells[i + 1 :] if c.cell_type == "code"), None)
            found = CHECK_CALL.search(after.source) if after is not None else None
            if found:  # the check right after the solution (written exercises have none)
                cell.metadata["exercise"] = found.group(1)
        elif cell.cell_type == "code" and CHECK_CALL.search(cell.source):
            cell.metadata["exercise"] = CHECK_CALL.search(cell.source).group(1)
            cell.metadata["tags"] = [t for t in tags if t != "remove-output"] + ["check"]  # shown where run
            cell.metadata["editable"] = cell.metadata["deletable"] = False  # Jupyter's lock
        elif "parameters" in tags:
            n_train, n_val = STUDENT_SIZES
            cell.source = _REAL_PARAMS[0].sub(
                f"real_n_train = {n_train}  # the student edition's subset; None: the book's 9,000 (minutes per page)",
                cell.source,
            )
            cell.source = _REAL_PARAMS[1].sub(
                f"real_n_val = {n_val}  # the student edition's subset; None: the book's 3,000 / 1,000", cell.source
            )
        elif cell.cell_type == "markdown":
            for fence in _FENCES:
                cell.source = fence.sub("", cell.source)
            for directive, plain in _EXERCISES:
                cell.source = directive.sub(plain, cell.source)
            cell.source = jupyter_markdown(cell.source)
            if not cell.source.strip():
                continue
        elif cell.cell_type == "code" and not cell.source.strip():
            continue  # the blank line after a py:percent header reads as an empty code cell
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    out.cells = cells
    return out


# the student edition's first cell: the numbers a student's run computes go beside the notebooks, never into the book
SETUP = (
    "# The student edition keeps the numbers its figures are computed from in data/ beside this notebook;\n"
    "# the book's own (book/data) stay as they are.\n"
    "import os\n\n"
    "os.environ.setdefault(\"JTC_DATA_OUT\", os.path.abspath(\"data\"))"
)


def subset_note(name: str) -> str:
    """The student edition's word on the real model's subset, for a page that runs the real model at the
    parameters' sizes: what the subset is, and how to ask for the book's full size."""
    n_train, n_val = STUDENT_SIZES
    return (
        f"**Student edition.** The real model's cells run on {n_train:,} training and {n_val:,} validation "
        "sentences here, so that the page executes in a minute or two. For the book's full size (9,000 and "
        "3,000 on Wikipedia, 1,000 on BBC News) set `real_n_train = None` and `real_n_val = None` in the "
        "parameters cell: on two cores that costs minutes more per page, most of it the real model's forward "
        "passes over the extra sentences."
    )


def digest(nb) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps([(c.cell_type, c.source) for c in nb.cells]).encode()).hexdigest()


def build(out_dir: Path | str = ROOT / "student", replace: bool = False) -> tuple[list[Path], list[Path]]:
    """Write the student edition of every page to ``out_dir``, each notebook atomically. A notebook already there
    whose cells differ from the edition's is a student's work: it is kept unless ``replace``. Returns the notebooks
    written and those kept."""
    import jupytext
    import nbformat

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written, kept = [], []
    for name in runner.notebook_names():
        nb = strip(jupytext.read(NOTEBOOKS_DIR / f"{name}.py"))
        nb.metadata.pop("jupytext", None)
        setup = [nbformat.v4.new_code_cell(SETUP, metadata={"tags": ["student-setup"]})]
        if any(
            _REAL_PARAMS[0].search(c.source)
            for c in jupytext.read(NOTEBOOKS_DIR / f"{name}.py").cells
            if "parameters" in c.metadata.get("tags", [])
        ):
            setup.append(nbformat.v4.new_markdown_cell(subset_note(name)))
        nb.cells[:0] = setup
        nb.metadata["jtc_student"] = {"edition": digest(nb)}  # what was written: a student's edits differ from it
        target = out_dir / f"{name}.ipynb"
        if target.exists() and not replace:
            try:
                old = nbformat.read(target, as_version=4)
                worked = digest(old) != old.metadata.get("jtc_student", {}).get("edition")
            except Exception:  # an unreadable notebook is not a student's work to keep
                worked = False
            if worked:
                kept.append(target)
                continue
        atomic_write_text(target, jupytext.writes(nb, fmt="ipynb"))
        written.append(target)
    return written, kept


FILL_RECORD = "student-fill.json"  # in the cache: the inputs each page was filled with


def fill(progress: bool | None = None) -> dict[str, float]:
    """Fill the cache with what the student edition's pages compute (the zoo models' states, fits and predictions,
    the real model's subset): execute every page of the edition once, headlessly, in the book's order, in a
    temporary folder (nothing of the student's is touched). A page whose inputs (:func:`jtc_utils.book.build.runner.
    inputs_fingerprint`) have not changed since it was filled is skipped, so an interrupted fill resumes. Returns
    the seconds each executed page took."""
    import json
    import tempfile
    import time

    import papermill as pm
    from tqdm.auto import tqdm

    record = paths.CACHE_DIR / FILL_RECORD
    done = json.loads(record.read_text()) if record.exists() else {}
    todo = {name: f"{staleness.inputs_fingerprint(name, 'tiny')}/{STUDENT_SIZES}" for name in runner.notebook_names()}
    todo = {name: key for name, key in todo.items() if done.get(name) != key}
    seconds = {}
    # the kernels inherit the environment: the bar below is the only one
    with scheduling.environ({"JTC_PROGRESS": "0"}, {"PYTHONWARNINGS": "ignore"}):
        with tempfile.TemporaryDirectory(prefix="jtc-student-fill-") as tmp:
            written, _ = build(Path(tmp) / "edition")
            pages = {p.stem: p for p in written}
            show = show_progress() if progress is None else progress
            bar = tqdm(list(todo), desc="filling the student edition's cache", unit="page", disable=not show)
            for i, name in enumerate(bar, 1):
                bar.set_postfix_str(name)
                if not show:  # no bar (not a terminal, or asked for none): a line per page, so a long fill is seen
                    print(f"filling the cache: page {i} of {len(todo)}, {name} ...", flush=True)
                t0 = time.perf_counter()
                try:
                    pm.execute_notebook(
                        str(pages[name]),
                        str(Path(tmp) / f"{name}.out.ipynb"),
                        cwd=str(pages[name].parent),
                        progress_bar=False,
                        kernel_name="python3",
                    )
                except pm.PapermillExecutionError as e:
                    raise SystemExit(
                        f"error: the student edition of {name} failed while filling the cache "
                        f"({e.ename}: {e.evalue}); run `make book` to see the page's own error"
                    ) from None
                seconds[name] = time.perf_counter() - t0
                (bar.write if show else print)(f"  {name}: {seconds[name]:.0f} s")
                done[name] = todo[name]
                atomic_write_text(record, json.dumps(done, indent=1) + "\n")
    return seconds


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m jtc_utils.book.classroom.student",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--out", type=Path, default=ROOT / "student", help="folder to write (default: student/)")
    ap.add_argument(
        "--replace", action="store_true", help="replace notebooks a student has worked on too (their answers are lost)"
    )
    ap.add_argument(
        "--fill",
        action="store_true",
        help="also fill the cache the pages share, once (every page executed headlessly; resumes)",
    )
    args = ap.parse_args(argv)
    written, kept = build(args.out, replace=args.replace)
    print(
        f"student edition: {len(written)} notebooks written to {args.out} (solutions removed; run the check "
        "cells)"
        + (
            f"; kept {len(kept)} you have worked on ({', '.join(p.stem for p in kept)}): --replace starts them afresh"
            if kept
            else ""
        )
    )
    if args.fill:
        with runner.exit_on_interrupt(
            "interrupted: the edition is written, and the pages filled before the "
            "interruption are kept; `make student` fills the rest"
        ):
            took = fill()
        print(
            f"cache filled: {len(took)} pages executed in {sum(took.values()) / 60:.1f} min"
            if took
            else "cache already filled for every page"
        )


if __name__ == "__main__":
    main()
