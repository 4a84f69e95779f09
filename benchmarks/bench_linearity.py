"""Time of every linearity score of every zoo model from the cached states (issue 16: under a minute on two cores),
measured on the states of the paper's protocol (16,000 tokens per model, both splits) after they are cached:
the in-sample, held-out and null scores, with and without the residual, with and without position 0.

    python benchmarks/bench_linearity.py
"""

from __future__ import annotations

import time


def main():
    from jtc_utils.core.models import models
    from jtc_utils.core.data import profiles
    from jtc_utils.linearity import score, states

    data = {}
    for m in profiles.get("tiny").models:
        ad = models.adapter(m)
        data[m] = (states.all_positions(ad, "validation"), states.all_positions(ad, "train"))  # cached states
    t0 = time.perf_counter()
    pairs = 0
    for m, (val, tr) in data.items():
        for kv, kt in ((None, None), (val["position"] > 0, tr["position"] > 0)):
            pairs += len(score.profile(val["X"], keep=kv))
            score.heldout_profile(tr["X"], val["X"], kt, kv)
    dt = time.perf_counter() - t0
    print(
        f"linearity scores of {len(data)} zoo models ({pairs} layer pairs, both position sets, in-sample + "
        f"held-out + null): {dt:.1f} s (target < 60 s)"
    )


if __name__ == "__main__":
    main()
