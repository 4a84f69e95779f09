"""Figure-data regression, one test for every paper: each tiny-profile figure in book/data is recomputed through
jtc_utils and compared quantity by quantity within the tolerance its measured noise gives
(jtc_utils.book.build.regression, tests/noise.json). `make test` executes the pages first; a figure they wrote in this
session (with the stored parameters) is compared as written, instead of being computed a second time. The invariants of
each paper's numbers stay with its own test file."""

import importlib
import json
import os
import time

import numpy as np
import pytest

from jtc_utils.book.build import regression
from jtc_utils.evidence import figdata
from jtc_utils.evidence.registry import get as registered
from jtc_utils.core.analysis import experiment
from jtc_utils.jtc import seeds

TARGETS = regression.targets()
# the pages' re-execution began: `make test` runs them in a pytest run of their own before this one and says when it
# started (JTC_PAGES_SINCE); run alone, this session's collection (a figure written after it is this session's)
STARTED = float(os.environ.get("JTC_PAGES_SINCE") or time.time())


def test_every_recomputed_figure_and_quantity_has_a_measured_spread():
    nz = regression.noise()
    missing = [n for n in TARGETS if n not in nz["figures"]]
    assert not missing, f"measure them with `python benchmarks/noise.py`: {missing}"
    for name in TARGETS:
        measured = nz["figures"][name]
        # a resampled mean (".../boot/...") is compared with the spread of the mean it resamples, a derived statistic
        # with its sources'
        quantities = {
            m for q in regression.bucketed(figdata.load(name)["data"]) for m in regression.measured_names(q, measured)
        }
        assert quantities == set(measured), name


@pytest.mark.pages
@pytest.mark.slow
@pytest.mark.parametrize("name", TARGETS)
def test_figure_data_is_reproduced(name):
    # what this session's re-execution of the pages wrote (make test runs them first), else computed here
    got = regression.executed(name, STARTED)
    how = "as the pages' re-execution wrote it" if got is not None else "recomputed"
    got = regression.recompute(name) if got is None else got
    bad = regression.compare(name, got, figdata.load(name)["data"])
    assert not bad, f"{name} ({how}):\n" + "\n".join(bad)


# each paper: its claims module and the file its chapter stores the claims' records in
PAPERS = {"jtc": "claims", "lenses": "claims_lenses", "ffn": "claims_ffn", "linearity": "claims_linearity"}


@pytest.mark.parametrize("paper", PAPERS)
def test_every_figure_a_paper_registers_has_its_data(paper):
    figs = [f for f, r in registered().figures.items() if r.paper == paper and not r.on_demand]
    assert figs, f"{paper} registers no figure"
    missing = [f for f in figs if not figdata.exists(f)]
    assert not missing, f"run the {paper} chapter: {missing} have no numbers in book/data"


@pytest.mark.parametrize("paper", PAPERS)
def test_a_papers_stored_claims_are_judged_again_from_the_stored_numbers(paper):
    """Every claim of the paper, judged again from book/data, gets the verdict its chapter stored."""
    module = importlib.import_module(f"jtc_utils.{paper}.claims")
    # the JTC stand-in's verdicts combine its seed-0 records with the replicas' (jtc_utils.jtc.seeds)
    records = seeds.all_claims() if paper == "jtc" else module.all_claims()
    assert [r["id"] for r in records] == list(module.CLAIMS)
    assert all(r["verdict"] in ("holds", "fails", "undecided", None) for r in records)
    stored = {r["id"]: r for r in figdata.load(PAPERS[paper])["data"]}
    assert [(r["id"], r["verdict"], r["holds"]) for r in records] == [
        (r["id"], stored[r["id"]]["verdict"], stored[r["id"]]["holds"]) for r in records
    ]


def test_no_tolerance_is_looser_than_ten_times_its_spread_without_a_reason():
    nz = regression.noise()
    for name in TARGETS:
        params = figdata.load(name)["params"]
        stored = regression.bucketed(figdata.load(name)["data"])
        for q, m in nz["figures"][name].items():
            tol, why = regression.tolerance(name, q, m, params, stored[q])
            if tol > regression.MARGIN * m["err"]:
                assert why in ("float32 floor", "two decisions of n flipped", "two decisions flipped"), (name, q, why)


def _perturbed(name, bucket, err):
    """``name``'s stored data with every value of ``bucket`` (a quantity, or its values above 1 in magnitude) moved
    by ``err`` (in the units of regression.spread: absolute up to 1, relative above)."""
    data = json.loads(json.dumps(figdata.load(name)["data"]))
    quantity, large = bucket.removesuffix(regression.LARGE), bucket.endswith(regression.LARGE)

    def move(x, path):
        if isinstance(x, dict):
            return {k: move(v, f"{path}/{k}" if path else k) for k, v in x.items()}
        if (
            isinstance(x, list)
            and x
            and all(isinstance(v, (dict, str, list)) and not regression.is_numeric(v) for v in x)
        ):
            return [move(v, f"{path}[]") for v in x]
        if isinstance(x, list):
            return [move(v, path) for v in x]
        if path == quantity and isinstance(x, float) and (abs(x) > 1) == large:
            return x + err * max(1.0, abs(x))
        return x

    return move(data, "")


# three of the four figure-data differences that another machine showed (issue 31; the fourth, the exit-rule
# classifiers', is made stable instead: see test_the_exit_rule_classifiers_ignore_float_noise), each against the
# tolerance that failed on it then: the old tolerance rejects the difference, the measured one accepts it, and a
# difference far beyond the measured spread is still a regression
REPORTED = [
    ("fig21", "early/mat/x" + regression.LARGE, 0.011, lambda e, v: e <= 5e-3),  # atol 5e-3
    (
        "sample_size_gpt48",
        "r2_mat" + regression.LARGE,
        0.39 / 163,
        lambda e, v: e * abs(v) <= 1e-4 * abs(v) + 2e-4,
    ),  # rtol 1e-4, atol 2e-4
    ("sl_fig5", "cos-0-seed-0/accuracy", 4.3e-4, lambda e, v: e <= 1e-4 * abs(v) + 1e-6),  # rtol 1e-4
]


@pytest.mark.parametrize("name,bucket,err,old_accepts", REPORTED, ids=[r[0] for r in REPORTED])
def test_the_differences_another_machine_showed_are_noise_and_a_regression_is_not(name, bucket, err, old_accepts):
    stored = figdata.load(name)["data"]
    values = [v for v in regression.bucketed(stored)[bucket] if isinstance(v, float)]
    worst = max(values, key=abs) if name == "sample_size_gpt48" else values[0]
    assert not old_accepts(err, worst), "the old tolerance accepted it: the case is not the reported one"
    measured = regression.noise()["figures"][name]
    assert regression.compare(name, _perturbed(name, bucket, err), stored, measured) == []
    tol, _ = regression.tolerance(name, bucket, measured[bucket], figdata.load(name)["params"], values)
    far = _perturbed(name, bucket, 3 * tol)
    assert regression.compare(name, far, stored, measured), "a change of three tolerances went unnoticed"


def test_the_well_conditioned_r2_keeps_its_own_tolerance():
    # the ill-conditioned r² of the sample-size curve (fewer vectors than dimensions) must not loosen the others
    measured = regression.noise()["figures"]["sample_size_gpt48"]
    params = figdata.load("sample_size_gpt48")["params"]
    small, _ = regression.tolerance("sample_size_gpt48", "r2_mat", measured["r2_mat"], params)
    large, _ = regression.tolerance(
        "sample_size_gpt48", "r2_mat" + regression.LARGE, measured["r2_mat" + regression.LARGE], params
    )
    assert small < large / 10
    assert regression.compare(
        "sample_size_gpt48",
        _perturbed("sample_size_gpt48", "r2_mat", 3 * small),
        figdata.load("sample_size_gpt48")["data"],
        measured,
    )


def test_an_ill_conditioned_r2_is_compared_to_its_own_magnitude():
    # fewer vectors than dimensions: an r² of -163 moves in its fourth digit; one of 0.5 must not move like that
    assert regression.spread([-163.39], [-163.0])["err"] == pytest.approx(0.39 / 163)
    assert regression.spread([0.5 + 0.39], [0.5])["err"] == pytest.approx(0.39)
    assert regression.spread([0.5], [None])["err"] == float("inf")
    assert regression.spread(["a"], ["b"])["err"] == float("inf")


def test_a_share_may_flip_two_decisions_and_no_more():
    m = {"err": 0.0, "scale": 0.8, "n": 1, "exact": False}
    tol, why = regression.tolerance("fig4", "curves/mat/p@1", m, {"n_val": 3000})
    assert tol == pytest.approx(2 / 3000) and why == "two decisions of n flipped"
    # n from the stored values when the parameters do not give it: shares of 7,013 probe tokens
    assert regression.share_denominator([4778 / 7013, 5314 / 7013]) == 7013
    assert regression.share_denominator([0.123456789]) is None
    tol, _ = regression.tolerance("fig4", "r2_mat", m, {"n_val": 3000})
    assert tol == regression.FLOOR_REL  # not a share: no step floor


@pytest.mark.slow
def test_the_exit_rule_classifiers_ignore_float_noise(monkeypatch):
    """geva_tab6's classifiers moved by 0.004 on another machine and by 0.03 under another BLAS kernel while they
    stopped L-BFGS at its default tolerance; solved to the optimum, states perturbed by float32 noise give the same
    accuracy and layers saved."""
    import numpy as np

    from jtc_utils.ffn import exit_rule

    exp = experiment.for_role("tiny", "gpt24", seed=0)
    te = exit_rule.split_summary(exp, "validation")
    base = exit_rule.fit_classifier_exit(exp, "o", 0)  # fitted here, not read from the cache
    rng = np.random.default_rng(0)
    features = exit_rule.classifier_features

    def noisy(exp, split, what):
        for F in features(exp, split, what):
            yield (F * (1 + 1e-6 * rng.standard_normal(F.shape))).astype(F.dtype)

    monkeypatch.setattr(exit_rule, "classifier_features", noisy)
    again = exit_rule.fit_classifier_exit(exp, "o", 0)
    a, b = exit_rule.score_exit(base["exit_layer"], te["top1"]), exit_rule.score_exit(again["exit_layer"], te["top1"])
    assert again is not base and a["accuracy"] == b["accuracy"] and a["saved"] == b["saved"]


@pytest.mark.slow
def test_the_exit_rule_classifiers_are_fitted_once(tmp_path, monkeypatch):
    from jtc_utils.core.infra import cache
    from jtc_utils.ffn import exit_rule

    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    exp = experiment.for_role("tiny", "gpt24", seed=0)
    fits = []
    fit = exit_rule.fit_classifier_exit
    monkeypatch.setattr(exit_rule, "fit_classifier_exit", lambda *a: fits.append(a[1:]) or fit(*a))
    first = exit_rule.classifier_exit(exp, "r")
    again = exit_rule.classifier_exit(exp, "r")
    assert fits == [("r", 0, exit_rule.TARGET, False)]
    assert {k: first[k] for k in ("accuracy", "saved", "exit_hist", "thresholds")} == {
        k: again[k] for k in ("accuracy", "saved", "exit_hist", "thresholds")
    }
    exit_rule.classifier_exit(exp, "r", seed=1)
    assert fits == [("r", 0, exit_rule.TARGET, False), ("r", 1, exit_rule.TARGET, False)]


def test_a_count_of_decisions_may_move_by_two():
    m = {"err": 0.0, "scale": 1594, "n": 1, "exact": True}
    assert regression.tolerance("geva_tab4", "events/saturation/events", m, {}) == (2.0, "two decisions flipped")
    assert regression.spread([1596], [1594], counts=True)["err"] == 2
    # a structural integer (a layer count) reproduced exactly must stay exact
    assert regression.tolerance("fig4", "n_layers", {"err": 0.0, "scale": 12, "n": 1, "exact": True}, {})[0] == 0


def test_the_pages_figures_are_used_only_when_written_in_this_session_with_the_stored_parameters(tmp_path, monkeypatch):
    monkeypatch.setenv("JTC_DATA_OUT", str(tmp_path))
    stored = figdata.load("fig22")
    f = tmp_path / "fig22.json"
    f.write_text(json.dumps({**stored, "data": {"marker": 1}}))
    since = f.stat().st_mtime
    assert regression.executed("fig22", since) == {"marker": 1}
    assert regression.executed("fig22", since + 10) is None  # written before this session
    f.write_text(json.dumps({**stored, "params": {**stored["params"], "seed": 7}, "data": {"marker": 1}}))
    assert regression.executed("fig22", 0) is None  # other parameters
    assert regression.executed("fig23", 0) is None  # not written


@pytest.mark.slow
def test_the_submodule_predictions_are_computed_once(tmp_path, monkeypatch):
    """Section 6's per-sample predictions (a run of the blocks above every start layer, then a readout) are cached
    on disk like section 4's: a second execution of the page (the student edition after `make student`) reads them."""
    from jtc_utils.core.infra import cache
    from jtc_utils.core.analysis import submodules

    exp = experiment.shared("tiny-gpt2", "encyclopedia")
    exp.predictions  # noqa: B018 (section 4's predictions, from the book's cache, before the cache moves)
    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    runs = []
    compute = submodules._per_sample
    monkeypatch.setattr(submodules, "_per_sample", lambda *a: runs.append(a[3]) or compute(*a))
    first = submodules.per_sample(exp, start_layers=[0, 3])
    again = submodules.per_sample(exp, start_layers=[3, 0, 3])
    assert runs == [[0, 3]]
    for m in (*submodules.MAPPINGS, "mat"):
        np.testing.assert_array_equal(first["top1"][m], again["top1"][m])
        np.testing.assert_array_equal(first["precision"][m][1], again["precision"][m][1])
    p1 = first["precision"]["mat_attn"][1]  # [L+1, n]: layers not started from are NaN
    assert np.isnan(p1[1]).all() and not np.isnan(p1[3]).any()
    submodules.per_sample(exp, start_layers=[1])
    assert runs == [[0, 3], [1]]
