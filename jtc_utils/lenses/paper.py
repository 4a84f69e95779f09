"""The lens paper (N-NJTC's low-rank shortcuts and the tuned lens) as the book's registry reads it (:data:`PAPER`,
named in :data:`jtc_utils.evidence.registry.PAPERS`)."""

from __future__ import annotations

from jtc_utils.evidence.registry import Paper

from . import claims, exercises, figures, plots, trajectory

PAPER = Paper(
    "lenses",
    tuple(figures.LENS_FIGURES),
    figures.compute,
    claims.CLAIMS,
    claims.check,
    exercises.EXERCISES,
    claim_page="lenses",
    absent=claims.REAL_ABSENT,
    constants=claims.CONSTANTS,
    draw=plots.draw,
    caption=plots.caption,
    drawn=plots.DRAWN,
    table=plots.table,
    tabled=plots.TABLED,
    records={**claims.RECORDS, **figures.RECORDS, **trajectory.RECORDS},
    unregressed=(*claims.RECORDS, *trajectory.RECORDS),
    custom=figures.CUSTOM_FIGURES,
)
