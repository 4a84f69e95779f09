"""The lexicon and the resampled verdicts (issue 32): every rule reads the papers' words through one lexicon, a tie
is undecided, the bootstrap is reproducible, a rule can fail, grouped claims share one statistic."""

import ast
import copy
import inspect

import numpy as np
import pytest

from jtc_utils.core.infra import resample
from jtc_utils.evidence import claims, figdata, findings, verdicts
from jtc_utils.ffn import claims as ffn_claims
from jtc_utils.jtc import claims as jtc_claims
from jtc_utils.lenses import claims as lens_claims
from jtc_utils.linearity import claims as sl_claims

MODULES = (jtc_claims, lens_claims, ffn_claims, sl_claims)
TABLES = {m.__name__: m.CLAIMS for m in MODULES}


def _records(module):
    return module.all_claims()


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_rule_reads_its_words_through_the_lexicon(module):
    for r in _records(module):
        assert set(r["words"]) <= set(verdicts.LEXICON), r["id"]
        if r["kind"] == "claim" and r["margin"] is not None:
            assert r["words"], f"{r['id']} has a verdict but names no lexicon entry"


def _literals_outside_mag(tree):
    """Numbers other than 0 and 1 compared with in a claim function, outside the magnitude part (magnitude_part)."""
    bad = []

    def visit(node, in_mag=False):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "magnitude_part":
            in_mag = True
        if isinstance(node, ast.Compare) and not in_mag:
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Constant)
                    and isinstance(sub.value, (int, float))
                    and not isinstance(sub.value, bool)
                    and sub.value not in (0, 1)
                ):
                    bad.append((sub.lineno, sub.value))
        for child in ast.iter_child_nodes(node):
            visit(child, in_mag)

    visit(tree)
    return bad


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_no_rule_compares_with_a_number_of_its_own(module):
    """A threshold of a shape rule comes from the lexicon (verdicts.value), never from a literal in the module; the
    paper's numbers are compared with only in the magnitude part."""
    tree = ast.parse(inspect.getsource(module))
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    bad = [(f.name, *b) for f in funcs for b in _literals_outside_mag(f)]
    assert not bad, f"literal thresholds outside the lexicon: {bad}"


def test_a_statistic_on_its_threshold_is_undecided():
    assert verdicts.decide(0.0, None)["verdict"] == verdicts.UNDECIDED
    assert verdicts.decide(0.0, [0.0] * resample.N_RESAMPLES)["verdict"] == verdicts.UNDECIDED
    d = copy.deepcopy(claims.default_get("fig4"))
    for key in ("p@1",):  # mat exactly on id: the margin of C2 is 0 on the data and on every resample
        d["curves"]["mat"][key] = d["curves"]["id"][key]
        d["curves"]["mat"]["boot"][key] = d["curves"]["id"]["boot"][key]
    rec = claims.evaluate(jtc_claims.CLAIMS, "C2", lambda fig: d if fig == "fig4" else claims.default_get(fig))
    assert rec["margin"] == 0 and rec["verdict"] == verdicts.UNDECIDED and rec["holds"] is None


def test_noise_level_margins_are_undecided():
    half = [0.01, -0.01] * (resample.N_RESAMPLES // 2)
    assert verdicts.decide(0.001, half)["verdict"] == verdicts.UNDECIDED
    assert verdicts.decide(0.1, [0.1] * 200)["verdict"] == verdicts.HOLDS
    assert verdicts.decide(-0.1, [-0.1] * 199 + [0.2])["verdict"] == verdicts.FAILS


def test_the_bootstrap_is_reproducible_from_its_seed():
    a, b = resample.weights(50), resample.weights(50)
    assert np.array_equal(a, b) and a.shape == (resample.N_RESAMPLES, 50) and np.all(a.sum(1) == 50)
    assert not np.array_equal(a, resample.weights(50, seed=1))
    x = np.random.default_rng(3).random((4, 50))
    m = resample.resampled_mean(x, a)
    assert m.shape == (resample.N_RESAMPLES, 4)
    assert np.allclose(m[7], (x * a[7]).sum(1) / 50, atol=1e-6)
    assert resample.N_RESAMPLES >= 200


def test_replicates_substitute_resamples_and_seeds():
    d = {
        "seeds": [0, 1, 2],
        "curves": {
            "x": {"p@1": [1.0], "boot": {"p@1": [[2.0], [3.0]]}},
            "x/seed1": {"p@1": [5.0]},
            "x/seed2": {"p@1": [6.0]},
        },
        "r": [[1], [2], [3]],
    }
    get = verdicts.replicate(lambda fig: d, 1, seed_keys=("r",))
    out = get("f")
    assert get.used and "boot" not in out["curves"]["x"]
    values = {out["curves"][k]["p@1"][0] for k in ("x", "x/seed1", "x/seed2")}
    assert values <= {3.0, 5.0, 6.0} and sorted(v[0] for v in out["r"]) == sorted(
        [1, 2, 3][i] for i in np.random.default_rng([resample.SEED, 1, 3]).integers(0, 3, 3)
    )


def _move(d, path, fn):
    """``d`` with the numbers at ``path`` (and their resamples) changed by ``fn``."""
    d = copy.deepcopy(d)
    node = d
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = fn(np.asarray(node[path[-1]], dtype=float)).tolist()
    if "boot" in node and path[-1] in node["boot"]:
        node["boot"][path[-1]] = fn(np.asarray(node["boot"][path[-1]], dtype=float)).tolist()
    boot = d.get("boot", {})  # resamples kept at the top of the figure: boot/<path>
    for k in path[:-1]:
        boot = boot.get(k, {})
    if path[-1] in boot:
        boot[path[-1]] = fn(np.asarray(boot[path[-1]], dtype=float)).tolist()
    return d


@pytest.mark.parametrize(
    "cid, fig, path, up, down",
    [
        ("C1a", "fig2", ("pairs", "min_gap"), lambda a: a * 0 + 0.5, lambda a: a * 0 - 0.5),
        ("C1b", "fig25", ("pairs", "id_majority"), lambda a: a * 0 - 1.0, lambda a: a * 0 + 0.5),
        ("C2", "fig4", ("curves", "mat", "p@1"), lambda a: a + 1.0, lambda a: a - 1.0),
        ("C4", "fig5", ("curves", "mat", "surprisal"), lambda a: a * 0.01, lambda a: a * 100),
        ("C12b", "fig10", ("curves", "mat_attn", "p@1"), lambda a: a * 10, lambda a: a * 0),
    ],
)
def test_moving_a_value_across_the_threshold_flips_the_verdict(cid, fig, path, up, down):
    """A rule that cannot fail (or cannot hold) is caught: pushing the numbers it reads far to the claim's side
    gives holds, far to the other side fails, both from the resamples."""
    for fn, want in ((up, verdicts.HOLDS), (down, verdicts.FAILS)):
        moved = _move(claims.default_get(fig), path, fn)
        rec = claims.evaluate(jtc_claims.CLAIMS, cid, lambda f: moved if f == fig else claims.default_get(f))
        assert rec["verdict"] == want and rec["resampled"], (cid, want, rec["margin"])


def test_saved_layers_rule_flips_with_the_shares():
    d = claims.default_get("fig8")
    for sign, want in ((+1, verdicts.HOLDS), (-1, verdicts.FAILS)):
        moved = copy.deepcopy(d)
        moved["saved"]["mat"]["share"] = d["saved"]["id"]["share"] + sign * 0.2
        moved["boot"]["saved"]["mat"]["share"] = (np.asarray(d["boot"]["saved"]["id"]["share"]) + sign * 0.2).tolist()
        rec = claims.evaluate(jtc_claims.CLAIMS, "C8", lambda f: moved if f == "fig8" else claims.default_get(f))
        assert rec["verdict"] == want


def test_grouped_claims_share_one_statistic():
    records = jtc_claims.all_claims()
    by = {r["id"]: r for r in records}
    groups = {f["statistic"]: f["claims"] for f in findings.findings(records)}
    assert set(groups["p1_gain"]) == {"C2", "C6", "C7"} and set(groups["saved_gain"]) == {"C8", "C9", "C11"}
    # C11 is C8 and C9 together: its margin is the smaller of theirs, from the same numbers
    assert by["C11"]["margin"] == pytest.approx(min(by["C8"]["margin"], by["C9"]["margin"]))
    for stat in jtc_claims.FINDINGS:
        assert stat in groups, f"finding {stat} has no claims"
    assert all(r["kind"] == "check" for r in records if r["id"] == "C14")
    assert not any(r["id"] == "C14" for f in findings.findings(records) for r in [by[c] for c in f["claims"]])


@pytest.mark.parametrize(
    "name",
    [
        "claims",
        "claims_real",
        "claims_regime",
        "claims_lenses",
        "claims_ffn",
        "claims_linearity",
        "claims_linearity_real",
        "claims_lenses_real",
        "claims_ffn_real",
    ],
)
def test_every_failing_or_undecided_claim_carries_its_reason(name):
    for r in figdata.load(name)["data"]:
        if r.get("kind", "claim") == "claim" and r.get("verdict") in (verdicts.FAILS, verdicts.UNDECIDED):
            assert r["reason"], f"{name}: {r['id']} {r['verdict']} without a reason"


def test_findings_count_claims_once_and_leave_checks_out():
    records = jtc_claims.all_claims()
    c = findings.count_findings(records)
    evidence = [r for r in records if findings.is_evidence(r)]
    assert c["claims"] == len(evidence) and c["findings"] < len(evidence)
    assert c["checks"] == sum(r["kind"] == "check" for r in records)
    assert sum(c[v] for v in findings.FINDING_VERDICTS) + c["no interval"] >= c["findings"] - c["no interval"]


def test_resampled_means_of_a_subset_and_histograms():
    x = np.arange(10.0)
    w = resample.weights(10)
    some = x % 3 == 0
    sub = resample.resampled_mean(x, where=some)
    want = (w[:, some] @ x[some]) / w[:, some].sum(1)
    assert np.allclose(sub, np.round(want, 6), equal_nan=True)
    h = resample.resampled_counts([0, 2, 2, 1, 0, 0, 2, 1, 1, 2], 4)
    assert h.shape == (resample.N_RESAMPLES, 4) and np.all(h.sum(1) == 10) and np.all(h[:, 3] == 0)
    assert np.array_equal(h[:, 2], w[:, [1, 2, 6, 9]].sum(1))


def test_a_statistic_without_resamples_says_why_and_is_not_counted():
    """F8 reads a figure that has resamples (Table 4's events) but its own statistic (the clusters of the extreme
    scores) has none: it is judged on the point estimate, says why, and is no evidence either way."""
    rec = ffn_claims.check("F8")
    assert not rec["resampled"] and rec["no_interval"] and "No interval" in rec["reason"]
    assert findings.shape_verdict(rec).endswith("no interval")
    assert ffn_claims.check("F6")["resampled"]  # the same figure's event scores are resampled
