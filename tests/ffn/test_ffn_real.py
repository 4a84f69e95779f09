"""Issue 55, item 2 for the FFN paper: its rules read the real model's figure ``real_geva`` through the stand-in
figures' layout, so a change in the real numbers moves the real verdict, and the claims that need concept labels say
so (the checks every paper shares are in tests/evidence/test_real_verdicts.py)."""

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


@pytest.mark.parametrize("cid, why", [("F1", "geva_tab2"), ("F3", "geva_fig2"), ("F8", "clusters"),
                                      ("F9", "ext_geva_steer")])
def test_the_claims_that_need_concepts_or_clusters_say_why(real, cid, why):
    r = ffn_claims.check(cid, ffn_claims.real_getter(lambda f: real), "real")
    assert r["verdict"] is None and ffn_claims.REAL_ABSENT[why] in r["ours"]
    with pytest.raises(claims.NotComputed):
        ffn_claims.real_getter(lambda f: real)(why if why != "clusters" else "geva_tab2")
