"""Findings and summaries of claim records: claims that read one statistic grouped into one finding, the counts of
holds, fails, undecided, not judged and not computed per paper and profile, and each verdict in words."""

from __future__ import annotations

from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile

from . import verdicts
from .claims import NOT_COMPUTED_STATUS, NOT_JUDGED, NOT_JUDGED_STATUS, status
from .records import Status
from .registry import get as registered


def is_evidence(record: dict) -> bool:
    """Whether a record counts as evidence: a claim (not a check) with a shape verdict on this profile."""
    return record.get("kind", "claim") == "claim" and record.get("verdict") is not None


def findings(records: list[dict], titles: dict | None = None) -> list[dict]:
    """The findings among ``records``: claims that share a ``statistic`` are one finding. Each finding: its
    ``statistic``, ``title``, ``claims`` (ids), ``shape`` (the verdict its claims share, "mixed" where they differ),
    ``interval`` (whether every one of them was resampled or tested on seeds), ``status`` (the finding's
    :class:`~jtc_utils.evidence.records.Status`: no interval where any claim has none, ``None`` where mixed) and
    ``verdict``: the shape in words, with "no interval" where ``interval`` is false."""
    titles = {**registered().titles, **(titles or {})}
    groups: dict = {}
    for r in records:
        if is_evidence(r):
            groups.setdefault(r["statistic"], []).append(r)
    out = []
    for stat, recs in groups.items():
        vs = {r["verdict"] for r in recs}
        shape = vs.pop() if len(vs) == 1 else "mixed"
        interval = all(r["resampled"] or r.get("n_seeds") for r in recs)
        out.append(
            {
                "statistic": stat,
                "title": titles.get(stat, recs[0]["claim"]),
                "claims": [r["id"] for r in recs],
                "shape": shape,
                "interval": interval,
                "status": Status.NO_INTERVAL if not interval else None if shape == "mixed" else Status(shape),
                "verdict": shape if interval else f"{shape}, no interval",
            }
        )
    return out


FINDING_VERDICTS = (verdicts.HOLDS, verdicts.FAILS, verdicts.UNDECIDED, "mixed")


def count_findings(records: list[dict], titles: dict | None = None) -> dict:
    """How many findings hold, fail, are undecided or mixed (resampled), how many have no interval, how many claim
    sentences and checks there are, and how many claims are not judged (their instrument fails a check) or not
    computed (the profile lacks their figures); those two are counts of claims, not of findings."""
    fs = findings(records, titles)
    out = {v: sum(f["shape"] == v and f["interval"] for f in fs) for v in FINDING_VERDICTS}
    out["no interval"] = sum(not f["interval"] for f in fs)
    out["findings"] = len(fs)
    out["claims"] = sum(len(f["claims"]) for f in fs)
    claims_only = [r for r in records if r.get("kind", "claim") == "claim"]
    out["not judged (instrument)"] = sum(status(r) == NOT_JUDGED_STATUS for r in claims_only)
    out["not computed"] = sum(status(r) == NOT_COMPUTED_STATUS for r in claims_only)
    checks = [r for r in records if r.get("kind") == "check" and r.get("verdict") is not None]
    out["checks"], out["checks passing"] = len(checks), sum(r["margin"] > 0 for r in checks)
    return out


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural but for one: "1 claim", "3 claims"."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def summary(records: list[dict], profile: Profile | str, titles: dict | None = None) -> str:
    """One line: how many findings hold, fail, are undecided (or mixed, or have no interval), from how many claim
    sentences, the checks apart; and what happens to the magnitudes."""
    c = count_findings(records, titles)
    line = (
        f"{_count(c['findings'], 'finding')} from {_count(c['claims'], 'claim sentence')}: {c[verdicts.HOLDS]} hold, "
        f"{c[verdicts.FAILS]} fail, {c[verdicts.UNDECIDED]} undecided"
    )
    if c["mixed"]:
        line += f", {c['mixed']} mixed"
    if c["no interval"]:
        line += f"; {c['no interval']} without an interval (not resampled; not counted)"
    if c["not judged (instrument)"]:
        line += (
            f"; {_count(c['not judged (instrument)'], 'claim')} not judged: "
            + ("its instrument fails" if c["not judged (instrument)"] == 1 else "their instrument fails")
            + " its check (not counted as holds or fails)"
        )
    if c["not computed"]:
        line += f"; {_count(c['not computed'], 'claim')} cannot be computed on this profile"
    unfit = sum(bool(r.get("no_verdict")) for r in records)
    if unfit:
        line += (
            f"; {_count(unfit, 'claim')} "
            + ("gets no verdict: its maps were" if unfit == 1 else "get no verdict: their maps were")
            + " fitted on fewer training samples than the model's width"
        )
    if c["checks"]:
        line += f". Checks: {c['checks passing']} of {c['checks']} pass"
    mags = [r["magnitude"]["holds"] for r in records if r.get("magnitude")]
    profile = profiles.name_of(profile)
    if profile == "paper":
        line += f". Magnitude: {mags.count(True)} of {mags.count(True) + mags.count(False)} hold."
    else:
        line += (
            f". Magnitudes ({_count(len(mags), 'claim')} "
            + ("gives numbers" if len(mags) == 1 else "give numbers")
            + f"): not judged on the {profile} profile."
        )
    return line


# --- verdicts in words ----------------------------------------------------------------------------------------


def shape_verdict(record: dict) -> str:
    """The shape verdict in words: HOLDS, FAILS or UNDECIDED from the resamples; a check's pass or fail; a point
    estimate's, marked "no interval"; or why there is none."""
    if record.get("not_judged"):
        return "not judged: instrument check fails"
    v = record.get("verdict")
    if v is not None:
        if record.get("kind") == "check":
            return "check passes" if v == verdicts.HOLDS else "CHECK FAILS"
        if record.get("n_seeds"):
            return f"{v.upper()} ({record['seeds_on_side']} of {record['n_seeds']} seeds)"
        return v.upper() if record["resampled"] else f"{v}, no interval"
    if record.get("no_verdict"):
        return record["no_verdict"]
    if record.get("status") == NOT_COMPUTED_STATUS:
        return "not computed on this profile"
    return "no verdict: " + ("the claim gives magnitudes only" if record["rule"] == "-" else record["rule"])


def magnitude_verdict(record: dict) -> str:
    """The magnitude verdict in words: judged on the paper profile only."""
    mag = record.get("magnitude")
    if mag is None:
        return "no number in the claim"
    if mag["holds"] is None:
        return mag.get("note", NOT_JUDGED)
    return "HOLDS" if mag["holds"] else "FAILS"
