"""Figure-data regression: every book/data/<fig>.json written by a notebook is recomputed here through
jtc_utils and compared with tolerances suited to float noise; and the paper's invariants are checked on it."""

import json

import numpy as np
import pytest

from jtc_utils import corpus, figdata, figures
from jtc_utils.paths import DATA_DIR

FIG_FILES = sorted(p.stem for p in DATA_DIR.glob("fig*.json"))
# r² computed in float64 from float32 forward passes: per-op differences of ~1e-6 grow through the layers
R2_TOL = dict(rtol=1e-4, atol=2e-4)


def test_every_section3_figure_has_its_data():
    expected = {f for f, (kind, _, _) in figures.FIGURES.items() if kind == "r2"}
    assert expected <= set(FIG_FILES)


@pytest.mark.parametrize("fig", FIG_FILES)
def test_figure_data_is_reproduced(fig):
    stored = figdata.load(fig)
    p = stored["params"]
    if p["profile"] != "tiny":
        pytest.skip("only the tiny profile is recomputed in tests")
    sizes = corpus.POOL_SIZES[p["domain"]]
    # the notebooks pass None for the paper's full sizes; pass the same so that the shared cache is hit
    n_train = None if p["n_train"] == sizes["train"] else p["n_train"]
    n_val = None if p["n_val"] == sizes["validation"] else p["n_val"]
    data, params = figures.compute(fig, "tiny", n_train=n_train, n_val=n_val, seed=p["seed"])
    assert params["model"] == p["model"] and params["domain"] == p["domain"]
    for key in ("r2_mat", "r2_id"):
        np.testing.assert_allclose(data[key], figdata.as_array(stored["data"][key]), **R2_TOL, err_msg=key)


@pytest.mark.parametrize("fig", FIG_FILES)
def test_paper_invariants_hold_on_the_stored_numbers(fig):
    d = figdata.load(fig)["data"]
    r2_mat, r2_id = figdata.as_array(d["r2_mat"]), figdata.as_array(d["r2_id"])
    tr_mat, tr_id = figdata.as_array(d["r2_mat_train"]), figdata.as_array(d["r2_id_train"])
    n = r2_mat.shape[0]
    assert n == d["n_layers"] + 1
    assert np.all(np.diag(r2_mat) == 1) and np.all(np.diag(r2_id) == 1)
    assert np.isnan(r2_mat[np.tril_indices(n, -1)]).all()
    upper = np.triu_indices(n, 1)
    assert np.all(r2_mat[upper] <= 1 + 1e-12)
    # least squares is the best linear map on the data it was fitted on, and id is a linear map
    assert np.all(tr_mat[upper] >= tr_id[upper] - 1e-9)
    json.dumps(d)  # plain JSON
