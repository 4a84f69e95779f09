"""How far the lens evaluator is from the arithmetic it needs (issue 79's cost model, its first entry): the real
model's validation samples read through one lens at one layer, against the floor of its matrix products at this
machine's float32 rate measured in the same run.

Per layer and lens the evaluator projects n states through the vocabulary (n·d·V multiply-adds: the readout), shares
one projection of the final states per chunk among the lenses, and then reads every logit for its metrics
(log-softmax, KL against the final distribution, the top two, the mean distribution). The floor here is the readout's
products alone at the measured rate; the ratio says how much of an evaluation is not that product.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_lens_floor.py [n_samples]

Measured 2026-12-07 (this machine, one thread, a training job beside it at nice 15): 48.8 G multiply-adds/s; all
3,000 samples at layer 15, one lens 8.86 s (the final states' projection, shared, included), two lenses 13.00 s: one
more lens at one layer 4.14 s against its readout's floor of 1.74 s, ratio 2.4. The products are about two fifths
of a lens's cost, the metrics' passes over the 49,152 logits the rest; at 31 layers a lens costs about two minutes
of one core on all 3,000 samples.
"""

from __future__ import annotations

import sys
import time

import torch

LAYER = 15


def gemm_rate(n: int, d: int, V: int, repeats: int = 5) -> float:
    """Float32 multiply-adds per second of an [n, d] x [d, V] product, as the readout forms it."""
    x, W = torch.randn(n, d), torch.randn(V, d)
    x @ W.T
    t = time.perf_counter()
    for _ in range(repeats):
        x @ W.T
    return repeats * n * d * V / (time.perf_counter() - t)


def main() -> None:
    from jtc_utils.core.analysis.experiment import for_role
    from jtc_utils.lenses import evaluate, registry

    torch.set_num_threads(1)
    exp = for_role("real", "gpt48")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else exp.X_val.shape[1]
    d, V = exp.X_val.shape[2], exp.adapter.vocab_size
    rate = gemm_rate(evaluate._chunk(V), d, V)
    lens = registry.get("id").fit(exp)
    evaluate.evaluate_many(exp, [lens], [LAYER], n_val=min(n, 64))  # warm
    one, two = registry.get("mat").fit(exp), registry.get("id").fit(exp)
    t = time.perf_counter()
    evaluate.evaluate_many(exp, [one], [LAYER], n_val=n)
    single = time.perf_counter() - t
    t = time.perf_counter()
    evaluate.evaluate_many(exp, [one, two], [LAYER], n_val=n)
    double = time.perf_counter() - t
    per_lens = double - single  # one more lens at one layer: its readout and metrics, the final projection shared
    floor = n * d * V / rate
    print(
        f"float32 product rate, one thread: {rate / 1e9:.1f} G multiply-adds/s "
        f"([{evaluate._chunk(V)} x {d}] x [{d} x {V}])"
    )
    print(f"{n:,} samples, layer {LAYER}: one lens {single:.2f} s, two lenses {double:.2f} s")
    print(
        f"one more lens at one layer: {per_lens:.2f} s measured, its readout's floor {floor:.2f} s "
        f"(ratio {per_lens / floor:.1f}; {n:,} x {d} x {V:,} multiply-adds)"
    )


if __name__ == "__main__":
    main()
