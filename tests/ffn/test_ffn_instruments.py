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


def test_f10_is_judged_only_against_a_classifier_that_works():
    t6 = copy.deepcopy(figdata.load("geva_tab6")["data"])
    for k, v in t6["rules"].items():
        if k.startswith("classifier"):
            v["accuracy"] = 0.5
    weak = ffn_claims.check("F10", _get(geva_tab6=t6))
    assert weak["status"] == claims.NOT_JUDGED_STATUS and "classifier reaches 50.0%" in weak["reason"]
    for k, v in t6["rules"].items():
        if k.startswith("classifier"):
            v["accuracy"] = 0.93
            v.pop("boot", None)
    working = ffn_claims.check("F10", _get(geva_tab6=t6))
    assert working["status"] != claims.NOT_JUDGED_STATUS and all(c["passed"] for c in working["checks"])
    assert working["margin"] == weak["margin"] or working["margin"] < weak["margin"]  # the rule reads the best


def test_f7_is_not_judged_where_one_layer_decides_it():
    d = copy.deepcopy(figdata.load("geva_fig3")["data"])
    L = len(d["mean"])
    late = L - max(1, int(round(0.25 * L)))
    d["mean"] = [0.5] * L
    d["min"] = [-1.0] * late + [-10.0] * (L - late)
    d["max"] = [2.0] * L
    d.pop("boot")
    robust = ffn_claims.check("F7", _get(geva_fig3=d))
    assert robust["checks"][0]["passed"] and robust["status"] == "no interval" and robust["margin"] > 0
    d["mean"][3] = -0.2  # one early layer below zero: it alone turns the margin's sign
    one = ffn_claims.check("F7", _get(geva_fig3=d))
    assert one["status"] == claims.NOT_JUDGED_STATUS and "layer 3" in one["reason"]
    d["mean"][4] = -0.3  # two layers: leaving out either keeps the fail
    two = ffn_claims.check("F7", _get(geva_fig3=d))
    assert two["checks"][0]["passed"] and two["margin"] < 0
    assert two["margin"] == np.float64(-0.3 / 3.0)  # in units of the layer's range of scores (max - min = 3)


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
