"""Lenses: the two speed targets of the lens issue, measured side by side in one run.

1. The closed-form rank sweep: every rank 1..d of one source layer from one least-squares fit and one d×d
   eigendecomposition (``closed_form.RankFamily``), against fitting each rank separately (least squares and the
   eigendecomposition redone per rank). Same maps; prints the ratio.
2. NJTC / N-NJTC by gradient descent: all layer pairs of the stand-in of GPT2-XL (300 pairs) as one batched model,
   against the same pairs trained one by one in a loop, a few epochs each (the per-epoch cost is what differs).
   Same results within float tolerance; prints the ratio (goal: at least 10x).

    python benchmarks/bench_lenses.py
"""

import time

import numpy as np

from jtc_utils.lenses import closed_form, lowrank
from jtc_utils.core.analysis import experiment


def rank_sweep(exp, layer: int):
    X, Y = exp.X_train[layer], exp.X_train[exp.n_layers]
    d = X.shape[1]
    t = time.perf_counter()
    fam = closed_form.RankFamily(X, Y)
    once = [fam.matrix(r) for r in range(1, d + 1)]
    t_once = time.perf_counter() - t
    t = time.perf_counter()
    each = [closed_form.RankFamily(X, Y).matrix(r) for r in range(1, d + 1)]
    t_each = time.perf_counter() - t
    err = max(float(np.abs(a - b).max()) for a, b in zip(once, each))
    print(
        f"rank sweep, {exp.model_name} layer {layer}, ranks 1..{d}: each rank separately {t_each:.2f} s, one "
        f"factorisation {t_once:.3f} s, ratio {t_each / t_once:.0f}x, largest difference {err:.1e}"
    )
    assert err < 1e-8


def batched_descent(exp, epochs: int = 4):
    L = exp.n_layers
    pairs = [(a, b) for a in range(L) for b in range(a + 1, L + 1)]
    recipe = {"max_epochs": epochs, "patience": epochs + 1}
    for norm in (False, True):
        t = time.perf_counter()
        batched = lowrank.train(exp.X_train, pairs, 4, norm, seed=0, recipe=recipe, progress=False)
        t_batched = time.perf_counter() - t
        t = time.perf_counter()
        loop = lowrank.train_loop(exp.X_train, pairs, 4, norm, seed=0, recipe=recipe)
        t_loop = time.perf_counter() - t
        Mb, Ml = lowrank.affine_form(batched)[0], lowrank.affine_form(loop)[0]
        err = float(np.abs(Mb - Ml).max() / np.abs(Ml).max())
        print(
            f"{'N-NJTC' if norm else 'NJTC'} rank 4, {len(pairs)} pairs x {epochs} epochs: one by one "
            f"{t_loop:.1f} s, batched {t_batched:.1f} s, ratio {t_loop / t_batched:.1f}x, largest relative "
            f"difference of the maps {err:.1e}"
        )
        assert err < 1e-3


def main():
    exp = experiment.shared("tiny-gpt2-xl", "encyclopedia")
    rank_sweep(exp, exp.n_layers // 2)
    batched_descent(exp)


if __name__ == "__main__":
    main()
