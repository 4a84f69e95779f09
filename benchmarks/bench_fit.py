"""Benchmark: fitting `mat` for every layer pair, against the hardware floor and against one scikit-learn fit per
pair (the paper's code), measured side by side in one run.

Ours (jtc_utils.core.analysis.linear.layer_pair_r2): torch.linalg in float64 on the chosen device, one factorization per
source layer shared by all its targets, then the validation r² of every pair.

The floor: every pair needs at least two products, the projection of the targets onto the source's factor
(2·n_train·d² flops) and the validation predictions (2·n_val·d² flops). The script measures this machine's float64
matrix-multiply rate on the device with products of that shape, and reports the time those flops take at that
rate, and how far above it ours is (goal on CPU: at most 1.25x).

The reference, `LinearRegression(fit_intercept=False).fit(X_l, X_l')` then `r2_score` for each pair, is slow, so it
is timed on a few pairs spread over the matrix and scaled per pair to all L(L+1)/2 pairs (the output says so).

    python benchmarks/bench_fit.py                      # GPT-2-small shape: 12 layers, width 768, 9,000 + 3,000
    python benchmarks/bench_fit.py --shape gpt2-xl      # 48 layers, width 1,600 (fewer samples on a CPU, see --help)
    python benchmarks/bench_fit.py --device cuda        # on a GPU
"""

import argparse
import time
import warnings

import numpy as np
import torch
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from jtc_utils.core.infra import device as devices
from jtc_utils.core.analysis import linear

SHAPES = {  # layers, width, samples (train, validation) on a GPU / on a CPU
    "gpt2": dict(layers=12, width=768, gpu=(9000, 3000), cpu=(9000, 3000)),
    # the paper's 9,000 + 3,000 take about an hour of float64 products on a 2-core CPU: the CPU run uses 2,000 + 500
    "gpt2-xl": dict(layers=48, width=1600, gpu=(9000, 3000), cpu=(2000, 500)),
}


def residual_chain(L, d, n, seed):
    """Correlated 'hidden states': a residual stream where each layer adds a nonlinear update."""
    rng = np.random.default_rng(seed)
    mix = rng.standard_normal((d, d), dtype=np.float32) / np.sqrt(d)
    X = np.empty((L + 1, n, d), dtype=np.float32)
    X[0] = (rng.standard_normal((n, d), dtype=np.float32) @ mix) + 0.1 * rng.standard_normal((n, d), dtype=np.float32)
    for layer in range(1, L + 1):
        W = rng.standard_normal((d, d), dtype=np.float32) / np.sqrt(d)
        X[layer] = X[layer - 1] + np.tanh(X[layer - 1] @ W)
    return X


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def matmul_rate(n, d, dev, repeats=5) -> float:
    """float64 flop/s of the products every pair needs ([d, n] @ [n, d]), best of ``repeats``."""
    g = torch.Generator().manual_seed(0)
    A = torch.randn(d, n, generator=g, dtype=torch.float64).to(dev)
    B = torch.randn(n, d, generator=g, dtype=torch.float64).to(dev)
    A @ B
    best = float("inf")
    for _ in range(repeats):
        _sync(dev)
        t = time.perf_counter()
        A @ B
        _sync(dev)
        best = min(best, time.perf_counter() - t)
    return 2 * n * d * d / best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="gpt2", choices=list(SHAPES))
    ap.add_argument("--layers", type=int, help="override the shape's layer count")
    ap.add_argument("--width", type=int, help="override the shape's width")
    ap.add_argument("--n-train", type=int, help="training samples (default: the shape's, fewer for gpt2-xl on CPU)")
    ap.add_argument("--n-val", type=int, help="validation samples")
    ap.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    ap.add_argument("--ref-pairs", type=int, default=4, help="pairs the slow reference is timed on")
    ap.add_argument("--ref-dtype", default="float64", choices=["float32", "float64"])
    args = ap.parse_args()
    dev = devices.use(args.device)
    shape = SHAPES[args.shape]
    L, d = args.layers or shape["layers"], args.width or shape["width"]
    n_tr, n_va = shape["gpu" if dev.type == "cuda" else "cpu"]
    n_tr, n_va = args.n_train or n_tr, args.n_val or n_va
    X = residual_chain(L, d, n_tr + n_va, seed=0)
    Xtr, Xva = X[:, :n_tr], X[:, n_tr:]
    pairs = [(a, b) for a in range(L + 1) for b in range(a + 1, L + 1)]
    print(
        f"shape {args.shape}: {L} layers, width {d}, {n_tr} train / {n_va} validation samples, {len(pairs)} pairs, "
        f"device {dev} ({torch.get_num_threads()} CPU threads)"
    )
    if (n_tr, n_va) != (9000, 3000):
        print("  (fewer samples than the paper's 9,000 + 3,000 on this device; the floor scales with them)")

    rate = matmul_rate(n_tr, d, dev)
    flops = len(pairs) * (2 * n_tr * d * d + 2 * n_va * d * d)
    floor = flops / rate
    print(f"float64 matrix multiply on {dev}: {rate / 1e9:.1f} GFLOP/s measured ([{d}, {n_tr}] @ [{n_tr}, {d}])")
    print(
        f"floor: {len(pairs)} pairs x (2*{n_tr}*{d}^2 + 2*{n_va}*{d}^2) = {flops / 1e12:.2f} Tflop -> "
        f"{floor:.1f} s at that rate"
    )

    _sync(dev)
    t = time.perf_counter()
    out = linear.layer_pair_r2(Xtr, Xva, dev=dev)
    _sync(dev)
    ours = time.perf_counter() - t
    routes = [linear.factor(Xtr[a], dev=dev).route for a in range(L)]
    print(
        f"ours: all {len(pairs)} pairs in {ours:.1f} s = {ours / floor:.2f}x the floor (goal on CPU <= 1.25x); "
        f"factorizations: {routes.count('gram')} Gram, {routes.count('svd')} SVD"
    )

    subset = [pairs[i] for i in np.linspace(0, len(pairs) - 1, args.ref_pairs).round().astype(int)]
    dt = np.dtype(args.ref_dtype)
    diffs = []
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in subset:
            reg = LinearRegression(fit_intercept=False).fit(Xtr[a].astype(dt), Xtr[b].astype(dt))
            diffs.append(abs(r2_score(Xva[b].astype(np.float64), reg.predict(Xva[a].astype(dt))) - out["r2_mat"][a, b]))
    per_pair = (time.perf_counter() - t) / len(subset)
    ref = per_pair * len(pairs)
    print(
        f"reference (sklearn, {args.ref_dtype}, CPU): timed on {len(subset)} pairs {subset}, {per_pair:.2f} s per "
        f"pair, scaled to {len(pairs)} pairs: {ref:.0f} s"
    )
    print(
        f"ours is {ref / ours:.1f}x faster than the reference; largest |r2 difference| on the timed pairs: "
        f"{max(diffs):.2e} (goal <= 1e-9)"
    )


if __name__ == "__main__":
    main()
