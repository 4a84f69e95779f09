"""The linearity chapter's drawings (matplotlib), one function per kind of figure; each takes the figure's numbers as
:mod:`.figures` returns them. :data:`DRAWINGS` gives each drawn figure id its drawing and its caption, which the
figure registry holds beside its computation."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import numpy as np

from jtc_utils.evidence.registry import Caption, View, legend_below, drawings

from .prune import STRATEGIES

STYLE = {
    "res_in": ("-", "with residual (in-sample)"),
    "nores_in": ("--", "without residual (in-sample)"),
    "res_ho": (":", "with residual (held-out)"),
    "res_null": ("-.", "null (rows shuffled)"),
}


def profiles(fig1: dict, protocol: str = "paper", keys=("res_in", "nores_in"), real: dict | None = None):
    """The paper's Fig. 1: linearity of consecutive layers against normalised depth, decoders and encoders apart."""
    fams = [("gpt2", "GPT-style stand-ins"), ("bert", "BERT-style stand-ins")] + (
        [("real", "real model")] if real else []
    )
    fig, axes = plt.subplots(1, len(fams), figsize=(4.2 * len(fams), 3.4), sharey=True)
    for ax, (fam, title) in zip(axes, fams):
        rows = {real["model"]: real} if fam == "real" else {m: v for m, v in fig1.items() if v["family"] == fam}
        for i, (m, v) in enumerate(rows.items()):
            for key in keys:
                ax.plot(
                    v["depth"],
                    v[protocol][key],
                    STYLE[key][0],
                    color=f"C{i}",
                    marker=".",
                    label=m if key == keys[0] else None,
                )
        for key in keys:  # the line styles, once
            ax.plot([], [], STYLE[key][0], color="black", label=STYLE[key][1])
        ax.set(title=title, xlabel="depth of the pair's upper layer (l+1)/L", ylim=(0, 1.02))
        ax.legend(fontsize=7, loc="lower left")
    axes[0].set_ylabel("linearity score")
    fig.tight_layout()
    return fig


def trajectory(fig2: dict, ax=None):
    """The paper's Fig. 2: mean linearity against training tokens (log axis; step 0 drawn at the first tick)."""
    ax = ax or plt.subplots(figsize=(5.5, 3.4))[1]
    snaps = fig2["snapshots"]
    x = [max(s["tokens"], snaps[1]["tokens"] / 2) for s in snaps]
    for key, label in (("res_in", "with residual"), ("nores_in", "without residual")):
        ax.plot(x, [np.mean(s["all"][key]) for s in snaps], marker="o", label=label)
    ax.set(
        xscale="log",
        xlabel="training tokens (step 0 drawn at the left)",
        ylabel="mean linearity score",
        title="tiny-gpt2 during pretraining",
    )
    ax.legend()
    return ax


def regularised(fig4: dict, key: str = "res_in", ax=None, title: str = ""):
    """Per-layer linearity for each regulariser weight: mean of the seeds, with the seeds' range."""
    ax = ax or plt.subplots(figsize=(5.5, 3.4))[1]
    for i, lam in enumerate(fig4["lambdas"]):
        rows = np.array([r["all"][key] for r in fig4["runs"].values() if r["lambda"] == lam])
        x = np.arange(1, rows.shape[1] + 1)
        ax.plot(x, rows.mean(0), marker="o", color=f"C{i}", label="plain" if lam == 0 else f"cosine, λ = {lam:g}")
        ax.fill_between(x, rows.min(0), rows.max(0), color=f"C{i}", alpha=0.2)
    ax.set(xlabel="pair l -> l+1 (upper layer)", ylabel="linearity score", title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=8)
    return ax


def probes(fig5: dict, ax=None):
    ax = ax or plt.subplots(figsize=(5.5, 3.4))[1]
    lams = sorted({r["lambda"] for r in fig5.values()})
    for i, lam in enumerate(lams):
        rows = np.array([r["accuracy"] for r in fig5.values() if r["lambda"] == lam])
        x = np.arange(rows.shape[1])
        ax.plot(x, rows.mean(0), marker="o", color=f"C{i}", label="plain" if lam == 0 else f"cosine, λ = {lam:g}")
        ax.fill_between(x, rows.min(0), rows.max(0), color=f"C{i}", alpha=0.2)
    ax.axhline(np.mean([r["majority"] for r in fig5.values()]), color="grey", lw=0.8, ls=":", label="majority class")
    ax.set(xlabel="layer l (probe on h^l)", ylabel="probe accuracy (next word's class)", title="linear probes")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=8)
    return ax


PRUNE_STYLES = {"remove": "-", "replace": "--", "replace + distil": ":"}  # a pruning's mode: its line style


def pruning(d: dict, metric: str = "perplexity", ax=None, title: str = "", legend: bool = True):
    """The paper's Figs 6-7: damage against the number of pruned blocks, per strategy (a colour) and mode (a line
    style; random: mean of draws)."""
    ax = ax or plt.subplots(figsize=(6, 3.8))[1]
    rows = d["rows"]
    styles = PRUNE_STYLES
    for i, strategy in enumerate(STRATEGIES):
        for mode, ls in styles.items():
            ks = sorted({r["k"] for r in rows if r["strategy"] == strategy and r["mode"] == mode})
            if not ks:
                continue
            y = [
                np.mean([r[metric] for r in rows if r["strategy"] == strategy and r["mode"] == mode and r["k"] == k])
                for k in ks
            ]
            ax.plot(
                [0] + ks, [d["base"][metric]] + y, ls, lw=1.8, marker=".", color=f"C{i}", label=f"{strategy}, {mode}"
            )
    ax.set(xlabel="blocks pruned (k)", ylabel=metric.replace("_", " "), title=title)
    if metric == "perplexity":
        ax.set_yscale("log")
    if legend:
        ax.legend(fontsize=7)
    return ax


def r2family(d: dict, ax=None):
    ax = ax or plt.subplots(figsize=(6, 3.6))[1]
    x = np.arange(1, len(d["r2_mat"]) + 1)
    for key, label, ls in (
        ("r2_mat", "JTC r², mat (held-out)", "-"),
        ("r2_id", "JTC r², id (held-out)", "-"),
        ("res_in", "LS with residual, in-sample", "--"),
        ("res_ho", "LS with residual, held-out", ":"),
        ("nores_in", "LS without residual, in-sample", "--"),
        ("res_null", "null", "-."),
    ):
        ax.plot(x, d[key], ls, marker=".", label=label)
    ax.set(xlabel="pair l-1 -> l (block l)", ylabel="score", title=f"{d['model']}: one cache, five scores")
    ax.legend(fontsize=7)
    return ax


def update_norms(fig3: dict, ax=None):
    """The median relative size of each block's update against depth, one line per model (the paper's Figure 3)."""
    ax = ax or plt.subplots(figsize=(6, 3.4))[1]
    for m, v in fig3.items():
        ax.plot(v["depth"], v["update_norm"], marker=".", label=m)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":", label="0.5")
    ax.set(xlabel="depth (l+1)/L", ylabel="median ‖Δh‖ / ‖h‖", title="size of the blocks' updates")
    ax.legend(fontsize=7)
    return ax


def _regularised_and_probes(fig4: dict, probes_of: dict) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.6))
    regularised(fig4, "res_in", ax=axes[0], title="LS with residual")
    regularised(fig4, "nores_in", ax=axes[1], title="LS without residual")
    probes(probes_of, ax=axes[2])
    fig.tight_layout()


def _chosen(d: dict) -> str:
    """How the pruned blocks were chosen, for the caption: every strategy the figure draws, in its order."""
    names = {
        "most linear": "most linear first",
        "least linear": "least linear first",
        "random": "at random (the mean of the draws)",
    }
    drawn = [names[s] for s in STRATEGIES if any(r["strategy"] == s for r in d["rows"])]
    return ", ".join(drawn[:-1]) + (" or " if len(drawn) > 1 else "") + drawn[-1]


def _pruning_panels(d: dict) -> None:
    """The two pruning panels side by side over one legend in two rows, the blocks' choice (a colour) above the
    pruning's mode (a line style), instead of eight entries beside each panel."""
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
    pruning(d, "perplexity", ax=axes[0], title="perplexity", legend=False)
    pruning(d, "fact_accuracy", ax=axes[1], title="accuracy at fact words", legend=False)
    chosen = [Line2D([], [], color=f"C{i}", lw=3, label=s) for i, s in enumerate(STRATEGIES)]
    modes = [Line2D([], [], color="0.25", ls=ls, lw=1.8, label=m) for m, ls in PRUNE_STYLES.items()]
    # filled column by column: each column a choice over a mode, so the rows are the choices and the modes
    fig.suptitle(d["model"])
    legend_below(fig, [h for pair in zip(chosen, modes) for h in pair])


_FIG1_SEE = (
    "The linearity score of each consecutive layer pair against depth, with the residual (solid) and without it{}."
)
# figure id -> its drawing and caption (jtc_utils.evidence.registry.View); the numbers of a figure drawn
# together with another's come as an option (sl_fig1 with real_sl's as ``real``, sl_fig4 with sl_fig5's as
# ``probes``), and the caption links both
DRAWINGS = {
    "sl_fig1": View(
        lambda d, p, real=None: profiles(d, real=real),
        lambda d, p, real=None: Caption(
            "Razzhigaev et al. Figure 1",
            _FIG1_SEE.format(
                ", for the GPT-style stand-ins, the BERT-style ones" + (" and the real model" if real else "")
            ),
            "Three panels of linearity scores against depth, one per model family",
            figs=("sl_fig1", "real_sl") if real else (),
        ),
    ),
    "real_sl": View(
        lambda d, p: profiles({}, real=d),
        lambda d, p: Caption(
            "Razzhigaev et al. Figure 1, " + ("on the real model" if p["profile"] == "real" else "on your model"),
            _FIG1_SEE.format(""),
            "Linearity scores against depth",
        ),
    ),
    "ext_sl_r2family": View(
        lambda d, p: r2family(d),
        lambda d, p: Caption(
            "beyond the papers: the linearity score and JTC's r²",
            "The same least-squares fits read as the centred in-sample linearity score and as JTC's held-out "
            "coordinate-averaged r², per layer pair.",
            "Line plot comparing linearity scores and r² per layer",
        ),
    ),
    "sl_fig3": View(
        lambda d, p: update_norms(d),
        lambda d, p: Caption(
            "Razzhigaev et al. Figure 3",
            "The median size of each block's update relative to the stream it is added to, against depth; the "
            "dotted line is 0.5.",
            "Line plot of relative update norms against depth for several models",
        ),
    ),
    "sl_fig2": View(
        lambda d, p: trajectory(d),
        lambda d, p: Caption(
            "Razzhigaev et al. Figure 2",
            "The mean linearity score of tiny-gpt2 at log-spaced steps of pretraining (tokens seen, log axis), "
            "with and without the residual.",
            "Line plot of the mean linearity score against training step",
        ),
    ),
    "sl_fig4": View(
        lambda d, p, probes: _regularised_and_probes(d, probes),
        lambda d, p, probes: Caption(
            "Razzhigaev et al. Figures 4 and 5",
            "Per layer, the linearity score with and without the residual for plain and cosine-regularised "
            "pretraining (three seeds each), and the accuracy of linear probes.",
            "Three line plots per layer: two linearity scores and probe accuracy, plain and regularised runs",
            figs=("sl_fig4", "sl_fig5"),
        ),
    ),
    "sl_fig7": View(
        lambda d, p: _pruning_panels(d),
        lambda d, p: Caption(
            "Razzhigaev et al. Figures 6 and 7",
            "Perplexity and accuracy at fact words after removing (solid), replacing (dashed) or distilling "
            "(dotted) k blocks, chosen " + _chosen(d) + " (one colour each).",
            "Two line plots against the number of pruned blocks",
        ),
    ),
}
DRAWN = tuple(DRAWINGS)
draw, caption = drawings(DRAWINGS)  # what the figure registry holds for each drawn id
