"""Ctrl-C in each command (`make book`'s runner, the custom book, `make student`, `make grade`): one line saying what
was kept and how to resume, exit code 130, no traceback from any process. A terminal's Ctrl-C reaches the whole
foreground process group (the command, its page workers, their kernels): the tests send SIGINT to the group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jtc_utils.core.infra.paths import ROOT

pytestmark = pytest.mark.slow  # each starts a command and waits for it to be under way


def _interrupt(args: list[str], ready, tmp_path: Path, env: dict | None = None, deadline: float = 120):
    """Start ``args`` in a process group of its own, wait until its output shows ``ready`` (or ``ready()`` is
    true), send the group SIGINT (as a terminal's Ctrl-C does) and return (exit code, stdout, stderr)."""
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen(
            args,
            stdout=o,
            stderr=e,
            cwd=ROOT,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONWARNINGS": "ignore", **(env or {})},
        )
        t0 = time.monotonic()
        while not (ready() if callable(ready) else ready in out.read_text() + err.read_text()):
            assert proc.poll() is None, f"it ended before it was under way:\n{out.read_text()}\n{err.read_text()}"
            assert time.monotonic() - t0 < deadline, f"never under way:\n{out.read_text()}\n{err.read_text()}"
            time.sleep(0.2)
        time.sleep(1.0)  # well inside: workers, kernels
        os.killpg(proc.pid, signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    return code, out.read_text(), err.read_text()


def _one_line(err: str, start: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(start), err
    assert "Traceback" not in err


PAGES = """
import sys, time
from jtc_utils.book.build import runner, scheduling

def page(name):
    time.sleep(300)
    return 1.0

if __name__ == "__main__":
    try:
        with runner.quiet_interrupt():
            scheduling.run_pages(["a", "b", "c"], page, 2, lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("interrupted: pages", file=sys.stderr)
        sys.exit(130)
"""


def test_pages_running_side_by_side_stop_at_once_with_one_line(tmp_path):
    script = tmp_path / "pages.py"
    script.write_text(PAGES)
    t0 = time.monotonic()
    code, out, err = _interrupt([sys.executable, str(script)], "executing b", tmp_path)
    assert code == 130 and time.monotonic() - t0 < 120  # the workers were stopped, not waited for (300 s each)
    _one_line(err, "interrupted: pages")


STUDENT = """
import time, papermill
from jtc_utils.book.classroom import student
papermill.execute_notebook = lambda *a, **k: time.sleep(300)
student.main(["--out", {out!r}, "--fill"])
"""


def test_make_student_fill(tmp_path):
    script = tmp_path / "student.py"
    script.write_text(STUDENT.format(out=str(tmp_path / "edition")))
    code, out, err = _interrupt(
        [sys.executable, str(script)],
        "filling the cache: page 1",
        tmp_path,
        env={"JTC_CACHE": str(tmp_path / "cache"), "JTC_PROGRESS": "0"},
    )
    assert code == 130
    _one_line(err, "interrupted: the edition is written")


CUSTOM = """
import time
from jtc_utils.book.custom import command as custom, plan as custom_plan
def slow_plan(*a, **k):
    print("planning", flush=True)
    time.sleep(300)
custom_plan.plan = slow_plan
custom.main(["--model", "tiny-gpt2", "--text", {text!r}, "--out", {out!r}])
"""


def test_the_custom_books_plan(tmp_path):
    script = tmp_path / "custom.py"
    (tmp_path / "t.txt").write_text("One sentence here.\n\nAnother one there.\n")
    script.write_text(CUSTOM.format(out=str(tmp_path / "book"), text=str(tmp_path / "t.txt")))
    code, out, err = _interrupt([sys.executable, str(script)], "planning", tmp_path)
    assert code == 130 and not (tmp_path / "book").exists()
    _one_line(err, "interrupted while planning: nothing was written")


def test_make_grade(tmp_path):
    import jupytext
    import nbformat

    from jtc_utils.book.classroom import student

    nb = student.strip(jupytext.read(Path(__file__).parent / "grading" / "minipage.py"))
    for cell in nb.cells:
        if "answer" in cell.metadata.get("tags", []):
            cell.source = "import time\ntime.sleep(300)\nanswer = 1"
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "subs" / "ann" / "minipage.ipynb")
    code, out, err = _interrupt(
        [
            sys.executable,
            "-m",
            "jtc_utils.book.classroom.grade",
            str(tmp_path / "subs"),
            "--out",
            str(tmp_path / "grades"),
            "--reference",
            str(Path(__file__).parent / "grading"),
        ],
        lambda: any((tmp_path / "grades").glob(".grade-ann-*")),
        tmp_path,
    )
    assert code == 130 and not (tmp_path / "grades" / "grades.csv").exists()
    _one_line(err, "interrupted: grades.csv and grades.html were not written")
    assert not [p for p in (tmp_path / "grades").iterdir() if p.name.startswith(".grade-")]  # no working copy left
