"""Benchmark: the section 3-4 pipeline at the paper's largest scale (gpt2-xl: 48 blocks, width 1,600, vocabulary
50,257), on a randomly initialised model with gpt2-xl's exact configuration, on the CPU. Reports peak resident
memory and times, extrapolated to the paper's 12,000 sentences (9,000 train + 3,000 validation).

What runs, in one process, as a notebook would hold it:

1. the model (1.56 billion parameters, float32) and the hidden states of ``--sentences`` sentences (extraction
   time per sentence, extrapolated to 12,000);
2. the hidden states of the full 12,000 sentences (random numbers of the exact shape, 49 x 12,000 x 1,600 float32:
   3.8 GB) and the fits of ``mat`` from ``--sources`` source layers to all later layers at the full 9,000 + 3,000
   samples (time extrapolated to all 1,176 pairs by pair count);
3. the vocabulary projection of one layer's 3,000 validation states, with the final layer's logits held as the
   metrics need them (time extrapolated to 49 layers and two mappings).

Peak resident memory is the process's own (``ru_maxrss``), measured with the full-size arrays: nothing is
extrapolated there. The goal: at most 16 GB.

    python benchmarks/bench_paper_memory.py                 # about 4 minutes on two cores
    python benchmarks/bench_paper_memory.py --sentences 400 --sources 0 24
"""

import argparse
import resource
import time
import warnings

import numpy as np
import torch

from jtc_utils.core.infra import device as devices
from jtc_utils.core.analysis import hidden, linear, readout
from jtc_utils.core.models.models import Adapter
from jtc_utils.core.data.samples import make_samples

GPT2_XL = dict(vocab_size=50257, n_positions=1024, n_embd=1600, n_layer=48, n_head=25)
N_TRAIN, N_VAL = 9000, 3000
GB = 2**30


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GB  # Linux reports KiB


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=200, help="sentences whose states are extracted")
    ap.add_argument("--sources", type=int, nargs="+", default=[0], help="source layers fitted at full size")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    dev = devices.use(args.device)
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from jtc_utils.core.models.catalogue import GPT_TOKENIZER_DIR

    t = time.perf_counter()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(**GPT2_XL)).eval()
    # any tokenizer whose ids lie in the vocabulary serves a random model: the zoo's (the real one needs the hub)
    ad = Adapter(model=model, tokenizer=AutoTokenizer.from_pretrained(GPT_TOKENIZER_DIR), name="random-gpt2-xl")
    L, d, V = ad.n_layers, ad.d, ad.vocab_size
    n_params = sum(p.numel() for p in model.parameters())
    print(
        f"random gpt2-xl: {n_params / 1e9:.2f} B parameters ({n_params * 4 / GB:.1f} GB float32), L={L}, d={d}, "
        f"V={V}; built in {time.perf_counter() - t:.0f} s on {dev}; peak so far {peak_gb():.1f} GB"
    )

    s = make_samples(ad.tokenizer, "gpt2", "encyclopedia", "train", n=args.sentences)
    t = time.perf_counter()
    X = hidden.extract(ad, s, batch_size=32, progress=False)
    per_sentence = (time.perf_counter() - t) / len(s)
    tokens = sum(p + 1 for p in s.positions)
    print(
        f"1. extraction: {len(s)} sentences ({tokens} tokens up to the sampled positions) in "
        f"{per_sentence * len(s):.0f} s = {per_sentence:.3f} s per sentence -> "
        f"{per_sentence * (N_TRAIN + N_VAL) / 60:.0f} min for {N_TRAIN + N_VAL:,}; states {X.nbytes / 2**20:.0f} MB; "
        f"peak {peak_gb():.1f} GB"
    )
    del X

    rng = np.random.default_rng(0)
    t = time.perf_counter()
    X_train = np.empty((L + 1, N_TRAIN, d), dtype=np.float32)
    X_val = np.empty((L + 1, N_VAL, d), dtype=np.float32)
    for layer in range(L + 1):  # a residual-stream-like chain, one layer at a time (no float64 temporaries)
        for A, n in ((X_train, N_TRAIN), (X_val, N_VAL)):
            A[layer] = rng.standard_normal((n, d), dtype=np.float32)
            if layer:
                A[layer] += A[layer - 1]
    states_gb = (X_train.nbytes + X_val.nbytes) / GB
    print(
        f"2. states of {N_TRAIN + N_VAL:,} sentences: {states_gb:.2f} GB float32 (made in "
        f"{time.perf_counter() - t:.0f} s); peak {peak_gb():.1f} GB"
    )
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = linear.layer_pair_r2(X_train, X_val, sources=args.sources)
    dt = time.perf_counter() - t
    pairs = sum(L - a for a in args.sources)
    all_pairs = L * (L + 1) // 2
    maps_gb = out["maps"].nbytes / GB
    print(
        f"   fits from source layer(s) {args.sources}: {pairs} pairs in {dt:.0f} s -> "
        f"{dt / pairs * all_pairs / 60:.0f} min for all {all_pairs} pairs; the {L} maps to the last layer "
        f"{maps_gb:.2f} GB (float64); peak {peak_gb():.1f} GB"
    )

    t = time.perf_counter()
    with torch.inference_mode():
        final = readout.final_stats(type("E", (), {"adapter": ad, "X_val": X_val, "n_layers": L})())
        ids, gaps = readout.readout_stats(ad, X_val[L // 2])
    dt = time.perf_counter() - t
    print(
        f"3. vocabulary projections: the final layer's logits ({final['logits'].numel() * 4 / GB:.2f} GB) and one "
        f"layer's top-1 for {N_VAL:,} states in {dt:.0f} s -> {dt / 2 * (2 * (L + 1)) / 60:.0f} min for "
        f"{L + 1} layers x 2 mappings; peak {peak_gb():.1f} GB"
    )
    print(
        f"peak resident memory of the whole run: {peak_gb():.1f} GB (goal <= 16 GB); nothing held all layers' "
        f"logits or all pairs' maps"
    )


if __name__ == "__main__":
    main()
