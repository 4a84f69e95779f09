"""A class graded whatever one submission holds: links, pipes, odd names, odd answers, a fork bomb, a cell that
ignores its interrupt, shared memory, spoiled run records. One command (`make grade` runs it) grades the whole class
beside an honest student: every case is one row of its own student's, the command ends without a traceback,
``grades.csv`` is written, no secret reaches any output, and every other student's rows are exactly those the same
student gets graded alone. Then what a grader leaves when it is killed or interrupted, and a regrade."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from jtc_utils.book.classroom import folder, sandbox
from jtc_utils.core.infra.paths import BOOK_DIR, ROOT
from test_grade import CORRECT, ONE_PAIR, PAGE, REFERENCE, WORLD, submission

pytestmark = [
    pytest.mark.pages,
    pytest.mark.slow,  # a class's submissions executed
    pytest.mark.skipif(sandbox.available() is None, reason=sandbox.INSTALL),
]

SECRET = "TEACHER-SECRET-4b1d"
OFF = "__jtc_grade__._refuse = lambda *a, **k: None  # the in-kernel guard, switched off\n"
NOTEBOOK = f"{PAGE}.ipynb"
CELL_TIMEOUT = 20
FORMULA = '=HYPERLINK("http:x","y")+2'  # a student folder named as a spreadsheet formula


def _answers(one_pair: str) -> dict:
    return {ONE_PAIR: one_pair, WORLD: CORRECT[WORLD]}


# students whose notebook runs: the answer to ONE_PAIR, and what their row of it must be
RUNS = {
    "set-key": ("answer = {frozenset({1, 2}): 0.5}", "✗"),  # a set inside a dict, as a key
    "set-of-sets": ("answer = {frozenset({1}), frozenset({2})}", "✗"),
    "spoiler": (OFF + "open('../errors.json', 'w').write('garbage, not JSON')\nanswer = float(r2[2, 4])", "✓"),
    "piper": (
        OFF + "import os\nos.remove('../errors.json') if os.path.exists('../errors.json') else None\n"
        "os.mkfifo('../errors.json')\ntry:\n    os.remove('../../results.jsonl')\nexcept OSError:\n    pass\n"
        "answer = float(r2[2, 4])",
        "✓",
    ),
    "forker": (
        OFF + "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(60)\n"
        "            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint('forked', n)\nanswer = n",
        "✗",
    ),
    "deaf": ("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(600)\nanswer = 1", "error"),
    "shm": (OFF + "f = open('/dev/shm/fill', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))\nanswer = 1", "error"),
    "rootfs": (OFF + "open('/planted', 'w').write('x')\nanswer = 1", "error"),
    "pages": (OFF + f"answer = len(open({str(BOOK_DIR / 'sec5_early_exit.ipynb')!r}).read())", "error"),
    "project": (OFF + f"answer = len(open({str(ROOT / 'README.md')!r}).read())", "error"),
    "datalink": ("answer = open('data.txt').read()", "error"),
}


def _build(subs: Path, secret: Path, out: Path) -> None:
    honest = subs / "alice"
    honest.mkdir()
    nbformat.write(submission(CORRECT), honest / NOTEBOOK)
    for name, (code, _) in RUNS.items():
        (subs / name).mkdir()
        nbformat.write(submission(_answers(code)), subs / name / NOTEBOOK)
    (subs / "datalink" / "data.txt").symlink_to(secret)
    links = {
        "linker": honest / NOTEBOOK,
        "leaker": secret,
        "shadow": Path("/etc/shadow"),
        "zero": Path("/dev/zero"),
        "grades": out / "grades.csv",
        "page": BOOK_DIR / "sec5_early_exit.ipynb",
        "solution": REFERENCE / f"{PAGE}.py",
    }
    for name, target in links.items():
        (subs / name).mkdir()
        (subs / name / NOTEBOOK).symlink_to(target)
    (subs / "mirror").symlink_to(honest, target_is_directory=True)
    (subs / "fifo").mkdir()
    os.mkfifo(subs / "fifo" / NOTEBOOK)
    (subs / "deep").mkdir()
    (subs / "deep" / NOTEBOOK).write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (subs / FORMULA).mkdir()
    nbformat.write(submission(CORRECT), subs / FORMULA / NOTEBOOK)


def _grader(subs: Path, out: Path, *extra: str, timeout: float = 1500) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "jtc_utils.book.classroom.grade",
            str(subs),
            "--out",
            str(out),
            "--reference",
            str(REFERENCE),
            "--timeout",
            "300",
            "--cell-timeout",
            str(CELL_TIMEOUT),
            "--disk-gb",
            "0.05",
            *extra,
        ],
        env={**os.environ, "JTC_PROGRESS": "0", "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _table(out: Path) -> list[dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def _rows(table, student):
    return [(r["page"], r["exercise"], r["result"], r["message"]) for r in table if r["student"] == student]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    secret = base / "teacher" / "answers.txt"
    secret.parent.mkdir()
    secret.write_text(f"{SECRET}: the answers of the exam\n")
    subs, out = base / "class", base / "grades"
    subs.mkdir()
    _build(subs, secret, out)
    t0 = time.monotonic()
    done = _grader(subs, out)
    took = time.monotonic() - t0
    alone_subs, alone_out = base / "alone", base / "alone-grades"
    (alone_subs / "alice").mkdir(parents=True)
    nbformat.write(submission(CORRECT), alone_subs / "alice" / NOTEBOOK)
    for name in ("set-key", "spoiler"):
        (alone_subs / name).mkdir()
        nbformat.write(submission(_answers(RUNS[name][0])), alone_subs / name / NOTEBOOK)
    alone = _grader(alone_subs, alone_out)
    return {"done": done, "out": out, "subs": subs, "took": took, "alone": alone, "alone_out": alone_out}


def test_the_class_is_graded_in_one_command_without_a_traceback(hostile):
    done = hostile["done"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert (hostile["out"] / "grades.csv").is_file() and (hostile["out"] / "grades.html").is_file()


def test_a_link_or_a_pipe_is_its_students_row_never_followed(hostile):
    table = _table(hostile["out"])
    for name in ("linker", "leaker", "shadow", "zero", "grades", "page", "solution"):
        assert _rows(table, name) == [(NOTEBOOK, "", "error", "a link, not a notebook: submit the file itself")], name
    assert _rows(table, "fifo") == [
        (NOTEBOOK, "", "error", "a pipe (FIFO), not a notebook: submit the notebook file itself")
    ]
    assert _rows(table, "mirror") == [
        ("", "", "error", "a link, not a student's folder: put the notebooks in a folder")
    ]
    deep = _rows(table, "deep")
    assert len(deep) == 1 and deep[0][2] == "error" and "nested more than" in deep[0][3], deep
    data = {ex: (res, msg) for _, ex, res, msg in _rows(table, "datalink")}
    assert data[ONE_PAIR][0] == "error" and "FileNotFoundError" in data[ONE_PAIR][1], data
    assert data[""] == ("error", "a link, not a notebook: submit the file itself"), data  # its own row, not followed


def test_odd_answers_and_spoiled_records_are_their_students_rows(hostile):
    table = _table(hostile["out"])
    for name, (_, want) in RUNS.items():
        mine = {ex: (res, msg) for _, ex, res, msg in _rows(table, name)}
        assert mine[ONE_PAIR][0] == want, (name, mine)
    msg = {r["student"]: r["message"] for r in table if r["exercise"] == ONE_PAIR}
    assert "did not stop when interrupted" in msg["deaf"], msg["deaf"]
    assert "wrote more than 0.05 GB" in msg["shm"] or "File too large" in msg["shm"], msg["shm"]
    assert "Read-only file system" in msg["rootfs"], msg["rootfs"]
    for name in ("pages", "project"):
        assert "FileNotFoundError" in msg[name], (name, msg[name])


def test_the_fork_bomb_meets_a_process_limit(hostile):
    table = _table(hostile["out"])
    # its answer is the number of processes it made before fork failed: the limit, not the machine, stopped it
    assert _rows(table, "forker")[0][2] == "✗"
    fence = sandbox.TaskFence()
    try:
        if fence.how.startswith("no limit"):
            pytest.skip(fence.how)
    finally:
        fence.close()
    fb = nbformat.read(hostile["out"] / "feedback" / "forker" / NOTEBOOK, as_version=4)
    printed = [o.get("text", "") for c in fb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    forked = [int(t.split()[1]) for t in printed if t.startswith("forked ")]
    assert forked and forked[0] < sandbox.TASKS, printed


def test_a_cell_that_ignores_its_interrupt_does_not_hold_the_class(hostile):
    # the deaf cell is stopped at its limit and its grace, not at the whole notebook's 300 s
    assert hostile["took"] < 300 + 120, hostile["took"]


def test_no_secret_and_no_link_target_reaches_any_output(hostile):
    out, done = hostile["out"], hostile["done"]
    texts = [done.stdout, done.stderr]
    for root, _, files in os.walk(out):
        for f in files:
            texts.append(Path(root, f).read_bytes().decode("utf-8", errors="replace"))
    for text in texts:
        assert SECRET not in text and "/etc/shadow" not in text and "teacher" not in text


def test_a_formula_in_a_name_is_written_inert(hostile):
    raw = (hostile["out"] / "grades.csv").read_text(encoding="utf-8-sig")
    for line in raw.splitlines()[1:]:
        cell = next(csv.reader([line]))[0]
        assert not cell.startswith(("=", "+", "-", "@")), cell
    table = _table(hostile["out"])
    assert any(r["student"] == "'" + FORMULA and r["result"] == "✓" for r in table)
    html = (hostile["out"] / "grades.html").read_text(encoding="utf-8")
    assert "<td>=HYPERLINK(&quot;http:x&quot;,&quot;y&quot;)+2</td>" in html


def test_every_other_student_is_graded_as_when_alone(hostile):
    together, alone = _table(hostile["out"]), _table(hostile["alone_out"])
    assert hostile["alone"].returncode == 0
    for name in ("alice", "set-key", "spoiler"):
        assert _rows(together, name) == _rows(alone, name), name
    assert [r for _, _, r, _ in _rows(alone, "alice")] == ["✓", "✓"]


def test_a_regrade_into_the_folder_replaces_it_whole(hostile, tmp_path):
    out = hostile["out"]
    subs = tmp_path / "class"
    (subs / "alice").mkdir(parents=True)
    nbformat.write(submission(CORRECT), subs / "alice" / NOTEBOOK)
    done = _grader(subs, out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["alice"]  # nothing of the class before
    assert {r["student"] for r in _table(out)} == {"alice"}
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    refused = _grader(subs, foreign)
    assert refused.returncode != 0 and "holds files this grader did not write" in refused.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


def test_a_reference_run_that_does_not_finish_stops_grading(tmp_path):
    subs = tmp_path / "class"
    (subs / "alice").mkdir(parents=True)
    nbformat.write(submission(CORRECT), subs / "alice" / NOTEBOOK)
    done = _grader(subs, tmp_path / "grades", "--reference-timeout", "1")
    assert done.returncode != 0 and "did not finish" in done.stderr and "nothing was graded" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "grades" / "grades.csv").exists()


def _runs_in(folder: Path) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and str(folder) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                found.append(int(pid))
        except OSError:
            continue
    return found


def _start(subs: Path, out: Path, *extra: str, reference: Path = REFERENCE, **kw) -> subprocess.Popen:
    """The grader started in the background (the tests below stop it)."""
    argv = [sys.executable, "-m", "jtc_utils.book.classroom.grade", str(subs), "--out", str(out)]
    return subprocess.Popen(
        [*argv, "--reference", str(reference), "--cell-timeout", "300", *extra],
        env={**os.environ, "JTC_PROGRESS": "0"},
        **kw,
    )


def _wait_for(pattern: str, folder: Path, proc: subprocess.Popen) -> None:
    t0 = time.monotonic()
    while not list(folder.glob(pattern)):
        assert proc.poll() is None and time.monotonic() - t0 < 240, f"{pattern} never appeared"
        time.sleep(0.2)


def test_a_grader_killed_during_its_reference_run_leaves_nothing_running(tmp_path):
    slow = tmp_path / "reference"  # the test page, whose own run (the reference) takes a minute
    slow.mkdir()
    source = (REFERENCE / f"{PAGE}.py").read_text()
    (slow / f"{PAGE}.py").write_text(source.replace("import json\n", "import json\nimport time\n\ntime.sleep(60)\n", 1))
    subs, out = tmp_path / "class", tmp_path / "grades"
    (subs / "ann").mkdir(parents=True)
    nbformat.write(submission(CORRECT), subs / "ann" / NOTEBOOK)
    proc = _start(subs, out, reference=slow, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_for(".grade-reference-*", out, proc)
    time.sleep(5)  # its kernel is up
    assert _runs_in(out), "the reference run never started"
    proc.kill()
    proc.wait()
    time.sleep(3)  # ipykernel notices its parent is gone within a second
    assert _runs_in(out) == []  # the run and its kernel died with the grader
    done = _grader(subs, out)  # the next start clears the working copy it left
    assert done.returncode == 0, done.stderr[-2000:]
    assert not list(out.glob(".grade-*"))


def test_an_interrupted_class_keeps_the_students_that_finished(tmp_path):
    subs, out = tmp_path / "class", tmp_path / "grades"
    (subs / "ann").mkdir(parents=True)
    nbformat.write(submission(CORRECT), subs / "ann" / NOTEBOOK)
    (subs / "zed").mkdir()
    nbformat.write(submission(_answers("import time\ntime.sleep(300)\nanswer = 1")), subs / "zed" / NOTEBOOK)
    proc = _start(
        subs, out, "--jobs", "1", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    _wait_for(".grade-zed-*", out, proc)
    time.sleep(2)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "the students graded so far are kept" in err, err
    kept = list((out / folder.KEPT).glob("*.json"))
    assert len(kept) == 1  # ann's rows
    (subs / "zed" / NOTEBOOK).unlink()
    nbformat.write(submission(CORRECT), subs / "zed" / NOTEBOOK)
    done = _grader(subs, out)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [(r["student"], r["result"]) for r in _table(out)] == [("ann", "✓")] * 2 + [("zed", "✓")] * 2
