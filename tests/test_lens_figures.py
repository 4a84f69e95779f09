"""Figure-data regression for the lens chapter: every tiny-profile lens figure in book/data is recomputed through
jtc_utils.lenses and compared with tolerances suited to float noise; invariants are checked on the stored numbers;
the committed trained lenses must match the zoo and the corpus they claim to be trained on."""

import numpy as np
import pytest

from jtc_utils import figdata
from jtc_utils.lenses import artifacts, claims, figures, registry, train, tuned
from jtc_utils.paths import DATA_DIR

TINY = [f for f in figures.LENS_FIGURES if not f.startswith("real_") and (DATA_DIR / f"{f}.json").exists()]
R2_TOL = dict(rtol=1e-4, atol=2e-4)
SHARE_TOL = dict(rtol=0, atol=2e-3)  # means of 0/1 agreements: a near-tie flip moves them by 1/n
NATS_TOL = dict(rtol=1e-3, atol=1e-2)  # surprisals and KL: a near-tie top-1 flip moves a mean by ~20 nats / n


def test_every_lens_figure_has_its_data():
    assert set(TINY) | {"real_lens_table"} == set(figures.LENS_FIGURES)
    assert (DATA_DIR / "real_lens_table.json").exists()


def _compare_curves(a, b, where):
    for key, v in a.items():
        if key in ("layers", "params"):
            assert v == b[key], where
            continue
        tol = SHARE_TOL if key.startswith("p@") else R2_TOL if key == "r2" else NATS_TOL
        np.testing.assert_allclose(np.asarray(v, float), np.asarray(b[key], float), **tol, err_msg=f"{where} {key}")


@pytest.mark.parametrize("fig", TINY)
def test_lens_figure_data_is_reproduced(fig):
    stored = figdata.load(fig)
    p = stored["params"]
    data, params = figures.compute(fig, "tiny", seed=p["seed"])
    data = figdata._plain(data)
    s = stored["data"]
    if fig == "nnjtc_fig2":
        for key in ("r2_id", "r2_mat", "r2_njtc", "r2_nnjtc", "r2_to_last_njtc", "r2_to_last_nnjtc"):
            np.testing.assert_allclose(figdata.as_array(data[key]), figdata.as_array(s[key]), **R2_TOL, err_msg=key)
        for key in ("loss_ratio_min_njtc", "loss_ratio_min_nnjtc"):
            assert data[key] == pytest.approx(s[key], rel=1e-5)
    elif fig in ("nnjtc_fig3", "tl_grid"):
        for lab, c in data["curves"].items():
            _compare_curves(c, s["curves"][lab], lab)
    elif fig == "tl_cmp":
        for model, cs in data["models"].items():
            for lab, c in cs.items():
                _compare_curves(c, s["models"][model][lab], f"{model} {lab}")
    elif fig == "ext_nnjtc_rank":
        assert data["ranks"] == s["ranks"] and data["r90"] == s["r90"]
        for key in ("r2_rrr", "r2_arrr"):
            np.testing.assert_allclose(figdata.as_array(data[key]), figdata.as_array(s[key]), **R2_TOL)
        for key in ("p1_rrr", "p1_arrr", "p1_id"):
            np.testing.assert_allclose(figdata.as_array(data[key]), figdata.as_array(s[key]), **SHARE_TOL)
    elif fig == "lens_table":
        for lab, row in data["lenses"].items():
            assert row["params"] == s["lenses"][lab]["params"]
            _compare_curves({k: row[k] for k in ("p@1", "p@5", "p@10", "s_jtc", "s_n", "kl", "r2")},
                            s["lenses"][lab], lab)
            assert abs(row["exit"]["saved"]["saved"] - s["lenses"][lab]["exit"]["saved"]["saved"]) < 0.05
            np.testing.assert_allclose(row["exit"]["oracle"]["x"], s["lenses"][lab]["exit"]["oracle"]["x"],
                                       rtol=0, atol=5e-3)
    else:
        raise AssertionError(f"no comparison for {fig}")


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
    assert stored == figdata._plain(claims.all_claims())


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
