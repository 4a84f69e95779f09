"""Figures as a paper has them: a numbered caption naming the paper figure, alt text that describes the figure,
links to the numbers as JSON files that the built book ships, and small multiples with one caption."""

import re

import matplotlib
import pytest

from jtc_utils.book.build import website
from jtc_utils.book.display import figure_layout
from jtc_utils.book.display import chapter
from jtc_utils.book.display.chapter import figure, figure_grid, show
from jtc_utils.book.display.panels import panel_scale, panels
from jtc_utils.core.data.setting import Setting
from jtc_utils.jtc.plots import paper_ref

TINY = Setting.of("tiny")  # the chapters' default setting

matplotlib.use("Agg")


@pytest.fixture
def shown(monkeypatch, tmp_path):
    import IPython.display

    out = []
    monkeypatch.setattr(IPython.display, "display", out.append)
    monkeypatch.setenv("JTC_DATA_OUT", str(tmp_path))
    monkeypatch.setattr(chapter, "PAGE", chapter.Numbering())  # a fresh page
    return out


@pytest.mark.slow
def test_a_figure_gets_a_numbered_caption_alt_text_and_a_link_to_its_numbers(shown, tmp_path):
    numbers = figure("fig8", TINY)
    assert (tmp_path / "fig8.json").is_file() and numbers.fig == "fig8"
    (html,) = [x.data for x in shown]
    assert "<b>Figure 1</b> (paper Figure 8)" in html
    assert re.search(r'alt="Precision@1 against layers processed[^"]+tiny-gpt2', html)
    assert '<a href="data/fig8.json" download>' in html and "data:image/png;base64," in html
    figure("fig9", TINY)
    assert "<b>Figure 2</b> (paper Figure 9)" in shown[-1].data
    assert paper_ref("real_fig4") == "paper Figure 4, on the real model"
    assert paper_ref("ext_bert_fig10") == "beyond the paper"


@pytest.mark.slow
def test_small_multiples_share_one_caption(shown, tmp_path):
    out = figure_grid(["fig26", "fig27", "fig28"], TINY, ncols=2)
    assert list(out) == ["fig26", "fig27", "fig28"] and all((tmp_path / f"{f}.json").is_file() for f in out)
    (html,) = [x.data for x in shown]
    assert html.count("<figure") == 1 and all(f'href="data/{f}.json"' in html for f in out)


def test_the_build_ships_the_numbers_and_plotly_beside_the_pages():
    website.vendor_static()
    assert (website.EXTRA_DIR / "plotly.min.js").stat().st_size > 1_000_000
    assert (website.EXTRA_DIR / "book" / "data" / "fig4.json").is_file()


def test_the_built_pages_link_numbers_that_exist(html):
    root, _ = html
    page = (root / "book" / "sec4_predictions.html").read_text()
    links = re.findall(r'href="(data/[^"]+\.json)"', page)
    assert links and all((root / "book" / link).is_file() for link in links)
    # plotly is fetched by the layer view's loader, from the book's root, when the reader scrolls to it
    assert (root / "plotly.min.js").is_file() and 's.src = "../plotly.min.js"' in page
    assert not re.search(r'<script[^>]*src="[^"]*plotly', page)  # not loaded with the page


def _imgs(html):
    return re.findall(r"<img [^>]*>", html)


def test_a_grid_is_shown_as_panels_that_can_wrap(shown):
    """A multi-panel figure reaches the page as one image per panel in a wrapping row (issue 35: a 1x4 grid shrunk
    to a third of its size on a phone), every panel at one scale (issue 66: a last panel alone on its row was drawn
    larger than its neighbours), the widest row filling the column at 1280 px; each panel has its own alt text, a
    colour bar stays with its panel and the suptitle becomes a line of text above them."""
    import matplotlib.pyplot as plt
    import numpy as np

    from jtc_utils.jtc import plots

    _, axes = plt.subplots(1, 3, figsize=(12, 3))
    for i, ax in enumerate(axes):
        ax.plot([0, i + 1])
        ax.set_title(f"model {i}")
    parts, _, _ = panels(plt.gcf())
    scale = panel_scale([p.width for p in parts])
    show("x", "paper Figure 1", "see", "Lines")
    html = shown[-1].data
    imgs = _imgs(html)
    assert '<div class="jtc-panels">' in html and len(imgs) == 3
    shown_px = [float(re.search(r'style="width: (\d+)px"', img).group(1)) for img in imgs]
    per_inch = [px / p.width for px, p in zip(shown_px, parts)]
    assert max(per_inch) - min(per_inch) < 1.0  # one scale (to the rounding of a pixel)
    assert abs(shown_px[0] + shown_px[1] - figure_layout.SHOWN_PX["desktop"]) <= 2 or scale == 100  # two a row
    assert all(f"panel {i} of 3: model {i - 1}" in img for i, img in enumerate(imgs, 1))

    plots.r2_heatmaps(np.random.rand(5, 5), np.random.rand(5, 5), title="two maps")
    show("y", "paper Figure 2", "see", "Heatmaps")
    html = shown[-1].data
    assert len(_imgs(html)) == 2 and '<div class="jtc-suptitle">two maps</div>' in html
    parts, _, _ = panels(plots.r2_heatmaps(np.random.rand(5, 5), np.random.rand(5, 5)))
    assert parts[1].width > parts[0].width  # the shared colour bar went with the right panel
    plt.close("all")

    plt.subplots(figsize=(6, 3))
    show("z", "paper Figure 3", "see", "One line")
    assert len(_imgs(shown[-1].data)) == 1 and "jtc-panels" not in shown[-1].data
    _, axes = plt.subplots(2, 1)
    show("w", "paper Figure 4", "see", "A column")  # one column: nothing to wrap, one image
    assert len(_imgs(shown[-1].data)) == 1


def _drawn(shown, figs, data):
    import matplotlib.pyplot as plt

    from jtc_utils.book.display.chapter import captioned

    plt.figure()
    plt.plot([0, 1], [0, 1])
    captioned(figs, data, {"model": "tiny-gpt2-medium", "paper_model": "gpt2-medium", "domain": "encyclopedia"})
    return shown[-1].data


def test_a_precision_at_k_caption_names_the_k_it_shows(shown):
    """Section 6's Figs. 34-35 show Precision@5 and @10: caption and alt text say so (they said Precision@1)."""
    html = _drawn(shown, "fig35", {"ks": [10]})
    assert "Precision@10 when one sub-module" in html and 'alt="Line plot of Precision@10 per start layer' in html
    assert "Precision@1 " not in html
    assert "Precision@1 when" in _drawn(shown, "fig10", {"ks": [1]})


def test_a_figure_shown_twice_on_a_page_has_one_anchor(shown):
    first, second = _drawn(shown, "fig10", {"ks": [1]}), _drawn(shown, "fig10", {"ks": [1]})
    assert 'id="figure-fig10"' in first and 'id="figure-' not in second


def test_no_built_page_repeats_an_element_id(html):
    root, _ = html
    dupes = {}
    for page in (root / "book").glob("*.html"):
        ids = re.findall(r'\sid="([^"]+)"', page.read_text())
        seen = {i for i in ids if ids.count(i) > 1}
        if seen:
            dupes[page.name] = sorted(seen)[:5]
    assert not dupes, dupes


def test_reasons_and_lexicon_numbers_read_as_text():
    from jtc_utils.book.display import claim_tables, claims_page

    assert claims_page.code_spans("run `make zoo-extras` <now>") == "run <code>make zoo-extras</code> &lt;now&gt;"
    numbers = claim_tables.lexicon_table().data["number"].tolist()
    assert "0.5" in numbers and not any(n.endswith("0000") for n in numbers)
