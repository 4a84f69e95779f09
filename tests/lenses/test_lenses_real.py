"""Issue 55, item 1 for the lens papers: the real model's figures at every layer, read by the same rules, and a change
in them moves the real verdict (the checks every paper shares are in tests/evidence/test_real_verdicts.py)."""

import copy

import numpy as np
import pytest

from jtc_utils.evidence import claims, figdata, verdicts
from jtc_utils.lenses import claims as lens_claims

pytestmark = [pytest.mark.lenses]  # the lens bench


def test_figure_2_on_the_real_model_has_the_pairs_its_claims_read():
    """The real Figure 2: id and mat at every pair, NJTC and N-NJTC on each layer to the next and to the last (the
    other cells blank); N7 is judged on its r² to the last layer, resampled, and moves with it."""
    rec = figdata.load("real_nnjtc_fig2")
    d = rec["data"]
    L = len(d["r2_id"]) - 1
    assert rec["params"]["profile"] == "real" and L == 30
    for name in ("njtc", "nnjtc"):
        r2 = np.asarray(d[f"r2_{name}"], dtype=float)
        known = {(a, b) for a in range(L + 1) for b in range(a + 1, L + 1) if np.isfinite(r2[a, b])}
        assert known == {(a, a + 1) for a in range(L)} | {(a, L) for a in range(L)}, name
        assert np.allclose(np.asarray(d[f"r2_to_last_{name}"], dtype=float)[0], r2[:L, L])
    assert np.isfinite(np.asarray(d["r2_mat"], dtype=float)[np.triu_indices(L + 1, 1)]).all()
    get = claims.profile_getter("real_")
    n7 = lens_claims.check("N7", get, "real")
    assert n7["resamples"] == [verdicts.VALIDATION] and n7["verdict"] is not None
    swapped = copy.deepcopy(d)
    for a, b in (("r2_to_last_njtc", "r2_to_last_nnjtc"), ("r2_to_last_nnjtc", "r2_to_last_njtc")):
        swapped[a], swapped["boot"][a] = d[b], d["boot"][b]
    moved = lens_claims.check("N7", claims.profile_getter("real_", {"real_nnjtc_fig2": swapped}), "real")
    assert moved["margin"] == pytest.approx(-n7["margin"])
    for cid in ("N6", "N8"):
        assert lens_claims.check(cid, get, "real")["verdict"] is not None, cid


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
