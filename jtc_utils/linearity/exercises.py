"""The linearity chapter's exercises: one check per exercise, registered with :mod:`jtc_utils.evidence.exercises`."""

from __future__ import annotations

from jtc_utils.evidence.exercises import Checks

EXERCISES = Checks()  # this paper's exercise checks, registered by jtc_utils.book.papers
exercise = EXERCISES.exercise


@exercise("sl-ex-null")
def _(answer, d):
    for n in (50, 100, 1000, 10000):
        expected = 48 / (n - 1)
        if abs(float(answer[n]) - expected) > 0.25 * expected:
            return f"for n = {n} the null score of Gaussian noise is close to d/(n-1) = {expected:.4f}"
    return None


@exercise("sl-ex-identity")
def _(answer, d):
    a, b = (float(v) for v in answer)
    return None if abs(a - b) <= 1e-8 else "the recomputed score should equal nores_in to 1e-8"
