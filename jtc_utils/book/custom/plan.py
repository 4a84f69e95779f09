"""The custom book's plan: what applies to a reader's model (the book's pages,
:data:`jtc_utils.book.build.pages.CUSTOM`, per kind of model), and what
a run will do, how long it takes and how much memory it needs (:func:`plan`, printed before anything heavy runs).
The command is :mod:`jtc_utils.book.custom.command`; the pages are :mod:`jtc_utils.book.custom.pages`."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from jtc_utils.book.build import scheduling
from jtc_utils.book.build.pages import CLAIMS, CUSTOM, Page, page as page_named
from jtc_utils.core.infra import device as devices
from jtc_utils.core.models import blocks, models
from jtc_utils.core.data import profiles, user_text
from jtc_utils.base import validate
from jtc_utils.core.models.batching import pad_id, right_pad
from jtc_utils.core.models.models import CAUSAL, ENCODER, MASKED, kind_of  # noqa: F401 (the page kinds, read by its users)
from jtc_utils.evidence.registry import get as registered

NEWS = "--text-news"  # the option that gives the second domain


DECODER_ONLY = "the related papers' bench reads a decoder's next-token predictions"


def applies(page: Page, kind: str, news: bool, family: str = "gpt2") -> str | None:
    """None where ``page`` runs for a model of ``kind`` and ``family``, else the one line that says why it is
    skipped."""
    if page.skip:
        return page.skip
    if page.needs_blocks and family not in blocks.SUPPORTED_FAMILIES:
        return (
            f"it runs each block's sub-modules one by one, which the book does for the families "
            f"{', '.join(blocks.SUPPORTED_FAMILIES)}, not yet for {family}"
        )
    if kind not in page.figures:  # a page with no figures for the kind
        return {ENCODER: registered().facts["no predictions"], MASKED: DECODER_ONLY}[kind]
    if page.needs_news and not news:
        return f"no second text was given (pass one with {NEWS}: it plays the paper's news domain)"
    return None


def absent(kind: str, news: bool, family: str = "gpt2") -> dict:
    """Why each figure that the claims read does not exist for a model of ``kind`` (the claims that need only such
    figures get no verdict and say so; each paper's ``custom_absent``, such as
    :func:`jtc_utils.jtc.figures.custom_absent`)."""
    ran = {f for p in CUSTOM if applies(p, kind, news, family) is None for f in p.figures.get(kind, ())}
    return {
        fig: why
        for p in registered().papers.values()
        if p.custom_absent
        for fig, why in p.custom_absent(kind, news, family, ran, NEWS).items()
    }


def judged_claims() -> tuple:
    """The claims the custom book's claims page judges: every claim of the papers it judges whole (the JTC
    paper's)."""
    return registered().judged_on_custom


# ---------------------------------------------------------------------------------------------------------------
# the plan: what will run, how long and how large


@dataclass
class Plan:
    model: str
    family: str
    kind: str
    n_layers: int
    d: int
    vocab: int
    parameters: int
    sizes: tuple
    texts: dict  # domain -> path
    counts: dict  # domain -> the text's counts after each step
    run: list  # page names
    skipped: dict  # page name -> why
    forward_s: float  # seconds per sentence of a forward pass with every hidden state
    device: str
    identity: str = ""  # the model's weights, configuration and tokenizer (what the pages' results depend on)
    estimate_s: float = 0.0
    memory_gb: float = 0.0
    available_gb: float = 0.0
    jobs: int = 1  # pages executed side by side (each single-threaded when more than one)
    busy: float = 1.0  # wall time over CPU time of the timed forward passes: above 1, other work slowed them

    def lines(self) -> list[str]:
        n_train, n_val = self.sizes
        out = [
            f"model: {self.model}",
            f"  family {self.family} ({self.kind}), {self.n_layers} layers, width {self.d}, "
            f"vocabulary {self.vocab:,}, {self.parameters / 1e6:.1f} M parameters",
            f"  sample sizes: {n_train:,} training and {n_val:,} validation sentences per domain",
        ]
        for domain, path in self.texts.items():
            c = self.counts[domain]
            out.append(
                f"  {domain}: {path}: {c['documents']:,} documents, {c['sentences']:,} sentences, "
                f"{c['kept_after']['deduplicated']:,} kept after the filters and deduplication"
            )
        out.append(f"  pages executed ({len(self.run) + 1}): {', '.join(self.run + [CLAIMS])}")
        for name, why in self.skipped.items():
            out.append(f"  skipped: {name}: {why}")
        out.append(
            f"  device {self.device}: a forward pass takes {self.forward_s * 1e3:.1f} ms per sentence "
            f"(from one thread's CPU time); {self.jobs} page(s) at a time"
        )
        if self.busy > BUSY:
            out.append(
                f"  the machine was busy: the timed passes took {self.busy:.1f} times their CPU time; the "
                f"estimate assumes the cores free, as the run needs them (other work makes it longer)"
            )
        out.append(
            f"  estimate: {self.estimate_s / 60:.1f} min, peak memory {self.memory_gb:.1f} GB "
            f"(available {self.available_gb:.1f} GB)"
        )
        out += self.regime_lines()
        return out

    def regime_lines(self) -> list[str]:
        """What the sizes mean for the least-squares maps: a fit on fewer training samples than the model's width
        is underdetermined (the claims read from it get no verdict); one below the paper's samples per dimension
        is in a regime the paper did not study. Each with the ``--sentences`` that reaches the next regime."""
        n_train, d = self.sizes[0], self.d
        paper = registered().facts["paper's samples per dimension"]
        if n_train < d:
            return [
                f"  WARNING: {n_train:,} training samples for a model {d} wide: fewer samples than dimensions, so "
                f"every least-squares map is underdetermined; the claims read from such maps get no verdict. "
                f"Ask for --sentences {sentences_for(d)} or more ({d} training samples; the paper's regime, "
                f"{paper:.1f} per dimension: --sentences {sentences_for(math.ceil(paper * d))})"
            ]
        if n_train < paper * d:
            return [
                f"  the maps are fitted on {n_train / d:.1f} training samples per dimension, fewer than the "
                f"paper's least ({paper:.1f}, GPT-2 XL): they overfit more than the paper's did; --sentences "
                f"{sentences_for(math.ceil(paper * d))} reaches the paper's regime"
            ]
        return []


# Each page's ``cost`` (jtc_utils.book.build.pages.PAGES): seconds of the page per (sentence × forward second), measured
# on SmolLM2-135M with 2,000 Wikipedia sentences on two cores (``benchmarks/bench_custom.py``), one page at a time: a
# page's time grows with its sentences and with the cost of one forward pass, which carries the model's depth and width.
# Appendix B was not in that run (no second text): its cost is the sum of the parts it repeats on the second domain
# (hidden states, r², predictions, early exit). PAGE_OVERHEAD_S: a kernel's start, imports and the model's load,
# measured on the claims page. Calibrated on one cold run (15.3 min) and rescaled once to the forward pass's median over
# repeated plans (85 ms per sentence; the run had measured 98.7): a second serial cold run took 13.8 min. On another
# model the estimate carries that model's forward time, not its vocabulary's readout cost nor the lenses' training
# epochs. Each page's ``fixed``: the work of a page that does not grow with its sentences (the FFN page's value vectors
# read out over the vocabulary, the linearity page's pruning, the sub-module maps' set-up), in forward passes. Measured
# on the same model with 50 sentences (bench_custom.py --sentences 50, two pages at a time, 2.9 min where the estimate
# without it said 1.7): each page's time over ONE_THREAD_SLOWDOWN, less the overhead and its per-sentence part. Each
# page's per-sentence ``cost`` is the 2,000-sentence calibration's less its ``fixed`` / 2,000, so that the estimate at
# 2,000 sentences is what it was.
PAGE_OVERHEAD_S = 10.0
BUSY = 1.3  # wall over CPU time of the timed passes above which the plan says the machine was busy
# a kernel with torch, transformers and the book's libraries, and the working memory the terms of
# :func:`estimate_memory_gb` leave out (calibrated: on SmolLM2-135M with 2,000 sentences the largest kernel reached
# 4.46 GB where the terms give 2.6 GB beyond a bare kernel's 1.2 GB)
BASE_MEMORY_GB = 1.9


# a page in a single-threaded worker (``--jobs`` above 1) against the same page alone on both cores: the median of
# the SmolLM2 run's pages (model and text 1.5, section 6 1.75, lenses 1.68, linearity 1.73, FFN 1.03), which also
# absorbs the pages that wait for the first page's hidden states
ONE_THREAD_SLOWDOWN = 1.65


def estimate_seconds(pages, n_sentences: int, forward_s: float, jobs: int = 1) -> float:
    """Wall time of ``pages`` (the claims page included by the caller) for ``n_sentences`` sentences per domain at
    ``forward_s`` seconds per sentence (each page's ``cost`` and ``fixed``, :data:`jtc_utils.book.build.pages.PAGES`),
    executed ``jobs`` at a time: each page then takes :data:`ONE_THREAD_SLOWDOWN` times longer, the pages go to the
    first free worker in their start order (:func:`jtc_utils.book.build.scheduling.start_order`), and a page that reads
    others' numbers waits for the pages it reads (:func:`jtc_utils.book.build.scheduling.waits_for`)."""
    cost = {p: PAGE_OVERHEAD_S + (page_named(p).fixed + page_named(p).cost * n_sentences) * forward_s for p in pages}
    if jobs <= 1:
        return sum(cost.values())
    free, end = [0.0] * jobs, {}
    for p in scheduling.start_order(pages):  # the readers come last in both orders, after the pages they read
        w = min(range(jobs), key=free.__getitem__)
        start = max([free[w]] + [end[q] for q in scheduling.waits_for(p, pages)])
        end[p] = free[w] = start + cost[p] * ONE_THREAD_SLOWDOWN
    return max(end.values())


def estimate_memory_gb(n_layers: int, d: int, vocab: int, parameters: int, n_sentences: int) -> float:
    """Peak resident memory of the heaviest page: the model in float32 (weights, and as much again while loading),
    the hidden states of every sentence at every layer, the least-squares maps between every pair of layers, the
    linearity chapter's every-token states (two splits) and one chunk of vocabulary logits."""

    f32 = 4
    weights = 2 * parameters * f32
    states = n_sentences * (n_layers + 1) * d * f32 * 2
    maps = (n_layers + 1) * (n_layers + 2) / 2 * d * d * f32 * 2
    every_token = 2 * registered().facts["every-token states per split"] * (n_layers + 1) * d * f32
    logits = 512 * vocab * f32
    return BASE_MEMORY_GB + (weights + states + max(maps, every_token) + logits) / 2**30


def time_forward(adapter, texts, device: str, n: int = 16) -> tuple[float, float]:
    """Seconds per sentence of one forward pass with every hidden state (as the book extracts them), on ``n`` of
    the sentences, and how busy the machine was: ``(seconds, wall / CPU)``. On a CPU the three passes (after a
    warm-up on two sentences) run on one thread, timed by that thread's CPU time: other work on the machine does not
    stretch it (a wall clock, or the CPU time of several threads that spin while they wait for each other, moved the
    estimate from 25 to 55 minutes for the same inputs). The median pass, divided by :data:`ONE_THREAD_SLOWDOWN`, is
    the two-thread pass the page costs were calibrated with. ``wall / CPU`` above 1 says by how much other work
    slowed the passes. On a GPU: the median wall time."""
    import torch

    ids = adapter.tokenizer(list(texts[:n]), add_special_tokens=not adapter.causal, truncation=True, max_length=128)[
        "input_ids"
    ]
    inp, att = right_pad(ids, pad_id(adapter.tokenizer))
    cpu, wall, threads = [], [], torch.get_num_threads()
    gpu = not str(device).startswith("cpu")
    try:
        if not gpu:
            torch.set_num_threads(1)
        with devices.using(device), torch.inference_mode():
            adapter.forward_states(inp[:2], att[:2])
            for _ in range(3):
                c0, t0 = time.thread_time(), time.perf_counter()
                adapter.forward_states(inp, att)
                wall.append(time.perf_counter() - t0)
                cpu.append(time.thread_time() - c0)
    finally:
        torch.set_num_threads(threads)
    if gpu:
        return sorted(wall)[1] / len(ids), 1.0
    return sorted(cpu)[1] / len(ids) / ONE_THREAD_SLOWDOWN, sorted(wall)[1] / max(sorted(cpu)[1], 1e-9)


def split_sizes(n: int) -> tuple:
    """``--sentences N``: N per domain, a fifth of them for validation."""
    return n - n // 5, n // 5


def sentences_for(n_train: int) -> int:
    """The least ``--sentences`` that gives ``n_train`` training sentences (:func:`split_sizes`)."""
    n = max(5, math.ceil(n_train * 5 / 4) - 1)
    while split_sizes(n)[0] < n_train:
        n += 1
    return n


def default_jobs(device: str) -> int:
    """Pages side by side when ``--jobs`` is not given: two on a CPU with two cores or more, else one."""
    return 2 if str(device) == "cpu" and (os.cpu_count() or 1) >= 2 else 1


def plan(
    model: str,
    text,
    news=None,
    sentences: int = sum(profiles.CUSTOM_SIZES),
    device: str = "auto",
    memory_gb: float | None = None,
    jobs: int | None = None,
) -> Plan:
    """What the custom book will do for ``model`` on ``text`` (and ``news``), with its estimates; every input is
    checked here, before anything is written: a bad one raises :class:`ValueError` naming the problem and the fix.
    ``jobs`` pages run side by side (default :func:`default_jobs`); fewer where their memory would not fit."""
    sentences = validate.integer(sentences, "--sentences", minimum=5, example="--sentences 2000")
    n_train, n_val = split_sizes(sentences)
    texts = {"text": str(text), **({"news": str(news)} if news is not None else {})}
    problems, counts, first, adapter = [], {}, None, None
    try:  # the model first: the cheapest to check, and what a wrong folder most often is
        adapter = models.Adapter(*models.load(model), name=model)
    except (models.ModelUnavailableError, OSError, ValueError) as e:
        problems.append(f"--model: {e}")
    for domain, path in texts.items():
        try:
            data = user_text.prepared(path, n_train, n_val)  # a text that cannot be read, or is too short
        except (ValueError, OSError) as e:
            problems.append(f"{'--text' if domain == 'text' else '--text-news'}: {e}")
            continue
        counts[domain] = data["counts"]
        first = first or data["train"]
    if problems:  # every bad input at once
        raise ValueError("\n  ".join([f"{len(problems)} problem(s); nothing was written:"] + problems))
    dev = devices.resolve(device)
    kind = kind_of(adapter)
    run, skipped = [], {}
    for page in CUSTOM:
        why = applies(page, kind, news is not None, adapter.family)
        (skipped.__setitem__(page.name, why) if why else run.append(page.name))
    p = Plan(
        model=model,
        family=adapter.family,
        kind=kind,
        n_layers=adapter.n_layers,
        d=adapter.d,
        vocab=len(adapter.tokenizer),
        parameters=sum(t.numel() for t in adapter.model.parameters()),
        sizes=(n_train, n_val),
        texts=texts,
        counts=counts,
        run=run,
        skipped=skipped,
        forward_s=0.0,
        device=str(dev),
        identity=adapter.identity,
    )
    p.forward_s, p.busy = time_forward(adapter, first, str(dev))
    per_page = estimate_memory_gb(p.n_layers, p.d, p.vocab, p.parameters, n_train + n_val)
    p.available_gb = scheduling.available_memory_gb() if memory_gb is None else float(memory_gb)
    p.jobs = default_jobs(dev) if jobs is None else int(jobs)
    if p.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    while p.jobs > 1 and p.jobs * per_page > p.available_gb:  # two kernels at their peak at once, at worst
        p.jobs -= 1
    p.memory_gb = p.jobs * per_page
    p.estimate_s = estimate_seconds(run + [CLAIMS], sentences, p.forward_s, p.jobs)
    return p
