"""The adapters: the vectors the paper studies, and the readout, match the Hugging Face models."""

import numpy as np
import pytest
import torch
from helpers import save_random_model

from jtc_utils.core.analysis import hidden
from jtc_utils.core.models import models
from jtc_utils.core.data.samples import make_samples
from jtc_utils.embedded import corpus


@pytest.fixture(scope="module")
def gpt(tmp_path_factory):
    return models.adapter(str(save_random_model("gpt2", tmp_path_factory.mktemp("gpt"))))


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return models.adapter(str(save_random_model("bert", tmp_path_factory.mktemp("bert"))))


def _batch(ad, texts, special):
    """Right-padded batch (GPT-2 has no pad token: pad with id 0, as the paper's code does)."""
    enc = ad.tokenizer(texts, add_special_tokens=special)
    T = max(len(x) for x in enc["input_ids"])
    ids = torch.tensor([x + [0] * (T - len(x)) for x in enc["input_ids"]])
    att = torch.tensor([[1] * len(x) + [0] * (T - len(x)) for x in enc["input_ids"]])
    return ids, att


def test_gpt_raw_final_state_is_ln_f_input_and_readout_is_the_lm_head(gpt):
    texts = [s.text for s in corpus.pool("news", "validation", n=4)]
    ids, att = _batch(gpt, texts, False)
    with torch.no_grad():
        states = gpt.forward_states(ids, att)
        out = gpt.model(input_ids=ids, attention_mask=att, output_hidden_states=True)
        captured = {}
        h = gpt.model.transformer.ln_f.register_forward_hook(lambda m, a, o: captured.update(inp=a[0]))
        gpt.model(input_ids=ids, attention_mask=att)
        h.remove()
    L = gpt.n_layers
    assert states.shape[0] == L + 1
    torch.testing.assert_close(states[L], captured["inp"])
    # Hugging Face's last hidden state is already after ln_f; ours is raw
    torch.testing.assert_close(out.hidden_states[L], gpt.model.transformer.ln_f(states[L]))
    assert not torch.allclose(out.hidden_states[L], states[L])
    for k in range(L):
        torch.testing.assert_close(states[k], out.hidden_states[k])
    torch.testing.assert_close(gpt.readout(states[L]), out.logits, rtol=1e-5, atol=1e-5)


def test_bert_states_and_readout_match_the_mlm_model(bert):
    texts = [s.text for s in corpus.pool("encyclopedia", "validation", n=4)]
    ids, att = _batch(bert, texts, True)
    with torch.no_grad():
        states = bert.forward_states(ids, att)
        out = bert.model(input_ids=ids, attention_mask=att, output_hidden_states=True)
    for k in range(bert.n_layers + 1):
        torch.testing.assert_close(states[k], out.hidden_states[k])
    torch.testing.assert_close(bert.readout(states[-1]), out.logits, rtol=1e-5, atol=1e-5)


def test_bert_samples_are_masked_at_their_position(bert):
    s = make_samples(bert.tokenizer, "bert", "news", "validation", n=200)
    mask = bert.tokenizer.mask_token_id
    for ids, p in zip(s.input_ids, s.positions):
        assert ids[p] == mask and ids.count(mask) == 1
        assert ids[0] == mask or ids[0] == bert.tokenizer.cls_token_id
        assert 0 <= p < len(ids)
    assert (s.positions == 0).any()  # [CLS] can be chosen, as in the paper's code


def test_whole_sentences_keep_the_first_n_and_read_to_their_last_token(gpt):
    s = make_samples(gpt.tokenizer, "gpt2", "news", "validation", n=30)
    w = s.whole(12)
    assert len(w) == 12 and w.texts == s.texts[:12] and w.input_ids == s.input_ids[:12]
    assert list(w.positions) == [len(ids) - 1 for ids in s.input_ids[:12]]
    assert (w.family, w.domain, w.split, w.seed, w.labels) == (s.family, s.domain, s.split, s.seed, s.labels[:12])
    assert list(s.positions) != list(s.whole(30).positions)  # the samples' own positions are inside the sentence


def test_positions_are_uniform_and_seeded(gpt):
    a = make_samples(gpt.tokenizer, "gpt2", "encyclopedia", "validation", n=3000)
    b = make_samples(gpt.tokenizer, "gpt2", "encyclopedia", "validation", n=3000)
    c = make_samples(gpt.tokenizer, "gpt2", "encyclopedia", "validation", n=3000, seed=1)
    assert np.array_equal(a.positions, b.positions) and not np.array_equal(a.positions, c.positions)
    lengths = np.array([len(x) for x in a.input_ids])
    rel = a.positions / (lengths - 1)
    assert abs(rel.mean() - 0.5) < 0.03  # uniform over all tokens, first and last included
    assert (a.positions == 0).any() and (a.positions == lengths - 1).any()
    assert {"fact", "function", "punct"} <= set(a.labels)


def test_prefix_and_padding_do_not_change_the_vectors(gpt, bert):
    for ad in (gpt, bert):
        s = make_samples(ad.tokenizer, ad.family, "news", "validation", n=40)
        batched = hidden.extract(ad, s, batch_size=16, progress=False)
        single = hidden.extract(ad, s, batch_size=1, progress=False)
        np.testing.assert_allclose(batched, single, rtol=1e-4, atol=1e-5)
    # GPT: the prefix up to the position gives the same vector as the whole sentence
    s = make_samples(gpt.tokenizer, "gpt2", "news", "validation", n=10)
    X = hidden.extract(gpt, s, batch_size=4, progress=False)
    with torch.no_grad():
        for i, (ids, p) in enumerate(zip(s.input_ids, s.positions)):
            full = gpt.forward_states(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long))
            np.testing.assert_allclose(full[:, 0, p].numpy(), X[:, i], rtol=1e-4, atol=1e-5)


def test_unknown_models_get_clear_errors():
    """(Damaged models: tests/book/test_faults.py.)"""
    with pytest.raises(models.ModelUnavailableError, match="unknown zoo model 'tiny-gpt7'.*the zoo has"):
        models.load("tiny-gpt7")
    with pytest.raises(models.ModelUnavailableError, match="unknown model 'gpt3'"):
        models.load("gpt3")


def test_unsupported_family_is_refused():
    from transformers import T5Config

    class Fake:
        config = T5Config()

    with pytest.raises(ValueError, match="supported families: gpt2.*bert"):
        models.family_of(Fake())


def test_the_default_batch_is_smaller_for_a_wide_model_and_keys_the_cache(gpt, monkeypatch):
    from jtc_utils.core.infra import cache

    assert hidden.default_batch(gpt) == 64  # width 32 < hidden.WIDE
    monkeypatch.setattr(hidden, "WIDE", gpt.d)  # as if the model were wide
    assert hidden.default_batch(gpt) == 32
    s = make_samples(gpt.tokenizer, gpt.family, "news", "validation", n=40)
    seen = []
    real = cache.path_for
    monkeypatch.setattr(cache, "path_for", lambda kind, key: seen.append(key["batch"]) or real(kind, key))
    np.testing.assert_allclose(
        hidden.hidden_states(gpt, s), hidden.hidden_states(gpt, s, batch_size=64), rtol=1e-4, atol=1e-5
    )
    assert seen == [32, 64]


def test_a_subset_is_sliced_out_of_the_full_extraction_not_extracted_again(gpt, tmp_path, monkeypatch):
    """One extraction per model, domain and split: the first n samples of an extracted set are read from it, and
    equal a fresh extraction of those n samples (other batches, so within float noise)."""
    from jtc_utils.core.infra import cache

    monkeypatch.setattr(cache, "CACHE_DIR", tmp_path)
    full = make_samples(gpt.tokenizer, gpt.family, "news", "validation", n=60)
    first = make_samples(gpt.tokenizer, gpt.family, "news", "validation", n=25)
    other = make_samples(gpt.tokenizer, gpt.family, "news", "validation", n=25, seed=1)  # other positions
    X = hidden.hidden_states(gpt, full)
    runs = []
    real = hidden.extract
    monkeypatch.setattr(hidden, "extract", lambda *a: runs.append(len(a[1])) or real(*a))
    sliced = hidden.hidden_states(gpt, first)
    assert runs == []  # sliced, not extracted
    np.testing.assert_array_equal(sliced, X[:, :25])
    np.testing.assert_allclose(sliced, real(gpt, first, hidden.default_batch(gpt), False), rtol=1e-4, atol=1e-5)
    hidden.hidden_states(gpt, other)  # not a prefix: extracted
    assert runs == [25]
    # a damaged index is no index: extract again, and record anew
    for f in (tmp_path / "hidden" / "index").glob("*.json"):
        f.write_text("{not json")
    hidden.hidden_states(gpt, make_samples(gpt.tokenizer, gpt.family, "news", "validation", n=10))
    assert runs == [25, 10]
