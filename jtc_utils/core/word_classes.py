"""Automatic word classes for a real vocabulary, read from text alone (issue 55; the real model's counterpart of
:mod:`jtc_utils.embedded.lexicon`, which reads the generator's own word lists).

Geva et al. (2022) had experts name the pattern the top tokens of a value vector share. A real vocabulary has no
generator lists, so every token that occurs often enough in the profile's *training* sentences gets one class by a
rule fixed before any value vector was read:

1. by its form: ``punct`` (no letter or digit), ``number`` (digits, with ``,`` ``.``);
2. ``function``: the :data:`FUNCTION_WORDS` most frequent tokens that start a word and are made of letters;
3. every other token seen at least :data:`MIN_COUNT` times (whitespace aside): a *distributional class*. Its context vector counts the
   token just before and the token just after it, over the :data:`CONTEXTS` most frequent tokens (left and right
   apart); positive pointwise mutual information, a truncated SVD to :data:`DIMS` dimensions, rows scaled to unit
   length, and Ward's agglomerative clustering (scipy) cut into one class per :data:`PER_CLASS` tokens. Words used
   in the same slots land together (past-tense verbs, nationalities, directions, suffixes ...).

A token seen fewer than :data:`MIN_COUNT` times has no class (never part of a concept). Each class has a group,
Geva et al.'s three kinds of pattern: ``punct``, ``number`` and ``function`` are ``syntactic``; a distributional
class is ``names`` when most of its tokens start a capitalised word, ``syntactic`` when most continue a word (no
leading space), else ``semantic``.

What it can see: the classes of words frequent in the training text, found from their neighbours only. What it
cannot: the tokens the text rarely uses (most of a 49k vocabulary: code, other languages, rare pieces), meaning
beyond the immediate neighbours (a class mixes words of one slot that a reader would split by topic), and any
pattern a person names from world knowledge. Coverage measured with it is a lower bound of what an annotator sees.

Deterministic: counts are integers, the SVD runs in float64 and its coordinates are rounded to :data:`DIGITS`
decimals before clustering, so other BLAS paths give the same classes (ties in the frequency ranks go to the lower
token id).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

FUNCTION_WORDS = 100  # the most frequent word-start tokens that are function words
MIN_COUNT = 20  # occurrences in the training text for a class
CONTEXTS = 500  # the most frequent tokens that serve as left and right contexts
DIMS = 50  # the SVD's dimensions
PER_CLASS = 25  # labelled tokens per distributional class, on average
DIGITS = 6  # decimals kept of the SVD coordinates before clustering
_NUMBER = re.compile(r"^\s*[0-9][0-9,.]*\s*$")
_PUNCT = re.compile(r"^\s*[^\w\s]+$")
_WORD = re.compile(r"^ [A-Za-z]+$")


def _forms(tokenizer, ids) -> dict:
    return {int(t): tokenizer.decode([int(t)]) for t in ids}


def _counts(tokenizer, texts) -> tuple[Counter, list[np.ndarray]]:
    seqs = [np.asarray(ids, dtype=np.int64) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]
    counts = Counter()
    for s in seqs:
        counts.update(s.tolist())
    return counts, seqs


def _ranked(counts: Counter, ids=None) -> list[int]:
    """Token ids by descending count, ties by the lower id (a total order)."""
    keys = counts if ids is None else ids
    return sorted(keys, key=lambda t: (-counts[t], t))


def _context_vectors(seqs, tokens: list[int], contexts: list[int]) -> np.ndarray:
    """[len(tokens), 2·len(contexts)] PPMI of (token, left neighbour) and (token, right neighbour)."""
    row = {t: i for i, t in enumerate(tokens)}
    col = {t: i for i, t in enumerate(contexts)}
    C = np.zeros((len(tokens), 2 * len(contexts)), dtype=np.float64)
    for s in seqs:
        for a in range(len(s)):
            r = row.get(int(s[a]))
            if r is None:
                continue
            if a > 0 and int(s[a - 1]) in col:
                C[r, col[int(s[a - 1])]] += 1
            if a + 1 < len(s) and int(s[a + 1]) in col:
                C[r, len(contexts) + col[int(s[a + 1])]] += 1
    total = C.sum()
    pr, pc = C.sum(1, keepdims=True) / total, C.sum(0, keepdims=True) / total
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(C / total / (pr * pc))
    return np.where(C > 0, np.maximum(pmi, 0.0), 0.0)


def _embed(ppmi: np.ndarray) -> np.ndarray:
    U, S, _ = np.linalg.svd(ppmi, full_matrices=False)
    X = U[:, :DIMS] * S[:DIMS]
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    return np.round(X, DIGITS)


def _group(forms: list[str]) -> str:
    capital = sum(f.startswith(" ") and f[1:2].isupper() for f in forms)
    piece = sum(not f.startswith(" ") for f in forms)
    if 2 * capital > len(forms):
        return "names"
    if 2 * piece > len(forms):
        return "syntactic"
    return "semantic"


def word_classes(tokenizer, texts) -> dict:
    """The classes of a tokenizer's vocabulary read from ``texts`` (training sentences): ``{"token_class": {token
    id: class}, "groups": {class: group}, "examples": {class: its five most frequent tokens}, "sizes": {class:
    tokens}, "counts": {...}}``, classes in order: function, number, punct, then class 1, 2, ..."""
    texts = [getattr(t, "text", t) for t in texts]
    if not texts:
        raise ValueError("word_classes needs training sentences to read the classes from, got none; pass the "
                         "profile's training sentences")
    counts, seqs = _counts(tokenizer, texts)
    seen = _ranked(counts, [t for t, n in counts.items() if n >= MIN_COUNT])
    forms = _forms(tokenizer, seen)
    token_class, groups = {}, {"punct": "syntactic", "number": "syntactic", "function": "syntactic"}
    for t in seen:
        if _NUMBER.match(forms[t]):
            token_class[t] = "number"
        elif _PUNCT.match(forms[t]):
            token_class[t] = "punct"
    words = [t for t in seen if t not in token_class and _WORD.match(forms[t])]
    for t in words[:FUNCTION_WORDS]:
        token_class[t] = "function"
    rest = [t for t in seen if t not in token_class and forms[t].strip()]
    n_classes = len(rest) // PER_CLASS
    if n_classes >= 2:
        from scipy.cluster.hierarchy import fcluster, linkage

        X = _embed(_context_vectors(seqs, rest, _ranked(counts)[:CONTEXTS]))
        labels = fcluster(linkage(X, method="ward"), n_classes, criterion="maxclust")
        members = {}
        for t, c in zip(rest, labels):
            members.setdefault(int(c), []).append(t)
        # classes named by their order of first appearance in the frequency ranking: stable across runs
        for k, c in enumerate(sorted(members, key=lambda c: rest.index(members[c][0]))):
            name = f"class {k + 1}"
            for t in members[c]:
                token_class[t] = name
            groups[name] = _group([forms[t] for t in members[c]])
    present = set(token_class.values())
    order = sorted(present, key=lambda c: (c.startswith("class "), int(c.split()[-1]) if c.startswith("class ")
                                           else 0, c))  # the form classes, then the distributional ones by number
    members = {c: [forms[t] for t in seen if token_class.get(t) == c] for c in order}
    return {"token_class": token_class, "groups": {c: groups[c] for c in order},
            "examples": {c: m[:5] for c, m in members.items()}, "sizes": {c: len(m) for c, m in members.items()},
            "counts": {"sentences": len(texts), "tokens": int(sum(counts.values())), "types": len(counts),
                       "labelled": len(token_class), "distributional": len(rest), "classes": len(present)}}
