"""Benchmark: fitting `mat` for every layer pair, ours vs one scikit-learn fit per pair (the paper's code).

Ours (jtc_utils.linear.layer_pair_r2): one float64 SVD per source layer, shared by all its targets, and the
validation r² of every pair. Reference: `LinearRegression(fit_intercept=False).fit(X_l, X_l')` for each pair, as
the paper's code does, then `r2_score` on the validation set. The reference is slow, so it is timed on a subset of
pairs spread over the matrix and scaled per pair to all L(L+1)/2 pairs (the script says so in its output).

    python benchmarks/bench_fit.py                  # GPT-2-small-like: 12 layers, width 768, 9,000 samples
    python benchmarks/bench_fit.py --ref-dtype float32   # time the reference in float32 as the paper ran it
"""

import argparse
import time

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from jtc_utils import linear


def residual_chain(L, d, n, seed):
    """Correlated 'hidden states': a residual stream where each layer adds a nonlinear update."""
    rng = np.random.default_rng(seed)
    mix = rng.standard_normal((d, d)) / np.sqrt(d)
    X = np.empty((L + 1, n, d), dtype=np.float32)
    X[0] = (rng.standard_normal((n, d)) @ mix) + 0.1 * rng.standard_normal((n, d))
    for layer in range(1, L + 1):
        W = rng.standard_normal((d, d)) / np.sqrt(d)
        X[layer] = X[layer - 1] + np.tanh(X[layer - 1] @ W)
    return X


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--n-train", type=int, default=9000)
    ap.add_argument("--n-val", type=int, default=3000)
    ap.add_argument("--ref-pairs", type=int, default=4, help="pairs the slow reference is timed on")
    ap.add_argument("--ref-dtype", default="float64", choices=["float32", "float64"])
    args = ap.parse_args()
    L, d = args.layers, args.width
    X = residual_chain(L, d, args.n_train + args.n_val, seed=0)
    Xtr, Xva = X[:, :args.n_train], X[:, args.n_train:]
    pairs = [(a, b) for a in range(L + 1) for b in range(a + 1, L + 1)]
    print(f"{L} layers, width {d}, {args.n_train} train / {args.n_val} validation samples, {len(pairs)} pairs")

    t = time.perf_counter()
    r2_mat = linear.layer_pair_r2(Xtr, Xva)["r2_mat"]
    ours = time.perf_counter() - t
    print(f"ours: all {len(pairs)} pairs in {ours:.1f} s")

    subset = [pairs[i] for i in np.linspace(0, len(pairs) - 1, args.ref_pairs).round().astype(int)]
    dt = np.dtype(args.ref_dtype)
    t = time.perf_counter()
    diffs = []
    for a, b in subset:
        reg = LinearRegression(fit_intercept=False).fit(Xtr[a].astype(dt), Xtr[b].astype(dt))
        diffs.append(abs(r2_score(Xva[b].astype(np.float64), reg.predict(Xva[a].astype(dt))) - r2_mat[a, b]))
    per_pair = (time.perf_counter() - t) / len(subset)
    ref = per_pair * len(pairs)
    print(f"reference (sklearn, {args.ref_dtype}): timed on {len(subset)} pairs {subset}, {per_pair:.1f} s per "
          f"pair, scaled to {len(pairs)} pairs: {ref:.0f} s")
    print(f"speed-up: {ref / ours:.1f}x;  largest |r2 difference| on the timed pairs: {max(diffs):.2e}")


if __name__ == "__main__":
    main()
