"""Memory and time of the chunked value projection at the paper profile's scale (issue 17): a random model with
GPT-2 medium's shape (24 blocks of 4,096 values, width 1,024, 50,257 tokens). Peak memory is bounded by one chunk
(1,024 values × 50,257 logits, 206 MB in float32) whatever the number of values; the full projection would be
98,304 × 50,257 × 4 bytes = 19.8 GB. Time is measured on ``--blocks`` blocks and scaled to 24.

    python benchmarks/bench_ffn.py [--blocks 2]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch


class _Head:
    def __init__(self, E):
        self.lm_head = type("W", (), {"weight": E})()


def main(argv=None):
    from jtc_utils.ffn import vocab

    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=2)
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    d, V, d_ff = 1024, 50_257, 4096
    E = torch.randn(V, d) * 0.02
    adapter = type("A", (), {"model": _Head(E), "family": "gpt2"})()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    for _ in range(args.blocks):
        vals = np.random.default_rng(0).standard_normal((d_ff, d)).astype(np.float32) * 0.02
        vocab.top_tokens(adapter, vals, 30)
    per_block = (time.perf_counter() - t) / args.blocks
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"value projection, GPT-2 medium shape: {per_block:.1f} s per block of {d_ff} values -> "
        f"{24 * per_block / 60:.1f} min for all 98,304 values on this machine; peak RSS {peak:.0f} MB "
        f"(before: {before:.0f} MB; unembedding {V * d * 4 / 1e6:.0f} MB, one chunk of logits "
        f"{vocab.CHUNK * V * 4 / 1e6:.0f} MB; all projections at once would be {98_304 * V * 4 / 1e9:.1f} GB)"
    )


if __name__ == "__main__":
    main()
