"""The generated two-domain corpus: an *encyclopedia* domain (the stand-in for the paper's Wikipedia sentences) and a
*news* domain (for the Leipzig news sentences), both about one generated world (:mod:`jtc_utils.embedded.world`),
written by a compositional grammar (:mod:`jtc_utils.embedded.grammar`): many sentence types built from clause pieces,
several wordings of each fact, facts that need more than one hop, a Zipfian tail of rare words and dates that
respect the present. Every word carries a label (:data:`LABELS`) saying what kind of prediction it is.

Entry points: :func:`pool` (held-out experiment sentences, the paper's split sizes) and :func:`training_sentences`
(the models' training text), deterministic for a seed. A sentence belongs to one or the other by a hash of its
first five words (:func:`held_out`), so the two share no opening of five words and no pool sentence is a verbatim
prefix of a training one.
"""

from __future__ import annotations

import hashlib
import random
from functools import lru_cache

from jtc_utils.base import validate

from .grammar import Grammar
from .sentence import Sentence
from .world import World, build_world

# What kind of prediction each word is: function (function words and fixed template words: "the", "was", "born"),
# content (open-class words chosen freely by the template), entity (the first mention of a person, city or
# organisation: unpredictable), fact (predictable only by recalling a fact about an entity named earlier in the
# sentence: a birthplace, a founder, a currency; stated the same way everywhere), number (numbers and dates that are
# not facts), agree (a form fixed by agreement with an earlier word: was/were, he/she, a/an), punct.
LABELS = ("function", "content", "entity", "fact", "number", "agree", "punct")
DOMAINS = ("encyclopedia", "news")
# the paper's sizes: Wikipedia 9,000 train + 3,000 validation; Leipzig 9,000 train + 1,000 validation
POOL_SIZES = {"encyclopedia": {"train": 9000, "validation": 3000}, "news": {"train": 9000, "validation": 1000}}
TRAINING_SENTENCES = 130_000  # about 3 million words


def _check_domain(domain):
    if domain not in DOMAINS:
        raise ValueError(f"unknown domain {domain!r}; choose one of {', '.join(DOMAINS)}")


def take_split(pool, sizes: dict, domain: str, split: str, n: int | None) -> list:
    """The ``split`` part of a pool laid out as [train | validation], first ``n`` items, with clear errors."""
    if split not in sizes:
        raise ValueError(f"unknown split {split!r}; choose 'train' or 'validation'")
    if n is not None and not (0 < n <= sizes[split]):
        raise ValueError(
            f"asked for {n} {domain}/{split} sentences but the split has {sizes[split]}; "
            f"pass n between 1 and {sizes[split]} (or n=None for all)"
        )
    start = 0 if split == "train" else sizes["train"]
    part = pool[start : start + sizes[split]]
    return list(part[:n] if n is not None else part)


PREFIX_WORDS = 5  # pools and training text share no opening of this many words
HELD_OUT_SHARE = 0.2  # share of openings reserved for the pools


def held_out(text: str, seed: int = 0) -> bool:
    """Whether a sentence with this text belongs to the experiment pools (else to the training text): decided by a
    hash of its first :data:`PREFIX_WORDS` words, so that both sides never share such an opening."""
    opening = " ".join(text.split()[:PREFIX_WORDS])
    h = int.from_bytes(hashlib.sha256(f"{seed}/{opening}".encode()).digest()[:8], "big")
    return h / 2**64 < HELD_OUT_SHARE


@lru_cache(maxsize=4)
def world(seed: int = 0) -> World:
    return build_world(seed)


@lru_cache(maxsize=8)
def _pool_all(domain: str, seed: int) -> tuple[Sentence, ...]:
    rng = random.Random(f"pool-v2/{domain}/{seed}")
    gen = Grammar(world(seed), rng)
    total = sum(POOL_SIZES[domain].values())
    out, seen = [], set()
    while len(out) < total:  # distinct sentences with held-out openings only
        s = gen.sentence(domain)
        if s.text not in seen and held_out(s.text, seed):
            seen.add(s.text)
            out.append(s)
    return tuple(out)


def pool(domain: str, split: str, n: int | None = None, seed: int = 0) -> list[Sentence]:
    """Held-out experiment sentences (``split`` = ``train`` for fitting maps or ``validation``) at the paper's sizes;
    ``n`` takes the first n. No pool sentence opens with the same five words as any training sentence."""
    _check_domain(domain)
    validate.seed(seed)
    return take_split(_pool_all(domain, seed), POOL_SIZES[domain], domain, split, n)


def training_sentences(n: int = TRAINING_SENTENCES, seed: int = 0) -> list[Sentence]:
    """The models' training text: both domains alternating, distinct sentences, each with an opening the pools
    never use."""
    validate.seed(seed)
    rng = random.Random(f"train-v2/{seed}")
    gen = Grammar(world(seed), rng)
    out, seen = [], set()
    while len(out) < n:  # distinct sentences: a popular entity's short sentence is not repeated verbatim
        s = gen.sentence(DOMAINS[len(out) % 2])
        if s.text not in seen and not held_out(s.text, seed):
            seen.add(s.text)
            out.append(s)
    return out
