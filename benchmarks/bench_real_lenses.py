"""The real model's three readings at every layer: ``id``, ``mat`` and the tuned lens (committed in zoo/lenses,
trained on a GPU) on SmolLM2-135M, Wikipedia, the full 9,000 / 3,000 sentences; Precision@1 at every seventh layer
and the layers saved at 95% by section 5's confidence rule (with the oracle's), through the lens chapter's one
evaluator (``jtc_utils.lenses.evaluate``). Every layer costs a readout over the 49,152-token vocabulary per lens,
about 6 minutes on two cores, which is why the book's lens table reads three depths only.

    .venv/bin/python benchmarks/bench_real_lenses.py
"""

from __future__ import annotations

import time
from jtc_utils.core.analysis import experiment

LENSES = ("id", "mat", "tuned")
LAYERS = (1, 8, 15, 22, 29)


def main() -> None:
    from jtc_utils.lenses import evaluate, evaluated, figures

    t0 = time.perf_counter()
    exp = experiment.for_role("real", "gpt48")
    fitted = [figures.lens(exp, name) for name in LENSES]
    results = evaluated.evaluated_many(exp, fitted)
    print(f"{exp!r}, {time.perf_counter() - t0:.0f} s")
    print("lens    " + "".join(f"P@1 l={q:<4d}" for q in LAYERS) + "saved@95% (rule)  saved@95% (oracle)")
    for ln, res in zip(fitted, results):
        c, ex = evaluate.curves(res), evaluate.exit_curves(exp, res)
        print(
            f"{ln.label:8s}"
            + "".join(f"{c['p@1'][q]:<11.3f}" for q in LAYERS)
            + f"{ex['saved']['saved']:<18.2f}{ex['oracle']['saved']['saved']:.2f}"
        )


if __name__ == "__main__":
    main()
