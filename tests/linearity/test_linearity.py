"""The linearity score, pruning, the regulariser and the chapter's bad-input handling (related-systems spec 4.5),
on random data and tiny random models (no zoo training)."""

import random

import numpy as np
import pytest
import torch

from jtc_utils.core.models import catalogue
from jtc_utils.core.data import profiles
from jtc_utils.core.analysis.linear import UnderdeterminedFitWarning
from jtc_utils.linearity import artifacts, prune, score, tasks, train
from jtc_utils.linearity import studies
from jtc_utils.evidence import figdata

pytestmark = [pytest.mark.linearity]  # the linearity paper

rng = np.random.default_rng(0)


def _independent_ls(X, Y):
    """The paper's definition, written out: centre, normalise, least squares (numpy's lstsq), 1 - residual."""
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    Xn, Yn = Xc / np.linalg.norm(Xc), Yc / np.linalg.norm(Yc)
    A = np.linalg.lstsq(Xn, Yn, rcond=None)[0]
    return 1 - np.linalg.norm(Xn @ A - Yn) ** 2


def _data(n=600, d=8, noise=0.5):
    X = rng.standard_normal((n, d))
    Y = np.tanh(X @ rng.standard_normal((d, d))) + noise * rng.standard_normal((n, d))
    return X, Y


def test_score_equals_an_independent_implementation_and_the_variance_weighted_r2():
    X, Y = _data()
    ls = score.score(X, Y)
    assert ls == pytest.approx(_independent_ls(X, Y), abs=1e-10)
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score

    pred = LinearRegression().fit(X, Y).predict(X)
    assert ls == pytest.approx(r2_score(Y, pred, multioutput="variance_weighted"), abs=1e-10)
    assert 0 <= ls <= 1


def test_the_linearity_fits_are_the_jtc_solver_on_both_routes():
    """One least-squares solver in the book: the linearity score's affine fit is ``core.analysis.linear.fit`` on the
    centred states (the Gram route for a well-conditioned X, the SVD route with JTC's cutoff for a rank-deficient one),
    and the null's explained share (``Factor.explained``) is the fitted rows' sum of squares on both routes."""
    from jtc_utils.core.analysis import linear

    X, Y = _data(n=300, d=6)
    deficient = np.hstack([X, X[:, :2] @ rng.standard_normal((2, 3))])  # 9 columns of rank 6
    for A, route in ((X, "gram"), (deficient, "svd")):
        Ac, Yc = A - A.mean(0), Y - Y.mean(0)
        f = linear.factor(Ac)
        assert f.route == route
        M, c = score.fit_affine(A, Y)
        np.testing.assert_allclose(M, linear.fit(Ac, Yc), rtol=0, atol=1e-12)
        np.testing.assert_allclose(c, Y.mean(0) - A.mean(0) @ M, rtol=0, atol=1e-12)
        fitted = Ac @ M
        assert float(f.explained(f.project(Yc)).sum()) == pytest.approx(float((fitted**2).sum()), rel=1e-10)
        assert score.score(A, Y) == pytest.approx(1 - ((Yc - fitted) ** 2).sum() / (Yc**2).sum(), abs=1e-12)


def test_score_is_invariant_to_scaling_shifting_and_rotating_either_side():
    X, Y = _data()
    Q1, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    Q2, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    base = score.score(X, Y)
    for X2, Y2 in ((3.7 * X, Y), (X, 0.01 * Y), (X + 5.0, Y - 2.0), (X @ Q1, Y), (X, Y @ Q2), (X @ Q1, Y @ Q2)):
        assert score.score(X2, Y2) == pytest.approx(base, abs=1e-10)


def test_score_is_one_for_an_exact_affine_relation_and_near_the_null_for_noise():
    X = rng.standard_normal((500, 6))
    assert score.score(X, X @ rng.standard_normal((6, 6)) + 3.0) == pytest.approx(1.0, abs=1e-10)
    n, d = 4000, 20
    vals = [score.score(rng.standard_normal((n, d)), rng.standard_normal((n, d))) for _ in range(5)]
    assert np.mean(vals) == pytest.approx(d / (n - 1), rel=0.15)


def test_the_residual_identity_holds_and_the_null_is_low():
    X, Y = _data(noise=0.2)
    Y = X + 0.3 * Y  # a residual stream: small update next to the input
    p = score.pair(X, Y)
    assert p["nores_in"] == pytest.approx(p["nores_identity"], abs=1e-12)
    assert p["nores_in"] == pytest.approx(score.score(X, Y - X), abs=1e-12)
    assert p["res_in"] > p["nores_in"]  # the small update makes the residual score higher
    assert p["res_null"] < 0.1 and p["nores_null"] < 0.1


def test_held_out_is_below_in_sample_on_average():
    gaps = []
    for _ in range(5):
        Xt, Yt = _data(n=200, d=10)
        Xv, Yv = _data(n=200, d=10)
        Yt, Yv = Xt + Yt, Xv + Yv
        ins = [r["res_in"] for r in score.profile(np.stack([Xt, Yt]))]
        ho = score.heldout_profile(np.stack([Xt, Yt]), np.stack([Xv, Yv]))["res_ho"]
        gaps.append(ins[0] - ho[0])
    assert np.mean(gaps) > 0


def test_too_few_tokens_warn_and_bad_shapes_fail():
    with pytest.warns(UnderdeterminedFitWarning, match="null baseline"):
        assert score.score(rng.standard_normal((20, 30)), rng.standard_normal((20, 30))) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same number of rows"):
        score.score(np.zeros((10, 3)), np.zeros((9, 3)))
    with pytest.raises(ValueError, match="layers \\+ 1"):
        score.profile(np.zeros((1, 10, 3)))
    with pytest.raises(ValueError, match="blocks 1..6"):
        score.check_layer(7, 6)
    with pytest.raises(ValueError, match="constant"):
        score.score(rng.standard_normal((10, 2)), np.ones((10, 2)))


# ---------------------------------------------------------------------------------------------------------
# pruning on a tiny random GPT-2
@pytest.fixture(scope="module")
def tiny():
    from transformers import GPT2Config, GPT2LMHeadModel

    from jtc_utils.core.models.models import Adapter

    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=50, n_positions=32, n_embd=16, n_layer=4, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0
    )
    model = GPT2LMHeadModel(cfg).eval()

    class Tok:
        pad_token_id = 0

    ad = Adapter(model=model, tokenizer=Tok(), name="random")
    seqs = [list(np.random.default_rng(i).integers(1, 50, size=12)) for i in range(40)]
    return ad, seqs


def _logits(ad, seqs):
    inp = torch.tensor(seqs)
    with torch.no_grad():
        return ad.model(input_ids=inp).logits


def test_pruning_nothing_changes_nothing_and_the_blocks_come_back(tiny):
    ad, seqs = tiny
    before = _logits(ad, seqs)
    with prune.pruned(ad, {}):
        assert torch.equal(_logits(ad, seqs), before)
    with prune.pruned(ad, {2: None}):
        assert not torch.allclose(_logits(ad, seqs), before)
    assert torch.equal(_logits(ad, seqs), before)


def test_a_replacement_fitted_on_exact_linear_data_is_exact(tiny):
    ad, seqs = tiny
    d = ad.d
    M, c = np.eye(d) + 0.1 * rng.standard_normal((d, d)), 0.1 * rng.standard_normal(d)
    with prune.pruned(ad, {3: (M, c)}):  # a model whose block 3 is exactly affine
        truth = _logits(ad, seqs)
        states = prune.block_io(ad, seqs)
    fitted = prune.replacements(states, [3])
    np.testing.assert_allclose(fitted[3][0], M, atol=1e-4)
    with prune.pruned(ad, fitted):
        torch.testing.assert_close(_logits(ad, seqs), truth, atol=1e-4, rtol=1e-4)


def test_distillation_trains_only_the_maps_and_lowers_its_loss(tiny):
    ad, seqs = tiny
    weights = {k: v.clone() for k, v in ad.model.state_dict().items()}
    states = prune.block_io(ad, seqs)
    fits = prune.replacements(states, [2])
    maps, curve = prune.distil(ad, fits, seqs, steps=60, lr=1e-2, batch_size=8)
    assert np.mean(curve[-10:]) < np.mean(curve[:10])
    assert all(torch.equal(v, ad.model.state_dict()[k]) for k, v in weights.items())
    assert not np.allclose(maps[2][0], fits[2][0])


def test_pruning_counts_and_strategies_are_checked():
    scores = {b: s for b, s in zip(range(1, 7), [0.9, 0.99, 0.95, 0.97, 0.98, 0.96])}
    assert prune.choose(scores, 2, "most linear") == [2, 5]
    assert prune.choose(scores, 2, "least linear") == [1, 3]
    assert prune.choose(scores, 3, "random", 1) == prune.choose(scores, 3, "random", 1)
    with pytest.raises(ValueError, match="k = 0 is the unpruned model"):
        prune.choose(scores, 0, "most linear")
    with pytest.raises(ValueError, match="pruning every block"):
        prune.choose(scores, 6, "most linear")
    with pytest.raises(ValueError, match="unknown strategy"):
        prune.choose(scores, 1, "greedy")


# ---------------------------------------------------------------------------------------------------------
# training
@pytest.mark.slow
def test_the_regulariser_at_zero_equals_training_without_it():
    from jtc_utils.training import zoo

    texts = zoo.training_texts(0)[:700]
    plain, rp, snaps = train.pretrain(None, 0, texts, steps=3, progress=False, snapshots=train.snapshot_steps)
    assert sorted(snaps) == train.snapshot_steps(3)  # the snapshot steps derived from the run's own step count
    zero, rz, _ = train.pretrain(0.0, 0, texts, steps=3, progress=False)
    assert rp["loss_curve"] == rz["loss_curve"]
    assert all(torch.equal(a, b) for a, b in zip(plain.state_dict().values(), zero.state_dict().values()))
    reg, rr, _ = train.pretrain(2.0, 0, texts, steps=3, progress=False)
    assert not all(torch.equal(a, b) for a, b in zip(plain.state_dict().values(), reg.state_dict().values()))
    assert rr["penalty_curve"] and all(p >= 0 for p in rr["penalty_curve"])


@pytest.mark.slow
def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path):
    from jtc_utils.training import zoo

    texts = zoo.training_texts(0)[:700]
    whole, rec, snaps = train.pretrain(0.5, 1, texts, steps=4, snapshots=(0, 2, 4), progress=False)
    assert (
        train.pretrain(0.5, 1, texts, steps=4, snapshots=(0, 2, 4), progress=False, work=tmp_path, stop_after=3) is None
    )
    resumed, rec2, snaps2 = train.pretrain(0.5, 1, texts, steps=4, snapshots=(0, 2, 4), progress=False, work=tmp_path)
    assert rec2["loss_curve"] == rec["loss_curve"] and sorted(snaps2) == [0, 2, 4]
    assert all(torch.equal(a, b) for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()))
    with pytest.warns(UserWarning, match="another run"):
        train.pretrain(2.0, 1, texts, steps=4, progress=False, work=tmp_path, stop_after=1)


@pytest.mark.parametrize("bad", [-0.5, float("nan"), True, "0.5"])
def test_a_bad_regulariser_weight_is_refused(bad):
    with pytest.raises(ValueError, match="regulariser weight"):
        train.check_lambda(bad)


def test_snapshots_are_log_spaced():
    s = train.snapshot_steps(630)
    assert s[0] == 0 and s[-1] == 630 and len(s) == 8
    assert all(b / a <= 2.1 for a, b in zip(s[1:], s[2:]))


def test_corruption_swaps_one_fact_word_for_a_word_of_its_class():
    from jtc_utils.embedded import corpus, lexicon

    sents = [s for s in corpus.pool("encyclopedia", "validation", 200) if any(l == "fact" for *_, l in s.spans)]
    r = random.Random(0)
    changed = 0
    for s in sents[:50]:
        bad = tasks.corrupt(s, r)
        if bad is None:
            continue
        a, b = s.text.split(), bad.split()
        diff = [(x, y) for x, y in zip(a, b) if x != y]
        assert len(a) == len(b) and len(diff) == 1
        x, y = (w.strip(",.;()") for w in diff[0])
        assert lexicon.word_class(x, "fact") == lexicon.word_class(y, "fact")
        changed += 1
    assert changed > 20
    texts, labels = tasks.examples("domain", "validation", 40)
    assert labels.mean() == 0.5 and len(set(texts)) > 30


def test_stored_variants_are_checked(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="make zoo-extras"):
        artifacts.checked_path("pretrain/no-such-run.safetensors")
    card = artifacts.committed_card()
    f = card["pretrain"]["cos-0.5-seed-0"]["file"]
    path, digest = artifacts.checked_path(f)
    assert digest == card["pretrain"]["cos-0.5-seed-0"]["sha256"]
    copy = tmp_path / "secretly-linear"
    (copy / "pretrain").mkdir(parents=True)
    (copy / f).write_bytes(path.read_bytes()[:-8] + b"\0" * 8)
    monkeypatch.setattr(artifacts, "OUT_DIR", copy)
    with pytest.raises(ValueError, match="checksum differs"):
        artifacts.checked_path(f)


def test_a_stored_run_is_keyed_on_its_world_as_well_as_its_weights(monkeypatch):
    """The step-0 snapshot is the seeded initialisation, the same bytes in every world; its cached scores must not
    be reused when the world (the base model and its tokenizer, hence the text) changes."""
    f = artifacts.committed_card()["snapshots"][0]["file"]
    ad = artifacts.variant(f)
    _, digest = artifacts.checked_path(f)
    assert ad.identity == artifacts.variant_identity(digest) and digest in ad.identity
    real_digest = catalogue.manifest_digest
    monkeypatch.setattr(
        catalogue, "manifest_digest", lambda name: "another-world" if name == artifacts.BASE else real_digest(name)
    )
    assert artifacts.variant_identity(digest) != ad.identity


def test_invariants_hold_on_the_stored_linearity_numbers():
    f1 = figdata.load("sl_fig1")["data"]
    for m, v in f1.items():
        for proto in ("paper", "paper_nopos0", "sample"):
            p = v[proto]
            assert all(0 <= x <= 1 for x in p["res_in"] + p["nores_in"]), (m, proto)
            assert all(n < r for n, r in zip(p["res_null"], p["res_in"])), (m, proto)
            if "nores_identity" in p:
                np.testing.assert_allclose(p["nores_in"], p["nores_identity"], atol=1e-8)
    t1 = figdata.load("sl_tab1")["data"]
    assert all(len(v["delta"]) == 3 for v in t1["tasks"].values())
    f7 = figdata.load("sl_fig7")["data"]
    assert {r["mode"] for r in f7["rows"]} == {"remove", "replace", "replace + distil"}
    assert len(f7["order"]) == f7["n_layers"]


def test_the_task_classifier_reads_the_bodys_last_real_token_and_trains_body_and_head():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    lm = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_positions=16, n_embd=8, n_layer=2, n_head=2)).eval()  # no dropout
    clf = tasks.Classifier(lm)
    inp = torch.tensor([[5, 6, 7, 0], [8, 9, 0, 0]])
    att = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]])
    out = clf(inp, att)
    with torch.no_grad():
        h = lm(input_ids=inp, attention_mask=att, output_hidden_states=True).hidden_states[-1]  # after ln_f
    assert out.shape == (2, 2)
    torch.testing.assert_close(out, clf.head(h[[0, 1], [2, 1]]))
    trained = {id(p) for p in clf.parameters()}
    assert id(lm.lm_head.weight) in trained  # tied to the embeddings, which the body holds
    assert all(id(p) in trained for p in clf.head.parameters()) and len(trained) == len(list(lm.parameters())) + 2


def test_a_models_study_is_computed_once_whether_its_profile_is_named_or_given():
    one = studies.study("tiny-gpt2")  # as the pretraining figure asks for it
    assert studies.study("tiny-gpt2", "tiny") is one and studies.study("tiny-gpt2", profiles.get("tiny")) is one


def test_the_pruning_caption_names_every_way_of_choosing_the_blocks_it_draws():
    """Issue 66, item 7: linearity Figure 6 drew three strategies and its caption named two."""
    from jtc_utils.linearity import plots

    d = figdata.load("sl_fig7")
    see = plots.DRAWINGS["sl_fig7"].caption(d["data"], d["params"]).see
    drawn = {r["strategy"] for r in d["data"]["rows"]}
    assert drawn == {"most linear", "least linear", "random"}
    assert all(f"{s} first" in see or (s == "random" and "at random" in see) for s in drawn), see
    only = {**d["data"], "rows": [r for r in d["data"]["rows"] if r["strategy"] == "random"]}
    assert "least linear" not in plots.DRAWINGS["sl_fig7"].caption(only, d["params"]).see
