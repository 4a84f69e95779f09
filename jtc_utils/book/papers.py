"""The book's four papers, each named once: the one place where every registry of the book is filled.

A paper package defines its figures (``figures.FIGURES``-like ids and ``compute``), their drawings and captions (its
``plots`` module's ``draw`` and ``caption``, or ``DRAWINGS``), the records its chapters save beside them
(``RECORDS``), its claims (``claims.CLAIMS``
and ``check``), its exercise checks (its ``exercises`` module's ``EXERCISES``, a
:class:`jtc_utils.evidence.exercises.Checks`) and the facts its verdicts need (what its resamples resample, its
constants, its findings' titles, what the real profile lacks); nothing registers itself when imported.
:func:`register` puts each paper's entries into the registries of :mod:`jtc_utils.evidence`:

* :data:`jtc_utils.evidence.figure_registry.FIGURES` (figure id -> its computation, drawing and caption, or table;
  the paper's figures and the records its chapters save),
* :data:`jtc_utils.evidence.claims.CLAIM_CHECKS` (claim id -> its paper's ``check``),
* :data:`jtc_utils.evidence.exercises.EXERCISE_CHECKS` (exercise label -> its check),
* :data:`jtc_utils.evidence.claims.TITLES`, :data:`~jtc_utils.evidence.claims.ABSENT`,
  :data:`jtc_utils.evidence.verdicts.RESAMPLED_OVER` and :data:`~jtc_utils.evidence.verdicts.CONSTANTS`.

Every module of the book layer that reads a registry calls :func:`register` when imported (:mod:`.chapter`,
:mod:`.regression`, :mod:`.custom_pages`, ...; every page, command and test of the book goes through one of them);
code that uses the registries without the book layer calls it itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from jtc_utils.evidence import claims, exercises, figure_registry, verdicts
from jtc_utils.ffn import claims as ffn_claims
from jtc_utils.ffn import exercises as ffn_exercises
from jtc_utils.ffn import figures as ffn_figures
from jtc_utils.ffn import plots as ffn_plots
from jtc_utils.jtc import claims as jtc_claims
from jtc_utils.jtc import exercises as jtc_exercises
from jtc_utils.jtc import figures as jtc_figures
from jtc_utils.jtc import hardness, regime, rejudge
from jtc_utils.jtc import plots as jtc_plots
from jtc_utils.book import layer_view
from jtc_utils.lenses import claims as lens_claims
from jtc_utils.lenses import exercises as lens_exercises
from jtc_utils.lenses import figures as lens_figures
from jtc_utils.lenses import plots as lens_plots
from jtc_utils.linearity import claims as sl_claims
from jtc_utils.linearity import exercises as sl_exercises
from jtc_utils.linearity import figures as sl_figures
from jtc_utils.linearity import plots as sl_plots


@dataclass(frozen=True)
class Paper:
    name: str  # "jtc", "lenses", "ffn", "linearity": the figure registry's paper
    figures: tuple  # its figure ids
    compute: Callable  # (fig, profile, n_train, n_val, seed) -> (data, params)
    claims: dict  # claim id -> rule (its claims module's CLAIMS)
    check: Callable  # (cid, get, profile) -> record
    exercises: exercises.Checks  # its exercise checks (its exercises module's EXERCISES)
    params_in_result: bool = True  # see jtc_utils.evidence.figure_registry.register
    titles: dict = field(default_factory=dict)  # finding titles by statistic
    absent: dict = field(default_factory=dict)  # why a figure has no real-profile counterpart
    resampled_over: dict = field(default_factory=dict)  # what a figure's resamples resample, where not samples
    constants: dict = field(default_factory=dict)  # a figure's numbers that are constants of its setting
    draw: Callable | None = None  # (fig, data, params, **options): draws a figure of ``drawn`` from its numbers
    caption: Callable | None = None  # (figs, data, params) -> figure_registry.Caption
    drawn: tuple = ()  # the figure ids the book draws through the registry
    returns_saved: bool = True  # see jtc_utils.evidence.figure_registry.register
    table: Callable | None = None  # (fig, data, params): shows a figure of ``tabled`` as a table
    tabled: tuple = ()  # the figure ids shown as a table through the registry
    records: dict = field(default_factory=dict)  # what its chapters save beside the figures: id -> its compute
    record_drawings: dict = field(default_factory=dict)  # id -> View (or views) of the records that are drawn
    unregressed: tuple = ()  # records the figure-data regression does not recompute (judged or gathered from others)
    on_demand: tuple = ()  # records saved only where a claim reads them (figures recomputed in another setting)


PAPERS = (
    Paper("jtc", tuple(jtc_figures.FIGURES), jtc_figures.compute, jtc_claims.CLAIMS, jtc_claims.check,
          jtc_exercises.EXERCISES, titles=jtc_claims.FINDINGS, absent=jtc_claims.REAL_ABSENT, draw=jtc_plots.draw,
          caption=jtc_plots.caption,
          drawn=jtc_plots.DRAWN, returns_saved=False, table=jtc_plots.table, tabled=jtc_plots.TABLED,
          records={**jtc_figures.RECORDS, **hardness.RECORDS, **rejudge.RECORDS, **layer_view.RECORDS},
          record_drawings=regime.DRAWINGS, unregressed=(*rejudge.CLAIMS_FILES, *layer_view.RECORDS),
          on_demand=rejudge.RECOMPUTED),
    Paper("lenses", tuple(lens_figures.LENS_FIGURES), lens_figures.compute, lens_claims.CLAIMS, lens_claims.check,
          lens_exercises.EXERCISES, absent=lens_claims.REAL_ABSENT, constants=lens_claims.CONSTANTS,
          draw=lens_plots.draw, caption=lens_plots.caption,
          drawn=lens_plots.DRAWN, table=lens_plots.table, tabled=lens_plots.TABLED,
          records={**lens_claims.RECORDS, **lens_figures.RECORDS},
          unregressed=tuple(lens_claims.RECORDS)),
    Paper("ffn", tuple(ffn_figures.FFN_FIGURES), ffn_figures.compute, ffn_claims.CLAIMS, ffn_claims.check,
          ffn_exercises.EXERCISES, resampled_over=ffn_claims.RESAMPLED_OVER, constants=ffn_claims.CONSTANTS,
          draw=ffn_plots.draw, caption=ffn_plots.caption, drawn=ffn_plots.DRAWN, records=ffn_claims.RECORDS,
          unregressed=tuple(ffn_claims.RECORDS)),
    Paper("linearity", tuple(sl_figures.SL_FIGURES), sl_figures.compute_sized, sl_claims.CLAIMS, sl_claims.check,
          sl_exercises.EXERCISES, params_in_result=False, resampled_over=sl_claims.RESAMPLED_OVER,
          constants=sl_claims.CONSTANTS, draw=sl_plots.draw, caption=sl_plots.caption, drawn=sl_plots.DRAWN,
          records=sl_claims.RECORDS, unregressed=tuple(sl_claims.RECORDS)),
)


def register() -> None:
    """Put every paper's figures, claims, exercise checks and verdict facts into the registries (again: the same
    entries twice change nothing; an id claimed by two papers is refused)."""
    for p in PAPERS:
        figure_registry.register(p.name, p.figures, p.compute, p.params_in_result, p.draw, p.caption, p.drawn,
                                 p.returns_saved, p.table, p.tabled)
        draw, caption = figure_registry.drawings(p.record_drawings) if p.record_drawings else (None, None)
        for rid, compute in p.records.items():
            figure_registry.register(p.name, [rid], compute, p.params_in_result, draw, caption,
                                     tuple(p.record_drawings), p.returns_saved, regressed=rid not in p.unregressed,
                                     on_demand=rid in p.on_demand)
        claims.register(p.claims, p.check)
        exercises.register(p.exercises)
        claims.TITLES.update(p.titles)
        claims.ABSENT.update(p.absent)
        verdicts.RESAMPLED_OVER.update(p.resampled_over)
        verdicts.CONSTANTS.update(p.constants)
