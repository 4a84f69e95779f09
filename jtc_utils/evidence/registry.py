"""The book's one registry: every paper plugs in through the literal table :data:`PAPERS` (paper name -> the module
that declares its :class:`Paper`), read once, on first use (:func:`get`), into one immutable :class:`Registry` of
every figure, claim, exercise check and verdict fact. Nothing registers itself when imported, and no layer below the
book names a paper package but this table. The book reaches a paper only through the registry."""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

# paper name -> the module whose ``PAPER`` declares it (the one list of the papers, in the book's order)
PAPERS = {
    "jtc": "jtc_utils.jtc.paper",
    "lenses": "jtc_utils.lenses.paper",
    "ffn": "jtc_utils.ffn.paper",
    "linearity": "jtc_utils.linearity.paper",
}


@dataclass(frozen=True)
class Caption:
    """What a drawn figure's caption says: the paper figure it reproduces (``ref``), what to see in it (``see``), the
    image's alt text (``alt``) and what it shows (``what``: the model and text, or the panels)."""

    ref: str
    see: str
    alt: str
    what: str = ""
    figs: tuple = ()  # the figure ids whose numbers the image draws, where more than the one drawn (linked below it)


@dataclass(frozen=True)
class View:
    """One way of drawing a figure's numbers: ``draw(data, params, **options)`` draws it with matplotlib and
    ``caption(data, params, **options)`` says what it shows (a :class:`Caption`)."""

    draw: Callable
    caption: Callable


def drawings(table: dict) -> tuple[Callable, Callable]:
    """A paper's ``draw`` and ``caption`` from its table of drawings: figure id -> a :class:`View`, or several (view
    name -> View; the first is the one drawn by default, another is chosen with the option ``view=``)."""

    def pick(fig: str, view) -> View:
        ways = table[fig]
        if isinstance(ways, View):
            if view is not None:
                raise ValueError(f"figure {fig!r} has one drawing; it has no view {view!r}")
            return ways
        if view is None:
            return next(iter(ways.values()))
        if view not in ways:
            raise ValueError(f"figure {fig!r} has no view {view!r}; its views: {', '.join(ways)}")
        return ways[view]

    def draw(fig: str, data: dict, params: dict, view=None, **options) -> None:
        pick(fig, view).draw(data, params, **options)

    def caption(figs, data: dict, params: dict, view=None, **options) -> Caption:
        return pick(figs[0], view).caption(data, params, **options)

    return draw, caption


def legend_below(fig, handles: list, ncol: int = 3, pad: float = 0.01) -> None:
    """One legend for every panel of ``fig`` under them (``handles`` filled column by column, ``ncol`` columns), the
    panels laid out above it in the height the drawn legend takes: measured, so that a longer label or a wider
    figure neither crops it nor leaves a gap."""
    legend = fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False)
    fig.canvas.draw()
    height = legend.get_window_extent(fig.canvas.get_renderer()).height / fig.bbox.height
    fig.tight_layout(rect=(0, min(height + pad, 0.5), 1, 1))


@dataclass(frozen=True)
class Registered:
    """One figure id as the registry holds it: its paper, computation, and drawing and caption or table."""

    paper: str  # "jtc", "lenses", "ffn" or "linearity"
    compute: Callable  # (fig, setting: Setting) -> (data, params)
    draw: Callable | None = None  # (fig, data, params, **options) -> draws it with matplotlib; None: not drawn here
    caption: Callable | None = None  # (figs, data, params, **options) -> Caption, for a drawn figure
    table: Callable | None = None  # (fig, data, params) -> shows it as a table (display or print); None: no table
    regressed: bool = True  # whether the figure-data regression recomputes it (False: judged or gathered from others)
    on_demand: bool = False  # saved only where a claim reads it (a figure recomputed in another setting)


@dataclass(frozen=True)
class Paper:
    """Everything the book needs of one paper, declared by its package's ``paper`` module as ``PAPER``."""

    name: str  # "jtc", "lenses", "ffn", "linearity": the figure registry's paper
    figures: tuple  # its figure ids
    compute: Callable  # (fig, setting: jtc_utils.core.data.setting.Setting) -> (data, params)
    claims: dict  # claim id -> rule (its claims module's CLAIMS)
    check: Callable  # (cid, get, profile) -> record
    exercises: dict  # its exercise checks (its exercises module's EXERCISES: label -> (figures read, check))
    claim_page: str = ""  # the chapter (notebook name) whose verdict table shows its claims
    claim_pages: dict = field(default_factory=dict)  # claim id -> its chapter, where not ``claim_page``
    titles: dict = field(default_factory=dict)  # finding titles by statistic
    absent: dict = field(default_factory=dict)  # why a figure has no real-profile counterpart
    resampled_over: dict = field(default_factory=dict)  # what a figure's resamples resample, where not samples
    constants: dict = field(default_factory=dict)  # a figure's numbers that are constants of its setting
    draw: Callable | None = None  # (fig, data, params, **options): draws a figure of ``drawn`` from its numbers
    caption: Callable | None = None  # (figs, data, params) -> Caption
    drawn: tuple = ()  # the figure ids the book draws through the registry
    table: Callable | None = None  # (fig, data, params): shows a figure of ``tabled`` as a table
    tabled: tuple = ()  # the figure ids shown as a table through the registry
    records: dict = field(default_factory=dict)  # what its chapters save beside the figures: id -> its compute
    record_drawings: dict = field(default_factory=dict)  # id -> View (or views) of the records that are drawn
    unregressed: tuple = ()  # records the figure-data regression does not recompute (judged or gathered from others)
    on_demand: tuple = ()  # records saved only where a claim reads them (figures recomputed in another setting)
    experiment_of: Callable | None = None  # (fig, profile) -> (kind, model, domain): the experiment a figure reads
    ahead: dict = field(default_factory=dict)  # page -> work of that page run ahead of it (a function of a profile)
    custom: dict = field(default_factory=dict)  # page -> kind of model -> the figures it computes for a reader's
    custom_claims: dict = field(default_factory=dict)  # page -> kind of model -> the claims it judges there
    custom_absent: Callable | None = None  # (kind, news, family, ran, news_option) -> why a figure is missing
    judged_on_custom: bool = False  # whether the custom book's claims page judges every claim of the paper
    facts: dict = field(default_factory=dict)  # named numbers and sentences the custom book's plan reads


def _frozen(d: dict) -> Mapping:
    return MappingProxyType(dict(d))


@dataclass(frozen=True)
class Registry:
    """Every paper's figures, claims, exercise checks and verdict facts, built once from :data:`PAPERS`."""

    papers: Mapping  # name -> Paper, in the book's order
    figures: Mapping  # figure id -> Registered
    claim_checks: Mapping  # claim id -> its paper's check
    claim_pages: Mapping  # claim id -> the chapter that shows its verdict
    exercise_checks: Mapping  # exercise label -> (figures the check reads, check)
    titles: Mapping  # statistic -> the title its finding is shown under
    absent: Mapping  # figure id -> why the real profile has no counterpart
    resampled_over: Mapping  # figure id -> what its resamples resample, where not samples
    constants: Mapping  # figure id -> its numbers that are constants of the setting
    ahead: Mapping  # page -> its work run ahead of it
    custom: Mapping  # page -> kind of model -> the figures a reader's custom book computes there
    custom_claims: Mapping  # page -> kind of model -> the claims judged there
    judged_on_custom: tuple  # the claims the custom book's claims page judges: every claim of such papers
    facts: Mapping  # name -> a number or sentence a paper gives the custom book's plan

    def entry(self, fig: str) -> Registered:
        """The registered figure ``fig``; an unknown id is refused with every known id, by paper."""
        if fig not in self.figures:
            known = "; ".join(
                f"{p}: {', '.join(f for f, r in self.figures.items() if r.paper == p)}" for p in self.papers
            )
            raise ValueError(
                f"unknown figure {fig!r}: no paper registered it (known ids, by paper: {known}; "
                f"every paper is declared in jtc_utils.evidence.registry.PAPERS)"
            )
        return self.figures[fig]

    def check(self, cid: str) -> Callable:
        """The check of claim ``cid``, by the paper that declares it."""
        if cid not in self.claim_checks:
            raise ValueError(
                f"unknown claim {cid!r}; registered: {', '.join(self.claim_checks)} (every paper is "
                "declared in jtc_utils.evidence.registry.PAPERS)"
            )
        return self.claim_checks[cid]

    def paper(self, name: str) -> Paper:
        if name not in self.papers:
            raise ValueError(f"unknown paper {name!r}; the papers: {', '.join(self.papers)}")
        return self.papers[name]


def _figures(papers) -> dict:
    out: dict = {}

    def put(p: Paper, fig: str, reg: Registered) -> None:
        if fig in out and out[fig].paper != p.name:
            raise ValueError(f"figure {fig!r} is declared by {out[fig].paper!r} and {p.name!r}")
        out[fig] = reg

    for p in papers:
        if (p.draw is None) != (p.caption is None):
            raise ValueError(f"{p.name}: a drawn figure needs both its draw and its caption")
        for fig in p.figures:
            shown = fig in p.drawn
            put(
                p,
                fig,
                Registered(
                    p.name,
                    p.compute,
                    p.draw if shown else None,
                    p.caption if shown else None,
                    p.table if fig in p.tabled else None,
                ),
            )
        draw, caption = drawings(p.record_drawings) if p.record_drawings else (None, None)
        for rid, compute in p.records.items():
            shown = rid in p.record_drawings
            put(
                p,
                rid,
                Registered(
                    p.name,
                    compute,
                    draw if shown else None,
                    caption if shown else None,
                    None,
                    rid not in p.unregressed,
                    rid in p.on_demand,
                ),
            )
    return out


def _merged(papers, what: str, attribute: Callable) -> dict:
    """One table from every paper's ``attribute(paper)``; a key two papers give is refused."""
    out, owner = {}, {}
    for p in papers:
        for key, value in attribute(p).items():
            if key in out and owner[key] != p.name:
                raise ValueError(f"{what} {key!r} is declared by {owner[key]!r} and {p.name!r}")
            out[key], owner[key] = value, p.name
    return out


def _claim_pages(p: Paper) -> dict:
    """Claim id -> the chapter that shows its verdict; a claim with none is refused."""
    pages = {c: p.claim_pages.get(c, p.claim_page) for c in p.claims}
    if not all(pages.values()):
        raise ValueError(f"{p.name}: no chapter for the claims {[c for c, page in pages.items() if not page]}")
    return pages


def build(papers: Mapping[str, str] = PAPERS) -> Registry:
    """The registry of the papers whose ``PAPER`` the modules of ``papers`` declare (name -> module)."""
    declared = []
    for name, module in papers.items():
        p = importlib.import_module(module).PAPER
        if p.name != name:
            raise ValueError(f"{module}.PAPER is named {p.name!r}, not {name!r} as PAPERS says")
        declared.append(p)
    merged = functools.partial(_merged, declared)
    return Registry(
        papers=_frozen({p.name: p for p in declared}),
        figures=_frozen(_figures(declared)),
        claim_checks=_frozen(merged("claim", lambda p: {c: p.check for c in p.claims})),
        claim_pages=_frozen(merged("claim", _claim_pages)),
        exercise_checks=_frozen(merged("exercise", lambda p: p.exercises)),
        titles=_frozen(merged("finding title", lambda p: p.titles)),
        absent=_frozen(merged("absent figure", lambda p: p.absent)),
        resampled_over=_frozen(merged("resampled figure", lambda p: p.resampled_over)),
        constants=_frozen(merged("figure's constants", lambda p: p.constants)),
        ahead=_frozen(merged("page's work ahead", lambda p: p.ahead)),
        custom=_frozen(merged("custom page", lambda p: p.custom)),
        custom_claims=_frozen(merged("custom page's claims", lambda p: p.custom_claims)),
        facts=_frozen(merged("fact", lambda p: p.facts)),
        judged_on_custom=tuple(c for p in declared if p.judged_on_custom for c in p.claims),
    )


@functools.cache
def get() -> Registry:
    """The one registry, built on first use from :data:`PAPERS` (:func:`build`) and the same for the process."""
    return build()
