"""What every figure of the book gets before it is shown (through :func:`jtc_utils.book.display.panels.panels`): its
text raised until it reads at the size the page shows it (:func:`fit_text`, for the widths of :data:`SHOWN_PX`), legends
moved off the data and reference lines they would hide, whole-number ticks on axes whose quantity is a layer and
at least two labelled ticks on a log axis (:func:`tidy`). Each step reads the artists' extents on the drawn figure,
so it sees what the reader sees; the tests call the same checks (:func:`legend_overlaps`,
:func:`tick_labels_overlap`, :func:`tick_height`)."""

from __future__ import annotations

import functools
import re

import numpy as np

# where a legend may go inside its axes, tried in this order after matplotlib's own choice
INSIDE = (
    "upper right",
    "upper left",
    "lower left",
    "lower right",
    "center right",
    "center left",
    "upper center",
    "lower center",
    "center",
)
SEGMENT_POINTS = 24  # points checked along each segment of a line, so that a line crossing a legend is seen


def _data_points(ax) -> np.ndarray:
    """The display coordinates of what is drawn on ``ax``: the vertices of every visible line (reference lines
    included), with points along each segment, and the centres of every visible scatter marker."""
    pts = []
    for line in ax.get_lines():
        # reference lines (axhline, axvline: drawn in axes coordinates along one axis) count too: a legend over a
        # target line hides it
        if not line.get_visible():
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


def is_heatmap(ax) -> bool:
    """Whether ``ax`` shows a heatmap or an image (its ticks label cells, not values)."""
    return any(type(c).__name__ == "QuadMesh" for c in ax.collections) or bool(ax.images)


# an axis label whose quantity is a layer ("layer ℓ", "source layer ℓ", "mean exit layer", "layers processed", "pair
# l -> l+1"), not one that only names a layer ("r² to the last layer", "depth of the pair's upper layer (l+1)/L")
LAYER_AXIS = re.compile(r"^(?:(?:source|target|start|exit|mean exit)\s+)?layers?\b|^pair\b")


def integer_layer_ticks(fig) -> None:
    """Whole-number ticks on every numeric axis whose quantity is a layer (:data:`LAYER_AXIS`: a layer has no 2.5);
    heatmaps keep their labelled cells."""
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        if is_heatmap(ax):
            continue
        for axis, label in ((ax.xaxis, ax.get_xlabel()), (ax.yaxis, ax.get_ylabel())):
            if LAYER_AXIS.match(label.strip().lower()) and axis.get_scale() == "linear":
                ticks = axis.get_ticklocs()
                if len(ticks) and np.any(np.abs(ticks - np.round(ticks)) > 1e-9):
                    axis.set_major_locator(MaxNLocator(integer=True))


def log_ticks(fig) -> None:
    """On every log-scale (or symmetric log) axis that shows fewer than two labelled ticks within its limits (a span
    under a decade
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


def enough_ticks(fig) -> None:
    """At least three labelled ticks on every linear axis that places its own (matplotlib's automatic locators
    settle for two on a short axis with large labels: ticks at 5 and 10 only, on an axis from 2 to 14)."""
    from matplotlib.ticker import MaxNLocator

    for ax in fig.axes:
        if is_heatmap(ax) or ax.get_label() == "<colorbar>":
            continue
        for axis in (ax.xaxis, ax.yaxis):
            locator = axis.get_major_locator()
            if axis.get_scale() == "linear" and isinstance(locator, MaxNLocator):
                locator.set_params(min_n_ticks=3)


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
    """Everything this module does to a figure's ticks and legends before it is shown (two draws: :func:`log_ticks`
    lays the figure out for the tick checks, :func:`place_legends` after the ticks changed; the tick rules touch
    different axes, and :func:`enough_ticks` the locators :func:`integer_layer_ticks` sets)."""
    log_ticks(fig)
    integer_layer_ticks(fig)
    enough_ticks(fig)
    place_legends(fig)


# The width a figure's output gets in the rendered book (measured in Chromium: the theme's output box at a 1280 px and
# at a 390 px wide window). A figure's text is sized for these (:func:`fit_text`); the browser test measures it
# as drawn at both widths, so a change of theme that moves them is caught there.
SHOWN_PX = {"desktop": 672, "phone": 342}
LEAST_TEXT_PX = 8.0  # no tick label's digits are drawn less tall than this on the page (CSS px)
AIM_TEXT_PX = 8.5  # how tall a figure's smallest tick digits are raised to at 1280 px (a margin above the least)
MOST_TEXT_PX = 10.5  # the text is raised for a phone only while its smallest tick digits stay below this at 1280 px
PANEL_MIN_PX = 260  # a grid's typical panel is never shown narrower than this: two panels a row at 1280 px
DIGITS = "0123456789"


@functools.lru_cache(maxsize=256)
def _digits_height(prop, size: float) -> float:
    from matplotlib.textpath import TextPath

    return TextPath((0, 0), DIGITS, size=size, prop=prop).get_extents().height


def digit_height(label) -> float:
    """How tall (in points) the digits of a text's font are drawn at its size: what a reader measures as a tick
    label's height (about three quarters of the font size in DejaVu Sans)."""
    return _digits_height(label.get_fontproperties().copy(), float(label.get_fontsize()))


def tick_height(axes) -> float:
    """The height in points of the digits of the smallest visible, non-empty tick label of ``axes`` (a list: a
    figure's or one panel's axes, colour bars included); inf where there is none."""
    sizes = [
        digit_height(t)
        for ax in axes
        if ax.get_visible() and ax.axison
        for axis in (ax.xaxis, ax.yaxis)
        if axis.get_visible()
        for t in axis.get_ticklabels(which="both")
        if t.get_visible() and t.get_text().strip()
    ]
    return min(sizes, default=float("inf"))


def drawn_px(pt: float, width_in: float, shown_px: float) -> float:
    """How tall (in CSS pixels) a height of ``pt`` points is drawn in an image of ``width_in`` inches shown
    ``shown_px`` wide: the resolution it was saved at cancels out."""
    return pt * shown_px / (72 * width_in)


def _texts(fig) -> list:
    """Every text of ``fig`` whose size :func:`scale_text` sets directly (tick labels are set through their axis,
    which keeps the size for the ticks it makes later)."""
    out = list(fig.texts)
    for ax in fig.axes:
        out += [
            ax.title,
            ax._left_title,
            ax._right_title,
            ax.xaxis.label,
            ax.yaxis.label,
            ax.xaxis.offsetText,
            ax.yaxis.offsetText,
            *ax.texts,
        ]
        for legend in [ax.get_legend(), *ax.get_children()]:
            if type(legend).__name__ == "Legend":
                out += [*legend.get_texts(), legend.get_title()]
    for legend in fig.legends:
        out += [*legend.get_texts(), legend.get_title()]
    return list({id(t): t for t in out}.values())


def tick_fontsize(fig) -> float:
    """The font size (points) of the smallest visible, non-empty tick label of ``fig``; inf where there is none."""
    return min(
        (
            float(t.get_fontsize())
            for ax in fig.axes
            if ax.get_visible() and ax.axison
            for axis in (ax.xaxis, ax.yaxis)
            if axis.get_visible()
            for t in axis.get_ticklabels(which="both")
            if t.get_visible() and t.get_text().strip()
        ),
        default=float("inf"),
    )


def small_texts(fig) -> list:
    """The legend entries, titles, labels and annotations of ``fig`` drawn smaller than its smallest tick label (the
    numbers written in a heatmap's cells excepted: they are sized to their cells). :func:`fit_text` sizes a figure by
    its tick labels, so that a text below them would be read below the size the page promises."""
    least = tick_fontsize(fig)
    heatmaps = {id(ax) for ax in fig.axes if is_heatmap(ax)}
    cells = {id(t) for ax in fig.axes if id(ax) in heatmaps for t in ax.texts}
    return [
        t
        for t in _texts(fig)
        if t.get_visible() and t.get_text().strip() and id(t) not in cells and t.get_fontsize() < least - 1e-6
    ]


def raise_small_texts(fig) -> None:
    """Raise every text of :func:`small_texts` to the size of the figure's smallest tick label."""
    least = tick_fontsize(fig)
    for t in small_texts(fig):
        t.set_fontsize(least)


def scale_text(fig, factor: float) -> None:
    """Make every text of ``fig`` ``factor`` times larger: titles, axis labels, legends, annotations and the tick
    labels of every axis (major and minor)."""
    for t in _texts(fig):
        t.set_fontsize(t.get_fontsize() * factor)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for which, ticks in (("major", axis.get_major_ticks()), ("minor", axis.get_minor_ticks())):
                if ticks:
                    axis.set_tick_params(which=which, labelsize=ticks[0].label1.get_fontsize() * factor)


def thin_fixed_ticks(fig) -> None:
    """On every axis whose ticks were placed by hand (a heatmap's cells, categories) and whose labels now overlap,
    keep every k-th tick, the smallest k at which none overlaps. Axes with automatic ticks choose fewer by
    themselves for larger labels."""
    from matplotlib.ticker import FixedLocator

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        for axis, labels in ((ax.xaxis, ax.get_xticklabels), (ax.yaxis, ax.get_yticklabels)):
            if not isinstance(axis.get_major_locator(), FixedLocator):
                continue
            locs, texts = list(axis.get_ticklocs()), [t.get_text() for t in labels()]
            step = 1
            while _overlapping(labels(), renderer) and step < len(locs):
                step += 1
                axis.set_ticks(locs[::step], texts[::step])
                fig.canvas.draw()


def _overlapping(labels, renderer) -> bool:
    shown = [t for t in labels if t.get_visible() and t.get_text()]
    boxes = [t.get_window_extent(renderer) for t in shown]
    return any(boxes[i].overlaps(boxes[j]) for i in range(len(boxes)) for j in range(i + 1, len(boxes)))


def wrap_to_axes(fig) -> None:
    """Break every title and x label wider than its axes into lines as wide as the axes (a grid panel's long title
    made the panel wider than its plot, so that raising its text shrank the plot on the page)."""
    import textwrap

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        room = ax.get_window_extent(renderer).width
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label):
            text = " ".join(t.get_text().split())
            width = t.get_window_extent(renderer).width if text else 0
            if width > room * 1.02:
                t.set_text("\n".join(textwrap.wrap(text, max(8, int(len(text) * room / width)))))


def relayout(fig) -> None:
    """Lay ``fig`` out again after its text grew: its own layout engine where it has one, else matplotlib's tight
    layout (a figure whose axes it cannot arrange, such as one with a colour bar beside a heatmap, keeps its
    layout: its outer labels are kept by the tight bounding box it is saved with)."""
    import warnings

    if fig.get_layout_engine() is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fig.tight_layout()
    fig.canvas.draw()


def fit_text(fig, measure) -> bool:
    """Raise the text of ``fig`` (legend entries, labels and notes smaller than its tick labels first raised to them,
    :func:`raise_small_texts`; tidied, :func:`tidy`, its long titles wrapped to their axes,
    :func:`wrap_to_axes`) until every piece the page shows it as has the digits of its smallest tick label drawn at
    least :data:`AIM_TEXT_PX` tall at 1280 px; then further, for a phone, while they stay below
    :data:`MOST_TEXT_PX` at 1280 px; the figure is wrapped and tidied again after each raise. ``measure()`` gives,
    for the figure as laid out now, one ``(width in inches, tick digits' height in points, shown px at 1280, shown
    px at 390)`` per piece (the whole figure, or each panel of a grid). Returns whether some piece is still drawn
    below :data:`LEAST_TEXT_PX` on a phone (its caption then says to enlarge it: enlarged, an image is shown at its
    own size, never smaller than at 1280 px)."""
    raise_small_texts(fig)
    wrap_to_axes(fig)
    tidy(fig)
    for target, device in ((AIM_TEXT_PX, "desktop"), (LEAST_TEXT_PX + 0.5, "phone")):
        for _ in range(3):  # the pieces grow with their text: measure again
            pieces = measure()
            ticked = [(w, pt, dict(zip(("desktop", "phone"), px))) for w, pt, *px in pieces if pt < float("inf")]
            need = max((target / drawn_px(pt, w, px[device]) for w, pt, px in ticked), default=1.0)
            if device == "phone":  # only as far as the desktop's tick digits stay below MOST_TEXT_PX
                need = min([need, *(MOST_TEXT_PX / drawn_px(pt, w, px["desktop"]) for w, pt, px in ticked)])
            if need <= 1.001:
                break
            scale_text(fig, need)
            wrap_to_axes(fig)
            thin_fixed_ticks(fig)
            relayout(fig)
            tidy(fig)  # larger legends may need another place (one beside the axes widens the figure)
    return any(drawn_px(pt, w, p) < LEAST_TEXT_PX for w, pt, _, p in measure() if pt < float("inf"))
