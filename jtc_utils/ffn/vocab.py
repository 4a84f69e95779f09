"""Value vectors projected to the vocabulary (Geva et al. sections 3-4, appendix A.1; spec 2.1 G2 and 2.7).

``rho_i = v_i E^T`` ranks the vocabulary by how much sub-update i promotes each token (per unit coefficient). Three
readings: ``raw`` (the paper's main text), ``ln`` (through the full final norm, ``ln_f(v) E^T``, as the authors'
code does) and ``ln_nobias`` (``gamma * (v - mean v) / sigma``, without the final norm's shift beta, which adds one
shared logit vector to every projection and inflates every overlap).

All value projections of a model never exist at once: values go through the unembedding in chunks (default 1,024
values, 206 MB for GPT-2 medium's 50,257 tokens in float32) keeping only the top and bottom ``k`` of each, so memory
is bounded by the chunk whatever the number of values.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.infra import ordering
from jtc_utils.core.models.blocks import norm_without_shift

READINGS = ("raw", "ln", "ln_nobias")
CHUNK = 1024


def _transform(adapter, vectors, reading: str):
    import torch

    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; choose one of {', '.join(READINGS)}")
    v = torch.as_tensor(np.asarray(vectors, dtype=np.float32)).to(adapter.device)
    if reading == "raw":
        return v
    norm = adapter.final_norm
    if reading == "ln":
        return norm(v)
    return norm_without_shift(norm, v)  # RMSNorm has no shift: ln and ln_nobias coincide


def unembedding(adapter):
    """E [V, d] (float32 tensor): the output matrix the readout multiplies by."""
    return adapter.model.lm_head.weight.detach()


def top_tokens(adapter, vectors, k: int = 30, reading: str = "raw", chunk: int = CHUNK, bottom: bool = False):
    """Top-``k`` token ids (and their logits) of ``vectors`` [n, d] projected to the vocabulary, [n, k] each, in
    descending order (ascending, the most demoted first, with ``bottom``); chunks of ``chunk`` vectors. Ranked on the
    exact logits, exact ties by the lower id (:func:`jtc_utils.core.infra.ordering.top_k` with ``exact``): the chapter's
    statistics (concept coverage, overlaps, clusters) count these sets, and a grid would move them; the sets were
    reproduced exactly under every other arithmetic measured (``tests/noise.json``: spread 0)."""
    import torch

    n = len(vectors)
    E = unembedding(adapter)
    ids = np.zeros((n, k), dtype=np.int64)
    vals = np.zeros((n, k), dtype=np.float32)
    with torch.inference_mode():
        for a in range(0, n, chunk):
            logits = _transform(adapter, vectors[a : a + chunk], reading) @ E.T
            ids[a : a + chunk], vals[a : a + chunk] = ordering.top_k(logits, k, largest=not bottom, exact=True)
    return ids, vals


def iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, |A ∩ B| / |A ∪ B| of two [n, k] id lists."""
    out = np.zeros(len(a))
    for r, (x, y) in enumerate(zip(a, b)):
        sx, sy = set(x.tolist()), set(y.tolist())
        out[r] = len(sx & sy) / len(sx | sy)
    return out


def gaussian_like(values: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random vectors with the per-coordinate mean and standard deviation of ``values`` (a diagonal
    Gaussian; spec 2.2 item 12)."""
    mu, sd = values.mean(0), values.std(0)
    return mu + sd * rng.standard_normal((n, values.shape[1]))
