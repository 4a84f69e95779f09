"""Issue 56, items 2, 5, 6 and 8: every figure the book shows passes through ``jtc_utils.book.figure_layout.tidy``
and, where it is a grid, ``jtc_utils.book.chapter.panels``: legends off the data, whole-number layer ticks, readable
log ticks, heatmap labels that do not run together, and panels that stand alone at a resolution worth enlarging."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from jtc_utils.book import chapter, figure_layout  # noqa: E402
from jtc_utils.evidence import figdata  # noqa: E402
from jtc_utils.jtc import figures, plots  # noqa: E402


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
    for ax in chapter.grid_axes(fig):
        assert not figure_layout.tick_labels_overlap(ax), n_layers
    for part, _, _ in chapter.panels(fig)[0]:  # and cut into panels, as the page shows them
        assert Image.open(io.BytesIO(part)).size[0] >= chapter.PANEL_DRAW_PX


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
    parts, _ = chapter.panels(fig)
    assert len(parts) == 6
    fig.canvas.draw()
    for ax in axes.flat:
        assert [t for t in ax.get_yticklabels() if t.get_visible() and t.get_text()], "no y tick values"
        assert [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()], "no x tick values"
        assert ax.get_ylabel() in ("KL", "Precision@1") and ax.get_xlabel() == "layer"
    assert [name for _, _, name in parts] == [f"model {j}" for j in range(3)] * 2
    assert all(Image.open(io.BytesIO(png)).size[0] >= chapter.PANEL_DRAW_PX for png, _, _ in parts)


DRAWN = [f for f, (kind, _, _) in figures.FIGURES.items()
         if kind not in plots.TABLES and figdata.exists(f) and not f.startswith("real_")]


@pytest.mark.parametrize("fig", DRAWN)
def test_no_legend_of_a_paper_figure_covers_its_data_and_no_tick_labels_overlap(fig):
    stored = figdata.load(fig)
    data = {k: (np.asarray(v, dtype=float) if k.startswith("r2_") else v) for k, v in stored["data"].items()}
    drawn = plots.draw(fig, data, stored["params"])
    figure_layout.tidy(drawn)
    for ax in drawn.axes:
        assert figure_layout.legend_overlaps(ax) == 0, (fig, ax.get_title())
        assert not figure_layout.tick_labels_overlap(ax), (fig, ax.get_title())
