"""Issue 55, item 3 for the linearity paper: its rules read the real model's figure ``real_sl`` through the stand-in
figures' layout, so a change in the real numbers moves the real verdict (the checks every paper shares are in
tests/evidence/test_real_verdicts.py)."""

import copy

import numpy as np
import pytest

from jtc_utils.evidence import claims, figdata, verdicts
from jtc_utils.linearity import claims as sl_claims

pytestmark = [pytest.mark.linearity]  # the linearity paper


@pytest.fixture(scope="module")
def real():
    return figdata.load("real_sl")["data"]


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
