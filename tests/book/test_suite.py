"""`make test`'s driver (:mod:`jtc_utils.book.build.suite`): both phases always run, one summary of both, a non-zero
exit when either failed; the fast tier and one chapter's selection."""

from __future__ import annotations

import nbformat
import pytest

from jtc_utils.book.build import suite


def _notebook(path, stored: str) -> None:
    cell = nbformat.v4.new_code_cell(
        "print(1 + 1)",
        execution_count=1,
        metadata={"tags": ["nbval-check-output"]},
        outputs=[nbformat.v4.new_output("stream", text=stored)],
    )
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    book, tests = tmp_path / "book", tmp_path / "tests"
    book.mkdir()
    tests.mkdir()
    (tests / "test_one.py").write_text("def test_one():\n    assert True\n")
    monkeypatch.setattr(suite, "BOOK_DIR", book)
    monkeypatch.setattr(suite, "TESTS_DIR", tests)
    monkeypatch.setattr(suite, "LOGS", tmp_path / "logs")
    return book


@pytest.mark.slow
def test_a_failing_page_still_runs_the_tests_and_both_are_reported(tree, capfd):
    _notebook(tree / "good.ipynb", "2\n")
    _notebook(tree / "bad.ipynb", "3\n")  # the stored output the re-execution will not give
    assert suite.main(["--jobs", "1"]) == 1
    out = capfd.readouterr().out
    summary = out[out.index("summary of both phases") :]
    assert "pages: 1 failed, 1 passed" in summary and "tests: 1 passed" in summary
    assert "FAILED: pages phase" in summary and summary.rstrip().endswith("all: 2 passed, 1 failed")
    assert (tree.parent / "logs" / "pages.log").exists() and (tree.parent / "logs" / "tests.log").exists()


@pytest.mark.slow
def test_both_phases_passing_exit_zero(tree, capfd):
    _notebook(tree / "good.ipynb", "2\n")
    assert suite.main(["--jobs", "1", "--dispatch", "baseline"]) == 0
    out = capfd.readouterr().out
    assert "both phases passed" in out and out.rstrip().endswith("all: 2 passed, 0 failed")


def test_bad_arguments_are_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit):
        suite.main(["--pages", "no_such_page"])
    assert "unknown page(s) no_such_page; the pages are: " in capsys.readouterr().err
    with pytest.raises(SystemExit):
        suite.main(["--fast", "--pages", "ffn_subupdates"])


def test_one_chapter_selects_its_page_its_figures_and_its_papers_tests():
    ids = suite.chapter_tests(["ffn_subupdates"])
    files = [i for i in ids if "::" not in i]
    figures = {i.split("[")[1].rstrip("]") for i in ids if "::" in i}
    # the FFN chapter's tests, and the real vocabulary's concept classes it reads (a core module, marked ffn)
    assert files == [
        "tests/core/test_token_concepts.py",
        "tests/ffn/test_ffn.py",
        "tests/ffn/test_ffn_instruments.py",
        "tests/ffn/test_ffn_real.py",
    ]
    assert "geva_values" in figures and figures <= set(suite.page_figures("ffn_subupdates"))
    assert suite.page_papers("claims_verdicts") == set(suite.PAPERS)
    assert suite.page_papers("sec3_linear_shortcuts") == {"jtc"}


def test_every_test_file_of_a_paper_package_is_marked_with_its_paper():
    """The tests mirror the package's layers, one folder each: every test file in a paper package's folder is marked
    with that paper (so that `make test PAGES=...` finds it)."""
    marked = {
        p.relative_to(suite.TESTS_DIR).as_posix(): suite.test_papers(p)
        for p in sorted(suite.TESTS_DIR.rglob("test_*.py"))
    }
    for paper in suite.PAPERS:
        mine = [f for f in marked if f.startswith(f"{paper}/")]
        assert mine, f"no test folder for the {paper} package"
        assert all(paper in marked[f] for f in mine), {f: marked[f] for f in mine}


def test_the_baseline_dispatch_names_only_features_numpy_dispatches():
    from numpy._core._multiarray_umath import __cpu_dispatch__

    assert set(suite.baseline_dispatch().split()) <= set(__cpu_dispatch__)
    assert suite.default_jobs() >= 1 and suite.default_jobs(page_phase=False) >= 1
