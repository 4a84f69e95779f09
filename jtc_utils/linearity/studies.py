"""A model's linearity study, shared by every figure of the linearity chapter: its scores under the paper's protocol
(all positions, with and without position 0; resampled where the claims are judged) and the book-sample protocol,
cached on the model's identity; and the evaluation text with its fact masks.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from jtc_utils.core.analysis.experiment import shared
from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.infra import cache, resample
from jtc_utils.embedded import corpus

from . import claims, score, states

VERSION = 2  # bump when a computation below changes, so cached results are recomputed
REAL = "smollm2-135m"
REAL_TOKENS = 6000  # tokens per split on the real model (each costs a 30-layer forward pass on two cores)
REAL_SAMPLE_SIZES = profiles.REAL_SUBSET  # the book-sample protocol on the real model


def key(what: str, **kw) -> dict:
    return {"what": what, "version": VERSION, **kw}


def scores(ad, profile: Profile, n_tokens: int) -> dict:
    """Paper-protocol scores of one model (with and without position 0), cached on its identity."""

    def compute():
        val = states.all_positions(ad, "validation", n_tokens, profile)
        tr = states.all_positions(ad, "train", n_tokens, profile)
        out = {}
        for tag, kv, kt in (("all", None, None), ("nopos0", val["position"] > 0, tr["position"] > 0)):
            recs = score.profile(val["X"], keep=kv)  # in-sample on validation tokens: the paper's reading
            for k in recs[0]:
                out[f"{tag}/{k}"] = np.array([r[k] for r in recs], dtype=float)
            for k, v in score.heldout_profile(tr["X"], val["X"], kt, kv).items():
                out[f"{tag}/{k}"] = v
        out["n_tokens"] = np.array([len(val["position"]), len(tr["position"])])
        return out

    return cache.cached(
        "sl_scores", key("paper", model=ad.identity, profile=profile.name, n=n_tokens, **profile.text_key()), compute
    )


BOOT_TAGS = ("all", "nopos0")


def boot_scores(ad, profile: Profile, n_tokens: int, tags: tuple = BOOT_TAGS) -> dict:
    """The paper-protocol scores of :func:`scores` (in-sample, validation tokens; ``tags``: ``all`` and
    ``nopos0``) under each resample of the sentences (:func:`score.resampled_profile`: a refit per resample from
    per-sentence sums), cached apart from the scores themselves."""

    def compute():
        val = states.all_positions(ad, "validation", n_tokens, profile)
        out = {}
        for tag, keep in (("all", None), ("nopos0", val["position"] > 0)):
            if tag not in tags:
                continue
            for k, v in score.resampled_profile(val["X"], val["position"], resample.weights, keep).items():
                out[f"{tag}/{k}"] = v.round(6)
        return out

    which = {} if tuple(tags) == BOOT_TAGS else {"tags": list(tags)}
    return cache.cached(
        "sl_boot",
        key(
            "paper_boot",
            model=ad.identity,
            profile=profile.name,
            n=n_tokens,
            boot=[resample.N_RESAMPLES, resample.SEED],
            **which,
            **profile.text_key(),
        ),
        compute,
    )


def unpack(arrays: dict, tag: str) -> dict:
    return {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith(tag + "/")}


def sample_scores(exp) -> dict:
    """The book-sample protocol: one position per sentence; in-sample on the training samples (the larger set: the
    real model's 300 validation samples are fewer than its 576 dimensions), held-out from train to validation."""

    def compute():
        recs = score.profile(exp.X_train)
        return {
            **{
                k: np.array([r[k] for r in recs], dtype=float) for k in ("res_in", "nores_in", "res_null", "nores_null")
            },
            **score.heldout_profile(exp.X_train, exp.X_val),
        }

    return cache.cached(
        "sl_scores",
        key(
            "sample",
            model=exp.adapter.identity,
            n=[len(exp.train), len(exp.val)],
            domain=exp.domain,
            **exp.profile.text_key(),
        ),
        compute,
    )


def paper_scores(ad, profile: Profile) -> dict:
    """:func:`scores` at the profile's number of tokens (the real model's, or the zoo's)."""
    n_tok = real_tokens(ad, profile, REAL_TOKENS) if profile.one_model else states.N_TOKENS
    return scores(ad, profile, n_tok)


def real_tokens(ad, profile: Profile, n: int) -> int:
    """``n`` tokens per split on the real model; on a reader's own (custom) text at most what both splits hold."""
    if profile.name != "custom":
        return n
    return min(n, *(states.tokens_in(ad, split, profile) for split in ("train", "validation")))


def study(model: str, profile: Profile | str = "tiny") -> dict:
    """Every linearity score of one model: paper protocol (all positions; ``all`` and ``nopos0``) and book sample;
    computed once per model and profile (a profile and its name are the same setting)."""
    return _study(model, profiles.get(profile))


@lru_cache(maxsize=16)
def _study(model: str, p: Profile) -> dict:
    sizes = p.subset(REAL_SAMPLE_SIZES) if p.one_model else (None, None)
    exp = shared(model, p.main_domain, p, *sizes, 0)
    paper = paper_scores(exp.adapter, p)
    # resampled refits where the claims are judged (claims.resampled_protocols; on the real model 200 refits of 30
    # pairs 577 wide, a few minutes on one core)
    tags = claims.resampled_protocols(p, BOOT_TAGS)
    boot = boot_scores(exp.adapter, p, int(paper["n_tokens"][0]), tags) if tags else None
    L = exp.n_layers
    return {
        "model": model,
        "family": exp.adapter.family,
        "n_layers": L,
        "d": exp.adapter.d,
        "depth": ((np.arange(L) + 1) / L).tolist(),
        "n_tokens": paper["n_tokens"].tolist(),
        "paper": unpack(paper, "all"),
        "paper_nopos0": unpack(paper, "nopos0"),
        "sample": sample_scores(exp),
        "n_sample": [len(exp.train), len(exp.val)],
        "paper_boot": boot and unpack(boot, "all"),
        "code_skips_pair": L - 1,
    }


def lists(d: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}


def fact_masks(tokenizer, sentences) -> list[np.ndarray]:
    """Per sentence, True where the token is part of a ``fact`` word (so the position before predicts a fact)."""
    out = []
    for s in sentences:
        enc = tokenizer(s.text, add_special_tokens=False, return_offsets_mapping=True)
        out.append(np.array([s.label_at(a, b) == "fact" for a, b in enc["offset_mapping"]], dtype=bool))
    return out


@lru_cache(maxsize=4)
def eval_text(tokenizer, n: int):
    """The first ``n`` encyclopedia validation sentences as token ids, with their fact masks."""

    sents = corpus.pool("encyclopedia", "validation", n)
    seqs = [tokenizer(s.text, add_special_tokens=False)["input_ids"] for s in sents]
    return seqs, fact_masks(tokenizer, sents)
