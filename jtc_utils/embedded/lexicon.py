"""A fine word class for every generated word, read from the generator's own lists (related-systems spec 2.4): the
automatic stand-in for the human annotators of Geva et al. (2022), who named the concept a value vector's top tokens
share. A word occurrence gets one class: numbers and punctuation by their form, then the world's names, then the
template lists in a fixed order, else its corpus label. A tokenizer's *token* gets the class of at least half its
occurrences in the training text, else ``mixed`` (never a concept). Each class is in one of Geva et al.'s groups:
``semantic``, ``syntactic`` (function words, agreement, punctuation, number formats) or ``names``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

from . import corpus, words
from .world import MONTHS, OCCUPATIONS, ORG_KINDS, WEEKDAYS

MIXED = "mixed"


def _words(items) -> set:
    return {w for item in items for w in item.split()}


# template lists, in the order that decides a word listed twice
_TEMPLATE = (
    ("month", MONTHS),
    ("weekday", WEEKDAYS),
    ("occupation", [s for s, _ in OCCUPATIONS]),
    ("occupations (plural)", [p for _, p in OCCUPATIONS]),
    ("organisation kind", [k[1] for k in ORG_KINDS]),
    ("organisation members", [k[2] for k in ORG_KINDS]),
    ("project", words.PROJECTS),
    ("build verb", words.BUILD_VERBS),
    ("report adjective", words.ADJ),
    ("vehicle", words.VEHICLES),
    ("accident", words.ACCIDENTS),
    ("topic", words.TOPICS),
    ("work", words.WORKS),
    ("quote verb", words.QUOTE_VERBS),
    ("quote noun", words.QUOTE_NOUNS),
    ("unit", [u for u, _ in words.UNITS] + [w for _, w in words.UNITS if w]),
    ("report verb", words.REPORT_VERBS),
    ("event", words.EVENTS),
    ("time phrase", words.WHEN),
    ("role", words.ROLES),
)
_NAMES = ("first name", "surname", "city", "country", "country adjective", "river", "currency", "organisation name")
GROUPS = {
    **{c: "semantic" for c, _ in _TEMPLATE},
    **{c: "names" for c in _NAMES},
    "year": "syntactic",
    "number": "syntactic",
    "punct": "syntactic",
    "function": "syntactic",
    "agree": "syntactic",
    "content": "semantic",
    "fact": "semantic",
    "entity": "names",
}
CLASSES = tuple(GROUPS)
_YEAR = re.compile(r"^1[0-9]{3}$|^20[0-9]{2}$")
_NUMBER = re.compile(r"^[0-9][0-9,.]*$")
_PUNCT = re.compile(r"^[^\w\s]+$")


@lru_cache(maxsize=4)
def word_lists(seed: int = 0) -> tuple[dict, dict]:
    """(name word -> class, template word -> class) of the world of ``seed``."""
    w = corpus.world(seed)
    names = {}
    for cls, items in (
        ("first name", [p.first for p in w.people]),
        ("surname", [p.last for p in w.people]),
        ("city", [c.name for c in w.cities]),
        ("country", [c.name for c in w.countries]),
        ("country adjective", [c.adjective for c in w.countries]),
        ("river", w.rivers),
        ("currency", [c.currency for c in w.countries] + [c.currency + "s" for c in w.countries]),
        ("organisation name", [k[0].replace("{city}", "").replace("{name}", "") for k in ORG_KINDS]),
    ):
        for word in _words(items):
            names.setdefault(word, cls)
    template = {}
    for cls, items in _TEMPLATE:
        for word in _words(items):
            template.setdefault(word, cls)
    return names, template


def word_class(word: str, label: str, seed: int = 0) -> str:
    """The one class of a generated word occurrence with corpus label ``label``."""
    if label not in corpus.LABELS:
        raise ValueError(f"unknown corpus label {label!r}; the corpus labels are {', '.join(corpus.LABELS)}")
    if _YEAR.match(word) and label in ("fact", "number"):
        return "year"
    if _NUMBER.match(word):
        return "number"
    if label == "punct" or _PUNCT.match(word):
        return "punct"
    names, template = word_lists(seed)
    if label in ("entity", "fact") and word in names:
        return names[word]
    if label in ("content", "fact", "number") and word in template:
        return template[word]
    if word in names and label not in ("function", "agree"):
        return names[word]
    return label


def check_class(name: str) -> str:
    if name not in CLASSES:
        raise ValueError(f"unknown word class {name!r}; the classes are: {', '.join(CLASSES)}")
    return name


def token_classes(tokenizer, n_sentences: int = 20_000, seed: int = 0) -> dict:
    """``{token id: class}`` for every token seen in the first ``n_sentences`` training sentences: the class of at
    least half of its occurrences (a sub-word token takes the class of its word), else ``mixed``. Tokens never seen
    are absent."""
    sents = corpus.training_sentences(n_sentences, seed)
    enc = tokenizer([s.text for s in sents], add_special_tokens=False, return_offsets_mapping=True)
    counts: dict[int, Counter] = defaultdict(Counter)
    for s, ids, offs in zip(sents, enc["input_ids"], enc["offset_mapping"]):
        spans = s.spans
        k = 0
        for t, (a, b) in zip(ids, offs):
            while k < len(spans) and spans[k][1] <= a:
                k += 1
            if k < len(spans) and spans[k][0] < b:
                start, end, lab = spans[k]
                counts[t][word_class(s.text[start:end], lab, seed)] += 1
            else:
                counts[t]["punct"] += 1  # whitespace-only tokens (the trailing newline)
    out = {}
    for t, c in counts.items():
        cls, n = c.most_common(1)[0]
        out[t] = cls if 2 * n >= sum(c.values()) else MIXED
    return out
