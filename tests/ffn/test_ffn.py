"""FFN sub-updates (jtc_utils.ffn) on a tiny random GPT-2: the decomposition is exact, scores are additive, the
vectorised analyses equal plain loops, and bad input is refused with a clear message."""

import numpy as np
import pytest
import torch

from jtc_utils.core.models import catalogue
from jtc_utils.core.data import profiles
from jtc_utils.core.models.models import Adapter
from jtc_utils.embedded import corpus, lexicon
from jtc_utils.ffn import FFN, NotAdditiveError, clusters, concepts, exit_rule, steering, subupdates, vocab
from jtc_utils.evidence import figdata
from jtc_utils.ffn import figures as ffig

pytestmark = [pytest.mark.ffn]  # FFN sub-updates


@pytest.fixture(scope="module")
def tiny():
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=3, n_embd=16, n_head=2, vocab_size=4096, n_positions=64, activation_function="gelu_new")
    model = GPT2LMHeadModel(cfg).eval()
    tok = AutoTokenizer.from_pretrained(str(catalogue.ZOO_DIR / "tiny-gpt2"))
    return Adapter(model=model, tokenizer=tok, name="random-gpt2")


@pytest.fixture(scope="module")
def states(tiny):
    """Mid-block states r, block outputs h and inputs from one random batch, through the model's own modules."""
    ids = torch.randint(0, 4096, (4, 10))
    caught = {}
    hooks = [
        b.ln_2.register_forward_pre_hook(lambda m, a, j=j: caught.__setitem__(j, a[0]))
        for j, b in enumerate(tiny.model.transformer.h)
    ]
    with torch.no_grad():
        hs = tiny.forward_states(ids, torch.ones_like(ids))
    for h in hooks:
        h.remove()
    R = np.stack([caught[j].reshape(-1, 16).numpy() for j in range(3)])
    return R, hs.reshape(4, -1, 16).numpy()


def test_decomposition_equals_the_ffn_and_the_block(tiny, states):
    R, H = states
    ffn = FFN(tiny)
    for j in range(ffn.n_layers):
        m = ffn.coefficients(j, R[j])
        o = ffn.output(j, m)
        mlp = tiny.model.transformer.h[j].mlp
        with torch.no_grad():
            ref = mlp(tiny.model.transformer.h[j].ln_2(torch.as_tensor(R[j]))).numpy()
        np.testing.assert_allclose(o, ref, atol=1e-5)
        np.testing.assert_allclose(R[j] + o, H[j + 1], atol=1e-5)
        np.testing.assert_allclose(ffn.values(j), mlp.c_proj.weight.detach().numpy())  # values are rows


def test_scores_are_additive(tiny, states):
    R, _ = states
    ffn = FFN(tiny)
    E = tiny.model.lm_head.weight.detach().double().numpy()
    m = ffn.coefficients(1, R[1])
    w = np.arange(len(m)) * 7 % 4096
    scores = m * (E[w] @ ffn.values(1).T)  # score_i(w) of every sub-update
    o = ffn.output(1, m)
    np.testing.assert_allclose(scores.sum(1) + E[w] @ ffn.value_bias(1), (o * E[w]).sum(1), rtol=1e-10, atol=1e-12)


def test_dominance_equals_a_naive_sort():
    rng = np.random.default_rng(0)
    m, norms = rng.standard_normal((30, 64)), rng.random(64) + 0.1
    idx, share = subupdates.dominant(m, norms)
    for s in range(30):
        c = np.abs(m[s]) * norms
        naive = sorted(range(64), key=lambda i: -c[i])[:10]
        assert idx[s].tolist() == naive
        assert share[s] == pytest.approx(c[naive].sum() / c.sum())
        assert share[s] >= 10 / 64 - 1e-12  # the top ten hold at least the uniform share


def test_chunked_top_k_equals_brute_force(tiny):
    V = np.random.default_rng(1).standard_normal((50, 16))
    ids, vals = vocab.top_tokens(tiny, V, 30, chunk=7)
    logits = V.astype(np.float32) @ tiny.model.lm_head.weight.detach().numpy().T
    brute = np.argsort(-logits, axis=1, kind="stable")[:, :30]
    np.testing.assert_array_equal(np.sort(ids, 1), np.sort(brute, 1))
    low, _ = vocab.top_tokens(tiny, V, 5, chunk=7, bottom=True)
    np.testing.assert_array_equal(np.sort(low, 1), np.sort(np.argsort(logits, axis=1)[:, :5], 1))


def test_saturation_and_events_equal_per_sample_loops():
    rng = np.random.default_rng(2)
    L, n = 6, 200
    top1 = rng.integers(0, 4, (L, n))
    w = rng.integers(0, 4, (L, n))
    rank_w = rng.integers(0, 5, (L, n))
    sat = subupdates.saturation(top1)
    np.testing.assert_array_equal(sat, subupdates.saturation_loop(top1))
    ev, loop = subupdates.events(w, top1, rank_w, sat), subupdates.events_loop(w, top1, rank_w, sat)
    for k in ev:
        np.testing.assert_array_equal(ev[k], loop[k])


def test_overlap_exit_rule_equals_the_naive_rule():
    rng = np.random.default_rng(3)
    L = 5
    train = rng.integers(0, 6, (L, 80, 10))
    sat = rng.integers(1, L + 1, 80)
    test = rng.integers(0, 6, (L, 50, 10))
    test[:, :25] = train[:, :25]  # some test samples resemble training samples
    np.testing.assert_array_equal(
        exit_rule.rule_exit(train, sat, test, chunk=7), exit_rule.rule_exit_naive(train, sat, test)
    )


def test_every_generated_word_gets_exactly_one_class():
    for s in corpus.training_sentences(300) + corpus.pool("news", "validation", n=200):
        for word, label in s.words():
            assert lexicon.word_class(word, label) in lexicon.CLASSES, (word, label)
    assert lexicon.word_class("March", "fact") == "month"
    assert lexicon.word_class("1907", "fact") == "year"


def test_concept_rule_counts_classes_with_four_tokens():
    tc = {i: ("month" if i < 5 else "city" if i < 8 else lexicon.MIXED) for i in range(30)}
    cov, top, found = concepts.concept_of(list(range(30)), tc)
    assert found == {"month": 5} and top == "month" and cov == pytest.approx(5 / 30)
    assert concepts.concept_of(list(range(30)), tc, exclude=("month",))[0] == 0


@pytest.mark.slow
def test_the_concept_study_counts_every_list_alike_and_reads_the_null_per_layer():
    """F1 and F2 read the values and Gaussian vectors counted as the whole updates are (stopword patterns left out,
    which can only lower a list's coverage); F3 reads each layer's coverage under the shuffled labelling, whose mean
    over the layers is the table's overall shuffled coverage."""
    c = ffig.concept_study("tiny-gpt2")
    per, summary = c["per_layer"], c["summary"]
    for name in ("values", "gaussian"):
        for every, alike in zip(per[name], per[f"{name}_nostop"]):
            assert (alike <= every + 1e-12).all() and (alike < every).any()
        assert summary[f"{name}_nostop"] == pytest.approx(np.concatenate(per[f"{name}_nostop"]).mean())
    assert len(per["values_shuffled"]) == c["n_layers"]
    assert np.mean([v.mean() for v in per["values_shuffled"]]) == pytest.approx(summary["values_shuffled"])
    # the null is what the classes find once shuffled: far below the values' coverage under the true classes
    assert all(s.mean() < v.mean() for s, v in zip(per["values_shuffled"], per["values"]))


def test_clusters_and_extreme_share():
    rng = np.random.default_rng(4)
    base = rng.standard_normal((3, 8))
    V = np.concatenate([b + 0.01 * rng.standard_normal((10, 8)) for b in base])
    ids = clusters.cluster(V, 3)
    assert len(set(ids[:10])) == len(set(ids[10:20])) == len(set(ids[20:])) == 1 and len(set(ids)) == 3
    scores = np.zeros((1, 4, 30))
    scores[0, :, 5] = 100  # one value explains every extreme score
    x = clusters.extreme_share(scores, ids.reshape(1, 30), top=0.03)
    assert x["clusters"] == 1 and x["values_share"] == pytest.approx(10 / 30)
    assert x["top_layer_share"] == 1.0


def _toy_analysis(L=3, n=40, seed=0):
    """A sub-update analysis of the shape :func:`subupdates.compute` returns, with block 1 (row 1) scoring a hundred
    times the others (a massive activation) and every sample's events at block 2 (saturation) and 1 (elimination)."""
    rng = np.random.default_rng(seed)
    scale = np.array([1.0, 100.0, 1.0])[:L, None, None]
    a = {}
    for key in ("w", "f"):
        for tail in ("", "_random"):
            raw = rng.standard_normal((L, n, 10)) * scale
            a[f"stats_{key}{tail}"] = np.stack([raw.max(2), raw.mean(2), raw.min(2)], 2)
    a["abs_w"], a["abs_w_random"] = np.abs(rng.standard_normal((L, n))) * scale[..., 0], np.ones((L, n)) * scale[..., 0]
    a["sat"] = np.full(n, 2)
    a["event_saturation"], a["event_elimination"] = np.full(n, 3), np.full(n, 2)
    a["scores_w"] = (rng.standard_normal((L, n, 16)) * scale).astype(np.float32)
    return a


def test_scores_are_read_in_their_layers_unit_so_that_no_block_outweighs_the_others():
    """A block whose scores are a hundred times the others' has a unit a hundred times theirs: its events' scaled
    scores are of the others' size, it holds every extreme raw score but only its share of the scaled ones, and the
    pooled mean |score| in units is near 1 for the random ten whatever the raw scale."""
    a = _toy_analysis()
    unit = subupdates.layer_unit(a)
    assert 50 < unit[1] / unit[0] < 200 and 0.5 < unit[2] / unit[0] < 2
    t = subupdates.event_table(a)
    raw, scaled = t["elimination"]["dominant"], t["elimination"]["dominant_scaled"]  # events at block 2 (row 1)
    assert abs(raw["max"]) > 20 * abs(scaled["max"]) and 0.1 < scaled["max"] < 1
    assert set(t["elimination"]["boot"]) == {"dominant", "random", "dominant_scaled", "random_scaled"}
    ab = subupdates.abs_scores(a)
    assert ab["abs_random_scaled"] < ab["abs_random"] / 10
    ids = np.arange(a["scores_w"].shape[0] * 16).reshape(-1, 16) % 5
    assert clusters.extreme_share(a["scores_w"], ids, top=0.05)["top_layer_share"] == 1.0  # raw: block 2 alone
    assert clusters.extreme_share(subupdates.scaled_scores(a), ids, top=0.05)["top_layer_share"] < 0.7


def test_mat_ffn_identity_on_random_data():
    from jtc_utils.core.analysis import linear

    rng = np.random.default_rng(5)
    U, V, b = rng.standard_normal((200, 6)), rng.standard_normal((12, 6)), rng.standard_normal(6)
    M = np.tanh(U @ rng.standard_normal((6, 12)))
    O = M @ V + b
    P = linear.pinv(U)
    np.testing.assert_allclose(linear.fit(U, O), (P @ M) @ V + P.sum(1, keepdims=True) * b[None], atol=1e-10)


def test_bad_input_is_refused(tiny):
    from transformers import BertConfig, BertForMaskedLM

    bert = Adapter(
        model=BertForMaskedLM(
            BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, vocab_size=100)
        ),
        tokenizer=None,
        name="b",
    )
    with pytest.raises(NotAdditiveError, match="post-norm"):
        FFN(bert)
    ffn = FFN(tiny)
    with pytest.raises(ValueError, match="block index j must be between 0 and 2"):
        ffn.values(3)
    with pytest.raises(ValueError, match="neuron index"):
        ffn.check_neuron(ffn.d_ff)
    with pytest.raises(ValueError, match="unknown word class"):
        lexicon.check_class("colour")
    with pytest.raises(ValueError, match="finite"):
        steering.check_coefficient(float("nan"))
    with pytest.raises(ValueError, match="unknown feature"):
        exit_rule.classifier_exit(None, "q")


def test_steering_forces_the_coefficients(tiny):
    ids = torch.randint(0, 4096, (2, 5))
    c_proj = tiny.model.transformer.h[1].mlp.c_proj

    def coefficients():
        caught = {}
        h = c_proj.register_forward_pre_hook(lambda m, a: caught.__setitem__("m", a[0]))  # runs after the forcing hook
        with torch.no_grad():
            tiny.model(ids)
        h.remove()
        return caught["m"]

    with steering.forced(tiny.model, [(1, 3), (1, 7)], 3.0):
        forced = coefficients()
    assert torch.all(forced[..., [3, 7]] == 3.0)
    assert not torch.all(coefficients()[..., [3, 7]] == 3.0)  # the hooks are gone afterwards


def test_invariants_hold_on_the_stored_ffn_numbers():
    f6 = figdata.load("geva_fig6")["data"]
    assert all(t >= f6["uniform"] - 1e-12 for t in f6["t10"])  # the top ten hold at least the uniform share
    t6 = figdata.load("geva_tab6")["data"]["rules"]
    assert t6["saturation oracle"]["accuracy"] == 1
    for name, r in t6.items():
        assert 0 <= r["accuracy"] <= 1 and r["saved"] <= t6["saturation oracle"]["saved"] + 1e-9 or r["accuracy"] < 1, (
            name
        )
    t2 = figdata.load("geva_tab2")["data"]["models"]
    for m, row in t2.items():
        assert 0 <= row["chance_no_big"] <= row["chance"] <= 1, m
    rg = figdata.load("real_geva")["data"]
    assert all(max(g["vs_module"], g["vs_hidden"]) < 1e-5 * g["scale"] + 1e-4 for g in rg["decomposition"])


def test_the_word_classes_are_computed_once_whether_the_profile_is_named_or_given():
    model = profiles.get("tiny").gpt[0]
    one = ffig.token_classes(model)
    assert ffig.token_classes(model, "tiny") is one and ffig.token_classes(model, profiles.get("tiny"), 0) is one
