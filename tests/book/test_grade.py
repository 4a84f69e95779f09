"""The grader (`make grade`, :mod:`jtc_utils.book.classroom.grade`) on a class of submissions of a one-second page
(``tests/book/grading/minipage.py``, two of the book's exercises): a correct one, a blank one, a wrong one, one that
raises, one with a syntax error, an infinite loop, one that deletes and edits its check cells, files that are not
notebooks, one that writes outside its folder, one that reads the solutions, one that starts a process."""

import csv
import hashlib
import json
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest

from jtc_utils.book.classroom import grade, grading_run, report, sandbox, student
from jtc_utils.core.infra.paths import BOOK_DIR, ROOT, ZOO_DIR

pytestmark = [pytest.mark.pages, pytest.mark.slow]  # a class's submissions executed

REFERENCE = Path(__file__).parent / "grading"
PAGE = "minipage"
ONE_PAIR, WORLD = "ex-sec3-one-pair", "ex-world-check"
CORRECT = {ONE_PAIR: "answer = float(r2[2, 4])", WORLD: "answer = int((check['mat'] > check['id'])[:-1].sum())"}
OUTSIDE = ROOT / "book" / "data" / "graded-by-a-student.json"

# student -> (answers by exercise, what else the submission does to its notebook)
CLASS = {
    "correct": (CORRECT, None),
    "blank": ({}, None),
    "wrong": ({ONE_PAIR: "answer = 0.123", WORLD: "answer = 3"}, None),
    "raises": ({ONE_PAIR: "answer = 1 / 0", WORLD: CORRECT[WORLD]}, None),
    "syntax": ({ONE_PAIR: "answer = (", WORLD: CORRECT[WORLD]}, None),
    "loops": ({ONE_PAIR: "while True:\n    pass", WORLD: CORRECT[WORLD]}, None),
    "tampers": ({ONE_PAIR: "answer = 0.123", WORLD: "answer = 0"}, "tamper"),
    "writes": (
        {
            ONE_PAIR: f"open({str(OUTSIDE)!r}, 'w').write('{{}}')\nanswer = float(r2[2, 4])",
            WORLD: "open('../outside.txt', 'w').write('x')\nanswer = 1",
        },
        None,
    ),
    "peeks": (
        {
            ONE_PAIR: f"answer = open({str(REFERENCE / (PAGE + '.py'))!r}).read()",
            WORLD: f"answer = len(open({str(ROOT / 'notebooks' / 'sec3_linear_shortcuts.py')!r}).read())",
        },
        None,
    ),
    "spawns": (
        {ONE_PAIR: "import subprocess\nanswer = subprocess.run(['true']).returncode", WORLD: CORRECT[WORLD]},
        None,
    ),
    # rebinds every name its check cells read (the figure's numbers, the page's `check`) to agree with a wrong answer
    "rebinds": (
        {
            ONE_PAIR: "r2 = np.full((9, 9), 0.123)\nanswer = 0.123",
            WORLD: "check = {'mat': np.ones(4), 'id': np.zeros(4)}\nanswer = 3",
        },
        None,
    ),
}
EXPECTED = {
    "correct": {ONE_PAIR: "✓", WORLD: "✓"},
    "blank": {ONE_PAIR: "✗", WORLD: "✗"},
    "wrong": {ONE_PAIR: "✗", WORLD: "✗"},
    "raises": {ONE_PAIR: "error", WORLD: "✓"},
    "syntax": {ONE_PAIR: "error", WORLD: "✓"},
    "loops": {ONE_PAIR: "error", WORLD: "✓"},
    "tampers": {ONE_PAIR: "✗", WORLD: "✗"},
    "writes": {ONE_PAIR: "error", WORLD: "error"},
    "peeks": {ONE_PAIR: "error", WORLD: "error"},
    "spawns": {ONE_PAIR: "error", WORLD: "✓"},
    "rebinds": {ONE_PAIR: "✗", WORLD: "✗"},
}


def submission(answers: dict, change=None):
    nb = student.strip(jupytext.read(REFERENCE / f"{PAGE}.py"))
    cells = []
    for cell in nb.cells:
        label = cell.metadata.get("exercise")
        if label and "answer" in cell.metadata.get("tags", []) and label in answers:
            cell.source = answers[label]
        if change == "tamper" and label and "check" in cell.metadata.get("tags", []):
            if label == ONE_PAIR:
                continue  # deleted
            cell.source = f'print("✓ {label}: correct")'  # edited to pass
        if change == "tamper" and label == ONE_PAIR and "answer" in cell.metadata.get("tags", []):
            # the figure's numbers rewritten to agree with the wrong answer, as the page writes them (figdata.save
            # would import torch and transformers for the environment's versions: seconds, past the answer cells'
            # time limit on a loaded machine, which made this a timeout instead of a tampering)
            cell.source += (
                "\n(figdata.output_dir() / 'fig23.json').write_text(json.dumps("
                "{'figure': 'fig23', 'data': {'r2_mat': np.full((9, 9), 0.123).tolist()}}))"
            )
        if change == "tamper" and "import numpy" in cell.source:
            cell.source += "\ncheck = {'mat': np.zeros(4), 'id': np.zeros(4)}\nr2 = np.full((9, 9), 0.123)"
        cells.append(cell)
    nb.cells = cells
    return nb


def tree_digest(*folders) -> str:
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file() and "_build" not in p.parts:
                h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    subs = tmp_path_factory.mktemp("submissions")
    for name, (answers, change) in CLASS.items():
        (subs / name).mkdir()
        nbformat.write(submission(answers, change), subs / name / f"{PAGE}.ipynb")
    (subs / "garbled").mkdir()
    (subs / "garbled" / f"{PAGE}.ipynb").write_text("this is not JSON")
    (subs / "garbled" / "essay.docx").write_bytes(b"PK\x03\x04")
    (subs / "stray.ipynb").write_text("{}")
    (subs / "absent").mkdir()  # a student who handed in nothing
    before = tree_digest(BOOK_DIR, ZOO_DIR, REFERENCE)
    out = tmp_path_factory.mktemp("grades")
    # answer cells here take milliseconds; 15 s (the infinite loop's cost) leaves a loaded machine room
    # in the sandbox where the machine has one (tests/book/test_grade_attacks.py needs it); the behaviour graded here
    # is the same without
    box = grade.choose_box(isolate=sandbox.available() is not None)
    rows = grade.grade(subs, out, reference=REFERENCE, timeout=300, cell_timeout=15, progress=False, box=box)
    return rows, out, subs, before


def test_every_submission_gets_the_result_its_answers_earn(graded):
    rows, *_ = graded
    got = {}
    for r in rows:
        got.setdefault(r.student, {})[r.exercise] = r.result
    for name, expected in EXPECTED.items():
        assert got[name] == expected, (name, [r for r in rows if r.student == name])


def test_a_failing_submission_says_why(graded):
    rows, *_ = graded
    msg = {(r.student, r.exercise): r.message for r in rows}
    assert msg[("raises", ONE_PAIR)].startswith("ZeroDivisionError")
    assert msg[("syntax", ONE_PAIR)].startswith("SyntaxError")
    assert "ran past" in msg[("loops", ONE_PAIR)]
    assert "no answer yet" in msg[("blank", ONE_PAIR)]
    assert "within" in msg[("wrong", ONE_PAIR)]  # the check's own hint
    # judged against this run's figure (1e-3 away from the book's), not the book's and not one the submission wrote
    assert msg[("correct", ONE_PAIR)].startswith("✓") and msg[("tampers", ONE_PAIR)].startswith("✗")
    for key in (("writes", ONE_PAIR), ("writes", WORLD), ("peeks", ONE_PAIR), ("peeks", WORLD), ("spawns", ONE_PAIR)):
        assert msg[key].startswith("PermissionError: grading:"), (key, msg[key])


def test_files_that_are_not_notebooks_are_recorded_and_grading_goes_on(graded):
    rows, *_ = graded
    bad = {(r.student, r.page): r for r in rows if r.student in ("garbled", report.LOOSE)}
    assert bad[("garbled", PAGE)].result == "error" and "not a notebook" in bad[("garbled", PAGE)].message
    assert bad[("garbled", "essay.docx")].result == "error"
    assert (
        "student's folder" in bad[(report.LOOSE, "stray.ipynb")].message
        and "graded for nobody" in bad[(report.LOOSE, "stray.ipynb")].message
    )


def test_an_empty_folder_is_a_student_with_nothing_and_a_loose_file_is_no_student(graded):
    rows, *_ = graded
    assert [(r.result, r.message) for r in rows if r.student == "absent"] == [
        ("error", "no notebook in this student's folder")
    ]
    t = report.totals(rows)
    assert t["absent"] == (0, 0) and report.LOOSE not in t and "stray.ipynb" not in t
    assert len(t) == len(CLASS) + 2  # the class, the garbled one and the absent one


def test_a_submission_that_rebinds_what_a_check_reads_gets_no_point(graded):
    rows, *_ = graded
    msg = {(r.student, r.exercise): r.message for r in rows if r.student == "rebinds"}
    assert all(m.startswith("✗") for m in msg.values()), msg


def test_grading_changes_nothing_in_the_book_the_zoo_or_the_submissions(graded):
    rows, out, subs, before = graded
    assert not OUTSIDE.exists()
    assert not (subs / "outside.txt").exists() and not (out / "outside.txt").exists()
    assert tree_digest(BOOK_DIR, ZOO_DIR, REFERENCE) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".grade-")]  # working copies removed


def test_the_grade_table_and_the_feedback_notebooks_are_written(graded):
    rows, out, *_ = graded
    assert (out / "grades.csv").read_bytes().startswith(b"\xef\xbb\xbf")  # a BOM: a spreadsheet reads UTF-8
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        table = list(csv.DictReader(f))
    assert [(t["student"], t["exercise"], t["result"]) for t in table] == [
        (r.student, r.exercise, r.result) for r in rows
    ]
    assert report.totals(rows)["correct"] == (2, 2) and report.totals(rows)["blank"] == (0, 2)
    html = (out / "grades.html").read_text(encoding="utf-8")
    assert "<td>correct</td><td>2</td><td>2</td>" in html
    for who, want in (("correct", ("✓", "✓")), ("wrong", ("✗", "✗")), ("raises", ("error", "✓"))):
        path = out / "feedback" / who / f"{PAGE}.ipynb"
        text = path.read_text(encoding="utf-8")
        fb = nbformat.read(path, as_version=4)
        verdicts = [c.source for c in fb.cells if c.metadata.get("grading") == "verdict"]
        assert [v.split("**")[1].split(": ")[1] for v in verdicts] == list(want), (who, verdicts)
        assert grading_run.KERNEL_NAME not in text and "recorded for grading" not in text  # no grader's cell
        for path_of_the_grader in (str(ROOT), str(out), "/tmp/", str(Path.home())):
            assert path_of_the_grader not in text, (who, path_of_the_grader)
        answers = [c.source for c in fb.cells if "answer" in c.metadata.get("tags", [])]
        assert answers == [CLASS[who][0].get(ONE_PAIR, ""), CLASS[who][0].get(WORLD, "")]
    hint = [
        c.source
        for c in nbformat.read(out / "feedback" / "wrong" / f"{PAGE}.ipynb", as_version=4).cells
        if c.metadata.get("grading") == "verdict"
    ][0]
    assert "within" in hint  # the check's own hint, beside the verdict


def test_answers_travel_as_plain_json():
    for value in (
        3,
        0.25,
        "wiki",
        None,
        True,
        (1, 2),
        [1.5, 2.5],
        {"a", "b"},
        {"x": (1, 2)},
        {(1, 2): 3},
        np.float64(0.5),
        np.arange(3),
        np.int64(7),
    ):
        back = grade.decode(json.loads(json.dumps(grade.encode(value))))
        expected = value.tolist() if hasattr(value, "tolist") else value
        assert back == expected and type(back) is type(expected), (value, back)
    with pytest.raises(TypeError, match="cannot be graded"):
        grade.encode(object())


def test_every_check_cell_of_the_book_is_found_by_the_grader():
    """Each exercise of the student edition with a check has its answer cell and a check call the grader can
    rewrite, on every page."""
    from jtc_utils.book.build.runner import notebook_names
    from jtc_utils.core.infra.paths import NOTEBOOKS_DIR

    n = 0
    for name in notebook_names():
        ref = grade.reference_page(name, NOTEBOOKS_DIR)
        nb, labels = grade.graded_notebook(ref, ref, "pass")
        checks = [c for c in ref.cells if "check" in c.metadata.get("tags", [])]
        assert labels == [c.metadata["exercise"] for c in checks]
        assert all(grading_run.check_call(c.source)[0] == c.metadata["exercise"] for c in checks)
        assert all(
            f"{grading_run.KERNEL_NAME}.record(" in c.source for c in nb.cells if c.metadata.get("grading") == "record"
        )
        # a student's run records the answer alone: nothing a check compares with is read from the student's kernel;
        # the numbers the page passes to a check are recorded only in the grader's reference run
        student_run = [c.source for c in nb.cells if c.metadata.get("grading") == "record"]
        assert all(
            f"{grading_run.KERNEL_NAME}.record({c.metadata['exercise']!r}, answer)" in s
            for c, s in zip(checks, student_run)
        ), name
        with_data = [grading_run.check_call(c.source)[2] for c in checks]
        reference_run = grade.graded_notebook(ref, ref, "pass", with_data=True)[0]
        recorded = [c.source for c in reference_run.cells if c.metadata.get("grading") == "record"]
        assert all((f", data={d})" in s) == bool(d) for d, s in zip(with_data, recorded)), name
        n += len(labels)
    assert n >= 30


def test_bad_folders_are_refused_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="not a folder"):
        grade.grade(tmp_path / "missing", tmp_path / "out", reference=REFERENCE)
    (tmp_path / "subs").mkdir()
    with pytest.raises(ValueError, match="is empty"):
        grade.grade(tmp_path / "subs", tmp_path / "out", reference=REFERENCE)
    (tmp_path / "subs" / "ann").mkdir()
    with pytest.raises(ValueError, match="inside the book"):
        grade.grade(tmp_path / "subs", BOOK_DIR / "grades", reference=REFERENCE)
    assert not (BOOK_DIR / "grades").exists()


def test_without_a_sandbox_grading_refuses_in_one_line_unless_the_risk_is_accepted(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "available", lambda: None)
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    nbformat.write(submission(CORRECT), tmp_path / "subs" / "ann" / f"{PAGE}.ipynb")
    with pytest.raises(SystemExit) as e:
        grade.main([str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--reference", str(REFERENCE)])
    assert "install bubblewrap (apt-get install bubblewrap)" in str(e.value) and "--no-sandbox" in str(e.value)
    assert "\n" not in str(e.value) and not (tmp_path / "out").exists()
    box = grade.choose_box(isolate=False)
    assert box.name == grade.UNSANDBOXED and not box.isolated
    report.write_tables([report.Row("ann", PAGE, ONE_PAIR, "✓", "")], tmp_path / "out", box)
    assert "Not sandboxed" in (tmp_path / "out" / "grades.html").read_text(encoding="utf-8")
    with open(tmp_path / "out" / "grades.csv", newline="", encoding="utf-8-sig") as f:
        assert [r["sandbox"] for r in csv.DictReader(f)] == [grade.UNSANDBOXED]


def test_the_reference_run_is_the_books_page_with_the_books_solutions():
    """The references come from the book's own solutions (trusted code), one per exercise with a check."""
    for name in ("sec3_linear_shortcuts", "sec6_submodules", "secretly_linear"):
        sol = grade.answer_cells(grade.solutions(name))
        ref = grade.reference_page(name)
        checked = [c.metadata["exercise"] for c in ref.cells if "check" in c.metadata.get("tags", [])]
        assert sorted(sol) == sorted(checked) and all("answer" in src for src in sol.values()), name
        nb, labels = grade.graded_notebook(ref, grade.solutions(name), "pass", with_data=True)
        timed = [c for c in nb.cells if c.metadata.get("grading") == "answer"]
        assert not timed and labels == checked  # the book's solutions run without an answer cell's time limit
