"""What a grading writes: one :class:`Row` per exercise, ``grades.csv`` and ``grades.html``
(:func:`write_tables`), and each student's feedback notebook (:func:`feedback_notebook`).
"""

from __future__ import annotations

import csv
import html
from dataclasses import asdict, dataclass
from pathlib import Path

from jtc_utils.book.classroom.grading_run import Box
from jtc_utils.core.infra.paths import atomic_write_text


RESULTS = ("✓", "✗", "error")
LOOSE = "(no student)"  # the student column of a file found beside the student folders


@dataclass
class Row:
    student: str
    page: str
    exercise: str
    result: str  # one of RESULTS
    message: str


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


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


def inert(cell: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that starts as a formula would gets a leading apostrophe
    (OWASP's escape for CSV injection)."""
    cell = str(cell)
    return "'" + cell if cell.startswith(FORMULA_START) else cell


def write_tables(rows: list[Row], out: Path, box: Box) -> None:
    """``grades.csv`` (one row per exercise, and the sandbox the submissions ran in; every cell :func:`inert`) and
    ``grades.html`` (the sandbox, totals, then every row; every value escaped as text), written atomically."""
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["student", "page", "exercise", "result", "message", "sandbox"])
    for r in rows:
        w.writerow([inert(v) for v in (r.student, r.page, r.exercise, r.result, r.message, box.name)])
    atomic_write_text(out / "grades.csv", "\ufeff" + buf.getvalue())  # a BOM: spreadsheets then read UTF-8
    colour = {"✓": "#d9f2d9", "✗": "#f9dcdc", "error": "#fbe8c8"}
    tot = "".join(f"<tr><td>{html.escape(s)}</td><td>{p}</td><td>{n}</td></tr>" for s, (p, n) in totals(rows).items())
    body = "".join(
        f"<tr style='background:{colour[r.result]}'>"
        + "".join(f"<td>{html.escape(str(v))}</td>" for v in asdict(r).values())
        + "</tr>"
        for r in rows
    )
    where = (
        f"<p>Each submission ran in a sandbox ({html.escape(box.name)}): the book, the cache and the other "
        "submissions read-only or invisible, no network.</p>"
        if box.isolated
        else "<p style='background:#fbe8c8;padding:6px'><b>Not sandboxed</b> (--no-sandbox): the submissions ran "
        "unisolated, so a submission could have changed the book, the cache or other grades.</p>"
    )
    atomic_write_text(
        out / "grades.html",
        (
            "<!doctype html><meta charset='utf-8'><title>Grades</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            f"padding:3px 8px;text-align:left}}</style><h1>Grades</h1>{where}"
            f"<h2>Totals</h2><table><tr><th>student</th><th>passed</th><th>exercises</th></tr>{tot}</table>"
            "<h2>Every exercise</h2><table><tr><th>student</th><th>page</th><th>exercise</th><th>result</th>"
            f"<th>message</th></tr>{body}</table>\n"
        ),
    )


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
            text = (
                (f"**{label}: {r.result}**" + (f" — {r.message}" if r.message else ""))
                if r
                else f"**{label}: not graded**"
            )
            cells.append(nbformat.v4.new_markdown_cell(text, metadata={"exercise": label, "grading": "verdict"}))
            continue
        cell.metadata.pop("grading", None)
        cells.append(cell)
    executed.cells = cells
    text = nbformat.writes(executed)
    for path, instead in sorted(paths.items(), key=lambda kv: -len(kv[0])):  # the longest first: nested paths
        text = text.replace(path, instead)
    return text
