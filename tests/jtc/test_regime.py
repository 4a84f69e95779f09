"""The paper's statistical regime: vectors per dimension, the sample-size curve and the claims at the paper's ratio."""

import numpy as np
import pytest

from jtc_utils.core.analysis.experiment import Experiment
from jtc_utils.jtc import regime, rejudge

pytestmark = [pytest.mark.jtc]  # the JTC paper's package


def test_paper_ratios_follow_the_paper_widths():
    assert regime.paper_ratio("gpt2") == pytest.approx(9000 / 768)
    assert regime.paper_ratio("tiny-gpt2-xl") == pytest.approx(9000 / 1600)  # through the stand-in's paper name
    assert regime.paper_n_train("tiny-gpt2-xl", 96) == 540
    assert regime.paper_n_train("tiny-bert-large", 64) == round(9000 / 1024 * 64)


def test_an_unknown_model_names_the_known_ones():
    with pytest.raises(ValueError, match="gpt2-xl"):
        regime.paper_ratio("not-a-model")


@pytest.fixture(scope="module")
def small():
    exp = Experiment("tiny-gpt2", n_train=400, n_val=200)
    return exp, regime.sample_size_curve(exp, ratios=(0.5, 2, 4))


def test_the_curve_ends_at_the_experiments_own_fit(small):
    exp, c = small
    L = exp.n_layers
    assert c["n_train"] == sorted(c["n_train"]) and c["n_train"][-1] == len(exp.train) == 400
    assert c["n_train"][:3] == [24, 96, 192]  # 0.5, 2 and 4 vectors per dimension of 48
    np.testing.assert_allclose(c["r2_mat"][-1], exp.layer_r2()["r2_mat"][:L, L], atol=1e-9)
    p1 = exp.predictions["precision"]["mat"][1][:L].mean(1)  # maps stored in float32: a token may flip
    np.testing.assert_allclose(c["p1_mat"][-1], p1, atol=3 / len(exp.val))


def test_below_one_vector_per_dimension_mat_interpolates_its_training_set(small):
    _, c = small
    np.testing.assert_allclose(c["r2_mat_train"][0], 1.0, atol=1e-6)
    assert np.mean(c["r2_mat"][0]) < np.mean(c["r2_mat"][-1])  # and generalises worse than with 400


def test_crossing_is_the_size_from_which_mat_stays_ahead():
    curve = {"ratio": [0.5, 1, 2, 4], "r2_mat": [[-1.0, 0.2], [0.5, 0.1], [0.1, 0.3], [0.6, 0.2]], "r2_id": [0.4, 0.9]}
    assert regime.crossing(curve) == [4, None]


def test_the_regime_getter_computes_a_figure_at_the_papers_ratio():
    results = {}
    get = regime.regime_getter(results)
    data = get("fig22")  # r² on the stand-in of GPT-2 (d = 48): 9000 / 768 · 48 vectors
    assert results["fig22"] is data and data["n_train"] == round(9000 / 768 * 48)
    assert get("fig22") is data  # computed once


def test_summary_reads_the_papers_ratio_and_the_full_set(small):
    exp, c = small
    rows = regime.summary(c)
    assert [r["vectors"] for r in rows] == ["paper's ratio", "all"]
    assert rows[0]["n_train"] == 400  # the paper's 562 vectors for d = 48 are capped at the 400 there are
    assert rows[1]["r2 mat (held-out)"] == pytest.approx(np.mean(c["r2_mat"][-1]))


def test_compare_sets_the_verdicts_of_both_regimes_side_by_side():
    def rec(cid, verdict, ours):
        return {"id": cid, "verdict": verdict, "resampled": True, "kind": "claim", "ours": ours, "rule": "r"}

    full = [rec("C1", "holds", "a"), rec("C2", "fails", "b")]
    reg = [rec("C1", "fails", "c"), rec("C2", "fails", "d")]
    t = regime.compare(full, reg)
    assert list(t.index) == ["C1", "C2"]
    assert t.loc["C1", "at 9,000"] != t.loc["C1", "at the paper's ratio"]
    assert t.loc["C2", "ours at the paper's ratio"] == "d"


def test_a_smaller_experiment_has_the_first_samples_of_the_full_one():
    """What the regime's figures rely on: n_train = n takes the first n of the 9,000 samples, positions included."""
    full, part = Experiment("tiny-gpt2-xl"), Experiment("tiny-gpt2-xl", n_train=540)
    assert part.train.texts == full.train.texts[:540]
    np.testing.assert_array_equal(part.train.positions, full.train.positions[:540])


def test_the_plot_draws_one_panel_per_model_and_refuses_an_unknown_measure(small):
    import matplotlib

    matplotlib.use("Agg")
    _, c = small
    fig = regime.plot_curves([c, c], "p1")
    assert len(fig.axes) == 2 and fig.axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="'r2' or 'p1'"):
        regime.plot_curves([c], "r3")


def test_the_rejudged_figures_are_named_as_the_claims_page_saves_them():
    """The recomputed figures of both settings under their book/data names, in a total order (setting, then id)."""
    r = rejudge.Rejudged(
        [],
        {"fig4": {"a": 1}, "fig2": {"a": 2}},
        {"fig4": {"p": 1}, "fig2": {"p": 2}},
        {},
        {"tiny-gpt2-xl-seed2": {"fig2": {"b": 1}}, "tiny-gpt2-xl-seed1": {"fig5": {"b": 2}}},
        {"tiny-gpt2-xl-seed2": {"fig2": {"q": 1}}, "tiny-gpt2-xl-seed1": {"fig5": {"q": 2}}},
    )
    assert list(r.figures()) == ["regime_fig2", "regime_fig4", "seed1_fig5", "seed2_fig2"]
    assert r.figures()["seed2_fig2"] == ({"b": 1}, {"q": 1})


def test_the_sample_size_captions_say_what_every_line_is():
    """Issue 66, item 7: the caption named the dotted lines but not the solid black one (the stand-in's own ratio);
    the number of training vectors it names is the figure's own."""
    from jtc_utils.evidence import figdata

    d = figdata.load("sample_size_gpt12")
    for view in regime.DRAWINGS["sample_size_gpt12"].values():
        see = view.caption(d["data"], d["params"]).see
        assert "solid black line" in see and f"{d['data']['n_full']:,} training vectors" in see
