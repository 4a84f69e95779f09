"""The lens chapter's exercises: one check per exercise, registered with :mod:`jtc_utils.evidence.exercises`."""

from __future__ import annotations

from jtc_utils.evidence.exercises import Checks

EXERCISES = Checks()  # this paper's exercise checks, registered by jtc_utils.book.papers
exercise = EXERCISES.exercise


@exercise("ex-lenses-read", "lens_table")
def _(answer, d):
    t = d["lens_table"]
    mid = t["quarters"][1]
    per_k = {lab: r["p@1"][mid] / (r["params"] / 1e3) for lab, r in t["lenses"].items() if r["params"] > 0}
    return None if answer == max(per_k, key=per_k.get) else "not the best lens per thousand parameters"


@exercise("ex-lenses-rrr")
def _(answer, d):
    a, b = (float(v) for v in answer)
    return None if abs(a - b) <= 1e-6 * abs(b) else "the two train errors should agree to 1e-6 (relative)"
