"""The paper's linear shortcut ``mat``: least squares without intercept, minimum-norm, fitted in float64, and the
coordinate-averaged r² used to judge it (spec 3.1, 3.2).

Row-vector convention: ``X`` is [n, d_in], ``Y`` is [n, d_out]; the fitted ``W = Aᵀ`` is [d_in, d_out] and
``Ŷ = X W``. One SVD of ``X`` serves every target: :func:`pinv` once per source layer, then ``W = X⁺ Y`` for all
target layers at once.
"""

from __future__ import annotations

import warnings

import numpy as np

RCOND = 1.19e-7  # float32 machine epsilon: the cutoff LAPACK sgelsd applied in the paper's sklearn fits


class UnderdeterminedFitWarning(UserWarning):
    """Fewer training samples than input dimensions: the least-squares fit interpolates the training set."""


def warn_underdetermined(n: int, d: int, stacklevel: int = 2) -> None:
    """Warn that a fit on n samples of dimension d > n is underdetermined."""
    warnings.warn(f"fitting a linear map on {n} samples of dimension {d}: fewer samples than dimensions, so the fit "
                  f"is underdetermined and its r² on new data is meaningless; use at least {d} training samples",
                  UnderdeterminedFitWarning, stacklevel=stacklevel + 1)


def pinv(X: np.ndarray, rcond: float = RCOND) -> np.ndarray:
    """Moore-Penrose pseudo-inverse of X in float64, dropping singular values below ``rcond * s_max``."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if n < d:
        warn_underdetermined(n, d, stacklevel=3)
    U, S, Vt = np.linalg.svd(X, full_matrices=False)
    keep = S > rcond * (S[0] if S.size else 0.0)
    return (Vt[keep].T / S[keep]) @ U[:, keep].T


def fit(X: np.ndarray, Y: np.ndarray, rcond: float = RCOND) -> np.ndarray:
    """``W = argmin ||X W - Y||`` (min-norm), float64, shape [d_in, d_out]. Equals sklearn's
    ``LinearRegression(fit_intercept=False).fit(X, Y).coef_.T``."""
    return pinv(X, rcond) @ np.asarray(Y, dtype=np.float64)


CONSTANT_RTOL = 1e-12  # a coordinate whose variance is below this share of the median coordinate's is constant


def r2_score(Y: np.ndarray, Y_hat: np.ndarray) -> float:
    """Coordinate-averaged r², as ``sklearn.metrics.r2_score(Y, Y_hat)`` with its defaults: per output coordinate
    1 - SSE/SST (1 if both are 0, 0 if only SST is 0), then the unweighted mean, in float64.

    One difference, for dead coordinates: a coordinate whose SST is below ``CONSTANT_RTOL`` times the median
    coordinate's is treated as constant (sklearn's SST = 0 case). Such a coordinate is zero to float precision (for
    example where a final LayerNorm has a zero weight, as in all-MiniLM-L6-v2), and its 1 - SSE/SST would be
    about -1e60, swamping the average. Where no coordinate is that small, the result equals sklearn's."""
    Y = np.asarray(Y, dtype=np.float64)
    Y_hat = np.asarray(Y_hat, dtype=np.float64)
    sse = ((Y - Y_hat) ** 2).sum(0)
    sst = ((Y - Y.mean(0)) ** 2).sum(0)
    r2 = np.ones_like(sse)
    ok = sst > CONSTANT_RTOL * np.median(sst)
    r2[ok] = 1 - sse[ok] / sst[ok]
    r2[~ok & (sse != 0)] = 0.0
    return float(r2.mean())


def layer_pair_r2(X_train: np.ndarray, X_val: np.ndarray, rcond: float = RCOND,
                  train_r2: bool = False) -> dict:
    """r² of ``mat`` and ``id`` for every layer pair l < l' (validation set), and the maps to the last layer.

    ``X_train``, ``X_val``: [L+1, n, d] hidden states. Returns a dict with ``r2_mat`` and ``r2_id``, [L+1, L+1]
    (rows = source l, columns = target l'; diagonal 1, lower triangle NaN), and ``maps`` [L, d, d] where
    ``maps[l]`` is ``W`` for l -> L. With ``train_r2`` also ``r2_mat_train`` / ``r2_id_train``, the same scores on
    the training set (same fits, no extra factorization).
    """
    n_layers, n, d = X_train.shape
    sets = {"": X_val.astype(np.float64)}
    if train_r2:
        sets["_train"] = X_train.astype(np.float64)
    out = {}
    for suffix in sets:
        for m in ("r2_mat", "r2_id"):
            out[m + suffix] = np.full((n_layers, n_layers), np.nan)
            np.fill_diagonal(out[m + suffix], 1.0)
    maps = np.zeros((n_layers - 1, d, d))
    chunk = max(1, (256 * 2**20) // (8 * n * d))  # stack at most ~256 MB of targets at a time
    for src in range(n_layers - 1):
        P = pinv(X_train[src], rcond)  # one factorization, shared by every target layer
        targets = list(range(src + 1, n_layers))
        for c in range(0, len(targets), chunk):
            part = targets[c:c + chunk]
            W_all = P @ np.concatenate([X_train[t] for t in part], axis=1).astype(np.float64)
            for k, t in enumerate(part):
                W = W_all[:, k * d:(k + 1) * d]
                for suffix, Y in sets.items():
                    out["r2_mat" + suffix][src, t] = r2_score(Y[t], Y[src] @ W)
                    out["r2_id" + suffix][src, t] = r2_score(Y[t], Y[src])
                if t == n_layers - 1:
                    maps[src] = W
    out["maps"] = maps
    return out


def r2_summary(r2_mat: np.ndarray, r2_id: np.ndarray) -> dict:
    """What the paper says of a heatmap pair, as numbers over the off-diagonal pairs l < l'."""
    iu = np.triu_indices(r2_mat.shape[0], k=1)
    m, i = r2_mat[iu], r2_id[iu]
    return {"pairs": int(m.size), "share_mat_above_id": float(np.mean(m > i)), "mean_mat": float(m.mean()),
            "mean_id": float(i.mean()), "share_id_below_0.1": float(np.mean(i < 0.1)),
            "min_gap": float((m - i).min())}
