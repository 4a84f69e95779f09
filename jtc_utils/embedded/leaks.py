"""What a model could copy from its training text into the held-out experiment pools, and the artefacts a reader
would notice: the corpus half of the hardness report. Each measure takes plain lists of
:class:`~jtc_utils.embedded.corpus.Sentence`, so it applies to any corpus with span labels: :func:`prefix_leak`
(pool sentences that are a verbatim prefix of a training one), :func:`skeleton_share` (whose template skeleton
occurs in training), :func:`ngram_share` (word 4-grams seen in training), :func:`duplicate_share` (repeated training
sentences) and :func:`repeated_clause_share` (sentences that say the same six words twice).
"""

from __future__ import annotations

import bisect
import re

KEPT = ("function", "agree", "punct")  # labels whose words stay in a skeleton


def _body(s) -> str:
    """A sentence's text without its trailing newline and final full stop."""
    t = s.text.rstrip("\n")
    return t[:-1] if t.endswith(".") else t


def prefix_leak(pool, train) -> float:
    """Share of ``pool`` sentences whose text (without the final full stop) begins some training sentence."""
    texts = sorted(s.text for s in train)
    hits = 0
    for s in pool:
        body = _body(s)
        i = bisect.bisect_left(texts, body)
        hits += i < len(texts) and texts[i].startswith(body)
    return hits / len(pool)


def skeleton(s) -> tuple:
    return tuple(w if lab in KEPT else lab.upper() for w, lab in s.words())


def skeleton_share(pool, train) -> float:
    seen = {skeleton(s) for s in train}
    return sum(skeleton(s) in seen for s in pool) / len(pool)


def _ngrams(s, n: int):
    w = [x for x, _ in s.words()]
    return [" ".join(w[i : i + n]) for i in range(len(w) - n + 1)]


def ngram_share(pool, train, n: int = 4) -> float:
    seen = {g for s in train for g in _ngrams(s, n)}
    grams = [g for s in pool for g in _ngrams(s, n)]
    return sum(g in seen for g in grams) / len(grams)


def duplicate_share(sentences) -> float:
    """Share of sentences that repeat an earlier one exactly."""
    return 1 - len({s.text for s in sentences}) / len(sentences)


def repeated_clause_share(sentences, n: int = 6) -> float:
    """Share of sentences in which some run of ``n`` words occurs twice."""

    def repeats(s):
        grams = _ngrams(s, n)
        return len(set(grams)) < len(grams)

    return sum(map(repeats, sentences)) / len(sentences)


_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def late_past_share(sentences, present: int) -> float:
    """Share of sentences naming a year after ``present`` other than as a deadline ("by 2027"): events told in the
    past tense that have not happened yet."""

    def late(s):
        t = s.text
        return any(int(m.group()) > present and not t[: m.start()].rstrip().endswith("by") for m in _YEAR.finditer(t))

    return sum(map(late, sentences)) / len(sentences)


def report(pools: dict, train, present: int | None = None) -> dict:
    """All the measures for ``pools`` (``{domain: validation sentences}``) against the training text."""
    out = {"training_duplicates": duplicate_share(train)}
    for domain, pool in pools.items():
        out[domain] = {
            "prefix_leak": prefix_leak(pool, train),
            "skeleton_share": skeleton_share(pool, train),
            "ngram4_share": ngram_share(pool, train),
            "repeated_clause": repeated_clause_share(pool),
        }
        if present is not None:
            out[domain]["late_past"] = late_past_share(pool, present)
    return out
