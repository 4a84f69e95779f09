"""Issue 55, item 1 for the lens papers: the real model's figures at every layer, read by the same rules, and a change
in them moves the real verdict (the checks every paper shares are in tests/evidence/test_real_verdicts.py)."""

import copy

import numpy as np
import pytest

from jtc_utils.evidence import claims, figdata, verdicts
from jtc_utils.lenses import claims as lens_claims

pytestmark = [pytest.mark.lenses]  # the lens bench


def test_figure_2_says_why_it_has_no_real_counterpart():
    records = {r["id"]: r for r in lens_claims.all_claims(claims.profile_getter("real_"), "real")}
    for cid in ("N6", "N7"):  # Figure 2 needs every pair of layers trained
        assert lens_claims.REAL_ABSENT["nnjtc_fig2"] in records[cid]["ours"], cid


def test_the_real_figures_are_the_real_models_at_every_layer():
    for fig in ("real_nnjtc_fig3", "real_tl_grid"):
        rec = figdata.load(fig)
        assert rec["params"]["profile"] == "real" and rec["params"]["model"] == "smollm2-135m", fig
        c = rec["data"]["curves"]
        assert c["id"]["layers"] == list(range(31)), fig
    ex = figdata.load("real_lens_exit")
    assert ex["params"]["profile"] == "real" and ex["params"]["n_val"] == 300
    for lab, row in ex["data"]["lenses"].items():  # an exit curve needs every layer: the oracle ends at layer 30
        assert max(row["exit"]["oracle"]["x"]) <= ex["data"]["n_layers"] == 30, lab


def test_the_real_verdicts_move_with_the_real_numbers():
    """Give the tuned lens the logit lens's KL at every layer (in the numbers and every resample): T1's real margin
    becomes zero, on neither side, and the claim no longer holds."""
    grid = copy.deepcopy(figdata.load("real_tl_grid")["data"])
    c = grid["curves"]
    c["tuned"]["kl"] = list(c["id"]["kl"])
    c["tuned"]["boot"]["kl"] = copy.deepcopy(c["id"]["boot"]["kl"])
    base = claims.profile_getter("real_")
    r = lens_claims.check("T1", lambda f: grid if f == "tl_grid" else base(f), "real")
    assert r["margin"] == 0 and r["verdict"] == verdicts.UNDECIDED
    assert np.isfinite(lens_claims.check("T1", base, "real")["margin"])
