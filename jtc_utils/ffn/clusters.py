"""Clusters of value vectors (Geva et al. sections 5.2 and 6.2; spec 2.1 G9, 2.2 items 6-7).

Agglomerative clustering with complete linkage on the cosine distance between raw value vectors of every block,
cut into ``k`` clusters (scipy). The zoo clusters all values of a model at once: k = #values / 10 for the
extreme-sub-update analysis (section 5.2) and #values / 15 for the early-exit rule. A model with too many values
for one condensed distance matrix (the real model: 46,080) is clustered block by block, ``k / L`` clusters per
block (a deviation the chapter states); the early-exit rule compares clusters within one layer only, so it is
unaffected.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.infra import ordering

MAX_GLOBAL = 12_000  # values clustered at once: a condensed distance matrix of ~72M doubles


def cluster(values: np.ndarray, k: int) -> np.ndarray:
    """Cluster ids (0-based) of ``values`` [n, d] into at most ``k`` clusters."""
    from scipy.cluster.hierarchy import fcluster, linkage

    if not 1 <= k <= len(values):
        raise ValueError(f"k must be between 1 and the number of values ({len(values)}), got {k}")
    Z = linkage(np.asarray(values, dtype=np.float64), method="complete", metric="cosine")
    return fcluster(Z, k, criterion="maxclust").astype(np.int64) - 1


def cluster_model(values_by_block: list, per_value: int) -> tuple[np.ndarray, bool]:
    """Cluster ids [L, d_ff] for every value of a model, about one cluster per ``per_value`` values; globally when
    the model has at most :data:`MAX_GLOBAL` values, else block by block (ids then carry the block). Returns the ids
    and whether the clustering was global."""
    L, d_ff = len(values_by_block), len(values_by_block[0])
    if L * d_ff <= MAX_GLOBAL:
        ids = cluster(np.concatenate(values_by_block), max(1, L * d_ff // per_value))
        return ids.reshape(L, d_ff), True
    k = max(1, d_ff // per_value)
    return np.stack([cluster(v, k) + j * k for j, v in enumerate(values_by_block)]), False


def extreme_share(scores: np.ndarray, ids: np.ndarray, top: float = 0.001, cover: float = 0.5) -> dict:
    """Section 5.2 (claim F8): of the sub-update scores ``scores`` [L, n, d_ff] (every sample, every value), take the
    top ``top`` share by absolute value; the fewest clusters holding at least ``cover`` of those occurrences, and
    the share of all values inside them; the share of those occurrences in the block that holds most of them."""
    L, n, d_ff = scores.shape
    flat = np.abs(scores).reshape(-1)
    n_top = max(1, int(round(top * flat.size)))
    pick = ordering.top_k(flat[None], n_top, exact=True)[0][0]
    layer, _, neuron = np.unravel_index(pick, scores.shape)
    occ = np.bincount(ids[layer, neuron], minlength=ids.max() + 1)
    order = np.argsort(-occ, kind="stable")
    need = int(np.searchsorted(np.cumsum(occ[order]), cover * n_top) + 1)
    chosen = order[:need]
    sizes = np.bincount(ids.reshape(-1), minlength=ids.max() + 1)
    return {
        "occurrences": int(n_top),
        "clusters": int(need),
        "of_clusters": int((sizes > 0).sum()),
        "values_share": float(sizes[chosen].sum() / ids.size),
        "occurrence_share": float(occ[chosen].sum() / n_top),
        "top_layer_share": float(np.bincount(layer, minlength=L).max() / n_top),
    }
