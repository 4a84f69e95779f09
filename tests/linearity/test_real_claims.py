"""Issue 55, item 3 and 4 for the linearity paper: its claims judged on the real model by the same rules, read from
the real model's figure ``real_sl`` (every record computed from it; a claim without a real verdict says why)."""

import copy

import numpy as np
import pytest

from jtc_utils.evidence import claims, figdata, verdicts
from jtc_utils.linearity import claims as sl_claims

JUDGED = ("S2", "S3", "S4")  # the claims with a shape part that need no training of the real model (S1 gives a magnitude)


@pytest.fixture(scope="module")
def real():
    return figdata.load("real_sl")["data"]


@pytest.fixture(scope="module")
def records(real):
    return {r["id"]: r for r in sl_claims.all_claims(sl_claims.real_getter(lambda f: real), "real")}


def test_the_stored_real_records_are_the_rules_on_the_stored_real_figure(records):
    stored = {r["id"]: r for r in figdata.load("claims_linearity_real")["data"]}
    assert list(stored) == list(sl_claims.CLAIMS) == list(records)
    for cid, r in records.items():
        s = stored[cid]
        assert (r["verdict"], r["holds"], r.get("resamples")) == (s["verdict"], s["holds"], s.get("resamples")), cid
        if r["margin"] is not None:
            assert r["margin"] == pytest.approx(s["margin"], rel=1e-9, abs=1e-12), cid


def test_the_claims_that_need_no_training_are_judged_on_sentence_resamples(records):
    for cid in JUDGED:
        r = records[cid]
        assert r["verdict"] in (verdicts.HOLDS, verdicts.FAILS, verdicts.UNDECIDED), (cid, r["ours"])
        assert r["resampled"] and r["resamples"] == ["sentences"], cid


def test_a_claim_without_a_real_verdict_says_why(records):
    for cid, r in records.items():
        if r["verdict"] is None:  # in words on the claims page: why there is none
            said = claims.shape_verdict(r)
            assert said.startswith(("no verdict: ", "not computed on this profile")), (cid, said)
            assert len(said) > len("no verdict: ") + 10, (cid, said)
    for fig, why in sl_claims.REAL_ABSENT.items():
        assert why, fig
    # S5-S10 read figures the real model does not have: each gets the reason of the first it reads
    for cid in ("S5", "S6", "S7", "S8", "S9", "S10"):
        assert records[cid]["verdict"] is None
        assert any(why in records[cid]["ours"] for why in sl_claims.REAL_ABSENT.values()), cid


def test_the_real_verdicts_move_with_the_real_numbers(real):
    """Flatten the U of the real model's profile without the residual (every pair at the mid-depth minimum, in the
    numbers and in every resample): S3's real margin becomes the rule's threshold below zero."""
    flat = copy.deepcopy(real)
    p = flat["paper"]
    low = float(np.min(p["nores_in"]))
    p["nores_in"] = [low] * len(p["nores_in"])
    p["boot"]["nores_in"] = [[low] * len(row) for row in p["boot"]["nores_in"]]
    r = sl_claims.check("S3", sl_claims.real_getter(lambda f: flat), "real")
    assert r["margin"] == pytest.approx(-verdicts.value("substantially"))
    assert r["verdict"] == verdicts.FAILS


def test_a_figure_the_real_model_lacks_is_refused_with_its_reason(real):
    get = sl_claims.real_getter(lambda f: real)
    with pytest.raises(claims.NotComputed, match="pretrain"):
        get("sl_fig4")
    assert set(get("sl_fig1")) == {real["model"]}
