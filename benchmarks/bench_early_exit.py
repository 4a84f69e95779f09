"""Early exit: the vectorized λ sweep against the plain per-sample, per-λ loop of the original code, on the same
per-layer statistics. Both must agree exactly; prints the speed ratio (goal: at least 100x).

    python benchmarks/bench_early_exit.py            # the stand-in of GPT-2-medium, plus a paper-sized case

The paper-sized case has GPT-2-medium's shape (24 layers, 3,000 validation samples, the 22 λ of `id`) with
statistics drawn at random; the stand-in case uses the real statistics of the zoo model on the encyclopedia domain.
"""

import time

import numpy as np

from jtc_utils.core.analysis import early_exit as ee
from jtc_utils.core.analysis import experiment


def timed(f, *args, repeat=1):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = f(*args)
        best = min(best, time.perf_counter() - t)
    return out, best


def compare(name, gap, top1, final, dec, lams):
    fast, t_fast = timed(ee.sweep, gap, top1, final, dec, lams, repeat=20)
    slow, t_slow = timed(ee.sweep_loop, gap, top1, final, dec, lams)
    same = all(np.array_equal(fast[k], slow[k]) for k in ("exit", "correct", "x", "y"))
    print(
        f"{name}: {len(lams)} lambdas x {gap.shape[1]} samples x {gap.shape[0] - 1} layers | loop {t_slow:.3f} s, "
        f"vectorized {t_fast * 1e3:.2f} ms, ratio {t_slow / t_fast:.0f}x, identical: {same}"
    )
    assert same, "the vectorized sweep disagrees with the loop"
    return t_slow / t_fast


def main():
    rng = np.random.default_rng(0)
    L, n = 24, 3000
    gap = rng.beta(0.5, 0.5, (L + 1, n))
    top1 = rng.integers(0, 50257, (L + 1, n))
    final = top1[L]
    top1[rng.random((L + 1, n)) < np.linspace(0, 1, L + 1)[:, None]] = 0
    final = np.where(rng.random(n) < 0.3, 0, final)
    dec = ee.decay(rng.integers(0, 40, n), 20.0)
    compare("paper-sized (random statistics)", gap, top1, final, dec, ee.paper_lambdas("id"))

    exp = experiment.shared("tiny-gpt2-medium", "encyclopedia")
    r = exp.predictions
    dec = ee.decay(exp.val.positions, exp.val.mean_length)
    for m in ("mat", "id"):
        compare(f"tiny-gpt2-medium, {m}", r["gap"][m], r["top1"][m], r["final_topk"][:, 0], dec, ee.paper_lambdas(m))


if __name__ == "__main__":
    main()
