"""Top-k tokens of ``id`` and ``mat`` at chosen layers for single sentences (the paper's Table 1), and an automatic
version of the paper's hand-made plausibility study. A sentence is typed with ``[MASK]`` where the token to predict
goes: BERT-style models predict the masked token, GPT-style models the token after the text before ``[MASK]``. A
token counts as plausible when it fills a slot of the same word class somewhere in the domain's training sentences
(:func:`slot_lexicon`): coarser than the paper's annotator (any number fits a number slot), but automatic and the
same for both mappings.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import numpy as np
import pandas as pd

from jtc_utils.core.infra import ordering, resample
from jtc_utils.core.analysis import readout
from jtc_utils.core.data import sources
from jtc_utils.base import validate
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.analysis.readout import token_strings

MASK = "[MASK]"


def encode(ad, sentence: str) -> tuple[list[int], int]:
    """Token ids and the position whose prediction is read, for a typed sentence (see the module docstring)."""
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence must be a non-empty string, got {sentence!r}")
    tok = ad.tokenizer
    n_mask = sentence.count(MASK)
    limit = ad.model.config.max_position_embeddings
    if not ad.causal:  # a masked model (BERT-style) predicts the token under its mask
        if n_mask != 1:
            raise ValueError(
                f"a BERT-style model predicts one masked token, but the sentence has {n_mask} "
                f"{MASK} tokens; write exactly one {MASK} where the word to predict goes, e.g. "
                f"'the river flows through [MASK] .'"
            )
        ids = tok(sentence, add_special_tokens=True)["input_ids"]
        pos = ids.index(tok.mask_token_id)
    else:
        if n_mask > 1:
            raise ValueError(
                f"a GPT-style model predicts the token after the text before {MASK}; the sentence has "
                f"{n_mask} of them: keep one (or none, to predict after the whole text)"
            )
        prefix = sentence.split(MASK)[0] if n_mask else sentence
        ids = tok(prefix.rstrip(" "), add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(
                f"there is no text before {MASK}: a GPT-style model needs at least one token to predict the next one"
            )
        pos = len(ids) - 1
    if len(ids) > limit:
        raise ValueError(f"the sentence has {len(ids)} tokens but {ad.name} reads at most {limit}; shorten it")
    return ids, pos


def states_at(ad, ids: list[int], pos: int) -> np.ndarray:
    """Hidden states ``h^0 .. h^L`` at position ``pos`` of one sentence, [L+1, d] (raw ``h^L`` for GPT-style)."""
    import torch

    with torch.inference_mode():
        x = torch.tensor([ids])
        return ad.forward_states(x, torch.ones_like(x))[:, 0, pos].cpu().numpy()


def top_ids(exp, H: np.ndarray, layers, mapping: str, k: int) -> np.ndarray:
    """Top-``k`` ids [len(layers), n, k] of ``mapping`` for states ``H`` [L+1, n, d] at ``layers``, ranked as every
    displayed list is (:func:`jtc_utils.core.infra.ordering.top_k`: near-ties by the lower id on every machine)."""
    (k,) = readout.check_ks(exp.adapter, (k,))
    out = []
    for layer in layers:
        V = readout.cast(exp, mapping, layer, H[layer])
        out.append(
            np.concatenate(
                [
                    ordering.top_k(readout.readout_logits(exp.adapter, V[a : a + readout.CHUNK]), k)[0]
                    for a in range(0, len(V), readout.CHUNK)
                ]
            )
        )
    return np.stack(out)


def default_layers(n_layers: int) -> list[int]:
    """The paper's Table 1 columns for BERT-large (L = 24) are layers 4 and 12: about one sixth and one half."""
    return [round(n_layers / 6), n_layers // 2]


def top_tokens(exp, sentence: str, layers=None, k: int = 5) -> pd.DataFrame:
    """Table 1 for one typed sentence: rows = rank 1..k, columns ``id_l``, ``mat_l`` for each of ``layers``
    (default: about L/6 and L/2) and ``final`` (the model's own output)."""
    ids, pos = encode(exp.adapter, sentence)
    return _table(exp, states_at(exp.adapter, ids, pos)[:, None], layers, k, [sentence])


def top_tokens_of_samples(exp, indices, layers=None, k: int = 5) -> pd.DataFrame:
    """Table 1 for validation samples ``indices`` of the experiment (their text with ``[MASK]`` as the index)."""
    indices = validate.index_list(indices, "indices", len(exp.val), "validation samples")
    H = exp.X_val[:, indices]
    names = [sample_text(exp, i) for i in indices]
    return _table(exp, H, layers, k, names)


def sample_text(exp, i: int) -> str:
    """A validation sample as text with the predicted slot marked ``[MASK]`` (GPT: what follows is cut off)."""
    ad, val = exp.adapter, exp.val
    ids, pos = list(val.input_ids[i]), int(val.positions[i])
    if not ad.causal:  # a masked model (BERT-style) predicts the token under its mask
        return ad.tokenizer.decode(ids[1:-1])
    return ad.tokenizer.decode(ids[: pos + 1]) + " " + MASK


def column(mapping: str, layer: int) -> str:
    """The table's column of a mapping's top tokens at a layer, as the page heads it (``"mat, ℓ=6"``)."""
    return f"{mapping}, ℓ={layer}"


def _table(exp, H, layers, k, names) -> pd.DataFrame:
    L = exp.n_layers
    (k,) = readout.check_ks(exp.adapter, (k,))
    layers = default_layers(L) if layers is None else validate.layer_list(layers, L, exp.model_name)
    cols = {}
    for layer in layers:
        for m in ("id", "mat"):
            cols[column(m, layer)] = top_ids(exp, H, [layer], m, k)[0]
    cols["final"] = top_ids(exp, H, [L], "id", k)[0]
    rows = []
    for s, name in enumerate(names):
        for r in range(k):
            rows.append(
                {
                    "sentence": name,
                    "rank": r + 1,
                    **{c: token_strings(exp.adapter, [v[s, r]])[0] for c, v in cols.items()},
                }
            )
    return pd.DataFrame(rows).set_index(["sentence", "rank"])


@lru_cache(maxsize=8)
def _lexicon(domain: str, profile: Profile, seed: int, tokenizer) -> dict:
    sents = sources.sentences(profile, domain, "train", seed=seed)
    if not hasattr(sents[0], "label_at"):
        raise ValueError("automatic plausibility needs word labels, which only the embedded corpus has")
    lex = defaultdict(set)
    enc = tokenizer([s.text for s in sents], add_special_tokens=False, return_offsets_mapping=True)
    for s, ids, offs in zip(sents, enc["input_ids"], enc["offset_mapping"]):
        for t, (a, b) in zip(ids, offs):
            lex[s.label_at(a, b)].add(t)
    return {lab: frozenset(v) for lab, v in lex.items()}


def slot_lexicon(exp) -> dict:
    """``{label: token ids seen filling a slot of that label}`` in the domain's training sentences."""
    return _lexicon(exp.domain, exp.profile, exp.seed, exp.adapter.tokenizer)


def plausibility(exp, n_sentences: int = 50, k: int = 5) -> dict:
    """The paper's plausibility study, automatic: for the first ``n_sentences`` validation samples whose slot has a
    word label, at every layer 0..L, the share of the top-``k`` tokens of ``mat`` and ``id`` that can fill the
    slot's word class. Returns per-layer rates, overall token and instance rates, and the share of instances where
    ``id`` has more plausible tokens than ``mat`` (the paper: 85.36% vs 52.8%, id better in < 4.3%)."""
    n_sentences = validate.integer(n_sentences, "n_sentences", minimum=1, example="n_sentences=50")
    (k,) = readout.check_ks(exp.adapter, (k,))
    labels = exp.val.target_labels or exp.val.labels
    chosen = [i for i, lab in enumerate(labels) if lab not in (None, "special", "end")][:n_sentences]
    if len(chosen) < n_sentences:
        raise ValueError(f"only {len(chosen)} validation samples have a labelled slot; ask for at most that many")
    lex = slot_lexicon(exp)
    L = exp.n_layers
    H = exp.X_val[:, chosen]
    counts = {}
    for m in ("mat", "id"):
        top = top_ids(exp, H, range(L + 1), m, k)  # [L+1, n, k]
        ok = np.array(
            [
                [[t in lex.get(labels[i], ()) for t in top[layer, j]] for j, i in enumerate(chosen)]
                for layer in range(L + 1)
            ]
        )
        counts[m] = ok.sum(-1)  # plausible tokens per instance [L+1, n]
    return {
        "n_sentences": n_sentences,
        "k": k,
        "n_instances": int(counts["mat"].size),
        "samples": chosen,
        "slot_labels": [labels[i] for i in chosen],
        "per_layer": {m: counts[m].mean(1) / k for m in counts},
        "token_rate": {m: float(counts[m].mean() / k) for m in counts},
        "id_better_share": float((counts["id"] > counts["mat"]).mean()),
        "mat_better_share": float((counts["mat"] > counts["id"]).mean()),
        # the rates under the claims' resamples of the sentences (see jtc_utils.evidence.verdicts)
        "boot": {
            "token_rate": {m: resample.resampled_mean(counts[m].mean(0) / k) for m in counts},
            "id_better_share": resample.resampled_mean((counts["id"] > counts["mat"]).mean(0)),
        },
    }
