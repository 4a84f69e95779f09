"""The FFN claims' instrument checks (issue 65): F10 is judged only against a classifier baseline that works, F7 only
where no single layer decides its margin, F1-F3 only under a labelling that reaches half of the tokens they count."""

import copy

import numpy as np
import pytest

from jtc_utils.evidence import claims, figdata
from jtc_utils.ffn import claims as ffn_claims

pytestmark = [pytest.mark.ffn]  # FFN sub-updates


def _get(**figs):
    return lambda f: figs[f] if f in figs else figdata.load(f)["data"]


def _classifiers(t6):
    return [v for k, v in t6["rules"].items() if k.startswith("classifier") and not k.endswith("shuffled")]


def test_f10_is_judged_only_against_a_classifier_that_works():
    t6 = copy.deepcopy(figdata.load("geva_tab6")["data"])
    stored = ffn_claims.check("F10", _get(geva_tab6=t6))
    assert stored["status"] != claims.NOT_JUDGED_STATUS and all(c["passed"] for c in stored["checks"])
    # a passing check says what it found, not why it would fail
    assert "at least the" in stored["checks"][0]["why"] and "says nothing" not in stored["checks"][0]["why"]
    # broken: classifiers no more accurate than a coin
    weak = copy.deepcopy(t6)
    for v in _classifiers(weak):
        v["accuracy"] = 0.5
    weak = ffn_claims.check("F10", _get(geva_tab6=weak))
    assert weak["status"] == claims.NOT_JUDGED_STATUS and "already final, on r+o) reaches 50.0%" in weak["reason"]
    # broken: accurate because they never exit, saving no more than the same classifiers trained on shuffled labels
    idle = copy.deepcopy(t6)
    for k, v in idle["rules"].items():
        if k.startswith("classifier") and not k.endswith("shuffled"):
            v.update({"share_saved": 0.0, "boot": idle["rules"][f"{k}, labels shuffled"]["boot"]})
    idle = ffn_claims.check("F10", _get(geva_tab6=idle))
    assert idle["status"] == claims.NOT_JUDGED_STATUS and "saves no more than one that sees nothing" in idle["reason"]


def test_an_exit_threshold_keeps_its_exits_right_at_the_precision_asked():
    """The thresholds are set layer by layer on held-out samples: among the samples still running, the lowest whose
    exits are right at least PRECISION of the time; a layer whose classifier sees nothing, below that base rate,
    lets out only the few its highest probabilities happen to get right; once exited, a sample is not counted again."""
    from jtc_utils.ffn import exit_rule

    rng = np.random.default_rng(0)
    n, L = 4000, 6
    sat = rng.integers(1, L + 1, n)
    y = [exit_rule.targets(sat, layer) for layer in range(1, L)]
    informative = [np.clip(yy + 0.6 * rng.standard_normal(n), 0, 1) for yy in y]
    blind = [rng.random(n) for _ in y]
    for p, works in ((informative, True), (blind, False)):
        t = exit_rule.calibrate(p, y)
        running, right, out = np.ones(n, bool), 0, 0
        for pp, yy, tt in zip(p, y, t):
            go = running & (pp >= tt)
            right, out, running = right + (go & yy).sum(), out + go.sum(), running & ~go
        if works:
            assert out > n / 4 and right / out >= exit_rule.PRECISION
        else:  # the base rate reaches 0.944 at no layer before the last: all but the luck of the highest few run on
            assert out < n / 100
    # the paper's calibration (best F1 per layer) exits a blind classifier's samples anyway
    t = exit_rule.calibrate(blind, y, "f1")
    assert all(np.isfinite(t)) and (blind[0] >= t[0]).mean() > 0.5
    with pytest.raises(ValueError, match="choose 'precision' or 'f1'"):
        exit_rule.calibrate(blind, y, "accuracy")


def test_the_exit_classifiers_learn_a_target_that_only_grows_with_depth():
    """The repaired baseline's labels: "the top-1 is already final" (sat <= l) holds for a sample from its saturation
    layer on, so a classifier that recognises it exits only where the prediction is the model's; the spec's
    "saturates at exactly this layer" holds at one layer per sample."""
    from jtc_utils.ffn import exit_rule

    sat = np.array([1, 3, 3, 6, 6, 6])
    final = np.stack([exit_rule.targets(sat, layer) for layer in range(1, 7)])
    assert (np.diff(final.astype(int), axis=0) >= 0).all()  # once final, final at every later layer
    assert (final.argmax(axis=0) + 1 == sat).all()  # first true at the saturation layer
    exact = np.stack([exit_rule.targets(sat, layer, "exact") for layer in range(1, 7)])
    assert (exact.sum(axis=0) == 1).all()
    with pytest.raises(ValueError, match="choose 'final' or 'exact'"):
        exit_rule.targets(sat, 1, "sat")


def test_f7_is_not_judged_where_one_layer_decides_it():
    d = copy.deepcopy(figdata.load("geva_fig3")["data"])
    L = len(d["mean"])
    late = L - max(1, int(round(0.25 * L)))
    d["mean"] = [0.5] * L
    d["min"] = [-1.0] * late + [-10.0] * (L - late)
    d["max"] = [2.0] * L
    d["random_max"], d["random_min"] = [1.5] * L, [-1.5] * L  # each layer's unit: a range of 3
    d.pop("boot")
    robust = ffn_claims.check("F7", _get(geva_fig3=d))
    assert robust["checks"][0]["passed"] and robust["status"] == "no interval" and robust["margin"] > 0
    d["mean"][3] = -0.2  # one early layer below zero: it alone turns the margin's sign
    one = ffn_claims.check("F7", _get(geva_fig3=d))
    assert one["status"] == claims.NOT_JUDGED_STATUS and "layer 3" in one["reason"]
    d["mean"][4] = -0.3  # two layers: leaving out either keeps the fail
    two = ffn_claims.check("F7", _get(geva_fig3=d))
    assert two["checks"][0]["passed"] and two["margin"] < 0
    assert two["margin"] == np.float64(-0.3 / 3.0)  # in the layer's unit (the random ten's range: 3)


def test_f7_reads_each_layer_in_its_own_unit_so_a_layer_a_hundred_times_larger_decides_nothing():
    """An early block whose scores are a hundred times the others' (SmolLM2's massive activation) has a raw minimum
    below every late one: read raw, the late minima would not be the most negative and F7 would fail; in each
    layer's unit (the random ten's range) that block is like the others and the late minima stand out."""
    d = copy.deepcopy(figdata.load("geva_fig3")["data"])
    L = len(d["mean"])
    late = L - max(1, int(round(0.25 * L)))
    d.pop("boot")
    d["mean"], d["max"] = [0.5] * L, [2.0] * L
    d["min"] = [-1.0] * late + [-10.0] * (L - late)
    d["random_max"], d["random_min"] = [1.5] * L, [-1.5] * L
    d["min"][2], d["random_max"][2], d["random_min"][2] = -100.0, 150.0, -150.0  # the same shape, 100 times larger
    scaled = ffn_claims.check("F7", _get(geva_fig3=d))
    assert scaled["margin"] > 0 and scaled["checks"][0]["passed"]
    raw = copy.deepcopy(d)
    raw["random_max"], raw["random_min"] = [0.5] * L, [-0.5] * L  # one unit for every layer: the raw scores
    assert ffn_claims.check("F7", _get(geva_fig3=raw))["margin"] < 0


def test_the_concept_claims_need_a_labelling_that_reaches_the_tokens():
    tab2 = copy.deepcopy(figdata.load("geva_tab2")["data"])
    model = tab2["models"][ffn_claims.GPT12]
    for k in ("values", "gaussian", "updates"):
        model[f"labelled_{k}"] = 0.2
    low = {cid: ffn_claims.check(cid, _get(geva_tab2=tab2)) for cid in ("F1", "F2", "F3")}
    assert all(r["status"] == claims.NOT_JUDGED_STATUS for r in low.values())
    assert all("20.0%" in r["reason"] for r in low.values())
    for k in ("values", "gaussian", "updates"):
        model[f"labelled_{k}"] = 0.8
    high = {cid: ffn_claims.check(cid, _get(geva_tab2=tab2)) for cid in ("F1", "F2", "F3")}
    assert all(r["status"] != claims.NOT_JUDGED_STATUS for r in high.values())
    assert ffn_claims.check("F4")["checks"] == []  # the final norm's overlap reads no labelling


def test_the_concept_claims_need_a_labelling_that_beats_its_shuffle():
    """The labelling control: F1-F3 are judged only where the values' coverage under the labelling is above their
    coverage with its classes shuffled among the tokens; a labelling no better than its shuffle makes them not judged,
    whatever the coverage."""
    tab2 = copy.deepcopy(figdata.load("geva_tab2")["data"])
    model = tab2["models"][ffn_claims.GPT12]
    model.update(values_shuffled=model["values"] / 3, p_values_vs_shuffled=0.0001)
    seeing = {cid: ffn_claims.check(cid, _get(geva_tab2=tab2)) for cid in ("F1", "F2", "F3")}
    assert all(
        any(c["name"] == "the labelling beats its shuffle" and c["passed"] for c in r["checks"])
        for r in seeing.values()
    )
    model.update(values_shuffled=model["values"], p_values_vs_shuffled=0.5)
    blind = {cid: ffn_claims.check(cid, _get(geva_tab2=tab2)) for cid in ("F1", "F2", "F3")}
    assert all(r["status"] == claims.NOT_JUDGED_STATUS for r in blind.values())
    assert all("blind to the tokens" in r["reason"] for r in blind.values())


def test_a_labelling_that_sees_the_tokens_beats_its_shuffle_and_a_random_one_does_not():
    """Lists made of one class's tokens: under the true classes every list is a concept, under the shuffled ones
    hardly any; a labelling that assigned the same class sizes at random does no better than its own shuffle."""
    from jtc_utils.ffn import concepts

    rng = np.random.default_rng(0)
    tc = {t: f"class{t // 50}" for t in range(1000)}  # 20 classes of 50 tokens
    shuffled = concepts.shuffled_labelling(tc, 0)
    assert sorted(shuffled.values()) == sorted(tc.values()) and shuffled != tc
    lists = [rng.choice(np.arange(50 * c, 50 * c + 50), 30, replace=False) for c in rng.integers(0, 20, 60)]
    true, shuf = concepts.coverage(lists, tc), concepts.shuffled_coverage(lists, tc, 0)
    assert true.mean() == 1.0 and shuf.mean() < 0.2
    assert concepts.permutation_p(true, shuf, n_perm=999) < 0.05
    blind = concepts.shuffled_labelling(tc, 99)  # classes given without looking at the tokens
    b_true, b_shuf = concepts.coverage(lists, blind), concepts.shuffled_coverage(lists, blind, 0)
    assert concepts.permutation_p(b_true, b_shuf, n_perm=999) > 0.05
