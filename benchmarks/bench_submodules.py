"""Sub-module shortcuts (paper section 6): the three mappings from every start layer on the validation set,
against one plain forward pass of the model over the same inputs (the same length-sorted batches of prefixes, or
of sentences for a BERT-style model). Prints the ratio; the goal is at most 10x one forward pass for all three
mappings and all start layers together.

    python benchmarks/bench_submodules.py [model] [domain] [device]   # default: tiny-gpt2-medium encyclopedia auto
    python benchmarks/bench_submodules.py tiny-bert-large encyclopedia
    python benchmarks/bench_submodules.py tiny-gpt2-medium encyclopedia cuda
"""

import sys
import time

import torch

from jtc_utils.core.infra import device as devices
from jtc_utils.core.analysis import experiment
from jtc_utils.core.analysis import submodules


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def main(model="tiny-gpt2-medium", domain="encyclopedia", device="auto"):
    dev = devices.use(device)
    exp = experiment.shared(model, domain)
    _ = exp.X_val, exp.maps  # cached hidden states and mat: not part of either timing
    run = submodules.runner(exp)
    maps = submodules.fit(exp)

    _sync(dev)
    t = time.perf_counter()
    with torch.inference_mode():
        for idx, inp, mask, pos in submodules.sample_batches(exp, exp.val):
            exp.adapter.model(input_ids=inp.to(dev), attention_mask=mask.to(dev))
    _sync(dev)
    t_forward = time.perf_counter() - t

    times = {}
    for m in submodules.MAPPINGS:
        t = time.perf_counter()
        if m == "mat_attn":
            submodules.cast_single(run, maps, exp.X_val)
        else:
            submodules.cast_prefix(run, maps, exp, m)
        _sync(dev)
        times[m] = time.perf_counter() - t
    total = sum(times.values())
    print(f"{model} on {domain}: {len(exp.val)} sentences, L={exp.n_layers}, device {dev}")
    print(f"one forward pass (HF model, logits): {t_forward:.2f} s")
    for m, v in times.items():
        print(f"  {m:12s} all {exp.n_layers} start layers: {v:.2f} s ({v / t_forward:.1f}x)")
    print(f"all three mappings: {total:.2f} s = {total / t_forward:.1f}x one forward pass (goal <= 10x)")


if __name__ == "__main__":
    main(*sys.argv[1:])
