"""The JTC paper as the book's registry reads it (:data:`PAPER`, named in :data:`jtc_utils.evidence.registry.PAPERS`):
its figures, drawings, claims, exercise checks, the records its chapters save, and what a reader's custom book
computes and judges."""

from __future__ import annotations

from jtc_utils.evidence.registry import Paper

from . import claims, exercises, figures, hardness, plots, regime, rejudge

PAPER = Paper(
    "jtc",
    tuple(figures.FIGURES),
    figures.compute,
    claims.CLAIMS,
    claims.check,
    exercises.EXERCISES,
    claim_pages=claims.PAGES,
    titles=claims.FINDINGS,
    absent=claims.REAL_ABSENT,
    draw=plots.draw,
    caption=plots.caption,
    drawn=plots.DRAWN,
    table=plots.table,
    tabled=plots.TABLED,
    records={**figures.RECORDS, **hardness.RECORDS, **rejudge.RECORDS},
    record_drawings=regime.DRAWINGS,
    unregressed=tuple(rejudge.CLAIMS_FILES),
    on_demand=rejudge.RECOMPUTED,
    experiment_of=figures.setting,
    ahead={"claims_verdicts": rejudge.rejudge},
    custom=figures.CUSTOM_FIGURES,
    custom_claims=claims.CUSTOM_CLAIMS,
    custom_absent=figures.custom_absent,
    judged_on_custom=True,
    facts={
        "no predictions": figures.NO_PREDICTIONS,
        "paper's samples per dimension": regime.PAPER_TRAIN / max(regime.PAPER_WIDTH.values()),
    },
)
