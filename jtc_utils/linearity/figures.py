"""The numbers behind every figure and table of the linearity chapter, one entry per figure id (related-systems
spec 6): ``sl_fig1`` (linearity profiles of every zoo model, both protocols), ``sl_fig2`` (linearity during
pretraining), ``sl_fig3`` (how small the blocks' updates are), ``sl_fig4`` (cosine-regularised pretraining: linearity,
held-out loss, fact recall), ``sl_fig5`` (linear probes, with and without the regulariser), ``sl_tab1`` (fine-tuning),
``sl_fig7`` (pruning the deepest GPT-style stand-in), ``sl_fig9`` (the distribution of the fit's errors),
``ext_sl_r2family`` (the JTC r² of adjacent layers beside the linearity scores) and ``real_sl`` (scores and pruning on
the real model). The training experiments' numbers are computed in :mod:`jtc_utils.linearity.trained_figures`, every
model's scores in :mod:`jtc_utils.linearity.studies`.
"""

from __future__ import annotations

import numpy as np

from jtc_utils.core.analysis.experiment import shared
from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.core.infra import cache, resample
from jtc_utils.core.models import models
from jtc_utils.core.models.models import CAUSAL
from jtc_utils.evidence import figure_registry

from . import artifacts, prune, states, trained_figures
from .studies import REAL_SAMPLE_SIZES, REAL_TOKENS, eval_text, key, lists, paper_scores, real_tokens, study, unpack

SL_FIGURES = (
    "sl_fig1",
    "sl_fig2",
    "sl_fig3",
    "sl_fig4",
    "sl_fig5",
    "sl_tab1",
    "sl_fig7",
    "sl_fig9",
    "ext_sl_r2family",
    "real_sl",
)
PRUNE_MODEL = "tiny-gpt2-xl"  # the deepest GPT-style stand-in (the role gpt48)
PRUNE_K = (1, 2, 3, 4, 6, 8, 10, 12)  # k up to L/2
PRUNE_SENTENCES = 100  # validation sentences that measure the pruning damage (about 4,000 predicted tokens)
DISTIL_SENTENCES = 256  # training sentences the distillation sees (zoo extras)
DISTIL_K = (1, 2, 4, 6)  # k for which replace + distil runs (k <= L/4 is what the claim is about)
DISTIL_STRATEGIES = ("most linear", "random")  # (random: its first draw)
RANDOM_DRAWS = 3
REAL_K = (1, 2, 4)
REAL_STRATEGIES = ("most linear", "random")  # (one draw; each evaluation is a 30-block pass over the text)
REAL_PRUNE_TOKENS = 1500


def fig1(profile: Profile) -> dict:
    out = {}
    for m in profile.models:
        s = study(m, profile)
        out[m] = {
            "family": s["family"],
            "n_layers": s["n_layers"],
            "d": s["d"],
            "depth": s["depth"],
            "n_tokens": s["n_tokens"],
            "n_sample": s["n_sample"],
            "code_skips_pair": s["code_skips_pair"],
            **{
                f"{proto}": {
                    k: v.tolist()
                    for k, v in s[proto].items()
                    if k in ("res_in", "nores_in", "res_ho", "nores_ho", "res_null", "nores_null", "nores_identity")
                }
                for proto in ("paper", "paper_nopos0", "sample")
            },
        }
        if s["paper_boot"]:
            out[m]["paper"]["boot"] = {k: s["paper_boot"][k].tolist() for k in ("res_in", "nores_in")}
    return out


def _spearman(a, b) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def fig3(profile: Profile) -> dict:
    out = {}
    for m in profile.models:
        s = study(m, profile)
        b = s["paper_boot"]
        out[m] = {
            "depth": s["depth"],
            "update_norm": s["paper"]["update_norm"].tolist(),
            "update_norm_nopos0": s["paper_nopos0"]["update_norm"].tolist(),
            "spearman_vs_nonlinearity": _spearman(s["paper"]["update_norm"], 1 - s["paper"]["res_in"]),
        }
        if b:
            out[m]["boot"] = {
                "update_norm": b["update_norm"].tolist(),
                "spearman_vs_nonlinearity": [
                    round(_spearman(u, 1 - r), 6) for u, r in zip(b["update_norm"], b["res_in"])
                ],
            }
    return out


def fig9(profile: Profile) -> dict:
    return {
        m: {
            "depth": study(m, profile)["depth"],
            **{k: study(m, profile)["paper"][k].tolist() for k in ("err_kurtosis", "err_max_over_median")},
        }
        for m in profile.models
    }


def r2family(profile: Profile) -> dict:
    """JTC's r² of adjacent layers (mat and id, held-out, coordinate-averaged, uncentred fit) beside the linearity
    scores of the same cache (the book sample of ``gpt24``), and the identity's largest numerical gap."""
    model = profile.role("gpt24")
    exp = shared(model, profile.main_domain, profile, None, None, 0)
    r2 = exp.layer_r2()
    L = exp.n_layers
    s = study(model, profile)
    gap = max(float(np.max(np.abs(s[k]["nores_in"] - s[k]["nores_identity"]))) for k in ("paper", "paper_nopos0"))
    return {
        "model": model,
        "layers": list(range(L)),
        "r2_mat": [float(r2["r2_mat"][i, i + 1]) for i in range(L)],
        "r2_id": [float(r2["r2_id"][i, i + 1]) for i in range(L)],
        **{k: s["sample"][k].tolist() for k in ("res_in", "res_ho", "nores_in", "nores_ho", "res_null")},
        "identity_max_gap": gap,
    }


# ---------------------------------------------------------------------------------------------------------
# the trained variants (zoo/secretly-linear)
def block_scores(model: str, profile: Profile | str = "tiny") -> dict:
    """{block l: held-out linearity score (with residual, paper protocol) of h^(l-1) -> h^l}: the pruning order.
    Every-token states only: no hidden-state extraction of the book's samples."""
    ad = models.adapter(model)
    res_ho = unpack(paper_scores(ad, profiles.get(profile)), "all")["res_ho"]
    return {b: float(res_ho[b - 1]) for b in range(1, ad.n_layers + 1)}


def pruning_curves(
    ad,
    block_scores: dict,
    eval_seqs,
    eval_masks,
    train_states,
    ks,
    distilled: bool,
    draws: int,
    cache_key: dict,
    strategies=prune.STRATEGIES,
) -> dict:
    """Damage (perplexity, accuracy, fact accuracy) against k for every strategy and mode; the unpruned model at k=0."""

    def compute():
        rows, boot = [], []
        w = resample.weights(len(eval_seqs))  # the held-out sentences, resampled
        base = prune.evaluate(ad, eval_seqs, eval_masks)
        for strategy in strategies:
            for draw in range(draws if strategy == "random" else 1):
                for k in ks:
                    blocks = prune.choose(block_scores, k, strategy, draw)
                    fits = prune.replacements(train_states, blocks)
                    variants = {"remove": {b: None for b in blocks}, "replace": fits}
                    if distilled and k in DISTIL_K and strategy in DISTIL_STRATEGIES and draw == 0:
                        variants["replace + distil"] = artifacts.distilled(strategy, k)
                        assert sorted(variants["replace + distil"]) == blocks, "the stored maps are for other blocks"
                    for mode, subs in variants.items():
                        with prune.pruned(ad, subs):
                            r = prune.evaluate(ad, eval_seqs, eval_masks, per_sequence=True)
                        rows.append(
                            [
                                prune.STRATEGIES.index(strategy),
                                draw,
                                k,
                                prune.MODES.index(mode),
                                r["perplexity"],
                                r["accuracy"],
                                r.get("fact_accuracy", np.nan),
                            ]
                        )
                        boot.append(prune.resampled_perplexity(r["seq_nll"], r["seq_tokens"], w).round(6))
        return {
            "rows": np.array(rows, dtype=float),
            "boot": np.array(boot),
            "base": np.array([base["perplexity"], base["accuracy"], base.get("fact_accuracy", np.nan)]),
        }

    r = cache.cached("sl_prune", {**cache_key, "per_sentence_boot": [resample.N_RESAMPLES, resample.SEED]}, compute)
    cols = ("strategy", "draw", "k", "mode", "perplexity", "accuracy", "fact_accuracy")
    rows = [dict(zip(cols, row)) for row in r["rows"].tolist()]
    for row, b in zip(rows, r["boot"].tolist()):
        row["strategy"] = prune.STRATEGIES[int(row["strategy"])]
        row["mode"] = prune.MODES[int(row["mode"])]
        row["k"], row["draw"] = int(row["k"]), int(row["draw"])
        row["boot"] = {"perplexity": b}
    b = r["base"].tolist()
    return {
        "base": {"perplexity": b[0], "accuracy": b[1], "fact_accuracy": b[2]},
        "rows": rows,
        "order": sorted(block_scores, key=lambda x: block_scores[x], reverse=True),
    }


def fig7(profile: Profile) -> dict:
    ad = models.adapter(PRUNE_MODEL)
    scores = block_scores(PRUNE_MODEL, profile)
    eval_seqs, eval_masks = eval_text(ad.tokenizer, PRUNE_SENTENCES)
    train_states = states.all_positions(ad, "train", states.N_TOKENS, profile)["X"]
    digests = sorted(r["sha256"] for r in artifacts.committed_card()["distil"].values())
    out = pruning_curves(
        ad,
        scores,
        eval_seqs,
        eval_masks,
        train_states,
        list(PRUNE_K),
        True,
        RANDOM_DRAWS,
        key("prune", model=ad.identity, ks=list(PRUNE_K), draws=RANDOM_DRAWS, n=PRUNE_SENTENCES, distilled=digests),
    )
    return {"model": PRUNE_MODEL, "n_layers": len(scores), "block_scores": [scores[b] for b in sorted(scores)], **out}


def real(seed: int = 0, profile: Profile | str = "real") -> dict:
    """The real model: linearity scores (both protocols) and pruning by perplexity on its held-out text (a reader's
    own model, ``profile="custom"``, on its own text)."""
    profile = profiles.get(profile)
    model = profile.role("gpt48")
    ad = models.adapter(model)
    # the every-token scores and the pruning first, the book-sample protocol (the one step that needs the hidden
    # states the model-and-text page extracts) last: run beside that page, this one does not wait for it
    scores = block_scores(model, profile)
    val_seqs = states.sentence_ids(ad, "validation", real_tokens(ad, profile, REAL_PRUNE_TOKENS), profile)
    train_states = states.all_positions(ad, "train", real_tokens(ad, profile, REAL_TOKENS), profile)["X"]
    ks = [k for k in REAL_K if k <= len(scores) // 2] or [1]
    prune_out = pruning_curves(
        ad,
        scores,
        val_seqs,
        None,
        train_states,
        ks,
        False,
        1,
        key(
            "prune",
            model=ad.identity,
            ks=ks,
            n=real_tokens(ad, profile, REAL_PRUNE_TOKENS),
            strategies=REAL_STRATEGIES,
            **profile.text_key(),
        ),
        REAL_STRATEGIES,
    )
    s = study(model, profile)
    out = {
        "model": model,
        "family": s["family"],
        "n_layers": s["n_layers"],
        "d": s["d"],
        "depth": s["depth"],
        "n_tokens": s["n_tokens"],
        "n_sample": s["n_sample"],
        **{proto: lists(s[proto]) for proto in ("paper", "paper_nopos0", "sample")},
        "spearman_vs_nonlinearity": _spearman(s["paper"]["update_norm"], 1 - s["paper"]["res_in"]),
        "block_scores": [scores[b] for b in sorted(scores)],
        "pruning": prune_out,
    }
    b = s["paper_boot"]
    if b:  # the resamples the claims read (jtc_utils.linearity.claims.real_getter)
        out["paper"]["boot"] = {k: b[k].tolist() for k in ("res_in", "nores_in", "update_norm")}
        out["boot"] = {
            "spearman_vs_nonlinearity": [round(_spearman(u, 1 - r), 6) for u, r in zip(b["update_norm"], b["res_in"])]
        }
    return out


def _stand_in(numbers, model):
    """A stand-in figure: ``numbers(profile, seed)`` gives its numbers, ``model(profile)`` the model it names."""

    def figure(p: Profile, seed: int) -> tuple[dict, dict]:
        return numbers(p, seed), {
            "profile": p.name,
            "domain": p.main_domain,
            "seed": seed,
            "n_tokens": states.N_TOKENS,
            "model": model(p),
        }

    return figure


def _real_figure(p: Profile, seed: int) -> tuple[dict, dict]:
    return real(seed, p), {
        "profile": p.name,
        "model": p.role("gpt48"),
        "seed": seed,
        "n_tokens": REAL_TOKENS,
        "sample_sizes": list(p.subset(REAL_SAMPLE_SIZES)),
    }


EVERY_MODEL = "every zoo model"
TRAINED_MODEL = "tiny-gpt2 (zoo/secretly-linear)"  # the training experiments read their own trained models
# figure id -> the function of the profile and the seed that computes its numbers and parameters
COMPUTE = {
    "sl_fig1": _stand_in(lambda p, seed: fig1(p), lambda p: EVERY_MODEL),
    "sl_fig3": _stand_in(lambda p, seed: fig3(p), lambda p: EVERY_MODEL),
    "sl_fig9": _stand_in(lambda p, seed: fig9(p), lambda p: EVERY_MODEL),
    "sl_fig2": _stand_in(lambda p, seed: trained_figures.fig2(), lambda p: TRAINED_MODEL),
    "sl_fig4": _stand_in(lambda p, seed: trained_figures.fig4(), lambda p: TRAINED_MODEL),
    "sl_fig5": _stand_in(lambda p, seed: trained_figures.fig5(), lambda p: TRAINED_MODEL),
    "sl_tab1": _stand_in(lambda p, seed: trained_figures.tab1(), lambda p: TRAINED_MODEL),
    "sl_fig7": _stand_in(lambda p, seed: fig7(p), lambda p: PRUNE_MODEL),
    "ext_sl_r2family": _stand_in(lambda p, seed: r2family(p), lambda p: p.role("gpt24")),
    "real_sl": _real_figure,
}


def compute(fig: str, s: Setting) -> tuple[dict, dict]:
    """The numbers behind figure ``fig`` of the linearity chapter under setting ``s`` and the parameters that
    produced them (:data:`COMPUTE`): its profile and seed (the chapter reads token counts of its own,
    :data:`jtc_utils.linearity.states.N_TOKENS`, not the setting's sentence sizes)."""
    if fig not in SL_FIGURES:
        raise ValueError(f"unknown linearity figure {fig!r}; known: {', '.join(SL_FIGURES)}")
    return COMPUTE[fig](figure_registry.profile_of(fig, s.profile), s.seed)


# the chapter's figures for a reader's own model (the custom book, jtc_utils.book.custom.plan): page -> kind -> ids
CUSTOM_FIGURES = {"secretly_linear": {CAUSAL: ("real_sl",)}}
