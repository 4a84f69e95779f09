"""The automatic word classes of a real vocabulary (jtc_utils.core.word_classes), on the zoo's GPT tokenizer and the
generated encyclopedia, where the right answer is known: the generator's months are one class of words used in one
slot."""

import random
import re
from collections import Counter

import pytest
from transformers import AutoTokenizer

from jtc_utils.core import sources, word_classes
from jtc_utils.core.catalogue import GPT_TOKENIZER_DIR
from jtc_utils.embedded.world import MONTHS

pytestmark = [pytest.mark.ffn]  # the real model's concept labels, read by the FFN chapter


@pytest.fixture(scope="module")
def tok():
    return AutoTokenizer.from_pretrained(GPT_TOKENIZER_DIR)


@pytest.fixture(scope="module")
def texts():
    return [s.text for s in sources.sentences("tiny", "encyclopedia", "train")][:3000]


@pytest.fixture(scope="module")
def classes(tok, texts):
    return word_classes.word_classes(tok, texts)


def test_the_months_are_one_distributional_class(tok, classes):
    ids = [tok(" " + m, add_special_tokens=False)["input_ids"] for m in MONTHS]
    assert all(len(i) == 1 for i in ids)  # each month is one token of this tokenizer
    month_classes = {classes["token_class"].get(i[0]) for i in ids}
    assert len(month_classes) == 1 and next(iter(month_classes)).startswith("class ")


def test_form_and_frequency_classes(tok, texts, classes):
    tc = classes["token_class"]
    forms = {t: tok.decode([t]) for t in tc}
    assert all(any(ch.isdigit() for ch in forms[t]) for t, c in tc.items() if c == "number")
    assert all(not any(ch.isalnum() for ch in forms[t]) for t, c in tc.items() if c == "punct")
    function = [t for t, c in tc.items() if c == "function"]
    assert len(function) == word_classes.FUNCTION_WORDS and all(forms[t][0] == " " for t in function)
    counts = Counter(t for ids in tok(texts, add_special_tokens=False)["input_ids"] for t in ids)
    # the function words are the most frequent word-start tokens: none outside them is more frequent
    assert min(counts[t] for t in function) >= max(counts[t] for t, c in tc.items() if c.startswith("class ")
                                                   and re.fullmatch(" [A-Za-z]+", forms[t]))
    assert all(counts[t] >= word_classes.MIN_COUNT for t in tc)
    rare = [t for t, n in counts.items() if n < word_classes.MIN_COUNT]
    assert rare and not any(t in tc for t in rare)
    assert set(classes["groups"]) == set(tc.values()) and set(classes["groups"].values()) <= {"semantic", "syntactic",
                                                                                              "names"}
    assert sum(classes["sizes"].values()) == len(tc) == classes["counts"]["labelled"]


def test_the_classes_do_not_depend_on_the_order_of_the_text(tok, texts, classes):
    shuffled = texts[:]
    random.Random(0).shuffle(shuffled)
    assert word_classes.word_classes(tok, shuffled)["token_class"] == classes["token_class"]


def test_no_text_is_a_clear_error(tok):
    with pytest.raises(ValueError, match="training sentences"):
        word_classes.word_classes(tok, [])
