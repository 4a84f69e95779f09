"""The classroom edition: every page has at least three exercises, every checkable answer has a check that the
book's own solution passes and a blank or wrong answer fails, and `make student` removes every solution."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

from jtc_utils.book.display import exercises

from jtc_utils.book.build import runner, staleness

from jtc_utils.book.classroom import student
from jtc_utils.core.infra.paths import BOOK_DIR, NOTEBOOKS_DIR
from jtc_utils.evidence.registry import get as registered
from helpers import point_book_at

CHECK_CALL = re.compile(r'^exercises\.check\("([^"]+)"', re.M)
LABEL = re.compile(r"^:label: (\S+)", re.M)


def _source(name):
    return jupytext.read(NOTEBOOKS_DIR / f"{name}.py")


def _labels(nb) -> list[str]:
    return [m for c in nb.cells if c.cell_type == "markdown" for m in LABEL.findall(c.source)]


@pytest.mark.parametrize("name", runner.notebook_names())
def test_every_page_has_three_exercises_each_with_a_solution(name):
    nb = _source(name)
    labels = _labels(nb)
    assert len(labels) >= 3, f"{name} has {len(labels)} exercises"
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for label in labels:
        assert re.search(r"\{solution(-start)?\}\s+" + re.escape(label), text), f"{label} has no solution"


def test_every_check_in_the_book_is_registered_and_every_registered_check_is_used():
    used = {
        m
        for name in runner.notebook_names()
        for c in _source(name).cells
        if c.cell_type == "code"
        for m in CHECK_CALL.findall(c.source)
    }
    assert used == set(registered().exercise_checks)


# pages computing numbers the checks cannot read from book/data pass them; a stand-in for those here
_DATA = {"ex-world-check": {"check": {"mat": [0.2, 0.5, 1.0], "id": [0.1, 0.6, 1.0]}}}


@pytest.mark.parametrize("label", sorted(registered().exercise_checks))
def test_a_blank_or_wrong_answer_fails(label, capsys):
    assert not exercises.check(label, None)
    assert "no answer yet" in capsys.readouterr().out
    assert not exercises.check(label, "a wrong answer", data=_DATA.get(label))
    assert "✗" in capsys.readouterr().out


def test_numbers_a_check_cannot_find_are_asked_for_by_name():
    with pytest.raises(ValueError, match="pass data="):
        exercises.check("ex-world-check", 3)
    with pytest.raises(ValueError, match="no check for exercise"):
        exercises.check("ex-nowhere", 1)


def test_the_world_check_counts_layers():
    assert exercises.check("ex-world-check", 1, data=_DATA["ex-world-check"])
    assert not exercises.check("ex-world-check", 2, data=_DATA["ex-world-check"])


@pytest.mark.parametrize("name", runner.notebook_names())
def test_the_books_own_solutions_pass_their_checks(name):
    """In the executed page every check cell printed ✓ (nbval re-runs these cells and compares)."""
    nb = json.loads((BOOK_DIR / f"{name}.ipynb").read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and CHECK_CALL.search(src):
            out = "".join("".join(o.get("text", "")) for o in cell["outputs"])
            assert out.startswith("✓"), f"{name}: {src} printed {out!r}"
            assert "nbval-check-output" in cell["metadata"].get("tags", [])


def test_the_student_edition_has_no_solutions_and_open_answers(tmp_path):
    paths, kept = student.build(tmp_path / "student")
    assert [p.stem for p in paths] == runner.notebook_names() and kept == []
    for p in paths:
        nb = json.loads(p.read_text())
        source = _source(p.stem)
        n_solutions = sum("solution" in c.metadata.get("tags", []) for c in source.cells)
        cells = nb["cells"]
        assert not any("solution" in c["metadata"].get("tags", []) for c in cells)
        text = "\n".join("".join(c["source"]) for c in cells)
        assert "{solution" not in text and "```{exercise" not in text
        # no MyST that Jupyter shows raw: directives, roles, anchors of the built book
        md = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert not re.search(r"```\{|\{glue:|\{cite:|href=\"#figure-", md), p.stem
        assert all("".join(c["source"]).strip() for c in cells if c["cell_type"] == "code"), f"{p.stem}: an empty cell"
        answers = [c for c in cells if "answer" in c["metadata"].get("tags", [])]
        assert len(answers) == n_solutions and all("answer = None" in "".join(c["source"]) for c in answers)
        assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code")
        # the check cells stay, and each follows its open answer cell
        assert len(CHECK_CALL.findall(text)) == sum(len(CHECK_CALL.findall(c.source)) for c in source.cells)
        assert all(f"Exercise `{label}`" in text for label in _labels(source))


def test_the_student_edition_labels_each_answer_with_its_check_and_runs_the_real_model_small(tmp_path):
    paths, _ = student.build(tmp_path / "student")
    for p in paths:
        nb = json.loads(p.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        for i, c in enumerate(code):
            if "check" in c["metadata"].get("tags", []):
                label = CHECK_CALL.search("".join(c["source"])).group(1)
                assert c["metadata"]["exercise"] == label and c["metadata"]["editable"] is False
                assert code[i - 1]["metadata"].get("exercise") == label  # the answer cell right before it
                assert "answer" in code[i - 1]["metadata"]["tags"]
        params = "".join(next(c["source"] for c in code if "parameters" in c["metadata"].get("tags", [])))
        if any("real_n_train = None" in c.source for c in _source(p.stem).cells):
            assert f"real_n_train = {student.STUDENT_SIZES[0]}" in params, p.stem
            assert f"real_n_val = {student.STUDENT_SIZES[1]}" in params, p.stem
            assert "**Student edition.**" in "".join(nb["cells"][1]["source"]), p.stem  # says what full size costs


def test_rebuilding_the_student_edition_keeps_a_students_work(tmp_path):
    out = tmp_path / "student"
    paths, _ = student.build(out)
    page = paths[0]
    nb = json.loads(page.read_text())
    cell = next(c for c in nb["cells"] if "answer" in c["metadata"].get("tags", []))
    cell["source"] = "answer = 42"
    page.write_text(json.dumps(nb))
    written, kept = student.build(out)
    assert kept == [page] and page not in written and "answer = 42" in page.read_text()
    written, kept = student.build(out, replace=True)
    assert kept == [] and page in written and "answer = 42" not in page.read_text()


def test_an_untouched_notebook_of_an_older_edition_is_replaced(tmp_path):
    out = tmp_path / "student"
    paths, _ = student.build(out)
    page = paths[0]
    nb = nbformat.read(page, as_version=4)
    nb.cells[0].source = "# an older edition's cell"  # the edition changed, the student did not touch it
    nb.metadata["jtc_student"]["edition"] = student.digest(nb)
    nbformat.write(nb, page)
    written, kept = student.build(out)
    assert page in written and kept == [] and "an older edition" not in page.read_text()


@pytest.mark.slow
def test_the_fill_executes_each_page_once_and_again_when_its_inputs_change(tmp_path, monkeypatch):
    import papermill

    monkeypatch.setattr(student, "FILL_RECORD", "fill-test.json")
    monkeypatch.setattr("jtc_utils.core.infra.paths.CACHE_DIR", tmp_path)
    ran = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda src, dst, **kw: ran.append(Path(src).stem))
    first = student.fill(progress=False)
    assert ran == runner.notebook_names() and set(first) == set(ran)
    ran.clear()
    assert student.fill(progress=False) == {} and ran == []
    real = staleness.inputs_fingerprint
    point_book_at(
        monkeypatch, "inputs_fingerprint", lambda name, p: real(name, p) + ("x" if name == "sec5_early_exit" else "")
    )
    student.fill(progress=False)
    assert ran == ["sec5_early_exit"]


def test_no_stored_page_echoes_a_checks_value():
    """A check prints its verdict; as a cell's last line it shows nothing more (the reader saw a stray `True` after
    each check before)."""
    echoed = []
    for name in runner.notebook_names():
        for i, c in enumerate(nbformat.read(BOOK_DIR / f"{name}.ipynb", as_version=4).cells):
            if c.cell_type == "code" and CHECK_CALL.search(c.source):
                echoed += [
                    f"{name} cell {i}: {o['data'].get('text/plain')}"
                    for o in c.get("outputs", [])
                    if o.get("output_type") == "execute_result"
                ]
    assert not echoed, echoed


def test_no_stored_page_prints_numpy_reprs():
    """Numbers in outputs read as numbers: `0.827`, never `np.float64(0.827)`."""
    raw = []
    for name in runner.notebook_names():
        for i, c in enumerate(nbformat.read(BOOK_DIR / f"{name}.ipynb", as_version=4).cells):
            for o in c.get("outputs", []):
                text = "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                if re.search(r"np\.(float|int)\d+\(", text):
                    raw.append(f"{name} cell {i}: {text[:80]}")
    assert not raw, raw


@pytest.mark.parametrize("name", runner.notebook_names())
def test_between_two_exercises_only_their_checks(name):
    """After an exercise's solution and before the next exercise, with no prose between them, the only code is the
    check of the exercise before (section 3 had a stray ``exp = ...`` there); check cells are tagged so that the
    rendered page shows their code, not the book's own verdict."""
    cells = _source(name).cells
    for i, cell in enumerate(cells):
        if cell.cell_type != "markdown" or "{solution-end}" not in cell.source:
            continue
        j = i + 1
        while j < len(cells) and cells[j].cell_type == "code":
            j += 1
        if j < len(cells) and "{exercise-start}" in cells[j].source:
            for c in cells[i + 1 : j]:
                assert CHECK_CALL.search(c.source), f"{name}: a code cell between two exercises: {c.source[:80]!r}"
    for c in cells:
        if c.cell_type == "code" and CHECK_CALL.search(c.source):
            assert "remove-output" in c.metadata.get("tags", []), f"{name}: {c.source[:60]!r}"


@pytest.mark.parametrize("name", runner.notebook_names())
def test_a_directive_option_stands_on_its_own_line(name):
    """A MyST directive's option line (``:label: ex-...``, ``:class: note``) holds the option and its value only:
    text run onto it (a rewrap of the prose did so once) turns a label into an undefined one and an admonition's
    body into its class, silently for the class."""
    nb = jupytext.read(NOTEBOOKS_DIR / f"{name}.py")
    bad = [
        line
        for c in nb.cells
        if c.cell_type == "markdown"
        for line in c.source.splitlines()
        if re.match(r"^:(label|class|name):", line) and len(line.split()) != 2
    ]
    assert not bad, bad
