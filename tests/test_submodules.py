"""The GPT-2 block runner and the sub-module shortcuts of paper section 6 (spec 7)."""

import numpy as np
import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from helpers import save_random_model
from jtc_utils import blocks, models, predictions, submodules
from jtc_utils.experiment import Experiment
from jtc_utils.samples import make_samples


@pytest.fixture(scope="module")
def exp(tmp_path_factory):
    path = save_random_model("gpt2", tmp_path_factory.mktemp("gpt2"))
    return Experiment(str(path), "news", n_train=300, n_val=40)


def _max_diff(model, ids):
    ad = models.Adapter(model=model, tokenizer=None, name="test")
    with torch.inference_mode():
        ref = ad.forward_states(ids, torch.ones_like(ids))
        ours = blocks.GPT2Blocks(model).states(ids)
    return (ref - ours).abs().max().item()


def test_runner_reproduces_a_zoo_model():
    ad = models.adapter("tiny-gpt2-medium")
    s = make_samples(ad.tokenizer, "gpt2", "encyclopedia", "validation", n=24)
    _, inp, _ = next(submodules._prefix_batches(s, 24))
    assert _max_diff(ad.model, inp) <= 1e-4


def test_runner_reproduces_a_model_with_the_real_gpt2_small_shape():
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=4096, n_layer=12, n_embd=768, n_head=12)).eval()
    ids = torch.randint(0, 4096, (2, 48))
    assert _max_diff(model, ids) <= 1e-4


def test_recorded_vectors_are_the_model_states(exp):
    vecs = submodules.record(submodules.runner(exp), exp.train)
    L = exp.n_layers
    for j in range(L):
        np.testing.assert_allclose(vecs[0][j], exp.X_train[j], atol=1e-5)  # block input = h^j
    # the second residual r + f of the last block is raw h^L
    np.testing.assert_allclose(vecs[3][L - 1] + vecs[5][L - 1], exp.X_train[L], atol=1e-5)


def test_mat_attn_on_single_vectors_equals_the_full_prefix(exp):
    run = submodules.runner(exp)
    W = torch.from_numpy(submodules.fit(exp)["attn"])
    _, inp, pos = next(submodules._prefix_batches(exp.val, 16))
    rows = torch.arange(len(pos))
    with torch.inference_mode():
        S = exp.adapter.forward_states(inp, torch.ones_like(inp))
        for start in range(exp.n_layers):
            prefix = run.run(S[start], start, lambda j: {2: W[j]})[rows, pos]
            single = run.run(S[start][rows, pos], start, lambda j: {2: W[j]})
            torch.testing.assert_close(prefix, single, rtol=0, atol=1e-5)


@pytest.mark.parametrize("mapping", ["mat_ffn", "mat_ln1_ln2", "mat_attn"])
def test_wavefront_equals_one_start_layer_at_a_time(exp, mapping):
    run = submodules.runner(exp)
    maps = submodules.fit(exp)
    fast = submodules.cast(exp, mapping, maps)
    rep = submodules._replacements(maps, mapping)
    L = exp.n_layers
    np.testing.assert_array_equal(fast[L], exp.X_val[L])  # starting at the last layer is the model itself
    with torch.inference_mode():
        for idx, inp, pos in submodules._prefix_batches(exp.val):
            S = exp.adapter.forward_states(inp, torch.ones_like(inp))
            for start in range(L):
                slow = run.run(S[start], start, rep)[torch.arange(len(idx)), pos].numpy()
                np.testing.assert_allclose(fast[start, idx], slow, atol=1e-5)


def test_submodule_predictions_follow_section_4(exp):
    r = submodules.per_sample(exp)
    L = exp.n_layers
    assert set(r["top1"]) == {*submodules.MAPPINGS, "mat"}
    for m in submodules.MAPPINGS:
        assert r["precision"][m][1][L].all()  # at l = L every mapping is the model itself
        assert np.all(r["precision"][m][1] <= r["precision"][m][5])
    np.testing.assert_array_equal(r["top1"]["mat"], exp.predictions["top1"]["mat"])
    curves = predictions.curves(r)
    assert curves["mat_attn"]["surprisal"][L] == pytest.approx(curves["mat"]["surprisal"][L])


def test_other_families_are_refused_with_the_supported_ones(tmp_path):
    path = save_random_model("bert", tmp_path / "bert")
    bert = Experiment(str(path), "news", n_train=100, n_val=10)
    with pytest.raises(blocks.UnsupportedModelError, match="gpt2"):
        submodules.fit(bert)


def test_matrices_of_the_wrong_shape_are_refused_at_load(exp, tmp_path):
    maps = submodules.fit(exp)
    good = tmp_path / "good.npz"
    np.savez(good, **maps)
    assert set(submodules.load_maps(good, exp)) == {"ln_1", "attn", "ln_2", "ffn"}
    bad = tmp_path / "bad.npz"
    np.savez(bad, **{**maps, "attn": maps["attn"][:, :-1]})
    with pytest.raises(ValueError, match="has shape"):
        submodules.load_maps(bad, exp)
    with pytest.raises(ValueError, match="missing"):
        submodules.check_maps({"attn": maps["attn"]}, submodules.runner(exp))
    with pytest.raises(ValueError, match="unknown sub-module mapping"):
        submodules.cast(exp, "mat_everything", maps)
