"""Massive activations: in many pretrained decoders (SmolLM2 among them) the hidden state of a sequence's first
token grows to a norm far above every other position's from the middle layers on (it serves as an attention
sink). The paper's protocol samples one position per sentence uniformly, the first included, so about one sample in
twenty sits at position 0; those few vectors then carry most of the variance that r² (and any other variance-weighted
score) is normalised by. This module measures the norms by position and layer, and r² with and without the samples
at position 0, so the book can show the effect instead of hiding it.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.infra import cache
from jtc_utils.core.analysis import linear
from jtc_utils.core.models.batching import pad_id
from jtc_utils.core.analysis.hidden import padded_batches, samples_identity


def norms_by_position(exp, n: int = 200, max_pos: int = 16) -> dict:
    """Mean L2 norm of ``h^l`` at positions 0 .. max_pos-1 over the first ``n`` validation sentences (whole
    sentences, every position that exists), ``norms`` [L+1, max_pos]; and the ratio of position 0 to the median of
    the others per layer."""
    import torch

    ad = exp.adapter
    s = exp.val
    n = min(n, len(s))

    def compute():
        total = np.zeros((ad.n_layers + 1, max_pos))
        count = np.zeros(max_pos)
        full = s.whole(n)
        with torch.inference_mode():
            for idx, inp, att, _ in padded_batches(ad.family, full, 32, pad_id(ad.tokenizer)):
                states = ad.forward_states(inp, att)[:, :, :max_pos]  # [L+1, B, T', d]
                m = att[:, :max_pos].bool().to(states.device)
                norms = states.norm(dim=-1).masked_fill(~m[None], 0).double().sum(1).cpu().numpy()  # [L+1, T']
                total[:, : norms.shape[1]] += norms
                count[: norms.shape[1]] += m.sum(0).cpu().numpy()
        return {"norms": total / np.maximum(count, 1)[None], "count": count}

    key = {
        "what": "norms_by_position",
        "model": ad.identity,
        "samples": samples_identity(s),
        "n": n,
        "max_pos": max_pos,
    }
    r = cache.cached("norms", key, compute)
    norms = r["norms"]
    ratio = norms[:, 0] / np.median(norms[:, 1:], axis=1)
    return {"norms": norms, "count": r["count"], "ratio_first": ratio, "n_sentences": n, "max_pos": max_pos}


def r2_without_first(exp) -> dict:
    """Mean validation r² of ``mat`` and ``id`` over all layer pairs l < l', as the paper's protocol computes it
    (every sampled position) and with the samples at position 0 left out of both the fit and the evaluation; also
    each layer's r² to the last layer both ways, and how many samples sit at position 0."""
    keep_tr = exp.train.positions != 0
    keep_val = exp.val.positions != 0
    full = exp.layer_r2()

    def compute():
        return linear.layer_pair_r2(exp.X_train, exp.X_val, rows_train=keep_tr, rows_val=keep_val)

    key = {**exp.key("layer_pair_fits"), "what": "layer_pair_fits_without_first"}
    r = cache.cached("fits", key, lambda: {k: v for k, v in compute().items() if k != "maps"})
    L = exp.n_layers
    upper = np.triu_indices(L + 1, 1)
    out = {
        "n_first_train": int((~keep_tr).sum()),
        "n_first_val": int((~keep_val).sum()),
        "n_train": int(len(keep_tr)),
        "n_val": int(len(keep_val)),
    }
    for label, res in (("all", full), ("without_first", r)):
        out[f"mean_r2_mat_{label}"] = float(np.nanmean(np.asarray(res["r2_mat"])[upper]))
        out[f"mean_r2_id_{label}"] = float(np.nanmean(np.asarray(res["r2_id"])[upper]))
        out[f"r2_mat_to_last_{label}"] = np.asarray(res["r2_mat"])[:, L]
        out[f"r2_id_to_last_{label}"] = np.asarray(res["r2_id"])[:, L]
    return out
