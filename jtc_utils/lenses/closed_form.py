"""Lenses fitted in closed form to the last layer (float64): ``id``, ``mat`` (the paper's map), ``mat+b`` (affine
least squares) and the reduced-rank maps ``rrr`` / ``arrr`` (related-systems spec 3.1).

Reduced-rank regression: with ``M_ols = X⁺ Y`` and fitted values ``Ŷ = X M_ols`` on the train set, the top-r right
singular vectors ``V_r`` of ``Ŷ`` (eigenvectors of ``ŶᵀŶ``) give ``M_r = M_ols V_r V_rᵀ``, the global minimiser of
``||X M - Y||²`` over maps of rank at most r (Eckart-Young on the fitted values). One d×d eigendecomposition on top
of the least-squares fit gives every rank. ``arrr`` is the same on ``[X, 1]``: a rank-r map plus an intercept in its
row space, exactly N-NJTC's function class in evaluation mode. At full rank ``rrr`` is ``mat``.
"""

from __future__ import annotations

import weakref

import numpy as np

from jtc_utils.core.analysis import linear
from jtc_utils.core.infra import costs
from jtc_utils.base import validate

from .base import LensError


def with_ones(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    return np.concatenate([X, np.ones((len(X), 1))], axis=1)


class RankFamily:
    """Every reduced-rank least-squares map from ``X`` [n, d_in] to ``Y`` [n, d]: ``maps(r)`` for any rank."""

    def __init__(self, X: np.ndarray, Y: np.ndarray, affine: bool = False, M_ols: np.ndarray | None = None):
        self.affine = affine
        X = with_ones(X) if affine else np.asarray(X, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        self.M_ols = linear.fit(X, Y) if M_ols is None else np.asarray(M_ols, dtype=np.float64)
        Y_hat = X @ self.M_ols
        evals, evecs = np.linalg.eigh(Y_hat.T @ Y_hat)  # ascending
        n, d_in, d = len(X), X.shape[1], Y.shape[1]
        costs.arithmetic(f64=n * d_in * d + n * d * d + 3 * d**3)  # Ŷ = X M, ŶᵀŶ and its eigh (vectors)
        self.eigenvalues, self.V = evals[::-1].clip(min=0), evecs[:, ::-1]
        self.d = Y.shape[1]
        # train SSE of rank r = SSE(ols) + sum of the eigenvalues left out (Pythagoras on the fitted values)
        self.sse_ols = float(((Y - Y_hat) ** 2).sum())

    def matrix(self, rank: int) -> np.ndarray:
        """``M_ols V_r V_rᵀ`` ([d_in (+1), d])."""
        V = self.V[:, :rank]
        costs.arithmetic(f64=2 * self.M_ols.size * rank)  # (M V) Vᵀ
        return self.M_ols @ V @ V.T

    def split(self, rank: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(M [d, d], c [d] or None) of the rank-r map."""
        M = self.matrix(rank)
        return (M[:-1], M[-1]) if self.affine else (M, None)

    def train_sse(self, rank: int) -> float:
        return self.sse_ols + float(self.eigenvalues[rank:].sum())


def check_rank(rank, d: int | None = None) -> int:
    try:
        rank = validate.integer(rank, "rank", minimum=1, example="rank=4")
    except (TypeError, ValueError) as e:
        raise LensError(f"{e} (a low-rank lens needs a rank from 1 to the model's width d)") from None
    if d is not None and rank > d:
        raise LensError(f"rank {rank} is above the width d = {d}; use a rank from 1 to {d}")
    return rank


_FAMILIES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def families(exp, affine: bool) -> list[RankFamily]:
    """The :class:`RankFamily` of every layer to the last one, computed once per experiment and kept while it lives
    (``mat+b`` and ``arrr`` share the affine factorisation; ``rrr`` starts from the experiment's ``mat`` maps)."""
    store = _FAMILIES.setdefault(exp, {})
    if affine not in store:
        X, L = exp.X_train, exp.X_train.shape[0] - 1
        maps = None if affine else getattr(exp, "maps", None)
        store[affine] = [
            RankFamily(X[layer], X[L], affine=affine, M_ols=None if maps is None else maps[layer]) for layer in range(L)
        ]
    return store[affine]


def fit_identity(exp) -> tuple:
    L, d = exp.X_train.shape[0] - 1, exp.X_train.shape[2]
    return None, None, {"L": L, "d": d}


def fit_mat(exp) -> tuple:
    """The paper's ``mat``: the experiment's own least-squares maps (the very maps sections 4 and 5 use)."""
    maps = getattr(exp, "maps", None)
    if maps is None:  # hidden states without an experiment (tests): fit them here
        X, L = exp.X_train, exp.X_train.shape[0] - 1
        maps = np.stack([linear.fit(X[layer], X[L]) for layer in range(L)])
    return np.asarray(maps, dtype=np.float64), None, {}


def fit_mat_affine(exp) -> tuple:
    d = exp.X_train.shape[2]
    M, c = zip(*(f.split(d) for f in families(exp, affine=True)))
    return np.stack(M), np.stack(c), {}


def _fit_rank(exp, rank, affine: bool) -> tuple:
    rank = check_rank(rank, exp.X_train.shape[2])
    M, c = zip(*(f.split(rank) for f in families(exp, affine)))
    return np.stack(M), (None if c[0] is None else np.stack(c)), {"rank": rank}


def fit_rrr(exp, rank) -> tuple:
    return _fit_rank(exp, rank, affine=False)


def fit_arrr(exp, rank) -> tuple:
    return _fit_rank(exp, rank, affine=True)
