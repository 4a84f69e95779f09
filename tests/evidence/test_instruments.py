"""Instrument checks and honest intervals (issue 65): a claim whose instrument fails a check is not judged and counted
apart; every decisive interval contains its margin or says why not; a statistic without spread prints no interval;
refitted resamples are recentred on their estimate."""

import json
from pathlib import Path

import numpy as np
import pytest

from jtc_utils.book.display import claim_tables, claims_page
from jtc_utils.core.infra import resample
from jtc_utils.evidence import claims, findings, instruments, verdicts

DATA = Path(__file__).resolve().parents[2] / "book" / "data"
CLAIMS_FILES = sorted(p.stem for p in DATA.glob("claims*.json"))


def _figure(shift: float, n: int = 40, seed: int = 0):
    """A figure with a per-sample difference of mean ``shift`` and its resamples, as the chapters store them."""
    x = np.random.default_rng(seed).normal(shift, 1.0, n)
    return {"diff": float(x.mean()), "boot": {"diff": resample.resampled_mean(x)}}


def _table(checks):
    def rule(get):
        d = get("fig")
        return claims.claim_record(
            "X1",
            "a claim",
            "-",
            f"diff {d['diff']:+.2f}",
            d["diff"],
            "diff > 0",
            words=("better",),
            unit="u",
            checks=checks,
        )

    return {"X1": rule}


@pytest.mark.parametrize(
    "checks, status",
    [
        ((), verdicts.HOLDS),
        ([instruments.runs_check("the lens", instruments.LEAST_RUNS)], verdicts.HOLDS),
        ([instruments.runs_check("the lens", 1)], claims.NOT_JUDGED_STATUS),
        ([instruments.reach_check("value vectors", 0.098)], claims.NOT_JUDGED_STATUS),
        (
            [instruments.reach_check("value vectors", 0.6), instruments.runs_check("the lens", 2)],
            claims.NOT_JUDGED_STATUS,
        ),
    ],
)
def test_a_failing_instrument_check_turns_a_verdict_into_not_judged(checks, status):
    get = claims.getter({"fig": _figure(2.0)})
    rec = claims.evaluate(_table(list(checks)), "X1", get)
    assert rec["status"] == status == claims.status(rec)
    if status == claims.NOT_JUDGED_STATUS:
        assert rec["verdict"] is None and rec["holds"] is None
        assert rec["reason"].startswith("not judged: ") and all(
            c["why"] in rec["reason"] for c in checks if not c["passed"]
        )
        assert findings.shape_verdict(rec).startswith("not judged")
        assert not findings.is_evidence(rec)
    else:
        assert rec["verdict"] == verdicts.HOLDS and rec["resampled"]
    assert rec["checks"] == list(checks)  # the record carries its checks, passed or not


def test_not_judged_and_not_computed_are_counted_apart_never_as_holds_or_fails():
    judged = claims.evaluate(_table([]), "X1", claims.getter({"fig": _figure(2.0)}))
    unjudged = claims.evaluate(
        _table([instruments.runs_check("the lens", 1)]), "X1", claims.getter({"fig": _figure(2.0)})
    )
    absent = {**judged, "verdict": None, "status": claims.NOT_COMPUTED_STATUS}
    c = findings.count_findings([judged, {**unjudged, "id": "X2", "statistic": "X2"}, {**absent, "id": "X3"}])
    assert (c[verdicts.HOLDS], c[verdicts.FAILS], c["not judged (instrument)"], c["not computed"]) == (1, 0, 1, 1)
    by = claims_page.counts_by_status([judged, unjudged, absent])
    assert (by["holds"], by["not judged (instrument)"], by["not computed"]) == (1, 1, 1)
    assert sum(by.values()) == 3  # every claim in exactly one column
    assert "not judged" in findings.summary([judged, unjudged], "real")


def test_the_runs_and_reach_checks_hold_their_thresholds():
    n = instruments.LEAST_RUNS
    assert [instruments.runs_check("x", k)["passed"] for k in (1, n - 1, n, n + 2)] == [False, False, True, True]
    assert n == verdicts.LEAST_SEEDS  # one rule for runs and seeds: the runs a check asks for can decide
    assert [instruments.reach_check("x", s)["passed"] for s in (0.098, 0.49, 0.5, 0.9)] == [False, False, True, True]
    assert not instruments.reach_check("x", float("nan"))["passed"]  # a labelling that was not measured does not pass


def test_the_convergence_check_passes_only_when_every_run_converged():
    """Issue 77: a trained component's claim is judged only when every run it reads met its recipe's criterion; a run
    stopped at its cap short of it (an unconverged run), or a figure that records no run's convergence, fails."""
    check = instruments.convergence_check
    assert check("the lens", {"a": True, "b": True})["passed"]
    assert not check("the lens", {"a": True, "b": False})["passed"]
    assert not check("the lens", {})["passed"]  # nothing shown to converge
    failing = check("the lens", {"a": True, "b": False})
    assert (failing["value"], failing["threshold"]) == (1.0, 2.0) and "1 of the 2 training runs" in failing["why"]
    assert "the other stopped at its cap" in failing["why"] and "stopped" not in check("the lens", {"a": True})["why"]
    assert check("the lens", {"a": False})["why"].startswith("the one training run of the lens stopped at its cap")
    assert "the other 2 stopped at their cap" in check("the lens", {"a": True, "b": False, "c": False})["why"]


def test_a_check_says_what_it_found_in_the_words_of_its_outcome():
    """Issue 77, smaller items: a passing check's stored text says what it found, not a failure ("below the 50%"),
    and a failing one says why; a plural component reads "were trained"."""
    for check in (
        instruments.runs_check("the lens", instruments.LEAST_RUNS),
        instruments.reach_check("value vectors", 0.9),
        instruments.layers_check(0.5, [0.4, 0.6, 0.3]),
    ):
        assert check["passed"] and not any(w in check["why"] for w in ("below", "needs at least", "turns")), check
    for check in (
        instruments.runs_check("the lens", 1),
        instruments.reach_check("value vectors", 0.1),
        instruments.layers_check(0.5, [0.4, -0.6, 0.3]),
    ):
        assert not check["passed"] and any(w in check["why"] for w in ("below", "needs at least", "turns")), check
    assert "NJTC and N-NJTC were trained 1 time," in instruments.runs_check("NJTC and N-NJTC", 1)["why"]


def test_the_layers_check_finds_a_margin_that_one_layer_decides():
    """F7's real fail is not one layer's; a margin that only layer 2 makes negative is."""
    per_layer = np.array([0.3, 0.2, -5.0, 0.4])
    margin = per_layer.min()
    left_out = [np.delete(per_layer, k).min() for k in range(len(per_layer))]
    check = instruments.layers_check(margin, left_out)
    assert not check["passed"] and check["value"] == 1 and "layer 2" in check["why"]
    robust = np.array([0.3, -0.2, -5.0, 0.4])
    assert instruments.layers_check(robust.min(), [np.delete(robust, k).min() for k in range(4)])["passed"]


def test_refitted_resamples_are_recentred_so_the_interval_contains_the_estimate():
    rng = np.random.default_rng(1)
    margins = 0.3 + rng.normal(0, 0.01, 200)  # resamples that sit above the estimate 0.2, as in-sample refits do
    plain = verdicts.decide(0.2, margins)
    assert not plain["lo"] <= 0.2 <= plain["hi"]  # the percentile interval excludes its own estimate
    fixed = verdicts.decide(0.2, margins, recentre=True)
    assert fixed["lo"] <= 0.2 <= fixed["hi"] and fixed["recentred_by"] == pytest.approx(0.1, abs=0.01)
    assert fixed["verdict"] == verdicts.HOLDS


def test_a_statistic_without_spread_prints_no_interval():
    rec = {**verdicts.decide(0.5, [0.5] * 200), "unit": "share", "resamples": ["validation samples"], "kind": "claim"}
    assert rec["spread"] is False
    text = claim_tables.margin_text(rec)
    assert "no spread" in text and "[" not in text
    spread = {
        **verdicts.decide(0.5, np.linspace(0.4, 0.6, 200)),
        "unit": "share",
        "kind": "claim",
        "resamples": ["validation samples"],
    }
    assert "90% interval" in claim_tables.margin_text(spread) and "[" in claim_tables.margin_text(spread)


@pytest.mark.parametrize("name", CLAIMS_FILES)
def test_every_decisive_stored_interval_contains_its_margin_or_says_why_not(name):
    records = json.loads((DATA / f"{name}.json").read_text())["data"]
    for r in records:
        if r.get("verdict") in (verdicts.HOLDS, verdicts.FAILS) and r.get("resampled"):
            assert r["lo"] - 1e-12 <= r["margin"] <= r["hi"] + 1e-12, (
                f"{name} {r['id']}: margin {r['margin']} outside its interval [{r['lo']}, {r['hi']}]"
            )
        if r.get("verdict") is None and r.get("kind", "claim") == "claim":  # no verdict: the record says why
            assert (
                r.get("not_judged")
                or r.get("no_verdict")
                or r.get("status") in (claims.NOT_COMPUTED_STATUS, "no verdict")
                or r["rule"] == "-"
            ), f"{name} {r['id']}"


@pytest.mark.parametrize("name", CLAIMS_FILES)
def test_every_stored_record_carries_its_instrument_checks(name):
    records = json.loads((DATA / f"{name}.json").read_text())["data"]
    for r in records:
        assert isinstance(r.get("checks"), list), f"{name} {r['id']}"
        for c in r["checks"]:
            assert set(c) == {"name", "value", "threshold", "passed", "why"}
        assert (
            (r.get("status") == claims.NOT_JUDGED_STATUS) == any(not c["passed"] for c in r["checks"])
            or r.get("kind") == "check"
            or r.get("status") in (claims.NOT_COMPUTED_STATUS, "no verdict")
        )


def _with_distinct(d: dict, counts: dict) -> dict:
    import copy

    d = copy.deepcopy(d)
    L = d["n_layers"]
    d["distinct_top1"] = {m: [counts.get(m, 50)] * (L + 1) for m in ("mat_attn", "mat_ln1_ln2", "mat_ffn", "mat")}
    return d


@pytest.mark.parametrize("cid", ["C12a", "C12b", "C12c"])
def test_a_cast_whose_output_ignores_its_start_state_leaves_its_claims_not_judged(cid):
    """Issue 77, item 2 (an intervention): the sub-module claims are judged where every cast's top-1 varies over the
    samples, and not judged where one cast (mat_ln1_ln2, as on the real model) reads out one token for every sample,
    the check naming the cast and its start layers."""
    from jtc_utils.jtc import claims as jtc_claims

    base = claims.default_get("fig10")
    for counts, judged in (({}, True), ({"mat_ln1_ln2": 1}, False)):
        d = _with_distinct(base, counts)
        rec = claims.evaluate(jtc_claims.CLAIMS, cid, lambda f, d=d: d if f == "fig10" else claims.default_get(f))
        check = next(c for c in rec["checks"] if c["name"] == "the intervention reads its start state")
        assert check["passed"] is judged, check
        assert (claims.status(rec) != claims.NOT_JUDGED_STATUS) is judged, rec["status"]
        if not judged:
            assert "mat_ln1_ln2's top-1 is one token for every sample" in rec["not_judged"]


def test_an_overflowed_cast_reads_out_one_token_for_every_sample():
    """The failure the check catches on the real model: a cast that overflowed to non-finite states reads out the
    same token for every sample, so its top-1 takes one value (and a working one takes many)."""
    from jtc_utils.core.analysis import readout
    from jtc_utils.core.analysis.experiment import shared

    exp = shared("tiny-gpt2", "encyclopedia", "tiny", 200, 50, 0)
    d = exp.adapter.d
    broken = readout.readout_stats(exp.adapter, np.full((50, d), np.nan, dtype=np.float32))[0][:, 0]
    working = readout.readout_stats(exp.adapter, exp.X_val[-1])[0][:, 0]
    assert len(np.unique(broken)) == 1 and len(np.unique(working)) > 1
