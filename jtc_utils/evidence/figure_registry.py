"""The book's one figure registry: every figure id, registered once with the function that computes its numbers,
the function that draws it and its caption (or, for a table, the function that shows it), so that the book computes,
saves, draws and captions any figure of any paper by its id on one path.

Each paper package holds its tables: the figure ids it computes (``compute(fig, profile, n_train, n_val, seed) ->
(data, params)``, ``profile`` a :class:`~jtc_utils.core.profiles.Profile`: the name a notebook passes is resolved
once, here), its drawings (``draw`` and ``caption``, from a table of :class:`View` through :func:`drawings`) and the
records its chapters save beside the figures; :func:`jtc_utils.book.papers.register` registers them all
(:func:`register`), with the paper's claims and exercise checks. A figure id belongs to exactly one paper.
:func:`saved` computes and saves a figure, :func:`save` is the one writer of ``book/data``, and
:func:`jtc_utils.book.chapter.figure` is the path a chapter's cell takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from jtc_utils.core import profiles
from jtc_utils.base import validate
from jtc_utils.core.profiles import Profile

from . import figdata

REAL_PREFIX = "real_"  # a figure computed on the real model (profile "real"), beside its stand-in twin
CUSTOM = "custom"  # the profile of a reader's own model, which plays the real model's part (its ``real_`` figures)


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
    """A paper's ``draw`` and ``caption`` (as :func:`register` takes them) from its table of drawings: figure id ->
    a :class:`View`, or several (view name -> View; the first is the one drawn by default, another is chosen with
    the option ``view=``)."""

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


@dataclass(frozen=True)
class Registered:
    paper: str  # "jtc", "lenses", "ffn" or "linearity"
    compute: Callable  # (fig, profile: Profile, n_train, n_val, seed) -> (data, params)
    params_in_result: bool  # whether :func:`result` gives the parameters under "params" beside the data
    draw: Callable | None = None  # (fig, data, params, **options) -> draws it with matplotlib; None: not drawn here
    caption: Callable | None = None  # (figs, data, params, **options) -> Caption, for a drawn figure
    returns_saved: bool = True  # whether :func:`saved` returns the numbers as saved (JSON values) or as computed
    table: Callable | None = None  # (fig, data, params) -> shows it as a table (display or print); None: no table
    regressed: bool = True  # whether the figure-data regression recomputes it (False: judged or gathered from others)
    on_demand: bool = False  # saved only where a claim reads it (a figure recomputed in another setting)


FIGURES: dict[str, Registered] = {}


def register(paper: str, ids, compute: Callable, params_in_result: bool = True, draw: Callable | None = None,
             caption: Callable | None = None, drawn=(), returns_saved: bool = True, table: Callable | None = None,
             tabled=(), regressed: bool = True, on_demand: bool = False) -> None:
    """Register ``compute`` for the figure ids ``ids`` of ``paper``, ``draw`` and ``caption`` for those of them in
    ``drawn`` and ``table`` for those in ``tabled`` (figures shown as a table); ``regressed=False`` for records that
    the figure-data regression does not recompute (claims judged from other figures, views that gather them);
    ``on_demand=True`` for figures recomputed in another setting, saved only where a claim reads them.
    ``params_in_result=False`` for a paper whose figure data are keyed by model (the parameters would
    read as one more model); ``returns_saved=False`` for a paper whose chapters read the numbers as computed (arrays,
    not their JSON form)."""
    if (draw is None) != (caption is None):
        raise ValueError(f"{paper}: a drawn figure needs both its draw and its caption")
    for fig in ids:
        if fig in FIGURES and FIGURES[fig].paper != paper:
            raise ValueError(f"figure {fig!r} is registered by {FIGURES[fig].paper!r} and {paper!r}")
        shown = fig in drawn
        FIGURES[fig] = Registered(paper, compute, params_in_result, draw if shown else None,
                                  caption if shown else None, returns_saved, table if fig in tabled else None,
                                  regressed, on_demand)


def real_of(profile: Profile | str) -> Profile:
    """The profile a chapter's real-model figures are computed on: ``real``, or the reader's own model under the
    custom profile."""
    p = profiles.get(profile)
    return p if p.name == CUSTOM else profiles.get("real")


def profile_of(fig: str, profile: Profile | str) -> Profile:
    """The profile a figure is computed on: :func:`real_of` for the real model's figures, the chapter's otherwise
    (``profile``: a :class:`Profile` or its name)."""
    return real_of(profile) if fig.startswith(REAL_PREFIX) else profiles.get(profile)


def entry(fig: str) -> Registered:
    if fig not in FIGURES:
        papers = sorted({r.paper for r in FIGURES.values()})
        known = "; ".join(f"{p}: {', '.join(f for f, r in FIGURES.items() if r.paper == p)}" for p in papers)
        raise ValueError(f"unknown figure {fig!r}: no paper package registered it (known ids, by paper: "
                         f"{known or 'none'}; every paper's figures are registered by "
                         "jtc_utils.book.papers.register(), which every book module that reads a registry calls)")
    return FIGURES[fig]


def compute(fig: str, profile: Profile | str = "tiny", n_train=None, n_val=None, seed: int = 0) -> tuple[dict, dict]:
    """``(data, params)`` of figure ``fig``, computed by the paper package that registered it, on the profile the
    figure belongs to (:func:`profile_of`). The sizes and seed are checked here, before anything is computed."""
    registered = entry(fig)
    n_train, n_val = validate.sizes(n_train, n_val)
    return registered.compute(fig, profile_of(fig, profile), n_train, n_val, validate.seed(seed))


def saved(fig: str, profile: Profile | str = "tiny", n_train=None, n_val=None, seed: int = 0) -> tuple:
    """Compute figure ``fig`` and save its numbers to ``book/data/<fig>.json`` (:func:`save`): ``(numbers, params)``,
    the numbers as saved (plain JSON values, NaN as None; the same a reader gets from ``figdata.load(fig)["data"]``),
    or as computed where the paper registered so (``returns_saved=False``), and the parameters as saved."""
    return save(fig, *compute(fig, profile, n_train, n_val, seed))


def save(fig: str, data, params: dict) -> tuple:
    """Save the numbers of registered figure ``fig``, computed by its registered function (:func:`compute`, here or
    in a worker ahead of the page), to ``book/data/<fig>.json``: the one place that writes ``book/data``. Returns
    ``(numbers, params)`` as :func:`saved` does."""
    registered = entry(fig)
    record = figdata.save(fig, data, params)
    numbers = record["data"] if registered.returns_saved else data
    return (dict(numbers) if isinstance(numbers, dict) else numbers), record["params"]


def result(fig: str, numbers: dict, params: dict) -> dict:
    """What a chapter reads of a figure (:class:`jtc_utils.book.chapter.FigureNumbers`): the numbers, with the
    parameters under ``params`` where the paper registered so (``params_in_result``)."""
    if not isinstance(numbers, dict):  # a list of records (a claims file)
        return numbers
    return {**numbers, "params": params} if entry(fig).params_in_result else dict(numbers)
