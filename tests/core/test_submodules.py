"""The block runners and the sub-module shortcuts of paper section 6 (spec 7), on GPT-2 (the paper's setting) and
on BERT (this book's extension)."""

import numpy as np
import pytest
import torch
from helpers import save_random_model
from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

from jtc_utils.core.models import batching, blocks, models
from jtc_utils.core.analysis import hidden, readout
from jtc_utils.core.analysis.experiment import Experiment
from jtc_utils.core.data.samples import make_samples
from jtc_utils.core.analysis import submodules

pytestmark = [pytest.mark.jtc]  # the JTC paper's method, in the core: its chapters select these tests

FAMILIES = ("gpt2", "llama", "bert")


@pytest.fixture(scope="module", params=FAMILIES)
def exp(request, tmp_path_factory):
    path = save_random_model(request.param, tmp_path_factory.mktemp(request.param))
    return Experiment(str(path), "news", n_train=300, n_val=40)


def _max_diff(model, ids, mask=None):
    ad = models.Adapter(model=model, tokenizer=None, name="test")
    mask = torch.ones_like(ids) if mask is None else mask
    with torch.inference_mode():
        ref = ad.forward_states(ids, mask)
        ours = blocks.runner_for(model).states(ids, mask)
    real = mask.bool()[None, :, :, None]  # compare at the real tokens (padding rows are never read)
    return (ref - ours).abs().masked_fill(~real, 0).max().item()


@pytest.mark.parametrize("name", ["tiny-gpt2-medium", "tiny-bert-large"])
def test_runner_reproduces_a_zoo_model(name):
    ad = models.adapter(name)
    s = make_samples(ad.tokenizer, ad.family, "encyclopedia", "validation", n=24)
    _, inp, mask, _ = next(hidden.padded_batches(ad.family, s, 24, batching.pad_id(ad.tokenizer)))
    assert (mask == 0).any()  # right padding is part of what is checked
    assert _max_diff(ad.model, inp, mask) <= 1e-4


def test_runner_reproduces_a_model_with_the_real_gpt2_small_shape():
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=4096, n_layer=12, n_embd=768, n_head=12)).eval()
    ids = torch.randint(0, 4096, (2, 48))
    assert _max_diff(model, ids) <= 1e-4


def test_runner_reproduces_a_model_with_smollm2s_llama_shape():
    """SmolLM2-135M's block shape (width 576, 9 heads over 3 key-value heads, gated FFN 1536, rotary theta 1e5) on
    6 of its 30 layers, with right padding."""
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=4096,
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=6,
        num_attention_heads=9,
        num_key_value_heads=3,
        rms_norm_eps=1e-5,
        tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": 100000.0},
    )
    model = LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, 4096, (2, 40))
    mask = torch.ones_like(ids)
    mask[1, 25:] = 0
    assert _max_diff(model, ids, mask) <= 1e-4


def test_runner_reproduces_a_model_with_the_real_bert_base_shape():
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=4096)).eval()  # 12 layers, width 768, 12 heads
    ids = torch.randint(1, 4096, (2, 48))
    mask = torch.ones_like(ids)
    mask[1, 30:] = 0
    assert _max_diff(model, ids, mask) <= 1e-4


def test_recorded_vectors_are_the_model_states(exp):
    run = submodules.runner(exp)
    vecs = submodules.record(run, exp.train, batching.pad_id(exp.adapter.tokenizer))
    L = exp.n_layers
    for j in range(L):
        np.testing.assert_allclose(vecs[0][j], exp.X_train[j], atol=1e-5)  # block input = h^j
    if isinstance(run, blocks.PreNormBlocks):  # the second residual r + f of the last block is raw h^L
        np.testing.assert_allclose(vecs[3][L - 1] + vecs[5][L - 1], exp.X_train[L], atol=1e-5)
    else:  # the output layer norm of the last block is h^L
        np.testing.assert_allclose(vecs[6][L - 1], exp.X_train[L], atol=1e-5)


def test_unknown_parts_are_refused(exp):
    run = submodules.runner(exp)
    with pytest.raises(ValueError, match="unknown sub-module"):
        run.block(torch.zeros(2, exp.adapter.d), 0, {"mlp": torch.eye(exp.adapter.d)})
    with pytest.raises(ValueError, match="whole sequences"):
        run.block(torch.zeros(2, exp.adapter.d), 0)


def test_mat_attn_on_single_vectors_equals_the_full_input(exp):
    run = submodules.runner(exp)
    W = torch.from_numpy(submodules.fit(exp)["attn"])
    _, inp, mask, pos = next(submodules.sample_batches(exp, exp.val, 16))
    rows = torch.arange(len(pos))
    with torch.inference_mode():
        S = exp.adapter.forward_states(inp, mask)
        for start in range(exp.n_layers):
            full = run.run(S[start], start, lambda j: {"attn": W[j]}, mask=mask)[rows, pos]
            single = run.run(S[start][rows, pos], start, lambda j: {"attn": W[j]})
            torch.testing.assert_close(full, single, rtol=0, atol=1e-5)


@pytest.mark.parametrize("mapping", ["mat_ffn", "mat_ln1_ln2", "mat_attn"])
def test_wavefront_equals_one_start_layer_at_a_time(exp, mapping):
    run = submodules.runner(exp)
    maps = submodules.fit(exp)
    fast = submodules.cast(exp, mapping, maps)
    rep = submodules._replacements(maps, mapping, run.device)
    L = exp.n_layers
    # starting at the last layer is the model itself (up to the float rounding of other batches: the experiment's
    # states may be sliced out of an extraction of more sentences, see jtc_utils.core.analysis.hidden)
    np.testing.assert_allclose(fast[L], exp.X_val[L], rtol=0, atol=1e-5)
    with torch.inference_mode():
        for idx, inp, mask, pos in submodules.sample_batches(exp, exp.val):
            S = exp.adapter.forward_states(inp, mask)
            for start in range(L):
                slow = run.run(S[start], start, rep, mask=mask)[torch.arange(len(idx)), pos].numpy()
                np.testing.assert_allclose(fast[start, idx], slow, atol=1e-5)


def test_bert_padding_does_not_leak_into_the_real_tokens():
    """A BERT sentence gives the same mat_ffn states alone and right-padded in a batch with a longer one."""
    ad = models.adapter("tiny-bert-base")
    run = blocks.runner_for(ad.model)
    s = make_samples(ad.tokenizer, "bert", "encyclopedia", "validation", n=8)
    W = torch.randn(run.n_layers, run.d, run.d) * 0.1
    _, inp, mask, _ = next(hidden.padded_batches("bert", s, 8, batching.pad_id(ad.tokenizer)))
    short = int(mask.sum(1).argmin())
    n = int(mask[short].sum())
    assert n < inp.shape[1]
    with torch.inference_mode():
        S = ad.forward_states(inp, mask)
        batched = run.run(S[2], 2, lambda j: {"ffn": W[j]}, mask=mask)[short, :n]
        alone = run.run(S[2][short : short + 1, :n], 2, lambda j: {"ffn": W[j]})[0]
    torch.testing.assert_close(batched, alone, rtol=0, atol=1e-5)


def test_submodule_predictions_follow_section_4(exp):
    r = submodules.per_sample(exp)
    L = exp.n_layers
    assert set(r["top1"]) == {*submodules.MAPPINGS, "mat"}
    for m in submodules.MAPPINGS:
        assert r["precision"][m][1][L].all()  # at l = L every mapping is the model itself
        assert np.all(r["precision"][m][1] <= r["precision"][m][5])
    np.testing.assert_array_equal(r["top1"]["mat"], exp.predictions["top1"]["mat"])
    curves = readout.curves(r)
    assert curves["mat_attn"]["surprisal"][L] == pytest.approx(curves["mat"]["surprisal"][L])


def _other_decoder(family: str):
    """A small random decoder of the families beyond GPT-2 and LLaMA, with the features their runners must get
    right: Mistral's sliding window and Phi-3's (8 positions, shorter than the test's rows), Phi-3's fused
    projections and rotary positions on half of each head, OPT's biases and learned positions, and OPT's
    embeddings narrower than its blocks (``project_in``)."""
    from transformers import MistralConfig, MistralForCausalLM, OPTConfig, OPTForCausalLM, Phi3Config, Phi3ForCausalLM

    torch.manual_seed(0)
    small = dict(
        vocab_size=256,
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=4,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    if family == "mistral":
        return MistralForCausalLM(
            MistralConfig(intermediate_size=64, num_key_value_heads=2, sliding_window=8, **small)
        ).eval()
    if family == "phi3":
        return Phi3ForCausalLM(
            Phi3Config(
                intermediate_size=64,
                num_key_value_heads=2,
                sliding_window=8,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
                **small,
            )
        ).eval()
    proj = 16 if family == "opt-narrow" else 32
    return OPTForCausalLM(OPTConfig(ffn_dim=64, word_embed_proj_dim=proj, **small)).eval()


@pytest.mark.parametrize("family", ["mistral", "phi3", "opt", "opt-narrow"])
def test_runner_reproduces_mistral_phi3_and_opt_and_their_ffn_decomposes(family):
    from jtc_utils.ffn import FFN

    model = _other_decoder(family)
    ids = torch.randint(3, 256, (2, 20))
    mask = torch.ones_like(ids)
    mask[1, 14:] = 0
    assert _max_diff(model, ids, mask) <= 1e-4
    run = blocks.runner_for(model)
    ffn = FFN(models.Adapter(model=model, tokenizer=None, name="test"))
    with torch.inference_mode():
        h = run.embed(ids)
        for j in range(run.n_layers):
            h, vecs = run.block(h, j, record=True)
            r, f = vecs[3].reshape(-1, run.d), vecs[5].reshape(-1, run.d)  # mid-block state, the FFN's output
            np.testing.assert_allclose(ffn.output(j, ffn.coefficients(j, r.numpy())), f.numpy(), atol=1e-5)


def test_other_families_are_refused_with_the_supported_ones():
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM, OPTConfig, OPTForCausalLM

    model = GPTNeoXForCausalLM(
        GPTNeoXConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    )
    with pytest.raises(blocks.UnsupportedModelError, match="gpt2, llama, mistral, phi3, opt, bert"):
        blocks.runner_for(model)
    post_norm = OPTForCausalLM(
        OPTConfig(
            vocab_size=64,
            hidden_size=16,
            num_hidden_layers=1,
            ffn_dim=32,
            num_attention_heads=2,
            word_embed_proj_dim=16,
            do_layer_norm_before=False,
        )
    )
    with pytest.raises(blocks.UnsupportedModelError, match="OPT-350m"):
        blocks.runner_for(post_norm)
    with pytest.raises(blocks.UnsupportedModelError, match="gpt2"):
        blocks.GPT2Blocks(
            BertForMaskedLM(
                BertConfig(
                    vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
                )
            )
        )


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
