"""Your model, your text, the whole book: every chapter that applies to a reader's own model, executed into a folder
of its own, with the paper's claims judged for that model (issue 36).

    python -m jtc_utils.book.custom --model PATH_OR_HUB_ID --text FILE_OR_FOLDER [--text-news FILE]
        [--sentences N] [--device auto|cpu|cuda] [--memory GB] [--jobs N] [--no-html] --out DIR
    make custom MODEL=... TEXT=... OUT=...

The model is any of the six families the adapters load (:data:`jtc_utils.core.models.FAMILIES`), from a folder
written by ``save_pretrained`` or a hub id; the text any plain form :mod:`jtc_utils.core.user_text` reads. The
reader's model takes the real model's part: the same figure functions, the same rules, on the ``custom`` profile
(:func:`jtc_utils.core.profiles.custom`). What it is decides what applies (:data:`PAGES`): a decoder with its head
gets every chapter the real model gets; a masked LM with its head gets the BERT figures (masked-token prediction,
early exit) and its claims; a headless encoder gets hidden states only ($r^2$, norms). The chapters that need what
only the embedded world has (model sizes trained alike, word classes, the training runs) are skipped, each with one
line on its page saying why.

Before anything heavy runs the command prints its plan (:func:`plan`): the model's family, layers, width and
vocabulary, the sample sizes, the pages it executes and skips, and an estimate of time and peak memory from the
model's shape and a short timed forward pass; it stops with the numbers where the memory estimate exceeds what the
machine has (or ``--memory``). Every page is one transaction (:func:`jtc_utils.book.runner.transaction`, the
runner's): its figure data go to a staging folder and are moved into ``DIR/data`` only when every cell has passed;
a page already executed on the same inputs is kept, so an interrupted run resumes (the heavy numbers come back from
the cache). On a CPU two pages run at a time, each single-threaded (``--jobs``; :func:`runner.run_pages`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from jtc_utils.book import claim_tables, runner
from jtc_utils.book.chapter import Chapter, show
from jtc_utils.core import device as devices
from jtc_utils.core import blocks, models, profiles, user_text
from jtc_utils.core.batching import pad_id, right_pad
from jtc_utils.core.paths import ROOT, atomic_write_text
from jtc_utils.evidence import claims, figdata, figure_registry
from jtc_utils.ffn import figures as _ffn_figures  # noqa: F401  (registers the FFN chapter's figures)
from jtc_utils.ffn import plots as ffn_plots
from jtc_utils.jtc import claims as jtc_claims
from jtc_utils.jtc import figures as jtc_figures
from jtc_utils.lenses import figures as lens_figures
from jtc_utils.linearity import figures as sl_figures
from jtc_utils.linearity import plots as sl_plots

# what a model is, for what applies to it
CAUSAL, MASKED, ENCODER = "decoder", "masked LM", "headless encoder"
NEWS = "--text-news"  # the option that gives the second domain


@dataclass(frozen=True)
class Page:
    """One chapter of the book as it applies to a reader's model: the figures it computes and the claims it judges,
    per kind of model; a kind it does not list is skipped with ``skip`` (or the default reason)."""

    name: str  # the chapter's notebook (notebooks/<name>.py), so that the custom book mirrors the book
    title: str
    figures: dict = field(default_factory=dict)  # kind -> figure ids
    claims: dict = field(default_factory=dict)  # kind -> claim ids
    skip: str = ""  # why it never applies to a reader's model
    needs_news: bool = False  # the second domain (appendix B)
    needs_blocks: bool = False  # a block runner (sub-module maps, FFN sub-updates): jtc_utils.core.blocks
    omitted: str = ""  # what of the chapter needs the embedded world, so is not on the custom page


NO_PREDICTIONS = "a headless encoder has no masked-LM head, so it makes no token predictions"
DECODER_ONLY = "the related papers' bench reads a decoder's next-token predictions"
PAGES = (
    Page("real_model", "Your model and its text",
         {CAUSAL: ("real_textfit", "real_norms"), MASKED: ("real_norms",), ENCODER: ("real_norms",)}),
    Page("sec3_linear_shortcuts", "Linear shortcuts between layers (section 3)",
         {CAUSAL: ("fig2", "real_r2_first"), MASKED: ("fig3", "real_r2_first"), ENCODER: ("fig3", "real_r2_first")},
         {CAUSAL: ("C1a",), MASKED: ("C1a", "C1b"), ENCODER: ("C1a", "C1b")}),
    Page("sec4_predictions", "Predictions from early layers (section 4)",
         {CAUSAL: ("fig4", "fig5", "real_toplists"), MASKED: ("fig6", "fig7")},
         {CAUSAL: ("C2", "C3", "C4"), MASKED: ("C5", "C6")},
         omitted="plausibility and the breakdown by word class (they need the embedded corpus's word labels), and "
                 "Table 1 (the paper's two sentences on BERT-large)"),
    Page("sec5_early_exit", "Early exit (section 5)", {CAUSAL: ("fig8",), MASKED: ("fig9",)},
         {CAUSAL: ("C8", "C10", "C11"), MASKED: ("C9", "C10", "C11")}),
    Page("sec6_submodules", "Linear stand-ins for sub-modules (section 6)",
         {CAUSAL: ("fig10", "fig11"), MASKED: ("ext_bert_fig10", "ext_bert_fig11")},
         {CAUSAL: ("C12a", "C12b", "C12c")}, needs_blocks=True),
    Page("appendix_b_news", "The second domain (appendix B)",
         {CAUSAL: ("fig12", "fig14", "fig15", "fig20", "real_r2_first_bbc"), MASKED: ("fig13", "fig16", "fig17",
                                                                                     "fig21"),
          ENCODER: ("fig13",)}, {CAUSAL: ("C15",), MASKED: ("C15",), ENCODER: ("C15",)}, needs_news=True),
    Page("appendix_d_sizes", "Model sizes (appendix D)",
         skip="it compares four sizes of one model trained alike, which only the embedded zoo has"),
    Page("lenses", "Low-rank shortcuts and the tuned lens", {CAUSAL: ("real_lens_table",)},
         omitted="the tuned lens (trained ahead of time: `python -m jtc_utils.lenses.train`), and the rank sweep "
                 "and the comparisons across the zoo's four sizes"),
    Page("ffn_subupdates", "FFN sub-updates in the vocabulary space", {CAUSAL: ("real_geva",)}, needs_blocks=True,
         omitted="the concepts by word class, the steering and the classifiers on the embedded world (they need "
                 "its word labels)"),
    Page("secretly_linear", "Your Transformer is Secretly Linear", {CAUSAL: ("real_sl",)},
         omitted="the training experiments (pretraining with the regulariser, distillation after pruning) and the "
                 "comparison across model sizes, which need the zoo's training runs"),
    Page("embedded_world", "The embedded world",
         skip="it describes the generated corpus and the zoo trained on it, not a reader's model"),
)
CLAIMS_PAGE = "claims_verdicts"
SKIP_REASON = {ENCODER: NO_PREDICTIONS, MASKED: DECODER_ONLY}  # a page with no figures for the kind


def kind_of(adapter) -> str:
    """:data:`CAUSAL`, :data:`MASKED` or :data:`ENCODER`."""
    if adapter.causal:
        return CAUSAL
    return MASKED if adapter.has_head else ENCODER


def applies(page: Page, kind: str, news: bool, family: str = "gpt2") -> str | None:
    """None where ``page`` runs for a model of ``kind`` and ``family``, else the one line that says why it is
    skipped."""
    if page.skip:
        return page.skip
    if page.needs_blocks and family not in blocks.SUPPORTED_FAMILIES:
        return (f"it runs each block's sub-modules one by one, which the book does for the families "
                f"{', '.join(blocks.SUPPORTED_FAMILIES)}, not yet for {family}")
    if kind not in page.figures:
        return SKIP_REASON[kind]
    if page.needs_news and not news:
        return f"no second text was given (pass one with {NEWS}: it plays the paper's news domain)"
    return None


def absent(kind: str, news: bool, family: str = "gpt2") -> dict:
    """Why each JTC figure that the claims read does not exist for a model of ``kind`` (the claims that need only
    such figures get no verdict and say so)."""
    ran = {f for p in PAGES if applies(p, kind, news, family) is None for f in p.figures.get(kind, ())}
    out = {}
    for fig in ("fig2", "fig3", "fig4", "fig5", "fig6", "fig7", "fig8", "fig9", "fig10", "fig11", "fig12", "fig13",
                "fig14", "fig15", "fig16", "fig17", "fig20", "fig21"):
        if fig in ran:
            continue
        second = fig in ("fig12", "fig13", "fig14", "fig15", "fig16", "fig17", "fig20", "fig21")
        gpt = fig in ("fig2", "fig4", "fig5", "fig8", "fig10", "fig11", "fig12", "fig14", "fig15", "fig20")
        if second and not news:
            out[fig] = f"no second text was given ({NEWS})"
        elif fig in ("fig10", "fig11") and kind == CAUSAL:
            out[fig] = f"the book has no block runner for the family {family}"
        elif gpt:
            out[fig] = f"the model is a {kind}: GPT-2's figures need a decoder"
        elif kind == CAUSAL:
            out[fig] = "the model is a decoder: BERT's figures need a masked LM"
        else:
            out[fig] = NO_PREDICTIONS
    for fig in ("fig22", "fig23", "fig24", "fig25", "fig26", "fig27", "fig28", "fig29", "fig30", "fig31", "fig32",
                "fig33"):
        out[fig] = "the custom profile has one model, not four sizes trained alike"
    out["plausibility"] = "it needs the word classes of the embedded corpus; a reader's text has none"
    out["table1"] = "it shows the paper's two Leipzig sentences on BERT-large"
    return out


def getter(results: dict, data_dir, missing: dict):
    """A claims ``get`` for the custom book: the numbers computed on this page (``results``), else those another
    page of the same custom book saved in ``data_dir``; a figure the model does not have raises
    :class:`~jtc_utils.evidence.claims.NotComputed` with the reason (``missing``). Never the committed book's."""
    data_dir = Path(data_dir)

    def get(fig):
        if fig in results:
            return results[fig]
        f = data_dir / f"{fig}.json"
        if fig in missing or not f.exists():
            raise claims.NotComputed(missing.get(fig, f"{fig} has not been computed (its page has not run)"))
        return json.loads(f.read_text())["data"]

    return get


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
        out = [f"model: {self.model}", f"  family {self.family} ({self.kind}), {self.n_layers} layers, width {self.d}, "
               f"vocabulary {self.vocab:,}, {self.parameters / 1e6:.1f} M parameters",
               f"  sample sizes: {n_train:,} training and {n_val:,} validation sentences per domain"]
        for domain, path in self.texts.items():
            c = self.counts[domain]
            out.append(f"  {domain}: {path}: {c['documents']:,} documents, {c['sentences']:,} sentences, "
                       f"{c['kept_after']['deduplicated']:,} kept after the filters and deduplication")
        out.append(f"  pages executed ({len(self.run) + 1}): {', '.join(self.run + [CLAIMS_PAGE])}")
        for name, why in self.skipped.items():
            out.append(f"  skipped: {name}: {why}")
        out.append(f"  device {self.device}: a forward pass takes {self.forward_s * 1e3:.1f} ms per sentence "
                   f"(from one thread's CPU time); {self.jobs} page(s) at a time")
        if self.busy > BUSY:
            out.append(f"  the machine was busy: the timed passes took {self.busy:.1f} times their CPU time; the "
                       f"estimate assumes the cores free, as the run needs them (other work makes it longer)")
        out.append(f"  estimate: {self.estimate_s / 60:.1f} min, peak memory {self.memory_gb:.1f} GB "
                   f"(available {self.available_gb:.1f} GB)")
        return out


# Seconds of each page per (sentence × forward second), measured on SmolLM2-135M with 2,000 Wikipedia sentences on
# two cores (``benchmarks/bench_custom.py``), one page at a time: a page's time grows with its sentences and with the
# cost of one forward pass, which carries the model's depth and width. Appendix B was not in that run (no second
# text): its cost is the sum of the parts it repeats on the second domain (hidden states, r², predictions, early
# exit). PAGE_OVERHEAD_S: a kernel's start, imports and the model's load, measured on the claims page. Calibrated on
# one cold run (15.3 min) and rescaled once to the forward pass's median over repeated plans (85 ms per sentence;
# the run had measured 98.7): a second serial cold run took 13.8 min. On another model the estimate carries that
# model's forward time, not its vocabulary's readout cost nor the lenses' training epochs.
PAGE_COST = {"real_model": 0.62, "sec3_linear_shortcuts": 0.07, "sec4_predictions": 0.035, "sec5_early_exit": 0.012,
             "sec6_submodules": 0.77, "appendix_b_news": 0.41, "lenses": 1.0, "ffn_subupdates": 0.93,
             "secretly_linear": 0.60, CLAIMS_PAGE: 0.0}
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
    ``forward_s`` seconds per sentence (see :data:`PAGE_COST`), executed ``jobs`` at a time: each page then takes
    :data:`ONE_THREAD_SLOWDOWN` times longer, the pages go to the first free worker in their start order
    (:func:`jtc_utils.book.runner.start_order`), and a page that reads others' numbers (:data:`runner.READERS`) waits
    for every page before it in ``pages``."""
    cost = {p: PAGE_OVERHEAD_S + PAGE_COST[p] * n_sentences * forward_s for p in pages}
    if jobs <= 1:
        return sum(cost.values())
    free, end = [0.0] * jobs, {}
    for p in runner.start_order(pages):  # the readers come last in both orders, after the pages they read
        w = min(range(jobs), key=free.__getitem__)
        start = max([free[w]] + ([end[q] for q in pages[:pages.index(p)]] if p in runner.READERS else []))
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
    every_token = 2 * sl_figures.REAL_TOKENS * (n_layers + 1) * d * f32
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

    ids = adapter.tokenizer(list(texts[:n]), add_special_tokens=not adapter.causal, truncation=True,
                            max_length=128)["input_ids"]
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


def default_jobs(device: str) -> int:
    """Pages side by side when ``--jobs`` is not given: two on a CPU with two cores or more, else one."""
    return 2 if str(device) == "cpu" and (os.cpu_count() or 1) >= 2 else 1


def plan(model: str, text, news=None, sentences: int = sum(profiles.CUSTOM_SIZES), device: str = "auto",
         memory_gb: float | None = None, jobs: int | None = None) -> Plan:
    """What the custom book will do for ``model`` on ``text`` (and ``news``), with its estimates; every input is
    checked here, before anything is written: a bad one raises :class:`ValueError` naming the problem and the fix.
    ``jobs`` pages run side by side (default :func:`default_jobs`); fewer where their memory would not fit."""
    n_train, n_val = split_sizes(sentences)
    if n_val < 1:
        raise ValueError(f"--sentences {sentences} leaves no validation sentence; ask for at least 5")
    texts = {"text": str(text), **({"news": str(news)} if news is not None else {})}
    counts, first = {}, None
    for domain, path in texts.items():
        data = user_text.prepared(path, n_train, n_val)  # a text that cannot be read, or is too short, stops here
        counts[domain] = data["counts"]
        first = first or data["train"]
    try:
        adapter = models.Adapter(*models.load(model), name=model)
    except (models.ModelUnavailableError, OSError, ValueError) as e:
        raise ValueError(str(e)) from None
    dev = devices.resolve(device)
    kind = kind_of(adapter)
    run, skipped = [], {}
    for page in PAGES:
        why = applies(page, kind, news is not None, adapter.family)
        (skipped.__setitem__(page.name, why) if why else run.append(page.name))
    p = Plan(model=model, family=adapter.family, kind=kind, n_layers=adapter.n_layers, d=adapter.d,
             vocab=len(adapter.tokenizer), parameters=sum(t.numel() for t in adapter.model.parameters()),
             sizes=(n_train, n_val), texts=texts, counts=counts, run=run, skipped=skipped,
             forward_s=0.0, device=str(dev), identity=adapter.identity)
    p.forward_s, p.busy = time_forward(adapter, first, str(dev))
    per_page = estimate_memory_gb(p.n_layers, p.d, p.vocab, p.parameters, n_train + n_val)
    p.available_gb = runner.available_memory_gb() if memory_gb is None else float(memory_gb)
    p.jobs = default_jobs(dev) if jobs is None else int(jobs)
    if p.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    while p.jobs > 1 and p.jobs * per_page > p.available_gb:  # two kernels at their peak at once, at worst
        p.jobs -= 1
    p.memory_gb = p.jobs * per_page
    p.estimate_s = estimate_seconds(run + [CLAIMS_PAGE], sentences, p.forward_s, p.jobs)
    return p


def check_out(out) -> Path:
    """The output folder, refused where it would write into the committed book or the project's sources."""
    out = Path(out).expanduser().resolve()
    for part in ("book", "notebooks", "jtc_utils", "zoo", "tests"):
        inside = ROOT / part
        if out == inside or inside in out.parents:
            raise ValueError(f"{out} is inside the committed book's {part}/; the custom book never touches it: "
                             f"pass --out a folder of its own (e.g. --out my-model-book)")
    if out == ROOT or out in ROOT.parents:
        raise ValueError(f"{out} would hold the repository itself; pass --out a folder of its own")
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a folder; pass --out a folder of its own")
    if out.is_dir() and any(out.iterdir()) and not (out / SPEC).exists():
        raise ValueError(f"{out} is not empty and holds no custom book ({SPEC}); pass --out an empty or new folder")
    return out


# ---------------------------------------------------------------------------------------------------------------
# the pages: generated py:percent sources, executed by papermill

SPEC = "profile.json"  # in the output folder: the custom profile's spec (profiles.CUSTOM_ENV points to it)


def page_source(page: Page, kind: str, model: str, skip: str | None) -> str:
    """The py:percent source of one page of the custom book."""
    head = (f"# # {page.title}\n#\n# On **{models.display_name(model)}** ({kind}), the reader's own text: the custom "
            f"profile.")
    cells = ["# %% [markdown]\n" + head]
    if skip:
        cells.append(f"# %% [markdown]\n# Skipped: {skip}.")
        return "\n\n".join(cells) + "\n"
    if page.omitted:
        cells.append(f"# %% [markdown]\n# Not here: {page.omitted}.")
    cells.append('# %% tags=["parameters", "remove-cell"]\ndata_dir = "data"  # this custom book\'s figure data')
    cells.append("# %% tags=[\"remove-cell\"]\nfrom jtc_utils.book import custom\n\n"
                 f"page = custom.Run({page.name!r}, data_dir)")
    if page.name == "real_model":
        cells.append("# %% [markdown]\n# The model and the text, as the book read them.")
        cells.append("# %%\npage.cards()")
    for fig in page.figures[kind]:
        cells.append(f"# %%\npage.figure({fig!r})")
    if page.claims.get(kind):
        cells.append("# %% [markdown]\n# The paper's claims, judged with the book's rules on these numbers.")
        cells.append(f"# %%\npage.verdicts({list(page.claims[kind])!r})")
    return "\n\n".join(cells) + "\n"


def claims_source(model: str) -> str:
    """The py:percent source of the custom book's claims page."""
    return "\n\n".join([
        f"# %% [markdown]\n# # The claims, judged for {models.display_name(model)}\n#\n"
        "# Every claim of Jump to Conclusions with the same rules as on every other profile;\n"
        "# a claim whose figures this model does not have gets no verdict and says why.",
        '# %% tags=["parameters", "remove-cell"]\ndata_dir = "data"',
        "# %% tags=[\"remove-cell\"]\nfrom jtc_utils.book import custom\n\npage = custom.Run('claims_verdicts', "
        "data_dir)",
        "# %%\npage.all_verdicts()"]) + "\n"


class Run:
    """What one page of the custom book does, in its kernel: the custom profile is the one the spec
    (:data:`jtc_utils.core.profiles.CUSTOM_ENV`) defines."""

    def __init__(self, name: str, data_dir):
        self.name, self.data_dir = name, Path(data_dir)
        # a page re-run by hand (in Jupyter, outside the runner, which points the kernel at a staging folder) writes
        # its figure data beside itself, never into the committed book's
        os.environ.setdefault("JTC_DATA_OUT", str(self.data_dir.resolve()))
        self.profile = profiles.get("custom")
        self.chapter = Chapter("custom")
        ad = models.adapter(self.profile.gpt[0])
        self.kind = kind_of(ad)
        self.missing = absent(self.kind, "news" in dict(self.profile.texts), ad.family)

    def cards(self) -> None:
        """The model card and each text's data card, saved as ``custom_cards``."""
        import pandas as pd
        from IPython.display import display

        ad = models.adapter(self.profile.gpt[0])
        n_train, n_val = self.profile.sizes
        model = {"model": self.profile.gpt[0], "family": ad.family, "kind": self.kind, "layers": ad.n_layers,
                 "width": ad.d, "vocabulary": len(ad.tokenizer), "identity": ad.identity[:16]}
        texts = {domain: user_text.data_card(path, n_train, n_val) for domain, path in self.profile.texts}
        figdata.save("custom_cards", {"model": model, "texts": texts}, {"profile": "custom"})
        display(pd.Series(model, name="model").to_frame())
        for domain, card in texts.items():
            print(f"{domain}: {card['source']} (sha256 {card['sha256'][:16]}…), {card['train']:,} training and "
                  f"{card['validation']:,} validation sentences")
            display(pd.Series(card["counts"], name="sentences after each step").to_frame())

    def figure(self, fig: str):
        """Compute, save and show one figure on the reader's model."""
        import pandas as pd
        from IPython.display import display

        d = self.chapter.figure(fig)
        paper = figure_registry.entry(fig).paper
        if fig == "real_toplists":
            for sentence, block in jtc_figures.table1_frame(d).groupby(level=0, sort=False):
                print(sentence)
                print(block.droplevel(0).to_string(), end="\n\n")
        elif fig.endswith("textfit") or fig.endswith("textfit_bbc"):
            display(pd.Series({k: d[k] for k in ("perplexity", "ppl_tokens", "gold_p1", "n_gold")}, name=fig))
        elif paper == "lenses":
            display(lens_figures.quarter_table(d, ("p@1", "kl", "ce_gold")).set_index("lens"))
        elif paper == "ffn":
            import matplotlib.pyplot as plt

            name = models.display_name(self.profile.gpt[0])
            fig_, axes = plt.subplots(1, 2, figsize=(11, 3.4))
            ffn_plots.per_layer({"dominant ten": d["t10"], "random ten": d["r10"]},
                                f"{name}: share of the dominant ten", "share", ax=axes[0])
            ffn_plots.exit_rules(d["exit"], name, ax=axes[1])
            show([fig], "Geva et al. Figure 6 and Table 6, on your model",
                 "Left: the dominant ten's share per layer against ten random sub-updates; right: the exit rules.",
                 "Line plot of the dominant ten's share per layer, and accuracy against layers saved")
        elif paper == "linearity":

            sl_plots.profiles({}, real=d)
            show([fig], "Razzhigaev et al. Figure 1, on your model",
                 "The linearity score of each consecutive layer pair against depth, with the residual (solid) and "
                 "without it.", "Linearity scores against depth")
        return None

    def verdicts(self, ids) -> None:
        """The claims ``ids`` judged on this page's numbers and the pages before (never the committed book's)."""
        from IPython.display import display

        get = getter(self.chapter.results, self.data_dir, self.missing)
        display(claim_tables.verdict_table(ids, get, "custom", "verdicts-custom-" + "-".join(ids), link=None))

    def all_verdicts(self) -> None:
        """Every JTC claim judged for the reader's model, saved as ``claims_custom``, with the summary line."""
        from IPython.display import display

        get = claims.memo(getter({}, self.data_dir, self.missing))
        records = [claims.check_any(c, get, "custom") for c in jtc_claims.CLAIMS]
        figdata.save("claims_custom", records, {"profile": "custom", "model": self.profile.gpt[0]})
        print(claims.summary(records, "custom"))
        display(claim_tables.styled(records, "verdicts-custom-all", link=None))


def page_digest(plan: Plan, source: str) -> str:
    """What a page's outputs depend on: its source, the model's identity, the texts (their SHA-256) and sizes, and
    the book's code (the ``jtc_utils`` files it can run)."""
    h = hashlib.sha256(json.dumps([source, plan.identity, plan.sizes, {d: user_text.fingerprint(p) for d, p in
                                                                      plan.texts.items()}]).encode())
    for f in sorted((ROOT / "jtc_utils").rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


def _up_to_date(page_file: Path, digest: str, data_dir: Path) -> bool:
    import nbformat

    if not page_file.exists():
        return False
    record = nbformat.read(page_file, as_version=4).metadata.get("jtc", {})
    return record.get("inputs") == digest and not runner.data_mismatches(record, data_dir)


def execute_page(out: Path, name: str, source: str, digest: str, timeout: int = runner.CELL_TIMEOUT,
                 device: str | None = None) -> float | None:
    """Execute one generated page into ``out/<name>.ipynb`` as one transaction (:func:`runner.transaction`: its
    figure data into ``out/data`` only when every cell has passed); returns its seconds, or None when it was up to
    date (its inputs unchanged and its data as it recorded)."""
    import jupytext
    import nbformat

    data_dir, page_file = out / "data", out / f"{name}.ipynb"
    if _up_to_date(page_file, digest, data_dir):
        return None
    nb = jupytext.reads(source, fmt="py:percent")
    record = {"inputs": digest, "profile": "custom"}
    if not any(c.cell_type == "code" for c in nb.cells):  # a skipped chapter: its line, no kernel
        t0 = time.time()
        runner.clean(nb)
        nb.metadata["jtc"] = {**record, "data": {}}
        atomic_write_text(page_file, nbformat.writes(nb) + "\n")
        return time.time() - t0
    env = {"TRANSFORMERS_VERBOSITY": "error", profiles.CUSTOM_ENV: str(out / SPEC),
           **({"JTC_DEVICE": device} if device else {})}
    return runner.transaction(nb, page_file, data_dir, {"data_dir": str(data_dir)}, env, out, timeout, record)


class MemoryWatch:
    """The largest resident memory of this process's descendants together (the page workers and their kernels),
    sampled every ``every_s`` seconds from ``/proc`` while the block runs; 0 where there is no ``/proc``."""

    def __init__(self, every_s: float = 0.5):
        import threading

        self.every_s, self.peak_gb, self._stop = every_s, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    @staticmethod
    def descendants_gb(root: int | None = None) -> float:
        """Resident memory of the processes below ``root`` (default: this one), in GB."""
        parent, rss = {}, {}
        for status in Path("/proc").glob("[0-9]*/status"):
            try:
                fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            except OSError:
                continue  # ended while read
            pid = int(status.parent.name)
            parent[pid] = int(fields.get("PPid", "0"))
            rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0]) * 1024
        root = os.getpid() if root is None else root
        below, frontier = set(), {root}
        while frontier:
            frontier = {p for p, pp in parent.items() if pp in frontier} - below
            below |= frontier
        return sum(rss[p] for p in below) / 2**30

    def _watch(self):
        while not self._stop.wait(self.every_s):
            self.peak_gb = max(self.peak_gb, self.descendants_gb())

    def __enter__(self):
        if Path("/proc/self/status").exists():
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return False


def _execute_named(out: Path, sources: dict, digests: dict, timeout: int, device: str | None, name: str):
    """:func:`execute_page` of page ``name`` (what :func:`runner.run_pages` calls, in a worker process)."""
    return execute_page(out, name, sources[name], digests[name], timeout, device)


def write_book(out: Path, plan: Plan) -> None:
    """The Jupyter Book around the executed pages: its configuration, table of contents and an introduction that
    gives the plan."""
    title = f"The book on {models.display_name(plan.model)}"
    config = {"title": title, "author": "jtc-book (custom profile)", "only_build_toc_files": True,
              "execute": {"execute_notebooks": "off"}, "html": {"use_repository_button": False},
              "exclude_patterns": ["notebooks", "_failed", ".staging-*", "data"],
              "sphinx": {"config": {"nb_merge_streams": True, "html_show_sourcelink": False,
                                    "html_static_path": ["_static"], "html_css_files": ["jtc.css"]}}}
    toc = {"format": "jb-book", "root": "intro",
           "chapters": [{"file": name} for name in [p.name for p in PAGES] + [CLAIMS_PAGE]]}
    intro = [f"# {title}", "", "Every chapter of *Jump to Conclusions, reproduced* that applies to this model, "
             "executed on the reader's own text with `python -m jtc_utils.book.custom`. The plan, as printed "
             "before the run:", "", "```", *plan.lines(), "```", ""]
    atomic_write_text(out / "_config.yml", json.dumps(config, indent=1) + "\n")  # JSON is YAML
    atomic_write_text(out / "_toc.yml", json.dumps(toc, indent=1) + "\n")
    atomic_write_text(out / "intro.md", "\n".join(intro))
    shutil.copytree(ROOT / "_static", out / "_static", dirs_exist_ok=True)


def build_html(out: Path) -> Path:
    jb = Path(sys.executable).with_name("jupyter-book")
    r = subprocess.run([str(jb), "build", str(out), "--path-output", str(out), "--keep-going"], cwd=out,
                       capture_output=True, text=True)
    index = out / "_build" / "html" / "index.html"
    if r.returncode != 0 or not index.exists():
        raise SystemExit(f"ERROR: jupyter-book build of {out} failed (exit {r.returncode}):\n{r.stdout[-2000:]}"
                         f"\n{r.stderr[-2000:]}")
    shutil.copytree(out / "data", out / "_build" / "html" / "data", dirs_exist_ok=True)  # the captions' links
    return index


def write_sources(out: Path, plan: Plan) -> dict:
    """Write the custom profile's spec (:data:`SPEC`) and every page's py:percent source (``notebooks/``) into
    ``out``; returns the sources by page name, the claims page last."""
    out.mkdir(parents=True, exist_ok=True)
    n_train, n_val = plan.sizes
    spec = {"model": plan.model, "text": plan.texts["text"], "news": plan.texts.get("news"), "n_train": n_train,
            "n_val": n_val}
    atomic_write_text(out / SPEC, json.dumps(spec, indent=1) + "\n")
    sources = {p.name: page_source(p, plan.kind, plan.model, plan.skipped.get(p.name)) for p in PAGES}
    sources[CLAIMS_PAGE] = claims_source(plan.model)
    (out / "notebooks").mkdir(exist_ok=True)
    for name, source in sources.items():
        atomic_write_text(out / "notebooks" / f"{name}.py", source)
    return sources


def run(out, plan: Plan, timeout: int = runner.CELL_TIMEOUT, device: str | None = None, html: bool = True,
        log=print) -> dict:
    """Execute the custom book planned by ``plan`` into ``out`` (see the module docstring); returns the seconds
    per page and the kernels' peak memory."""
    import resource

    from tqdm.auto import tqdm

    out = Path(out)
    sources = write_sources(out, plan)
    t0 = time.time()
    bar = tqdm(total=len(sources), desc="custom book", unit="page", disable=not sys.stderr.isatty())

    def report(line: str) -> None:
        if line.startswith("  "):  # a page ended
            bar.update()
        (bar.write if not bar.disable else log)(line)

    skipped = [name for name in sources if name in plan.skipped]  # a line each, no kernel: here, at once
    run_one = partial(_execute_named, out, sources, {n: page_digest(plan, src) for n, src in sources.items()},
                      timeout, device)
    times = runner.run_pages(skipped, run_one, 1, report)
    with MemoryWatch() as watch:
        times.update(runner.run_pages([n for n in sources if n not in skipped], run_one, plan.jobs, report))
    times = {name: times[name] for name in sources}
    bar.close()
    failed = out / "_failed"  # the pages' failed copies: none left once every page has passed
    if failed.is_dir() and not any(failed.iterdir()):
        failed.rmdir()
    peak = max(watch.peak_gb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20)
    result = {"plan": plan.lines(), "estimate_s": plan.estimate_s, "memory_estimate_gb": plan.memory_gb,
              "pages_s": times, "pages_total_s": time.time() - t0, "peak_memory_gb": peak, "jobs": plan.jobs}
    if html:
        write_book(out, plan)
        result["html"] = str(build_html(out))
    result["total_s"] = time.time() - t0
    atomic_write_text(out / "run.json", json.dumps(result, indent=1) + "\n")
    return result


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m jtc_utils.book.custom", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a folder written by save_pretrained, or a hub id")
    ap.add_argument("--text", required=True, help=f"the main text: {user_text.FORMS}")
    ap.add_argument("--text-news", default=None, help="a second text, the paper's news domain (appendix B)")
    ap.add_argument("--sentences", type=int, default=sum(profiles.CUSTOM_SIZES),
                    help="sentences per domain, a fifth of them for validation (default: the paper's 12,000)")
    ap.add_argument("--device", default="auto", help="auto (a GPU when there is one), cpu, cuda, cuda:N")
    ap.add_argument("--memory", type=float, default=None, help="GB the run may use (default: what is available)")
    ap.add_argument("--timeout", type=int, default=runner.CELL_TIMEOUT, help="seconds per cell")
    ap.add_argument("--no-html", action="store_true", help="execute the pages only")
    ap.add_argument("--jobs", type=int, default=None,
                    help="pages executed side by side, each single-threaded (default: 2 on a CPU with two cores or "
                         "more, else 1; fewer where their memory would not fit)")
    ap.add_argument("--plan-only", action="store_true", help="print the plan and stop")
    ap.add_argument("--out", required=True, help="the folder the custom book is written to (never book/)")
    args = ap.parse_args(argv)
    if args.sentences < 5:
        ap.error(f"--sentences must be at least 5 (a fifth of them validate), got {args.sentences}")
    try:
        out = check_out(args.out)
        with runner.exit_on_interrupt("interrupted while planning: nothing was written"):
            p = plan(args.model, args.text, args.text_news, args.sentences, args.device, args.memory, args.jobs)
    except ValueError as e:
        raise SystemExit(f"ERROR: {e}") from None
    print("\n".join(p.lines()), flush=True)
    if p.memory_gb > p.available_gb:
        raise SystemExit(f"ERROR: the run would need about {p.memory_gb:.1f} GB and {p.available_gb:.1f} GB are "
                         f"available; ask for fewer sentences (--sentences), use a smaller model, or run where there "
                         f"is more memory (--memory states what may be used). Nothing was written.")
    if args.plan_only:
        return
    try:
        with runner.exit_on_interrupt(f"interrupted: the pages that finished are kept in {out}; the same command "
                                      f"resumes with the rest"):
            r = run(out, p, args.timeout, None if args.device == "auto" else args.device, not args.no_html)
    except runner.NotebookFailed as e:
        raise SystemExit(f"ERROR: {e}") from None
    print(f"done in {r['total_s'] / 60:.1f} min (estimate {p.estimate_s / 60:.1f} min); the pages' peak memory "
          f"{r['peak_memory_gb']:.2f} GB (estimate {p.memory_gb:.1f} GB)" + (f"; the book is at {r['html']}"
                                                                             if "html" in r else ""))


if __name__ == "__main__":
    main()
