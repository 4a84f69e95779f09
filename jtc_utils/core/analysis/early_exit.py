"""Early exit (paper section 5; spec section 6): stop at the first layer whose cast prediction is confident enough.

For a sample s with mapping m the confidence at layer l is the gap between the two largest probabilities of
``R(m_{l->L}(h^l_s))``; the sample exits at the first l in 1 .. L-1 where

    gap > 0.9 * lambda + 0.1 * exp(-4 * pos_s / N)        (strict; layer 0 never exits; no clipping)

else at L with the model's output. ``pos_s`` is the 0-based position (for BERT-style models the authors' constant 3,
:data:`BERT_POS`); ``N`` the mean of ``pos + 1`` over the validation set. :func:`sweep` does every λ at once on the
per-layer statistics of section 4; :func:`sweep_loop` is the original per-sample loop, the tests' reference.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from jtc_utils.core.infra import resample

TAU = 4.0
MINIMAL_LAYER = 1
BERT_POS = 3  # the authors' code uses this constant position for every BERT sample


def paper_lambdas(mapping: str) -> np.ndarray:
    """The λ values of the paper's appendix A.3: -1.112, 0.0, 0.1, ..., 1.0, 1.112 for both mappings, and for
    ``id`` also 1 + i * 0.0112 for i = 1..9 (computed as the code does, ``start + i * (end - start) / steps``)."""
    lams = [-1.112] + [0.0 + i * (1.0 - 0.0) / 10 for i in range(11)] + [1.112]
    if mapping == "id":
        lams += [1.0 + i * 0.0112 for i in range(1, 10)]
    return np.array(sorted(lams))


def check_lambdas(lambdas) -> np.ndarray:
    """A non-empty, finite, numeric list of λ, as a float array; anything else is refused with the fix."""
    if isinstance(lambdas, (str, bytes)) or not hasattr(lambdas, "__len__"):
        raise ValueError(f"lambdas must be a list of numbers, got {lambdas!r}")
    if len(lambdas) == 0:
        raise ValueError("lambdas is empty; pass at least one confidence level, e.g. paper_lambdas('mat')")
    bad = [x for x in lambdas if isinstance(x, bool) or not isinstance(x, (Real, np.number))]
    if bad:
        raise ValueError(f"lambdas must be numbers; these are not: {bad[:5]!r}")
    arr = np.asarray(lambdas, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"lambdas must be finite numbers, got {arr[~np.isfinite(arr)][:5].tolist()}")
    return arr


def positions_for_threshold(positions, family: str, bert_pos="code") -> np.ndarray:
    """``pos`` of the threshold: the real 0-based positions, except BERT's constant 3 by default (``bert_pos=
    "code"``); ``bert_pos="actual"`` uses BERT's real positions too."""
    positions = np.asarray(positions, dtype=float)
    if bert_pos not in ("code", "actual"):
        raise ValueError(f"bert_pos must be 'code' (the authors' constant 3) or 'actual', got {bert_pos!r}")
    if family == "bert" and bert_pos == "code":
        return np.full_like(positions, BERT_POS)
    return positions


def decay(pos: np.ndarray, N: float, tau: float = TAU) -> np.ndarray:
    """The position term ``exp(-tau * pos / N)`` of the threshold, per sample."""
    return np.exp(-tau * np.asarray(pos, dtype=float) / N)


def sweep(gap, top1, final_top1, dec, lambdas, minimal_layer: int = MINIMAL_LAYER) -> dict:
    """All λ at once. ``gap``/``top1``: [L+1, n] per-layer confidence and top-1 id of one mapping (rows 0..L; row
    L is not used); ``final_top1`` [n]; ``dec`` [n] from :func:`decay`. Returns ``exit`` [n_λ, n] (1..L),
    ``correct`` [n_λ, n], and per λ ``x`` = mean exit layer and ``y`` = mean Precision@1."""
    lams = check_lambdas(lambdas)
    gap, top1 = np.asarray(gap), np.asarray(top1)
    L = gap.shape[0] - 1
    thr = 0.9 * lams[:, None] + 0.1 * np.asarray(dec)[None, :]  # [λ, n]
    first = max(minimal_layer, 0)
    # the first layer l >= first with gap[l] > thr is the first where the running maximum of the gap exceeds thr;
    # the running maximum only grows, so that layer is first + (number of layers where it is still <= thr), and
    # a sample that never passes gets first + (L - first) = L, the full model
    running_max = np.maximum.accumulate(gap[first:L], axis=0)  # [layers, n]
    still_below = running_max[:, None, :] <= thr[None, :, :]  # [layers, λ, n]
    count_type = np.uint8 if L - first < 256 else np.uint16  # summing small ints over the outer axis is fast
    exit_layer = first + still_below.view(np.uint8).sum(0, dtype=count_type).astype(np.int64)
    pred = top1[exit_layer, np.arange(gap.shape[1])[None, :]]  # top-1 at each sample's exit layer
    correct = (exit_layer == L) | (pred == np.asarray(final_top1)[None, :])
    return {"lambdas": lams, "exit": exit_layer, "correct": correct, "x": exit_layer.mean(1), "y": correct.mean(1)}


def sweep_loop(gap, top1, final_top1, dec, lambdas, minimal_layer: int = MINIMAL_LAYER) -> dict:
    """The same as :func:`sweep`, one sample and one λ at a time, as the original code walks the layers."""
    lams = check_lambdas(lambdas)
    L, n = len(gap) - 1, len(final_top1)
    exit_layer = np.full((len(lams), n), L)
    correct = np.ones((len(lams), n), dtype=bool)
    for a, lam in enumerate(lams):
        for s in range(n):
            for layer in range(L):
                theta = 2.0 if layer < minimal_layer else 0.9 * lam + 0.1 * dec[s]
                if gap[layer][s] > theta:
                    exit_layer[a, s] = layer
                    correct[a, s] = top1[layer][s] == final_top1[s]
                    break
    return {"lambdas": lams, "exit": exit_layer, "correct": correct, "x": exit_layer.mean(1), "y": correct.mean(1)}


def curve_points(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Sort a curve by x and average y over points with the same x (what seaborn draws)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    xs = np.unique(x)
    return xs, np.array([y[x == v].mean() for v in xs])


def layers_saved(x, y, n_layers: int, target: float = 0.95) -> dict:
    """Read "layers saved at ``target`` Precision@1" off an early-exit curve: sort by x, join the points with
    straight lines, take the smallest x where the line reaches ``target``; saved = L - x. NaN if never reached."""
    xs, ys = curve_points(x, y)
    x_at = np.nan
    for i in range(len(xs)):
        if ys[i] >= target:
            if i == 0:
                x_at = xs[0]
            else:  # crossing inside the segment (i-1, i)
                x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
                x_at = x0 + (target - y0) * (x1 - x0) / (y1 - y0)
            break
    saved = n_layers - x_at
    return {"target": target, "x": float(x_at), "saved": float(saved), "share": float(saved / n_layers)}


def fixed_exit(precision_at_1: np.ndarray) -> np.ndarray:
    """The fixed-exit baseline: mean Precision@1 when every sample stops at layer l (l = 0..L), the section-4
    curve plotted at x = l."""
    return np.asarray(precision_at_1).mean(1)


def early_exit_curves(exp, bert_pos="code", lambdas=None) -> dict:
    """Figures 8/9/20/21 for one experiment: the early-exit curve of ``mat`` and ``id`` over the paper's λ (or
    ``lambdas``), the fixed-exit curves, and the layers saved at 95% Precision@1; ``boot`` holds all three under
    the claims' resamples of the validation samples."""
    r = exp.predictions
    L = exp.n_layers
    pos = positions_for_threshold(exp.val.positions, exp.adapter.family, bert_pos)
    N = exp.val.mean_length
    dec = decay(pos, N)
    final_top1 = r["final_topk"][:, 0]
    out = {
        "n_layers": L,
        "N": N,
        "bert_pos": bert_pos if exp.adapter.family == "bert" else "actual",
        "early": {},
        "fixed": {},
        "saved": {},
    }
    w = resample.weights(len(final_top1))
    boot = {"early": {}, "fixed": {}, "saved": {}}
    for m in r["top1"]:
        s = sweep(r["gap"][m], r["top1"][m], final_top1, dec, paper_lambdas(m) if lambdas is None else lambdas)
        out["early"][m] = {"lambdas": s["lambdas"], "x": s["x"], "y": s["y"]}
        out["fixed"][m] = fixed_exit(r["precision"][m][1])
        out["saved"][m] = layers_saved(s["x"], s["y"], L)
        # the same under the claims' resamples of the validation samples (see jtc_utils.evidence.verdicts)
        bx, by = resample.resampled_mean(s["exit"], w), resample.resampled_mean(s["correct"], w)
        boot["early"][m] = {"x": bx, "y": by}
        boot["fixed"][m] = resample.resampled_mean(r["precision"][m][1], w)
        saved = [layers_saved(x, y, L) for x, y in zip(bx, by)]
        boot["saved"][m] = {k: np.array([v[k] for v in saved]) for k in ("x", "saved", "share")}
    out["boot"] = boot
    return out
