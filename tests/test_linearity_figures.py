"""Figure-data regression for the linearity chapter: each tiny-profile figure in book/data is recomputed through
jtc_utils.linearity and compared with tolerances suited to float noise; invariants are checked on the stored
numbers, and the claims page's verdicts against the stored figures."""

import numpy as np
from jtc_utils import figdata
from jtc_utils.linearity import claims, figures
from jtc_utils.paths import DATA_DIR



def test_every_linearity_figure_has_its_data():
    missing = [f for f in figures.SL_FIGURES if not (DATA_DIR / f"{f}.json").exists()]
    assert not missing, f"run the linearity chapter: {missing} have no numbers in book/data"


def test_invariants_hold_on_the_stored_numbers():
    f1 = figdata.load("sl_fig1")["data"]
    for m, v in f1.items():
        for proto in ("paper", "paper_nopos0", "sample"):
            p = v[proto]
            assert all(0 <= x <= 1 for x in p["res_in"] + p["nores_in"]), (m, proto)
            assert all(n < r for n, r in zip(p["res_null"], p["res_in"])), (m, proto)
            if "nores_identity" in p:
                np.testing.assert_allclose(p["nores_in"], p["nores_identity"], atol=1e-8)
    t1 = figdata.load("sl_tab1")["data"]
    assert all(len(v["delta"]) == 3 for v in t1["tasks"].values())
    f7 = figdata.load("sl_fig7")["data"]
    assert {r["mode"] for r in f7["rows"]} == {"remove", "replace", "replace + distil"}
    assert len(f7["order"]) == f7["n_layers"]


def test_claims_are_judged_from_the_stored_numbers():
    records = claims.all_claims()
    assert [r["id"] for r in records] == list(claims.CLAIMS)
    assert all(r["holds"] in (True, False, None) for r in records)
    stored = figdata.load("claims_linearity")["data"]
    assert [r["holds"] for r in stored] == [r["holds"] for r in records]
