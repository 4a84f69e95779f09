"""The numbers behind every figure and table of the FFN sub-update chapter, one entry per figure id in
:data:`COMPUTE` (related-systems spec 6): concept coverage (``geva_tab2``, ``geva_fig2``), the top tokens raw and
through the final norm (``geva_fig4``), dominance (``geva_fig6``), promotion and elimination (``geva_tab4``,
``geva_fig3``), saturation and early exit (``geva_tab10``, ``geva_tab6``), the extensions (``ext_geva_matffn``,
``ext_geva_steer``), the value table (``geva_values``) and the real model's analyses (``real_geva``). The concept
analyses use the stand-in of GPT-2 (``gpt12``), as the paper's annotation study used GPT-2; the sample-level ones
the stand-in of GPT-2 medium (``gpt24``), as its Table 4 and this book's section 5 do.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from jtc_utils.core.models.models import CAUSAL
from jtc_utils.core.data import profiles, sources, token_concepts
from jtc_utils.core.infra import resample
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.embedded import lexicon
from jtc_utils.evidence import figure_registry
from jtc_utils.core.analysis import early_exit
from jtc_utils.core.analysis.experiment import for_role, shared

from . import clusters, concepts, decompose, exit_rule, matffn, steering, subupdates, vocab
from .decompose import FFN, mid_states

FFN_FIGURES = {
    "geva_tab2": None,
    "geva_fig2": "gpt12",
    "geva_fig4": "gpt12",
    "geva_fig6": "gpt24",
    "geva_tab4": "gpt24",
    "geva_fig3": "gpt24",
    "geva_tab10": "gpt24",
    "geva_tab6": "gpt24",
    "ext_geva_matffn": "gpt24",
    "ext_geva_steer": "gpt24",
    "geva_values": None,
    "real_geva": "gpt24",
}
N_RANDOM = 10  # random vectors and whole updates per layer (spec 2.2 item 12)
REAL_SIZES = profiles.REAL_SUBSET  # the real model: train and validation sentences
REAL_VALUES_PER_LAYER = 256  # the real model's values whose top-30 lists are labelled, per block (of 1,536)
VALUE_TABLE_TOP = 10


def _model_experiment(model: str, profile: Profile, seed: int):
    return shared(model, profile.main_domain, profile, None, None, seed)


def token_classes(model: str, profile: Profile | str = "tiny", seed: int = 0) -> dict:
    """The word classes of ``model``'s vocabulary, once per model and profile (a profile and its name are the same
    setting: resolved before the in-process cache)."""
    return _token_classes(model, profiles.get(profile), seed)


@lru_cache(maxsize=8)
def _token_classes(model: str, profile: Profile, seed: int) -> dict:
    return lexicon.token_classes(_model_experiment(model, profile, seed).adapter.tokenizer)


def concept_study(model: str, profile: Profile | str = "tiny", seed: int = 0) -> dict:
    """Top-30 lists and coverage of values, Gaussian vectors and whole updates, per layer, for one zoo model; once
    per model and profile (resolved before the in-process cache)."""
    return _concept_study(model, profiles.get(profile), seed)


@lru_cache(maxsize=8)
def _concept_study(model: str, profile: Profile, seed: int) -> dict:
    exp = _model_experiment(model, profile, seed)
    return {"model": model, **concepts_of(exp, token_classes(model, profile, seed), lexicon.GROUPS, seed)}


def concepts_of(exp, tc: dict, groups: dict, seed: int = 0, per_layer: int | None = None) -> dict:
    """Top-30 lists and concept coverage of ``exp``'s values, Gaussian vectors and whole updates, per layer, under
    the word classes ``tc`` (token id -> class) with their ``groups``; every value of every block, or ``per_layer``
    values of each block drawn uniformly (a random generator of its own, so the Gaussian vectors and whole updates
    are the same draws either way)."""
    ffn, ad = FFN(exp.adapter), exp.adapter
    rng = np.random.default_rng(seed)
    pick_rng = np.random.default_rng([seed, 55])
    R = mid_states(exp, "validation")
    V_size = ad.vocab_size
    per = {
        k: []
        for k in (
            *("values", "gaussian", "updates", "values_nostop", "gaussian_nostop"),
            *("iou_values", "iou_random", "iou_values_nobias", "iou_random_nobias"),
        )
    }
    by = {"values": [], "gaussian": []}
    value_ids, gauss_lists, update_lists, dead = [], [], [], []
    for j in range(ffn.n_layers):
        V = ffn.values(j)
        G = vocab.gaussian_like(V, N_RANDOM, rng)
        m = ffn.coefficients(j, R[j])
        O = ffn.output(j, m[rng.choice(R.shape[1], N_RANDOM, replace=False)])
        if per_layer is not None and per_layer < len(V):
            V = V[np.sort(pick_rng.choice(len(V), per_layer, replace=False), kind="stable")]
        ids = {
            name: vocab.top_tokens(ad, X, concepts.TOP)[0]
            for name, X in (("values", V), ("gaussian", G), ("updates", O))
        }
        gauss_lists.append(ids["gaussian"])
        update_lists.append(ids["updates"])
        dead.append(float((np.abs(m).max(0) < 1e-3).mean()))
        value_ids.append(ids["values"])
        per["values"].append(concepts.coverage(ids["values"], tc))
        per["gaussian"].append(concepts.coverage(ids["gaussian"], tc))
        # the three kinds of list counted alike, as the paper counts the whole updates: stopword patterns left out
        for name in ("values", "gaussian"):
            per[f"{name}_nostop"].append(concepts.coverage(ids[name], tc, exclude=concepts.STOPWORD_CLASSES))
        per["updates"].append(concepts.coverage(ids["updates"], tc, exclude=concepts.STOPWORD_CLASSES))
        for name, X in (("values", V), ("random", G)):
            raw = ids["values"] if name == "values" else ids["gaussian"]
            per[f"iou_{name}"].append(vocab.iou(raw, vocab.top_tokens(ad, X, concepts.TOP, "ln")[0]))
            per[f"iou_{name}_nobias"].append(vocab.iou(raw, vocab.top_tokens(ad, X, concepts.TOP, "ln_nobias")[0]))
        by["values"].append(concepts.by_group(ids["values"], tc, groups))
        by["gaussian"].append(concepts.by_group(ids["gaussian"], tc, groups))
    big = concepts.big_classes(tc, V_size)
    allv, allg = np.concatenate(per["values"]), np.concatenate(per["gaussian"])
    flat_ids = np.concatenate(value_ids)
    gauss_ids = np.concatenate(gauss_lists)
    shuffled = concepts.shuffled_coverage(flat_ids, tc, seed)
    # each value's coverage under the shuffled labellings (their mean), per layer: the null F3 is read against
    per["values_shuffled"] = list(shuffled.reshape(concepts.SHUFFLES, ffn.n_layers, -1).mean(axis=0))
    nostop_v, nostop_g = np.concatenate(per["values_nostop"]), np.concatenate(per["gaussian_nostop"])
    return {
        "n_layers": ffn.n_layers,
        "d_ff": ffn.d_ff,
        "per_layer": per,
        "groups": by,
        "big_classes": big,
        "value_ids": flat_ids,
        "gaussian_ids": gauss_ids,
        "value_coverage": allv,
        "summary": {
            "values": float(allv.mean()),
            "gaussian": float(allg.mean()),
            "updates": float(np.concatenate(per["updates"]).mean()),
            "chance": concepts.chance(tc, V_size, seed=seed),
            "values_no_big": float(concepts.coverage(flat_ids, tc, exclude=big).mean()),
            "chance_no_big": concepts.chance(tc, V_size, seed=seed, exclude=big),
            "p_values_vs_gaussian": concepts.permutation_p(allv, allg, seed=seed),
            # counted as the whole updates are (stopword patterns left out): F1 and F2 compare like with like
            "values_nostop": float(nostop_v.mean()),
            "gaussian_nostop": float(nostop_g.mean()),
            "p_nostop_values_vs_gaussian": concepts.permutation_p(nostop_v, nostop_g, seed=seed),
            "gaussian_no_big": float(concepts.coverage(gauss_ids, tc, exclude=big).mean()),
            "dead_share": float(np.mean(dead)),
            # how much of each kind of list the labelling sees at all (the concept claims' instrument)
            "labelled_values": concepts.labelled(flat_ids, tc),
            "labelled_gaussian": concepts.labelled(gauss_ids, tc),
            "labelled_updates": concepts.labelled(np.concatenate(update_lists), tc),
            # the labelling control: the values' coverage with the classes shuffled among the tokens (sizes kept)
            "values_shuffled": float(shuffled.mean()),
            "p_values_vs_shuffled": concepts.permutation_p(allv, shuffled, seed=seed),
        },
    }


TAB2_RESAMPLED = ("values", "gaussian", "updates", "values_nostop", "gaussian_nostop")
FIG2_RESAMPLED = ("values", "gaussian", "updates", "values_shuffled")


def coverage_tables(c: dict) -> dict:
    """The numbers of Table 2 (one model), Figure 2 and Figure 4 from one :func:`concepts_of` study, with the
    resamples of the vectors (resample.weights: every value, Gaussian vector and whole update; per layer for the
    per-layer figures)."""
    per = c["per_layer"]
    iou = ("iou_values", "iou_random", "iou_values_nobias", "iou_random_nobias")
    return {
        "tab2": {
            **c["summary"],
            "n_layers": c["n_layers"],
            "n_values": len(c["value_coverage"]),
            "big_classes": c["big_classes"],
            "boot": {k: resample.resampled_mean(np.concatenate(per[k])) for k in TAB2_RESAMPLED},
        },
        "fig2": {
            **{k: [float(v.mean()) for v in per[k]] for k in FIG2_RESAMPLED},
            "groups": c["groups"],
            "boot": {k: resample.resampled_mean(np.stack(per[k])) for k in FIG2_RESAMPLED},
        },
        "fig4": {
            **{k: [float(v.mean()) for v in per[k]] for k in iou},
            "boot": {k: resample.resampled_mean(np.stack(per[k])) for k in iou},
        },
    }


def tab2(profile: Profile, seed) -> dict:
    return {"models": {model: coverage_tables(concept_study(model, profile, seed))["tab2"] for model in profile.gpt}}


def fig2(model, profile: Profile, seed) -> dict:
    return coverage_tables(concept_study(model, profile, seed))["fig2"]


def fig4(model, profile: Profile, seed) -> dict:
    return coverage_tables(concept_study(model, profile, seed))["fig4"]


def value_table(model, profile: Profile, seed, top: int = VALUE_TABLE_TOP) -> dict:
    """Every value vector of ``model``: layer, neuron, its top tokens, its largest concept and coverage."""
    c = concept_study(model, profile, seed)
    tc, tok = token_classes(model, profile, seed), _model_experiment(model, profile, seed).adapter.tokenizer
    rows = []
    for n, (ids, cov) in enumerate(zip(c["value_ids"], c["value_coverage"])):
        concept = concepts.concept_of(ids, tc)[1]
        top_tokens = " | ".join(tok.decode([t]).strip() or repr(tok.decode([t])) for t in ids[:top])
        rows.append([n // c["d_ff"] + 1, n % c["d_ff"], top_tokens, concept or "", round(float(cov), 3)])
    return {"columns": ["layer", "neuron", f"top {top} tokens", "largest concept", "coverage"], "rows": rows}


# the real model's classifier baseline: one feature, the FFN input r (on 576-wide states each classifier is a
# Newton-step logistic regression per layer, cross-validated over every C: the three features cost minutes on two
# cores, most of the chapter's real-model time; r is the narrowest)
REAL_FEATURES = ("r",)


def exit_table(exp, sub: dict, features=exit_rule.FEATURES) -> dict:
    """Every exit rule on the validation split: the sub-update rule, the classifiers (on ``features``) and each one's
    negative control (its labels shuffled), the saturation oracle and section 5's confidence rule (id, mat) read at
    the sub-update rule's accuracy."""
    rule = exit_rule.sub_update_rule(exp)
    L = exp.n_layers
    rows = {"sub-update rule": rule}
    for f in features:
        rows[f"classifier ({f})"] = exit_rule.classifier_exit(exp, f)
        rows[f"classifier ({f}), labels shuffled"] = exit_rule.classifier_exit(exp, f, shuffled=True)
    sat = sub["sat"]
    rows["saturation oracle"] = {
        "accuracy": 1.0,
        "saved": float((L - sat).mean()),
        "share_saved": float((L - sat).mean() / L),
    }
    ee = early_exit.early_exit_curves(exp)
    for m in ("id", "mat"):
        at = early_exit.layers_saved(ee["early"][m]["x"], ee["early"][m]["y"], L, target=rule["accuracy"])
        rows[f"JTC rule ({m}) at equal accuracy"] = {
            "accuracy": rule["accuracy"],
            "saved": at["saved"],
            "share_saved": at["share"],
        }
        rows[f"JTC rule ({m}) at 95%"] = {
            "accuracy": 0.95,
            "saved": ee["saved"][m]["saved"],
            "share_saved": ee["saved"][m]["share"],
        }
    return {
        "n_layers": L,
        "rules": {k: {kk: vv for kk, vv in v.items() if kk != "thresholds"} for k, v in rows.items()},
        "curves": {m: {"x": ee["early"][m]["x"], "y": ee["early"][m]["y"]} for m in ("id", "mat")},
    }


def real_concept_classes(profile: Profile, model: str, tokenizer, seed: int = 0) -> dict:
    """The concept classes of a real vocabulary (:mod:`jtc_utils.core.data.token_concepts`): the committed ones of
    ``model``, or computed from the profile's training sentences of its main domain (a reader's own model)."""
    return token_concepts.committed(model, tokenizer) or token_concepts.concept_classes(
        tokenizer, sources.sentences(profile, profile.main_domain, "train", seed=seed)
    )


def real(profile_seed: int = 0, profile: Profile | str = "real") -> dict:
    """Every analysis of the chapter on the real model (first REAL_SIZES sentences; a reader's own model,
    ``profile="custom"``, on its own sizes): concept coverage under the concept classes of its vocabulary
    (:func:`real_concept_classes`, on REAL_VALUES_PER_LAYER values per block), the dominant ten, the scores, the
    events, the extreme sub-updates' clusters (block by block), saturation and the exit rules."""
    profile = profiles.get(profile)
    exp = for_role(profile, "gpt24", *profile.subset(REAL_SIZES), profile_seed)
    ffn = FFN(exp.adapter)
    gaps = decompose.check(exp, (0, ffn.n_layers // 2, ffn.n_layers - 1))
    sub = subupdates.analyse(exp, profile_seed)
    tok = exp.adapter.tokenizer
    sample = [(j, i) for j in (0, ffn.n_layers // 2, ffn.n_layers - 1) for i in range(5)]
    ids, _ = vocab.top_tokens(exp.adapter, np.stack([ffn.values(j)[i] for j, i in sample]), VALUE_TABLE_TOP)
    # with the resamples of the validation samples the claims read (jtc_utils.ffn.claims.real_getter), as the
    # stand-in's figures keep them
    L = ffn.n_layers
    classes = real_concept_classes(profile, exp.model_name, tok, profile_seed)
    study = concepts_of(exp, classes["token_class"], classes["groups"], profile_seed, REAL_VALUES_PER_LAYER)
    value_clusters, glob = clusters.cluster_model([ffn.values(j) for j in range(L)], 10)
    absolute = subupdates.abs_scores(sub)
    return {
        "concept_classes": {
            **{k: classes[k] for k in ("counts", "groups", "examples", "sizes")},
            "validation": token_concepts.validate(tok, classes["token_class"]),
        },
        # the share of the top-30 tokens that carry a class at all: how much of the lists the classes see
        "concepts": {
            **coverage_tables(study),
            "labelled": {
                "values": concepts.labelled(study["value_ids"], classes["token_class"]),
                "gaussian": concepts.labelled(study["gaussian_ids"], classes["token_class"]),
            },
        },
        "extreme": {**clusters.extreme_share(subupdates.scaled_scores(sub), value_clusters), "global_clusters": glob},
        "decomposition": gaps,
        "t10": sub["t10"].mean(1),
        "r10": sub["r10"].mean(1),
        "d_ff": ffn.d_ff,
        "uniform": subupdates.TOP / ffn.d_ff,
        "events": subupdates.event_table(sub),
        **{k: v for k, v in absolute.items() if k != "boot"},
        "layer_scores": subupdates.layer_scores(sub),
        "sat_hist": np.bincount(sub["sat"], minlength=L + 1),
        "exit": exit_table(exp, sub, REAL_FEATURES),
        "boot": {
            **{k: resample.resampled_mean(sub[k]) for k in ("t10", "r10")},
            **absolute["boot"],
            "sat_hist": resample.resampled_counts(sub["sat"], L + 1),
        },
        "values": [
            {"layer": j + 1, "neuron": i, "top": [tok.decode([t]) for t in row]} for (j, i), row in zip(sample, ids)
        ],
    }


def _on_model(profile: Profile, fig: str, seed: int) -> tuple[str, dict]:
    """The model of a figure's role and the parameters every stand-in figure records."""
    model = profile.role(FFN_FIGURES[fig])
    return model, {
        "profile": profile.name,
        "domain": profile.main_domain,
        "seed": seed,
        "model": model,
        "paper_model": profiles.PAPER_NAME.get(model, model),
    }


def _sample_level(fig: str, s: Setting):
    """The experiment of a sample-level figure, its sub-update analysis (cached) and its parameters."""
    _, params = _on_model(s.profile, fig, s.seed)
    exp = for_role(s.profile, FFN_FIGURES[fig], s.n_train, s.n_val, s.seed)
    return exp, subupdates.analyse(exp, s.seed), {**params, "n_train": len(exp.train), "n_val": len(exp.val)}


def _tab2_figure(fig: str, s: Setting):
    return tab2(s.profile, s.seed), {
        "profile": s.profile.name,
        "domain": s.profile.main_domain,
        "seed": s.seed,
        "model": "every GPT-style zoo model",
    }


def _values_figure(fig: str, s: Setting):
    p = s.profile
    return (
        {m: value_table(m, p, s.seed) for m in p.gpt[:2]},
        {"profile": p.name, "domain": p.main_domain, "seed": s.seed, "model": ", ".join(p.gpt[:2])},
    )


def _real_figure(fig: str, s: Setting):
    exp = for_role(s.profile, "gpt24", *s.profile.subset(REAL_SIZES), s.seed)
    return real(s.seed, s.profile), {
        "profile": s.profile.name,
        "model": exp.model_name,
        "paper_model": exp.model_name,
        "domain": exp.domain,
        "seed": s.seed,
        "n_train": len(exp.train),
        "n_val": len(exp.val),
    }


def _concept_figure(study):
    def figure(fig: str, s: Setting):
        model, params = _on_model(s.profile, fig, s.seed)
        return study(model, s.profile, s.seed), params

    return figure


def _fig6(exp, sub) -> dict:
    d_ff = FFN(exp.adapter).d_ff
    return {
        "t10": sub["t10"].mean(1),
        "r10": sub["r10"].mean(1),
        "uniform": subupdates.TOP / d_ff,
        "d_ff": d_ff,
        "boot": {k: resample.resampled_mean(sub[k]) for k in ("t10", "r10")},
    }


def _tab4(exp, sub) -> dict:
    ids, glob = clusters.cluster_model([FFN(exp.adapter).values(j) for j in range(exp.n_layers)], 10)
    return {
        "events": subupdates.event_table(sub),
        **subupdates.abs_scores(sub),
        "extreme": {**clusters.extreme_share(subupdates.scaled_scores(sub), ids), "global_clusters": glob},
    }


def _tab10(exp, sub) -> dict:
    L = exp.n_layers
    return {
        "n_layers": L,
        "hist": np.bincount(sub["sat"], minlength=L + 1)[1:],
        "boot": {"hist": resample.resampled_counts(sub["sat"], L + 1)[:, 1:]},
    }


def _sample_figure(of):
    """A figure of the sample-level analysis: ``of(exp, sub)`` gives its numbers."""

    def figure(fig: str, s: Setting):
        exp, sub, params = _sample_level(fig, s)
        return of(exp, sub), params

    return figure


def _experiment_figure(of):
    """A figure computed from the experiment of its role: ``of(exp, seed, model, profile)`` gives its numbers."""

    def figure(fig: str, s: Setting):
        model, params = _on_model(s.profile, fig, s.seed)
        exp = for_role(s.profile, FFN_FIGURES[fig], s.n_train, s.n_val, s.seed)
        return of(exp, s.seed, model, s.profile), {**params, "n_train": len(exp.train), "n_val": len(exp.val)}

    return figure


# figure id -> the function that computes its numbers and parameters, (fig, setting)
COMPUTE = {
    "geva_tab2": _tab2_figure,
    "geva_values": _values_figure,
    "real_geva": _real_figure,
    "geva_fig2": _concept_figure(fig2),
    "geva_fig4": _concept_figure(fig4),
    "geva_fig6": _sample_figure(_fig6),
    "geva_tab4": _sample_figure(_tab4),
    "geva_fig3": _sample_figure(
        lambda exp, sub: {"layers": list(range(1, exp.n_layers + 1)), **subupdates.layer_scores(sub)}
    ),
    "geva_tab10": _sample_figure(_tab10),
    "geva_tab6": _sample_figure(exit_table),
    "ext_geva_matffn": _experiment_figure(
        lambda exp, seed, model, profile: {
            "coefficients": matffn.coefficient_fit(exp),
            "through_mat": matffn.through_mat(exp, token_classes(model, profile, seed)),
        }
    ),
    "ext_geva_steer": _experiment_figure(lambda exp, seed, model, profile: steering.experiment(exp.adapter, seed=seed)),
}


def compute(fig: str, s: Setting) -> tuple[dict, dict]:
    """``(data, params)`` of an FFN-chapter figure under setting ``s`` (:data:`COMPUTE`)."""
    if fig not in FFN_FIGURES:
        raise ValueError(f"unknown FFN figure {fig!r}; known: {', '.join(FFN_FIGURES)}")
    return COMPUTE[fig](fig, s.on(figure_registry.profile_of(fig, s.profile)))


# the chapter's figures for a reader's own model (the custom book, jtc_utils.book.custom.plan): page -> kind -> ids
CUSTOM_FIGURES = {"ffn_subupdates": {CAUSAL: ("real_geva",)}}
