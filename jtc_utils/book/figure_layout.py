"""What every figure of the book gets before it is shown (:func:`tidy`, called by
:func:`jtc_utils.book.chapter.show`): legends moved off the data they would hide, whole-number ticks on layer axes
and at least two labelled ticks on a log axis. Each check reads the artists' extents on the drawn figure, so it sees what the reader sees; the tests call the
same checks (:func:`legend_overlaps`, :func:`tick_labels_overlap`)."""

from __future__ import annotations

import numpy as np

# where a legend may go inside its axes, tried in this order after matplotlib's own choice
INSIDE = ("upper right", "upper left", "lower left", "lower right", "center right", "center left", "upper center",
          "lower center", "center")
SEGMENT_POINTS = 24  # points checked along each segment of a line, so that a line crossing a legend is seen


def _data_points(ax) -> np.ndarray:
    """The display coordinates of the data drawn on ``ax``: the vertices of every visible line, with points along
    each segment, and the centres of every visible scatter marker."""
    pts = []
    for line in ax.get_lines():
        # reference lines (axhline, axvline: drawn in axes coordinates along one axis) are not data
        if not line.get_visible() or not line.get_transform().contains_branch(ax.transData):
            continue
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        xy = xy[np.isfinite(xy).all(1)]
        if len(xy) == 0:
            continue
        if len(xy) > 1 and line.get_linestyle() not in ("", "None", " "):
            t = np.linspace(0, 1, SEGMENT_POINTS)[:, None, None]
            xy = (xy[:-1][None] * (1 - t) + xy[1:][None] * t).reshape(-1, 2)
        pts.append(line.get_transform().transform(xy))
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), float) if coll.get_visible() else np.empty((0, 2))
        if len(offsets) and type(coll).__name__ == "PathCollection":  # scatter markers, not bands or meshes
            pts.append(coll.get_offset_transform().transform(offsets))
    return np.concatenate(pts) if pts else np.empty((0, 2))


def _inside(points: np.ndarray, box) -> int:
    if not len(points):
        return 0
    x, y = points[:, 0], points[:, 1]
    return int(((x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)).sum())


def legend_overlaps(ax, renderer=None) -> int:
    """How many drawn data points (see :func:`_data_points`) the legend of ``ax`` covers (0 without a legend)."""
    legend = ax.get_legend()
    if legend is None or not legend.get_visible():
        return 0
    fig = ax.figure
    if renderer is None:  # called alone: lay the figure out first (place_legends draws once for all its axes)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
    return _inside(_data_points(ax), legend.get_window_extent(renderer))


def place_legends(fig) -> None:
    """Move every legend of ``fig`` that covers drawn data to a place inside its axes where it covers none, trying
    :data:`INSIDE` in turn; where every place inside covers some, beside the axes on the right. The figure is drawn
    once; a legend's box follows its place without another draw."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not legend.get_visible() or not legend_overlaps(ax, renderer):
            continue
        for loc in INSIDE:
            legend.set_loc(loc)
            if not legend_overlaps(ax, renderer):
                break
        else:
            legend.set_bbox_to_anchor((1.02, 1.0), transform=ax.transAxes)
            legend.set_loc("upper left")


def _is_heatmap(ax) -> bool:
    return any(type(c).__name__ == "QuadMesh" for c in ax.collections) or bool(ax.images)


def integer_layer_ticks(fig) -> None:
    """Whole-number ticks on every numeric axis labelled with layers (a layer has no 2.5); heatmaps keep their
    labelled cells."""
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        if _is_heatmap(ax):
            continue
        for axis, label in ((ax.xaxis, ax.get_xlabel()), (ax.yaxis, ax.get_ylabel())):
            if "layer" in label.lower() and axis.get_scale() == "linear":
                ticks = axis.get_ticklocs()
                if len(ticks) and np.any(np.abs(ticks - np.round(ticks)) > 1e-9):
                    axis.set_major_locator(MaxNLocator(integer=True))


def log_ticks(fig) -> None:
    """On every log-scale (or symmetric log) axis that shows fewer than two labelled ticks within its limits (a span under a decade
    shows one, "10¹"), label 1, 2 and 5 of each decade instead."""
    from matplotlib.ticker import FuncFormatter, LogLocator, SymmetricalLogLocator

    plain = FuncFormatter(lambda v, _: f"{v:g}")  # 2, 5, 10, 20: plainer than 2 x 10^0 within a decade or two

    fig.canvas.draw()
    for ax in fig.axes:
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() not in ("log", "symlog"):
                continue
            lo, hi = sorted(lim)
            shown = [t for t in axis.get_ticklocs() if lo <= t <= hi]
            if len(shown) >= 2:
                continue
            if axis.get_scale() == "log":
                axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            else:
                linthresh = axis.get_transform().linthresh
                axis.set_major_locator(SymmetricalLogLocator(base=10, linthresh=linthresh, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(plain)


def tick_labels_overlap(ax, renderer=None) -> list[tuple[str, str]]:
    """The pairs of visible tick labels of ``ax`` (on either axis) whose drawn boxes overlap."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = renderer or fig.canvas.get_renderer()
    found = []
    for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
        shown = [t for t in labels if t.get_visible() and t.get_text()]
        boxes = [t.get_window_extent(renderer) for t in shown]
        for i in range(len(shown)):
            for j in range(i + 1, len(shown)):
                if boxes[i].overlaps(boxes[j]):
                    found.append((shown[i].get_text(), shown[j].get_text()))
    return found


def tidy(fig) -> None:
    """Everything this module does to a figure before it is shown (two draws: :func:`log_ticks` lays the figure out
    for the tick checks, :func:`place_legends` after the ticks changed; the two tick rules touch different axes)."""
    log_ticks(fig)
    integer_layer_ticks(fig)
    place_legends(fig)
