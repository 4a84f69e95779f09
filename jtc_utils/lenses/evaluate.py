"""One evaluator for every lens (related-systems spec 1 and 6): the same validation vectors, the same metrics. With
``p_f = R(h^L_s)`` (top-1 ``t_f``) and the lens's ``q = R(T_l(h^l_s))`` (top-1 ``t_T``): Precision@k =
1[t_T ∈ top-k(p_f)]; S_JTC = -ln p_f[t_T] and N-NJTC's S_N = -ln q[t_f], always labelled; KL(p_f ‖ q) and the bias
KL of the means; r² of ``T_l(h^l)`` against ``h^L``; the early-exit gap of q's two largest probabilities; and, on
GPT-style models, CE = -ln q[gold] against the text's next token. The JTC paper's metrics are read by the same
functions as section 4's ``mat`` and ``id`` (:mod:`jtc_utils.core.analysis.readout`), so they agree to the last digit;
projections run on chunks of samples, with the final distribution recomputed per chunk once for all the lenses
evaluated together (:func:`evaluate_many`).
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.analysis import linear, readout
from jtc_utils.core.infra import resample
from jtc_utils.core.analysis import early_exit

KS = (1, 5, 10)


def _chunk(V: int) -> int:
    return max(64, min(2048, int(2e8 // (8 * V * 3))))


def gold_next(exp, n: int | None = None) -> np.ndarray:
    """The text's next token after each validation sample's position (GPT-style models), -1 where there is none (the
    sentence's last token, or a BERT-style model); the first ``n`` samples."""
    s = getattr(exp, "val", None)  # (unit tests' stand-ins for an experiment have states only)
    n = (len(s) if s is not None else exp.X_val.shape[1]) if n is None else n
    if s is None or not getattr(exp.adapter, "causal", False):
        return np.full(n, -1, dtype=np.int64)
    return np.array(
        [ids[p + 1] if p + 1 < len(ids) else -1 for ids, p in zip(s.input_ids[:n], s.positions[:n])], dtype=np.int64
    )


def evaluate(exp, lens, layers=None, ks=KS, n_val: int | None = None) -> dict:
    """Per-sample metrics of a fitted ``lens`` on ``exp``'s validation vectors at ``layers`` (default 0..L).

    Returns ``layers``, ``precision`` {k: [layers, n]}, ``s_jtc``, ``s_n``, ``kl``, ``gap``, ``ce_gold``, ``top1``
    ([layers, n]),
    ``final_topk`` [n, max k], ``r2`` and ``bias_kl`` [layers], and the lens's label and parameters per layer."""
    return evaluate_many(exp, [lens], layers, ks, n_val)[0]


def evaluate_many(exp, lenses, layers=None, ks=KS, n_val: int | None = None) -> list[dict]:
    """:func:`evaluate` for several lenses at once: the final distribution of each chunk of samples is computed once
    and shared (log-probabilities in float32; sums of probabilities in float64)."""
    import torch

    X = exp.X_val if n_val is None else exp.X_val[:, :n_val]
    for lens in lenses:
        lens.check_states(X)
    L, n = X.shape[0] - 1, X.shape[1]
    layers = list(range(L + 1)) if layers is None else [int(x) for x in layers]
    bad = [x for x in layers if not 0 <= x <= L]
    if bad:
        raise ValueError(f"layers {bad} are outside 0..{L}")
    head = exp.adapter.readout
    kmax = max(ks)
    shape = (len(layers), n)
    out = [
        {
            "precision": {k: np.zeros(shape, bool) for k in ks},
            "s_jtc": np.zeros(shape),
            "s_n": np.zeros(shape),
            "kl": np.zeros(shape),
            "gap": np.zeros(shape),
            "ce_gold": np.full(shape, np.nan),
            "top1": np.zeros(shape, np.int64),
        }
        for _ in lenses
    ]
    final_topk = np.zeros((n, kmax), np.int64)
    gold = gold_next(exp, n)
    with torch.inference_mode():
        V = head(torch.as_tensor(X[L][:1])).shape[-1]
        step = _chunk(V)
        sum_pf = torch.zeros(V, dtype=torch.float64)
        sum_q = [torch.zeros(len(layers), V, dtype=torch.float64) for _ in lenses]
        for a in range(0, n, step):
            sl = slice(a, min(n, a + step))
            logits_f = head(torch.as_tensor(X[L][sl])).float()
            final = readout.final_of(logits_f, kmax)
            logp_f = torch.log_softmax(logits_f, -1)
            p_f = logp_f.exp()
            t_f = final["topk"][:, :1]
            final_topk[sl] = final["topk"].cpu().numpy()
            sum_pf += p_f.sum(0, dtype=torch.float64)
            g = gold[sl]
            has = np.flatnonzero(g >= 0)
            g_t = torch.as_tensor(g[has])[:, None]
            for res, sq, lens in zip(out, sum_q, lenses):
                for i, layer in enumerate(layers):
                    logits_q = head(torch.as_tensor(lens.transform(X[layer][sl], layer))).float()
                    t_T, gap = readout.top_and_gap(logits_q)
                    precision, s_jtc = readout.against_final(t_T[:, 0], final, ks)
                    res["top1"][i, sl] = t_T[:, 0].cpu().numpy()
                    res["gap"][i, sl] = gap.cpu().numpy()
                    res["s_jtc"][i, sl] = s_jtc.cpu().numpy()
                    for k in ks:
                        res["precision"][k][i, sl] = precision[k].cpu().numpy()
                    logq = torch.log_softmax(logits_q, -1)
                    res["s_n"][i, sl] = -logq.gather(1, t_f)[:, 0].double().cpu().numpy()
                    res["kl"][i, sl] = (p_f * (logp_f - logq)).sum(-1, dtype=torch.float64).cpu().numpy()
                    res["ce_gold"][i, a + has] = -logq[torch.as_tensor(has)].gather(1, g_t)[:, 0].double().cpu().numpy()
                    sq[i] += logq.exp().sum(0, dtype=torch.float64)
    mean_pf = sum_pf / n
    for res, sq, lens in zip(out, sum_q, lenses):
        mean_q = sq / n
        res["bias_kl"] = (
            (mean_pf[None] * (mean_pf.clamp_min(1e-300).log()[None] - mean_q.clamp_min(1e-300).log()))
            .sum(-1)
            .cpu()
            .numpy()
        )
        res["r2"] = np.array([linear.r2_score(X[L], lens.transform(X[layer], layer)) for layer in layers])
        res.update(
            final_topk=final_topk,
            layers=np.array(layers),
            label=lens.label,
            name=lens.name,
            params=lens.params(),
            n_layers=L,
        )
    return out


def curves(res: dict, boot=()) -> dict:
    """Per-layer means of :func:`evaluate`'s per-sample metrics (plain lists, for ``book/data``); ``boot``: the
    metrics (of ``p@1``, ``s_n``, ``kl``) whose means under the claims' resamples of the validation samples are
    kept too (see :mod:`jtc_utils.evidence.verdicts`)."""
    out = {
        "layers": res["layers"].tolist(),
        "params": int(res["params"]),
        "r2": res["r2"].tolist(),
        "bias_kl": res["bias_kl"].tolist(),
    }
    for k, v in res["precision"].items():
        out[f"p@{k}"] = v.mean(1).tolist()
    for m in ("s_jtc", "s_n", "kl"):
        out[m] = res[m].mean(1).tolist()
    ce = res.get("ce_gold")
    has_gold = None if ce is None else np.isfinite(ce[0])  # the same samples at every layer
    if has_gold is not None and has_gold.any():  # the mean over the samples that have a next token
        out["ce_gold"] = ce[:, has_gold].mean(1).tolist()
        out["n_gold"] = int(has_gold.sum())
    if boot:
        w = resample.weights(res["kl"].shape[1])
        out["boot"] = {}
        for key in boot:
            if key == "ce_gold":
                out["boot"][key] = resample.resampled_mean(np.nan_to_num(ce), w, where=has_gold).tolist()
            else:
                per_sample = res["precision"][1] if key == "p@1" else res[key]
                out["boot"][key] = resample.resampled_mean(per_sample, w).tolist()
    return out


def oracle_frontier(
    top1: np.ndarray, final_top1: np.ndarray, minimal_layer: int = early_exit.MINIMAL_LAYER, points: int = 21
) -> dict:
    """The best any exit rule could do with a lens: every sample exits at its saturation layer (never before
    ``minimal_layer``), where its prediction is already the final one: Precision@1 = 1 at the mean saturation layer.
    Below 100%, the oracle gives up on the samples that saturate last, sending a share of them out at
    ``minimal_layer`` (right or wrong as the lens is there): ``x`` mean exit layer, ``y`` Precision@1."""
    top1, final_top1 = np.asarray(top1), np.asarray(final_top1)
    sat = np.maximum(readout.saturation_layer(top1, final_top1), minimal_layer)
    L, n = top1.shape[0] - 1, top1.shape[1]
    sat = np.minimum(sat, L)
    early_ok = top1[minimal_layer] == final_top1
    order = np.argsort(-sat, kind="stable")
    xs, ys = [], []
    for share in np.linspace(0, 1, points):
        m = int(round(share * n))
        exit_layer, ok = sat.astype(float).copy(), np.ones(n, bool)
        give_up = order[:m]
        exit_layer[give_up] = minimal_layer
        ok[give_up] = early_ok[give_up]
        xs.append(exit_layer.mean())
        ys.append(ok.mean())
    return {"x": np.array(xs), "y": np.array(ys), "mean_saturation": float(sat.mean())}


def exit_curves(exp, res: dict, lambdas=None) -> dict:
    """Section 5's early-exit curve for a lens evaluated at every layer 0..L, its layers saved at 95% Precision@1,
    and the oracle frontier of the same lens."""
    L = res["n_layers"]
    if list(res["layers"]) != list(range(L + 1)):
        raise ValueError("early exit needs the lens evaluated at every layer 0..L (evaluate with layers=None)")
    pos = early_exit.positions_for_threshold(exp.val.positions[: res["top1"].shape[1]], exp.adapter.family)
    dec = early_exit.decay(pos, exp.val.mean_length)
    final_top1 = res["final_topk"][:, 0]
    lams = early_exit.paper_lambdas("id" if res["name"] == "id" else "mat") if lambdas is None else lambdas
    s = early_exit.sweep(res["gap"], res["top1"], final_top1, dec, lams)
    oracle = oracle_frontier(res["top1"], final_top1)
    return {
        "lambdas": s["lambdas"].tolist(),
        "x": s["x"].tolist(),
        "y": s["y"].tolist(),
        "saved": early_exit.layers_saved(s["x"], s["y"], L),
        "oracle": {
            "x": oracle["x"].tolist(),
            "y": oracle["y"].tolist(),
            "mean_saturation": oracle["mean_saturation"],
            "saved": early_exit.layers_saved(oracle["x"], oracle["y"], L),
        },
    }
