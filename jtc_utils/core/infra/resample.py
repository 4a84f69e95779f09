"""The bootstrap of the validation set: every figure whose numbers are means over validation samples carries, beside
each mean, ``boot``, the same mean under :data:`N_RESAMPLES` resamples of the samples (:func:`weights`, a fixed seed;
every figure on the same samples is resampled the same way, so a difference of two curves is resampled as a pair).
How a claim turns these resamples into a verdict is :mod:`jtc_utils.evidence.verdicts`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

N_RESAMPLES = 200
SEED = 0


@lru_cache(maxsize=32)
def weights(n: int, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> np.ndarray:
    """[n_resamples, n] counts: how often each of ``n`` samples is drawn in each resample (with replacement). The
    same ``n`` and seed give the same resamples, so figures on the same samples are resampled together. Computed
    once per arguments and shared: read-only."""
    if n < 1:
        raise ValueError(f"cannot resample {n} samples; the validation set is empty")
    rng = np.random.default_rng([seed, n])
    idx = rng.integers(0, n, size=(n_resamples, n))
    out = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(float)
    out.flags.writeable = False
    return out


def resampled_mean(values, w: np.ndarray | None = None, where=None) -> np.ndarray:
    """The mean over the last axis (samples) of ``values`` under each resample: [n_resamples, *values.shape[:-1]],
    rounded to 6 decimals (what ``book/data`` keeps). ``where``: a mask over the samples, for a mean over some of
    them (events); a resample that draws none of them gives NaN."""
    values = np.asarray(values, dtype=float)
    w = weights(values.shape[-1]) if w is None else w
    if where is not None:
        w = w * np.asarray(where, dtype=bool)
        values = np.where(np.asarray(where, dtype=bool), values, 0.0)
    total = w.sum(1).reshape((-1,) + (1,) * (values.ndim - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.tensordot(w, np.moveaxis(values, -1, 0), axes=(1, 0)) / total
    return np.round(out, 6)


def resampled_counts(ints, minlength: int) -> np.ndarray:
    """A histogram (``np.bincount``) of one integer per sample under each resample: [n_resamples, minlength]."""
    ints = np.asarray(ints, dtype=int)
    return weights(len(ints)) @ np.eye(minlength)[ints]


def has_boot(data) -> bool:
    """Whether a figure's numbers carry resamples anywhere."""
    if isinstance(data, dict):
        return "boot" in data or any(has_boot(v) for v in data.values())
    if isinstance(data, list):  # rows, each with its own resamples
        return any(isinstance(x, dict) and has_boot(x) for x in data)
    return False
