"""The lens chapter's exercises: one check per exercise, registered with :mod:`jtc_utils.evidence.exercises`."""

from __future__ import annotations

from jtc_utils.evidence.exercises import SOLUTION, Checks, numbers_of

EXERCISES = Checks()  # this paper's exercise checks, declared by its PAPER (.paper)
exercise = EXERCISES.exercise


@exercise("ex-lenses-read", "lens_table")
def _(answer, d):
    t = d["lens_table"]
    mid = t["quarters"][1]
    per_k = {lab: r["p@1"][mid] / (r["params"] / 1e3) for lab, r in t["lenses"].items() if r["params"] > 0}
    return None if answer == max(per_k, key=per_k.get) else "not the best lens per thousand parameters"


@exercise("ex-lenses-rrr")
def _(answer, d):
    a, b = numbers_of(answer, 2)
    if SOLUTION in d:  # graded: both errors should be the closed form's, not only equal to each other
        ref = numbers_of(d[SOLUTION], 2)[1]
        if abs(b - ref) > 1e-6 * abs(ref):
            return "RankFamily's train error of rank 4 on the layer-12 states is not the one the book computes"
    if b <= 0:
        return "a train error of a rank-4 map on these states is above 0"
    return None if abs(a - b) <= 1e-6 * abs(b) else "the two train errors should agree to 1e-6 (relative)"
