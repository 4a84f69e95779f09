"""The committed model zoo and its tokenizers: they load through the Auto* classes, they have learned, they fit
the size budget, and training is deterministic and resumes after an interruption."""

import json
import math

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from jtc_utils.core.models import catalogue
from jtc_utils.core.infra.paths import ZOO_DIR
from jtc_utils.embedded import corpus
from jtc_utils.training import zoo


def test_gpt_tokenizer_is_byte_level_bpe_like_gpt2():
    tok = AutoTokenizer.from_pretrained(catalogue.GPT_TOKENIZER_DIR)
    s = corpus.pool("encyclopedia", "validation", n=1)[0].text
    ids = tok(s)["input_ids"]
    assert tok.decode(ids) == s  # lossless, trailing newline included
    assert tok.convert_ids_to_tokens(ids[-1]) == "Ċ"  # the newline is its own token, as in GPT-2
    assert tok.bos_token == "<|endoftext|>" and len(tok) == catalogue.VOCAB_SIZE


def test_bert_tokenizer_is_uncased_wordpiece_with_special_tokens():
    tok = AutoTokenizer.from_pretrained(catalogue.BERT_TOKENIZER_DIR)
    for t in ("[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]"):
        assert t in tok.get_vocab()
    ids = tok("Talven MORISK lives in Qerathousk.")["input_ids"]
    pieces = tok.convert_ids_to_tokens(ids)
    assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]"
    assert all(p == p.lower() for p in pieces[1:-1])
    assert any(p.startswith("##") for p in pieces)
    assert tok.convert_ids_to_tokens(tok("a [MASK] b")["input_ids"])[2] == "[MASK]"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(catalogue.ZOO))
def test_zoo_model_loads_and_beats_the_unigram_and_bigram_baselines(name):
    spec = catalogue.ZOO[name]
    path = ZOO_DIR / name
    tok = AutoTokenizer.from_pretrained(path)
    cls = AutoModelForCausalLM if spec.family == "gpt2" else AutoModelForMaskedLM
    model = cls.from_pretrained(path).eval()
    assert model.config.num_hidden_layers == spec.n_layer and model.config.hidden_size == spec.d
    texts = [s.text for s in corpus.training_sentences(n=20_000)]
    card = catalogue.load_card(name)
    metrics = zoo.evaluate(model, tok, spec, texts, seed=0, n=150)
    # recomputed on a subset: close to the card's figure and far below the unigram baseline
    assert metrics["loss"] < 0.75 * metrics["unigram_loss"]
    assert metrics["loss"] < metrics["bigram_loss"] and card["heldout"]["loss"] < card["heldout"]["bigram_loss"]
    assert abs(metrics["loss"] - card["heldout"]["loss"]) < 0.3
    curve = card["loss_curve"]
    k = max(1, len(curve) // 10)
    first, last = sum(curve[:k]) / k, sum(curve[-k:]) / k
    assert last < 0.5 * first  # it learned
    prev = sum(curve[-2 * k : -k]) / k
    assert abs(prev - last) < 0.1 * last  # and the curve has flattened


def test_depths_mirror_the_paper_and_the_zoo_fits_the_size_budget():
    gpt = [s for s in catalogue.ZOO.values() if s.family == "gpt2"]
    bert = [s for s in catalogue.ZOO.values() if s.family == "bert"]
    base = gpt[0].n_layer
    assert [s.n_layer for s in gpt] == [base, 2 * base, 3 * base, 4 * base]
    assert [s.n_layer for s in bert] == [bert[0].n_layer, 2 * bert[0].n_layer]
    assert catalogue.ZOO["tiny-gpt2-medium"].n_layer >= 12 and catalogue.ZOO["tiny-bert-large"].n_layer >= 12
    assert [s.d for s in gpt] == sorted(s.d for s in gpt)
    # the models (with the two training-seed replicas of tiny-gpt2-xl), tokenizers and cards within 80 MiB; with the
    # trained lenses of zoo/lenses and the linearity chapter's runs of zoo/secretly-linear, the committed zoo within
    # 130 MiB (the real model's tuned lens is stored in half precision for it; the low-rank lenses take five
    # converged seeds each, as the seed rule needs: about 12 MiB for the stand-in's, 17 MiB for the real model's once
    # all are trained, its capped ones until then), and the concept classes of the real vocabulary (zoo/concepts,
    # 0.11 MiB) within 130.25 MiB
    extras = sum(
        p.stat().st_size
        for d in ("lenses", "secretly-linear", "concepts")
        for p in (catalogue.ZOO_DIR / d).rglob("*")
        if p.is_file()
    )
    concepts = sum(p.stat().st_size for p in (catalogue.ZOO_DIR / "concepts").rglob("*") if p.is_file())
    assert catalogue.zoo_size_bytes() - extras <= 80 * 2**20
    assert catalogue.zoo_size_bytes() - concepts <= 130 * 2**20 and concepts <= 2**18


def test_the_real_models_tuned_lens_is_stored_in_half_precision_and_loaded_in_single():
    from safetensors import safe_open

    from jtc_utils.lenses import artifacts

    f = artifacts.path("smollm2-135m", "tuned_s0")
    with safe_open(str(f), framework="numpy") as s:
        dtypes = {k: s.get_tensor(k).dtype for k in s.keys()}
        key = json.loads(s.metadata()["key_json"])
    assert {dtypes[k] for k in artifacts.HALF["smollm2-135m"]} == {np.dtype(np.float16)}
    assert all(dtypes[k] == np.float32 for k in dtypes if k not in artifacts.HALF["smollm2-135m"])
    loaded = artifacts.lookup("smollm2-135m", "tuned_s0", key)
    assert loaded is not None and loaded["M"].dtype == np.float32 and loaded["M"].shape == (30, 576, 576)


def _micro(name, family="gpt2"):
    return catalogue.Spec(name, family, 2, 16, 2, 4 * 8 * 40, "test", batch=8)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_training_is_deterministic_and_resumes_after_interruption(tmp_path, monkeypatch, family):
    monkeypatch.setattr(zoo, "ZOO_DIR", tmp_path)
    texts = [s.text for s in corpus.training_sentences(n=400)]
    a = zoo.train_model(_micro("a", family), texts=texts, progress=False)
    assert zoo.train_model(_micro("b", family), texts=texts, progress=False, ckpt_every=1, stop_after=2) is None
    assert (tmp_path / "_work" / "b" / "ckpt.pt").exists() and not (tmp_path / "b").exists()
    b = zoo.train_model(_micro("b", family), texts=texts, progress=False)
    assert a["steps"] == b["steps"] >= 3 and a["loss_curve"] == b["loss_curve"]
    from safetensors.torch import load_file

    wa, wb = load_file(tmp_path / "a" / "model.safetensors"), load_file(tmp_path / "b" / "model.safetensors")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    assert not list(tmp_path.glob("*.tmp"))
    assert math.isfinite(a["heldout"]["loss"])
