"""Paper-style figures. Each function takes the numbers (as computed by :mod:`jtc_utils.experiment` or read back
from ``book/data``) and returns a matplotlib Figure; none of them computes anything."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns


def r2_heatmaps(r2_mat: np.ndarray, r2_id: np.ndarray, title: str | None = None, figsize=(15, 8.27)):
    """The paper's r² heatmap pair (spec 3.3): ``mat`` left, ``id`` right; rows = source layer l (0 at the top),
    columns = target l'; colormap seismic_r on [0, 1] (blue = good, white = 0.5, red = 0 or below); one shared
    colour bar whose lowest tick reads "≤0.0"."""
    L = r2_mat.shape[0] - 1
    step = 4 if L >= 40 else 2
    with sns.plotting_context("notebook", font_scale=2), sns.axes_style("darkgrid"):
        fig, axes = plt.subplots(1, 2, figsize=figsize)
        cbar_ax = fig.add_axes([.91, .1, .03, .8])
        for k, (ax, mat, name) in enumerate(zip(axes, (r2_mat, r2_id), ("mat", "id"))):
            sns.heatmap(mat, ax=ax, cmap="seismic_r", vmin=0, vmax=1, cbar=k == 0, cbar_ax=cbar_ax,
                        xticklabels=step, yticklabels=step, square=False)
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
