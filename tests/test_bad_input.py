"""Bad notebook parameters get clear errors before any heavy work; an interrupted or failing run leaves nothing
half-written."""

import warnings
from pathlib import Path

import pytest

from jtc_utils.book.build import runner
from jtc_utils.core.analysis import linear
from jtc_utils.core.analysis.experiment import Experiment
from jtc_utils.core.models.models import ModelUnavailableError
from helpers import point_book_at


def test_unknown_model_domain_profile_and_sizes():
    with pytest.raises(ModelUnavailableError, match="unknown zoo model"):
        Experiment("tiny-gpt3")
    with pytest.raises(ValueError, match="unknown domain 'wikipedia' for profile 'tiny'"):
        Experiment("tiny-gpt2", "wikipedia")
    with pytest.raises(ValueError, match="unknown profile 'huge'"):
        Experiment("tiny-gpt2", profile="huge")
    with pytest.raises(ValueError, match="asked for 5000 news/validation sentences but the split has 1000"):
        Experiment("tiny-gpt2", "news", n_val=5000)


def test_fewer_training_samples_than_width_warns():
    exp = Experiment("tiny-gpt2", "news", n_train=20, n_val=20)
    assert len(exp.train) < exp.adapter.d
    with pytest.warns(linear.UnderdeterminedFitWarning):
        exp.layer_r2()


def test_enough_training_samples_do_not_warn():
    exp = Experiment("tiny-gpt2", "news", n_train=200, n_val=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linear.UnderdeterminedFitWarning)
        exp.layer_r2()


def a_book_of(tmp_path, monkeypatch, name: str, source: str) -> Path:
    """A book of one page, ``notebooks/<name>.py`` holding ``source``, in ``tmp_path``: its book folder."""
    nbdir, book = tmp_path / "notebooks", tmp_path / "book"
    nbdir.mkdir()
    (nbdir / f"{name}.py").write_text(source)
    point_book_at(monkeypatch, "NOTEBOOKS_DIR", nbdir)
    point_book_at(monkeypatch, "BOOK_DIR", book)
    return book


def test_failing_notebook_names_the_cell_and_writes_no_page(tmp_path, monkeypatch):
    book = a_book_of(
        tmp_path,
        monkeypatch,
        "broken",
        '# %% tags=["parameters"]\nprofile = "tiny"\n\n# %%\nx = 1\n\n# %%\nraise ValueError("boom")\n',
    )
    with pytest.raises(
        runner.NotebookFailed,
        match=r"notebook broken failed at cell 3 of 3 \(notebooks/broken.py, line 7\) "
        r"\(ValueError: boom\)",
    ):
        runner.execute("broken", timeout=120)
    assert not (book / "broken.ipynb").exists()
    assert (book / "_failed" / "broken.ipynb").exists()


def test_a_syntax_error_in_a_notebook_source_names_the_file_and_line(tmp_path, monkeypatch):
    a_book_of(tmp_path, monkeypatch, "broken", '# %% tags=["parameters"]\nprofile = "tiny"\n\n# %%\nx = (1,\n')
    with pytest.raises(SystemExit, match=r"^ERROR: .*broken\.py, line 5: .*fix the syntax error there") as e:
        runner.main(["--only", "broken", "--no-build"])
    assert "\n" not in str(e.value)


def test_a_page_runs_without_the_kernels_chatter(tmp_path, monkeypatch, capfd):
    a_book_of(tmp_path, monkeypatch, "quiet", '# %% tags=["parameters"]\nprofile = "tiny"\n\n# %%\nx = 1\n')
    runner.execute("quiet", timeout=120)
    err = capfd.readouterr().err
    assert "IPKernelApp" not in err and "KeyboardInterrupt caught" not in err, err


def test_runner_strips_volatile_metadata_and_hides_injected_parameters(tmp_path, monkeypatch):
    book = a_book_of(tmp_path, monkeypatch, "ok", '# %% tags=["parameters"]\nprofile = "x"\n\n# %%\nprint(profile)\n')
    runner.execute("ok", profile="tiny", timeout=120)
    import nbformat

    nb = nbformat.read(book / "ok.ipynb", as_version=4)
    assert nb.metadata["papermill"] == {"parameters": {"profile": "tiny"}}
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" in injected[0].metadata["tags"]
    assert all("papermill" not in c.metadata and "execution" not in c.metadata for c in nb.cells)
    assert nb.cells[-1].outputs[0]["text"] == "tiny\n"


def test_the_custom_book_refuses_bad_texts_and_small_sizes_before_the_model_loads(tmp_path, monkeypatch):
    """An empty, binary or wrongly encoded text and a size that a later page cannot run are refused among the
    arguments, before the plan loads the model (which took a minute); nothing is written."""
    from jtc_utils.book.custom import command as custom, plan as custom_plan

    monkeypatch.setattr(custom_plan, "plan", lambda *a, **k: pytest.fail("the plan ran: the model would load"))
    (tmp_path / "empty.txt").write_text("\n\n")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02 not text")
    (tmp_path / "latin.txt").write_bytes("Caf\xe9 au lait.".encode("latin-1"))
    for text, problem in (
        ("empty.txt", "holds no text"),
        ("binary.txt", "not a text file"),
        ("latin.txt", "not UTF-8"),
    ):
        with pytest.raises(SystemExit, match=f"--text: .*{problem}"):
            custom.main(["--model", str(tmp_path), "--text", str(tmp_path / text), "--out", str(tmp_path / "out")])
    (tmp_path / "ok.txt").write_text("One sentence here.\n\nAnother one there.\n")
    with pytest.raises(SystemExit, match=r"--sentences: must be at least 50 .*got 10"):
        custom.main(
            [
                "--model",
                str(tmp_path),
                "--text",
                str(tmp_path / "ok.txt"),
                "--sentences",
                "10",
                "--out",
                str(tmp_path / "out"),
            ]
        )
    assert not (tmp_path / "out").exists()


def test_the_custom_books_least_size_leaves_the_ffn_page_its_draws():
    from jtc_utils.book.custom import command as custom
    from jtc_utils.ffn import figures as ffn_figures

    assert custom.LEAST_SENTENCES // 5 >= ffn_figures.N_RANDOM
