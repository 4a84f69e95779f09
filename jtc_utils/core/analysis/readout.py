"""Predictions from early layers (paper section 4): cast the layer-l hidden state to the last layer with a mapping,
read it out, and compare with the model's own final prediction.

* ``id``: ``R(h^l)`` (for GPT-style models ``R`` includes ``ln_f``: the paper's ``idln``, the logit lens);
* ``mat``: ``R(h^l W_l)`` with ``W_l`` the least-squares map l -> L fitted on the training set.

Precision@k(s, l) = 1 if the mapping's top-1 token is among the final model's top-k; Surprisal(s, l) =
-ln p_final(top-1 of the mapping). No gold labels anywhere: agreement with the model itself. The vocabulary
projection is done one layer at a time over the validation set, keeping only what the metrics need (top-1 id and
the gap between the two largest probabilities), so memory stays bounded for a 50k vocabulary.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.base import validate

from jtc_utils.core.infra import cache, resample
from jtc_utils.core.models.batching import pad_id
from jtc_utils.core.analysis.hidden import padded_batches, samples_identity

MAPPINGS = ("mat", "id")
KS = (1, 5, 10)
CHUNK = 4096  # rows per vocabulary projection


def readout_logits(ad, H):
    import torch

    with torch.inference_mode():
        return ad.readout(torch.as_tensor(H, dtype=torch.float32))


def cast(exp, mapping: str, layer: int, H=None) -> np.ndarray:
    """``m_{l->L}(h^l)``: the layer-``layer`` validation states (or ``H``) cast to the last layer by ``mapping``."""
    layer = validate.layer(layer, exp.n_layers, model=exp.model_name)
    H = exp.X_val[layer] if H is None else H
    if mapping == "id" or layer == exp.n_layers:
        return H
    if mapping == "mat":
        return (H.astype(np.float64) @ exp.maps[layer]).astype(np.float32)
    raise ValueError(f"unknown mapping {mapping!r}; choose one of {', '.join(MAPPINGS)}")


def top_and_gap(logits, k: int = 1):
    """The book's one reading of a distribution's confidence: the top-``k`` token ids [n, k] of ``logits`` [n, V]
    and the gap p_(1) - p_(2) between its two largest probabilities [n] (float64 tensors), normalised with a float32
    log-sum-exp (no [n, V] softmax copy). Every lens's early-exit gap is this one (:mod:`jtc_utils.lenses.evaluate`
    calls it too)."""
    import torch

    top = logits.topk(max(k, 2), -1)  # order: counted (top-1 agreement, the gap), never listed
    p12 = torch.exp(top.values[:, :2].double() - torch.logsumexp(logits, -1).double()[:, None])
    return top.indices[:, :k], p12[:, 0] - p12[:, 1]


def readout_stats(ad, H, k: int = 1):
    """Top-``k`` token ids and the gap p_(1) - p_(2) between the two largest probabilities (:func:`top_and_gap`),
    for vectors ``H`` [n, d] cast to the last layer; computed in chunks so that only [chunk, V] logits exist at a
    time."""
    ids, gaps = [], []
    for a in range(0, len(H), CHUNK):
        top, gap = top_and_gap(readout_logits(ad, H[a : a + CHUNK]), k)
        ids.append(top.cpu().numpy())
        gaps.append(gap.cpu().numpy())
    return np.concatenate(ids), np.concatenate(gaps)


def check_ks(ad, ks) -> tuple:
    if isinstance(ks, (str, bytes)) or not hasattr(ks, "__iter__"):
        raise TypeError(f"ks must be a list of whole numbers such as (1, 5, 10), got {ks!r}")
    ks = tuple(validate.integer(k, "k", minimum=1, example="k=5") for k in ks)
    if not ks:
        raise ValueError("ks is empty; pass at least one k, such as (1, 5, 10)")
    if max(ks) > ad.vocab_size:
        raise ValueError(
            f"k={max(ks)} is larger than the vocabulary ({ad.vocab_size} tokens); use k <= {ad.vocab_size}"
        )
    return ks


def final_of(logits, kmax: int) -> dict:
    """The true output ``p_final`` from its float32 logits [n, V]: its top-``kmax`` ids (a tensor [n, kmax]), the
    logits themselves and their float64 log-normaliser, from which any token's log-probability is read without
    keeping a float64 [n, V] array."""
    import torch

    # order: a set to test membership in (Precision@k), never listed
    return {"topk": logits.topk(kmax, -1).indices, "logits": logits, "lse": torch.logsumexp(logits.double(), -1)}


def final_stats(exp, ks=KS) -> dict:
    """:func:`final_of` for the whole validation set, ``topk`` as a numpy array: the float32 logits [n, V] are one
    layer's worth (about 0.6 GB for GPT-2 at 3,000 samples)."""
    ks = check_ks(exp.adapter, ks)
    final = final_of(readout_logits(exp.adapter, exp.X_val[exp.n_layers]), max(ks))
    return {**final, "topk": final["topk"].cpu().numpy()}


def against_final(top1, final: dict, ks=KS) -> tuple[dict, object]:
    """The book's one comparison of predicted top-1 tokens ``top1`` (a tensor [..., n]) with the final output
    ``final`` (:func:`final_of`, its samples the last axis of ``top1``): Precision@k (bool tensors, one per k) and the
    JTC paper's Surprisal -ln p_final[top1] (float64: the logit read in float32, the normaliser in float64)."""
    import torch

    topk = torch.as_tensor(final["topk"]).to(top1.device)
    precision = {k: (top1[..., None] == topk[..., :k]).any(-1) for k in ks}
    logits = final["logits"]  # on the model's device
    flat = top1.reshape(-1, top1.shape[-1]).T.to(logits.device)  # [n, rows]
    surprisal = (final["lse"][:, None] - logits.gather(1, flat).double()).T.reshape(top1.shape)
    return precision, surprisal


def evaluate(exp, top1: np.ndarray, ks=KS, final=None) -> dict:
    """Precision@k and Surprisal (:func:`against_final`) of predicted top-1 tokens ``top1`` [layers, n] against the
    final output, as numpy arrays (Precision@k as floats)."""
    import torch

    final = final or final_stats(exp, ks)
    precision, surprisal = against_final(torch.from_numpy(top1), final, ks)
    return {
        "precision": {k: v.cpu().numpy().astype(float) for k, v in precision.items()},
        "surprisal": surprisal.cpu().numpy(),
    }


def per_sample(exp, ks=KS, mappings=MAPPINGS) -> dict:
    """Per-sample, per-layer results on the validation set for ``mat`` and ``id``: ``top1[m]`` [L+1, n] token ids,
    ``gap[m]`` [L+1, n] (p_(1) - p_(2), the early-exit confidence), ``precision[m][k]`` and ``surprisal[m]``
    [L+1, n]; plus the final model's top-k ``final_topk`` [n, max k]. Cached on disk (the vocabulary projections
    of every layer are the expensive part), keyed on the fits' key, the k values and the mappings."""
    ks = check_ks(exp.adapter, ks)
    key = {**exp.key("layer_pair_fits"), "what": "predictions", "ks": list(ks), "mappings": list(mappings)}
    flat = cache.cached("predictions", key, lambda: _flatten(_per_sample(exp, ks, mappings)))
    out = {"final_topk": flat["final_topk"], "top1": {}, "gap": {}, "precision": {}, "surprisal": {}}
    for m in mappings:
        out["top1"][m], out["gap"][m], out["surprisal"][m] = flat[f"top1/{m}"], flat[f"gap/{m}"], flat[f"surprisal/{m}"]
        out["precision"][m] = {k: flat[f"precision/{m}/{k}"] for k in ks}
    return out


def _flatten(r: dict) -> dict:
    flat = {"final_topk": r["final_topk"]}
    for m in r["top1"]:
        flat[f"top1/{m}"], flat[f"gap/{m}"], flat[f"surprisal/{m}"] = r["top1"][m], r["gap"][m], r["surprisal"][m]
        for k, v in r["precision"][m].items():
            flat[f"precision/{m}/{k}"] = v
    return flat


def _per_sample(exp, ks, mappings) -> dict:
    L = exp.n_layers
    final = final_stats(exp, ks)
    out = {"final_topk": final["topk"], "top1": {}, "gap": {}, "precision": {}, "surprisal": {}}
    for m in mappings:
        top1 = np.zeros((L + 1, exp.X_val.shape[1]), dtype=np.int64)
        gap = np.zeros(top1.shape)
        for layer in range(L + 1):
            ids, gap[layer] = readout_stats(exp.adapter, cast(exp, m, layer))
            top1[layer] = ids[:, 0]
        out["top1"][m], out["gap"][m] = top1, gap
        ev = evaluate(exp, top1, ks, final)
        out["precision"][m], out["surprisal"][m] = ev["precision"], ev["surprisal"]
    return out


def bootstrap_band(values: np.ndarray, seed: int = 0, n_resamples: int = 1000, level: float = 0.95):
    """Mean over samples and its percentile bootstrap interval, per row of ``values`` [layers, n]: what seaborn's
    ``errorbar=('ci', 95)`` draws, but seeded (scipy.stats.bootstrap, percentile method, 1,000 resamples)."""
    from scipy.stats import bootstrap

    rng = np.random.default_rng(seed)
    lo, hi = np.empty(len(values)), np.empty(len(values))
    for i, row in enumerate(values):
        if np.isnan(row).any():  # a layer that was not computed (sub-module casts from some start layers only)
            lo[i] = hi[i] = np.nan
            continue
        if np.all(row == row[0]):  # a constant row has a zero-width interval
            lo[i] = hi[i] = row[0]
            continue
        ci = bootstrap(
            (row,),
            np.mean,
            n_resamples=n_resamples,
            confidence_level=level,
            method="percentile",
            rng=rng,
            vectorized=True,
        ).confidence_interval
        lo[i], hi[i] = ci.low, ci.high
    return values.mean(1), lo, hi


def curves(r: dict, ks=KS, seed: int = 0, mappings=None) -> dict:
    """Per-layer means from :func:`per_sample` results: ``{m: {"p@1", "p@5", "p@10", "surprisal", "surprisal_lo",
    "surprisal_hi", "boot"}}`` (the curves of Figs 4-7, their bootstrap band, and ``boot``: the means of Precision@k
    and Surprisal under the claims' resamples of the validation set, see :mod:`jtc_utils.evidence.verdicts`)."""

    out = {}
    for m in mappings or r["top1"]:
        mean, lo, hi = bootstrap_band(r["surprisal"][m], seed=seed)
        out[m] = {
            **{f"p@{k}": r["precision"][m][k].mean(1) for k in ks},
            "surprisal": mean,
            "surprisal_lo": lo,
            "surprisal_hi": hi,
        }
        w = resample.weights(r["surprisal"][m].shape[1])
        out[m]["boot"] = {
            **{f"p@{k}": resample.resampled_mean(r["precision"][m][k], w) for k in ks},
            "surprisal": resample.resampled_mean(r["surprisal"][m], w),
        }
    return out


def layer_curves(exp, ks=KS, seed: int = 0) -> dict:
    """Mean Precision@k and Surprisal (with its seeded 95% bootstrap band) per layer for ``mat`` and ``id``."""
    return curves(per_sample(exp, ks), ks, seed)


def by_label(exp, r: dict | None = None, k: int = 1) -> dict:
    """Precision@k per layer broken down by the corpus label of the predicted token (beyond the paper):
    ``{label: {"n": count, "mat": [...], "id": [...]}}``, labels ordered by count."""
    r = r or exp.predictions
    labels = np.array([str(x) for x in (exp.val.target_labels or exp.val.labels)])
    if set(labels) == {"None"}:
        raise ValueError("these samples carry no word labels (real text); the breakdown needs the embedded corpus")
    out = {}
    for lab in sorted(set(labels), key=lambda x: -(labels == x).sum()):
        sel = labels == lab
        out[lab] = {"n": int(sel.sum()), **{m: r["precision"][m][k][:, sel].mean(1) for m in r["precision"]}}
    return out


def text_fit(exp, n: int = 500) -> dict:
    """How well a decoder fits its validation text, beyond the paper: the final layer's Precision@1 against the
    *gold* next token at the sampled positions (the paper's metrics compare with the model's own prediction), and
    the perplexity over every token of the first ``n`` validation sentences (the first token of a sentence, which
    has no context, is not scored)."""
    import math

    import torch

    ad, s = exp.adapter, exp.val
    n = validate.integer(n, "n (validation sentences whose perplexity is measured)", minimum=1, example="n=500")
    if not ad.causal:
        raise ValueError(f"text_fit needs a decoder (next-token prediction); {ad.name} is a masked encoder")
    top1 = exp.predictions["final_topk"][:, 0]
    has_next = np.array([p + 1 < len(ids) for ids, p in zip(s.input_ids, s.positions)])
    gold = np.array([ids[p + 1] if p + 1 < len(ids) else -1 for ids, p in zip(s.input_ids, s.positions)])
    n = min(n, len(s))

    def compute():
        full = s.whole(n)
        nll, count = 0.0, 0
        with torch.inference_mode():
            for _, inp, att, _ in padded_batches(ad.family, full, 32, pad_id(ad.tokenizer)):
                inp, att = inp.to(ad.device), att.to(ad.device)
                logits = ad.model(input_ids=inp, attention_mask=att).logits[:, :-1]
                tgt, keep = inp[:, 1:], att[:, 1:].bool()
                # -ln p[gold] = logsumexp - logit[gold]: the log-normaliser in float32 (its own max-shift keeps it
                # exact to float32 rounding), the difference and the sum in float64; no [B, T, V] float64 copy
                lse = torch.logsumexp(logits, -1)
                nll += float((lse.double() - logits.gather(-1, tgt[..., None])[..., 0].double())[keep].sum())
                count += int(keep.sum())
        return {"nll": np.array(nll), "tokens": np.array(count)}

    key = {"what": "text_fit", "version": 2, "model": ad.identity, "samples": samples_identity(s), "n": n}
    r = cache.cached("textfit", key, compute)
    loss = float(r["nll"]) / int(r["tokens"])
    return {
        "gold_p1": float((top1[has_next] == gold[has_next]).mean()),
        "n_gold": int(has_next.sum()),
        "perplexity": math.exp(loss),
        "loss": loss,
        "ppl_sentences": n,
        "ppl_tokens": int(r["tokens"]),
    }


def saturation_layer(top1: np.ndarray, final_top1: np.ndarray) -> np.ndarray:
    """Per sample, the first layer from which the top-1 read out there stays the final top-1 through the last layer
    (the saturation layer: where the prediction settles). ``top1`` [L+1, n] for layers 0..L (any lens's readout);
    row L is the final prediction itself, so every sample saturates by L."""
    agree = np.asarray(top1) == np.asarray(final_top1)[None]
    agree[-1] = True
    # suffix "all agree from here": reverse cumulative AND
    stays = np.flip(np.logical_and.accumulate(np.flip(agree, 0), 0), 0)
    return stays.argmax(0)


def token_strings(ad, ids) -> list[str]:
    """Tokens as the tokenizer writes them (``##`` continuation pieces kept; GPT's leading space shown as '␣')."""
    return [t.replace("Ġ", "␣").replace("Ċ", "\\n") for t in ad.tokenizer.convert_ids_to_tokens(list(ids))]
