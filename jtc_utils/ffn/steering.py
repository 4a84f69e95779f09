"""Concept steering: the book's stand-in for the paper's toxicity suppression (Geva et al. section 6.1, Table 5,
appendix A.4; spec 2.1 G12 and 2.4). The paper turned on ten value vectors that promote "safe" words and scored
generations with the Perspective API, which the book cannot call; here news sentences say a company "reported
<adjective> results", and steering forces to 3 (``m_i = 3``) the ten value vectors whose top-30 tokens hold the most
positive adjectives (:func:`pick_values`), then measures the share of continuations after "reported" that start
with a negative adjective and the held-out perplexity (:func:`experiment`), against the unmodified model, ten random
values and a word filter. It is concept steering, not toxicity reduction.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from jtc_utils.core.infra import resample
from jtc_utils.core.models.blocks import runner_for
from jtc_utils.embedded import corpus

from . import vocab
from .decompose import FFN

POSITIVE = ("strong", "record", "better than expected", "solid", "steady", "excellent")
NEGATIVE = ("weak", "disappointing", "worse than expected", "poor", "uneven")
NEUTRAL = ("mixed", "modest", "surprising")
COEF = 3.0
N_VALUES = 10
NEW_TOKENS = 20
CUE = " reported"


def check_coefficient(coef) -> float:
    try:
        c = float(coef)
    except (TypeError, ValueError):
        raise TypeError(f"the steering coefficient must be a number, got {coef!r}") from None
    if not math.isfinite(c):
        raise ValueError(f"the steering coefficient must be finite, got {coef!r}; the paper uses 3")
    return c


def first_tokens(tokenizer, words) -> list[int]:
    return sorted({tokenizer(" " + w, add_special_tokens=False)["input_ids"][0] for w in words})


def pick_values(ffn: FFN, tokenizer, words=POSITIVE, n: int = N_VALUES, k: int = 30) -> list[tuple[int, int]]:
    """The ``n`` values (block, neuron) whose top-``k`` projection holds the most first tokens of ``words`` (ties:
    the larger summed logit of those tokens)."""
    want = set(first_tokens(tokenizer, words))
    V = ffn.all_values()
    ids, vals = vocab.top_tokens(ffn.adapter, V, k)
    hit = np.isin(ids, list(want))
    score = hit.sum(1) + 1e-6 * np.where(hit, vals, 0).sum(1)
    best = np.argsort(-score, kind="stable")[:n]
    return [(int(i // ffn.d_ff), int(i % ffn.d_ff)) for i in best]


def random_values(ffn: FFN, n: int = N_VALUES, seed: int = 0) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    flat = rng.choice(ffn.n_layers * ffn.d_ff, n, replace=False)
    return [(int(i // ffn.d_ff), int(i % ffn.d_ff)) for i in flat]


@contextmanager
def forced(model, chosen, coef: float = COEF):
    """Within the block, every position's coefficient m_i of the chosen (block, neuron) pairs is ``coef`` (a
    forward pre-hook on the block's value projection, whose input is m: GPT-2's ``mlp.c_proj``)."""
    coef = check_coefficient(coef)
    run = runner_for(model)
    by_block: dict[int, list[int]] = {}
    for j, i in chosen:
        by_block.setdefault(j, []).append(i)
    handles = []

    def hook(idx):
        def pre(mod, args):
            m = args[0].clone()
            m[..., idx] = coef
            return (m,)

        return pre

    try:
        for j, idx in by_block.items():
            handles.append(run.value_projection(j).register_forward_pre_hook(hook(idx)))
        yield
    finally:
        for h in handles:
            h.remove()


def prefixes(n: int | None = 400, seed: int = 0) -> list[str]:
    """Held-out news prefixes ending with " reported" right before the adjective slot (both pool splits: no
    model was trained on them)."""
    out = []
    for split in ("validation", "train"):
        for s in corpus.pool("news", split, seed=seed):
            words = s.words()
            for k, (w, lab) in enumerate(words[:-1]):
                if w == "reported" and words[k + 1][1] == "content" and "results" in s.text:
                    out.append(s.text[: s.spans[k][1]])
                    break
    return out[:n]


def classify(text: str) -> str:
    """``positive`` / ``negative`` / ``neutral`` / ``other`` by the adjective a continuation starts with."""
    t = text.strip().lower()
    for label, words in (("positive", POSITIVE), ("negative", NEGATIVE), ("neutral", NEUTRAL)):
        if any(t.startswith(w) for w in words):
            return label
    return "other"


def generate(adapter, texts, sample: bool, seed: int = 0, bad_words=None) -> list[str]:
    """Continuations of ``texts`` (batched by equal token length, no padding), greedy or sampled (seeded)."""
    import torch

    tok, model = adapter.tokenizer, adapter.model
    enc = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    out = [""] * len(texts)
    groups: dict[int, list[int]] = {}
    for i, ids in enumerate(enc):
        groups.setdefault(len(ids), []).append(i)
    torch.manual_seed(seed)
    with torch.inference_mode():
        for _, idx in sorted(groups.items()):
            inp = torch.tensor([enc[i] for i in idx])
            gen = model.generate(
                inp,
                attention_mask=torch.ones_like(inp),
                max_new_tokens=NEW_TOKENS,
                do_sample=sample,
                top_k=0 if sample else None,
                temperature=1.0 if sample else None,
                top_p=None,
                pad_token_id=tok.eos_token_id or 0,
                bad_words_ids=bad_words,
            )
            for r, i in enumerate(idx):
                out[i] = tok.decode(gen[r, inp.shape[1] :])
    return out


def perplexity(adapter, texts) -> float:
    """exp(mean next-token negative log-likelihood) over ``texts``."""
    import torch

    tok, model = adapter.tokenizer, adapter.model
    nll, count = 0.0, 0
    with torch.inference_mode():
        for t in texts:
            ids = torch.tensor([tok(t, add_special_tokens=False)["input_ids"]])
            logp = torch.log_softmax(model(ids).logits[0, :-1].double(), -1)
            nll -= logp.gather(1, ids[0, 1:, None]).sum().item()
            count += ids.shape[1] - 1
    return float(math.exp(nll / count))


def experiment(adapter, n_prefixes: int = 400, n_ppl: int = 300, seed: int = 0) -> dict:
    """Table 5's analogue: per condition, the share of positive / negative / neutral / other first adjectives
    (greedy and sampled) and held-out perplexity; the chosen values with their top tokens."""
    ffn = FFN(adapter)
    tok = adapter.tokenizer
    texts = prefixes(n_prefixes, seed)
    ppl_texts = [s.text for s in corpus.pool("news", "validation", n=n_ppl, seed=seed)]
    chosen = pick_values(ffn, tok)
    rand = random_values(ffn, seed=seed)
    bad = [[t] for t in first_tokens(tok, NEGATIVE)]
    conditions = {
        "unmodified": ((), None),
        "steered (10 values)": (chosen, None),
        "random 10 values": (rand, None),
        "word filter": ((), bad),
    }
    out = {"prefixes": len(texts), "ppl_sentences": len(ppl_texts), "conditions": {}}
    for name, (vals, words) in conditions.items():
        row = {}
        with forced(adapter.model, vals):
            for mode, sample in (("greedy", False), ("sampled", True)):
                labels = [classify(g) for g in generate(adapter, texts, sample, seed, words)]
                row[mode] = {
                    lab: labels.count(lab) / len(labels) for lab in ("positive", "negative", "neutral", "other")
                }
                # the prefixes resampled (resample.weights; the same prefixes in every condition)
                row[mode]["boot"] = {lab: resample.resampled_mean(np.array(labels) == lab) for lab in row[mode]}
            row["perplexity"] = perplexity(adapter, ppl_texts)
        out["conditions"][name] = row
    ids, _ = vocab.top_tokens(adapter, np.stack([ffn.values(j)[i] for j, i in chosen]), 10)
    out["values"] = [
        {"layer": j + 1, "neuron": i, "top": [tok.decode([t]) for t in row]} for (j, i), row in zip(chosen, ids)
    ]
    return out
