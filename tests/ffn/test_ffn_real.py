"""The FFN paper's rules read the real model's figure ``real_geva`` through the stand-in figures' layout, so a
change in the real numbers moves the real verdict (concept coverage under the concept classes of the vocabulary
included), and the claim that needs classes with a sign says why it has none (the checks every paper shares are in
tests/evidence/test_real_verdicts.py)."""

import copy

import numpy as np
import pytest

from jtc_utils.evidence import claims, figdata, verdicts
from jtc_utils.ffn import claims as ffn_claims

pytestmark = [pytest.mark.ffn]  # FFN sub-updates


@pytest.fixture(scope="module")
def real():
    return figdata.load("real_geva")["data"]


def test_the_real_verdicts_move_with_the_real_numbers(real):
    """Move every saturation to the first layer (in the histogram and in every resample): F11's real margin becomes
    the first quarter's whole share, below zero, and the claim fails."""
    early = copy.deepcopy(real)
    n = int(np.sum(early["sat_hist"]))
    early["sat_hist"] = [0, n] + [0] * (len(early["sat_hist"]) - 2)
    early["boot"]["sat_hist"] = [[0, sum(row)] + [0] * (len(row) - 2) for row in early["boot"]["sat_hist"]]
    r = ffn_claims.check("F11", ffn_claims.real_getter(lambda f: early), "real")
    assert r["margin"] == pytest.approx(-1.0) and r["verdict"] == verdicts.FAILS
    assert ffn_claims.check("F11", ffn_claims.real_getter(lambda f: real), "real")["margin"] > -1


def test_the_concept_claims_read_the_real_concept_coverage(real):
    """Give the real values a coverage a quarter above their Gaussian vectors' (both counted with stopword patterns
    left out, as the updates are) at every layer and in every resample: with a labelling that reaches 40% of the
    tokens F1 and F3 are not judged; with one that reaches 90%, F1's real margin becomes that quarter and F3's floor
    is the smallest layer's coverage beyond the shuffled labelling's minus a fifth, both read from real_geva's
    concepts."""
    lifted = copy.deepcopy(real)
    c = lifted["concepts"]
    c["tab2"]["values_nostop"] = c["tab2"]["gaussian_nostop"] + 0.25
    c["tab2"]["boot"]["values_nostop"] = [g + 0.25 for g in c["tab2"]["boot"]["gaussian_nostop"]]
    for key, share in (("values", 0.5), ("values_shuffled", 0.1)):
        c["fig2"][key] = [share] * len(c["fig2"][key])
        c["fig2"]["boot"][key] = [[share] * len(row) for row in c["fig2"]["boot"][key]]
    for k in ("values", "gaussian", "updates"):  # a labelling that reaches too few tokens: not judged
        c["tab2"][f"labelled_{k}"] = 0.4
    for cid in ("F1", "F3"):
        assert ffn_claims.check(cid, ffn_claims.real_getter(lambda f: lifted), "real")["status"] == "not judged"
    for k in ("values", "gaussian", "updates"):  # a labelling that reaches the tokens: the claims are judged
        c["tab2"][f"labelled_{k}"] = 0.9
    get = ffn_claims.real_getter(lambda f: lifted)
    assert ffn_claims.check("F1", get, "real")["margin"] == pytest.approx(0.25)
    f3 = ffn_claims.check("F3", get, "real")
    assert f3["margin"] == pytest.approx(0.5 - 0.1 - verdicts.value("portion")) and f3["verdict"] == verdicts.HOLDS
    assert ffn_claims.check("F3", ffn_claims.real_getter(lambda f: real), "real")["margin"] != f3["margin"]


def test_the_extreme_clusters_are_the_real_models_and_say_they_are_per_block(real):
    r = ffn_claims.check("F8", ffn_claims.real_getter(lambda f: real), "real")
    assert r["verdict"] is not None and not real["extreme"]["global_clusters"] and "block by block" in r["ours"]
    wide = copy.deepcopy(real)
    wide["extreme"]["values_share"] = 0.5
    assert ffn_claims.check("F8", ffn_claims.real_getter(lambda f: wide), "real")["verdict"] == verdicts.FAILS


def test_steering_says_why_it_has_no_real_verdict(real):
    r = ffn_claims.check("F9", ffn_claims.real_getter(lambda f: real), "real")
    assert r["verdict"] is None and ffn_claims.REAL_ABSENT["ext_geva_steer"] in r["ours"]
    with pytest.raises(claims.NotComputed):
        ffn_claims.real_getter(lambda f: real)("ext_geva_steer")
