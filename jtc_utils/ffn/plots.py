"""The FFN chapter's plots, each from the numbers saved in ``book/data`` (or just computed); :data:`DRAWINGS` gives
each drawn figure id its drawing and its caption (several views of one figure's numbers where the chapter draws it
more than once), which the figure registry holds beside its computation."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import numpy as np

from jtc_utils.core.models import models
from jtc_utils.evidence.registry import Caption, View, drawings


# the coverage table's columns (the paper's Table 2) as the page heads them
TAB2_COLUMNS = {
    "values": "values",
    "gaussian": "Gaussian",
    "updates": "whole updates",
    "chance": "chance",
    "values_no_big": "values, no big classes",
    "gaussian_no_big": "Gaussian, no big classes",
    "chance_no_big": "chance, no big classes",
    "p_values_vs_gaussian": "p (values vs Gaussian)",
    "values_nostop": "values, no stopword patterns",
    "gaussian_nostop": "Gaussian, no stopword patterns",
    "p_nostop_values_vs_gaussian": "p (the same, no stopword patterns)",
}
# an exit rule's columns (the paper's Table 6)
RULE_COLUMNS = {"accuracy": "accuracy", "saved": "layers saved", "share_saved": "share saved"}


def per_layer(series: dict, title: str, ylabel: str, ax=None, styles=None):
    """One line per named series against the 1-based layer."""
    ax = ax or plt.subplots(figsize=(6, 3.2))[1]
    for name, ys in series.items():
        ax.plot(np.arange(1, len(ys) + 1), ys, marker="o", ms=3, label=name, **(styles or {}).get(name, {}))
    ax.set_xlabel("layer")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def concept_layers(d: dict, model: str):
    """Concept coverage per layer (values, Gaussian vectors, whole updates) and the values' concepts by kind, each
    panel's legend under its plot (beside it, the long names took half the panel's width)."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
    series = {"values": d["values"], "Gaussian random": d["gaussian"], "whole updates (no stopwords)": d["updates"]}
    styles = {}
    if "values_shuffled" in d:  # F3's null: the values under the same classes shuffled among the tokens
        series["values, classes shuffled"] = d["values_shuffled"]
        styles["values, classes shuffled"] = {"color": "0.45", "ls": "--"}
    per_layer(series, "concept coverage per layer", "share of top-30 in concepts", ax=axes[0], styles=styles)
    groups = {g: [row[g] for row in d["groups"]["values"]] for g in ("semantic", "syntactic", "names")}
    per_layer(groups, "values' concepts by kind", "share of top-30", ax=axes[1])
    for ax, ncol in zip(axes, (2, 3)):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=ncol, frameon=False, fontsize=9)
    fig.suptitle(model)
    fig.tight_layout()
    return fig


def exit_rules(d: dict, model: str, ax=None):
    """Every exit rule as a point on section 5's axes, the JTC confidence-rule curves behind them."""
    ax = ax or plt.subplots(figsize=(6.4, 4))[1]
    L = d["n_layers"]
    for m, c in d["curves"].items():
        xs = np.asarray(c["x"])
        order = np.argsort(xs, kind="stable")
        ax.plot(xs[order], np.asarray(c["y"])[order], marker=".", label=f"JTC rule ({m})")
    marks = {
        "sub-update rule": "*",
        "saturation oracle": "P",
        "classifier (r)": "s",
        "classifier (o)": "^",
        "classifier (r+o)": "D",
    }
    for name, mk in marks.items():
        if name not in d["rules"]:  # the real model fits one classifier
            continue
        r = d["rules"][name]
        ax.scatter([L - r["saved"]], [r["accuracy"]], marker=mk, s=90 if mk == "*" else 45, zorder=3, label=name)
        control = d["rules"].get(f"{name}, labels shuffled")
        if control:  # the classifier's negative control: hollow, its colour
            colour = ax.collections[-1].get_facecolor()[0]
            ax.scatter(
                [L - control["saved"]],
                [control["accuracy"]],
                marker=mk,
                s=45,
                facecolors="none",
                edgecolors=[colour],
                zorder=3,
                label=f"{name}, labels shuffled",
            )
    ax.set_xlabel("mean exit layer")
    ax.set_ylabel("Precision@1 (agreement with the final top-1)")
    ax.set_title(f"{model}: every exit rule on one test set")
    ax.legend(fontsize=8)
    return ax


def _two_panels():
    return plt.subplots(1, 2, figsize=(11, 3.4))[1]


def _matffn_coefficients(d: dict, p: dict) -> None:
    c = d["coefficients"]
    axes = _two_panels()
    per_layer(
        {"most often dominant ten": c["r2_dominant"], "other neurons": c["r2_rest"]},
        f"{p['model']}: held-out r² of each coefficient's predictor",
        "r²",
        ax=axes[0],
    )
    per_layer(
        {
            "dominant ten": c["error_share_dominant"],
            "uniform 10/d_ff": [c["uniform_share"]] * len(c["error_share_dominant"]),
        },
        f"{p['model']}: share of mat_ffn's squared error",
        "share",
        ax=axes[1],
    )


def _where(p: dict) -> str:
    """Which model a real-profile figure was computed on, in a caption: the real model, or a reader's own."""
    return "on the real model" if p["profile"] == "real" else "on your model"


def _share_and_exit(d: dict, p: dict) -> None:
    name = models.display_name(p["model"])
    axes = _two_panels()
    per_layer(
        {"dominant ten": d["t10"], "random ten": d["r10"]}, f"{name}: share of the dominant ten", "share", ax=axes[0]
    )
    exit_rules(d["exit"], name, ax=axes[1])


# figure id -> its drawing and caption (jtc_utils.evidence.registry.View), or several views by name (the
# first drawn by default)
DRAWINGS = {
    "geva_fig2": View(
        lambda d, p: concept_layers(d, p["model"]),
        lambda d, p: Caption(
            "Geva et al. Figure 2",
            "Concept coverage per layer: the share of top-30 tokens that form concepts, for value vectors, Gaussian "
            "random vectors and whole FFN updates, and (dashed) for the values under the same classes shuffled "
            "among the tokens, what a labelling blind to the tokens finds; the values' concepts by kind: the same "
            "share for each kind of concept.",
            "Two line plots per layer: concept coverage, and concepts by kind",
        ),
    ),
    "geva_fig4": View(
        lambda d, p: per_layer(
            {
                "values": d["iou_values"],
                "random": d["iou_random"],
                "values, ln_f without shift": d["iou_values_nobias"],
                "random, ln_f without shift": d["iou_random_nobias"],
            },
            f"{p['model']}: top-30 overlap, raw vs through ln_f (Geva Fig. 4)",
            "IoU",
        ),
        lambda d, p: Caption(
            "Geva et al. Figure 4",
            "Overlap (IoU) of the top-30 tokens of a vector read raw and read through the final layer norm, per "
            "layer, for value vectors and random vectors, with and without the norm's shift.",
            "Line plot of IoU per layer for value and random vectors",
        ),
    ),
    "geva_fig6": View(
        lambda d, p: per_layer(
            {"dominant ten": d["t10"], "random ten": d["r10"], "uniform 10/d_ff": [d["uniform"]] * len(d["t10"])},
            f"{p['model']}: share of the ten dominant sub-updates",
            "share of sum |m| ||v||",
        ),
        lambda d, p: Caption(
            "Geva et al. Figure 6 and appendix A.3",
            "The share of the whole FFN update carried by the ten dominant sub-updates per layer, against ten "
            "random ones and the uniform share.",
            "Line plot of the dominant ten's share per layer against random and uniform",
        ),
    ),
    "geva_fig3": View(
        lambda d, p: per_layer(
            {k: d[k] for k in ("max", "mean", "min")},
            f"{p['model']}: scores of the dominant ten for the candidate w_l (Geva Fig. 3)",
            "score",
        ),
        lambda d, p: Caption(
            "Geva et al. Figure 3",
            "Maximum, mean and minimum score of the dominant ten sub-updates for the candidate token, per layer.",
            "Line plot of the maximum, mean and minimum score per layer",
        ),
    ),
    "geva_tab6": View(
        lambda d, p: exit_rules(d, p["model"]),
        lambda d, p: Caption(
            "Geva et al. Table 6",
            "Accuracy against layers saved for the sub-update exit rule, the classifier baselines (hollow: the same "
            "classifier trained on labels shuffled among the samples, a baseline that sees nothing), the JTC "
            "confidence rule with id and mat, and the saturation oracle.",
            "Scatter of accuracy against layers saved for several exit rules",
        ),
    ),
    "ext_geva_matffn": {
        "coefficients": View(
            _matffn_coefficients,
            lambda d, p: Caption(
                "beyond the papers: section 6's mat_ffn, opened",
                "Held-out r² of a linear predictor of each FFN coefficient, for the most often dominant ten and the "
                "others; and the dominant ten's share of mat_ffn's squared error against the uniform share (one "
                "panel each, titled so).",
                "Two line plots per layer: r² of coefficient predictors and share of squared error",
            ),
        ),
        "through_mat": View(
            lambda d, p: per_layer(
                {
                    "IoU with the value's own top-30": d["through_mat"]["iou"],
                    "coverage through mat": d["through_mat"]["coverage_mat"],
                    "coverage raw": d["through_mat"]["coverage_raw"],
                },
                f"{p['model']}: values seen through mat",
                "share",
            ),
            lambda d, p: Caption(
                "beyond the papers: value vectors seen through mat",
                "Per layer, the overlap of a value's top-30 tokens read through mat with its own, and the concept "
                "coverage read raw and through mat.",
                "Line plot of IoU and coverage per layer",
            ),
        ),
    },
    "real_geva": {
        "share_and_exit": View(
            _share_and_exit,
            lambda d, p: Caption(
                f"Geva et al. Figure 6 and Table 6, {_where(p)}",
                f"The dominant ten's share per layer of {models.display_name(p['model'])} against ten random "
                "sub-updates; and every exit rule on one test set (one panel each, titled so).",
                "Line plot of the dominant ten's share per layer, and accuracy against layers saved for exit rules",
            ),
        ),
        "concepts": View(
            lambda d, p: concept_layers(d["concepts"]["fig2"], models.display_name(p["model"])),
            lambda d, p: Caption(
                f"Geva et al. Figure 2, {_where(p)}",
                f"Concept coverage per layer of {models.display_name(p['model'])} under the concept classes of its "
                "vocabulary: the share of top-30 tokens that form concepts, for value vectors, Gaussian random vectors "
                "and whole FFN updates, and (dashed) for the values under the same classes shuffled among the "
                "tokens; the values' concepts by kind.",
                "Two line plots per layer: concept coverage, and concepts by kind",
            ),
        ),
        "overlap": View(
            lambda d, p: per_layer(
                {"values": d["concepts"]["fig4"]["iou_values"], "random": d["concepts"]["fig4"]["iou_random"]},
                f"{models.display_name(p['model'])}: top-30 overlap, raw vs through the final norm (Geva Fig. 4)",
                "IoU",
            ),
            lambda d, p: Caption(
                f"Geva et al. Figure 4, {_where(p)}",
                "Overlap (IoU) of the top-30 tokens of a vector read raw and read through the final norm (an "
                "RMSNorm: no shift, so one pair of lines), per layer, for value vectors and Gaussian random vectors.",
                "Line plot of IoU per layer for value and random vectors",
            ),
        ),
    },
}
DRAWN = tuple(DRAWINGS)
draw, caption = drawings(DRAWINGS)  # what the figure registry holds for each drawn id
