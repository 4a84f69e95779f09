"""Claims F1-F11 of Geva et al. (2022), each judged by one function from the FFN chapter's numbers with the rule of
related-systems spec 2.5 (written from the paper's words before our numbers were seen). Each function takes ``get``
(figure id -> numbers; by default read from ``book/data``) and returns ``{id, claim, quote, paper, ours, holds, rule,
magnitude}``. Concept claims (F1-F4) are judged on the stand-in of GPT-2, the sample-level claims (F5-F11) on the
stand-in of GPT-2 medium, as in the paper; every claim but F9 also on the real model (:func:`real_getter`), its
concepts under the concept classes of its vocabulary (:mod:`jtc_utils.core.data.token_concepts`).
"""

from __future__ import annotations

import numpy as np

from jtc_utils.evidence import verdicts
from jtc_utils.evidence.claims import claim_record, claims_records, default_get, registry, view_getter
from jtc_utils.evidence.instruments import BASELINE_SLACK, instrument, labelling_check, layers_check, reach_check

GPT12 = "tiny-gpt2"


PAPER_CLASSIFIER_LOW = 0.929  # the lowest accuracy of the paper's classifiers (Table 6: 92.9-94.4%)


def _tab2(get):
    models = get("geva_tab2")["models"]  # the stand-in's GPT-2 among the zoo's models; the real profile's one model
    return models[GPT12] if GPT12 in models else next(iter(models.values()))


def _reach(t, kinds) -> list[dict]:
    """The instrument checks of a claim read through a labelling: it labels at least half of the top-30
    tokens of each list it compares (``kinds``: values, gaussian, updates), and the values' coverage under it is above
    their coverage with its classes shuffled (the labelling control, :func:`labelling_check`)."""
    names = {"values": "value vectors", "gaussian": "Gaussian vectors", "updates": "whole updates"}
    shuffled = "values_shuffled" in t
    control = [labelling_check(t["values"], t["values_shuffled"], t["p_values_vs_shuffled"])] if shuffled else []
    return [reach_check(names[k], float(t.get(f"labelled_{k}", np.nan))) for k in kinds] + control


# F1 and F2 count the three kinds of list alike, as the paper counts the whole updates: a concept of function words or
# punctuation (stopword patterns) is left out of the values', the Gaussian vectors' and the updates' coverage
ALIKE = "function-word and punctuation patterns left out of every list, as the paper leaves them out of the updates"


def f1(get):
    t = _tab2(get)
    return claim_record(
        "F1",
        "value vectors cover more concept tokens than random vectors",
        "36.7% vs 16% of top tokens in patterns (GPT-2), 55.1% vs 22.7% (WikiLM)",
        f"coverage with stopword patterns left out: values {t['values_nostop']:.1%}, Gaussian "
        f"{t['gaussian_nostop']:.1%} (permutation p = {t['p_nostop_values_vs_gaussian']:.3f}); counting every "
        f"pattern: values {t['values']:.1%}, Gaussian {t['gaussian']:.1%}, chance {t['chance']:.1%}",
        t["values_nostop"] - t["gaussian_nostop"],
        f"coverage(values) - coverage(Gaussian vectors) > 0, {ALIKE} (margin: the difference; the permutation "
        "p-value is reported)",
        words=("better",),
        unit="share of top tokens",
        statistic="coverage_vs_random",
        checks=_reach(t, ("values", "gaussian")),
    )


def f2(get):
    t = _tab2(get)
    return claim_record(
        "F2",
        "sub-updates are more interpretable than whole FFN updates",
        "36.7% vs 11.8% (GPT-2), 55.1% vs 19.7% (WikiLM), stopword patterns excluded (Table 2)",
        f"coverage with stopword patterns left out: values {t['values_nostop']:.1%}, whole updates {t['updates']:.1%}",
        t["values_nostop"] - t["updates"],
        f"coverage(values) - coverage(whole updates) > 0, {ALIKE}",
        words=("better",),
        unit="share of top tokens",
        checks=_reach(t, ("values", "updates")),
    )


def f3(get):
    d = get("geva_fig2")
    cov = np.asarray(d["values"], dtype=float)
    null = np.asarray(d["values_shuffled"], dtype=float)
    beyond = cov - null
    floor = verdicts.value("portion")
    return claim_record(
        "F3",
        "a substantial portion of the top tokens are concepts at every layer",
        "20-65% (GPT-2), 40-70% (WikiLM) of top tokens per layer",
        f"coverage of the values' top tokens {cov.min():.1%}-{cov.max():.1%} per layer, {null.min():.1%}-"
        f"{null.max():.1%} under the same classes shuffled among the tokens; beyond that by at least a fifth at "
        f"{int((beyond >= floor).sum())} of {len(cov)} layers",
        float(beyond.min()) - floor,
        "coverage(values) - coverage under the labelling shuffled among the tokens (every class its size) >= 0.2 "
        "at every layer: a substantial portion beyond what a labelling blind to the tokens finds (margin: the "
        "smallest difference minus 0.2)",
        quote="across all layers, a substantial portion (20%-65%) of the top-tokens were associated with "
        "well-defined concepts",
        words=("every", "portion"),
        unit="share of top tokens beyond the shuffled labelling's - 0.2",
        statistic="coverage_floor",
        checks=_reach(_tab2(get), ("values",)),
    )


def f4(get):
    d = get("geva_fig4")
    iv, ir = float(np.mean(d["iou_values"])), float(np.mean(d["iou_random"]))
    margin = min(verdicts.value("close to zero") - (1 - iv), iv - ir)
    return claim_record(
        "F4",
        "the final layer norm barely changes value projections, unlike random vectors' (the paper's Fig. 4)",
        "IoU of top-30 raw vs through ln_f high for values, low for random (numbers lost)",
        f"mean IoU values {iv:.2f}, random {ir:.2f} (without ln_f's shift: "
        f"{np.mean(d['iou_values_nobias']):.2f} / {np.mean(d['iou_random_nobias']):.2f})",
        margin,
        "the change 1 - IoU(values) is close to zero (<= 0.05) and IoU(values) > IoU(random) (margin: the "
        "smaller, in IoU)",
        words=("close to zero", "better"),
        unit="IoU",
    )


def f5(get):
    d = get("geva_fig6")
    t10, r10 = np.asarray(d["t10"]), np.asarray(d["r10"])
    margin = min(float(verdicts.substantially(t10, d["uniform"]).min()), float(verdicts.substantially(t10, r10).min()))
    return claim_record(
        "F5",
        "the ten dominant sub-updates carry far more than their share",
        "0.24% of the values carry ~5% of the total, > 10% in some layers (A.3)",
        f"top-10 share {t10.min():.1%}-{t10.max():.1%} per layer vs uniform {d['uniform']:.1%} and random ten "
        f"{r10.mean():.1%}",
        margin,
        "T10 above 10/d_ff and above the random ten's share by at least a fifth "
        "of the larger, at every layer (margin: the smallest relative gap minus 0.2)",
        words=("substantially", "every"),
        unit="relative gap - 0.2",
    )


ABS_KEYS = ("abs_dominant", "abs_random", "abs_dominant_scaled", "abs_random_scaled")
# F6, F7 and F8 read scores in their layer's unit (jtc_utils.ffn.subupdates.layer_unit: the mean range of ten random
# sub-updates' scores there), so that no block whose scores are a hundred times the others' decides them alone
UNIT = "each layer's unit: the mean range of ten random sub-updates' scores there"


def f6(get):
    d = get("geva_tab4")
    s, e = d["events"]["saturation"]["dominant_scaled"], d["events"]["elimination"]["dominant_scaled"]
    parts = {
        "strong: max saturation above max elimination": verdicts.substantially(s["max"], e["max"]),
        "weak: |mean elimination| below max saturation": verdicts.substantially(s["max"], abs(e["mean"])),
        "promotes: (max - |min|) saturation above elimination": verdicts.substantially(
            s["max"] - abs(s["min"]), e["max"] - abs(e["min"])
        ),
        "dominant: mean |score| above random": verdicts.substantially(d["abs_dominant_scaled"], d["abs_random_scaled"]),
    }
    return claim_record(
        "F6",
        "dominant sub-updates promote the final token rather than eliminate rivals (Table 4)",
        "saturation events: strong positive scores for the final token; elimination events: weak (numbers lost)",
        f"in {UNIT}: max score {s['max']:.2f} (saturation) vs {e['max']:.2f} (elimination); mean elimination "
        f"{e['mean']:+.2f}; dominant |score| {d['abs_dominant_scaled']:.2f} vs random {d['abs_random_scaled']:.2f}; "
        f"{sum(float(v) >= 0 for v in parts.values())} of 4 conditions",
        min(float(v) for v in parts.values()),
        "each of, with every score in its layer's unit: " + "; ".join(parts) + ", by at least a fifth of the "
        "larger (margin: the smallest relative gap minus 0.2)",
        words=("substantially", "every"),
        unit="relative gap - 0.2",
    )


def _f7_margin(mean, mn, unit, late, keep):
    """F7's margin on the layers ``keep`` (a mask), every score in its layer's ``unit``: the smallest mean score
    before the last quarter, and the relative gap between the most negative minima of the last quarter and before."""
    early, last = keep & (np.arange(len(mean)) < late), keep & (np.arange(len(mean)) >= late)
    m, lo = mean / unit, mn / unit
    return min(float(m[early].min()), float(verdicts.substantially(-lo[last].min(), -lo[early].min())))


def f7(get):
    d = get("geva_fig3")
    mean, mn = (np.asarray(d[k], dtype=float) for k in ("mean", "min"))
    # each layer's unit (jtc_utils.ffn.subupdates.layer_unit): the mean max minus the mean min of the random ten
    unit = np.asarray(d["random_max"], dtype=float) - np.asarray(d["random_min"], dtype=float)
    unit = np.where(unit > 0, unit, 1.0)
    L = len(mean)
    late = L - max(1, int(round(verdicts.value("late") * L)))
    every = np.ones(L, dtype=bool)
    margin = _f7_margin(mean, mn, unit, late, every)
    left_out = [_f7_margin(mean, mn, unit, late, every & (np.arange(L) != k)) for k in range(L)]
    negative = int((mean[:late] < 0).sum())
    m, lo = mean / unit, mn / unit
    return claim_record(
        "F7",
        "candidate scores stay non-negative until the last layers, where strongly negative minima appear",
        "Fig. 3",
        f"in {UNIT}: mean score below 0 at {negative} of the {late} layers before the last quarter (smallest "
        f"{m[:late].min():+.2f}, at layer {int(np.argmin(m[:late])) + 1}); most negative min "
        f"{lo[late:].min():+.2f} in the last quarter (layer {late + int(np.argmin(lo[late:])) + 1}) vs "
        f"{lo[:late].min():+.2f} before (layer {int(np.argmin(lo[:late])) + 1})",
        margin,
        "with every score in its layer's unit: mean score >= 0 at every layer before the last quarter, and the last "
        "quarter's most negative min below the rest's by at least a fifth of the larger (margin: the smaller, the "
        "smallest mean score or the relative gap minus 0.2)",
        words=("every", "late", "substantially"),
        unit="score in its layer's unit, or relative gap - 0.2",
        checks=[layers_check(margin, left_out)],
    )


def f8(get):
    x = get("geva_tab4")["extreme"]
    where = (
        ""
        if x["global_clusters"]
        else (
            " (clusters formed block by block: the model's values are too many for "
            "one clustering, a deviation from the paper's)"
        )
    )
    return claim_record(
        "F8",
        "a few clusters explain the extreme sub-updates",
        "1.7% of the values (GPT-2), 1.1% (WikiLM)",
        f"{x['clusters']} of {x['of_clusters']} clusters{where} hold {x['occurrence_share']:.0%} of the "
        f"top-0.1% occurrences of |score| in its layer's unit; they hold {x['values_share']:.1%} of the values; "
        f"the block with most of those occurrences holds {x['top_layer_share']:.0%} of them",
        verdicts.value("close to zero") - x["values_share"],
        "the clusters with >= 50% of the top-0.1% occurrences of |score| (in its layer's unit) hold at most 0.05 of "
        "the values "
        "('a small fraction': close to zero; margin: 0.05 minus their share)",
        words=("close to zero", "most"),
        unit="share of values",
        fixed="the clusters that hold the extreme scores are chosen from the top "
        "0.1% of every score of every sample; a resample would redo that selection over millions of scores, "
        "which the figure does not keep.",
    )


def f9(get):
    d = get("ext_geva_steer")["conditions"]
    neg = {k: v["sampled"]["negative"] for k, v in d.items()}  # greedy decoding never starts negatively
    steered, unmod, rand = neg["steered (10 values)"], neg["unmodified"], neg["random 10 values"]
    return claim_record(
        "F9",
        "ten value vectors suppress toxicity (47%, perplexity 21.7 -> 25.3; Table 5)",
        "toxicity 58.5% -> 30.8%, self-debiasing 37%, word filter 20% (Perspective API)",
        f"not reproducible (Perspective API); stand-in concept steering, sampled: negative first adjective "
        f"{unmod:.0%} unmodified, {steered:.0%} steered, {rand:.0%} random ten; perplexity "
        f"{d['unmodified']['perplexity']:.2f} -> {d['steered (10 values)']['perplexity']:.2f}",
        min(unmod - steered, rand - steered),
        "stand-in: the share of sampled continuations that start with a negative adjective, steered below "
        "unmodified and below random ten (margin: the smaller difference); perplexity reported",
        words=("better",),
        unit="share",
    )


def classifier_check(d: dict) -> tuple[float, dict]:
    """The instrument check of F10's baseline: the classifier of highest accuracy (of those that are not a control)
    is within reach of the paper's classifiers (at least ``PAPER_CLASSIFIER_LOW - BASELINE_SLACK``) and saves more
    layers than the same classifier trained on shuffled labels (its negative control) in at least LEVEL of the
    resamples of the validation samples (the same resamples for both, so the difference is paired). A classifier
    that exits nowhere is accurate and saves nothing; one that sees nothing exits where the base rate alone allows.
    Returns its accuracy and the check."""
    names = [k for k in d if k.startswith("classifier") and not k.endswith("labels shuffled")]
    name = max(names, key=lambda k: (d[k]["accuracy"], k))
    best, control = d[name], d.get(f"{name}, labels shuffled")
    floor = PAPER_CLASSIFIER_LOW - BASELINE_SLACK
    beyond = best["share_saved"] - control["share_saved"] if control else np.nan
    share = 0.0
    if control and "boot" in best:  # a replicate of the numbers (verdicts.replicate) has its resample only
        diff = np.asarray(best["boot"]["share_saved"]) - np.asarray(control["boot"]["share_saved"])
        share = float((diff > 0).mean())
    accurate, useful = best["accuracy"] >= floor, share >= verdicts.LEVEL
    said = (
        f"the best classifier (of whether the top-1 is already final, on {name[len('classifier (') : -1]}) reaches "
        f"{best['accuracy']:.1%} accuracy "
        + ("at least" if accurate else "below")
        + f" the {floor:.1%} within reach of the paper's classifiers ({PAPER_CLASSIFIER_LOW:.1%}), and saves "
        f"{best['share_saved']:.1%} of the layers against {control['share_saved'] if control else np.nan:.1%} for "
        f"the same classifier on shuffled labels (more in {share:.0%} of the resamples"
        + (
            ")"
            if accurate and useful
            else f", and it must be in {verdicts.LEVEL:.0%}): a baseline that is not accurate, or saves no more "
            "than one that sees nothing, says nothing about the rule"
        )
    )
    return best["accuracy"], instrument("the classifier baseline works", beyond, 0.0, accurate and useful, said)


def f10(get):
    d = get("geva_tab6")["rules"]
    rule = d["sub-update rule"]
    best, baseline = classifier_check(d)
    margin = min(rule["share_saved"], rule["accuracy"] - best + verdicts.value("similar"))
    jtc = {m: d[f"JTC rule ({m}) at equal accuracy"] for m in ("id", "mat")}
    return claim_record(
        "F10",
        "the sub-update rule exits early with high accuracy",
        "94.1 ± 1.4% accuracy, 3.2 ± 0.3 layers (20%) saved; classifiers 92.9-94.4% (Table 6)",
        f"accuracy {rule['accuracy']:.1%}, {rule['saved']:.2f} layers ({rule['share_saved']:.1%}) saved, "
        f"against the paper's 20%; best classifier {best:.1%}; at the same accuracy section 5's confidence "
        f"rule saves {jtc['id']['saved']:.2f} (id) and {jtc['mat']['saved']:.2f} (mat) layers",
        margin,
        "saves layers (share saved > 0) with an accuracy at least as high as the best classifier's, or "
        "similar (within 0.05; margin: the smaller)",
        words=("similar", "better"),
        unit="share",
        checks=[baseline],
    )


def f11(get):
    d = get("geva_tab10")
    h = np.asarray(d["hist"], dtype=float)
    L = len(h)
    q = max(1, int(round(verdicts.value("late") * L)))
    late, early = h[-q:].sum() / h.sum(), h[:q].sum() / h.sum()
    return claim_record(
        "F11",
        "saturation is late-heavy",
        "34.15% of predictions saturate at the last layer of GPT-2 medium (Table 10)",
        f"modal saturation layer {int(np.argmax(h)) + 1} of {L}; last quarter {late:.0%} vs first quarter {early:.0%}",
        late - early,
        "share of predictions saturating in the last quarter of the layers > in the first quarter (margin: "
        "the difference)",
        words=("late", "better"),
        unit="share of predictions",
    )


CLAIMS = {
    "F1": f1,
    "F2": f2,
    "F3": f3,
    "F4": f4,
    "F5": f5,
    "F6": f6,
    "F7": f7,
    "F8": f8,
    "F9": f9,
    "F10": f10,
    "F11": f11,
}


# why a claim's verdict differs between the stand-in and the real model, one sentence each from the records' numbers
# (see jtc_utils.jtc.claims.DIFFERS)
DIFFERS = {
    "F1": "Counted alike, stopword patterns left out of every list, SmolLM2's value vectors (576 wide) form concepts "
    "more often than Gaussian vectors with their statistics in every resample (the record's interval and "
    "permutation p); on the stand-in of GPT-2, 48 wide, almost any direction picks out a cluster of the "
    "unembedding, which is organised by word class, so Gaussian vectors come within the resamples' spread of the "
    "values.",
    "F10": "Both baselines work (each classifier exits more than the same classifier trained on shuffled labels, "
    "at an accuracy past the paper's); on SmolLM2, whose predictions saturate late, the rule exits early on few "
    "samples and is less accurate than its classifier by nearly the allowance of 'similar' (the record's "
    "accuracies), so the resamples fall on both sides; the stand-in saturates early, and there the rule saves a "
    "large share of the layers within that allowance of its classifiers' accuracy in every resample.",
    "F11": "SmolLM2's predictions saturate late, most of them in the last quarter of its 30 layers (the record's "
    "shares), as GPT-2 medium's do in the paper; the stand-in, trained for minutes on a generated corpus, "
    "saturates more of its predictions in its first quarter than in its last (its modal layer is the second).",
}

# which of the two differing verdicts speaks to the paper's sentence, claim by claim (the claims page's last column of
# disagreements; every claim of DIFFERS has one, and a disagreement without one stops that page): the profile, why,
# and whether the instrument that measures it passed its checks (the record's ``checks``; "no check" where the claim
# reads no trained component, labelling or intervention)
BELIEVE = {
    "F1": "The real model's (its checks passed: the labelling reaches nearly every top token and beats its shuffle): "
    "576 wide, a random direction rarely aligns with a word class, as at the paper's widths; the stand-in's 48 "
    "dimensions let random vectors find classes as the values do.",
    "F10": "The real model's, undecided (its check passed: the classifier on its states saves layers where the "
    "same classifier on shuffled labels saves none): a pretrained model on real text; the paper chose WikiLM for "
    "its early saturation, which the stand-in has for reasons of its own generated world.",
    "F11": "The real model's (no check applies): saturation read from a pretrained model on real text, as the "
    "paper's GPT-2 medium; the stand-in, trained for minutes on a generated corpus, settles early for reasons of "
    "its own world.",
}

# why a claim fails or is undecided, where its margin does not say it (see jtc_utils.jtc.claims.REASONS)
REASONS = {
    "F1": {
        "tiny": "In a 48-wide model almost any direction picks out a cluster of the unembedding, which is "
        "organised by word class, so random vectors reach nearly the same concept coverage as value "
        "vectors."
    },
    "F3": {
        "tiny": "Two of the stand-in's word classes each hold more than a tenth of its vocabulary (surnames and "
        "cities, Table 2's big classes): shuffled among the tokens, the classes still form concepts in a large "
        "share of every top-30 list (the record's range), so the values' coverage is a fifth beyond that blind "
        "labelling's at few layers (the record's count).",
        "real": "A blind labelling finds almost nothing here (the record's range under the shuffled classes), and "
        "still the coverage stays below a fifth at every layer although the classes reach nearly every top "
        "token: most of SmolLM2's top-30 lists do not hold four tokens of one class. An annotator who sees what "
        "the classes cannot (a fragment's word, an inflection, world knowledge) could find more, so this is a "
        "lower bound of the paper's measure.",
    },
    "F10": {
        "real": "The rule is less accurate than the classifier baseline by nearly what the rule allows as similar "
        "(the record's accuracies), and it saves a small share of SmolLM2's layers, so the resamples fall on both "
        "sides of the margin."
    },
    "F4": {
        "tiny": "The final norm's shift moves the overlap of raw and normed projections for values and random "
        "vectors alike, so the gap the paper describes does not appear.",
        "real": "SmolLM2's final norm (an RMSNorm) has no shift, but its per-coordinate gain alone reorders a "
        "large part of a value's top-30 tokens (the record's IoU), far from 'barely changes'; values keep "
        "more of their list than random vectors do.",
    },
    "F8": "The clusters that hold half of the extreme sub-updates hold more than 'a few' (5%) of the values (the "
    "record's share), and no one block holds most of those sub-updates (the record's top block's share): in "
    "each layer's unit the extreme scores are spread over more of the values than in GPT-2.",
    "F9": "Toxicity cannot be measured offline (Perspective API). In the stand-in's concept steering the ten values "
    "do not lower the negative share: its generator never separates positive from negative adjectives, so no "
    "value holds one sign without the other.",
    "F7": {
        "real": "On SmolLM2 the dominant ten's mean score for the layer's top candidate is negative at some "
        "layers before the last quarter (the record says at how many, and which layer is the most "
        "negative), and the fail does not rest on one layer: with any one layer left out the margin stays "
        "below zero (the instrument check). Its margin is in each layer's unit (the mean range of ten random "
        "sub-updates' scores there), so that no layer's raw logit size decides it."
    },
    "F11": "The stand-in is easier to read early than GPT-2: its saturation layers peak at the second layer, with a "
    "second peak at the last, so the distribution is not late-heavy.",
}

# --- the real model ------------------------------------------------------------------------------------------------
# The real profile's FFN numbers are one figure, real_geva (SmolLM2-135M on its first validation sentences: concept
# coverage under the concept classes of its vocabulary, the dominant ten, the scores, the events, the extreme clusters,
# saturation
# and the exit rules, with their resamples); the rules read them
# through the layout of the stand-in's figures (real_views), so that every rule is the same function on both profiles.

# why a claim's figure has no counterpart on the real model
REAL_ABSENT = {
    "ext_geva_steer": "steering is measured as the share of continuations that start with a word of one sign (the "
    "stand-in's negative report adjectives); the real vocabulary's concept classes carry no sign, "
    "and the paper's toxicity needs the Perspective API, online"
}


def real_views(real: dict) -> dict:
    """The real model's figure ``real_geva`` in the layout of the stand-in's figures the rules read: ``geva_tab2``,
    ``geva_fig2`` and ``geva_fig4`` (concept coverage under the concept classes of its vocabulary, and the final norm's
    overlap), ``geva_fig6`` (the dominant ten's share), ``geva_tab4`` (the events, the mean |score| and the extreme
    sub-updates' clusters), ``geva_fig3`` (the scores per layer), ``geva_tab10`` (the saturation layers) and
    ``geva_tab6`` (the exit rules); the resamples come with the numbers."""
    boot = real.get("boot", {})
    L = len(real["t10"])
    pick = lambda keys: {k: boot[k] for k in keys if k in boot}  # noqa: E731
    c = real["concepts"]
    return {
        "geva_tab2": {"models": {"real": c["tab2"]}},
        "geva_fig2": c["fig2"],
        "geva_fig4": c["fig4"],
        "geva_fig6": {
            "t10": real["t10"],
            "r10": real["r10"],
            "uniform": real["uniform"],
            "d_ff": real["d_ff"],
            "boot": pick(("t10", "r10")),
        },
        "geva_tab4": {
            "events": real["events"],
            **{k: real[k] for k in ABS_KEYS},
            "extreme": real["extreme"],
            "boot": pick(ABS_KEYS),
        },
        "geva_fig3": {"layers": list(range(1, L + 1)), **real["layer_scores"]},
        "geva_tab10": {
            "n_layers": L,
            "hist": real["sat_hist"][1:],
            **({"boot": {"hist": [row[1:] for row in boot["sat_hist"]]}} if "sat_hist" in boot else {}),
        },
        "geva_tab6": real["exit"],
    }


def real_getter(get=default_get):
    """A ``get`` of the real profile for these rules: the views of ``real_geva`` (:func:`real_views`); a figure the
    real model does not have raises :class:`~jtc_utils.evidence.claims.NotComputed` with the reason
    (:data:`REAL_ABSENT`)."""
    return view_getter("real_geva", real_views, REAL_ABSENT, get)


# what the FFN figures' resamples resample, where it is not the validation samples
RESAMPLED_OVER = {
    "geva_tab2": "value vectors",
    "geva_fig2": "value vectors",
    "geva_fig4": "value vectors",
    "ext_geva_steer": "prompts",
}
CONSTANTS = {"geva_fig6": ("uniform",)}  # 10 / d_ff: the setting's share, not a statistic

check, all_claims = registry(CLAIMS, "FFN", REASONS)

# the chapter's two claims files, declared with its figures (.paper)
RECORDS = claims_records("ffn", all_claims, real_getter)
