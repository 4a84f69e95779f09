"""Hidden states for the linearity scores, on two protocols (related-systems spec 4.2, item 2).

* **Paper protocol**: every position of whole sentences, stacked (the paper stacks every token of 128 text chunks,
  n of about 16,000). Here: the first sentences of the profile's main domain whose tokens add up to ``n_tokens``,
  validation split for the scores and train split for the held-out fit; position 0 is flagged, because its states
  have huge norms in GPT-2-style models and dominate a variance-weighted score.
* **Book sample**: the one position per sentence of the JTC experiments (``Experiment.X_train`` / ``X_val``).

Decoders give the raw ``h^L`` (before the final norm), as everywhere in the book.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from jtc_utils.base.state import Memo
from jtc_utils.core.infra import cache
from jtc_utils.core.data import profiles, sources
from jtc_utils.core.models.batching import batches_by_length, pad_id, right_pad
from jtc_utils.core.models.models import Adapter

N_TOKENS = 16_000  # the paper's n (128 chunks of 512 characters: about 15-20 thousand tokens)


def sentence_ids(
    ad: Adapter,
    split: str,
    n_tokens: int = N_TOKENS,
    profile: profiles.Profile | str = "tiny",
    domain: str | None = None,
) -> list[list[int]]:
    """Token ids of the first sentences of ``domain`` (the profile's main one) whose tokens reach ``n_tokens``,
    tokenised
    as the book's samples are (decoders without special tokens, encoders with [CLS] ... [SEP])."""

    if n_tokens < 2:
        raise ValueError(f"n_tokens must be at least 2, got {n_tokens}")
    prof = profiles.get(profile)
    domain = domain or prof.main_domain
    causal = ad.causal
    texts = [s.text for s in sources.sentences(prof, domain, split, seed=0)]
    out, total = [], 0
    for i in range(0, len(texts), 256):
        enc = ad.tokenizer(texts[i : i + 256], add_special_tokens=not causal, truncation=True, max_length=512)
        for ids in enc["input_ids"]:
            out.append(list(ids))
            total += len(ids)
            if total >= n_tokens:
                return out
    raise ValueError(
        f"the {domain}/{split} sentences hold only {total} tokens, fewer than n_tokens={n_tokens}; ask for fewer tokens"
    )


TOKENS_IN = Memo()  # (model, split, profile, domain, the profile's text) -> tokens: counted once per process


def tokens_in(ad: Adapter, split: str, profile: profiles.Profile | str = "tiny", domain: str | None = None) -> int:
    """How many tokens the sentences of ``split`` hold, tokenised as :func:`sentence_ids` does."""
    p = profiles.get(profile)
    domain = domain or p.main_domain
    key = (ad.identity, split, p.name, domain, repr(p.text_key()))

    def count() -> int:
        texts = [s.text for s in sources.sentences(p, domain, split, seed=0)]
        enc = ad.tokenizer(texts, add_special_tokens=not ad.causal, truncation=True, max_length=512)
        return sum(len(ids) for ids in enc["input_ids"])

    return TOKENS_IN.get(key, count)


def extract(ad: Adapter, seqs: list[list[int]], batch_size: int = 32) -> dict:
    """``{"X": [L+1, n, d] float32, "position": [n]}``: every token's states of ``seqs`` (not cached)."""
    import torch

    d, L = ad.d, ad.n_layers
    n = sum(len(x) for x in seqs)
    X = np.zeros((L + 1, n, d), dtype=np.float32)
    pos = np.zeros(n, dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum([len(x) for x in seqs])])
    with torch.inference_mode():
        for idx in batches_by_length([len(x) for x in seqs], batch_size):
            inp, att = right_pad([seqs[i] for i in idx], pad_id(ad.tokenizer))
            S = ad.forward_states(inp, att).float().cpu().numpy()  # [L+1, B, T, d]
            for r, i in enumerate(idx):
                m = len(seqs[i])
                X[:, starts[i] : starts[i] + m] = S[:, r, :m]
                pos[starts[i] : starts[i] + m] = np.arange(m)
    return {"X": X, "position": pos}


def all_positions(
    ad: Adapter,
    split: str = "validation",
    n_tokens: int = N_TOKENS,
    profile: profiles.Profile | str = "tiny",
    batch_size: int = 32,
    domain: str | None = None,
) -> dict:
    """``{"X": [L+1, n, d] float32, "position": [n]}``: every token's states on the paper's protocol, cached on the
    model's identity and the token ids."""
    seqs = sentence_ids(ad, split, n_tokens, profile, domain)
    digest = hashlib.sha256(json.dumps(seqs).encode()).hexdigest()
    key = {"what": "sl_states", "model": ad.identity, "ids": digest, "batch": batch_size}
    return cache.cached("sl_states", key, lambda: extract(ad, seqs, batch_size))
