"""Orders that come out the same on every machine. Exact ties come out in another order on another CPU (NumPy's sort
kernels, pandas' default quicksort, ``torch.topk``), and near-ties swap places under another machine's arithmetic.
The book's rule for every order it shows, stores or picks items by:

* sorts are stable, so the position (a row's index, a token id) is the tie-break;
* a top-k list that is only shown (:func:`top_k`) ranks on scores rounded to a grid of :data:`GRID_BITS` cleared
  mantissa bits, a hundred times the measured cross-machine spread of a logit, ties by the lower id;
* a top-k set that a statistic counts (``exact=True``) ranks on the exact scores, exact ties by the lower id.

``tests/core/test_ordering.py`` scans the package and the notebooks for sorts that break this rule.
"""

from __future__ import annotations

import numpy as np

GRID_BITS = 10  # low mantissa bits of a float32 score cleared before ranking (23 - 10 = 13 bits kept)
_MASK = ~np.int32((1 << GRID_BITS) - 1)


def grid(values) -> np.ndarray:
    """``values`` as float32 with the low :data:`GRID_BITS` mantissa bits cleared (rounded towards zero). The map is
    monotone (non-decreasing), so it never reverses two scores; it only merges near-equal ones into ties."""
    v = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    return (v.view(np.int32) & _MASK).view(np.float32)


def order(values, descending: bool = False) -> np.ndarray:
    """Indices that sort the 1-d ``values`` on the grid (:func:`grid`), ties (exact or near) by position: a stable
    argsort that gives the same order on every machine."""
    key = grid(values)
    return np.argsort(-key if descending else key, kind="stable")


def top_k(scores, k: int, largest: bool = True, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best ids per row of ``scores`` [n, V] (a torch tensor or an array) and their scores, [n, k] each:
    ranked on the grid (:func:`grid`), ties by the lower id; ``largest=False`` ranks the smallest first. ``exact``
    ranks on the scores themselves (exact ties by the lower id): for a selection that a statistic sums over, where
    merging near-ties would change the numbers rather than only the order of a list.

    ``torch.topk`` on the rounded scores finds the k-th best grid value of each row; a row whose grid ties straddle
    the k-th place is re-ranked over all its tied candidates, so the selection is exact, not only the order."""
    import torch

    x = torch.as_tensor(scores)
    if x.ndim != 2:
        raise ValueError(f"scores must be [rows, items], got shape {tuple(x.shape)}")
    if not 1 <= k <= x.shape[1]:
        raise ValueError(f"k must be between 1 and {x.shape[1]} (the items per row), got {k}")
    x = x if exact and x.dtype == torch.float64 else x.float()
    key = x if exact else torch.bitwise_and(x.contiguous().view(torch.int32), int(_MASK)).view(torch.float32)
    if not largest:
        key = -key
    top = key.topk(k, -1)  # order: re-ranked below (ties by id)
    kth = top.values[:, -1:]
    n_cand = (key >= kth).sum(-1)
    ids = top.indices.cpu().numpy()
    keys = top.values.cpu().numpy()
    for r in np.flatnonzero((n_cand > k).cpu().numpy()):  # grid ties across the k-th place: rank all candidates
        cand = torch.nonzero(key[r] >= kth[r]).flatten()
        c, ck = cand.cpu().numpy(), key[r, cand].cpu().numpy()
        pick = np.lexsort((c, -ck))[:k]
        ids[r], keys[r] = c[pick], ck[pick]
    rank = np.lexsort((ids, -keys), axis=-1)  # within a row: the grid value down, then the id up
    ids = np.take_along_axis(ids, rank, 1).astype(np.int64)
    vals = torch.gather(x, 1, torch.from_numpy(ids).to(x.device)).cpu().numpy()
    return ids, vals
