"""mat (least squares without intercept, min-norm) and r² against scikit-learn."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score as sk_r2

from jtc_utils.core.analysis import linear
from jtc_utils.core.infra import resample

pytestmark = [pytest.mark.jtc]  # the JTC paper's package


def _correlated(rng, n, d, rank=None):
    Z = rng.standard_normal((n, rank or d))
    return Z @ rng.standard_normal((rank or d, d)) + (0 if rank else 0.1 * rng.standard_normal((n, d)))


def test_fit_matches_sklearn_on_random_data():
    rng = np.random.default_rng(0)
    X = _correlated(rng, 400, 30)
    Y = X @ rng.standard_normal((30, 20)) + rng.standard_normal((400, 20))
    W = linear.fit(X, Y)
    ref = LinearRegression(fit_intercept=False).fit(X, Y)
    np.testing.assert_allclose(W, ref.coef_.T, rtol=1e-8, atol=1e-10)


def test_fit_matches_sklearn_min_norm_on_rank_deficient_input():
    """Like BERT's layer 0: the inputs span far fewer directions than their dimension."""
    rng = np.random.default_rng(1)
    X = _correlated(rng, 300, 40, rank=7)
    Y = rng.standard_normal((300, 15))
    W = linear.fit(X, Y)
    ref = LinearRegression(fit_intercept=False).fit(X, Y)
    np.testing.assert_allclose(X @ W, ref.predict(X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(W, ref.coef_.T, rtol=1e-6, atol=1e-8)  # both are the minimum-norm solution
    assert np.linalg.matrix_rank(W) <= 7


def test_fit_agrees_with_paper_float32_sklearn():
    rng = np.random.default_rng(2)
    X = _correlated(rng, 500, 24).astype(np.float32)
    Y = (X @ rng.standard_normal((24, 24)) + rng.standard_normal((500, 24))).astype(np.float32)
    ref = LinearRegression(fit_intercept=False).fit(X, Y)
    ours = linear.r2_score(Y, X @ linear.fit(X, Y))
    assert abs(ours - sk_r2(Y, ref.predict(X))) <= 1e-3 * abs(ours)


def test_r2_matches_sklearn_including_constant_columns():
    rng = np.random.default_rng(3)
    Y = rng.standard_normal((200, 12))
    Y[:, 3] = 2.0  # constant column, predicted exactly -> 1
    Y[:, 5] = -1.0  # constant column, predicted wrongly -> 0
    Y_hat = Y + 0.5 * rng.standard_normal(Y.shape)
    Y_hat[:, 3] = 2.0
    assert linear.r2_score(Y, Y_hat) == pytest.approx(sk_r2(Y, Y_hat), abs=1e-12)
    Y_bad = -3 * Y
    assert linear.r2_score(Y, Y_bad) == pytest.approx(sk_r2(Y, Y_bad), abs=1e-12)
    assert linear.r2_score(Y, Y_bad) < 0


def test_layer_pair_r2_shape_diagonal_and_training_set_optimality():
    rng = np.random.default_rng(4)
    L, n, d = 5, 300, 10
    X = np.empty((L + 1, n, d), dtype=np.float32)
    X[0] = rng.standard_normal((n, d))
    for l in range(1, L + 1):  # a residual-stream-like chain
        X[l] = X[l - 1] + np.tanh(X[l - 1] @ rng.standard_normal((d, d)) * 0.5)
    out = linear.layer_pair_r2(X, X[:, :100], train_r2=True)
    r2_mat, r2_id, maps = out["r2_mat_train"], out["r2_id_train"], out["maps"]
    assert r2_mat.shape == (L + 1, L + 1) and maps.shape == (L, d, d)
    assert np.all(np.diag(r2_mat) == 1) and np.all(np.diag(r2_id) == 1)
    lower = np.tril_indices(L + 1, -1)
    assert np.isnan(r2_mat[lower]).all() and np.isnan(r2_id[lower]).all()
    upper = np.triu_indices(L + 1, 1)
    assert np.all(r2_mat[upper] >= r2_id[upper] - 1e-12)
    for l in range(L):  # maps[l] is the fit l -> L; the r² of each cell is that of the pairwise fit
        np.testing.assert_allclose(maps[l], linear.fit(X[l], X[L]), rtol=1e-6, atol=1e-8)
        assert r2_mat[l, L] == pytest.approx(linear.r2_score(X[L], X[l] @ maps[l]), abs=1e-12)
        assert out["r2_mat"][l, L] == pytest.approx(linear.r2_score(X[L, :100], X[l, :100] @ maps[l]), abs=1e-12)


def test_layer_pair_r2_on_selected_rows_equals_the_copied_subset_resident_or_not(monkeypatch):
    """Rows selected by a mask (no copy of the states) give the same fits as the copied subset, whether the float64
    layers are all kept resident or converted on each use (``FIT_MEMORY`` too small)."""
    rng = np.random.default_rng(7)
    L, n, d = 4, 200, 8
    X = np.cumsum(rng.standard_normal((L + 1, n, d)), axis=0).astype(np.float32)
    keep_tr, keep_val = rng.random(150) > 0.3, rng.random(50) > 0.3
    boot = resample.weights(int(keep_val.sum()), 5)
    want = linear.layer_pair_r2(X[:, :150][:, keep_tr], X[:, 150:][:, keep_val], train_r2=True, boot=boot)
    for budget in (linear.FIT_MEMORY, 1):
        monkeypatch.setattr(linear, "FIT_MEMORY", budget)
        got = linear.layer_pair_r2(
            X[:, :150], X[:, 150:], train_r2=True, boot=boot, rows_train=keep_tr, rows_val=np.flatnonzero(keep_val)
        )
        assert set(got) == set(want)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-12, atol=1e-12, err_msg=k)
    assert not np.allclose(want["r2_mat"], linear.layer_pair_r2(X[:, :150], X[:, 150:])["r2_mat"], equal_nan=True)


def test_underdetermined_fit_warns():
    rng = np.random.default_rng(5)
    with pytest.warns(linear.UnderdeterminedFitWarning, match="fewer samples than dimensions"):
        linear.fit(rng.standard_normal((10, 20)), rng.standard_normal((10, 20)))


def test_a_dead_coordinate_does_not_swamp_r2():
    """A coordinate that is zero to float precision (a LayerNorm weight of 0) counts as constant, as SST = 0 does in
    sklearn, instead of contributing 1 - SSE/1e-62; the other coordinates' r² is unchanged."""
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(200, 5))
    Y_hat = Y + 0.1 * rng.normal(size=Y.shape)
    dead = np.hstack([Y, 1e-32 * rng.normal(size=(200, 1))])
    pred = np.hstack([Y_hat, np.full((200, 1), 0.5)])  # id reads the dead coordinate from a live one
    live = linear.r2_score(Y, Y_hat)
    assert linear.r2_score(dead, pred) == pytest.approx(5 * live / 6)  # the dead coordinate scores 0
    assert sk_r2(dead, pred) < -1e30  # what the plain formula gives
    assert linear.r2_score(dead, np.hstack([Y_hat, dead[:, 5:]])) == pytest.approx((5 * live + 1) / 6)


def _reference_pair_r2(Xtr, Xva, rcond=linear.RCOND):
    """The previous implementation, in numpy: pinv by SVD with the cutoff, one fit per pair, explicit predictions."""
    L1 = Xtr.shape[0]
    out = {k: np.full((L1, L1), np.nan) for k in ("r2_mat", "r2_id", "r2_mat_train", "r2_id_train")}
    for v in out.values():
        np.fill_diagonal(v, 1.0)
    for a in range(L1 - 1):
        X = Xtr[a].astype(np.float64)
        U, S, Vt = np.linalg.svd(X, full_matrices=False)
        keep = S > rcond * S[0]
        P = (Vt[keep].T / S[keep]) @ U[:, keep].T
        for b in range(a + 1, L1):
            W = P @ Xtr[b].astype(np.float64)
            out["r2_mat"][a, b] = linear.r2_score(Xva[b], Xva[a].astype(np.float64) @ W)
            out["r2_id"][a, b] = linear.r2_score(Xva[b], Xva[a])
            out["r2_mat_train"][a, b] = linear.r2_score(Xtr[b], X @ W)
            out["r2_id_train"][a, b] = linear.r2_score(Xtr[b], Xtr[a])
    return out


def test_torch_fits_equal_the_numpy_svd_reference_to_1e_9_on_both_routes():
    """Well-conditioned layers take the Gram route, an ill-conditioned one (singular values spread over 1e6) and a
    rank-deficient one the SVD route; every r² equals the per-pair numpy SVD reference to 1e-9."""
    rng = np.random.default_rng(6)
    L, n, d = 4, 600, 24
    X = np.empty((L + 1, n, d), dtype=np.float32)
    X[0] = rng.standard_normal((n, d)) * np.logspace(0, -6, d)  # condition number 1e6
    X[1] = _correlated(rng, n, d, rank=9)  # rank-deficient
    for l in range(2, L + 1):
        X[l] = X[l - 1] + np.tanh(X[l - 1] @ rng.standard_normal((d, d)) * 0.3) + 0.1 * rng.standard_normal((n, d))
    routes = [linear.factor(X[l, :400]).route for l in range(L)]
    assert routes[:2] == ["svd", "svd"] and "gram" in routes[2:]
    ours = linear.layer_pair_r2(X[:, :400], X[:, 400:], train_r2=True)
    ref = _reference_pair_r2(X[:, :400], X[:, 400:])
    for key, v in ref.items():
        np.testing.assert_allclose(ours[key], v, rtol=0, atol=1e-9, err_msg=key)


def test_pinv_and_fit_match_lapack_gelsd_min_norm():
    from scipy.linalg import lstsq

    rng = np.random.default_rng(7)
    for X in (_correlated(rng, 200, 16), _correlated(rng, 200, 16, rank=5)):
        Y = rng.standard_normal((200, 6))
        ref = lstsq(X, Y, cond=linear.RCOND, lapack_driver="gelsd")[0]
        np.testing.assert_allclose(X @ linear.fit(X, Y), X @ ref, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(linear.pinv(X) @ Y, linear.fit(X, Y), rtol=1e-9, atol=1e-9)


def test_resampled_r2_is_r2_of_the_resampled_validation_set():
    """Each resample's r² (``boot``) equals sklearn's r² on the validation rows drawn by that resample, with the same
    fits; a resample that draws every row once is the point r²."""

    rng = np.random.default_rng(3)
    L, n, n_val, d = 3, 60, 25, 5
    X = rng.normal(size=(L + 1, n + n_val, d)).cumsum(0) + 4.0  # a large mean, as hidden states have
    X[..., 0] *= 1e-20  # a dead coordinate
    W = resample.weights(n_val, n_resamples=4)
    W = np.vstack([np.ones(n_val), W])
    out = linear.layer_pair_r2(X[:, :n], X[:, n:], boot=W)
    assert np.allclose(out["boot_r2_mat"][0], out["r2_mat"], atol=1e-10, equal_nan=True)
    assert np.allclose(out["boot_r2_id"][0], out["r2_id"], atol=1e-10, equal_nan=True)
    for b in range(1, len(W)):
        rows = np.repeat(np.arange(n_val), W[b].astype(int))
        for src, t in ((0, 1), (1, 3)):
            A = linear.fit(X[src, :n], X[t, :n])
            Xv, Yv = X[src, n:][rows], X[t, n:][rows]
            assert out["boot_r2_mat"][b, src, t] == pytest.approx(linear.r2_score(Yv, Xv @ A), abs=1e-9)
            assert out["boot_r2_id"][b, src, t] == pytest.approx(linear.r2_score(Yv, Xv), abs=1e-9)
    with pytest.raises(ValueError, match="n_val"):
        linear.layer_pair_r2(X[:, :n], X[:, n:], boot=W[:, 1:])


def test_pair_statistics_read_the_upper_triangle():
    m = np.array([[1, 0.9, 0.8], [np.nan, 1, 0.7], [np.nan, np.nan, 1]])
    i = np.array([[1, 0.1, -2.0], [np.nan, 1, 0.6], [np.nan, np.nan, 1]])
    s = linear.pair_statistics(m, i)
    assert s["min_gap"] == pytest.approx(0.1)  # 0.7 - 0.6
    assert s["id_majority"] == pytest.approx(0.1)  # two of three pairs (-2.0, 0.1) are at or below 0.1
    both = linear.pair_statistics(np.stack([m, m]), np.stack([i, i - 1]))
    assert both["min_gap"].tolist() == pytest.approx([0.1, 1.1])
