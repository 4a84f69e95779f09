"""Figures of the lens chapter, drawn from their numbers (computed by :mod:`.figures` or read from ``book/data``);
nothing here computes. :data:`DRAWINGS` gives each drawn figure id its drawing and its caption, which the figure
registry holds beside its computation (:func:`draw`, :func:`caption`). Same conventions as :mod:`jtc_utils.jtc.plots`:
seismic_r r² heatmaps on [0, 1], mat blue,
id red."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from jtc_utils.core.analysis import linear
from jtc_utils.evidence.figdata import as_array
from jtc_utils.evidence.registry import Caption, View, legend_below, drawings

from jtc_utils.evidence.verdicts import seed_key

from .base import lens_label
from .tables import quarter_table
from .names import NAMES, reader_name
from .registry import label_of

COLORS = {
    "id": "#d62728",
    "mat": "#1f3cff",
    "mat+b": "#17becf",
    "rrr": "#8c564b",
    "arrr": "#bcbd22",
    "njtc": "#ff7f0e",
    "nnjtc": "#2ca02c",
    "tuned": "#9467bd",
    "tuned-lin": "#e377c2",
    "tuned<-mat": "#7f7f7f",
}


def _base(label: str) -> str:
    return label_of(label)[0]


R2_CMAP = "seismic_r"  # on [0, 1]
R2_COLOURS = "dark blue is r² = 1 (the best), white 0.5, dark red 0 or below"  # what R2_CMAP shows, for captions


def heatmaps4(d: dict, title: str | None = None):
    """N-NJTC Figure 2: r² of every pair for id, JTC, NJTC and N-NJTC, one shared colour bar."""
    panels = [("id", "id"), ("mat", "JTC (mat)"), ("njtc", f"NJTC r={d['rank']}"), ("nnjtc", f"N-NJTC r={d['rank']}")]
    L = len(d["r2_id"]) - 1
    step = 4 if L >= 24 else 2
    with sns.plotting_context("notebook", font_scale=1.1), sns.axes_style("white"):
        fig, axes = plt.subplots(1, 4, figsize=(16, 4.4))
        cbar_ax = fig.add_axes([0.92, 0.15, 0.012, 0.7])
        for k, (ax, (key, name)) in enumerate(zip(axes, panels)):
            sns.heatmap(
                as_array(d[f"r2_{key}"]),
                ax=ax,
                cmap=R2_CMAP,
                vmin=0,
                vmax=1,
                cbar=k == 0,
                cbar_ax=cbar_ax,
                xticklabels=step,
                yticklabels=step,
                square=True,
            )
            ax.set_title(name)
            ax.set_xlabel("target ℓ'")
            ax.set_ylabel("source ℓ")  # on every panel: a phone shows each alone
            ax.tick_params(axis="y", rotation=0)
        if title:
            fig.suptitle(title)
        fig.subplots_adjust(right=0.9, wspace=0.25)
    return fig


def curves(c: dict, keys=("p@1",), labels=None, title: str | None = None, seeds_band: bool = True, seeds=(0,)):
    """One panel per metric in ``keys``, one line per lens (its colour from its method); the ``seeds`` of a trained
    lens (its curves ``label`` and ``label/seedN``) drawn as a band (min to max) around their mean."""
    labels = labels or [k for k in c if k not in {seed_key(lab, s) for lab in c for s in seeds[1:]}]
    ylab = {
        "p@1": "Precision@1",
        "p@5": "Precision@5",
        "p@10": "Precision@10",
        "s_n": "surprisal of the model's top token (nats)",
        "s_jtc": "surprisal of the lens's top token (nats)",
        "kl": "KL(final ‖ lens) (nats)",
        "r2": "r² to the last layer",
        "bias_kl": "bias: KL(mean final ‖ mean lens)",
        "ce_gold": "CE on the next token (nats)",
    }
    with sns.plotting_context("notebook", font_scale=1.0), sns.axes_style("darkgrid"):
        fig, axes = plt.subplots(1, len(keys), figsize=(5.2 * len(keys) + 2, 4), squeeze=False)
        for ax, key in zip(axes[0], keys):
            for lab in labels:
                ys = [np.asarray(c[lab][key], dtype=float)] + [
                    np.asarray(c[k][key], dtype=float) for k in (seed_key(lab, s) for s in seeds[1:]) if k in c
                ]
                x = c[lab].get("layers", list(range(len(ys[0]))))
                mean = np.mean(ys, 0)
                base = _base(lab)
                ax.plot(
                    x,
                    mean,
                    color=COLORS.get(base, None),
                    lw=2,
                    label=reader_name(lab),
                    ls="--" if base in ("id", "rrr", "arrr", "tuned-lin") else "-",
                )
                if seeds_band and len(ys) > 1:
                    ax.fill_between(x, np.min(ys, 0), np.max(ys, 0), color=COLORS.get(base), alpha=0.25, lw=0)
            ax.set_xlabel("layer ℓ (jump to the last layer)")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel(ylab.get(key, key))
            if key == "kl" or key.startswith("s_"):
                ax.set_yscale("symlog", linthresh=0.1)
        axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
        if title:
            fig.suptitle(title)
        fig.tight_layout()
    return fig


def jump_to_last(d: dict):
    """N-NJTC's Figure 3 from its figure's numbers ``d`` (stand-in or real): Precision@1 and both surprisals per
    layer for id, mat, the closed-form optima of the figure's rank and the trained low-rank lenses."""
    k = d["rank"]
    return curves(
        d["curves"],
        keys=("p@1", "s_n", "s_jtc"),
        labels=["id", "mat", *(lens_label(name, k) for name in ("rrr", "arrr", "njtc", "nnjtc"))],
        title=f"{d['params']['model']}: jumping to the last layer",
        seeds=d.get("seeds") or (0,),
    )


GRID_KEYS = ("kl", "r2", "p@1", "ce_gold")  # the panels of the objective-against-form grid
HIDDEN_SHARE = 0.02  # a curve within this share of its panel's height of a curve drawn after it is hidden by it


def _panel_scale(key: str):
    """The transform of a panel's y axis as :func:`curves` draws it (symmetric log for KL and surprisal)."""
    from matplotlib.scale import SymmetricalLogTransform

    if key == "kl" or key.startswith("s_"):
        return SymmetricalLogTransform(10, 0.1, 1).transform
    return lambda y: y


def hidden_under(c: dict, keys=GRID_KEYS) -> list[tuple[str, str]]:
    """The pairs ``(under, over)`` of lenses in ``c`` (drawn in its order: a later one on top) whose curves differ,
    in every panel of ``keys`` and as the panel's axis draws them, by less than :data:`HIDDEN_SHARE` of the panel's
    height: a reader sees only ``over`` there."""
    labels = list(c)
    out = []
    for i, under in enumerate(labels):
        for over in labels[i + 1 :]:
            close = True
            for key in keys:
                t = _panel_scale(key)
                every = np.concatenate([t(np.asarray(c[lab][key], float)) for lab in labels])
                height = np.nanmax(every) - np.nanmin(every)
                gap = np.nanmax(np.abs(t(np.asarray(c[under][key], float)) - t(np.asarray(c[over][key], float))))
                close = close and gap < HIDDEN_SHARE * height
            if close:
                out.append((under, over))
    return out


def hidden_note(c: dict) -> str:
    """A caption's sentence for each curve :func:`hidden_under` another ('' where none is)."""
    return "".join(
        f" The curves of {reader_name(under)} and {reader_name(over)} differ in every panel by less than "
        f"{HIDDEN_SHARE:.0%} of its height: where only {reader_name(over)} shows, {reader_name(under)} lies under it."
        for under, over in hidden_under(c)
    )


def objective_against_form(d: dict):
    """The tuned-lens grid from its figure's numbers ``d`` (stand-in or real): KL, r², Precision@1 and the
    next-token cross-entropy per layer for every lens the figure has."""
    return curves(
        d["curves"],
        keys=GRID_KEYS,
        title=f"{d['params']['model']}: objective against form",
        seeds=d.get("seeds") or (0,),
    )


def tuned_comparison(fc: dict, lenses=("id", "mat", "tuned")):
    """The tuned lens against ``id`` and ``mat`` on every model of ``fc`` (figure ``tl_cmp``): for each model a
    column of two panels, KL to the final distribution (symmetric log scale) and Precision@1 per layer, each
    titled with its model and measure."""
    models = list(fc["models"])
    fig, axes = plt.subplots(2, len(models), figsize=(3.2 * len(models), 5.8), squeeze=False)
    for j, model in enumerate(models):
        c = fc["models"][model]
        for i, (key, measure) in enumerate((("kl", "KL(final ‖ lens)"), ("p@1", "Precision@1"))):
            ax = axes[i, j]
            for lab in lenses:
                ax.plot(c[lab][key], color=COLORS[lab], label=NAMES[lab])
            ax.set_title(f"{model}: {'KL' if key == 'kl' else 'Precision@1'}", fontsize=9)
            ax.set(xlabel="layer", ylabel=measure)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0, j].set_yscale("symlog", linthresh=0.1)
        axes[1, j].set_ylim(-0.02, 1.02)
    axes[0, -1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def rank_r2_hidden(d: dict) -> str:
    """The caption's sentence where the mean-r² curves of RRR and aRRR (drawn second) differ by less than
    :data:`HIDDEN_SHARE` of the panel's height ('' where both show)."""
    rrr, arrr = as_array(d["r2_rrr"]).mean(1), as_array(d["r2_arrr"]).mean(1)
    both = np.concatenate([rrr, arrr])
    if np.nanmax(np.abs(rrr - arrr)) >= HIDDEN_SHARE * (np.nanmax(both) - np.nanmin(both)):
        return ""
    return (
        f" In the r² panel the two curves differ by less than {HIDDEN_SHARE:.0%} of its height: where only aRRR's "
        "shows, RRR's lies under it."
    )


def rank_sweep(d: dict, title: str | None = None):
    """Precision@1 (at three layers) and mean r² against the rank of the closed-form map, with id's, over one legend
    below both panels: the layer a colour, the map a line style (RRR solid, aRRR dotted, id dashed)."""
    from matplotlib.lines import Line2D

    ranks = np.asarray(d["ranks"])
    with sns.plotting_context("notebook", font_scale=1.0), sns.axes_style("darkgrid"):
        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 4.4))
        layers = []
        for j, layer in enumerate(d["layers_p1"]):
            col = plt.cm.viridis(j / max(1, len(d["layers_p1"]) - 1))
            a.plot(ranks, as_array(d["p1_rrr"])[:, j], "o-", color=col)
            a.plot(ranks, as_array(d["p1_arrr"])[:, j], "s:", color=col)
            a.axhline(d["p1_id"][j], color=col, ls="--", lw=1)
            layers.append(Line2D([], [], color=col, lw=3, label=f"ℓ = {layer}"))
        a.set_xscale("log", base=2)
        a.set_xlabel("rank r (full width = mat)")
        a.set_ylabel("Precision@1")
        a.set_title("Precision@1 against rank")
        b.plot(ranks, as_array(d["r2_rrr"]).mean(1), "o-", color="0.25")
        b.plot(ranks, as_array(d["r2_arrr"]).mean(1), "s:", color="0.55")
        b.set_xscale("log", base=2)
        b.set_xlabel(f"rank r (parameters: 2·{d['d']}·r)")
        b.set_ylabel("mean r² to the last layer")
        b.set_title("mean r² against rank (all layers)")
        maps = [
            Line2D([], [], color="0.25", marker="o", ls="-", label="RRR"),
            Line2D([], [], color="0.25", marker="s", ls=":", label="aRRR"),
            Line2D([], [], color="0.25", ls="--", lw=1, label="id"),
        ]
        # filled column by column: the layers on the first row, the maps on the second
        if title:
            fig.suptitle(title)
        legend_below(fig, [h for pair in zip(layers, maps) for h in pair])
    return fig


def exit_frontiers(t: dict, labels, title: str | None = None):
    """Section 5's early-exit curve of each lens (λ sweep) and, dotted, its oracle frontier: every sample exits at
    its saturation layer; the 0.95 line marks where layers saved are read."""
    L = t["n_layers"]
    with sns.plotting_context("notebook", font_scale=1.0), sns.axes_style("darkgrid"):
        fig, ax = plt.subplots(figsize=(8.5, 4.5))
        for lab in labels:
            e = t["lenses"][lab]["exit"]
            col = COLORS.get(_base(lab))
            order = np.argsort(e["x"], kind="stable")
            ax.plot(
                np.asarray(e["x"])[order],
                np.asarray(e["y"])[order],
                "-",
                color=col,
                lw=2,
                label=f"{reader_name(lab)}: confidence rule",
            )
            ax.plot(e["oracle"]["x"], e["oracle"]["y"], ":", color=col, lw=2, label=f"{reader_name(lab)}: oracle")
        ax.axhline(0.95, color="black", lw=1, ls="--", label="Precision@1 = 0.95")
        ax.set_xlim(0, L)
        ax.set_xlabel("mean exit layer")
        ax.set_ylabel("Precision@1 (agreement with the full model)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
        if title:
            ax.set_title(title)
        fig.tight_layout()
    return fig


def _with_params(d: dict, p: dict) -> dict:
    return {**d, "params": p}


_EXIT_SEE = (
    "Precision@1 against the mean number of layers processed under the confidence rule, with each lens's "
    "oracle exit (dotted){}; a curve further up and to the left saves more computation."
)
_GRID_SEE = (
    "KL to the final distribution, r², Precision@1 and the cross-entropy on the text's next token per layer "
    "{}for maps of the same form trained on squared error {} or on KL {}."
)
# figure id -> its drawing from its numbers and parameters, and its caption (jtc_utils.evidence.registry.View)
DRAWINGS = {
    "nnjtc_fig2": View(
        lambda d, p: heatmaps4(d, title=f"{p['model']} (stands for {p['paper_model']}), rank {d['rank']}"),
        lambda d, p: Caption(
            "N-NJTC Figure 2",
            f"r² of each jump from layer ℓ (rows) to ℓ′ (columns) for id, mat, NJTC and N-NJTC at rank {d['rank']}; "
            f"{R2_COLOURS}.",
            f"Four heatmaps of r² over layer pairs: id, mat, NJTC and N-NJTC at rank {d['rank']}",
        ),
    ),
    "real_nnjtc_fig2": View(
        lambda d, p: heatmaps4(d, title=f"{p['model']}, rank {d['rank']}"),
        lambda d, p: Caption(
            "N-NJTC Figure 2, on the real model",
            f"r² of each jump from layer ℓ (rows) to ℓ′ (columns) of the real model for id and mat (every pair), NJTC "
            f"and N-NJTC at rank {d['rank']} (each layer to the next and to the last; blank: not trained); "
            f"{R2_COLOURS}.",
            "Four heatmaps of r² over layer pairs of the real model: id, mat, and NJTC and N-NJTC on two diagonals",
        ),
    ),
    "nnjtc_fig3": View(
        lambda d, p: jump_to_last(_with_params(d, p)),
        lambda d, p: Caption(
            "N-NJTC Figure 3",
            f"Precision@1 and two surprisals when every layer jumps to the last, for id, mat, the closed-form optima "
            f"of rank {d['rank']} (dashed) and the trained low-rank maps (bands: {len(d['seeds'])} seeds).",
            "Line plots of Precision@1 and surprisal per layer for six lenses",
        ),
    ),
    "real_nnjtc_fig3": View(
        lambda d, p: jump_to_last(_with_params(d, p)),
        lambda d, p: Caption(
            "N-NJTC Figure 3, on the real model",
            f"Precision@1 and two surprisals when every layer of the real model jumps to the last, for id, mat, the "
            f"closed-form optima of rank {d['rank']} (dashed) and the trained low-rank maps (the band spans their "
            f"{len(d.get('seeds') or [0])} training seeds).",
            "Line plots of Precision@1 and surprisal per layer for six lenses on the real model",
        ),
    ),
    "ext_nnjtc_rank": View(
        lambda d, p: rank_sweep(d, title=f"{p['model']}: the best map of each rank"),
        lambda d, p: Caption(
            "beyond the papers",
            "The best map of each rank: Precision@1 at three depths against the rank (one colour per depth; dashed: "
            "id at that depth), and the mean r² over the layers against the rank (RRR solid, aRRR dotted)."
            + rank_r2_hidden(d),
            "Precision@1 and r² against the rank of the closed-form map",
        ),
    ),
    "tl_grid": View(
        lambda d, p: objective_against_form(_with_params(d, p)),
        lambda d, p: Caption(
            "beyond the papers: objective against form",
            _GRID_SEE.format("", "(mat)", "(the tuned lenses)") + hidden_note(d["curves"]),
            "Four line plots per layer, KL, r², Precision@1 and next-token cross-entropy, for several lenses",
        ),
    ),
    "real_tl_grid": View(
        lambda d, p: objective_against_form(_with_params(d, p)),
        lambda d, p: Caption(
            "beyond the papers: objective against form, on the real model",
            _GRID_SEE.format("of the real model, ", "(mat, mat + b)", "(the tuned lens)") + hidden_note(d["curves"]),
            "Four line plots per layer of the real model, KL, r², Precision@1 and next-token cross-entropy, for four "
            "lenses",
        ),
    ),
    "tl_cmp": View(
        lambda d, p: tuned_comparison(d),
        lambda d, p: Caption(
            f"the tuned-lens paper's comparison, on every stand-in ({', '.join(d['models'])})",
            "For each model, KL to the final distribution (log scale) and Precision@1 per layer for the logit lens,"
            " mat and the tuned lens; each panel names its model and measure.",
            "Grid of line plots of KL and Precision@1 per layer, one column per model",
        ),
    ),
    "lens_table": View(
        lambda d, p: exit_frontiers(
            d, ["id", "mat", f"nnjtc_{d['rank']}", "tuned"], title=f"{d['n_layers']}-layer stand-in: early exit"
        ),
        lambda d, p: Caption(
            "beyond the papers: early exit with every lens",
            _EXIT_SEE.format(""),
            "Early-exit curves of four lenses with their oracle curves",
        ),
    ),
    "real_lens_exit": View(
        lambda d, p: exit_frontiers(d, list(d["lenses"]), title=f"{p['model']}: early exit"),
        lambda d, p: Caption(
            "beyond the papers: early exit with every lens, on the real model",
            _EXIT_SEE.format(", for the real model"),
            "Early-exit curves of four lenses with their oracle curves on the real model",
        ),
    ),
}
DRAWN = tuple(DRAWINGS)
draw, caption = drawings(DRAWINGS)  # what the figure registry holds for each drawn id
TABLED = ("real_lens_table",)  # the figures :func:`table` shows


UNDERDETERMINED_MARK = " †"  # after a fitted lens's name in a table whose maps were fitted on fewer samples than d


def marked_table(data: dict):
    """The all-lenses table at three depths (Precision@1, KL and cross-entropy against the gold token per lens), and
    the note under it: where the maps were fitted on fewer samples than dimensions, every fitted lens (one with
    parameters) is marked and the note says why its numbers cannot tell; else the note is empty."""
    frame = quarter_table(data, ("p@1", "kl", "ce_gold")).set_index("lens")
    under = data.get(linear.UNDERDETERMINED)
    if not under:
        return frame, ""
    fitted = {reader_name(lab) for lab, row in data["lenses"].items() if row["params"] > 0}
    frame.index = [f"{lab}{UNDERDETERMINED_MARK}" if lab in fitted else lab for lab in frame.index]
    return frame, (
        f"{UNDERDETERMINED_MARK.strip()} fitted on {under['n_train']:,} samples of dimension "
        f"{under['d']:,}: the fit is underdetermined, so these lenses' numbers on new text cannot tell how "
        "well a map reads the layer; give more sentences"
    )


def table(fig: str, data: dict, params: dict) -> None:
    """The all-lenses table at three depths (:func:`marked_table`), its note under it."""
    from IPython.display import display

    frame, note = marked_table(data)
    display(frame)
    if note:
        print(note)
