"""Issue 55, items 1 and 4 for the lens papers: N-NJTC's and the tuned lens's claims judged on the real model by the
same rules, read from its figures ``real_nnjtc_fig3``, ``real_tl_grid`` and ``real_lens_table`` (every record
computed from them; a claim without a real verdict says why)."""

import copy

import numpy as np
import pytest

from jtc_utils.evidence import claims, figdata, verdicts
from jtc_utils.lenses import claims as lens_claims

JUDGED = ("N1", "N2", "N3", "N4", "N5", "T1", "T2", "T3", "H1")  # the claims whose figures the real model has


@pytest.fixture(scope="module")
def records():
    return {r["id"]: r for r in lens_claims.all_claims(claims.profile_getter("real_"), "real")}


def test_the_stored_real_records_are_the_rules_on_the_stored_real_figures(records):
    stored = {r["id"]: r for r in figdata.load("claims_lenses_real")["data"]}
    assert list(stored) == list(lens_claims.CLAIMS) == list(records)
    for cid, r in records.items():
        s = stored[cid]
        assert (r["verdict"], r["holds"], r.get("resamples")) == (s["verdict"], s["holds"], s.get("resamples")), cid
        if r["margin"] is not None:
            assert r["margin"] == pytest.approx(s["margin"], rel=1e-9, abs=1e-12), cid


def test_the_claims_the_real_figures_hold_are_judged_on_validation_resamples(records):
    for cid in JUDGED:
        r = records[cid]
        assert r["verdict"] in (verdicts.HOLDS, verdicts.FAILS, verdicts.UNDECIDED), (cid, r["ours"])
        assert r["resampled"] and r["resamples"] == [verdicts.VALIDATION], cid


def test_a_claim_without_a_real_verdict_says_why(records):
    for cid, r in records.items():
        if r["verdict"] is None:
            said = claims.shape_verdict(r)
            assert said.startswith(("no verdict: ", "not computed on this profile")), (cid, said)
    for cid in ("N6", "N7"):  # Figure 2 needs every pair of layers trained
        assert lens_claims.REAL_ABSENT["nnjtc_fig2"] in records[cid]["ours"], cid


def test_the_real_figures_are_the_real_models_at_every_layer():
    for fig in ("real_nnjtc_fig3", "real_tl_grid"):
        rec = figdata.load(fig)
        assert rec["params"]["profile"] == "real" and rec["params"]["model"] == "smollm2-135m", fig
        c = rec["data"]["curves"]
        assert c["id"]["layers"] == list(range(31)), fig


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
