"""The paper profile, offline: models saved in Hugging Face's cache layout under the real ids (with the real
GPT-2 small and BERT base configurations, randomly initialised), loaded by id with the hub switched off, through
the same code a user's run takes; and the clear error when a model is in neither the cache nor reachable."""

import time

import numpy as np
import pytest
import torch
from helpers import save_random_model
from transformers import BertConfig, GPT2Config

from jtc_utils.core.models import batching, models
from jtc_utils.core.analysis import hidden
from jtc_utils.core.data.samples import make_samples

# the real configurations but for the vocabulary: the offline tokenizers available here are the zoo's (4,096 tokens),
# and a model whose tokenizer does not fit its vocabulary is refused (tests/book/test_faults.py)
GPT2_SMALL = dict(vocab_size=4096, n_positions=1024, n_embd=768, n_layer=12, n_head=12)
BERT_BASE = dict(
    vocab_size=4096,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    max_position_embeddings=512,
)


def _put_in_hub_cache(cache_dir, repo_id, family, config):
    snap = cache_dir / f"models--{repo_id}" / "snapshots" / ("0" * 40)
    save_random_model(family, snap, config=config, dtype=torch.float16)  # half precision: half the disk
    (cache_dir / f"models--{repo_id}" / "refs").mkdir(parents=True)
    (cache_dir / f"models--{repo_id}" / "refs" / "main").write_text("0" * 40)


def _offline(monkeypatch, cache):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("hf") / "hub"
    _put_in_hub_cache(cache, "gpt2", "gpt2", GPT2Config(**GPT2_SMALL))
    _put_in_hub_cache(cache, "bert-base-uncased", "bert", BertConfig(**BERT_BASE))
    return cache


def test_paper_models_load_by_id_from_the_offline_cache(hub_cache, monkeypatch):
    _offline(monkeypatch, hub_cache)
    for ident, family, L, d in (("gpt2", "gpt2", 12, 768), ("bert-base-uncased", "bert", 12, 768)):
        ad = models.adapter(ident)
        assert (ad.family, ad.n_layers, ad.d) == (family, L, d)
        assert next(ad.model.parameters()).dtype == torch.float32
        s = make_samples(ad.tokenizer, family, "news", "validation", n=6)
        X = hidden.extract(ad, s, batch_size=3, progress=False)
        assert X.shape == (L + 1, 6, d) and np.isfinite(X).all()
        logits = ad.readout(torch.from_numpy(X[L]))
        assert logits.shape == (6, ad.vocab_size)


def test_missing_paper_model_fails_fast_with_a_clear_message(tmp_path, monkeypatch):
    _offline(monkeypatch, tmp_path)
    import transformers  # noqa: F401 - imported before the clock: the bound is on the look-up, not on the imports

    t = time.monotonic()
    with pytest.raises(models.ModelUnavailableError) as e:
        models.load("gpt2-xl")
    assert time.monotonic() - t < 20
    assert e.value.waited_s is None  # offline: the hub was not asked
    msg = str(e.value)
    assert "'gpt2-xl'" in msg and "not in the local Hugging Face cache" in msg
    assert "'tiny' profile needs no download and works offline" in msg and "HF_HOME" in msg
    assert e.value.__cause__ is None and e.value.__suppress_context__  # one message, not a chained traceback


# the related papers' hub ids, each with a small random model of its family in the cache
FAMILY_IDS = {
    "mistralai/Mistral-7B-v0.1": "mistral",
    "microsoft/Phi-3-mini-4k-instruct": "phi3",
    "facebook/opt-125m": "opt",
    "facebook/opt-350m": "opt-350m",
    "meta-llama/Llama-2-7b-hf": "llama",
}


@pytest.fixture(scope="module")
def family_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("hf-families") / "hub"
    for ident, family in FAMILY_IDS.items():
        _put_in_hub_cache(cache, ident.replace("/", "--"), family, None)
    # an architecture without an adapter
    snap = cache / "models--EleutherAI--pythia-70m" / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"]}')
    (cache / "models--EleutherAI--pythia-70m" / "refs").mkdir()
    (cache / "models--EleutherAI--pythia-70m" / "refs" / "main").write_text("0" * 40)
    return cache


def test_the_related_papers_hub_ids_are_the_ones_tested():
    assert set(FAMILY_IDS) - {"facebook/opt-350m"} <= {i for ids in models.RELATED_MODELS.values() for i in ids}


@pytest.mark.parametrize("ident", list(FAMILY_IDS))
def test_every_decoder_family_loads_offline_and_reproduces_its_own_logits(family_cache, monkeypatch, ident):
    """States h^0..h^(L-1) are the model's own hidden states, h^L is the raw output of the last block (the model's
    final norm, and OPT-350m's projection, turn it into its last hidden state), and the readout of h^L gives the
    model's own logits at every position."""
    _offline(monkeypatch, family_cache)
    ad = models.adapter(ident)
    assert ad.causal and ad.has_head and ad.family == FAMILY_IDS[ident].split("-")[0]
    s = make_samples(ad.tokenizer, ad.family, "news", "validation", n=4)
    _, inp, att, _ = next(hidden.padded_batches(ad.family, s, 4, batching.pad_id(ad.tokenizer)))
    L = ad.n_layers
    with torch.inference_mode():
        states = ad.forward_states(inp, att)
        out = ad.model(input_ids=inp, attention_mask=att, output_hidden_states=True)
        normed, logits = ad.head_input(states[L]), ad.readout(states[L])
    assert states.shape == (L + 1, *inp.shape, ad.d)
    keep = att.bool()
    for layer in range(L):
        torch.testing.assert_close(states[layer][keep], out.hidden_states[layer][keep])
    torch.testing.assert_close(normed[keep], out.hidden_states[L][keep])
    if ident != "facebook/opt-350m":  # the raw state differs from the normed one
        assert not torch.allclose(states[L][keep], out.hidden_states[L][keep])
    else:
        assert ad.final_norm is None
    torch.testing.assert_close(logits[keep], out.logits[keep], rtol=1e-5, atol=1e-5)


def test_an_unsupported_architecture_is_refused_by_name(family_cache, monkeypatch):
    _offline(monkeypatch, family_cache)
    with pytest.raises(models.ModelUnavailableError, match="'gpt_neox' model.*supported families: gpt2.*opt"):
        models.load("EleutherAI/pythia-70m")
