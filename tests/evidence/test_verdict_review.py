"""Issue 53, the verdicts' second review: the interval shown is the one the verdict reads, every record says what its
resamples resample, a rule that reads an unresampled statistic shows no interval, training seeds alone are a sign
test, one statistic per finding, and F9's rule can fail."""

import copy
import dataclasses

import numpy as np
import pytest

from jtc_utils.core.data import profiles
from jtc_utils.evidence import claims, figdata, findings, instruments, verdicts
from jtc_utils.evidence.claims import claim_record, registry
from jtc_utils.evidence.registry import get as registered
from jtc_utils.ffn import claims as ffn_claims
from jtc_utils.jtc import claims as jtc_claims
from jtc_utils.jtc import seeds
from jtc_utils.lenses import claims as lens_claims
from jtc_utils.linearity import claims as sl_claims

STORED = [
    "claims",
    "claims_real",
    "claims_regime",
    "claims_lenses",
    "claims_ffn",
    "claims_linearity",
    "claims_linearity_real",
    "claims_lenses_real",
    "claims_ffn_real",
]


def _decisive(v):
    return v in (verdicts.HOLDS, verdicts.FAILS)


@pytest.mark.parametrize("seed", range(40))
def test_the_interval_excludes_zero_exactly_when_the_verdict_is_decisive(seed):
    """On margins built to sit at the edges (shares of 0.94-0.98 on one side, ties at 0, NaNs), the interval that
    decide shows excludes 0 exactly when the verdict holds or fails, and lies on the verdict's side."""
    rng = np.random.default_rng(seed)
    n = 200
    k_above = int(rng.integers(180, 200))
    m = np.concatenate([rng.uniform(0.01, 1, k_above), rng.choice([0.0, -0.3, np.nan], n - k_above)])
    m = rng.permutation(m * rng.choice([1, -1]))
    r = verdicts.decide(float(np.nanmedian(m)), m)
    excludes = r["lo"] > 0 or r["hi"] < 0
    assert excludes == _decisive(r["verdict"]), (r, np.sort(np.nan_to_num(m))[:12])
    if r["verdict"] == verdicts.HOLDS:
        assert r["lo"] > 0
    if r["verdict"] == verdicts.FAILS:
        assert r["hi"] < 0


def test_a_share_between_95_and_975_percent_shows_an_interval_that_agrees():
    """191 of 200 on the claim's side (95.5%): the old 2.5-97.5% interval contained 0 beside a HOLDS."""
    m = np.r_[np.linspace(0.1, 1, 191), np.linspace(-1, -0.1, 9)]
    r = verdicts.decide(0.5, m)
    assert r["verdict"] == verdicts.HOLDS and r["lo"] > 0
    assert np.percentile(m, 2.5) < 0  # what the old interval showed


@pytest.mark.parametrize("fig", STORED)
def test_every_stored_record_agrees_with_its_interval_and_names_its_resamples(fig):
    assert figdata.exists(fig), f"{fig} is committed with the book"
    for r in figdata.load(fig)["data"]:
        if r.get("kind") == "check" or r.get("verdict") is None:
            continue
        if r.get("seeds_differ"):  # undecided because the training seeds disagree; the interval is seed 0's
            assert r["verdict"] == verdicts.UNDECIDED and len({s["verdict"] for s in r["per_seed"]}) > 1, r["id"]
        elif r["resampled"]:
            assert (r["lo"] > 0 or r["hi"] < 0) == _decisive(r["verdict"]), r["id"]
            assert r["resamples"], f"{r['id']} does not say what it resamples"
        elif r.get("n_seeds"):
            assert r["resamples"] == [verdicts.SEEDS], r["id"]
            assert r["n_seeds"] >= verdicts.LEAST_SEEDS or r["verdict"] == verdicts.UNDECIDED, r["id"]
        else:
            assert r.get("no_interval"), f"{r['id']} has neither an interval nor a reason for none"


def _fig(stat, fixed):
    return {"stat": [stat], "fixed": [fixed], "boot": {"stat": [[stat + 0.01 * (b % 7 - 3)] for b in range(200)]}}


def _table(read_fixed):
    def rule(get):
        d = get("toy")
        margin = d["stat"][0] - (d["fixed"][0] if read_fixed else 0.0)
        return claim_record("Z1", "toy", "toy", "toy", margin, "toy", words=("better",))

    return {"Z1": rule}


def test_a_rule_that_reads_an_unresampled_statistic_shows_no_interval():
    get = claims.memo(lambda fig: _fig(0.5, 0.1))
    clean = claims.evaluate(_table(False), "Z1", get)
    mixed = claims.evaluate(_table(True), "Z1", get)
    assert clean["resampled"] and clean["resamples"] == [verdicts.VALIDATION] and clean["lo"] < clean["hi"]
    assert not mixed["resampled"] and mixed["lo"] is None and mixed["resamples"] == []
    assert "toy" in mixed["no_interval"] and "no resamples" in mixed["no_interval"]
    assert findings.shape_verdict(mixed).endswith("no interval")


def test_t3_reads_the_bias_kl_which_has_no_resamples():
    """The stand-in's tuned lens was trained once, short of its convergence, so T3 is not judged; given the runs its
    check asks for (copies), each converged, it is judged, and its bias KL has no resamples of the samples: it gets
    no interval, or one without spread (the identical runs are all its resamples can draw)."""
    assert lens_claims.check("T3")["status"] == claims.NOT_JUDGED_STATUS
    grid = figdata.load("tl_grid")["data"]
    c = grid["curves"]
    n = instruments.LEAST_RUNS
    copies = {f"tuned/seed{k}": c["tuned"] for k in range(1, n)}
    done = {"tuned": True, **dict.fromkeys(copies, True)}
    runs = {**grid, "seeds": list(range(n)), "curves": {**c, **copies}, "converged": done}
    rec = lens_claims.check("T3", lambda f: runs if f == "tl_grid" else figdata.load(f)["data"])
    assert rec["status"] != claims.NOT_JUDGED_STATUS
    assert (not rec["resampled"] and "tl_grid" in rec["no_interval"]) or rec["spread"] is False


def test_seeds_alone_are_a_sign_test():
    seeds = [0, 1, 2]
    d = {"seeds": seeds, "rows": [0.3, 0.2, 0.1]}

    def rule(get):
        rows = get("toy")["rows"]
        return claim_record("Z2", "toy", "toy", "toy", float(np.mean(rows)), "toy", words=("better",))

    rec = claims.evaluate({"Z2": rule}, "Z2", claims.memo(lambda fig: d), seed_keys=("rows",))
    assert rec["verdict"] == verdicts.UNDECIDED and (rec["seeds_on_side"], rec["n_seeds"]) == (3, 3)
    assert rec["resamples"] == [verdicts.SEEDS] and "3 of 3 seeds" in findings.shape_verdict(rec)
    assert "sign test" in rec["reason"]
    five = {"seeds": list(range(5)), "rows": [0.3, 0.2, 0.1, 0.4, 0.2]}
    rec5 = claims.evaluate({"Z2": rule}, "Z2", claims.memo(lambda fig: five), seed_keys=("rows",))
    assert rec5["verdict"] == verdicts.HOLDS and verdicts.LEAST_SEEDS == 5
    assert verdicts.seed_test(-0.1, [-0.1, -0.2, -0.3, -0.1, -0.05])["verdict"] == verdicts.FAILS
    assert verdicts.seed_test(0.1, [0.1, 0.2, -0.3, 0.1, 0.05])["verdict"] == verdicts.UNDECIDED


def test_n7_and_the_regulariser_claims_rest_on_seeds_alone():
    """N7 (five seeds of the stand-in's NJTC and N-NJTC, the runs its check asks for) is decided by the sign test of
    its seeds; the regulariser claims (three pretraining seeds) cannot be."""
    n7 = lens_claims.check("N7")
    assert n7["resamples"] == [verdicts.SEEDS] and n7["n_seeds"] == verdicts.LEAST_SEEDS == instruments.LEAST_RUNS
    k, n = n7["seeds_on_side"], n7["n_seeds"]
    assert n7["verdict"] == (verdicts.HOLDS if k == n else verdicts.FAILS if k == 0 else verdicts.UNDECIDED)
    for rec in (sl_claims.check(c) for c in ("S6", "S7", "S8", "S9")):
        assert rec["resamples"] == [verdicts.SEEDS] and rec["n_seeds"] == 3, rec["id"]
        assert rec["verdict"] == verdicts.UNDECIDED, rec["id"]


def test_f1_and_f3_read_different_statistics_and_s8_does_not_read_the_probes():
    f1, f3 = ffn_claims.check("F1"), ffn_claims.check("F3")
    assert f1["statistic"] != f3["statistic"] and f1["margin"] != f3["margin"]

    def no_probes(fig):
        if fig == "sl_fig5":
            raise AssertionError("S8 read the probes (S9's statistic)")
        return claims.default_get(fig)

    s8 = sl_claims.check("S8", claims.memo(no_probes))
    assert s8["statistic"] != sl_claims.check("S9")["statistic"]


def _steer(steered_shift: float) -> dict:
    d = copy.deepcopy(figdata.load("ext_geva_steer")["data"])
    base = d["conditions"]["unmodified"]["sampled"]
    d["conditions"]["steered (10 values)"]["sampled"] = {
        **copy.deepcopy(base),
        "negative": base["negative"] + steered_shift,
        "boot": {**base["boot"], "negative": [x + steered_shift for x in base["boot"]["negative"]]},
    }
    return d


def test_f9_can_fail_where_steering_changes_nothing_or_raises_negatives():
    get = lambda d: claims.memo(claims.getter({"ext_geva_steer": d}))  # noqa: E731
    same = ffn_claims.check("F9", get(_steer(0.0)))
    assert same["verdict"] != verdicts.HOLDS and same["margin"] <= 0
    worse = ffn_claims.check("F9", get(_steer(0.1)))
    assert worse["verdict"] == verdicts.FAILS and worse["resamples"] == ["prompts"]
    better = ffn_claims.check("F9", get(_steer(-0.2)))
    assert better["margin"] > 0


def test_c4_reads_often_by_a_large_margin():
    rec = jtc_claims.check("C4")
    assert "often" in rec["words"] and "substantially" in rec["words"]
    assert verdicts.value("often") == 0.25 and verdicts.value("portion") == 0.2


def test_the_lexicon_lists_the_words_the_review_named():
    listed = {w for r in verdicts.LEXICON.values() for w in r.words}
    for word in (
        "often",
        "a substantial portion",
        "removes most of",
        "a small fraction",
        "strong",
        "small next to (substantially below)",
        "weak (substantially below)",
    ):
        assert word in listed, word


def test_the_note_says_when_the_lexicon_was_written_and_not_before_any_result():
    assert "before any result" not in claims.RULES_NOTE and "2026-11-25" in claims.RULES_NOTE
    assert "before any result" not in verdicts.__doc__


def test_registry_of_a_toy_table_names_its_resamples():
    check, _ = registry(
        {"Z9": lambda get: claim_record("Z9", "t", "t", "t", get("toy")["stat"][0], "t", words=("better",))},
        "toy-registry",
    )
    rec = check("Z9", claims.memo(lambda fig: _fig(0.3, 0.0)))
    assert rec["resamples"] == [verdicts.VALIDATION] and rec["verdict"] == verdicts.HOLDS
    assert "Z9" not in registered().claim_checks  # a registry() table is reachable by id only through a PAPER


def _sentences(seed: int, n_sentences: int, d: int, repeat_a_column: bool = False):
    """Stacked sentences of 2-14 tokens: states X, the next layer's Y (a linear map, the residual and noise), each
    token's sentence, and the first three resamples' counts of the sentences."""
    from jtc_utils.core.infra import resample
    from jtc_utils.linearity import score

    rng = np.random.default_rng(seed)
    pos = np.concatenate([np.arange(rng.integers(2, 15)) for _ in range(n_sentences)])
    X = rng.normal(size=(len(pos), d))
    if repeat_a_column:
        X[:, d - 1] = X[:, d - 2]
    Y = X @ rng.normal(size=(d, d)) * 0.4 + X + rng.normal(size=X.shape) * 0.3
    g = score.sentences_of(pos)
    return X, Y, g, resample.weights(int(g.max()) + 1)[:3]


def _drawn(g, w, b):
    """The tokens of resample ``b``: each sentence's tokens as often as it is drawn."""
    return np.concatenate([np.flatnonzero(g == s) for s in range(g.max() + 1) for _ in range(int(w[b, s]))])


@pytest.mark.parametrize("repeat_a_column", [False, True])
def test_a_resample_of_sentences_refits_exactly_as_the_drawn_tokens_would(repeat_a_column):
    """Issue 53, item 7: the linearity scores under a resample of the sentences, from per-sentence sums, equal the
    scores of a fit on the drawn sentences' tokens stacked (each as often as drawn): on well-conditioned states (the
    Cholesky path) and on states with a column repeated (a Gram matrix with a zero eigenvalue, cut as the fit's
    pseudo-inverse cuts it)."""
    from jtc_utils.linearity import score

    X, Y, g, w = _sentences(3, 120, 12, repeat_a_column)
    got = score.resampled_pair(X, Y, g, w)
    ratio = np.linalg.norm(Y - X, axis=1) / np.linalg.norm(X, axis=1)
    for b in range(len(w)):
        idx = _drawn(g, w, b)
        want = score.pair(X[idx], Y[idx])
        assert got["res_in"][b] == pytest.approx(want["res_in"], abs=1e-10)
        assert got["nores_in"][b] == pytest.approx(want["nores_in"], abs=1e-10)
        med = score.weighted_median(ratio, w[b : b + 1, g])[0]
        assert np.mean(ratio[idx] <= med) >= 0.5 and np.mean(ratio[idx] < med) < 0.5


def test_a_resampled_perplexity_is_the_drawn_sentences_perplexity():
    from jtc_utils.linearity import prune

    nll, tok = np.array([2.0, 6.0, 3.0]), np.array([2.0, 3.0, 1.0])
    w = np.array([[1, 1, 1], [2, 0, 1], [0, 3, 0]])
    got = prune.resampled_perplexity(nll, tok, w)
    assert got == pytest.approx([np.exp(11 / 6), np.exp(7 / 5), np.exp(2.0)])


@pytest.mark.parametrize("cid", ["S2", "S3", "S4", "S5", "S10"])
def test_the_linearity_headline_claims_have_intervals_over_sentences(cid):
    rec = sl_claims.check(cid)
    assert rec["resampled"] and rec["resamples"] == ["sentences"], (cid, rec.get("no_interval"))
    assert (rec["lo"] > 0 or rec["hi"] < 0) == _decisive(rec["verdict"])


# ---- item 8: training seeds of the stand-in of GPT2-XL ------------------------------------------------------------


def test_the_replicas_differ_from_the_stand_in_in_their_training_randomness_only():
    from jtc_utils.core.models import catalogue

    base = catalogue.ZOO["tiny-gpt2-xl"]
    names = seeds.replicas("tiny")
    assert names[0] == base.name and len(names) == 3
    for name in names[1:]:
        spec, card = catalogue.ALL[name], catalogue.load_card(name)
        assert spec.seed > 0 and dataclasses.replace(spec, name=base.name, seed=0) == base
        assert card["seed"] == spec.seed and card["data_seed"] == 0  # the same texts, its own initialisation
        assert not catalogue.verify_files(name)
    assert seeds.replicas("real") == ["smollm2-135m"]  # the real model has no replicas


def test_a_replica_profile_changes_only_the_role_of_gpt2_xl():
    p = seeds.replica_profile("tiny", "tiny-gpt2-xl-seed1")
    base = profiles.get("tiny")
    assert p.role("gpt48") == "tiny-gpt2-xl-seed1"
    assert [p.role(r) for r in ("gpt12", "gpt24", "gpt36", "bert12", "bert24")] == [
        base.role(r) for r in ("gpt12", "gpt24", "gpt36", "bert12", "bert24")
    ]


def _with_verdict(records, cid, verdict):
    return [{**r, "verdict": verdict} if r["id"] == cid else r for r in records]


def test_a_shape_that_differs_between_seeds_is_undecided_and_one_that_agrees_is_kept():
    records = figdata.load("claims")["data"]
    seed0 = [{k: v for k, v in r.items() if k not in ("per_seed", "seeds_differ")} for r in records]
    # C2 reads fig4 (the role's); C5 reads the BERT-style stand-ins only
    assert seeds.reads_role("C2") and not seeds.reads_role("C5")
    c2 = next(r for r in seed0 if r["id"] == "C2")
    others = {m: copy.deepcopy(seed0) for m in seeds.replicas("tiny")[1:]}
    agree = {r["id"]: r for r in seeds.combine(seed0, others)}
    assert agree["C2"]["verdict"] == c2["verdict"] and not agree["C2"].get("seeds_differ")
    assert [s["seed"] for s in agree["C2"]["per_seed"]] == [0, 1, 2] and "per_seed" not in agree["C5"]
    flip = verdicts.FAILS if c2["verdict"] != verdicts.FAILS else verdicts.HOLDS
    first = seeds.replicas("tiny")[1]
    differ = {r["id"]: r for r in seeds.combine(seed0, {**others, first: _with_verdict(others[first], "C2", flip)})}
    assert differ["C2"]["verdict"] == verdicts.UNDECIDED and differ["C2"]["holds"] is None
    assert differ["C2"]["seeds_differ"] and "seeds of the stand-in of GPT2-XL disagree" in differ["C2"]["reason"]
    assert differ["C2"]["margin"] == c2["margin"]  # seed 0's margin and interval, said so in the reason
    assert differ["C5"] == agree["C5"]


def test_the_stored_seed_verdicts_are_on_every_claim_that_reads_the_role_and_its_figures_are_the_replicas():
    stored = figdata.load("claims")["data"]  # recomputed in full by test_figure_data
    role = {
        r["id"] for r in stored if r.get("kind") == "claim" and r["verdict"] is not None and seeds.reads_role(r["id"])
    }  # a claim without a shape verdict (C3) has none to compare
    assert role and {r["id"] for r in stored if r.get("per_seed")} == role
    for model in seeds.replicas("tiny")[1:]:
        for fig in ("fig2", "fig4", "fig5"):
            params = figdata.load(seeds.prefix(model) + fig)["params"]
            assert params["model"] == model and params["profile"] == "tiny"
