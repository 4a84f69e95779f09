"""The typed claim record: its fields in the order they are stored (:class:`ClaimRecord`), its magnitude part, and
the status a record has (:class:`Status`, read from its fields by :func:`jtc_utils.evidence.claims.status`)."""

from __future__ import annotations

from enum import StrEnum
from typing import TypedDict

from .instruments import InstrumentCheck
from .verdicts import Verdict


class Status(StrEnum):
    """A claim's status, from its record's fields (:func:`jtc_utils.evidence.claims.status`, never from display text);
    stored as its words."""

    HOLDS = "holds"
    FAILS = "fails"
    UNDECIDED = "undecided"
    NO_INTERVAL = "no interval"  # a point verdict: its statistic has no resamples
    NOT_JUDGED = "not judged"  # its instrument fails a check
    NOT_COMPUTED = "not computed"  # the profile lacks its figures
    NO_VERDICT = "no verdict"  # underdetermined maps, or no shape part
    CHECK_PASSES = "check passes"
    CHECK_FAILS = "check fails"


class Magnitude(TypedDict, total=False):
    """A claim's magnitude part (:func:`jtc_utils.evidence.claims.magnitude_part`): the paper's numbers, ours, the
    verdict on them and its rule; ``note`` says why it is not judged (off the paper profile, or not computed)."""

    paper: str
    ours: str
    holds: bool | None
    rule: str
    note: str


class ClaimRecord(TypedDict, total=False):
    """A claim record, its fields in the order they are stored (:func:`jtc_utils.evidence.claims.claim_record`
    writes the first fifteen, :func:`jtc_utils.evidence.claims.evaluate` the verdict's; :func:`typed` puts any record
    in this order and refuses a field not declared)."""

    id: str
    claim: str
    quote: str | None
    paper: str
    ours: str
    holds: bool | None
    rule: str
    magnitude: Magnitude | None
    margin: float | None  # positive on the claim's side
    unit: str
    words: list[str]  # the lexicon entries the rule reads the sentence with
    statistic: str  # the computed statistic (claims that share it form one finding)
    kind: str  # "claim", or "check" for one that cannot fail on data
    no_interval: str | None  # why the verdict has no interval
    checks: list[InstrumentCheck]  # the instrument checks
    verdict: Verdict | None
    lo: float | None  # the interval the verdict reads
    hi: float | None
    share: float | None  # of the resamples (or seeds) on the claim's side
    resampled: bool
    spread: bool  # False where every resample gives the same margin
    recentred_by: float  # the shift of refitted resamples
    seeds_on_side: int  # the seeds' sign test: k of n
    n_seeds: int
    no_verdict: str  # why the maps cannot tell (underdetermined)
    not_judged: str  # the failing instrument checks, in words
    resamples: list[str]  # what the resamples resample
    reason: str | None  # why it fails or is undecided, in words
    status: Status
    per_seed: list[dict]  # the JTC stand-in's shape verdict on each training seed
    seeds_differ: bool  # those seeds disagree: undecided on the stand-in


FIELDS = tuple(ClaimRecord.__annotations__)


def typed(record: dict) -> ClaimRecord:
    """``record`` with its fields in :class:`ClaimRecord`'s order; a field it does not declare is an error."""
    unknown = [k for k in record if k not in ClaimRecord.__annotations__]
    if unknown:
        raise KeyError(f"claim {record.get('id')}: fields {unknown} are not declared in ClaimRecord")
    return ClaimRecord({k: record[k] for k in FIELDS if k in record})
