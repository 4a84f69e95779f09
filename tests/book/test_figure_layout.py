"""Every figure the book shows passes through ``jtc_utils.book.display.panels.panels``, which raises its text to be
readable at the size the page shows it (``figure_layout.fit_text``) and tidies it (``figure_layout.tidy``): legends off
the data and off reference lines, whole-number ticks on layer axes only, readable log ticks, heatmap labels that do not
run together, and grid panels that stand alone, at one scale and one height a row, at a resolution worth
enlarging."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from jtc_utils.book.display import figure_layout, panels  # noqa: E402
from jtc_utils.evidence import figdata, figure_registry  # noqa: E402
from jtc_utils.evidence.registry import get as registered  # noqa: E402
from jtc_utils.jtc import plots  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_a_legend_over_the_data_is_moved_where_it_covers_none():
    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.linspace(0, 1, 30)
    ax.plot(x, 1 - x, label="falling")
    ax.plot(x, 0.9 - 0.8 * x, label="falling too")
    ax.legend(loc="upper left")  # both lines start in the upper left
    assert figure_layout.legend_overlaps(ax) > 0
    figure_layout.place_legends(fig)
    assert figure_layout.legend_overlaps(ax) == 0


def test_a_legend_with_no_free_place_inside_goes_beside_the_axes():
    fig, ax = plt.subplots(figsize=(3, 2))
    rng = np.random.default_rng(0)
    ax.scatter(rng.random(3000), rng.random(3000), s=2, label="everywhere")
    ax.legend(loc="center")
    figure_layout.place_legends(fig)
    assert figure_layout.legend_overlaps(ax) == 0
    fig.canvas.draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1  # on the right of the axes


def test_layer_axes_get_whole_number_ticks_and_other_axes_keep_theirs():
    fig, (a, b) = plt.subplots(1, 2)
    for ax in (a, b):
        ax.plot([0, 1, 2], [0.1, 0.4, 0.9])
    a.set_xlabel("layer")
    b.set_xlabel("share")
    fig.canvas.draw()
    assert np.any(np.asarray(a.get_xticks()) % 1)  # matplotlib puts ticks at 0.25, 0.5, ... on three layers
    figure_layout.tidy(fig)
    assert not np.any(np.asarray(a.get_xticks()) % 1)
    assert np.any(np.asarray(b.get_xticks()) % 1)


def test_a_log_axis_within_a_decade_shows_at_least_two_labelled_ticks():
    for scale in ("log", "symlog"):
        fig, ax = plt.subplots()
        ax.plot(np.arange(10), np.linspace(1.5, 9, 10))
        ax.set_yscale(scale, **({"linthresh": 0.1} if scale == "symlog" else {}))
        ax.set_ylim(1.4, 9.5)
        figure_layout.tidy(fig)
        fig.canvas.draw()
        lo, hi = ax.get_ylim()
        shown = [t.get_text() for t in ax.get_yticklabels() if t.get_text() and lo <= t.get_position()[1] <= hi]
        assert len(shown) >= 2, (scale, shown)


@pytest.mark.parametrize("n_layers", [6, 12, 18, 24, 30, 48])
def test_heatmap_tick_labels_do_not_overlap(n_layers):
    rng = np.random.default_rng(n_layers)
    fig = plots.r2_heatmaps(rng.random((n_layers + 1, n_layers + 1)), rng.random((n_layers + 1, n_layers + 1)))
    for ax in panels.grid_axes(fig):
        assert not figure_layout.tick_labels_overlap(ax), n_layers
    for part in panels.panels(fig)[0]:  # and cut into panels, as the page shows them
        assert Image.open(io.BytesIO(part.png)).size[0] >= panels.PANEL_DRAW_PX


def test_every_panel_of_a_shared_grid_stands_alone():
    """A 2 x 3 grid with shared y axes and titles on its top row only: each panel comes out with tick values on
    both axes, its row's y label, its column's x label and title, drawn at least PANEL_DRAW_PX wide."""
    fig, axes = plt.subplots(2, 3, figsize=(9, 5), sharey="row", sharex="col")
    for j in range(3):
        axes[0, j].set_title(f"model {j}")
        axes[1, j].set_xlabel("layer")
        for i in range(2):
            axes[i, j].plot(np.arange(7), np.arange(7) * (i + 1))
    axes[0, 0].set_ylabel("KL")
    axes[1, 0].set_ylabel("Precision@1")
    parts, _, _ = panels.panels(fig)
    assert len(parts) == 6
    fig.canvas.draw()
    for ax in axes.flat:
        assert [t for t in ax.get_yticklabels() if t.get_visible() and t.get_text()], "no y tick values"
        assert [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()], "no x tick values"
        assert ax.get_ylabel() in ("KL", "Precision@1") and ax.get_xlabel() == "layer"
    assert [p.title for p in parts] == [f"model {j}" for j in range(3)] * 2
    assert all(Image.open(io.BytesIO(p.png)).size[0] >= panels.PANEL_DRAW_PX for p in parts)


def test_the_text_of_a_wide_figure_is_raised_until_it_reads_at_1280_px_and_its_caption_says_to_enlarge_on_a_phone():
    """Issue 66, item 2: a 20-inch figure shown in a 672 px column drew the digits of its 10-point tick labels 3.4 px
    tall. Its text is raised until the smallest tick label's digits are AIM_TEXT_PX tall as drawn there; on a phone
    they are still too small, so the caption says to enlarge it (enlarged, the image is shown at its own size)."""
    fig, ax = plt.subplots(figsize=(20, 4))
    ax.plot(np.arange(30), np.linspace(0, 1, 30), label="a line")
    ax.set(xlabel="layer", ylabel="Precision@1", title="wide")
    ax.legend()
    before = figure_layout.tick_height(fig.axes)
    (part,), _, enlarge = panels.panels(fig)
    natural = Image.open(io.BytesIO(part.png)).size[0]
    assert part.text_px == pytest.approx(figure_layout.tick_height(fig.axes) * panels.WHOLE_DPI / 72)
    assert figure_layout.tick_height(fig.axes) > before
    assert part.shown_px == pytest.approx(min(figure_layout.SHOWN_PX["desktop"], natural), abs=1.5)
    assert part.text_px * part.shown_px / natural >= figure_layout.AIM_TEXT_PX - 0.2
    assert part.text_px * figure_layout.SHOWN_PX["phone"] / natural < figure_layout.LEAST_TEXT_PX and enlarge
    assert part.text_px >= figure_layout.LEAST_TEXT_PX  # enlarged: the image at its own size
    label = next(t for t in ax.get_xticklabels() if t.get_text())
    assert 0.7 < figure_layout.digit_height(label) / label.get_fontsize() < 0.8  # DejaVu Sans's digits, about 3/4
    assert ax.get_title() == "wide" and ax.title.get_fontsize() > 12  # every text grew with the ticks


def test_a_small_figure_keeps_its_text_and_needs_no_enlarging():
    fig, ax = plt.subplots(figsize=(3.2, 2.4))
    ax.plot([0, 1], [0, 1])
    before = figure_layout.tick_height(fig.axes)
    (part,), _, enlarge = panels.panels(fig)
    assert figure_layout.tick_height(fig.axes) == before and not enlarge


def test_every_panel_of_a_grid_of_wide_panels_reads_at_1280_and_on_a_phone():
    """The appendix's small multiples were drawn 7.5 inches a panel, two a row in 672 px: 4.6 px tick labels."""
    fig, axes = plt.subplots(2, 2, figsize=(15, 9.2))
    for ax in axes.flat:
        ax.plot(np.arange(48), np.linspace(0, 1, 48))
        ax.set(xlabel="layers processed", ylabel="Precision@1")
    parts, _, enlarge = panels.panels(fig)
    assert len(parts) == 4 and not enlarge
    for part in parts:
        natural = Image.open(io.BytesIO(part.png)).size[0]
        assert part.text_px * part.shown_px / natural >= figure_layout.AIM_TEXT_PX - 0.2
        assert part.text_px * figure_layout.SHOWN_PX["phone"] / natural >= figure_layout.LEAST_TEXT_PX
    assert sum(p.shown_px for p in parts[:2]) <= figure_layout.SHOWN_PX["desktop"] + 1
    for ax in axes.flat:
        assert not figure_layout.tick_labels_overlap(ax)


def test_a_heatmap_whose_labels_grew_keeps_every_kth_cell_labelled_without_overlap():
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(14, 12))
    sns.heatmap(np.random.default_rng(0).random((49, 49)), ax=ax, xticklabels=1, yticklabels=1)
    ax.set(xlabel="target layer", ylabel="source layer")
    panels.panels(fig)
    assert not figure_layout.tick_labels_overlap(ax)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert 3 <= len(labels) < 49 and labels[0] == "0"


def test_the_panels_of_one_row_of_the_grid_are_as_tall():
    """Issue 66, item 2: the lens chapter's rank figure had a second x axis on top of its right panel only; cut
    alone, the two panels were drawn at different heights side by side."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    a.plot([1, 2, 4], [0.1, 0.2, 0.3])
    b.plot([1, 2, 4], [0.3, 0.2, 0.1])
    b.secondary_xaxis("top", functions=(lambda r: 2 * r, lambda p: p / 2)).set_xlabel("parameters")
    b.set_title("with an axis on top", pad=28)
    parts, _, _ = panels.panels(fig)
    heights = [Image.open(io.BytesIO(p.png)).size[1] for p in parts]
    assert abs(heights[0] - heights[1]) <= 1, heights


def test_only_an_axis_whose_quantity_is_a_layer_gets_whole_number_ticks():
    """An r² "to the last layer" is no layer: its axis kept only the ticks 0 and 1 while the curves went below 0."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3))
    for ax, label in ((a, "r² to the last layer"), (b, "depth of the pair's upper layer (l+1)/L")):
        ax.plot([0, 1, 2, 3], [-0.2, 0.3, 0.6, 0.95])
        ax.set_ylabel(label)
        ax.set_xlabel("source layer ℓ")
    a.set_ylim(-0.3, 1.02)
    figure_layout.tidy(fig)
    fig.canvas.draw()
    lo, hi = a.get_ylim()
    ticks = [t for t in a.get_yticks() if lo <= t <= hi]
    assert len(ticks) >= 4 and min(ticks) < 0 and np.any(np.asarray(ticks) % 1)
    assert not np.any(np.asarray(a.get_xticks()) % 1)  # the source layer stays whole
    for label in ("layer", "source layer ℓ", "mean exit layer", "layers processed", "pair l -> l+1 (upper layer)"):
        assert figure_layout.LAYER_AXIS.match(label), label
    for label in ("r² to the last layer", "mean r² over layers (to the last)", "held-out r² to the last layer"):
        assert not figure_layout.LAYER_AXIS.match(label), label


def test_a_legend_is_moved_off_a_target_line():
    """Issue 66, item 7: section 5's legends covered its dashed Precision@1 = 0.95 target line."""
    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.linspace(0, 24, 25)
    ax.plot(x, 0.3 + 0.7 * x / 24, label="id: confidence rule")
    ax.plot(x, 0.2 + 0.8 * (x / 24) ** 2, label="mat: confidence rule")
    ax.axhline(0.95, color="k", ls="--", label="Precision@1 = 0.95")
    ax.legend(loc="upper left")
    figure_layout.tidy(fig)
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    y = ax.transData.transform((0, 0.95))[1]
    inside = box.x0 < ax.get_window_extent().x1 and box.x1 > ax.get_window_extent().x0
    assert not (inside and box.y0 < y < box.y1), "the legend covers the target line"


# every figure of every paper that its paper draws, from the numbers this build stored
DRAWN = sorted(
    f
    for f in registered().figures
    if figure_registry.entry(f).draw is not None
    and figdata.exists(f)
    and not isinstance(figdata.load(f).get("data"), list)
)


# figures drawn with another figure's numbers, as their chapter draws them: option -> that figure
WITH = {"sl_fig4": {"probes": "sl_fig5"}, "sl_fig1": {"real": "real_sl"}}


def _draw(fig: str):
    stored = figdata.load(fig)
    data = {k: (np.asarray(v, dtype=float) if k.startswith("r2_") else v) for k, v in stored["data"].items()}
    options = {k: figdata.load(other)["data"] for k, other in WITH.get(fig, {}).items()}
    figure_registry.entry(fig).draw(fig, data, stored["params"], **options)
    return plt.gcf()


@pytest.mark.slow
@pytest.mark.parametrize("fig", DRAWN)
def test_every_drawn_figure_reads_at_its_size_and_hides_nothing(fig):
    """Every paper's drawn figures, as the page cuts and shows them: each piece's smallest tick label at least
    LEAST_TEXT_PX as drawn at 1280 px (and on a phone, or the caption says to enlarge it); no legend over data or a
    reference line, no tick labels that overlap, and on a linear axis with numbers at least three labelled ticks."""
    drawn = _draw(fig)
    parts, _, enlarge = panels.panels(drawn)
    for part in parts:
        natural = Image.open(io.BytesIO(part.png)).size[0]
        phone = figure_layout.SHOWN_PX["phone"] if len(parts) > 1 else min(figure_layout.SHOWN_PX["phone"], natural)
        assert part.text_px * part.shown_px / natural >= figure_layout.LEAST_TEXT_PX, (fig, part.title)
        assert enlarge or part.text_px * phone / natural >= figure_layout.LEAST_TEXT_PX, (fig, part.title)
    assert not figure_layout.small_texts(drawn), (fig, [t.get_text() for t in figure_layout.small_texts(drawn)])
    drawn.canvas.draw()
    grid = panels.grid_axes(drawn)
    if len(parts) > 1 and any(ax.get_ylabel() for ax in grid):  # a panel shown alone names its y axis
        assert all(ax.get_ylabel() for ax in grid), (fig, [ax.get_title() for ax in grid if not ax.get_ylabel()])
    for ax in drawn.axes:
        assert figure_layout.legend_overlaps(ax) == 0, (fig, ax.get_title())
        assert not figure_layout.tick_labels_overlap(ax), (fig, ax.get_title())
        if figure_layout.is_heatmap(ax) or ax.get_label() == "<colorbar>":
            continue
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            if (
                axis.get_scale() == "linear"
                and labels
                and not axis.get_major_formatter().__class__.__name__ == "FixedFormatter"
            ):
                lo, hi = sorted(lim)
                inside = [t for t in axis.get_ticklocs() if lo <= t <= hi]
                assert len(inside) >= 3, (fig, ax.get_title(), axis.axis_name, inside)


def test_a_figure_without_tick_labels_is_shown_as_drawn():
    fig, ax = plt.subplots(figsize=(12, 3))
    ax.imshow(np.eye(4))
    ax.set_axis_off()
    (part,), _, enlarge = panels.panels(fig)
    assert part.text_px == float("inf") and not enlarge


def test_a_legend_or_note_smaller_than_the_ticks_is_raised_to_them_and_cell_numbers_are_not():
    """A legend and an annotation drawn at 5 pt beside 10 pt ticks are found (and would be read at half the size the
    page promises); after the figure is fitted they are at least the ticks' size. A heatmap's cell numbers keep
    theirs."""
    fig, (ax, hm) = plt.subplots(1, 2, figsize=(8, 3))
    ax.plot([0, 1, 2], [0, 1, 0], label="a line")
    ax.legend(fontsize=5)
    ax.annotate("a note", (1, 0.5), fontsize=5)
    ax.tick_params(labelsize=10)
    hm.imshow(np.eye(3))
    hm.set_xticks(range(3), ["a", "b", "c"])
    hm.set_yticks(range(3), ["a", "b", "c"])
    cell = hm.text(0, 0, "1.0", fontsize=4)
    small = {t.get_text() for t in figure_layout.small_texts(fig)}
    assert {"a line", "a note"} <= small and "1.0" not in small
    panels.panels(fig)
    assert not figure_layout.small_texts(fig)
    assert cell.get_fontsize() < figure_layout.tick_fontsize(fig)
    plt.close(fig)


@pytest.mark.parametrize("rows", [1, 3])
def test_one_legend_under_the_panels_takes_the_height_it_needs_and_covers_none_of_them(rows):
    """:func:`jtc_utils.evidence.registry.legend_below` measures the drawn legend: the panels, their tick labels
    and axis labels all above it, the legend inside the figure, whether it takes one row or three."""
    from matplotlib.lines import Line2D

    from jtc_utils.evidence.registry import legend_below

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("training vectors per dimension")
    handles = [Line2D([], [], color=f"C{i}", label=f"the entry number {i}") for i in range(3 * rows)]
    legend_below(fig, handles, ncol=3)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.legends[0].get_window_extent(renderer)
    assert box.y0 >= 0 and box.x0 >= 0 and box.x1 <= fig.bbox.width
    assert all(box.y1 <= ax.get_tightbbox(renderer).y0 + 1 for ax in axes)
    # no more room than it needs: the panels start within a few points of the legend's top
    assert min(ax.get_tightbbox(renderer).y0 for ax in axes) - box.y1 < 0.05 * fig.bbox.height
