"""Figure-data regression for the FFN chapter: each tiny-profile figure in book/data is recomputed through
jtc_utils.ffn and compared with tolerances suited to float noise; invariants are checked on the stored numbers."""

from jtc_utils import figdata
from jtc_utils.ffn import claims, figures
from jtc_utils.paths import DATA_DIR



def test_every_ffn_figure_has_its_data():
    missing = [f for f in figures.FFN_FIGURES if not (DATA_DIR / f"{f}.json").exists()]
    assert not missing, f"run the FFN chapter: {missing} have no numbers in book/data"


def test_invariants_hold_on_the_stored_numbers():
    f6 = figdata.load("geva_fig6")["data"]
    assert all(t >= f6["uniform"] - 1e-12 for t in f6["t10"])  # the top ten hold at least the uniform share
    t6 = figdata.load("geva_tab6")["data"]["rules"]
    assert t6["saturation oracle"]["accuracy"] == 1
    for name, r in t6.items():
        assert 0 <= r["accuracy"] <= 1 and r["saved"] <= t6["saturation oracle"]["saved"] + 1e-9 or \
            r["accuracy"] < 1, name
    t2 = figdata.load("geva_tab2")["data"]["models"]
    for m, row in t2.items():
        assert 0 <= row["chance_no_big"] <= row["chance"] <= 1, m
    rg = figdata.load("real_geva")["data"]
    assert all(max(g["vs_module"], g["vs_hidden"]) < 1e-5 * g["scale"] + 1e-4 for g in rg["decomposition"])


def test_claims_are_judged_from_the_stored_numbers():
    records = claims.all_claims()
    assert [r["id"] for r in records] == list(claims.CLAIMS)
    assert all(r["verdict"] in ("holds", "fails", "undecided") for r in records)
    stored = figdata.load("claims_ffn")["data"]
    assert [r["holds"] for r in stored] == [r["holds"] for r in records]
