"""What a chapter cell does for one figure of any paper, by its id: compute its numbers and save them to
``book/data/<figure>.json`` (:func:`jtc_utils.evidence.figure_registry.compute_and_save`, through the function its paper
registered), draw it with the function its paper registered and show it with its caption (:func:`figure`). One
call per figure, the same for every paper, so that every notebook draws its figures the same way."""

from __future__ import annotations

from jtc_utils.book.display import claim_tables, claims_page
from jtc_utils.book.display.panels import Panel, panels
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
    """The one result of every figure, of any paper: its numbers as saved (a plain dict of JSON values, NaN as None,
    the same a reader gets from ``figdata.load(fig)["data"]``; also ``numbers``), its parameters (``params``) and its
    registry entry (``entry``); :meth:`draw` draws it. A cell that ends with one shows nothing more: the figure's
    caption links to its saved numbers."""

    def __init__(self, fig: str, numbers: dict, params: dict, registered: Registered | None = None):
        super().__init__(numbers)
        self.fig, self.numbers, self.params = fig, numbers, params
        self.entry = registered or figure_registry.entry(fig)

    def draw(self, **options) -> None:
        """Draw the figure with its paper's registered drawing and show it with its caption (``options``: the
        drawing's, e.g. ``mappings`` or ``view``)."""
        _draw(_drawable(self.fig, self.entry), self.fig, self.numbers, self.params, **options)

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
        self.shown: dict[str, dict[str, dict]] = {}  # claim id -> {profile's name: its record}, as the page shows it

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
        self.results[fig].draw(**{**self.draw, **kw})

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
        records = self.claim_records(ids, alias)
        if not alias:
            self._keep(records, self.profile.name)
        display(claim_tables.styled(records, uuid, link=link))

    def _keep(self, records: list[dict], profile: str) -> None:
        for r in records:
            self.shown.setdefault(r["id"], {})[profile] = r

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
        get = claims.memo(get)
        records = [claims.check_any(c, get, "real") for c in ids]
        self._keep(records, "real")
        display(claim_tables.styled(records, "verdicts-real-" + "-".join(ids), link=None))

    def findings(self) -> None:
        """Glue what this chapter finds (``findings``), which its opening pastes: every claim it showed a verdict
        for, with that verdict on each profile it was judged on, the id leading to the claim's table under the
        figure that shows it (the page's last cell calls this, when every verdict has been shown)."""
        from IPython.display import HTML
        from myst_nb import glue

        if not self.shown:
            raise RuntimeError(
                "this chapter showed no verdict, so it has no findings to glue: call chapter.verdicts(...) under the "
                "figures first, or open the page with a sentence instead of the findings grid"
            )
        order = [p for p in (self.profile.name, "real") if any(p in v for v in self.shown.values())]
        columns = {p: "on " + claims_page.PROFILE_NAMES.get(p, p) for p in order}
        rows = [{columns[p]: by.get(p) for p in order} for by in self.shown.values()]
        table = claims_page.verdict_grid(
            [(None, rows)],
            list(columns.values()),
            "chapter-findings",
            "What this chapter finds: each claim's verdict on each model it is judged on",
            lambda cid: (
                f"#claim-{cid.lower()}" if cid in self.anchored else f"claims_verdicts.html#verdict-{cid.lower()}"
            ),
        )
        glue("findings", HTML(table), display=False)

    def experiment(self, fig: str):
        """The shared experiment behind figure ``fig`` under this chapter's setting (at the real model's sizes for a
        ``real_*`` figure): one registry lookup and one profile resolution."""
        profile, s = self._resolved(fig)
        _, model, domain = registered().paper(figure_registry.entry(fig).paper).experiment_of(fig, s.profile)
        return experiment.shared(model, domain, profile, s.n_train, s.n_val, s.seed)
