"""The FFN chapter's exercises: one check per exercise, registered with :mod:`jtc_utils.evidence.exercises`."""

from __future__ import annotations

import numpy as np

from jtc_utils.evidence.exercises import Checks, close

EXERCISES = Checks()  # this paper's exercise checks, declared by its PAPER (.paper)
exercise = EXERCISES.exercise


@exercise("ffn-ex-coverage", "geva_tab2")
def _(answer, d):
    t = d["geva_tab2"]["models"]["tiny-gpt2"]
    return close(answer, t["values"] - t["gaussian"], 1e-9, "coverage(values) - coverage(Gaussian)")


@exercise("ffn-ex-saturation", "geva_tab10")
def _(answer, d):
    hist = np.asarray(d["geva_tab10"]["hist"], dtype=float)
    return None if int(answer) == int(np.argmax(hist)) + 1 else "not the layer with the most saturation events"
