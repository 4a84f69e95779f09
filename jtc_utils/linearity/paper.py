"""The linearity paper ("Your Transformer is Secretly Linear") as the book's registry reads it (:data:`PAPER`, named
in :data:`jtc_utils.evidence.registry.PAPERS`)."""

from __future__ import annotations

from jtc_utils.evidence.registry import Paper

from . import claims, exercises, figures, plots

PAPER = Paper(
    "linearity",
    tuple(figures.SL_FIGURES),
    figures.compute,
    claims.CLAIMS,
    claims.check,
    exercises.EXERCISES,
    claim_page="secretly_linear",
    resampled_over=claims.RESAMPLED_OVER,
    constants=claims.CONSTANTS,
    draw=plots.draw,
    caption=plots.caption,
    drawn=plots.DRAWN,
    records=claims.RECORDS,
    unregressed=tuple(claims.RECORDS),
    custom=figures.CUSTOM_FIGURES,
    facts={"every-token states per split": figures.REAL_TOKENS},
)
