"""Concepts in value vectors, measured automatically (Geva et al. section 4, Table 2, Figures 2 and 4; spec 2.4).

The paper's experts read the top-30 tokens of a value's projection and marked the tokens sharing a pattern. Here
every token has one word class from the generator (:func:`jtc_utils.embedded.lexicon.token_classes`), and the **concept
rule** is: in a top-30 list, a class holding at least 4 tokens is a concept; the list's *coverage* is the share of
its 30 tokens inside concepts. ``mixed`` and unseen tokens are never a concept. Coverage is compared for value
vectors, Gaussian random vectors with the values' per-coordinate statistics (10 per layer), 10 random whole FFN
updates per layer (their function-word and punctuation concepts excluded, as the paper excludes stopword
patterns), and 30 tokens drawn uniformly from the vocabulary (chance).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from jtc_utils.embedded.lexicon import GROUPS, MIXED

TOP = 30
MIN_TOKENS = 4
UNSEEN = "unseen"
STOPWORD_CLASSES = ("function", "punct")


def classes_of(ids, token_class: dict) -> list[str]:
    return [token_class.get(int(t), UNSEEN) for t in ids]


def concept_of(ids, token_class: dict, exclude=()) -> tuple[float, str | None, dict]:
    """(coverage, the largest concept or None, {concept class: tokens}) of one top-k list."""
    counts = Counter(c for c in classes_of(ids, token_class) if c not in (MIXED, UNSEEN) and c not in exclude)
    concepts = {c: n for c, n in counts.items() if n >= MIN_TOKENS}
    top = max(concepts, key=lambda c: (concepts[c], c)) if concepts else None
    return sum(concepts.values()) / len(ids), top, concepts


def coverage(id_lists, token_class: dict, exclude=()) -> np.ndarray:
    return np.array([concept_of(ids, token_class, exclude)[0] for ids in id_lists])


def labelled(id_lists, token_class: dict) -> float:
    """Share of the tokens of the lists that carry a class (neither ``mixed`` nor unseen): how much of the lists the
    labelling can see at all."""
    cls = [c for ids in id_lists for c in classes_of(ids, token_class)]
    return sum(c not in (MIXED, UNSEEN) for c in cls) / max(1, len(cls))


def by_group(id_lists, token_class: dict, groups: dict = GROUPS) -> dict:
    """Mean share of the 30 tokens inside concepts of each group (semantic / syntactic / names); ``groups``: class ->
    group (default the generator's; the real vocabulary's come from :mod:`jtc_utils.core.data.token_concepts`)."""
    out = {g: np.zeros(len(id_lists)) for g in ("semantic", "syntactic", "names")}
    for r, ids in enumerate(id_lists):
        for c, n in concept_of(ids, token_class)[2].items():
            out[groups[c]][r] += n / len(ids)
    return {g: float(v.mean()) for g, v in out.items()}


def chance(token_class: dict, vocab_size: int, n_draws: int = 2000, seed: int = 0, exclude=()) -> float:
    """Expected coverage of 30 tokens drawn uniformly without replacement from the vocabulary."""
    rng = np.random.default_rng(seed)
    draws = [rng.choice(vocab_size, TOP, replace=False) for _ in range(n_draws)]
    return float(coverage(draws, token_class, exclude).mean())


def big_classes(token_class: dict, vocab_size: int, share: float = 0.10) -> list[str]:
    """Classes holding more than ``share`` of the vocabulary (reported separately: 4 of 30 random tokens often
    fall into such a class by chance)."""
    counts = Counter(token_class.values())
    return sorted(c for c, n in counts.items() if n > share * vocab_size and c != MIXED)


SHUFFLES = 5  # labellings with the classes shuffled among the tokens: the labelling control's draws


def shuffled_labelling(token_class: dict, seed: int) -> dict:
    """``token_class`` with its classes shuffled among its tokens (every class keeps its size): a labelling that
    sees nothing of what the tokens are, the control a labelling must beat for its coverage to measure the vectors
    (issue 77)."""
    tokens = sorted(token_class)
    labels = [token_class[t] for t in tokens]
    order = np.random.default_rng([seed, 77]).permutation(len(tokens))
    return {t: labels[i] for t, i in zip(tokens, order)}


def shuffled_coverage(id_lists, token_class: dict, seed: int = 0, n: int = SHUFFLES) -> np.ndarray:
    """[n * lists] the coverage of every list under ``n`` shuffled labellings (:func:`shuffled_labelling`)."""
    return np.concatenate([coverage(id_lists, shuffled_labelling(token_class, seed + k)) for k in range(n)])


def permutation_p(a: np.ndarray, b: np.ndarray, n_perm: int = 10_000, seed: int = 0) -> float:
    """One-sided permutation p-value of mean(a) - mean(b) (a larger), (count + 1) / (n_perm + 1)."""
    rng = np.random.default_rng(seed)
    pooled = np.concatenate([a, b])
    obs = a.mean() - b.mean()
    count = 0
    for _ in range(n_perm):
        rng.shuffle(pooled)
        count += pooled[: len(a)].mean() - pooled[len(a) :].mean() >= obs - 1e-12
    return (count + 1) / (n_perm + 1)
