"""Figure-data regression for the lens chapter: every tiny-profile lens figure in book/data is recomputed through
jtc_utils.lenses and compared with tolerances suited to float noise; invariants are checked on the stored numbers;
the committed trained lenses must match the zoo and the corpus they claim to be trained on."""

import pytest

from jtc_utils import figdata, profiles
from jtc_utils.lenses import artifacts, claims, figures, registry, train, tuned
from jtc_utils.lenses.base import StaleLensError
from jtc_utils.paths import DATA_DIR

TINY = [f for f in figures.LENS_FIGURES if not f.startswith("real_") and (DATA_DIR / f"{f}.json").exists()]


def test_every_lens_figure_has_its_data():
    assert set(TINY) | {"real_lens_table"} == set(figures.LENS_FIGURES)
    assert (DATA_DIR / "real_lens_table.json").exists()


def test_invariants_hold_on_the_stored_numbers():
    t = figdata.load("lens_table")["data"]
    L = t["n_layers"]
    for lab, row in t["lenses"].items():
        assert row["p@1"][L] == 1 and abs(row["kl"][L]) < 1e-9, lab  # every lens is the model at layer L
        assert all(a <= b + 1e-12 <= c + 2e-12 for a, b, c in zip(row["p@1"], row["p@5"], row["p@10"])), lab
        assert min(row["kl"]) >= -1e-9, lab
        oracle, rule = row["exit"]["oracle"], row["exit"]
        assert oracle["y"][0] == 1 and oracle["saved"]["saved"] >= rule["saved"]["saved"] - 1e-9, lab
    # least squares beats every other lens on r² where the objective and the form are its own
    for lab, row in t["lenses"].items():
        assert all(m >= r - 1e-9 for m, r in zip(t["lenses"]["mat+b"]["r2"], row["r2"])), lab
    f2 = figdata.load("nnjtc_fig2")["data"]
    assert min(f2["loss_ratio_min_njtc"], f2["loss_ratio_min_nnjtc"]) >= 1 - 1e-3


def test_lens_claims_on_the_claims_page_match_the_stored_numbers():
    stored = figdata.load("claims_lenses")["data"]
    assert stored == figdata.plain(claims.all_claims())


def test_every_trained_lens_the_book_uses_is_committed_for_the_current_zoo_and_corpus(monkeypatch):
    """A retrained zoo model or a new corpus must come with retrained lenses (python -m jtc_utils.lenses.train);
    otherwise the book would silently train them in the build. Every job of the training command for the zoo
    must find its stored lens (the real model's are checked by its chapter's build)."""
    from jtc_utils.experiment import Experiment

    monkeypatch.setattr(registry, "REQUIRE_ARTIFACTS", True)
    exps = {}
    for model, what, run in train.jobs(train.TUNED_MODELS):
        run(exps.setdefault(model, Experiment(model)))
    assert artifacts.key_of("tiny-gpt2-xl", "tuned_s0")["recipe"] == {k: v for k, v in tuned.RECIPE.items()}


def test_the_real_models_tuned_lens_is_trained_only_when_asked():
    """The real model's tuned lens costs hours of CPU (a GPU job): `python -m jtc_utils.lenses.train` trains it
    only with --real-tuned; its low-rank shortcuts are always in the job list."""
    plain = [what for model, what, _ in train.jobs([train.REAL_MODEL])]
    asked = [what for model, what, _ in train.jobs([train.REAL_MODEL], real_tuned=True)]
    assert plain == ["njtc", "nnjtc"] and asked == ["njtc", "nnjtc", "tuned"]


def test_the_real_models_tuned_lens_is_found_under_the_key_its_page_computes(monkeypatch):
    """The real model's tuned lens (a GPU job, committed in zoo/lenses) is found, never trained, for the lens
    chapter's experiment: at the full size under its own key, and on the tests' subset (the first n train sentences)
    as the lens trained on the whole split, which its record says."""
    from jtc_utils import book

    monkeypatch.setattr(registry, "REQUIRE_ARTIFACTS", True)
    hp = {"seed": 0}
    full = figures.experiment("real", "gpt48")
    stored = artifacts.key_of(train.REAL_MODEL, "tuned_s0")
    assert stored is not None and stored == registry.lens_key(full, "tuned", hp, tuned.RECIPE)
    assert registry.whole_split_key(full, "tuned", hp, tuned.RECIPE) is None  # it reads the whole split
    n_train, n_val = book.real_sizes(*profiles.REAL_SUBSET) if not book.real_sizes()[0] else book.real_sizes()
    sub = figures.experiment("real", "gpt48", n_train, n_val)
    assert registry.lens_key(sub, "tuned", hp, tuned.RECIPE) != stored
    assert registry.whole_split_key(sub, "tuned", hp, tuned.RECIPE) == stored
    ln = figures.lens(sub, "tuned")
    assert ln.record["n_train"] == len(full.train) > len(sub.train)
    assert ln.M.shape == (full.n_layers, full.adapter.d, full.adapter.d)
    # other train samples (another seed draws other positions) find no lens: an error, not a CPU training run
    other = figures.experiment("real", "gpt48", n_train, n_val, seed=1)
    assert registry.whole_split_key(other, "tuned", hp, tuned.RECIPE) != stored
    with pytest.raises(StaleLensError, match="jtc_utils.lenses.train"):
        figures.lens(other, "tuned")
    monkeypatch.setattr(registry, "REQUIRE_ARTIFACTS", False)  # the book's own setting: still refused, not trained
    with pytest.raises(StaleLensError, match="not trained in the build"):
        figures.lens(other, "tuned")


def test_the_real_models_lens_key_does_not_depend_on_where_the_checkout_is(tmp_path, monkeypatch):
    """The converted real model records the absolute path of its package file (SOURCE.json, config.json's
    _name_or_path); the key of a committed lens must not, or every other checkout misses the lens and retrains it."""
    import json
    import shutil

    from jtc_utils import models, real_models

    ad = models.adapter(train.REAL_MODEL)
    here = registry.lens_model_identity(ad)
    folder = real_models.folder(train.REAL_MODEL)
    moved = tmp_path / folder.name
    moved.mkdir()
    for f in folder.iterdir():
        (moved / f.name).symlink_to(f) if f.name == "model.safetensors" else shutil.copy(f, moved / f.name)
    (moved / "SOURCE.json").write_text(json.dumps({"gguf": "/elsewhere/x.gguf", "sha256": real_models.spec(
        train.REAL_MODEL).sha256}))
    cfg = json.loads((moved / "config.json").read_text())
    (moved / "config.json").write_text(json.dumps({**cfg, "_name_or_path": "/elsewhere"}, indent=1))
    monkeypatch.setattr(real_models, "folder", lambda name, progress=None: moved)
    assert registry.lens_model_identity(ad) == here
    (moved / "config.json").write_text(json.dumps({**cfg, "vocab_size": cfg["vocab_size"] + 1}))
    assert registry.lens_model_identity(ad) != here  # what defines the model still counts


def _captions(page: str) -> dict:
    """figure data id -> the caption text of the stored page's figure that links it."""
    import html as html_lib
    import re

    import nbformat

    from jtc_utils.paths import BOOK_DIR

    out = {}
    for c in nbformat.read(BOOK_DIR / f"{page}.ipynb", as_version=4).cells:
        for o in c.get("outputs", []):
            h = o.get("data", {}).get("text/html", "")
            for cap in re.findall(r"<figcaption.*?</figcaption>", "".join(h), re.S):
                for fig in re.findall(r"data/([\w-]+)\.json", cap):
                    out[fig] = html_lib.unescape(re.sub(r"<[^>]+>", "", cap))
    return out


def test_the_lens_captions_say_what_the_figures_show():
    """A caption says what is drawn: the models of the tuned-lens comparison are the figure's own (BERT-style ones
    among them), and the r² heatmaps' caption reads their colour map the way it runs."""
    from jtc_utils.lenses import plots

    caps = _captions("lenses")
    models = figdata.load("tl_cmp")["data"]["models"]
    assert all(m in caps["tl_cmp"] for m in models) and "GPT-style" not in caps["tl_cmp"]
    assert plots.R2_COLOURS in caps["nnjtc_fig2"] and "brighter" not in caps["nnjtc_fig2"]
