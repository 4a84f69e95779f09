"""A self-supervised early-exit rule on dominant sub-updates, and classifier baselines (Geva et al. section 6.2,
appendix A.5, Table 6; spec 2.1 G10-G11), trained on the experiment's train split and tested on its validation
split, so that they sit on the axes of section 5's early-exit figures. The rule (:func:`rule_exit`) compares a
sample's dominant clusters with the training samples grouped by saturation layer; the classifiers
(:func:`classifier_exit`) are a logistic regression per layer on the mid-block state, the FFN update or the block
output. A sample's prediction is the top-1 of R(h^l) at its exit layer; accuracy is agreement with the model's
final top-1, and layers saved = L - exit.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.infra import cache, resample
from jtc_utils.core.models.blocks import runner_for
from jtc_utils.core.analysis.hidden import samples_identity

from . import clusters, subupdates
from .decompose import FFN, mid_states

PER_CLUSTER = 15  # about #values / 15 clusters (spec 2.2 item 7, zoo)
CS = tuple(10.0 ** np.arange(-3, 4))
FEATURES = ("r", "o", "r+o")
HELD_OUT = 1000
FOLDS = 4
# Newton steps to the optimum (tol 1e-10) rather than L-BFGS stopped at its default tolerance: the regularised
# problem has one optimum, which moves with the float noise of the states by about that noise; a stopped L-BFGS
# path moved the accuracy by up to 0.03 (95 of 3,000 samples) under another BLAS kernel. Reached in a
# few steps here, and as fast.
SOLVER = {"solver": "newton-cholesky", "tol": 1e-10, "max_iter": 100}
# What a layer's classifier learns to recognise (issue 77): "the top-1 has reached the value it keeps to the last
# layer" (sat <= l), which only grows with depth and is exactly what makes an exit at l correct. The spec's reading of
# the paper (G11: 1[sat = l], saturation at exactly this layer) leaves each layer's positives a few percent of the
# samples; with balanced class weights and a threshold at the best F1 its classifiers fired early on most samples
# (262 of 300 real samples exited at blocks 7 and 10, 12.7% accuracy), a baseline that does not work.
TARGET = "final"  # "final": sat <= l; "exact": sat == l (the spec's G11 reading, kept for comparison)
# How a layer's threshold is set (issue 77, fixed before the repaired classifiers were read). The paper calibrates each
# layer's threshold to its best F1 (appendix A.5); with the "final" target that still exited most real samples early
# (35.7% accuracy, 62.5% on the stand-in): F1 trades a wrong exit for a missed one, while an early exit is only as
# good as it is right. "precision": the layers in order, each threshold the lowest whose exits among the held-out
# training samples still running are right at least PRECISION of the time (the paper's best classifier's accuracy,
# 94.4%: "in order to achieve high accuracy", its words), a layer that cannot reach it never exits. "f1" keeps the
# paper's calibration for comparison.
CALIBRATION = "precision"
PRECISION = 0.944
VERSION = 2


def split_summary(exp, split: str) -> dict:
    """Per sample of ``split``: dominant ten ``dom`` [L, n, 10], top-1 after each block ``top1`` [L, n] and the
    saturation layer ``sat`` [n]. The validation split's come from :func:`jtc_utils.ffn.subupdates.analyse`; the
    train split's are computed here. Cached on disk."""
    if split == "validation":
        a = subupdates.analyse(exp)
        return {k: a[k] for k in ("dom", "top1", "sat")}
    if split != "train":
        raise ValueError(f"unknown split {split!r}; choose 'train' or 'validation'")
    s = exp.train

    def compute():
        ffn = FFN(exp.adapter)
        R = mid_states(exp, "train")
        X = exp.X_train
        L, n = ffn.n_layers, X.shape[1]
        dom = np.zeros((L, n, subupdates.TOP), np.int32)
        top1 = np.zeros((L, n), np.int64)
        for j in range(L):
            norms = np.linalg.norm(ffn.values(j), axis=1)
            dom[j] = subupdates.dominant(ffn.coefficients(j, R[j]), norms)[0]
            top1[j] = subupdates.readouts(exp.adapter, X[j + 1])[0]
        return {"dom": dom, "top1": top1, "sat": subupdates.saturation(top1)}

    key = {
        "what": "ffn-split-summary",
        "version": VERSION,
        "model": exp.adapter.identity,
        "samples": samples_identity(s),
        "runner": runner_for(exp.adapter.model).version,
    }
    return cache.cached("ffn_split", key, compute)


def value_clusters(exp, per_value: int = PER_CLUSTER) -> tuple[np.ndarray, bool]:
    """Cluster ids [L, d_ff] of the model's values for the rule (and whether clustering was global). Cached."""
    ffn = FFN(exp.adapter)

    def compute():
        ids, glob = clusters.cluster_model([ffn.values(j) for j in range(ffn.n_layers)], per_value)
        return {"ids": ids, "global": np.array(glob)}

    key = {"what": "ffn-clusters", "model": exp.adapter.identity, "per_value": per_value}
    c = cache.cached("ffn_clusters", key, compute)
    return c["ids"], bool(c["global"])


def _overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Ordered overlap [len(a), len(b)] of cluster lists a [na, k] and b [nb, k]."""
    ov = np.zeros((len(a), len(b)), np.uint8)
    for slot in range(a.shape[1]):
        ov += a[:, slot, None] == b[None, :, slot]
    return ov


def rule_exit(train_clus: np.ndarray, train_sat: np.ndarray, test_clus: np.ndarray, chunk: int = 256) -> np.ndarray:
    """Exit layer (1..L) of every test sample. ``*_clus`` [L, n, 10]: clusters of the dominant ten per layer;
    ``train_sat`` [n_train] in 1..L.

    Every value vector belongs to a cluster (:mod:`.clusters`); at layer l a sample is the clusters of its dominant ten
    sub-updates in descending dominance, and two samples *overlap* in as many of the ten slots as hold the same cluster
    (ordered, as the authors' code). Training samples are grouped by saturation layer x (S_x). A test sample exits at
    the first l = 1..L-1 where, for every later x with S_x non-empty, both the largest and the mean overlap with S_l
    exceed those with S_x; otherwise it runs the whole model."""
    L, n_test = test_clus.shape[0], test_clus.shape[1]
    order = np.argsort(train_sat, kind="stable")
    sat_sorted = train_sat[order]
    groups = [x for x in range(1, L + 1) if (sat_sorted == x).any()]
    starts = np.array([np.searchsorted(sat_sorted, x) for x in groups])
    sizes = np.array([(sat_sorted == x).sum() for x in groups])
    exit_layer = np.full(n_test, L)
    for layer in range(1, L):
        if layer not in groups:
            continue
        later = [g for g, x in enumerate(groups) if x > layer]
        if not later:
            continue
        own = groups.index(layer)
        todo = np.flatnonzero(exit_layer == L)
        tr = train_clus[layer - 1][order]
        for a in range(0, len(todo), chunk):
            rows = todo[a : a + chunk]
            ov = _overlap(test_clus[layer - 1][rows], tr)
            mx = np.maximum.reduceat(ov, starts, axis=1)
            mean = np.add.reduceat(ov.astype(np.int64), starts, axis=1) / sizes
            ok = np.ones(len(rows), bool)
            for g in later:
                ok &= (mx[:, own] > mx[:, g]) & (mean[:, own] > mean[:, g])
            exit_layer[rows[ok]] = layer
    return exit_layer


def rule_exit_naive(train_clus, train_sat, test_clus) -> np.ndarray:
    """:func:`rule_exit` as the plain loop of G10 (tests)."""
    L = test_clus.shape[0]
    out = []
    for t in range(test_clus.shape[1]):
        ex = L
        for layer in range(1, L):
            ov = {}
            for s in range(train_clus.shape[1]):
                o = int(
                    sum(test_clus[layer - 1, t, k] == train_clus[layer - 1, s, k] for k in range(test_clus.shape[2]))
                )
                ov.setdefault(int(train_sat[s]), []).append(o)
            if layer not in ov or not any(x > layer for x in ov):
                continue
            if all(max(ov[layer]) > max(v) and np.mean(ov[layer]) > np.mean(v) for x, v in ov.items() if x > layer):
                ex = layer
                break
        out.append(ex)
    return np.array(out)


def score_exit(exit_layer: np.ndarray, top1: np.ndarray) -> dict:
    """Accuracy (agreement with the final top-1 at the exit layer) and layers saved (all samples, and the correct
    ones only, as the paper words it)."""
    L = top1.shape[0]
    pred = top1[exit_layer - 1, np.arange(len(exit_layer))]
    correct = pred == top1[-1]
    saved = L - exit_layer
    return {
        "accuracy": float(correct.mean()),
        "saved": float(saved.mean()),
        "saved_correct": float(saved[correct].mean()) if correct.any() else 0.0,
        "share_saved": float(saved.mean() / L),
        "exit_hist": np.bincount(exit_layer, minlength=L + 1).tolist(),
        # the validation samples resampled (resample.weights)
        "boot": {"accuracy": resample.resampled_mean(correct), "share_saved": resample.resampled_mean(saved / L)},
    }


def sub_update_rule(exp) -> dict:
    """The rule trained on ``exp``'s train split and tested on its validation split."""
    tr, te = split_summary(exp, "train"), split_summary(exp, "validation")
    ids, glob = value_clusters(exp)
    L = ids.shape[0]
    clus = lambda dom: np.stack([ids[j][dom[j]] for j in range(L)])  # noqa: E731
    ex = rule_exit(clus(tr["dom"]), tr["sat"], clus(te["dom"]))
    return {**score_exit(ex, te["top1"]), "clusters": int(ids.max() + 1), "global_clusters": glob}


def classifier_features(exp, split: str, what: str):
    """Per block but the last, the classifier's feature ``what`` on ``split``: the FFN input ``r``, its output ``o``
    (the block's hidden state minus ``r``) or both summed (``r+o``, the block's hidden state)."""
    ffn = FFN(exp.adapter)
    R = mid_states(exp, split)
    X = exp.X_train if split == "train" else exp.X_val
    for j in range(ffn.n_layers - 1):
        if what == "r":
            yield R[j]
        elif what == "o":
            yield X[j + 1] - R[j]
        else:
            yield X[j + 1]


def targets(sat: np.ndarray, layer: int, target: str = TARGET) -> np.ndarray:
    """A layer's classifier's labels from the saturation layers ``sat`` (1..L): ``final``, the top-1 at ``layer`` is
    the one the model keeps to its last layer (sat <= layer); ``exact``, it saturates at this very layer."""
    if target == "final":
        return sat <= layer
    if target == "exact":
        return sat == layer
    raise ValueError(f"unknown classifier target {target!r}; choose 'final' or 'exact'")


def calibrate(p_held: list, y_held: list, calibration: str = CALIBRATION, precision: float = PRECISION) -> list:
    """Each layer's threshold from the held-out training samples: ``p_held[l]`` their probabilities under the
    layer's classifier (None: no classifier there), ``y_held[l]`` whether an exit there is right. ``precision``: in
    layer order, among the samples no earlier threshold let out, the lowest threshold whose exits are right at least
    ``precision`` of the time (inf where none is: the layer never exits); ``f1``: each layer's best F1 on its own.
    A sample exits at the first layer whose probability is at or above its threshold."""
    from sklearn.metrics import precision_recall_curve

    if calibration not in ("precision", "f1"):
        raise ValueError(f"unknown calibration {calibration!r}; choose 'precision' or 'f1'")
    running = np.ones(len(y_held[0]), bool)
    thresholds = []
    for p, y in zip(p_held, y_held):
        if p is None:
            thresholds.append(np.nan)
            continue
        if calibration == "f1":
            prec, rec, thr = precision_recall_curve(y, p)
            f1 = 2 * prec[:-1] * rec[:-1] / np.maximum(prec[:-1] + rec[:-1], 1e-12)
            thresholds.append(float(thr[np.argmax(f1)]))
            continue
        q, right = p[running], y[running]
        order = np.lexsort((np.arange(len(q)), -q))  # descending probability, ties in sample order (a total order)
        q, right = q[order], right[order]
        share = np.cumsum(right) / np.arange(1, len(q) + 1)
        # a threshold lets out every sample tied with it: only the last of each run of equal probabilities
        ends = np.r_[q[1:] != q[:-1], True] if len(q) else np.zeros(0, bool)
        ok = np.flatnonzero((share >= precision) & ends)
        t = float(q[ok[-1]]) if len(ok) else np.inf
        thresholds.append(t)
        running &= ~(p >= t)
    return thresholds


def classifier_exit(exp, what: str, seed: int = 0, target: str = TARGET, shuffled: bool = False) -> dict:
    """The logistic-regression baseline on feature ``what`` (``r``, ``o`` or ``r+o``). The exit layers and thresholds
    are cached on disk (one cross-validated fit per layer: minutes on the real model's 30 layers).

    Per layer l < L: a logistic regression for the layer's :func:`targets` (by default: the top-1 is already final)
    on the standardised feature (C in 10^-3..10^3, balanced class weights, cross-validated F1), its threshold set by
    :func:`calibrate` on 1,000 training samples held out from the fit; a sample exits at the first layer whose
    probability reaches its threshold. ``shuffled``: the negative control, the same classifiers fitted and
    calibrated with the training samples' saturation layers permuted among them (every layer's class sizes kept), a
    baseline that sees nothing of the states."""
    import sklearn

    if what not in FEATURES:
        raise ValueError(f"unknown feature {what!r}; choose one of {', '.join(FEATURES)}")
    te = split_summary(exp, "validation")
    key = {
        "what": "ffn-classifier-exit",
        "version": VERSION,
        "feature": what,
        "seed": seed,
        "target": target,
        "shuffled": shuffled,
        "calibration": CALIBRATION,
        "precision": PRECISION,
        "model": exp.adapter.identity,
        "train": samples_identity(exp.train),
        "validation": samples_identity(exp.val),
        "runner": runner_for(exp.adapter.model).version,
        "held_out": HELD_OUT,
        "folds": FOLDS,
        "cs": list(CS),
        "solver": SOLVER,
        "sklearn": sklearn.__version__,
    }
    c = cache.cached("ffn_classifier", key, lambda: fit_classifier_exit(exp, what, seed, target, shuffled))
    thresholds = [None if np.isnan(t) else float(t) for t in c["thresholds"]]
    return {**score_exit(c["exit_layer"], te["top1"]), "thresholds": thresholds}


def fit_classifier_exit(exp, what: str, seed: int, target: str = TARGET, shuffled: bool = False) -> dict:
    """The fit behind :func:`classifier_exit`, uncached: per layer a cross-validated logistic regression of the
    layer's :func:`targets` on :func:`classifier_features`, its threshold set on held-out training samples; the exit
    layer of every validation sample and the thresholds."""
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    tr, te = split_summary(exp, "train"), split_summary(exp, "validation")
    L = tr["top1"].shape[0]
    n_tr = len(tr["sat"])
    rng = np.random.default_rng(seed)
    held = np.zeros(n_tr, bool)
    held[rng.choice(n_tr, min(HELD_OUT, n_tr // 5), replace=False)] = True
    sat = tr["sat"][np.random.default_rng([seed, 1]).permutation(n_tr)] if shuffled else tr["sat"]
    p_held, y_held, p_val = [], [], []
    for layer, (Ftr, Fte) in enumerate(
        zip(classifier_features(exp, "train", what), classifier_features(exp, "validation", what)), start=1
    ):
        y = targets(sat, layer, target)
        y_held.append(y[held])
        if min(y[~held].sum(), (~y[~held]).sum()) < FOLDS or y[held].all() or not y[held].any():
            p_held.append(None)  # no classifier at this layer
            p_val.append(None)
            continue
        scaler = StandardScaler().fit(Ftr[~held])
        model = LogisticRegressionCV(
            Cs=list(CS),
            cv=StratifiedKFold(FOLDS, shuffle=True, random_state=seed),
            scoring="f1",
            class_weight="balanced",
            **SOLVER,
        )
        model.fit(scaler.transform(Ftr[~held]), y[~held])
        p_held.append(model.predict_proba(scaler.transform(Ftr[held]))[:, 1])
        p_val.append(model.predict_proba(scaler.transform(Fte))[:, 1])
    thresholds = calibrate(p_held, y_held)
    exit_layer = np.full(len(te["sat"]), L)
    for layer, (p, t) in enumerate(zip(p_val, thresholds), start=1):
        if p is not None:
            exit_layer[(p >= t) & (exit_layer == L)] = layer
    return {"exit_layer": exit_layer, "thresholds": np.array(thresholds, dtype=float)}
