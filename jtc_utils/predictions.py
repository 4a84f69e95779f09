"""Predictions from early layers (paper section 4): cast the layer-l hidden state to the last layer with a mapping,
read it out, and compare with the model's own final prediction.

* ``id``: ``R(h^l)`` (for GPT-style models ``R`` includes ``ln_f``: the paper's ``idln``, the logit lens);
* ``mat``: ``R(h^l W_l)`` with ``W_l`` the least-squares map l -> L fitted on the training set.

Precision@k(s, l) = 1 if the mapping's top-1 token is among the final model's top-k; Surprisal(s, l) =
-ln p_final(top-1 of the mapping). No gold labels anywhere: agreement with the model itself. The vocabulary
projection is done one layer at a time over the validation set, keeping only what the metrics need.
"""

from __future__ import annotations

import numpy as np

MAPPINGS = ("mat", "id")


def _logits(ad, H):
    import torch

    with torch.inference_mode():
        return ad.readout(torch.as_tensor(H, dtype=torch.float32))


def per_sample(exp, ks=(1, 5, 10)) -> dict:
    """Per-sample, per-layer results on the validation set: ``top1[m]`` [L+1, n] token ids, ``precision[m][k]`` and
    ``surprisal[m]`` [L+1, n]; plus the final model's top-10 ``final_topk`` [n, 10]."""
    import torch

    ad, X, maps = exp.adapter, exp.X_val, exp.maps
    L = exp.n_layers
    if max(ks) > ad.vocab_size:
        raise ValueError(f"k={max(ks)} is larger than the vocabulary ({ad.vocab_size} tokens)")
    final = _logits(ad, X[L])
    logp_final = torch.log_softmax(final.double(), -1)
    topk = final.topk(max(ks), -1).indices
    out = {"final_topk": topk.numpy(), "top1": {}, "precision": {}, "surprisal": {}}
    for m in MAPPINGS:
        top1 = np.zeros((L + 1, X.shape[1]), dtype=np.int64)
        for layer in range(L + 1):
            H = X[layer] if (m == "id" or layer == L) else X[layer].astype(np.float64) @ maps[layer]
            top1[layer] = _logits(ad, H).argmax(-1).numpy()
        t1 = torch.from_numpy(top1)
        out["top1"][m] = top1
        out["precision"][m] = {k: (t1[..., None] == topk[None, :, :k]).any(-1).numpy().astype(float) for k in ks}
        out["surprisal"][m] = (-logp_final.gather(1, t1.T).T).numpy()
    return out


def layer_curves(exp, ks=(1, 5, 10)) -> dict:
    """Mean Precision@k and Surprisal per layer for ``mat`` and ``id`` (the curves of Figs 4-7)."""
    r = per_sample(exp, ks)
    return {m: {**{f"p@{k}": r["precision"][m][k].mean(1) for k in ks}, "surprisal": r["surprisal"][m].mean(1)}
            for m in MAPPINGS}
