"""Hidden states ``h^0 .. h^L`` at each sample's chosen position, for all layers in one forward pass per batch.

Batches are sorted by length and right-padded with an attention mask; GPT-style models see only the prefix up to
the position (the causal mask makes this identical to running the whole sentence). Results are cached on disk,
keyed on the exact weights, the samples and the batch size.
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import cache
from .models import Adapter
from .samples import Samples


def model_identity(ad: Adapter) -> str:
    """A string that changes whenever the weights, the configuration or the tokenizer change."""
    return ad.identity


def samples_identity(s: Samples) -> str:
    h = hashlib.sha256()
    for ids, p in zip(s.input_ids, s.positions):
        h.update(np.asarray(ids, dtype=np.int64).tobytes())
        h.update(int(p).to_bytes(8, "little"))
    return h.hexdigest()


def batches_by_length(lengths, batch_size: int):
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def padded_batches(family: str, s: Samples, batch_size: int, pad_id: int = 0):
    """What the model reads for each sample, right-padded in length-sorted batches: ``(indices, input ids,
    attention mask, positions)`` as tensors. GPT-style models read the prefix ``ids[: position + 1]``, BERT-style
    ones the whole sentence (already holding ``[MASK]``)."""
    import torch

    from .models import CAUSAL_FAMILIES

    seqs = [ids[:p + 1] if family in CAUSAL_FAMILIES else ids for ids, p in zip(s.input_ids, s.positions)]
    for idx in batches_by_length([len(x) for x in seqs], batch_size):
        T = max(len(seqs[i]) for i in idx)
        inp = torch.full((len(idx), T), pad_id, dtype=torch.long)
        att = torch.zeros((len(idx), T), dtype=torch.long)
        for r, i in enumerate(idx):
            inp[r, :len(seqs[i])] = torch.tensor(seqs[i])
            att[r, :len(seqs[i])] = 1
        yield idx, inp, att, torch.as_tensor(s.positions[idx])


def pad_id(ad: Adapter) -> int:
    """The id that pads a batch for this model: the tokenizer's pad token (GPT-2 has none: 0, never attended)."""
    return ad.tokenizer.pad_token_id or 0


def _extract(ad: Adapter, s: Samples, batch_size: int, progress: bool) -> np.ndarray:
    import torch
    from tqdm.auto import tqdm

    out = np.zeros((ad.n_layers + 1, len(s), ad.d), dtype=np.float32)
    n_batches = -(-len(s) // batch_size)
    with torch.inference_mode():
        for idx, inp, att, pos in tqdm(padded_batches(ad.family, s, batch_size, pad_id(ad)), total=n_batches,
                                       desc=f"hidden states {ad.name}", disable=not progress, leave=False):
            states = ad.forward_states(inp, att)  # [L+1, B, T, d]
            out[:, idx] = states[:, torch.arange(len(idx)), pos.to(states.device)].float().cpu().numpy()
    return out


def hidden_states(ad: Adapter, s: Samples, batch_size: int = 64, progress: bool | None = None) -> np.ndarray:
    """``X[l, i] = h^l`` at sample i's position, float32 array of shape [L+1, n, d]."""
    from .progress import show_progress

    key = {"what": "hidden", "model": model_identity(ad), "samples": samples_identity(s), "batch": batch_size}
    show = show_progress() if progress is None else progress
    return cache.cached("hidden", key, lambda: {"X": _extract(ad, s, batch_size, show)})["X"]
