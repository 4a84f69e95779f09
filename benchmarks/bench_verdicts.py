"""What the resampled verdicts (issue 32) cost: judging every claim of the four papers from the stored figures with
the 200 resamples against the same claims at their point estimate only, side by side in one run; and the cost of
resampling one figure's per-sample values (a Precision@k figure of the stand-in of GPT2-XL: 25 layers x 3,000
samples x 3 values of k x 2 maps); and the r² of every layer pair with and without its resamples, on states the
size of the stand-in of GPT2-XL's (Fig. 2: 25 layers of width 96, 9,000 training and 3,000 validation samples;
random, so that no cache is involved).

    python benchmarks/bench_verdicts.py

Budget (issue 32): the resampling adds at most 2 minutes to `make book FORCE=1` and 1 minute to `make test`.
"""

import time

import numpy as np

from jtc_utils.core.analysis import linear
from jtc_utils.core.infra import resample
from jtc_utils.evidence import claims
from jtc_utils.ffn import claims as ffn_claims
from jtc_utils.jtc import claims as jtc_claims
from jtc_utils.lenses import claims as lens_claims
from jtc_utils.linearity import claims as sl_claims


def judge_all():
    return [m.all_claims() for m in (jtc_claims, lens_claims, ffn_claims, sl_claims)] + [
        jtc_claims.all_claims(claims.profile_getter("real_"), "real")
    ]


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main():
    judge_all()  # warm the file system cache
    with_resamples = timed(judge_all)
    original = claims.resampling
    claims.resampling = lambda fn, get, seed_keys=(): {"units": []}  # point estimates only
    try:
        point = timed(judge_all)
    finally:
        claims.resampling = original
    print(
        f"judging every claim (four papers, stand-in and real model): {point:.2f} s at the point estimate, "
        f"{with_resamples:.2f} s with {resample.N_RESAMPLES} resamples: +{with_resamples - point:.2f} s"
    )
    rng = np.random.default_rng(0)
    values = (rng.random((25, 3000)) < 0.5).astype(float)
    w = resample.weights(3000)
    t = timed(lambda: [resample.resampled_mean(values, w) for _ in range(6)])
    print(f"resampling one Precision@k figure (6 curves of 25 layers x 3,000 samples): {t:.3f} s")
    X = rng.normal(size=(25, 12000, 96)).astype(np.float32)
    Xt, Xv = X[:, :9000], X[:, 9000:]
    plain = timed(lambda: linear.layer_pair_r2(Xt, Xv, train_r2=True))
    boot = timed(lambda: linear.layer_pair_r2(Xt, Xv, train_r2=True, boot=resample.weights(3000)))
    print(
        f"r² of every layer pair (25 layers, width 96, 9,000 / 3,000 samples): {plain:.1f} s, with "
        f"{resample.N_RESAMPLES} resamples {boot:.1f} s: +{boot - plain:.1f} s (x{boot / plain:.2f})"
    )


if __name__ == "__main__":
    main()
