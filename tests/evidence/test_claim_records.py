"""Claim records are typed: one declared record (:class:`jtc_utils.evidence.records.ClaimRecord`) whose fields every
stored record has, in its order; statuses and verdicts from their enums; instrument checks of one shape."""

import json

import pytest

from jtc_utils.evidence import claims, figdata, instruments, records, registry, verdicts


def _claims_files():
    return [f for f in registry.get().figures if f.startswith("claims") and figdata.exists(f)]


@pytest.mark.parametrize("name", _claims_files())
def test_every_stored_claim_record_is_a_claim_record_in_its_order(name):
    stored = figdata.load(name)["data"]
    assert stored, name
    order = {k: i for i, k in enumerate(records.FIELDS)}
    check_keys = set(instruments.InstrumentCheck.__annotations__)
    for r in stored:
        unknown = set(r) - set(order)
        assert not unknown, (name, r["id"], unknown)
        positions = [order[k] for k in r]
        assert positions == sorted(positions), (name, r["id"], list(r))
        assert r["status"] in set(records.Status), (name, r["id"], r["status"])
        assert r["verdict"] is None or r["verdict"] in set(verdicts.Verdict), (name, r["id"])
        assert claims.status(r) == r["status"], (name, r["id"])
        for c in r["checks"]:
            assert set(c) == check_keys, (name, r["id"], set(c))
        if r["magnitude"] is not None:
            assert set(r["magnitude"]) <= set(records.Magnitude.__annotations__), (name, r["id"])


def test_a_record_is_put_in_its_order_and_an_undeclared_field_is_refused():
    rec = claims.claim_record("X1", "a claim", "the paper's", "ours", 0.5, "a rule")
    shuffled = dict(reversed(list({**rec, "status": records.Status.HOLDS, "verdict": verdicts.HOLDS}.items())))
    typed = records.typed(shuffled)
    assert list(typed) == [k for k in records.FIELDS if k in shuffled]
    assert json.dumps(typed) == json.dumps(records.typed(typed))
    with pytest.raises(KeyError, match="not declared in ClaimRecord"):
        records.typed({**rec, "colour": "green"})


def test_a_status_and_a_verdict_are_stored_as_their_words():
    assert (
        json.dumps({"status": records.Status.NO_INTERVAL, "verdict": verdicts.Verdict.UNDECIDED})
        == '{"status": "no interval", "verdict": "undecided"}'
    )
    assert claims.status({"verdict": "holds", "resampled": True}) is records.Status.HOLDS
    assert claims.status({"verdict": "holds", "resampled": False}) is records.Status.NO_INTERVAL
    assert claims.status({"verdict": "holds", "kind": "check"}) is records.Status.CHECK_PASSES
    assert claims.status({"verdict": None}) is records.Status.NO_VERDICT
    assert claims.status({"status": "not judged", "verdict": None}) is records.Status.NOT_JUDGED
