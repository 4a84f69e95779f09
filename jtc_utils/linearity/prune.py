"""Pruning by linearity (Razzhigaev et al. 2024, section 5; related-systems spec 4.2 item 7): a block is
**removed**, **replaced** by an affine map fitted by least squares on every position of training sentences, or
replaced and **distilled** (only the replacements trained, Adam lr 1e-3 for 500 steps, on the layer-wise mean
squared error after the first replaced block) (:data:`MODES`). Blocks are chosen once, by the unpruned model's
held-out linearity with residual: the k most linear, the k least linear, or k at random (:data:`STRATEGIES`).
Damage is held-out perplexity and next-token accuracy (and the accuracy at ``fact`` words). GPT-2 and LLaMA
architectures, through :class:`~jtc_utils.core.models.models.Adapter`.
"""

from __future__ import annotations

import math
import random
from contextlib import contextmanager

import numpy as np

from jtc_utils.core.infra import costs
from jtc_utils.core.models.batching import pad_id, right_pad
from jtc_utils.core.models.models import Adapter
from jtc_utils.training import loop

from .score import check_layer, fit_affine

STRATEGIES = ("most linear", "least linear", "random")
MODES = ("remove", "replace", "replace + distil")
DISTIL_STEPS, DISTIL_LR = 500, 1e-3


def _module():
    import torch

    class Substitute(torch.nn.Module):
        """Stands in for a block: ``h -> h M + c`` (removal: M = I, c = 0, not trainable)."""

        def __init__(self, M, c, trainable: bool):
            super().__init__()
            M = torch.as_tensor(np.asarray(M), dtype=torch.float32)
            c = torch.as_tensor(np.asarray(c), dtype=torch.float32)
            self.M = torch.nn.Parameter(M, requires_grad=trainable)
            self.c = torch.nn.Parameter(c, requires_grad=trainable)

        def forward(self, hidden_states, *args, **kwargs):
            return hidden_states @ self.M + self.c

    return Substitute


def layers(ad: Adapter):
    """The decoder's ModuleList of blocks (GPT-2 ``transformer.h``, the others' ``layers``)."""
    return ad.blocks


def check_k(k: int, n_layers: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"the number of blocks to prune must be an integer, got {k!r}")
    if not 1 <= k < n_layers:
        raise ValueError(
            f"cannot prune {k} of {n_layers} blocks: choose k between 1 and {n_layers - 1} (k = 0 is the "
            f"unpruned model; pruning every block leaves no transformer)"
        )
    return int(k)


def choose(scores_by_block: dict, k: int, strategy: str, draw: int = 0) -> list[int]:
    """The blocks (1..L) to prune: ``scores_by_block`` maps block l to the held-out linearity score of
    h^(l-1) -> h^l."""
    L = len(scores_by_block)
    check_k(k, L)
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if strategy == "random":
        return sorted(random.Random(f"prune/{draw}").sample(sorted(scores_by_block), k))
    order = sorted(scores_by_block, key=lambda b: scores_by_block[b], reverse=strategy == "most linear")
    return sorted(order[:k])


@contextmanager
def pruned(ad: Adapter, substitutes: dict):
    """Within the block, the model runs with ``substitutes`` ({block l (1-based): (M, c) or None for removal}) in
    place of its blocks; the original blocks are put back afterwards, whatever happens."""
    Substitute = _module()
    mods = layers(ad)
    saved = {}
    try:
        for b, mc in substitutes.items():
            check_layer(b, len(mods))
            saved[b] = mods[b - 1]
            d = ad.d
            M, c = (np.eye(d), np.zeros(d)) if mc is None else mc
            mods[b - 1] = Substitute(M, c, trainable=mc is not None).to(ad.device)
        yield {b: mods[b - 1] for b in substitutes}
    finally:
        for b, block in saved.items():
            mods[b - 1] = block


def _batches(seqs, batch_size: int, pad: int, dev=None):
    """``(start, input ids, attention mask)`` for consecutive batches of ``seqs``, in their order, on ``dev``."""
    for i in range(0, len(seqs), batch_size):
        yield (i, *(t.to(dev) for t in right_pad(seqs[i : i + batch_size], pad)))


def evaluate(
    ad: Adapter,
    seqs: list[list[int]],
    fact_mask: list[np.ndarray] | None = None,
    batch_size: int = 32,
    per_sequence: bool = False,
) -> dict:
    """Next-token loss (perplexity) and top-1 accuracy over every position of ``seqs`` (each predicts the next token);
    with ``fact_mask`` (per sequence, True where the *next* token is part of a fact word) also the accuracy there;
    ``per_sequence``: also each sequence's summed loss and token count (``seq_nll``, ``seq_tokens``), from which the
    perplexity under a resample of the sequences is read (:func:`resampled_perplexity`)."""
    import torch

    # batches of sequences of like length (longest first), so that padding costs little; each sequence's numbers
    # are put back in the order of ``seqs``
    order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
    by_length = [seqs[i] for i in order]
    nll, correct, count, f_correct, f_count = 0.0, 0, 0, 0, 0
    seq_nll, seq_tok = np.zeros(len(seqs)), np.zeros(len(seqs))
    with torch.inference_mode():
        for i, inp, att in _batches(by_length, batch_size, pad_id(ad.tokenizer), ad.device):
            costs.forward(ad, *inp.shape)
            costs.arithmetic(f32=inp.numel() * ad.d * ad.vocab_size)  # the vocabulary readout
            logits = ad.model(input_ids=inp, attention_mask=att).logits[:, :-1]
            tgt = inp[:, 1:]
            keep = att[:, 1:].bool()
            hit = logits.argmax(-1) == tgt  # (float64 would order the logits the same)
            logits = logits.double()
            tok_nll = torch.logsumexp(logits, -1) - logits.gather(-1, tgt[..., None])[..., 0]
            nll += float(tok_nll[keep].sum())
            rows = order[i : i + len(inp)]
            seq_nll[rows] = (tok_nll * keep).sum(1).numpy(force=True)
            seq_tok[rows] = keep.sum(1).numpy(force=True)
            correct += int(hit[keep].sum())
            count += int(keep.sum())
            if fact_mask is not None:
                for r, row in enumerate(rows):
                    m = torch.as_tensor(fact_mask[row][1:]).to(hit.device)
                    f_correct += int(hit[r, : len(m)][m].sum())
                    f_count += int(m.sum())
    out = {"loss": nll / count, "perplexity": math.exp(nll / count), "accuracy": correct / count, "tokens": count}
    if fact_mask is not None:
        out["fact_accuracy"] = f_correct / max(f_count, 1)
        out["fact_tokens"] = f_count
    if per_sequence:
        out["seq_nll"], out["seq_tokens"] = seq_nll, seq_tok
    return out


def resampled_perplexity(seq_nll, seq_tokens, weights) -> np.ndarray:
    """The perplexity under each resample of the sequences (``weights`` [B, n]: how often each is drawn): the
    exponential of the drawn sequences' summed loss over their tokens, [B]."""
    W = np.asarray(weights, dtype=float)
    return np.exp((W @ np.asarray(seq_nll)) / (W @ np.asarray(seq_tokens)))


def block_io(ad: Adapter, seqs: list[list[int]], batch_size: int = 32) -> np.ndarray:
    """Every real token's states h^0..h^L of ``seqs``, [L+1, n, d] float32, read with hooks on the blocks, so that it
    also works inside :func:`pruned` (Hugging Face records hidden states by block class, which a substitute is not)."""
    import torch

    chunks = []
    with torch.inference_mode():
        for _, inp, att in _batches(seqs, batch_size, pad_id(ad.tokenizer), ad.device):
            outs = _block_outputs(ad, inp, att, with_input=True)
            keep = att.bool()
            chunks.append(torch.stack([o[keep] for o in outs]).float().cpu().numpy())
    return np.concatenate(chunks, axis=1)


def replacements(states: np.ndarray, blocks) -> dict:
    """{block l: affine (M, c) fitted on h^(l-1) -> h^l} from ``states`` [L+1, n, d] of the unpruned model."""
    return {b: fit_affine(states[b - 1], states[b]) for b in blocks}


def _block_outputs(ad: Adapter, inp, att, with_input: bool = False) -> list:
    """One forward pass that returns every block's output, h^1..h^L (and h^0 first, ``with_input``), read with hooks
    on the blocks: Hugging Face records hidden states by block class, which a substitute is not."""
    mods = layers(ad)
    outs, handles = [], []
    for m in mods:
        handles.append(
            m.register_forward_hook(lambda mod, args, out: outs.append(out[0] if isinstance(out, tuple) else out))
        )
    if with_input:
        handles.append(mods[0].register_forward_pre_hook(lambda mod, args: outs.insert(0, args[0])))
    try:
        ad.model(input_ids=inp, attention_mask=att)
    finally:
        for h in handles:
            h.remove()
    return outs


def distil(
    ad: Adapter,
    fits: dict,
    seqs: list[list[int]],
    steps: int = DISTIL_STEPS,
    lr: float = DISTIL_LR,
    batch_size: int = 16,
    seed: int = 0,
) -> tuple[dict, list[float]]:
    """Layer-wise distillation of replacement maps ``fits`` ({block l: (M, c)}): only the maps are trained, so that
    the pruned model's states after the first replaced block match the full model's (the sum over blocks
    j >= first replaced of the mean squared error of h^j over real tokens, on ``seqs``). Returns the trained maps
    and the loss curve."""
    import torch

    first = min(fits)
    batches = list(_batches(seqs, batch_size, pad_id(ad.tokenizer), ad.device))
    teacher = []
    with torch.no_grad():
        for _, inp, att in batches:  # the full model's block outputs h^first..h^L, once
            teacher.append([o.detach() for o in _block_outputs(ad, inp, att)[first - 1 :]])
    rng = np.random.default_rng(seed)
    curve = []
    with pruned(ad, fits) as subs:
        params = [p for m in subs.values() for p in m.parameters()]
        opt = torch.optim.Adam(params, lr=lr)

        def step(_: int) -> None:
            b = int(rng.integers(len(batches)))
            _, inp, att = batches[b]
            outs = _block_outputs(ad, inp, att)
            keep = att.bool()
            loss = sum(torch.nn.functional.mse_loss(o[keep], t[keep]) for o, t in zip(outs[first - 1 :], teacher[b]))
            loop.optimiser_step(loss, params, opt, clip=None)  # plain Adam steps, as the distillation was run
            curve.append(loss.item())

        loop.loop(steps, 0, step, desc="distil", progress=False)
        trained = {
            b: (m.M.detach().double().cpu().numpy().copy(), m.c.detach().double().cpu().numpy().copy())
            for b, m in subs.items()
        }
    return trained, curve
