"""Sub-updates and the JTC paper's linear shortcuts (spec 2.6).

* ``mat_ffn`` of section 6 replaces block l's FFN by the least-squares matrix A from its input u = ln_2(r) to its
  output o. Since ``o = m V + b_V``, ``A = (U^+ M) V + U^+ 1 b_V``: every coefficient m_i is replaced by its own
  least-squares linear predictor ``u a_i`` and the values are kept. :func:`coefficient_fit` measures how linear each
  coefficient is (held-out r² per neuron), the identity itself, and how much of mat_ffn's error comes from the
  dominant ten sub-updates.
* Through ``mat``: ``h^l M_l = r^l M_l + sum_i m_i (v_i M_l) + b_V M_l`` exactly, so a value seen through the map
  to the last layer projects as ``(v_i M_l) E^T``. :func:`through_mat` compares its top tokens with the value's own.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.analysis import linear
from jtc_utils.core.analysis import submodules

from . import concepts, subupdates, vocab
from .decompose import FFN, mid_states


def coefficient_fit(exp) -> dict:
    """Per block: held-out r² of every coefficient's linear predictor (mean, and for the neurons most often among
    the dominant ten vs the rest), the share of mat_ffn's squared error sum_i (m_i - m̂_i)² ||v_i||² due to the
    dominant ten, and the largest gap between A and (U^+ M) V + U^+ 1 b_V."""
    ffn = FFN(exp.adapter)
    Rtr, Rva = mid_states(exp, "train"), mid_states(exp, "validation")
    A5 = submodules.fit(exp)["ffn"]
    out = {k: [] for k in ("r2_mean", "r2_dominant", "r2_rest", "error_share_dominant", "identity_gap")}
    for j in range(ffn.n_layers):
        U, Uv = ffn.ffn_input(j, Rtr[j]).double().cpu().numpy(), ffn.ffn_input(j, Rva[j]).double().cpu().numpy()
        M, Mv = ffn.coefficients(j, Rtr[j]), ffn.coefficients(j, Rva[j])
        P = linear.pinv(U)
        a = P @ M
        A = a @ ffn.values(j) + P.sum(1, keepdims=True) * ffn.value_bias(j)[None]
        out["identity_gap"].append(float(np.abs(A - A5[j]).max() / np.abs(A5[j]).max()))
        Mh = Uv @ a
        sst = ((Mv - Mv.mean(0)) ** 2).sum(0)
        r2 = 1 - ((Mv - Mh) ** 2).sum(0) / np.maximum(sst, 1e-300)
        norms = np.linalg.norm(ffn.values(j), axis=1)
        idx, _ = subupdates.dominant(Mv, norms)
        freq = np.bincount(idx.reshape(-1), minlength=ffn.d_ff)
        top = np.argsort(-freq, kind="stable")[: subupdates.TOP]
        rest = np.setdiff1d(np.arange(ffn.d_ff), top)
        err = (Mv - Mh) ** 2 * norms[None] ** 2
        dom_err = np.take_along_axis(err, idx, 1).sum(1)
        out["r2_mean"].append(float(r2.mean()))
        out["r2_dominant"].append(float(r2[top].mean()))
        out["r2_rest"].append(float(r2[rest].mean()))
        out["error_share_dominant"].append(float((dom_err / err.sum(1)).mean()))
    out["uniform_share"] = subupdates.TOP / ffn.d_ff
    return out


def through_mat(exp, token_class: dict, k: int = 30) -> dict:
    """Per block l: IoU of the top-k of (v_i M_l) E^T with the value's own top-k, and the concept coverage of both."""
    ffn = FFN(exp.adapter)
    out = {"iou": [], "coverage_raw": [], "coverage_mat": []}
    for j in range(ffn.n_layers):
        V = ffn.values(j)
        own, _ = vocab.top_tokens(exp.adapter, V, k)
        M = exp.maps[j + 1].astype(np.float64) if j + 1 < ffn.n_layers else np.eye(ffn.d)  # at L: the identity
        cast, _ = vocab.top_tokens(exp.adapter, V @ M, k)
        out["iou"].append(float(vocab.iou(own, cast).mean()))
        out["coverage_raw"].append(float(concepts.coverage(own, token_class).mean()))
        out["coverage_mat"].append(float(concepts.coverage(cast, token_class).mean()))
    return out
