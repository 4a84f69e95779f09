"""Experiment samples: sentences, their token ids and one seeded random position per sentence (spec 1.3).

* GPT-style: no BOS token; the position is uniform over all tokens ``0 .. n-1`` (the first token and a trailing
  newline token can be chosen). Only the prefix up to the position is fed to the model.
* BERT-style: ``[CLS] ... [SEP]``; the position is uniform over all tokens including ``[CLS]`` and ``[SEP]``, and
  the token there is replaced by ``[MASK]`` before the forward pass.

Every sample also carries the label of the token at its position (from the generated corpus; ``None`` for real
text), so results can be broken down by what kind of prediction it is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from jtc_utils.core.data import sources
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.models.models import CAUSAL_FAMILIES, FAMILIES


@dataclass
class Samples:
    family: str
    domain: str
    split: str
    texts: list[str]
    input_ids: list[list[int]]  # full sentences (BERT: already with [MASK] at the position)
    positions: np.ndarray  # int, one per sentence
    labels: list  # corpus label of the token at the position, or None
    seed: int
    target_labels: list | None = None  # label of the token the model predicts there (see make_samples)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def mean_length(self) -> float:
        """N of the early-exit threshold: the mean of (position + 1) over the samples (spec 6)."""
        return float(np.mean(self.positions + 1))

    def whole(self, n: int) -> "Samples":
        """The first ``n`` sentences whole, each one's position at its last token: what a pass over every position
        of a sentence reads (the perplexity of a text, the norms by position)."""
        return type(self)(
            family=self.family,
            domain=self.domain,
            split=self.split,
            texts=self.texts[:n],
            input_ids=self.input_ids[:n],
            positions=np.array([len(x) - 1 for x in self.input_ids[:n]]),
            labels=self.labels[:n],
            seed=self.seed,
        )


def _position_rng(family: str, domain: str, split: str, seed: int) -> random.Random:
    return random.Random(f"positions/{family}/{domain}/{split}/{seed}")


def _label(sentence, offsets, family: str):
    """What kind of prediction the token at the position is: the corpus label of its word, ``special`` for BERT's
    [CLS]/[SEP] (empty offsets), None for real text (which has no labels)."""
    a, b = offsets
    if family == "bert" and b <= a:
        return "special"
    return sentence.label_at(a, b) if hasattr(sentence, "label_at") else None


def make_samples(
    tokenizer,
    family: str,
    domain: str,
    split: str,
    n: int | None = None,
    profile: Profile | str = "tiny",
    seed: int = 0,
) -> Samples:
    """Tokenize the sentences of ``domain``/``split`` of ``profile`` (a :class:`Profile` or its name) and draw one
    position per sentence (seeded)."""

    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}; supported: {', '.join(FAMILIES)}")
    causal = family in CAUSAL_FAMILIES
    sents = sources.sentences(profile, domain, split, n=n, seed=seed)
    texts = [s.text for s in sents]
    max_len = min(getattr(tokenizer, "model_max_length", 1024), 1024 if causal else 512)
    enc = tokenizer(
        texts, add_special_tokens=not causal, truncation=True, max_length=max_len, return_offsets_mapping=True
    )
    rng = _position_rng(family, domain, split, seed)
    ids, pos, labels, targets = [], [], [], []
    for s, x, offs in zip(sents, enc["input_ids"], enc["offset_mapping"]):
        if not x:
            raise ValueError(f"sentence {s.text!r} has no tokens; remove empty sentences from the data")
        i = rng.randrange(len(x))
        x = list(x)
        if not causal:
            x[i] = tokenizer.mask_token_id
        ids.append(x)
        pos.append(i)
        labels.append(_label(s, offs[i], family))
        # what is predicted: the masked token itself (BERT), the next token (GPT; "end" after the last token)
        if not causal:
            targets.append(labels[-1])
        else:
            targets.append(_label(s, offs[i + 1], family) if i + 1 < len(x) else "end")
    return Samples(
        family=family,
        domain=domain,
        split=split,
        texts=texts,
        input_ids=ids,
        positions=np.asarray(pos, dtype=np.int64),
        labels=labels,
        seed=seed,
        target_labels=targets,
    )
