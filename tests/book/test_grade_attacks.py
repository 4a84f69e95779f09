"""Grading that no submission can reach: a scratch class graded by the command `make grade` runs
(``python -m jtc_utils.book.classroom.grade``), with students who attack the grader. Each attacker first switches the
in-kernel guard off (one line rebinds it), so that what stops it is the sandbox. Each attack gets ✗ or an error row,
changes nothing outside its sandbox (the book, the zoo, the project cache, the sources, the other submissions, the
grades folder), leaves no process behind, and leaves an honest student's grade as it is when she is graded alone, in the
same command and in a later one (a poisoned cache would show there)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jtc_utils.book.classroom import folder as grades_folder, sandbox
from jtc_utils.core.infra.paths import BOOK_DIR, CACHE_DIR, NOTEBOOKS_DIR, ROOT, ZOO_DIR
from test_grade import CORRECT, ONE_PAIR, PAGE, REFERENCE, WORLD, submission

pytestmark = [
    pytest.mark.pages,
    pytest.mark.slow,  # a class's submissions executed
    pytest.mark.skipif(sandbox.available() is None, reason=sandbox.INSTALL),
]

OFF = "__jtc_grade__._refuse = lambda *a, **k: None  # the in-kernel guard, switched off\n"
MARKER = "jtc-attack-outlives-7f3c"  # in the command line of a process an attacker leaves behind
SECRET = ("JTC_TEACHER_SECRET", "s3cr3t-of-the-teacher")


def _cache_entry() -> Path:
    return next(p for p in sorted(CACHE_DIR.rglob("*.npz")) if p.is_file())


def _attempts(lines: list[str]) -> str:
    """Code that tries every line, whatever the earlier ones did."""
    return "".join(
        f"try:\n    {line}\nexcept BaseException as e:\n    print('refused:', type(e).__name__)\n" for line in lines
    )


def attacks(out: Path, subs: Path) -> dict[str, str]:
    card = next(p for p in sorted(ZOO_DIR.rglob("card.json")))
    entry = _cache_entry()
    writes = [
        f"open({str(BOOK_DIR / 'data' / 'real_norms.json')!r}, 'w').write('{{\"ratio\": 4242.0}}')",
        f"open({str(card)!r}, 'w').write('{{\"heldout\": {{\"loss\": 0.0}}}}')",
        f"open({str(ZOO_DIR / 'SHA256SUMS')!r}, 'a').write('0' * 64 + '  forged\\n')",
        f"open({str(out / 'grades.csv')!r}, 'w').write('forged')",
        f"open({str(out / 'planted.txt')!r}, 'w').write('planted')",
        f"open({str(entry)!r}, 'r+b').write(b'poison')",  # the project cache, through its real path
        f"open(os.path.join(os.environ['JTC_CACHE'], {str(entry.relative_to(CACHE_DIR))!r}), 'r+b').write(b'poison')",
        # ... and through the run's own cache, whose entries link to it
        f"__import__('sqlite3').connect({str(BOOK_DIR / 'data' / 'planted.db')!r}).execute('create table t (x)')",
        f"os.close(os.open({str(NOTEBOOKS_DIR / 'planted.py')!r}, os.O_WRONLY | os.O_CREAT))",
        f"__import__('ctypes').CDLL(None).creat({str(ROOT / 'planted-by-ctypes').encode()!r}, 0o644)",
        f"os.remove({str(ZOO_DIR / 'SHA256SUMS')!r})",
        f"os.rename({str(BOOK_DIR / 'data' / 'fig23.json')!r}, {str(BOOK_DIR / 'data' / 'fig23.bak')!r})",
    ]
    reads = [
        f"print(open({str(p)!r}).read()[:80])"
        for p in (
            NOTEBOOKS_DIR / "embedded_world.py",
            REFERENCE / f"{PAGE}.py",
            ROOT / "tests" / "book" / "test_grade.py",
            subs / "alice" / f"{PAGE}.ipynb",
            out / "grades.csv",
        )
    ]
    return {
        "writer": OFF + "import os\n" + _attempts(writes) + "answer = 4242.0",
        "reader": OFF + _attempts(reads) + f"answer = open({str(NOTEBOOKS_DIR / 'embedded_world.py')!r}).read()",
        "signaller": OFF
        + "import os, signal\n"
        + _attempts(
            [
                "[os.kill(int(p), signal.SIGKILL) for p in os.listdir('/proc') "
                "if p.isdigit() and int(p) != os.getpid() "
                "and b'jtc_utils.book.classroom.grade' in open(f'/proc/{p}/cmdline', 'rb').read() "
                "and b'--_execute' not in open(f'/proc/{p}/cmdline', 'rb').read()]",
                "os.kill(os.getppid(), signal.SIGKILL)",
            ]
        )
        + "answer = 0.5",
        "forker": OFF
        + "import os, subprocess, sys\n"
        + _attempts(
            [
                f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)', {MARKER!r}], "
                "start_new_session=True)",
                f"os.fork() or os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(900)', "
                f"{MARKER!r}])",
            ]
        )
        + "answer = 0.5",
        "filler": OFF + "i = 0\nwhile True:\n    open(f'fill-{i}.bin', 'wb').write(b'x' * (1 << 20))\n    i += 1\n",
        "bigfile": OFF + "f = open('big.bin', 'wb')\nwhile True:\n    f.write(b'x' * (1 << 20))\n",
        "hog": OFF + "block = bytearray(64 << 30)\nanswer = 0.5",
        "environ": OFF + "import os, sys\nprint(dict(os.environ))\nprint(sys.executable, os.getcwd())\n"
        "answer = sorted(os.environ.items())",
    }


def stat_digest(*folders: Path) -> dict:
    """Every file under ``folders``: its size, modification time and inode (content changes move these). Left out:
    what other tests running beside this one write (the built book, page transactions' staging folders, locks, and
    the suite's figure data, ``$JTC_DATA_OUT``, which a test of a page's function saves into again), and the
    checkpoints of a lens training running beside them (``zoo/_work``, which git ignores)."""
    suite_data = os.path.realpath(os.environ["JTC_DATA_OUT"])
    out = {}
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = [
                d
                for d in dirs
                if d not in ("_build", ".locks", "test-logs", "grading-mpl", "_work")
                and not d.startswith(".staging-")
                and os.path.realpath(os.path.join(root, d)) != suite_data
            ]
            for name in files:
                st = os.lstat(os.path.join(root, name))
                out[os.path.join(root, name)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def run_grader(subs: Path, out: Path, *extra: str) -> list[dict]:
    env = {**os.environ, SECRET[0]: SECRET[1], "JTC_PROGRESS": "0"}
    done = subprocess.run(
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
            "60",
            "--disk-gb",
            "0.05",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def _leftovers() -> list[str]:
    found = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and MARKER.encode() in Path(f"/proc/{p}/cmdline").read_bytes():
                found.append(p)
        except OSError:
            continue
    return found


def _rows(table, student):
    return [(r["exercise"], r["result"], r["message"]) for r in table if r["student"] == student]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    subs, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("grades")
    (subs / "alice").mkdir()
    nbformat.write(submission(CORRECT), subs / "alice" / f"{PAGE}.ipynb")
    for name, code in attacks(out, subs).items():
        (subs / name).mkdir()
        nbformat.write(submission({ONE_PAIR: code, WORLD: CORRECT[WORLD]}), subs / name / f"{PAGE}.ipynb")
    watched = (BOOK_DIR, ZOO_DIR, CACHE_DIR, NOTEBOOKS_DIR, ROOT / "jtc_utils", REFERENCE)
    before = stat_digest(*watched)
    sub_before = stat_digest(subs)
    table = run_grader(subs, out)
    after = stat_digest(*watched)
    # a later command, grading the honest student alone: what the attackers did must not reach her
    alone_subs, alone_out = tmp_path_factory.mktemp("alone"), tmp_path_factory.mktemp("alone-grades")
    (alone_subs / "alice").mkdir()
    nbformat.write(submission(CORRECT), alone_subs / "alice" / f"{PAGE}.ipynb")
    alone = run_grader(alone_subs, alone_out)
    return {
        "table": table,
        "out": out,
        "subs": subs,
        "before": before,
        "after": after,
        "alone": alone,
        "sub_before": sub_before,
        "sub_after": stat_digest(subs),
    }


def test_every_attack_gets_no_point(attacked):
    table = attacked["table"]
    for name in attacks(attacked["out"], attacked["subs"]):
        mine = {ex: res for ex, res, _ in _rows(table, name)}
        assert mine.get(ONE_PAIR) in ("✗", "error"), (name, _rows(table, name))


def test_the_limits_stop_the_filler_and_the_hog(attacked):
    msg = {r["student"]: r["message"] for r in attacked["table"] if r["exercise"] == ONE_PAIR}
    assert "wrote more than 0.05 GB and was stopped" in msg["filler"], msg["filler"]  # many files: the watch
    assert "File too large" in msg["bigfile"], msg["bigfile"]  # one file: the file-size limit
    assert "MemoryError" in msg["hog"], msg["hog"]


def test_nothing_outside_the_sandbox_changes(attacked):
    before, after = attacked["before"], attacked["after"]
    changed = sorted(p for p in before if after.get(p) != before[p])  # rewritten, moved or removed
    # new files: none, but for the cache's entries, which tests running beside this one may add
    added = sorted(p for p in after if p not in before and not Path(p).is_relative_to(CACHE_DIR))
    assert changed == [] and added == [], (changed[:10], added[:10])
    assert attacked["sub_after"] == attacked["sub_before"]
    out = attacked["out"]
    assert sorted(p.name for p in out.iterdir()) == [
        grades_folder.KEPT,
        grades_folder.MARKER,
        grades_folder.REFERENCES,
        "feedback",
        "grades.csv",
        "grades.html",
    ]
    assert not (ROOT / "planted-by-ctypes").exists() and not (BOOK_DIR / "data" / "planted.db").exists()


def test_no_process_outlives_its_run(attacked):
    assert _leftovers() == []


def test_the_honest_student_is_graded_as_when_alone(attacked):
    together, alone = _rows(attacked["table"], "alice"), _rows(attacked["alone"], "alice")
    assert together == alone and [res for _, res, _ in alone] == ["✓", "✓"], (together, alone)


def test_the_kernel_sees_no_variable_and_no_path_of_the_grader(attacked):
    feedback = (attacked["out"] / "feedback" / "environ" / f"{PAGE}.ipynb").read_text(encoding="utf-8")
    assert "JTC_CACHE" in feedback  # the environment was printed ...
    assert SECRET[0] not in feedback and SECRET[1] not in feedback  # ... without the grader's own variables
    for path in (str(attacked["out"]), str(attacked["subs"]), str(ROOT)):
        assert path not in feedback, path
    table = attacked["table"]
    assert {r["sandbox"] for r in table} == {sandbox.NAME}


def test_the_solutions_are_not_readable(attacked):
    msg = {r["student"]: r["message"] for r in attacked["table"] if r["exercise"] == ONE_PAIR}
    assert "FileNotFoundError" in msg["reader"] or "PermissionError" in msg["reader"], msg["reader"]
