"""The one batching and padding helper of the book: samples in batches of similar length, each batch right-padded
with the tokenizer's pad id (GPT-2 has none: 0, which the attention mask never lets a real token see). Hidden
states (:mod:`jtc_utils.core.analysis.hidden`), the sub-module and FFN recorders, the linearity chapter's every-token
states and pruning, and the zoo's training batches all pad here."""

from __future__ import annotations

import numpy as np


def batches_by_length(lengths, batch_size: int) -> list[np.ndarray]:
    """Indices in batches of ``batch_size``, shortest first (a stable sort, so equal lengths keep their order)."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def pad_id(tokenizer) -> int:
    """The id that pads a batch for this tokenizer: its pad token, or 0 where it has none (GPT-2)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0


def right_pad(seqs, pad: int):
    """Token id lists as one right-padded batch: ``(input ids, attention mask)``, long tensors ``[len(seqs), T]``."""
    import torch

    T = max(len(x) for x in seqs)
    inp = torch.full((len(seqs), T), pad, dtype=torch.long)
    att = torch.zeros((len(seqs), T), dtype=torch.long)
    for r, x in enumerate(seqs):
        inp[r, : len(x)] = torch.as_tensor(np.asarray(x), dtype=torch.long)
        att[r, : len(x)] = 1
    return inp, att
