"""The book's pages, each declared once (:data:`PAGES`, in the book's order): its notebook, its title, the pages
whose numbers it reads, where it starts in a parallel build, whether work of it runs ahead, and how it applies to a
reader's own model (the custom book) with the cost measured for it. The runner, the scheduler, the custom book and
the tests read it; ``_toc.yml`` lays the book out, and a test checks that the two agree."""

from __future__ import annotations

from dataclasses import dataclass

from jtc_utils.evidence.registry import get as registered

EVERY_PAGE_BEFORE = None  # what the claims page reads: every page before it in the book


@dataclass(frozen=True)
class Page:
    """One page of the book (notebooks/<name>.py)."""

    name: str  # its notebook, and the page of the book and of a reader's custom book
    title: str  # its title in a reader's custom book
    reads: tuple | None = ()  # the pages whose numbers it reads (EVERY_PAGE_BEFORE: all before it): it waits for them
    start: int | None = None  # its place among the long pages a parallel build starts first (None: in book order)
    ahead: bool = False  # work of it runs ahead of it, in a worker of its own (the registry's ``ahead``)
    about_the_model: bool = False  # the page of the real model and its text: every cell reads the real model, and
    #                               the custom book shows the model's and the text's cards there
    custom: bool = True  # a page of a reader's custom book (False: the custom book's claims page is its own)
    skip: str = ""  # why it never applies to a reader's model
    needs_news: bool = False  # the second domain (appendix B)
    needs_blocks: bool = False  # a block runner (sub-module maps, FFN sub-updates): jtc_utils.core.models.blocks
    omitted: str = ""  # what of the chapter needs the embedded world, so is not on the custom page
    # its cost in a custom book, in forward passes (see jtc_utils.book.custom.plan.estimate_seconds): per sentence,
    # and the work that does not grow with the sentences
    cost: float | None = None
    fixed: float = 0

    @property
    def figures(self) -> dict:
        """kind of model -> the figure ids the page computes for a reader's model of that kind."""
        return registered().custom.get(self.name, {})

    @property
    def claims(self) -> dict:
        """kind of model -> the claim ids the page judges for a reader's model of that kind."""
        return registered().custom_claims.get(self.name, {})


# the pages of the JTC paper's sections and their setting, whose numbers the appendices read
JTC = (
    "embedded_world",
    "real_model",
    "sec3_linear_shortcuts",
    "sec4_predictions",
    "sec5_early_exit",
    "sec6_submodules",
)
# Costs: seconds of each page per (sentence × forward second), measured on SmolLM2-135M with 2,000 Wikipedia
# sentences on two cores, and the fixed work in forward passes (see jtc_utils.book.custom.plan).
# Start: the long pages a parallel build starts first, longest first (the order of a cold build on two cores,
# 2026-11-27): the model-and-text page extracts the real model's hidden states, the longest single step, which most
# pages need (a cached result is computed once, so a page that needs it meanwhile waits); the linearity chapter's
# long steps (every-token states, pruning) need no extraction, so it runs beside it; then section 6, the lenses and
# FFN, so that the short pages are left to fill the end, not one long page alone.
PAGES = (
    Page(
        "embedded_world",
        "The embedded world",
        skip="it describes the generated corpus and the zoo trained on it, not a reader's model",
    ),
    Page("real_model", "Your model and its text", start=0, about_the_model=True, cost=0.60, fixed=40),
    Page("sec3_linear_shortcuts", "Linear shortcuts between layers (section 3)", cost=0.07),
    Page(
        "sec4_predictions",
        "Predictions from early layers (section 4)",
        cost=0.035,
        omitted="plausibility and the breakdown by word class (they need the embedded corpus's word labels), and "
        "Table 1 (the paper's two sentences on BERT-large)",
    ),
    Page("sec5_early_exit", "Early exit (section 5)", cost=0.012),
    Page(
        "sec6_submodules",
        "Linear stand-ins for sub-modules (section 6)",
        start=2,
        needs_blocks=True,
        cost=0.75,
        fixed=40,
    ),
    Page("appendix_b_news", "The second domain (appendix B)", reads=JTC, needs_news=True, cost=0.41),
    Page(
        "appendix_d_sizes",
        "Model sizes (appendix D)",
        reads=JTC,
        skip="it compares four sizes of one model trained alike, which only the embedded zoo has",
    ),
    Page(
        "lenses",
        "Low-rank shortcuts and the tuned lens",
        start=3,
        cost=1.0,
        omitted="the tuned lens (trained ahead of time: `python -m jtc_utils.lenses.train`), and the rank sweep "
        "and the comparisons across the zoo's four sizes",
    ),
    Page(
        "ffn_subupdates",
        "FFN sub-updates in the vocabulary space",
        start=4,
        needs_blocks=True,
        cost=0.75,
        fixed=360,
        omitted="the concepts by word class, the steering and the classifiers on the embedded world "
        "(they need its word labels)",
    ),
    Page(
        "secretly_linear",
        "Your Transformer is Secretly Linear",
        start=1,
        cost=0.505,
        fixed=190,
        omitted="the training experiments (pretraining with the regulariser, distillation after pruning) and the "
        "comparison across model sizes, which need the zoo's training runs",
    ),
    Page("claims_verdicts", "Claims and verdicts", reads=EVERY_PAGE_BEFORE, ahead=True, custom=False, cost=0.0),
)
BY_NAME = {p.name: p for p in PAGES}
CLAIMS = "claims_verdicts"  # the claims page: every paper's verdicts, reading every chapter's numbers
CUSTOM = tuple(p for p in PAGES if p.custom)  # the pages of a reader's custom book, beside its own claims page
READERS = {p.name: p.reads for p in PAGES if p.reads != ()}  # page -> the pages it reads (None: every one before)
START_FIRST = tuple(p.name for p in sorted((p for p in PAGES if p.start is not None), key=lambda p: p.start))
AHEAD = tuple(p.name for p in PAGES if p.ahead)  # the pages with work run ahead of them
ABOUT_THE_MODEL = next(p.name for p in PAGES if p.about_the_model)


def page(name: str) -> Page:
    """The page ``name``; an unknown name is refused with the book's pages."""
    if name not in BY_NAME:
        raise ValueError(f"no page {name!r}; the book's pages: {', '.join(BY_NAME)}")
    return BY_NAME[name]
