"""Sub-updates sample by sample (Geva et al. section 5, appendices A.3 and A.5; spec 2.1 G3-G8). For sample s and
block l, with coefficients ``m`` and values ``v_i``: the score of sub-update i for token w is ``m_i (v_i . e_w)``;
its dominance ``c_i = |m_i| ||v_i||`` (:func:`dominant`: the top ten and their share); the top candidate before the
block's FFN is ``w_l = argmax R(r^l)``; the saturation layer is the first layer from which the final top-1 stays
top-1 (:func:`saturation`); a saturation event is one where that layer's FFN made it top-1, an elimination event
where the candidate fell furthest in rank (:func:`events`). :func:`analyse` computes all of it in one pass per
layer, with 10 random sub-updates as the baseline; the ``*_loop`` functions are the tests' per-sample references.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.infra import cache, ordering, resample
from jtc_utils.core.analysis import readout
from jtc_utils.core.models.blocks import runner_for
from jtc_utils.core.analysis.hidden import samples_identity

from . import vocab
from .decompose import FFN, mid_states

TOP = 10
VERSION = 1


def dominant(m: np.ndarray, norms: np.ndarray, k: int = TOP) -> tuple[np.ndarray, np.ndarray]:
    """Per row of coefficients ``m`` [n, d_ff]: the indices of the ``k`` largest ``|m| ||v||`` in descending order
    [n, k], and their share of the row's total [n]."""
    c = np.abs(m) * norms[None]
    idx = ordering.top_k(c, k, exact=True)[0]  # exact ties by the lower index, on every CPU
    share = np.take_along_axis(c, idx, 1).sum(1) / c.sum(1)
    return idx, share


def saturation(top1: np.ndarray) -> np.ndarray:
    """``top1`` [L, n]: argmax R(h^l) for l = 1..L (row L-1 is the final prediction). Returns sat in 1..L."""
    return readout.saturation_layer(top1, top1[-1]) + 1


def saturation_loop(top1: np.ndarray) -> np.ndarray:
    L, n = top1.shape
    out = np.zeros(n, dtype=np.int64)
    for s in range(n):
        sat = L
        for layer in range(L, 0, -1):
            if top1[layer - 1, s] != top1[-1, s]:
                break
            sat = layer
        out[s] = sat
    return out


def events(w: np.ndarray, top1: np.ndarray, rank_w: np.ndarray, sat: np.ndarray) -> dict:
    """Saturation and elimination events: per sample the event layer (1-based) or 0 for none."""
    L, n = top1.shape
    final = top1[-1]
    rows = np.arange(n)
    sat_layer = np.where((sat < L) & (w[np.minimum(sat, L) - 1, rows] != final), sat, 0)
    masked = np.where(w != top1, rank_w, -1)  # only layers where w_l is not top-1 after the block
    elim = masked.argmax(0) + 1  # argmax takes the earliest of ties
    elim = np.where(masked.max(0) >= 0, elim, 0)
    return {"saturation": sat_layer, "elimination": elim}


def events_loop(w, top1, rank_w, sat) -> dict:
    L, n = top1.shape
    s_ev, e_ev = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for s in range(n):
        ls = sat[s]
        if ls < L and w[ls - 1, s] != top1[-1, s]:
            s_ev[s] = ls
        best = -1
        for layer in range(1, L + 1):
            if w[layer - 1, s] != top1[layer - 1, s] and rank_w[layer - 1, s] > best:
                best, e_ev[s] = rank_w[layer - 1, s], layer
    return {"saturation": s_ev, "elimination": e_ev}


def readouts(adapter, H: np.ndarray, ref: np.ndarray | None = None, chunk: int = 1024):
    """Top-1 of R(H) [n], and the rank of token ``ref`` [n] in it (0 = top)."""
    import torch

    top, rank = np.zeros(len(H), np.int64), np.zeros(len(H), np.int64)
    with torch.inference_mode():
        for a in range(0, len(H), chunk):
            logits = adapter.readout(torch.as_tensor(H[a : a + chunk]))
            top[a : a + chunk] = logits.argmax(-1).cpu().numpy()
            if ref is not None:
                r = torch.as_tensor(ref[a : a + chunk]).to(logits.device)
                rank[a : a + chunk] = (logits > logits.gather(1, r[:, None])).sum(-1).cpu().numpy()
    return top, rank


def _stats(scores: np.ndarray) -> np.ndarray:
    """[n, k] scores -> [n, 3]: max, mean, min."""
    return np.stack([scores.max(1), scores.mean(1), scores.min(1)], 1)


def compute(exp, seed: int = 0) -> dict:
    """Everything of this module for ``exp``'s validation samples (see :func:`analyse`)."""
    ffn = FFN(exp.adapter)
    R = mid_states(exp, "validation")
    X = exp.X_val
    L, n = ffn.n_layers, X.shape[1]
    E = vocab.unembedding(exp.adapter).double().cpu().numpy()
    rng = np.random.default_rng(seed)
    out = {k: np.zeros((L, n), np.int64) for k in ("w", "top1", "rank_w")}
    out.update(
        t10=np.zeros((L, n)),
        r10=np.zeros((L, n)),
        dom=np.zeros((L, n, TOP), np.int32),
        stats_w=np.zeros((L, n, 3)),
        stats_w_random=np.zeros((L, n, 3)),
        stats_f=np.zeros((L, n, 3)),
        stats_f_random=np.zeros((L, n, 3)),
        abs_w=np.zeros((L, n)),
        abs_w_random=np.zeros((L, n)),
        scores_w=np.zeros((L, n, ffn.d_ff), np.float32),
    )
    for j in range(L):
        out["w"][j] = readouts(exp.adapter, R[j])[0]
        out["top1"][j], out["rank_w"][j] = readouts(exp.adapter, X[j + 1], out["w"][j])
    final = out["top1"][-1]
    for j in range(L):
        Vj = ffn.values(j)
        m = ffn.coefficients(j, R[j])
        norms = np.linalg.norm(Vj, axis=1)
        idx, share = dominant(m, norms)
        rand = np.stack([rng.choice(ffn.d_ff, TOP, replace=False) for _ in range(n)])
        out["dom"][j], out["t10"][j] = idx, share
        c = np.abs(m) * norms[None]
        out["r10"][j] = np.take_along_axis(c, rand, 1).sum(1) / c.sum(1)
        for ref, key in ((out["w"][j], "w"), (final, "f")):
            sc = m * (E[ref] @ Vj.T)  # [n, d_ff]: score_i(ref) of every sub-update
            dom_sc, rnd_sc = np.take_along_axis(sc, idx, 1), np.take_along_axis(sc, rand, 1)
            out[f"stats_{key}"][j], out[f"stats_{key}_random"][j] = _stats(dom_sc), _stats(rnd_sc)
            if key == "w":
                out["scores_w"][j] = sc
                out["abs_w"][j], out["abs_w_random"][j] = np.abs(dom_sc).mean(1), np.abs(rnd_sc).mean(1)
    out["sat"] = saturation(out["top1"])
    ev = events(out["w"], out["top1"], out["rank_w"], out["sat"])
    out["event_saturation"], out["event_elimination"] = ev["saturation"], ev["elimination"]
    return out


def analyse(exp, seed: int = 0) -> dict:
    """Per validation sample and layer of ``exp`` (arrays [L, n, ...], row j = block j + 1): top candidate ``w``,
    top-1 after the block ``top1`` and the rank of w in it ``rank_w``, dominant ten ``dom`` and their share
    ``t10`` (random ten: ``r10``), max/mean/min score of the dominant ten for w (``stats_w``) and for the final
    token (``stats_f``) with the random ten's (``*_random``), every sub-update's score for w (``scores_w``), the
    saturation layer ``sat`` [n] and the event layers (0 = none). Cached on disk."""
    key = {
        "what": "ffn-subupdates",
        "version": VERSION,
        "model": exp.adapter.identity,
        "val": samples_identity(exp.val),
        "seed": seed,
        "runner": runner_for(exp.adapter.model).version,
    }
    return cache.cached("ffn_sub", key, lambda: compute(exp, seed))


def layer_unit(a: dict) -> np.ndarray:
    """[L] each layer's unit of score: the mean over the validation samples of the range (max - min) of ten random
    sub-updates' scores for the layer's candidate w_l. Scores differ in scale from layer to layer (a block with a
    massive activation scores a hundred times the others), so the claims that pool or compare layers read scores in
    this unit (issue 77)."""
    r = a["stats_w_random"]
    return r[..., 0].mean(1) - r[..., 2].mean(1)


def event_table(a: dict) -> dict:
    """Paper Table 4: for saturation events (reference t_f) and elimination events (reference w_l), the mean over
    events of the max / mean / min score of the dominant ten and of ten random sub-updates (raw, and each event's in
    its layer's unit, :func:`layer_unit`: ``*_scaled``); event counts."""
    n = a["sat"].shape[0]
    rows = np.arange(n)
    unit = layer_unit(a)
    out = {}
    for name, layers, key in (("saturation", a["event_saturation"], "f"), ("elimination", a["event_elimination"], "w")):
        has = layers > 0
        j = layers[has] - 1
        at = np.maximum(layers, 1) - 1  # each sample's event layer (ignored without one)
        parts = {
            "dominant": a[f"stats_{key}"],
            "random": a[f"stats_{key}_random"],
            "dominant_scaled": a[f"stats_{key}"] / unit[:, None, None],
            "random_scaled": a[f"stats_{key}_random"] / unit[:, None, None],
        }
        out[name] = {"events": int(has.sum()), "of": int(n)}
        boot = {}
        for part, stats in parts.items():
            out[name][part] = dict(zip(("max", "mean", "min"), stats[j, rows[has]].mean(0).tolist()))
            # the validation samples resampled (resample.weights): the mean over the events a resample draws
            b = resample.resampled_mean(stats[at, rows].T, where=has)
            boot[part] = {s: b[:, i] for i, s in enumerate(("max", "mean", "min"))}
        out[name]["boot"] = boot
    return out


def abs_scores(a: dict) -> dict:
    """The mean |score| of the dominant ten and of ten random sub-updates over every layer and sample, raw and in
    each layer's unit (:func:`layer_unit`), with their resamples over the validation samples."""
    unit = layer_unit(a)[:, None]
    arrays = {
        "abs_dominant": a["abs_w"],
        "abs_random": a["abs_w_random"],
        "abs_dominant_scaled": a["abs_w"] / unit,
        "abs_random_scaled": a["abs_w_random"] / unit,
    }
    return {
        **{k: float(v.mean()) for k, v in arrays.items()},
        "boot": {k: resample.resampled_mean(v).mean(1).round(6) for k, v in arrays.items()},
    }


def scaled_scores(a: dict) -> np.ndarray:
    """Every sub-update's score for w_l [L, n, d_ff] in its layer's unit (:func:`layer_unit`)."""
    return a["scores_w"] / layer_unit(a)[:, None, None].astype(np.float32)


def layer_scores(a: dict) -> dict:
    """Paper Figure 3: per layer, the mean over samples of the max / mean / min score of the dominant ten for the
    layer's top candidate w_l (and of ten random sub-updates)."""
    dom, rnd = a["stats_w"].mean(1), a["stats_w_random"].mean(1)
    out = {
        "max": dom[:, 0].tolist(),
        "mean": dom[:, 1].tolist(),
        "min": dom[:, 2].tolist(),
        "random_max": rnd[:, 0].tolist(),
        "random_mean": rnd[:, 1].tolist(),
        "random_min": rnd[:, 2].tolist(),
    }
    # the validation samples resampled (resample.weights): [resamples, L] per statistic
    bd, br = (resample.resampled_mean(np.moveaxis(a[k], 1, -1)) for k in ("stats_w", "stats_w_random"))
    out["boot"] = {
        **{s: bd[:, :, i] for i, s in enumerate(("max", "mean", "min"))},
        **{f"random_{s}": br[:, :, i] for i, s in enumerate(("max", "mean", "min"))},
    }
    return out
