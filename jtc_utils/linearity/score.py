"""The linearity score of Razzhigaev et al. (2024, section 3.1) and what a reader needs to interpret it. For
consecutive states X = h^l and Y = h^(l+1), centred and scaled to unit norm, ``LS = 1 - min_A ||X~ A - Y~||_F^2``:
the in-sample, variance-weighted R² of an affine fit of Y on X (:func:`score`); without the residual, Y is the
update ``Y - X``, and ``LS_nores = 1 - (1 - LS_res) ||Y_c||² / ||(Y - X)_c||²`` (related-systems spec 4.1), which
:func:`pair` checks. Float64; the fits are :class:`jtc_utils.core.analysis.linear.Factor`'s, with JTC's relative cutoff
(never ``1/S`` on every singular value, the paper code's pitfall). Three readings of one fit: ``in`` (the paper's),
``ho`` (scored on held-out tokens) and ``null`` (after shuffling Y's rows: what any X reaches by chance).
"""

from __future__ import annotations

import warnings

import numpy as np

from jtc_utils.core.infra import costs
from jtc_utils.core.infra import device as devices
from jtc_utils.core.analysis import linear
from jtc_utils.core.analysis.linear import RCOND, UnderdeterminedFitWarning

# the scores' keys in the figures' numbers, as a table heads them
SCORE_NAMES = {"res_in": "LSᵣₑₛ", "nores_in": "LSₙₒᵣₑₛ", "res_ho": "LSᵣₑₛ, held-out", "res_null": "null"}


def _check(X, Y, what: str = "X and Y", fit: bool = True):
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0]:
        raise ValueError(
            f"{what} must be 2-D arrays with one row per token and the same number of rows; got "
            f"shapes {X.shape} and {Y.shape}"
        )
    n, d = X.shape
    if n < 3:
        raise ValueError(f"a linearity score needs at least 3 tokens, got {n}")
    if fit and n - 1 <= d:
        warnings.warn(
            f"linearity score on {n} tokens of dimension {d}: with n - 1 <= d any X fits any Y exactly "
            f"(the in-sample score is 1 whatever the model does); use more than {d + 1} tokens and compare "
            f"with the null baseline",
            UnderdeterminedFitWarning,
            stacklevel=3,
        )
    return X, Y


def _solver(Xc: np.ndarray, rcond: float = RCOND) -> linear.Factor:
    """The least-squares factorization of the centred ``Xc`` (:class:`jtc_utils.core.analysis.linear.Factor`, the book's
    one solver: JTC's cutoff, on the device setting): one per X, shared by every fit on it."""
    with warnings.catch_warnings():  # _check has already said it, in this module's words
        warnings.simplefilter("ignore", UnderdeterminedFitWarning)
        return linear.factor(Xc, rcond)


def _coef(Xc: np.ndarray, Yc: np.ndarray, rcond: float = RCOND, solver=None) -> np.ndarray:
    """Least-squares B (min-norm) with ``Xc B ~ Yc``."""
    return devices.to_numpy((solver or _solver(Xc, rcond)).solve(Yc))


def _explained(Xc: np.ndarray, Yc: np.ndarray, solver: linear.Factor) -> float:
    """``||P_X Yc||^2``, the part of Yc's variance the fit explains, without forming the n x d residual."""
    return float(solver.explained(solver.project(Yc)).sum())


def fit_affine(X, Y, rcond: float = RCOND) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares affine map ``Y ~ X M + c`` (float64, JTC's cutoff): the fit every score here reads."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    mx, my = X.mean(0), Y.mean(0)
    M = _coef(X - mx, Y - my, rcond)
    return M, my - mx @ M


def score(X, Y, rcond: float = RCOND) -> float:
    """The paper's in-sample linearity score LS(X, Y) in [0, 1]."""
    X, Y = _check(X, Y)
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    sst = float((Yc**2).sum())
    if sst == 0.0:
        raise ValueError("Y is constant over the tokens, so there is nothing to explain: the score is undefined")
    R = Yc - Xc @ _coef(Xc, Yc, rcond)
    return float(np.clip(1.0 - (R**2).sum() / sst, 0.0, 1.0))


def pair(X, Y, null_seed: int = 0, rcond: float = RCOND) -> dict:
    """Every score of one layer pair X = h^l -> Y = h^(l+1) from one fit.

    Returns ``res_in``, ``nores_in`` (the paper's scores), ``nores_identity`` (the same from ``res_in`` through the
    identity), ``res_null``, ``nores_null`` (the held-out scores are :func:`heldout_profile`'s); ``update_norm``,
    the median over tokens of ``||Y - X|| / ||X||`` (the paper's Fig. 3: how small the block's update is), and the
    per-token squared errors of the normalised fit summarised as ``err_kurtosis`` and ``err_max_over_median``
    (the paper's Fig. 9)."""
    X, Y = _check(X, Y)
    mx, my = X.mean(0), Y.mean(0)
    Xc, Yc = X - mx, Y - my
    Uc = Yc - Xc  # the update, centred
    sst_y, sst_u = float((Yc**2).sum()), float((Uc**2).sum())
    solver = _solver(Xc, rcond)
    R = Yc - Xc @ _coef(Xc, Yc, rcond, solver)  # the residual of Y's fit; Y - X's (fitted on its own) is the same
    sse = float((R**2).sum())
    res_in = 1.0 - sse / sst_y
    out = {
        "res_in": res_in,
        "nores_in": 1.0 - float(((Uc - Xc @ _coef(Xc, Uc, rcond, solver)) ** 2).sum()) / sst_u,
        "nores_identity": 1.0 - (1.0 - res_in) * sst_y / sst_u,
    }
    perm = np.random.default_rng(null_seed).permutation(len(Y))  # rows shuffled: centred still, unrelated to X
    out["res_null"] = min(1.0, _explained(Xc, Yc[perm], solver) / sst_y)
    out["nores_null"] = min(1.0, _explained(Xc, Uc[perm], solver) / sst_u)
    out["update_norm"] = float(np.median(np.linalg.norm(Y - X, axis=1) / np.linalg.norm(X, axis=1)))
    e = (R**2).sum(1) / sst_y  # per-token squared error of the normalised fit (they sum to 1 - LS)
    z = (e - e.mean()) / (e.std() + 1e-300)
    out["err_kurtosis"] = float((z**4).mean() - 3.0)
    out["err_max_over_median"] = float(e.max() / max(np.median(e), 1e-300))
    return out


def profile(states, keep=None, null_seed: int = 0) -> list[dict]:
    """:func:`pair` (in-sample) for every consecutive pair l -> l+1 of ``states`` [L+1, n, d]; ``keep``: a boolean
    mask of the tokens to use (for example, all but position 0)."""
    S = _check_states(states)
    k = slice(None) if keep is None else np.asarray(keep, dtype=bool)
    return [{"pair": i, **pair(S[i][k], S[i + 1][k], null_seed=null_seed)} for i in range(S.shape[0] - 1)]


def heldout_profile(train, val, keep_train=None, keep_val=None) -> dict:
    """``res_ho`` and ``nores_ho`` for every pair: fitted (and centred) on ``train`` states, scored on ``val``."""
    T, V = _check_states(train), _check_states(val)
    kt = slice(None) if keep_train is None else np.asarray(keep_train, dtype=bool)
    kv = slice(None) if keep_val is None else np.asarray(keep_val, dtype=bool)
    out = {"res_ho": [], "nores_ho": []}
    for i in range(T.shape[0] - 1):
        X, Y = _check(T[i][kt], T[i + 1][kt])
        Xv, Yv = _check(V[i][kv], V[i + 1][kv], "validation X and Y", fit=False)
        M, c = fit_affine(X, Y)
        my, mu = Y.mean(0), (Y - X).mean(0)  # the centring is the training tokens'
        sse = float(((Yv - Xv @ M - c) ** 2).sum())
        out["res_ho"].append(1.0 - sse / float(((Yv - my) ** 2).sum()))
        out["nores_ho"].append(1.0 - sse / float(((Yv - Xv - mu) ** 2).sum()))
    return {k: np.array(v) for k, v in out.items()}


def _check_states(states) -> np.ndarray:
    S = np.asarray(states)
    if S.ndim != 3 or S.shape[0] < 2:
        raise ValueError(f"states must have shape [layers + 1, tokens, d] with at least two layers; got {S.shape}")
    return S


def check_layer(layer: int, n_layers: int) -> int:
    """A block index 1..L (block l maps h^(l-1) to h^l), with a clear error otherwise."""
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 1 <= int(layer) <= n_layers:
        raise ValueError(
            f"block {layer!r} is out of range: this model has blocks 1..{n_layers} (block l maps h^(l-1) to h^l)"
        )
    return int(layer)


def sentences_of(position) -> np.ndarray:
    """The sentence of each token (0, 1, ...) of stacked whole sentences, from the tokens' positions (a sentence
    starts where the position is 0): the unit the scores' resamples draw, since the tokens of one sentence are not
    independent."""
    position = np.asarray(position)
    return np.cumsum(position == 0) - 1


def _group_sums(A: np.ndarray, B: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, ``A_g^T B_g`` flattened: [n_groups, a * b]."""
    out = np.zeros((n_groups, A.shape[1] * B.shape[1]))
    bounds = np.flatnonzero(np.diff(np.r_[-1, group, n_groups]))  # groups are contiguous runs
    for g, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        out[group[a]] = (A[a:b].T @ B[a:b]).ravel()
    return out


def _explained_gram(Cxx: np.ndarray, Cxy: np.ndarray, rcond: float = RCOND) -> tuple[float, float]:
    """``tr(C^T Cxx^+ C)`` for ``C = Cxy`` (what the fit of Y explains) and for ``C = Cxy - Cxx`` (what the fit of the
    update Y - X explains), with the pseudo-inverse cut as :class:`jtc_utils.core.analysis.linear.Factor` cuts X's
    singular values (relative ``rcond``; eigenvalues of X^T X are their squares). Where ``Cxx`` is far from the cut (a
    Cholesky factor exists and LAPACK's estimate of its reciprocal condition number is above ``n * 100 * rcond^2``,
    which keeps its smallest eigenvalue over its largest above the cut with room for the estimate's error), nothing
    would be cut: the inverse is applied through the Cholesky factor, and the update's trace follows from Y's,
    ``tr(Cxy^T Cxx^-1 Cxy) - 2 tr(Cxy) + tr(Cxx)``; the same traces to rounding, about five times faster than the
    eigendecomposition that serves the other cases (on a 576-wide model it is most of a resample's refit)."""
    from scipy import linalg

    n = len(Cxx)
    try:
        c, _ = linalg.cho_factor(Cxx, lower=True, check_finite=False)
        rc, info = linalg.lapack.dpocon(c, float(np.abs(Cxx).sum(0).max()), uplo="L")
        fast = info == 0 and rc > n * 100 * rcond**2
    except linalg.LinAlgError:
        fast = False
    if fast:
        res = float((linalg.solve_triangular(c, Cxy, lower=True, check_finite=False) ** 2).sum())
        return res, res - 2 * float(np.trace(Cxy)) + float(np.trace(Cxx))
    ev, V = np.linalg.eigh(Cxx)
    keep = ev > (rcond**2) * max(ev.max(), 0.0)
    out = []
    for C in (Cxy, Cxy - Cxx):
        P = V[:, keep].T @ C
        out.append(float((P**2 / ev[keep, None]).sum()))
    return out[0], out[1]


def resampled_pair(X, Y, group, weights, rcond: float = RCOND) -> dict:
    """``res_in`` and ``nores_in`` of one pair under each resample of the sentences (``weights`` [B, n_groups]:
    how often each sentence ``group`` is drawn, :func:`jtc_utils.core.infra.resample.weights`), refitted per resample
    from per-sentence sums: the weighted centred Gram matrices X^T X and X^T Y give each resample's affine fit and
    its in-sample R² without touching the tokens again (related-systems spec 4.1)."""
    X, Y = _check(X, Y, fit=False)
    group = np.asarray(group)
    G = int(group.max()) + 1
    one = np.ones((len(X), 1))
    Xa = np.hstack([X, one])  # per sentence: sums of x x^T, x y^T, x, y, 1 in one product
    d = X.shape[1]
    sxx = _group_sums(Xa, Xa, group, G)  # [G, (d+1)^2]
    sxy = _group_sums(Xa, Y, group, G)  # [G, (d+1) d]
    syy = np.bincount(group, (Y**2).sum(1), G)
    W = np.asarray(weights, dtype=float)
    # the per-sentence sums, each resample's weighted sums of them, and per resample a Cholesky factor (d³/3) and a
    # triangular solve with d right-hand sides (d³/2); the rare eigendecomposition in its place is not counted
    k = d + 1
    costs.arithmetic(f64=len(X) * k * (k + d) + len(W) * G * k * (k + d) + len(W) * (d**3 / 3 + d**3 / 2))
    out = {"res_in": [], "nores_in": []}
    for Sxx, Sxy, yy in zip(W @ sxx, W @ sxy, W @ syy):
        Sxx, Sxy = Sxx.reshape(d + 1, d + 1), Sxy.reshape(d + 1, d)
        n, sx, sy = Sxx[d, d], Sxx[d, :d], Sxy[d]
        Cxx = Sxx[:d, :d] - np.outer(sx, sx) / n
        Cxy = Sxy[:d] - np.outer(sx, sy) / n
        sst_y = yy - sy @ sy / n
        sst_u = sst_y - 2 * np.trace(Cxy) + np.trace(Cxx)
        res, nores = _explained_gram(Cxx, Cxy, rcond)
        out["res_in"].append(res / sst_y)
        out["nores_in"].append(nores / sst_u)
    return {k: np.array(v) for k, v in out.items()}


def weighted_median(values, weights) -> np.ndarray:
    """The median of ``values`` [n] under each row of ``weights`` [B, n] (the smallest value at which the weights
    reach half their sum): the median over tokens of a resample that draws whole sentences."""
    order = np.argsort(values, kind="stable")
    v, W = np.asarray(values)[order], np.asarray(weights, dtype=float)[:, order]
    cum = np.cumsum(W, 1)
    return v[(cum >= cum[:, -1:] / 2).argmax(1)]


def resampled_profile(states, position, weights_of, keep=None) -> dict:
    """:func:`resampled_pair` for every consecutive pair of ``states`` [L+1, n, d] with the tokens' sentences from
    ``position``, and the median update norm ||Y - X|| / ||X|| under the same resamples: ``{"res_in": [B, L],
    "nores_in": [B, L], "update_norm": [B, L]}``. ``weights_of(n_sentences)`` gives the resamples' counts
    (:func:`jtc_utils.core.infra.resample.weights`); ``keep``: a token mask (e.g. all but position 0)."""
    S = _check_states(states)
    group = sentences_of(position)
    k = np.ones(len(group), bool) if keep is None else np.asarray(keep, dtype=bool)
    W = weights_of(int(group.max()) + 1)
    g = group[k]
    out = {"res_in": [], "nores_in": [], "update_norm": []}
    for i in range(S.shape[0] - 1):
        X, Y = S[i][k].astype(np.float64), S[i + 1][k].astype(np.float64)
        r = resampled_pair(X, Y, g, W)
        out["res_in"].append(r["res_in"])
        out["nores_in"].append(r["nores_in"])
        ratio = np.linalg.norm(Y - X, axis=1) / np.linalg.norm(X, axis=1)
        out["update_norm"].append(weighted_median(ratio, W[:, g]))
    return {key: np.stack(v, 1) for key, v in out.items()}


def resample_shift(scores: dict, key: str = "res_in") -> float:
    """How far the resampled scores sit from the scores themselves, averaged over the pairs: the mean over pairs of
    (the mean of ``scores["boot"][key]`` over the resamples minus ``scores[key]``). An in-sample score refitted on a
    resample of the sentences fits fewer distinct tokens per dimension, so it sits higher; the wider the model next
    to its tokens, the more (``scores``: one protocol of a figure's model, e.g. ``sl_fig1[m]["paper"]``)."""
    boot = np.asarray(scores["boot"][key], dtype=float)
    return float(np.mean(boot.mean(0) - np.asarray(scores[key], dtype=float)))
