"""The prediction trajectory of a sentence: for a GPT-style model, the hidden state at every layer and position cast
to the last layer with each mapping (``id``, ``mat``, a trained lens) and read out as its top token and that token's
probability, like the tuned lens's prediction trajectory plot (:func:`trajectory`); the book's view of them
(``layer_view``, :func:`record`), drawn by :mod:`jtc_utils.book.display.layer_view`."""

from __future__ import annotations

from jtc_utils.core.analysis import experiment, readout
from jtc_utils.core.data import profiles
from jtc_utils.core.data.setting import Setting
from jtc_utils.core.analysis.readout import token_strings
from jtc_utils.evidence import figure_registry

from .registry import get

MAPPINGS = ("id", "mat")
LENSES = ("tuned",)  # trained lenses the view can show beside the paper's two (committed in zoo/lenses)
MAX_TOKENS = 16  # longer sentences are cut: the view is for reading, and a 16-column heatmap still fits


def _ids(ad, sentence: str) -> list[int]:
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence must be a non-empty string, got {sentence!r}")
    ids = ad.tokenizer(sentence, add_special_tokens=False)["input_ids"][:MAX_TOKENS]
    if not ids:
        raise ValueError(f"the sentence {sentence!r} has no tokens for {ad.name}")
    return ids


def trajectory(exp, sentence: str | None = None, ids=None, mappings=MAPPINGS) -> dict:
    """Top-1 token and its probability at every layer 0..L and position of one sentence (typed, or given as token
    ids), under each of ``mappings``: ``{"tokens", "model", mapping: {"token": [L+1][T], "p": [L+1][T]}}``.
    Position i shows the prediction of the token after it; the last row (layer L) is the model's own output."""
    import torch

    ad = exp.adapter
    if not ad.causal:
        raise ValueError(
            f"{exp.model_name} is not a decoder: the trajectory view reads next-token predictions, so "
            f"use a GPT-style model (a masked model predicts only its [MASK] positions: see Table 1)"
        )
    unknown = set(mappings) - set(readout.MAPPINGS) - set(LENSES)
    if unknown:
        raise ValueError(f"unknown mappings {sorted(unknown)}; choose from {', '.join((*readout.MAPPINGS, *LENSES))}")
    lenses = {m: _lens(exp, m) for m in mappings if m in LENSES}
    ids = _ids(ad, sentence) if ids is None else [int(i) for i in ids][:MAX_TOKENS]
    with torch.inference_mode():
        x = torch.tensor([ids])
        states = ad.forward_states(x, torch.ones_like(x))[:, 0].cpu().numpy()  # [L+1, T, d]
    out = {"model": exp.model_name, "tokens": token_strings(ad, ids)}
    for m in mappings:
        tok, prob = [], []
        for layer in range(exp.n_layers + 1):
            H = lenses[m].transform(states[layer], layer) if m in lenses else readout.cast(exp, m, layer, states[layer])
            logits = readout.readout_logits(ad, H)
            p = torch.softmax(logits.double(), -1)
            best = p.max(-1)
            tok.append(token_strings(ad, best.indices.tolist()))
            prob.append(best.values.cpu().numpy().round(6).tolist())
        out[m] = {"token": tok, "p": prob}
    return out


def _lens(exp, name: str):
    return get(name, seed=0).fit(exp)


def sentences(exp, n: int) -> list[list[int]]:
    """Token ids of the first ``n`` validation sentences (cut at :data:`MAX_TOKENS`)."""
    return [list(ids)[:MAX_TOKENS] for ids in exp.val.input_ids[:n]]


def data(trajectories: list[dict]) -> dict:
    """The numbers behind the view, for ``book/data``."""
    return {"trajectories": trajectories}


BOOK_ROLE = "gpt48"  # the book's view reads the deepest GPT-style role on the main text, stand-in and real model
BOOK_MAPPINGS = ("id", "mat", "tuned")
BOOK_SENTENCES = 4  # per model


def record(fig: str, s: Setting) -> tuple[dict, dict]:
    """The book's view (``layer_view``): the first :data:`BOOK_SENTENCES` validation sentences of the model in the
    role :data:`BOOK_ROLE` on the main text, for the chapter's profile at ``n_train``, ``n_val`` and for the real
    model at its sizes (:func:`jtc_utils.core.data.profiles.real_sizes`), under :data:`BOOK_MAPPINGS`."""
    p = s.profile
    trajectories = []
    for on, sizes in ((p, s.sizes), (figure_registry.real_of(p), profiles.real_sizes())):
        exp = experiment.shared(on.role(BOOK_ROLE), on.main_domain, on, *sizes, s.seed)
        trajectories += [trajectory(exp, ids=ids, mappings=BOOK_MAPPINGS) for ids in sentences(exp, BOOK_SENTENCES)]
    return data(trajectories), {"profile": p.name, "sentences_per_model": BOOK_SENTENCES}


RECORDS = {"layer_view": record}
