"""The concept classes of a real vocabulary (jtc_utils.core.data.token_concepts): the rule on the zoo's GPT tokenizer
and the generated encyclopedia (a few hundred tokens, months among them, where the right answer is known), the hand
categories' precision and recall on a labelling whose answer is counted by hand, and the committed classes of
SmolLM2 (their checksum, their vocabulary, their settings)."""

import json
import random
import re
import shutil
from collections import Counter

import numpy as np
import pytest
from transformers import AutoTokenizer

from jtc_utils.core.data import sources, token_concepts
from jtc_utils.core.models.catalogue import GPT_TOKENIZER_DIR
from jtc_utils.embedded.world import MONTHS

pytestmark = [pytest.mark.ffn, pytest.mark.real]  # the real model's concept labels, read by the FFN chapter


@pytest.fixture(scope="module")
def tok():
    return AutoTokenizer.from_pretrained(GPT_TOKENIZER_DIR)


@pytest.fixture(scope="module")
def texts():
    return [s.text for s in sources.sentences("tiny", "encyclopedia", "train")][:3000]


@pytest.fixture(scope="module")
def ids(tok, texts):
    """The months and the 400 most frequent tokens of the text, and 100 tokens the text never uses."""
    months = [tok(" " + m, add_special_tokens=False)["input_ids"][0] for m in MONTHS]
    counts = Counter(t for row in tok(texts, add_special_tokens=False)["input_ids"] for t in row)
    frequent = [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:400]]
    unused = [t for t in range(len(tok)) if t not in counts][:100]
    return sorted(set(months) | set(frequent) | set(unused))


@pytest.fixture(scope="module")
def classes(tok, texts, ids):
    return token_concepts.concept_classes(tok, texts, ids, progress=False)


def test_every_token_with_a_letter_has_a_class_and_the_months_share_one(tok, ids, classes):
    tc = classes["token_class"]
    forms = {t: tok.decode([t]) for t in ids}
    special = set(tok.all_special_ids)
    lettered = {t for t in ids if t not in special and re.search(r"[^\W\d_]", forms[t])}
    assert lettered <= set(tc) and not special & set(tc)  # unused tokens too: the reach is the vocabulary's
    assert all(re.search(r"[^\W\d_]", forms[t]) or c in ("number", "punct") for t, c in tc.items())
    months = [tok(" " + m, add_special_tokens=False)["input_ids"][0] for m in MONTHS]
    held = Counter(tc[t] for t in months)
    assert held.most_common(1)[0][1] >= 10 and held.most_common(1)[0][0].startswith("class ")


def test_form_and_frequency_classes(tok, texts, classes):
    tc = classes["token_class"]
    forms = {t: tok.decode([t]) for t in tc}
    assert all(any(ch.isdigit() for ch in forms[t]) for t, c in tc.items() if c == "number")
    assert all(not any(ch.isalnum() for ch in forms[t]) for t, c in tc.items() if c == "punct")
    function = [t for t, c in tc.items() if c == "function"]
    assert len(function) == token_concepts.FUNCTION_WORDS and all(forms[t][0] == " " for t in function)
    counts = Counter(t for row in tok(texts, add_special_tokens=False)["input_ids"] for t in row)
    # the function words are the most frequent word-start words: none outside them is more frequent
    assert min(counts[t] for t in function) >= max(
        counts[t] for t, c in tc.items() if c.startswith("class ") and re.fullmatch(" [A-Za-z]+", forms[t])
    )
    assert set(classes["groups"]) == set(tc.values()) and set(classes["groups"].values()) <= {
        "semantic",
        "syntactic",
        "names",
    }
    assert sum(classes["sizes"].values()) == len(tc) == classes["counts"]["labelled"]


def test_the_classes_do_not_depend_on_the_order_of_the_text(tok, texts, ids, classes):
    shuffled = texts[:]
    random.Random(0).shuffle(shuffled)
    assert token_concepts.concept_classes(tok, shuffled, ids, progress=False)["token_class"] == classes["token_class"]


def test_no_text_is_a_clear_error(tok):
    with pytest.raises(ValueError, match="training sentences"):
        token_concepts.concept_classes(tok, [], [1, 2, 3])


def test_the_hand_categories_are_counted_from_the_classes(tok):
    """Four month tokens in class a with two other tokens, one month in class b: recall 4/5, precision 4/6."""
    enc = lambda w: tok(w, add_special_tokens=False)["input_ids"][0]  # noqa: E731
    a = [enc(" January"), enc(" February"), enc(" March"), enc(" April"), enc(" dog"), enc(" cat")]
    tc = {**{t: "class a" for t in a}, enc(" May"): "class b", enc(" red"): "class b"}
    rows = {
        r["category"]: r
        for r in token_concepts.validate(
            tok, tc, {"months": ["january", "february", "march", "april", "may"], "planets": ["jupiter"]}
        )
    }
    m = rows["months"]
    assert (m["tokens"], m["class"]) == (5, "class a")
    assert m["recall"] == pytest.approx(4 / 5) and m["precision"] == pytest.approx(4 / 6)
    assert rows["planets"]["tokens"] == 0 and rows["planets"]["class"] is None


@pytest.fixture(scope="module")
def smollm2():
    from jtc_utils.core.models import models

    return models.adapter("smollm2-135m").tokenizer


def test_the_committed_classes_are_smollm2s_and_made_with_these_settings(smollm2):
    d = token_concepts.committed("smollm2-135m", smollm2)
    assert d is not None and len(d["token_class"]) == d["counts"]["labelled"]
    card = json.loads((token_concepts.FOLDER / "smollm2-135m" / "card.json").read_text())
    assert card["settings"] == {k: getattr(token_concepts, k) for k in card["settings"]}
    assert card["validation"] == token_concepts.validate(smollm2, d["token_class"])
    assert token_concepts.committed("smollm2-135m", AutoTokenizer.from_pretrained(GPT_TOKENIZER_DIR)) is None


def test_a_committed_file_that_fails_its_checksum_is_an_error(smollm2, tmp_path, monkeypatch):
    """A copy of the classes with one token's class changed, read against the committed checksums."""
    folder = tmp_path / "concepts"
    shutil.copytree(token_concepts.FOLDER, folder)
    path = folder / "smollm2-135m" / "classes.npz"
    class_of = np.load(path)["class_of"]
    class_of[1000] = class_of[1000] + 1  # a labelled token moved to the next class
    np.savez_compressed(path, class_of=class_of)
    monkeypatch.setattr(token_concepts, "FOLDER", folder)
    with pytest.raises(ValueError, match="classes.npz does not match its checksum in zoo/SHA256SUMS"):
        token_concepts.committed("smollm2-135m", smollm2)
