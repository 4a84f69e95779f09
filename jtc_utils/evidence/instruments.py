"""The instrument checks a claim states beside its rule: the conditions its instrument must meet before a verdict is
drawn, each a small record stored with the claim and shown with its verdict; a claim any of whose checks fails is not
judged (:func:`jtc_utils.evidence.claims.evaluate`)."""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from .verdicts import LEAST_SEEDS

# A verdict is drawn only where the instrument that measures the claim works. Each claim states, beside its rule, the
# conditions its instrument must meet (:func:`instrument`); they are checked on the numbers of each profile, stored in
# the record (``checks``) and shown with the verdict. A claim any of whose checks fails is **not judged** (its status
# ``not judged``, the failing checks in its reason), counted apart, never as holds or fails. The thresholds
# are stated once here, from the words of the standard they enforce, before any result was read through them.
# "a comparison of trained components needs several training runs": as many of each as a verdict on training seeds
# alone needs (verdicts.LEAST_SEEDS), one rule for runs and seeds, so that the runs a check asks for can decide
LEAST_RUNS = LEAST_SEEDS
LEAST_REACH = 0.5  # "a labelling must reach what it labels": at least half of the tokens it labels
BASELINE_SLACK = 0.05  # a baseline "within reach of the paper's accuracy": within the lexicon's 'about' amount of it


class InstrumentCheck(TypedDict):
    """One instrument check, as stored in a claim record's ``checks``."""

    name: str
    value: float | str | None  # what was measured
    threshold: float | str | None  # what it is held to
    passed: bool
    why: str  # in words: why it fails (the reason of a claim that is not judged), or what it found where it passed


def instrument(name: str, value, threshold, passed, why: str) -> InstrumentCheck:
    """One condition a claim's instrument must meet before its verdict is drawn: its ``name``, the measured
    ``value``, the ``threshold`` it is held to, whether it ``passed``, and ``why`` in words: why it fails (shown as the
    reason of a claim that is not judged), or, where it passed, what it found."""

    def num(v):
        return v if v is None or isinstance(v, str) else float(v)

    return {"name": name, "value": num(value), "threshold": num(threshold), "passed": bool(passed), "why": why}


def runs_check(component: str, runs: int) -> InstrumentCheck:
    """The instrument check of a claim that compares a trained ``component``: at least :data:`LEAST_RUNS` training
    runs of it."""
    runs, passed = int(runs), runs >= LEAST_RUNS
    were = "were" if " and " in component else "was"
    return instrument(
        f"training runs of {component}",
        runs,
        LEAST_RUNS,
        passed,
        f"{component} {were} trained {runs} time{'s' if runs != 1 else ''}, "
        + (
            f"at least the {LEAST_RUNS} runs of each a comparison of trained components needs"
            if passed
            else f"and a comparison of trained components needs at least {LEAST_RUNS} runs of each, so that one "
            "run's luck is not read as a finding"
        ),
    )


def convergence_check(component: str, runs: dict) -> InstrumentCheck:
    """The instrument check of a claim that compares a trained ``component``: every training run it reads met its
    recipe's convergence criterion, fixed before any verdict was read (``runs``: {run: whether it converged}; none
    where the figure records no run's convergence). A run stopped at its cap short of the criterion is an unfinished
    instrument: its curve says where its training stopped, not what the method reaches."""
    n, done = len(runs), sum(bool(ok) for ok in runs.values())
    passed = n > 0 and done == n
    if n == 0:
        why = f"the figure records no training run of {component} with its convergence, so none is shown to converge"
    elif passed:
        why = (
            f"all {n} training runs of {component} met their recipe's convergence criterion"
            if n > 1
            else (f"the training run of {component} met its recipe's convergence criterion")
        )
    elif n == 1:
        why = (
            f"the one training run of {component} stopped at its cap short of its recipe's convergence criterion, so "
            "its curve shows where training stopped, not what the method reaches"
        )
    else:
        short = n - done
        why = (
            f"{done} of the {n} training runs of {component} met their recipe's convergence criterion; "
            + (f"the other {short} stopped" if short > 1 else "the other stopped")
            + f" at {'their' if short > 1 else 'its'} cap short of it, so "
            + ("their curves show" if short > 1 else "its curve shows")
            + " where training stopped, not what the method reaches"
        )
    return instrument(f"convergence of {component}", done, n, passed, why)


def reach_check(what: str, share: float) -> InstrumentCheck:
    """The instrument check of a claim read through a labelling: it labels at least :data:`LEAST_REACH` of the
    tokens of ``what``."""
    passed = share >= LEAST_REACH
    return instrument(
        f"labelling's reach ({what})",
        share,
        LEAST_REACH,
        passed,
        f"the labelling labels {share:.1%} of the top tokens of the {what}, "
        + (
            f"at least the {LEAST_REACH:.0%} a labelling must reach"
            if passed
            else f"below the {LEAST_REACH:.0%} a labelling must reach: the coverage would measure the labelling, "
            "not the vectors"
        ),
    )


LABELLING_P = 0.05  # the labelling control: the values' coverage above the shuffled labelling's at this permutation p


def labelling_check(coverage: float, shuffled: float, p: float) -> InstrumentCheck:
    """The control of a claim read through a labelling: the value vectors' concept ``coverage`` under it is above
    their coverage with its classes shuffled among the tokens (``shuffled``: a labelling that sees nothing, every
    class its size), at permutation ``p`` below :data:`LABELLING_P`. A labelling that does not beat its shuffle gives
    the verdicts a blind labeller gives."""
    passed = p < LABELLING_P and coverage > shuffled
    return instrument(
        "the labelling beats its shuffle",
        p,
        LABELLING_P,
        passed,
        f"the values' coverage is {coverage:.1%} under the labelling and {shuffled:.1%} with its classes shuffled "
        f"among the tokens (permutation p = {p:.3g}), "
        + (
            "so the labelling sees what the tokens are"
            if passed
            else f"not above it at p < {LABELLING_P}: the coverage is what a labelling blind to the tokens gives"
        ),
    )


def layers_check(margin: float, left_out) -> InstrumentCheck:
    """The instrument check of a rule over layers: its margin keeps its sign with any one layer left out
    (``left_out``: the margin with each layer dropped in turn), so that no single layer decides the verdict."""
    left_out = np.asarray(left_out, dtype=float)
    flips = [int(i) for i in np.flatnonzero(np.sign(left_out) != np.sign(margin))]
    layers = "layer" + ("s " if len(flips) > 1 else " ") + ", ".join(map(str, flips))
    return instrument(
        "one layer does not decide",
        len(flips),
        0,
        not flips,
        f"leaving out {layers} alone turns the margin's sign, so one layer decides the verdict"
        if flips
        else f"the margin keeps its sign with any one of the {len(left_out)} layers left out",
    )


def state_check(distinct: dict, layers) -> InstrumentCheck:
    """The instrument check of a claim read through an intervention (a cast through replaced sub-modules): its output
    depends on the state it starts from. ``distinct``: per mapping, how many tokens its top-1 takes over the samples at
    each start layer (``None`` where not computed); it fails at a start layer of ``layers`` where a mapping's top-1 is
    one token for every sample (a cast that overflowed, or ignores its input, reads out the same token everywhere)."""
    layers = [int(layer) for layer in layers]
    stuck = {
        m: [int(layer) for layer in layers if counts[layer] is not None and counts[layer] <= 1]
        for m, counts in distinct.items()
    }
    stuck = {m: v for m, v in stuck.items() if v}
    return instrument(
        "the intervention reads its start state",
        sum(len(v) for v in stuck.values()),
        0,
        not stuck,
        "; ".join(
            f"{m}'s top-1 is one token for every sample from start layer{'s' if len(v) > 1 else ''} "
            f"{', '.join(map(str, v))}"
            for m, v in stuck.items()
        )
        + ": its output there does not depend on the state it starts from"
        if stuck
        else f"every cast's top-1 varies over the samples at each of the {len(layers)} start layers read",
    )
