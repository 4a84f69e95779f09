"""The FFN chapter's plots, each from the numbers saved in ``book/data`` (or just computed)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import numpy as np


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
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    per_layer({"values": d["values"], "Gaussian random": d["gaussian"], "whole updates (no stopwords)": d["updates"]},
              f"{model}: concept coverage per layer", "share of top-30 in concepts", ax=axes[0])
    groups = {g: [row[g] for row in d["groups"]["values"]] for g in ("semantic", "syntactic", "names")}
    per_layer(groups, "values' concepts by kind (Geva Fig. 2)", "share of top-30", ax=axes[1])
    return fig


def exit_rules(d: dict, model: str, ax=None):
    """Every exit rule as a point on section 5's axes, the JTC confidence-rule curves behind them."""
    ax = ax or plt.subplots(figsize=(6.4, 4))[1]
    L = d["n_layers"]
    for m, c in d["curves"].items():
        xs = np.asarray(c["x"])
        order = np.argsort(xs, kind="stable")
        ax.plot(xs[order], np.asarray(c["y"])[order], marker=".", label=f"JTC rule ({m})")
    marks = {"sub-update rule": "*", "saturation oracle": "P", "classifier (r)": "s", "classifier (o)": "^",
             "classifier (r+o)": "D"}
    for name, mk in marks.items():
        if name not in d["rules"]:  # the real model fits one classifier
            continue
        r = d["rules"][name]
        ax.scatter([L - r["saved"]], [r["accuracy"]], marker=mk, s=90 if mk == "*" else 45, zorder=3, label=name)
    ax.set_xlabel("mean exit layer")
    ax.set_ylabel("Precision@1 (agreement with the final top-1)")
    ax.set_title(f"{model}: every exit rule on one test set")
    ax.legend(fontsize=8)
    return ax
