"""Paper-style figures. Each function takes the numbers (as computed by :mod:`jtc_utils.core.analysis.experiment` or
read back from ``book/data``) and returns a matplotlib Figure; none of them computes anything. :func:`draw` draws any
figure of the paper from its numbers and :func:`caption` says what it shows: the two the figure registry holds for every
drawn figure id of the paper (:data:`DRAWN`), beside :func:`jtc_utils.jtc.figures.compute`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from jtc_utils.core.models import models
from jtc_utils.core.analysis.early_exit import curve_points
from jtc_utils.evidence import figdata, figure_registry, registry

from . import figures


def heatmap_step(n: int, most: int = 8) -> int:
    """Every how many cells a heatmap of ``n`` layers labels one: the smallest of 1, 2, 3, 4, 5, 6, 8, 10, ... that
    labels at most ``most``, so that the labels of a panel drawn at the book's size never run together."""
    for step in (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 50):
        if -(-n // step) <= most:
            return step
    return -(-n // most)


def r2_heatmaps(r2_mat, r2_id, title: str | None = None, figsize=(15, 8.27)):
    """The paper's r² heatmap pair (spec 3.3): ``mat`` left, ``id`` right; rows = source layer l (0 at the top),
    columns = target l'; colormap seismic_r on [0, 1] (blue = good, white = 0.5, red = 0 or below); one shared
    colour bar whose lowest tick reads "≤0.0"; the matrices are arrays or a figure's saved lists."""
    r2_mat, r2_id = figdata.as_array(r2_mat), figdata.as_array(r2_id)
    L = r2_mat.shape[0] - 1
    step = heatmap_step(L + 1)
    with sns.plotting_context("notebook", font_scale=2), sns.axes_style("darkgrid"):
        fig, axes = plt.subplots(1, 2, figsize=figsize)
        cbar_ax = fig.add_axes([0.91, 0.1, 0.03, 0.8])
        for k, (ax, mat, name) in enumerate(zip(axes, (r2_mat, r2_id), ("mat", "id"))):
            sns.heatmap(
                mat,
                ax=ax,
                cmap="seismic_r",
                vmin=0,
                vmax=1,
                cbar=k == 0,
                cbar_ax=cbar_ax,
                xticklabels=step,
                yticklabels=step,
                square=False,
            )
            ax.set_title(name)
            ax.set_xlabel("ℓ'", fontsize=35)
            ax.set_ylabel("ℓ", fontsize=35)
            ax.tick_params(axis="y", rotation=0)
        ticks = cbar_ax.get_yticks()
        cbar_ax.set_yticks(ticks)
        cbar_ax.set_yticklabels(["≤0.0" if t == 0 else f"{t:.1f}" for t in ticks])
        if title:
            fig.suptitle(title)
        fig.subplots_adjust(right=0.9)
    return fig


# the paper's colours (spec 4): mat blue, id red, and the sub-module maps of section 6
COLORS = {"mat": (0, 0, 1), "id": (1, 0, 0), "mat_attn": (0, 1, 0), "mat_ffn": (1, 0, 1), "mat_ln1_ln2": (1, 0.5, 0)}
DASHES = {"mat": "", "id": (4, 2), "mat_attn": (1, 1), "mat_ffn": (3, 1, 1, 1), "mat_ln1_ln2": (5, 1, 1, 1, 1, 1)}


def _layer_ticks(ax, L: int):
    step = {6: 1, 12: 2, 18: 3, 24: 3, 36: 4, 48: 6}.get(L, max(1, L // 8))
    ax.set_xlim(0, L)
    ax.set_xticks(range(0, L + 1, step))


def _long(curves: dict, keys, mappings) -> pd.DataFrame:
    rows = []
    for m in mappings:
        for key in keys:
            for layer, v in enumerate(curves[m][key]):
                if v is None or not np.isfinite(v):  # a layer not computed (sub-module maps from some layers)
                    continue
                rows.append({"layer": layer, "mapping": m, "k": key.replace("p@", "k="), "value": v})
    return pd.DataFrame(rows)


def precision_curves(curves: dict, mappings=("mat", "id"), ks=(1, 5, 10), title=None, ax=None):
    """Mean Precision@k per layer (Figs 4, 6, 14, 16, 26-29; with the sub-module maps, Figs 10, 34, 35): one line
    per mapping (colour and dash) and k (line width, k=1 widest); no error band."""
    keys = [f"p@{k}" for k in ks]
    df = _long(curves, keys, mappings)
    with sns.plotting_context("notebook", font_scale=1.3), sns.axes_style("darkgrid"):
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 5))
        sns.lineplot(
            df,
            x="layer",
            y="value",
            hue="mapping",
            style="mapping",
            size="k",
            palette=COLORS,
            dashes=DASHES,
            sizes=dict(zip([k.replace("p@", "k=") for k in keys], (3.0, 1.8, 0.9)[: len(ks)])),
            hue_order=mappings,
            style_order=mappings,
            errorbar=None,
            ax=ax,
        )
        L = len(next(iter(curves.values()))[keys[0]]) - 1
        for m in mappings:  # a curve measured at some layers only: a marker on each measured layer
            for key in keys:
                v = np.asarray(curves[m][key], dtype=float)
                if not np.isfinite(v).all():
                    ax.plot(
                        np.flatnonzero(np.isfinite(v)),
                        v[np.isfinite(v)],
                        ls="",
                        marker="o",
                        ms=6,
                        color=COLORS[m],
                        zorder=3,
                    )
        _layer_ticks(ax, L)
        ax.set_ylabel("Precision@k" if len(ks) > 1 else f"Precision@{ks[0]}")
        # seaborn's legend carries its group names ("mapping", "k") as entries of their own: leave them out, and
        # the line widths of k when there is one k only (the y label names it)
        handles, names = ax.get_legend_handles_labels()
        kept = [
            (h, n)
            for h, n in zip(handles, names)
            if n not in ("mapping", "k") and not (len(ks) == 1 and n.startswith("k="))
        ]
        ax.legend(*zip(*kept), loc="upper left", bbox_to_anchor=(1.01, 1))
        if title:
            ax.set_title(title)
    return ax.figure


def surprisal_curves(curves: dict, mappings=("mat", "id"), title=None, ax=None):
    """Mean Surprisal per layer with its seeded 95% bootstrap band (Figs 5, 7, 15, 17, 30-33, 11, 19)."""
    with sns.plotting_context("notebook", font_scale=1.3), sns.axes_style("darkgrid"):
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 5))
        for m in mappings:
            c = curves[m]
            y, lo, hi = (np.asarray(c[k], dtype=float) for k in ("surprisal", "surprisal_lo", "surprisal_hi"))
            x = np.arange(len(y))
            done = np.isfinite(y)  # a curve measured at some layers only (sub-module maps from every 5th layer) is
            sparse = not done.all()  # drawn through the measured layers, with a marker on each
            ax.plot(
                x[done],
                y[done],
                color=COLORS[m],
                dashes=DASHES[m] or (None, None),
                lw=2,
                label=m,
                marker="o" if sparse else None,
                ms=6,
            )
            ax.fill_between(x[done], lo[done], hi[done], color=COLORS[m], alpha=0.2, lw=0)
        _layer_ticks(ax, len(x) - 1)
        ax.set_xlabel("layer")
        ax.set_ylabel("Surprisal")
        ax.legend(loc="upper right")
        if title:
            ax.set_title(title)
    return ax.figure


def early_exit_plot(data: dict, title=None, ax=None):
    """Precision@1 against the mean number of layers processed (Figs 8, 9, 20, 21): early exit thick, fixed exit
    thin; mat blue solid, id red dashed; points sorted by x, equal x averaged."""

    L = data["n_layers"]
    with sns.plotting_context("notebook", font_scale=1.3), sns.axes_style("darkgrid"):
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 5))
        for m in ("mat", "id"):
            x, y = curve_points(data["early"][m]["x"], data["early"][m]["y"])
            ax.plot(
                x,
                y,
                color=COLORS[m],
                dashes=DASHES[m] or (None, None),
                lw=3,
                marker="o",
                ms=4,
                label=f"{m}, early exit",
            )
            ax.plot(
                range(L + 1),
                figdata.as_array(data["fixed"][m]),
                color=COLORS[m],
                dashes=DASHES[m] or (None, None),
                lw=1,
                label=f"{m}, fixed exit",
            )
        ax.axhline(0.95, color="grey", lw=0.8, ls=":", label="95% target")
        ax.set_xlim(0, L)
        ax.set_xticks(range(0, L + 1, 3 if L >= 24 else 1))
        ax.set_xlabel("layers processed")
        ax.set_ylabel("Precision@1")
        ax.legend(loc="lower right")
        if title:
            ax.set_title(title)
    return ax.figure


def label_breakdown(by_label: dict, labels=None, title=None):
    """Precision@1 per layer of mat and id, one panel per kind of predicted token."""
    labels = labels or list(by_label)
    with sns.plotting_context("notebook", font_scale=1.1), sns.axes_style("darkgrid"):
        ncols = min(4, len(labels))  # small multiples as a grid, not one long row
        nrows = -(-len(labels) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows), sharey=True, squeeze=False)
        for ax in axes.flat[len(labels) :]:
            ax.set_visible(False)
        axes = axes.flat[: len(labels)]
        for ax, lab in zip(axes, labels):
            d = by_label[lab]
            for m in ("mat", "id"):
                ax.plot(figdata.as_array(d[m]), color=COLORS[m], dashes=DASHES[m] or (None, None), lw=2, label=m)
            ax.set_title(f"{lab} (n={d['n']})")
            ax.set_xlabel("layer")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        for ax in axes[::ncols]:
            ax.set_ylabel("Precision@1")
        axes[-1].legend(loc="lower right")
        fig.tight_layout()
        if title:
            fig.suptitle(title, y=1.03)
    return fig


def norms_by_position(data: dict, title=None):
    """Massive activations: mean norm of h^l per layer for the first position and for each later one (log scale)."""
    norms = np.asarray(data["norms"], dtype=float)
    L = norms.shape[0] - 1
    fig, ax = plt.subplots(figsize=(7, 4))
    for p in range(1, norms.shape[1]):
        ax.plot(range(L + 1), norms[:, p], color="0.6", lw=0.8, label="positions 1+" if p == 1 else None)
    ax.plot(range(L + 1), norms[:, 0], color="k", lw=2.5, label="position 0 (first token)")
    ax.set(yscale="log", xlabel="layer ℓ", ylabel="mean ‖hˡ‖ (log scale)", title=title)
    _layer_ticks(ax, L)
    ax.legend()
    fig.tight_layout()
    return fig


def r2_with_without_first(data: dict, title=None):
    """r² of mat and id from each layer to the last, with every sampled position and without position 0."""
    fig, ax = plt.subplots(figsize=(7, 4))
    L = len(data["r2_mat_to_last_all"]) - 1
    for m in ("mat", "id"):
        for label, dash in (("all", "-"), ("without_first", ":")):
            ax.plot(
                range(L),
                np.asarray(data[f"r2_{m}_to_last_{label}"], dtype=float)[:L],
                dash,
                color=COLORS[m],
                lw=2,
                label=f"{m}, {'every position' if label == 'all' else 'without position 0'}",
            )
    ax.set(xlabel="source layer ℓ", ylabel="r² to the last layer", title=title, ylim=(-0.3, 1.02))
    _layer_ticks(ax, L)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def loss_grid(cards: list[dict], ncols: int = 4):
    """The zoo's training curves as small multiples: one panel per model (training loss per logged step)."""
    nrows = -(-len(cards) // ncols)
    with sns.axes_style("darkgrid"):
        fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.6 * nrows), squeeze=False)
        for ax in axes.flat[len(cards) :]:
            ax.set_visible(False)
        for ax, card in zip(axes.flat, cards):
            ax.plot(card["loss_curve"], lw=1.2, color="0.2")
            ax.set_title(f"{card['name']} ({card['config']['n_layer']} layers)", fontsize=10)
            ax.set_xlabel("logged step", fontsize=9)
            ax.tick_params(labelsize=8)
            ax.set_ylabel("training loss", fontsize=9)  # on every panel: a phone shows each alone
        fig.tight_layout()
    return fig


def title(data: dict, params: dict) -> str:
    """The model and text a figure's numbers come from, as its title says them."""
    model = models.display_name(params["model"])
    if params["model"] == params["paper_model"]:  # a real model (or a reader's own) stands for itself
        return f"{model} on {params['domain']}"
    return f"{model} (stands for {params['paper_model']}) on {params['domain']}"


TABLES = ("table1", "plausibility", "toplists", "textfit")  # kinds shown as tables, not drawn
DRAWN = tuple(f for f, (kind, _, _) in figures.FIGURES.items() if kind not in TABLES)  # the figures :func:`draw` draws
# the figures :func:`table` shows (the plausibility study's page prints its own lines)
TABLED = tuple(f for f, (kind, _, _) in figures.FIGURES.items() if kind in ("table1", "toplists", "textfit"))


def table(fig: str, data: dict, params: dict) -> None:
    """Show a figure of :data:`TABLED` as a table: the top-token lists of Table 1 sentence by sentence, or how well
    the model fits its text."""
    from IPython.display import display

    if figures.setting(fig)[0] == "textfit":
        display(pd.Series({k: data[k] for k in ("perplexity", "ppl_tokens", "gold_p1", "n_gold")}, name=fig))
        return
    for sentence, block in figures.table1_frame(data).groupby(level=0, sort=False):
        print(sentence)
        print(block.droplevel(0).to_string(), end="\n\n")


# figure kind -> how a figure of that kind is drawn from its numbers: (data, title, mappings, ax, word classes) ->
# a Figure; the kinds of TABLED are shown as tables (:func:`table`)
def _precision(d, t, m, ax, labels):
    return precision_curves(d["curves"], m or tuple(d["curves"]), ks=d.get("ks", (1, 5, 10)), title=t, ax=ax)


def _surprisal(d, t, m, ax, labels):
    return surprisal_curves(d["curves"], m or tuple(d["curves"]), title=t, ax=ax)


DRAWINGS = {
    "r2": lambda d, t, m, ax, labels: r2_heatmaps(d["r2_mat"], d["r2_id"], title=t),
    "pk": _precision,
    "parts_pk": _precision,  # a sub-module figure draws as its curves
    "surp": _surprisal,
    "parts_surp": _surprisal,
    "ee": lambda d, t, m, ax, labels: early_exit_plot(d, title=t, ax=ax),
    "labels": lambda d, t, m, ax, labels: label_breakdown(d["by_label"], labels=labels, title=t),
    "norms": lambda d, t, m, ax, labels: norms_by_position(d, title=t),
    "r2_first": lambda d, t, m, ax, labels: r2_with_without_first(d, title=t),
}


def draw(fig: str, data: dict, params: dict, mappings=None, ax=None, labels=None):
    """Draw a figure from its numbers (computed now or read back from ``book/data``)."""
    kind = figures.setting(fig)[0]  # an unknown id is refused with the known ones
    if kind not in DRAWINGS:
        raise ValueError(f"figure {fig!r} ({kind}) is a table, not a plot")
    return DRAWINGS[kind](data, title(data, params), mappings, ax, labels)


# what to see in a figure of each kind: one sentence, the same for every figure of that kind (no numbers: those are
# in the figure and in its JSON file)
SEE = {
    "r2": "Each cell is the validation r² of casting layer ℓ (row) to layer ℓ′ (column), one panel with mat and one "
    "with id (each titled so); the paper finds mat higher across the network.",
    "pk": "How often the cast hidden state of each layer already gives the model's final top token (Precision@k), "
    "for mat and id; the paper finds mat above id at every layer.",
    "surp": "The surprisal of the model's final top token under the cast of each layer, with 95% bootstrap bands "
    "(lower is better); the paper finds mat below id at every layer.",
    "parts_pk": "Precision@{k} when one sub-module of every block from the start layer on is replaced by a linear map, "
    "next to mat for whole blocks; the paper finds attention the part best replaced.",
    "parts_surp": "Surprisal when one sub-module of every block from the start layer on is replaced by a linear map, "
    "next to mat for whole blocks (lower is better).",
    "ee": "Precision@1 against the mean number of layers processed, for early exit by confidence and for a fixed "
    "exit layer, with the 95% target; a curve further up and to the left saves more computation.",
    "labels": "Precision@1 of mat and id per layer, for each word class of the predicted token.",
    "norms": "The norm of the hidden state by position and layer: the first position's norm grows far above the "
    "others' (massive activations).",
    "r2_first": "r² of casting each layer to the last, with and without the samples at the first position.",
}
ALT = {
    "r2": "Two heatmaps of r² over layer pairs, mat and id",
    "pk": "Line plot of Precision@k per layer, mat and id",
    "surp": "Line plot of surprisal per layer with bands, mat and id",
    "parts_pk": "Line plot of Precision@{k} per start layer for the sub-module maps and mat",
    "parts_surp": "Line plot of surprisal per start layer for the sub-module maps and mat",
    "ee": "Precision@1 against layers processed, early exit and fixed exit, mat and id",
    "labels": "Small multiples of Precision@1 per layer, one panel per word class",
    "norms": "Heatmap of hidden-state norms by position and layer",
    "r2_first": "Line plot of r² to the last layer with and without the first position",
}


def paper_ref(fig: str) -> str:
    """Which figure of the paper a figure id reproduces, in words."""
    if fig.startswith(figure_registry.REAL_PREFIX):
        return paper_ref(fig[len(figure_registry.REAL_PREFIX) :]) + ", on the real model"
    if fig.startswith("fig"):
        return f"paper Figure {fig[3:]}"
    return "beyond the paper"


def caption(figs, data: dict, params: dict, **options) -> registry.Caption:
    """The caption of figures ``figs`` (one id, or several of one kind drawn as small multiples; ``data``,
    ``params``: the first one's): the paper figure each reproduces, what to see (:data:`SEE`, by kind), the alt text
    (:data:`ALT`) and the model; the same whatever the drawing's ``options``."""
    figs = [figs] if isinstance(figs, str) else list(figs)
    kind = figures.FIGURES[figs[0]][0]
    one = len(figs) == 1
    k = (data.get("ks") or [1])[0]  # the k a Precision@k figure shows (section 6's Figs. 34-35: 5 and 10)
    return registry.Caption(
        "; ".join(paper_ref(f) for f in figs),
        SEE.get(kind, "").format(k=k),
        f"{ALT.get(kind, 'Figure').format(k=k)}: "
        + (title(data, params) if one else f"{len(figs)} panels, " + ", ".join(figs)),
        title(data, params) if one else "one panel per model",
    )
