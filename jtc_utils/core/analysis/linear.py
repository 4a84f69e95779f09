"""The paper's linear shortcut ``mat``: least squares without intercept, minimum-norm, fitted in float64, and the
coordinate-averaged r² used to judge it (spec 3.1, 3.2).

Row vectors: ``X`` is [n, d_in], ``Y`` [n, d_out], the fitted ``W`` [d_in, d_out] and ``Ŷ = X W``. Everything runs
through ``torch.linalg`` in float64 on the device of :mod:`jtc_utils.core.infra.device`; arrays come back as numpy. One
factorization of ``X`` serves every target (:class:`Factor`, by a Gram or an SVD route).
"""

from __future__ import annotations

import warnings

import numpy as np

from jtc_utils.core.infra import costs
from jtc_utils.core.infra import device as devices

RCOND = 1.19e-7  # float32 machine epsilon: the cutoff LAPACK sgelsd applied in the paper's sklearn fits
# the Gram route's relative error is about eps·cond(X)²: with cond(X) <= 1e4 it is below 1e-8 and r² agrees with
# the SVD route to 1e-9 (tests/core/test_linear.py checks it)
GRAM_MIN_RATIO = 1e-4
FIT_MEMORY = 2**30  # bytes of float64 states of one split layer_pair_r2 keeps on the device (else converts per use)


class UnderdeterminedFitWarning(UserWarning):
    """Fewer training samples than input dimensions: the least-squares fit interpolates the training set."""


def warn_underdetermined(n: int, d: int, stacklevel: int = 2) -> None:
    """Warn that a fit on n samples of dimension d > n is underdetermined."""
    warnings.warn(
        f"fitting a linear map on {n} samples of dimension {d}: fewer samples than dimensions, so the fit "
        f"is underdetermined and its r² on new data is meaningless; use at least {d} training samples",
        UnderdeterminedFitWarning,
        stacklevel=stacklevel + 1,
    )


# the key a figure's numbers carry when its maps were fitted on fewer samples than d
UNDERDETERMINED = "underdetermined"


def regime_note(n: int, d: int) -> dict:
    """What a figure's numbers carry about the fit behind them: ``{"underdetermined": {"n_train", "d"}}`` where
    the maps were fitted on fewer samples than dimensions (the claims give no verdict from such numbers), else
    nothing (so that numbers from a determined fit are stored as they always were)."""
    return {UNDERDETERMINED: {"n_train": int(n), "d": int(d)}} if n < d else {}


def _t(a, dev):
    """``a`` (numpy or tensor) as a float64 tensor on ``dev``."""
    import torch

    if isinstance(a, torch.Tensor):
        return a.to(dev, torch.float64)
    return torch.from_numpy(np.ascontiguousarray(a)).to(dev, torch.float64)


class Factor:
    """The minimum-norm least-squares solution for one input matrix ``X`` [n, d]: ``W = R @ (LT @ Y)``. ``route``
    says which factorization (``gram`` or ``svd``); ``rank`` how many directions were kept.

    Two routes give the same minimum-norm solution:

    * the Gram route (the fast one): ``G = XᵀX = V Λ Vᵀ`` by ``eigh``; ``Lᵀ = Xᵀ``, ``R = V Λ⁻¹ Vᵀ``. Its error grows
      with the square of ``X``'s condition number, so it is taken only when every singular value is at least
      :data:`GRAM_MIN_RATIO` times the largest, where the cutoff keeps all of them, as the SVD would;
    * the SVD route otherwise (ill-conditioned or rank-deficient ``X``, fewer samples than dimensions): ``X = U S Vᵀ``,
      singular values below ``RCOND · s_max`` dropped; ``Lᵀ = Uᵀ``, ``R = V S⁻¹``."""

    def __init__(self, X, rcond: float = RCOND, dev=None, stacklevel: int = 2):
        import torch

        self.device = devices.resolve(dev)
        X = _t(X, self.device)
        n, d = X.shape
        if n < d:
            warn_underdetermined(n, d, stacklevel=stacklevel + 1)
        if n >= d and d:
            G = X.T @ X
            lam, V = torch.linalg.eigh(G)
            costs.arithmetic(f64=n * d * d + 3 * d**3)  # XᵀX, its eigh (about 2d³ with vectors) and V Λ⁻¹ Vᵀ
            if lam[0] >= GRAM_MIN_RATIO**2 * lam[-1] > 0:
                self.route, self.rank, self.LT, self.G = "gram", d, X.T, G
                self.R = (V / lam) @ V.T
                return
        m, k = max(n, d), min(n, d)
        costs.arithmetic(f64=2 * m * k * k + 6 * k**3)  # a thin SVD (Householder bidiagonalisation, then vectors)
        U, S, Vh = torch.linalg.svd(X, full_matrices=False)
        keep = S > rcond * (S[0] if S.numel() else 0.0)
        self.route, self.rank = "svd", int(keep.sum())
        self.LT = U[:, keep].T
        self.R = Vh[keep].T / S[keep]

    def project(self, Y):
        """``LT @ Y``: what every solution and prediction needs from the targets ``Y`` [n, k]."""
        Y = _t(Y, self.device)
        costs.arithmetic(f64=self.LT.numel() * (Y.shape[1] if Y.dim() > 1 else 1))
        return self.LT @ Y

    def solve(self, Y):
        """``W`` [d, k] (a float64 tensor on the device) for targets ``Y`` [n, k]."""
        B = self.project(Y)
        costs.arithmetic(f64=self.R.numel() * (B.shape[1] if B.dim() > 1 else 1))
        return self.R @ B

    def explained(self, B):
        """Per target coordinate, ``||P_X y||²``: the part of the targets' sum of squares that the fit explains,
        from ``B = LT @ Y`` (:meth:`project`) without forming the n fitted rows: ``diag(Bᵀ R B)`` on the Gram route
        (``R = (XᵀX)⁻¹``), ``||Uᵀ Y||²`` on the SVD route."""
        if self.route == "gram":
            return (self.R @ B).mul_(B).sum(0)
        return B.square().sum(0)

    def train_sse(self, W, B, Y, yy=None):
        """Per-coordinate in-sample SSE ``||X W - Y||²`` of a solution ``W`` with ``B = LT @ Y``. On the Gram route
        it comes from ``G = XᵀX`` without predicting the n training rows: ``diag(Wᵀ G W) - 2 diag(Wᵀ B) + ||Y||²``
        (``yy``: the last term, if already computed), 2·d³ flops instead of 2·n·d²; the identity holds for any
        ``W``, so the fit's own rounding enters only at second order. Else the prediction ``U (Uᵀ Y)`` itself."""
        Y = _t(Y, self.device)
        if self.route == "gram":
            yy = Y.square().sum(0) if yy is None else yy
            return ((self.G @ W).mul_(W).sum(0) - 2 * (W * B).sum(0) + yy).clamp_(min=0)
        return (self.LT.T @ B - Y).square_().sum(0)


def factor(X, rcond: float = RCOND, dev=None) -> Factor:
    """Factorize ``X`` once for any number of least-squares targets (see :class:`Factor`)."""
    return Factor(X, rcond, dev, stacklevel=3)


def pinv(X: np.ndarray, rcond: float = RCOND, dev=None) -> np.ndarray:
    """Moore-Penrose pseudo-inverse of X in float64, dropping singular values below ``rcond * s_max``."""
    f = Factor(X, rcond, dev, stacklevel=3)
    return devices.to_numpy(f.R @ f.LT)


def fit(X: np.ndarray, Y: np.ndarray, rcond: float = RCOND, dev=None) -> np.ndarray:
    """``W = argmin ||X W - Y||`` (min-norm), float64, shape [d_in, d_out]. Equals sklearn's
    ``LinearRegression(fit_intercept=False).fit(X, Y).coef_.T``."""
    return devices.to_numpy(Factor(X, rcond, dev, stacklevel=3).solve(Y))


CONSTANT_RTOL = 1e-12  # a coordinate whose variance is below this share of the median coordinate's is constant


def _r2(sse, sst) -> float:
    """Coordinate-averaged r² from per-coordinate SSE and SST (tensors), with the rules of :func:`r2_score`."""
    import torch

    r2 = torch.ones_like(sse)
    ok = sst > CONSTANT_RTOL * sst.quantile(0.5)  # numpy's median (torch's median takes the lower middle value)
    r2[ok] = 1 - sse[ok] / sst[ok]
    r2[~ok & (sse != 0)] = 0.0
    return float(r2.mean())


def _r2_rows(sse, sst):
    """:func:`_r2` of each row of [B, d] SSE and SST (one row per resample of the validation set): [B] tensor."""
    import torch

    ok = sst > CONSTANT_RTOL * sst.quantile(0.5, dim=1, keepdim=True)
    ratio = sse / torch.where(ok, sst, torch.ones_like(sst))
    return torch.where(ok, 1 - ratio, (sse == 0).to(sse.dtype)).mean(1)


def _sst_rows(Y, Wb):
    """Per-coordinate SST of [n, d] ``Y`` under each resample of [B, n] draw counts ``Wb``: [B, d] (centred on the
    full sample's mean first, so that a large mean does not cancel in float64)."""
    Yc = Y - Y.mean(0)
    return Wb @ Yc.square() - (Wb @ Yc).square() / Wb.sum(1, keepdim=True)


def _sst(Y):
    return (Y - Y.mean(0)).square_().sum(0)


def r2_score(Y: np.ndarray, Y_hat: np.ndarray, dev=None) -> float:
    """Coordinate-averaged r², as ``sklearn.metrics.r2_score(Y, Y_hat)`` with its defaults: per output coordinate
    1 - SSE/SST (1 if both are 0, 0 if only SST is 0), then the unweighted mean, in float64.

    One difference, for dead coordinates: a coordinate whose SST is below ``CONSTANT_RTOL`` times the median
    coordinate's is treated as constant (sklearn's SST = 0 case). Such a coordinate is zero to float precision (for
    example where a final LayerNorm has a zero weight, as in all-MiniLM-L6-v2), and its 1 - SSE/SST would be
    about -1e60, swamping the average. Where no coordinate is that small, the result equals sklearn's."""
    dev = devices.resolve(dev)
    Y, Y_hat = _t(Y, dev), _t(Y_hat, dev)
    return _r2(((Y - Y_hat) ** 2).sum(0), _sst(Y))


def r2_resampled(Y: np.ndarray, Y_hat: np.ndarray, boot: np.ndarray, dev=None) -> np.ndarray:
    """:func:`r2_score` of ``Y_hat`` for ``Y`` [n, d] under each resample of the samples: ``boot`` [B, n] draw
    counts (:func:`jtc_utils.core.infra.resample.weights`); returns [B]."""
    dev = devices.resolve(dev)
    Y, Y_hat, Wb = _t(Y, dev), _t(Y_hat, dev), _t(np.array(boot, dtype=np.float64), dev)  # a copy: read-only
    return devices.to_numpy(_r2_rows(Wb @ (Y - Y_hat).square(), _sst_rows(Y, Wb)))


class _Layers:
    """Float64 copies on the device of the layers of [L+1, n, d] states (of the samples ``rows`` only, an index
    array or boolean mask, where given), kept when they fit in ``budget`` bytes (all of them) and made on each use
    otherwise. Each layer is converted on its own, so no float32 copy of the whole selection is ever made."""

    def __init__(self, X, dev, budget, rows=None):
        import torch

        self.X, self.dev = X, dev
        rows = None if rows is None else np.asarray(rows)
        self.rows = rows if rows is None or rows.dtype != bool else np.flatnonzero(rows)
        self.n = X.shape[1] if self.rows is None else len(self.rows)
        self.all = None
        if X.shape[0] * self.n * X.shape[2] * 8 <= budget:
            self.all = torch.empty((X.shape[0], self.n, X.shape[2]), dtype=torch.float64, device=dev)
            for layer in range(X.shape[0]):
                self.all[layer].copy_(torch.from_numpy(np.ascontiguousarray(self._rows(layer))))

    def _rows(self, layer):
        return self.X[layer] if self.rows is None else self.X[layer][self.rows]

    def __getitem__(self, layer):
        return _t(self._rows(layer), self.dev) if self.all is None else self.all[layer]


def _sse(D):
    """Per-coordinate sum of squares of D [n, d], computed in place."""
    return D.square_().sum(0)


def layer_pair_r2(
    X_train: np.ndarray,
    X_val: np.ndarray,
    rcond: float = RCOND,
    train_r2: bool = False,
    dev=None,
    sources=None,
    boot: np.ndarray | None = None,
    rows_train=None,
    rows_val=None,
) -> dict:
    """r² of ``mat`` and ``id`` for every layer pair l < l' (validation set), and the maps to the last layer.

    ``X_train``, ``X_val``: [L+1, n, d] hidden states. Returns a dict with ``r2_mat`` and ``r2_id``, [L+1, L+1]
    (rows = source l, columns = target l'; diagonal 1, lower triangle NaN), and ``maps`` [L, d, d] where
    ``maps[l]`` is ``W`` for l -> L. With ``train_r2`` also ``r2_mat_train`` / ``r2_id_train``, the same scores on
    the training set (same fits; on the Gram route from ``XᵀX`` at 2·d³ flops per pair, see
    :meth:`Factor.train_sse`). ``sources`` restricts the
    work to those source layers (rows; the others stay NaN and their maps zero). ``boot``: [B, n_val] draw counts of
    resamples of the validation set (:func:`jtc_utils.core.infra.resample.weights`); with it also ``boot_r2_mat`` and
    ``boot_r2_id``, [B, L+1, L+1], the validation r² under each resample (the same fits; per pair 2·B·n_val·d flops
    more). ``rows_train``, ``rows_val``: the samples of each split to use (index arrays or boolean masks; default
    all), read layer by layer without copying the states.

    Per source layer: one factorization, then per target the projection ``Lᵀ Y`` (2·n_train·d² flops) and the
    validation prediction ``(X_val R) (Lᵀ Y)`` (2·n_val·d² flops). Memory stays bounded: one source's
    factorization and one target at a time, plus the L maps to the last layer that are returned.
    """
    import torch

    dev = devices.resolve(dev)
    n_layers, _, d = X_train.shape
    tr = _Layers(X_train, dev, FIT_MEMORY, rows_train)
    va = _Layers(X_val, dev, FIT_MEMORY, rows_val)
    n, n_val = tr.n, va.n
    sets = ["", "_train"] if train_r2 else [""]
    out = {}
    for suffix in sets:
        for m in ("r2_mat", "r2_id"):
            out[m + suffix] = np.full((n_layers, n_layers), np.nan)
            np.fill_diagonal(out[m + suffix], 1.0)
    sst = {"": [_sst(va[t]) for t in range(n_layers)]}
    if train_r2:
        sst["_train"] = [_sst(tr[t]) for t in range(n_layers)]
        yy = [tr[t].square().sum(0) for t in range(n_layers)]
    maps = np.zeros((n_layers - 1, d, d))
    buf_va = torch.empty((n_val, d), dtype=torch.float64, device=dev)
    buf_tr = torch.empty((n, d), dtype=torch.float64, device=dev) if train_r2 else None
    if boot is not None:
        boot = np.array(boot, dtype=np.float64)  # a copy: the shared resamples are read-only
        if boot.ndim != 2 or boot.shape[1] != n_val:
            raise ValueError(f"boot must be [resamples, n_val={n_val}] draw counts, got {boot.shape}")
        Wb = _t(boot, dev)
        sst_b = [_sst_rows(va[t], Wb) for t in range(n_layers)]
        for m in ("r2_mat", "r2_id"):
            out["boot_" + m] = np.full((len(boot), n_layers, n_layers), np.nan)
            out["boot_" + m][:, np.arange(n_layers), np.arange(n_layers)] = 1.0
    for src in range(n_layers - 1) if sources is None else sorted(set(sources)):
        if not 0 <= src < n_layers - 1:
            raise ValueError(f"source layer {src} is out of range: sources lie in 0..{n_layers - 2}")
        f = Factor(tr[src], rcond, dev, stacklevel=2)
        Xs_val, Xs = va[src], tr[src]
        Z = Xs_val @ f.R  # validation predictions of every target are Z @ (Lᵀ Y)
        costs.arithmetic(f64=n_val * d * d)
        for t in range(src + 1, n_layers):
            Y, Yv = tr[t], va[t]
            B = f.project(Y)
            W_now = train_r2 or t == n_layers - 1
            # Z B, each resample's weighted sums of both differences, W = R B, train_sse (G W; U B on the SVD route)
            costs.arithmetic(
                f64=n_val * d * d
                + (0 if boot is None else 2 * len(boot) * n_val * d)
                + W_now * d**3
                + train_r2 * (d**3 if f.route == "gram" else n * d * d)
            )
            # differences go to reused buffers: a fresh [n, d] array per pair costs more than the arithmetic
            sse = {}
            for key, D in (
                ("r2_mat", lambda: torch.matmul(Z, B, out=buf_va).sub_(Yv)),
                ("r2_id", lambda: torch.sub(Yv, Xs_val, out=buf_va)),
            ):
                D2 = D().square_()
                sse[key] = D2.sum(0)
                if boot is not None:
                    out["boot_" + key][:, src, t] = devices.to_numpy(_r2_rows(Wb @ D2, sst_b[t]))
            if train_r2 or t == n_layers - 1:
                W = f.R @ B
            if train_r2:
                sse["r2_mat_train"] = f.train_sse(W, B, Y, yy[t])
                sse["r2_id_train"] = _sse(torch.sub(Y, Xs, out=buf_tr))
            for key, v in sse.items():
                out[key][src, t] = _r2(v, sst["_train" if key.endswith("_train") else ""][t])
            if t == n_layers - 1:
                maps[src] = devices.to_numpy(W)
    out["maps"] = maps
    return out


def pair_statistics(r2_mat, r2_id) -> dict:
    """The two statistics of a heatmap pair that the claims of section 3 read, over the pairs l < l' (leading axes,
    such as resamples, are kept): ``min_gap``, the smallest r²(mat) - r²(id); ``id_majority``, the smallest value
    that more than half of the pairs' r²(id) are at or below (the ``floor(n/2)``-th smallest of n)."""
    m, i = np.asarray(r2_mat, dtype=float), np.asarray(r2_id, dtype=float)
    iu = np.triu_indices(m.shape[-1], k=1)
    gap, ids = (m - i)[..., iu[0], iu[1]], np.sort(i[..., iu[0], iu[1]], axis=-1, kind="stable")
    return {"min_gap": gap.min(-1), "id_majority": ids[..., ids.shape[-1] // 2]}


def r2_summary(r2_mat, r2_id) -> dict:
    """What the paper says of a heatmap pair (arrays, or a figure's saved lists), as numbers over the off-diagonal
    pairs l < l'."""
    r2_mat, r2_id = np.asarray(r2_mat, dtype=float), np.asarray(r2_id, dtype=float)
    iu = np.triu_indices(r2_mat.shape[0], k=1)
    m, i = r2_mat[iu], r2_id[iu]
    return {
        "pairs": int(m.size),
        "share_mat_above_id": float(np.mean(m > i)),
        "mean_mat": float(m.mean()),
        "mean_id": float(i.mean()),
        "share_id_below_0.1": float(np.mean(i < 0.1)),
        "min_gap": float((m - i).min()),
    }
