"""Claims F1-F11 of Geva et al. (2022), each judged by one function from the FFN chapter's numbers with the rule of
related-systems spec 2.5 (written from the paper's words before our numbers were seen). Each function takes ``get``
(figure id -> numbers; by default read from ``book/data``) and returns ``{id, claim, quote, paper, ours, holds, rule, magnitude}``.
Concept claims (F1-F4) are judged on the stand-in of GPT-2, the sample-level claims (F5-F11) on the stand-in of
GPT-2 medium, as in the paper.
"""

from __future__ import annotations

import numpy as np

from ..claims import (  # noqa: F401  (the chapters call these)
    _mag, _rec, default_get, frame, getter, registry, styled)

GPT12 = "tiny-gpt2"


def _tab2(get):
    return get("geva_tab2")["models"][GPT12]


def f1(get):
    t = _tab2(get)
    diff = t["values"] - t["gaussian"]
    return _rec("F1", "value vectors cover more concept tokens than random vectors",
                "36.7% vs 16% of top tokens in patterns (GPT-2), 55.1% vs 22.7% (WikiLM)",
                f"coverage values {t['values']:.1%}, Gaussian {t['gaussian']:.1%}, chance {t['chance']:.1%}; "
                f"permutation p = {t['p_values_vs_gaussian']:.3f}",
                bool(diff >= 0.10 and t["values"] > t["chance"] and t["p_values_vs_gaussian"] < 0.01),
                "coverage(values) - coverage(random) >= 0.10, above chance, permutation p < 0.01")


def f2(get):
    t = _tab2(get)
    return _rec("F2", "sub-updates are more interpretable than whole FFN updates",
                "36.7% vs 11.8% (GPT-2), 55.1% vs 19.7% (WikiLM), stopword patterns excluded (Table 2)",
                f"coverage values {t['values']:.1%}, whole updates {t['updates']:.1%} (function/punct concepts excluded)",
                bool(t["values"] > t["updates"]), "coverage(values) > coverage(updates, function/punct excluded)")


def f3(get):
    d = get("geva_fig2")
    above = np.asarray(d["values"]) > np.asarray(d["gaussian"])
    return _rec("F3", "concepts appear at every layer", "20-65% (GPT-2), 40-70% (WikiLM) of top tokens per layer",
                f"values above Gaussian at {int(above.sum())} of {len(above)} layers", bool(above.mean() >= 0.8),
                "coverage(values) > coverage(Gaussian) at >= 80% of the layers")


def f4(get):
    d = get("geva_fig4")
    gap = float(np.mean(d["iou_values"]) - np.mean(d["iou_random"]))
    return _rec("F4", "the final layer norm barely changes value projections, unlike random vectors' (Fig. 4)",
                "IoU of top-30 raw vs through ln_f high for values, low for random (numbers lost)",
                f"mean IoU values {np.mean(d['iou_values']):.2f}, random {np.mean(d['iou_random']):.2f} "
                f"(without ln_f's shift: {np.mean(d['iou_values_nobias']):.2f} / {np.mean(d['iou_random_nobias']):.2f})",
                gap >= 0.2, "mean IoU(values) - IoU(random) >= 0.2")


def f5(get):
    d = get("geva_fig6")
    t10, r10 = np.asarray(d["t10"]), np.asarray(d["r10"])
    ok = (t10 >= 2 * d["uniform"]) & (t10 >= 2 * r10)
    return _rec("F5", "the ten dominant sub-updates carry far more than their share",
                "0.24% of the values carry ~5% of the total, > 10% in some layers (A.3)",
                f"top-10 share {t10.min():.1%}-{t10.max():.1%} per layer vs uniform {d['uniform']:.1%} and random ten "
                f"{r10.mean():.1%}", bool(ok.all()), "T10 >= 2·(10/d_ff) and >= 2 × random ten at every layer")


def f6(get):
    d = get("geva_tab4")
    s, e = d["events"]["saturation"]["dominant"], d["events"]["elimination"]["dominant"]
    conds = [s["max"] > e["max"], abs(e["mean"]) < 0.25 * s["max"],
             s["max"] - abs(s["min"]) > e["max"] - abs(e["min"]), d["abs_dominant"] >= 5 * d["abs_random"]]
    return _rec("F6", "dominant sub-updates promote the final token rather than eliminate rivals (Table 4)",
                "saturation events: strong positive scores for the final token; elimination events: weak (numbers lost)",
                f"max score {s['max']:.3f} (saturation) vs {e['max']:.3f} (elimination); mean elimination {e['mean']:.3f}; "
                f"dominant |score| {d['abs_dominant']:.4f} vs random {d['abs_random']:.4f}; "
                f"{sum(conds)} of 4 conditions", all(conds),
                "max_sat > max_elim; |mean_elim| < 0.25·max_sat; (max - |min|)_sat > (max - |min|)_elim; dominant "
                "mean |score| >= 5 × random")


def f7(get):
    d = get("geva_fig3")
    mean, mn = np.asarray(d["mean"]), np.asarray(d["min"])
    L = len(mean)
    early = mean[:L - 2] >= 0
    last = int(np.argmin(mn)) >= L - 2
    return _rec("F7", "candidate scores stay non-negative until the last layers, where strongly negative minima appear",
                "Fig. 3", f"mean >= 0 at {int(early.sum())} of {L - 2} layers l <= L-2; most negative min at layer "
                f"{int(np.argmin(mn)) + 1} of {L}", bool(early.mean() >= 0.8 and last),
                "mean >= 0 at >= 80% of l <= L-2; the most negative min in the last 2 layers")


def f8(get):
    x = get("geva_tab4")["extreme"]
    return _rec("F8", "a few clusters explain the extreme sub-updates", "1.7% of the values (GPT-2), 1.1% (WikiLM)",
                f"{x['clusters']} of {x['of_clusters']} clusters hold {x['occurrence_share']:.0%} of the top-0.1% "
                f"|score| occurrences; they hold {x['values_share']:.1%} of the values", x["values_share"] <= 0.05,
                "the clusters with >= 50% of the top-0.1% |score| occurrences hold <= 5% of the values")


def f9(get):
    d = get("ext_geva_steer")["conditions"]
    neg = {k: v["greedy"]["negative"] for k, v in d.items()}
    steered, unmod, rand = neg["steered (10 values)"], neg["unmodified"], neg["random 10 values"]
    return _rec("F9", "ten value vectors suppress toxicity (47%, perplexity 21.7 -> 25.3; Table 5)",
                "toxicity 58.5% -> 30.8%, self-debiasing 37%, word filter 20% (Perspective API)",
                f"not reproducible (Perspective API); stand-in concept steering: negative first adjective "
                f"{unmod:.0%} unmodified, {steered:.0%} steered, {rand:.0%} random ten; perplexity "
                f"{d['unmodified']['perplexity']:.2f} -> {d['steered (10 values)']['perplexity']:.2f}",
                bool(steered < unmod and steered < rand),
                "stand-in: greedy negative share steered < unmodified and < random ten; perplexity reported")


def f10(get):
    d = get("geva_tab6")["rules"]
    rule = d["sub-update rule"]
    best = max(v["accuracy"] for k, v in d.items() if k.startswith("classifier"))
    ok = rule["accuracy"] >= 0.90 and rule["saved"] > 0 and rule["accuracy"] >= best - 0.03
    return _rec("F10", "the sub-update rule exits early with high accuracy",
                "94.1 ± 1.4% accuracy, 3.2 ± 0.3 layers (20%) saved; classifiers 92.9-94.4% (Table 6)",
                f"accuracy {rule['accuracy']:.1%}, {rule['saved']:.2f} layers ({rule['share_saved']:.0%}) saved; best "
                f"classifier {best:.1%}; JTC rule (mat) at equal accuracy saves "
                f"{d['JTC rule (mat) at equal accuracy']['saved']:.2f}", bool(ok),
                "accuracy >= 0.90, saved > 0, within 3 points of the best classifier (JTC rule reported)")


def f11(get):
    d = get("geva_tab10")
    h = np.asarray(d["hist"], dtype=float)
    L = len(h)
    q = max(1, L // 4)
    modal = int(np.argmax(h)) + 1
    ok = modal == L and h[-q:].sum() > h[:q].sum()
    return _rec("F11", "saturation is late-heavy", "34.15% of predictions saturate at the last layer of GPT-2 medium "
                "(Table 10)", f"modal saturation layer {modal} of {L}; last quarter {h[-q:].sum() / h.sum():.0%} vs "
                f"first quarter {h[:q].sum() / h.sum():.0%}", bool(ok),
                "modal saturation layer = L and last-quarter share > first-quarter share")


CLAIMS = {"F1": f1, "F2": f2, "F3": f3, "F4": f4, "F5": f5, "F6": f6, "F7": f7, "F8": f8, "F9": f9, "F10": f10,
          "F11": f11}


check, all_claims = registry(CLAIMS, "FFN")
