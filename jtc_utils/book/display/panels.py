"""A drawn figure cut into the images a page shows (:func:`panels`): one PNG per panel of a grid (or the figure
whole), each raised to a readable text size by :mod:`jtc_utils.book.display.figure_layout`, quantised, with the
width it is shown at.
"""

from __future__ import annotations

from typing import NamedTuple

from jtc_utils.book.display import figure_layout


PNG_COLOURS = 256
PANEL_DRAW_PX = 520  # a panel's image is drawn at least this wide, so that enlarging it (a click) shows more detail
WHOLE_DPI = 100  # a figure shown whole is saved at this resolution (its natural width: 100 px an inch)


class Panel(NamedTuple):
    """One image of a figure as the page shows it: the PNG, its width in inches, its title, the height of its
    smallest tick label's digits in the image's own pixels (``text_px``: the browser test divides by the image's
    natural width and multiplies by its shown width to get the height as drawn) and the width it is shown at on a
    1280 px window (``shown_px``)."""

    png: bytes
    width: float
    title: str
    text_px: float
    shown_px: float


def small_png(data: bytes) -> bytes:
    """A PNG re-encoded with a palette of :data:`PNG_COLOURS` colours (a plot has few; the antialiased edges lose
    nothing visible): about a third of the bytes, which keeps the pages within their size budget."""
    import io

    from PIL import Image

    out = io.BytesIO()
    image = Image.open(io.BytesIO(data)).convert("RGB")
    image.quantize(colors=PNG_COLOURS, method=Image.Quantize.FASTOCTREE).save(out, format="png", optimize=True)
    return out.getvalue()


def _stand_alone(grid) -> None:
    """Give every panel of a grid what the grid shared with its neighbours: tick values on both axes (shared axes
    hide them on inner panels), the axis labels of its row and column, and, where it has no title, its column's
    title (a grid that titles only its top row names the model once per column)."""
    titled = {}
    for ax in grid:
        ss = ax.get_subplotspec()
        if ax.get_title():
            titled.setdefault(ss.colspan.start, ax.get_title())
    for ax in grid:
        ss = ax.get_subplotspec()
        ax.tick_params(axis="both", which="both", labelleft=True, labelbottom=True)
        for t in ax.get_xticklabels() + ax.get_yticklabels():
            t.set_visible(True)
        same_row = [o for o in grid if o.get_subplotspec().rowspan == ss.rowspan and o.get_ylabel()]
        same_col = [o for o in grid if o.get_subplotspec().colspan == ss.colspan and o.get_xlabel()]
        if not ax.get_ylabel() and same_row and ax.get_shared_y_axes().joined(ax, same_row[0]):
            ax.set_ylabel(same_row[0].get_ylabel())
        if not ax.get_xlabel() and same_col and ax.get_shared_x_axes().joined(ax, same_col[0]):
            ax.set_xlabel(same_col[0].get_xlabel())
        if not ax.get_title() and not ax.get_title("left") and ss.colspan.start in titled:
            ax.set_title(titled[ss.colspan.start])


def panel_scale(widths: list[float]) -> float:
    """The one scale (CSS pixels an inch) at which a grid's panels of ``widths`` inches are shown on a 1280 px
    window: as many a row as fit at :data:`figure_layout.PANEL_MIN_PX` (two), the widest row filling the column, and
    never above the panels' own resolution (100 px an inch), so that every panel of a figure is drawn at one scale,
    a last panel alone on its row too."""
    column = figure_layout.SHOWN_PX["desktop"]
    per_row = max(1, min(len(widths), column // figure_layout.PANEL_MIN_PX))
    widest = max(sum(widths[i : i + per_row]) for i in range(0, len(widths), per_row))
    return min(float(WHOLE_DPI), column / widest)


def _whole(fig, grid) -> bool:
    """Whether ``fig`` is shown as one image: one panel, one column, or a figure-level legend or text."""
    suptitle = fig.get_suptitle()
    return (
        len(grid) < 2
        or max(_top(ax).get_gridspec().ncols for ax in grid) < 2
        or bool(fig.legends)
        or any(t.get_visible() and t.get_text() not in ("", suptitle) for t in fig.texts)
    )


def panels(fig) -> tuple[list[Panel], str, bool]:
    """A figure cut into its panels, so that the page can wrap a grid to fewer columns on a narrow screen:
    ``([Panel, ...], suptitle, enlarge)``. A panel is one axes of the figure's grid, with the axes that are not on
    the grid (a colour bar) joined to the panel beside them, drawn alone (every other axes hidden) so that no
    neighbour's labels reach into it and none of its own is cut, with the tick values, axis labels and column title
    its grid shared (:func:`_stand_alone`), as tall as the other panels of its row of the grid, at a resolution worth
    enlarging (:data:`PANEL_DRAW_PX`); the suptitle is returned as text (the page shows it above the panels). A
    figure of one column, or one with a figure-level legend or text, comes back whole (one image, empty suptitle).
    Before it is cut, the figure is tidied (:func:`figure_layout.tidy`) and its text raised to be readable at the
    size the page shows each piece (:func:`figure_layout.fit_text`); ``enlarge`` says that some piece is still too
    small on a phone (its caption says to enlarge it there)."""
    import io
    import math

    from matplotlib.transforms import Bbox

    def png(bbox=None, dpi=WHOLE_DPI) -> bytes:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches=bbox or "tight", metadata={"Software": None})
        return small_png(buf.getvalue())

    grid = grid_axes(fig)
    suptitle = fig.get_suptitle()
    if _whole(fig, grid):
        import matplotlib

        pad = 2 * matplotlib.rcParams["savefig.pad_inches"]  # what bbox_inches="tight" adds around the figure

        def whole():
            fig.canvas.draw()
            width = fig.get_tightbbox(fig.canvas.get_renderer()).width + pad
            return [
                (
                    width,
                    figure_layout.tick_height(fig.axes),
                    *(min(px, width * WHOLE_DPI) for px in figure_layout.SHOWN_PX.values()),
                )
            ]

        enlarge = figure_layout.fit_text(fig, whole)
        ((width, pt, shown, _),) = whole()
        return [Panel(png(), width, "", pt * WHOLE_DPI / 72, shown)], "", enlarge
    if suptitle:
        fig.suptitle("")
    _stand_alone(grid)
    extra = [ax for ax in fig.axes if ax.get_visible() and ax not in grid]
    inches = fig.dpi_scale_trans.inverted()

    def members_and_boxes():
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        members = {id(ax): [ax] for ax in grid}
        boxes = [g.get_tightbbox(renderer) for g in grid]
        for ax in extra:  # a colour bar joins the panel whose grid cell it shares, else the nearest panel on its left
            box = ax.get_tightbbox(renderer)
            same = [i for i, g in enumerate(grid) if ax.get_subplotspec() is not None and _top(g) == _top(ax)]
            left = [i for i in range(len(grid)) if boxes[i].x0 <= box.x0] or list(range(len(grid)))
            near = (
                same[0]
                if same
                else min(
                    left, key=lambda i: (max(0, box.x0 - boxes[i].x1), abs(boxes[i].y0 + boxes[i].y1 - box.y0 - box.y1))
                )
            )
            members[id(grid[near])].append(ax)
        # a panel's box is its axes' own extents, the same whichever others are shown: measured on the one draw
        # above; the panels of one row of the grid share their top and bottom, so that side by side they are as tall
        boxes = [
            Bbox.union([m.get_tightbbox(renderer) for m in members[id(ax)]]).transformed(inches).padded(0.04)
            for ax in grid
        ]
        for i, ax in enumerate(grid):
            row = [b for g, b in zip(grid, boxes) if g.get_subplotspec().rowspan == ax.get_subplotspec().rowspan]
            boxes[i] = Bbox.from_extents(boxes[i].x0, min(b.y0 for b in row), boxes[i].x1, max(b.y1 for b in row))
        return members, boxes

    def measure():
        members, boxes = members_and_boxes()
        scale = panel_scale([b.width for b in boxes])
        phone = figure_layout.SHOWN_PX["phone"]
        return [
            (b.width, figure_layout.tick_height(members[id(ax)]), b.width * scale, phone) for ax, b in zip(grid, boxes)
        ]

    enlarge = figure_layout.fit_text(fig, measure)
    members, boxes = members_and_boxes()
    scale = panel_scale([b.width for b in boxes])
    shown = [ax for ax in fig.axes if ax.get_visible()]
    # one resolution for the whole grid, from its narrowest panel: the panels keep one scale when enlarged side by side
    dpi = max(WHOLE_DPI, math.ceil(PANEL_DRAW_PX / min(b.width for b in boxes)))
    out = []
    for ax, box in zip(grid, boxes):
        for other in shown:
            other.set_visible(other in members[id(ax)])
        out.append(
            Panel(
                png(box, dpi),
                box.width,
                " ".join((ax.get_title() or ax.get_title("left")).split()),
                figure_layout.tick_height(members[id(ax)]) * dpi / 72,
                box.width * scale,
            )
        )
    for other in shown:
        other.set_visible(True)
    return out, suptitle, enlarge


def _top(ax):
    return ax.get_subplotspec().get_topmost_subplotspec()


def grid_axes(fig) -> list:
    """The visible axes on the figure's grid, colour bars left out (matplotlib labels those ``<colorbar>``)."""
    return [
        ax
        for ax in fig.axes
        if ax.get_visible() and ax.get_subplotspec() is not None and ax.get_label() != "<colorbar>"
    ]
