"""Bad notebook parameters get clear errors before any heavy work; an interrupted or failing run leaves nothing
half-written."""

import warnings

import pytest

from jtc_utils.book import runner
from jtc_utils.core import linear
from jtc_utils.core.experiment import Experiment
from jtc_utils.core.models import ModelUnavailableError
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


def test_failing_notebook_names_the_cell_and_writes_no_page(tmp_path, monkeypatch):
    nbdir, book = tmp_path / "notebooks", tmp_path / "book"
    nbdir.mkdir()
    (nbdir / "broken.py").write_text('# %% tags=["parameters"]\nprofile = "tiny"\n\n# %%\nx = 1\n\n'
                                     '# %%\nraise ValueError("boom")\n')
    point_book_at(monkeypatch, "NOTEBOOKS_DIR", nbdir)
    point_book_at(monkeypatch, "BOOK_DIR", book)
    with pytest.raises(runner.NotebookFailed,
                       match=r"notebook broken failed at cell 3 of 3 \(notebooks/broken.py, line 7\) \(ValueError: boom\)"):
        runner.execute("broken", timeout=120)
    assert not (book / "broken.ipynb").exists()
    assert (book / "_failed" / "broken.ipynb").exists()


def test_runner_strips_volatile_metadata_and_hides_injected_parameters(tmp_path, monkeypatch):
    nbdir, book = tmp_path / "notebooks", tmp_path / "book"
    nbdir.mkdir()
    (nbdir / "ok.py").write_text('# %% tags=["parameters"]\nprofile = "x"\n\n# %%\nprint(profile)\n')
    point_book_at(monkeypatch, "NOTEBOOKS_DIR", nbdir)
    point_book_at(monkeypatch, "BOOK_DIR", book)
    runner.execute("ok", profile="tiny", timeout=120)
    import nbformat

    nb = nbformat.read(book / "ok.ipynb", as_version=4)
    assert nb.metadata["papermill"] == {"parameters": {"profile": "tiny"}}
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "remove-cell" in injected[0].metadata["tags"]
    assert all("papermill" not in c.metadata and "execution" not in c.metadata for c in nb.cells)
    assert nb.cells[-1].outputs[0]["text"] == "tiny\n"
