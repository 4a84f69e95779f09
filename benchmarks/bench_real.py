"""The real profile's cost on this machine: hidden-state extraction against the matrix-multiply floor, the time of
each chapter's real-model figures from a cold cache, and the peak resident memory.

    python benchmarks/bench_real.py                 # full sizes (9,000 + 3,000 sentences per domain): ~25 min
    python benchmarks/bench_real.py --n-train 1200 --n-val 300
    python benchmarks/bench_real.py --profile 320     # where the extraction's time goes (torch.profiler)
    python benchmarks/bench_real.py --extract 9000 --batches 32   # the rate on a whole split (~3.5 min)

The rate depends on the sentences' number: batches are sorted by length over all of them, so a few hundred pad
about a quarter more tokens than the sentences have, a whole split of 9,000 about 1%; the book's extraction is at
the whole split's padding.

The floor: SmolLM2-135M's projections cost 2 x (2 d^2 + 2 d d_kv + 3 d d_ff) flops per token and layer (q, o; k, v
with 3 of 9 heads' width; gate, up, down); attention scores and the element-wise work are left out, so the floor is
optimistic. The float32 matrix-multiply rate is measured here, on a [2048, d] x [d, d_ff] product.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time


def matmul_rate(d: int, f: int, repeat: int = 40, rows: int = 2048) -> float:
    import torch

    a, b = torch.randn(rows, d), torch.randn(d, f)
    for _ in range(3):
        a @ b
    t = time.perf_counter()
    for _ in range(repeat):
        a @ b
    return repeat * 2 * rows * d * f / (time.perf_counter() - t)


def padding(s, batch: int) -> tuple:
    """How the extraction batches ``s``: the rows each length-sorted batch computes (its sentences x its longest
    prefix), and the padding factor (all those rows over the prefixes' tokens): ``(rows per batch, factor)``."""
    from jtc_utils.core.analysis import hidden

    seqs = [int(p) + 1 for p in s.positions]
    padded = [len(idx) * max(seqs[i] for i in idx) for idx in hidden.batches_by_length(seqs, batch)]
    return padded, sum(padded) / sum(seqs)


def profile_extraction(ad, s, batch: int, floor_rate: float, full=None) -> None:
    """Where the extraction's time goes: torch.profiler's table of operators, the share of matrix multiplies, and
    the rate of each projection's matrix multiply at the rows a batch really has (batch x mean padded length)
    against the floor's [2048, d] x [d, d_ff] rate. Together they say how close to the floor the extraction can
    get: the matrix multiplies' rate relative to the floor's, over the padding, even if the element-wise work (norms,
    activation, rotary embedding, attention) took no time. ``full``: the whole split, whose batches (sorted by length
    over many more sentences) carry less padding than the profiled few: the same bound at its padding."""
    import numpy as np
    from torch.profiler import ProfilerActivity, profile

    from jtc_utils.core.analysis import hidden

    hidden.extract(ad, s, batch, False)  # warm
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        hidden.extract(ad, s, batch, False)
    ops = prof.key_averages()
    print(ops.table(sort_by="self_cpu_time_total", row_limit=12))
    total = sum(e.self_cpu_time_total for e in ops)
    mm = sum(e.self_cpu_time_total for e in ops if e.key in ("aten::mm", "aten::addmm", "aten::bmm"))
    padded, pad = padding(s, batch)
    rows = int(np.mean(padded))
    cfg = ad.model.config
    d, f = cfg.hidden_size, cfg.intermediate_size
    d_kv = cfg.num_key_value_heads * (d // cfg.num_attention_heads)
    shapes = {"q, o": (d, d), "k, v": (d, d_kv), "gate, up": (d, f), "down": (f, d)}
    weights = {"q, o": 2 * d * d, "k, v": 2 * d * d_kv, "gate, up": 2 * d * f, "down": f * d}
    rates = {k: matmul_rate(*shape, rows=rows) for k, shape in shapes.items()}
    mm_rate = sum(weights.values()) / sum(w / rates[k] for k, w in weights.items())  # flop-weighted harmonic mean
    print(f"matrix multiplies: {mm / total:.1%} of the time; padding: {pad:.3f} x the tokens")
    print(
        "projection rates at "
        + f"{rows} rows: "
        + ", ".join(f"{k} {r / 1e9:.0f}" for k, r in rates.items())
        + f" GFLOP/s; together {mm_rate / 1e9:.0f} = {mm_rate / floor_rate:.2f} of the floor's rate"
    )
    print(
        f"from this profile: now {mm / total:.2f} (share) x {mm_rate / floor_rate:.2f} (rate) / {pad:.3f} (padding) "
        f"= {mm / total * mm_rate / floor_rate / pad:.2f} of the floor; with no time at all outside the matrix "
        f"multiplies, at most {mm_rate / floor_rate / pad:.2f}"
    )
    if full is not None:
        _, pad_full = padding(full, batch)
        print(
            f"the whole split ({len(full):,} sentences) pads {pad_full:.3f} x: with this profile's share of matrix "
            f"multiplies, {mm / total * mm_rate / floor_rate / pad_full:.2f} of the floor there; at most "
            f"{mm_rate / floor_rate / pad_full:.2f}"
        )


CHAPTERS = {  # the real model's figures of each chapter, in book order
    "real_model": ("real_textfit", "real_textfit_bbc"),
    "sec3_linear_shortcuts": ("real_fig2", "real_fig3", "real_norms", "real_r2_first"),
    "sec4_predictions": ("real_fig4", "real_fig5", "real_toplists"),
    "sec5_early_exit": ("real_fig8",),
    "sec6_submodules": ("real_fig10", "real_fig11"),
    "appendix_b_news": ("real_fig12", "real_fig13", "real_fig14", "real_fig15", "real_fig20", "real_r2_first_bbc"),
}


def chapter_child(args) -> int:
    """Compute one chapter's real-model figures with the parent's cache; print seconds and peak memory (GB)."""
    from jtc_utils.core.data.setting import Setting
    from jtc_utils.jtc import figures

    t = time.perf_counter()
    for fig in CHAPTERS[args.chapter]:
        figures.compute(fig, Setting.of("tiny", args.n_train, args.n_val))
    print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-train", type=int, default=None)
    ap.add_argument("--n-val", type=int, default=None)
    ap.add_argument("--extract", type=int, default=1000, help="sentences for the extraction rate")
    ap.add_argument(
        "--batches", default=None, help="comma-separated batch sizes: measure the extraction rate at each and stop"
    )
    ap.add_argument(
        "--profile",
        type=int,
        default=None,
        metavar="N",
        help="profile the extraction of N sentences (torch.profiler) and stop",
    )
    ap.add_argument("--chapter", choices=CHAPTERS, help=argparse.SUPPRESS)  # one chapter, in a child process
    args = ap.parse_args(argv)
    if args.chapter:
        return chapter_child(args)
    os.environ["JTC_CACHE"] = tempfile.mkdtemp(prefix="jtc-bench-real-")  # a cold cache (set before importing)
    os.environ.setdefault("JTC_PROGRESS", "0")
    import torch

    from jtc_utils.core.analysis import hidden
    from jtc_utils.core.models import models, real_models
    from jtc_utils.core.data.samples import make_samples

    real_models.folder("smollm2-135m")  # the one-time GGUF conversion is not part of what is measured
    ad = models.adapter("smollm2-135m")
    cfg = ad.model.config
    d, f, L = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    d_kv = cfg.num_key_value_heads * (d // cfg.num_attention_heads)
    flops = L * 2 * (2 * d * d + 2 * d * d_kv + 3 * d * f)
    rate = matmul_rate(d, f)
    if args.profile:
        s = make_samples(ad.tokenizer, ad.family, "wiki", "train", n=args.profile, profile="real")
        full = make_samples(ad.tokenizer, ad.family, "wiki", "train", profile="real")
        profile_extraction(ad, s, hidden.default_batch(ad), rate, full)
        return 0
    s = make_samples(ad.tokenizer, ad.family, "wiki", "train", n=args.extract, profile="real")
    tokens = int(sum(p + 1 for p in s.positions))
    floor = rate / flops
    print(
        f"threads {torch.get_num_threads()}; float32 matmul {rate / 1e9:.0f} GFLOP/s; {flops / 1e9:.3f} GFLOP per "
        f"token -> floor {floor:.0f} tokens/s"
    )
    sizes = [int(b) for b in args.batches.split(",")] if args.batches else [hidden.default_batch(ad)]
    for b in sizes:
        t = time.perf_counter()
        hidden.extract(ad, s, b, False)
        dt = time.perf_counter() - t
        print(
            f"extraction, batch {b}: {tokens} tokens (prefixes of {len(s)} sentences) in {dt:.1f} s = "
            f"{tokens / dt:.0f} tokens/s, {tokens / dt / floor:.2f} of the floor",
            flush=True,
        )
    if args.batches:
        return 0
    # each chapter in its own process, as the book runs each page in its own kernel, sharing this cold cache: the
    # time of a chapter is what it adds after the chapters before it, its memory the peak of that one process
    total, peak = 0.0, 0.0
    for chapter, figs in CHAPTERS.items():
        cmd = [sys.executable, __file__, "--chapter", chapter]
        for flag, v in (("--n-train", args.n_train), ("--n-val", args.n_val)):
            if v is not None:
                cmd += [flag, str(v)]
        line = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        dt, rss = (float(x) for x in line.split())
        total, peak = total + dt, max(peak, rss)
        print(f"{chapter}: {dt:.0f} s, peak resident memory {rss:.2f} GB ({', '.join(figs)})", flush=True)
    print(f"all real-model figures: {total / 60:.1f} min; largest peak resident memory of a chapter {peak:.2f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
