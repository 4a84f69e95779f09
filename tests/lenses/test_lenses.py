"""Lenses: the closed forms, gradient descent against them, the tuned lens, the evaluator and bad input."""

import re

import numpy as np
import pytest
import torch

from jtc_utils import lenses
from jtc_utils.core.analysis import experiment, linear, readout
from jtc_utils.core.data import profiles
from jtc_utils.lenses import artifacts, closed_form, evaluate, figures, lowrank, names, registry, train, tuned
from jtc_utils.lenses.base import DivergedError, LensError, NotFittedError, StaleLensError
from jtc_utils.evidence import figdata

pytestmark = [pytest.mark.lenses]  # the lens bench


class Readout:
    """A small fixed readout: LayerNorm then a random unembedding, like a GPT-2 head."""

    def __init__(self, d, V, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.E = torch.randn(V, d, generator=g)

    def __call__(self, h):
        return torch.nn.functional.layer_norm(h, h.shape[-1:]) @ self.E.T


class Adapter:
    def __init__(self, d, V):
        self.readout = Readout(d, V)
        self.family = "gpt2"


class Fake:
    """Hidden states without a model: the stand-in for an Experiment in unit tests (nothing is cached)."""

    def __init__(self, X_train, X_val, V=50):
        self.X_train, self.X_val = X_train.astype(np.float32), X_val.astype(np.float32)
        self.n_layers = X_train.shape[0] - 1
        self.adapter = Adapter(X_train.shape[2], V)
        self.model_name = "fake"


def chain(L=3, n=400, d=12, seed=0, noise=0.1):
    """h^{l+1} = h^l A_l + b_l + noise: layers linked by affine maps."""
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(n, d))]
    for _ in range(L):
        A = np.eye(d) + 0.3 * rng.normal(size=(d, d))
        X.append(X[-1] @ A + rng.normal(size=d) + noise * rng.normal(size=(n, d)))
    return np.stack(X)


@pytest.fixture(scope="module")
def fake():
    X = chain(n=600)
    return Fake(X[:, :450], X[:, 450:])


def test_reduced_rank_at_full_rank_is_mat(fake):
    L, d = fake.n_layers, fake.X_train.shape[2]
    mat = lenses.get("mat").fit(fake)
    rrr = lenses.get("rrr", rank=d).fit(fake)
    for layer in range(L):
        np.testing.assert_allclose(rrr.M[layer], mat.M[layer], atol=1e-8)
        np.testing.assert_allclose(mat.M[layer], linear.fit(fake.X_train[layer], fake.X_train[L]), atol=1e-10)


def test_reduced_rank_train_error_never_rises_with_rank_and_equals_the_direct_error(fake):
    X, Y = fake.X_train[0], fake.X_train[-1]
    for affine in (False, True):
        fam = closed_form.RankFamily(X, Y, affine=affine)
        Xa = np.c_[X, np.ones(len(X))] if affine else X.astype(np.float64)
        sse = [fam.train_sse(r) for r in range(1, X.shape[1] + 1)]
        assert all(b <= a + 1e-9 * a for a, b in zip(sse, sse[1:]))
        for r in (1, 3, 7):
            direct = ((Xa @ fam.matrix(r) - Y) ** 2).sum()
            assert np.isclose(direct, fam.train_sse(r), rtol=1e-9)
            assert np.linalg.matrix_rank(fam.matrix(r), tol=1e-8) == r


def test_reduced_rank_matches_alternating_least_squares_on_a_random_problem():
    rng = np.random.default_rng(3)
    n, d, r = 300, 10, 3
    X = rng.normal(size=(n, d))
    Y = X @ rng.normal(size=(d, d)) + rng.normal(size=(n, d))
    fam = closed_form.RankFamily(X, Y)
    # ALS on X A B: alternate the two least-squares problems from a random start
    A = rng.normal(size=(d, r))
    for _ in range(500):
        B = np.linalg.lstsq(X @ A, Y, rcond=None)[0]
        A = np.linalg.lstsq(np.kron(B.T, X), Y.T.reshape(-1), rcond=None)[0].reshape(r, d).T
    als = ((X @ A @ B - Y) ** 2).sum()
    assert np.isclose(fam.train_sse(r), als, rtol=1e-6)
    # and no nearby rank-r map does better: perturb the optimum's factors
    U, S, Vt = np.linalg.svd(fam.matrix(r))
    A0, B0 = U[:, :r] * S[:r], Vt[:r]
    for _ in range(20):
        M = (A0 + 1e-3 * rng.normal(size=A0.shape)) @ (B0 + 1e-3 * rng.normal(size=B0.shape))
        assert ((X @ M - Y) ** 2).sum() >= fam.train_sse(r) * (1 - 1e-12)


def test_reduced_rank_from_float32_maps_is_the_optimum_on_rows_of_very_different_size():
    """The real model's case (issue 65, item 4): a few rows a thousand times larger than the rest (a first position's
    massive activation) and the least-squares map stored in float32, as the experiments store it. The rank-r map
    from it has the training error of the float64 optimum (lstsq, then the SVD of its fitted values), and no
    rank-r map found by alternating least squares from several starts does better."""
    rng = np.random.default_rng(7)
    n, d, r = 800, 12, 3
    X = rng.normal(size=(n, d))
    X[:30, 0] *= 1e3  # the massive rows
    Y = X @ rng.normal(size=(d, d)) + rng.normal(size=(n, d))
    Y[:30] *= 50
    M32 = np.linalg.lstsq(X, Y, rcond=None)[0].astype(np.float32)
    fam = closed_form.RankFamily(X, Y, M_ols=M32)
    ols = np.linalg.lstsq(X, Y, rcond=None)[0]
    top = np.linalg.svd(X @ ols, full_matrices=False)[2][:r]
    sse = lambda M: float(((X @ M - Y) ** 2).sum())  # noqa: E731
    assert sse(fam.matrix(r)) == pytest.approx(sse(ols @ top.T @ top), rel=1e-9)
    for start in range(3):
        A = np.random.default_rng(start).normal(size=(d, r))
        for _ in range(300):
            B = np.linalg.lstsq(X @ A, Y, rcond=None)[0]
            A = np.linalg.lstsq(np.kron(B.T, X), Y.T.reshape(-1), rcond=None)[0].reshape(r, d).T
        assert sse(A @ B) >= sse(fam.matrix(r)) * (1 - 1e-7)


def test_reduced_rank_is_invariant_to_rescaling_the_input():
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(200, 6)), rng.normal(size=(200, 6))
    D = np.diag(rng.uniform(0.1, 10, 6))
    a, b = closed_form.RankFamily(X, Y), closed_form.RankFamily(X @ D, Y)
    np.testing.assert_allclose(X @ a.matrix(2), (X @ D) @ b.matrix(2), atol=1e-8)


def test_parameter_counts_follow_the_papers():
    d, r = 1600, 16
    assert lenses.get("njtc", rank=r).params(d) == 2 * d * r
    assert lenses.get("nnjtc", rank=r).params(d) == 2 * d * r + 4 * d
    assert lenses.get("mat").params(d) == d * d
    assert (2 * 16 * 1600 + 4 * 1600) / 1600**2 == pytest.approx(0.0225)  # N-NJTC's "> 97% fewer" for GPT2-XL


def test_batchnorm_in_evaluation_mode_equals_its_affine_form(fake):
    r = lowrank.train(fake.X_train, [(0, 3), (1, 3)], rank=2, norm=True, seed=0, recipe={"max_epochs": 3})
    for p in range(2):
        bn = torch.nn.BatchNorm1d(fake.X_train.shape[2]).double().eval()
        bn.weight.data, bn.bias.data = torch.as_tensor(r["gamma"][p]).double(), torch.as_tensor(r["beta"][p]).double()
        bn.running_mean, bn.running_var = torch.as_tensor(r["mean"][p]).double(), torch.as_tensor(r["var"][p]).double()
        x = torch.as_tensor(fake.X_val[p]).double()
        with torch.no_grad():
            direct = (bn(x) @ torch.as_tensor(r["A"][p]).double() @ torch.as_tensor(r["B"][p]).double()).numpy()
        M, c = lowrank.affine_form(r)
        affine = fake.X_val[p].astype(np.float64) @ M[p] + c[p]
        np.testing.assert_allclose(affine, direct, rtol=1e-5, atol=1e-5)


def test_batched_training_equals_one_pair_training(fake):
    pairs = [(0, 3), (1, 2), (2, 3)]
    for norm in (False, True):
        a = lowrank.train(fake.X_train, pairs, rank=2, norm=norm, seed=1, recipe={"max_epochs": 15})
        b = lowrank.train_loop(fake.X_train, pairs, rank=2, norm=norm, seed=1, recipe={"max_epochs": 15})
        np.testing.assert_allclose(lowrank.affine_form(a)[0], lowrank.affine_form(b)[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(a["best_epoch"], b["best_epoch"])


def test_gradient_descent_never_beats_the_closed_form_on_its_own_training_loss(fake):
    L = fake.n_layers
    pairs = [(layer, L) for layer in range(L)]
    for norm, affine in ((False, False), (True, True)):
        r = lowrank.train(fake.X_train, pairs, rank=2, norm=norm, seed=0, recipe={"max_epochs": 60})
        n = fake.X_train.shape[1]
        for p, (src, tgt) in enumerate(pairs):
            best = closed_form.RankFamily(fake.X_train[src], fake.X_train[tgt], affine=affine).train_sse(2) / n
            assert r["train_loss"][p] >= best * (1 - 1e-6)
            assert r["train_loss"][p] <= 5 * best  # and it did learn something


def test_a_fresh_tuned_lens_is_the_identity_exactly(fake):
    readout = fake.adapter.readout
    out = tuned.train(fake.X_train, readout, "tuned", recipe={"steps": 1, "lr": 0.0, "weight_decay": 0.0})
    assert np.array_equal(out["M"], np.broadcast_to(np.eye(fake.X_train.shape[2]), out["M"].shape))
    assert not out["c"].any()
    lens = lenses.get("tuned")
    lens.M, lens.c, lens.n_layers, lens.d = out["M"], out["c"], fake.n_layers, fake.X_train.shape[2]
    ident = lenses.get("id").fit(fake)
    for layer in range(fake.n_layers + 1):
        assert np.array_equal(lens.transform(fake.X_val[layer], layer), ident.transform(fake.X_val[layer], layer))


def test_the_tuned_lens_recovers_an_exact_affine_relation_and_mat_plus_b_is_exact():
    rng = np.random.default_rng(0)
    n, d = 2000, 8
    h0 = rng.normal(size=(n, d))
    A, b = np.eye(d) + 0.2 * rng.normal(size=(d, d)), 0.3 * rng.normal(size=d)
    X = np.stack([h0, h0 @ A + b]).astype(np.float32)
    fake = Fake(X[:, :1500], X[:, 1500:], V=20)
    mb = lenses.get("mat+b").fit(fake)
    np.testing.assert_allclose(mb.transform(fake.X_val[0], 0), fake.X_val[1], atol=1e-4)
    out = tuned.train(fake.X_train, fake.adapter.readout, "tuned", recipe={"steps": 500})
    lens = lenses.get("tuned")
    lens.M, lens.c, lens.n_layers, lens.d = out["M"], out["c"], 1, d
    res = evaluate.evaluate(fake, lens)
    assert res["kl"][0].mean() < 1e-3
    assert out["log"][-1].sum() < out["log"][0].sum()  # train KL decreased


def test_kl_is_zero_at_the_last_layer_and_never_negative(fake):
    res = evaluate.evaluate(fake, lenses.get("rrr", rank=2).fit(fake))
    assert np.all(res["kl"] >= -1e-12)
    assert np.abs(res["kl"][-1]).max() < 1e-12 and res["precision"][1][-1].all()
    assert np.allclose(res["s_n"][-1], res["s_jtc"][-1])


def test_saturation_layer_and_the_oracle():
    top1 = np.array([[5, 1, 1], [1, 1, 2], [5, 1, 3], [1, 2, 3]])  # layers 0..3, final row = final prediction
    final = top1[-1]
    assert readout.saturation_layer(top1, final).tolist() == [3, 3, 2]
    o = evaluate.oracle_frontier(top1, final, minimal_layer=1, points=2)
    assert o["y"][0] == 1.0 and o["x"][0] == pytest.approx(8 / 3)
    assert o["x"][1] == 1.0


def test_bad_input_gets_a_clear_error(fake):
    with pytest.raises(LensError, match="no lens named 'jtc'.*the lenses are"):
        lenses.get("jtc")
    for bad in (0, -1, 2.5, "4"):
        with pytest.raises(LensError, match="rank"):
            lenses.get("rrr", rank=bad)
    with pytest.raises(LensError, match="needs a rank"):
        lenses.get("njtc")
    with pytest.raises(LensError, match="rank 13 is above the width d = 12"):
        lenses.get("rrr", rank=13).fit(fake)
    with pytest.raises(LensError, match="has no rank"):
        lenses.get("mat", rank=3)
    with pytest.raises(NotFittedError, match="not fitted: call lens.fit"):
        evaluate.evaluate(fake, lenses.get("mat"))
    other = Fake(chain(L=4, d=12)[:, :300], chain(L=4, d=12)[:, 300:])
    with pytest.raises(LensError, match="fitted on a model with 3 layers and width 12"):
        evaluate.evaluate(other, lenses.get("mat").fit(fake))
    with pytest.raises(DivergedError, match="diverged.*lower the learning rate"):
        lowrank.train(fake.X_train * 1e20, [(0, 3)], rank=2, norm=False, recipe={"lr": 1e10, "max_epochs": 2})
    with pytest.raises(DivergedError, match="diverged"):
        tuned.train(fake.X_train * np.float32(np.inf), fake.adapter.readout, "tuned", recipe={"steps": 2})


def test_a_diverged_training_caches_nothing(tmp_path, monkeypatch):
    from jtc_utils.core.infra import cache

    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    key = {"what": "lens", "lens": "njtc_2"}

    def boom():
        raise DivergedError("diverged")

    with pytest.raises(DivergedError):
        cache.cached("lenses", key, boom)
    assert not any(tmp_path.rglob("*.npz")) and not any(tmp_path.rglob("*.tmp"))


def test_id_and_mat_as_lenses_keep_the_numbers_of_sections_4_and_5():
    """The lens evaluator on the id and mat lenses gives the per-sample Precision@k, surprisal, top-1 and
    confidence gap of jtc_utils.core.analysis.readout (which sections 4 and 5 draw), on a zoo model: to the last bit,
    since both read them with the same functions (``readout.top_and_gap``, ``readout.against_final``) from logits of the
    same shape (the 600 samples are one chunk on both routes)."""

    exp = experiment.shared("tiny-gpt2", "encyclopedia", "tiny", 2000, 600)
    ref = exp.predictions
    for name in ("id", "mat"):
        res = evaluate.evaluate(exp, lenses.get(name).fit(exp))
        for k in (1, 5, 10):
            np.testing.assert_array_equal(res["precision"][k], ref["precision"][name][k].astype(bool))
        np.testing.assert_array_equal(res["top1"], ref["top1"][name])
        np.testing.assert_array_equal(res["s_jtc"], ref["surprisal"][name])
        np.testing.assert_array_equal(res["gap"], ref["gap"][name])
        np.testing.assert_array_equal(res["final_topk"], ref["final_topk"])
    # the cross-entropy against the text's next token: -ln q[gold], NaN exactly where the position is the last token
    gold = [ids[p + 1] if p + 1 < len(ids) else None for ids, p in zip(exp.val.input_ids, exp.val.positions)]
    has = np.array([g is not None for g in gold])
    assert 0 < has.sum() < len(has)
    np.testing.assert_array_equal(np.isfinite(res["ce_gold"]), np.broadcast_to(has, res["ce_gold"].shape))
    L = exp.n_layers
    with torch.no_grad():
        logq = torch.log_softmax(exp.adapter.readout(torch.as_tensor(exp.X_val[L][has])).double(), -1)
    want = -logq[torch.arange(int(has.sum())), torch.tensor([g for g in gold if g is not None])].numpy()
    np.testing.assert_allclose(res["ce_gold"][L][has], want, rtol=1e-4, atol=1e-4)
    c = evaluate.curves(res, boot=("ce_gold",))
    np.testing.assert_allclose(c["ce_gold"], np.nanmean(res["ce_gold"], 1))
    assert c["n_gold"] == has.sum() and np.isfinite(c["boot"]["ce_gold"]).all()


def test_an_interrupted_tuned_lens_resumes_to_the_weights_of_an_uninterrupted_run(fake, tmp_path, monkeypatch):
    """Training stopped part-way (here: the readout fails at one step) resumes from its last checkpoint in the work
    folder and ends with exactly the weights, log and convergence record of a run that was never stopped; a pass of
    the convergence check finished before the stop is read back, not retrained."""
    recipe = {"steps": 40, "max_steps": 80, "converged_below": -1.0}  # never converged: passes of 40 and 80 steps
    monkeypatch.setattr(tuned, "CHECKPOINT_EVERY", 15)
    ref = tuned.train(fake.X_train, fake.adapter.readout, "tuned", seed=3, recipe=recipe)
    assert int(ref["doublings"]) == 1 and "earlier_seconds" not in ref

    calls = {"n": 0}

    def failing(t):
        calls["n"] += 1
        if calls["n"] == 41 + 1 + 51:  # pass 1 (final distribution + 40 steps), then step 50 of pass 2 (saved at 45)
            raise KeyboardInterrupt
        return fake.adapter.readout(t)

    with tuned.checkpoints(tmp_path), pytest.raises(KeyboardInterrupt):
        tuned.train(fake.X_train, failing, "tuned", seed=3, recipe=recipe)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pass-40.pt", "pass-80.pt"]
    counted = {"n": 0}

    def counting(t):
        counted["n"] += 1
        return fake.adapter.readout(t)

    with tuned.checkpoints(tmp_path):
        out = tuned.train(fake.X_train, counting, "tuned", seed=3, recipe=recipe)
    assert counted["n"] == 1 + 80 - 45  # the final distribution once, then steps 45..79 of the second pass only
    for k in ("M", "c", "log", "improvement", "steps", "doublings"):
        np.testing.assert_array_equal(out[k], ref[k], err_msg=k)
    assert out["earlier_seconds"] > 0


# --- the lens chapter's stored numbers and committed lenses ----------------------------------------------------


def test_invariants_hold_on_the_stored_lens_numbers():
    t = figdata.load("lens_table")["data"]
    L = t["n_layers"]
    for lab, row in t["lenses"].items():
        assert row["p@1"][L] == 1 and abs(row["kl"][L]) < 1e-9, lab  # every lens is the model at layer L
        assert all(a <= b + 1e-12 <= c + 2e-12 for a, b, c in zip(row["p@1"], row["p@5"], row["p@10"])), lab
        assert min(row["kl"]) >= -1e-9, lab
        oracle, rule = row["exit"]["oracle"], row["exit"]
        assert oracle["y"][0] == 1 and oracle["saved"]["saved"] >= rule["saved"]["saved"] - 1e-9, lab
    # least squares beats every other lens on r² where the objective and the form are its own
    for lab, row in t["lenses"].items():
        assert all(m >= r - 1e-9 for m, r in zip(t["lenses"]["mat+b"]["r2"], row["r2"])), lab
    f2 = figdata.load("nnjtc_fig2")["data"]
    assert min(f2["loss_ratio_min_njtc"], f2["loss_ratio_min_nnjtc"]) >= 1 - 1e-3


@pytest.mark.slow
def test_every_trained_lens_the_book_uses_is_committed_for_the_current_zoo_and_corpus(monkeypatch):
    """A retrained zoo model or a new corpus must come with retrained lenses (python -m jtc_utils.lenses.train);
    otherwise the book would silently train them in the build. Every job of the training command for the zoo
    must find its stored lens (the real model's are checked by its chapter's build)."""
    from jtc_utils.core.analysis.experiment import Experiment

    monkeypatch.setattr(registry, "REQUIRE_ARTIFACTS", True)
    exps = {}
    for model, what, run in train.jobs(train.TUNED_MODELS):
        run(exps.setdefault(model, Experiment(model)))
    assert artifacts.key_of("tiny-gpt2-xl", "tuned_s0")["recipe"] == {k: v for k, v in tuned.RECIPE.items()}


@pytest.mark.real
def test_the_real_models_tuned_lens_is_trained_only_when_asked():
    """The real model's tuned lens costs hours of CPU (a GPU job): `python -m jtc_utils.lenses.train` trains it
    only with --real-tuned; its low-rank shortcuts are always in the job list."""
    plain = [what for model, what, _ in train.jobs([train.REAL_MODEL])]
    asked = [what for model, what, _ in train.jobs([train.REAL_MODEL], real_tuned=True)]
    low_rank = ["njtc seed 0", "nnjtc seed 0", "njtc adjacent pairs seed 0", "nnjtc adjacent pairs seed 0"]
    assert plain == low_rank and asked == low_rank + ["tuned"]
    # under the convergence rule, every seed the seed rule needs, the lenses to the last layer first
    converged = [what for model, what, _ in train.jobs([train.REAL_MODEL], lowrank_only=True, converged=True)]
    assert converged[: 2 * len(train.SEEDS)] == [f"{n} seed {s}" for s in train.SEEDS for n in ("njtc", "nnjtc")]
    assert len(converged) == 4 * len(train.SEEDS) and len(train.SEEDS) == 5


def test_two_training_processes_split_the_runs_by_name(capsys):
    """--only picks the runs whose whole name matches, so that two single-threaded processes train NJTC and N-NJTC
    side by side without sharing a run ('njtc seed 2' is not 'nnjtc seed 2' nor its adjacent pairs)."""
    only = lambda pattern: [  # noqa: E731
        what
        for _, what, _ in train.jobs([train.REAL_MODEL], lowrank_only=True, converged=True, only=re.compile(pattern))
    ]
    assert only("njtc seed [2-4]") == ["njtc seed 2", "njtc seed 3", "njtc seed 4"]
    every = only(".*")
    assert sorted(only("njtc seed [0-4]") + only("nnjtc seed [0-4]") + only(".*adjacent.*")) == sorted(every)
    with pytest.raises(SystemExit):
        train.main(["--only", "nnjtc seed ("])
    assert "not a regular expression" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.real
def test_the_real_models_tuned_lens_is_found_under_the_key_its_page_computes(monkeypatch):
    """The real model's tuned lens (a GPU job, committed in zoo/lenses) is found, never trained, for the lens
    chapter's experiment: at the full size under its own key, and on the tests' subset (the first n train sentences)
    as the lens trained on the whole split, which its record says."""
    from jtc_utils.core.data.profiles import real_sizes

    monkeypatch.setattr(registry, "REQUIRE_ARTIFACTS", True)
    hp = {"seed": 0}
    full = experiment.for_role("real", "gpt48")
    stored = artifacts.key_of(train.REAL_MODEL, "tuned_s0")
    assert stored is not None and stored == registry.lens_key(full, "tuned", hp, tuned.RECIPE)
    assert registry.whole_split_key(full, "tuned", hp, tuned.RECIPE) is None  # it reads the whole split
    n_train, n_val = real_sizes(*profiles.REAL_SUBSET) if not real_sizes()[0] else real_sizes()
    sub = experiment.for_role("real", "gpt48", n_train, n_val)
    assert registry.lens_key(sub, "tuned", hp, tuned.RECIPE) != stored
    assert registry.whole_split_key(sub, "tuned", hp, tuned.RECIPE) == stored
    ln = figures.lens(sub, "tuned")
    assert ln.record["n_train"] == len(full.train) > len(sub.train)
    assert ln.M.shape == (full.n_layers, full.adapter.d, full.adapter.d)
    # so are its NJTC and N-NJTC (the lens chapter's check reads them on the subset; stop 87's build trained them
    # there again, 197 s): the very maps of the whole split
    for name in ("njtc", "nnjtc"):
        on_sub, on_full = figures.lens(sub, name), figures.lens(full, name)
        assert np.array_equal(on_sub.M, on_full.M) and np.array_equal(on_sub.c, on_full.c), name
    # other train samples (another seed draws other positions) find no lens: an error, not a CPU training run (a
    # small draw: the lens reads its states before it looks for its artifact, and the whole split's key is the same
    # at every size)
    other = experiment.for_role("real", "gpt48", 200, 50, seed=1)
    assert registry.whole_split_key(other, "tuned", hp, tuned.RECIPE) != stored
    with pytest.raises(StaleLensError, match="jtc_utils.lenses.train"):
        figures.lens(other, "tuned")
    monkeypatch.setattr(registry, "REQUIRE_ARTIFACTS", False)  # the book's own setting: still refused, not trained
    with pytest.raises(StaleLensError, match="not trained in the build"):
        figures.lens(other, "tuned")


@pytest.mark.real
def test_the_real_models_lens_key_does_not_depend_on_where_the_checkout_is(tmp_path, monkeypatch):
    """The converted real model records the absolute path of its package file (SOURCE.json, config.json's
    _name_or_path); the key of a committed lens must not, or every other checkout misses the lens and retrains it."""
    import json
    import shutil

    from jtc_utils.core.models import models, real_models

    ad = models.adapter(train.REAL_MODEL)
    here = registry.lens_model_identity(ad)
    folder = real_models.folder(train.REAL_MODEL)
    moved = tmp_path / folder.name
    moved.mkdir()
    for f in folder.iterdir():
        (moved / f.name).symlink_to(f) if f.name == "model.safetensors" else shutil.copy(f, moved / f.name)
    (moved / "SOURCE.json").write_text(
        json.dumps({"gguf": "/elsewhere/x.gguf", "sha256": real_models.spec(train.REAL_MODEL).sha256})
    )
    cfg = json.loads((moved / "config.json").read_text())
    (moved / "config.json").write_text(json.dumps({**cfg, "_name_or_path": "/elsewhere"}, indent=1))
    monkeypatch.setattr(real_models, "folder", lambda name, progress=None: moved)
    assert registry.lens_model_identity(ad) == here
    (moved / "config.json").write_text(json.dumps({**cfg, "vocab_size": cfg["vocab_size"] + 1}))
    assert registry.lens_model_identity(ad) != here  # what defines the model still counts


def _captions(page: str) -> dict:
    """figure data id -> the caption text of the stored page's figure that links it."""
    import html as html_lib
    import re

    import nbformat

    from jtc_utils.core.infra.paths import BOOK_DIR

    out = {}
    for c in nbformat.read(BOOK_DIR / f"{page}.ipynb", as_version=4).cells:
        for o in c.get("outputs", []):
            h = o.get("data", {}).get("text/html", "")
            for cap in re.findall(r"<figcaption.*?</figcaption>", "".join(h), re.S):
                for fig in re.findall(r"data/([\w-]+)\.json", cap):
                    out[fig] = html_lib.unescape(re.sub(r"<[^>]+>", "", cap))
    return out


def test_the_lens_captions_say_what_the_figures_show():
    """A caption says what is drawn: the models of the tuned-lens comparison are the figure's own (BERT-style ones
    among them), and the r² heatmaps' caption reads their colour map the way it runs."""
    from jtc_utils.lenses import plots

    caps = _captions("lenses")
    models = figdata.load("tl_cmp")["data"]["models"]
    assert all(m in caps["tl_cmp"] for m in models) and "GPT-style" not in caps["tl_cmp"]
    assert plots.R2_COLOURS in caps["nnjtc_fig2"] and "brighter" not in caps["nnjtc_fig2"]


def test_the_real_figure_2_trains_only_the_pairs_its_claims_read(fake):
    """The real model's Figure 2 (figures.fig2_real) on hidden states without a model: id and mat at every pair, NJTC
    and N-NJTC at each layer to the next and to the last and nowhere else, the r² to the last layer with its
    validation resamples, and gradient descent never below the closed-form optimum on its training loss."""

    class WithFits(Fake):
        def layer_r2(self):
            return linear.layer_pair_r2(self.X_train, self.X_val)

    exp = WithFits(fake.X_train, fake.X_val)
    exp.adapter.d = exp.X_train.shape[2]
    d = figures.fig2_real(exp)
    L = exp.n_layers
    read = {(a, a + 1) for a in range(L)} | {(a, L) for a in range(L)}
    assert d["pairs"] == len(read)
    for name in ("njtc", "nnjtc"):
        r2 = d[f"r2_{name}"]
        known = {(a, b) for a in range(L + 1) for b in range(a + 1, L + 1) if np.isfinite(r2[a, b])}
        assert known == read, name
        assert np.array_equal(d[f"r2_to_last_{name}"][0], r2[:L, L])
        boot = d["boot"][f"r2_to_last_{name}"]
        assert boot.shape == (200, 1, L) and np.all(np.abs(boot.mean(0)[0] - r2[:L, L]) < 0.05)
        assert d[f"loss_ratio_min_{name}"] >= 1 - 1e-3
    assert np.isfinite(d["r2_mat"][np.triu_indices(L + 1, 1)]).all()


def test_a_lens_table_from_an_underdetermined_fit_marks_every_fitted_lens():
    """The custom book at small sizes fits d × d maps on fewer samples than d: the table says so, row by row."""
    import copy

    from jtc_utils.core.analysis import linear
    from jtc_utils.evidence import figdata
    from jtc_utils.lenses import plots as lens_plots

    book = figdata.load("real_lens_table")["data"]
    frame, note = lens_plots.marked_table(book)
    assert note == "" and not any(lab.endswith(lens_plots.UNDERDETERMINED_MARK) for lab in frame.index)
    small = copy.deepcopy(book)
    small.update(linear.regime_note(300, book["d"]))
    frame, note = lens_plots.marked_table(small)
    marked = {
        lab[: -len(lens_plots.UNDERDETERMINED_MARK)]
        for lab in frame.index
        if lab.endswith(lens_plots.UNDERDETERMINED_MARK)
    }
    assert marked == {names.reader_name(lab) for lab, row in book["lenses"].items() if row["params"] > 0}
    assert names.reader_name("id") not in marked
    assert "fitted on 300 samples of dimension 576" in note and "underdetermined" in note


def test_the_convergence_rule_trains_each_pair_to_its_optimum_and_says_when_it_did_not(tmp_path):
    """Under lowrank.CONVERGED a pair stops once it is within 1% of its function class's closed-form optimum (rrr_r
    for NJTC, arrr_r for N-NJTC) on the rows it trains on or on those it stops on, and says so; an unconverged run
    (one epoch, no doubling) says it is not; per-pair stopping keeps a pair as it is trained alone; a finished run's
    checkpoint is resumed, not retrained."""
    X = chain(n=4000)[:, :3000]  # enough samples per parameter that the optimum is not an overfit
    L = X.shape[0] - 1
    pairs = [(layer, L) for layer in range(L)]
    fit, _ = lowrank.split_indices(X.shape[1], 0)
    for norm in (False, True):
        r = lowrank.train(X, pairs, rank=2, norm=norm, seed=0, recipe=lowrank.CONVERGED)
        best = [closed_form.RankFamily(X[s][fit], X[t][fit], affine=norm).train_sse(2) / len(fit) for s, t in pairs]
        np.testing.assert_allclose(r["optimum_loss"], best, rtol=1e-10)
        gap = np.minimum(
            (r["fit_loss"] - best) / best, (r["stop_loss"] - r["optimum_stop_loss"]) / r["optimum_stop_loss"]
        )
        np.testing.assert_allclose(r["gap"], gap, rtol=1e-9, atol=1e-12)
        assert np.array_equal(r["converged"] > 0, gap <= lowrank.CONVERGED["converge_gap"])
        assert r["converged"].all(), (norm, r["gap"], r["epochs"])
        card = artifacts.convergence(r)  # the card's line reads the rule the run was trained under
        assert card["converged"] and card["pairs_converged"] == len(pairs) and "within 1%" in card["criterion"]
        one_epoch = {**lowrank.CONVERGED, "max_epochs": 1, "doublings": 0}
        short = lowrank.train(X, pairs, rank=2, norm=norm, seed=0, recipe=one_epoch)
        assert not short["converged"].any() and (short["epochs"] == 1).all(), short["gap"]  # and says so
        assert not artifacts.convergence(short)["converged"] and artifacts.convergence(short)["pairs_converged"] == 0
    alone = lowrank.train(X, pairs[:1], rank=2, norm=False, seed=3, recipe=lowrank.CONVERGED)
    batch = lowrank.train(X, pairs, rank=2, norm=False, seed=3, recipe=lowrank.CONVERGED)
    np.testing.assert_allclose(lowrank.affine_form(batch)[0][0], lowrank.affine_form(alone)[0][0], rtol=1e-4, atol=1e-5)
    assert batch["epochs"][0] == alone["epochs"][0] and batch["best_epoch"][0] == alone["best_epoch"][0]
    with tuned.checkpoints(tmp_path / "work"):
        first = lowrank.train(X, pairs, rank=2, norm=False, seed=1, recipe=lowrank.CONVERGED)
        assert (tmp_path / "work" / "lowrank.pt").is_file()
        again = lowrank.train(X, pairs, rank=2, norm=False, seed=1, recipe=lowrank.CONVERGED)
    np.testing.assert_array_equal(first["A"], again["A"])
    np.testing.assert_array_equal(first["epochs"], again["epochs"])


def test_the_book_reads_a_models_converged_lenses_once_every_run_exists():
    """The stand-in's NJTC and N-NJTC are read under the convergence rule, all five seeds of the seed rule, stored
    under their plain names; the real model's keep the capped recipe until every converged run of it exists, those
    stored beside under tagged names (staged), so that neither replaces the other."""
    assert (
        registry.lowrank_recipe("tiny-gpt2-xl") is lowrank.CONVERGED and train.seeds_of("tiny-gpt2-xl") == train.SEEDS
    )
    assert registry.lowrank_recipe(train.REAL_MODEL) is lowrank.RECIPE and "converge_gap" not in lowrank.RECIPE
    assert train.seeds_of(train.REAL_MODEL) == (0,) and train.seeds_of(train.REAL_MODEL, converged=True) == train.SEEDS
    assert {k: v for k, v in lowrank.CONVERGED.items() if k in lowrank.RECIPE} == lowrank.RECIPE
    assert registry.staged(train.REAL_MODEL, lowrank.CONVERGED) and not registry.staged(
        "tiny-gpt2-xl", lowrank.CONVERGED
    )
    assert artifacts.path("m", "njtc_5_s0" + registry.CONVERGED_TAG).name == "njtc_5_s0.converged.safetensors"
    for seed in train.SEEDS:  # the stand-in's: under their plain names, trained under the convergence rule
        for name in (f"njtc_4_s{seed}", f"nnjtc_4_s{seed}", f"njtc_4_pairs_s{seed}", f"nnjtc_4_pairs_s{seed}"):
            assert artifacts.key_of("tiny-gpt2-xl", name)["recipe"] == lowrank.CONVERGED, name


def test_a_staged_lens_is_no_pages_input_and_not_in_the_manifest(tmp_path, monkeypatch):
    """A lens trained under the new recipe and stored beside the book's (``*.converged.safetensors``) changes no
    page's inputs and is not in the zoo's manifest until the book reads it; a lens the book reads is both."""
    from jtc_utils.book.build import staleness
    from jtc_utils.core.models import catalogue

    zoo = tmp_path / "zoo"
    (zoo / "lenses" / "m").mkdir(parents=True)
    read, staged = (
        zoo / "lenses" / "m" / "njtc_5_s0.safetensors",
        zoo / "lenses" / "m" / "njtc_5_s0.converged.safetensors",
    )
    read.write_bytes(b"a")
    staged.write_bytes(b"b")
    monkeypatch.setattr(staleness, "ZOO_DIR", zoo)
    monkeypatch.setattr(catalogue, "ZOO_DIR", zoo)
    inputs = staleness._input_files("lenses")
    assert read in inputs and staged not in inputs
    assert catalogue._zoo_files() == [read]
    assert artifacts.path("m", "njtc_5_s0" + registry.CONVERGED_TAG).name == staged.name


def test_unstaging_a_converged_lens_makes_it_the_one_the_book_reads(tmp_path, monkeypatch):
    """A staged lens (trained under the convergence rule beside the book's) stored under its plain name replaces the
    capped one there, is found under its key, names itself so on its card, and leaves no staged file behind; a
    staged lens that does not exist is a clear error naming the command that trains it."""
    monkeypatch.setattr(artifacts, "ZOO_DIR", tmp_path)
    key = {"lens": "njtc_4", "recipe": lowrank.CONVERGED}
    arrays = {"A": np.ones((2, 3, 1)), "B": np.zeros((2, 1, 3))}
    artifacts.store("m", "njtc_4_s0", {"lens": "njtc_4", "recipe": lowrank.RECIPE}, arrays, {"lens": "njtc_4_s0"})
    staged = "njtc_4_s0" + registry.CONVERGED_TAG
    artifacts.store("m", staged, key, {**arrays, "A": 2 * arrays["A"]}, {"lens": staged})
    f = artifacts.unstage("m", staged, "njtc_4_s0")
    assert f == artifacts.path("m", "njtc_4_s0") and not artifacts.path("m", staged).exists()
    hit = artifacts.lookup("m", "njtc_4_s0", key)
    assert hit is not None and np.array_equal(hit["A"], 2 * arrays["A"]) and hit["card"]["lens"] == "njtc_4_s0"
    with pytest.raises(FileNotFoundError, match="--converged"):
        artifacts.unstage("m", staged, "njtc_4_s0")


def test_a_curve_drawn_over_another_is_named_in_the_caption_and_a_distinct_one_is_not():
    """The grid draws lenses in order, a later one on top: a curve within HIDDEN_SHARE of another in every panel
    is named as hidden; one apart in a single panel (here Precision@1 shifted by a tenth of its range) is not."""
    import numpy as np

    from jtc_utils.lenses import plots

    rng = np.random.default_rng(0)
    base = {key: rng.uniform(0, 1, 12) for key in plots.GRID_KEYS}
    c = {
        "id": {key: v + 1 for key, v in base.items()},
        "mat": base,
        "mat+b": {key: v + 0.001 for key, v in base.items()},
        "tuned": {key: v + (0.2 if key == "p@1" else 0.0) for key, v in base.items()},
    }
    assert plots.hidden_under(c) == [("mat", "mat+b")]
    note = plots.hidden_note(c)
    assert "mat + b" in note and "tuned lens" not in note
    assert plots.hidden_note({k: c[k] for k in ("id", "tuned")}) == ""


def test_an_unconverged_run_leaves_the_lens_claims_it_reads_unjudged():
    """Issue 77: the stand-in's NJTC and N-NJTC runs each met the convergence rule, so the N claims are judged on
    them; the same numbers with one run stopped short of its criterion (an unconverged run) are not judged, by the
    convergence check alone, whatever their margin."""
    from jtc_utils.evidence import claims
    from jtc_utils.lenses import claims as lens_claims

    base = claims.getter({})
    for cid, fig in (("N1", "nnjtc_fig3"), ("N6", "nnjtc_fig2")):
        d = figdata.load(fig)["data"]
        assert d["converged"] and all(d["converged"].values()), fig
        judged = lens_claims.check(cid, base, "tiny")
        assert judged["status"] != claims.NOT_JUDGED_STATUS and all(c["passed"] for c in judged["checks"]), cid
        short = {**d, "converged": {**d["converged"], next(iter(d["converged"])): False}}
        r = lens_claims.check(cid, lambda f, fig=fig, short=short: short if f == fig else base(f), "tiny")
        assert r["status"] == claims.NOT_JUDGED_STATUS and r["verdict"] is None, cid
        assert [c["name"] for c in r["checks"] if not c["passed"]] == ["convergence of NJTC and N-NJTC"], cid
        assert r["margin"] == judged["margin"], cid  # the numbers read are the same


def test_a_run_converged_when_its_record_says_so():
    """A low-rank run converged when every pair is within its gap; a tuned lens when its last 10% of steps improve
    by at most 1%; a run whose record does not say (a lens trained before the criterion was recorded) has not."""
    assert figures.converged({"gap": np.array([0.001, 0.009]), "converged": np.array([1, 1])})
    assert not figures.converged({"gap": np.array([0.001, 0.2]), "converged": np.array([1, 0])})
    assert figures.converged({"improvement": np.array([0.004])})
    assert not figures.converged({"improvement": np.array(0.0225)})
    assert not figures.converged({"epochs": np.array(300), "train_loss": np.array([1.0])})
