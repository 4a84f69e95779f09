"""The linearity chapter's exercises: one check per exercise, registered with :mod:`jtc_utils.evidence.exercises`."""

from __future__ import annotations

from jtc_utils.evidence.exercises import SOLUTION, Checks, numbers_of

EXERCISES = Checks()  # this paper's exercise checks, declared by its PAPER (.paper)
exercise = EXERCISES.exercise


@exercise("sl-ex-null")
def _(answer, d):
    for n in (50, 100, 1000, 10000):
        expected = 48 / (n - 1)
        if abs(float(answer[n]) - expected) > 0.25 * expected:
            return f"for n = {n} the null score of Gaussian noise is close to d/(n-1) = {expected:.4f}"
    if all(float(answer[n]) == 48 / (n - 1) for n in (50, 100, 1000, 10000)):
        return "those are the formula's values: compute the scores of Gaussian matrices"
    return None


@exercise("sl-ex-identity")
def _(answer, d):
    a, b = numbers_of(answer, 2)
    if SOLUTION in d and abs(b - numbers_of(d[SOLUTION], 2)[1]) > 1e-8:
        return "that is not nores_in of layers 3 and 4 of tiny-gpt2-medium (encyclopedia)"
    if not 0 < b < 1:
        return "nores_in of two layers of a trained model lies between 0 and 1"
    return None if abs(a - b) <= 1e-8 else "the recomputed score should equal nores_in to 1e-8"
