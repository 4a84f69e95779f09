"""What a chapter cell does for one figure of any paper, by its id: compute its numbers and save them to
``book/data/<figure>.json`` (:func:`jtc_utils.evidence.figure_registry.compute_and_save`, through the function its paper
registered), draw it with the function its paper registered and show it with its caption (:func:`figure`). One
call per figure, the same for every paper, so that every notebook draws its figures the same way."""

from __future__ import annotations

from typing import NamedTuple

from jtc_utils.book.display import claim_tables, figure_layout
from jtc_utils.evidence import claims, figdata, figure_registry
from jtc_utils.evidence.registry import Registered
from jtc_utils.evidence.registry import get as registered
from jtc_utils.core.analysis import experiment
from jtc_utils.core.data import profiles
from jtc_utils.core.data.profiles import Profile
from jtc_utils.core.data.setting import Setting
from jtc_utils.core.infra import device as devices

# Every parameter a chapter can take, as its notebook's parameters cell writes it: one line each, in this order. A
# chapter's parameters cell is the lines of the parameters it takes, and it hands every one of them to its Chapter.
PARAMETERS = {
    "profile": 'profile = "tiny"  # "tiny" (the embedded world, offline) or "paper" (the paper\'s models and data)',
    "device": 'device = "auto"  # where the heavy work runs: "auto" (a GPU when there is one), "cpu" or "cuda"',
    "seed": "seed = 0  # the seed of the chapter's random draws (the sentences' positions first)",
    "n_train": "n_train = None  # training sentences per domain (None: the paper's 9,000)",
    "n_val": "n_val = None  # validation sentences (None: the paper's 3,000 / 1,000)",
    "real_n_train": "real_n_train = None  # the real model's training sentences (None: 9,000)",
    "real_n_val": "real_n_val = None  # the real model's validation sentences "
    "(None: 3,000 on Wikipedia, 1,000 on BBC News)",
}


class FigureNumbers(dict):
    """The numbers behind a figure (a plain dict, as :func:`jtc_utils.evidence.figure_registry.result` gives
    them), with the numbers and parameters it was drawn from (``numbers``, ``params``). A cell that ends with one
    shows nothing more: the figure's caption links to its saved numbers."""

    def __init__(self, fig: str, numbers: dict, params: dict, registered: Registered | None = None):
        super().__init__(figure_registry.result(fig, numbers, params, registered))
        self.fig, self.numbers, self.params = fig, numbers, params

    def __repr__(self) -> str:
        return f"numbers behind {self.fig}: book/data/{self.fig}.json"

    def _ipython_display_(self) -> None:
        pass


class Numbering:
    """The figures of the page so far (each page runs in a fresh kernel): :meth:`next` numbers the next one and says
    whether its first figure id is shown for the first time on the page (where its anchor goes)."""

    def __init__(self):
        self.n, self._ids = 0, set()

    def next(self, figs: list) -> tuple[int, bool]:
        self.n += 1
        first = bool(figs) and figs[0] not in self._ids
        self._ids.update(figs[:1])
        return self.n, first


PAGE = Numbering()  # this page's numbering


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


ENLARGE_HINT = "On a narrow screen, tap the figure to read it at full size."


def show(figs, ref: str, see: str, alt: str, what: str = "") -> None:
    """Show the current matplotlib figure as a numbered figure: an image with ``alt`` text (one per panel of a grid,
    see :func:`panels`: side by side at one scale where the column is wide enough, two a row at 1280 px, one a row
    on a phone), with text raised to be readable at that size, and a caption naming the paper figure it reproduces
    (``ref``), what it shows (``what``), what to see in it (``see``), on a phone whether to enlarge it to read it, and
    links to the numbers behind it (``book/data/<fig>.json`` for each id of ``figs``, shipped with the HTML; none
    when ``figs`` is empty, for figures whose numbers live elsewhere). Each image carries the height of its
    smallest tick label's digits (``data-text-px``, in its own pixels; ``none`` without one), which the browser test
    measures as drawn.
    :func:`captioned` calls it with a registered figure's caption; a page calls it directly only for an image whose
    numbers are not a figure of the book (the zoo's training curves, read from the model cards)."""
    import base64
    import html

    import matplotlib.pyplot as plt
    from IPython.display import HTML, display

    figs = [figs] if isinstance(figs, str) else list(figs)
    fig = plt.gcf()
    parts, suptitle, enlarge = panels(fig)
    plt.close(fig)
    number, first = PAGE.next(figs)
    links = ", ".join(f'<a href="data/{f}.json" download>{f}.json</a>' for f in figs)
    links = f" Numbers behind the figure: {links}." if figs else ""
    what = f"{html.escape(what)}. " if what else ""
    # an id once per page: a figure shown twice (drawn, then its table) is linked to where it first appears
    anchor = f' id="figure-{figs[0]}"' if first else ""

    def img(part: Panel, label: str, style: str = "") -> str:
        return (
            f'<img src="data:image/png;base64,{base64.b64encode(part.png).decode()}"{style} '
            f'data-text-px="{"none" if part.text_px == float("inf") else f"{part.text_px:.2f}"}" '
            f'alt="{html.escape(label, quote=True)}">'
        )

    if len(parts) == 1:
        body = img(parts[0], alt)
    else:
        imgs = [
            img(
                part,
                f"{alt}; panel {i} of {len(parts)}" + (f": {part.title}" if part.title else ""),
                f' style="width: {part.shown_px:.0f}px"',
            )
            for i, part in enumerate(parts, 1)
        ]
        head = f'<div class="jtc-suptitle">{html.escape(suptitle)}</div>' if suptitle else ""
        body = f'{head}<div class="jtc-panels">{"".join(imgs)}</div>'
    hint = f' <span class="jtc-enlarge-hint">{ENLARGE_HINT}</span>' if enlarge else ""
    display(
        HTML(
            f'<figure class="jtc-figure"{anchor}>{body}<figcaption><b>Figure {number}</b> '
            f'({html.escape(ref)}): {what}{html.escape(see)}{links}{hint}</figcaption></figure>'
        )
    )


def _top(ax):
    return ax.get_subplotspec().get_topmost_subplotspec()


def grid_axes(fig) -> list:
    """The visible axes on the figure's grid, colour bars left out (matplotlib labels those ``<colorbar>``)."""
    return [
        ax
        for ax in fig.axes
        if ax.get_visible() and ax.get_subplotspec() is not None and ax.get_label() != "<colorbar>"
    ]


def captioned(figs, data: dict, params: dict, **options) -> None:
    """:func:`show` for figures drawn by their paper's registered ``draw``: the caption its paper registered
    (:class:`jtc_utils.evidence.registry.Caption`; ``options``: the drawing's); ``figs`` is one id or a list
    of ids drawn as small multiples (``data``, ``params``: the first one's)."""
    figs = [figs] if isinstance(figs, str) else list(figs)
    _captioned(figure_registry.entry(figs[0]), figs, data, params, **options)


def _captioned(entry: Registered, figs: list, data: dict, params: dict, **options) -> None:
    c = entry.caption(figs, data, params, **options)
    show(list(c.figs) or figs, c.ref, c.see, c.alt, c.what)


def _drawable(fig: str, entry: Registered | None = None) -> Registered:
    """The registry entry of a figure that its paper draws; a figure drawn by its page, or a table, is refused."""
    entry = entry or figure_registry.entry(fig)
    if entry.draw is None:
        raise ValueError(f"figure {fig!r} is not drawn through the registry (a table, or drawn by its page)")
    return entry


def figure_grid(figs, setting: Setting, ncols: int = 2, stored: bool = False) -> dict:
    """Several paper figures of one kind (Precision@k, surprisal or early exit) computed under ``setting``, saved and
    drawn as small multiples with one caption; returns their numbers by figure id. ``stored=True`` draws the numbers
    another page of this build computed and saved in ``book/data`` instead (a comparison across chapters computes
    nothing)."""
    import matplotlib.pyplot as plt

    out, entries = {}, {fig: _drawable(fig) for fig in figs}
    nrows = -(-len(figs) // ncols)
    grid, axes = plt.subplots(nrows, ncols, figsize=(7.5 * ncols, 4.6 * nrows), squeeze=False)
    for ax in axes.flat[len(figs) :]:
        ax.set_visible(False)
    for ax, fig in zip(axes.flat, figs):
        entry = entries[fig]
        if stored:
            rec = figdata.load(fig)
            data, params = rec["data"], rec["params"]
        else:
            data, params = figure_registry.compute_and_save(fig, setting, entry)
        entry.draw(fig, data, params, ax=ax)
        c = entry.caption([fig], data, params)
        ax.set_title(f"{c.ref}: {c.what}", fontsize=11)
        if (legend := ax.get_legend()) is not None:  # inside its panel, not beside it
            ax.legend(legend.legend_handles, [t.get_text() for t in legend.get_texts()], loc="best", fontsize=9)
        out[fig] = FigureNumbers(fig, data, params, entry)
    grid.tight_layout()
    first = out[figs[0]]
    _captioned(entries[figs[0]], figs, first.numbers, first.params)
    return out


def figure(
    fig: str, setting: Setting, plot: bool = True, registered: Registered | None = None, **options
) -> FigureNumbers:
    """The one path of a figure of any paper: compute it under ``setting`` and save its numbers
    (:func:`jtc_utils.evidence.figure_registry.compute_and_save`), then, unless ``plot=False``, draw it with its paper's
    registered ``draw`` (``options``: that function's, e.g. ``mappings`` or ``view``) and show it with its
    registered caption, or show it as the table its paper registered; returns the numbers. A figure with neither
    is computed and saved only. ``registered``: the figure's entry, where the caller looked it up already."""
    entry = registered or figure_registry.entry(fig)
    numbers, params = figure_registry.compute_and_save(fig, setting, entry)
    if isinstance(numbers, dict) and "skipped" in numbers:
        print(f"{fig} skipped: {numbers['skipped']}")
    elif plot and entry.draw is not None:
        _draw(entry, fig, numbers, params, **options)
    elif plot and entry.table is not None:
        entry.table(fig, numbers, params)
    return FigureNumbers(fig, numbers, params, entry) if isinstance(numbers, dict) else numbers  # a claims file


def drawn(fig: str, data: dict, params: dict, **options) -> None:
    """Draw figure ``fig`` from its numbers with its paper's registered ``draw`` and show it with its registered
    caption (:func:`captioned`)."""
    _draw(_drawable(fig), fig, data, params, **options)


def _draw(entry: Registered, fig: str, data: dict, params: dict, **options) -> None:
    entry.draw(fig, data, params, **options)
    _captioned(entry, [fig], data, params, **options)


class Chapter:
    """What one chapter computes, under the chapter's parameters, for any paper of the book: ``figure`` computes and
    saves a figure by its id and draws it where its paper registered a drawing (:func:`figure`, the one path for every
    paper) and keeps its numbers in ``results``;
    ``verdicts`` judges claims of any paper from them (and from ``book/data`` for figures of other chapters);
    ``experiment`` gives the shared :class:`~jtc_utils.core.analysis.experiment.Experiment` behind a JTC figure, for
    exercises. The notebook's parameters (its profile, a :class:`~jtc_utils.core.data.profiles.Profile` or its name, its
    sizes and seed) are resolved here once into one :class:`~jtc_utils.core.data.setting.Setting` (``setting``;
    ``real``: the same at the real model's sizes), which travels whole from here to the data source; ``device``, where
    given, is where the heavy work runs from here on (:func:`jtc_utils.core.infra.device.use`)."""

    def __init__(
        self,
        profile: Profile | str = "tiny",
        n_train=None,
        n_val=None,
        seed: int = 0,
        real_n_train=None,
        real_n_val=None,
        device: str | None = None,
        **draw,
    ):
        if device is not None:
            devices.use(device)
        self.setting = Setting.of(profile, n_train, n_val, seed)
        self.real = self.setting.sized(*profiles.real_sizes(real_n_train, real_n_val))
        self.profile, self.draw = self.setting.profile, draw
        self.results, self.anchored = {}, set()

    def setting_of(self, fig: str) -> Setting:
        """The setting of a figure: at the real model's sizes for ``real_*`` figures, the chapter's otherwise."""
        return self._resolved(fig)[1]

    def _resolved(self, fig: str) -> tuple[Profile, Setting]:
        """The profile figure ``fig`` is computed on, and the chapter's setting it takes (:meth:`setting_of`)."""
        profile = figure_registry.profile_of(fig, self.profile)
        return profile, self.real if profile.name == "real" else self.setting

    def figure(self, fig: str, plot: bool = True, **kw) -> dict:
        """Figure ``fig`` of any paper through the one path (:func:`figure`), under the chapter's setting (its
        drawing options beside ``kw``, for a drawn figure), kept in ``results``."""
        entry = figure_registry.entry(fig)
        options = {**self.draw, **kw} if entry.draw is not None else {}
        self.results[fig] = figure(fig, self.setting_of(fig), plot, entry, **options)
        return self.results[fig]

    def show(self, fig: str, **kw) -> None:
        """Draw figure ``fig``, computed earlier by :meth:`figure` (with ``plot=False``), where the page shows it."""
        numbers = self.results[fig]
        drawn(fig, numbers.numbers, numbers.params, **{**self.draw, **kw})

    def grid(self, figs, ncols: int = 2, stored: bool = False) -> None:
        """Figures ``figs`` of one kind as small multiples (see :func:`figure_grid`; ``stored``: drawn from the
        numbers other pages saved), kept in ``results``."""
        self.results.update(figure_grid(figs, self.setting, ncols, stored))

    def verdicts(self, ids, alias: dict | None = None) -> None:
        """Show the verdicts of claims ``ids`` (of any paper) as a table (returns nothing, so that the cell shows
        only the table); ``alias`` judges them on other figures' numbers (see
        :func:`jtc_utils.evidence.claims.getter`)."""
        from IPython.display import display

        uuid = "verdicts-" + "-".join(ids) + ("-" + "-".join(alias.values()) if alias else "")
        # a claim's anchor (claim-<id>) once per page: where its verdict is first shown
        link = None if alias or set(ids) <= self.anchored else "anchor"
        self.anchored |= set(ids) if link else set()
        display(claim_tables.styled(self.claim_records(ids, alias), uuid, link=link))

    def claim_records(self, ids, alias: dict | None = None) -> list[dict]:
        """The records of claims ``ids`` (of any paper) judged on this chapter's numbers (see :meth:`verdicts`)."""
        get = claims.memo(claims.getter(self.results, alias))
        return [claims.check_any(c, get, self.profile) for c in ids]

    def real_verdicts(self, ids, real_getter=None) -> None:
        """Show the verdicts of claims ``ids`` judged with the same rules on the real model's figures
        (``real_<fig>``; ``real_getter``: a paper's own view of its real figures, a function of this chapter's
        numbers, such as :func:`jtc_utils.linearity.claims.real_getter`); a claim whose figures the real profile
        lacks gets no verdict and says why."""
        from IPython.display import display

        get = (
            claims.profile_getter("real_", self.results)
            if real_getter is None
            else real_getter(claims.getter(self.results))
        )
        display(claim_tables.verdict_table(ids, get, "real", "verdicts-real-" + "-".join(ids), link=None))

    def experiment(self, fig: str):
        """The shared experiment behind figure ``fig`` under this chapter's setting (at the real model's sizes for a
        ``real_*`` figure): one registry lookup and one profile resolution."""
        profile, s = self._resolved(fig)
        _, model, domain = registered().paper(figure_registry.entry(fig).paper).experiment_of(fig, s.profile)
        return experiment.shared(model, domain, profile, s.n_train, s.n_val, s.seed)
