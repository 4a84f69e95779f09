"""The instrument checks a claim states beside its rule: the conditions its instrument must meet before a verdict is
drawn, each a small record stored with the claim and shown with its verdict; a claim any of whose checks fails is not
judged (:func:`jtc_utils.evidence.claims.evaluate`)."""

from __future__ import annotations

from typing import TypedDict

import numpy as np

# A verdict is drawn only where the instrument that measures the claim works. Each claim states, beside its rule, the
# conditions its instrument must meet (:func:`instrument`); they are checked on the numbers of each profile, stored in
# the record (``checks``) and shown with the verdict. A claim any of whose checks fails is **not judged** (its status
# ``not judged``, the failing checks in its reason), counted apart, never as holds or fails. The thresholds
# are stated once here, from the words of the standard they enforce, before any result was read through them.
LEAST_RUNS = 3  # "a comparison of trained components needs several training runs": at least three of each
LEAST_REACH = 0.5  # "a labelling must reach what it labels": at least half of the tokens it labels
BASELINE_SLACK = 0.05  # a baseline "within reach of the paper's accuracy": within the lexicon's 'about' amount of it


class InstrumentCheck(TypedDict):
    """One instrument check, as stored in a claim record's ``checks``."""

    name: str
    value: float | str | None  # what was measured
    threshold: float | str | None  # what it is held to
    passed: bool
    why: str  # why it fails, in words: the reason of a claim that is not judged


def instrument(name: str, value, threshold, passed, why: str) -> InstrumentCheck:
    """One condition a claim's instrument must meet before its verdict is drawn: its ``name``, the measured
    ``value``, the ``threshold`` it is held to, whether it ``passed``, and ``why`` it fails in words (shown as the
    reason of a claim that is not judged)."""

    def num(v):
        return v if v is None or isinstance(v, str) else float(v)

    return {"name": name, "value": num(value), "threshold": num(threshold), "passed": bool(passed), "why": why}


def runs_check(component: str, runs: int) -> InstrumentCheck:
    """The instrument check of a claim that compares a trained ``component``: at least :data:`LEAST_RUNS` training
    runs of it."""
    return instrument(
        f"training runs of {component}",
        int(runs),
        LEAST_RUNS,
        runs >= LEAST_RUNS,
        f"{component} was trained {int(runs)} time{'s' if runs != 1 else ''}, and a comparison of "
        f"trained components needs at least {LEAST_RUNS} runs of each, so that one run's luck is not "
        "read as a finding",
    )


def reach_check(what: str, share: float) -> InstrumentCheck:
    """The instrument check of a claim read through a labelling: it labels at least :data:`LEAST_REACH` of the
    tokens of ``what``."""
    return instrument(
        f"labelling's reach ({what})",
        share,
        LEAST_REACH,
        share >= LEAST_REACH,
        f"the labelling labels {share:.1%} of the top tokens of the {what}, below the "
        f"{LEAST_REACH:.0%} a labelling must reach: the coverage would measure the labelling, not the "
        "vectors",
    )


def layers_check(margin: float, left_out) -> InstrumentCheck:
    """The instrument check of a rule over layers: its margin keeps its sign with any one layer left out
    (``left_out``: the margin with each layer dropped in turn), so that no single layer decides the verdict."""
    left_out = np.asarray(left_out, dtype=float)
    flips = [int(i) for i in np.flatnonzero(np.sign(left_out) != np.sign(margin))]
    return instrument(
        "one layer does not decide",
        len(flips),
        0,
        not flips,
        f"leaving out layer {', '.join(map(str, flips))} alone turns the margin's sign, so one layer "
        "decides the verdict",
    )
